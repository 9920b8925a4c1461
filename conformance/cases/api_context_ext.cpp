// api.context (continued): explicit-context forms, execution affinity, device resources and green contexts, legacy
// attach/detach, deep stacks and cross-context event waits.
#include <atomic>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

using conf::DeviceTest;
using api_context_Ext = DeviceTest;

CUcontext Current() {
  CUcontext c = reinterpret_cast<CUcontext>(0x1);
  if (cuCtxGetCurrent(&c) != CUDA_SUCCESS) return reinterpret_cast<CUcontext>(0x2);
  return c;
}

TEST_F(api_context_Ext, GetDeviceV2ExplicitAndCurrent) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUdevice d = -1;
  CU_EXPECT_OK(cuCtxGetDevice_v2(&d, c));
  EXPECT_EQ(d, dev);
  d = -1;
  CU_EXPECT_OK(cuCtxGetDevice_v2(&d, nullptr)) << "NULL means the current context";
  EXPECT_EQ(d, dev);
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, GetDeviceV2NoContext) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice_v2(&d, nullptr));
}

TEST_F(api_context_Ext, SynchronizeV2NonCurrentContext) {
  CUcontext a, b;
  CU_ASSERT_OK(cuCtxCreate(&a, nullptr, 0, dev));
  CU_ASSERT_OK(cuCtxCreate(&b, nullptr, 0, dev));
  CU_EXPECT_OK(cuCtxSynchronize_v2(a)) << "a is not current";
  CU_EXPECT_OK(cuCtxSynchronize_v2(nullptr));
  EXPECT_EQ(Current(), b) << "synchronizing does not change the stack";
  CU_EXPECT_OK(cuCtxDestroy(b));
  CU_EXPECT_OK(cuCtxDestroy(a));
}

