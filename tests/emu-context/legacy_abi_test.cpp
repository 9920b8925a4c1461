// The original (pre-_v2) ABI forms that cuda.h no longer names: cuCtxCreate without parameters struct,
// cuCtxDestroy, cuCtxPushCurrent/PopCurrent, and the deprecated cuCtxAttach/cuCtxDetach.
#include "test_util.h"

// Deprecated entry points are tested too: programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuDevicePrimaryCtxSetFlags
extern "C" {
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags);
CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy(CUcontext ctx);
CUresult cuCtxPopCurrent(CUcontext* pctx);
CUresult cuCtxPushCurrent(CUcontext ctx);
}

namespace {

using cuemu::test::initDriver;

TEST(LegacyAbiTest, OriginalCreateReportsTheOldApiVersion) {
  initDriver();
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, 0, 0));
  unsigned version = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetApiVersion(context, &version));
  EXPECT_EQ(version, 3010u);
  CUcontext popped = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, context);
  ASSERT_CU(CUDA_SUCCESS, cuCtxPushCurrent(context));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(context));
}

TEST(LegacyAbiTest, AttachAndDetachCountUsers) {
  initDriver();
  CUcontext attached;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxAttach(&attached, 0));
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, 0, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(&attached, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(nullptr, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxAttach(&attached, 0));
  EXPECT_EQ(attached, context);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDetach(context));  // one user left
  unsigned version;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetApiVersion(context, &version));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDetach(context));  // the last: destroyed and popped
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetApiVersion(context, &version));
  CUcontext current = reinterpret_cast<CUcontext>(1);
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&current));
  EXPECT_EQ(current, nullptr);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDetach(context));
}

TEST(LegacyAbiTest, OriginalPrimarySetFlagsRefusesAnActiveContext) {
  initDriver();
  CUcontext primary;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&primary, 0));
  EXPECT_CU(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_SPIN));
  EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags_v2(0, CU_CTX_SCHED_SPIN));
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease_v2(0));
  unsigned flags = 0;
  int active = 1;
  ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxGetState(0, &flags, &active));
  if (!active) {
    EXPECT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxSetFlags(0, 0));
  }
}

}  // namespace
