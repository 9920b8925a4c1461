// api.context.Lifetime and api.launch.Faults: objects that outlive their context, unloading while work is in flight,
// kernel faults. On NVIDIA's driver a kernel fault (trap, illegal or misaligned address) poisons the whole process:
// every later call, even cuCtxCreate of a new context, returns the error (seen on an H200: CUDA_ERROR_LAUNCH_FAILED
// from cuCtxCreate after a trap). So the supervisor runs every api.launch.Faults case in a process of its own.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

using conf::DeviceTest;

class api_context_Lifetime : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuCtxCreate(&doomed, nullptr, 0, dev));
  }
  void TearDown() override {
    conf::DrainContextStack();
    if (doomed) cuCtxDestroy(doomed);
    if (survivor) cuCtxDestroy(survivor);
  }
  // Destroys `doomed` and makes a fresh context current, so that later calls have a valid current context.
  void DestroyDoomed() {
    CU_ASSERT_OK(cuCtxDestroy(doomed));
    doomed = nullptr;
    CU_ASSERT_OK(cuCtxCreate(&survivor, nullptr, 0, dev));
  }
  CUcontext doomed = nullptr, survivor = nullptr;
};

TEST_F(api_context_Lifetime, StreamOfDestroyedContext) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  DestroyDoomed();
  CUresult r = cuStreamQuery(s);
  EXPECT_TRUE(r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT)
      << conf::Describe(r);
}

TEST_F(api_context_Lifetime, EventOfDestroyedContext) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  DestroyDoomed();
  CUresult r = cuEventQuery(e);
  EXPECT_TRUE(r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT)
      << conf::Describe(r);
}

TEST_F(api_context_Lifetime, ModuleOfDestroyedContext) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "second.ptx"));
  DestroyDoomed();
  CUfunction f;
  CUresult r = cuModuleGetFunction(&f, m, "read_counter");
  EXPECT_TRUE(r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_INVALID_CONTEXT)
      << conf::Describe(r);
}

TEST_F(api_context_Lifetime, MemoryOfDestroyedContext) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  DestroyDoomed();
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFree(p)) << "the allocation went with its context";
  unsigned v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(&v, p, 4));
}

TEST_F(api_context_Lifetime, FreeFromAnotherCurrentContext) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4096));
  CU_ASSERT_OK(cuCtxCreate(&survivor, nullptr, 0, dev));  // survivor is current now
  CU_EXPECT_OK(cuMemFree(p)) << "memory is freed by address, whichever context is current";
}

TEST_F(api_context_Lifetime, UnloadWhileKernelInFlight) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction busy, fill;
  CU_ASSERT_OK(cuModuleGetFunction(&busy, m, "busy_loop"));
  CU_ASSERT_OK(cuModuleGetFunction(&fill, m, "fill_u32"));
  CUdeviceptr out;
  CU_ASSERT_OK(cuMemAlloc(&out, 256 * 4));
  CUdeviceptr none = 0;
  unsigned iterations = 1u << 20;
  void* busyParams[] = {&none, &iterations};
  CU_ASSERT_OK(cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, nullptr, busyParams, nullptr));
  unsigned value = 4242;
  int n = 256;
  void* fillParams[] = {&out, &value, &n};
  CU_ASSERT_OK(cuLaunchKernel(fill, 2, 1, 1, 128, 1, 1, 0, nullptr, fillParams, nullptr));
  CU_EXPECT_OK(cuModuleUnload(m)) << "unloading waits for or outlives the work in flight";
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, out + 255 * 4, 4));
  EXPECT_EQ(v, 4242u);
  CU_EXPECT_OK(cuMemFree(out));
}

TEST_F(api_context_Lifetime, DestroyWithPendingWork) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction busy;
  CU_ASSERT_OK(cuModuleGetFunction(&busy, m, "busy_loop"));
  CUdeviceptr none = 0;
  unsigned iterations = 1u << 20;
  void* params[] = {&none, &iterations};
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuLaunchKernel(busy, 4, 1, 1, 32, 1, 1, 0, s, params, nullptr));
  CU_EXPECT_OK(cuCtxDestroy(doomed)) << "destroying a busy context waits for it, then frees everything";
  doomed = nullptr;
}

