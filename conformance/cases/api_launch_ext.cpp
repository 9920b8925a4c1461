// api.launch (continued): cooperative and cluster launches, CUkernel handles from libraries, occupancy queries.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

class api_launch_Ext : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
  }
  CUfunction Fn(const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, mod, name), CUDA_SUCCESS) << name;
    return f;
  }
  CUmodule mod = nullptr;
};

TEST_F(api_launch_Ext, CooperativeLaunch) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cooperative launch");
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 256 * 4));
  unsigned value = 9;
  int n = 256;
  void* params[] = {&d, &value, &n};
  CU_EXPECT_OK(cuLaunchCooperativeKernel(Fn("fill_u32"), 2, 1, 1, 128, 1, 1, 0, nullptr, params));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, d + 255 * 4, 4));
  EXPECT_EQ(v, 9u);
  CU_EXPECT_OK(cuMemFree(d));
}

// Cooperative groups take the grid-sync workspace from %envreg1 (high) and %envreg2 (low) and trap in a grid sync
// where it is 0. Driver 580 on an H100 (tools/gpu-probe/envreg17.cpp): a fresh context's plain launches get 0, a
// cooperative launch gets a workspace, and every later launch of that context, plain ones too, gets the same one
// (CuPy's cupyx.jit launches kernels that call cg.sync(this_grid()) plainly; its test_cg_sync relies on this).
TEST_F(api_launch_Ext, PlainLaunchAfterCooperativeGetsGridWorkspace) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cooperative launch");
  static const char kPtx[] = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .entry envregs(.param .u64 out)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %envreg1;
	mov.u32 %r2, %envreg2;
	st.global.v2.u32 [%rd1], {%r1, %r2};
	ret;
}
)";
  CUcontext outer = nullptr, fresh = nullptr;
  CU_ASSERT_OK(cuCtxGetCurrent(&outer));
  CU_ASSERT_OK(cuCtxCreate(&fresh, nullptr, 0, dev));
  CUmodule m = nullptr;
  CUfunction f = nullptr;
  CUdeviceptr d = 0;
  unsigned seen[3][2] = {};
  if (cuModuleLoadData(&m, kPtx) == CUDA_SUCCESS && cuModuleGetFunction(&f, m, "envregs") == CUDA_SUCCESS &&
      cuMemAlloc(&d, 8) == CUDA_SUCCESS) {
    for (int i = 0; i < 3; ++i) {
      void* params[] = {&d};
      CU_EXPECT_OK(cuMemsetD8(d, 0xff, 8));
      if (i == 1)
        CU_EXPECT_OK(cuLaunchCooperativeKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, params));
      else
        CU_EXPECT_OK(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
      CU_EXPECT_OK(cuCtxSynchronize());
      CU_EXPECT_OK(cuMemcpyDtoH(seen[i], d, 8));
    }
  } else {
    ADD_FAILURE() << "module, function or memory";
  }
  CU_EXPECT_OK(cuCtxDestroy(fresh));
  CU_EXPECT_OK(cuCtxSetCurrent(outer));
  EXPECT_EQ(seen[0][0], 0u);
  EXPECT_EQ(seen[0][1], 0u);
  EXPECT_NE((uint64_t(seen[1][0]) << 32) | seen[1][1], 0u);
  EXPECT_EQ(seen[2][0], seen[1][0]);
  EXPECT_EQ(seen[2][1], seen[1][1]);
}

TEST_F(api_launch_Ext, CooperativeLaunchTooLarge) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cooperative launch");
  CUfunction f = Fn("empty_kernel");
  int perSm = 0;
  CU_ASSERT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, 1024, 0));
  unsigned tooMany = static_cast<unsigned>(perSm * conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) + 1);
  CU_EXPECT(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            cuLaunchCooperativeKernel(f, tooMany, 1, 1, 1024, 1, 1, 0, nullptr, nullptr));
}

