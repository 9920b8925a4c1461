// Theme: handles: stale, garbage, of the wrong kind, of destroyed contexts. Each must give an error, not a crash.
#include "cases.h"

#include <cstdint>

using namespace reliability;

namespace {
template <class T> T garbage(uintptr_t value) { return reinterpret_cast<T>(value); }
}  // namespace

RELIABILITY_CASE("handles", handles_destroyed_stream_and_event, 20, nullptr) {
  setUp();
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, 0), CUDA_SUCCESS, "cuStreamCreate");
  expectResult(cuStreamDestroy(stream), CUDA_SUCCESS, "cuStreamDestroy");
  expectError(cuStreamQuery(stream), "cuStreamQuery of a destroyed stream");
  expectError(cuStreamSynchronize(stream), "cuStreamSynchronize of a destroyed stream");
  expectError(cuStreamDestroy(stream), "a second cuStreamDestroy");
  CUevent event = nullptr;
  expectResult(cuEventCreate(&event, 0), CUDA_SUCCESS, "cuEventCreate");
  expectResult(cuEventDestroy(event), CUDA_SUCCESS, "cuEventDestroy");
  expectError(cuEventRecord(event, nullptr), "cuEventRecord of a destroyed event");
  expectError(cuEventQuery(event), "cuEventQuery of a destroyed event");
  expectError(cuEventDestroy(event), "a second cuEventDestroy");
}

RELIABILITY_CASE("handles", handles_garbage_values, 20, nullptr) {
  setUp();
  // 1 and 2 are CU_STREAM_LEGACY and CU_STREAM_PER_THREAD: valid stream values.
  for (uintptr_t value : {uintptr_t(0x13), uintptr_t(0xdeadbeef), uintptr_t(0x7fffffffffffull), ~uintptr_t(0) - 7}) {
    expectError(cuStreamQuery(garbage<CUstream>(value)), "cuStreamQuery(garbage)");
    expectError(cuEventQuery(garbage<CUevent>(value)), "cuEventQuery(garbage)");
    CUfunction f = nullptr;
    expectError(cuModuleGetFunction(&f, garbage<CUmodule>(value), "store"), "cuModuleGetFunction(garbage module)");
    int attribute = 0;
    expectError(cuFuncGetAttribute(&attribute, CU_FUNC_ATTRIBUTE_NUM_REGS, garbage<CUfunction>(value)),
                "cuFuncGetAttribute(garbage function)");
    expectError(cuCtxPushCurrent(garbage<CUcontext>(value)), "cuCtxPushCurrent(garbage context)");
    CUdevice device = 0;
    expectError(cuDeviceGet(&device, int(value & 0xffff) + 100), "cuDeviceGet(bad ordinal)");  // no overflow (UBSan)
  }
}

RELIABILITY_CASE("handles", handles_of_the_wrong_kind, 20, nullptr) {
  setUp();
  CUstream stream = nullptr;
  CUevent event = nullptr;
  expectResult(cuStreamCreate(&stream, 0), CUDA_SUCCESS, "cuStreamCreate");
  expectResult(cuEventCreate(&event, 0), CUDA_SUCCESS, "cuEventCreate");
  CUmodule module = loadKernels();
  CUfunction f = kernel(module, "store");
  expectError(cuStreamQuery(reinterpret_cast<CUstream>(event)), "an event used as a stream");
  expectError(cuEventQuery(reinterpret_cast<CUevent>(stream)), "a stream used as an event");
  CUfunction g = nullptr;
  expectError(cuModuleGetFunction(&g, reinterpret_cast<CUmodule>(f), "store"), "a function used as a module");
  int attribute = 0;
  expectError(cuFuncGetAttribute(&attribute, CU_FUNC_ATTRIBUTE_NUM_REGS, reinterpret_cast<CUfunction>(module)),
              "a module used as a function");
  expectError(cuCtxPushCurrent(reinterpret_cast<CUcontext>(stream)), "a stream used as a context");
}

RELIABILITY_CASE("handles", handles_of_a_destroyed_context, 20, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUfunction f = kernel(module, "store");
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, 0), CUDA_SUCCESS, "cuStreamCreate");
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 64), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuCtxDestroy(context), CUDA_SUCCESS, "cuCtxDestroy");
  expectError(cuCtxPushCurrent(context), "cuCtxPushCurrent of a destroyed context");
  expectError(cuCtxSetCurrent(context) == CUDA_SUCCESS ? cuCtxSynchronize() : CUDA_ERROR_INVALID_CONTEXT,
              "cuCtxSynchronize in a destroyed context");
  cuCtxSetCurrent(nullptr);
  expectError(cuStreamQuery(stream), "a stream of a destroyed context");
  int attribute = 0;
  expectError(cuFuncGetAttribute(&attribute, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "a function of a destroyed context");
  expectError(cuModuleUnload(module), "a module of a destroyed context");
  expectError(cuMemFree(p), "memory of a destroyed context");
  expectError(cuCtxDestroy(context), "a second cuCtxDestroy");
  CUcontext fresh = setUp();
  expectResult(cuCtxDestroy(fresh), CUDA_SUCCESS, "a new context afterwards");
}

RELIABILITY_CASE("handles", handles_unloaded_module, 20, nullptr) {
  setUp();
  CUmodule module = loadKernels();
  CUfunction f = kernel(module, "store");
  expectResult(cuModuleUnload(module), CUDA_SUCCESS, "cuModuleUnload");
  int attribute = 0;
  expectError(cuFuncGetAttribute(&attribute, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "a function of an unloaded module");
  CUfunction g = nullptr;
  expectError(cuModuleGetFunction(&g, module, "store"), "cuModuleGetFunction of an unloaded module");
  expectError(cuModuleUnload(module), "a second cuModuleUnload");
}
