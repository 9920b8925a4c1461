// Profiler control (cuProfilerStart/Stop, cuProfilerInitialize). No profiler attaches to cuemu; the calls answer
// as driver 580 does without one (measured on an H200): start and stop succeed in a context, any number of times,
// and the deprecated initializer is not supported.
#include "api/impl.h"

#include "core/context.h"

namespace cuemu::impl {

CUresult cuProfilerStart() {
  auto context = requireCurrentContext();
  return context ? CUDA_SUCCESS : context.error().code;
}

CUresult cuProfilerStop() {
  auto context = requireCurrentContext();
  return context ? CUDA_SUCCESS : context.error().code;
}

CUresult cuProfilerInitialize(const char*, const char*, CUoutput_mode) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace cuemu::impl
