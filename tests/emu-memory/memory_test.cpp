// Address space, allocation, accounting, pointer attributes.
#include "fixture.h"

#include "core/address_space.h"
#include "core/memory.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

using cuemu::AddressSpace;

namespace {

bool accessible(CUdeviceptr p, size_t n) { return AddressSpace::instance().isAccessible(p, n); }

TEST_F(MemoryTest, AllocationsAreAlignedDistinctAndExactlyAccessible) {
  ExactBounds exact;
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&b, 100), CUDA_SUCCESS);
  EXPECT_NE(a, b);
  EXPECT_EQ(a % 256, 0u);
  EXPECT_EQ(b % 256, 0u);
  EXPECT_TRUE(accessible(a, 100));
  EXPECT_TRUE(accessible(a + 99, 1));
  EXPECT_FALSE(accessible(a + 100, 1));  // one past the end
  EXPECT_FALSE(accessible(a + 96, 8));   // straddles the end
  EXPECT_FALSE(accessible(a - 1, 1));    // guard below
  EXPECT_FALSE(accessible(0, 1));
  EXPECT_FALSE(accessible(reinterpret_cast<uint64_t>(&a), 8));  // the stack is not device memory
  // The host can use the memory directly (device pointers are host addresses).
  std::memset(reinterpret_cast<void*>(a), 0x5A, 100);
  EXPECT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
  EXPECT_FALSE(accessible(a, 1));
  EXPECT_EQ(cuMemFree_v2(b), CUDA_SUCCESS);
}

TEST_F(MemoryTest, LargeAllocationsAccessibleAcrossChunks) {
  ExactBounds exact;
  CUdeviceptr p = 0;
  size_t size = (size_t(5) << 20) + 123;
  ASSERT_EQ(cuMemAlloc_v2(&p, size), CUDA_SUCCESS);
  EXPECT_EQ(p % (2 << 20), 0u);
  EXPECT_TRUE(accessible(p, size));
  EXPECT_TRUE(accessible(p + size - 4, 4));
  EXPECT_TRUE(accessible(p + (1 << 20) + 7, 64));
  EXPECT_FALSE(accessible(p + size - 3, 4));
  EXPECT_FALSE(accessible(p, size + 1));
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

// The default: kernels may touch an allocation to the end of its mapping granule, as on a GPU (an H100 does not
// fault 24 bytes past a 40-byte allocation, nor 1 MiB past a 3 MiB one; it faults 1 MiB past the 2 MiB-rounded
// end of a 3 MiB allocation).
TEST_F(MemoryTest, DefaultBoundsFollowTheMappingGranule) {
  ASSERT_EQ(AddressSpace::instance().boundsMode(), cuemu::BoundsMode::Granule);
  CUdeviceptr small = 0, large = 0, next = 0;
  ASSERT_EQ(cuMemAlloc_v2(&small, 40), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&next, 40), CUDA_SUCCESS);
  // Small allocations share a 2 MiB slab, 512 bytes apart, as on an H100
  // (tools/gpu-probe/results/reliability24-h100-2026-11-26.txt): kernels may touch the whole slab.
  EXPECT_EQ(next, small + 512);
  const uint64_t slab = AddressSpace::kSlabBytes;
  const CUdeviceptr slabStart = small & ~(slab - 1);
  EXPECT_TRUE(accessible(small + 40 + 24, 4));
  EXPECT_TRUE(accessible(small, 64 << 10));
  EXPECT_TRUE(accessible(slabStart, slab));
  EXPECT_FALSE(accessible(slabStart + slab, 1)) << "a guard follows the slab";
  EXPECT_FALSE(accessible(slabStart - 4, 4)) << "below the slab is a guard";
  EXPECT_EQ(reinterpret_cast<unsigned char*>(next)[0], 0) << "fresh small allocations read as zero";
  size_t size = 3u << 20;
  ASSERT_EQ(cuMemAlloc_v2(&large, size), CUDA_SUCCESS);
  EXPECT_TRUE(accessible(large + size + 24, 4));
  EXPECT_TRUE(accessible(large, 4u << 20));
  EXPECT_FALSE(accessible(large + (4u << 20), 1)) << "2 MiB granule above 2 MiB";
  // Copies through the API still stop at the allocation's size, as the driver's do.
  unsigned char bytes[64] = {};
  EXPECT_EQ(cuMemcpyHtoD_v2(small + 32, bytes, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(small), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoD_v2(small, bytes, 1), CUDA_ERROR_INVALID_VALUE) << "freed: the API refuses it";
  EXPECT_TRUE(accessible(small, 1)) << "the slab stays mapped while it holds an allocation, as on a GPU";
  EXPECT_EQ(cuMemFree_v2(large), CUDA_SUCCESS);
  EXPECT_FALSE(accessible(large + size + 24, 4));
  EXPECT_EQ(cuMemFree_v2(next), CUDA_SUCCESS);
  EXPECT_FALSE(accessible(small, 1)) << "kernels fault on a slab without allocations";
}

// A graph's small allocation is made again at the same address by a later launch once the application freed it:
// it must not share a slab with other allocations, which would keep the address taken.
TEST_F(MemoryTest, SmallGraphAllocationIsMadeAgainAtItsAddress) {
  CUdeviceptr neighbour = 0;
  ASSERT_EQ(cuMemAlloc_v2(&neighbour, 100), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  params.poolProps.location.id = 0;
  params.bytesize = 100;
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddMemAllocNode(&node, graph, nullptr, 0, &params), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(params.dptr), CUDA_SUCCESS);
  CUdeviceptr other = 0;
  ASSERT_EQ(cuMemAlloc_v2(&other, 100), CUDA_SUCCESS);  // a small allocation that could take the freed place
  EXPECT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(params.dptr), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(other), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(neighbour), CUDA_SUCCESS);
}

