// api.stream: creation, flags, priorities, query, synchronize, ordering, callbacks, host functions.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

class api_stream : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&busy, mod, "busy_loop"));
    CU_ASSERT_OK(cuModuleGetFunction(&fill, mod, "fill_u32"));
  }
  // Queues a kernel that takes a while (long enough that a query right after usually sees it pending).
  CUresult LaunchBusy(CUstream s, unsigned iterations = 1u << 22) {
    CUdeviceptr none = 0;
    void* params[] = {&none, &iterations};
    return cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
  }
  CUresult LaunchFill(CUstream s, CUdeviceptr p, unsigned value, int n) {
    void* params[] = {&p, &value, &n};
    return cuLaunchKernel(fill, (n + 127) / 128, 1, 1, 128, 1, 1, 0, s, params, nullptr);
  }
  CUmodule mod = nullptr;
  CUfunction busy = nullptr, fill = nullptr;
};

TEST_F(api_stream, CreateDestroy) {
  CUstream s = nullptr;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
  EXPECT_NE(s, nullptr);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, CreateNonBlockingFlags) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned flags = 99;
  CU_EXPECT_OK(cuStreamGetFlags(s, &flags));
  EXPECT_EQ(flags, unsigned{CU_STREAM_NON_BLOCKING});
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, CreateBadFlags) {
  CUstream s;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&s, 0x10));
}

TEST_F(api_stream, CreateNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(nullptr, 0)); }

TEST_F(api_stream, CreateNoContext) {
  conf::DrainContextStack();
  CUstream s;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreate(&s, 0));
}

TEST_F(api_stream, Priority) {
  int least = 0, greatest = 0;
  CU_ASSERT_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreateWithPriority(&s, 0, greatest));
  int p = 99;
  CU_EXPECT_OK(cuStreamGetPriority(s, &p));
  EXPECT_EQ(p, greatest);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, PriorityClamped) {
  int least = 0, greatest = 0;
  CU_ASSERT_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreateWithPriority(&s, 0, greatest - 100));
  int p = 99;
  CU_EXPECT_OK(cuStreamGetPriority(s, &p));
  EXPECT_EQ(p, greatest) << "out-of-range priorities are clamped";
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_ASSERT_OK(cuStreamCreateWithPriority(&s, 0, least + 100));
  CU_EXPECT_OK(cuStreamGetPriority(s, &p));
  EXPECT_EQ(p, least);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, DefaultStreamPriorityAndFlags) {
  int p = 99;
  CU_EXPECT_OK(cuStreamGetPriority(nullptr, &p));
  EXPECT_EQ(p, 0);
  unsigned f = 99;
  CU_EXPECT_OK(cuStreamGetFlags(nullptr, &f));
  EXPECT_EQ(f, 0u);
}

TEST_F(api_stream, GetContext) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUcontext c = nullptr;
  CU_EXPECT_OK(cuStreamGetCtx(s, &c));
  EXPECT_EQ(c, ctx);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, GetDevice) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUdevice d = -1;
  CU_EXPECT_OK(cuStreamGetDevice(s, &d));
  EXPECT_EQ(d, dev);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, IdsUnique) {
  CUstream a, b;
  CU_ASSERT_OK(cuStreamCreate(&a, 0));
  CU_ASSERT_OK(cuStreamCreate(&b, 0));
  unsigned long long ia = 0, ib = 0;
  CU_EXPECT_OK(cuStreamGetId(a, &ia));
  CU_EXPECT_OK(cuStreamGetId(b, &ib));
  EXPECT_NE(ia, ib);
  CU_EXPECT_OK(cuStreamDestroy(a));
  CU_EXPECT_OK(cuStreamDestroy(b));
}

TEST_F(api_stream, QueryIdle) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_EXPECT_OK(cuStreamQuery(s));
  CU_EXPECT_OK(cuStreamQuery(nullptr));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, QueryPendingThenDone) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  // The kernel spins until the host writes the flag through a second (non-blocking) stream.
  CUfunction spin;
  CU_ASSERT_OK(cuModuleGetFunction(&spin, mod, "spin_until_flag"));
  unsigned long long maxSpins = 1ull << 22;
  void* params[] = {&flag, &maxSpins};
  CU_ASSERT_OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  CU_EXPECT(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
  CUstream other;
  CU_ASSERT_OK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  unsigned one = 1;
  CU_ASSERT_OK(cuMemcpyHtoDAsync(flag, &one, 4, other));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuStreamQuery(s));
  CU_EXPECT_OK(cuStreamDestroy(other));
  CU_EXPECT_OK(cuStreamDestroy(s));
  unsigned flagValue = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&flagValue, flag, 4));
  EXPECT_EQ(flagValue, 2u) << "the spinning kernel saw the flag that the other stream set while it ran";
  CU_EXPECT_OK(cuMemFree(flag));
}

