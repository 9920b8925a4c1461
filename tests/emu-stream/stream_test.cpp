// Streams and events: the ordering rules of the real driver, real concurrency, deterministic mode.
#include "api/impl.h"
#include "core/context.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/event.h"
#include "core/stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

using namespace cuemu;
using namespace std::chrono_literals;

namespace {

class StreamTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(initializeDriver(0), CUDA_SUCCESS);
    context_ = std::make_shared<Context>(*deviceByOrdinal(0), 0, false);
    context_->registerHandle();
    pushCurrentContext(context_);
  }
  void TearDown() override {
    context_->streams().synchronize();
    popCurrentContext();
  }
  CUstream create(unsigned flags = 0) {
    CUstream s = nullptr;
    EXPECT_EQ(impl::cuStreamCreate(&s, flags), CUDA_SUCCESS);
    return s;
  }
  // Enqueues a host function through the public entry point.
  void host(CUstream s, std::function<void()> fn) {
    auto* heap = new std::function<void()>(std::move(fn));
    ASSERT_EQ(impl::cuLaunchHostFunc(
                  s, [](void* p) { auto* f = static_cast<std::function<void()>*>(p); (*f)(); delete f; }, heap),
              CUDA_SUCCESS);
  }
  std::shared_ptr<Context> context_;
};

TEST_F(StreamTest, WorkInOneStreamRunsInOrder) {
  CUstream s = create();
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) host(s, [&order, i] { order.push_back(i); });
  ASSERT_EQ(impl::cuStreamSynchronize(s), CUDA_SUCCESS);
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(impl::cuStreamDestroy_v2(s), CUDA_SUCCESS);
}

