// The calling thread's stream-capture mode (cuThreadExchangeStreamCaptureMode) and whether a potentially
// unsafe call (an allocation, an event query or synchronisation) must be refused because a capture in global
// mode, or one in thread-local mode begun by this thread, is under way. Kept apart from core/graph.h so that
// the entry-point wrapper can ask cheaply.
#pragma once

#include "api/cuda_internal.h"

namespace cuemu {

bool unsafeCallRefusedDuringCapture();
CUstreamCaptureMode exchangeThreadCaptureMode(CUstreamCaptureMode mode);

}  // namespace cuemu
