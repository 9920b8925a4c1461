// What the driver benchmarks share: a failed driver call ends the benchmark with its name, and a kernel is loaded
// into the primary context of device 0 (made current) once per process.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

namespace driver_bench {

inline void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  std::fprintf(stderr, "%s failed: %d\n", what, int(r));
  std::exit(1);
}

// Kernel `name` of PTX module `ptx`, loaded into the current primary context of device 0.
inline CUfunction loadKernel(const char* ptx, const char* name) {
  check(cuInit(0), "cuInit");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
  CUfunction function = nullptr;
  check(cuModuleGetFunction(&function, module, name), "cuModuleGetFunction");
  return function;
}

}  // namespace driver_bench
