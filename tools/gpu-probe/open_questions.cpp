// Experiments on NVIDIA's driver for the questions left open after the 2026-11-22 conformance run (run on a GPU
// machine with `PROBE=open_questions tools/gpu-probe/run.sh OUTDIR`). Each prints "name: result" lines; the answers
// are recorded in the conformance cases that cite them.
#include <cuda.h>
#include <cudaProfiler.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define SHOW(name, expr)                                                     \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    const char* n_ = nullptr;                                                \
    cuGetErrorName(r_, &n_);                                                 \
    std::printf("%s: %s (%d)\n", name, n_ ? n_ : "?", static_cast<int>(r_)); \
  } while (0)

template <class F> static F symbol(const char* name) { return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name)); }

using CtxCreateV1 = CUresult (*)(CUcontext*, unsigned, CUdevice);
using CtxCreateV2 = CUresult (*)(CUcontext*, unsigned, CUdevice);
using CtxDestroyV1 = CUresult (*)(CUcontext);
using MemAllocV1 = CUresult (*)(unsigned*, unsigned);
using MemFreeV1 = CUresult (*)(unsigned);
using MemGetInfoV1 = CUresult (*)(unsigned*, unsigned*);
using ArrayCreateV1 = CUresult (*)(CUarray*, const void*);

// Which contexts the 32-bit (v1) memory entry points accept.
static void legacyEntryPoints(CUdevice dev) {
  auto create1 = symbol<CtxCreateV1>("cuCtxCreate");
  auto create2 = symbol<CtxCreateV2>("cuCtxCreate_v2");
  auto destroy1 = symbol<CtxDestroyV1>("cuCtxDestroy");
  auto alloc1 = symbol<MemAllocV1>("cuMemAlloc");
  auto free1 = symbol<MemFreeV1>("cuMemFree");
  auto info1 = symbol<MemGetInfoV1>("cuMemGetInfo");
  auto array1 = symbol<ArrayCreateV1>("cuArrayCreate");
  std::printf("legacy.symbols %d %d %d %d %d %d %d\n", !!create1, !!create2, !!destroy1, !!alloc1, !!free1, !!info1,
              !!array1);
  if (!create1 || !create2 || !alloc1 || !free1 || !info1) return;
  auto tryAll = [&](const char* label) {
    unsigned p = 0;
    std::string n = std::string(label) + ".alloc";
    SHOW(n.c_str(), alloc1(&p, 4096));
    std::printf("%s.ptr %u\n", label, p);
    if (p) {
      n = std::string(label) + ".free";
      SHOW(n.c_str(), free1(p));
    }
    unsigned fr = 0, total = 0;
    n = std::string(label) + ".getinfo";
    SHOW(n.c_str(), info1(&fr, &total));
    std::printf("%s.info free %u total %u\n", label, fr, total);
    unsigned api = 0;
    n = std::string(label) + ".apiversion";
    SHOW(n.c_str(), cuCtxGetApiVersion(nullptr, &api));
    std::printf("%s.api %u\n", label, api);
  };
  CUcontext c = nullptr;
  SHOW("legacy.create_v1", create1(&c, 0, dev));
  if (c) {
    tryAll("legacy.v1ctx");
    SHOW("legacy.destroy_v1", destroy1(c));
  }
  c = nullptr;
  SHOW("legacy.create_v2", create2(&c, 0, dev));
  if (c) {
    tryAll("legacy.v2ctx");
    cuCtxDestroy(c);
  }
  CUcontext pc = nullptr;
  cuDevicePrimaryCtxRetain(&pc, dev);
  cuCtxSetCurrent(pc);
  tryAll("legacy.primary");
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
  tryAll("legacy.nocontext");
}

static const char* kCaller =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".extern .func (.param .b32 r) triple(.param .b32 x);\n"
    ".visible .entry call_triple(.param .u64 out)\n{\n"
    "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 14;\n"
    "\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n"
    "\tcall.uni (r), triple, (a);\n\tld.param.b32 %r2, [r];\n\t}\n"
    "\tst.global.u32 [%rd2], %r2;\n\tret;\n}\n";

