// api.memory (continued): async copies and sets, stream-ordered allocation and pools, virtual memory management,
// arrays, managed-memory advice and range attributes, IPC handles, peer copies between contexts.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

// ---- async copies and sets ------------------------------------------------------------------------------------

class api_memory_Async : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  }
  void TearDown() override {
    if (stream) cuStreamDestroy(stream);
    ContextTest::TearDown();
  }
  CUstream stream = nullptr;
};

TEST_F(api_memory_Async, CopyRoundTripPinned) {
  const size_t n = 1 << 20;
  void* h = nullptr;
  CU_ASSERT_OK(cuMemAllocHost(&h, n));
  auto* bytes = static_cast<unsigned char*>(h);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(i * 7);
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, n));
  CU_ASSERT_OK(cuMemcpyHtoDAsync(d, h, n, stream));
  CU_ASSERT_OK(cuMemsetD8Async(d, 0, 16, stream));
  CU_ASSERT_OK(cuMemcpyDtoHAsync(h, d, n, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(bytes[15], 0);
  EXPECT_EQ(bytes[16], static_cast<unsigned char>(16 * 7));
  EXPECT_EQ(bytes[n - 1], static_cast<unsigned char>((n - 1) * 7));
  CU_EXPECT_OK(cuMemFree(d));
  CU_EXPECT_OK(cuMemFreeHost(h));
}

TEST_F(api_memory_Async, CopyPageableMemory) {
  std::vector<int> src(100000), dst(100000);
  std::iota(src.begin(), src.end(), -5);
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, src.size() * 4));
  CU_ASSERT_OK(cuMemcpyHtoDAsync(d, src.data(), src.size() * 4, stream));
  CU_ASSERT_OK(cuMemcpyDtoHAsync(dst.data(), d, dst.size() * 4, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Async, UnifiedCopyAsync) {
  std::vector<int> src(1000), dst(1000);
  std::iota(src.begin(), src.end(), 3);
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, 4000));
  CU_ASSERT_OK(cuMemAlloc(&b, 4000));
  CU_ASSERT_OK(cuMemcpyAsync(a, reinterpret_cast<CUdeviceptr>(src.data()), 4000, stream));
  CU_ASSERT_OK(cuMemcpyAsync(b, a, 4000, stream));
  CU_ASSERT_OK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst.data()), b, 4000, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

TEST_F(api_memory_Async, SetsAsync) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 4096));
  CU_ASSERT_OK(cuMemsetD32Async(d, 0x01020304, 1024, stream));
  CU_ASSERT_OK(cuMemsetD16Async(d + 8, 0xaaaa, 2, stream));
  CU_ASSERT_OK(cuMemsetD2D8Async(d + 1024, 64, 0x5a, 16, 4, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  std::vector<unsigned char> v(4096);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), d, v.size()));
  EXPECT_EQ(v[0], 0x04);
  EXPECT_EQ(v[8], 0xaa);
  EXPECT_EQ(v[12], 0x04);
  EXPECT_EQ(v[1024 + 64 * 3 + 15], 0x5a);
  EXPECT_EQ(v[1024 + 64 * 3 + 16], 0x04);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Async, Copy2DAsync) {
  CUdeviceptr d;
  size_t pitch;
  CU_ASSERT_OK(cuMemAllocPitch(&d, &pitch, 40, 10, 4));
  std::vector<unsigned char> src(400), dst(400);
  for (int i = 0; i < 400; ++i) src[i] = static_cast<unsigned char>(i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src.data();
  c.srcPitch = 40;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = pitch;
  c.WidthInBytes = 40;
  c.Height = 10;
  CU_ASSERT_OK(cuMemcpy2DAsync(&c, stream));
  CUDA_MEMCPY2D r = c;
  r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  r.srcDevice = d;
  r.srcPitch = pitch;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = dst.data();
  r.dstPitch = 40;
  CU_ASSERT_OK(cuMemcpy2DAsync(&r, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Async, CopyPastEndAsync) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 64));
  std::vector<char> h(128);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoDAsync(d, h.data(), 128, stream));
  CU_EXPECT_OK(cuStreamSynchronize(stream)) << "a validation error does not poison the stream";
  CU_EXPECT_OK(cuMemFree(d));
}

// ---- stream-ordered allocation and pools -------------------------------------------------------------------------

