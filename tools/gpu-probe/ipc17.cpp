// Third round of experiments for issue 17 (run: PROBE=ipc17 tools/gpu-probe/run.sh OUTDIR), from cuda.core's
// suite: memory pools shared between processes through POSIX file descriptors (device and host-NUMA pools; the
// importer is a fresh process started with fork+exec that inherits the descriptor), which pool locations accept
// which handle types, cuTensorMapEncodeTiled's alignment rules (tensor map, global address, strides), and graph
// allocation nodes of managed memory.
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#define SHOW(name, expr)                                                     \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    const char* n_ = nullptr;                                                \
    cuGetErrorName(r_, &n_);                                                 \
    std::printf("%s: %s (%d)\n", name, n_ ? n_ : "?", static_cast<int>(r_)); \
  } while (0)

static CUresult last;
#define TRY(name, expr) \
  do {                  \
    last = (expr);      \
    SHOW(name, last);   \
  } while (0)

static constexpr int kInheritedFd = 100;

static std::string hex(const void* data, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(data)[i]);
    s += b;
  }
  return s;
}

static void unhex(const char* s, void* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    std::sscanf(s + 2 * i, "%2x", &v);
    static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(v);
  }
}

static CUmemPoolProps poolProps(CUmemLocationType type, int id, CUmemAllocationHandleType handles) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = handles;
  p.location.type = type;
  p.location.id = id;
  return p;
}

