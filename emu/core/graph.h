// CUDA graphs: graphs of nodes built by hand or by stream capture, instantiated into executable graphs that
// run on a stream. A node keeps its parameters in the driver's own form (what Get/SetParams exchange) and is
// turned into stream work when an executable graph is launched. An executable graph is a snapshot: its nodes
// run in one topological order on the launch stream, which keeps every edge of the graph.
#pragma once

#include "api/cuda_internal.h"
#include "core/address_space.h"
#include "core/capture_mode.h"
#include "core/handle.h"
#include "core/launch.h"
#include "core/result.h"
#include "core/stream.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

namespace cuemu {

class Context;
class Event;
class Graph;

struct KernelNodeData {
  LaunchRequest request;
  CUkernel kernel = nullptr;  // when the node was given a CUkernel, what GetParams answers
  CUcontext context = nullptr;
  std::map<int, CUlaunchAttributeValue> attributes;
  // Pointers to each parameter inside request.params, for GetParams (rebuilt whenever the data is copied).
  std::vector<void*> paramPointers;
  void pointParams();
};
struct MemcpyNodeData {
  CUDA_MEMCPY3D copy{};
  CUcontext context = nullptr;
};
struct MemsetNodeData {
  CUDA_MEMSET_NODE_PARAMS params{};
  CUcontext context = nullptr;
};
struct HostNodeData {
  CUhostFn fn = nullptr;
  void* userData = nullptr;
};
struct EventNodeData {
  std::shared_ptr<Event> event;
  CUevent handle = nullptr;
};
struct ChildGraphData {
  std::shared_ptr<Graph> graph;  // the node's own copy
};
// A captured operation with no public parameter form of its own (stream memory operations, batch copies,
// copies of the pageable or array kinds): the validated work itself.
struct CapturedWorkData {
  StreamWork work;
};
// Memory a graph allocates (a MEM_ALLOC node, also made by capturing cuMemAllocAsync). It is allocated when the
// node is made, so its address is the same at every launch, and lives while a graph or executable graph holding
// the node lives, unless the application frees it first (cuMemFree, or cuMemFreeAsync outside a capture). A
// MEM_FREE node only ends its use inside the graph: memory stays mapped, so a later launch finds it again.
// A launch of a graph that does not free the allocation leaves it to the application: the next launch is refused
// (CUDA_ERROR_INVALID_VALUE) until the application has freed it, and then allocates it again at the same address
// (measured on an H100, driver 580). Its addresses are the graph's for the GraphAllocation's whole life, as on the
// GPU (conformance api.graph.MemAllocFreedByTheApplicationKeepsItsAddresses): freed by the application, its memory
// goes back (uncharged, accesses fault as on freed memory) but its address range stays taken
// (MemoryRegion::holdsAddresses), so no allocation made meanwhile, small or large, nor an address reservation asking
// for it, can take it and make the next launch fail; the range returns to the address space when the
// GraphAllocation is destroyed (AddressSpace::stopHolding). Graph allocations have mappings of their own, never
// blocks of a shared slab (ContextMemory::allocateDevice with ownMapping).
class GraphAllocation {
 public:
  GraphAllocation(RegionPtr region, int device);
  ~GraphAllocation();
  GraphAllocation(const GraphAllocation&) = delete;
  GraphAllocation& operator=(const GraphAllocation&) = delete;
  CUdeviceptr start() const { return start_; }
  int device() const { return device_; }
  uint64_t size() const { return size_; }
  // At the launch of a graph holding the MEM_ALLOC node: refuses while an earlier launch left the memory to the
  // application and it is not freed (nor queued to be); allocates again what the application freed.
  // `freedByGraph`: the graph has a MEM_FREE node for it. `autoFree` (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH):
  // memory an earlier launch left allocated is taken back by this launch instead of refusing it.
  CUresult beginLaunch(Context& context, bool freedByGraph, bool autoFree);
  // Whether the application freed the memory (cuMemFree, cuMemFreeAsync) since a launch left it allocated.
  bool freedByApplication();
  // Whether a launch left the memory allocated and the application has not freed it yet: only then may the
  // application free it.
  bool heldByApplication();
  // In stream order at the node: allocates again what a cuMemFreeAsync queued before the launch released.
  CUresult ensureMapped(Context& context);

