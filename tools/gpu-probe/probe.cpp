// Small experiments on NVIDIA's driver whose answers decide how cuemu behaves (run on a GPU machine with
// tools/gpu-probe/run.sh). Each prints "name: result" lines; the answers are recorded in the conformance cases.
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#define SHOW(name, expr)                                                     \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    const char* n_ = nullptr;                                                \
    cuGetErrorName(r_, &n_);                                                 \
    std::printf("%s: %s (%d)\n", name, n_ ? n_ : "?", static_cast<int>(r_)); \
  } while (0)

static void primaryContextProbe(CUdevice dev) {
  unsigned flags = 0;
  int active = -1;
  cuDevicePrimaryCtxReset(dev);
  CUcontext c;
  SHOW("pc.retain", cuDevicePrimaryCtxRetain(&c, dev));
  unsigned long long id1 = 0, id2 = 0;
  cuCtxGetId(c, &id1);
  SHOW("pc.release_v2", cuDevicePrimaryCtxRelease_v2(dev));
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pc.active after 1 retain + 1 release: %d\n", active);
  SHOW("pc.retain again", cuDevicePrimaryCtxRetain(&c, dev));
  cuCtxGetId(c, &id2);
  std::printf("pc.id first %llu second %llu\n", id1, id2);
  SHOW("pc.release", cuDevicePrimaryCtxRelease(dev));
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pc.active after second release: %d\n", active);
  // two retains then two releases
  cuDevicePrimaryCtxReset(dev);
  cuDevicePrimaryCtxRetain(&c, dev);
  cuDevicePrimaryCtxRetain(&c, dev);
  cuDevicePrimaryCtxRelease(dev);
  cuDevicePrimaryCtxRelease(dev);
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pc.active after 2 retains + 2 releases: %d\n", active);
  // retain, push, pop, release
  cuDevicePrimaryCtxReset(dev);
  cuDevicePrimaryCtxRetain(&c, dev);
  cuCtxGetId(c, &id1);
  cuCtxPushCurrent(c);
  cuCtxPopCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pc.active after retain/push/pop/release: %d\n", active);
  cuDevicePrimaryCtxRetain(&c, dev);
  cuCtxGetId(c, &id2);
  std::printf("pc.id after re-retain: first %llu second %llu\n", id1, id2);
  cuDevicePrimaryCtxRelease(dev);
  cuDevicePrimaryCtxReset(dev);
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pc.active after reset: %d\n", active);
  cuDevicePrimaryCtxRetain(&c, dev);
  cuCtxGetId(c, &id1);
  std::printf("pc.id after reset + retain: %llu\n", id1);
  cuDevicePrimaryCtxRelease(dev);
}

static const char* kWritePtx = R"(.version 8.0
.target sm_70
.address_size 64
.visible .entry write_to(.param .u64 p) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

