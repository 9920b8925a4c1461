// Issue 17: generic compression (the cudaCompressibleMemory sample) as the driver reports it. For each requested
// compressionType: the device attribute, granularities, cuMemCreate, what cuMemGetAllocationPropertiesFromHandle
// and cuMemRetainAllocationHandle give back, every pointer attribute of a mapping, copies and a kernel on it,
// exporting it as a file descriptor, compression on host memory and with gpuDirectRDMACapable.
// Run: PROBE=compress17 tools/gpu-probe/run.sh OUTDIR
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#define SHOW(name, expr)                                                             \
  do {                                                                               \
    CUresult r_ = (expr);                                                            \
    const char* n_ = nullptr;                                                        \
    cuGetErrorName(r_, &n_);                                                         \
    std::printf("%s: %s (%d)\n", std::string(name).c_str(), n_ ? n_ : "?", int(r_)); \
    std::fflush(stdout);                                                             \
  } while (0)

static const char* kPtx = R"PTX(
.version 8.0
.target sm_90
.address_size 64
.visible .entry twice(.param .u64 buf, .param .u32 n)
{
  .reg .u64 %p, %a;
  .reg .u32 %i, %n, %v;
  .reg .pred %out;
  ld.param.u64 %p, [buf];
  ld.param.u32 %n, [n];
  mov.u32 %i, %tid.x;
  setp.ge.u32 %out, %i, %n;
  @%out ret;
  mul.wide.u32 %a, %i, 4;
  add.u64 %a, %p, %a;
  ld.global.u32 %v, [%a];
  add.u32 %v, %v, %v;
  st.global.u32 [%a], %v;
  ret;
}
)PTX";

static void showProp(const char* what, const CUmemAllocationProp& p) {
  std::printf("%s: type %d location %d/%d handles 0x%x compressionType %d gpuDirectRDMACapable %d usage 0x%x\n", what,
              int(p.type), int(p.location.type), p.location.id, unsigned(p.requestedHandleTypes),
              int(p.allocFlags.compressionType), int(p.allocFlags.gpuDirectRDMACapable), unsigned(p.allocFlags.usage));
}

static CUmemAllocationProp deviceProp(int compression) {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  p.allocFlags.compressionType = (unsigned char)compression;
  return p;
}

