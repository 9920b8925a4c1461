// Graph entry points: building graphs, node parameters, instantiation, launch and update of executable graphs.
// Graph and node handles that are NULL or stale answer CUDA_ERROR_INVALID_VALUE, as the real driver does.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/module.h"
#include "core/stream_lookup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cctype>
#include <cstdio>
#include <unordered_map>

namespace cuemu {
namespace {

Expected<std::vector<GraphNode*>> nodeList(const CUgraphNode* handles, size_t count) {
  if (count && !handles) return makeError(CUDA_ERROR_INVALID_VALUE, "NULL dependency array");
  std::vector<GraphNode*> nodes;
  for (size_t i = 0; i < count; ++i) {
    auto node = lookup<GraphNode>(handles[i], CUDA_ERROR_INVALID_VALUE);
    if (!node) return node.takeError();
    nodes.push_back(node->get());
  }
  return nodes;
}

// An edge's data as CUDA 13 defines it: an ordinary dependency (all zero); from a kernel node, one that opens at
// the kernel's programmatic trigger or once all its blocks have begun (from_port PROGRAMMATIC or LAUNCH_ORDER); a
// programmatic dependency (type PROGRAMMATIC) only between two kernel nodes and from one of those two ports. No
// node type has a non-zero to_port, and the reserved bytes are zero.
CUresult checkEdge(const CUgraphEdgeData& edge, CUgraphNodeType fromType, CUgraphNodeType toType) {
  for (unsigned char reserved : edge.reserved)
    if (reserved) return CUDA_ERROR_INVALID_VALUE;
  if (edge.to_port != 0 || edge.from_port > CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER) return CUDA_ERROR_INVALID_VALUE;
  if (edge.from_port != CU_GRAPH_KERNEL_NODE_PORT_DEFAULT && fromType != CU_GRAPH_NODE_TYPE_KERNEL)
    return CUDA_ERROR_INVALID_VALUE;
  switch (edge.type) {
    case CU_GRAPH_DEPENDENCY_TYPE_DEFAULT: return CUDA_SUCCESS;
    case CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC:
      if (fromType != CU_GRAPH_NODE_TYPE_KERNEL || toType != CU_GRAPH_NODE_TYPE_KERNEL ||
          edge.from_port == CU_GRAPH_KERNEL_NODE_PORT_DEFAULT)
        return CUDA_ERROR_INVALID_VALUE;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult checkEdges(const CUgraphEdgeData* edges, const std::vector<GraphNode*>& from, CUgraphNodeType toType) {
  if (!edges) return CUDA_SUCCESS;
  for (size_t i = 0; i < from.size(); ++i)
    if (CUresult r = checkEdge(edges[i], from[i]->type(), toType)) return r;
  return CUDA_SUCCESS;
}

CUresult addNode(CUgraphNode* out, CUgraph graphHandle, const CUgraphNode* deps, size_t count, CUgraphNodeType type,
                 NodeData data, const CUgraphEdgeData* edges = nullptr) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  auto nodes = nodeList(deps, count);
  if (!nodes) return nodes.error().code;
  if (CUresult r = checkEdges(edges, *nodes, type)) return r;
  if (CUresult r = validateNode(data)) return r;
  auto node = graph->addNode(type, std::move(data), *nodes);
  if (!node) return node.error().code;
  if (edges) {
    std::lock_guard lock(graph->mutex);
    for (size_t i = 0; i < count; ++i) (*node)->setEdgeFrom((*nodes)[i], edges[i]);
  }
  *out = (*node)->apiHandle();
  return CUDA_SUCCESS;
}

// ---- node parameters in the driver's forms ------------------------------------------------------------------

Expected<KernelNodeData> kernelData(const CUDA_KERNEL_NODE_PARAMS_v2& p) {
  CUfunction handle = p.func ? p.func : reinterpret_cast<CUfunction>(p.kern);
  auto function = resolveFunction(handle);
  if (!function) return makeError(CUDA_ERROR_INVALID_VALUE, "invalid kernel");
  auto params = packKernelParams((*function)->info(), p.kernelParams, p.extra);
  if (!params) return params.takeError();
  KernelNodeData data;
  data.request = LaunchRequest{*function,
                               {p.gridDimX, p.gridDimY, p.gridDimZ},
                               {p.blockDimX, p.blockDimY, p.blockDimZ},
                               p.sharedMemBytes,
                               std::move(*params),
                               false};
  data.kernel = p.func ? nullptr : p.kern;
  data.context = p.ctx;
  data.pointParams();
  return data;
}

CUDA_KERNEL_NODE_PARAMS_v2 toV2(const CUDA_KERNEL_NODE_PARAMS_v1& p) {
  CUDA_KERNEL_NODE_PARAMS_v2 out{};
  out.func = p.func;
  out.gridDimX = p.gridDimX, out.gridDimY = p.gridDimY, out.gridDimZ = p.gridDimZ;
  out.blockDimX = p.blockDimX, out.blockDimY = p.blockDimY, out.blockDimZ = p.blockDimZ;
  out.sharedMemBytes = p.sharedMemBytes;
  out.kernelParams = p.kernelParams;
  out.extra = p.extra;
  return out;
}

CUDA_KERNEL_NODE_PARAMS_v2 toV2(const CUDA_KERNEL_NODE_PARAMS_v3& p) {
  return CUDA_KERNEL_NODE_PARAMS_v2{p.func,      p.gridDimX,       p.gridDimY,     p.gridDimZ, p.blockDimX, p.blockDimY,
                                    p.blockDimZ, p.sharedMemBytes, p.kernelParams, p.extra,    p.kern,      p.ctx};
}

CUDA_KERNEL_NODE_PARAMS_v2 kernelParams(KernelNodeData& data) {
  CUDA_KERNEL_NODE_PARAMS_v2 out{};
  const auto& r = data.request;
  out.func = data.kernel ? nullptr : toApiHandle<CUfunction>(r.function->handle());
  out.kern = data.kernel;
  out.ctx = data.context;
  out.gridDimX = r.grid.x, out.gridDimY = r.grid.y, out.gridDimZ = r.grid.z;
  out.blockDimX = r.block.x, out.blockDimY = r.block.y, out.blockDimZ = r.block.z;
  out.sharedMemBytes = r.dynamicSharedBytes;
  data.pointParams();
  out.kernelParams = data.paramPointers.data();
  return out;
}

Expected<NodeData> memsetData(const CUDA_MEMSET_NODE_PARAMS& p, CUcontext ctx) {
  MemsetNodeData data{p, ctx};
  if (data.params.height == 1 && !data.params.pitch) data.params.pitch = data.params.width * data.params.elementSize;
  return NodeData{data};
}

Expected<std::shared_ptr<Event>> eventOf(CUevent handle) { return lookup<Event>(handle, CUDA_ERROR_INVALID_VALUE); }

// Graph memory: a MEM_ALLOC node allocates in the current context when it is made; a MEM_FREE node names memory
// a graph allocated.
Expected<NodeData> memAllocData(const CUDA_MEM_ALLOC_NODE_PARAMS& p) {
  auto context = requireCurrentContext();
  if (!context) return context.takeError();
  return makeGraphAllocation(**context, p);
}

Expected<NodeData> memFreeData(CUdeviceptr dptr) {
  if (!isGraphAllocation(dptr)) return makeError(CUDA_ERROR_INVALID_VALUE, "not the start of memory a graph allocated");
  return NodeData{MemFreeNodeData{dptr}};
}

CUresult addMemAllocNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                         const CUDA_MEM_ALLOC_NODE_PARAMS& params, CUdeviceptr* dptrOut) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(owner, Graph, graph, CUDA_ERROR_INVALID_VALUE);
  auto data = memAllocData(params);
  if (!data) return data.error().code;
  CUdeviceptr dptr = std::get<MemAllocNodeData>(*data).params.dptr;
  CUresult r = addNode(out, graph, deps, count, CU_GRAPH_NODE_TYPE_MEM_ALLOC, std::move(*data));
  if (r == CUDA_SUCCESS) *dptrOut = dptr;
  return r;
}

// Converts the generic CUgraphNodeParams form (cuGraphAddNode, cuGraphNodeSetParams).
Expected<NodeData> genericData(const CUgraphNodeParams& p) {
  switch (p.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      auto data = kernelData(toV2(p.kernel));
      if (!data) return data.takeError();
      return NodeData{std::move(*data)};
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: return NodeData{MemcpyNodeData{p.memcpy.copyParams, p.memcpy.copyCtx}};
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS m{p.memset.dst,         p.memset.pitch, p.memset.value,
                                p.memset.elementSize, p.memset.width, p.memset.height};
      return memsetData(m, p.memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: return NodeData{HostNodeData{p.host.fn, p.host.userData}};
    case CU_GRAPH_NODE_TYPE_EMPTY: return NodeData{};
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
      CUevent handle = p.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? p.eventRecord.event : p.eventWait.event;
      auto event = eventOf(handle);
      if (!event) return event.takeError();
      return NodeData{EventNodeData{*event, handle}};
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      auto child = lookup<Graph>(p.graph.graph, CUDA_ERROR_INVALID_VALUE);
      if (!child) return child.takeError();
      if ((*child)->hasConditional())
        return makeError(CUDA_ERROR_NOT_SUPPORTED, "a child graph with conditional nodes");
      return NodeData{ChildGraphData{(*child)->clone()}};
    }
    default: return makeError(CUDA_ERROR_NOT_SUPPORTED, "node type not supported by cuemu");
  }
}

// Node parameter access with the type checked: CUDA_ERROR_INVALID_VALUE for a node of another type.
template <typename T> CUresult withNodeData(CUgraphNode handle, CUgraphNodeType type, auto&& fn) {
  CUEMU_LOOKUP(node, GraphNode, handle, CUDA_ERROR_INVALID_VALUE);
  if (node->type() != type) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(node->graph().mutex);
  auto* data = std::get_if<T>(&node->data);
  if (!data) return CUDA_ERROR_NOT_SUPPORTED;  // a captured operation without a parameter form
  return fn(*data, *node);
}

CUresult setNodeData(CUgraphNode handle, CUgraphNodeType type, Expected<NodeData> data) {
  CUEMU_LOOKUP(node, GraphNode, handle, CUDA_ERROR_INVALID_VALUE);
  if (node->type() != type) return CUDA_ERROR_INVALID_VALUE;
  if (!data) return data.error().code;
  if (CUresult r = validateNode(*data)) return r;
  std::lock_guard lock(node->graph().mutex);
  node->data = std::move(*data);
  return CUDA_SUCCESS;
}

// Whether the node `origin` is among `steps` or in the body of a conditional step, at any depth.
bool holdsStep(const std::vector<GraphExec::Step>& steps, uint64_t origin) {
  for (const auto& step : steps) {
    if (step.origin == origin) return true;
    if (auto* c = std::get_if<ConditionalNodeData>(&step.data); c && c->run)
      for (const auto& body : c->run->bodies)
        if (holdsStep(body, origin)) return true;
  }
  return false;
}

// Gives the step of node `origin` (in `steps` or in a conditional step's bodies) new data. A body changes in a
// copy of its conditional's run, so launches already queued keep what they were submitted with.
bool setStepData(std::vector<GraphExec::Step>& steps, uint64_t origin, NodeData& data) {
  for (auto& step : steps) {
    if (step.origin == origin) {
      step.data = std::move(data);
      return true;
    }
    auto* c = std::get_if<ConditionalNodeData>(&step.data);
    if (!c || !c->run) continue;
    for (size_t b = 0; b < c->run->bodies.size(); ++b) {
      if (!holdsStep(c->run->bodies[b], origin)) continue;
      auto run = std::make_shared<ConditionalRun>(*c->run);
      setStepData(run->bodies[b], origin, data);
      c->run = std::move(run);
      return true;
    }
  }
  return false;
}

// cuGraphExec*SetParams: nodes of the graph instantiated, inlined child graphs' and conditional bodies' included
// (XLA updates the kernels in the bodies of its conditional nodes, lax.cond's branches, between launches).
CUresult execSetData(CUgraphExec execHandle, CUgraphNode nodeHandle, CUgraphNodeType type, Expected<NodeData> data) {
  CUEMU_LOOKUP(exec, GraphExec, execHandle, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(node, GraphNode, nodeHandle, CUDA_ERROR_INVALID_VALUE);
  if (node->type() != type) return CUDA_ERROR_INVALID_VALUE;
  if (!data) return data.error().code;
  if (CUresult r = validateNode(*data)) return r;
  std::lock_guard lock(exec->mutex);
  // not a node of the graph this was instantiated from: CUDA_ERROR_INVALID_VALUE
  return setStepData(exec->steps, node->id(), *data) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Fills an output array of a count-query pair the way the driver does: with no array, the count; with one,
// up to *count entries, NULL for the rest, and *count set to the real number.
template <typename T> CUresult fillList(const std::vector<T>& items, T* out, size_t* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (out) {
    for (size_t i = 0; i < *count; ++i) out[i] = i < items.size() ? items[i] : T{};
    if (*count > items.size()) *count = items.size();
    return CUDA_SUCCESS;
  }
  *count = items.size();
  return CUDA_SUCCESS;
}

CUresult nodeNeighbours(CUgraphNode handle, CUgraphNode* out, CUgraphEdgeData* edges, size_t* count,
                        bool dependencies) {
  CUEMU_LOOKUP(node, GraphNode, handle, CUDA_ERROR_INVALID_VALUE);
  std::vector<CUgraphNode> list;
  std::vector<CUgraphEdgeData> data;
  {
    std::lock_guard lock(node->graph().mutex);
    for (GraphNode* n : dependencies ? node->dependencies : node->dependents) {
      list.push_back(n->apiHandle());
      data.push_back(dependencies ? node->edgeFrom(n) : n->edgeFrom(node.get()));
    }
  }
  if (edges && out && count)
    for (size_t i = 0; i < *count; ++i) edges[i] = i < data.size() ? data[i] : CUgraphEdgeData{};
  return fillList(list, out, count);
}

CUresult graphEdges(CUgraph graphHandle, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edges, size_t* count) {
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if ((from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<CUgraphNode> froms, tos;
  std::vector<CUgraphEdgeData> data;
  {
    std::lock_guard lock(graph->mutex);
    for (GraphNode* node : graph->nodes())
      for (GraphNode* dep : node->dependencies) {
        froms.push_back(dep->apiHandle());
        tos.push_back(node->apiHandle());
        data.push_back(node->edgeFrom(dep));
      }
  }
  if (edges && from)
    for (size_t i = 0; i < *count; ++i) edges[i] = i < data.size() ? data[i] : CUgraphEdgeData{};
  size_t n = *count;
  if (CUresult r = fillList(froms, from, &n)) return r;
  return fillList(tos, to, count);
}

CUresult changeDependencies(CUgraph graphHandle, const CUgraphNode* from, const CUgraphNode* to,
                            const CUgraphEdgeData* edges, size_t count, bool add) {
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  if (count && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    CUEMU_LOOKUP(a, GraphNode, from[i], CUDA_ERROR_INVALID_VALUE);
    CUEMU_LOOKUP(b, GraphNode, to[i], CUDA_ERROR_INVALID_VALUE);
    CUgraphEdgeData edge = edges ? edges[i] : CUgraphEdgeData{};
    if (CUresult r = checkEdge(edge, a->type(), b->type())) return r;
    if (add) {
      if (CUresult r = graph->addEdge(a.get(), b.get())) return r;
      std::lock_guard lock(graph->mutex);
      b->setEdgeFrom(a.get(), edge);
    } else {
      // The edge goes whatever data names it: driver 580 removes a programmatic edge named with plain data
      // (conformance api.graph.EdgeDataOfProgrammaticDependencies, recorded on an H100).
      if (CUresult r = graph->removeEdge(a.get(), b.get())) return r;
    }
  }
  return CUDA_SUCCESS;
}

// ---- instantiation and launch --------------------------------------------------------------------------------

constexpr unsigned long long kInstantiateFlags =
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

CUresult instantiate(CUgraphExec* out, CUgraph graphHandle, unsigned long long flags, CUgraphNode* errorNode,
                     CUgraphInstantiateResult* result) {
  if (result) *result = CUDA_GRAPH_INSTANTIATE_ERROR;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  if (flags & ~kInstantiateFlags) return CUDA_ERROR_INVALID_VALUE;
  if (graph->movedIntoParent) return CUDA_ERROR_NOT_SUPPORTED;  // only as part of its parent (driver 580, H100)
  if (graph->hasUnusedConditional()) return CUDA_ERROR_INVALID_VALUE;
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  // cuGraphExecGetFlags does not report the upload flag (measured on driver 580): it is an action, not a property.
  constexpr auto kUpload = static_cast<unsigned long long>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
  auto exec = std::make_shared<GraphExec>(**context, flags & ~kUpload);
  // A graph with conditional nodes has one executable graph at a time (measured on driver 580).
  bool conditional = graph->hasConditional();
  if (conditional && graph->instantiated.load()) return CUDA_ERROR_NOT_SUPPORTED;
  GraphNode* bad = nullptr;
  if (CUresult r = exec->build(*graph, &bad)) {
    if (errorNode) *errorNode = bad ? bad->apiHandle() : nullptr;
    if (result) *result = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    return r;
  }
  if (conditional) {
    if (graph->instantiated.exchange(true)) return CUDA_ERROR_NOT_SUPPORTED;  // another thread was first
    exec->conditionalOrigin = graph;
  }
  exec->source = graph->clone();
  handleTable<Graph>().erase(exec->source->handle());  // a private copy, never handed out
  exec->setHandle(handleTable<GraphExec>().insert(exec));
  *out = toApiHandle<CUgraphExec>(exec->handle());
  if (result) *result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult launchExec(CUgraphExec handle, CUstream streamHandle, bool uploadOnly) {
  CUEMU_LOOKUP(exec, GraphExec, handle, CUDA_ERROR_INVALID_VALUE);
  auto stream = lookupStream(streamHandle);
  if (!stream) return stream.error().code;
  // Any context's stream takes the graph, not only one of the context it was instantiated in: driver 580 launches
  // it into another context's stream (NULL or created, either context current; tools/gpu-probe/graphctx30.py on an
  // H200), and tinygrad's graphs for several devices are launched so. Each kernel node runs in its function's
  // context (nodeWork), whatever the stream's.
  if ((*stream)->kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(**stream)) return implicit;
  if (isCapturing(**stream)) {
    // Measured on driver 580: a graph launch is not captured (no child-graph node); the capture is spoilt.
    if (!uploadOnly) invalidateCapture(**stream);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (uploadOnly) return CUDA_SUCCESS;
  return exec->launch(**stream);
}

CUresult instantiateWithParams(CUgraphExec* out, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  if (!params) return CUDA_ERROR_INVALID_VALUE;
  params->hErrNode_out = nullptr;
  CUresult r = instantiate(out, hGraph, params->flags, &params->hErrNode_out, &params->result_out);
  if (r == CUDA_SUCCESS && (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
    r = launchExec(*out, params->hUploadStream, true);
  return r;
}
// Node-by-node comparison for cuGraphExecUpdate: the same nodes in creation order, the same types, the same
// edges.
CUresult compareTopology(const Graph& original, const Graph& updated, CUgraphExecUpdateResultInfo& info) {
  auto a = original.nodes(), b = updated.nodes();
  info = {CU_GRAPH_EXEC_UPDATE_SUCCESS, nullptr, nullptr};
  if (a.size() != b.size()) {
    info.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  std::unordered_map<const GraphNode*, size_t> indexA, indexB;
  for (size_t i = 0; i < a.size(); ++i) indexA[a[i]] = i, indexB[b[i]] = i;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->type() != b[i]->type()) {
      info.result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      info.errorNode = b[i]->apiHandle();
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    bool same = a[i]->dependencies.size() == b[i]->dependencies.size();
    for (size_t d = 0; same && d < a[i]->dependencies.size(); ++d)
      same = indexA[a[i]->dependencies[d]] == indexB[b[i]->dependencies[d]];
    if (!same) {
      info.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      info.errorNode = b[i]->apiHandle();
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    auto* ka = std::get_if<KernelNodeData>(&a[i]->data);
    auto* kb = std::get_if<KernelNodeData>(&b[i]->data);
    if (ka && kb && &ka->request.function->module().context() != &kb->request.function->module().context()) {
      info.result = CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED;
      info.errorNode = b[i]->apiHandle();
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    auto* ia = std::get_if<ConditionalNodeData>(&a[i]->data);
    auto* ib = std::get_if<ConditionalNodeData>(&b[i]->data);
    if (ia && ib) {
      // Another kind of conditional or another number of bodies cannot be updated (driver 580 answers
      // CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED); the bodies compare like child graphs.
      bool same = ia->type == ib->type && ia->bodies->graphs.size() == ib->bodies->graphs.size();
      for (size_t k = 0; same && k < ia->bodies->graphs.size(); ++k) {
        CUgraphExecUpdateResultInfo inner;
        if (compareTopology(*ia->bodies->graphs[k], *ib->bodies->graphs[k], inner)) {
          info.result = inner.result;
          info.errorNode = b[i]->apiHandle();
          return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        }
      }
      if (!same) {
        info.result = CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
        info.errorNode = b[i]->apiHandle();
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
      }
    }
    if (a[i]->type() == CU_GRAPH_NODE_TYPE_GRAPH) {
      auto& ca = std::get<ChildGraphData>(a[i]->data);
      auto& cb = std::get<ChildGraphData>(b[i]->data);
      CUgraphExecUpdateResultInfo inner;
      if (compareTopology(*ca.graph, *cb.graph, inner)) {
        info.result = inner.result;
        info.errorNode = b[i]->apiHandle();
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
      }
    }
  }
  return CUDA_SUCCESS;
}

CUresult execUpdate(CUgraphExec execHandle, CUgraph graphHandle, CUgraphExecUpdateResultInfo& info) {
  info = {CU_GRAPH_EXEC_UPDATE_ERROR, nullptr, nullptr};
  CUEMU_LOOKUP(exec, GraphExec, execHandle, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  if (CUresult r = compareTopology(*exec->source, *graph, info)) return r;
  GraphExec fresh(exec->context(), exec->flags());
  if (CUresult r = fresh.build(*graph, nullptr)) {
    info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return r == CUDA_SUCCESS ? CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE : r;
  }
  std::lock_guard lock(exec->mutex);
  if (fresh.steps.size() != exec->steps.size()) {
    info.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  // The same topology flattens to the same order: the steps keep their identities (the nodes of the graph
  // first instantiated, which cuGraphExec*SetParams name) and take the new parameters.
  for (size_t i = 0; i < fresh.steps.size(); ++i) exec->steps[i].data = std::move(fresh.steps[i].data);
  exec->assignedAtLaunch = std::move(fresh.assignedAtLaunch);
  auto copy = graph->clone();
  handleTable<Graph>().erase(copy->handle());
  exec->source = copy;
  return CUDA_SUCCESS;
}

const char* nodeTypeName(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "wait_event";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event_record";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch_mem_op";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
    default: return "node";
  }
}

}  // namespace

namespace impl {

CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  if (!phGraph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto graph = std::make_shared<Graph>();
  graph->registerHandle();
  *phGraph = graph->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) {
  CUEMU_LOOKUP(graph, Graph, hGraph, CUDA_ERROR_INVALID_VALUE);
  // Bodies of conditional nodes and graphs moved into a child-graph node go with their node.
  if (graph->isConditionalBody || graph->movedIntoParent) return CUDA_ERROR_INVALID_VALUE;
  return handleTable<Graph>().erase(handleValue(hGraph)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  if (!phGraphClone) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(graph, Graph, originalGraph, CUDA_ERROR_INVALID_VALUE);
  if (graph->hasConditional()) return CUDA_ERROR_NOT_SUPPORTED;  // as documented, and measured on driver 580
  *phGraphClone = graph->clone()->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph, CUcontext ctx,
                                        unsigned int defaultLaunchValue, unsigned int flags) {
  if (!pHandle_out) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(graph, Graph, hGraph, CUDA_ERROR_INVALID_VALUE);
  if (flags & ~unsigned(CU_GRAPH_COND_ASSIGN_DEFAULT)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(context, Context, ctx, CUDA_ERROR_INVALID_CONTEXT);  // NULL included (measured on driver 580)
  auto variable = makeConditionalVariable(defaultLaunchValue, flags & CU_GRAPH_COND_ASSIGN_DEFAULT);
  *pHandle_out = variable->handle();
  graph->keepConditional(std::move(variable));
  return CUDA_SUCCESS;
}

CUresult cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph) {
  if (!phNode) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(original, GraphNode, hOriginalNode, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(clone, Graph, hClonedGraph, CUDA_ERROR_INVALID_VALUE);
  for (GraphNode* node : clone->nodes())
    if (node->originId() == original->id() && node->id() != original->id()) {
      *phNode = node->apiHandle();
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                             size_t numDependencies) {
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY, NodeData{});
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto data = kernelData(*nodeParams);
  if (!data) return data.error().code;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_KERNEL, std::move(*data));
}
CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto v2 = toV2(*nodeParams);
  return impl::cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &v2);
}

CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  if (!copyParams) return CUDA_ERROR_INVALID_VALUE;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMCPY,
                 MemcpyNodeData{*copyParams, ctx});
}

CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  if (!memsetParams) return CUDA_ERROR_INVALID_VALUE;
  auto data = memsetData(*memsetParams, ctx);
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMSET, std::move(*data));
}

CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_HOST,
                 HostNodeData{nodeParams->fn, nodeParams->userData});
}

CUresult cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                   size_t numDependencies, CUevent event) {
  auto e = eventOf(event);
  if (!e) return e.error().code;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
                 EventNodeData{*e, event});
}

CUresult cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                 size_t numDependencies, CUevent event) {
  auto e = eventOf(event);
  if (!e) return e.error().code;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                 EventNodeData{*e, event});
}

CUresult cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                  size_t numDependencies, CUgraph childGraph) {
  CUEMU_LOOKUP(child, Graph, childGraph, CUDA_ERROR_INVALID_VALUE);
  if (childGraph == hGraph) return CUDA_ERROR_INVALID_VALUE;
  if (child->movedIntoParent) return CUDA_ERROR_NOT_SUPPORTED;  // as driver 580 answers (H100)
  if (child->hasConditional()) return CUDA_ERROR_NOT_SUPPORTED;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_GRAPH,
                 ChildGraphData{child->clone()});
}