class api_memory_Pool : public api_memory_Async {
 protected:
  void SetUp() override {
    api_memory_Async::SetUp();
    if (HasFatalFailure()) return;
    if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 1)
      GTEST_SKIP() << "not-supported: no memory pools";
  }
  CUmemPoolProps Props() {
    CUmemPoolProps p{};
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
  }
};

TEST_F(api_memory_Pool, AllocAsyncFreeAsync) {
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAllocAsync(&p, 1 << 20, stream));
  EXPECT_NE(p, 0u);
  CU_ASSERT_OK(cuMemsetD32Async(p, 5, 1 << 18, stream));
  unsigned v = 0;
  CU_ASSERT_OK(cuMemcpyDtoHAsync(&v, p + 4096, 4, stream));
  CU_ASSERT_OK(cuMemFreeAsync(p, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(v, 5u);
}

TEST_F(api_memory_Pool, AllocAsyncZeroBytes) {
  CUdeviceptr p;
  p = 12345;
  CU_EXPECT_OK(cuMemAllocAsync(&p, 0, stream)) << "zero bytes are accepted (measured on driver 580)";
  EXPECT_EQ(p, 0u) << "and give the null pointer";
  CU_EXPECT_OK(cuMemFreeAsync(p, stream)) << "which may be freed";
  CU_EXPECT_OK(cuStreamSynchronize(stream));
}

TEST_F(api_memory_Pool, AllocAsyncFromDefaultPoolAttributes) {
  CUmemoryPool pool;
  CU_ASSERT_OK(cuDeviceGetDefaultMemPool(&pool, dev));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocAsync(&p, 1 << 20, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  cuuint64_t used = 0;
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT_GE(used, cuuint64_t{1} << 20);
  CU_ASSERT_OK(cuMemFreeAsync(p, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT_EQ(used, 0u);
}

TEST_F(api_memory_Pool, CreateAllocDestroy) {
  CUmemPoolProps props = Props();
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 65536, pool, stream));
  CU_ASSERT_OK(cuMemsetD8Async(p, 1, 65536, stream));
  CU_ASSERT_OK(cuMemFreeAsync(p, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_Pool, ReleaseThreshold) {
  CUmemPoolProps props = Props();
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  cuuint64_t threshold = 0;
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  EXPECT_EQ(threshold, 0u);
  threshold = 64 << 20;
  CU_EXPECT_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  cuuint64_t got = 0;
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got));
  EXPECT_EQ(got, threshold);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 8 << 20, pool, stream));
  CU_ASSERT_OK(cuMemFreeAsync(p, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  cuuint64_t reserved = 0;
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
  EXPECT_GE(reserved, cuuint64_t{8} << 20) << "kept below the release threshold";
  CU_EXPECT_OK(cuMemPoolTrimTo(pool, 0));
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
  EXPECT_EQ(reserved, 0u) << "trim returns unused memory";
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_Pool, HighWatermarkReset) {
  CUmemPoolProps props = Props();
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4 << 20, pool, stream));
  CU_ASSERT_OK(cuMemFreeAsync(p, stream));
  CU_ASSERT_OK(cuStreamSynchronize(stream));
  cuuint64_t high = 0;
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high));
  EXPECT_GE(high, cuuint64_t{4} << 20);
  cuuint64_t zero = 0;
  CU_EXPECT_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
  CU_EXPECT_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high));
  EXPECT_EQ(high, 0u);
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_Pool, SetAndGetAccessOwnDevice) {
  CUmemPoolProps props = Props();
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = dev;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CU_EXPECT_OK(cuMemPoolGetAccess(&flags, pool, &loc));
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_Pool, CurrentPoolOfDevice) {
  CUmemPoolProps props = Props();
  CUmemoryPool pool, current, def;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CU_ASSERT_OK(cuDeviceGetDefaultMemPool(&def, dev));
  CU_ASSERT_OK(cuDeviceSetMemPool(dev, pool));
  CU_EXPECT_OK(cuDeviceGetMemPool(&current, dev));
  EXPECT_EQ(current, pool);
  CU_ASSERT_OK(cuDeviceSetMemPool(dev, def));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_Pool, CreateBadLocation) {
  CUmemPoolProps props = Props();
  props.location.id = conf::DeviceCount() + 3;
  CUmemoryPool pool;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemPoolCreate(&pool, &props));
}

TEST_F(api_memory_Pool, FreeAsyncOfUnknownPointer) {
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(0x1234000, stream));
}