TEST_F(api_context_Lifetime, ManyObjectsFreedWithContext) {
  for (int i = 0; i < 16; ++i) {
    CUdeviceptr p;
    CU_ASSERT_OK(cuMemAlloc(&p, 1 << 16));
    CUstream s;
    CU_ASSERT_OK(cuStreamCreate(&s, 0));
    CUevent e;
    CU_ASSERT_OK(cuEventCreate(&e, 0));
    CUmodule m;
    CU_ASSERT_OK(conf::LoadModule(&m, "second.ptx"));
  }
  size_t freeBefore = 0, total = 0;
  CU_ASSERT_OK(cuMemGetInfo(&freeBefore, &total));
  CU_EXPECT_OK(cuCtxDestroy(doomed));
  doomed = nullptr;
  CU_ASSERT_OK(cuCtxCreate(&survivor, nullptr, 0, dev));
  size_t freeAfter = 0;
  CU_EXPECT_OK(cuMemGetInfo(&freeAfter, &total));
  EXPECT_GE(freeAfter + (size_t{4} << 20), freeBefore + (size_t{16} << 16)) << "the context's memory came back";
}

// ---- faults ------------------------------------------------------------------------------------------------------

class api_launch_Faults : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&writer, mod, "write_through_pointer"));
  }
  CUresult Write(CUdeviceptr where, CUstream s = nullptr) {
    unsigned value = 1;
    void* params[] = {&where, &value};
    return cuLaunchKernel(writer, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr);
  }
  CUmodule mod = nullptr;
  CUfunction writer = nullptr;
};

TEST_F(api_launch_Faults, MisalignedAddress) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_ASSERT_OK(Write(p + 2));
  CU_EXPECT(CUDA_ERROR_MISALIGNED_ADDRESS, cuCtxSynchronize());
}

TEST_F(api_launch_Faults, OutOfBoundsPastAllocation) {
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64));
  CU_ASSERT_OK(Write(p + (size_t{1} << 36)));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
}

TEST_F(api_launch_Faults, ReportedByStreamSynchronize) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(Write(0x10, s));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamSynchronize(s));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamQuery(s)) << "sticky";
  CUevent e;
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuEventCreate(&e, 0)) << "every call of the context returns the error";
}

TEST_F(api_launch_Faults, LaunchAfterFaultFails) {
  CU_ASSERT_OK(Write(0x10));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, Write(0x10));
}

// Measured on driver 580 (tools/gpu-probe): a callback queued behind the faulting kernel still runs once, with the
// error as its status (possibly after cuCtxSynchronize has returned); a host function queued there does not run;
// after the fault, adding a callback and destroying the stream answer the error.
TEST_F(api_launch_Faults, CallbackSeesError) {
  CUstream s, releaser;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuStreamCreate(&releaser, CU_STREAM_NON_BLOCKING));
  // The faulting kernel waits behind a flag until the callback and the host function are queued, so the fault
  // cannot happen before they are (a one-thread kernel is fast on a GPU and faster on cuemu).
  CUdeviceptr flag;
  CU_ASSERT_OK(cuMemAlloc(&flag, 4));
  CU_ASSERT_OK(cuMemsetD32(flag, 0, 1));
  CU_ASSERT_OK(cuStreamWaitValue32(s, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CU_ASSERT_OK(Write(0x10, s));
  static std::atomic<int> status{-1};
  static std::atomic<int> calls{0};
  static std::atomic<int> hostFunctionCalls{0};
  CU_EXPECT_OK(cuStreamAddCallback(
      s,
      [](CUstream, CUresult st, void*) {
        status = static_cast<int>(st);
        ++calls;
      },
      nullptr, 0));
  CU_EXPECT_OK(cuLaunchHostFunc(
      s, [](void*) { ++hostFunctionCalls; }, nullptr));
  CU_ASSERT_OK(cuStreamWriteValue32(releaser, flag, 1, 0));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  for (int i = 0; i < 200 && calls.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls.load(), 1) << "the callback runs once";
  EXPECT_EQ(status.load(), static_cast<int>(CUDA_ERROR_ILLEGAL_ADDRESS)) << "the callback gets the stream's error";
  EXPECT_EQ(hostFunctionCalls.load(), 0) << "a host function behind a fault does not run";
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamAddCallback(
                                            s, [](CUstream, CUresult, void*) { ++calls; }, nullptr, 0));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamDestroy(s));
}

TEST_F(api_launch_Faults, Trap) {
  CUfunction trap;
  CU_ASSERT_OK(cuModuleGetFunction(&trap, mod, "trap_kernel"));
  CU_ASSERT_OK(cuLaunchKernel(trap, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  // measured on an H100 (tools/gpu-probe/printftrap28): not CUDA_ERROR_ILLEGAL_INSTRUCTION
  CU_EXPECT(CUDA_ERROR_LAUNCH_FAILED, cuCtxSynchronize());
  CUdeviceptr p;
  CU_EXPECT(CUDA_ERROR_LAUNCH_FAILED, cuMemAlloc(&p, 16)) << "the error sticks";
}

// `brkpt` run without a debugger ends the grid as `trap` does (measured on an H100: tools/gpu-probe/freebrkpt28), after
// what the thread wrote before it.
TEST_F(api_launch_Faults, Brkpt) {
  static const char kPtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry bk(.param .u64 out) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  brkpt;
  mov.u32 %r1, 2;
  st.global.u32 [%rd1+4], %r1;
  ret;
}
)";
  CUmodule m = nullptr;
  CU_ASSERT_OK(cuModuleLoadData(&m, kPtx));
  CUfunction f = nullptr;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "bk"));
  CUdeviceptr out = 0;
  CU_ASSERT_OK(cuMemAllocManaged(&out, 8, CU_MEM_ATTACH_GLOBAL));
  auto* words = reinterpret_cast<uint32_t*>(out);
  words[0] = words[1] = 0;
  void* args[] = {&out};
  CU_ASSERT_OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  CU_EXPECT(CUDA_ERROR_LAUNCH_FAILED, cuCtxSynchronize());
  EXPECT_EQ(words[0], 1u) << "written before the brkpt";
  EXPECT_EQ(words[1], 0u) << "not written: the brkpt ended the thread";
}