// Last: a fault poisons the process. Does a stream callback added after the faulting kernel run, and with what
// status? What do later calls answer?
static void faultCallbackProbe(CUdevice dev) {
  CUcontext ctx;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  CUmodule m;
  SHOW("fault.load", cuModuleLoadData(&m, kWritePtx));
  CUfunction f;
  cuModuleGetFunction(&f, m, "write_to");
  CUstream s;
  cuStreamCreate(&s, 0);
  CUdeviceptr bad = 0x10;
  void* params[] = {&bad};
  SHOW("fault.launch", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  static std::atomic<int> status{-1};
  static std::atomic<int> calls{0};
  SHOW("fault.addcallback", cuStreamAddCallback(
                                s,
                                [](CUstream, CUresult st, void*) {
                                  status = static_cast<int>(st);
                                  ++calls;
                                },
                                nullptr, 0));
  static std::atomic<int> hostFnCalls{0};
  SHOW("fault.hostfunc", cuLaunchHostFunc(
                             s, [](void*) { ++hostFnCalls; }, nullptr));
  SHOW("fault.ctxsync", cuCtxSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::printf("fault.callback calls %d status %d; host function calls %d\n", calls.load(), status.load(),
              hostFnCalls.load());
  SHOW("fault.addcallback after", cuStreamAddCallback(
                                      s, [](CUstream, CUresult, void*) { ++calls; }, nullptr, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::printf("fault.callback calls after %d\n", calls.load());
  SHOW("fault.streamdestroy", cuStreamDestroy(s));
  CUdeviceptr p;
  SHOW("fault.memalloc", cuMemAlloc(&p, 16));
  SHOW("fault.ctxdestroy", cuCtxDestroy(ctx));
  CUcontext c2;
  SHOW("fault.ctxcreate after destroy", cuCtxCreate(&c2, nullptr, 0, dev));
  SHOW("fault.primary reset", cuDevicePrimaryCtxReset(dev));
  CUcontext pc;
  SHOW("fault.primary retain", cuDevicePrimaryCtxRetain(&pc, dev));
}

// Does cuDevicePrimaryCtxReset drop the references retains hold?
static void primaryResetReferencesProbe(CUdevice dev) {
  unsigned flags = 0;
  int active = -1;
  CUcontext c;
  cuDevicePrimaryCtxReset(dev);
  cuDevicePrimaryCtxRetain(&c, dev);
  SHOW("pcref.reset while retained", cuDevicePrimaryCtxReset(dev));
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pcref.active after retain + reset: %d\n", active);
  cuDevicePrimaryCtxRetain(&c, dev);
  SHOW("pcref.release", cuDevicePrimaryCtxRelease(dev));
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pcref.active after retain, reset, retain, release: %d\n", active);
  SHOW("pcref.release again", cuDevicePrimaryCtxRelease(dev));
  cuDevicePrimaryCtxGetState(dev, &flags, &active);
  std::printf("pcref.active after one more release: %d\n", active);
  SHOW("pcref.release without retain", cuDevicePrimaryCtxRelease(dev));
}

// A library from garbage that starts like an ELF file, in lazy and eager loading.
static void badLibraryProbe() {
  CUlibrary l = nullptr;
  static const char garbage[] =
      "\x7f"
      "ELFgarbage";
  SHOW("badlib.load", cuLibraryLoadData(&l, garbage, nullptr, nullptr, 0, nullptr, nullptr, 0));
  if (l) {
    unsigned n = 99;
    SHOW("badlib.kernelcount", cuLibraryGetKernelCount(&n, l));
    std::printf("badlib.kernelcount %u\n", n);
    CUkernel k;
    SHOW("badlib.getkernel", cuLibraryGetKernel(&k, l, "vadd_f32"));
    CUmodule m;
    SHOW("badlib.getmodule", cuLibraryGetModule(&m, l));
    SHOW("badlib.unload", cuLibraryUnload(l));
  }
  CUmodule m;
  SHOW("badmodule.load", cuModuleLoadData(&m, garbage));
}

int main() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  primaryContextProbe(dev);
  primaryResetReferencesProbe(dev);
  {
    CUcontext c;
    cuCtxCreate(&c, nullptr, 0, dev);
    badLibraryProbe();
    cuCtxDestroy(c);
  }
  // exec affinity on a plain context
  int supported = -1;
  cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev);
  std::printf("affinity.supported: %d\n", supported);
  CUcontext ctx;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  CUexecAffinityParam p{};
  SHOW("affinity.get", cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  std::printf("affinity.type %d smCount %u\n", static_cast<int>(p.type), p.param.smCount.val);
  // zero-byte stream-ordered allocation
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUdeviceptr z = 12345;
  SHOW("allocasync.zero", cuMemAllocAsync(&z, 0, s));
  std::printf("allocasync.zero ptr %llu\n", static_cast<unsigned long long>(z));
  SHOW("freeasync.zero", cuMemFreeAsync(z, s));
  SHOW("freeasync.null", cuMemFreeAsync(0, s));
  SHOW("sync", cuStreamSynchronize(s));
  CUdeviceptr m0 = 12345;
  SHOW("memalloc.zero", cuMemAlloc(&m0, 0));
  std::printf("memalloc.zero ptr %llu\n", static_cast<unsigned long long>(m0));
  // resource view of a linear texture
  CUdeviceptr buf;
  cuMemAlloc(&buf, 4096);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = buf;
  res.res.linear.format = CU_AD_FORMAT_FLOAT;
  res.res.linear.numChannels = 1;
  res.res.linear.sizeInBytes = 4096;
  CUDA_TEXTURE_DESC tex{};
  CUtexObject t;
  SHOW("tex.create", cuTexObjectCreate(&t, &res, &tex, nullptr));
  CUDA_RESOURCE_VIEW_DESC view;
  std::memset(&view, 0xab, sizeof view);
  SHOW("tex.view", cuTexObjectGetResourceViewDesc(&view, t));
  std::printf("tex.view format %d width %zu height %zu depth %zu firstMip %u lastMip %u firstLayer %u\n",
              static_cast<int>(view.format), view.width, view.height, view.depth, view.firstMipmapLevel,
              view.lastMipmapLevel, view.firstLayer);
  cuTexObjectDestroy(t);
  cuCtxDestroy(ctx);
  faultCallbackProbe(dev);
  return 0;
}
