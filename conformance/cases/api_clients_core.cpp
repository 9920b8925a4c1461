// What cuda.core 1.2.2's own tests rely on (tools/clients, issue 17), measured on an H100 with driver 580
// (tools/gpu-probe/ipc17.cpp, results in tools/gpu-probe/results/ipc17-h100-*.txt): memory pools shared with another
// process through POSIX file descriptors (device and pinned host-NUMA pools), pinned host pools, tensor maps at any
// host alignment, managed graph allocations, graph restrictions, the edge data of a capture query.
#include "harness.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using api_memory_ClientsIpc = conf::ContextTest;
using api_memory_ClientsHostPool = conf::ContextTest;
using api_misc_Clients = conf::ContextTest;
using api_graph_Clients = conf::ContextTest;
using api_stream_Clients = conf::ContextTest;
using api_launch_Clients = conf::ContextTest;
using api_module_ClientsCore = conf::ContextTest;

CUmemPoolProps PoolProps(CUmemLocationType type, int id, CUmemAllocationHandleType handles) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = handles;
  p.location.type = type;
  p.location.id = id;
  return p;
}

std::string Hex(const void* data, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(data)[i]);
    s += b;
  }
  return s;
}

// The argument of the importing process: "FD HEX-OF-EXPORT-DATA".
struct ImportArgument {
  int fd = -1;
  CUmemPoolPtrExportData data{};
};

ImportArgument ParseArgument(const std::string& arg) {
  ImportArgument out;
  size_t space = arg.find(' ');
  if (space == std::string::npos) return out;
  out.fd = std::stoi(arg.substr(0, space));
  std::string hex = arg.substr(space + 1);
  for (size_t i = 0; i < sizeof out.data && 2 * i + 1 < hex.size(); ++i)
    reinterpret_cast<unsigned char*>(&out.data)[i] =
        static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

// A fresh process (no cuInit before) imports the pool and the pointer: returns the word it read in the low 32 bits
// after writing 0x55667788 there; negative values name the step that failed.
CONF_FRESH_BODY(ImportDevicePoolPointer) {
  ImportArgument a = ParseArgument(arg);
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return -1;
  CUmemoryPool pool = nullptr;
  if (cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{a.fd}),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
    return -2;
  CUdeviceptr p = 0, again = 0;
  if (cuMemPoolImportPointer(&p, pool, &a.data)) return -3;
  if (cuMemPoolImportPointer(&again, pool, &a.data) || again != p) return -4;  // the same mapping
  uint32_t word = 0;
  if (cuMemcpyDtoH(&word, p, 4)) return -5;
  if (cuMemsetD32(p, 0x55667788u, 1) || cuCtxSynchronize()) return -6;
  int fd = -1;
  if (cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) !=
      CUDA_ERROR_INVALID_VALUE)
    return -7;  // an imported pool is not exported again
  CUdeviceptr extra = 0;
  if (cuMemAllocFromPoolAsync(&extra, 256, pool, nullptr) != CUDA_ERROR_INVALID_VALUE) return -8;
  if (cuMemFree(p)) return -9;
  if (cuMemPoolDestroy(pool)) return -10;
  return static_cast<int>(word & 0x7fffffff);
}

// The host-NUMA variant: the second import is refused, the memory is host memory.
CONF_FRESH_BODY(ImportHostPoolPointer) {
  ImportArgument a = ParseArgument(arg);
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return -1;
  CUmemoryPool pool = nullptr;
  if (cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{a.fd}),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
    return -2;
  CUdeviceptr p = 0, again = 0;
  if (cuMemPoolImportPointer(&p, pool, &a.data)) return -3;
  if (cuMemPoolImportPointer(&again, pool, &a.data) != CUDA_ERROR_ALREADY_MAPPED) return -4;
  unsigned type = 0;
  if (cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) || type != CU_MEMORYTYPE_HOST) return -5;
  CUmemoryPool owner = nullptr;
  if (cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) || owner != pool) return -6;
  if (cuMemFree(p) || cuMemPoolDestroy(pool)) return -7;
  return 1;
}

