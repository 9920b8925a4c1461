// Pinned and registered host memory, managed memory.
#include "fixture.h"

#include "core/address_space.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace {

TEST_F(MemoryTest, PinnedHostMemory) {
  void* p = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&p, 1000, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
  std::memset(p, 3, 1000);
  CUdeviceptr d = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer_v2(&d, p, 0), CUDA_SUCCESS);
  EXPECT_EQ(d, reinterpret_cast<CUdeviceptr>(p));
  EXPECT_TRUE(cuemu::AddressSpace::instance().isAccessible(d, 1000));
  unsigned flags = 0;
  ASSERT_EQ(cuMemHostGetFlags(&flags, p), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned(CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  unsigned type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), CUDA_SUCCESS);
  EXPECT_EQ(type, unsigned(CU_MEMORYTYPE_HOST));
  // Pinned memory is a valid target of device-side copies.
  CUdeviceptr dev = 0;
  ASSERT_EQ(cuMemAlloc_v2(&dev, 1000), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(dev, 9, 1000), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoD_v2(d, dev, 1000), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<uint8_t*>(p)[999], 9);
  EXPECT_EQ(cuMemFree_v2(d), CUDA_ERROR_INVALID_VALUE);  // not device memory
  EXPECT_EQ(cuMemFreeHost(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(dev), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostAlloc(&p, 16, 0x80), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemAllocHost_v2(&p, 16), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(p), CUDA_SUCCESS);
}

