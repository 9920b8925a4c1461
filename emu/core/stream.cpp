#include "core/stream.h"

namespace cuemu {

CUresult enqueueOnStream(Context&, CUstream stream, StreamWork work) {
  auto value = reinterpret_cast<uintptr_t>(stream);
  if (value != 0 && value != 1 && value != 2) return CUDA_ERROR_INVALID_HANDLE;
  return work();
}

}  // namespace cuemu
