// Theme: kernel faults and kernels that never end. A fault is sticky (every later call returns it, as on driver
// 580); a kernel that runs past CUEMU_KERNEL_TIMEOUT is stopped with CUDA_ERROR_LAUNCH_TIMEOUT, and calls from
// other threads do not wait for a kernel that runs.
#include "cases.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>

using namespace reliability;

namespace {

void expectSticky(CUresult fault) {
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 16), fault, "cuMemAlloc after the fault");
  expectResult(cuCtxSynchronize(), fault, "a second cuCtxSynchronize after the fault");
}

void faultCase(const char* name, void** args, CUresult expected) {
  setUp();
  CUmodule module = loadKernels();
  expectResult(launch(kernel(module, name), 1, 32, args), CUDA_SUCCESS, name);
  expectResult(cuCtxSynchronize(), expected, "cuCtxSynchronize after the faulting kernel");
  expectSticky(expected);
}

// The watchdog is read once, at the first launch: set it before any.
void setTimeout(const char* seconds) { setenv("CUEMU_KERNEL_TIMEOUT", seconds, 1); }

}  // namespace

RELIABILITY_CASE("faults", faults_store_out_of_bounds, 20, nullptr) {
  CUdeviceptr bad = 0x10;  // the first page of the address space is never device memory
  unsigned v = 1;
  void* args[] = {&bad, &v};
  faultCase("store", args, CUDA_ERROR_ILLEGAL_ADDRESS);
}

RELIABILITY_CASE("faults", faults_store_to_host_stack, 20, nullptr) {
  int local = 0;
  CUdeviceptr bad = reinterpret_cast<CUdeviceptr>(&local);  // a host address that was never registered
  unsigned v = 1;
  void* args[] = {&bad, &v};
  faultCase("store", args, CUDA_ERROR_ILLEGAL_ADDRESS);
  if (local != 0) wrong("the kernel wrote to the host's stack");
}

RELIABILITY_CASE("faults", faults_trap, 20, nullptr) {
  setUp();
  CUmodule module = loadKernels();
  expectResult(launch(kernel(module, "trapNow"), 2, 64, nullptr), CUDA_SUCCESS, "trapNow");
  CUresult r = cuCtxSynchronize();
  expectError(r, "cuCtxSynchronize after trap");
  expectSticky(r);
}

RELIABILITY_CASE("faults", faults_misaligned_load, 20, nullptr) {
  setUp();
  CUmodule module = loadKernels();
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 64), CUDA_SUCCESS, "cuMemAlloc");
  void* args[] = {&p};
  expectResult(launch(kernel(module, "loadMisaligned"), 1, 1, args), CUDA_SUCCESS, "loadMisaligned");
  expectResult(cuCtxSynchronize(), CUDA_ERROR_MISALIGNED_ADDRESS, "cuCtxSynchronize");
  expectSticky(CUDA_ERROR_MISALIGNED_ADDRESS);
}

RELIABILITY_CASE("faults", faults_watchdog_endless_loop, 20, nullptr) {
  setTimeout("0.3");
  setUp();
  CUmodule module = loadKernels();
  expectResult(launch(kernel(module, "forever"), 4, 128, nullptr), CUDA_SUCCESS, "forever");
  expectResult(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT, "cuCtxSynchronize after an endless kernel");
  expectSticky(CUDA_ERROR_LAUNCH_TIMEOUT);
}

RELIABILITY_CASE("faults", faults_watchdog_spin_on_unset_flag, 20, nullptr) {
  setTimeout("0.3");
  setUp();
  CUmodule module = loadKernels();
  CUdeviceptr flag = 0;
  expectResult(cuMemAlloc(&flag, 4), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD32(flag, 0, 1), CUDA_SUCCESS, "cuMemsetD32");
  void* args[] = {&flag};
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
  expectResult(launch(kernel(module, "spinUntilSet"), 64, 32, args, stream), CUDA_SUCCESS, "spinUntilSet");
  expectResult(cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_TIMEOUT, "cuStreamSynchronize");
  expectSticky(CUDA_ERROR_LAUNCH_TIMEOUT);
}

RELIABILITY_CASE("faults", faults_watchdog_barrier_loop, 20, nullptr) {
  setTimeout("0.3");
  setUp();
  CUmodule module = loadKernels();
  expectResult(launch(kernel(module, "barrierForever"), 2, 256, nullptr), CUDA_SUCCESS, "barrierForever");
  expectResult(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT, "cuCtxSynchronize");
}

RELIABILITY_CASE("faults", faults_watchdog_deterministic_mode, 20, nullptr) {
  setTimeout("0.3");
  setenv("CUEMU_DETERMINISTIC", "1", 1);
  setUp();
  CUmodule module = loadKernels();
  // Deterministic mode runs the kernel inside the launching call: the launch itself reports the timeout.
  CUresult launched = launch(kernel(module, "forever"), 2, 32, nullptr);
  CUresult synced = cuCtxSynchronize();
  if (synced != CUDA_ERROR_LAUNCH_TIMEOUT)
    wrong("deterministic mode: launch " + resultName(launched) + ", cuCtxSynchronize " + resultName(synced) +
          ", expected CUDA_ERROR_LAUNCH_TIMEOUT");
}