// The multi-device form, deprecated but exported by driver 580, with a list of one device. Error answers measured
// on an H200 (driver 580).
TEST_F(api_launch_Ext, CooperativeLaunchMultiDevice) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH) != 1)
    CONF_NOT_SUPPORTED("no multi-device cooperative launch");
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 256 * 4));
  CU_ASSERT_OK(cuMemsetD32(d, 0, 256));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned value = 5;
  int n = 256;
  void* params[] = {&d, &value, &n};
  CUDA_LAUNCH_PARAMS lp{};
  lp.function = Fn("fill_u32");
  lp.gridDimX = 2;
  lp.gridDimY = lp.gridDimZ = 1;
  lp.blockDimX = 128;
  lp.blockDimY = lp.blockDimZ = 1;
  lp.hStream = s;
  lp.kernelParams = params;
  CU_EXPECT_OK(cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, d + 255 * 4, 4));
  EXPECT_EQ(v, 5u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchCooperativeKernelMultiDevice(&lp, 0, 0)) << "no devices";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchCooperativeKernelMultiDevice(nullptr, 1, 0)) << "no list";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0x100)) << "unknown flag";
  lp.hStream = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0))
      << "the NULL stream names no device";
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFree(d));
}

// Two devices: without flags, each launch waits for the work already queued in the other listed stream, and
// work queued afterwards in either stream waits for both kernels.
TEST_F(api_launch_Ext, CooperativeLaunchMultiDeviceOrdersBothStreams) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH) != 1)
    CONF_NOT_SUPPORTED("no multi-device cooperative launch");
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, 1));
  CUmodule otherMod;
  CU_ASSERT_OK(conf::LoadModule(&otherMod, "vector.ptx"));
  CUfunction otherFill;
  CU_ASSERT_OK(cuModuleGetFunction(&otherFill, otherMod, "fill_u32"));
  CUdeviceptr d1;
  CU_ASSERT_OK(cuMemAlloc(&d1, 256 * 4));
  CUstream s1;
  CU_ASSERT_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuCtxSetCurrent(ctx));
  CUdeviceptr d0;
  CU_ASSERT_OK(cuMemAlloc(&d0, 256 * 4));
  CUstream s0;
  CU_ASSERT_OK(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
  static std::atomic<int> order{0};
  static std::atomic<int> slowDoneAt{0}, afterAt{0};
  order = 0;
  // Queued on device 0's stream before the launch: slow.
  CU_ASSERT_OK(cuLaunchHostFunc(
      s0,
      [](void*) {
        usleep(200000);
        slowDoneAt = ++order;
      },
      nullptr));
  unsigned v0 = 1, v1 = 2;
  int n = 256;
  void* p0[] = {&d0, &v0, &n};
  void* p1[] = {&d1, &v1, &n};
  CUDA_LAUNCH_PARAMS lp[2]{};
  for (auto& l : lp) {
    l.gridDimX = 2;
    l.gridDimY = l.gridDimZ = 1;
    l.blockDimX = 128;
    l.blockDimY = l.blockDimZ = 1;
  }
  lp[0].function = Fn("fill_u32");
  lp[0].hStream = s0;
  lp[0].kernelParams = p0;
  lp[1].function = otherFill;
  lp[1].hStream = s1;
  lp[1].kernelParams = p1;
  CU_ASSERT_OK(cuLaunchCooperativeKernelMultiDevice(lp, 2, 0));
  // Queued on device 1's stream after the launch: runs after both kernels, so after the slow function.
  CU_ASSERT_OK(cuLaunchHostFunc(
      s1, [](void*) { afterAt = ++order; }, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(s1));
  CU_EXPECT_OK(cuStreamSynchronize(s0));
  EXPECT_GT(afterAt.load(), slowDoneAt.load()) << "device 1's later work waited for device 0's earlier work";
  unsigned got0 = 0, got1 = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&got0, d0 + 255 * 4, 4));
  CU_EXPECT_OK(cuMemcpyDtoH(&got1, d1 + 255 * 4, 4));
  EXPECT_EQ(got0, 1u);
  EXPECT_EQ(got1, 2u);
  lp[1].hStream = s0;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuLaunchCooperativeKernelMultiDevice(lp, 2, 0))
      << "two launches on device 0 (expectation from the documentation; no two-GPU machine measured it)";
  CU_EXPECT_OK(cuStreamDestroy(s0));
  CU_EXPECT_OK(cuMemFree(d0));
  CU_EXPECT_OK(cuCtxDestroy(other));
}

// The legacy texture-reference parameter and a library's unified (host-callable) functions: a PTX module has
// neither. Answers measured on an H200 (driver 580).
TEST_F(api_launch_Ext, NoTextureReferenceParameterNorUnifiedFunction) {
  CUresult texref = cuParamSetTexRef(Fn("fill_u32"), CU_PARAM_TR_DEFAULT, nullptr);
  EXPECT_NE(texref, CUDA_SUCCESS) << conf::Describe(texref);
  auto image = conf::GetImage("vector.ptx");
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, image.data, nullptr, nullptr, 0, nullptr, nullptr, 0));
  void* fn = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLibraryGetUnifiedFunction(&fn, lib, "vadd_f32")) << "a kernel's name";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLibraryGetUnifiedFunction(nullptr, lib, "vadd_f32"));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLibraryGetUnifiedFunction(&fn, lib, nullptr));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