// Linking a module whose extern function nobody defines: same answer every time?
static void linkMissingSymbol(const char* label, unsigned logOptions) {
  char error[4096] = {};
  char info[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, reinterpret_cast<void*>(sizeof(error)), info, reinterpret_cast<void*>(sizeof(info))};
  CUlinkState link;
  std::string n = std::string(label) + ".create";
  SHOW(n.c_str(), cuLinkCreate(logOptions, opts, vals, &link));
  n = std::string(label) + ".add";
  SHOW(n.c_str(), cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(kCaller), std::strlen(kCaller) + 1,
                                "caller.ptx", 0, nullptr, nullptr));
  void* cubin = nullptr;
  size_t size = 0;
  n = std::string(label) + ".complete";
  SHOW(n.c_str(), cuLinkComplete(link, &cubin, &size));
  std::printf("%s.cubin %p size %zu\n%s.errorlog [%s]\n%s.infolog [%s]\n", label, cubin, size, label, error, label,
              info);
  if (cubin) {
    CUmodule m;
    n = std::string(label) + ".load";
    SHOW(n.c_str(), cuModuleLoadData(&m, cubin));
  }
  cuLinkDestroy(link);
}

static const char* kClusterPtx =
    ".version 7.8\n.target sm_90\n.address_size 64\n"
    ".visible .entry plain(.param .u64 p)\n{\n\tret;\n}\n"
    ".visible .entry clustered() .reqnctapercluster 2, 1, 1\n{\n\tret;\n}\n";