// Small allocations do not cost host mappings each: tens of thousands fit (vm.max_map_count is about 65,530,
// two mappings per allocation stopped cuemu at ~32,700).
TEST_F(MemoryTest, ManySmallAllocationsShareSlabs) {
  std::vector<CUdeviceptr> pointers(100000);
  for (CUdeviceptr& p : pointers) ASSERT_EQ(cuMemAlloc_v2(&p, 1), CUDA_SUCCESS);
  for (size_t i = 1; i < 4096; ++i) EXPECT_EQ(pointers[i], pointers[i - 1] + 512) << i;
  for (CUdeviceptr p : pointers) ASSERT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  // A freed block is reused.
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&b, 100), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&c, 100), CUDA_SUCCESS);
  EXPECT_EQ(c, a);
  EXPECT_EQ(cuMemFree_v2(b), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(c), CUDA_SUCCESS);
}

// A slab whose last block is freed stays mapped for the next small allocation (a program allocating and freeing
// one small buffer in a loop made and unmade a slab each time), but kernels fault on it meanwhile, and the block
// handed out again reads as zero.
TEST_F(MemoryTest, AnEmptiedSlabServesTheNextSmallAllocation) {
  CUdeviceptr first = 0, again = 0;
  ASSERT_EQ(cuMemAlloc_v2(&first, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(first, 0xAB, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree_v2(first), CUDA_SUCCESS);
  EXPECT_FALSE(accessible(first, 1));
  ASSERT_EQ(cuMemAlloc_v2(&again, 64), CUDA_SUCCESS);
  EXPECT_EQ(again, first);
  EXPECT_TRUE(accessible(again, 1));
  unsigned char bytes[64];
  ASSERT_EQ(cuMemcpyDtoH_v2(bytes, again, 64), CUDA_SUCCESS);
  for (unsigned char b : bytes) ASSERT_EQ(b, 0);
  EXPECT_EQ(cuMemFree_v2(again), CUDA_SUCCESS);
}

TEST_F(MemoryTest, FreeValidation) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p + 16), CUDA_ERROR_INVALID_VALUE);  // interior
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);       // double
  EXPECT_EQ(cuMemFree_v2(0x1234), CUDA_ERROR_INVALID_VALUE);  // garbage
  EXPECT_EQ(cuMemFree_v2(0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAlloc_v2(&p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAlloc_v2(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, AddressRangeOfInteriorPointer) {
  CUdeviceptr p = 0, base = 0;
  size_t size = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 1000), CUDA_SUCCESS);
  ASSERT_EQ(cuMemGetAddressRange_v2(&base, &size, p + 999), CUDA_SUCCESS);
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 1000u);
  EXPECT_EQ(cuMemGetAddressRange_v2(&base, &size, p + 1000), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(cuMemGetAddressRange_v2(nullptr, &size, p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST_F(MemoryTest, PitchIsAlignedAndValidated) {
  CUdeviceptr p = 0;
  size_t pitch = 0;
  ASSERT_EQ(cuMemAllocPitch_v2(&p, &pitch, 100, 10, 4), CUDA_SUCCESS);
  EXPECT_GE(pitch, 100u);
  EXPECT_EQ(pitch % 256, 0u);
  EXPECT_TRUE(accessible(p, pitch * 10));
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAllocPitch_v2(&p, &pitch, 100, 10, 3), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAllocPitch_v2(&p, &pitch, 0, 10, 4), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, InfoTracksAllocations) {
  size_t free0 = 0, total = 0, free1 = 0;
  ASSERT_EQ(cuMemGetInfo_v2(&free0, &total), CUDA_SUCCESS);
  EXPECT_GT(total, 0u);
  EXPECT_LE(free0, total);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 64 << 20), CUDA_SUCCESS);
  ASSERT_EQ(cuMemGetInfo_v2(&free1, &total), CUDA_SUCCESS);
  EXPECT_EQ(free0 - free1, size_t(64) << 20);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  ASSERT_EQ(cuMemGetInfo_v2(&free1, &total), CUDA_SUCCESS);
  EXPECT_EQ(free1, free0);
}

TEST_F(MemoryTest, ExceedingTheDeviceFailsCleanly) {
  size_t free = 0, total = 0;
  ASSERT_EQ(cuMemGetInfo_v2(&free, &total), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc_v2(&p, total + 1), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemAlloc_v2(&p, SIZE_MAX), CUDA_ERROR_OUT_OF_MEMORY);
  // Fill the device in large untouched pieces: the last one fails, the process lives, and all is given back.
  std::vector<CUdeviceptr> pieces;
  size_t piece = std::max<size_t>(total / 8, 1 << 20);
  CUresult r = CUDA_SUCCESS;
  while ((r = cuMemAlloc_v2(&p, piece)) == CUDA_SUCCESS && pieces.size() < 64) pieces.push_back(p);
  EXPECT_EQ(r, CUDA_ERROR_OUT_OF_MEMORY);
  for (CUdeviceptr q : pieces) EXPECT_EQ(cuMemFree_v2(q), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&p, piece), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST_F(MemoryTest, ContextTeardownFreesItsMemory) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 4096), CUDA_SUCCESS);
  size_t before = AddressSpace::instance().used(0);
  context_->teardown();
  EXPECT_FALSE(accessible(p, 1));
  EXPECT_EQ(AddressSpace::instance().used(0), before - 4096);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, NoContextIsAnError) {
  cuemu::forgetContextOnThisThread(*context_);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc_v2(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
  cuemu::pushCurrentContext(context_);
}

// Answers an H100 gives that differ by kind of memory (tools/gpu-probe/results/vmm17-h100-2026-11-27.txt).
TEST_F(MemoryTest, PointerAttributesByKindAsAnH100Answers) {
  CUdeviceptr device = 0, managed = 0, pooled = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocAsync(&pooled, 4096, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  int rdma = -1;
  EXPECT_EQ(cuPointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, device), CUDA_SUCCESS);
  EXPECT_EQ(rdma, 1);
  EXPECT_EQ(cuPointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, managed), CUDA_SUCCESS);
  EXPECT_EQ(rdma, 0);
  EXPECT_EQ(cuPointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, pooled), CUDA_SUCCESS);
  EXPECT_EQ(rdma, 0);
  int sync = -1;
  EXPECT_EQ(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, managed), CUDA_SUCCESS);
  EXPECT_EQ(sync, 1);  // without a set
  EXPECT_EQ(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, device), CUDA_SUCCESS);
  EXPECT_EQ(sync, 0);
  CUcontext ctx = reinterpret_cast<CUcontext>(0xdead);
  EXPECT_EQ(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, pooled), CUDA_SUCCESS);
  EXPECT_EQ(ctx, nullptr);  // pool memory has no context
  EXPECT_EQ(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, device), CUDA_SUCCESS);
  EXPECT_EQ(ctx, context_->apiHandle());
  for (CUdeviceptr p : {device, managed}) {  // mapped in 2 MiB pieces
    size_t mapping = 0;
    void* base = nullptr;
    EXPECT_EQ(cuPointerGetAttribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p), CUDA_SUCCESS);
    EXPECT_EQ(mapping, size_t(2) << 20);
    EXPECT_EQ(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p), CUDA_SUCCESS);
    EXPECT_LE(reinterpret_cast<CUdeviceptr>(base), p);
    EXPECT_LT(p, reinterpret_cast<CUdeviceptr>(base) + mapping);
  }
  void* host = reinterpret_cast<void*>(0xdead);
  EXPECT_EQ(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, device), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(host, nullptr);  // a failed host pointer query still writes null
  EXPECT_EQ(cuMemFreeAsync(pooled, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(managed), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

// A pool's memory is mapped in 32 MiB pieces aligned to 32 MiB: a pool allocation of any size reports the piece
// holding the queried address, device and pinned host pools alike (tools/gpu-probe/pool17.cpp,
// tools/gpu-probe/results/pool17-h100-2026-11-27.txt).
TEST_F(MemoryTest, PoolMemoryReportsItsThirtyTwoMiBPieceAsAnH100Does) {
  constexpr uint64_t kPiece = uint64_t(32) << 20;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUmemoryPool hostPool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&hostPool, &props), CUDA_SUCCESS);
  CUdeviceptr small = 0, large = 0, host = 0;
  ASSERT_EQ(cuMemAllocAsync(&small, 4096, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocAsync(&large, size_t(100) << 20, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocFromPoolAsync(&host, 4096, hostPool, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  for (CUdeviceptr p : {small, large, large + (size_t(100) << 20) - 1, host}) {
    size_t mapping = 0;
    void* base = nullptr;
    EXPECT_EQ(cuPointerGetAttribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p), CUDA_SUCCESS);
    EXPECT_EQ(mapping, kPiece);
    EXPECT_EQ(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p), CUDA_SUCCESS);
    EXPECT_EQ(reinterpret_cast<CUdeviceptr>(base), p & ~(kPiece - 1));
  }
  EXPECT_EQ(cuMemFreeAsync(small, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(large, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(host, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolDestroy(hostPool), CUDA_SUCCESS);
}

TEST_F(MemoryTest, PointerAttributes) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 512), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  unsigned type = 0;
  int ordinal = -1, managed = 7;
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned long long id1 = 0, id2 = 0;
  EXPECT_EQ(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p + 3), CUDA_SUCCESS);
  EXPECT_EQ(ctx, context_->apiHandle());
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned(CU_MEMORYTYPE_DEVICE));
  EXPECT_EQ(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 0);
  EXPECT_EQ(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p), CUDA_SUCCESS);
  EXPECT_EQ(managed, 0);
  EXPECT_EQ(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 100), CUDA_SUCCESS);
  EXPECT_EQ(start, p);
  EXPECT_EQ(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 100), CUDA_SUCCESS);
  EXPECT_EQ(size, 512u);
  void* host = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, p), CUDA_SUCCESS);
  int sync = 1, got = 0;
  EXPECT_EQ(cuPointerSetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
  EXPECT_EQ(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), CUDA_SUCCESS);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemAlloc_v2(&p, 512), CUDA_SUCCESS);
  EXPECT_EQ(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, p), CUDA_SUCCESS);
  EXPECT_NE(id1, id2);  // buffer ids are never reused
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);

  // Unknown memory: cuPointerGetAttributes answers empty values instead of failing.
  int local = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT};
  type = 99;
  ctx = context_->apiHandle();
  void* data[] = {&type, &ctx};
  EXPECT_EQ(cuPointerGetAttributes(2, attrs, data, reinterpret_cast<CUdeviceptr>(&local)), CUDA_SUCCESS);
  EXPECT_EQ(type, 0u);
  EXPECT_EQ(ctx, nullptr);
}

