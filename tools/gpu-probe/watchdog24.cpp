// Issue 24: what driver 580 does while a kernel never ends. Other threads' calls (do they wait for it?), and
// cuCtxDestroy from another thread (does it return, and with what?). Prints one line per observation.
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

static const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry forever()
{
$L:
  bra.uni $L;
}
)";

static double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

#define SHOW(call)                                                    \
  do {                                                                \
    auto t0 = std::chrono::steady_clock::now();                       \
    CUresult r = call;                                                \
    const char* name = "?";                                           \
    cuGetErrorName(r, &name);                                         \
    std::printf("%-60s -> %s (%.1f ms)\n", #call, name, msSince(t0)); \
    std::fflush(stdout);                                              \
  } while (0)

int main() {
  SHOW(cuInit(0));
  CUdevice device;
  SHOW(cuDeviceGet(&device, 0));
  CUcontext context;
  SHOW(cuCtxCreate(&context, nullptr, 0, device));
  CUmodule module;
  SHOW(cuModuleLoadData(&module, kPtx));
  CUfunction f;
  SHOW(cuModuleGetFunction(&f, module, "forever"));
  CUstream stream;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  SHOW(cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::thread other([&] {
    SHOW(cuCtxSetCurrent(context));
    CUdevice d;
    SHOW(cuCtxGetDevice(&d));
    size_t free, total;
    SHOW(cuMemGetInfo(&free, &total));
    SHOW(cuStreamQuery(stream));
    SHOW(cuCtxResetPersistingL2Cache());
    CUdeviceptr p;
    SHOW(cuMemAlloc(&p, 1 << 20));
    CUstream mine;
    SHOW(cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING));
    SHOW(cuMemsetD8Async(p, 1, 1 << 20, mine));
    SHOW(cuStreamSynchronize(mine));
  });
  other.join();
  std::atomic<bool> returned{false};
  std::thread destroyer([&] {
    SHOW(cuCtxDestroy(context));
    returned = true;
  });
  for (int i = 0; i < 200 && !returned; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!returned) {
    std::printf("cuCtxDestroy from another thread: still blocked after 20 s\n");
    std::fflush(stdout);
    _exit(3);
  }
  destroyer.join();
  CUcontext fresh;
  SHOW(cuCtxCreate(&fresh, nullptr, 0, device));
  SHOW(cuCtxSynchronize());
  return 0;
}
