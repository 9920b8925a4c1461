// Stream management entry points. The _ptsz forms differ only in what a NULL stream means.
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
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
  auto stream = streamTable().find(handleValue(handle));
  if (!stream) return CUDA_ERROR_INVALID_HANDLE;
  return stream->context().streams().destroy(stream);
}

CUresult query(CUstream handle, bool perThread) {
  auto stream = lookupStream(handle, perThread);
  if (!stream) return stream.error().code;
  if (CUresult sticky = (*stream)->context().stickyError()) return sticky;
  if (isCapturing(**stream)) {
    invalidateCapture(**stream);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return (*stream)->isIdle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult synchronize(CUstream handle, bool perThread) {
  auto stream = lookupStream(handle, perThread);
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
  s.context().modules().flushPrintf();  // device printf output appears when the host synchronises
  return s.context().stickyError();
}

CUresult waitEvent(CUstream handle, CUevent eventHandle, unsigned flags, bool perThread) {
  if (flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle, perThread);
  if (!stream) return stream.error().code;
  auto event = eventTable().find(handleValue(eventHandle));
  if (!event) return CUDA_ERROR_INVALID_HANDLE;
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

CUresult addCallback(CUstream handle, CUstreamCallback callback, void* userData, unsigned flags, bool perThread) {
  if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle, perThread);
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

CUresult launchHostFunc(CUstream handle, CUhostFn fn, void* userData, bool perThread) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  auto stream = lookupStream(handle, perThread);
  if (!stream) return stream.error().code;
  CUresult result;
  if (captureIfCapturing(**stream, CU_GRAPH_NODE_TYPE_HOST, HostNodeData{fn, userData}, result)) return result;
  return enqueueWork(**stream, [fn, userData] {
    fn(userData);
    return CUDA_SUCCESS;
  });
}

template <typename Fn>
CUresult withStream(CUstream handle, bool perThread, Fn&& fn) {
  auto stream = lookupStream(handle, perThread);
  if (!stream) return stream.error().code;
  return fn(**stream);
}

CUresult getFlags(CUstream h, unsigned* flags, bool pt) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) { *flags = s.flags(); return CUDA_SUCCESS; });
}
CUresult getPriority(CUstream h, int* priority, bool pt) {
  if (!priority) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) { *priority = s.priority(); return CUDA_SUCCESS; });
}
CUresult getCtx(CUstream h, CUcontext* ctx, bool pt) {
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) { *ctx = s.context().apiHandle(); return CUDA_SUCCESS; });
}
CUresult getCtx2(CUstream h, CUcontext* ctx, CUgreenCtx* green, bool pt) {
  if (!ctx && !green) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) {
    if (ctx) *ctx = s.context().apiHandle();
    if (green) *green = toApiHandle<CUgreenCtx>(s.context().greenHandle());
    return CUDA_SUCCESS;
  });
}
CUresult getId(CUstream h, unsigned long long* id, bool pt) {
  if (!id) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) { *id = s.id(); return CUDA_SUCCESS; });
}
CUresult getDevice(CUstream h, CUdevice* device, bool pt) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) { *device = s.context().device().ordinal(); return CUDA_SUCCESS; });
}
CUresult attachMem(CUstream h, CUdeviceptr, size_t, unsigned flags, bool pt) {
  if (flags & ~unsigned(CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST | CU_MEM_ATTACH_SINGLE)) return CUDA_ERROR_INVALID_VALUE;
  // Host and device share one memory: attaching changes visibility only, which the CPU does not need.
  return withStream(h, pt, [&](Stream&) { return CUDA_SUCCESS; });
}
CUresult getAttribute(CUstream h, CUstreamAttrID attr, CUstreamAttrValue* value, bool pt) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) {
    std::lock_guard lock(s.attributesMutex);
    auto it = s.attributes.find(int(attr));
    *value = it != s.attributes.end() ? it->second : CUstreamAttrValue{};
    if (attr == CU_LAUNCH_ATTRIBUTE_PRIORITY && it == s.attributes.end()) value->priority = s.priority();
    return CUDA_SUCCESS;
  });
}
CUresult setAttribute(CUstream h, CUstreamAttrID attr, const CUstreamAttrValue* value, bool pt) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) {
    std::lock_guard lock(s.attributesMutex);
    s.attributes[int(attr)] = *value;
    return CUDA_SUCCESS;
  });
}
CUresult copyAttributes(CUstream dst, CUstream src, bool pt) {
  auto from = lookupStream(src, pt);
  if (!from) return from.error().code;
  return withStream(dst, pt, [&](Stream& to) {
    if (&to == from->get()) return CUDA_SUCCESS;
    std::scoped_lock lock(to.attributesMutex, (*from)->attributesMutex);
    to.attributes = (*from)->attributes;
    return CUDA_SUCCESS;
  });
}
CUresult captureStatus(CUstream h, CUstreamCaptureStatus* status, bool pt) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) {
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
                        const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* count, bool pt) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  return withStream(h, pt, [&](Stream& s) {
    if (s.kind() == Stream::Kind::Legacy)
      for (auto& other : s.context().streams().allStreams())
        if (other->isBlocking() && captureInfo(*other).status != CU_STREAM_CAPTURE_STATUS_NONE)
          return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    CaptureInfo info = captureInfo(s);
    *status = info.status;
    if (id) *id = info.id;
    if (graph) *graph = info.graph;
    if (deps) *deps = info.dependencies;
    if (edges) *edges = info.count ? plainEdgeData(info.count) : nullptr;  // every captured edge is plain
    if (count) *count = info.count;
    return CUDA_SUCCESS;
  });
}
CUresult begin(CUstream h, CUstreamCaptureMode mode, bool pt) {
  auto stream = lookupStream(h, pt);
  if (!stream) return stream.error().code;
  return beginCapture(*stream, mode);
}
CUresult beginToGraph(CUstream h, CUgraph graphHandle, const CUgraphNode* deps, const CUgraphEdgeData* edges,
                      size_t count, CUstreamCaptureMode mode, bool pt) {
  auto stream = lookupStream(h, pt);
  if (!stream) return stream.error().code;
  auto graph = graphTable().find(handleValue(graphHandle));
  if (!graph) return CUDA_ERROR_INVALID_VALUE;
  if (count && !deps) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> nodes;
  for (size_t i = 0; i < count; ++i) {
    if (edges && (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port || edges[i].to_port))
      return CUDA_ERROR_NOT_SUPPORTED;
    auto node = graphNodeTable().find(handleValue(deps[i]));
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    nodes.push_back(node.get());
  }
  return beginCapture(*stream, mode, graph, std::move(nodes));
}
CUresult end(CUstream h, CUgraph* graph, bool pt) {
  auto stream = lookupStream(h, pt);
  if (!stream) return stream.error().code;
  return endCapture(*stream, graph);
}
CUresult updateDependencies(CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edges, size_t count, unsigned flags,
                            bool pt) {
  if (count && !deps) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> nodes;
  for (size_t i = 0; i < count; ++i) {
    if (edges && (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port || edges[i].to_port))
      return CUDA_ERROR_NOT_SUPPORTED;
    auto node = graphNodeTable().find(handleValue(deps[i]));
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    nodes.push_back(node.get());
  }
  return withStream(h, pt, [&](Stream& s) { return updateCaptureDependencies(s, nodes, flags); });
}

}  // namespace