// The allocation a memcheck report names: the one holding the address, else the closer of its neighbours by
// compute-sanitizer's distances (bytes past the end count the first byte past it).
TEST(AddressSpaceTest, NearestNamesTheHoldingOrCloserAllocation) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  ExactBounds exact;
  auto context = std::make_shared<cuemu::Context>(*cuemu::deviceByOrdinal(0), 0, false);
  context->registerHandle();
  auto a = context->memory().allocateDevice(400);
  auto b = context->memory().allocateDevice(400);
  ASSERT_TRUE(a && b);
  uint64_t first = std::min((*a)->start, (*b)->start), second = std::max((*a)->start, (*b)->start);
  auto& space = AddressSpace::instance();
  EXPECT_EQ(space.nearest(first + 10)->start, first);
  EXPECT_EQ(space.nearest(first + 400)->start, first);  // one past the end: 1 byte after the first
  EXPECT_EQ(space.nearest(second - 1)->start, second);  // 1 byte before the second
  EXPECT_EQ(space.nearest(second + 399)->start, second);
  EXPECT_TRUE(cuemu::releaseRegion((*a)->start, {cuemu::MemoryKind::Device}));
  EXPECT_TRUE(cuemu::releaseRegion((*b)->start, {cuemu::MemoryKind::Device}));
  context->teardown();
}