// ---- virtual memory management ---------------------------------------------------------------------------------

class api_memory_Vmm : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 1)
      GTEST_SKIP() << "not-supported: no virtual memory management";
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CU_ASSERT_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  }
  CUmemAllocationProp prop{};
  size_t granularity = 0;
};

TEST_F(api_memory_Vmm, Granularity) {
  EXPECT_GT(granularity, 0u);
  EXPECT_EQ(granularity & (granularity - 1), 0u) << "a power of two";
  size_t recommended = 0;
  CU_EXPECT_OK(cuMemGetAllocationGranularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_GE(recommended, granularity);
}

TEST_F(api_memory_Vmm, ReserveCreateMapAccessUse) {
  size_t size = granularity * 2;
  CUdeviceptr va = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, size, 0, 0, 0));
  CUmemGenericAllocationHandle h;
  CU_ASSERT_OK(cuMemCreate(&h, size, &prop, 0));
  CU_ASSERT_OK(cuMemMap(va, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_ASSERT_OK(cuMemSetAccess(va, size, &access, 1));
  unsigned long long flags = 0;
  CU_EXPECT_OK(cuMemGetAccess(&flags, &prop.location, va));
  EXPECT_EQ(flags, static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
  CU_EXPECT_OK(cuMemsetD32(va, 0xc0ffee, size / 4));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, va + size - 4, 4));
  EXPECT_EQ(v, 0xc0ffeeu);
  CU_EXPECT_OK(cuMemUnmap(va, size));
  CU_EXPECT_OK(cuMemRelease(h));
  CU_EXPECT_OK(cuMemAddressFree(va, size));
}

TEST_F(api_memory_Vmm, TwoMappingsShareMemory) {
  size_t size = granularity;
  CUdeviceptr a = 0, b = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&a, size, 0, 0, 0));
  CU_ASSERT_OK(cuMemAddressReserve(&b, size, 0, 0, 0));
  CUmemGenericAllocationHandle h;
  CU_ASSERT_OK(cuMemCreate(&h, size, &prop, 0));
  CU_ASSERT_OK(cuMemMap(a, size, 0, h, 0));
  CU_ASSERT_OK(cuMemMap(b, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_ASSERT_OK(cuMemSetAccess(a, size, &access, 1));
  CU_ASSERT_OK(cuMemSetAccess(b, size, &access, 1));
  CU_ASSERT_OK(cuMemsetD32(a, 77, 1));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, b, 4));
  EXPECT_EQ(v, 77u) << "both ranges map the same physical memory";
  CU_EXPECT_OK(cuMemUnmap(a, size));
  CU_EXPECT_OK(cuMemUnmap(b, size));
  CU_EXPECT_OK(cuMemRelease(h));
  CU_EXPECT_OK(cuMemAddressFree(a, size));
  CU_EXPECT_OK(cuMemAddressFree(b, size));
}

