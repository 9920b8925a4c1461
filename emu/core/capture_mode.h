// The calling thread's stream-capture mode (cuThreadExchangeStreamCaptureMode) and whether a potentially
// unsafe call (an allocation, an event query or synchronisation) must be refused because a capture in global
// mode, or one in thread-local mode begun by this thread, is under way. Kept apart from core/graph.h so that
// the entry-point wrapper can ask cheaply.
#pragma once

#include "api/cuda_internal.h"

namespace cuemu {

bool unsafeCallRefusedDuringCapture();
// Refuses such a call: invalidates the captures that made it unsafe (every global-mode capture when this thread is in
// global mode, and this thread's thread-local ones), as driver 580 does (tools/gpu-probe/captureunsafe28), and
// answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
CUresult refuseUnsafeCallDuringCapture();
CUstreamCaptureMode exchangeThreadCaptureMode(CUstreamCaptureMode mode);

}  // namespace cuemu
