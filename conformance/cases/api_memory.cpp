// api.memory: linear device memory, copies, sets, pitch, host memory, managed memory, pointer attributes.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;
using api_memory = ContextTest;

std::vector<unsigned char> Pattern(size_t n, unsigned seed = 1) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7) ^ (i >> 8));
  return v;
}

// ---- allocation ----------------------------------------------------------------------------------------------------

TEST_F(api_memory, AllocAndFree) {
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAlloc(&p, 1 << 20));
  EXPECT_NE(p, 0u);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, AllocAligned256) {
  for (size_t size : {1u, 3u, 17u, 255u, 257u, 4097u}) {
    CUdeviceptr p = 0;
    CU_ASSERT_OK(cuMemAlloc(&p, size));
    EXPECT_EQ(p % 256, 0u) << "size " << size;
    CU_EXPECT_OK(cuMemFree(p));
  }
}

TEST_F(api_memory, AllocDistinctNonOverlapping) {
  std::vector<CUdeviceptr> ptrs(32);
  for (auto& p : ptrs) CU_ASSERT_OK(cuMemAlloc(&p, 1000));
  std::sort(ptrs.begin(), ptrs.end());
  for (size_t i = 1; i < ptrs.size(); ++i) EXPECT_GE(ptrs[i] - ptrs[i - 1], 1000u);
  for (auto p : ptrs) CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, AllocZeroBytes) {
  CUdeviceptr p = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&p, 0));
}

TEST_F(api_memory, AllocNullResult) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(nullptr, 16)); }

TEST_F(api_memory, AllocTooLarge) {
  CUdeviceptr p = 0;
  CU_EXPECT(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, size_t{1} << 60));
  CUdeviceptr q = 0;
  CU_EXPECT_OK(cuMemAlloc(&q, 4096)) << "the context stays usable";
  CU_EXPECT_OK(cuMemFree(q));
}

TEST_F(api_memory, AllocMoreThanTotal) {
  size_t total = 0;
  CU_ASSERT_OK(cuDeviceTotalMem(&total, dev));
  CUdeviceptr p = 0;
  CU_EXPECT(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, total + (size_t{1} << 30)));
}

TEST_F(api_memory, AllocNoContext) {
  conf::DrainContextStack();
  CUdeviceptr p;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 16));
}

TEST_F(api_memory, FreeNull) {
  // expectation from docs; GPU run will confirm: freeing 0 is a no-op like free(NULL)
  CU_EXPECT_OK(cuMemFree(0));
}

TEST_F(api_memory, DoubleFree) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuMemFree(p));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFree(p));
}

TEST_F(api_memory, InteriorFree) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 256));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, FreeWildPointer) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFree(0x12345000)); }

TEST_F(api_memory, GetInfoDecreasesAfterAlloc) {
  size_t free0 = 0, total = 0;
  CU_ASSERT_OK(cuMemGetInfo(&free0, &total));
  EXPECT_GT(total, 0u);
  EXPECT_LE(free0, total);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, size_t{256} << 20));
  size_t free1 = 0;
  CU_EXPECT_OK(cuMemGetInfo(&free1, &total));
  EXPECT_LT(free1, free0);
  CU_EXPECT_OK(cuMemFree(p));
}

// Either output may be NULL (measured on driver 580): the other is still written.
TEST_F(api_memory, GetInfoNull) {
  size_t a = 0;
  CU_EXPECT_OK(cuMemGetInfo(nullptr, &a));
  EXPECT_GT(a, 0u) << "total";
  a = 0;
  CU_EXPECT_OK(cuMemGetInfo(&a, nullptr));
  EXPECT_GT(a, 0u) << "free";
}

TEST_F(api_memory, AddressRange) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 10000));
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_EXPECT_OK(cuMemGetAddressRange(&base, &size, p + 1234));
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 10000u);
  CU_EXPECT_OK(cuMemGetAddressRange(&base, nullptr, p + 9999)) << "either output may be NULL";
  CU_EXPECT_OK(cuMemGetAddressRange(nullptr, &size, p));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, AddressRangeOutside) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CUdeviceptr base;
  size_t size;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, 0x10));
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p)) << "after free";
}