// Exports pool memory filled with `fill`, runs `body` in a fresh process that inherits the pool's descriptor, and
// returns its result.
conf::FreshResult ShareWithFreshProcess(CUmemoryPool pool, CUdeviceptr ptr, const char* body) {
  int fd = -1;
  conf::FreshResult none;
  if (cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) return none;
  CUmemPoolPtrExportData data{};
  if (cuMemPoolExportPointer(&data, ptr)) return none;
  int inherited = fcntl(fd, F_DUPFD, 200);  // without close-on-exec: the fresh process gets it
  close(fd);
  auto r = conf::RunFresh(body, std::to_string(inherited) + " " + Hex(&data, sizeof data));
  close(inherited);
  return r;
}

TEST_F(api_memory_ClientsIpc, DevicePoolSharedWithFreshProcess) {
  CUmemPoolProps props = PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  CU_ASSERT_OK(cuMemsetD32(p, 0x11223344u, 1024));
  CU_ASSERT_OK(cuCtxSynchronize());
  CUmemPoolPtrExportData data{};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemPoolExportPointer(&data, p + 64)) << "not the start of an allocation";
  auto r = ShareWithFreshProcess(pool, p, "ImportDevicePoolPointer");
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 0x11223344) << "what the importer read (negative: the step that failed)";
  uint32_t word = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&word, p, 4));
  EXPECT_EQ(word, 0x55667788u) << "the importer's write is seen here";
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_ClientsIpc, HostNumaPoolSharedWithFreshProcess) {
  CUmemPoolProps props = PoolProps(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  auto r = ShareWithFreshProcess(pool, p, "ImportHostPoolPointer");
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 1) << "negative: the step of the importer that failed";
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_ClientsIpc, ImportChecksTheDescriptor) {
  CUmemoryPool pool = nullptr;
  CU_EXPECT(CUDA_ERROR_UNKNOWN, cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{-1}),
                                                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      << "not an open descriptor";
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  CU_EXPECT(CUDA_ERROR_UNKNOWN, cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(intptr_t{pipeFds[0]}),
                                                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      << "a pipe, not a pool (the H100 of 2026-11-26 answered 999)";
  close(pipeFds[0]);
  close(pipeFds[1]);
}

TEST_F(api_memory_ClientsIpc, ExportNeedsAnIpcPool) {
  CUdeviceptr plain = 0;
  CU_ASSERT_OK(cuMemAlloc(&plain, 4096));
  CUmemPoolPtrExportData data{};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemPoolExportPointer(&data, plain)) << "cuMemAlloc memory";
  CUmemoryPool def = nullptr;
  CU_ASSERT_OK(cuDeviceGetDefaultMemPool(&def, dev));
  int fd = -1;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuMemPoolExportToShareableHandle(&fd, def, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      << "the default pool has no handle type";
  CU_EXPECT_OK(cuMemFree(plain));
}

TEST_F(api_memory_ClientsHostPool, Locations) {
  struct Case {
    const char* what;
    CUmemLocationType type;
    int id;
    CUmemAllocationHandleType handles;
    CUresult expected;
  };
  for (Case c : {Case{"host", CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_NONE, CUDA_SUCCESS},
                 Case{"host, shareable", CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                      CUDA_ERROR_INVALID_VALUE},
                 Case{"NUMA node 0", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_HANDLE_TYPE_NONE, CUDA_SUCCESS},
                 Case{"NUMA node 0, shareable", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0,
                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CUDA_SUCCESS},
                 Case{"NUMA node 7 (absent)", CU_MEM_LOCATION_TYPE_HOST_NUMA, 7,
                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CUDA_ERROR_INVALID_VALUE},
                 Case{"current NUMA node", CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, CU_MEM_HANDLE_TYPE_NONE,
                      CUDA_ERROR_INVALID_VALUE}}) {
    CUmemPoolProps props = PoolProps(c.type, c.id, c.handles);
    CUmemoryPool pool = nullptr;
    CU_EXPECT(c.expected, cuMemPoolCreate(&pool, &props)) << c.what;
    if (c.expected != CUDA_SUCCESS || !pool) continue;
    CUdeviceptr p = 0;
    CU_EXPECT_OK(cuMemAllocFromPoolAsync(&p, 1000, pool, nullptr)) << c.what;
    CU_EXPECT_OK(cuStreamSynchronize(nullptr));
    unsigned type = 0;
    CU_EXPECT_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)) << c.what;
    EXPECT_EQ(type, unsigned(CU_MEMORYTYPE_HOST)) << c.what;
    *reinterpret_cast<volatile uint32_t*>(p) = 7;  // pinned host memory: the host writes it directly
    EXPECT_EQ(*reinterpret_cast<volatile uint32_t*>(p), 7u) << c.what;
    CU_EXPECT_OK(cuMemFreeAsync(p, nullptr)) << c.what;
    CU_EXPECT_OK(cuStreamSynchronize(nullptr));
    CU_EXPECT_OK(cuMemPoolDestroy(pool));
  }
}