 private:
  bool mapped() const;  // under mutex_
  std::mutex mutex_;
  RegionPtr region_;
  const CUdeviceptr start_;
  const uint64_t size_;
  const int device_;
  bool leftToApplication_ = false;  // a launch ended with the memory allocated
};
struct MemAllocNodeData {
  CUDA_MEM_ALLOC_NODE_PARAMS params{};  // dptr filled in; the access descriptors are not kept
  std::shared_ptr<GraphAllocation> allocation;
};
struct MemFreeNodeData {
  CUdeviceptr dptr = 0;
};

// The variable behind a CUgraphConditionalHandle (cuGraphConditionalHandleCreate): set by cudaGraphSetConditional
// in kernels, and to its default at the start of every launch when created with CU_GRAPH_COND_ASSIGN_DEFAULT.
// Without that flag it starts at zero (measured on an H100, driver 580) and keeps its value between launches.
// It lives while a graph, node or executable graph refers to it.
class ConditionalVariable {
 public:
  ConditionalVariable(unsigned defaultValue, bool assignDefault);
  ~ConditionalVariable();
  ConditionalVariable(const ConditionalVariable&) = delete;
  ConditionalVariable& operator=(const ConditionalVariable&) = delete;
  CUgraphConditionalHandle handle() const { return handle_; }
  const unsigned defaultValue;
  const bool assignDefault;
  std::atomic<unsigned> value{0};
  // The conditional node that uses the handle: driver 580 gives a handle to one node only, a second node (in the
  // same graph or in a body of it) is CUDA_ERROR_INVALID_VALUE (tools/gpu-probe/results/clients17c-h100-*.txt).
  // Held by that node's data (and copies of it in executable graphs); expired once they are gone.
  std::weak_ptr<void> boundNode;  // guarded by the handle registry's mutex: read it through bound()
  bool bound() const;

 private:
  CUgraphConditionalHandle handle_;
};
// A new variable with a handle of its own.
std::shared_ptr<ConditionalVariable> makeConditionalVariable(unsigned defaultValue, bool assignDefault);
// The variable of a handle, or null for a handle that was never made (or whose graphs are all gone).
std::shared_ptr<ConditionalVariable> findConditional(CUgraphConditionalHandle handle);
// The conditional handles a kernel of an executable graph may set (those of the graph's conditional nodes, nested
// ones included); a kernel launched outside a graph has none.
using ConditionalHandles = std::vector<CUgraphConditionalHandle>;
// cudaGraphSetConditional from a kernel that may set `allowed` (null: none): false for a handle not among them,
// which faults the kernel as on an H100 (tools/gpu-probe/results/clients17c-h100-2026-11-26.txt, part cond:
// a kernel of another graph, or launched into a stream, gets CUDA_ERROR_ILLEGAL_ADDRESS).
bool setConditionalValue(const ConditionalHandles* allowed, CUgraphConditionalHandle handle, unsigned value);

// The body graphs of a conditional node: registered graphs (cuGraph* calls add nodes to them) that belong to the
// node, leave the handle table with it, and cannot be destroyed on their own.
struct ConditionalBodies {
  ConditionalBodies() = default;
  ConditionalBodies(const ConditionalBodies&) = delete;
  ConditionalBodies& operator=(const ConditionalBodies&) = delete;
  ~ConditionalBodies();
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<CUgraph> handles;  // what phGraph_out points at
};
struct ConditionalRun;  // the instantiated bodies (an executable graph's steps)
struct ConditionalNodeData {
  CUgraphConditionalNodeType type = CU_GRAPH_COND_TYPE_IF;
  std::shared_ptr<ConditionalVariable> variable;
  std::shared_ptr<ConditionalBodies> bodies;
  std::shared_ptr<const ConditionalRun> run;  // set in executable graphs only
  std::shared_ptr<void> binding;              // the node's claim on its handle (ConditionalVariable::boundNode)
};
using NodeData =
    std::variant<std::monostate, KernelNodeData, MemcpyNodeData, MemsetNodeData, HostNodeData, EventNodeData,
                 ChildGraphData, CapturedWorkData, MemAllocNodeData, MemFreeNodeData, ConditionalNodeData>;
// Makes a conditional node's data and its empty bodies: CUDA_ERROR_INVALID_VALUE for a size its type does not
// allow or an unknown handle.
Expected<NodeData> makeConditional(const CUDA_CONDITIONAL_NODE_PARAMS& params);

// A MEM_ALLOC node's data: validates the parameters and allocates the memory in `context`.
Expected<NodeData> makeGraphAllocation(Context& context, const CUDA_MEM_ALLOC_NODE_PARAMS& params);
// Whether `dptr` is the start of memory a graph allocated and still holds.
bool isGraphAllocation(CUdeviceptr dptr);
// Whether the application may free `dptr` outside a capture (cuMemFree, cuMemFreeAsync): not a graph allocation
// that no launch has left allocated (before the graph's first launch; after the graph or the application freed it),
// which driver 580 refuses with CUDA_ERROR_INVALID_VALUE (tools/gpu-probe/graphfree28); any other address may be.
bool applicationMayFree(CUdeviceptr dptr);
// cuDeviceGetGraphMemAttribute / cuDeviceSetGraphMemAttribute for one device.
CUresult graphMemAttribute(int device, CUgraphMem_attribute attribute, uint64_t* value);
CUresult resetGraphMemHighWatermark(int device, CUgraphMem_attribute attribute);
// Memory a launch left to the application outlives its graph, as on a GPU: it stays allocated (and counted) until
// the application frees it and cuDeviceGraphMemTrim returns it.
void keepLeftToApplication(std::shared_ptr<GraphAllocation> allocation);
void trimGraphMemory(int device);

class GraphNode {
 public:
  static constexpr HandleKind kKind = HandleKind::GraphNode;
  GraphNode(Graph& graph, CUgraphNodeType type, NodeData data);