TEST(AddressSpaceTest, ConcurrentAllocateFreeKeepsTableConsistent) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  ExactBounds exact;
  auto context = std::make_shared<cuemu::Context>(*cuemu::deviceByOrdinal(0), 0, false);
  context->registerHandle();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto region = context->memory().allocateDevice(size_t(1 + (i * 37 + t) % 200000));
        if (!region) {
          ++failures;
          continue;
        }
        uint64_t start = (*region)->start, size = (*region)->size;
        if (!AddressSpace::instance().isAccessible(start, size) ||
            AddressSpace::instance().isAccessible(start, size + 1))
          ++failures;
        if (!cuemu::releaseRegion(start, {cuemu::MemoryKind::Device})) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  context->teardown();
}

}  // namespace

namespace {
// A module with many variables, as CCCL-including kernels declare (over a thousand): `count` .global bytes, the
// last of them initialised, and a kernel that adds the first's address to the output.
std::string ModuleWithManyGlobals(int count) {
  std::string ptx = ".version 7.0\n.target sm_70\n.address_size 64\n";
  for (int i = 0; i + 1 < count; ++i) ptx += ".global .align 1 .u8 g" + std::to_string(i) + ";\n";
  ptx += ".global .align 4 .u32 last = 1234;\n";
  ptx += ".visible .entry k() { ret; }\n";
  return ptx;
}

int MappingCount() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  int lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  return lines;
}
}  // namespace

