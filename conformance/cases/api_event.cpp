// api.event: creation flags, record, query, synchronize, elapsed time, cross-stream waits.
#include <chrono>
#include <thread>

#include "harness.h"

namespace {

using conf::ContextTest;

class api_event : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&busy, mod, "busy_loop"));
  }
  CUresult LaunchBusy(CUstream s, unsigned iterations) {
    CUdeviceptr none = 0;
    void* params[] = {&none, &iterations};
    return cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
  }
  CUmodule mod = nullptr;
  CUfunction busy = nullptr;
};

class api_event_Flags : public ContextTest, public testing::WithParamInterface<unsigned> {};

TEST_P(api_event_Flags, CreateRecordSync) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, GetParam()));
  CU_EXPECT_OK(cuEventRecord(e, nullptr));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

INSTANTIATE_TEST_SUITE_P(All, api_event_Flags,
                         testing::Values(unsigned{CU_EVENT_DEFAULT}, unsigned{CU_EVENT_BLOCKING_SYNC},
                                         unsigned{CU_EVENT_DISABLE_TIMING},
                                         unsigned{CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING},
                                         unsigned{CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING}),
                         [](const testing::TestParamInfo<unsigned>& i) { return "flags_" + std::to_string(i.param); });

TEST_F(api_event, CreateBadFlags) {
  CUevent e;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, 0x100));
}

TEST_F(api_event, InterprocessNeedsDisableTiming) {
  CUevent e;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, CU_EVENT_INTERPROCESS));
}

TEST_F(api_event, CreateNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuEventCreate(nullptr, 0)); }

TEST_F(api_event, CreateNoContext) {
  conf::DrainContextStack();
  CUevent e;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuEventCreate(&e, 0));
}

TEST_F(api_event, QueryUnrecorded) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT_OK(cuEventQuery(e)) << "an event never recorded counts as complete";
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event, QueryPending) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  CUfunction spin;
  CU_ASSERT_OK(cuModuleGetFunction(&spin, mod, "spin_until_flag"));
  unsigned long long maxSpins = 1ull << 22;
  void* params[] = {&flag, &maxSpins};
  CU_ASSERT_OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(cuEventRecord(e, s));
  CU_EXPECT(CUDA_ERROR_NOT_READY, cuEventQuery(e));
  CUstream other;
  CU_ASSERT_OK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  unsigned one = 1;
  CU_ASSERT_OK(cuMemcpyHtoDAsync(flag, &one, 4, other));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(other));
  CU_EXPECT_OK(cuStreamDestroy(s));
  unsigned flagValue = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&flagValue, flag, 4));
  EXPECT_EQ(flagValue, 2u) << "the spinning kernel saw the flag that the other stream set while it ran";
  CU_EXPECT_OK(cuMemFree(flag));
}

TEST_F(api_event, ElapsedTime) {
  CUevent a, b;
  CU_ASSERT_OK(cuEventCreate(&a, 0));
  CU_ASSERT_OK(cuEventCreate(&b, 0));
  CU_ASSERT_OK(cuEventRecord(a, nullptr));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 20));
  CU_ASSERT_OK(cuEventRecord(b, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(b));
  float ms = -1;
  CU_EXPECT_OK(cuEventElapsedTime(&ms, a, b));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 60000.0f);
  float back = 0;
  CU_EXPECT_OK(cuEventElapsedTime(&back, b, a));
  EXPECT_FLOAT_EQ(back, -ms);
  CU_EXPECT_OK(cuEventDestroy(a));
  CU_EXPECT_OK(cuEventDestroy(b));
}

