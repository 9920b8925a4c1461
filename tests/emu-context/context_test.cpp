// Context entry points: creation, the per-thread stack, migration between threads, settings, lifetime.
#include "test_util.h"

// Deprecated entry points are tested too: programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <set>

// The CUDA 12 ABI of cuCtxCreate, still exported (cuda.h declares it only for the driver's own build).
extern "C" CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev);
#include <thread>

namespace {

using cuemu::test::initDriver;

class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    initDriver();
    // Every test starts and ends with an empty stack.
    CUcontext current = nullptr;
    ASSERT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&current));
    ASSERT_EQ(current, nullptr);
  }
  void TearDown() override {
    CUcontext popped;
    while (cuCtxPopCurrent(&popped) == CUDA_SUCCESS) {}
  }
};

CUcontext current() {
  CUcontext context = reinterpret_cast<CUcontext>(0x1);
  EXPECT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&context));
  return context;
}

TEST_F(ContextTest, CreatePushesAndDestroyPops) {
  CUcontext a = nullptr, b = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&a, nullptr, 0, 0));
  EXPECT_EQ(current(), a);
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&b, nullptr, 0, 1));
  EXPECT_EQ(current(), b);
  CUdevice device = -1;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetDevice(&device));
  EXPECT_EQ(device, 1);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(b));
  EXPECT_EQ(current(), a);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(a));
  EXPECT_EQ(current(), nullptr);
}

TEST_F(ContextTest, BadArgumentsToCreate) {
  CUcontext context = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(nullptr, nullptr, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate(&context, nullptr, 0, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate(&context, nullptr, 0, -1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(&context, nullptr, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(&context, nullptr, 0x100, 0));
  EXPECT_EQ(current(), nullptr);
  CUexecAffinityParam affinity{};
  affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  affinity.param.smCount.val = 8;
  CUctxCreateParams params{};
  params.execAffinityParams = &affinity;
  params.numExecAffinityParams = 1;
  EXPECT_CU(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, cuCtxCreate(&context, &params, 0, 0));
  CUctxCigParam cig{};
  params.execAffinityParams = nullptr;
  params.cigParams = &cig;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuCtxCreate(&context, &params, 0, 0));
  EXPECT_EQ(current(), nullptr);
}

TEST_F(ContextTest, StaleAndForeignHandlesAreErrors) {
  CUcontext context = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent(context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetCurrent(context));
  unsigned version = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetApiVersion(context, &version));
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice_v2(&device, context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize_v2(context));
  CUcontext garbage = reinterpret_cast<CUcontext>(0xdeadbeefull);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(garbage));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent(garbage));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxPushCurrent(nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxDestroy(nullptr));
  // A new context never reuses a destroyed one's handle.
  CUcontext next = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&next, nullptr, 0, 0));
  EXPECT_NE(next, context);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(next));
}

TEST_F(ContextTest, EmptyStack) {
  CUcontext context = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(nullptr));
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice(&device));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
  size_t value;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE));
  unsigned flags;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetFlags(&flags));
  unsigned long long id;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetId(nullptr, &id));
  EXPECT_CU(CUDA_SUCCESS, cuCtxSetCurrent(nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetCurrent(nullptr));
}

TEST_F(ContextTest, PushPopAndSetCurrent) {
  CUcontext a, b, popped = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&a, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&b, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, b);
  ASSERT_CU(CUDA_SUCCESS, cuCtxPushCurrent(b));
  ASSERT_CU(CUDA_SUCCESS, cuCtxPushCurrent(b));  // the same context twice is allowed
  ASSERT_CU(CUDA_SUCCESS, cuCtxPopCurrent(nullptr));
  EXPECT_EQ(current(), b);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetCurrent(a));  // replaces the top
  EXPECT_EQ(current(), a);
  ASSERT_CU(CUDA_SUCCESS, cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, a);
  EXPECT_EQ(current(), a);  // the bottom entry
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetCurrent(nullptr));
  EXPECT_EQ(current(), nullptr);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(a));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(b));
}