TEST_F(api_launch_Ext, ClusterLaunchAttribute) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cluster launch");
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 4 * 64 * 6 * 4));
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = 4;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 64;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  void* params[] = {&d};
  CU_EXPECT_OK(cuLaunchKernelEx(&cfg, Fn("write_coordinates"), params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  std::vector<unsigned> v(4 * 64 * 6);
  CU_EXPECT_OK(cuMemcpyDtoH(v.data(), d, v.size() * 4));
  EXPECT_EQ(v[(3 * 64 + 63) * 6 + 3], 3u) << "block 3 ran";
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_launch_Ext, ClusterNotDividingGrid) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cluster launch");
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = 3;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernelEx(&cfg, Fn("empty_kernel"), nullptr, nullptr));
}

TEST_F(api_launch_Ext, LaunchExNullConfig) {
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernelEx(nullptr, Fn("empty_kernel"), nullptr, nullptr));
}

TEST_F(api_launch_Ext, LaunchExOnStream) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 32 * 4));
  unsigned value = 5;
  int n = 32;
  void* params[] = {&d, &value, &n};
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = s;
  CU_EXPECT_OK(cuLaunchKernelEx(&cfg, Fn("fill_u32"), params, nullptr));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, d + 31 * 4, 4));
  EXPECT_EQ(v, 5u);
  CU_EXPECT_OK(cuMemFree(d));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_launch_Ext, OccupancyWithFlags) {
  int blocks = -1;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, Fn("vadd_f32"), 256, 0,
                                                                    CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
  EXPECT_GE(blocks, 1);
  int minGrid = 0, block = 0;
  CU_EXPECT_OK(cuOccupancyMaxPotentialBlockSizeWithFlags(&minGrid, &block, Fn("vadd_f32"), nullptr, 0, 256,
                                                         CU_OCCUPANCY_DEFAULT));
  EXPECT_GT(block, 0);
  EXPECT_LE(block, 256) << "respects blockSizeLimit";
}

TEST_F(api_launch_Ext, OccupancyAvailableDynamicShared) {
  size_t bytes = 0;
  CU_EXPECT_OK(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, Fn("reverse_dynamic_shared"), 1, 128));
  EXPECT_GE(bytes, size_t{48} << 10);
}

TEST_F(api_launch_Ext, OccupancyStaticSharedLimitsBlocks) {
  int blocks = 0;
  CU_ASSERT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Fn("static_shared_16k"), 32, 0));
  int perSm = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  EXPECT_LE(blocks, perSm / 16384) << "16 KiB of shared memory per block";
  EXPECT_GE(blocks, 1);
}

TEST_F(api_launch_Ext, OccupancyBadBlockSize) {
  int blocks = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Fn("vadd_f32"), 0, 0))
      << "expectation from docs; GPU run will confirm";
}

TEST_F(api_launch_Ext, FuncSetSharedMemConfig) {
  CU_EXPECT_OK(cuFuncSetSharedMemConfig(Fn("vadd_f32"), CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));
}

// ---- libraries and CUkernel ----------------------------------------------------------------------------------------

class api_launch_Library : public api_launch_Ext {
 protected:
  void SetUp() override {
    api_launch_Ext::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  }
  void TearDown() override {
    if (lib) cuLibraryUnload(lib);
    api_launch_Ext::TearDown();
  }
  CUlibrary lib = nullptr;
};

TEST_F(api_launch_Library, EnumerateKernelsHaveNames) {
  unsigned count = 0;
  CU_ASSERT_OK(cuLibraryGetKernelCount(&count, lib));
  std::vector<CUkernel> kernels(count);
  CU_ASSERT_OK(cuLibraryEnumerateKernels(kernels.data(), count, lib));
  std::set<std::string> names;
  for (auto k : kernels) {
    const char* name = nullptr;
    CU_EXPECT_OK(cuKernelGetName(&name, k));
    if (name) names.insert(name);
  }
  EXPECT_TRUE(names.count("vadd_f32"));
  EXPECT_TRUE(names.count("mixed_params"));
  EXPECT_EQ(names.size(), count);
}