namespace impl {

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) { return createStream(phStream, Flags, 0); }
CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return createStream(phStream, flags, priority);
}
CUresult cuStreamDestroy(CUstream hStream) { return destroyStream(hStream); }
CUresult cuStreamDestroy_v2(CUstream hStream) { return destroyStream(hStream); }

// Each pair: the plain form (NULL = legacy stream) and the _ptsz form (NULL = per-thread stream).
#define CUEMU_STREAM_PAIR(name, params, call)                \
  CUresult name params { return call(false); }               \
  CUresult name##_ptsz params { return call(true); }

CUEMU_STREAM_PAIR(cuStreamQuery, (CUstream hStream), [&](bool pt) { return query(hStream, pt); })
CUEMU_STREAM_PAIR(cuStreamSynchronize, (CUstream hStream), [&](bool pt) { return synchronize(hStream, pt); })
CUEMU_STREAM_PAIR(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags),
                  [&](bool pt) { return waitEvent(hStream, hEvent, Flags, pt); })
CUEMU_STREAM_PAIR(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags),
                  [&](bool pt) { return addCallback(hStream, callback, userData, flags, pt); })
CUEMU_STREAM_PAIR(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void* userData),
                  [&](bool pt) { return launchHostFunc(hStream, fn, userData, pt); })