TEST_F(MemoryTest, RegisteredHostMemory) {
  std::vector<uint8_t> buffer(3 * 4096 + 17, 1);
  void* p = buffer.data();
  ASSERT_EQ(cuMemHostRegister_v2(p, buffer.size(), CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostRegister_v2(buffer.data() + 100, 10, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CUdeviceptr d = 0;
  ASSERT_EQ(cuMemHostGetDevicePointer_v2(&d, buffer.data() + 5, 0), CUDA_SUCCESS);
  EXPECT_EQ(d, reinterpret_cast<CUdeviceptr>(buffer.data() + 5));
  // The slow path of the accessibility check covers registered memory, exactly.
  EXPECT_TRUE(cuemu::AddressSpace::instance().isAccessible(d, buffer.size() - 5));
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(d, buffer.size() - 4));
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT_EQ(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d), CUDA_SUCCESS);
  EXPECT_EQ(base, reinterpret_cast<CUdeviceptr>(p));
  EXPECT_EQ(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d), CUDA_SUCCESS);
  EXPECT_EQ(size, buffer.size());
  EXPECT_EQ(cuMemsetD8_v2(d, 7, 10), CUDA_SUCCESS);
  EXPECT_EQ(buffer[14], 7);
  // An interior pointer of a registered range is an invalid value (driver 580 on an H100), not an unregistered one.
  EXPECT_EQ(cuMemHostUnregister(buffer.data() + 5), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(d, 1));
  EXPECT_EQ(cuMemHostRegister_v2(nullptr, 10, 0), CUDA_ERROR_INVALID_VALUE);
  // Unmapped memory cannot be registered.
  EXPECT_EQ(cuMemHostRegister_v2(reinterpret_cast<void*>(0x1000), 4096, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, ManagedMemory) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocManaged(&p, 1 << 16, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  auto* host = reinterpret_cast<int*>(p);
  host[5] = 42;  // host and device see the same bytes
  int back = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&back, p + 20, 4), CUDA_SUCCESS);
  EXPECT_EQ(back, 42);
  int managed = 0;
  ASSERT_EQ(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p), CUDA_SUCCESS);
  EXPECT_EQ(managed, 1);
  void* hp = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_SUCCESS);
  EXPECT_EQ(hp, host);

  int value = -5;
  EXPECT_EQ(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU), CUDA_SUCCESS);
  ASSERT_EQ(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(value, CU_DEVICE_CPU);
  EXPECT_EQ(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, 0), CUDA_SUCCESS);
  int accessedBy[3] = {9, 9, 9};
  ASSERT_EQ(cuMemRangeGetAttribute(accessedBy, sizeof accessedBy, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 4096),
            CUDA_SUCCESS);
  EXPECT_EQ(accessedBy[0], 0);
  EXPECT_EQ(accessedBy[1], CU_DEVICE_INVALID);
  EXPECT_EQ(cuMemPrefetchAsync(p, 1 << 16, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(context_->streams().synchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, 1 << 16), CUDA_SUCCESS);
  EXPECT_EQ(value, 0);
  EXPECT_EQ(cuMemAdvise(p, (1 << 16) + 1, CU_MEM_ADVISE_SET_READ_MOSTLY, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAdvise(p, 16, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 77), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuMemRangeGetAttribute(&value, 8, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAllocManaged(&p, 16, 0), CUDA_ERROR_INVALID_VALUE);
}

// Registered memory the application unmaps afterwards: a GPU keeps the pinned pages; cuemu cannot, and answers copies
// with CUDA_ERROR_INVALID_VALUE and kernel accesses with an ILLEGAL_ADDRESS fault instead of crashing (issue 24).
const char* const kStorePtx = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry store(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

void* MapPage() {
  return mmap(nullptr, size_t(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

TEST_F(MemoryTest, RegisteredMemoryUnmappedByTheApplication) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* p = MapPage();
  ASSERT_EQ(cuMemHostRegister_v2(p, page, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
  ASSERT_EQ(munmap(p, page), 0);
  unsigned v = 1;
  CUdeviceptr d = reinterpret_cast<CUdeviceptr>(p);
  EXPECT_EQ(cuMemcpyHtoD_v2(d, &v, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH_v2(&v, d, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD32_v2(d, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
}

TEST_F(MemoryTest, KernelStoreIntoUnmappedRegisteredMemoryFaults) {
  // The fault is sticky for the process: the launch runs in a child, a fresh process (a forked driver refuses).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        size_t page = size_t(sysconf(_SC_PAGESIZE));
        void* p = MapPage();
        CUresult registered = cuMemHostRegister_v2(p, page, CU_MEMHOSTREGISTER_DEVICEMAP);
        if (registered != CUDA_SUCCESS) _exit(10 + int(registered));
        munmap(p, page);
        CUmodule m;
        CUfunction f;
        if (cuModuleLoadData(&m, kStorePtx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "store") != CUDA_SUCCESS)
          _exit(3);
        CUdeviceptr d = reinterpret_cast<CUdeviceptr>(p);
        void* params[] = {&d};
        if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr) != CUDA_SUCCESS) _exit(4);
        _exit(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS ? 0 : 5);
      },
      testing::ExitedWithCode(0), "");
}

// Registering follows the pages' protection as driver 580 does: read-only pages only with READ_ONLY, never
// PROT_NONE; copies and sets into memory registered read-only are refused.
TEST_F(MemoryTest, RegisteredReadOnlyMemory) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* p = MapPage();
  ASSERT_EQ(mprotect(p, page, PROT_READ), 0);
  EXPECT_EQ(cuMemHostRegister_v2(p, page, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemHostRegister_v2(p, page, CU_MEMHOSTREGISTER_READ_ONLY), CUDA_SUCCESS);
  unsigned v = 1;
  CUdeviceptr d = reinterpret_cast<CUdeviceptr>(p);
  EXPECT_EQ(cuMemcpyHtoD_v2(d, &v, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD8_v2(d, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH_v2(&v, d, 4), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(p), CUDA_SUCCESS);
  ASSERT_EQ(mprotect(p, page, PROT_NONE), 0);
  EXPECT_EQ(cuMemHostRegister_v2(p, page, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostRegister_v2(p, page, CU_MEMHOSTREGISTER_READ_ONLY), CUDA_ERROR_INVALID_VALUE);
  munmap(p, page);
}

}  // namespace