TEST_F(api_stream, InOrderExecution) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const int n = 1 << 16;
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, n * 4));
  for (unsigned v = 1; v <= 20; ++v) CU_ASSERT_OK(LaunchFill(s, p, v, n));
  std::vector<unsigned> host(n);
  CU_ASSERT_OK(cuMemcpyDtoHAsync(host.data(), p, n * 4, s));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  for (int i = 0; i < n; i += 997) ASSERT_EQ(host[i], 20u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, AsyncCopiesInOrder) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  void* pinned;
  CU_ASSERT_OK(cuMemAllocHost(&pinned, 1 << 20));
  auto* words = static_cast<unsigned*>(pinned);
  for (int i = 0; i < (1 << 18); ++i) words[i] = static_cast<unsigned>(i);
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAlloc(&a, 1 << 20));
  CU_ASSERT_OK(cuMemAlloc(&b, 1 << 20));
  CU_ASSERT_OK(cuMemcpyHtoDAsync(a, pinned, 1 << 20, s));
  CU_ASSERT_OK(cuMemcpyDtoDAsync(b, a, 1 << 20, s));
  CU_ASSERT_OK(cuMemsetD32Async(a, 0, 1 << 18, s));
  CU_ASSERT_OK(cuMemcpyDtoHAsync(pinned, b, 1 << 20, s));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  EXPECT_EQ(words[12345], 12345u);
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
  CU_EXPECT_OK(cuMemFreeHost(pinned));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, DestroyWithPendingWork) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(LaunchBusy(s, 1u << 20));
  CU_EXPECT_OK(cuStreamDestroy(s)) << "destroy returns at once; the work still completes";
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_stream, SynchronizeNullStream) {
  CU_ASSERT_OK(LaunchBusy(nullptr, 1u << 16));
  CU_EXPECT_OK(cuStreamSynchronize(nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(CU_STREAM_LEGACY));
  CU_EXPECT_OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
}

TEST_F(api_stream, CallbackRunsAfterPriorWork) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  const int n = 4096;
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, n * 4));
  void* pinned;
  CU_ASSERT_OK(cuMemAllocHost(&pinned, n * 4));
  CU_ASSERT_OK(LaunchFill(s, p, 4242, n));
  CU_ASSERT_OK(cuMemcpyDtoHAsync(pinned, p, n * 4, s));
  struct Data {
    unsigned* words;
    std::atomic<unsigned> seen{0};
    std::atomic<int> status{-1};
  } data{static_cast<unsigned*>(pinned)};
  CU_ASSERT_OK(cuStreamAddCallback(
      s,
      [](CUstream, CUresult status, void* user) {
        auto* d = static_cast<Data*>(user);
        d->seen = d->words[n - 1];
        d->status = static_cast<int>(status);
      },
      &data, 0));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  EXPECT_EQ(data.seen.load(), 4242u);
  EXPECT_EQ(data.status.load(), 0);
  CU_EXPECT_OK(cuMemFreeHost(pinned));
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, CallbackBadFlags) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(
                                          s, [](CUstream, CUresult, void*) {}, nullptr, 1));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, HostFuncOrder) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  struct Log {
    std::mutex m;
    std::vector<int> order;
  } log;
  struct Item {
    Log* log;
    int id;
  };
  std::vector<Item> items;
  for (int i = 0; i < 16; ++i) items.push_back({&log, i});
  for (auto& it : items) {
    CU_ASSERT_OK(cuLaunchHostFunc(
        s,
        [](void* u) {
          auto* item = static_cast<Item*>(u);
          std::lock_guard<std::mutex> g(item->log->m);
          item->log->order.push_back(item->id);
        },
        &it));
    if (it.id % 4 == 0) {
      CU_ASSERT_OK(LaunchBusy(s, 1024));
    }
  }
  CU_ASSERT_OK(cuStreamSynchronize(s));
  ASSERT_EQ(log.order.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(log.order[i], i);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, HostFuncRunsOnAnotherThread) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  std::thread::id where;
  CU_ASSERT_OK(cuLaunchHostFunc(
      s, [](void* u) { *static_cast<std::thread::id*>(u) = std::this_thread::get_id(); }, &where));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  EXPECT_NE(where, std::this_thread::get_id());
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, HostFuncNull) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchHostFunc(s, nullptr, nullptr));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, WaitEventOrdersStreams) {
  CUstream a, b;
  CU_ASSERT_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  const int n = 1 << 18;
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, n * 4));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(LaunchBusy(a, 1u << 20));
  CU_ASSERT_OK(LaunchFill(a, p, 1, n));
  CU_ASSERT_OK(cuEventRecord(e, a));
  CU_ASSERT_OK(cuStreamWaitEvent(b, e, 0));
  CU_ASSERT_OK(LaunchFill(b, p, 2, n));  // must run after the fill with 1
  CU_ASSERT_OK(cuStreamSynchronize(b));
  std::vector<unsigned> host(n);
  CU_ASSERT_OK(cuMemcpyDtoH(host.data(), p, n * 4));
  for (int i = 0; i < n; i += 1021) ASSERT_EQ(host[i], 2u);
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(a));
  CU_EXPECT_OK(cuStreamDestroy(b));
}

