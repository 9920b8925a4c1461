// Event management entry points.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/ipc_event.h"
#include "core/module.h"
#include "core/stream_lookup.h"

namespace cuemu {
namespace {

constexpr unsigned kEventFlags = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

CUresult record(CUevent handle, CUstream streamHandle, unsigned flags) {
  if (flags & ~unsigned(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(event, Event, handle);
  auto stream = lookupStream(streamHandle);
  if (!stream) return stream.error().code;
  // An event records on a stream of its own context, or of a green context of the same device (green contexts
  // share their device's other contexts' resources; cuda.core's green-context tests).
  Context& streamContext = (*stream)->context();
  Context& eventContext = event->context();
  bool green = streamContext.greenHandle() || eventContext.greenHandle();
  if (&streamContext != &eventContext && !(green && &streamContext.device() == &eventContext.device()))
    return CUDA_ERROR_INVALID_HANDLE;
  CUresult result;
  if (flags & CU_EVENT_RECORD_EXTERNAL) {
    // An external record exists only in a capture, as an event-record node (CUDA_ERROR_ILLEGAL_STATE
    // outside one, measured on driver 580).
    if (!captureIfCapturing(**stream, CU_GRAPH_NODE_TYPE_EVENT_RECORD, EventNodeData{event, handle}, result))
      return CUDA_ERROR_ILLEGAL_STATE;
    return result;
  }
  if (captureEventRecord(**stream, *event, result)) return result;
  if ((*stream)->kind() == Stream::Kind::Legacy)
    if (CUresult implicit = checkLegacyImplicitCapture(**stream)) return implicit;
  event->record(**stream);
  return CUDA_SUCCESS;
}

CUresult destroy(CUevent handle) {
  // Pending records stay valid: the stream's marker owns its own record state.
  return handleTable<Event>().erase(handleValue(handle)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult elapsed(float* ms, CUevent startHandle, CUevent endHandle) {
  // A NULL result pointer is CUDA_ERROR_INVALID_HANDLE on driver 580 (measured on an H200).
  if (!ms) return CUDA_ERROR_INVALID_HANDLE;
  CUEMU_LOOKUP(start, Event, startHandle);
  CUEMU_LOOKUP(end, Event, endHandle);
  if (start->recordedInCapture() || end->recordedInCapture()) return CUDA_ERROR_CAPTURED_EVENT;
  if (start->timingDisabled() || end->timingDisabled()) return CUDA_ERROR_INVALID_HANDLE;
  if (!start->everRecorded() || !end->everRecorded()) return CUDA_ERROR_INVALID_HANDLE;
  if (start->query() != CUDA_SUCCESS || end->query() != CUDA_SUCCESS) return CUDA_ERROR_NOT_READY;
  *ms = static_cast<float>(static_cast<double>(end->timestamp() - start->timestamp()) / 1.0e6);
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
  if (Flags & ~kEventFlags) return CUDA_ERROR_INVALID_VALUE;
  // An interprocess event must have timing disabled.
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  auto event = std::make_shared<Event>(**context, Flags);
  if (Flags & CU_EVENT_INTERPROCESS) {
    auto shared = IpcEventState::create();
    if (!shared) return shared.error().code;
    event->attachIpc(std::move(*shared));
  }
  event->setHandle(handleTable<Event>().insert(event));
  *phEvent = toApiHandle<CUevent>(event->handle());
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent hEvent) { return destroy(hEvent); }
CUresult cuEventDestroy_v2(CUevent hEvent) { return destroy(hEvent); }

CUresult cuEventQuery(CUevent hEvent) {
  CUEMU_LOOKUP(event, Event, hEvent);
  if (CUresult sticky = event->context().stickyError()) return sticky;
  if (event->recordedInCapture()) return refuseUseOfCapturedEvent(*event, CUDA_ERROR_CAPTURED_EVENT);
  return event->query();
}

CUresult cuEventSynchronize(CUevent hEvent) {
  CUEMU_LOOKUP(event, Event, hEvent);
  if (event->recordedInCapture()) return refuseUseOfCapturedEvent(*event, CUDA_ERROR_INVALID_VALUE);
  event->synchronize();
  event->context().afterHostSynchronize();
  return event->context().stickyError();
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream, 0); }
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return record(hEvent, hStream, flags);
}

CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed(pMilliseconds, hStart, hEnd);
}
CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed(pMilliseconds, hStart, hEnd);
}

}  // namespace impl
}  // namespace cuemu