TEST_F(ContextTest, QueriesOnAContext) {
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, CU_CTX_SCHED_BLOCKING_SYNC, 1));
  unsigned version = 0, flags = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetApiVersion(context, &version));
  EXPECT_EQ(version, 3020u);
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetApiVersion(nullptr, &version));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetApiVersion(context, nullptr));
  // cuCtxCreate is cuCtxCreate_v4 in CUDA 13: its contexts report their flags exactly (cuCtxCreate_v2's add
  // CU_CTX_MAP_HOST; driver 580 on an H100, tools/gpu-probe/results/clients17b-*.txt).
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetFlags(&flags));
  EXPECT_EQ(flags, unsigned(CU_CTX_SCHED_BLOCKING_SYNC));
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetFlags(CU_CTX_SCHED_SPIN));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetFlags(&flags));
  EXPECT_EQ(flags, unsigned(CU_CTX_SCHED_SPIN));
  CUcontext v2 = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate_v2(&v2, CU_CTX_SCHED_YIELD, 1));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetFlags(&flags));
  EXPECT_EQ(flags, unsigned(CU_CTX_SCHED_YIELD | CU_CTX_MAP_HOST));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(v2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetFlags(CU_CTX_SCHED_SPIN | CU_CTX_SCHED_BLOCKING_SYNC));
  unsigned long long id = 0, currentId = 0;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetId(context, &id));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetId(nullptr, &currentId));
  EXPECT_EQ(id, currentId);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetId(context, nullptr));
  CUdevice device = -1;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetDevice_v2(&device, context));
  EXPECT_EQ(device, 1);
  EXPECT_CU(CUDA_SUCCESS, cuCtxSynchronize());
  EXPECT_CU(CUDA_SUCCESS, cuCtxSynchronize_v2(context));
  EXPECT_CU(CUDA_SUCCESS, cuCtxResetPersistingL2Cache());
  CUexecAffinityParam affinity{};
  EXPECT_CU(CUDA_SUCCESS, cuCtxGetExecAffinity(&affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  EXPECT_EQ(affinity.param.smCount.val, 132u);  // the whole device, as driver 580 answers
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
}

TEST_F(ContextTest, IdsAreUnique) {
  std::set<unsigned long long> ids;
  for (int i = 0; i < 8; ++i) {
    CUcontext context;
    unsigned long long id = 0;
    ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, i % 2));
    ASSERT_CU(CUDA_SUCCESS, cuCtxGetId(context, &id));
    ids.insert(id);
    ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
  }
  EXPECT_EQ(ids.size(), 8u);
}

TEST_F(ContextTest, LimitsAsRecordedOnHopper) {
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 1));  // the h200 profile: recorded values
  size_t value = 0;
  struct Expected {
    CUlimit limit;
    CUresult result;
    size_t value;
  } expected[] = {
      {CU_LIMIT_STACK_SIZE, CUDA_SUCCESS, 1024},
      {CU_LIMIT_PRINTF_FIFO_SIZE, CUDA_SUCCESS, 8650752},
      {CU_LIMIT_MALLOC_HEAP_SIZE, CUDA_SUCCESS, 8388608},
      {CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, CUDA_ERROR_UNSUPPORTED_LIMIT, 0},
      {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, CUDA_SUCCESS, 2048},
      {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, CUDA_SUCCESS, 64},
      {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, CUDA_SUCCESS, 11796480},
      {CU_LIMIT_SHMEM_SIZE, CUDA_SUCCESS, 232448},
      {CU_LIMIT_CIG_ENABLED, CUDA_SUCCESS, 0},
      {CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, CUDA_ERROR_UNSUPPORTED_LIMIT, 0},
      {static_cast<CUlimit>(10), CUDA_ERROR_INVALID_VALUE, 0},
      {static_cast<CUlimit>(15), CUDA_ERROR_INVALID_VALUE, 0},
  };
  for (const auto& e : expected) {
    value = 0;
    EXPECT_CU(e.result, cuCtxGetLimit(&value, e.limit)) << "limit " << e.limit;
    if (e.result == CUDA_SUCCESS) {
      EXPECT_EQ(value, e.value) << "limit " << e.limit;
    }
  }
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE));
  EXPECT_EQ(value, 4096u);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 << 20));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE));
  EXPECT_EQ(value, size_t(64) << 20);
  // Out-of-range values as driver 580 treats them on an H100 (tools/gpu-probe/results/reliability24-h100-*.txt):
  // stack sizes round up to 16 bytes and are refused from 512 KiB on; heap and printf FIFO are clamped.
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1000));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE));
  EXPECT_EQ(value, 1008u);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, size_t(1) << 40));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE));
  EXPECT_EQ(value, 1008u) << "a refused value leaves the limit as it was";
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, size_t(32) << 40));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE));
  EXPECT_LT(value, size_t(32) << 40) << "clamped to a share of the device's memory";
  EXPECT_GT(value, size_t(64) << 20);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 1000));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE));
  EXPECT_EQ(value, size_t(4) << 20);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, size_t(1) << 62));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_PRINTF_FIFO_SIZE));
  EXPECT_EQ(value, size_t(2) << 30);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1000));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_PRINTF_FIFO_SIZE));
  EXPECT_EQ(value, size_t(512) << 10);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, size_t(1) << 40));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetLimit(&value, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
  EXPECT_EQ(value, 39321600u);  // clamped to CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
  EXPECT_CU(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1024));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetLimit(static_cast<CUlimit>(12), 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
}