static void oneType(CUfunction twice, int compression) {
  std::string tag = "comp" + std::to_string(compression);
  CUmemAllocationProp prop = deviceProp(compression);
  size_t gmin = 0, grec = 0;
  SHOW(tag + ".granularity.min", cuMemGetAllocationGranularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  SHOW(tag + ".granularity.rec", cuMemGetAllocationGranularity(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  std::printf("%s.granularity min %zu recommended %zu\n", tag.c_str(), gmin, grec);
  size_t size = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  SHOW(tag + ".create", cuMemCreate(&h, size, &prop, 0));
  if (!h) return;
  CUmemAllocationProp back;
  std::memset(&back, 0x5a, sizeof back);
  SHOW(tag + ".props", cuMemGetAllocationPropertiesFromHandle(&back, h));
  showProp((tag + ".props").c_str(), back);
  CUdeviceptr va = 0;
  SHOW(tag + ".reserve", cuMemAddressReserve(&va, size, 0, 0, 0));
  SHOW(tag + ".map", cuMemMap(va, size, 0, h, 0));
  CUmemAccessDesc access;
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SHOW(tag + ".access", cuMemSetAccess(va, size, &access, 1));
  CUmemGenericAllocationHandle retained = 0;
  SHOW(tag + ".retain", cuMemRetainAllocationHandle(&retained, (void*)(va + 4096)));
  if (retained) {
    std::memset(&back, 0x5a, sizeof back);
    SHOW(tag + ".retained.props", cuMemGetAllocationPropertiesFromHandle(&back, retained));
    showProp((tag + ".retained.props").c_str(), back);
    cuMemRelease(retained);
  }
  for (int a = 1; a <= 21; ++a) {
    unsigned long long v = 0xdead;
    CUresult r = cuPointerGetAttribute(&v, CUpointer_attribute(a), va + 16);
    std::printf("%s.attr %d: %d value 0x%llx\n", tag.c_str(), a, int(r), v);
  }
  int fd = -1;
  SHOW(tag + ".export_fd", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (fd >= 0) close(fd);
  unsigned host[256];
  for (unsigned i = 0; i < 256; ++i) host[i] = i * 3 + 1;
  SHOW(tag + ".htod", cuMemcpyHtoD(va, host, sizeof host));
  unsigned n = 256;
  void* args[] = {&va, &n};
  SHOW(tag + ".launch", cuLaunchKernel(twice, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  SHOW(tag + ".sync", cuCtxSynchronize());
  unsigned out[256] = {};
  SHOW(tag + ".dtoh", cuMemcpyDtoH(out, va, sizeof out));
  int bad = 0;
  for (unsigned i = 0; i < 256; ++i) bad += out[i] != 2 * host[i];
  std::printf("%s.kernel wrong values %d\n", tag.c_str(), bad);
  SHOW(tag + ".memsetD32", cuMemsetD32(va, 7, 256));
  SHOW(tag + ".dtoh2", cuMemcpyDtoH(out, va, sizeof out));
  std::printf("%s.memset value %u %u\n", tag.c_str(), out[0], out[255]);
  SHOW(tag + ".unmap", cuMemUnmap(va, size));
  SHOW(tag + ".free_va", cuMemAddressFree(va, size));
  SHOW(tag + ".release", cuMemRelease(h));
  // A size that is not a multiple of the compressible granularity but of the plain one.
  h = 0;
  SHOW(tag + ".create_64k", cuMemCreate(&h, 64 << 10, &prop, 0));
  if (h) cuMemRelease(h);
  h = 0;
  SHOW(tag + ".create_4m", cuMemCreate(&h, 4 << 20, &prop, 0));
  if (h) {
    std::memset(&back, 0x5a, sizeof back);
    cuMemGetAllocationPropertiesFromHandle(&back, h);
    showProp((tag + ".create_4m.props").c_str(), back);
    cuMemRelease(h);
  }
  // With a file-descriptor handle type requested and with gpuDirectRDMACapable.
  CUmemAllocationProp fdProp = prop;
  fdProp.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  h = 0;
  SHOW(tag + ".create_fd", cuMemCreate(&h, size, &fdProp, 0));
  if (h) {
    std::memset(&back, 0x5a, sizeof back);
    cuMemGetAllocationPropertiesFromHandle(&back, h);
    showProp((tag + ".create_fd.props").c_str(), back);
    fd = -1;
    SHOW(tag + ".create_fd.export", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (fd >= 0) {
      CUmemGenericAllocationHandle imported = 0;
      SHOW(tag + ".create_fd.import",
           cuMemImportFromShareableHandle(&imported, (void*)(long)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      if (imported) {
        std::memset(&back, 0x5a, sizeof back);
        cuMemGetAllocationPropertiesFromHandle(&back, imported);
        showProp((tag + ".create_fd.import.props").c_str(), back);
        cuMemRelease(imported);
      }
      close(fd);
    }
    cuMemRelease(h);
  }
  CUmemAllocationProp rdma = prop;
  rdma.allocFlags.gpuDirectRDMACapable = 1;
  h = 0;
  SHOW(tag + ".create_rdma", cuMemCreate(&h, size, &rdma, 0));
  if (h) {
    std::memset(&back, 0x5a, sizeof back);
    cuMemGetAllocationPropertiesFromHandle(&back, h);
    showProp((tag + ".create_rdma.props").c_str(), back);
    cuMemRelease(h);
  }
  for (int loc : {int(CU_MEM_LOCATION_TYPE_HOST), int(CU_MEM_LOCATION_TYPE_HOST_NUMA)}) {
    CUmemAllocationProp hp = prop;
    hp.location.type = CUmemLocationType(loc);
    hp.location.id = 0;
    size_t g = 0;
    SHOW(tag + ".host" + std::to_string(loc) + ".granularity",
         cuMemGetAllocationGranularity(&g, &hp, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    std::printf("%s.host%d.granularity %zu\n", tag.c_str(), loc, g);
    h = 0;
    SHOW(tag + ".host" + std::to_string(loc) + ".create", cuMemCreate(&h, size, &hp, 0));
    if (h) {
      std::memset(&back, 0x5a, sizeof back);
      cuMemGetAllocationPropertiesFromHandle(&back, h);
      showProp((tag + ".host" + std::to_string(loc) + ".props").c_str(), back);
      cuMemRelease(h);
    }
  }
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CUdevice dev;
  CUcontext ctx = nullptr;
  SHOW("init", cuInit(0));
  cuDeviceGet(&dev, 0);
  char name[256] = {};
  cuDeviceGetName(name, sizeof name, dev);
  int driver = 0;
  cuDriverGetVersion(&driver);
  std::printf("device %s driver %d\n", name, driver);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  for (int a : {int(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED),
                int(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED),
                int(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED),
                int(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)}) {
    int v = -1;
    CUresult r = cuDeviceGetAttribute(&v, CUdevice_attribute(a), dev);
    std::printf("attribute %d: %d value %d\n", a, int(r), v);
  }
  CUmodule mod = nullptr;
  SHOW("module", cuModuleLoadData(&mod, kPtx));
  CUfunction twice = nullptr;
  cuModuleGetFunction(&twice, mod, "twice");
  for (int c : {0, 1, 2, 0x7f, 0xff}) {
    std::printf("=== compressionType %d\n", c);
    oneType(twice, c);
  }
  // cuMemAlloc'd and pool memory, for comparison.
  CUdeviceptr plain = 0;
  SHOW("memalloc", cuMemAlloc(&plain, 1 << 20));
  for (int a : {15, 21}) {
    unsigned long long v = 0xdead;
    CUresult r = cuPointerGetAttribute(&v, CUpointer_attribute(a), plain);
    std::printf("memalloc.attr %d: %d value 0x%llx\n", a, int(r), v);
  }
  std::printf("probe done\n");
  return 0;
}
