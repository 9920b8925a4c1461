// Second round of experiments for issue 17 (run: PROBE=clients17b tools/gpu-probe/run.sh OUTDIR): what a client
// that keeps an old primary-context handle gets after cuda.close() (release + reset), and which flags
// cuCtxGetFlags reports for contexts made by each creation entry point.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

#define SHOW(name, expr)                                                     \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    const char* n_ = nullptr;                                                \
    cuGetErrorName(r_, &n_);                                                 \
    std::printf("%s: %s (%d)\n", name, n_ ? n_ : "?", static_cast<int>(r_)); \
  } while (0)

static void primaryReuseAfterReset(CUdevice dev) {
  CUcontext primary = nullptr;
  SHOW("reuse.retain", cuDevicePrimaryCtxRetain(&primary, dev));
  SHOW("reuse.setcurrent", cuCtxSetCurrent(primary));
  CUdeviceptr p = 0;
  SHOW("reuse.alloc", cuMemAlloc(&p, 800));
  SHOW("reuse.pop", cuCtxPopCurrent(nullptr));
  SHOW("reuse.free_nocontext", cuMemFree(p));
  SHOW("reuse.release", cuDevicePrimaryCtxRelease(dev));
  SHOW("reuse.reset", cuDevicePrimaryCtxReset(dev));
  unsigned flags = 0;
  int active = -1;
  SHOW("reuse.state", cuDevicePrimaryCtxGetState(dev, &flags, &active));
  std::printf("reuse.state active %d\n", active);
  SHOW("reuse.setcurrent_old_handle", cuCtxSetCurrent(primary));
  CUcontext cur = nullptr;
  SHOW("reuse.getcurrent", cuCtxGetCurrent(&cur));
  std::printf("reuse.current_is_old %d\n", cur == primary);
  size_t freeBytes = 0, total = 0;
  SHOW("reuse.meminfo", cuMemGetInfo(&freeBytes, &total));
  SHOW("reuse.alloc_again", cuMemAlloc(&p, 800));
  SHOW("reuse.synchronize", cuCtxSynchronize());
  SHOW("reuse.state2", cuDevicePrimaryCtxGetState(dev, &flags, &active));
  std::printf("reuse.state2 active %d\n", active);
  SHOW("reuse.push_old_handle", cuCtxPushCurrent(primary));
  SHOW("reuse.meminfo_pushed", cuMemGetInfo(&freeBytes, &total));
  SHOW("reuse.pop2", cuCtxPopCurrent(nullptr));
  CUcontext again = nullptr;
  SHOW("reuse.retain_again", cuDevicePrimaryCtxRetain(&again, dev));
  std::printf("reuse.same_handle %d\n", again == primary);
  SHOW("reuse.meminfo_retained", cuMemGetInfo(&freeBytes, &total));
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
  cuDevicePrimaryCtxReset(dev);
}

using CtxCreateV2 = CUresult (*)(CUcontext*, unsigned, CUdevice);

static void contextFlags(CUdevice dev) {
  auto create2 = reinterpret_cast<CtxCreateV2>(dlsym(RTLD_DEFAULT, "cuCtxCreate_v2"));
  for (unsigned f :
       {0u, unsigned(CU_CTX_SCHED_YIELD), unsigned(CU_CTX_MAP_HOST), unsigned(CU_CTX_SCHED_BLOCKING_SYNC)}) {
    CUcontext c = nullptr;
    unsigned got = 0;
    if (create2 && create2(&c, f, dev) == CUDA_SUCCESS) {
      cuCtxGetFlags(&got);
      std::printf("flags v2 created 0x%x reports 0x%x\n", f, got);
      cuCtxDestroy(c);
    }
    if (cuCtxCreate_v4(&c, nullptr, f, dev) == CUDA_SUCCESS) {
      cuCtxGetFlags(&got);
      std::printf("flags v4 created 0x%x reports 0x%x\n", f, got);
      cuCtxDestroy(c);
    }
  }
  CUcontext primary = nullptr;
  cuDevicePrimaryCtxRetain(&primary, dev);
  cuCtxPushCurrent(primary);
  unsigned got = 0;
  cuCtxGetFlags(&got);
  std::printf("flags primary reports 0x%x\n", got);
  cuCtxPopCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
}

int main() {
  CUdevice dev;
  if (cuInit(0) || cuDeviceGet(&dev, 0)) return 1;
  primaryReuseAfterReset(dev);
  contextFlags(dev);
  return 0;
}
