// Virtual memory management.
#include "fixture.h"

#include "core/address_space.h"

#include <unistd.h>

namespace {

CUmemAllocationProp deviceProp(bool shareable = false) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  if (shareable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

TEST_F(MemoryTest, ReserveMapAccessAndAlias) {
  CUmemAllocationProp prop = deviceProp();
  size_t granularity = 0;
  ASSERT_EQ(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  ASSERT_GT(granularity, 0u);
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity, &prop, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemCreate(&handle, granularity + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr va = 0;
  ASSERT_EQ(cuMemAddressReserve(&va, 2 * granularity, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(va % granularity, 0u);
  // The same physical memory at two addresses.
  ASSERT_EQ(cuMemMap(va, granularity, 0, handle, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemMap(va + granularity, granularity, 0, handle, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemMap(va, granularity, 0, handle, 0), CUDA_ERROR_INVALID_VALUE);  // already mapped
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(va, 4));             // no access granted yet
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ASSERT_EQ(cuMemSetAccess(va, 2 * granularity, &access, 1), CUDA_SUCCESS);
  EXPECT_TRUE(cuemu::AddressSpace::instance().isAccessible(va, 2 * granularity));
  unsigned long long flags = 0;
  ASSERT_EQ(cuMemGetAccess(&flags, &prop.location, va + 5), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
  ASSERT_EQ(cuMemsetD32_v2(va, 0xCAFEF00D, 4), CUDA_SUCCESS);
  uint32_t seen = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&seen, va + granularity + 8, 4), CUDA_SUCCESS);
  EXPECT_EQ(seen, 0xCAFEF00Du);

  CUmemGenericAllocationHandle retained = 0;
  ASSERT_EQ(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 100)), CUDA_SUCCESS);
  EXPECT_EQ(retained, handle);
  CUmemAllocationProp back{};
  ASSERT_EQ(cuMemGetAllocationPropertiesFromHandle(&back, handle), CUDA_SUCCESS);
  EXPECT_EQ(back.location.id, 0);
  EXPECT_EQ(cuMemRelease(retained), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_ERROR_INVALID_VALUE);
  // Released handles stay mapped until unmapped.
  ASSERT_EQ(cuMemcpyDtoH_v2(&seen, va, 4), CUDA_SUCCESS);
  EXPECT_EQ(seen, 0xCAFEF00Du);
  EXPECT_EQ(cuMemAddressFree(va, 2 * granularity), CUDA_ERROR_INVALID_VALUE);  // still mapped
  EXPECT_EQ(cuMemUnmap(va, granularity / 2), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMemUnmap(va, 2 * granularity), CUDA_SUCCESS);
  EXPECT_FALSE(cuemu::AddressSpace::instance().isAccessible(va, 1));
  EXPECT_EQ(cuMemAddressFree(va, 2 * granularity), CUDA_SUCCESS);
}

TEST_F(MemoryTest, ShareableHandleRoundTrip) {
  CUmemAllocationProp prop = deviceProp(true);
  size_t granularity = 0;
  ASSERT_EQ(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), CUDA_SUCCESS);
  CUmemGenericAllocationHandle handle = 0, imported = 0;
  ASSERT_EQ(cuMemCreate(&handle, granularity, &prop, 0), CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  close(fd);
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAddressReserve(&a, granularity, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAddressReserve(&b, granularity, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemMap(a, granularity, 0, handle, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemMap(b, granularity, 0, imported, 0), CUDA_SUCCESS);
  CUmemAccessDesc access{prop.location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  ASSERT_EQ(cuMemSetAccess(a, granularity, &access, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuMemSetAccess(b, granularity, &access, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(a, 0x77, 16), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(b)[15], 0x77);
  EXPECT_EQ(cuMemUnmap(a, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemUnmap(b, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(a, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAddressFree(b, granularity), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
  EXPECT_EQ(cuMemRelease(imported), CUDA_SUCCESS);
  // Not requested as shareable: export refused.
  CUmemAllocationProp plain = deviceProp();
  ASSERT_EQ(cuMemCreate(&handle, granularity, &plain, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemRelease(handle), CUDA_SUCCESS);
}

}  // namespace