// Pools that grow (ggml's, PyTorch's expandable segments) map physical allocations side by side in one reservation
// and use the range as one: copies, sets and kernels cross the seams. A range that runs on into an unmapped part of
// the reservation is refused.
TEST_F(api_memory_Vmm, CopiesSetsAndKernelsCrossMappingsSideBySide) {
  const size_t size = granularity;
  CUdeviceptr va = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, 3 * size, 0, 0, 0));
  CUmemGenericAllocationHandle first, second;
  CU_ASSERT_OK(cuMemCreate(&first, size, &prop, 0));
  CU_ASSERT_OK(cuMemCreate(&second, size, &prop, 0));
  CU_ASSERT_OK(cuMemMap(va, size, 0, first, 0));
  CU_ASSERT_OK(cuMemMap(va + size, size, 0, second, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_ASSERT_OK(cuMemSetAccess(va, 2 * size, &access, 1));
  std::vector<unsigned> pattern(2 * size / 4);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = unsigned(i * 2654435761u);
  CU_EXPECT_OK(cuMemcpyHtoD(va, pattern.data(), 2 * size));
  CUdeviceptr plain = 0;
  CU_ASSERT_OK(cuMemAlloc(&plain, 2 * size));
  CU_EXPECT_OK(cuMemcpyDtoD(plain, va, 2 * size));
  std::vector<unsigned> back(pattern.size());
  CU_EXPECT_OK(cuMemcpyDtoH(back.data(), plain, 2 * size));
  EXPECT_TRUE(back == pattern) << "a copy out of both mappings";
  // a set and an asynchronous copy around the seam
  CU_EXPECT_OK(cuMemsetD32(va + size - 64, 0x5ea15ea1, 32));
  CU_EXPECT_OK(cuMemcpyDtoDAsync(plain, va + size / 2, size, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned seam[2] = {};
  CU_EXPECT_OK(cuMemcpyDtoH(seam, plain + size / 2 - 4, 8));
  EXPECT_EQ(seam[0], 0x5ea15ea1u);
  EXPECT_EQ(seam[1], 0x5ea15ea1u);
  // a kernel that writes across the seam
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction fill;
  CU_ASSERT_OK(cuModuleGetFunction(&fill, m, "fill_u32"));
  CUdeviceptr at = va + size - 256;
  unsigned value = 0x600d;
  int n = 128;
  void* params[] = {&at, &value, &n};
  CU_ASSERT_OK(conf::Launch1D(fill, 1, 128, params));
  CU_EXPECT_OK(cuCtxSynchronize());
  std::vector<unsigned> filled(130);
  CU_EXPECT_OK(cuMemcpyDtoH(filled.data(), at - 4, filled.size() * 4));
  EXPECT_EQ(filled[1], 0x600du);
  EXPECT_EQ(filled[128], 0x600du);
  EXPECT_EQ(filled[129], pattern[(size + 256) / 4]) << "the word after the kernel's range is the pattern's";
  // past the second mapping the reservation is not mapped
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(va + size, pattern.data(), 2 * size));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(va + 2 * size - 8, 1, 16));
  CU_EXPECT_OK(cuModuleUnload(m));
  CU_EXPECT_OK(cuMemFree(plain));
  CU_EXPECT_OK(cuMemUnmap(va, size));
  CU_EXPECT_OK(cuMemUnmap(va + size, size));
  CU_EXPECT_OK(cuMemRelease(first));
  CU_EXPECT_OK(cuMemRelease(second));
  CU_EXPECT_OK(cuMemAddressFree(va, 3 * size));
}

TEST_F(api_memory_Vmm, PropertiesFromHandleAndRetain) {
  CUdeviceptr va = 0;
  CU_ASSERT_OK(cuMemAddressReserve(&va, granularity, 0, 0, 0));
  CUmemGenericAllocationHandle h;
  CU_ASSERT_OK(cuMemCreate(&h, granularity, &prop, 0));
  CU_ASSERT_OK(cuMemMap(va, granularity, 0, h, 0));
  CUmemAllocationProp got{};
  CU_EXPECT_OK(cuMemGetAllocationPropertiesFromHandle(&got, h));
  EXPECT_EQ(got.type, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(got.location.id, dev);
  CUmemGenericAllocationHandle retained = 0;
  CU_EXPECT_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va)));
  EXPECT_EQ(retained, h);
  CU_EXPECT_OK(cuMemRelease(retained));
  CU_EXPECT_OK(cuMemUnmap(va, granularity));
  CU_EXPECT_OK(cuMemRelease(h));
  CU_EXPECT_OK(cuMemAddressFree(va, granularity));
}

TEST_F(api_memory_Vmm, UnalignedSizesRejected) {
  CUmemGenericAllocationHandle h;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, granularity + 1, &prop, 0));
  CUdeviceptr va;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&va, granularity + 1, 0, 0, 0));
}