TEST_F(ContextTest, CacheSharedMemoryAndPriorities) {
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 0));
  CUfunc_cache cache = CU_FUNC_CACHE_PREFER_L1;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetCacheConfig(&cache));
  EXPECT_EQ(cache, CU_FUNC_CACHE_PREFER_NONE);
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetCacheConfig(&cache));
  EXPECT_EQ(cache, CU_FUNC_CACHE_PREFER_SHARED);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetCacheConfig(static_cast<CUfunc_cache>(4)));
  CUsharedconfig shared = CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetSharedMemConfig(&shared));
  EXPECT_EQ(shared, CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE);
  EXPECT_CU(CUDA_SUCCESS, cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxSetSharedMemConfig(static_cast<CUsharedconfig>(3)));
  int least = 99, greatest = 99;
  ASSERT_CU(CUDA_SUCCESS, cuCtxGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -5);
  EXPECT_CU(CUDA_SUCCESS, cuCtxGetStreamPriorityRange(nullptr, &greatest));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
}

TEST_F(ContextTest, MigratesBetweenThreadsWithItsState) {
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2048));
  ASSERT_CU(CUDA_SUCCESS, cuCtxPopCurrent(nullptr));
  std::thread other([&] {
    CUcontext seen = nullptr;
    EXPECT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&seen));
    EXPECT_EQ(seen, nullptr);  // each thread has its own stack
    EXPECT_CU(CUDA_SUCCESS, cuCtxPushCurrent(context));
    size_t stack = 0;
    EXPECT_CU(CUDA_SUCCESS, cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
    EXPECT_EQ(stack, 2048u);
    EXPECT_CU(CUDA_SUCCESS, cuCtxPopCurrent(nullptr));
  });
  other.join();
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
}

TEST_F(ContextTest, CurrentToSeveralThreadsAndDestroyedUnderThem) {
  CUcontext context;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 1));
  std::atomic<int> stage{0};
  std::thread other([&] {
    EXPECT_CU(CUDA_SUCCESS, cuCtxSetCurrent(context));
    CUdevice device = -1;
    EXPECT_CU(CUDA_SUCCESS, cuCtxGetDevice(&device));
    EXPECT_EQ(device, 1);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    // Destroyed by the main thread while current here: still current, but unusable.
    CUcontext seen = nullptr;
    EXPECT_CU(CUDA_SUCCESS, cuCtxGetCurrent(&seen));
    EXPECT_EQ(seen, context);
    EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetDevice(&device));
    EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
    EXPECT_CU(CUDA_SUCCESS, cuCtxPopCurrent(&seen));
    EXPECT_EQ(seen, context);
  });
  while (stage.load() != 1) std::this_thread::yield();
  CUdevice device = -1;
  EXPECT_CU(CUDA_SUCCESS, cuCtxGetDevice(&device));  // current here too
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
  EXPECT_EQ(current(), nullptr);
  stage = 2;
  other.join();
}

TEST_F(ContextTest, DestroyingAContextBelowTheTopLeavesItThere) {
  CUcontext below, top;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&below, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&top, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(below));
  EXPECT_EQ(current(), top);
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(top));
  EXPECT_EQ(current(), below);
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetDevice(&device));
}

TEST_F(ContextTest, PeerAccess) {
  CUcontext a, b, sameDevice;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&b, nullptr, 0, 1));
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&sameDevice, nullptr, 0, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&a, nullptr, 0, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(b));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxEnablePeerAccess(b, 1));
  EXPECT_CU(CUDA_SUCCESS, cuCtxEnablePeerAccess(b, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(b, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, cuCtxEnablePeerAccess(sameDevice, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxEnablePeerAccess(a, 0));
  EXPECT_CU(CUDA_SUCCESS, cuCtxDisablePeerAccess(b));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(a));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(sameDevice));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(b));
}

TEST_F(ContextTest, RecordAndWaitForEventsOnTheWholeContext) {
  CUcontext context, other;
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&other, nullptr, 0, 0));
  CUevent foreign;
  ASSERT_CU(CUDA_SUCCESS, cuEventCreate(&foreign, 0));
  ASSERT_CU(CUDA_SUCCESS, cuCtxCreate(&context, nullptr, 0, 0));
  CUevent event;
  ASSERT_CU(CUDA_SUCCESS, cuEventCreate(&event, 0));
  EXPECT_CU(CUDA_SUCCESS, cuCtxWaitEvent(context, event));  // never recorded: nothing to wait for
  ASSERT_CU(CUDA_SUCCESS, cuCtxRecordEvent(context, event));
  ASSERT_CU(CUDA_SUCCESS, cuCtxWaitEvent(nullptr, event));
  ASSERT_CU(CUDA_SUCCESS, cuEventSynchronize(event));
  EXPECT_CU(CUDA_SUCCESS, cuEventQuery(event));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuCtxRecordEvent(context, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuCtxWaitEvent(context, reinterpret_cast<CUevent>(0x42)));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuCtxRecordEvent(context, foreign));
  ASSERT_CU(CUDA_SUCCESS, cuEventDestroy(event));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(context));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxRecordEvent(context, foreign));
  ASSERT_CU(CUDA_SUCCESS, cuEventDestroy(foreign));
  ASSERT_CU(CUDA_SUCCESS, cuCtxDestroy(other));
}

}  // namespace
