// Theme: launches with bad configurations or arguments. The context must stay usable after each refusal.
#include "cases.h"

#include <cstdint>

using namespace reliability;

namespace {

// A launch that stores 7 through device memory, synchronised: the context still works.
void contextStillWorks(CUmodule module) {
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 4), CUDA_SUCCESS, "cuMemAlloc after the refused launch");
  unsigned value = 7;
  void* args[] = {&p, &value};
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "a valid launch after the refused one");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the refused launch");
  unsigned out = 0;
  expectResult(cuMemcpyDtoH(&out, p, 4), CUDA_SUCCESS, "cuMemcpyDtoH");
  if (out != 7) wrong("the valid launch after the refused one stored " + std::to_string(out));
  cuMemFree(p);
}

struct Fixture {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUdeviceptr p = 0;
  unsigned value = 1;
  void* args[2] = {&p, &value};
  Fixture() { expectResult(cuMemAlloc(&p, 4), CUDA_SUCCESS, "cuMemAlloc"); }
};

}  // namespace

RELIABILITY_CASE("launches", launches_zero_dimensions, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 0, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE, "grid 0");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 0, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE, "block y 0");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_dimensions_too_large, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 2048, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "2048 threads per block");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 65, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "block z 65");
  expectResult(cuLaunchKernel(k, 1, 65536, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "grid y 65536");
  expectResult(cuLaunchKernel(k, 0x80000000u, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "grid x 2^31");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_too_much_shared_memory, 20, nullptr) {
  Fixture f;
  expectResult(cuLaunchKernel(kernel(f.module, "store"), 1, 1, 1, 1, 1, 1, 1u << 20, nullptr, f.args, nullptr),
               CUDA_ERROR_INVALID_VALUE, "1 MiB of dynamic shared memory");
  expectResult(cuLaunchKernel(kernel(f.module, "store"), 1, 1, 1, 1, 1, 1, 0xFFFFFFFFu, nullptr, f.args, nullptr),
               CUDA_ERROR_INVALID_VALUE, "4 GiB of dynamic shared memory");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_missing_or_conflicting_parameters, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE,
               "no parameters for a kernel that has two");
  struct {
    CUdeviceptr p;
    unsigned v;
  } buffer{f.p, 3};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, extra), CUDA_ERROR_INVALID_VALUE,
               "kernelParams and extra both");
  size_t small = 4;
  void* shortExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                        CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, shortExtra), CUDA_ERROR_INVALID_VALUE,
               "extra with a buffer too small");
  void* garbageExtra[] = {reinterpret_cast<void*>(0x77), &buffer, CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, garbageExtra), CUDA_ERROR_INVALID_VALUE,
               "extra with an unknown key");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_block_contradicts_reqntid, 20,
                 "") {
  Fixture f;
  CUfunction k = kernel(f.module, "fixedShape");
  expectError(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "32 threads for .reqntid 64");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the refused launch");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_null_and_stale_function, 20, nullptr) {
  Fixture f;
  expectError(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), "a null function");
  expectError(cuLaunchKernel(reinterpret_cast<CUfunction>(uintptr_t(0x1234)), 1, 1, 1, 1, 1, 1, 0, nullptr, f.args,
                             nullptr),
              "a garbage function");
  CUmodule other = loadKernels();
  CUfunction stale = kernel(other, "store");
  expectResult(cuModuleUnload(other), CUDA_SUCCESS, "cuModuleUnload");
  expectError(cuLaunchKernel(stale, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr),
              "a function of an unloaded module");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_function_of_another_context, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  CUcontext second = setUp();  // current now
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr),
              "a function of another context");
  cuCtxDestroy(second);
  expectResult(cuCtxSetCurrent(f.context), CUDA_SUCCESS, "cuCtxSetCurrent");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_invalid_stream, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, reinterpret_cast<CUstream>(uintptr_t(0xdead0)), f.args, nullptr),
              "a garbage stream");
  CUstream s = nullptr;
  expectResult(cuStreamCreate(&s, 0), CUDA_SUCCESS, "cuStreamCreate");
  expectResult(cuStreamDestroy(s), CUDA_SUCCESS, "cuStreamDestroy");
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, f.args, nullptr), "a destroyed stream");
  contextStillWorks(f.module);
}