TEST_F(api_event, ElapsedTimeMeasuresStreamTime) {
  CUevent a, b;
  CU_ASSERT_OK(cuEventCreate(&a, 0));
  CU_ASSERT_OK(cuEventCreate(&b, 0));
  CU_ASSERT_OK(cuEventRecord(a, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(a));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CU_ASSERT_OK(cuEventRecord(b, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(b));
  float ms = 0;
  CU_EXPECT_OK(cuEventElapsedTime(&ms, a, b));
  EXPECT_GE(ms, 40.0f) << "the host slept 50 ms between the two records";
  CU_EXPECT_OK(cuEventDestroy(a));
  CU_EXPECT_OK(cuEventDestroy(b));
}

TEST_F(api_event, ElapsedTimeDisabledTiming) {
  CUevent a, b;
  CU_ASSERT_OK(cuEventCreate(&a, CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(cuEventCreate(&b, 0));
  CU_ASSERT_OK(cuEventRecord(a, nullptr));
  CU_ASSERT_OK(cuEventRecord(b, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(b));
  float ms;
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, a, b));
  CU_EXPECT_OK(cuEventDestroy(a));
  CU_EXPECT_OK(cuEventDestroy(b));
}

TEST_F(api_event, ElapsedTimeUnrecorded) {
  CUevent a, b;
  CU_ASSERT_OK(cuEventCreate(&a, 0));
  CU_ASSERT_OK(cuEventCreate(&b, 0));
  CU_ASSERT_OK(cuEventRecord(b, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(b));
  float ms;
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, a, b));
  CU_EXPECT_OK(cuEventDestroy(a));
  CU_EXPECT_OK(cuEventDestroy(b));
}

TEST_F(api_event, ElapsedTimeNotReady) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  CUfunction spin;
  CU_ASSERT_OK(cuModuleGetFunction(&spin, mod, "spin_until_flag"));
  unsigned long long maxSpins = 1ull << 22;
  void* params[] = {&flag, &maxSpins};
  CUevent a, b;
  CU_ASSERT_OK(cuEventCreate(&a, 0));
  CU_ASSERT_OK(cuEventCreate(&b, 0));
  CU_ASSERT_OK(cuEventRecord(a, s));
  CU_ASSERT_OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  CU_ASSERT_OK(cuEventRecord(b, s));
  float ms;
  CU_EXPECT(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, b));
  CUstream other;
  CU_ASSERT_OK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  unsigned one = 1;
  CU_ASSERT_OK(cuMemcpyHtoDAsync(flag, &one, 4, other));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuEventDestroy(a));
  CU_EXPECT_OK(cuEventDestroy(b));
  CU_EXPECT_OK(cuStreamDestroy(other));
  CU_EXPECT_OK(cuStreamDestroy(s));
  unsigned flagValue = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&flagValue, flag, 4));
  EXPECT_EQ(flagValue, 2u) << "the spinning kernel saw the flag that the other stream set while it ran";
  CU_EXPECT_OK(cuMemFree(flag));
}

TEST_F(api_event, ElapsedTimeNull) {
  CUevent a;
  CU_ASSERT_OK(cuEventCreate(&a, 0));
  CU_ASSERT_OK(cuEventRecord(a, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(a));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(nullptr, a, a));  // seen on an H200
  float ms = -1;
  CU_EXPECT_OK(cuEventElapsedTime(&ms, a, a));
  EXPECT_EQ(ms, 0.0f);
  CU_EXPECT_OK(cuEventDestroy(a));
}

TEST_F(api_event, RecordOnStreamOfOtherContext) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  // expectation from docs; GPU run will confirm: event and stream must belong to the same context
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e, s));
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuCtxDestroy(other));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event, ReRecordMovesEvent) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_ASSERT_OK(cuEventSynchronize(e));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 18));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event, RecordWithFlags) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT_OK(cuEventRecordWithFlags(e, nullptr, CU_EVENT_RECORD_DEFAULT));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(e, nullptr, 0x40));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event, DestroyWhilePending) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 20));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_EXPECT_OK(cuEventDestroy(e)) << "destroying a pending event is allowed";
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_event, UseAfterDestroy) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(cuEventDestroy(e));
  CUevent e2;
  CU_ASSERT_OK(cuEventCreate(&e2, 0));
  if (e2 == e) {
    CU_EXPECT_OK(cuEventDestroy(e2));
    CONF_NOT_SUPPORTED("the driver reused the destroyed handle value");
  }
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e2));
}

TEST_F(api_event, NullHandles) {
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventQuery(nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventSynchronize(nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(nullptr, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(nullptr));
}

TEST_F(api_event, CtxRecordAndWait) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT_OK(cuCtxRecordEvent(ctx, e));
  CU_EXPECT_OK(cuCtxWaitEvent(ctx, e));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

}  // namespace