TEST_F(api_launch_Faults, TrapPoisonsTheProcess) {
  CUfunction trap;
  CU_ASSERT_OK(cuModuleGetFunction(&trap, mod, "trap_kernel"));
  CU_ASSERT_OK(cuLaunchKernel(trap, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CUresult r = cuCtxSynchronize();
  ASSERT_NE(r, CUDA_SUCCESS);
  CU_EXPECT_OK(cuCtxDestroy(ctx)) << "a faulted context can be destroyed";
  ctx = nullptr;
  CUcontext fresh = nullptr;
  CU_EXPECT(r, cuCtxCreate(&fresh, nullptr, 0, dev)) << "a new context of the process gets the same error";
  if (fresh) cuCtxDestroy(fresh);
}

TEST_F(api_launch_Faults, IllegalAddressReachesOtherContexts) {
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));  // now current; ctx is below it
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_ASSERT_OK(Write(0x10));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize()) << "still reported";
  CU_ASSERT_OK(cuCtxPushCurrent(other));
  CUdeviceptr p;
  // expectation from the trap case seen on an H200; GPU run will confirm for illegal addresses.
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemAlloc(&p, 16)) << "the fault reaches every context of the process";
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  cuCtxDestroy(other);
}

TEST_F(api_launch_Faults, PrimaryResetDoesNotClearFault) {
  CUcontext primary;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(primary));
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "write_through_pointer"));
  CUdeviceptr bad = 0x10;
  unsigned value = 1;
  void* params[] = {&bad, &value};
  CU_ASSERT_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  cuDevicePrimaryCtxReset(dev);
  CUcontext again = nullptr;
  // expectation from docs ("the process must be terminated and relaunched"); GPU run will confirm.
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuDevicePrimaryCtxRetain(&again, dev));
}

// Which calls still answer once a fault poisoned the process. Measured facts (H200, driver 580): cuCtxDestroy,
// cuCtxPushCurrent, cuCtxPopCurrent and cuGraphCreate succeed; cuStreamDestroy returns the fault. The device
// queries below are expectations (they do not touch the failed context); GPU run will confirm.
TEST_F(api_launch_Faults, WhatStillAnswersAfterAFault) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(Write(0x10));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
  int version = 0;
  CU_EXPECT_OK(cuDriverGetVersion(&version));
  const char* name = nullptr;
  CU_EXPECT_OK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name));
  int sms = 0;
  CU_EXPECT_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  EXPECT_GT(sms, 0);
  char deviceName[128];
  CU_EXPECT_OK(cuDeviceGetName(deviceName, sizeof deviceName, dev));
  CUcontext current = nullptr;
  CU_EXPECT_OK(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, ctx);
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamDestroy(s)) << "measured on an H200 (driver 580)";
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuEventRecord(e, nullptr));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamSynchronize(nullptr));
  CUgraph g = nullptr;
  CU_EXPECT_OK(cuGraphCreate(&g, 0)) << "measured on an H200 (driver 580): a graph does not touch the context";
  if (g) cuGraphDestroy(g);
}

TEST_F(api_launch_Faults, LaunchValidationErrorsDoNotPoison) {
  unsigned value = 1;
  CUdeviceptr where = 0;
  void* params[] = {&where, &value};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(writer, 1, 1, 1, 4096, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(writer, 0, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  CUcontext other = nullptr;
  CU_EXPECT_OK(cuCtxCreate(&other, nullptr, 0, dev)) << "the process is not poisoned by a refused launch";
  if (other) {
    CU_EXPECT_OK(cuCtxDestroy(other));
  }
}

TEST_F(api_launch_Faults, FaultInOneStreamStopsWorkOnAnother) {
  CUstream a, b;
  CU_ASSERT_OK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(Write(0x10, a));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamSynchronize(a));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamQuery(b)) << "the other stream of the context reports it too";
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, Write(0, b));
}

}  // namespace