TEST_F(api_context_Ext, ResetPersistingL2Cache) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CU_EXPECT_OK(cuCtxResetPersistingL2Cache());
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, ExecAffinityDefaultIsWholeDevice) {
  int supported = 0;
  CU_ASSERT_OK(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev));
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUexecAffinityParam p{};
  // Answered even where the device reports no execution-affinity support (measured on driver 580, H200).
  CU_EXPECT_OK(cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  EXPECT_EQ(p.type, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
  EXPECT_EQ(static_cast<int>(p.param.smCount.val), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, CreateWithExecAffinityParams) {
  int supported = 0;
  CU_ASSERT_OK(cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev));
  if (!supported) CONF_NOT_SUPPORTED("no execution affinity");
  CUexecAffinityParam p{};
  p.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  p.param.smCount.val = 2;
  CUctxCreateParams params{};
  params.execAffinityParams = &p;
  params.numExecAffinityParams = 1;
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, &params, 0, dev));
  CUexecAffinityParam got{};
  CU_EXPECT_OK(cuCtxGetExecAffinity(&got, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  EXPECT_GE(got.param.smCount.val, 2u);
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, DeviceSmResource) {
  CUdevResource res{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(res.type, CU_DEV_RESOURCE_TYPE_SM);
  EXPECT_EQ(static_cast<int>(res.sm.smCount), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
}

TEST_F(api_context_Ext, ContextSmResource) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUdevResource res{};
  CU_EXPECT_OK(cuCtxGetDevResource(c, &res, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(static_cast<int>(res.sm.smCount), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, DeviceResourceBadType) {
  CUdevResource res{};
  CU_EXPECT(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDeviceGetDevResource(dev, &res, static_cast<CUdevResourceType>(77)));
}

TEST_F(api_context_Ext, GreenContextFromWholeDevice) {
  CUdevResource res{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResourceDesc desc = nullptr;
  CU_ASSERT_OK(cuDevResourceGenerateDesc(&desc, &res, 1));
  CUgreenCtx green = nullptr;
  CU_ASSERT_OK(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUcontext c = nullptr;
  CU_EXPECT_OK(cuCtxFromGreenCtx(&c, green));
  EXPECT_NE(c, nullptr);
  CUstream s = nullptr;
  CU_EXPECT_OK(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
  if (s) {
    CU_EXPECT_OK(cuStreamDestroy(s));
  }
  CU_EXPECT_OK(cuGreenCtxDestroy(green));
}

TEST_F(api_context_Ext, GreenContextSplitByCount) {
  CUdevResource whole{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource groups[2] = {};
  CUdevResource rest{};
  unsigned count = 2;
  CU_ASSERT_OK(cuDevSmResourceSplitByCount(groups, &count, &whole, &rest, 0, 8));
  EXPECT_GE(count, 1u);
  for (unsigned i = 0; i < count; ++i) EXPECT_GE(groups[i].sm.smCount, 8u);
}

TEST_F(api_context_Ext, GreenContextSplitSizesAndRemainder) {
  CUdevResource whole{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM));
  unsigned possible = 0;
  CU_ASSERT_OK(cuDevSmResourceSplitByCount(nullptr, &possible, &whole, nullptr, 0, 16));
  EXPECT_GE(possible, 1u);
  EXPECT_LE(possible * 16, whole.sm.smCount);
  CUdevResource groups[2] = {};
  CUdevResource rest{};
  unsigned count = 2;
  CU_ASSERT_OK(cuDevSmResourceSplitByCount(groups, &count, &whole, &rest, 0, 16));
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(groups[0].sm.smCount, 16u);
  EXPECT_EQ(groups[1].sm.smCount, 16u);
  EXPECT_EQ(rest.sm.smCount, whole.sm.smCount - 32);
  EXPECT_EQ(groups[0].type, CU_DEV_RESOURCE_TYPE_SM);
  unsigned tooMany = 1;
  CUdevResource big{};
  CU_EXPECT(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            cuDevSmResourceSplitByCount(&big, &tooMany, &whole, nullptr, 0, whole.sm.smCount + 8));
}

TEST_F(api_context_Ext, GreenContextRunsKernels) {
  CUdevResource whole{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource group{};
  unsigned count = 1;
  CU_ASSERT_OK(cuDevSmResourceSplitByCount(&group, &count, &whole, nullptr, 0, 8));
  CUdevResourceDesc desc = nullptr;
  CU_ASSERT_OK(cuDevResourceGenerateDesc(&desc, &group, 1));
  CUgreenCtx green = nullptr;
  CU_ASSERT_OK(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUcontext gc = nullptr;
  CU_ASSERT_OK(cuCtxFromGreenCtx(&gc, green));
  EXPECT_NE(gc, Current()) << "creating a green context does not make it current";
  CUdevResource seen{};
  CU_EXPECT_OK(cuCtxGetDevResource(gc, &seen, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(seen.sm.smCount, group.sm.smCount);
  CU_ASSERT_OK(cuCtxPushCurrent(gc));
  CUstream s = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuGreenCtxStreamCreate(&s, green, 0, 0)) << "the non-blocking flag is required";
  CU_ASSERT_OK(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
  CUcontext owner = nullptr;
  CUgreenCtx greenOwner = nullptr;
  CU_EXPECT_OK(cuStreamGetCtx_v2(s, &owner, &greenOwner));
  EXPECT_EQ(greenOwner, green);
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "vadd_f32"));
  constexpr int n = 256;
  std::vector<float> a(n, 1.5f), b(n, 2.0f), c(n, 0.0f);
  CUdeviceptr da, db, dc;
  CU_ASSERT_OK(cuMemAlloc(&da, n * 4));
  CU_ASSERT_OK(cuMemAlloc(&db, n * 4));
  CU_ASSERT_OK(cuMemAlloc(&dc, n * 4));
  CU_ASSERT_OK(cuMemcpyHtoD(da, a.data(), n * 4));
  CU_ASSERT_OK(cuMemcpyHtoD(db, b.data(), n * 4));
  int count32 = n;
  void* params[] = {&da, &db, &dc, &count32};
  CU_ASSERT_OK(cuLaunchKernel(f, n / 64, 1, 1, 64, 1, 1, 0, s, params, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  CU_ASSERT_OK(cuMemcpyDtoH(c.data(), dc, n * 4));
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], 3.5f) << i;
  CU_EXPECT_OK(cuMemFree(da));
  CU_EXPECT_OK(cuMemFree(db));
  CU_EXPECT_OK(cuMemFree(dc));
  CU_EXPECT_OK(cuModuleUnload(m));
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuGreenCtxDestroy(green));
  CU_EXPECT(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuGreenCtxDestroy(green)) << "destroyed twice (driver 580)";
}

TEST_F(api_context_Ext, LegacyAttachDetach) {
  auto attach = conf::Symbol<CUresult (*)(CUcontext*, unsigned)>("cuCtxAttach");
  auto detach = conf::Symbol<CUresult (*)(CUcontext)>("cuCtxDetach");
  if (!attach || !detach) CONF_NOT_SUPPORTED("the driver does not export cuCtxAttach/cuCtxDetach");
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUcontext attached = nullptr;
  CU_EXPECT_OK(attach(&attached, 0));
  EXPECT_EQ(attached, c);
  CU_EXPECT_OK(detach(c)) << "drops the attach reference";
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, DeepStack) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  for (int i = 0; i < 200; ++i) CU_ASSERT_OK(cuCtxPushCurrent(c)) << i;
  for (int i = 0; i < 200; ++i) {
    CUcontext p = nullptr;
    CU_ASSERT_OK(cuCtxPopCurrent(&p)) << i;
    ASSERT_EQ(p, c);
  }
  EXPECT_EQ(Current(), c);
  CU_EXPECT_OK(cuCtxDestroy(c));
  EXPECT_EQ(Current(), nullptr);
}

TEST_F(api_context_Ext, IdNoContext) {
  unsigned long long id;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetId(nullptr, &id));
}

TEST_F(api_context_Ext, PrimaryAndCreatedOnOneStack) {
  CUcontext primary, created;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_ASSERT_OK(cuCtxCreate(&created, nullptr, 0, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(primary));
  CUdeviceptr p;
  CU_EXPECT_OK(cuMemAlloc(&p, 64));
  CUcontext owner = nullptr;
  CU_EXPECT_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  EXPECT_EQ(owner, primary);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  EXPECT_EQ(Current(), created);
  CU_EXPECT_OK(cuCtxDestroy(created));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
}

TEST_F(api_context_Ext, CrossContextEventWait) {
  CUcontext a, b;
  CU_ASSERT_OK(cuCtxCreate(&a, nullptr, 0, dev));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CU_ASSERT_OK(cuCtxCreate(&b, nullptr, 0, dev));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_EXPECT_OK(cuStreamWaitEvent(s, e, 0)) << "a stream may wait for an event of another context";
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuCtxDestroy(b));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuCtxDestroy(a));
}

TEST_F(api_context_Ext, StreamGetCtxV2) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CUcontext got = nullptr;
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(1);
  CU_EXPECT_OK(cuStreamGetCtx_v2(s, &got, &green));
  EXPECT_EQ(got, c);
  EXPECT_EQ(green, nullptr);
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, SecondDevice) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, 1));
  CUdevice d = -1;
  CU_EXPECT_OK(cuCtxGetDevice(&d));
  EXPECT_EQ(d, 1);
  CU_EXPECT_OK(cuCtxDestroy(c));
}

TEST_F(api_context_Ext, ThreadsSharePrimaryContext) {
  constexpr int kThreads = 8;
  std::vector<CUcontext> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      CUcontext c = nullptr;
      if (cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS) return;
      cuCtxSetCurrent(c);
      CUdeviceptr p;
      if (cuMemAlloc(&p, 128) == CUDA_SUCCESS) cuMemFree(p);
      cuCtxGetCurrent(&seen[t]);
      cuCtxSetCurrent(nullptr);
      cuDevicePrimaryCtxRelease(0);
    });
  for (auto& t : threads) t.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  EXPECT_NE(seen[0], nullptr);
}

TEST_F(api_context_Ext, MigrateRoundRobin) {
  CUcontext c;
  CU_ASSERT_OK(cuCtxCreate(&c, nullptr, 0, dev));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 4));
  CU_ASSERT_OK(cuMemsetD32(p, 0, 1));
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  // Eight threads in turn push the context, add one through a copy, and pop it.
  std::atomic<int> errors{0};
  for (int round = 0; round < 8; ++round) {
    std::thread([&] {
      unsigned v = 0;
      if (cuCtxPushCurrent(c) != CUDA_SUCCESS || cuMemcpyDtoH(&v, p, 4) != CUDA_SUCCESS) {
        errors++;
        return;
      }
      ++v;
      if (cuMemcpyHtoD(p, &v, 4) != CUDA_SUCCESS || cuCtxPopCurrent(nullptr) != CUDA_SUCCESS) errors++;
    }).join();
  }
  EXPECT_EQ(errors.load(), 0);
  CU_ASSERT_OK(cuCtxPushCurrent(c));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p, 4));
  EXPECT_EQ(v, 8u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuCtxDestroy(c));
}

}  // namespace
