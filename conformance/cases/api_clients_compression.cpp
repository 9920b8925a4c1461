// Generic compression (NVIDIA's cudaCompressibleMemory sample) as driver 580 answers it on an H100 (issue 17,
// measured with tools/gpu-probe/compress17.cpp; results in tools/gpu-probe/results/compress17-h100-2026-11-27.txt):
// the H100 advertises it, cuMemCreate reports the compression it granted (none for GPUDirect RDMA memory), types
// above CU_MEM_ALLOCATION_COMP_GENERIC are refused, and an imported allocation reports its creator's compression.
#include "harness.h"

#include <cstdint>
#include <unistd.h>

namespace {

class api_memory_ClientsCompression : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    CU_ASSERT_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  }
  // The compression cuMemCreate granted for `p`.
  unsigned char Granted(const CUmemAllocationProp& p) {
    CUmemGenericAllocationHandle h = 0;
    EXPECT_EQ(cuMemCreate(&h, granularity, &p, 0), CUDA_SUCCESS);
    if (!h) return 0xff;
    CUmemAllocationProp back{};
    EXPECT_EQ(cuMemGetAllocationPropertiesFromHandle(&back, h), CUDA_SUCCESS);
    EXPECT_EQ(cuMemRelease(h), CUDA_SUCCESS);
    return back.allocFlags.compressionType;
  }
  CUmemAllocationProp prop{};
  size_t granularity = 0;
};

TEST_F(api_memory_ClientsCompression, Advertised) {
  EXPECT_EQ(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED), 1);
  EXPECT_EQ(granularity, size_t(2) << 20);
}

TEST_F(api_memory_ClientsCompression, GrantedMappedAndUsed) {
  size_t size = granularity;
  CUmemGenericAllocationHandle h = 0;
  CU_ASSERT_OK(cuMemCreate(&h, size, &prop, 0));
  CUmemAllocationProp back{};
  CU_EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&back, h));
  EXPECT_EQ(back.allocFlags.compressionType, CU_MEM_ALLOCATION_COMP_GENERIC);
  CUdeviceptr va = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, size, 0, 0, 0));
  CU_ASSERT_OK(cuMemMap(va, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_ASSERT_OK(cuMemSetAccess(va, size, &access, 1));
  CUmemGenericAllocationHandle retained = 0;
  CU_EXPECT_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 4096)));
  CUmemAllocationProp again{};
  CU_EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&again, retained));
  EXPECT_EQ(again.allocFlags.compressionType, CU_MEM_ALLOCATION_COMP_GENERIC);
  CU_EXPECT_OK(cuMemRelease(retained));
  CU_EXPECT_OK(cuMemsetD32(va, 0x5eed, size / 4));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, va + size - 4, 4));
  EXPECT_EQ(v, 0x5eedu);
  unsigned long long decompress = 2;
  CU_EXPECT_OK(cuPointerGetAttribute(&decompress, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, va));
  EXPECT_EQ(decompress, 0u);
  CU_EXPECT_OK(cuMemUnmap(va, size));
  CU_EXPECT_OK(cuMemAddressFree(va, size));
  CU_EXPECT_OK(cuMemRelease(h));
}

TEST_F(api_memory_ClientsCompression, NoneWithGpuDirectRdma) {
  CUmemAllocationProp rdma = prop;
  rdma.allocFlags.gpuDirectRDMACapable = 1;
  EXPECT_EQ(Granted(rdma), CU_MEM_ALLOCATION_COMP_NONE);
  EXPECT_EQ(Granted(prop), CU_MEM_ALLOCATION_COMP_GENERIC);
}

TEST_F(api_memory_ClientsCompression, UnknownTypesRefused) {
  for (unsigned type : {2u, 0x7fu, 0xffu}) {
    CUmemAllocationProp p = prop;
    p.allocFlags.compressionType = static_cast<unsigned char>(type);
    size_t g = 0;
    CU_EXPECT_OK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) << type;
    CUmemGenericAllocationHandle h = 0;
    CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, granularity, &p, 0)) << type;
  }
}

TEST_F(api_memory_ClientsCompression, ImportKeepsCompression) {
  CUmemAllocationProp shareable = prop;
  shareable.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  CU_ASSERT_OK(cuMemCreate(&h, granularity, &shareable, 0));
  int fd = -1;
  CU_ASSERT_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemGenericAllocationHandle imported = 0;
  CU_EXPECT_OK(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUmemAllocationProp back{};
  CU_EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&back, imported));
  EXPECT_EQ(back.allocFlags.compressionType, CU_MEM_ALLOCATION_COMP_GENERIC);
  close(fd);
  CU_EXPECT_OK(cuMemRelease(imported));
  CU_EXPECT_OK(cuMemRelease(h));
}

}  // namespace