// cuda.core keeps its CUtensorMap in an object that is 32- but not 64-byte aligned; driver 580 checks no host
// alignment of the map (offsets 4 to 48 mod 64 measured), only the global address and strides.
TEST_F(api_misc_Clients, TensorMapAtAnyHostAlignment) {
  conf::DeviceBuffer d(64 * 64 * 4);
  alignas(128) static unsigned char storage[256];
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * 4};
  cuuint32_t box[2] = {16, 16};
  cuuint32_t elem[2] = {1, 1};
  for (size_t offset : {4, 16, 32, 48}) {
    auto* map = reinterpret_cast<CUtensorMap*>(storage + offset);
    CU_EXPECT_OK(cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(d.ptr()), dims,
                                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
        << "map at " << offset << " mod 64";
    CU_EXPECT_OK(cuTensorMapReplaceAddress(map, reinterpret_cast<void*>(d.ptr() + 256))) << offset;
  }
}

// Managed graph allocations on a device are made (device memory: not reported as managed); host locations and
// managed memory without a location are NOT_SUPPORTED; other allocation types INVALID_VALUE.
TEST_F(api_graph_Clients, MemAllocNodeLocations) {
  struct Case {
    const char* what;
    CUmemAllocationType allocType;
    CUmemLocationType location;
    CUresult expected;
  };
  for (Case c :
       {Case{"managed on the device", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, CUDA_SUCCESS},
        Case{"managed, no location", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE,
             CUDA_ERROR_NOT_SUPPORTED},
        Case{"managed on the host", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST,
             CUDA_ERROR_NOT_SUPPORTED},
        Case{"pinned on the host", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, CUDA_ERROR_NOT_SUPPORTED},
        Case{"pinned on NUMA node 0", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA,
             CUDA_ERROR_NOT_SUPPORTED},
        Case{"invalid type", CU_MEM_ALLOCATION_TYPE_INVALID, CU_MEM_LOCATION_TYPE_DEVICE, CUDA_ERROR_INVALID_VALUE}}) {
    CUgraph graph = nullptr;
    CU_ASSERT_OK(cuGraphCreate(&graph, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    params.poolProps.allocType = c.allocType;
    params.poolProps.location.type = c.location;
    params.poolProps.location.id = 0;
    params.bytesize = 1 << 16;
    CUgraphNode node = nullptr;
    CU_EXPECT(c.expected, cuGraphAddMemAllocNode(&node, graph, nullptr, 0, &params)) << c.what;
    if (c.expected == CUDA_SUCCESS) {
      CUDA_MEM_ALLOC_NODE_PARAMS back{};
      CU_EXPECT_OK(cuGraphMemAllocNodeGetParams(node, &back));
      EXPECT_EQ(back.poolProps.allocType, CU_MEM_ALLOCATION_TYPE_MANAGED);
      CUgraphExec exec = nullptr;
      CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
      CU_EXPECT_OK(cuGraphLaunch(exec, nullptr));
      CU_EXPECT_OK(cuStreamSynchronize(nullptr));
      unsigned managed = 9, type = 0;
      CU_EXPECT_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, params.dptr));
      CU_EXPECT_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, params.dptr));
      EXPECT_EQ(managed, 0u);
      EXPECT_EQ(type, unsigned(CU_MEMORYTYPE_DEVICE));
      CU_EXPECT_OK(cuMemsetD32(params.dptr, 0xabcdef01u, 16));
      uint32_t word = 0;
      CU_EXPECT_OK(cuMemcpyDtoH(&word, params.dptr, 4));
      EXPECT_EQ(word, 0xabcdef01u);
      CU_EXPECT_OK(cuMemFree(params.dptr));
      CU_EXPECT_OK(cuGraphExecDestroy(exec));
    }
    CU_EXPECT_OK(cuGraphDestroy(graph));
  }
}