CUresult cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                           const CUgraphEdgeData* dependencyData, size_t numDependencies,
                           CUgraphNodeParams* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  // Only kernel nodes take edge data that is not all zero (checkEdge); other node types check it here.
  if (nodeParams->type != CU_GRAPH_NODE_TYPE_KERNEL && dependencyData) {
    auto nodes = nodeList(dependencies, numDependencies);
    if (!nodes) return nodes.error().code;
    if (CUresult r = checkEdges(dependencyData, *nodes, nodeParams->type)) return r;
  }
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
    const auto& a = nodeParams->alloc;
    CUDA_MEM_ALLOC_NODE_PARAMS p{a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize, 0};
    return addMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, p, &nodeParams->alloc.dptr);
  }
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
    auto data = memFreeData(nodeParams->free.dptr);
    if (!data) return data.error().code;
    return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_FREE, std::move(*data));
  }
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_GRAPH) {
    const auto& g = nodeParams->graph;
    if (g.graph == hGraph) return CUDA_ERROR_INVALID_VALUE;
    CUEMU_LOOKUP(child, Graph, g.graph, CUDA_ERROR_INVALID_VALUE);
    if (child->isConditionalBody) return CUDA_ERROR_INVALID_VALUE;
    // Driver 580 (H100): adding a moved graph again is CUDA_ERROR_NOT_SUPPORTED, and an ownership other than
    // MOVE copies the graph, whatever its value (conformance api.graph.ChildGraphMovedIntoParent).
    if (child->movedIntoParent) return CUDA_ERROR_NOT_SUPPORTED;
    if (child->hasConditional()) return CUDA_ERROR_NOT_SUPPORTED;
    if (g.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
      // The graph itself becomes the node's (no copy): its node handles stay valid and name the nodes an
      // executable graph updates (cuGraphExecMemcpyNodeSetParams on a node of a moved child: XLA's command
      // buffers do that). Its handle ends with the node (forgetChildGraph).
      CUresult r = addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_GRAPH,
                           ChildGraphData{child}, dependencyData);
      if (r == CUDA_SUCCESS) child->movedIntoParent = true;
      return r;
    }
  }
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
    // Driver 580 refuses another graph's handle in a graph that has none of its own
    // (api.graph.Clients.ConditionalHandleOfAnotherGraph) but takes it where the graph has one
    // (api.graph.Conditional.BadParameters): it seems to check the handle against the graph's own handles by
    // position. cuemu refuses a handle only in a graph that made none (a body graph may use its enclosing graph's).
    auto graph = lookup<Graph>(hGraph);
    if (graph && !(*graph)->isConditionalBody && !(*graph)->madeConditionals()) return CUDA_ERROR_INVALID_VALUE;
    auto data = makeConditional(nodeParams->conditional);
    if (!data) return data.error().code;
    // The bodies' handles stay where they are while the node lives: phGraph_out points at them.
    CUgraph* bodies = std::get<ConditionalNodeData>(*data).bodies->handles.data();
    CUresult r =
        addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_CONDITIONAL, std::move(*data));
    if (r == CUDA_SUCCESS) nodeParams->conditional.phGraph_out = bodies;
    return r;
  }
  auto data = genericData(*nodeParams);
  if (!data) return data.error().code;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams->type, std::move(*data),
                 dependencyData);
}
CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, CUgraphNodeParams* nodeParams) {
  return impl::cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams);
}

CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return addMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, *nodeParams, &nodeParams->dptr);
}

CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                               size_t numDependencies, CUdeviceptr dptr) {
  auto data = memFreeData(dptr);
  if (!data) return data.error().code;
  return addNode(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_FREE, std::move(*data));
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  if (!params_out) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<MemAllocNodeData>(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC, [&](MemAllocNodeData& data, GraphNode&) {
    *params_out = data.params;
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  if (!dptr_out) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<MemFreeNodeData>(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE, [&](MemFreeNodeData& data, GraphNode&) {
    *dptr_out = data.dptr;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGraphMemTrim(CUdevice device) {
  if (!deviceByOrdinal(device)) return CUDA_ERROR_INVALID_DEVICE;
  // What graphs left to the application and it freed since is returned now (counted until then, as on a GPU).
  trimGraphMemory(device);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  if (!deviceByOrdinal(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  return graphMemAttribute(device, attr, static_cast<uint64_t*>(value));
}

CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  if (!deviceByOrdinal(device)) return CUDA_ERROR_INVALID_DEVICE;
  // Only the high watermarks can be set, and only to 0 (which resets them to the current use).
  if (!value || *static_cast<uint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
  return resetGraphMemHighWatermark(device, attr);
}

CUresult cuGraphDestroyNode(CUgraphNode hNode) {
  CUEMU_LOOKUP(node, GraphNode, hNode, CUDA_ERROR_INVALID_VALUE);
  // Documented for graphs with memory nodes: their nodes and edges cannot be deleted.
  if (node->graph().hasMemoryNodes()) return CUDA_ERROR_NOT_SUPPORTED;
  node->graph().destroyNode(node.get());
  return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  CUEMU_LOOKUP(node, GraphNode, hNode, CUDA_ERROR_INVALID_VALUE);
  if (!type) return CUDA_ERROR_INVALID_VALUE;
  *type = node->type();
  return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  CUEMU_LOOKUP(graph, Graph, hGraph, CUDA_ERROR_INVALID_VALUE);
  std::vector<CUgraphNode> list;
  for (GraphNode* node : graph->nodes()) list.push_back(node->apiHandle());
  return fillList(list, nodes, numNodes);
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes) {
  CUEMU_LOOKUP(graph, Graph, hGraph, CUDA_ERROR_INVALID_VALUE);
  std::vector<CUgraphNode> list;
  {
    std::lock_guard lock(graph->mutex);
    for (GraphNode* node : graph->nodes())
      if (node->dependencies.empty()) list.push_back(node->apiHandle());
  }
  return fillList(list, rootNodes, numRootNodes);
}

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* numEdges) {
  return graphEdges(hGraph, from, to, nullptr, numEdges);
}
CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edgeData,
                            size_t* numEdges) {
  return graphEdges(hGraph, from, to, edgeData, numEdges);
}

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies, size_t* numDependencies) {
  return nodeNeighbours(hNode, dependencies, nullptr, numDependencies, true);
}
CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies, CUgraphEdgeData* edgeData,
                                       size_t* numDependencies) {
  return nodeNeighbours(hNode, dependencies, edgeData, numDependencies, true);
}
CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes, size_t* numDependentNodes) {
  return nodeNeighbours(hNode, dependentNodes, nullptr, numDependentNodes, false);
}
CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode* dependentNodes, CUgraphEdgeData* edgeData,
                                         size_t* numDependentNodes) {
  return nodeNeighbours(hNode, dependentNodes, edgeData, numDependentNodes, false);
}

CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                size_t numDependencies) {
  return changeDependencies(hGraph, from, to, nullptr, numDependencies, true);
}
CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   const CUgraphEdgeData* edgeData, size_t numDependencies) {
  return changeDependencies(hGraph, from, to, edgeData, numDependencies, true);
}
CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   size_t numDependencies) {
  return changeDependencies(hGraph, from, to, nullptr, numDependencies, false);
}
CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                      const CUgraphEdgeData* edgeData, size_t numDependencies) {
  return changeDependencies(hGraph, from, to, edgeData, numDependencies, false);
}

