// Stream-ordered allocation and memory pools.
#include "fixture.h"

#include "core/address_space.h"

#include <unistd.h>

#include <vector>

namespace {

TEST_F(MemoryTest, AllocAsyncFreeAsync) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocAsync(&p, 1 << 20, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(p, 0x01020304, (1 << 20) / 4, nullptr), CUDA_SUCCESS);
  CUmemoryPool pool = nullptr, def = nullptr;
  ASSERT_EQ(cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  EXPECT_EQ(pool, def);
  cuuint64_t used = 0;
  ASSERT_EQ(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  EXPECT_GE(used, uint64_t(1) << 20);
  ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(p, nullptr), CUDA_ERROR_INVALID_VALUE);  // already being freed
  ASSERT_EQ(context_->streams().synchronize(), CUDA_SUCCESS);
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(p, 1));
  ASSERT_EQ(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  EXPECT_EQ(used, 0u);
  cuuint64_t high = 0;
  ASSERT_EQ(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high), CUDA_SUCCESS);
  EXPECT_GE(high, uint64_t(1) << 20);
  cuuint64_t zero = 0;
  EXPECT_EQ(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high), CUDA_SUCCESS);
  EXPECT_EQ(high, 0u);
  EXPECT_EQ(cuMemAllocAsync(&p, 0, nullptr), CUDA_SUCCESS);  // zero bytes are accepted (driver 580)
  EXPECT_EQ(cuMemAllocAsync(&p, 16, reinterpret_cast<CUstream>(0x1234)), CUDA_ERROR_INVALID_HANDLE);
}

// A pool's statistics as an H100's move (tools/gpu-probe/results/asyncpool17-h100-2026-11-27.txt), which CuPy's
// MemoryAsyncPool tests read: used is the bytes asked for and drops when the free is queued; the reservation grows
// by 32 MiB pieces, is charged to the device, and stays after frees until a stream, event or context
// synchronisation (not a stream query) releases what is above the threshold.
TEST_F(MemoryTest, PoolStatisticsFollowTheH100) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  auto attribute = [&](CUmemPool_attribute which) {
    cuuint64_t value = ~cuuint64_t{0};
    EXPECT_EQ(cuMemPoolGetAttribute(pool, which, &value), CUDA_SUCCESS);
    return value;
  };
  auto freeMemory = [] {
    size_t free = 0, total = 0;
    EXPECT_EQ(cuMemGetInfo_v2(&free, &total), CUDA_SUCCESS);
    return free;
  };
  constexpr cuuint64_t kPiece = 32u << 20;
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);  // what earlier tests freed into the default pool goes back
  size_t before = freeMemory();
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&a, 1024, pool, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocFromPoolAsync(&b, 2048, pool, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocFromPoolAsync(&c, 1, pool, stream), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 3073u);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), kPiece);
  EXPECT_EQ(before - freeMemory(), kPiece);
  ASSERT_EQ(cuMemFreeAsync(b, stream), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 1025u) << "counted free when queued";
  ASSERT_EQ(cuMemFreeAsync(a, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(c, stream), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0u);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_USED_MEM_HIGH), 3073u);
  while (cuStreamQuery(stream) == CUDA_ERROR_NOT_READY) usleep(1000);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), kPiece) << "a query releases nothing";
  EXPECT_EQ(before - freeMemory(), kPiece) << "freed pool memory stays charged to the device";
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0u);
  EXPECT_EQ(freeMemory(), before);

  // Larger allocations reserve whole pieces: 40 MiB takes two, 3 more MiB fit, 100 more take five in all.
  CUdeviceptr big[3] = {};
  const size_t sizes[3] = {40u << 20, 3u << 20, 100u << 20};
  const cuuint64_t reserved[3] = {2 * kPiece, 2 * kPiece, 5 * kPiece};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(cuMemAllocFromPoolAsync(&big[i], sizes[i], pool, stream), CUDA_SUCCESS);
    EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), reserved[i]) << i;
  }
  for (CUdeviceptr p : big) ASSERT_EQ(cuMemFreeAsync(p, stream), CUDA_SUCCESS);
  CUevent event = nullptr;
  ASSERT_EQ(cuEventCreate(&event, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(event, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuEventSynchronize(event), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0u) << "an event synchronisation releases";
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 5 * kPiece);

  // A threshold of 64 MiB keeps two pieces of three at a synchronisation; a trim to 4 MiB keeps one piece.
  cuuint64_t threshold = 64u << 20;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAllocFromPoolAsync(&a, 80u << 20, pool, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(a, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 2 * kPiece);
  ASSERT_EQ(cuMemPoolTrimTo(pool, 4u << 20), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), kPiece);
  ASSERT_EQ(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  EXPECT_EQ(attribute(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0u);
  threshold = 0;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), CUDA_SUCCESS);

  // 70% of the device freed into the pool without a synchronisation: cuMemAlloc of 30% finds no memory.
  size_t large = before / 10 * 7, rest = before / 10 * 3;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&a, large, pool, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(a, stream), CUDA_SUCCESS);
  while (cuStreamQuery(stream) == CUDA_ERROR_NOT_READY) usleep(1000);
  CUdeviceptr plain = 0;
  EXPECT_EQ(cuMemAlloc_v2(&plain, rest), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&plain, rest), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  EXPECT_EQ(freeMemory(), before);
}