CUEMU_STREAM_PAIR(cuStreamGetFlags, (CUstream hStream, unsigned int* flags), [&](bool pt) { return getFlags(hStream, flags, pt); })
CUEMU_STREAM_PAIR(cuStreamGetPriority, (CUstream hStream, int* priority), [&](bool pt) { return getPriority(hStream, priority, pt); })
CUEMU_STREAM_PAIR(cuStreamGetCtx, (CUstream hStream, CUcontext* pctx), [&](bool pt) { return getCtx(hStream, pctx, pt); })
CUEMU_STREAM_PAIR(cuStreamGetCtx_v2, (CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx),
                  [&](bool pt) { return getCtx2(hStream, pCtx, pGreenCtx, pt); })
CUEMU_STREAM_PAIR(cuStreamGetId, (CUstream hStream, unsigned long long* streamId), [&](bool pt) { return getId(hStream, streamId, pt); })
CUEMU_STREAM_PAIR(cuStreamGetDevice, (CUstream hStream, CUdevice* device), [&](bool pt) { return getDevice(hStream, device, pt); })
CUEMU_STREAM_PAIR(cuStreamAttachMemAsync, (CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags),
                  [&](bool pt) { return attachMem(hStream, dptr, length, flags, pt); })
CUEMU_STREAM_PAIR(cuStreamGetAttribute, (CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value),
                  [&](bool pt) { return getAttribute(hStream, attr, value, pt); })
CUEMU_STREAM_PAIR(cuStreamSetAttribute, (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* param),
                  [&](bool pt) { return setAttribute(hStream, attr, param, pt); })
CUEMU_STREAM_PAIR(cuStreamCopyAttributes, (CUstream dstStream, CUstream srcStream),
                  [&](bool pt) { return copyAttributes(dstStream, srcStream, pt); })
CUEMU_STREAM_PAIR(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus* captureStatus),
                  [&](bool pt) { return cuemu::captureStatus(hStream, captureStatus, pt); })
CUEMU_STREAM_PAIR(cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out),
                  [&](bool pt) { return getCaptureInfo(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr, pt); })
CUEMU_STREAM_PAIR(cuStreamGetCaptureInfo_v2,
                  (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out, CUgraph* graph_out,
                   const CUgraphNode** dependencies_out, size_t* numDependencies_out),
                  [&](bool pt) {
                    return getCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr,
                                       numDependencies_out, pt);
                  })
CUEMU_STREAM_PAIR(cuStreamGetCaptureInfo_v3,
                  (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out, CUgraph* graph_out,
                   const CUgraphNode** dependencies_out, const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out),
                  [&](bool pt) {
                    return getCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                                       numDependencies_out, pt);
                  })

CUEMU_STREAM_PAIR(cuStreamBeginCapture, (CUstream hStream),
                  [&](bool pt) { return begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, pt); })
CUEMU_STREAM_PAIR(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode),
                  [&](bool pt) { return begin(hStream, mode, pt); })
CUEMU_STREAM_PAIR(cuStreamBeginCaptureToGraph,
                  (CUstream hStream, CUgraph hGraph, const CUgraphNode* dependencies,
                   const CUgraphEdgeData* dependencyData, size_t numDependencies, CUstreamCaptureMode mode),
                  [&](bool pt) { return beginToGraph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode, pt); })
CUEMU_STREAM_PAIR(cuStreamEndCapture, (CUstream hStream, CUgraph* phGraph), [&](bool pt) { return end(hStream, phGraph, pt); })
CUEMU_STREAM_PAIR(cuStreamUpdateCaptureDependencies,
                  (CUstream hStream, CUgraphNode* dependencies, size_t numDependencies, unsigned int flags),
                  [&](bool pt) { return updateDependencies(hStream, dependencies, nullptr, numDependencies, flags, pt); })
CUEMU_STREAM_PAIR(cuStreamUpdateCaptureDependencies_v2,
                  (CUstream hStream, CUgraphNode* dependencies, const CUgraphEdgeData* dependencyData,
                   size_t numDependencies, unsigned int flags),
                  [&](bool pt) { return updateDependencies(hStream, dependencies, dependencyData, numDependencies, flags, pt); })

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