// ---- per-type node parameters ------------------------------------------------------------------------------

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<KernelNodeData>(hNode, CU_GRAPH_NODE_TYPE_KERNEL, [&](KernelNodeData& data, GraphNode&) {
    *nodeParams = kernelParams(data);
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 v2{};
  if (CUresult r = impl::cuGraphKernelNodeGetParams_v2(hNode, &v2)) return r;
  *nodeParams = CUDA_KERNEL_NODE_PARAMS_v1{v2.func ? v2.func : reinterpret_cast<CUfunction>(v2.kern),
                                           v2.gridDimX,
                                           v2.gridDimY,
                                           v2.gridDimZ,
                                           v2.blockDimX,
                                           v2.blockDimY,
                                           v2.blockDimZ,
                                           v2.sharedMemBytes,
                                           v2.kernelParams,
                                           v2.extra};
  return CUDA_SUCCESS;
}
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto data = kernelData(*nodeParams);
  if (!data) return data.error().code;
  if (auto node = lookup<GraphNode>(hNode))
    if (auto* old = std::get_if<KernelNodeData>(&(*node)->data)) data->attributes = old->attributes;
  return setNodeData(hNode, CU_GRAPH_NODE_TYPE_KERNEL, NodeData{std::move(*data)});
}
CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto v2 = toV2(*nodeParams);
  return impl::cuGraphKernelNodeSetParams_v2(hNode, &v2);
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr, CUkernelNodeAttrValue* value_out) {
  if (!value_out) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<KernelNodeData>(hNode, CU_GRAPH_NODE_TYPE_KERNEL, [&](KernelNodeData& data, GraphNode&) {
    auto it = data.attributes.find(int(attr));
    *value_out = it != data.attributes.end() ? it->second : CUkernelNodeAttrValue{};
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr, const CUkernelNodeAttrValue* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (attr <= CU_LAUNCH_ATTRIBUTE_IGNORE || attr >= CU_LAUNCH_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  CUkernelNodeAttrValue stored = *value;
  // A priority outside the device's range is clamped into it, as stream priorities are (driver 580 reads back 0
  // after setting 1; measured on an H200).
  if (attr == CU_LAUNCH_ATTRIBUTE_PRIORITY)
    stored.priority = std::clamp(stored.priority, kGreatestStreamPriority, kLeastStreamPriority);
  return withNodeData<KernelNodeData>(hNode, CU_GRAPH_NODE_TYPE_KERNEL, [&](KernelNodeData& data, GraphNode&) {
    data.attributes[int(attr)] = stored;
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  std::map<int, CUlaunchAttributeValue> attributes;
  CUresult r = withNodeData<KernelNodeData>(src, CU_GRAPH_NODE_TYPE_KERNEL, [&](KernelNodeData& data, GraphNode&) {
    attributes = data.attributes;
    return CUDA_SUCCESS;
  });
  if (r) return r;
  return withNodeData<KernelNodeData>(dst, CU_GRAPH_NODE_TYPE_KERNEL, [&](KernelNodeData& data, GraphNode&) {
    data.attributes = attributes;
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<MemcpyNodeData>(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, [&](MemcpyNodeData& data, GraphNode&) {
    *nodeParams = data.copy;
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  CUcontext ctx = nullptr;
  if (auto node = lookup<GraphNode>(hNode))
    if (auto* old = std::get_if<MemcpyNodeData>(&(*node)->data)) ctx = old->context;
  return setNodeData(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, NodeData{MemcpyNodeData{*nodeParams, ctx}});
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<MemsetNodeData>(hNode, CU_GRAPH_NODE_TYPE_MEMSET, [&](MemsetNodeData& data, GraphNode&) {
    *nodeParams = data.params;
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return setNodeData(hNode, CU_GRAPH_NODE_TYPE_MEMSET, memsetData(*nodeParams, nullptr));
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<HostNodeData>(hNode, CU_GRAPH_NODE_TYPE_HOST, [&](HostNodeData& data, GraphNode&) {
    *nodeParams = CUDA_HOST_NODE_PARAMS{data.fn, data.userData};
    return CUDA_SUCCESS;
  });
}
CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return setNodeData(hNode, CU_GRAPH_NODE_TYPE_HOST, NodeData{HostNodeData{nodeParams->fn, nodeParams->userData}});
}

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
  return withNodeData<ChildGraphData>(hNode, CU_GRAPH_NODE_TYPE_GRAPH, [&](ChildGraphData& data, GraphNode&) {
    *phGraph = data.graph->apiHandle();
    return CUDA_SUCCESS;
  });
}

#define CUEMU_EVENT_NODE_ACCESSORS(Name, Type)                                                         \
  CUresult cuGraph##Name##NodeGetEvent(CUgraphNode hNode, CUevent* event_out) {                        \
    if (!event_out) return CUDA_ERROR_INVALID_VALUE;                                                   \
    return withNodeData<EventNodeData>(hNode, Type, [&](EventNodeData& data, GraphNode&) {             \
      *event_out = data.handle;                                                                        \
      return CUDA_SUCCESS;                                                                             \
    });                                                                                                \
  }                                                                                                    \
  CUresult cuGraph##Name##NodeSetEvent(CUgraphNode hNode, CUevent event) {                             \
    auto e = eventOf(event);                                                                           \
    if (!e) return e.error().code;                                                                     \
    return setNodeData(hNode, Type, NodeData{EventNodeData{*e, event}});                               \
  }                                                                                                    \
  CUresult cuGraphExec##Name##NodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) { \
    auto e = eventOf(event);                                                                           \
    if (!e) return e.error().code;                                                                     \
    return execSetData(hGraphExec, hNode, Type, NodeData{EventNodeData{*e, event}});                   \
  }
CUEMU_EVENT_NODE_ACCESSORS(EventRecord, CU_GRAPH_NODE_TYPE_EVENT_RECORD)
CUEMU_EVENT_NODE_ACCESSORS(EventWait, CU_GRAPH_NODE_TYPE_WAIT_EVENT)
#undef CUEMU_EVENT_NODE_ACCESSORS

CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) return CUDA_ERROR_NOT_SUPPORTED;  // driver 580
  return setNodeData(hNode, nodeParams->type, genericData(*nodeParams));
}

// ---- executable graphs ---------------------------------------------------------------------------------------

CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags) {
  return instantiate(phGraphExec, hGraph, flags, nullptr, nullptr);
}
CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                               size_t bufferSize) {
  CUresult r = instantiate(phGraphExec, hGraph, 0, phErrorNode, nullptr);
  if (logBuffer && bufferSize)
    std::snprintf(logBuffer, bufferSize, "%s",
                  r == CUDA_SUCCESS ? "" : "graph instantiation failed: the graph has a cycle");
  return r;
}
CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                            size_t bufferSize) {
  return impl::cuGraphInstantiate_v2(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return instantiateWithParams(phGraphExec, hGraph, p);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  // Launches in flight keep what they run: each submitted step owns a copy of its parameters.
  return handleTable<GraphExec>().erase(handleValue(hGraphExec)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  CUEMU_LOOKUP(exec, GraphExec, hGraphExec, CUDA_ERROR_INVALID_VALUE);
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  *flags = exec->flags();
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return launchExec(hGraphExec, hStream, false); }
CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) { return launchExec(hGraphExec, hStream, true); }

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo* resultInfo) {
  if (!resultInfo) return CUDA_ERROR_INVALID_VALUE;
  return execUpdate(hGraphExec, hGraph, *resultInfo);
}
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                           CUgraphExecUpdateResult* updateResult_out) {
  if (!hErrorNode_out || !updateResult_out) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info{};
  CUresult r = execUpdate(hGraphExec, hGraph, info);
  *hErrorNode_out = info.errorNode;
  *updateResult_out = info.result;
  return r;
}