RELIABILITY_CASE("faults", faults_watchdog_context_destroy_from_other_thread, 20, nullptr) {
  setTimeout("0.5");
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  expectResult(launch(kernel(module, "forever"), 8, 64, nullptr), CUDA_SUCCESS, "forever");
  CUresult destroyed = CUDA_ERROR_UNKNOWN;
  std::thread other([&] { destroyed = cuCtxDestroy(context); });
  other.join();  // a hang here is what the runner reports
  if (destroyed != CUDA_SUCCESS && destroyed != CUDA_ERROR_LAUNCH_TIMEOUT)
    wrong("cuCtxDestroy while an endless kernel runs: " + resultName(destroyed));
}

// A kernel spins until the host sets a flag in pinned memory; meanwhile another thread's calls must not wait for
// it. The flag is set only after they returned, so a call that waited for the kernel would never return.
RELIABILITY_CASE("faults", faults_calls_while_a_kernel_spins, 30, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  volatile unsigned* flag = nullptr;
  expectResult(cuMemHostAlloc((void**)&flag, 4, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS, "cuMemHostAlloc");
  *flag = 0;
  CUdeviceptr deviceFlag = 0;
  expectResult(cuMemHostGetDevicePointer(&deviceFlag, (void*)flag, 0), CUDA_SUCCESS, "cuMemHostGetDevicePointer");
  CUstream stream = nullptr;
  expectResult(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
  void* args[] = {&deviceFlag};
  expectResult(launch(kernel(module, "spinUntilSet"), 4, 32, args, stream), CUDA_SUCCESS, "spinUntilSet");
  std::thread other([&] {
    expectResult(cuCtxSetCurrent(context), CUDA_SUCCESS, "cuCtxSetCurrent");
    CUdevice device;
    expectResult(cuCtxGetDevice(&device), CUDA_SUCCESS, "cuCtxGetDevice");
    size_t free = 0, total = 0;
    expectResult(cuMemGetInfo(&free, &total), CUDA_SUCCESS, "cuMemGetInfo");
    expectResult(cuStreamQuery(stream), CUDA_ERROR_NOT_READY, "cuStreamQuery of the spinning kernel's stream");
    expectResult(cuCtxResetPersistingL2Cache(), CUDA_SUCCESS, "cuCtxResetPersistingL2Cache");
    CUdeviceptr p = 0;
    expectResult(cuMemAlloc(&p, 1 << 20), CUDA_SUCCESS, "cuMemAlloc");
    CUstream mine = nullptr;
    expectResult(cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
    expectResult(cuMemsetD8Async(p, 1, 1 << 20, mine), CUDA_SUCCESS, "cuMemsetD8Async");
    expectResult(cuStreamSynchronize(mine), CUDA_SUCCESS, "cuStreamSynchronize of another stream");
    CUmodule second = nullptr;
    expectResult(cuModuleLoadData(&second, kKernels), CUDA_SUCCESS, "cuModuleLoadData");
    expectResult(cuModuleUnload(second), CUDA_SUCCESS, "cuModuleUnload");
    expectResult(cuStreamQuery(stream), CUDA_ERROR_NOT_READY, "cuStreamQuery, still spinning");
  });
  other.join();
  *flag = 1;
  expectResult(cuStreamSynchronize(stream), CUDA_SUCCESS, "cuStreamSynchronize once the flag is set");
}

// cuCtxDestroy waits for the context's work; while it waits for a kernel that spins, other threads' calls (in
// another context, and device-wide ones) must not wait behind it. The flag is set only after they returned.
RELIABILITY_CASE("faults", faults_calls_while_a_context_destroy_waits, 30, nullptr) {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  volatile unsigned* flag = nullptr;
  expectResult(cuMemHostAlloc((void**)&flag, 4, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS,
               "cuMemHostAlloc");
  *flag = 0;
  CUdeviceptr deviceFlag = 0;
  expectResult(cuMemHostGetDevicePointer(&deviceFlag, (void*)flag, 0), CUDA_SUCCESS, "cuMemHostGetDevicePointer");
  void* args[] = {&deviceFlag};
  expectResult(launch(kernel(module, "spinUntilSet"), 2, 32, args), CUDA_SUCCESS, "spinUntilSet");
  std::atomic<bool> destroying{false};
  CUresult destroyed = CUDA_ERROR_UNKNOWN;
  std::thread destroyer([&] {
    destroying = true;
    destroyed = cuCtxDestroy(context);
  });
  while (!destroying) std::this_thread::yield();
  std::thread other([&] {
    CUdevice device = 0;
    expectResult(cuDeviceGet(&device, 0), CUDA_SUCCESS, "cuDeviceGet");
    int sms = 0;
    expectResult(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), CUDA_SUCCESS,
                 "cuDeviceGetAttribute");
    CUcontext second = nullptr;
    expectResult(cuCtxCreate(&second, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate of a second context");
    size_t free = 0, total = 0;
    expectResult(cuMemGetInfo(&free, &total), CUDA_SUCCESS, "cuMemGetInfo");
    CUdeviceptr p = 0;
    expectResult(cuMemAlloc(&p, 4096), CUDA_SUCCESS, "cuMemAlloc");
    expectResult(cuMemsetD8(p, 3, 4096), CUDA_SUCCESS, "cuMemsetD8");
    CUmodule mine = loadKernels();
    unsigned v = 1;
    void* storeArgs[] = {&p, &v};
    expectResult(launch(kernel(mine, "store"), 1, 1, storeArgs), CUDA_SUCCESS, "a launch in the second context");
    expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize of the second context");
    expectResult(cuCtxDestroy(second), CUDA_SUCCESS, "cuCtxDestroy of the second context");
  });
  other.join();
  *flag = 1;
  destroyer.join();
  expectResult(destroyed, CUDA_SUCCESS, "cuCtxDestroy once the kernel ended");
}
