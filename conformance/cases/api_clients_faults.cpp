// Issue 17's last differences from driver 580, measured on an H100: kernels that touch a pinned host pool's
// memory without access and kernels that set another graph's conditional handle fault
// (tools/gpu-probe/results/clients17c-h100-2026-11-26.txt); VMM memory on the host, VMM pointer attributes, fabric
// allocations and the VMM entry points after a kernel fault (tools/gpu-probe/results/vmm17-h100-2026-11-27.txt).
#include "harness.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

namespace {

// store(p, v): *p = v (one thread). set_cond(handle, v): cudaGraphSetConditional(handle, v) (thread 0).
constexpr const char* kPtx = R"(.version 8.0
.target sm_52
.address_size 64
.extern .func cudaGraphSetConditional(.param .b64 cudaGraphSetConditional_param_0,
                                      .param .b32 cudaGraphSetConditional_param_1);
.visible .entry store(.param .u64 p, .param .u32 v)
{
  .reg .u64 %a;
  .reg .u32 %x;
  ld.param.u64 %a, [p];
  ld.param.u32 %x, [v];
  st.global.u32 [%a], %x;
  ret;
}
.visible .entry set_cond(.param .u64 handle, .param .u32 v)
{
  .reg .u64 %h;
  .reg .u32 %x;
  ld.param.u64 %h, [handle];
  ld.param.u32 %x, [v];
  {
  .param .b64 param0;
  st.param.b64 [param0], %h;
  .param .b32 param1;
  st.param.b32 [param1], %x;
  call.uni cudaGraphSetConditional, (param0, param1);
  }
  ret;
}
)";

class ClientsFaultsTest : public conf::ContextTest {
 public:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuModuleLoadData(&mod, kPtx));
    CU_ASSERT_OK(cuModuleGetFunction(&store, mod, "store"));
    CU_ASSERT_OK(cuModuleGetFunction(&setCond, mod, "set_cond"));
  }
  CUresult Store(CUdeviceptr p, unsigned v) {
    void* args[] = {&p, &v};
    return cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  }
  CUmodule mod = nullptr;
  CUfunction store = nullptr, setCond = nullptr;
};

CUmemPoolProps HostPoolProps(CUmemLocationType type) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.location.type = type;
  p.location.id = 0;
  return p;
}

// ---- pinned host pools: kernels need the device's access ---------------------------------------------------

using api_memory_ClientsHostPoolKernel = ClientsFaultsTest;
class api_memory_ClientsHostPoolKernel_Faults : public ClientsFaultsTest {
 protected:
  void KernelWithoutAccess(CUmemLocationType type) {
    CUmemPoolProps props = HostPoolProps(type);
    CUmemoryPool pool = nullptr;
    CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
    CUdeviceptr p = 0;
    CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
    CU_ASSERT_OK(cuStreamSynchronize(nullptr));
    CU_EXPECT_OK(Store(p, 5));
    CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  }
};

TEST_F(api_memory_ClientsHostPoolKernel_Faults, HostLocationWithoutDeviceAccess) {
  KernelWithoutAccess(CU_MEM_LOCATION_TYPE_HOST);
}
TEST_F(api_memory_ClientsHostPoolKernel_Faults, HostNumaLocationWithoutDeviceAccess) {
  KernelWithoutAccess(CU_MEM_LOCATION_TYPE_HOST_NUMA);
}