// A child graph node of an executable graph takes the parameters of `childGraph`, whose topology must be the one
// the node's graph had (the executable graph's steps keep their identities, as in cuGraphExecUpdate).
CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph) {
  CUEMU_LOOKUP(exec, GraphExec, hGraphExec, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(node, GraphNode, hNode, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(child, Graph, childGraph, CUDA_ERROR_INVALID_VALUE);
  if (node->type() != CU_GRAPH_NODE_TYPE_GRAPH) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<Graph> current;
  {
    std::lock_guard lock(node->graph().mutex);
    current = std::get<ChildGraphData>(node->data).graph;
  }
  CUgraphExecUpdateResultInfo info{};
  if (compareTopology(*current, *child, info)) return CUDA_ERROR_INVALID_VALUE;
  GraphExec before(exec->context(), exec->flags()), after(exec->context(), exec->flags());
  if (CUresult r = before.build(*current, nullptr)) return r;
  if (CUresult r = after.build(*child, nullptr)) return r;
  if (before.steps.size() != after.steps.size()) return CUDA_ERROR_INVALID_VALUE;
  for (auto& step : after.steps)
    if (CUresult r = validateNode(step.data)) return r;
  std::lock_guard lock(exec->mutex);
  // The child's steps are in the executable graph's steps or in a conditional body (XLA's child graphs of captured
  // library calls inside the branches of lax.switch: JAX's linalg expm_frechet).
  for (auto& old : before.steps)
    if (!holdsStep(exec->steps, old.origin)) return CUDA_ERROR_INVALID_VALUE;  // not a node of this executable graph
  for (size_t i = 0; i < before.steps.size(); ++i)
    setStepData(exec->steps, before.steps[i].origin, after.steps[i].data);
  return CUDA_SUCCESS;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto data = kernelData(*nodeParams);
  if (!data) return data.error().code;
  return execSetData(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL, NodeData{std::move(*data)});
}
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  auto v2 = toV2(*nodeParams);
  return impl::cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &v2);
}
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D* copyParams,
                                        CUcontext ctx) {
  if (!copyParams) return CUDA_ERROR_INVALID_VALUE;
  return execSetData(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY, NodeData{MemcpyNodeData{*copyParams, ctx}});
}
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  if (!memsetParams) return CUDA_ERROR_INVALID_VALUE;
  return execSetData(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET, memsetData(*memsetParams, ctx));
}
CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return execSetData(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_HOST,
                     NodeData{HostNodeData{nodeParams->fn, nodeParams->userData}});
}
CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  if (nodeParams->type == CU_GRAPH_NODE_TYPE_GRAPH || nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
    return CUDA_ERROR_NOT_SUPPORTED;
  return execSetData(hGraphExec, hNode, nodeParams->type, genericData(*nodeParams));
}

CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
  CUEMU_LOOKUP(exec, GraphExec, hGraphExec, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(node, GraphNode, hNode, CUDA_ERROR_INVALID_VALUE);
  auto type = node->type();
  if (type != CU_GRAPH_NODE_TYPE_KERNEL && type != CU_GRAPH_NODE_TYPE_MEMCPY && type != CU_GRAPH_NODE_TYPE_MEMSET)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(exec->mutex);
  auto* step = exec->stepFor(*node);
  if (!step) return CUDA_ERROR_INVALID_VALUE;
  step->enabled = isEnabled != 0;
  return CUDA_SUCCESS;
}
CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled) {
  CUEMU_LOOKUP(exec, GraphExec, hGraphExec, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(node, GraphNode, hNode, CUDA_ERROR_INVALID_VALUE);
  if (!isEnabled) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(exec->mutex);
  auto* step = exec->stepFor(*node);
  if (!step) return CUDA_ERROR_INVALID_VALUE;
  *isEnabled = step->enabled ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy, unsigned int initialRefcount,
                            unsigned int flags) {
  if (!object_out || !destroy || !initialRefcount || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
    return CUDA_ERROR_INVALID_VALUE;
  auto object = std::make_shared<UserObject>(ptr, destroy, initialRefcount);
  object->setHandle(handleTable<UserObject>().insert(object));
  *object_out = toApiHandle<CUuserObject>(object->handle());
  return CUDA_SUCCESS;
}

CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  CUEMU_LOOKUP(found, UserObject, object, CUDA_ERROR_INVALID_VALUE);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  found->retain(count);
  return CUDA_SUCCESS;
}

CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  CUEMU_LOOKUP(found, UserObject, object, CUDA_ERROR_INVALID_VALUE);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  found->release(count);
  return CUDA_SUCCESS;
}

CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count, unsigned int flags) {
  CUEMU_LOOKUP(g, Graph, graph, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(found, UserObject, object, CUDA_ERROR_INVALID_VALUE);
  if (!count || (flags & ~unsigned(CU_GRAPH_USER_OBJECT_MOVE))) return CUDA_ERROR_INVALID_VALUE;
  // Without MOVE the graph takes new references; with it, it takes over the caller's.
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) found->retain(count);
  g->retainUserObject(found, count);
  return CUDA_SUCCESS;
}

CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  CUEMU_LOOKUP(g, Graph, graph, CUDA_ERROR_INVALID_VALUE);
  CUEMU_LOOKUP(found, UserObject, object, CUDA_ERROR_INVALID_VALUE);
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  return g->releaseUserObject(found, count);
}

// The dot file as driver 580 lays it out (tools/gpu-probe/results/asyncpool17-h100-2026-11-27.txt): one cluster
// for the graph, nodes numbered in creation order, a kernel node named by its function (CuPy's test looks for the
// name), its launch shape with KERNEL_NODE_PARAMS, and with VERBOSE a record of the node's fields and handles.
CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  CUEMU_LOOKUP(graph, Graph, hGraph, CUDA_ERROR_INVALID_VALUE);
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  std::FILE* file = std::fopen(path, "w");
  if (!file) return CUDA_ERROR_OPERATING_SYSTEM;
  const bool verbose = flags & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE;
  const bool launchShape = verbose || (flags & CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS);
  const unsigned long long graphId = graph->handle();  // unique among live graphs (driver 580 numbers them)
  std::lock_guard lock(graph->mutex);
  std::unordered_map<const GraphNode*, size_t> index;
  for (GraphNode* node : graph->nodes()) index.emplace(node, index.size());
  auto kernelName = [](const GraphNode& node) -> std::string {
    const auto* kernel = std::get_if<KernelNodeData>(&node.data);
    return kernel && kernel->request.function ? kernel->request.function->info().name : std::string("?");
  };
  auto shape = [](const GraphNode& node) {
    const auto& r = std::get<KernelNodeData>(node.data).request;
    auto dim = [](const ptx::exec::Dim3& d) {
      return d.y == 1 && d.z == 1 ? fmt::format("{}", d.x) : fmt::format("({},{},{})", d.x, d.y, d.z);
    };
    return fmt::format("\\<\\<\\<{},{},{}\\>\\>\\>", dim(r.grid), dim(r.block), r.dynamicSharedBytes);
  };
  std::fprintf(file, "digraph dot {\nsubgraph cluster_%llx {\nlabel=\"graph_%llx\" graph[style=\"dashed\"];\n", graphId,
               graphId);
  for (GraphNode* node : graph->nodes()) {
    size_t i = index[node];
    std::string type = nodeTypeName(node->type());
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::toupper(c); });
    std::string label;
    const char* style = "solid";
    const char* form = "rectangle";
    if (verbose) {
      form = "record";
      std::string id = node->type() == CU_GRAPH_NODE_TYPE_KERNEL ? kernelName(*node) + shape(*node) : type;
      label = fmt::format("{{{}\n| {{ID | {} | {}}}\n| {{node handle | 0x{:016X}}}}}", type, i, id,
                          reinterpret_cast<uintptr_t>(node->apiHandle()));
      if (node->type() == CU_GRAPH_NODE_TYPE_KERNEL) style = "bold";
    } else if (node->type() == CU_GRAPH_NODE_TYPE_KERNEL) {
      style = "bold";
      form = "octagon";
      label = fmt::format("{}\n{}\n{}", i, kernelName(*node), launchShape ? shape(*node) : "");
    } else if (const auto* memset = std::get_if<MemsetNodeData>(&node->data)) {
      form = "invtrapezium";
      const CUDA_MEMSET_NODE_PARAMS& m = memset->params;
      label = fmt::format("{}\nMEMSET\n({},{})\n", i, m.value, uint64_t(m.elementSize) * m.width * m.height);
    } else {
      label = fmt::format("{}\n{}\n", i, type);
    }
    std::fprintf(file, "\"graph_%llx_node_%zu\"[style=\"%s\" shape=\"%s\" label=\"%s\"];\n\n", graphId, i, style, form,
                 label.c_str());
  }
  for (GraphNode* node : graph->nodes())
    for (GraphNode* dep : node->dependencies)
      std::fprintf(file, "\"graph_%llx_node_%zu\" -> \"graph_%llx_node_%zu\";\n", graphId, index[dep], graphId,
                   index[node]);
  std::fprintf(file, "}\n}\n");
  std::fclose(file);
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
