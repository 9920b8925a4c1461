// Kernel faults poison the whole process, as measured on NVIDIA's driver 580 (H200): after a trap, an illegal
// or misaligned address or a device assert, the faulting context and every other context return the fault's
// code from (nearly) every call, cuCtxCreate and cuDevicePrimaryCtxRetain included, and neither destroying the
// context nor resetting the primary context clears it. The state lives here, in one place; the entry-point
// wrapper (api/entry.h) turns it into every call's result, and stream work stops running once it is set.
// Launch-time validation errors never come here: they are returned by the launching call only.
#pragma once

#include "api/cuda_internal.h"

namespace cuemu {

// CUDA_SUCCESS until a kernel fault; then the first fault's code, for the rest of the process.
CUresult processFault() noexcept;
// Records a fault from asynchronous work. The first one wins.
void raiseProcessFault(CUresult fault) noexcept;
// Unit tests only: a test process runs many independent cases.
void clearProcessFaultForTesting() noexcept;

}  // namespace cuemu