// Access granted after an allocation was made reaches it, and allocations made afterwards.
TEST_F(api_memory_ClientsHostPoolKernel, AccessGrantedReachesEveryAllocation) {
  CUmemPoolProps props = HostPoolProps(CU_MEM_LOCATION_TYPE_HOST);
  CUmemoryPool pool = nullptr;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr before = 0, after = 0;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&before, 4096, pool, nullptr));
  CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_ASSERT_OK(cuMemPoolSetAccess(pool, &access, 1));
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&after, 1 << 20, pool, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(Store(before + 8, 11));
  CU_EXPECT_OK(Store(after + 4096, 12));
  CU_ASSERT_OK(cuCtxSynchronize());
  EXPECT_EQ(reinterpret_cast<volatile unsigned*>(before)[2], 11u);
  EXPECT_EQ(reinterpret_cast<volatile unsigned*>(after)[1024], 12u);
  CU_EXPECT_OK(cuMemFreeAsync(before, nullptr));
  CU_EXPECT_OK(cuMemFreeAsync(after, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

// ---- cudaGraphSetConditional: only a kernel of the handle's executable graph may set it -------------------------

CUresult AddIfNode(CUgraph graph, const CUgraphNode* dependency, CUgraphConditionalHandle handle, CUcontext ctx,
                   CUdeviceptr slot) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = handle;
  p.conditional.type = CU_GRAPH_COND_TYPE_IF;
  p.conditional.size = 1;
  p.conditional.ctx = ctx;
  CUgraphNode node = nullptr;
  if (CUresult r = cuGraphAddNode(&node, graph, dependency, nullptr, dependency ? 1 : 0, &p)) return r;
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = slot;
  m.value = 42;
  m.elementSize = 4;
  m.width = m.height = 1;
  CUgraphNode memset = nullptr;
  return cuGraphAddMemsetNode(&memset, p.conditional.phGraph_out[0], nullptr, 0, &m, ctx);
}

CUresult AddSetNode(CUgraphNode* node, CUgraph graph, CUfunction setCond, CUgraphConditionalHandle* handle,
                    unsigned* value) {
  void* args[] = {handle, value};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = setCond;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  return cuGraphAddKernelNode(node, graph, nullptr, 0, &kp);
}

CUresult LaunchGraph(CUgraph graph) {
  CUgraphExec exec = nullptr;
  if (CUresult r = cuGraphInstantiate(&exec, graph, 0)) return r;
  if (CUresult r = cuGraphLaunch(exec, nullptr)) return r;
  return cuCtxSynchronize();
}

using api_graph_ClientsConditionalSet = ClientsFaultsTest;
using api_graph_ClientsConditionalSet_Faults = ClientsFaultsTest;

// The kernel before the conditional node in the handle's own graph sets it: the body runs.
TEST_F(api_graph_ClientsConditionalSet, KernelOfTheHandlesGraph) {
  conf::DeviceBuffer slot(4);
  CU_ASSERT_OK(cuMemsetD32(slot.ptr(), 0, 1));
  CUgraph graph = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
  unsigned one = 1;
  CUgraphNode set = nullptr;
  CU_ASSERT_OK(AddSetNode(&set, graph, setCond, &handle, &one));
  CU_ASSERT_OK(AddIfNode(graph, &set, handle, ctx, slot.ptr()));
  CU_EXPECT_OK(LaunchGraph(graph));
  unsigned wrote = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&wrote, slot.ptr(), 4));
  EXPECT_EQ(wrote, 42u);
}

// The same kernel in a child graph embedded before the conditional node: one executable graph, the body runs.
TEST_F(api_graph_ClientsConditionalSet_Faults, KernelOfAChildGraphOfTheHandlesGraph) {
  conf::DeviceBuffer slot(4);
  CU_ASSERT_OK(cuMemsetD32(slot.ptr(), 0, 1));
  CUgraph graph = nullptr, child = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&graph, 0));
  CU_ASSERT_OK(cuGraphCreate(&child, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
  unsigned one = 1;
  CUgraphNode set = nullptr, embedded = nullptr;
  CU_ASSERT_OK(AddSetNode(&set, child, setCond, &handle, &one));
  CU_ASSERT_OK(cuGraphAddChildGraphNode(&embedded, graph, nullptr, 0, child));
  CU_ASSERT_OK(AddIfNode(graph, &embedded, handle, ctx, slot.ptr()));
  CU_EXPECT_OK(LaunchGraph(graph));
  unsigned wrote = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&wrote, slot.ptr(), 4));
  EXPECT_EQ(wrote, 42u);
}