TEST_F(api_memory_Vmm, MapOutsideReservation) {
  CUmemGenericAllocationHandle h;
  CU_ASSERT_OK(cuMemCreate(&h, granularity, &prop, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemMap(0x100000000000ull, granularity, 0, h, 0));
  CU_EXPECT_OK(cuMemRelease(h));
}

TEST_F(api_memory_Vmm, ShareableFileDescriptor) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
    CONF_NOT_SUPPORTED("no POSIX file descriptor handles");
  CUmemAllocationProp p = prop;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h;
  CU_ASSERT_OK(cuMemCreate(&h, granularity, &p, 0));
  int fd = -1;
  CU_ASSERT_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_GE(fd, 0);
  CUmemGenericAllocationHandle imported;
  CU_EXPECT_OK(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CU_EXPECT_OK(cuMemRelease(imported));
  close(fd);
  CU_EXPECT_OK(cuMemRelease(h));
}

// ---- arrays ----------------------------------------------------------------------------------------------------

using api_memory_Array = ContextTest;

TEST_F(api_memory_Array, Create2DAndDescriptor) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 64;
  d.Height = 32;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 2;
  CUarray a;
  CU_ASSERT_OK(cuArrayCreate(&a, &d));
  CUDA_ARRAY_DESCRIPTOR got{};
  CU_EXPECT_OK(cuArrayGetDescriptor(&got, a));
  EXPECT_EQ(got.Width, 64u);
  EXPECT_EQ(got.Height, 32u);
  EXPECT_EQ(got.Format, CU_AD_FORMAT_FLOAT);
  EXPECT_EQ(got.NumChannels, 2u);
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Array, Create3DAndDescriptor) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 16;
  d.Height = 8;
  d.Depth = 4;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT32;
  d.NumChannels = 1;
  CUarray a;
  CU_ASSERT_OK(cuArray3DCreate(&a, &d));
  CUDA_ARRAY3D_DESCRIPTOR got{};
  CU_EXPECT_OK(cuArray3DGetDescriptor(&got, a));
  EXPECT_EQ(got.Depth, 4u);
  EXPECT_EQ(got.Format, CU_AD_FORMAT_UNSIGNED_INT32);
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Array, BadChannelCount) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 8;
  d.Height = 8;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 3;
  CUarray a;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuArrayCreate(&a, &d));
}

TEST_F(api_memory_Array, ZeroWidth) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 0;
  d.Height = 8;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUarray a;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuArrayCreate(&a, &d));
}

TEST_F(api_memory_Array, HostToArrayAndBack1D) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 256;
  d.Height = 0;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT32;
  d.NumChannels = 1;
  CUarray a;
  CU_ASSERT_OK(cuArrayCreate(&a, &d));
  std::vector<unsigned> in(256), out(256);
  std::iota(in.begin(), in.end(), 1000u);
  CU_ASSERT_OK(cuMemcpyHtoA(a, 0, in.data(), 1024));
  CU_ASSERT_OK(cuMemcpyAtoH(out.data(), a, 0, 1024));
  EXPECT_EQ(in, out);
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Array, Copy2DThroughArray) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 32;
  d.Height = 16;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.NumChannels = 4;
  CUarray a;
  CU_ASSERT_OK(cuArrayCreate(&a, &d));
  std::vector<unsigned char> in(32 * 4 * 16), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 3);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = 128;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = 128;
  c.Height = 16;
  CU_ASSERT_OK(cuMemcpy2D(&c));
  CUDA_MEMCPY2D r{};
  r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  r.srcArray = a;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = out.data();
  r.dstPitch = 128;
  r.WidthInBytes = 128;
  r.Height = 16;
  CU_ASSERT_OK(cuMemcpy2D(&r));
  EXPECT_EQ(in, out);
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Array, CopyPastArrayEnd) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 16;
  d.Height = 0;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUarray a;
  CU_ASSERT_OK(cuArrayCreate(&a, &d));
  std::vector<float> in(32);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoA(a, 0, in.data(), 128));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Array, DestroyNull) { CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuArrayDestroy(nullptr)); }

// ---- managed memory: advice, prefetch, range attributes ---------------------------------------------------------

class api_memory_Managed : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 1)
      GTEST_SKIP() << "not-supported: no managed memory";
    CU_ASSERT_OK(cuMemAllocManaged(&ptr, size, CU_MEM_ATTACH_GLOBAL));
  }
  void TearDown() override {
    if (ptr) cuMemFree(ptr);
    ContextTest::TearDown();
  }
  CUmemLocation Device() {
    CUmemLocation l{};
    l.type = CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = dev;
    return l;
  }
  CUdeviceptr ptr = 0;
  size_t size = 1 << 21;
};

TEST_F(api_memory_Managed, AdviseReadMostly) {
  CU_EXPECT_OK(cuMemAdvise(ptr, size, CU_MEM_ADVISE_SET_READ_MOSTLY, Device()));
  int readMostly = 0;
  CU_EXPECT_OK(cuMemRangeGetAttribute(&readMostly, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, size));
  EXPECT_EQ(readMostly, 1);
  CU_EXPECT_OK(cuMemAdvise(ptr, size, CU_MEM_ADVISE_UNSET_READ_MOSTLY, Device()));
  CU_EXPECT_OK(cuMemRangeGetAttribute(&readMostly, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, size));
  EXPECT_EQ(readMostly, 0);
}

