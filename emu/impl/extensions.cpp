// cuemu's own extensions (include/cuemu.h): deterministic mode switched at run time, cuemu's version.
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

CUresult cuemuGetVersion(int* major, int* minor, int* patch) {
  if (major) *major = CUEMU_VERSION_MAJOR;
  if (minor) *minor = CUEMU_VERSION_MINOR;
  if (patch) *patch = CUEMU_VERSION_PATCH;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