// A kernel of graph B sets a handle of graph A: the launch of B faults (and poisons the context).
TEST_F(api_graph_ClientsConditionalSet_Faults, KernelOfAnotherGraph) {
  conf::DeviceBuffer slot(4);
  CUgraph a = nullptr, b = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&a, 0));
  CU_ASSERT_OK(cuGraphCreate(&b, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, a, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CU_ASSERT_OK(AddIfNode(a, nullptr, handle, ctx, slot.ptr()));
  unsigned one = 1;
  CUgraphNode set = nullptr;
  CU_ASSERT_OK(AddSetNode(&set, b, setCond, &handle, &one));
  CUgraphExec exec = nullptr;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, b, 0));
  CU_EXPECT_OK(cuGraphLaunch(exec, nullptr));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize()) << "sticky";
}

// A kernel launched into a stream (no graph) sets a handle: it faults.
TEST_F(api_graph_ClientsConditionalSet_Faults, KernelInAStream) {
  CUgraph a = nullptr;
  CU_ASSERT_OK(cuGraphCreate(&a, 0));
  CUgraphConditionalHandle handle = 0;
  CU_ASSERT_OK(cuGraphConditionalHandleCreate(&handle, a, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
  unsigned one = 1;
  void* args[] = {&handle, &one};
  CU_EXPECT_OK(cuLaunchKernel(setCond, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
}

// ---- VMM: physical memory on the host -----------------------------------------------------------------------

CUmemAllocationProp VmmProp(CUmemLocationType type, int id, unsigned handles = CU_MEM_HANDLE_TYPE_NONE) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = type;
  p.location.id = id;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handles);
  return p;
}

template <typename T> T PointerAttribute(CUpointer_attribute attribute, CUdeviceptr p, CUresult* result) {
  T value{};
  *result = cuPointerGetAttribute(&value, attribute, p);
  return value;
}

// The attribute, expected to be answered.
template <typename T> T AnsweredAttribute(CUpointer_attribute attribute, CUdeviceptr p) {
  CUresult r = CUDA_SUCCESS;
  T value = PointerAttribute<T>(attribute, p, &r);
  EXPECT_EQ(r, CUDA_SUCCESS) << "attribute " << int(attribute);
  return value;
}

using api_memory_ClientsVmmHost = ClientsFaultsTest;

// cuMemCreate on the host (HOST with any id, HOST_NUMA node 0): 2 MiB granules, reported as HOST_NUMA node 0;
// neither the host nor a device reaches the mapping until cuMemSetAccess grants it; then it is host memory that
// kernels, copies and memsets use.
void CheckHostVmm(ClientsFaultsTest& test, CUmemLocationType type, int id) {
  CUmemAllocationProp prop = VmmProp(type, id);
  size_t minimum = 0, recommended = 0;
  CU_ASSERT_OK(cuMemGetAllocationGranularity(&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CU_ASSERT_OK(cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_EQ(minimum, size_t{2} << 20);
  EXPECT_EQ(recommended, size_t{2} << 20);
  const size_t size = size_t{2} << 20;
  CUmemGenericAllocationHandle handle = 0, small = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&small, size / 2, &prop, 0));
  CU_ASSERT_OK(cuMemCreate(&handle, size, &prop, 0));
  CUmemAllocationProp got{};
  CU_ASSERT_OK(cuMemGetAllocationPropertiesFromHandle(&got, handle));
  EXPECT_EQ(got.location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(got.location.id, 0);
  EXPECT_EQ(unsigned(got.requestedHandleTypes), 0u);
  CUdeviceptr va = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, size, 0, 0, 0));
  CU_ASSERT_OK(cuMemMap(va, size, 0, handle, 0));
  CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0}, host{CU_MEM_LOCATION_TYPE_HOST, 0};
  unsigned long long flags = 99;
  CU_EXPECT_OK(cuMemGetAccess(&flags, &device, va));
  EXPECT_EQ(flags, 0u);
  flags = 99;
  CU_EXPECT_OK(cuMemGetAccess(&flags, &host, va));
  EXPECT_EQ(flags, 0u);
  CUmemAccessDesc hostAccess{host, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_EXPECT_OK(cuMemSetAccess(va, size, &hostAccess, 1));
  CUmemAccessDesc numaAccess{{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_EXPECT_OK(cuMemSetAccess(va, size, &numaAccess, 1));
  CU_EXPECT_OK(cuMemGetAccess(&flags, &host, va));
  EXPECT_EQ(flags, 3u);
  reinterpret_cast<volatile unsigned*>(va)[0] = 0x1234;
  CUmemAccessDesc deviceAccess{device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_ASSERT_OK(cuMemSetAccess(va, size, &deviceAccess, 1));
  CU_EXPECT_OK(cuMemGetAccess(&flags, &device, va));
  EXPECT_EQ(flags, 3u);
  CU_EXPECT_OK(cuMemsetD32(va + 4, 0x55, 1));
  unsigned back[2] = {};
  CU_EXPECT_OK(cuMemcpyDtoH(back, va, 8));
  EXPECT_EQ(back[0], 0x1234u);
  EXPECT_EQ(back[1], 0x55u);
  CUresult r = CUDA_SUCCESS;
  EXPECT_EQ(PointerAttribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va, &r), unsigned(CU_MEMORYTYPE_HOST));
  CU_EXPECT_OK(r);
  EXPECT_EQ(PointerAttribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, va, &r), va);
  CU_EXPECT_OK(r);
  EXPECT_EQ(PointerAttribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_HOST_POINTER, va, &r), va);
  CU_EXPECT_OK(r);
  EXPECT_EQ(PointerAttribute<CUcontext>(CU_POINTER_ATTRIBUTE_CONTEXT, va, &r), nullptr);
  CU_EXPECT_OK(r);
  EXPECT_EQ(PointerAttribute<size_t>(CU_POINTER_ATTRIBUTE_RANGE_SIZE, va, &r), size);
  EXPECT_EQ(PointerAttribute<unsigned>(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, va, &r), 0u);
  EXPECT_EQ(PointerAttribute<int>(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va, &r), 0);
  CUdeviceptr base = 1;
  size_t rangeSize = 1;
  CU_EXPECT_OK(cuMemGetAddressRange(&base, &rangeSize, va + 16));
  EXPECT_EQ(base, CUdeviceptr{0}) << "driver 580 answers base 0 for host VMM memory";
  EXPECT_EQ(rangeSize, size);
  CU_EXPECT_OK(test.Store(va + 8, 0xabcd));
  CU_EXPECT_OK(cuCtxSynchronize());
  EXPECT_EQ(reinterpret_cast<volatile unsigned*>(va)[2], 0xabcdu);
  CU_EXPECT_OK(cuMemUnmap(va, size));
  CU_EXPECT_OK(cuMemRelease(handle));
  CU_EXPECT_OK(cuMemAddressFree(va, size));
}

TEST_F(api_memory_ClientsVmmHost, HostLocation) { CheckHostVmm(*this, CU_MEM_LOCATION_TYPE_HOST, 0); }
TEST_F(api_memory_ClientsVmmHost, HostLocationOtherId) { CheckHostVmm(*this, CU_MEM_LOCATION_TYPE_HOST, 1); }
TEST_F(api_memory_ClientsVmmHost, HostNumaLocation) { CheckHostVmm(*this, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0); }

TEST_F(api_memory_ClientsVmmHost, NumaCurrentHasAGranularityButNoAllocation) {
  CUmemAllocationProp prop = VmmProp(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0);
  size_t granularity = 0;
  CU_EXPECT_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_EQ(granularity, size_t{2} << 20);
  CUmemGenericAllocationHandle handle = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&handle, size_t{2} << 20, &prop, 0));
}

