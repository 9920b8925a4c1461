// api.stream (continued): per-thread default streams, non-blocking streams and the legacy stream, stream memory
// operations, capture into graphs.
#include <atomic>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

class api_stream_Ext : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&fill, mod, "fill_u32"));
    CU_ASSERT_OK(cuModuleGetFunction(&spin, mod, "spin_until_flag"));
  }
  CUresult LaunchFill(CUstream s, CUdeviceptr p, unsigned value, int n) {
    void* params[] = {&p, &value, &n};
    return cuLaunchKernel(fill, (n + 127) / 128, 1, 1, 128, 1, 1, 0, s, params, nullptr);
  }
  CUresult LaunchSpin(CUstream s, CUdeviceptr flag) {
    unsigned long long maxSpins = 1ull << 22;
    void* params[] = {&flag, &maxSpins};
    return cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr);
  }
  CUmodule mod = nullptr;
  CUfunction fill = nullptr, spin = nullptr;
};

TEST_F(api_stream_Ext, NonBlockingStreamRunsBesideLegacyStream) {
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  CU_ASSERT_OK(LaunchSpin(nullptr, flag));  // the legacy stream spins until the flag is set
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned one = 1;
  CU_ASSERT_OK(cuMemcpyHtoDAsync(flag, &one, 4, s));  // does not wait for the legacy stream
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuCtxSynchronize());
  CU_EXPECT_OK(cuStreamDestroy(s));
  unsigned flagValue = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&flagValue, flag, 4));
  EXPECT_EQ(flagValue, 2u) << "the spinning kernel saw the flag that the other stream set while it ran";
  CU_EXPECT_OK(cuMemFree(flag));
}

TEST_F(api_stream_Ext, PerThreadStreamIsIndependentOfLegacy) {
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(LaunchSpin(s, flag));
  // The per-thread default stream is not synchronized with other streams; it runs the release at once.
  unsigned one = 1;
  CU_ASSERT_OK(cuMemcpyHtoDAsync(flag, &one, 4, CU_STREAM_PER_THREAD));
  CU_EXPECT_OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuStreamDestroy(s));
  unsigned flagValue = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&flagValue, flag, 4));
  EXPECT_EQ(flagValue, 2u) << "the spinning kernel saw the flag that the other stream set while it ran";
  CU_EXPECT_OK(cuMemFree(flag));
}

TEST_F(api_stream_Ext, PerThreadEntryPoints) {
  auto memcpyPtsz = conf::Symbol<CUresult (*)(CUdeviceptr, const void*, size_t, CUstream)>("cuMemcpyHtoDAsync_v2_ptsz");
  auto syncPtsz = conf::Symbol<CUresult (*)(CUstream)>("cuStreamSynchronize_ptsz");
  ASSERT_NE(memcpyPtsz, nullptr);
  ASSERT_NE(syncPtsz, nullptr);
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 4));
  unsigned v = 1234, back = 0;
  CU_EXPECT_OK(memcpyPtsz(d, &v, 4, nullptr)) << "NULL means this thread's default stream in _ptsz forms";
  CU_EXPECT_OK(syncPtsz(nullptr));
  CU_EXPECT_OK(cuMemcpyDtoH(&back, d, 4));
  EXPECT_EQ(back, 1234u);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_stream_Ext, PerThreadStreamsOfTwoThreads) {
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 2 * 4096 * 4));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) return;
      if (LaunchFill(CU_STREAM_PER_THREAD, d + t * 4096 * 4, 100u + t, 4096) != CUDA_SUCCESS) return;
      if (cuStreamSynchronize(CU_STREAM_PER_THREAD) != CUDA_SUCCESS) return;
      unsigned v = 0;
      if (cuMemcpyDtoH(&v, d + t * 4096 * 4 + 4092, 4) == CUDA_SUCCESS && v == 100u + t) ok++;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 2);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_stream_Ext, WaitValueGeq) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 8));
  CU_ASSERT_OK(cuMemsetD32(p, 0, 2));
  CU_ASSERT_OK(cuStreamWaitValue32(s, p, 5, CU_STREAM_WAIT_VALUE_GEQ));
  CU_ASSERT_OK(cuStreamWriteValue32(s, p + 4, 1, 0));
  CU_EXPECT(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
  unsigned seven = 7;
  CU_ASSERT_OK(cuMemcpyHtoD(p, &seven, 4));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p + 4, 4));
  EXPECT_EQ(v, 1u);
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_stream_Ext, WaitValueAnd) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 8));
  unsigned init[2] = {0x10, 0};
  CU_ASSERT_OK(cuMemcpyHtoD(p, init, 8));
  CU_ASSERT_OK(cuStreamWaitValue32(s, p, 0x10, CU_STREAM_WAIT_VALUE_AND));
  CU_ASSERT_OK(cuStreamWriteValue32(s, p + 4, 2, 0));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p + 4, 4));
  EXPECT_EQ(v, 2u);
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_stream_Ext, WaitValueBadFlags) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 8));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamWaitValue32(nullptr, p, 1, 0x77));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_stream_Ext, WriteValueMisaligned) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 16));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32(nullptr, p + 1, 1, 0));
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_stream_Ext, BatchMemOp) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 16));
  CU_ASSERT_OK(cuMemsetD32(p, 0, 4));
  CUstreamBatchMemOpParams ops[2] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = p;
  ops[0].writeValue.value = 11;
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[1].writeValue.address = p + 8;
  ops[1].writeValue.value = 22;
  CU_EXPECT_OK(cuStreamBatchMemOp(s, 2, ops, 0));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v[4] = {};
  CU_EXPECT_OK(cuMemcpyDtoH(v, p, 16));
  EXPECT_EQ(v[0], 11u);
  EXPECT_EQ(v[2], 22u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream_Ext, CaptureLaunchReplay) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 1024 * 4));
  CU_ASSERT_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_EXPECT_OK(cuStreamIsCapturing(s, &status));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CU_ASSERT_OK(LaunchFill(s, p, 4321, 1024));
  CUgraph graph = nullptr;
  CU_ASSERT_OK(cuStreamEndCapture(s, &graph));
  unsigned v = 0;
  CUgraphExec exec = nullptr;
  CU_ASSERT_OK(cuGraphInstantiate(&exec, graph, 0));
  CU_ASSERT_OK(cuGraphLaunch(exec, s));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  CU_ASSERT_OK(cuMemcpyDtoH(&v, p + 4092, 4));
  EXPECT_EQ(v, 4321u);
  CU_EXPECT_OK(cuGraphExecDestroy(exec));
  CU_EXPECT_OK(cuGraphDestroy(graph));
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream_Ext, NotCapturing) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  CU_EXPECT_OK(cuStreamIsCapturing(nullptr, &status));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
  CUgraph g;
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(s, &g));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream_Ext, SynchronizeDuringCaptureIsAnError) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CU_EXPECT(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamSynchronize(s));
  CUgraph g = nullptr;
  CUresult end = cuStreamEndCapture(s, &g);
  EXPECT_TRUE(end == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED || end == CUDA_SUCCESS) << conf::Describe(end);
  if (g) cuGraphDestroy(g);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream_Ext, QueryDestroyedStreamFromOtherThread) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::thread([&] {
    cuCtxSetCurrent(ctx);
    r = cuStreamQuery(s);
  }).join();
  CU_EXPECT_OK(r) << "streams are usable from any thread with their context current";
  CU_EXPECT_OK(cuStreamDestroy(s));
}

}  // namespace