// The importing process: argv = self child LOCATION DATAHEX.
static int child(const char* location, const char* dataHex) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  CUmemPoolPtrExportData data;
  unhex(dataHex, &data, sizeof data);
  SHOW("child.init", cuInit(0));
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  std::string p = std::string("child.") + location + ".";
  CUmemoryPool pool = nullptr;
  TRY((p + "import_pool").c_str(),
      cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{kInheritedFd}),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (last) return 1;
  CUmemPoolPtrExportData zeros{};
  CUdeviceptr bogus = 0;
  SHOW((p + "import_zero_data").c_str(), cuMemPoolImportPointer(&bogus, pool, &zeros));
  CUdeviceptr q = 0;
  TRY((p + "import_pointer").c_str(), cuMemPoolImportPointer(&q, pool, &data));
  if (last) return 1;
  CUdeviceptr q2 = 0;
  SHOW((p + "import_pointer_again").c_str(), cuMemPoolImportPointer(&q2, pool, &data));
  std::printf("%simport_again_same_address %d\n", p.c_str(), q2 == q);
  uint32_t word = 0;
  SHOW((p + "read").c_str(), cuMemcpyDtoH(&word, q, 4));
  std::printf("%sread_value 0x%08x\n", p.c_str(), word);
  SHOW((p + "write").c_str(), cuMemsetD32(q, 0x55667788u, 1));
  SHOW((p + "sync").c_str(), cuCtxSynchronize());
  unsigned memType = 0;
  SHOW((p + "memory_type").c_str(), cuPointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, q));
  std::printf("%smemory_type_value %u\n", p.c_str(), memType);
  CUmemoryPool owner = nullptr;
  SHOW((p + "pointer_pool").c_str(), cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q));
  std::printf("%spointer_pool_is_import %d\n", p.c_str(), owner == pool);
  CUdeviceptr base = 0;
  size_t size = 0;
  SHOW((p + "address_range").c_str(), cuMemGetAddressRange(&base, &size, q));
  std::printf("%saddress_range_size %zu\n", p.c_str(), size);
  CUmemPoolPtrExportData reexport{};
  SHOW((p + "reexport_pointer").c_str(), cuMemPoolExportPointer(&reexport, q));
  int fd2 = -1;
  SHOW((p + "reexport_pool").c_str(),
       cuMemPoolExportToShareableHandle(&fd2, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUdeviceptr extra = 0;
  SHOW((p + "alloc_from_import").c_str(), cuMemAllocFromPoolAsync(&extra, 256, pool, nullptr));
  SHOW((p + "free_import").c_str(), cuMemFree(q));
  if (q2 && q2 != q) cuMemFree(q2);
  SHOW((p + "free_import_twice").c_str(), cuMemFree(q));
  SHOW((p + "destroy_pool").c_str(), cuMemPoolDestroy(pool));
  return 0;
}

static void crossProcess(const char* self, const char* name, CUmemLocationType type, int id) {
  std::string p = std::string("ipc.") + name + ".";
  CUmemPoolProps props = poolProps(type, id, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemoryPool pool = nullptr;
  TRY((p + "create").c_str(), cuMemPoolCreate(&pool, &props));
  if (last) return;
  CUdeviceptr ptr = 0;
  TRY((p + "alloc").c_str(), cuMemAllocFromPoolAsync(&ptr, 4096, pool, nullptr));
  if (last) return;
  cuStreamSynchronize(nullptr);
  SHOW((p + "fill").c_str(), cuMemsetD32(ptr, 0x11223344u, 1024));
  cuCtxSynchronize();
  int fd = -1;
  TRY((p + "export_pool").c_str(),
      cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (last) return;
  std::printf("%sfd_valid %d\n", p.c_str(), fd >= 0);
  CUmemPoolPtrExportData data{};
  TRY((p + "export_pointer").c_str(), cuMemPoolExportPointer(&data, ptr));
  if (last) return;
  SHOW((p + "export_interior_pointer").c_str(), cuMemPoolExportPointer(&data, ptr + 64));
  cuMemPoolExportPointer(&data, ptr);
  CUmemoryPool self_import = nullptr;
  SHOW((p + "import_in_exporter").c_str(),
       cuMemPoolImportFromShareableHandle(&self_import, reinterpret_cast<void*>(intptr_t{fd}),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  if (self_import) {
    CUdeviceptr same = 0;
    SHOW((p + "import_pointer_in_exporter").c_str(), cuMemPoolImportPointer(&same, self_import, &data));
    std::printf("%simport_in_exporter_same_address %d\n", p.c_str(), same == ptr);
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, kInheritedFd);
    std::string h = hex(&data, sizeof data);
    execl(self, self, "child", name, h.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("%schild_exit %d\n", p.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
  uint32_t word = 0;
  SHOW((p + "read_back").c_str(), cuMemcpyDtoH(&word, ptr, 4));
  std::printf("%sread_back_value 0x%08x\n", p.c_str(), word);
  SHOW((p + "free").c_str(), cuMemFree(ptr));
  close(fd);
  SHOW((p + "destroy").c_str(), cuMemPoolDestroy(pool));
}

static void poolLocations(CUdevice dev) {
  int handleTypes = -1;
  SHOW("attr.mempool_handle_types",
       cuDeviceGetAttribute(&handleTypes, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev));
  std::printf("attr.mempool_handle_types_value %d\n", handleTypes);
  int numa = -1;
  SHOW("attr.host_numa_id", cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev));
  std::printf("attr.host_numa_id_value %d\n", numa);
  int hostPools = -1;
  SHOW("attr.host_memory_pools",
       cuDeviceGetAttribute(&hostPools, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, dev));
  std::printf("attr.host_memory_pools_value %d\n", hostPools);
  int cma = -1;
  SHOW("attr.concurrent_managed", cuDeviceGetAttribute(&cma, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  std::printf("attr.concurrent_managed_value %d\n", cma);
  struct Case {
    const char* name;
    CUmemLocationType type;
    int id;
    CUmemAllocationHandleType handles;
  };
  for (Case c : {Case{"device_none", CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE},
                 Case{"device_fd", CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                 Case{"host_none", CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_NONE},
                 Case{"host_fd", CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                 Case{"host_numa0_none", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_HANDLE_TYPE_NONE},
                 Case{"host_numa0_fd", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                 Case{"host_numa7_fd", CU_MEM_LOCATION_TYPE_HOST_NUMA, 7, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                 Case{"host_numa_current_none", CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, CU_MEM_HANDLE_TYPE_NONE},
                 Case{"device_fabric", CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_FABRIC}}) {
    CUmemPoolProps props = poolProps(c.type, c.id, c.handles);
    CUmemoryPool pool = nullptr;
    std::string p = std::string("pool.") + c.name;
    TRY((p + ".create").c_str(), cuMemPoolCreate(&pool, &props));
    if (last) continue;
    CUdeviceptr ptr = 0;
    SHOW((p + ".alloc").c_str(), cuMemAllocFromPoolAsync(&ptr, 1000, pool, nullptr));
    cuStreamSynchronize(nullptr);
    int fd = -1;
    SHOW((p + ".export_fd").c_str(),
         cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (fd >= 0) close(fd);
    CUmemPoolPtrExportData data{};
    if (ptr) SHOW((p + ".export_pointer").c_str(), cuMemPoolExportPointer(&data, ptr));
    unsigned memType = 0;
    if (ptr) {
      cuPointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
      std::printf("%s.memory_type %u\n", p.c_str(), memType);
      cuMemFree(ptr);
    }
    cuMemPoolDestroy(pool);
  }
  // Exports of things that are not IPC pool memory.
  CUdeviceptr plain = 0;
  cuMemAlloc(&plain, 4096);
  CUmemPoolPtrExportData data{};
  SHOW("export_pointer.cuMemAlloc", cuMemPoolExportPointer(&data, plain));
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, dev);
  int fd = -1;
  SHOW("export_fd.default_pool",
       cuMemPoolExportToShareableHandle(&fd, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUdeviceptr fromDefault = 0;
  cuMemAllocAsync(&fromDefault, 4096, nullptr);
  cuStreamSynchronize(nullptr);
  SHOW("export_pointer.default_pool", cuMemPoolExportPointer(&data, fromDefault));
  CUmemoryPool imported = nullptr;
  SHOW("import_fd.minus_one", cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{-1}),
                                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  SHOW("import_fd.stdin", cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{0}),
                                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  cuMemFree(fromDefault);
  cuMemFree(plain);
}

// cuTensorMapEncodeTiled with the tensor map, the global address and the strides at several alignments.
static void tensorMapAlignment() {
  alignas(128) static unsigned char storage[512];
  CUdeviceptr buf = 0;
  cuMemAlloc(&buf, 1 << 20);
  auto encode = [&](size_t mapOffset, size_t addressOffset, cuuint64_t stride, CUtensorMapInterleave interleave) {
    auto* map = reinterpret_cast<CUtensorMap*>(storage + mapOffset);
    cuuint64_t dims[3] = {64, 64, 4};
    cuuint64_t strides[2] = {stride, stride * 64};
    cuuint32_t box[3] = {interleave == CU_TENSOR_MAP_INTERLEAVE_NONE ? 16u : 8u, 8, 1};
    cuuint32_t elementStrides[3] = {1, 1, 1};
    return cuTensorMapEncodeTiled(
        map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, reinterpret_cast<void*>(buf + addressOffset), dims, strides, box,
        elementStrides, interleave,
        interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  char name[96];
  for (size_t off : {0, 4, 8, 16, 32, 48, 64}) {
    std::snprintf(name, sizeof name, "tmap.map_offset_%zu", off);
    SHOW(name, encode(off, 0, 256, CU_TENSOR_MAP_INTERLEAVE_NONE));
  }
  for (auto il : {CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B}) {
    for (size_t off : {4, 8, 16, 32, 48}) {
      std::snprintf(name, sizeof name, "tmap.interleave%d.address_offset_%zu", int(il), off);
      SHOW(name, encode(0, off, 256, il));
    }
    for (cuuint64_t stride : {260, 264, 272, 288, 304, 320}) {
      std::snprintf(name, sizeof name, "tmap.interleave%d.stride_%llu", int(il), (unsigned long long)stride);
      SHOW(name, encode(0, 0, stride, il));
    }
  }
  // cuTensorMapReplaceAddress on a map at 32 mod 64, and with addresses at several alignments.
  encode(0, 0, 256, CU_TENSOR_MAP_INTERLEAVE_NONE);
  std::memmove(storage + 32, storage, sizeof(CUtensorMap));
  SHOW("tmap.replace.map_offset_32",
       cuTensorMapReplaceAddress(reinterpret_cast<CUtensorMap*>(storage + 32), reinterpret_cast<void*>(buf + 256)));
  for (size_t off : {4, 8, 16, 32}) {
    std::snprintf(name, sizeof name, "tmap.replace.address_offset_%zu", off);
    SHOW(name, cuTensorMapReplaceAddress(reinterpret_cast<CUtensorMap*>(storage), reinterpret_cast<void*>(buf + off)));
  }
  cuMemFree(buf);
}

// A graph allocation node of managed memory, at several locations; where it is accepted, the graph runs and the
// memory is written and read back.
static void managedAllocNodes(CUdevice dev) {
  struct Case {
    const char* name;
    CUmemAllocationType allocType;
    CUmemLocationType type;
    int id;
  };
  for (Case c : {Case{"managed_device", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
                 Case{"managed_none", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE, 0},
                 Case{"managed_host", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST, 0},
                 Case{"pinned_host", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0},
                 Case{"pinned_host_numa", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
                 Case{"invalid_type", CU_MEM_ALLOCATION_TYPE_INVALID, CU_MEM_LOCATION_TYPE_DEVICE, 0}}) {
    std::string p = std::string("graph_alloc.") + c.name + ".";
    CUgraph graph = nullptr;
    cuGraphCreate(&graph, 0);
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    params.poolProps.allocType = c.allocType;
    params.poolProps.location.type = c.type;
    params.poolProps.location.id = c.id;
    params.bytesize = 1 << 16;
    CUgraphNode node = nullptr;
    TRY((p + "add").c_str(), cuGraphAddMemAllocNode(&node, graph, nullptr, 0, &params));
    if (!last) {
      std::printf("%sdptr_nonzero %d\n", p.c_str(), params.dptr != 0);
      CUDA_MEM_ALLOC_NODE_PARAMS back{};
      SHOW((p + "get_params").c_str(), cuGraphMemAllocNodeGetParams(node, &back));
      std::printf("%sget_params alloc_type %d location %d id %d\n", p.c_str(), int(back.poolProps.allocType),
                  int(back.poolProps.location.type), back.poolProps.location.id);
      CUgraphNode freeNode = nullptr;
      SHOW((p + "add_free").c_str(), cuGraphAddMemFreeNode(&freeNode, graph, &node, 1, params.dptr));
      CUgraph g2 = nullptr;
      cuGraphCreate(&g2, 0);
      CUgraphExec exec = nullptr;
      TRY((p + "instantiate").c_str(), cuGraphInstantiate(&exec, graph, 0));
      if (!last) {
        SHOW((p + "launch").c_str(), cuGraphLaunch(exec, nullptr));
        SHOW((p + "sync").c_str(), cuStreamSynchronize(nullptr));
        cuGraphExecDestroy(exec);
      }
      // Without the free node: the allocation outlives the launch and can be queried.
      CUgraph keep = nullptr;
      cuGraphCreate(&keep, 0);
      CUDA_MEM_ALLOC_NODE_PARAMS kp = params;
      kp.dptr = 0;
      CUgraphNode kn = nullptr;
      SHOW((p + "keep.add").c_str(), cuGraphAddMemAllocNode(&kn, keep, nullptr, 0, &kp));
      CUgraphExec kexec = nullptr;
      TRY((p + "keep.instantiate").c_str(), cuGraphInstantiate(&kexec, keep, 0));
      if (!last) {
        SHOW((p + "keep.launch").c_str(), cuGraphLaunch(kexec, nullptr));
        SHOW((p + "keep.sync").c_str(), cuStreamSynchronize(nullptr));
        unsigned managed = 9, memType = 9;
        SHOW((p + "keep.is_managed").c_str(),
             cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, kp.dptr));
        SHOW((p + "keep.memory_type").c_str(),
             cuPointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, kp.dptr));
        std::printf("%skeep.is_managed_value %u memory_type_value %u\n", p.c_str(), managed, memType);
        SHOW((p + "keep.memset").c_str(), cuMemsetD32(kp.dptr, 0xabcdef01u, 16));
        uint32_t word = 0;
        SHOW((p + "keep.read").c_str(), cuMemcpyDtoH(&word, kp.dptr, 4));
        std::printf("%skeep.read_value 0x%08x\n", p.c_str(), word);
        if (managed == 1)
          std::printf("%skeep.host_read 0x%08x\n", p.c_str(), *reinterpret_cast<volatile uint32_t*>(kp.dptr));
        SHOW((p + "keep.free").c_str(), cuMemFree(kp.dptr));
        cuGraphExecDestroy(kexec);
      }
      cuGraphDestroy(keep);
      cuGraphDestroy(g2);
    }
    cuGraphDestroy(graph);
  }
  (void)dev;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  SHOW("init", cuInit(0));
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  poolLocations(dev);
  crossProcess(argv[0], "device", CU_MEM_LOCATION_TYPE_DEVICE, 0);
  crossProcess(argv[0], "host_numa", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
  tensorMapAlignment();
  managedAllocNodes(dev);
  return 0;
}
