// Copies and sets: data arrives, ranges are validated.
#include "fixture.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed = 1) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + seed);
  return v;
}

TEST_F(MemoryTest, RoundTripHostDeviceHost) {
  const size_t n = 1 << 20;
  auto in = pattern(n);
  std::vector<uint8_t> out(n);
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&b, n), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoD_v2(a, in.data(), n), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoD_v2(b, a, n), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH_v2(out.data(), b, n), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  // Unified copies find the direction themselves, also on the asynchronous and per-thread forms.
  std::fill(out.begin(), out.end(), 0);
  EXPECT_EQ(cuMemcpy(reinterpret_cast<CUdeviceptr>(out.data()), b, n), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  std::fill(out.begin(), out.end(), 0);
  EXPECT_EQ(cuMemcpyAsync_ptsz(reinterpret_cast<CUdeviceptr>(out.data()), a, n, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(b), CUDA_SUCCESS);
}

TEST_F(MemoryTest, CopiesAreRangeChecked) {
  CUdeviceptr a = 0;
  std::vector<uint8_t> host(256);
  ASSERT_EQ(cuMemAlloc_v2(&a, 128), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoD_v2(a, host.data(), 129), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD_v2(a + 64, host.data(), 65), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD_v2(a + 64, host.data(), 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH_v2(host.data(), a, 200), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoD_v2(a, a + 1, 128), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(host.data()), host.data(), 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD_v2(a, nullptr, 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD_v2(a, host.data(), 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
  // Freed memory is no longer a valid copy target, also for the unified form.
  EXPECT_EQ(cuMemcpyHtoD_v2(a, host.data(), 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy(a, reinterpret_cast<CUdeviceptr>(host.data()), 8), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, Sets) {
  CUdeviceptr a = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, 1024), CUDA_SUCCESS);
  auto* bytes = reinterpret_cast<uint8_t*>(a);
  EXPECT_EQ(cuMemsetD8_v2(a, 0xAB, 1024), CUDA_SUCCESS);
  EXPECT_EQ(bytes[0], 0xAB);
  EXPECT_EQ(bytes[1023], 0xAB);
  EXPECT_EQ(cuMemsetD16_v2(a + 2, 0x1234, 4), CUDA_SUCCESS);
  uint16_t h16[4];
  std::memcpy(h16, bytes + 2, 8);
  for (uint16_t v : h16) EXPECT_EQ(v, 0x1234);
  EXPECT_EQ(bytes[10], 0xAB);
  EXPECT_EQ(cuMemsetD32_v2(a + 16, 0xDEADBEEF, 2), CUDA_SUCCESS);
  uint32_t h32;
  std::memcpy(&h32, bytes + 20, 4);
  EXPECT_EQ(h32, 0xDEADBEEFu);
  EXPECT_EQ(cuMemsetD16_v2(a + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);  // misaligned
  EXPECT_EQ(cuMemsetD32_v2(a + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);  // misaligned
  EXPECT_EQ(cuMemsetD32_v2(a, 0, 257), CUDA_ERROR_INVALID_VALUE);    // past the end
  EXPECT_EQ(cuMemsetD8Async(a, 1, 1024, nullptr), CUDA_SUCCESS);
  // 2D: 3 rows of 5 32-bit values, 64 bytes apart; the padding is untouched.
  EXPECT_EQ(cuMemsetD2D32_v2(a, 64, 7, 5, 3), CUDA_SUCCESS);
  uint32_t v;
  std::memcpy(&v, bytes + 128 + 16, 4);
  EXPECT_EQ(v, 7u);
  EXPECT_EQ(bytes[128 + 20], 1);
  EXPECT_EQ(cuMemsetD2D8_v2(a, 4, 0, 8, 2), CUDA_ERROR_INVALID_VALUE);    // pitch < width
  EXPECT_EQ(cuMemsetD2D8_v2(a, 512, 0, 8, 3), CUDA_ERROR_INVALID_VALUE);  // last row past the end
  EXPECT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
}

TEST_F(MemoryTest, Copy2DBetweenPitchedLayouts) {
  const size_t width = 40, height = 6, hostPitch = 48;
  CUdeviceptr d = 0;
  size_t pitch = 0;
  ASSERT_EQ(cuMemAllocPitch_v2(&d, &pitch, width, height, 4), CUDA_SUCCESS);
  auto in = pattern(hostPitch * height);
  std::vector<uint8_t> out(hostPitch * height, 0);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = hostPitch;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = pitch;
  c.WidthInBytes = width;
  c.Height = height;
  ASSERT_EQ(cuMemcpy2D_v2(&c), CUDA_SUCCESS);
  CUDA_MEMCPY2D back{};
  back.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  back.srcDevice = d;
  back.srcPitch = pitch;
  back.dstMemoryType = CU_MEMORYTYPE_HOST;
  back.dstHost = out.data();
  back.dstPitch = hostPitch;
  back.WidthInBytes = width;
  back.Height = height;
  ASSERT_EQ(cuMemcpy2DAsync_v2(&back, nullptr), CUDA_SUCCESS);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < hostPitch; ++x)
      EXPECT_EQ(out[y * hostPitch + x], x < width ? in[y * hostPitch + x] : 0) << x << "," << y;
  c.Height = height + 1;  // one row past the allocation
  EXPECT_EQ(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
  c.Height = height;
  c.dstPitch = width - 1;  // pitch below the width
  EXPECT_EQ(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
}

TEST_F(MemoryTest, Copy3DSubBox) {
  // A 4x3x2 box at (1,1,1) of an 8x4x3 device volume, from a packed host buffer.
  const size_t W = 8, H = 4, D = 3, w = 4, h = 3, d = 2;
  CUdeviceptr vol = 0;
  ASSERT_EQ(cuMemAlloc_v2(&vol, W * H * D), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(vol, 0, W * H * D), CUDA_SUCCESS);
  auto in = pattern(w * h * d, 9);
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = w;
  c.srcHeight = h;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = vol;
  c.dstPitch = W;
  c.dstHeight = H;
  c.dstXInBytes = 1;
  c.dstY = 1;
  c.dstZ = 1;
  c.WidthInBytes = w;
  c.Height = h;
  c.Depth = d;
  ASSERT_EQ(cuMemcpy3D_v2(&c), CUDA_SUCCESS);
  auto* v = reinterpret_cast<uint8_t*>(vol);
  for (size_t z = 0; z < D; ++z)
    for (size_t y = 0; y < H; ++y)
      for (size_t x = 0; x < W; ++x) {
        bool inside = z >= 1 && z < 1 + d && y >= 1 && y < 1 + h && x >= 1 && x < 1 + w;
        uint8_t expected = inside ? in[(z - 1) * w * h + (y - 1) * w + (x - 1)] : 0;
        EXPECT_EQ(v[z * W * H + y * W + x], expected);
      }
  c.dstZ = 2;  // the box would leave the volume
  EXPECT_EQ(cuMemcpy3D_v2(&c), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(vol), CUDA_SUCCESS);
}

TEST_F(MemoryTest, BatchCopies) {
  CUdeviceptr a = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, 64), CUDA_SUCCESS);
  auto in = pattern(64);
  std::vector<uint8_t> out(64);
  CUdeviceptr dsts[] = {a, reinterpret_cast<CUdeviceptr>(out.data())};
  CUdeviceptr srcs[] = {reinterpret_cast<CUdeviceptr>(in.data()), a};
  size_t sizes[] = {64, 64};
  CUmemcpyAttributes attr{};
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t idx = 0, fail = 0;
  EXPECT_EQ(cuMemcpyBatchAsync_ptsz(dsts, srcs, sizes, 2, &attr, &idx, 1, &fail, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(fail, SIZE_MAX);
  EXPECT_EQ(in, out);
  sizes[1] = 65;
  EXPECT_EQ(cuMemcpyBatchAsync_ptsz(dsts, srcs, sizes, 2, &attr, &idx, 1, &fail, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fail, 1u);
  EXPECT_EQ(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &idx, 1, &fail, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
}

// A copy or set on one thread while another destroys the context (or frees the memory): the pointer passes
// validation, then the memory is freed under it. The memory stays mapped until the copy ends (issue 24: this
// crashed the host in fill2D / copyBytes within seconds). Every call must answer a code, never crash.
TEST(MemoryLifetime, CopiesAndSetsRaceContextDestruction) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice device = 0;
  ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  const size_t bytes = size_t(1) << 20;
  std::vector<uint8_t> host(bytes);
  int completed = 0;
  for (int round = 0; round < 40; ++round) {
    CUcontext context = nullptr;
    ASSERT_EQ(cuCtxCreate_v2(&context, 0, device), CUDA_SUCCESS);
    CUdeviceptr small = 0, large = 0;
    ASSERT_EQ(cuMemAlloc_v2(&small, 100), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc_v2(&large, bytes), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPopCurrent_v2(nullptr), CUDA_SUCCESS);
    std::atomic<bool> started{false};
    std::thread worker([&] {
      cuCtxPushCurrent_v2(context);
      started = true;
      for (int i = 0; i < 1000000; ++i) {
        CUresult r = (i % 4 == 0)   ? cuMemsetD8_v2(large, uint8_t(i), 4096)
                     : (i % 4 == 1) ? cuMemcpyHtoD_v2(large + 4096, host.data(), 4096)
                     : (i % 4 == 2) ? cuMemcpyDtoD_v2(small, large, 64)
                                    : cuMemsetD32_v2(small, 1, 25);
        if (r != CUDA_SUCCESS) break;  // the context is gone: any error code will do, a crash will not
      }
      cuCtxPopCurrent_v2(nullptr);
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 10)));
    EXPECT_EQ(cuCtxDestroy_v2(context), CUDA_SUCCESS);
    worker.join();
    ++completed;
  }
  EXPECT_EQ(completed, 40);
}

}  // namespace
