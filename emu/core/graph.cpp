#include "core/graph.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/memory.h"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace cuemu {
namespace {

std::atomic<uint64_t> g_nextNodeId{1};
std::atomic<uint64_t> g_nextCaptureId{1};

// Each thread's capture mode (cuThreadExchangeStreamCaptureMode), and the number of captures under way in
// global mode (any thread) and in thread-local mode begun by this thread.
thread_local CUstreamCaptureMode t_captureMode = CU_STREAM_CAPTURE_MODE_GLOBAL;
thread_local int t_threadLocalCaptures = 0;
std::atomic<int> g_globalCaptures{0};

}  // namespace

void KernelNodeData::pointParams() {
  paramPointers.clear();
  if (!request.function) return;
  for (const auto& param : request.function->info().params)
    paramPointers.push_back(request.params.data() + param.offset);
}

GraphNode::GraphNode(Graph& graph, CUgraphNodeType type, NodeData nodeData)
    : data(std::move(nodeData)), graph_(graph), type_(type), id_(g_nextNodeId.fetch_add(1)), origin_(id_) {
  if (auto* kernel = std::get_if<KernelNodeData>(&data)) kernel->pointParams();
}

void UserObject::release(unsigned count) {
  if (refs_.fetch_sub(count) - static_cast<long long>(count) > 0) return;
  handleTable<UserObject>().erase(handle_);
  if (destroy_) destroy_(pointer_);
}

void Graph::retainUserObject(const std::shared_ptr<UserObject>& object, unsigned count) {
  std::lock_guard lock(mutex);
  userObjects_[object] += count;
}

CUresult Graph::releaseUserObject(const std::shared_ptr<UserObject>& object, unsigned count) {
  {
    std::lock_guard lock(mutex);
    auto it = userObjects_.find(object);
    if (it == userObjects_.end() || it->second < count) return CUDA_ERROR_INVALID_VALUE;
    if ((it->second -= count) == 0) userObjects_.erase(it);
  }
  object->release(count);
  return CUDA_SUCCESS;
}

Graph::~Graph() {
  for (auto& node : nodes_) {
    handleTable<GraphNode>().erase(node->handle());
    forgetChildGraph(*node);
  }
  for (auto& [object, count] : userObjects_) object->release(count);
}

void Graph::registerHandle() {
  if (!handle_) handle_ = handleTable<Graph>().insert(shared_from_this());
}

bool Graph::owns(const GraphNode* node) const { return node && &node->graph() == this; }

Expected<GraphNode*> Graph::addNode(CUgraphNodeType type, NodeData data, const std::vector<GraphNode*>& dependencies) {
  std::lock_guard lock(mutex);
  for (std::size_t i = 0; i < dependencies.size(); ++i) {
    if (!owns(dependencies[i])) return makeError(CUDA_ERROR_INVALID_VALUE, "dependency of another graph");
    for (std::size_t j = 0; j < i; ++j)
      if (dependencies[j] == dependencies[i]) return makeError(CUDA_ERROR_INVALID_VALUE, "duplicate dependency");
  }
  auto node = std::make_shared<GraphNode>(*this, type, std::move(data));
  node->setHandle(handleTable<GraphNode>().insert(node));
  for (GraphNode* from : dependencies) {
    node->dependencies.push_back(from);
    from->dependents.push_back(node.get());
  }
  nodes_.push_back(node);
  return node.get();
}

CUresult Graph::addEdge(GraphNode* from, GraphNode* to) {
  std::lock_guard lock(mutex);
  if (!owns(from) || !owns(to) || from == to) return CUDA_ERROR_INVALID_VALUE;
  if (std::find(to->dependencies.begin(), to->dependencies.end(), from) != to->dependencies.end())
    return CUDA_ERROR_INVALID_VALUE;  // the edge exists already
  to->dependencies.push_back(from);
  from->dependents.push_back(to);
  return CUDA_SUCCESS;
}

CUresult Graph::removeEdge(GraphNode* from, GraphNode* to) {
  std::lock_guard lock(mutex);
  if (!owns(from) || !owns(to)) return CUDA_ERROR_INVALID_VALUE;
  auto it = std::find(to->dependencies.begin(), to->dependencies.end(), from);
  if (it == to->dependencies.end()) return CUDA_ERROR_INVALID_VALUE;
  to->dependencies.erase(it);
  std::erase(from->dependents, to);
  to->setEdgeFrom(from, CUgraphEdgeData{});
  return CUDA_SUCCESS;
}

CUgraphEdgeData GraphNode::edgeFrom(const GraphNode* from) const {
  for (const auto& [node, edge] : annotatedDependencies)
    if (node == from) return edge;
  return CUgraphEdgeData{};
}

void GraphNode::setEdgeFrom(GraphNode* from, const CUgraphEdgeData& edge) {
  std::erase_if(annotatedDependencies, [&](const auto& entry) { return entry.first == from; });
  CUgraphEdgeData zero{};
  if (std::memcmp(&edge, &zero, sizeof zero) != 0) annotatedDependencies.emplace_back(from, edge);
}