TEST_F(MemoryTest, CreatedPools) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr, current = nullptr, def = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  cuuint64_t threshold = 1 << 30, got = 0;
  ASSERT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, threshold);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(context_->streams().synchronize(), CUDA_SUCCESS);
  // Under the release threshold the pool keeps its 32 MiB piece reserved; trimming gives it back.
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, 32u << 20);
  ASSERT_EQ(cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, 0u);

  ASSERT_EQ(cuDeviceSetMemPool(0, pool), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
  EXPECT_EQ(current, pool);
  CUmemLocation peer{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags flags{};
  ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &peer), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  ASSERT_EQ(cuMemAllocAsync(&p, 64, nullptr), CUDA_SUCCESS);  // from the current pool
  CUmemoryPool owner = nullptr;
  ASSERT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p), CUDA_SUCCESS);
  EXPECT_EQ(owner, pool);
  ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  // The allocation outlives the destroyed pool until freed; the device falls back to its default pool.
  EXPECT_EQ(cuMemsetD8_v2(p, 1, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  EXPECT_EQ(current, def);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
  props.location.id = 5;
  EXPECT_EQ(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace

namespace {

TEST_F(MemoryTest, PoolExportImportPointer) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr, imported = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t(fd)),
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
  close(fd);
  CUdeviceptr p = 0, q = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 5000, pool, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(p, 0x42, 5000), CUDA_SUCCESS);
  CUmemPoolPtrExportData data{};
  ASSERT_EQ(cuMemPoolExportPointer(&data, p), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolImportPointer(&q, imported, &data), CUDA_SUCCESS);
  EXPECT_NE(p, q);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(q)[4999], 0x42);  // the same bytes at another address
  reinterpret_cast<uint8_t*>(q)[0] = 7;
  EXPECT_EQ(reinterpret_cast<uint8_t*>(p)[0], 7);
  EXPECT_EQ(cuMemFree_v2(q), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolImportPointer(&q, pool, &data), CUDA_ERROR_INVALID_VALUE);  // not an imported pool
  EXPECT_EQ(cuMemPoolDestroy(imported), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
}

}  // namespace

// Behaviour measured on an H100 with driver 580 that no recorded conformance case covers
// (tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt).
namespace {

CUmemPoolProps PoolProps(CUmemLocationType type, unsigned handles = CU_MEM_HANDLE_TYPE_NONE, size_t maxSize = 0) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = static_cast<CUmemAllocationHandleType>(handles);
  props.location.type = type;
  props.location.id = 0;
  props.maxSize = maxSize;
  return props;
}

// 1 MiB blocks a pool of maximum size `maxSize` serves before refusing one.
int BlocksOfOneMiB(size_t maxSize) {
  CUmemPoolProps props = PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_NONE, maxSize);
  CUmemoryPool pool = nullptr;
  if (cuMemPoolCreate(&pool, &props) != CUDA_SUCCESS) return -1;
  std::vector<CUdeviceptr> blocks;
  CUdeviceptr p = 0;
  while (blocks.size() < 64 && cuMemAllocFromPoolAsync(&p, size_t(1) << 20, pool, nullptr) == CUDA_SUCCESS)
    blocks.push_back(p);
  for (CUdeviceptr b : blocks) cuMemFreeAsync(b, nullptr);
  cuStreamSynchronize(nullptr);
  cuMemPoolDestroy(pool);
  return int(blocks.size());
}

}  // namespace