TEST_F(StreamTest, QueryReportsNotReadyWhilePending) {
  CUstream s = create();
  std::promise<void> release;
  auto gate = release.get_future().share();
  host(s, [gate] { gate.wait(); });
  EXPECT_EQ(impl::cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  release.set_value();
  EXPECT_EQ(impl::cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuStreamQuery(s), CUDA_SUCCESS);
}

// Two non-blocking streams really run at once: each item waits until the other has started.
TEST_F(StreamTest, NonBlockingStreamsRunConcurrently) {
  CUstream a = create(CU_STREAM_NON_BLOCKING), b = create(CU_STREAM_NON_BLOCKING);
  std::atomic<int> started{0};
  std::atomic<bool> sawBoth[2] = {false, false};
  auto body = [&](int me) {
    started.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    sawBoth[me] = started.load() == 2;
  };
  host(a, [&] { body(0); });
  host(b, [&] { body(1); });
  ASSERT_EQ(impl::cuStreamSynchronize(a), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuStreamSynchronize(b), CUDA_SUCCESS);
  EXPECT_TRUE(sawBoth[0] && sawBoth[1]) << "both items must be in flight at the same time";
}

// Work on the legacy default stream waits for earlier work on blocking streams, and later blocking-stream work
// waits for it; a non-blocking stream is not ordered with it.
TEST_F(StreamTest, LegacyStreamSynchronisesWithBlockingStreams) {
  CUstream blocking = create(0), nonBlocking = create(CU_STREAM_NON_BLOCKING);
  std::promise<void> release;
  auto gate = release.get_future().share();
  std::atomic<int> step{0};
  host(blocking, [gate, &step] { gate.wait(); step = 1; });
  int seenByLegacy = -1;
  host(CU_STREAM_LEGACY, [&] { seenByLegacy = step.load(); step = 2; });
  int seenByBlocking = -1;
  host(blocking, [&] { seenByBlocking = step.load(); });
  std::atomic<bool> nonBlockingRan{false};
  host(nonBlocking, [&] { nonBlockingRan = true; });
  ASSERT_EQ(impl::cuStreamSynchronize(nonBlocking), CUDA_SUCCESS);  // not held back by the gate
  EXPECT_TRUE(nonBlockingRan.load());
  EXPECT_EQ(impl::cuStreamQuery(nullptr), CUDA_ERROR_NOT_READY);
  release.set_value();
  ASSERT_EQ(impl::cuStreamSynchronize(blocking), CUDA_SUCCESS);
  EXPECT_EQ(seenByLegacy, 1);
  EXPECT_EQ(seenByBlocking, 2);
}

TEST_F(StreamTest, EventsOrderStreamsAndMeasureTime) {
  CUstream a = create(CU_STREAM_NON_BLOCKING), b = create(CU_STREAM_NON_BLOCKING);
  CUevent start, stop;
  ASSERT_EQ(impl::cuEventCreate(&start, 0), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuEventCreate(&stop, 0), CUDA_SUCCESS);
  float ms = -1;
  EXPECT_EQ(impl::cuEventElapsedTime(&ms, start, stop), CUDA_ERROR_INVALID_HANDLE);  // never recorded
  EXPECT_EQ(impl::cuEventQuery(start), CUDA_SUCCESS);
  std::atomic<bool> aDone{false};
  ASSERT_EQ(impl::cuEventRecord(start, a), CUDA_SUCCESS);
  host(a, [&] { std::this_thread::sleep_for(20ms); aDone = true; });
  ASSERT_EQ(impl::cuEventRecord(stop, a), CUDA_SUCCESS);
  bool bSawA = false;
  ASSERT_EQ(impl::cuStreamWaitEvent(b, stop, 0), CUDA_SUCCESS);
  host(b, [&] { bSawA = aDone.load(); });
  ASSERT_EQ(impl::cuStreamSynchronize(b), CUDA_SUCCESS);
  EXPECT_TRUE(bSawA);
  ASSERT_EQ(impl::cuEventSynchronize(stop), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuEventElapsedTime(&ms, start, stop), CUDA_SUCCESS);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 5000.0f);
  CUevent untimed;
  ASSERT_EQ(impl::cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuEventRecord(untimed, a), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuEventSynchronize(untimed), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(impl::cuEventCreate(&untimed, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(impl::cuEventDestroy_v2(start), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuEventDestroy_v2(start), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(impl::cuEventQuery(start), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(StreamTest, EventQueryWhilePendingAndDestroyWhilePending) {
  CUstream s = create();
  std::promise<void> release;
  auto gate = release.get_future().share();
  host(s, [gate] { gate.wait(); });
  CUevent e;
  ASSERT_EQ(impl::cuEventCreate(&e, 0), CUDA_SUCCESS);
  ASSERT_EQ(impl::cuEventRecord(e, s), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuEventQuery(e), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(impl::cuEventDestroy_v2(e), CUDA_SUCCESS);
  release.set_value();
  EXPECT_EQ(impl::cuStreamSynchronize(s), CUDA_SUCCESS);
}

TEST_F(StreamTest, CallbacksRunInOrderAndSeeStickyErrors) {
  CUstream s = create();
  std::vector<int> order;
  struct Record {
    std::vector<int>* order;
    int value;
    CUresult status;
  };
  Record r1{&order, 1, CUDA_ERROR_UNKNOWN}, r2{&order, 2, CUDA_ERROR_UNKNOWN};
  auto cb = [](CUstream, CUresult status, void* p) {
    auto* r = static_cast<Record*>(p);
    r->order->push_back(r->value);
    r->status = status;
  };
  ASSERT_EQ(impl::cuStreamAddCallback(s, cb, &r1, 0), CUDA_SUCCESS);
  // A fault sticks; later work is skipped, but callbacks still run and are told.
  context_->streams().submit(*streamTable().find(handleValue(s)), [] { return CUDA_ERROR_ILLEGAL_ADDRESS; });
  bool skipped = true;
  host(s, [&] { skipped = false; });
  ASSERT_EQ(impl::cuStreamAddCallback(s, cb, &r2, 0), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(r1.status, CUDA_SUCCESS);
  EXPECT_EQ(r2.status, CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_TRUE(skipped);
  EXPECT_EQ(impl::cuStreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(impl::cuStreamAddCallback(s, cb, &r2, 1), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(StreamTest, PropertiesAndBadHandles) {
  CUstream s = nullptr;
  ASSERT_EQ(impl::cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -100), CUDA_SUCCESS);
  unsigned flags = 0;
  int priority = 0;
  EXPECT_EQ(impl::cuStreamGetFlags(s, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned(CU_STREAM_NON_BLOCKING));
  EXPECT_EQ(impl::cuStreamGetPriority(s, &priority), CUDA_SUCCESS);
  EXPECT_EQ(priority, -5);  // clamped to the greatest priority
  CUcontext ctx = nullptr;
  EXPECT_EQ(impl::cuStreamGetCtx(s, &ctx), CUDA_SUCCESS);
  EXPECT_EQ(ctx, context_->apiHandle());
  unsigned long long id1 = 0, id2 = 0;
  CUstream t = create();
  EXPECT_EQ(impl::cuStreamGetId(s, &id1), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuStreamGetId(t, &id2), CUDA_SUCCESS);
  EXPECT_NE(id1, id2);
  EXPECT_EQ(impl::cuStreamCreate(&t, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(impl::cuStreamCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(impl::cuStreamDestroy_v2(s), CUDA_SUCCESS);
  EXPECT_EQ(impl::cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(impl::cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(impl::cuStreamSynchronize(reinterpret_cast<CUstream>(0x1234)), CUDA_ERROR_INVALID_HANDLE);
  CUstreamCaptureStatus status;
  EXPECT_EQ(impl::cuStreamIsCapturing(t, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
}

TEST_F(StreamTest, NoCurrentContextForSpecialStreams) {
  popCurrentContext();
  EXPECT_EQ(impl::cuStreamQuery(nullptr), CUDA_ERROR_INVALID_CONTEXT);
  CUstream s;
  EXPECT_EQ(impl::cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
  pushCurrentContext(context_);
}

TEST_F(StreamTest, DeterministicModeRunsInProgramOrderOnTheCaller) {
  setDeterministicMode(true);
  CUstream a = create(CU_STREAM_NON_BLOCKING), b = create(CU_STREAM_NON_BLOCKING);
  std::vector<std::pair<int, std::thread::id>> log;
  for (int i = 0; i < 6; ++i) host(i % 2 ? a : b, [&log, i] { log.emplace_back(i, std::this_thread::get_id()); });
  setDeterministicMode(false);
  ASSERT_EQ(log.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(log[i].first, i);
    EXPECT_EQ(log[i].second, std::this_thread::get_id());
  }
}

}  // namespace
