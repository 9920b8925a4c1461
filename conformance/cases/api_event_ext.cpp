// api.event (continued): events across streams and threads, blocking synchronization, ordering of timestamps.
#include <atomic>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

class api_event_Ext : public conf::ContextTest {
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

TEST_F(api_event_Ext, TimestampsOrderedWithinStream) {
  std::vector<CUevent> ev(5);
  for (auto& e : ev) CU_ASSERT_OK(cuEventCreate(&e, 0));
  for (auto& e : ev) {
    CU_ASSERT_OK(cuEventRecord(e, nullptr));
    CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 14));
  }
  CU_ASSERT_OK(cuEventSynchronize(ev.back()));
  for (size_t i = 1; i < ev.size(); ++i) {
    float ms = -1;
    CU_EXPECT_OK(cuEventElapsedTime(&ms, ev[i - 1], ev[i]));
    EXPECT_GE(ms, 0.0f) << i;
  }
  for (auto e : ev) CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, ElapsedAcrossStreams) {
  CUstream a, b;
  CU_ASSERT_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent start, stop;
  CU_ASSERT_OK(cuEventCreate(&start, 0));
  CU_ASSERT_OK(cuEventCreate(&stop, 0));
  CU_ASSERT_OK(cuEventRecord(start, a));
  CU_ASSERT_OK(cuStreamWaitEvent(b, start, 0));
  CU_ASSERT_OK(LaunchBusy(b, 1u << 16));
  CU_ASSERT_OK(cuEventRecord(stop, b));
  CU_ASSERT_OK(cuEventSynchronize(stop));
  float ms = -1;
  CU_EXPECT_OK(cuEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 0.0f) << "stop waited for start";
  CU_EXPECT_OK(cuEventDestroy(start));
  CU_EXPECT_OK(cuEventDestroy(stop));
  CU_EXPECT_OK(cuStreamDestroy(a));
  CU_EXPECT_OK(cuStreamDestroy(b));
}

TEST_F(api_event_Ext, BlockingSyncEvent) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_BLOCKING_SYNC));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 18));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventQuery(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, SynchronizeFromAnotherThread) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 18));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CUresult sync = CUDA_ERROR_UNKNOWN, query = CUDA_ERROR_UNKNOWN;
  std::thread([&] {
    cuCtxSetCurrent(ctx);
    sync = cuEventSynchronize(e);
    query = cuEventQuery(e);
  }).join();
  CU_EXPECT_OK(sync);
  CU_EXPECT_OK(query);
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, SynchronizeWithoutCurrentContext) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::thread([&] { r = cuEventSynchronize(e); }).join();  // no context current on that thread
  CU_EXPECT_OK(r) << "the event names its context; expectation from docs; GPU run will confirm";
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, RecordOnPerThreadStream) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(LaunchBusy(CU_STREAM_PER_THREAD, 1u << 14));
  CU_EXPECT_OK(cuEventRecord(e, CU_STREAM_PER_THREAD));
  CU_EXPECT_OK(cuEventSynchronize(e));
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, ManyWaitersOnOneEvent) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 16));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  std::vector<CUstream> streams(8);
  for (auto& s : streams) {
    CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_ASSERT_OK(cuStreamWaitEvent(s, e, 0));
    CU_ASSERT_OK(LaunchBusy(s, 1u << 10));
  }
  for (auto s : streams) {
    CU_EXPECT_OK(cuStreamSynchronize(s));
    CU_EXPECT_OK(cuStreamDestroy(s));
  }
  CU_EXPECT_OK(cuEventQuery(e)) << "every waiter finished, so the event did too";
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, RecordExternalFlagOutsideCapture) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_STATE, cuEventRecordWithFlags(e, nullptr, CU_EVENT_RECORD_EXTERNAL))
      << "external records exist only in stream capture (measured on driver 580)";
  CU_EXPECT_OK(cuEventDestroy(e));
}

TEST_F(api_event_Ext, ConcurrentRecordAndQuery) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      cuCtxSetCurrent(ctx);
      for (int i = 0; i < 50; ++i) {
        if (cuEventRecord(e, nullptr) != CUDA_SUCCESS) errors++;
        CUresult q = cuEventQuery(e);
        if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) errors++;
      }
    });
  for (auto& t : threads) t.join();
  CU_EXPECT_OK(cuEventSynchronize(e));
  EXPECT_EQ(errors.load(), 0);
  CU_EXPECT_OK(cuEventDestroy(e));
}

}  // namespace