TEST_F(api_launch_Library, KernelGetLibrary) {
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "fill_u32"));
  CUlibrary owner = nullptr;
  CU_EXPECT_OK(cuKernelGetLibrary(&owner, k));
  EXPECT_EQ(owner, lib);
}

TEST_F(api_launch_Library, KernelAttribute) {
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "static_shared_16k"));
  int shared = 0;
  CU_EXPECT_OK(cuKernelGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k, dev));
  EXPECT_EQ(shared, 16384);
}

TEST_F(api_launch_Library, KernelSetAttribute) {
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "reverse_dynamic_shared"));
  CU_EXPECT_OK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10, k, dev));
  int v = 0;
  CU_EXPECT_OK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, dev));
  EXPECT_EQ(v, 64 << 10);
}

TEST_F(api_launch_Library, KernelParamInfo) {
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "fill_u32"));
  size_t offset = 0, size = 0;
  CU_EXPECT_OK(cuKernelGetParamInfo(k, 1, &offset, &size));
  EXPECT_EQ(offset, 8u);
  EXPECT_EQ(size, 4u);
}

TEST_F(api_launch_Library, LibraryGetModule) {
  CUmodule m = nullptr;
  CU_EXPECT_OK(cuLibraryGetModule(&m, lib));
  EXPECT_NE(m, nullptr);
  CUfunction f;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "vadd_i32"));
}

TEST_F(api_launch_Library, LibraryUsableInTwoContexts) {
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "fill_u32"));
  CUfunction f1, f2;
  CU_ASSERT_OK(cuKernelGetFunction(&f1, k));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CU_ASSERT_OK(cuKernelGetFunction(&f2, k));
  EXPECT_NE(f1, f2) << "each context gets its own function";
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, 64 * 4));
  unsigned value = 3;
  int n = 64;
  void* params[] = {&d, &value, &n};
  CU_EXPECT_OK(conf::Launch1D(reinterpret_cast<CUfunction>(k), 1, 64, params)) << "the kernel launches in this context";
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, d + 63 * 4, 4));
  EXPECT_EQ(v, 3u);
  CU_EXPECT_OK(cuMemFree(d));
  CU_EXPECT_OK(cuCtxDestroy(other));
}

TEST_F(api_launch_Library, LibraryGlobalPerContext) {
  CUdeviceptr a = 0, b = 0;
  CU_ASSERT_OK(cuLibraryGetGlobal(&a, nullptr, lib, "g_counter"));
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CU_ASSERT_OK(cuLibraryGetGlobal(&b, nullptr, lib, "g_counter"));
  EXPECT_NE(a, b) << "module variables have storage per context";
  CU_EXPECT_OK(cuCtxDestroy(other));
}

TEST_F(api_launch_Library, LoadFromFile) {
  char path[] = "/tmp/cuemu-conf-lib-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  auto img = conf::GetImage("vector.fatbin");
  ASSERT_EQ(write(fd, img.data, img.size), static_cast<ssize_t>(img.size));
  close(fd);
  CUlibrary l = nullptr;
  CUresult r = cuLibraryLoadFromFile(&l, path, nullptr, nullptr, 0, nullptr, nullptr, 0);
  unlink(path);
  CU_ASSERT_OK(r);
  CUkernel k;
  CU_EXPECT_OK(cuLibraryGetKernel(&k, l, "vadd_f32"));
  CU_EXPECT_OK(cuLibraryUnload(l));
}

TEST_F(api_launch_Library, UnloadNull) { CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(nullptr)); }

// Driver 580 accepts a library whose image merely starts like an ELF file (lazy and eager loading alike); the
// error comes when the library is used. A module from the same bytes is refused at once.
TEST_F(api_launch_Library, BadImage) {
  static const char garbage[] =
      "\x7f"
      "ELFgarbage";
  CUlibrary l = nullptr;
  CU_ASSERT_OK(cuLibraryLoadData(&l, garbage, nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned count = 99;
  CU_EXPECT_OK(cuLibraryGetKernelCount(&count, l));
  EXPECT_EQ(count, 0u);
  CUkernel k;
  CU_EXPECT(CUDA_ERROR_INVALID_IMAGE, cuLibraryGetKernel(&k, l, "vadd_f32"));
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_IMAGE, cuLibraryGetModule(&m, l));
  CU_EXPECT_OK(cuLibraryUnload(l));
  CU_EXPECT(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, garbage));
}

}  // namespace