  Graph& graph() const { return graph_; }
  CUgraphNodeType type() const { return type_; }
  uint64_t id() const { return id_; }            // unique in the process
  uint64_t originId() const { return origin_; }  // the id of the node this one was cloned from (own id if none)
  void setOrigin(uint64_t origin) { origin_ = origin; }
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }
  CUgraphNode apiHandle() const { return toApiHandle<CUgraphNode>(handle_); }

  NodeData data;
  std::vector<GraphNode*> dependencies;  // incoming edges, in the order they were added
  std::vector<GraphNode*> dependents;    // outgoing edges
  // The data of incoming edges whose CUgraphEdgeData is not all zero (programmatic and launch-order edges from
  // kernel nodes), by upstream node; every other edge's data is zero. Each edge still runs as a full dependency:
  // starting the downstream kernel after the upstream one ends is one of the schedules such an edge allows.
  std::vector<std::pair<GraphNode*, CUgraphEdgeData>> annotatedDependencies;
  CUgraphEdgeData edgeFrom(const GraphNode* from) const;
  void setEdgeFrom(GraphNode* from, const CUgraphEdgeData& edge);

 private:
  Graph& graph_;
  const CUgraphNodeType type_;
  const uint64_t id_;
  uint64_t origin_;
  uint64_t handle_ = 0;
};

