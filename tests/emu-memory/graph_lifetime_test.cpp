// Lifetimes that cuda.core's own tests rely on (tools/clients, issue 17): memory a graph launch leaves to the
// application outlives the graph; a child graph's copy, and the user objects it holds, end with its parent; a
// launch keeps its graph's user objects until its work is done.
#include "fixture.h"

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace {

std::atomic<int> destroyed{0};
void countDestroy(void*) { destroyed.fetch_add(1); }

CUDA_MEM_ALLOC_NODE_PARAMS deviceAllocation(size_t bytes) {
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  params.bytesize = bytes;
  return params;
}

uint64_t graphMemoryInUse() {
  cuuint64_t used = 0;
  EXPECT_EQ(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  return used;
}

TEST_F(MemoryTest, GraphAllocationLeftToApplicationOutlivesItsGraph) {
  ASSERT_EQ(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
  uint64_t before = graphMemoryInUse();
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS params = deviceAllocation(4096);
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddMemAllocNode(&node, graph, nullptr, 0, &params), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8_v2(params.dptr, 7, 4096), CUDA_SUCCESS) << "still allocated after its graph is gone";
  EXPECT_GT(graphMemoryInUse(), before) << "and counted";
  ASSERT_EQ(cuMemFree_v2(params.dptr), CUDA_SUCCESS);
  EXPECT_GT(graphMemoryInUse(), before) << "freed memory stays counted until a trim";
  ASSERT_EQ(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
  EXPECT_EQ(graphMemoryInUse(), before);
}

// Freed by the application, a graph allocation keeps its addresses while the graph lives: with every other address
// of the range taken (the next-fit allocator wraps to freed ranges only once the rest is used up), none lands on
// it, its memory faults as freed memory does, and the next launch allocates it there again. Destroyed, the graph
// gives the addresses back. cuemu returned them at the free, and the launch failed with CUDA_ERROR_OUT_OF_MEMORY.
TEST_F(MemoryTest, GraphAllocationFreedByTheApplicationKeepsItsAddresses) {
  constexpr size_t kBytes = 4 << 20;
  CUcontext ctx = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS params = deviceAllocation(kBytes);
  CUgraphNode alloc = nullptr, set = nullptr;
  ASSERT_EQ(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params), CUDA_SUCCESS);
  const CUdeviceptr p = params.dptr;
  CUDA_MEMSET_NODE_PARAMS memset{};
  memset.dst = p;
  memset.value = 0x5a;
  memset.elementSize = 1;
  memset.width = 4096;
  memset.height = 1;
  ASSERT_EQ(cuGraphAddMemsetNode(&set, graph, &alloc, 1, &memset, ctx), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(p, 1)) << "freed memory faults";

  // Every address range that is free, largest first, down to the reservation granule.
  std::vector<std::pair<CUdeviceptr, size_t>> reservations;
  for (size_t bytes = size_t(512) << 30; bytes >= (size_t(2) << 20); bytes /= 2) {
    CUdeviceptr r = 0;
    while (reservations.size() < 100000 && cuMemAddressReserve(&r, bytes, 0, 0, 0) == CUDA_SUCCESS)
      reservations.emplace_back(r, bytes);
  }
  ASSERT_LT(reservations.size(), 100000u);
  for (auto [r, bytes] : reservations) EXPECT_FALSE(r < p + kBytes && p < r + bytes) << "reservation at " << r;

  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS) << "allocated again at its addresses";
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  unsigned got = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&got, p, 4), CUDA_SUCCESS);
  EXPECT_EQ(got, 0x5a5a5a5au);
  for (auto [r, bytes] : reservations) ASSERT_EQ(cuMemAddressFree(r, bytes), CUDA_SUCCESS);

  ASSERT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);  // the last hold on the allocation
  CUdeviceptr hinted = 0;
  ASSERT_EQ(cuMemAddressReserve(&hinted, kBytes, 0, p, 0), CUDA_SUCCESS);
  EXPECT_EQ(hinted, p) << "the addresses are free once the graph is gone";
  EXPECT_EQ(cuMemAddressFree(hinted, kBytes), CUDA_SUCCESS);
}

TEST_F(MemoryTest, ChildGraphCopyReleasesUserObjectsWithItsParent) {
  destroyed = 0;
  CUgraph inner = nullptr, outer = nullptr;
  ASSERT_EQ(cuGraphCreate(&inner, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphCreate(&outer, 0), CUDA_SUCCESS);
  CUuserObject object = nullptr;
  int payload = 0;
  ASSERT_EQ(cuUserObjectCreate(&object, &payload, countDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphRetainUserObject(inner, object, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  CUgraphNode child = nullptr;
  ASSERT_EQ(cuGraphAddChildGraphNode(&child, outer, nullptr, 0, inner), CUDA_SUCCESS);
  CUgraph copy = nullptr;
  ASSERT_EQ(cuGraphChildGraphNodeGetGraph(child, &copy), CUDA_SUCCESS);  // hands out the copy's handle
  ASSERT_EQ(cuGraphDestroy(inner), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 0) << "the child copy still holds a reference";
  ASSERT_EQ(cuGraphDestroy(outer), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 1) << "the copy went with its parent";
}

TEST_F(MemoryTest, LaunchKeepsUserObjectsUntilItsWorkIsDone) {
  destroyed = 0;
  static std::atomic<bool> release{false};
  release = false;
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS host{};
  host.fn = [](void*) {
    while (!release.load()) std::this_thread::yield();
  };
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddHostNode(&node, graph, nullptr, 0, &host), CUDA_SUCCESS);
  CUuserObject object = nullptr;
  int payload = 0;
  ASSERT_EQ(cuUserObjectCreate(&object, &payload, countDestroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 0) << "the launch still runs";
  release = true;
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 1) << "released once the launch's work is done";
}

}  // namespace

// A conditional handle serves one node, and a graph whose handle no node uses does not instantiate (driver 580:
// tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt).
TEST_F(MemoryTest, ConditionalHandleServesOneNode) {
  CUcontext ctx = context_->apiHandle();
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUgraphConditionalHandle handle = 0;
  ASSERT_EQ(cuGraphConditionalHandleCreate(&handle, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  EXPECT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_ERROR_INVALID_VALUE) << "unused handle";
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = handle;
  params.conditional.type = CU_GRAPH_COND_TYPE_IF;
  params.conditional.size = 1;
  params.conditional.ctx = ctx;
  CUgraphNode node = nullptr, second = nullptr;
  ASSERT_EQ(cuGraphAddNode(&node, graph, nullptr, 0, &params), CUDA_SUCCESS);
  CUgraphNodeParams again = params;
  EXPECT_EQ(cuGraphAddNode(&second, graph, nullptr, 0, &again), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  // Removing the node frees the handle for another node.
  ASSERT_EQ(cuGraphDestroyNode(node), CUDA_SUCCESS);
  CUgraphNodeParams third = params;
  EXPECT_EQ(cuGraphAddNode(&second, graph, nullptr, 0, &third), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
}
