// Third round of experiments for issue 17 (and issue 24's "memory unmapped while a kernel runs"):
//   pools     pointers of pinned host pools in memset, copies and pointer queries; maximum pool sizes
//   fabric    the fabric handle type (CU_MEM_HANDLE_TYPE_FABRIC) for pools and cuMemCreate
//   cond      a conditional handle created for one graph used in another
//   unmap     freeing or unmapping memory a kernel on another stream still uses
//   ckpt      process checkpointing of a second process (cuCheckpointProcess*)
// Run: PROBE=clients17c tools/gpu-probe/run.sh OUTDIR. Each part runs in its own process (a fault poisons one).
#include <cuda.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>

#define SHOW(name, expr)                                                             \
  do {                                                                               \
    CUresult r_ = (expr);                                                            \
    const char* n_ = nullptr;                                                        \
    cuGetErrorName(r_, &n_);                                                         \
    std::printf("%s: %s (%d)\n", std::string(name).c_str(), n_ ? n_ : "?", int(r_)); \
    std::fflush(stdout);                                                             \
  } while (0)

static double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// touch(buf, ns): thread 0 increments buf[0..3] in a loop for ns nanoseconds of %globaltimer, then sets buf[4] = 1.
static const char* kPtx = R"PTX(
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 buf, .param .u64 ns)
{
  .reg .u64 %p, %end, %t, %q;
  .reg .u32 %v;
  .reg .pred %more;
  ld.param.u64 %p, [buf];
  ld.param.u64 %end, [ns];
  mov.u64 %t, %globaltimer;
  add.u64 %end, %end, %t;
LOOP:
  ld.volatile.global.u32 %v, [%p];
  add.u32 %v, %v, 1;
  st.volatile.global.u32 [%p], %v;
  mov.u64 %t, %globaltimer;
  setp.lt.u64 %more, %t, %end;
  @%more bra LOOP;
  mov.u32 %v, 1;
  st.volatile.global.u32 [%p+16], %v;
  ret;
}
)PTX";

static CUcontext setup() {
  CUdevice dev;
  CUcontext ctx = nullptr;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  return ctx;
}

static CUfunction touchKernel() {
  CUmodule mod = nullptr;
  SHOW("module", cuModuleLoadData(&mod, kPtx));
  CUfunction f = nullptr;
  cuModuleGetFunction(&f, mod, "touch");
  return f;
}

static CUresult launchTouch(CUfunction f, CUdeviceptr buf, unsigned long long ns, CUstream s) {
  void* args[] = {&buf, &ns};
  return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

// ---------------------------------------------------------------------------------------------------------------
static CUmemPoolProps poolProps(CUmemLocationType type, int id, unsigned handles) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CUmemAllocationHandleType(handles);
  p.location.type = type;
  p.location.id = id;
  return p;
}