// A maximum size limits a pool to no less than 32 MiB: the H100 served 32 blocks of 1 MiB for maxima of 2, 3, 4, 5
// and 32 MiB, and single allocations above the maximum up to 32 MiB.
TEST_F(MemoryTest, PoolMaximumSizeIsAtLeast32MiB) {
  const size_t MiB = size_t(1) << 20;
  for (size_t maxSize : {2 * MiB, 2 * MiB + 1, 3 * MiB, 5 * MiB, 32 * MiB}) EXPECT_EQ(BlocksOfOneMiB(maxSize), 32);
  EXPECT_EQ(BlocksOfOneMiB(40 * MiB), 40);
  CUmemPoolProps props = PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_NONE, 5 * MiB);
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 10 * MiB, pool, nullptr), CUDA_SUCCESS) << "twice the maximum";
  ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAllocFromPoolAsync(&p, 32 * MiB + 1, pool, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
}

// A pinned host pool grants the device no access until asked; with access, memsets and address-range queries take
// its memory, typed device copies still do not.
TEST_F(MemoryTest, HostPoolDeviceAccess) {
  for (CUmemLocationType type : {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA}) {
    CUmemPoolProps props = PoolProps(type);
    CUmemoryPool pool = nullptr;
    ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
    CUmemLocation device{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &device), CUDA_SUCCESS);
    EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUdeviceptr p = 0;
    ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuMemsetD8_v2(p, 9, 4096), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr base = 0;
    size_t size = 0;
    EXPECT_EQ(cuMemGetAddressRange_v2(&base, &size, p + 16), CUDA_ERROR_NOT_FOUND);
    CUmemAccessDesc grant{device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    ASSERT_EQ(cuMemPoolSetAccess(pool, &grant, 1), CUDA_SUCCESS);
    ASSERT_EQ(cuMemPoolGetAccess(&flags, pool, &device), CUDA_SUCCESS);
    EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    EXPECT_EQ(cuMemsetD8_v2(p, 9, 4096), CUDA_SUCCESS);
    EXPECT_EQ(cuMemGetAddressRange_v2(&base, &size, p + 16), CUDA_SUCCESS);
    EXPECT_EQ(base, p);
    CUdeviceptr devicePointer = 0;
    EXPECT_EQ(cuPointerGetAttribute(&devicePointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p), CUDA_SUCCESS);
    unsigned char host[16] = {};
    EXPECT_EQ(cuMemcpyDtoH_v2(host, p, sizeof host), CUDA_ERROR_INVALID_VALUE) << "a typed copy still refuses it";
    EXPECT_EQ(cuMemcpy(reinterpret_cast<CUdeviceptr>(host), p, sizeof host), CUDA_SUCCESS);
    EXPECT_EQ(host[15], 9);
    grant.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    ASSERT_EQ(cuMemPoolSetAccess(pool, &grant, 1), CUDA_SUCCESS);
    EXPECT_EQ(cuMemsetD8_v2(p, 9, 4096), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  }
  CUmemoryPool defaultHost = nullptr;
  CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST, 0};
  ASSERT_EQ(cuMemGetDefaultMemPool(&defaultHost, &host, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 4096, defaultHost, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8_v2(p, 9, 4096), CUDA_ERROR_INVALID_VALUE) << "the default host pool has no device access";
  ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

// Fabric handles: advertised, taken at creation, never exported (no IMEX channel); a fabric pool exports no file
// descriptor either.
TEST_F(MemoryTest, FabricHandles) {
  CUmemPoolProps props =
      PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr), CUDA_SUCCESS);
  int fd = -1;
  EXPECT_EQ(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_NOT_PERMITTED);
  CUmemFabricHandle fabric{};
  EXPECT_EQ(cuMemPoolExportToShareableHandle(&fabric, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_NOT_PERMITTED);
  ASSERT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  CUmemPoolProps posix = PoolProps(CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ASSERT_EQ(cuMemPoolCreate(&pool, &posix), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolExportToShareableHandle(&fabric, pool, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  CUmemPoolProps hostFabric = PoolProps(CU_MEM_LOCATION_TYPE_HOST, CU_MEM_HANDLE_TYPE_FABRIC);
  EXPECT_EQ(cuMemPoolCreate(&pool, &hostFabric), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  CUmemGenericAllocationHandle handle = 0;
  // Fabric allocations need an IMEX channel (an H100 without one: tools/gpu-probe/results/vmm17-h100-*.txt).
  EXPECT_EQ(cuMemCreate(&handle, size_t(2) << 20, &prop, 0), CUDA_ERROR_NOT_PERMITTED);
  prop.requestedHandleTypes =
      static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  EXPECT_EQ(cuMemCreate(&handle, size_t(2) << 20, &prop, 0), CUDA_ERROR_NOT_PERMITTED);
  EXPECT_EQ(cuMemImportFromShareableHandle(&handle, &fabric, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
}
