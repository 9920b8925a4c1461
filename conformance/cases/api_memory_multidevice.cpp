// Memory across two devices: peer access, peer and unified copies, pointer attributes naming the right device.
// Not supported (skipped) with one device; cuemu runs them with CUEMU_DEVICE_COUNT=2 (ctest
// conformance-two-devices).
#include <vector>

#include "harness.h"

namespace {

class api_memory_MultiDevice : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
    CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, 1));
    CU_ASSERT_OK(cuCtxSetCurrent(ctx));
  }
  void TearDown() override {
    if (other) {
      cuCtxDestroy(other);
      cuCtxSetCurrent(ctx);
    }
    ContextTest::TearDown();
  }
  // Allocates in `context`, leaving `ctx` current.
  CUdeviceptr AllocIn(CUcontext context, size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    EXPECT_EQ(cuMemAlloc(&p, bytes), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    return p;
  }
  void FreeIn(CUcontext context, CUdeviceptr p) {
    EXPECT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  }
  CUcontext other = nullptr;
};

TEST_F(api_memory_MultiDevice, PeerAccessEnableDisable) {
  int can = -1;
  CU_ASSERT_OK(cuDeviceCanAccessPeer(&can, 0, 1));
  if (!can) CONF_NOT_SUPPORTED("devices 0 and 1 are not peers");
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuCtxEnablePeerAccess(other, 1)) << "flags must be 0";
  CU_EXPECT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(other));
  CU_EXPECT_OK(cuCtxEnablePeerAccess(other, 0));
  CU_EXPECT(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(other, 0));
  CU_EXPECT_OK(cuCtxDisablePeerAccess(other));
  CU_EXPECT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(other));
}

TEST_F(api_memory_MultiDevice, PointerAttributesNameTheOwningDevice) {
  CUdeviceptr b = AllocIn(other, 4096);
  int ordinal = -1;
  CU_EXPECT_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b + 100));
  EXPECT_EQ(ordinal, 1);
  CUcontext owner = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, b));
  EXPECT_EQ(owner, other);
  FreeIn(other, b);
}

TEST_F(api_memory_MultiDevice, PeerCopiesBothWays) {
  CUdeviceptr a = AllocIn(ctx, 1 << 20), b = AllocIn(other, 1 << 20);
  CU_ASSERT_OK(cuMemsetD32(a, 0x11223344, (1 << 20) / 4));
  CU_EXPECT_OK(cuMemcpyPeer(b, other, a, ctx, 1 << 20));
  CU_ASSERT_OK(cuMemsetD32(a, 0, (1 << 20) / 4));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_EXPECT_OK(cuMemcpyPeerAsync(a + 4096, ctx, b + 8192, other, 4096, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  std::vector<unsigned> host(1024);
  CU_EXPECT_OK(cuMemcpyDtoH(host.data(), a + 4096, 4096));
  EXPECT_EQ(host[0], 0x11223344u);
  EXPECT_EQ(host[1023], 0x11223344u);
  unsigned first = 1;
  CU_EXPECT_OK(cuMemcpyDtoH(&first, a, 4));
  EXPECT_EQ(first, 0u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyPeer(b + 4096, other, a, ctx, 1 << 20)) << "past the end";
  CU_EXPECT_OK(cuStreamDestroy(s));
  FreeIn(other, b);
  FreeIn(ctx, a);
}

TEST_F(api_memory_MultiDevice, UnifiedCopyInfersBothDevices) {
  CUdeviceptr a = AllocIn(ctx, 4096), b = AllocIn(other, 4096);
  CU_ASSERT_OK(cuMemsetD8(a, 0x7e, 4096));
  // With unified addressing, cuMemcpy and cuMemcpyDtoD take pointers of any device.
  CU_EXPECT_OK(cuMemcpy(b, a, 4096));
  unsigned char last = 0;
  CU_ASSERT_OK(cuCtxSetCurrent(other));
  CU_EXPECT_OK(cuMemcpyDtoH(&last, b + 4095, 1));
  CU_ASSERT_OK(cuCtxSetCurrent(ctx));
  EXPECT_EQ(last, 0x7e);
  CU_ASSERT_OK(cuMemsetD8(a, 0x01, 4096));
  CU_EXPECT_OK(cuMemcpyDtoD(b, a, 16));
  CU_EXPECT_OK(cuMemcpyDtoH(&last, b + 15, 1));
  EXPECT_EQ(last, 0x01);
  FreeIn(other, b);
  FreeIn(ctx, a);
}

TEST_F(api_memory_MultiDevice, Copy3DPeerBetweenDevices) {
  CUdeviceptr a = AllocIn(ctx, 64 * 16), b = AllocIn(other, 64 * 16);
  std::vector<unsigned char> rows(64 * 16);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<unsigned char>(i);
  CU_ASSERT_OK(cuMemcpyHtoD(a, rows.data(), rows.size()));
  CU_ASSERT_OK(cuCtxSetCurrent(other));
  CU_ASSERT_OK(cuMemsetD8(b, 0, 64 * 16));
  CU_ASSERT_OK(cuCtxSetCurrent(ctx));
  CUDA_MEMCPY3D_PEER c{};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = a;
  c.srcContext = ctx;
  c.srcPitch = 64;
  c.srcHeight = 16;
  c.srcXInBytes = 8;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = b;
  c.dstContext = other;
  c.dstPitch = 64;
  c.dstHeight = 16;
  c.WidthInBytes = 32;
  c.Height = 16;
  c.Depth = 1;
  CU_EXPECT_OK(cuMemcpy3DPeer(&c));
  std::vector<unsigned char> back(64 * 16);
  CU_EXPECT_OK(cuMemcpyDtoH(back.data(), b, back.size()));
  EXPECT_EQ(back[0], 8);
  EXPECT_EQ(back[31], 39);
  EXPECT_EQ(back[32], 0);
  EXPECT_EQ(back[64 * 15 + 31], static_cast<unsigned char>(64 * 15 + 39));
  FreeIn(other, b);
  FreeIn(ctx, a);
}

TEST_F(api_memory_MultiDevice, MemGetInfoIsPerDevice) {
  size_t free1 = 0, total1 = 0;
  CU_ASSERT_OK(cuCtxSetCurrent(other));
  CU_ASSERT_OK(cuMemGetInfo(&free1, &total1));
  CUdeviceptr big = 0;
  CU_ASSERT_OK(cuMemAlloc(&big, 256 << 20));
  size_t free1After = 0;
  CU_EXPECT_OK(cuMemGetInfo(&free1After, &total1));
  EXPECT_LE(free1After + (256u << 20), free1 + (2u << 20)) << "device 1's free memory went down by the allocation";
  CU_EXPECT_OK(cuMemFree(big));
  CU_ASSERT_OK(cuCtxSetCurrent(ctx));
}

}  // namespace
