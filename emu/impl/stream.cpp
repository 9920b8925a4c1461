// Stream management entry points. Their _ptsz forms run these implementations with the per-thread stream as
// the default stream (core/stream_lookup.h).
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/module.h"
#include "core/stream.h"
#include "core/stream_lookup.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

namespace cuemu {
namespace {

CUresult createStream(CUstream* out, unsigned flags, int priority) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~unsigned(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  // Out-of-range priorities are clamped, as documented.
  priority = std::min(kLeastStreamPriority, std::max(kGreatestStreamPriority, priority));
  *out = (*context)->streams().create(flags, priority)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult destroyStream(CUstream handle) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD)
    return CUDA_ERROR_INVALID_HANDLE;
  CUEMU_LOOKUP(stream, Stream, handle);
  return stream->context().streams().destroy(stream);
}

CUresult query(CUstream handle) {
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  if (CUresult sticky = (*stream)->context().stickyError()) return sticky;
  if (isCapturing(**stream)) {
    invalidateCapture(**stream);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return (*stream)->isIdle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult synchronize(CUstream handle) {
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  // Waiting for the stream's last item covers the legacy stream's implicit dependencies too: that item
  // started only after the blocking streams' earlier work.
  Stream& s = **stream;
  if (isCapturing(s)) {
    invalidateCapture(s);  // as on the real driver: the capture cannot be ended successfully any more
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (s.kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(s)) return implicit;
  s.waitIdle();
  s.context().afterHostSynchronize();
  return s.context().stickyError();
}

CUresult waitEvent(CUstream handle, CUevent eventHandle, unsigned flags) {
  if (flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  CUEMU_LOOKUP(event, Event, eventHandle);
  CUresult result;
  if ((flags & CU_EVENT_WAIT_EXTERNAL) && isCapturing(**stream)) {
    // An external wait in a capture becomes an event-wait node that waits for the event at each launch.
    captureIfCapturing(**stream, CU_GRAPH_NODE_TYPE_WAIT_EVENT, EventNodeData{event, eventHandle}, result);
    return result;
  }
  if (captureEventWait(**stream, *event, result)) return result;
  if ((*stream)->kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(**stream)) return implicit;
  StreamPosition position;
  if (!event->position(position)) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  (*stream)->context().streams().submit(**stream, nullptr, {position});
  return CUDA_SUCCESS;
}

CUresult addCallback(CUstream handle, CUstreamCallback callback, void* userData, unsigned flags) {
  if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  Context& context = (*stream)->context();
  if (isCapturing(**stream)) {
    invalidateCapture(**stream);  // stream callbacks cannot be captured (cuLaunchHostFunc can)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if ((*stream)->kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(**stream)) return implicit;
  // A callback runs after a fault too, and is told the error.
  context.streams().submit(
      **stream,
      [callback, userData, handle, &context] {
        callback(handle, context.stickyError(), userData);
        return CUDA_SUCCESS;
      },
      {}, WorkOptions::RunAfterFault);
  return CUDA_SUCCESS;
}

CUresult launchHostFunc(CUstream handle, CUhostFn fn, void* userData) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  CUresult result;
  if (captureIfCapturing(**stream, CU_GRAPH_NODE_TYPE_HOST, HostNodeData{fn, userData}, result)) return result;
  return enqueueWork(**stream, [fn, userData] {
    fn(userData);
    return CUDA_SUCCESS;
  });
}

template <typename Fn> CUresult withStream(CUstream handle, Fn&& fn) {
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  return fn(**stream);
}

CUresult getFlags(CUstream h, unsigned* flags) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    *flags = s.flags();
    return CUDA_SUCCESS;
  });
}
CUresult getPriority(CUstream h, int* priority) {
  if (!priority) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    *priority = s.priority();
    return CUDA_SUCCESS;
  });
}
CUresult getCtx(CUstream h, CUcontext* ctx) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    *ctx = s.context().apiHandle();
    return CUDA_SUCCESS;
  });
}
CUresult getCtx2(CUstream h, CUcontext* ctx, CUgreenCtx* green) {
  if (!ctx && !green) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    if (ctx) *ctx = s.context().apiHandle();
    if (green) *green = toApiHandle<CUgreenCtx>(s.context().greenHandle());
    return CUDA_SUCCESS;
  });
}
// Measured on an H100 in every capture mode (conformance api.stream.CaptureGraph.GetIdDuringCapture): the id of a
// stream that is capturing is refused as a query is, and the capture is invalidated; other streams answer.
CUresult getId(CUstream h, unsigned long long* id) {
  if (!id) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    if (isCapturing(s)) {
      invalidateCapture(s);
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    *id = s.id();
    return CUDA_SUCCESS;
  });
}
CUresult getDevice(CUstream h, CUdevice* device) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    *device = s.context().device().ordinal();
    return CUDA_SUCCESS;
  });
}
CUresult attachMem(CUstream h, CUdeviceptr, size_t, unsigned flags) {
  if (flags & ~unsigned(CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST | CU_MEM_ATTACH_SINGLE))
    return CUDA_ERROR_INVALID_VALUE;
  // Host and device share one memory: attaching changes visibility only, which the CPU does not need.
  return withStream(h, [&](Stream&) { return CUDA_SUCCESS; });
}
CUresult getAttribute(CUstream h, CUstreamAttrID attr, CUstreamAttrValue* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    std::lock_guard lock(s.attributesMutex);
    auto it = s.attributes.find(int(attr));
    *value = it != s.attributes.end() ? it->second : CUstreamAttrValue{};
    if (attr == CU_LAUNCH_ATTRIBUTE_PRIORITY && it == s.attributes.end()) value->priority = s.priority();
    return CUDA_SUCCESS;
  });
}
CUresult setAttribute(CUstream h, CUstreamAttrID attr, const CUstreamAttrValue* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    std::lock_guard lock(s.attributesMutex);
    s.attributes[int(attr)] = *value;
    return CUDA_SUCCESS;
  });
}
CUresult copyAttributes(CUstream dst, CUstream src) {
  auto from = lookupStream(src);
  if (!from) return from.error().code;
  return withStream(dst, [&](Stream& to) {
    if (&to == from->get()) return CUDA_SUCCESS;
    std::scoped_lock lock(to.attributesMutex, (*from)->attributesMutex);
    to.attributes = (*from)->attributes;
    return CUDA_SUCCESS;
  });
}
CUresult captureStatus(CUstream h, CUstreamCaptureStatus* status) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    // The legacy stream answers for the blocking streams it would wait for (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).
    if (s.kind() == Stream::Kind::Legacy)
      for (auto& other : s.context().streams().allStreams())
        if (other->isBlocking() && captureInfo(*other).status != CU_STREAM_CAPTURE_STATUS_NONE)
          return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    *status = captureInfo(s).status;
    return CUDA_SUCCESS;
  });
}
// Edge data of `count` plain dependencies (all zero). Clients read the array the query hands out (cuda.core
// does, and crashed on NULL), so it must exist; blocks are never freed, so an earlier answer stays readable.
const CUgraphEdgeData* plainEdgeData(size_t count) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<CUgraphEdgeData[]>> blocks;
  static size_t capacity = 0;
  std::lock_guard lock(mutex);
  if (count > capacity) {
    capacity = std::max<size_t>(count, capacity * 2);
    blocks.push_back(std::make_unique<CUgraphEdgeData[]>(capacity));  // value-initialised: zero
  }
  return blocks.empty() ? nullptr : blocks.back().get();
}