// Documented for graphs with memory nodes: their nodes cannot be deleted.
TEST_F(api_graph_Clients, NodesOfGraphWithMemoryNodesAreNotDeleted) {
  CUgraph graph = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  params.bytesize = 4096;
  CUgraphNode alloc = nullptr, empty = nullptr;
  CU_ASSERT_OK(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params));
  CU_ASSERT_OK(cuGraphAddEmptyNode(&empty, graph, &alloc, 1));
  CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, cuGraphDestroyNode(empty));
  size_t count = 0;
  CU_EXPECT_OK(cuGraphGetNodes(graph, nullptr, &count));
  EXPECT_EQ(count, 2u) << "the node is still there";
  CU_EXPECT_OK(cuGraphDestroy(graph));
}

// A conditional node takes a handle made for its own graph.
TEST_F(api_graph_Clients, ConditionalHandleOfAnotherGraph) {
  CUgraph a = nullptr, b = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&a, 0));
  CU_ASSERT_OK(cuGraphCreate(&b, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, a, ctx, 0, 0));
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = handle;
  params.conditional.type = CU_GRAPH_COND_TYPE_IF;
  params.conditional.size = 1;
  params.conditional.ctx = ctx;
  CUgraphNode node = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuGraphAddNode(&node, b, nullptr, nullptr, 0, &params));
  CUgraphNodeParams own = params;
  CU_EXPECT_OK(cuGraphAddNode(&node, a, nullptr, nullptr, 0, &own)) << "in its own graph";
  CU_EXPECT_OK(cuGraphDestroy(b));
  CU_EXPECT_OK(cuGraphDestroy(a));
}

// With CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH a relaunch takes back what the last launch left allocated.
TEST_F(api_graph_Clients, AutoFreeOnLaunchRelaunchesWithLiveAllocation) {
  CUgraph graph = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  params.bytesize = 4096;
  CUgraphNode alloc = nullptr;
  CU_ASSERT_OK(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params));
  CUgraphExec exec = nullptr;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
  CU_EXPECT_OK(cuGraphLaunch(exec, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuGraphLaunch(exec, nullptr)) << "the allocation of the first launch is still live";
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuMemsetD8(params.dptr, 1, 4096)) << "and usable after the second";
  CU_EXPECT_OK(cuMemFree(params.dptr));
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
  CU_EXPECT_OK(cuGraphDestroy(graph));
}

// The capture query hands out an edge-data array (plain edges: zeros) next to the dependencies.
TEST_F(api_stream_Clients, CaptureInfoEdgeData) {
  CUstream s = nullptr;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  conf::DeviceBuffer d(256);
  CU_ASSERT_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_ASSERT_OK(cuMemsetD8Async(d.ptr(), 1, 256, s));
  CUstreamCaptureStatus status{};
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t count = 0;
  CU_EXPECT_OK(cuStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, &edges, &count));
  EXPECT_EQ(count, 1u);
  ASSERT_NE(edges, nullptr);
  EXPECT_EQ(edges[0].type, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
  EXPECT_EQ(edges[0].from_port, 0);
  EXPECT_EQ(edges[0].to_port, 0);
  CUgraph graph = nullptr;
  CU_EXPECT_OK(cuStreamEndCapture(s, &graph));
  if (graph) cuGraphDestroy(graph);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// Managed pools (CU_MEM_ALLOCATION_TYPE_MANAGED) at each location, and the default pools of pinned host memory and
// managed memory that cuda.core's PinnedMemoryResource and ManagedMemoryResource take.
TEST_F(api_memory_ClientsHostPool, ManagedAndHostDefaultPools) {
  struct Case {
    const char* what;
    CUmemAllocationType type;
    CUmemLocationType location;
    unsigned memoryType;
  };
  for (Case c : {Case{"managed, no location", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE, 0},
                 Case{"managed on the device", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
                 Case{"managed on the host", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST, 0},
                 Case{"pinned host", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, CU_MEMORYTYPE_HOST},
                 Case{"pinned NUMA node 0", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA,
                      CU_MEMORYTYPE_HOST}}) {
    CUmemLocation location{c.location, 0};
    CUmemoryPool current = nullptr, byDefault = nullptr;
    CU_EXPECT_OK(cuMemGetMemPool(&current, &location, c.type)) << c.what;
    CU_EXPECT_OK(cuMemGetDefaultMemPool(&byDefault, &location, c.type)) << c.what;
    EXPECT_EQ(current, byDefault) << c.what;
    CUmemPoolProps props = PoolProps(c.location, 0, CU_MEM_HANDLE_TYPE_NONE);
    props.allocType = c.type;
    CUmemoryPool pool = nullptr;
    CU_EXPECT_OK(cuMemPoolCreate(&pool, &props)) << c.what;
    if (!pool) continue;
    CUdeviceptr p = 0;
    CU_EXPECT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr)) << c.what;
    CU_EXPECT_OK(cuStreamSynchronize(nullptr));
    unsigned managed = 9;
    CU_EXPECT_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p)) << c.what;
    EXPECT_EQ(managed, c.type == CU_MEM_ALLOCATION_TYPE_MANAGED ? 1u : 0u) << c.what;
    if (c.memoryType) {
      unsigned type = 0;
      CU_EXPECT_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)) << c.what;
      EXPECT_EQ(type, c.memoryType) << c.what;
    }
    *reinterpret_cast<volatile uint32_t*>(p) = 5;  // managed and pinned host memory: the host writes it directly
    EXPECT_EQ(*reinterpret_cast<volatile uint32_t*>(p), 5u) << c.what;
    CU_EXPECT_OK(cuMemFreeAsync(p, nullptr)) << c.what;
    CU_EXPECT_OK(cuStreamSynchronize(nullptr));
    CU_EXPECT_OK(cuMemPoolDestroy(pool)) << c.what;
  }
  CUmemLocation numa7{CU_MEM_LOCATION_TYPE_HOST_NUMA, 7};
  CUmemoryPool pool = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemGetMemPool(&pool, &numa7, CU_MEM_ALLOCATION_TYPE_PINNED))
      << "no NUMA node 7";
}