// ---- VMM pointer attributes ----------------------------------------------------------------------------------

using api_memory_ClientsVmmAttributes = ClientsFaultsTest;

// A device VMM mapping: its range is the whole reservation; it reports the handle types its allocation was made
// with; SYNC_MEMOPS is 0 and cannot be set; before cuMemSetAccess it has no device pointer and no address range.
TEST_F(api_memory_ClientsVmmAttributes, ReservationRangeHandleTypesAndSyncMemops) {
  for (unsigned handles : {unsigned(CU_MEM_HANDLE_TYPE_NONE), unsigned(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)}) {
    SCOPED_TRACE(handles);
    CUmemAllocationProp prop = VmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0, handles);
    const size_t size = size_t{2} << 20;
    CUmemGenericAllocationHandle handle = 0;
    CU_ASSERT_OK(cuMemCreate(&handle, size, &prop, 0));
    CUdeviceptr va = 0;
    CU_ASSERT_OK(cuMemAddressReserve(&va, 2 * size, 0, 0, 0));
    CU_ASSERT_OK(cuMemMap(va, size, 0, handle, 0));
    CUresult r = CUDA_SUCCESS;
    PointerAttribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, va, &r);
    CU_EXPECT(CUDA_ERROR_INVALID_VALUE, r) << "no access yet";
    EXPECT_EQ(PointerAttribute<int>(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, va, &r), 0);
    CUdeviceptr base = 1;
    size_t rangeSize = 1;
    CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &rangeSize, va + 16));
    EXPECT_EQ(base, CUdeviceptr{0});
    EXPECT_EQ(rangeSize, size_t{0});
    CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CU_ASSERT_OK(cuMemSetAccess(va, size, &access, 1));
    EXPECT_EQ(PointerAttribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, va + size - 4, &r), va + size - 4);
    CU_EXPECT_OK(r);
    EXPECT_EQ(PointerAttribute<CUdeviceptr>(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + size - 4, &r), va);
    EXPECT_EQ(PointerAttribute<size_t>(CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + size - 4, &r), 2 * size);
    EXPECT_EQ(PointerAttribute<size_t>(CU_POINTER_ATTRIBUTE_MAPPING_SIZE, va + size - 4, &r), size);
    EXPECT_EQ(PointerAttribute<unsigned>(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, va, &r), handles);
    EXPECT_EQ(PointerAttribute<unsigned>(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va, &r), unsigned(CU_MEMORYTYPE_DEVICE));
    CU_EXPECT_OK(cuMemGetAddressRange(&base, &rangeSize, va + 16));
    EXPECT_EQ(base, va);
    EXPECT_EQ(rangeSize, size);
    unsigned one = 1;
    CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va));
    EXPECT_EQ(PointerAttribute<int>(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va, &r), 0);
    CU_EXPECT_OK(r);
    CUpointer_attribute list[] = {CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned allowed = 0xdead, sync = 0xdead;
    size_t range = 0;
    void* data[] = {&allowed, &sync, &range};
    CU_EXPECT_OK(cuPointerGetAttributes(3, list, data, va));
    EXPECT_EQ(allowed, handles);
    EXPECT_EQ(sync, 0u);
    EXPECT_EQ(range, 2 * size);
    CU_EXPECT_OK(cuMemUnmap(va, size));
    CU_EXPECT_OK(cuMemRelease(handle));
    CU_EXPECT_OK(cuMemAddressFree(va, 2 * size));
  }
}