static void hostPoolPointer(const char* tag, CUmemLocationType type) {
  CUmemPoolProps props = poolProps(type, 0, 0);
  CUmemoryPool pool = nullptr;
  SHOW(std::string(tag) + ".create", cuMemPoolCreate(&pool, &props));
  CUdeviceptr p = 0, d = 0;
  SHOW(std::string(tag) + ".alloc", cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  cuStreamSynchronize(nullptr);
  cuMemAlloc(&d, 4096);
  static unsigned char host[8192];
  std::string t = tag;
  std::printf("%s.ptr %% 4096 = %llu\n", tag, (unsigned long long)(p % 4096));
  SHOW(t + ".memsetD8", cuMemsetD8(p, 1, 4096));
  SHOW(t + ".memsetD16", cuMemsetD16(p, 1, 2048));
  SHOW(t + ".memsetD32", cuMemsetD32(p, 1, 1024));
  SHOW(t + ".memsetD8Async", cuMemsetD8Async(p, 1, 4096, nullptr));
  SHOW(t + ".memsetD2D8", cuMemsetD2D8(p, 64, 1, 64, 4));
  SHOW(t + ".sync", cuStreamSynchronize(nullptr));
  SHOW(t + ".DtoH", cuMemcpyDtoH(host, p, 4096));
  SHOW(t + ".DtoHAsync", cuMemcpyDtoHAsync(host, p, 4096, nullptr));
  SHOW(t + ".HtoD", cuMemcpyHtoD(p, host, 4096));
  SHOW(t + ".HtoDAsync", cuMemcpyHtoDAsync(p, host, 4096, nullptr));
  SHOW(t + ".DtoD.src", cuMemcpyDtoD(d, p, 4096));
  SHOW(t + ".DtoD.dst", cuMemcpyDtoD(p, d, 4096));
  SHOW(t + ".memcpy.src", cuMemcpy(d, p, 4096));
  SHOW(t + ".memcpy.dst", cuMemcpy(p, d, 4096));
  SHOW(t + ".memcpyAsync", cuMemcpyAsync(d, p, 4096, nullptr));
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = p;
  c.srcPitch = 64;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = host;
  c.dstPitch = 64;
  c.WidthInBytes = 64;
  c.Height = 4;
  SHOW(t + ".2D.device_src", cuMemcpy2D(&c));
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = reinterpret_cast<void*>(p);
  SHOW(t + ".2D.host_src", cuMemcpy2D(&c));
  c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  c.srcDevice = p;
  SHOW(t + ".2D.unified_src", cuMemcpy2D(&c));
  SHOW(t + ".sync2", cuStreamSynchronize(nullptr));
  CUdeviceptr base = 0;
  size_t size = 0;
  SHOW(t + ".addressRange", cuMemGetAddressRange(&base, &size, p + 16));
  std::printf("%s.range base-p %lld size %zu\n", tag, (long long)(base - p), size);
  struct A {
    const char* name;
    CUpointer_attribute a;
  };
  for (A a : {A{"context", CU_POINTER_ATTRIBUTE_CONTEXT},
              A{"memory_type", CU_POINTER_ATTRIBUTE_MEMORY_TYPE},
              A{"device_pointer", CU_POINTER_ATTRIBUTE_DEVICE_POINTER},
              A{"host_pointer", CU_POINTER_ATTRIBUTE_HOST_POINTER},
              A{"sync_memops", CU_POINTER_ATTRIBUTE_SYNC_MEMOPS},
              A{"buffer_id", CU_POINTER_ATTRIBUTE_BUFFER_ID},
              A{"is_managed", CU_POINTER_ATTRIBUTE_IS_MANAGED},
              A{"device_ordinal", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL},
              A{"ipc_capable", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE},
              A{"range_start", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR},
              A{"range_size", CU_POINTER_ATTRIBUTE_RANGE_SIZE},
              A{"mapped", CU_POINTER_ATTRIBUTE_MAPPED},
              A{"allowed_handles", CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES},
              A{"gpu_direct_rdma", CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE},
              A{"access_flags", CU_POINTER_ATTRIBUTE_ACCESS_FLAGS},
              A{"mempool", CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE},
              A{"mapping_size", CU_POINTER_ATTRIBUTE_MAPPING_SIZE},
              A{"mapping_base", CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR},
              A{"memory_block_id", CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID},
              A{"hw_decompress", CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE}}) {
    unsigned long long v[4] = {0xdeadull, 0, 0, 0};
    CUresult r = cuPointerGetAttribute(v, a.a, p + 16);
    const char* n = nullptr;
    cuGetErrorName(r, &n);
    std::printf("%s.attr %s: %s (%d) value 0x%llx (p+16 = 0x%llx)\n", tag, a.name, n, int(r), v[0],
                (unsigned long long)(p + 16));
  }
  CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
  unsigned long long vals[4] = {0xdead, 0xdead, 0xdead, 0xdead};
  void* ptrs[4] = {&vals[0], &vals[1], &vals[2], &vals[3]};
  SHOW(t + ".attributes", cuPointerGetAttributes(4, list, ptrs, p + 16));
  std::printf("%s.attributes values 0x%llx 0x%llx 0x%llx 0x%llx\n", tag, vals[0], vals[1], vals[2], vals[3]);
  // A kernel's access faults on an H100 (and poisons the process): only on request (CLIENTS17C_POOL_KERNEL=1).
  if (!std::getenv("CLIENTS17C_POOL_KERNEL")) return;
  CUfunction f = touchKernel();
  SHOW(t + ".kernel", launchTouch(f, p, 1000, nullptr));
  SHOW(t + ".kernel.sync", cuStreamSynchronize(nullptr));
  std::printf("%s.kernel wrote %u\n", tag, reinterpret_cast<volatile unsigned*>(p)[4]);
  SHOW(t + ".free", cuMemFreeAsync(p, nullptr));
  SHOW(t + ".final", cuStreamSynchronize(nullptr));
}

static void hostPoolAccess(const char* tag, CUmemLocationType type) {
  std::string t = tag;
  CUmemPoolProps props = poolProps(type, 0, 0);
  CUmemoryPool pool = nullptr;
  SHOW(t + ".create", cuMemPoolCreate(&pool, &props));
  CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags flags = CUmemAccess_flags(7);
  SHOW(t + ".getaccess", cuMemPoolGetAccess(&flags, pool, &device));
  std::printf("%s.getaccess value %d\n", tag, int(flags));
  CUmemAccessDesc grant{};
  grant.location = device;
  grant.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SHOW(t + ".setaccess_rw", cuMemPoolSetAccess(pool, &grant, 1));
  SHOW(t + ".getaccess2", cuMemPoolGetAccess(&flags, pool, &device));
  std::printf("%s.getaccess2 value %d\n", tag, int(flags));
  CUdeviceptr p = 0;
  SHOW(t + ".alloc", cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  cuStreamSynchronize(nullptr);
  unsigned char host[16] = {};
  SHOW(t + ".memsetD8", cuMemsetD8(p, 9, 4096));
  SHOW(t + ".DtoH", cuMemcpyDtoH(host, p, 16));
  std::printf("%s.DtoH value %d\n", tag, host[15]);
  CUdeviceptr base = 0;
  size_t size = 0;
  SHOW(t + ".addressRange", cuMemGetAddressRange(&base, &size, p + 16));
  std::printf("%s.range base-p %lld size %zu\n", tag, (long long)(base - p), size);
  CUdeviceptr dp = 0;
  SHOW(t + ".attr_device_pointer", cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 16));
  grant.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  SHOW(t + ".setaccess_none", cuMemPoolSetAccess(pool, &grant, 1));
  SHOW(t + ".memsetD8_after_none", cuMemsetD8(p, 9, 4096));
  SHOW(t + ".free", cuMemFreeAsync(p, nullptr));
  SHOW(t + ".sync", cuStreamSynchronize(nullptr));
  SHOW(t + ".destroy", cuMemPoolDestroy(pool));
  // A pool made with access for the device in its properties? (no such field: access is set afterwards)
}

static void partPools() {
  setup();
  hostPoolPointer("hostpool", CU_MEM_LOCATION_TYPE_HOST);
  hostPoolPointer("numapool", CU_MEM_LOCATION_TYPE_HOST_NUMA);
  hostPoolAccess("hostaccess", CU_MEM_LOCATION_TYPE_HOST);
  hostPoolAccess("numaaccess", CU_MEM_LOCATION_TYPE_HOST_NUMA);
  {
    CUmemoryPool def = nullptr;
    CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST, 0};
    SHOW("defaulthost.get", cuMemGetDefaultMemPool(&def, &host, CU_MEM_ALLOCATION_TYPE_PINNED));
    CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemAccess_flags flags = CUmemAccess_flags(7);
    if (def) SHOW("defaulthost.getaccess", cuMemPoolGetAccess(&flags, def, &device));
    std::printf("defaulthost.getaccess value %d\n", int(flags));
    CUdeviceptr p = 0;
    if (def) SHOW("defaulthost.alloc", cuMemAllocFromPoolAsync(&p, 4096, def, nullptr));
    cuStreamSynchronize(nullptr);
    if (p) SHOW("defaulthost.memsetD8", cuMemsetD8(p, 9, 4096));
    if (p) SHOW("defaulthost.free", cuMemFreeAsync(p, nullptr));
    cuStreamSynchronize(nullptr);
  }
  // Maximum sizes of 2 MiB and more.
  const size_t MiB = size_t(1) << 20;
  for (size_t maxSize : {2 * MiB, 2 * MiB + 1, 3 * MiB, 4 * MiB, 5 * MiB, 32 * MiB}) {
    for (int loc = 0; loc < 2; ++loc) {
      CUmemPoolProps props = poolProps(loc ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
      props.maxSize = maxSize;
      const char* ln = loc ? "host" : "device";
      CUmemoryPool pool = nullptr;
      CUresult r = cuMemPoolCreate(&pool, &props);
      std::printf("maxsize %zu %s create %d\n", maxSize, ln, int(r));
      if (r) continue;
      // Sequence 1: 1 MiB blocks until one fails (at most 40).
      CUdeviceptr ps[64] = {};
      int n = 0;
      CUresult last = CUDA_SUCCESS;
      for (; n < 40; ++n) {
        last = cuMemAllocFromPoolAsync(&ps[n], MiB, pool, nullptr);
        if (last) break;
      }
      std::printf("maxsize %zu %s 1MiB blocks served %d then %d\n", maxSize, ln, n, int(last));
      cuStreamSynchronize(nullptr);
      for (int i = 0; i < n; ++i) cuMemFreeAsync(ps[i], nullptr);
      cuStreamSynchronize(nullptr);
      // Sequence 2: single allocations of the maximum, the maximum + 1, twice the maximum.
      for (size_t bytes : {maxSize, maxSize + 1, 2 * MiB + 4096, 3 * MiB, 4 * MiB, 2 * maxSize}) {
        CUdeviceptr q = 0;
        r = cuMemAllocFromPoolAsync(&q, bytes, pool, nullptr);
        std::printf("maxsize %zu %s one of %zu: %d\n", maxSize, ln, bytes, int(r));
        if (!r) cuMemFreeAsync(q, nullptr);
        cuStreamSynchronize(nullptr);
      }
      // Sequence 3: 64 bytes, then blocks of 700 KiB until one fails.
      CUdeviceptr small = 0;
      cuMemAllocFromPoolAsync(&small, 64, pool, nullptr);
      n = 0;
      for (; n < 40; ++n) {
        last = cuMemAllocFromPoolAsync(&ps[n], 700 * 1024, pool, nullptr);
        if (last) break;
      }
      cuuint64_t reserved = 0, used = 0;
      cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
      cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
      std::printf("maxsize %zu %s 64B then 700KiB blocks served %d then %d (reserved %llu used %llu)\n", maxSize, ln, n,
                  int(last), (unsigned long long)reserved, (unsigned long long)used);
      cuStreamSynchronize(nullptr);
      for (int i = 0; i < n; ++i) cuMemFreeAsync(ps[i], nullptr);
      cuMemFreeAsync(small, nullptr);
      cuStreamSynchronize(nullptr);
      SHOW(std::string("maxsize destroy ") + ln, cuMemPoolDestroy(pool));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
static void partFabric() {
  CUcontext ctx = setup();
  (void)ctx;
  int v = -1;
  SHOW("fabric.attr", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
  std::printf("fabric.attr value %d\n", v);
  SHOW("fabric.attr_posix",
       cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  std::printf("fabric.attr_posix value %d\n", v);
  struct P {
    const char* name;
    CUmemLocationType type;
    unsigned handles;
  };
  for (P p :
       {P{"device fabric", CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_FABRIC},
        P{"device fabric|posix", CU_MEM_LOCATION_TYPE_DEVICE,
          CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
        P{"host_numa fabric", CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_HANDLE_TYPE_FABRIC},
        P{"host fabric", CU_MEM_LOCATION_TYPE_HOST, CU_MEM_HANDLE_TYPE_FABRIC},
        P{"device win32", CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_WIN32},
        P{"device 0x10", CU_MEM_LOCATION_TYPE_DEVICE, 0x10}, P{"device 0x20", CU_MEM_LOCATION_TYPE_DEVICE, 0x20}}) {
    CUmemPoolProps props = poolProps(p.type, 0, p.handles);
    CUmemoryPool pool = nullptr;
    SHOW(std::string("fabric.pool ") + p.name, cuMemPoolCreate(&pool, &props));
    if (pool) {
      CUdeviceptr q = 0;
      SHOW(std::string("fabric.pool_alloc ") + p.name, cuMemAllocFromPoolAsync(&q, 4096, pool, nullptr));
      if (q) cuMemFreeAsync(q, nullptr);
      cuStreamSynchronize(nullptr);
      if (p.handles & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        int fd = -1;
        SHOW(std::string("fabric.pool_export_fd ") + p.name,
             cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      }
      SHOW(std::string("fabric.pool_destroy ") + p.name, cuMemPoolDestroy(pool));
    }
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran = 0;
  for (unsigned h : {unsigned(CU_MEM_HANDLE_TYPE_FABRIC),
                     unsigned(CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)}) {
    prop.requestedHandleTypes = CUmemAllocationHandleType(h);
    SHOW("fabric.granularity " + std::to_string(h),
         cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle a = 0;
    SHOW("fabric.create " + std::to_string(h), cuMemCreate(&a, 2 << 20, &prop, 0));
    if (a) cuMemRelease(a);
  }
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle a = 0;
  SHOW("fabric.create posix", cuMemCreate(&a, 2 << 20, &prop, 0));
  CUmemFabricHandle fh{};
  SHOW("fabric.export_from_posix", cuMemExportToShareableHandle(&fh, a, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  CUmemGenericAllocationHandle imported = 0;
  SHOW("fabric.import_zero", cuMemImportFromShareableHandle(&imported, &fh, CU_MEM_HANDLE_TYPE_FABRIC));
  if (a) cuMemRelease(a);
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  SHOW("fabric.default_pool_export", cuMemPoolExportToShareableHandle(&fh, def, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  CUmemoryPool impPool = nullptr;
  SHOW("fabric.pool_import_zero", cuMemPoolImportFromShareableHandle(&impPool, &fh, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  {
    CUmemPoolProps posix = poolProps(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUmemoryPool pool = nullptr;
    cuMemPoolCreate(&pool, &posix);
    SHOW("fabric.posix_pool_export_fabric", cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    SHOW("fabric.posix_pool_destroy", cuMemPoolDestroy(pool));
  }
  // Last (the first run crashed after it): a fabric pool's export, then its destruction.
  CUmemPoolProps props = poolProps(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemoryPool pool = nullptr;
  SHOW("fabric.last.create", cuMemPoolCreate(&pool, &props));
  SHOW("fabric.last.export", cuMemPoolExportToShareableHandle(&fh, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  SHOW("fabric.last.destroy", cuMemPoolDestroy(pool));
  SHOW("fabric.last.sync", cuCtxSynchronize());
}

// ---------------------------------------------------------------------------------------------------------------
static const char* kCondPtx = R"PTX(
.version 9.0
.target sm_90
.address_size 64
.extern .func cudaGraphSetConditional(.param .b64 h, .param .b32 v);
.visible .entry set_cond(.param .u64 h, .param .u32 v)
{
  .reg .b64 %h;
  .reg .b32 %v;
  ld.param.u64 %h, [h];
  ld.param.u32 %v, [v];
  {
  .param .b64 p0;
  .param .b32 p1;
  st.param.b64 [p0], %h;
  st.param.b32 [p1], %v;
  call.uni cudaGraphSetConditional, (p0, p1);
  }
  ret;
}
)PTX";

static CUresult addCond(CUgraphNode* node, CUgraph g, CUgraphNode* dep, CUgraphConditionalHandle h, CUcontext ctx,
                        CUgraph* body) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = h;
  p.conditional.type = CU_GRAPH_COND_TYPE_IF;
  p.conditional.size = 1;
  p.conditional.ctx = ctx;
  CUresult r = cuGraphAddNode(node, g, dep, nullptr, dep ? 1 : 0, &p);
  if (!r && body) *body = p.conditional.phGraph_out[0];
  return r;
}

static void partCond() {
  CUcontext ctx = setup();
  CUmodule mod = nullptr;
  SHOW("cond.module", cuModuleLoadData(&mod, kCondPtx));
  CUfunction set = nullptr;
  cuModuleGetFunction(&set, mod, "set_cond");
  CUdeviceptr slot = 0;
  cuMemAlloc(&slot, 4);
  auto memsetBody = [&](CUgraph body) {
    CUDA_MEMSET_NODE_PARAMS mp{};
    mp.dst = slot;
    mp.value = 42;
    mp.elementSize = 4;
    mp.width = mp.height = 1;
    CUgraphNode m;
    return cuGraphAddMemsetNode(&m, body, nullptr, 0, &mp, ctx);
  };
  auto run = [&](const char* tag, CUgraph g) {
    CUgraphExec e = nullptr;
    SHOW(std::string(tag) + ".instantiate", cuGraphInstantiate(&e, g, 0));
    if (!e) return;
    cuMemsetD32(slot, 0, 1);
    SHOW(std::string(tag) + ".launch", cuGraphLaunch(e, nullptr));
    SHOW(std::string(tag) + ".sync", cuCtxSynchronize());
    unsigned got = 7;
    cuMemcpyDtoH(&got, slot, 4);
    std::printf("%s body wrote %u\n", tag, got);
    cuGraphExecDestroy(e);
  };
  // 1. A conditional node of graph B with a handle of graph A.
  {
    CUgraph a, b;
    cuGraphCreate(&a, 0);
    cuGraphCreate(&b, 0);
    CUgraphConditionalHandle h = 0;
    SHOW("cond.other.handle", cuGraphConditionalHandleCreate(&h, a, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNode n;
    CUgraph body = nullptr;
    SHOW("cond.other.addnode_b", addCond(&n, b, nullptr, h, ctx, &body));
    if (body) {
      memsetBody(body);
      run("cond.other.b", b);
    }
    CUgraphNode n2;
    CUgraph body2 = nullptr;
    SHOW("cond.other.addnode_a_after", addCond(&n2, a, nullptr, h, ctx, &body2));
    if (body2) {
      memsetBody(body2);
      run("cond.other.a", a);
    }
    cuGraphDestroy(a);
    cuGraphDestroy(b);
  }
  // 2. A handle of graph A used in a node of A's child graph (a conditional body) and in a cloned graph.
  {
    CUgraph a;
    cuGraphCreate(&a, 0);
    CUgraphConditionalHandle h = 0, h2 = 0;
    cuGraphConditionalHandleCreate(&h, a, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    cuGraphConditionalHandleCreate(&h2, a, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode n;
    CUgraph body = nullptr;
    SHOW("cond.nested.outer", addCond(&n, a, nullptr, h, ctx, &body));
    CUgraphNode inner;
    CUgraph innerBody = nullptr;
    if (body) SHOW("cond.nested.inner_same_handle", addCond(&inner, body, nullptr, h, ctx, &innerBody));
    if (body) SHOW("cond.nested.inner_other_handle", addCond(&inner, body, nullptr, h2, ctx, &innerBody));
    if (innerBody) memsetBody(innerBody);
    run("cond.nested", a);
    CUgraph clone = nullptr;
    SHOW("cond.clone", cuGraphClone(&clone, a));
    if (clone) run("cond.clone", clone);
    // A second node with the same handle in the same graph.
    CUgraph c;
    cuGraphCreate(&c, 0);
    CUgraphConditionalHandle hc = 0;
    cuGraphConditionalHandleCreate(&hc, c, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode c1, c2;
    CUgraph b1 = nullptr, b2 = nullptr;
    SHOW("cond.twice.first", addCond(&c1, c, nullptr, hc, ctx, &b1));
    SHOW("cond.twice.second", addCond(&c2, c, &c1, hc, ctx, &b2));
    if (b1) memsetBody(b1);
    if (b2) memsetBody(b2);
    run("cond.twice", c);
    // An embedded child graph whose node uses the parent's handle.
    CUgraph d, child;
    cuGraphCreate(&d, 0);
    cuGraphCreate(&child, 0);
    CUgraphConditionalHandle hd = 0;
    cuGraphConditionalHandleCreate(&hd, d, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode cn;
    CUgraph cb = nullptr;
    SHOW("cond.child.add_in_child", addCond(&cn, child, nullptr, hd, ctx, &cb));
    if (cb) memsetBody(cb);
    CUgraphNode childNode;
    SHOW("cond.child.embed", cuGraphAddChildGraphNode(&childNode, d, nullptr, 0, child));
    run("cond.child", d);
  }
  // 2b. Instantiation of a graph with an unused handle; of a graph with an empty child graph.
  {
    CUgraph u;
    cuGraphCreate(&u, 0);
    CUgraphConditionalHandle hu = 0;
    cuGraphConditionalHandleCreate(&hu, u, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUDA_MEMSET_NODE_PARAMS mp{};
    mp.dst = slot;
    mp.value = 42;
    mp.elementSize = 4;
    mp.width = mp.height = 1;
    CUgraphNode m;
    cuGraphAddMemsetNode(&m, u, nullptr, 0, &mp, ctx);
    run("cond.unused_handle", u);
    CUgraph e, empty;
    cuGraphCreate(&e, 0);
    cuGraphCreate(&empty, 0);
    CUgraphNode en;
    SHOW("cond.empty_child.embed", cuGraphAddChildGraphNode(&en, e, nullptr, 0, empty));
    run("cond.empty_child", e);
    CUgraph e2, empty2;
    cuGraphCreate(&e2, 0);
    cuGraphCreate(&empty2, 0);
    CUgraphConditionalHandle h2 = 0;
    cuGraphConditionalHandleCreate(&h2, e2, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode en2;
    cuGraphAddChildGraphNode(&en2, e2, nullptr, 0, empty2);
    run("cond.empty_child_with_handle", e2);
    // A handle used in its graph's conditional node after the graph was embedded elsewhere as a child.
    CUgraph outer, inner;
    cuGraphCreate(&outer, 0);
    cuGraphCreate(&inner, 0);
    CUgraphConditionalHandle hi = 0;
    cuGraphConditionalHandleCreate(&hi, inner, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode ci;
    CUgraph bi = nullptr;
    SHOW("cond.inner_own_handle.add", addCond(&ci, inner, nullptr, hi, ctx, &bi));
    if (bi) memsetBody(bi);
    CUgraphNode cn2;
    SHOW("cond.inner_own_handle.embed", cuGraphAddChildGraphNode(&cn2, outer, nullptr, 0, inner));
    run("cond.inner_own_handle", outer);
  }
  if (std::getenv("CLIENTS17C_COND_STREAM")) {
    CUgraph a;
    cuGraphCreate(&a, 0);
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, a, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
    unsigned one = 1;
    void* args[] = {&h, &one};
    SHOW("cond.kernel_stream.launch", cuLaunchKernel(set, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    SHOW("cond.kernel_stream.sync", cuCtxSynchronize());
    return;
  }
  // 3. A kernel of graph B sets a handle of graph A.
  {
    CUgraph a, b;
    cuGraphCreate(&a, 0);
    cuGraphCreate(&b, 0);
    CUgraphConditionalHandle h = 0;
    cuGraphConditionalHandleCreate(&h, a, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
    CUgraphNode cn;
    CUgraph body = nullptr;
    addCond(&cn, a, nullptr, h, ctx, &body);
    if (body) memsetBody(body);
    unsigned one = 1;
    void* args[] = {&h, &one};
    CUDA_KERNEL_NODE_PARAMS kp{};
    kp.func = set;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode k;
    SHOW("cond.kernel_other.add_in_b", cuGraphAddKernelNode(&k, b, nullptr, 0, &kp));
    run("cond.kernel_other.b", b);
    SHOW("cond.kernel_other.after_b", cuCtxSynchronize());
    run("cond.kernel_other.a", a);
    // A stream launch of the kernel outside any graph.
    SHOW("cond.kernel_stream.launch", cuLaunchKernel(set, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    SHOW("cond.kernel_stream.sync", cuCtxSynchronize());
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Issue 24: each scenario in its own process.
static void unmapScenario(const char* which) {
  setup();
  CUfunction f = touchKernel();
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  const unsigned long long ns = 1500ull * 1000 * 1000;  // 1.5 s
  std::string w = which;
  CUdeviceptr buf = 0;
  CUmemGenericAllocationHandle handle = 0;
  size_t bytes = 2 << 20;
  void* hostBuf = nullptr;
  if (w == "memfree" || w == "memfree_async_other" || w == "ctxdestroy_primary_reset") {
    cuMemAlloc(&buf, bytes);
  } else if (w == "freehost") {
    SHOW("unmap.hostalloc", cuMemHostAlloc(&hostBuf, bytes, CU_MEMHOSTALLOC_DEVICEMAP));
    cuMemHostGetDevicePointer(&buf, hostBuf, 0);
  } else if (w == "hostunregister") {
    hostBuf = std::aligned_alloc(4096, bytes);
    SHOW("unmap.register", cuMemHostRegister(hostBuf, bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
    cuMemHostGetDevicePointer(&buf, hostBuf, 0);
  } else if (w == "pool_free_sync") {
    cuMemAllocAsync(&buf, bytes, nullptr);
    cuStreamSynchronize(nullptr);
  } else {  // VMM
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    cuMemCreate(&handle, bytes, &prop, 0);
    cuMemAddressReserve(&buf, bytes, 0, 0, 0);
    cuMemMap(buf, bytes, 0, handle, 0);
    CUmemAccessDesc acc{};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(buf, bytes, &acc, 1);
  }
  cuMemsetD8(buf, 0, 64);
  SHOW("unmap." + w + ".launch", launchTouch(f, buf, ns, s));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  SHOW("unmap." + w + ".query_running", cuStreamQuery(s));
  double t0 = nowMs();
  if (w == "memfree") SHOW("unmap.memfree.free", cuMemFree(buf));
  if (w == "pool_free_sync") SHOW("unmap.pool_free_sync.free", cuMemFree(buf));
  if (w == "memfree_async_other") SHOW("unmap.memfree_async_other.free", cuMemFreeAsync(buf, nullptr));
  if (w == "freehost") SHOW("unmap.freehost.free", cuMemFreeHost(hostBuf));
  if (w == "hostunregister") SHOW("unmap.hostunregister.unregister", cuMemHostUnregister(hostBuf));
  if (w == "vmm_unmap") SHOW("unmap.vmm_unmap.unmap", cuMemUnmap(buf, bytes));
  if (w == "vmm_release") SHOW("unmap.vmm_release.release", cuMemRelease(handle));
  if (w == "vmm_unmap_release") {
    SHOW("unmap.vmm_unmap_release.unmap", cuMemUnmap(buf, bytes));
    SHOW("unmap.vmm_unmap_release.release", cuMemRelease(handle));
  }
  if (w == "vmm_addressfree") {
    SHOW("unmap.vmm_addressfree.unmap", cuMemUnmap(buf, bytes));
    SHOW("unmap.vmm_addressfree.addressfree", cuMemAddressFree(buf, bytes));
  }
  if (w == "ctxdestroy_primary_reset") SHOW("unmap.ctxdestroy.reset", cuDevicePrimaryCtxReset(0));
  double t1 = nowMs();
  std::printf("unmap.%s call took %.0f ms\n", which, t1 - t0);
  std::fflush(stdout);
  SHOW("unmap." + w + ".query_after", cuStreamQuery(s));
  SHOW("unmap." + w + ".sync", cuStreamSynchronize(s));
  std::printf("unmap.%s sync after %.0f ms\n", which, nowMs() - t0);
  CUdeviceptr other = 0;
  SHOW("unmap." + w + ".alloc_after", cuMemAlloc(&other, 64));
  SHOW("unmap." + w + ".ctxsync_after", cuCtxSynchronize());
  if (w == "vmm_unmap") {
    // Map it again: does the address work again?
    SHOW("unmap.vmm_unmap.remap", cuMemMap(buf, bytes, 0, handle, 0));
  }
}

static void partUnmap(const char* self) {
  for (const char* w : {"memfree", "pool_free_sync", "memfree_async_other", "freehost", "hostunregister", "vmm_unmap",
                        "vmm_release", "vmm_unmap_release", "vmm_addressfree", "ctxdestroy_primary_reset"}) {
    std::fflush(stdout);
    std::string cmd = "timeout 30 " + std::string(self) + " unmap1 " + w;
    int rc = std::system(cmd.c_str());
    std::printf("unmap.%s process status %d\n", w, rc);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Checkpointing: the target is a second process of this program (self "target"), which reads commands on stdin.
static void targetMain() {
  setup();
  CUfunction f = touchKernel();
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 4096);
  unsigned pattern = 0x1234abcd;
  cuMemcpyHtoD(buf, &pattern, 4);
  void* pinned = nullptr;
  cuMemHostAlloc(&pinned, 4096, 0);
  std::strcpy(static_cast<char*>(pinned), "pinned");
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  std::printf("READY\n");
  std::fflush(stdout);
  char line[128];
  while (std::fgets(line, sizeof line, stdin)) {
    std::string c = line;
    double t0 = nowMs();
    if (c == "alloc\n") {
      CUdeviceptr q = 0;
      CUresult r = cuMemAlloc(&q, 64);
      std::printf("target alloc %d after %.0f ms\n", int(r), nowMs() - t0);
    } else if (c == "launch\n") {
      CUdeviceptr q = 0;
      cuMemAlloc(&q, 64);
      CUresult r = launchTouch(f, q, 2000ull * 1000 * 1000, s);
      std::printf("target launch %d\n", int(r));
    } else if (c == "check\n") {
      unsigned got = 0;
      CUresult r = cuMemcpyDtoH(&got, buf, 4);
      std::printf("target check %d value 0x%x pinned '%s' after %.0f ms\n", int(r), got, static_cast<char*>(pinned),
                  nowMs() - t0);
    } else if (c == "sync\n") {
      CUresult r = cuCtxSynchronize();
      std::printf("target sync %d after %.0f ms\n", int(r), nowMs() - t0);
    } else if (c == "exit\n") {
      break;
    }
    std::fflush(stdout);
  }
}

struct Target {
  pid_t pid = -1;
  FILE* in = nullptr;
  int out = -1;
};

static Target startTarget(const char* self) {
  int toChild[2], fromChild[2];
  pipe(toChild);
  pipe(fromChild);
  Target t;
  t.pid = fork();
  if (t.pid == 0) {
    dup2(toChild[0], 0);
    dup2(fromChild[1], 1);
    close(toChild[1]);
    close(fromChild[0]);
    execl(self, self, "target", nullptr);
    _exit(127);
  }
  close(toChild[0]);
  close(fromChild[1]);
  t.in = fdopen(toChild[1], "w");
  t.out = fromChild[0];
  return t;
}

// Reads what the target printed within ms milliseconds and prints it prefixed.
static void drain(Target& t, int ms) {
  char buf[4096];
  pollfd p{t.out, POLLIN, 0};
  double end = nowMs() + ms;
  while (true) {
    int left = int(end - nowMs());
    if (left <= 0) break;
    if (poll(&p, 1, left) <= 0) break;
    ssize_t n = read(t.out, buf, sizeof buf - 1);
    if (n <= 0) break;
    buf[n] = 0;
    std::printf("  [target] %s", buf);
  }
  std::fflush(stdout);
}

static void send(Target& t, const char* c) {
  std::fputs(c, t.in);
  std::fflush(t.in);
}

static void stopTarget(Target& t) {
  send(t, "exit\n");
  drain(t, 2000);
  int status = 0;
  waitpid(t.pid, &status, 0);
  std::printf("  target status %d\n", status);
}

static void state(const char* tag, int pid) {
  CUprocessState st = CUprocessState(99);
  CUresult r = cuCheckpointProcessGetState(pid, &st);
  std::printf("ckpt.%s state: %d value %d\n", tag, int(r), int(st));
  std::fflush(stdout);
}

static void partCheckpoint(const char* self) {
  // Before cuInit in this process.
  CUprocessState st;
  SHOW("ckpt.before_init.self", cuCheckpointProcessGetState(getpid(), &st));
  setup();
  SHOW("ckpt.self.state", cuCheckpointProcessGetState(getpid(), &st));
  std::printf("ckpt.self.state value %d\n", int(st));
  int tid = 0;
  SHOW("ckpt.self.tid", cuCheckpointProcessGetRestoreThreadId(getpid(), &tid));
  std::printf("ckpt.self.tid %d (pid %d)\n", tid, int(getpid()));
  SHOW("ckpt.nonexistent.state", cuCheckpointProcessGetState(0x3ffffff0, &st));
  SHOW("ckpt.nonexistent.lock", cuCheckpointProcessLock(0x3ffffff0, nullptr));
  SHOW("ckpt.pid0.state", cuCheckpointProcessGetState(0, &st));
  SHOW("ckpt.pidneg.state", cuCheckpointProcessGetState(-1, &st));
  pid_t sleeper = fork();
  if (sleeper == 0) {
    execlp("sleep", "sleep", "5", nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  SHOW("ckpt.noncuda.state", cuCheckpointProcessGetState(sleeper, &st));
  SHOW("ckpt.noncuda.tid", cuCheckpointProcessGetRestoreThreadId(sleeper, &tid));
  SHOW("ckpt.noncuda.lock", cuCheckpointProcessLock(sleeper, nullptr));
  kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);

  Target t = startTarget(self);
  drain(t, 3000);
  SHOW("ckpt.null_state", cuCheckpointProcessGetState(t.pid, nullptr));
  SHOW("ckpt.null_tid", cuCheckpointProcessGetRestoreThreadId(t.pid, nullptr));
  state("initial", t.pid);
  tid = 0;
  SHOW("ckpt.tid", cuCheckpointProcessGetRestoreThreadId(t.pid, &tid));
  std::printf("ckpt.tid %d (target pid %d, equal %d)\n", tid, int(t.pid), tid == t.pid);
  SHOW("ckpt.running.checkpoint", cuCheckpointProcessCheckpoint(t.pid, nullptr));
  SHOW("ckpt.running.restore", cuCheckpointProcessRestore(t.pid, nullptr));
  SHOW("ckpt.running.unlock", cuCheckpointProcessUnlock(t.pid, nullptr));
  state("after_wrong_order", t.pid);
  CUcheckpointLockArgs la{};
  la.reserved0 = 1;
  SHOW("ckpt.lock.reserved_nonzero", cuCheckpointProcessLock(t.pid, &la));
  state("after_reserved", t.pid);
  double t0 = nowMs();
  SHOW("ckpt.lock.null_args", cuCheckpointProcessLock(t.pid, nullptr));
  std::printf("ckpt.lock took %.0f ms\n", nowMs() - t0);
  state("locked", t.pid);
  SHOW("ckpt.locked.lock_again", cuCheckpointProcessLock(t.pid, nullptr));
  SHOW("ckpt.locked.restore", cuCheckpointProcessRestore(t.pid, nullptr));
  SHOW("ckpt.locked.tid", cuCheckpointProcessGetRestoreThreadId(t.pid, &tid));
  // The target calls the driver while locked: does it block?
  send(t, "alloc\n");
  drain(t, 700);
  std::printf("ckpt.locked: (no target line above means its cuMemAlloc blocks)\n");
  t0 = nowMs();
  SHOW("ckpt.checkpoint", cuCheckpointProcessCheckpoint(t.pid, nullptr));
  std::printf("ckpt.checkpoint took %.0f ms\n", nowMs() - t0);
  state("checkpointed", t.pid);
  SHOW("ckpt.checkpointed.checkpoint_again", cuCheckpointProcessCheckpoint(t.pid, nullptr));
  SHOW("ckpt.checkpointed.unlock", cuCheckpointProcessUnlock(t.pid, nullptr));
  SHOW("ckpt.checkpointed.lock", cuCheckpointProcessLock(t.pid, nullptr));
  state("checkpointed2", t.pid);
  CUcheckpointRestoreArgs ra{};
  ra.reserved1 = 1;
  SHOW("ckpt.restore.reserved_nonzero", cuCheckpointProcessRestore(t.pid, &ra));
  t0 = nowMs();
  SHOW("ckpt.restore", cuCheckpointProcessRestore(t.pid, nullptr));
  std::printf("ckpt.restore took %.0f ms\n", nowMs() - t0);
  state("restored", t.pid);
  SHOW("ckpt.restored.tid", cuCheckpointProcessGetRestoreThreadId(t.pid, &tid));
  CUcheckpointUnlockArgs ua{};
  ua.reserved[0] = 1;
  SHOW("ckpt.unlock.reserved_nonzero", cuCheckpointProcessUnlock(t.pid, &ua));
  SHOW("ckpt.unlock", cuCheckpointProcessUnlock(t.pid, nullptr));
  state("unlocked", t.pid);
  drain(t, 500);
  send(t, "check\n");
  drain(t, 1000);
  // Lock while a kernel runs in the target: short timeout, then a long one.
  send(t, "launch\n");
  drain(t, 300);
  la = {};
  la.timeoutMs = 100;
  t0 = nowMs();
  SHOW("ckpt.busy.lock_100ms", cuCheckpointProcessLock(t.pid, &la));
  std::printf("ckpt.busy.lock_100ms took %.0f ms\n", nowMs() - t0);
  state("busy_after_timeout", t.pid);
  la.timeoutMs = 5000;
  t0 = nowMs();
  SHOW("ckpt.busy.lock_5000ms", cuCheckpointProcessLock(t.pid, &la));
  std::printf("ckpt.busy.lock_5000ms took %.0f ms\n", nowMs() - t0);
  state("busy_locked", t.pid);
  SHOW("ckpt.busy.unlock", cuCheckpointProcessUnlock(t.pid, nullptr));
  send(t, "sync\n");
  drain(t, 3000);
  // Lock with a timeout of 0 (no timeout) on an idle target; the target exits while locked.
  la.timeoutMs = 0;
  SHOW("ckpt.lock0", cuCheckpointProcessLock(t.pid, &la));
  SHOW("ckpt.lock0.checkpoint", cuCheckpointProcessCheckpoint(t.pid, nullptr));
  SHOW("ckpt.lock0.restore", cuCheckpointProcessRestore(t.pid, nullptr));
  SHOW("ckpt.lock0.unlock", cuCheckpointProcessUnlock(t.pid, nullptr));
  stopTarget(t);
  SHOW("ckpt.exited.state", cuCheckpointProcessGetState(t.pid, &st));
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* self = "/proc/self/exe";
  char path[4096];
  ssize_t n = readlink(self, path, sizeof path - 1);
  if (n > 0) {
    path[n] = 0;
    self = path;
  }
  std::string mode = argc > 1 ? argv[1] : "all";
  if (mode == "target") {
    targetMain();
    return 0;
  }
  if (mode == "unmap1" && argc > 2) {
    unmapScenario(argv[2]);
    return 0;
  }
  if (mode == "pools") partPools();
  if (mode == "fabric") partFabric();
  if (mode == "cond") partCond();
  if (mode == "cond2") {
    setenv("CLIENTS17C_COND_STREAM", "1", 1);
    partCond();
  }
  if (mode == "unmap") partUnmap(self);
  if (mode == "ckpt") partCheckpoint(self);
  if (mode == "all") {
    for (const char* part : {"pools", "fabric", "cond", "cond2"}) {
      std::printf("=== %s\n", part);
      std::fflush(stdout);
      std::string cmd = "timeout 150 " + std::string(self) + " " + part;
      int rc = std::system(cmd.c_str());
      std::printf("=== %s status %d\n", part, rc);
    }
  }
  return 0;
}