// A maximum size below one 2 MiB chunk limits nothing: a 2 KiB pool serves two 64-byte allocations and 4 MiB (the
// H100 of 2026-11-26 answered CUDA_SUCCESS for the 4 MiB, where this case first expected OUT_OF_MEMORY).
TEST_F(api_memory_ClientsHostPool, SmallMaximumSize) {
  CUmemPoolProps props = PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
  props.maxSize = 2048;
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr a = 0, b = 0, big = 0;
  CU_EXPECT_OK(cuMemAllocFromPoolAsync(&a, 64, pool, nullptr));
  CU_EXPECT_OK(cuMemAllocFromPoolAsync(&b, 64, pool, nullptr));
  CU_EXPECT_OK(cuMemAllocFromPoolAsync(&big, size_t(4) << 20, pool, nullptr)) << "more than the maximum";
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
  CU_EXPECT_OK(cuMemFree(big));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

// The dynamic shared memory a block may have never exceeds the function's limit (48 KiB unless raised).
TEST_F(api_launch_Clients, AvailableDynamicSharedFollowsFunctionLimit) {
  CUmodule mod = nullptr;
  CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
  CUfunction f = nullptr;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  size_t bytes = 0;
  CU_EXPECT_OK(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256));
  EXPECT_EQ(bytes, size_t{49152}) << "one block of 256 threads, no opt-in";
  CU_EXPECT_OK(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 4, 32));
  EXPECT_LE(bytes, size_t{49152});
  CU_ASSERT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
  CU_EXPECT_OK(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256));
  EXPECT_EQ(bytes, size_t{100000}) << "raised limit";
  CU_EXPECT_OK(cuModuleUnload(mod));
}

// cuKernelGetParamInfo answers in a context only.
TEST_F(api_module_ClientsCore, KernelParamInfoNeedsContext) {
  CUlibrary lib = nullptr;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k = nullptr;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "vadd_f32"));
  size_t offset = 9, size = 0;
  CU_EXPECT_OK(cuKernelGetParamInfo(k, 1, &offset, &size));
  EXPECT_EQ(offset, 8u);
  EXPECT_EQ(size, 8u);
  CUcontext popped = nullptr;
  CU_ASSERT_OK(cuCtxPopCurrent(&popped));
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuKernelGetParamInfo(k, 1, &offset, &size));
  CU_ASSERT_OK(cuCtxPushCurrent(popped));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

}  // namespace
