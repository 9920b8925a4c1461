// cuemu's own extensions (include/cuemu.h): deterministic mode switched at run time.
#include "api/impl.h"

#include "core/stream.h"

namespace cuemu::impl {

CUresult cuemuSetDeterministic(int enabled) {
  if (enabled != 0 && enabled != 1) return CUDA_ERROR_INVALID_VALUE;
  switchDeterministicMode(enabled == 1);
  return CUDA_SUCCESS;
}

CUresult cuemuGetDeterministic(int* enabled) {
  if (!enabled) return CUDA_ERROR_INVALID_VALUE;
  *enabled = deterministicMode() ? 1 : 0;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
