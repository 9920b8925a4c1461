// Issue 17, what is left of "faults and answers where cuemu differs" (measured on an H100, driver 580):
//   hostvmm   cuMemCreate with a HOST, HOST_NUMA or HOST_NUMA_CURRENT location: granularity, creation,
//             properties, mapping, access (device and host), host and kernel use, pointer attributes
//   attrs     pointer attributes ALLOWED_HANDLE_TYPES and SYNC_MEMOPS (and the rest) of VMM allocations with and
//             without a POSIX handle type, against cuMemAlloc, pinned host, managed and pool memory;
//             cuPointerSetAttribute(SYNC_MEMOPS) on them; fabric cuMemCreate and its export
//   fault     the VMM and memory entry points after a kernel fault (700) in the process
// Run: PROBE=vmm17 tools/gpu-probe/run.sh OUTDIR. Each part runs in its own process (a fault poisons one).
#include <cuda.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define SHOW(name, expr)                                                             \
  ([&] {                                                                             \
    CUresult r_ = (expr);                                                            \
    const char* n_ = nullptr;                                                        \
    cuGetErrorName(r_, &n_);                                                         \
    std::printf("%s: %s (%d)\n", std::string(name).c_str(), n_ ? n_ : "?", int(r_)); \
    std::fflush(stdout);                                                             \
    return r_;                                                                       \
  }())

static const char* kPtx = R"PTX(
.version 7.0
.target sm_52
.address_size 64
.visible .entry store(.param .u64 p, .param .u32 v)
{
  .reg .u64 %a;
  .reg .u32 %x;
  ld.param.u64 %a, [p];
  ld.param.u32 %x, [v];
  st.global.u32 [%a], %x;
  ret;
}
)PTX";

static CUcontext g_ctx;
static CUdevice g_dev;
static CUfunction g_store;

static void setup() {
  cuInit(0);
  cuDeviceGet(&g_dev, 0);
  cuCtxCreate(&g_ctx, nullptr, 0, g_dev);
  CUmodule m;
  SHOW("module", cuModuleLoadData(&m, kPtx));
  cuModuleGetFunction(&g_store, m, "store");
}

static CUresult launchStore(CUdeviceptr p, unsigned v) {
  void* args[] = {&p, &v};
  return cuLaunchKernel(g_store, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
}

static bool hostReadable(CUdeviceptr p, unsigned* out) {
  iovec local{out, 4}, remote{reinterpret_cast<void*>(p), 4};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 4;
}

struct Attr {
  const char* name;
  CUpointer_attribute a;
};
static const Attr kAttrs[] = {{"context", CU_POINTER_ATTRIBUTE_CONTEXT},
                              {"memory_type", CU_POINTER_ATTRIBUTE_MEMORY_TYPE},
                              {"device_pointer", CU_POINTER_ATTRIBUTE_DEVICE_POINTER},
                              {"host_pointer", CU_POINTER_ATTRIBUTE_HOST_POINTER},
                              {"sync_memops", CU_POINTER_ATTRIBUTE_SYNC_MEMOPS},
                              {"buffer_id", CU_POINTER_ATTRIBUTE_BUFFER_ID},
                              {"is_managed", CU_POINTER_ATTRIBUTE_IS_MANAGED},
                              {"device_ordinal", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL},
                              {"ipc_capable", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE},
                              {"range_start", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR},
                              {"range_size", CU_POINTER_ATTRIBUTE_RANGE_SIZE},
                              {"mapped", CU_POINTER_ATTRIBUTE_MAPPED},
                              {"allowed_handles", CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES},
                              {"gpu_direct_rdma", CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE},
                              {"access_flags", CU_POINTER_ATTRIBUTE_ACCESS_FLAGS},
                              {"mempool", CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE},
                              {"mapping_size", CU_POINTER_ATTRIBUTE_MAPPING_SIZE},
                              {"mapping_base", CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR},
                              {"memory_block_id", CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID}};

static void attributes(const std::string& tag, CUdeviceptr p) {
  for (const Attr& a : kAttrs) {
    unsigned long long v = 0xdead;
    CUresult r = cuPointerGetAttribute(&v, a.a, p);
    std::printf("%s.attr %s: %d value %#llx%s\n", tag.c_str(), a.name, int(r), v,
                a.a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR || a.a == CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR ||
                        a.a == CU_POINTER_ATTRIBUTE_DEVICE_POINTER || a.a == CU_POINTER_ATTRIBUTE_HOST_POINTER
                    ? (v == p   ? " (=p)"
                       : v == 0 ? ""
                                : " (other)")
                    : "");
  }
  CUdeviceptr base = 1;
  size_t size = 1;
  CUresult r = cuMemGetAddressRange(&base, &size, p + 16);
  std::printf("%s.addressRange(p+16): %d base-p %lld size %zu\n", tag.c_str(), int(r), (long long)(base - p), size);
  std::fflush(stdout);
}

static CUmemAllocationProp vmmProp(CUmemLocationType type, int id, unsigned handles = CU_MEM_HANDLE_TYPE_NONE) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = type;
  p.location.id = id;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handles);
  return p;
}