TEST_F(api_memory_Managed, AdvisePreferredLocation) {
  CU_EXPECT_OK(cuMemAdvise(ptr, size, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, Device()));
  int where = -99;
  CU_EXPECT_OK(cuMemRangeGetAttribute(&where, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, size));
  EXPECT_EQ(where, dev);
}

TEST_F(api_memory_Managed, PrefetchToDeviceAndHost) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 1)
    CONF_NOT_SUPPORTED("prefetch needs concurrent managed access");
  auto* host = reinterpret_cast<int*>(ptr);
  host[0] = 42;
  CU_EXPECT_OK(cuMemPrefetchAsync(ptr, size, Device(), 0, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  int last = -99;
  CU_EXPECT_OK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, size));
  EXPECT_EQ(last, dev);
  CUmemLocation hostLoc{};
  hostLoc.type = CU_MEM_LOCATION_TYPE_HOST;
  CU_EXPECT_OK(cuMemPrefetchAsync(ptr, size, hostLoc, 0, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  EXPECT_EQ(host[0], 42);
}

TEST_F(api_memory_Managed, RangeAttributeOfDeviceMemory) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 4096));
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, 4096));
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Managed, AdviseBadAdvice) {
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAdvise(ptr, size, static_cast<CUmem_advise>(99), Device()));
}

TEST_F(api_memory_Managed, KernelAndHostSeeSameBytes) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "fill_u32"));
  unsigned value = 0x600d;
  int n = 1000;
  void* params[] = {&ptr, &value, &n};
  CU_ASSERT_OK(conf::Launch1D(f, 8, 128, params));
  auto* host = reinterpret_cast<unsigned*>(ptr);
  EXPECT_EQ(host[0], 0x600du);
  EXPECT_EQ(host[999], 0x600du);
  EXPECT_EQ(host[1000], 0u) << "managed memory starts zeroed";
}

TEST_F(api_memory_Managed, StreamAttachHost) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_EXPECT_OK(cuStreamAttachMemAsync(s, ptr, 0, CU_MEM_ATTACH_HOST));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuStreamAttachMemAsync(s, ptr, 0, CU_MEM_ATTACH_SINGLE));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// ---- IPC ---------------------------------------------------------------------------------------------------------

using api_memory_Ipc = ContextTest;

TEST_F(api_memory_Ipc, GetHandle) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 1 << 20));
  CUipcMemHandle h{};
  CU_EXPECT_OK(cuIpcGetMemHandle(&h, d));
  CUipcMemHandle zero{};
  EXPECT_NE(std::memcmp(&h, &zero, sizeof(h)), 0);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Ipc, GetHandleOfUnknownPointer) {
  CUipcMemHandle h{};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuIpcGetMemHandle(&h, 0x1234000));
}

TEST_F(api_memory_Ipc, OpenInSameProcessFails) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 1 << 20));
  CUipcMemHandle h{};
  CU_ASSERT_OK(cuIpcGetMemHandle(&h, d));
  CUdeviceptr opened;
  // expectation from docs; GPU run will confirm: a process cannot open its own handle.
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuIpcOpenMemHandle(&opened, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CU_EXPECT_OK(cuMemFree(d));
}

CONF_FRESH_BODY(IpcOpenAndRead) {
  // arg: the handle as hex; reads the first word through the handle and returns it (or -CUresult).
  CUipcMemHandle h{};
  for (size_t i = 0; i < sizeof(h.reserved) && 2 * i + 1 < arg.size(); ++i)
    h.reserved[i] = static_cast<char>(std::stoi(arg.substr(2 * i, 2), nullptr, 16));
  CUresult r = cuInit(0);
  CUcontext c;
  if (r == CUDA_SUCCESS) r = cuCtxCreate(&c, nullptr, 0, 0);
  CUdeviceptr p = 0;
  if (r == CUDA_SUCCESS) r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  unsigned v = 0;
  if (r == CUDA_SUCCESS) r = cuMemcpyDtoH(&v, p, 4);
  if (r == CUDA_SUCCESS) r = cuIpcCloseMemHandle(p);
  if (r != CUDA_SUCCESS) return -static_cast<int>(r);
  return static_cast<int>(v & 0x7fffffff);
}

