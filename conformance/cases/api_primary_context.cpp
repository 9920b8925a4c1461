// api.primary_context: retain/release/reset/state/flags. Primary contexts are process-global, so every case leaves
// the primary context of device 0 released (reference count back to where it started) and resets it where needed.
#include <thread>

#include "harness.h"

namespace {

using conf::DeviceTest;

class api_primary_context : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (HasFatalFailure()) return;
    // Start from an inactive primary context: reset destroys it regardless of its reference count.
    CU_ASSERT_OK(cuDevicePrimaryCtxReset(dev));
  }
  void TearDown() override {
    conf::DrainContextStack();
    cuDevicePrimaryCtxReset(dev);
  }
  void State(unsigned* flags, int* active) { CU_ASSERT_OK(cuDevicePrimaryCtxGetState(dev, flags, active)); }
};

TEST_F(api_primary_context, InactiveAfterReset) {
  unsigned flags = 99;
  int active = 99;
  State(&flags, &active);
  EXPECT_EQ(active, 0);
}

TEST_F(api_primary_context, RetainActivates) {
  CUcontext c = nullptr;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  EXPECT_NE(c, nullptr);
  unsigned flags;
  int active = 0;
  State(&flags, &active);
  EXPECT_EQ(active, 1);
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, RetainDoesNotPush) {
  CUcontext c = nullptr, cur = reinterpret_cast<CUcontext>(1);
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_EXPECT_OK(cuCtxGetCurrent(&cur));
  EXPECT_EQ(cur, nullptr);
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, SameHandleEveryRetain) {
  CUcontext a = nullptr, b = nullptr;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&a, dev));
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&b, dev));
  EXPECT_EQ(a, b);
  CUcontext fromThread = nullptr;
  std::thread([&] { cuDevicePrimaryCtxRetain(&fromThread, 0); }).join();
  EXPECT_EQ(fromThread, a) << "one primary context per device, for every thread";
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, ReferenceCounted) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  unsigned flags;
  int active = 0;
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  State(&flags, &active);
  EXPECT_EQ(active, 1) << "one reference left";
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  State(&flags, &active);
  EXPECT_EQ(active, 0) << "last release destroys it";
}

TEST_F(api_primary_context, ReleaseWithoutRetain) {
  // expectation from docs; GPU run will confirm
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, UsableAfterPush) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(c));
  CUdeviceptr p;
  CU_EXPECT_OK(cuMemAlloc(&p, 4096));
  CU_EXPECT_OK(cuMemFree(p));
  CUdevice d = -1;
  CU_EXPECT_OK(cuCtxGetDevice(&d));
  EXPECT_EQ(d, dev);
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, SetCurrentWorks) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuCtxSetCurrent(c));
  CUcontext cur = nullptr;
  CU_EXPECT_OK(cuCtxGetCurrent(&cur));
  EXPECT_EQ(cur, c);
  CU_EXPECT_OK(cuCtxSetCurrent(nullptr));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, ResetDestroysAllocations) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(c));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_ASSERT_OK(cuDevicePrimaryCtxReset(dev));
  unsigned flags;
  int active = 1;
  State(&flags, &active);
  EXPECT_EQ(active, 0);
  CUcontext again;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&again, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(again));
  CUdeviceptr base;
  size_t size;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p)) << "the old allocation is gone";
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  // The reset kept the first retain's reference: release it too, so later cases start unreferenced.
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, SetFlagsWhileInactive) {
  CU_ASSERT_OK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC));
  unsigned flags = 0;
  int active = 1;
  State(&flags, &active);
  EXPECT_EQ(active, 0);
  EXPECT_EQ(flags & CU_CTX_SCHED_MASK, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(c));
  unsigned ctxFlags = 0;
  CU_EXPECT_OK(cuCtxGetFlags(&ctxFlags));
  EXPECT_EQ(ctxFlags & CU_CTX_SCHED_MASK, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxSetFlags(dev, 0));
}

TEST_F(api_primary_context, SetFlagsWhileActive) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  // Since CUDA 11 the scheduling flags may change while the primary context is active.
  CU_EXPECT_OK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_YIELD));
  unsigned flags = 0;
  int active = 0;
  State(&flags, &active);
  EXPECT_EQ(flags & CU_CTX_SCHED_MASK, unsigned{CU_CTX_SCHED_YIELD});
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxSetFlags(dev, 0));
}

TEST_F(api_primary_context, SetFlagsBad) {
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxSetFlags(dev, 0x100000));
}

TEST_F(api_primary_context, ResetClearsFlags) {
  CU_ASSERT_OK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_SPIN));
  CU_ASSERT_OK(cuDevicePrimaryCtxReset(dev));
  unsigned flags = 99;
  int active;
  State(&flags, &active);
  EXPECT_EQ(flags & CU_CTX_SCHED_MASK, 0u) << "reset returns to the default flags";
}

TEST_F(api_primary_context, BadDevice) {
  CUcontext c;
  unsigned f;
  int a;
  int bad = conf::DeviceCount();
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRetain(&c, bad));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRelease(bad));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxReset(bad));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxGetState(bad, &f, &a));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxSetFlags(bad, 0));
}

TEST_F(api_primary_context, NullArguments) {
  unsigned f;
  int a;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxRetain(nullptr, dev));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(dev, nullptr, &a));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(dev, &f, nullptr));
}

TEST_F(api_primary_context, DistinctFromCreatedContext) {
  CUcontext primary, created;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_ASSERT_OK(cuCtxCreate(&created, nullptr, 0, dev));
  EXPECT_NE(primary, created);
  CU_EXPECT_OK(cuCtxDestroy(created));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, CtxDestroyOnPrimaryIsRejected) {
  CUcontext primary;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&primary, dev));
  // expectation from docs; GPU run will confirm: primary contexts are released, not destroyed.
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(primary));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, ReleaseV1SameAsV2) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease_v2(dev));
  unsigned f;
  int active = 1;
  State(&f, &active);
  EXPECT_EQ(active, 0);
}

// Reset destroys the context but keeps its retain count (measured on driver 580 with tools/gpu-probe).
TEST_F(api_primary_context, ResetKeepsReferences) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_ASSERT_OK(cuDevicePrimaryCtxReset(dev));
  unsigned flags;
  int active = 1;
  State(&flags, &active);
  EXPECT_EQ(active, 0);
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  State(&flags, &active);
  EXPECT_EQ(active, 1) << "the reference from before the reset is still held";
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  State(&flags, &active);
  EXPECT_EQ(active, 0);
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_primary_context, ApiVersionAndId) {
  CUcontext c;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  unsigned v = 0;
  CU_EXPECT_OK(cuCtxGetApiVersion(c, &v));
  EXPECT_GE(v, 3020u);
  unsigned long long id1 = 0, id2 = 0;
  CU_EXPECT_OK(cuCtxGetId(c, &id1));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&c, dev));
  CU_EXPECT_OK(cuCtxGetId(c, &id2));
  EXPECT_NE(id1, id2) << "a re-created primary context is a new context";
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

}  // namespace