TEST_F(api_stream, WaitEventBadFlags) {
  CUstream s;
  CUevent e;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamWaitEvent(s, e, 0x10));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, WaitUnrecordedEventIsNoop) {
  CUstream s;
  CUevent e;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_EXPECT_OK(cuStreamWaitEvent(s, e, 0));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, LegacyStreamSynchronizesBlockingStreams) {
  CUstream blocking;
  CU_ASSERT_OK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  const int n = 1 << 18;
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, n * 4));
  CU_ASSERT_OK(LaunchBusy(blocking, 1u << 20));
  CU_ASSERT_OK(LaunchFill(blocking, p, 1, n));
  CU_ASSERT_OK(LaunchFill(nullptr, p, 2, n));  // legacy default stream waits for the blocking stream
  CU_ASSERT_OK(cuStreamSynchronize(nullptr));
  std::vector<unsigned> host(n);
  CU_ASSERT_OK(cuMemcpyDtoH(host.data(), p, n * 4));
  for (int i = 0; i < n; i += 1021) ASSERT_EQ(host[i], 2u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(blocking));
}

TEST_F(api_stream, CopyAttributes) {
  CUstream a, b;
  CU_ASSERT_OK(cuStreamCreate(&a, 0));
  CU_ASSERT_OK(cuStreamCreate(&b, 0));
  CUstreamAttrValue v{};
  v.syncPolicy = CU_SYNC_POLICY_YIELD;
  CU_EXPECT_OK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
  CU_EXPECT_OK(cuStreamCopyAttributes(b, a));
  CUstreamAttrValue got{};
  CU_EXPECT_OK(cuStreamGetAttribute(b, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &got));
  EXPECT_EQ(got.syncPolicy, CU_SYNC_POLICY_YIELD);
  CU_EXPECT_OK(cuStreamDestroy(a));
  CU_EXPECT_OK(cuStreamDestroy(b));
}

TEST_F(api_stream, WriteAndWaitValue32) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 16));
  CU_ASSERT_OK(cuMemsetD32(p, 0, 4));
  CU_ASSERT_OK(cuStreamWriteValue32(s, p, 7, 0));
  CU_ASSERT_OK(cuStreamWaitValue32(s, p, 7, CU_STREAM_WAIT_VALUE_EQ));
  CU_ASSERT_OK(cuStreamWriteValue32(s, p + 4, 9, 0));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  unsigned v[2] = {};
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, 8));
  EXPECT_EQ(v[0], 7u);
  EXPECT_EQ(v[1], 9u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, WriteValue64) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 16));
  CU_ASSERT_OK(cuStreamWriteValue64(s, p, 0x1122334455667788ull, 0));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  unsigned long long v = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&v, p, 8));
  EXPECT_EQ(v, 0x1122334455667788ull);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream, UseAfterDestroy) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuStreamDestroy(s));
  CUstream s2;
  CU_ASSERT_OK(cuStreamCreate(&s2, 0));
  if (s2 == s) {
    CU_EXPECT_OK(cuStreamDestroy(s2));
    CONF_NOT_SUPPORTED("the driver reused the destroyed handle value");
  }
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(s));
  CU_EXPECT_OK(cuStreamDestroy(s2));
}

// cuemu's extension (include/cuemu.h), looked up the way a portable program does: NVIDIA's driver does not export
// it (not-supported there; the case is cuemu-only). In deterministic mode work runs when it is submitted, on the
// submitting thread, so a stream is idle as soon as the launch returns.
TEST_F(api_stream, CuemuDeterministicModeExtension) {
  using SetDeterministic = CUresult (*)(int);
  using GetDeterministic = CUresult (*)(int*);
  auto set = reinterpret_cast<SetDeterministic>(dlsym(RTLD_DEFAULT, "cuemuSetDeterministic"));
  auto get = reinterpret_cast<GetDeterministic>(dlsym(RTLD_DEFAULT, "cuemuGetDeterministic"));
  if (!set || !get) CONF_NOT_SUPPORTED("the driver has no cuemuSetDeterministic (not cuemu)");
  int before = -1;
  CU_ASSERT_OK(get(&before));
  CU_ASSERT_OK(set(1));
  int now = -1;
  CU_EXPECT_OK(get(&now));
  EXPECT_EQ(now, 1);
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_EXPECT_OK(LaunchBusy(s, 1u << 16));
  CU_EXPECT_OK(cuStreamQuery(s)) << "the kernel ran inside cuLaunchKernel";
  std::thread::id ranOn;
  auto noteThread = [](void* p) { *static_cast<std::thread::id*>(p) = std::this_thread::get_id(); };
  CU_EXPECT_OK(cuLaunchHostFunc(s, noteThread, &ranOn));
  EXPECT_EQ(ranOn, std::this_thread::get_id()) << "the host function ran on the submitting thread";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, set(2));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, get(nullptr));
  CU_EXPECT_OK(set(before));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// On NVIDIA's driver this misuse runs the memset and faults the whole process (CUDA_ERROR_LAUNCH_FAILED from
// then on), so it runs in a process of its own.
class api_stream_Faults : public conf::ContextTest {};

TEST_F(api_stream_Faults, StreamOfOtherContext) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuMemsetD32Async(p, 0, 16, s)) << "expectation from docs; GPU run will confirm";
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuCtxDestroy(other));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

}  // namespace