CUresult getCaptureInfo(CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                        const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* count) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, [&](Stream& s) {
    if (s.kind() == Stream::Kind::Legacy)
      for (auto& other : s.context().streams().allStreams())
        if (other->isBlocking() && captureInfo(*other).status != CU_STREAM_CAPTURE_STATUS_NONE)
          return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    CaptureInfo info = captureInfo(s);
    *status = info.status;
    // of an invalidated capture driver 580 writes the status alone: the id, graph and dependencies a caller passed
    // keep what they held (measured on an H200: conformance api.stream.CaptureGraph.UnsafeCallInvalidatesTheCapture)
    if (info.status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) return CUDA_SUCCESS;
    if (id) *id = info.id;
    if (graph) *graph = info.graph;
    if (deps) *deps = info.dependencies;
    if (edges) *edges = info.count ? plainEdgeData(info.count) : nullptr;  // every captured edge is plain
    if (count) *count = info.count;
    return CUDA_SUCCESS;
  });
}
CUresult begin(CUstream h, CUstreamCaptureMode mode) {
  auto stream = lookupStream(h);
  if (!stream) return stream.error().code;
  return beginCapture(*stream, mode);
}
CUresult beginToGraph(CUstream h, CUgraph graphHandle, const CUgraphNode* deps, const CUgraphEdgeData* edges,
                      size_t count, CUstreamCaptureMode mode) {
  auto stream = lookupStream(h);
  if (!stream) return stream.error().code;
  CUEMU_LOOKUP(graph, Graph, graphHandle, CUDA_ERROR_INVALID_VALUE);
  if (count && !deps) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> nodes;
  for (size_t i = 0; i < count; ++i) {
    if (edges && (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port || edges[i].to_port))
      return CUDA_ERROR_NOT_SUPPORTED;
    CUEMU_LOOKUP(node, GraphNode, deps[i], CUDA_ERROR_INVALID_VALUE);
    nodes.push_back(node.get());
  }
  return beginCapture(*stream, mode, graph, std::move(nodes));
}
CUresult end(CUstream h, CUgraph* graph) {
  auto stream = lookupStream(h);
  if (!stream) return stream.error().code;
  return endCapture(*stream, graph);
}
CUresult updateDependencies(CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t count, unsigned flags) {
  if (count && !deps) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> nodes;
  for (size_t i = 0; i < count; ++i) {
    if (edges && (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port || edges[i].to_port))
      return CUDA_ERROR_NOT_SUPPORTED;
    CUEMU_LOOKUP(node, GraphNode, deps[i], CUDA_ERROR_INVALID_VALUE);
    nodes.push_back(node.get());
  }
  return withStream(h, [&](Stream& s) { return updateCaptureDependencies(s, nodes, flags); });
}

}  // namespace