TEST_F(api_memory_Ipc, OpenInAnotherProcess) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 1 << 20));
  CU_ASSERT_OK(cuMemsetD32(d, 0x1234567, 16));
  CUipcMemHandle h{};
  CU_ASSERT_OK(cuIpcGetMemHandle(&h, d));
  std::string hex;
  char buf[4];
  for (char c : h.reserved) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(c));
    hex += buf;
  }
  auto r = conf::RunFresh("IpcOpenAndRead", hex, 60);
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 0x1234567) << "negative: -CUresult in the child";
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_memory_Ipc, EventHandle) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CUipcEventHandle h{};
  CU_EXPECT_OK(cuIpcGetEventHandle(&h, e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_memory_Ipc, EventHandleNeedsInterprocessFlag) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CUipcEventHandle h{};
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuIpcGetEventHandle(&h, e)) << "measured on driver 580";
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_memory_Ipc, EventHandleNullOutput) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuIpcGetEventHandle(nullptr, e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_memory_Ipc, InterprocessEventNeedsTimingDisabled) {
  CUevent e;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, CU_EVENT_INTERPROCESS));
}

TEST_F(api_memory_Ipc, OpenEventHandleNullOutput) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CUipcEventHandle h{};
  CU_ASSERT_OK(cuIpcGetEventHandle(&h, e));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuIpcOpenEventHandle(nullptr, h));
  CU_EXPECT_OK(cuEventDestroy(e));
}

std::string ToHex(const char* bytes, size_t n) {
  std::string hex;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(bytes[i]));
    hex += buf;
  }
  return hex;
}

template <typename Handle> Handle FromHex(const std::string& hex, size_t offset) {
  Handle h{};
  for (size_t i = 0; i < sizeof(h.reserved) && offset + 2 * i + 1 < hex.size(); ++i)
    h.reserved[i] = static_cast<char>(std::stoi(hex.substr(offset + 2 * i, 2), nullptr, 16));
  return h;
}

CONF_FRESH_BODY(IpcEventGate) {
  // arg: a memory handle (a gate word) then an event handle, as hex. The parent's event is recorded behind a
  // stream wait on the gate: it is pending here until this process opens the gate.
  // Returns 1000 * (cuEventQuery before opening) + (cuEventSynchronize after), or -CUresult of a setup step.
  auto mem = FromHex<CUipcMemHandle>(arg, 0);
  auto ev = FromHex<CUipcEventHandle>(arg, 2 * sizeof(CUipcMemHandle));
  CUresult r = cuInit(0);
  CUcontext c;
  if (r == CUDA_SUCCESS) r = cuCtxCreate(&c, nullptr, 0, 0);
  CUdeviceptr gate = 0;
  if (r == CUDA_SUCCESS) r = cuIpcOpenMemHandle(&gate, mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  CUevent e = nullptr;
  if (r == CUDA_SUCCESS) r = cuIpcOpenEventHandle(&e, ev);
  if (r != CUDA_SUCCESS) return -static_cast<int>(r);
  CUresult before = cuEventQuery(e);
  r = cuMemsetD32(gate, 1, 1);
  if (r != CUDA_SUCCESS) return -static_cast<int>(r);
  CUresult after = cuEventSynchronize(e);
  cuEventDestroy(e);
  cuIpcCloseMemHandle(gate);
  return static_cast<int>(before) * 1000 + static_cast<int>(after);
}

TEST_F(api_memory_Ipc, EventPendingInAnotherProcessUntilItsStreamPasses) {
  CUdeviceptr gate;
  CU_ASSERT_OK(cuMemAlloc(&gate, 4096));
  CU_ASSERT_OK(cuMemsetD32(gate, 0, 1));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(cuStreamWaitValue32(s, gate, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CU_ASSERT_OK(cuEventRecord(e, s));
  CUipcMemHandle mh{};
  CU_ASSERT_OK(cuIpcGetMemHandle(&mh, gate));
  CUipcEventHandle eh{};
  CU_ASSERT_OK(cuIpcGetEventHandle(&eh, e));
  CU_EXPECT(CUDA_ERROR_NOT_READY, cuEventQuery(e));
  auto r = conf::RunFresh("IpcEventGate",
                          ToHex(mh.reserved, sizeof mh.reserved) + ToHex(eh.reserved, sizeof eh.reserved), 60);
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 600 * 1000) << "the child saw CUDA_ERROR_NOT_READY, then waited for the parent's stream";
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFree(gate));
}

CONF_FRESH_BODY(IpcEventStreamWait) {
  // arg: an event handle as hex. Makes this process's stream wait for the parent's (completed) record and
  // records the event itself; returns -CUresult of the first failure (0: all succeeded).
  auto ev = FromHex<CUipcEventHandle>(arg, 0);
  CUresult r = cuInit(0);
  CUcontext c;
  if (r == CUDA_SUCCESS) r = cuCtxCreate(&c, nullptr, 0, 0);
  CUevent e = nullptr;
  if (r == CUDA_SUCCESS) r = cuIpcOpenEventHandle(&e, ev);
  CUstream s = nullptr;
  if (r == CUDA_SUCCESS) r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS) r = cuStreamWaitEvent(s, e, 0);
  if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
  if (r == CUDA_SUCCESS) r = cuEventRecord(e, s);
  if (r == CUDA_SUCCESS) r = cuEventSynchronize(e);
  if (r == CUDA_SUCCESS) r = cuEventQuery(e);
  float ms = 0;
  // An imported event behaves as one created with CU_EVENT_DISABLE_TIMING.
  if (r == CUDA_SUCCESS && cuEventElapsedTime(&ms, e, e) != CUDA_ERROR_INVALID_HANDLE) r = CUDA_ERROR_UNKNOWN;
  if (r == CUDA_SUCCESS) r = cuStreamDestroy(s);
  if (r == CUDA_SUCCESS) r = cuEventDestroy(e);
  return -static_cast<int>(r);
}