static void hostVmm(const char* tag, CUmemLocationType type, int id) {
  std::string t = tag;
  CUmemAllocationProp prop = vmmProp(type, id);
  size_t gmin = 0, grec = 0;
  SHOW(t + ".granularity_min", cuMemGetAllocationGranularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  SHOW(t + ".granularity_rec", cuMemGetAllocationGranularity(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  std::printf("%s.granularity %zu %zu\n", tag, gmin, grec);
  size_t size = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  if (SHOW(t + ".create", cuMemCreate(&h, size, &prop, 0)) != CUDA_SUCCESS) return;
  CUmemGenericAllocationHandle h2 = 0;
  SHOW(t + ".create_1MiB", cuMemCreate(&h2, 1 << 20, &prop, 0));
  if (h2) cuMemRelease(h2);
  CUmemAllocationProp got{};
  SHOW(t + ".props", cuMemGetAllocationPropertiesFromHandle(&got, h));
  std::printf("%s.props type %d location %d/%d handles %d compression %d\n", tag, int(got.type), int(got.location.type),
              got.location.id, int(got.requestedHandleTypes), int(got.allocFlags.compressionType));
  CUdeviceptr va = 0;
  SHOW(t + ".reserve", cuMemAddressReserve(&va, size, 0, 0, 0));
  if (SHOW(t + ".map", cuMemMap(va, size, 0, h, 0)) != CUDA_SUCCESS) return;
  CUmemLocation devLoc{CU_MEM_LOCATION_TYPE_DEVICE, 0}, hostLoc{CU_MEM_LOCATION_TYPE_HOST, 0},
      numaLoc{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
  unsigned long long flags = 99;
  SHOW(t + ".getaccess_dev_before", cuMemGetAccess(&flags, &devLoc, va));
  std::printf("%s.getaccess_dev_before flags %llu\n", tag, flags);
  flags = 99;
  SHOW(t + ".getaccess_host_before", cuMemGetAccess(&flags, &hostLoc, va));
  std::printf("%s.getaccess_host_before flags %llu\n", tag, flags);
  unsigned v = 0;
  std::printf("%s.host_readable_before_access %d\n", tag, int(hostReadable(va, &v)));
  CUmemAccessDesc hostDesc{hostLoc, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  SHOW(t + ".setaccess_host", cuMemSetAccess(va, size, &hostDesc, 1));
  CUmemAccessDesc numaDesc{numaLoc, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  SHOW(t + ".setaccess_numa", cuMemSetAccess(va, size, &numaDesc, 1));
  flags = 99;
  SHOW(t + ".getaccess_host_after", cuMemGetAccess(&flags, &hostLoc, va));
  std::printf("%s.getaccess_host_after flags %llu\n", tag, flags);
  std::printf("%s.host_readable_after_host_access %d\n", tag, int(hostReadable(va, &v)));
  CUmemAccessDesc devDesc{devLoc, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  SHOW(t + ".setaccess_dev", cuMemSetAccess(va, size, &devDesc, 1));
  flags = 99;
  SHOW(t + ".getaccess_dev_after", cuMemGetAccess(&flags, &devLoc, va));
  std::printf("%s.getaccess_dev_after flags %llu\n", tag, flags);
  bool readable = hostReadable(va, &v);
  std::printf("%s.host_readable_after_dev_access %d\n", tag, int(readable));
  if (readable) {
    *reinterpret_cast<volatile unsigned*>(va) = 0x1234;
    std::printf("%s.host_write ok\n", tag);
  }
  SHOW(t + ".memsetD32", cuMemsetD32(va + 4, 0x55, 4));
  unsigned back[2] = {0, 0};
  SHOW(t + ".DtoH", cuMemcpyDtoH(back, va, 8));
  std::printf("%s.DtoH values %#x %#x\n", tag, back[0], back[1]);
  SHOW(t + ".memcpy", cuMemcpy(reinterpret_cast<CUdeviceptr>(back), va, 8));
  attributes(t, va);
  SHOW(t + ".kernel", launchStore(va + 8, 0xabcd));
  SHOW(t + ".kernel.sync", cuCtxSynchronize());
  unsigned k = 0;
  SHOW(t + ".kernel.DtoH", cuMemcpyDtoH(&k, va + 8, 4));
  std::printf("%s.kernel wrote %#x; host reads %#x\n", tag, k,
              readable ? reinterpret_cast<volatile unsigned*>(va)[2] : 0u);
  SHOW(t + ".unmap", cuMemUnmap(va, size));
  SHOW(t + ".release", cuMemRelease(h));
  SHOW(t + ".addressfree", cuMemAddressFree(va, size));
}

// A device VMM allocation whose access the host never gets: kernel use without cuMemSetAccess.
static void deviceVmmNoAccessKernel() {
  CUmemAllocationProp prop = vmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  size_t size = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  cuMemCreate(&h, size, &prop, 0);
  CUdeviceptr va = 0;
  cuMemAddressReserve(&va, size, 0, 0, 0);
  cuMemMap(va, size, 0, h, 0);
  SHOW("noaccess.kernel", launchStore(va, 1));
  SHOW("noaccess.kernel.sync", cuCtxSynchronize());
}

static void vmmAttributes(const char* tag, unsigned handles) {
  std::string t = tag;
  CUmemAllocationProp prop = vmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0, handles);
  size_t size = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  if (SHOW(t + ".create", cuMemCreate(&h, size, &prop, 0)) != CUDA_SUCCESS) return;
  CUdeviceptr va = 0;
  SHOW(t + ".reserve", cuMemAddressReserve(&va, 2 * size, 0, 0, 0));
  SHOW(t + ".map", cuMemMap(va, size, 0, h, 0));
  attributes(t + ".noaccess", va);
  CUmemAccessDesc devDesc{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  SHOW(t + ".setaccess", cuMemSetAccess(va, size, &devDesc, 1));
  attributes(t, va);
  attributes(t + ".end", va + size - 4);
  unsigned one = 1;
  SHOW(t + ".set_sync_memops", cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va));
  unsigned long long s = 0xdead;
  SHOW(t + ".get_sync_memops", cuPointerGetAttribute(&s, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va));
  std::printf("%s.sync_memops after set %#llx\n", tag, s);
  CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned long long a = 0xdead, b = 0xdead, c = 0xdead, d = 0xdead;
  void* data[] = {&a, &b, &c, &d};
  SHOW(t + ".getattributes", cuPointerGetAttributes(4, list, data, va));
  std::printf("%s.getattributes values %#llx %#llx %#llx %#llx\n", tag, a, b, c, d);
  cuMemUnmap(va, size);
  cuMemRelease(h);
  cuMemAddressFree(va, 2 * size);
}

static void otherAttributes() {
  CUdeviceptr d = 0;
  SHOW("memalloc.alloc", cuMemAlloc(&d, 4096));
  attributes("memalloc", d);
  unsigned one = 1;
  SHOW("memalloc.set_sync_memops", cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  unsigned long long s = 0xdead;
  cuPointerGetAttribute(&s, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
  std::printf("memalloc.sync_memops after set %#llx\n", s);
  void* host = nullptr;
  SHOW("hostalloc.alloc", cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  attributes("hostalloc", reinterpret_cast<CUdeviceptr>(host));
  CUdeviceptr m = 0;
  SHOW("managed.alloc", cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  attributes("managed", m);
  CUdeviceptr q = 0;
  SHOW("defaultpool.alloc", cuMemAllocAsync(&q, 4096, nullptr));
  cuStreamSynchronize(nullptr);
  attributes("defaultpool", q);
  CUmemPoolProps pp{};
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  pp.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool pool;
  SHOW("fdpool.create", cuMemPoolCreate(&pool, &pp));
  CUdeviceptr r = 0;
  SHOW("fdpool.alloc", cuMemAllocFromPoolAsync(&r, 4096, pool, nullptr));
  cuStreamSynchronize(nullptr);
  attributes("fdpool", r);
  // Fabric: creation and export without an IMEX channel.
  CUmemAllocationProp fprop = vmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemGenericAllocationHandle fh = 0;
  if (SHOW("fabric.create", cuMemCreate(&fh, 2 << 20, &fprop, 0)) == CUDA_SUCCESS) {
    CUmemFabricHandle fabric{};
    SHOW("fabric.export", cuMemExportToShareableHandle(&fabric, fh, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    CUmemAllocationProp got{};
    cuMemGetAllocationPropertiesFromHandle(&got, fh);
    std::printf("fabric.props handles %d\n", int(got.requestedHandleTypes));
    SHOW("fabric.release", cuMemRelease(fh));
  }
  CUmemAllocationProp fprop2 =
      vmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (SHOW("fabric_posix.create", cuMemCreate(&fh, 2 << 20, &fprop2, 0)) == CUDA_SUCCESS) {
    int fd = -1;
    SHOW("fabric_posix.export_fd", cuMemExportToShareableHandle(&fd, fh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CUmemFabricHandle fabric{};
    SHOW("fabric_posix.export_fabric", cuMemExportToShareableHandle(&fabric, fh, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    SHOW("fabric_posix.release", cuMemRelease(fh));
  }
}

static void afterFault() {
  CUdeviceptr a = 0;
  SHOW("fault.before_alloc", cuMemAlloc(&a, 4096));
  CUmemAllocationProp prop = vmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  size_t size = 2 << 20;
  CUmemGenericAllocationHandle h = 0;
  SHOW("fault.before_create", cuMemCreate(&h, size, &prop, 0));
  CUdeviceptr va = 0;
  SHOW("fault.before_reserve", cuMemAddressReserve(&va, 4 * size, 0, 0, 0));
  SHOW("fault.before_map", cuMemMap(va, size, 0, h, 0));
  CUmemAccessDesc devDesc{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  SHOW("fault.before_setaccess", cuMemSetAccess(va, size, &devDesc, 1));
  SHOW("fault.kernel", launchStore(8, 1));
  SHOW("fault.sync", cuCtxSynchronize());
  SHOW("fault.sync_again", cuCtxSynchronize());
  size_t g = 0;
  SHOW("fault.granularity", cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle h2 = 0;
  SHOW("fault.create", cuMemCreate(&h2, size, &prop, 0));
  SHOW("fault.map_new_handle", cuMemMap(va + size, size, 0, h2, 0));
  SHOW("fault.map_old_handle", cuMemMap(va + 2 * size, size, 0, h, 0));
  SHOW("fault.setaccess", cuMemSetAccess(va + size, size, &devDesc, 1));
  SHOW("fault.setaccess_old_mapping", cuMemSetAccess(va, size, &devDesc, 1));
  unsigned long long flags = 99;
  CUmemLocation devLoc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SHOW("fault.getaccess", cuMemGetAccess(&flags, &devLoc, va));
  std::printf("fault.getaccess flags %llu\n", flags);
  CUmemGenericAllocationHandle r = 0;
  SHOW("fault.retain", cuMemRetainAllocationHandle(&r, reinterpret_cast<void*>(va)));
  CUmemAllocationProp got{};
  SHOW("fault.props", cuMemGetAllocationPropertiesFromHandle(&got, h));
  CUdeviceptr va2 = 0;
  SHOW("fault.reserve", cuMemAddressReserve(&va2, size, 0, 0, 0));
  SHOW("fault.unmap_old", cuMemUnmap(va, size));
  SHOW("fault.unmap_new", cuMemUnmap(va + size, size));
  SHOW("fault.unmap_second_old", cuMemUnmap(va + 2 * size, size));
  SHOW("fault.release", cuMemRelease(h));
  SHOW("fault.release_again", cuMemRelease(h));
  SHOW("fault.release_new", cuMemRelease(h2));
  SHOW("fault.addressfree", cuMemAddressFree(va, 4 * size));
  SHOW("fault.addressfree2", cuMemAddressFree(va2, size));
  CUdeviceptr b = 0;
  SHOW("fault.memalloc", cuMemAlloc(&b, 4096));
  SHOW("fault.memfree_before", cuMemFree(a));
  void* host = nullptr;
  SHOW("fault.hostalloc", cuMemAllocHost(&host, 4096));
  SHOW("fault.HtoD", cuMemcpyHtoD(a, &g, 4));
  unsigned long long mt = 0;
  SHOW("fault.pointer_attr", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a));
  CUstream s;
  SHOW("fault.streamcreate", cuStreamCreate(&s, 0));
  SHOW("fault.ctxdestroy", cuCtxDestroy(g_ctx));
  CUcontext c2;
  SHOW("fault.ctxcreate", cuCtxCreate(&c2, nullptr, 0, g_dev));
}

static void part(const char* name, void (*body)()) {
  std::printf("=== %s\n", name);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setup();
    body();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("=== %s status %d\n", name, status);
  std::fflush(stdout);
}

int main() {
  part("hostvmm.host", [] { hostVmm("host", CU_MEM_LOCATION_TYPE_HOST, 0); });
  part("hostvmm.numa", [] { hostVmm("numa", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0); });
  part("hostvmm.numa_current", [] { hostVmm("numacur", CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0); });
  part("hostvmm.host_id1", [] { hostVmm("hostid1", CU_MEM_LOCATION_TYPE_HOST, 1); });
  part("noaccess", deviceVmmNoAccessKernel);
  part("attrs.none", [] { vmmAttributes("vmmnone", CU_MEM_HANDLE_TYPE_NONE); });
  part("attrs.posix", [] { vmmAttributes("vmmposix", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR); });
  part("attrs.other", otherAttributes);
  part("fault", afterFault);
  return 0;
}