static void clusterOccupancy() {
  CUmodule m;
  SHOW("cluster.load", cuModuleLoadData(&m, kClusterPtx));
  CUfunction plain, clustered;
  cuModuleGetFunction(&plain, m, "plain");
  cuModuleGetFunction(&clustered, m, "clustered");
  CUlaunchConfig cfg{};
  cfg.gridDimX = 16;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  int n = -1;
  SHOW("cluster.active plain noattr", cuOccupancyMaxActiveClusters(&n, plain, &cfg));
  std::printf("cluster.active plain noattr value %d\n", n);
  n = -1;
  SHOW("cluster.active clustered noattr", cuOccupancyMaxActiveClusters(&n, clustered, &cfg));
  std::printf("cluster.active clustered noattr value %d\n", n);
  n = -1;
  SHOW("cluster.potential clustered", cuOccupancyMaxPotentialClusterSize(&n, clustered, &cfg));
  std::printf("cluster.potential clustered value %d\n", n);
  n = -1;
  SHOW("cluster.potential plain", cuOccupancyMaxPotentialClusterSize(&n, plain, &cfg));
  std::printf("cluster.potential plain value %d\n", n);
  SHOW("cluster.set required width", cuFuncSetAttribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
  SHOW("cluster.set required width same", cuFuncSetAttribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
  SHOW("cluster.set required width plain", cuFuncSetAttribute(plain, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
  int w = -1;
  cuFuncGetAttribute(&w, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, plain);
  std::printf("cluster.plain width after set %d\n", w);
  SHOW("cluster.launch clustered noattr", cuLaunchKernelEx(&cfg, clustered, nullptr, nullptr));
  SHOW("cluster.sync", cuCtxSynchronize());
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 4;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  SHOW("cluster.launch clustered conflicting dim", cuLaunchKernelEx(&cfg, clustered, nullptr, nullptr));
  SHOW("cluster.sync", cuCtxSynchronize());
  n = -1;
  SHOW("cluster.active clustered conflicting", cuOccupancyMaxActiveClusters(&n, clustered, &cfg));
  std::printf("cluster.active clustered conflicting value %d\n", n);
  cuModuleUnload(m);
}

static void libraryWithTooNewPtx() {
  const char* ptx = ".version 99.9\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  CUlibrary lib = nullptr;
  SHOW("toonew.libload", cuLibraryLoadData(&lib, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  if (!lib) return;
  unsigned count = 99;
  SHOW("toonew.kernelcount", cuLibraryGetKernelCount(&count, lib));
  std::printf("toonew.kernelcount value %u\n", count);
  CUkernel k = nullptr;
  SHOW("toonew.getkernel", cuLibraryGetKernel(&k, lib, "k"));
  if (k) {
    CUfunction f = nullptr;
    SHOW("toonew.kernelgetfunction", cuKernelGetFunction(&f, k));
    int v = -1;
    SHOW("toonew.kernelattribute", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0));
  }
  CUmodule m = nullptr;
  SHOW("toonew.getmodule", cuLibraryGetModule(&m, lib));
  SHOW("toonew.unload", cuLibraryUnload(lib));
  // eager loading through the library option
  CUlibraryOption o[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
  void* ov[] = {reinterpret_cast<void*>(1)};
  lib = nullptr;
  SHOW("toonew.libload preserved", cuLibraryLoadData(&lib, ptx, nullptr, nullptr, 0, o, ov, 1));
  if (lib) cuLibraryUnload(lib);
}

static void cooperativeMultiDevice(CUdevice dev) {
  CUmodule m;
  cuModuleLoadData(&m, kClusterPtx);
  CUfunction plain;
  cuModuleGetFunction(&plain, m, "plain");
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  CUDA_LAUNCH_PARAMS lp{};
  lp.function = plain;
  lp.gridDimX = lp.gridDimY = lp.gridDimZ = 1;
  lp.blockDimX = lp.blockDimY = lp.blockDimZ = 1;
  lp.hStream = s;
  lp.kernelParams = params;
  SHOW("coopmulti.one device", cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
  SHOW("coopmulti.sync", cuCtxSynchronize());
  SHOW("coopmulti.zero devices", cuLaunchCooperativeKernelMultiDevice(&lp, 0, 0));
  SHOW("coopmulti.null list", cuLaunchCooperativeKernelMultiDevice(nullptr, 1, 0));
  SHOW("coopmulti.bad flags", cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0x100));
  lp.hStream = nullptr;
  SHOW("coopmulti.null stream", cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
  int attr = -1;
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, dev);
  std::printf("coopmulti.attribute %d\n", attr);
  cuStreamDestroy(s);
  cuModuleUnload(m);
}

static void sparseAndDmaBuf(CUdevice dev) {
  int sparse = -1, dmabuf = -1;
  cuDeviceGetAttribute(&sparse, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, dev);
  cuDeviceGetAttribute(&dmabuf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
  std::printf("sparse.attribute %d dmabuf.attribute %d\n", sparse, dmabuf);
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 1024;
  d.Height = 1024;
  d.Depth = 0;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_SPARSE;
  CUarray a = nullptr;
  SHOW("sparse.create", cuArray3DCreate(&a, &d));
  if (a) {
    CUDA_ARRAY_SPARSE_PROPERTIES sp{};
    SHOW("sparse.properties", cuArrayGetSparseProperties(&sp, a));
    std::printf("sparse.tile %u %u %u miptailFirstLevel %u miptailSize %llu flags %u\n", sp.tileExtent.width,
                sp.tileExtent.height, sp.tileExtent.depth, sp.miptailFirstLevel,
                static_cast<unsigned long long>(sp.miptailSize), sp.flags);
    CUDA_ARRAY_MEMORY_REQUIREMENTS req{};
    SHOW("sparse.requirements", cuArrayGetMemoryRequirements(&req, a, dev));
    std::printf("sparse.requirements size %zu alignment %zu\n", req.size, req.alignment);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.allocFlags.usage = CU_MEM_CREATE_USAGE_TILE_POOL;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    std::printf("sparse.tilepool granularity %zu\n", gran);
    CUmemGenericAllocationHandle h = 0;
    SHOW("sparse.memcreate tilepool", cuMemCreate(&h, gran, &prop, 0));
    CUarrayMapInfo info{};
    info.resourceType = CU_RESOURCE_TYPE_ARRAY;
    info.resource.array = a;
    info.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
    info.subresource.sparseLevel.level = 0;
    info.subresource.sparseLevel.extentWidth = sp.tileExtent.width;
    info.subresource.sparseLevel.extentHeight = sp.tileExtent.height;
    info.subresource.sparseLevel.extentDepth = 1;
    info.memOperationType = CU_MEM_OPERATION_TYPE_MAP;
    info.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
    info.memHandle.memHandle = h;
    info.offset = 0;
    info.deviceBitMask = 1;
    SHOW("sparse.map", cuMemMapArrayAsync(&info, 1, nullptr));
    SHOW("sparse.sync", cuCtxSynchronize());
    // write one float into the mapped tile and read it back
    float in[4] = {1, 2, 3, 4}, out[4] = {};
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = in;
    c.srcPitch = 16;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 16;
    c.Height = 1;
    SHOW("sparse.copyin", cuMemcpy2D(&c));
    CUDA_MEMCPY2D b{};
    b.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    b.srcArray = a;
    b.dstMemoryType = CU_MEMORYTYPE_HOST;
    b.dstHost = out;
    b.dstPitch = 16;
    b.WidthInBytes = 16;
    b.Height = 1;
    SHOW("sparse.copyout", cuMemcpy2D(&b));
    std::printf("sparse.readback %g %g %g %g\n", out[0], out[1], out[2], out[3]);
    // an unmapped tile
    b.srcXInBytes = 4 * 1000;
    b.srcY = 1000;
    SHOW("sparse.copyout unmapped", cuMemcpy2D(&b));
    std::printf("sparse.readback unmapped %g\n", out[0]);
    info.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
    info.memHandle.memHandle = 0;
    SHOW("sparse.unmap", cuMemMapArrayAsync(&info, 1, nullptr));
    SHOW("sparse.sync2", cuCtxSynchronize());
    SHOW("sparse.map empty", cuMemMapArrayAsync(nullptr, 0, nullptr));
    SHOW("sparse.map empty nonnull", cuMemMapArrayAsync(&info, 0, nullptr));
    if (h) cuMemRelease(h);
    SHOW("sparse.destroy", cuArrayDestroy(a));
  }
  CUdeviceptr p;
  cuMemAlloc(&p, 2 << 20);
  int fd = -1;
  SHOW("dmabuf.get", cuMemGetHandleForAddressRange(&fd, p, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  std::printf("dmabuf.fd %d\n", fd);
  SHOW("dmabuf.unaligned", cuMemGetHandleForAddressRange(&fd, p + 256, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  SHOW("dmabuf.badtype", cuMemGetHandleForAddressRange(&fd, p, 2 << 20, static_cast<CUmemRangeHandleType>(7), 0));
  SHOW("dmabuf.badflags", cuMemGetHandleForAddressRange(&fd, p, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 9));
  cuMemFree(p);
}

// bar.sync reached on both sides of a divergent branch (even lanes on one side, odd on the other): does the barrier
// count threads or warps? Shared memory is filled with 0xdead first so an unwritten neighbour is recognisable.
static const char* kDivergentBarrierPtx =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".shared .align 4 .b32 sh[128];\n"
    ".visible .entry divergent_sides(.param .u64 out)\n{\n"
    "\t.reg .pred %p<2>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n"
    "\tmov.u32 %r4, %tid.x;\n\tmov.u32 %r5, sh;\n\tshl.b32 %r6, %r4, 2;\n\tadd.u32 %r5, %r5, %r6;\n"
    "\tst.shared.u32 [%r5], 0xdead;\n\tbar.sync 0;\n"
    "\tand.b32 %r7, %r4, 1;\n\tsetp.eq.u32 %p1, %r7, 1;\n\t@%p1 bra ODD;\n"
    "\tmul.lo.u32 %r8, %r4, 5;\n\tst.shared.u32 [%r5], %r8;\n\tbar.sync 0;\n\tld.shared.u32 %r9, [%r5+4];\n"
    "\tbra.uni JOIN;\nODD:\n\tmul.lo.u32 %r8, %r4, 3;\n\tst.shared.u32 [%r5], %r8;\n\tbar.sync 0;\n"
    "\tld.shared.u32 %r9, [%r5+-4];\nJOIN:\n"
    "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmul.wide.u32 %rd2, %r4, 4;\n"
    "\tadd.u64 %rd1, %rd1, %rd2;\n\tst.global.u32 [%rd1], %r9;\n\tret;\n}\n";

static void divergentBarrier() {
  CUmodule m;
  SHOW("divbar.load", cuModuleLoadData(&m, kDivergentBarrierPtx));
  CUfunction f;
  cuModuleGetFunction(&f, m, "divergent_sides");
  CUdeviceptr out;
  cuMemAlloc(&out, 512);
  void* params[] = {&out};
  SHOW("divbar.launch", cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  SHOW("divbar.sync", cuCtxSynchronize());
  unsigned host[128] = {};
  cuMemcpyDtoH(host, out, 512);
  std::printf("divbar.values");
  for (unsigned i = 0; i < 128; ++i) std::printf(" %x", host[i]);
  std::printf("\n");
  cuMemFree(out);
  cuModuleUnload(m);
}

using MemAllocPitchV1 = CUresult (*)(unsigned*, unsigned*, unsigned, unsigned, unsigned);
using MemsetD2D8V1 = CUresult (*)(unsigned, unsigned, unsigned char, unsigned, unsigned);
using MemsetD8V1 = CUresult (*)(unsigned, unsigned char, unsigned);
using MemcpyDtoHV1 = CUresult (*)(void*, unsigned, unsigned);

// In a context of the original cuCtxCreate: which _v2 and unversioned entry points answer, and the 2D forms.
static void legacyContextSurface(CUdevice dev) {
  auto create1 = symbol<CtxCreateV1>("cuCtxCreate");
  auto alloc1 = symbol<MemAllocV1>("cuMemAlloc");
  auto free1 = symbol<MemFreeV1>("cuMemFree");
  auto pitch1 = symbol<MemAllocPitchV1>("cuMemAllocPitch");
  auto set2d1 = symbol<MemsetD2D8V1>("cuMemsetD2D8");
  auto set1 = symbol<MemsetD8V1>("cuMemsetD8");
  auto dtoh1 = symbol<MemcpyDtoHV1>("cuMemcpyDtoH");
  CUcontext c = nullptr;
  SHOW("v1surface.create", create1(&c, 0, dev));
  unsigned p = 0, pitch = 0;
  SHOW("v1surface.pitchalloc", pitch1(&p, &pitch, 100, 8, 4));
  std::printf("v1surface.pitch %u ptr %u\n", pitch, p);
  SHOW("v1surface.set2d", set2d1(p, pitch, 0x5a, 100, 8));
  SHOW("v1surface.set2d narrow", set2d1(p, pitch, 0x5a, 16, 2));
  SHOW("v1surface.set2d pitch=width", set2d1(p, 100, 0x5a, 100, 8));
  SHOW("v1surface.set1d", set1(p, 0x5a, 64));
  unsigned char host[64] = {};
  SHOW("v1surface.dtoh", dtoh1(host, p, 64));
  std::printf("v1surface.byte %d\n", host[0]);
  unsigned q = 0;
  SHOW("v1surface.alloc", alloc1(&q, 4096));
  SHOW("v1surface.set2d plain alloc", set2d1(q, 256, 1, 64, 4));
  CUdeviceptr w = 0;
  SHOW("v1surface.alloc_v2", cuMemAlloc_v2(&w, 4096));
  SHOW("v1surface.memsetd8_v2", cuMemsetD8_v2(q, 0, 16));
  SHOW("v1surface.getinfo_v2", cuMemGetInfo_v2(nullptr, nullptr));
  SHOW("v1surface.ctxsync", cuCtxSynchronize());
  CUstream s = nullptr;
  SHOW("v1surface.streamcreate", cuStreamCreate(&s, 0));
  CUmodule m = nullptr;
  SHOW("v1surface.moduleload", cuModuleLoadData(&m, kClusterPtx));
  CUevent e = nullptr;
  SHOW("v1surface.eventcreate", cuEventCreate(&e, 0));
  CUDA_ARRAY_DESCRIPTOR d{64, 0, CU_AD_FORMAT_FLOAT, 1};
  CUarray a = nullptr;
  SHOW("v1surface.arraycreate_v2", cuArrayCreate_v2(&a, &d));
  void* h = nullptr;
  SHOW("v1surface.allochost_v2", cuMemAllocHost_v2(&h, 4096));
  if (h) cuMemFreeHost(h);
  SHOW("v1surface.pointerattribute", cuPointerGetAttribute(&w, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, q));
  SHOW("v1surface.free", free1(q));
  SHOW("v1surface.free pitch", free1(p));
  SHOW("v1surface.destroy", cuCtxDestroy(c));
}

// Profiler control with no profiler attached.
using ProfilerInitialize = CUresult (*)(const char*, const char*, int);
static void profilerControl() {
  SHOW("profiler.start", cuProfilerStart());
  SHOW("profiler.start again", cuProfilerStart());
  SHOW("profiler.stop", cuProfilerStop());
  SHOW("profiler.stop again", cuProfilerStop());
  auto init = symbol<ProfilerInitialize>("cuProfilerInitialize");
  if (init) SHOW("profiler.initialize", init("/tmp/cfg", "/tmp/out.csv", 1));
  cuCtxPushCurrent(nullptr);
  CUcontext none = nullptr;
  cuCtxPopCurrent(&none);
  SHOW("profiler.start without context", cuProfilerStart());
  SHOW("profiler.stop without context", cuProfilerStop());
  if (none) cuCtxPushCurrent(none);
}

int main() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  profilerControl();
  if (std::getenv("PROBE_ALL")) {
    legacyContextSurface(dev);
    legacyEntryPoints(dev);
    linkMissingSymbol("link1", 2);
    linkMissingSymbol("link2", 4);
    linkMissingSymbol("link3", 2);
    clusterOccupancy();
    libraryWithTooNewPtx();
    cooperativeMultiDevice(dev);
    sparseAndDmaBuf(dev);
    divergentBarrier();
  }
  cuCtxDestroy(ctx);
  return 0;
}