TEST_F(api_memory, AllocationOwnedByContext) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuCtxDestroy(ctx));
  ctx = nullptr;
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CUdeviceptr base;
  size_t size;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p)) << "destroying a context frees its memory";
  CU_EXPECT_OK(cuCtxDestroy(other));
}

TEST_F(api_memory, AllocationUsableFromAnotherContext) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuMemsetD32(p, 0xabcdef01, 1024));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p + 64, 4)) << "unified addressing: any context of the process may copy";
  EXPECT_EQ(v, 0xabcdef01u);
  CU_EXPECT_OK(cuCtxDestroy(other));
  CU_EXPECT_OK(cuMemFree(p));
}

// ---- copies --------------------------------------------------------------------------------------------------------

class api_memory_CopySize : public ContextTest, public testing::WithParamInterface<size_t> {};

TEST_P(api_memory_CopySize, HostDeviceHostRoundTrip) {
  size_t n = GetParam();
  auto src = Pattern(n, static_cast<unsigned>(n));
  std::vector<unsigned char> dst(n, 0);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, n));
  CU_ASSERT_OK(cuMemcpyHtoD(p, src.data(), n));
  CU_ASSERT_OK(cuMemcpyDtoH(dst.data(), p, n));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_P(api_memory_CopySize, DeviceToDevice) {
  size_t n = GetParam();
  auto src = Pattern(n, 3);
  std::vector<unsigned char> dst(n, 0);
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, n));
  CU_ASSERT_OK(cuMemAlloc(&b, n));
  CU_ASSERT_OK(cuMemcpyHtoD(a, src.data(), n));
  CU_ASSERT_OK(cuMemcpyDtoD(b, a, n));
  CU_ASSERT_OK(cuMemcpyDtoH(dst.data(), b, n));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

TEST_P(api_memory_CopySize, UnifiedCopyInfersDirection) {
  size_t n = GetParam();
  auto src = Pattern(n, 5);
  std::vector<unsigned char> dst(n, 0);
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, n));
  CU_ASSERT_OK(cuMemAlloc(&b, n));
  CU_ASSERT_OK(cuMemcpy(a, reinterpret_cast<CUdeviceptr>(src.data()), n));
  CU_ASSERT_OK(cuMemcpy(b, a, n));
  CU_ASSERT_OK(cuMemcpy(reinterpret_cast<CUdeviceptr>(dst.data()), b, n));
  EXPECT_EQ(src, dst);
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

INSTANTIATE_TEST_SUITE_P(All, api_memory_CopySize, testing::Values(1, 7, 256, 4096, 65537, 1 << 22),
                         [](const testing::TestParamInfo<size_t>& i) { return "bytes_" + std::to_string(i.param); });

TEST_F(api_memory, CopyUnalignedOffsets) {
  const size_t n = 1000;
  auto src = Pattern(n);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 2 * n));
  CU_ASSERT_OK(cuMemsetD8(p, 0, 2 * n));
  CU_ASSERT_OK(cuMemcpyHtoD(p + 3, src.data() + 1, n - 1));
  std::vector<unsigned char> out(2 * n);
  CU_ASSERT_OK(cuMemcpyDtoH(out.data(), p, 2 * n));
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(std::memcmp(out.data() + 3, src.data() + 1, n - 1), 0);
  EXPECT_EQ(out[n + 2], 0);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, CopyZeroBytes) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 16));
  int x = 0;
  CU_EXPECT_OK(cuMemcpyHtoD(p, &x, 0));
  CU_EXPECT_OK(cuMemcpyDtoH(&x, p, 0));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, CopyPastEndHtoD) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  std::vector<char> host(8192);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p, host.data(), 4097));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p + 4000, host.data(), 100));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, CopyPastEndDtoH) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  std::vector<char> host(8192);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host.data(), p, 8192));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, CopyPastEndDtoD) {
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, 4096));
  CU_ASSERT_OK(cuMemAlloc(&b, 1024));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(b, a, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(a, b, 2048));
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

TEST_F(api_memory, CopyFreedPointer) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuMemFree(p));
  char host[16];
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host, p, sizeof(host)));
}

