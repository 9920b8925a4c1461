// Primary contexts: one handle per device, retained and released, reset, flags.
#include "test_util.h"

#include <thread>
#include <vector>

namespace {

using cuemu::test::initDriver;

class PrimaryContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    initDriver();
    // Each test starts with device 1's primary context inactive (device 0's is used by other tests too).
    cuDevicePrimaryCtxReset(1);
    unsigned flags;
    int active = 1;
    ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(1, &flags, &active));
    while (active) {
      ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
      ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(1, &flags, &active));
    }
    while (cuDevicePrimaryCtxRelease(1) == CUDA_SUCCESS) {}
  }
  void TearDown() override {
    while (cuCtxPopCurrent(nullptr) == CUDA_SUCCESS) {}
  }
};

bool active(CUdevice device, unsigned* flagsOut = nullptr) {
  unsigned flags = 0;
  int isActive = -1;
  EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(device, &flags, &isActive));
  if (flagsOut) *flagsOut = flags;
  return isActive == 1;
}

TEST_F(PrimaryContextTest, RetainGivesOneStableHandleAndDoesNotPush) {
  EXPECT_FALSE(active(1));
  CUcontext first = nullptr, second = nullptr, other = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&first, 1));
  EXPECT_TRUE(active(1));
  CUcontext current = reinterpret_cast<CUcontext>(1);
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&current));
  EXPECT_EQ(current, nullptr);
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&second, 1));
  EXPECT_EQ(first, second);
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&other, 0));
  EXPECT_NE(first, other);
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(0));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  EXPECT_TRUE(active(1));  // still retained once
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease_v2(1));
  EXPECT_FALSE(active(1));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(1));
  CUcontext again = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&again, 1));
  EXPECT_EQ(again, first);  // the handle survives inactivity
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
}

TEST_F(PrimaryContextTest, BadArguments) {
  CUcontext context;
  unsigned flags;
  int isActive;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxRetain(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRetain(&context, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRelease(-1));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxReset(5));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxGetState(5, &flags, &isActive));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(0, nullptr, &isActive));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(0, &flags, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxSetFlags(5, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxSetFlags(1, 0x3));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxSetFlags(1, 0x1000));
}

TEST_F(PrimaryContextTest, UsingAnInactivePrimaryContext) {
  CUcontext primary;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&primary, 1));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  // Binding is allowed (the runtime binds before it retains); using is not.
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetCurrent(primary));
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetDevice(&device));
  unsigned version;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetApiVersion(primary, &version));
  CUcontext retained;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&retained, 1));
  EXPECT_EQ(retained, primary);
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetDevice(&device));
  EXPECT_EQ(device, 1);
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetApiVersion(primary, &version));
  EXPECT_EQ(version, 3020u);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(primary));  // not destroyed by cuCtxDestroy
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
}

TEST_F(PrimaryContextTest, ResetDestroysStateButKeepsTheHandle) {
  CUcontext primary;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&primary, 1));
  ASSERT_CU(CUDA_SUCCESS, cuCtxPushCurrent(primary));
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 8192));
  unsigned long long idBefore = 0, idAfter = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetId(primary, &idBefore));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxReset(1));
  EXPECT_FALSE(active(1));
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetDevice(&device));
  CUcontext again;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&again, 1));
  EXPECT_EQ(again, primary);
  size_t stack = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
  EXPECT_EQ(stack, 1024u);  // a fresh context
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetId(primary, &idAfter));
  EXPECT_NE(idBefore, idAfter);
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxReset_v2(1));
  // A reset keeps the retain count (two retains so far), as driver 580 does.
  EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  EXPECT_FALSE(active(1));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&again, 1));
  EXPECT_TRUE(active(1));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  EXPECT_TRUE(active(1)) << "one reference from before the reset is left";
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  EXPECT_FALSE(active(1));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(1));
}

TEST_F(PrimaryContextTest, FlagsChangeWhileActive) {
  unsigned flags = 99;
  EXPECT_FALSE(active(1, &flags));
  EXPECT_EQ(flags, 0u);
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_YIELD));
  active(1, &flags);
  EXPECT_EQ(flags, unsigned(CU_CTX_SCHED_YIELD));
  CUcontext primary;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&primary, 1));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags_v2(1, CU_CTX_SCHED_BLOCKING_SYNC));
  ASSERT_CU(CUDA_SUCCESS, cuCtxPushCurrent(primary));
  unsigned contextFlags = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetFlags(&contextFlags));
  EXPECT_EQ(contextFlags, unsigned(CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  active(1, &flags);
  EXPECT_EQ(flags, unsigned(CU_CTX_SCHED_BLOCKING_SYNC));  // flags outlive a release
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxReset(1));
  active(1, &flags);
  EXPECT_EQ(flags, 0u);  // but not a reset
}

TEST_F(PrimaryContextTest, ConcurrentRetainRelease) {
  CUcontext expected;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&expected, 1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        CUcontext context = nullptr;
        EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&context, 1));
        EXPECT_EQ(context, expected);
        EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(active(1));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease(1));
  EXPECT_FALSE(active(1));
}

}  // namespace