// A module's variables share its data segment, as on a GPU: loading one with 3000 of them adds a few host mappings,
// not two per variable (a process loading a few dozen such modules reached the kernel's mapping limit, and every
// later allocation failed with CUDA_ERROR_OUT_OF_MEMORY).
TEST_F(MemoryTest, ModuleVariablesShareOneAllocation) {
  std::string ptx = ModuleWithManyGlobals(3000);
  int before = MappingCount();
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, ptx.c_str()), CUDA_SUCCESS);
  EXPECT_LT(MappingCount() - before, 100);
  CUdeviceptr first = 0, second = 0, last = 0;
  size_t size = 0;
  ASSERT_EQ(cuModuleGetGlobal_v2(&first, &size, module, "g0"), CUDA_SUCCESS);
  EXPECT_EQ(size, 1u);
  ASSERT_EQ(cuModuleGetGlobal_v2(&second, &size, module, "g1"), CUDA_SUCCESS);
  EXPECT_NE(first, second);
  ASSERT_EQ(cuModuleGetGlobal_v2(&last, &size, module, "last"), CUDA_SUCCESS);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(last % 4, 0u);
  uint32_t value = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&value, last, 4), CUDA_SUCCESS);
  EXPECT_EQ(value, 1234u);
  uint8_t zero = 7;
  ASSERT_EQ(cuMemcpyDtoH_v2(&zero, second, 1), CUDA_SUCCESS);
  EXPECT_EQ(zero, 0u);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

// With byte-exact bounds each variable keeps an allocation of its own, so an overrun faults.
TEST_F(MemoryTest, ModuleVariablesAreSeparateWithExactBounds) {
  ExactBounds exact;
  std::string ptx = ModuleWithManyGlobals(3);
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, ptx.c_str()), CUDA_SUCCESS);
  CUdeviceptr first = 0, base = 0;
  size_t size = 0, range = 0;
  ASSERT_EQ(cuModuleGetGlobal_v2(&first, &size, module, "g0"), CUDA_SUCCESS);
  ASSERT_EQ(cuMemGetAddressRange_v2(&base, &range, first), CUDA_SUCCESS);
  EXPECT_EQ(base, first);
  EXPECT_EQ(range, 1u);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}