TEST_F(api_memory, CopyNullHost) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p, nullptr, 16));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(nullptr, p, 16));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, CopyHostToHostThroughUnified) {
  std::vector<int> a(100), b(100, 0);
  std::iota(a.begin(), a.end(), 7);
  CU_EXPECT_OK(cuMemcpy(reinterpret_cast<CUdeviceptr>(b.data()), reinterpret_cast<CUdeviceptr>(a.data()),
                        a.size() * sizeof(int)));
  EXPECT_EQ(a, b);
}

TEST_F(api_memory, Copy2DHostToDevicePitched) {
  const size_t width = 100, height = 20;
  CUdeviceptr p;
  size_t pitch = 0;
  CU_ASSERT_OK(cuMemAllocPitch(&p, &pitch, width, height, 4));
  EXPECT_GE(pitch, width);
  auto src = Pattern(width * height);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src.data();
  c.srcPitch = width;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = pitch;
  c.WidthInBytes = width;
  c.Height = height;
  CU_ASSERT_OK(cuMemcpy2D(&c));
  std::vector<unsigned char> back(width * height);
  CUDA_MEMCPY2D r{};
  r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  r.srcDevice = p;
  r.srcPitch = pitch;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = width;
  r.WidthInBytes = width;
  r.Height = height;
  CU_ASSERT_OK(cuMemcpy2D(&r));
  EXPECT_EQ(src, back);
  // Row 1 starts at pitch, not at width.
  unsigned char first = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&first, p + pitch, 1));
  EXPECT_EQ(first, src[width]);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, Copy2DWidthLargerThanPitch) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  std::vector<char> host(4096);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = 64;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = 64;
  c.WidthInBytes = 128;
  c.Height = 4;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, AllocPitchBadElementSize) {
  CUdeviceptr p;
  size_t pitch;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, &pitch, 100, 10, 3));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&p, &pitch, 100, 10, 32));
}

TEST_F(api_memory, AllocPitchAlignment) {
  CUdeviceptr p;
  size_t pitch = 0;
  CU_ASSERT_OK(cuMemAllocPitch(&p, &pitch, 1, 1, 16));
  int align = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
  EXPECT_GT(align, 0);
  if (align > 0) {
    EXPECT_EQ(pitch % static_cast<size_t>(align), 0u);
  }
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, Copy3DHostDevice) {
  const size_t w = 16, h = 4, d = 3;
  auto src = Pattern(w * h * d, 9);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, w * h * d));
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src.data();
  c.srcPitch = w;
  c.srcHeight = h;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = w;
  c.dstHeight = h;
  c.WidthInBytes = w;
  c.Height = h;
  c.Depth = d;
  CU_ASSERT_OK(cuMemcpy3D(&c));
  std::vector<unsigned char> back(w * h * d);
  CU_ASSERT_OK(cuMemcpyDtoH(back.data(), p, back.size()));
  EXPECT_EQ(src, back);
  CU_EXPECT_OK(cuMemFree(p));
}

// ---- sets ----------------------------------------------------------------------------------------------------------