// A user object (cuUserObjectCreate): a reference-counted resource whose destructor runs when the last
// reference, the application's or a graph's, goes away.
class UserObject {
 public:
  static constexpr HandleKind kKind = HandleKind::UserObject;
  UserObject(void* pointer, CUhostFn destroy, unsigned refs) : pointer_(pointer), destroy_(destroy), refs_(refs) {}
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }
  void retain(unsigned count) { refs_.fetch_add(count); }
  // Drops `count` references; the last one runs the destructor and retires the handle.
  void release(unsigned count);

 private:
  void* pointer_;
  CUhostFn destroy_;
  std::atomic<long long> refs_;
  uint64_t handle_ = 0;
};

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  static constexpr HandleKind kKind = HandleKind::Graph;
  ~Graph();

  uint64_t handle() const { return handle_; }
  CUgraph apiHandle() const { return toApiHandle<CUgraph>(handle_); }
  // Registers the graph (and later its nodes) in the handle tables.
  void registerHandle();

  // Adds a node depending on `dependencies` (nodes of this graph; CUDA_ERROR_INVALID_VALUE otherwise).
  Expected<GraphNode*> addNode(CUgraphNodeType type, NodeData data, const std::vector<GraphNode*>& dependencies);
  CUresult addEdge(GraphNode* from, GraphNode* to);
  CUresult removeEdge(GraphNode* from, GraphNode* to);
  void destroyNode(GraphNode* node);
  // A deep copy; nodes remember their originals (cuGraphNodeFindInClone). Conditional nodes get copies of their
  // bodies (cuGraphClone refuses graphs with conditional nodes; executable graphs keep such copies).
  std::shared_ptr<Graph> clone() const;
  // Whether a conditional node is in the graph or in any graph nested in it.
  bool hasConditional() const;
  // Handles made for this graph (cuGraphConditionalHandleCreate) live as long as it.
  void keepConditional(std::shared_ptr<ConditionalVariable> variable);
  // Whether cuGraphConditionalHandleCreate made any handle for this graph.
  bool madeConditionals() const;
  // Whether a handle made for the graph has no conditional node: driver 580 refuses to instantiate such a graph
  // (CUDA_ERROR_INVALID_VALUE; tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt).
  bool hasUnusedConditional() const;
  // Whether the graph holds a MEM_ALLOC or MEM_FREE node: its nodes and edges cannot be deleted then.
  bool hasMemoryNodes() const;
  // A conditional node's body: cuGraphDestroy refuses it.
  bool isConditionalBody = false;
  // Moved into a parent's child-graph node (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE): the parent owns it, and it can no
  // longer be destroyed, instantiated or added elsewhere on its own; its nodes' handles name the parent's nodes.
  bool movedIntoParent = false;
  // Graphs with conditional nodes have one executable graph at a time.
  std::atomic<bool> instantiated{false};
  bool owns(const GraphNode* node) const;
  static void forgetChildGraph(const GraphNode& node);

  std::vector<GraphNode*> nodes() const;
  // Nodes in an order that respects every edge; CUDA_ERROR_INVALID_VALUE if the graph has a cycle.
  Expected<std::vector<GraphNode*>> topologicalOrder() const;

  // References the graph holds on user objects (released with the graph; copied by clone and instantiate).
  void retainUserObject(const std::shared_ptr<UserObject>& object, unsigned count);
  CUresult releaseUserObject(const std::shared_ptr<UserObject>& object, unsigned count);

  // Guards nodes, edges and parameters (the API is thread-safe per graph, as documented).
  mutable std::recursive_mutex mutex;

 private:
  uint64_t handle_ = 0;
  std::map<std::shared_ptr<UserObject>, unsigned> userObjects_;
  std::vector<std::shared_ptr<ConditionalVariable>> conditionals_;
  std::vector<std::shared_ptr<GraphNode>> nodes_;  // creation order
};

// An instantiated graph: its nodes flattened (child graphs inlined) in topological order.
class GraphExec {
 public:
  static constexpr HandleKind kKind = HandleKind::GraphExec;
  struct Step {
    CUgraphNodeType type;
    NodeData data;
    uint64_t origin;  // the id of the graph node it came from (for cuGraphExec*SetParams)
    bool enabled = true;
  };

  GraphExec(Context& context, unsigned long long flags) : context_(context), flags_(flags) {}
  ~GraphExec();
  Context& context() const { return context_; }
  unsigned long long flags() const { return flags_; }
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }

  // Builds the steps of `graph`; CUDA_ERROR_INVALID_VALUE for a cycle (`errorNode` names a node on it).
  CUresult build(const Graph& graph, GraphNode** errorNode);
  // Submits every step, in order, to `stream`.
  CUresult launch(Stream& stream);
  // A launch from a kernel (cudaGraphLaunch): the nodes run one after the other on the calling thread.
  CUresult runHere();
  Step* stepFor(const GraphNode& node);
  std::mutex mutex;
  std::vector<Step> steps;
  // A copy of the graph as instantiated: the topology cuGraphExecUpdate compares with.
  std::shared_ptr<Graph> source;
  // The graph this was instantiated from, when it holds conditional nodes (it may be instantiated again once this
  // executable graph is gone).
  std::weak_ptr<Graph> conditionalOrigin;
  // Handles whose default value every launch assigns first.
  std::vector<std::shared_ptr<ConditionalVariable>> assignedAtLaunch;
  // The handles its kernels may set (cudaGraphSetConditional).
  std::shared_ptr<const ConditionalHandles> conditionals;

 private:
  Context& context_;
  const unsigned long long flags_;
  uint64_t handle_ = 0;
  // Launches of one executable graph run one after another, whichever streams they go to.
  StreamPosition lastLaunch_;
  bool launched_ = false;
};