// Fabric handles need an IMEX channel: without one, cuMemCreate refuses them.
TEST_F(api_memory_ClientsVmmAttributes, FabricCreationNotPermitted) {
  for (unsigned handles : {unsigned(CU_MEM_HANDLE_TYPE_FABRIC),
                           unsigned(CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)}) {
    CUmemAllocationProp prop = VmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0, handles);
    CUmemGenericAllocationHandle handle = 0;
    CU_EXPECT(CUDA_ERROR_NOT_PERMITTED, cuMemCreate(&handle, size_t{2} << 20, &prop, 0)) << handles;
  }
}

// cuMemAlloc, managed and stream-ordered pool memory: what differs by kind (GPUDirect RDMA, SYNC_MEMOPS before a
// set, the 2 MiB mapping of a small allocation, no context for pool memory), and a failed host-pointer query
// writing null.
TEST_F(api_memory_ClientsVmmAttributes, AllocatedMemoryByKind) {
  CUdeviceptr device = 0, managed = 0, pooled = 0;
  CU_ASSERT_OK(cuMemAlloc(&device, 4096));
  CU_ASSERT_OK(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
  CU_ASSERT_OK(cuMemAllocAsync(&pooled, 4096, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  EXPECT_EQ(AnsweredAttribute<int>(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, device), 1);
  EXPECT_EQ(AnsweredAttribute<int>(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, managed), 0);
  EXPECT_EQ(AnsweredAttribute<int>(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, pooled), 0);
  EXPECT_EQ(AnsweredAttribute<int>(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, device), 0);
  EXPECT_EQ(AnsweredAttribute<int>(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, managed), 1);
  EXPECT_EQ(AnsweredAttribute<CUcontext>(CU_POINTER_ATTRIBUTE_CONTEXT, pooled), nullptr);
  EXPECT_NE(AnsweredAttribute<CUcontext>(CU_POINTER_ATTRIBUTE_CONTEXT, device), nullptr);
  for (CUdeviceptr p : {device, managed}) {
    const size_t mapping = AnsweredAttribute<size_t>(CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p);
    const auto base =
        reinterpret_cast<CUdeviceptr>(AnsweredAttribute<void*>(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p));
    EXPECT_EQ(mapping, size_t{2} << 20);
    EXPECT_LE(base, p);
    EXPECT_LT(p, base + mapping);
  }
  void* host = reinterpret_cast<void*>(0xdead);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, device));
  EXPECT_EQ(host, nullptr);
  CU_EXPECT_OK(cuMemFreeAsync(pooled, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuMemFree(managed));
  CU_EXPECT_OK(cuMemFree(device));
}

// ---- VMM after a kernel fault: the VMM entry points and pointer queries still answer --------------------------

using api_memory_ClientsVmm_Faults = ClientsFaultsTest;

TEST_F(api_memory_ClientsVmm_Faults, VmmEntryPointsAfterAKernelFault) {
  CUdeviceptr a = 0;
  CU_ASSERT_OK(cuMemAlloc(&a, 4096));
  CUmemAllocationProp prop = VmmProp(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  const size_t size = size_t{2} << 20;
  CUmemGenericAllocationHandle handle = 0, second = 0, retained = 0;
  CU_ASSERT_OK(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr va = 0, va2 = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, 4 * size, 0, 0, 0));
  CU_ASSERT_OK(cuMemMap(va, size, 0, handle, 0));
  CUmemAccessDesc access{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CU_ASSERT_OK(cuMemSetAccess(va, size, &access, 1));
  CU_EXPECT_OK(Store(8, 1));
  CU_ASSERT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  size_t granularity = 0;
  CU_EXPECT_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CU_EXPECT_OK(cuMemCreate(&second, size, &prop, 0));
  CU_EXPECT_OK(cuMemMap(va + size, size, 0, second, 0));
  CU_EXPECT_OK(cuMemMap(va + 2 * size, size, 0, handle, 0));
  CU_EXPECT_OK(cuMemSetAccess(va + size, size, &access, 1));
  CU_EXPECT_OK(cuMemSetAccess(va, size, &access, 1));
  unsigned long long flags = 0;
  CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CU_EXPECT_OK(cuMemGetAccess(&flags, &device, va));
  EXPECT_EQ(flags, 3u);
  CU_EXPECT_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va)));
  CUmemAllocationProp got{};
  CU_EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&got, handle));
  CU_EXPECT_OK(cuMemAddressReserve(&va2, size, 0, 0, 0));
  unsigned memoryType = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a));
  CU_EXPECT_OK(cuMemUnmap(va, size));
  CU_EXPECT_OK(cuMemUnmap(va + size, size));
  CU_EXPECT_OK(cuMemUnmap(va + 2 * size, size));
  CU_EXPECT_OK(cuMemRelease(handle));
  CU_EXPECT_OK(cuMemRelease(retained));
  CU_EXPECT_OK(cuMemRelease(second));
  CU_EXPECT_OK(cuMemAddressFree(va, 4 * size));
  CU_EXPECT_OK(cuMemAddressFree(va2, size));
  // Other memory entry points keep answering the fault.
  CUdeviceptr b = 0;
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemAlloc(&b, 4096));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemcpyHtoD(a, &granularity, 4));
}

}  // namespace