TEST_F(api_memory, SetD8) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 1001));
  CU_ASSERT_OK(cuMemsetD8(p, 0xa5, 1001));
  std::vector<unsigned char> v(1001);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, v.size()));
  for (auto b : v) ASSERT_EQ(b, 0xa5);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetD16) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 2000));
  CU_ASSERT_OK(cuMemsetD16(p, 0xbeef, 1000));
  std::vector<unsigned short> v(1000);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, 2000));
  for (auto x : v) ASSERT_EQ(x, 0xbeef);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetD32) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4000));
  CU_ASSERT_OK(cuMemsetD32(p, 0xdeadbeef, 1000));
  std::vector<unsigned> v(1000);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, 4000));
  for (auto x : v) ASSERT_EQ(x, 0xdeadbeefu);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetD8Partial) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_ASSERT_OK(cuMemsetD8(p, 0, 64));
  CU_ASSERT_OK(cuMemsetD8(p + 5, 0x11, 7));
  unsigned char v[64];
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, 64));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(v[i], (i >= 5 && i < 12) ? 0x11 : 0) << i;
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetD16Misaligned) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD16(p + 1, 1, 4));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetD32Misaligned) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 2, 1, 4));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, SetPastEnd) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p, 1, 65));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p, 1, 17));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, Set2D) {
  CUdeviceptr p;
  size_t pitch;
  CU_ASSERT_OK(cuMemAllocPitch(&p, &pitch, 64, 8, 4));
  CU_ASSERT_OK(cuMemsetD8(p, 0, pitch * 8));
  CU_ASSERT_OK(cuMemsetD2D32(p, pitch, 0x01020304, 10, 8));  // 40 bytes of each row
  std::vector<unsigned char> v(pitch * 8);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, v.size()));
  for (size_t row = 0; row < 8; ++row)
    for (size_t col = 0; col < 64; ++col) {
      unsigned char want = col < 40 ? static_cast<unsigned char>(4 - col % 4) : 0;
      ASSERT_EQ(v[row * pitch + col], want) << row << "," << col;
    }
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, Set2D8And16) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 256));
  CU_ASSERT_OK(cuMemsetD8(p, 0, 256));
  CU_ASSERT_OK(cuMemsetD2D8(p, 32, 0x7f, 8, 4));
  CU_ASSERT_OK(cuMemsetD2D16(p + 128, 32, 0x1234, 4, 4));
  std::vector<unsigned char> v(256);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, 256));
  for (int row = 0; row < 4; ++row) {
    EXPECT_EQ(v[row * 32 + 7], 0x7f);
    EXPECT_EQ(v[row * 32 + 8], 0);
    EXPECT_EQ(v[128 + row * 32 + 0], 0x34);
    EXPECT_EQ(v[128 + row * 32 + 7], 0x12);
    EXPECT_EQ(v[128 + row * 32 + 8], 0);
  }
  CU_EXPECT_OK(cuMemFree(p));
}

// ---- host memory ---------------------------------------------------------------------------------------------------

TEST_F(api_memory, AllocHostUsableForCopies) {
  void* h = nullptr;
  CU_ASSERT_OK(cuMemAllocHost(&h, 4096));
  ASSERT_NE(h, nullptr);
  std::memset(h, 0x3c, 4096);
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuMemcpyHtoD(p, h, 4096));
  std::vector<unsigned char> v(4096);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, 4096));
  EXPECT_EQ(v[4095], 0x3c);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuMemFreeHost(h));
}

TEST_F(api_memory, HostAllocFlags) {
  for (unsigned flags :
       {0u, unsigned{CU_MEMHOSTALLOC_PORTABLE}, unsigned{CU_MEMHOSTALLOC_DEVICEMAP},
        unsigned{CU_MEMHOSTALLOC_WRITECOMBINED}, unsigned{CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP}}) {
    void* h = nullptr;
    CU_ASSERT_OK(cuMemHostAlloc(&h, 1 << 16, flags)) << flags;
    unsigned got = 0xffff;
    CU_EXPECT_OK(cuMemHostGetFlags(&got, h));
    EXPECT_EQ(got & flags, flags) << "flags " << flags;
    CU_EXPECT_OK(cuMemFreeHost(h));
  }
}

TEST_F(api_memory, HostAllocBadFlags) {
  void* h = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostAlloc(&h, 4096, 0x80));
}

TEST_F(api_memory, HostGetDevicePointerMapped) {
  void* h = nullptr;
  CU_ASSERT_OK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr d = 0;
  CU_EXPECT_OK(cuMemHostGetDevicePointer(&d, h, 0));
  EXPECT_NE(d, 0u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&d, h, 1)) << "flags must be 0";
  CU_EXPECT_OK(cuMemFreeHost(h));
}

TEST_F(api_memory, HostGetDevicePointerUnregistered) {
  std::vector<char> plain(4096);
  CUdeviceptr d = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&d, plain.data(), 0));
}

TEST_F(api_memory, FreeHostOfUnregistered) {
  std::vector<char> plain(64);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(plain.data()));
}

TEST_F(api_memory, HostRegisterRoundTrip) {
  std::vector<unsigned> buf(4096);
  CU_ASSERT_OK(cuMemHostRegister(buf.data(), buf.size() * 4, 0));
  unsigned flags = 99;
  CU_EXPECT_OK(cuMemHostGetFlags(&flags, buf.data()));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, buf.size() * 4));
  CU_ASSERT_OK(cuMemsetD32(p, 77, buf.size()));
  CU_ASSERT_OK(cuMemcpyDtoH(buf.data(), p, buf.size() * 4));
  EXPECT_EQ(buf[4095], 77u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuMemHostUnregister(buf.data()));
}

