// Stream-ordered allocation and memory pools.
#include "fixture.h"

#include "core/address_space.h"

#include <unistd.h>

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
  // Under the release threshold the pool reports the freed memory as still reserved; trimming gives it back.
  ASSERT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, 4096u);
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