// Stream work for one node's data, checked as the real driver checks it when the node is added or updated.
CUresult validateNode(const NodeData& data);
// The work a node does when it runs on `stream` (events excepted: they act on the stream itself).
// `conditionals`: the handles its kernels may set (null outside executable graphs).
CUresult submitNode(Stream& stream, CUgraphNodeType type, const NodeData& data,
                    const std::shared_ptr<const ConditionalHandles>& conditionals = nullptr);
// The stream work of a node that is not an event node (left empty for nodes that do nothing).
CUresult nodeWork(Context& context, const NodeData& data, StreamWork& work,
                  const std::shared_ptr<const ConditionalHandles>& conditionals = nullptr);

// The steps of a conditional node's bodies, run on the stream's worker when the node's turn comes.
struct ConditionalRun {
  CUgraphConditionalNodeType type;
  std::shared_ptr<ConditionalVariable> variable;
  std::vector<std::vector<GraphExec::Step>> bodies;
  std::shared_ptr<const ConditionalHandles> conditionals;  // the executable graph's
};

// ---- Stream capture ----------------------------------------------------------------------------------------

class CaptureSession {
 public:
  CaptureSession(std::shared_ptr<Graph> graph, std::shared_ptr<Stream> origin, CUstreamCaptureMode mode);
  const std::shared_ptr<Graph>& graph() const { return graph_; }
  const std::shared_ptr<Stream>& origin() const { return origin_; }
  CUstreamCaptureMode mode() const { return mode_; }
  uint64_t id() const { return id_; }
  std::thread::id thread() const { return thread_; }
  bool invalidated = false;
  bool graphCreatedByCapture = true;           // false for cuStreamBeginCaptureToGraph
  std::vector<std::weak_ptr<Stream>> streams;  // every stream that joined, the origin first

 private:
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<Stream> origin_;
  CUstreamCaptureMode mode_;
  uint64_t id_;
  std::thread::id thread_;
};

// The lock for every stream's capture state and every session.
std::mutex& captureMutex();

// Starts capturing `stream` (into a new graph, or `into` with initial dependencies).
CUresult beginCapture(const std::shared_ptr<Stream>& stream, CUstreamCaptureMode mode,
                      std::shared_ptr<Graph> into = nullptr, std::vector<GraphNode*> dependencies = {});
// Ends the capture begun on `stream`. A NULL `graphOut` ends it too and drops the graph. Ending on a stream that
// only joined the capture is CUDA_ERROR_STREAM_CAPTURE_UNMATCHED and invalidates the capture.
CUresult endCapture(const std::shared_ptr<Stream>& stream, CUgraph* graphOut);
struct CaptureInfo {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  uint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* dependencies = nullptr;
  size_t count = 0;
};
CaptureInfo captureInfo(Stream& stream);
CUresult updateCaptureDependencies(Stream& stream, const std::vector<GraphNode*>& nodes, unsigned flags);

// If `stream` is capturing, adds a node for the operation and answers true with its result in `result`.
bool captureIfCapturing(Stream& stream, CUgraphNodeType type, NodeData data, CUresult& result);
// An event record on a capturing stream remembers the capture point; a wait on such an event joins the
// waiting stream to the capture. Both answer false when capture is not involved.
bool captureEventRecord(Stream& stream, Event& event, CUresult& result);
bool captureEventWait(Stream& stream, Event& event, CUresult& result);
// Whether `stream` is capturing; the synchronising calls refuse to run then (and invalidate the capture).
bool isCapturing(Stream& stream);
void invalidateCapture(Stream& stream);
// Querying or waiting for an event recorded in a capture invalidates that capture (measured on an H200, driver
// 580); the call answers `answer` (CUDA_ERROR_CAPTURED_EVENT for a query, CUDA_ERROR_INVALID_VALUE for a wait).
CUresult refuseUseOfCapturedEvent(Event& event, CUresult answer);
// Work on the legacy stream while a blocking stream of its context captures: the implicit dependency is not
// allowed (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), and invalidates those captures.
CUresult checkLegacyImplicitCapture(Stream& legacy);

}  // namespace cuemu