namespace impl {

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) { return createStream(phStream, Flags, 0); }
CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return createStream(phStream, flags, priority);
}
CUresult cuStreamDestroy(CUstream hStream) { return destroyStream(hStream); }
CUresult cuStreamDestroy_v2(CUstream hStream) { return destroyStream(hStream); }

CUresult cuStreamQuery(CUstream hStream) { return query(hStream); }
CUresult cuStreamSynchronize(CUstream hStream) { return synchronize(hStream); }
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return waitEvent(hStream, hEvent, Flags);
}
CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
  return addCallback(hStream, callback, userData, flags);
}
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return launchHostFunc(hStream, fn, userData);
}
CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags) { return getFlags(hStream, flags); }
CUresult cuStreamGetPriority(CUstream hStream, int* priority) { return getPriority(hStream, priority); }
CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx) { return getCtx(hStream, pctx); }
CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return getCtx2(hStream, pCtx, pGreenCtx);
}
CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId) { return getId(hStream, streamId); }
CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device) { return getDevice(hStream, device); }
CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags) {
  return attachMem(hStream, dptr, length, flags);
}
CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value) {
  return getAttribute(hStream, attr, value);
}
CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* param) {
  return setAttribute(hStream, attr, param);
}
CUresult cuStreamCopyAttributes(CUstream dstStream, CUstream srcStream) { return copyAttributes(dstStream, srcStream); }
CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return cuemu::captureStatus(hStream, captureStatus);
}
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out) {
  return getCaptureInfo(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr);
}
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                   CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                   size_t* numDependencies_out) {
  return getCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr, numDependencies_out);
}
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                   CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                   const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return getCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}
CUresult cuStreamBeginCapture(CUstream hStream) { return begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL); }
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) { return begin(hStream, mode); }
CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode* dependencies,
                                     const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                     CUstreamCaptureMode mode) {
  return beginToGraph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode);
}
CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) { return end(hStream, phGraph); }
CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies, size_t numDependencies,
                                           unsigned int flags) {
  return updateDependencies(hStream, dependencies, nullptr, numDependencies, flags);
}
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode* dependencies,
                                              const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                              unsigned int flags) {
  return updateDependencies(hStream, dependencies, dependencyData, numDependencies, flags);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  if (!mode) return CUDA_ERROR_INVALID_VALUE;
  if (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      *mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  *mode = exchangeThreadCaptureMode(*mode);
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