TEST_F(api_memory, HostRegisterTwice) {
  std::vector<char> buf(8192);
  CU_ASSERT_OK(cuMemHostRegister(buf.data(), buf.size(), 0));
  CU_EXPECT(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf.data(), buf.size(), 0));
  CU_EXPECT_OK(cuMemHostUnregister(buf.data()));
}

TEST_F(api_memory, HostUnregisterNotRegistered) {
  std::vector<char> buf(64);
  CU_EXPECT(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf.data()));
}

TEST_F(api_memory, HostRegisterNullOrZero) {
  std::vector<char> buf(64);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(nullptr, 64, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(buf.data(), 0, 0));
}

// ---- managed memory ------------------------------------------------------------------------------------------------

TEST_F(api_memory, ManagedVisibleToHost) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 1) CONF_NOT_SUPPORTED("no managed memory");
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL));
  auto* host = reinterpret_cast<unsigned*>(p);
  host[10] = 12345;
  CU_ASSERT_OK(cuMemsetD32(p, 9, 8));
  CU_ASSERT_OK(cuCtxSynchronize());
  EXPECT_EQ(host[7], 9u);
  EXPECT_EQ(host[10], 12345u);
  unsigned v = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&v, p + 40, 4));
  EXPECT_EQ(v, 12345u);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, ManagedBadFlags) {
  CUdeviceptr p;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&p, 4096, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_SINGLE));
}

TEST_F(api_memory, ManagedZeroBytes) {
  CUdeviceptr p;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&p, 0, CU_MEM_ATTACH_GLOBAL));
}

// ---- pointer attributes --------------------------------------------------------------------------------------------

TEST_F(api_memory, PointerAttributesDevice) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 8192));
  CUcontext owner = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p + 100));
  EXPECT_EQ(owner, ctx);
  unsigned type = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  CUdeviceptr dp = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 16));
  EXPECT_EQ(dp, p + 16);
  CUdeviceptr start = 0;
  size_t size = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 5000));
  CU_EXPECT_OK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 5000));
  EXPECT_EQ(start, p);
  EXPECT_EQ(size, 8192u);
  int ordinal = -1;
  CU_EXPECT_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
  EXPECT_EQ(ordinal, dev);
  int managed = -1;
  CU_EXPECT_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
  EXPECT_EQ(managed, 0);
  unsigned long long id1 = 0, id2 = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
  CUdeviceptr q;
  CU_ASSERT_OK(cuMemAlloc(&q, 64));
  CU_EXPECT_OK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, q));
  EXPECT_NE(id1, id2);
  CU_EXPECT_OK(cuMemFree(q));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, PointerAttributesHost) {
  void* h = nullptr;
  CU_ASSERT_OK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  unsigned type = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(h)));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_HOST});
  void* hp = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, reinterpret_cast<CUdeviceptr>(h)));
  EXPECT_EQ(hp, h);
  CU_EXPECT_OK(cuMemFreeHost(h));
}

TEST_F(api_memory, PointerAttributeUnknownPointer) {
  std::vector<char> plain(64);
  unsigned type = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                            reinterpret_cast<CUdeviceptr>(plain.data())));
}

TEST_F(api_memory, PointerAttributeManaged) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 1) CONF_NOT_SUPPORTED("no managed memory");
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL));
  int managed = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
  EXPECT_EQ(managed, 1);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, PointerGetAttributesBatch) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUcontext c = nullptr;
  unsigned type = 0;
  size_t size = 0;
  void* data[] = {&c, &type, &size};
  CU_EXPECT_OK(cuPointerGetAttributes(3, attrs, data, p));
  EXPECT_EQ(c, ctx);
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  EXPECT_EQ(size, 4096u);
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory, PointerSetSyncMemops) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  int one = 1;
  CU_EXPECT_OK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
  int got = 0;
  CU_EXPECT_OK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
  EXPECT_EQ(got, 1);
  CU_EXPECT_OK(cuMemFree(p));
}

}  // namespace