TEST_F(api_memory_Ipc, EventWaitedOnAndRecordedInAnotherProcess) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(e));
  CUipcEventHandle eh{};
  CU_ASSERT_OK(cuIpcGetEventHandle(&eh, e));
  auto r = conf::RunFresh("IpcEventStreamWait", ToHex(eh.reserved, sizeof eh.reserved), 60);
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 0) << "-CUresult of the child";
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

// ---- peer copies between contexts ---------------------------------------------------------------------------------

using api_memory_Peer = ContextTest;

TEST_F(api_memory_Peer, CopyBetweenContextsOfOneDevice) {
  CUdeviceptr a;
  CU_ASSERT_OK(cuMemAlloc(&a, 4096));
  CU_ASSERT_OK(cuMemsetD32(a, 31337, 1024));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CUdeviceptr b;
  CU_ASSERT_OK(cuMemAlloc(&b, 4096));
  CU_EXPECT_OK(cuMemcpyPeer(b, other, a, ctx, 4096));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, b + 4092, 4));
  EXPECT_EQ(v, 31337u);
  CU_EXPECT_OK(cuMemFree(b));
  CU_EXPECT_OK(cuCtxDestroy(other));
  CU_EXPECT_OK(cuMemFree(a));
}

TEST_F(api_memory_Peer, CopyPeerAsync) {
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, 4096));
  CU_ASSERT_OK(cuMemAlloc(&b, 4096));
  CU_ASSERT_OK(cuMemsetD32(a, 99, 1024));
  CU_EXPECT_OK(cuMemcpyPeerAsync(b, ctx, a, ctx, 4096, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, b, 4));
  EXPECT_EQ(v, 99u);
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

TEST_F(api_memory_Peer, TwoDevices) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  CUdeviceptr a;
  CU_ASSERT_OK(cuMemAlloc(&a, 4096));
  CU_ASSERT_OK(cuMemsetD32(a, 5150, 1024));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, 1));
  CUdeviceptr b;
  CU_ASSERT_OK(cuMemAlloc(&b, 4096));
  CU_EXPECT_OK(cuMemcpyPeer(b, other, a, ctx, 4096));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, b + 100, 4));
  EXPECT_EQ(v, 5150u);
  CU_EXPECT_OK(cuMemFree(b));
  CU_EXPECT_OK(cuCtxDestroy(other));
  CU_EXPECT_OK(cuMemFree(a));
}

TEST_F(api_memory_Peer, EnablePeerAccessSameDevice) {
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  // Peer access is between devices, not between contexts of one device (measured on driver 580).
  CU_EXPECT(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, cuCtxEnablePeerAccess(ctx, 0));
  CU_EXPECT_OK(cuCtxDestroy(other));
}

TEST_F(api_memory_Peer, DisableNotEnabled) {
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CU_EXPECT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(ctx));
  CU_EXPECT_OK(cuCtxDestroy(other));
}

}  // namespace