void Graph::destroyNode(GraphNode* node) {
  std::lock_guard lock(mutex);
  for (GraphNode* from : node->dependencies) std::erase(from->dependents, node);
  for (GraphNode* to : node->dependents) {
    std::erase(to->dependencies, node);
    to->setEdgeFrom(node, CUgraphEdgeData{});
  }
  handleTable<GraphNode>().erase(node->handle());
  forgetChildGraph(*node);
  std::erase_if(nodes_, [&](const std::shared_ptr<GraphNode>& n) { return n.get() == node; });
}

// A child-graph node's copy is registered (cuGraphChildGraphNodeGetGraph hands out its handle); the registration
// goes with the node, so that the copy, and the user-object references it holds, end with it.
void Graph::forgetChildGraph(const GraphNode& node) {
  if (auto* child = std::get_if<ChildGraphData>(&node.data); child && child->graph)
    handleTable<Graph>().erase(child->graph->handle());
}

std::vector<GraphNode*> Graph::nodes() const {
  std::lock_guard lock(mutex);
  std::vector<GraphNode*> out;
  for (auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::shared_ptr<Graph> Graph::clone() const {
  std::lock_guard lock(mutex);
  auto copy = std::make_shared<Graph>();
  copy->registerHandle();
  std::unordered_map<const GraphNode*, GraphNode*> map;
  for (auto& node : nodes_) {
    NodeData data = node->data;
    if (auto* child = std::get_if<ChildGraphData>(&data)) child->graph = child->graph->clone();
    if (auto* conditional = std::get_if<ConditionalNodeData>(&data)) {
      auto bodies = std::make_shared<ConditionalBodies>();
      for (auto& body : conditional->bodies->graphs) {
        auto copied = body->clone();
        copied->isConditionalBody = true;
        bodies->handles.push_back(copied->apiHandle());
        bodies->graphs.push_back(std::move(copied));
      }
      conditional->bodies = std::move(bodies);
    }
    auto added = copy->addNode(node->type(), std::move(data), {});
    (*added)->setOrigin(node->id());
    map[node.get()] = *added;
  }
  for (auto& node : nodes_) {
    for (GraphNode* from : node->dependencies) {
      map[node.get()]->dependencies.push_back(map[from]);
      map[from]->dependents.push_back(map[node.get()]);
    }
    for (const auto& [from, edge] : node->annotatedDependencies)
      map[node.get()]->annotatedDependencies.emplace_back(map[from], edge);
  }
  for (auto& [object, count] : userObjects_) {
    object->retain(count);
    copy->userObjects_[object] = count;
  }
  copy->conditionals_ = conditionals_;
  return copy;
}

bool Graph::hasConditional() const {
  std::lock_guard lock(mutex);
  for (auto& node : nodes_) {
    if (std::holds_alternative<ConditionalNodeData>(node->data)) return true;
    if (auto* child = std::get_if<ChildGraphData>(&node->data); child && child->graph->hasConditional()) return true;
  }
  return false;
}

bool Graph::madeConditionals() const {
  std::lock_guard lock(mutex);
  return !conditionals_.empty();
}

bool Graph::hasUnusedConditional() const {
  std::lock_guard lock(mutex);
  return std::any_of(conditionals_.begin(), conditionals_.end(),
                     [](const auto& variable) { return !variable->bound(); });
}

bool Graph::hasMemoryNodes() const {
  std::lock_guard lock(mutex);
  return std::any_of(nodes_.begin(), nodes_.end(), [](const auto& node) {
    return std::holds_alternative<MemAllocNodeData>(node->data) || std::holds_alternative<MemFreeNodeData>(node->data);
  });
}

void Graph::keepConditional(std::shared_ptr<ConditionalVariable> variable) {
  std::lock_guard lock(mutex);
  conditionals_.push_back(std::move(variable));
}

Expected<std::vector<GraphNode*>> Graph::topologicalOrder() const {
  std::lock_guard lock(mutex);
  std::unordered_map<const GraphNode*, std::size_t> waiting;
  std::vector<GraphNode*> order, ready;
  for (auto& node : nodes_) {
    waiting[node.get()] = node->dependencies.size();
    if (node->dependencies.empty()) ready.push_back(node.get());
  }
  // Creation order among ready nodes, so that a graph runs the same way every time.
  std::reverse(ready.begin(), ready.end());
  while (!ready.empty()) {
    GraphNode* node = ready.back();
    ready.pop_back();
    order.push_back(node);
    for (GraphNode* next : node->dependents)
      if (--waiting[next] == 0) ready.insert(ready.begin(), next);
  }
  if (order.size() != nodes_.size()) return makeError(CUDA_ERROR_INVALID_VALUE, "the graph has a cycle");
  return order;
}

// ---- executable graphs -----------------------------------------------------------------------------------

namespace {

// What a conditional node's body may hold (measured on an H100, driver 580: other nodes are accepted when added,
// and the instantiation fails with CUDA_ERROR_INVALID_VALUE).
bool allowedInConditionalBody(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_GRAPH:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return true;
    default: return false;
  }
}

struct Flattening {
  GraphNode** errorNode;
  std::vector<std::shared_ptr<ConditionalVariable>>* assigned;  // handles with CU_GRAPH_COND_ASSIGN_DEFAULT
  std::shared_ptr<ConditionalHandles> conditionals;             // every conditional node's handle
};

CUresult flatten(const Graph& graph, std::vector<GraphExec::Step>& steps, const Flattening& how, bool inBody) {
  auto order = graph.topologicalOrder();
  if (!order) {
    if (how.errorNode) {
      auto nodes = graph.nodes();
      *how.errorNode = nodes.empty() ? nullptr : nodes.front();
    }
    return order.error().code;
  }
  for (GraphNode* node : *order) {
    if (inBody && !allowedInConditionalBody(node->type())) {
      if (how.errorNode) *how.errorNode = node;
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (auto* child = std::get_if<ChildGraphData>(&node->data)) {
      if (CUresult r = flatten(*child->graph, steps, how, inBody)) return r;
      continue;
    }
    if (auto* conditional = std::get_if<ConditionalNodeData>(&node->data)) {
      auto run = std::make_shared<ConditionalRun>();
      run->type = conditional->type;
      run->variable = conditional->variable;
      run->conditionals = how.conditionals;
      how.conditionals->push_back(conditional->variable->handle());
      for (auto& body : conditional->bodies->graphs) {
        run->bodies.emplace_back();
        if (CUresult r = flatten(*body, run->bodies.back(), how, true)) return r;
      }
      if (how.assigned && run->variable->assignDefault &&
          std::find(how.assigned->begin(), how.assigned->end(), run->variable) == how.assigned->end())
        how.assigned->push_back(run->variable);
      ConditionalNodeData data = *conditional;
      data.run = std::move(run);
      data.bodies.reset();  // the body graphs' handles go with the graph, not with its executable graphs
      steps.push_back({node->type(), std::move(data), node->id()});
      continue;
    }
    steps.push_back({node->type(), node->data, node->id()});
  }
  return CUDA_SUCCESS;
}

}  // namespace

CUresult GraphExec::build(const Graph& graph, GraphNode** errorNode) {
  std::lock_guard lock(mutex);
  steps.clear();
  assignedAtLaunch.clear();
  auto handles = std::make_shared<ConditionalHandles>();
  conditionals = handles;
  return flatten(graph, steps, {errorNode, &assignedAtLaunch, std::move(handles)}, false);
}

GraphExec::~GraphExec() {
  if (auto origin = conditionalOrigin.lock()) origin->instantiated = false;
}

GraphExec::Step* GraphExec::stepFor(const GraphNode& node) {
  for (auto& step : steps)
    if (step.origin == node.id()) return &step;
  return nullptr;
}

CUresult GraphExec::launch(Stream& stream) {
  std::lock_guard lock(mutex);
  auto& streams = stream.context().streams();
  for (auto& step : steps)
    if (auto* alloc = std::get_if<MemAllocNodeData>(&step.data)) {
      bool freedByGraph = std::any_of(steps.begin(), steps.end(), [&](const Step& other) {
        auto* freed = std::get_if<MemFreeNodeData>(&other.data);
        return freed && freed->dptr == alloc->allocation->start();
      });
      bool autoFree = flags_ & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
      if (CUresult r = alloc->allocation->beginLaunch(stream.context(), freedByGraph, autoFree)) return r;
      if (!freedByGraph) keepLeftToApplication(alloc->allocation);
    }
  if (launched_ && lastLaunch_.stream.get() != &stream) streams.submit(stream, nullptr, {lastLaunch_});
  if (!assignedAtLaunch.empty())
    streams.submit(stream, [variables = assignedAtLaunch] {
      for (auto& variable : variables) variable->value = variable->defaultValue;
      return CUDA_SUCCESS;
    });
  for (auto& step : steps) {
    if (!step.enabled) continue;
    if (CUresult r = submitNode(stream, step.type, step.data, conditionals)) return r;
  }
  // The launch keeps the graph's user objects until its work is done, even if the executable graph is destroyed
  // while it runs (as on a GPU: cuda.core's test_inflight_launch_retains_attachments_until_completion).
  streams.submit(stream, [keep = source]() mutable {
    keep.reset();
    return CUDA_SUCCESS;
  });
  lastLaunch_ = streams.submit(stream, nullptr);
  launched_ = true;
  return CUDA_SUCCESS;
}

CUresult GraphExec::runHere() {
  std::vector<Step> copy;
  {
    std::lock_guard lock(mutex);
    copy = steps;
  }
  for (const Step& step : copy) {
    if (!step.enabled) continue;
    StreamWork work;
    if (CUresult r = nodeWork(context_, step.data, work, conditionals)) return r;
    if (work)
      if (CUresult r = work()) return r;
  }
  return CUDA_SUCCESS;
}

namespace {

// The allocation a memset node writes, checked: the whole 2D extent lies inside it (and, when it is about to
// run, that the memory is writable: registered host memory may be read-only or unmapped by then).
Expected<RegionPtr> memsetRegion(const CUDA_MEMSET_NODE_PARAMS& p, bool write,
                                 std::vector<RegionPtr>* continuation = nullptr) {
  if (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4)
    return makeError(CUDA_ERROR_INVALID_VALUE, "memset element size is not 1, 2 or 4");
  if (!p.width || !p.height || p.dst % p.elementSize)
    return makeError(CUDA_ERROR_INVALID_VALUE, "empty or misaligned memset");
  size_t rowBytes = p.width * p.elementSize;
  if (p.height > 1 && p.pitch < rowBytes) return makeError(CUDA_ERROR_INVALID_VALUE, "memset pitch below its width");
  size_t extent = (p.height - 1) * p.pitch + rowBytes;
  std::vector<RegionPtr> more;  // VMM mappings side by side (deviceRange)
  return deviceRange(p.dst, extent, write, continuation ? continuation : &more);
}

}  // namespace

CUresult validateNode(const NodeData& data) {
  if (auto* memset = std::get_if<MemsetNodeData>(&data)) {
    auto region = memsetRegion(memset->params, /*write=*/false);
    return region ? CUDA_SUCCESS : region.error().code;
  }
  if (auto* copy = std::get_if<MemcpyNodeData>(&data)) {
    auto prepared = prepareCopy(toPeerCopy(copy->copy));
    return prepared ? CUDA_SUCCESS : prepared.error().code;
  }
  if (auto* host = std::get_if<HostNodeData>(&data)) return host->fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  if (auto* kernel = std::get_if<KernelNodeData>(&data)) {
    if (!kernel->request.function) return CUDA_ERROR_INVALID_VALUE;
    return validateLaunch(kernel->request.function->module().context(), kernel->request);
  }
  return CUDA_SUCCESS;
}

CUresult submitNode(Stream& stream, CUgraphNodeType type, const NodeData& data,
                    const std::shared_ptr<const ConditionalHandles>& conditionals) {
  Context& context = stream.context();
  auto& streams = context.streams();
  switch (type) {
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: {
      auto& e = std::get<EventNodeData>(data);
      if (e.event) e.event->record(stream);
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
      auto& e = std::get<EventNodeData>(data);
      StreamPosition position;
      if (e.event && e.event->position(position)) streams.submit(stream, nullptr, {position});
      return CUDA_SUCCESS;
    }
    default: break;
  }
  StreamWork work;
  if (CUresult r = nodeWork(context, data, work, conditionals)) return r;
  if (work) streams.submit(stream, std::move(work));
  return CUDA_SUCCESS;
}

namespace {

// Runs the steps of one body on the calling thread (the stream's worker, inside the conditional node's work).
CUresult runBody(Context& context, const std::vector<GraphExec::Step>& steps,
                 const std::shared_ptr<const ConditionalHandles>& conditionals) {
  for (const auto& step : steps) {
    if (!step.enabled) continue;
    StreamWork work;
    if (CUresult r = nodeWork(context, step.data, work, conditionals)) return r;
    if (work)
      if (CUresult r = work()) return r;
  }
  return CUDA_SUCCESS;
}

CUresult runConditional(Context& context, const ConditionalRun& run) {
  ConditionalVariable& variable = *run.variable;
  switch (run.type) {
    case CU_GRAPH_COND_TYPE_IF: {
      unsigned value = variable.value.load();
      if (value) return runBody(context, run.bodies[0], run.conditionals);
      return run.bodies.size() > 1 ? runBody(context, run.bodies[1], run.conditionals) : CUDA_SUCCESS;
    }
    case CU_GRAPH_COND_TYPE_WHILE:
      while (variable.value.load())
        if (CUresult r = runBody(context, run.bodies[0], run.conditionals)) return r;
      return CUDA_SUCCESS;
    case CU_GRAPH_COND_TYPE_SWITCH: {
      unsigned value = variable.value.load();
      return value < run.bodies.size() ? runBody(context, run.bodies[value], run.conditionals) : CUDA_SUCCESS;
    }
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

CUresult nodeWork(Context& context, const NodeData& data, StreamWork& work,
                  const std::shared_ptr<const ConditionalHandles>& conditionals) {
  if (auto* alloc = std::get_if<MemAllocNodeData>(&data)) {
    work = [&context, allocation = alloc->allocation] { return allocation->ensureMapped(context); };
  } else if (auto* conditional = std::get_if<ConditionalNodeData>(&data)) {
    if (!conditional->run) return CUDA_ERROR_INVALID_VALUE;
    work = [&context, run = conditional->run] { return runConditional(context, *run); };
  } else if (auto* kernel = std::get_if<KernelNodeData>(&data)) {
    work = launchWork(kernel->request.function->module().context(), kernel->request, nullptr, conditionals);
  } else if (auto* copy = std::get_if<MemcpyNodeData>(&data)) {
    // Checked again at each launch: memory may have been freed since the node was made.
    auto prepared = prepareCopy(toPeerCopy(copy->copy));
    if (!prepared) return prepared.error().code;
    std::vector<RegionLease> leases;
    // memory freed after the launch checked it stays mapped under the running copy (leaseSide)
    if (CUresult r = leaseSide(prepared->dst, leases)) return r;
    if (CUresult r = leaseSide(prepared->src, leases)) return r;
    work = [c = *prepared, leases = std::move(leases)] {
      c.run();
      return CUDA_SUCCESS;
    };
  } else if (auto* memset = std::get_if<MemsetNodeData>(&data)) {
    std::vector<RegionPtr> continuation;
    auto region = memsetRegion(memset->params, /*write=*/true, &continuation);
    if (!region) return region.error().code;
    std::vector<RegionLease> leases;
    if (CUresult r = leaseRegion(*region, leases)) return r;
    if (CUresult r = leaseRegions(continuation, leases)) return r;
    work = [p = memset->params, leases = std::move(leases)] {
      fill2D(reinterpret_cast<uint8_t*>(p.dst), p.pitch, p.value, p.elementSize, p.width, p.height);
      return CUDA_SUCCESS;
    };
  } else if (auto* host = std::get_if<HostNodeData>(&data)) {
    work = [fn = host->fn, user = host->userData] {
      fn(user);
      return CUDA_SUCCESS;
    };
  } else if (auto* captured = std::get_if<CapturedWorkData>(&data)) {
    work = captured->work;
  }
  return CUDA_SUCCESS;  // empty nodes: no work
}

// ---- stream capture ----------------------------------------------------------------------------------------

std::mutex& captureMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

CaptureSession::CaptureSession(std::shared_ptr<Graph> graph, std::shared_ptr<Stream> origin, CUstreamCaptureMode mode)
    : graph_(std::move(graph)),
      origin_(std::move(origin)),
      mode_(mode),
      id_(g_nextCaptureId.fetch_add(1)),
      thread_(std::this_thread::get_id()) {}

namespace {

void setDependencies(Stream& stream, std::vector<GraphNode*> nodes) {
  stream.captureDependencies = std::move(nodes);
  stream.captureDependencyHandles.clear();
  for (GraphNode* node : stream.captureDependencies) stream.captureDependencyHandles.push_back(node->apiHandle());
}

void leaveCapture(Stream& stream) {
  stream.captureSession.reset();
  setDependencies(stream, {});
}

// Every capture under way (under captureMutex()), for refuseUnsafeCallDuringCapture.
std::vector<CaptureSession*>& liveSessions() {
  static auto* sessions = new std::vector<CaptureSession*>;
  return *sessions;
}

void countCapture(CaptureSession& session, int delta) {
  auto& live = liveSessions();
  if (delta > 0)
    live.push_back(&session);
  else
    live.erase(std::remove(live.begin(), live.end(), &session), live.end());
  if (session.mode() == CU_STREAM_CAPTURE_MODE_GLOBAL) g_globalCaptures.fetch_add(delta);
  if (session.mode() == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && session.thread() == std::this_thread::get_id())
    t_threadLocalCaptures += delta;
}

}  // namespace

CUresult beginCapture(const std::shared_ptr<Stream>& stream, CUstreamCaptureMode mode, std::shared_ptr<Graph> into,
                      std::vector<GraphNode*> dependencies) {
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  if (stream->kind() == Stream::Kind::Legacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  for (GraphNode* node : dependencies)
    if (!into || !into->owns(node)) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(captureMutex());
  if (stream->captureSession) return CUDA_ERROR_ILLEGAL_STATE;
  bool created = !into;
  if (created) {
    into = std::make_shared<Graph>();
    into->registerHandle();
  }
  stream->captureSession = std::make_shared<CaptureSession>(std::move(into), stream, mode);
  stream->captureSession->graphCreatedByCapture = created;
  stream->captureSession->streams.push_back(stream);
  setDependencies(*stream, std::move(dependencies));
  countCapture(*stream->captureSession, +1);
  return CUDA_SUCCESS;
}

CUresult endCapture(const std::shared_ptr<Stream>& stream, CUgraph* graphOut) {
  std::lock_guard lock(captureMutex());
  auto session = stream->captureSession;
  if (!session) return CUDA_ERROR_ILLEGAL_STATE;
  if (session->origin() != stream) {
    // Measured on driver 580: the refused end spoils the capture; the origin's end then answers INVALIDATED.
    session->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  }
  if (session->mode() != CU_STREAM_CAPTURE_MODE_RELAXED && session->thread() != std::this_thread::get_id())
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  // Every stream that joined must have been joined back: its last node must be an ancestor of (or one of) the
  // origin's current dependencies.
  bool unjoined = false;
  if (!session->invalidated) {
    std::vector<const GraphNode*> reach(stream->captureDependencies.begin(), stream->captureDependencies.end());
    std::vector<const GraphNode*> seen;
    while (!reach.empty()) {
      const GraphNode* n = reach.back();
      reach.pop_back();
      if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
      seen.push_back(n);
      for (const GraphNode* d : n->dependencies) reach.push_back(d);
    }
    for (auto& weak : session->streams) {
      auto other = weak.lock();
      if (!other || other == stream || other->captureSession != session) continue;
      for (const GraphNode* n : other->captureDependencies)
        if (std::find(seen.begin(), seen.end(), n) == seen.end()) unjoined = true;
    }
  }
  for (auto& weak : session->streams)
    if (auto other = weak.lock(); other && other->captureSession == session) leaveCapture(*other);
  countCapture(*session, -1);
  // Without a place to put the graph the capture still ends (measured on driver 580); the graph is dropped.
  if (session->invalidated || unjoined || !graphOut) {
    if (graphOut) *graphOut = nullptr;
    if (session->graphCreatedByCapture) handleTable<Graph>().erase(session->graph()->handle());
    if (session->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (unjoined) return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    return CUDA_SUCCESS;
  }
  *graphOut = session->graph()->apiHandle();
  return CUDA_SUCCESS;
}

CaptureInfo captureInfo(Stream& stream) {
  std::lock_guard lock(captureMutex());
  CaptureInfo info;
  auto& session = stream.captureSession;
  if (!session) return info;
  info.status = session->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  // An invalidated capture shows no id, graph or dependencies: cuStreamGetCaptureInfo leaves the caller's untouched
  // (driver 580; NVIDIA Warp takes its NULL graph for a failed capture and clears the runtime's error).
  if (session->invalidated) return info;
  info.id = session->id();
  info.graph = session->graph()->apiHandle();
  info.dependencies = stream.captureDependencyHandles.empty() ? nullptr : stream.captureDependencyHandles.data();
  info.count = stream.captureDependencyHandles.size();
  return info;
}

CUresult updateCaptureDependencies(Stream& stream, const std::vector<GraphNode*>& nodes, unsigned flags) {
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(captureMutex());
  auto& session = stream.captureSession;
  if (!session) return CUDA_ERROR_ILLEGAL_STATE;
  if (session->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  for (GraphNode* node : nodes)
    if (!session->graph()->owns(node)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> next =
      flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES ? std::vector<GraphNode*>{} : stream.captureDependencies;
  for (GraphNode* node : nodes)
    if (std::find(next.begin(), next.end(), node) == next.end()) next.push_back(node);
  setDependencies(stream, std::move(next));
  return CUDA_SUCCESS;
}

bool captureIfCapturing(Stream& stream, CUgraphNodeType type, NodeData data, CUresult& result) {
  std::lock_guard lock(captureMutex());
  auto& session = stream.captureSession;
  if (!session) return false;
  if (session->invalidated) {
    result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return true;
  }
  auto node = session->graph()->addNode(type, std::move(data), stream.captureDependencies);
  if (!node) {
    result = node.error().code;
    return true;
  }
  setDependencies(stream, {*node});
  result = CUDA_SUCCESS;
  return true;
}

bool captureEventRecord(Stream& stream, Event& event, CUresult& result) {
  std::lock_guard lock(captureMutex());
  auto& session = stream.captureSession;
  if (!session) {
    event.captureSession.reset();
    event.captureNodes.clear();
    return false;
  }
  result = session->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
  if (!session->invalidated) {
    event.captureSession = session;
    event.captureNodes = stream.captureDependencies;
  }
  return true;
}

bool captureEventWait(Stream& stream, Event& event, CUresult& result) {
  std::lock_guard lock(captureMutex());
  auto eventSession = event.captureSession.lock();
  auto& session = stream.captureSession;
  if (!eventSession) {
    // An event from outside any capture: a capturing stream may not depend on it.
    if (!session) return false;
    result = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    session->invalidated = true;
    return true;
  }
  if (session && session != eventSession) {
    result = CUDA_ERROR_STREAM_CAPTURE_MERGE;
    session->invalidated = true;
    eventSession->invalidated = true;
    return true;
  }
  if (eventSession->invalidated) {
    result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return true;
  }
  if (stream.kind() == Stream::Kind::Legacy) {
    // The legacy stream cannot take part in a capture.
    eventSession->invalidated = true;
    result = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    return true;
  }
  std::vector<GraphNode*> next;
  if (session) {
    next = stream.captureDependencies;  // a join: the stream now follows both
  } else {
    stream.captureSession = eventSession;  // a fork: the stream joins the capture
    eventSession->streams.push_back(stream.shared_from_this());
  }
  for (GraphNode* node : event.captureNodes)
    if (std::find(next.begin(), next.end(), node) == next.end()) next.push_back(node);
  setDependencies(stream, std::move(next));
  result = CUDA_SUCCESS;
  return true;
}

bool isCapturing(Stream& stream) {
  std::lock_guard lock(captureMutex());
  return stream.captureSession != nullptr;
}

void invalidateCapture(Stream& stream) {
  std::lock_guard lock(captureMutex());
  if (stream.captureSession) stream.captureSession->invalidated = true;
}

CUresult refuseUseOfCapturedEvent(Event& event, CUresult answer) {
  std::lock_guard lock(captureMutex());
  if (auto session = event.captureSession.lock()) session->invalidated = true;
  return answer;
}

CUresult checkLegacyImplicitCapture(Stream& legacy) {
  CUresult result = CUDA_SUCCESS;
  auto streams = legacy.context().streams().allStreams();
  std::lock_guard lock(captureMutex());
  for (auto& s : streams)
    if (s->isBlocking() && s->captureSession) {
      s->captureSession->invalidated = true;
      result = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
  return result;
}

bool unsafeCallRefusedDuringCapture() {
  if (t_captureMode == CU_STREAM_CAPTURE_MODE_RELAXED) return false;
  if (t_threadLocalCaptures > 0) return true;
  return t_captureMode == CU_STREAM_CAPTURE_MODE_GLOBAL && g_globalCaptures.load() > 0;
}

CUresult refuseUnsafeCallDuringCapture() {
  std::lock_guard lock(captureMutex());
  for (CaptureSession* session : liveSessions()) {
    bool global = session->mode() == CU_STREAM_CAPTURE_MODE_GLOBAL && t_captureMode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    bool ownThreadLocal =
        session->mode() == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && session->thread() == std::this_thread::get_id();
    if (global || ownThreadLocal) session->invalidated = true;
  }
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUstreamCaptureMode exchangeThreadCaptureMode(CUstreamCaptureMode mode) {
  CUstreamCaptureMode previous = t_captureMode;
  t_captureMode = mode;
  return previous;
}

// ---- graph memory (MEM_ALLOC / MEM_FREE nodes) ------------------------------------------------------------------

namespace {

struct GraphMemoryUsage {
  uint64_t current = 0;
  uint64_t high = 0;
};

struct GraphMemoryRegistry {
  std::mutex mutex;
  std::map<int, GraphMemoryUsage> usage;                         // by device ordinal
  std::map<CUdeviceptr, GraphAllocation*> live;                  // every graph allocation still held, by start
  std::set<std::shared_ptr<GraphAllocation>> leftToApplication;  // kept past their graphs (keepLeftToApplication)
};

GraphMemoryRegistry& graphMemory() {
  static auto* registry = new GraphMemoryRegistry;
  return *registry;
}

}  // namespace

GraphAllocation::GraphAllocation(RegionPtr r, int d)
    : region_(std::move(r)), start_(region_->start), size_(region_->size), device_(d) {
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);
  auto& use = registry.usage[device_];
  use.current += size_;
  use.high = std::max(use.high, use.current);
  registry.live[start_] = this;
}

GraphAllocation::~GraphAllocation() {
  {
    auto& registry = graphMemory();
    std::lock_guard lock(registry.mutex);
    registry.usage[device_].current -= size_;
    registry.live.erase(start_);
  }
  // The addresses go back to the address space now (or when freed memory's last copy ends), and the memory too
  // unless the application freed it.
  std::lock_guard lock(mutex_);
  AddressSpace::instance().stopHolding(*region_);
  if (mapped()) (void)releaseRegion(start_, {MemoryKind::Device});
}

bool GraphAllocation::mapped() const { return AddressSpace::instance().findStart(start_) == region_; }

CUresult GraphAllocation::beginLaunch(Context& context, bool freedByGraph, bool autoFree) {
  std::lock_guard lock(mutex_);
  // With auto-free the live allocation is freed and made again at the same address: cuemu keeps its mapping.
  if (leftToApplication_ && mapped() && !region_->freePending.load() && !autoFree) return CUDA_ERROR_INVALID_VALUE;
  if (!mapped()) {  // freed by the application: allocated again now, so that the nodes after it find it
    auto region = context.memory().allocateDeviceAt(size_, start_);
    if (!region) return region.error().code;
    region_ = std::move(*region);
  }
  leftToApplication_ = !freedByGraph;
  return CUDA_SUCCESS;
}

bool GraphAllocation::freedByApplication() {
  std::lock_guard lock(mutex_);
  return !mapped() || region_->freePending.load();
}

bool GraphAllocation::heldByApplication() {
  std::lock_guard lock(mutex_);
  return leftToApplication_ && mapped() && !region_->freePending.load();
}

void keepLeftToApplication(std::shared_ptr<GraphAllocation> allocation) {
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);
  registry.leftToApplication.insert(std::move(allocation));
}

void trimGraphMemory(int device) {
  std::vector<std::shared_ptr<GraphAllocation>> released;  // destroyed outside the registry's lock
  {
    auto& registry = graphMemory();
    std::lock_guard lock(registry.mutex);
    for (auto it = registry.leftToApplication.begin(); it != registry.leftToApplication.end();) {
      if ((*it)->device() == device && (*it)->freedByApplication()) {
        released.push_back(*it);
        it = registry.leftToApplication.erase(it);
      } else {
        ++it;
      }
    }
  }
}

CUresult GraphAllocation::ensureMapped(Context& context) {
  std::lock_guard lock(mutex_);
  if (mapped()) return CUDA_SUCCESS;
  auto region = context.memory().allocateDeviceAt(size_, start_);
  if (!region) return region.error().code;
  region_ = std::move(*region);
  return CUDA_SUCCESS;
}

Expected<NodeData> makeGraphAllocation(Context& context, const CUDA_MEM_ALLOC_NODE_PARAMS& params) {
  const CUmemPoolProps& props = params.poolProps;
  if (!params.bytesize) return makeError(CUDA_ERROR_INVALID_VALUE, "a graph allocation of zero bytes");
  // Driver 580 (tools/gpu-probe/ipc17.cpp): pinned and managed allocations on a device are made (a managed one is
  // device memory: CU_POINTER_ATTRIBUTE_IS_MANAGED 0), host locations and managed memory with no location are
  // NOT_SUPPORTED, other allocation types INVALID_VALUE.
  if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED && props.allocType != CU_MEM_ALLOCATION_TYPE_MANAGED)
    return makeError(CUDA_ERROR_INVALID_VALUE, "graph allocations are pinned or managed memory");
  bool hostLocation = props.location.type == CU_MEM_LOCATION_TYPE_HOST ||
                      props.location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
                      props.location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  bool managedAnywhere =
      props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED && props.location.type == CU_MEM_LOCATION_TYPE_NONE;
  if (hostLocation || managedAnywhere)
    return makeError(CUDA_ERROR_NOT_SUPPORTED, "graph allocations are device memory");
  if (props.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return makeError(CUDA_ERROR_INVALID_VALUE, "graph allocations are device memory");
  if (props.location.id != context.device().ordinal())
    return makeError(CUDA_ERROR_INVALID_VALUE, "a graph allocation on another device than the context's");
  if (params.accessDescCount && !params.accessDescs) return makeError(CUDA_ERROR_INVALID_VALUE, "no access list");
  // Its own mapping: a later launch makes it again at the same address (allocateDeviceAt).
  auto region = context.memory().allocateDevice(params.bytesize, /*ownMapping=*/true);
  if (!region) return region.takeError();
  MemAllocNodeData data;
  data.params = params;
  data.params.accessDescs = nullptr;
  data.params.accessDescCount = 0;
  data.params.dptr = (*region)->start;
  data.allocation = std::make_shared<GraphAllocation>(std::move(*region), context.device().ordinal());
  return NodeData{std::move(data)};
}

bool isGraphAllocation(CUdeviceptr dptr) {
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);
  return registry.live.count(dptr) != 0;
}

bool applicationMayFree(CUdeviceptr dptr) {
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);  // then the allocation's, as trimGraphMemory takes them
  auto it = registry.live.find(dptr);
  return it == registry.live.end() || it->second->heldByApplication();
}

CUresult graphMemAttribute(int device, CUgraphMem_attribute attribute, uint64_t* value) {
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);
  const GraphMemoryUsage& use = registry.usage[device];
  switch (attribute) {
    // cuemu maps all of a graph allocation at once: what is reserved is what is used.
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: *value = use.current; return CUDA_SUCCESS;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *value = use.high; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult resetGraphMemHighWatermark(int device, CUgraphMem_attribute attribute) {
  if (attribute != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attribute != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
    return CUDA_ERROR_INVALID_VALUE;
  auto& registry = graphMemory();
  std::lock_guard lock(registry.mutex);
  auto& use = registry.usage[device];
  use.high = use.current;
  return CUDA_SUCCESS;
}

// ---- conditional nodes -----------------------------------------------------------------------------------------

namespace {

struct ConditionalRegistry {
  std::mutex mutex;
  std::unordered_map<CUgraphConditionalHandle, std::weak_ptr<ConditionalVariable>> variables;
  CUgraphConditionalHandle next = 1;
};

ConditionalRegistry& conditionalRegistry() {
  static auto* registry = new ConditionalRegistry;
  return *registry;
}

}  // namespace

ConditionalVariable::ConditionalVariable(unsigned defaultValue_, bool assignDefault_)
    : defaultValue(defaultValue_), assignDefault(assignDefault_) {
  auto& registry = conditionalRegistry();
  std::lock_guard lock(registry.mutex);
  handle_ = registry.next++;
}

ConditionalVariable::~ConditionalVariable() {
  auto& registry = conditionalRegistry();
  std::lock_guard lock(registry.mutex);
  registry.variables.erase(handle_);
}

std::shared_ptr<ConditionalVariable> makeConditionalVariable(unsigned defaultValue, bool assignDefault) {
  auto variable = std::make_shared<ConditionalVariable>(defaultValue, assignDefault);
  auto& registry = conditionalRegistry();
  std::lock_guard lock(registry.mutex);
  registry.variables[variable->handle()] = variable;
  return variable;
}

bool ConditionalVariable::bound() const {
  auto& registry = conditionalRegistry();
  std::lock_guard lock(registry.mutex);
  return !boundNode.expired();
}

std::shared_ptr<ConditionalVariable> findConditional(CUgraphConditionalHandle handle) {
  auto& registry = conditionalRegistry();
  std::lock_guard lock(registry.mutex);
  auto it = registry.variables.find(handle);
  return it == registry.variables.end() ? nullptr : it->second.lock();
}

bool setConditionalValue(const ConditionalHandles* allowed, CUgraphConditionalHandle handle, unsigned value) {
  if (!allowed || std::find(allowed->begin(), allowed->end(), handle) == allowed->end()) return false;
  if (auto variable = findConditional(handle)) variable->value = value;
  return true;
}

ConditionalBodies::~ConditionalBodies() {
  for (auto& graph : graphs) handleTable<Graph>().erase(graph->handle());
}

Expected<NodeData> makeConditional(const CUDA_CONDITIONAL_NODE_PARAMS& params) {
  bool sizeAllowed = false;
  switch (params.type) {
    case CU_GRAPH_COND_TYPE_IF: sizeAllowed = params.size == 1 || params.size == 2; break;
    case CU_GRAPH_COND_TYPE_WHILE: sizeAllowed = params.size == 1; break;
    case CU_GRAPH_COND_TYPE_SWITCH: sizeAllowed = params.size > 0; break;
    default: return makeError(CUDA_ERROR_INVALID_VALUE, "unknown conditional node type");
  }
  if (!sizeAllowed)
    return makeError(CUDA_ERROR_INVALID_VALUE, "a number of bodies the conditional type does not allow");
  auto variable = findConditional(params.handle);
  if (!variable) return makeError(CUDA_ERROR_INVALID_VALUE, "unknown conditional handle");
  if (variable->bound()) return makeError(CUDA_ERROR_INVALID_VALUE, "the conditional handle is used by another node");
  ConditionalNodeData data;
  data.type = params.type;
  data.variable = std::move(variable);
  data.bodies = std::make_shared<ConditionalBodies>();
  for (unsigned i = 0; i < params.size; ++i) {
    auto body = std::make_shared<Graph>();
    body->registerHandle();
    body->isConditionalBody = true;
    data.bodies->handles.push_back(body->apiHandle());
    data.bodies->graphs.push_back(std::move(body));
  }
  data.binding = std::make_shared<char>();
  {
    auto& registry = conditionalRegistry();
    std::lock_guard lock(registry.mutex);
    data.variable->boundNode = data.binding;
  }
  return NodeData{std::move(data)};
}

}  // namespace cuemu
