// api.launch: cuLaunchKernel with kernelParams and with `extra`, grid/block geometry, shared memory, validation.
#include <cstring>
#include <numeric>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

class api_launch : public ContextTest {
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

TEST_F(api_launch, VectorAddFloat) {
  const int n = 10000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 1000.0f - i;
  conf::DeviceBuffer da(n * 4), db(n * 4), dc(n * 4);
  CU_ASSERT_OK(cuMemcpyHtoD(da.ptr(), a.data(), n * 4));
  CU_ASSERT_OK(cuMemcpyHtoD(db.ptr(), b.data(), n * 4));
  CUdeviceptr pa = da.ptr(), pb = db.ptr(), pc = dc.ptr();
  int nn = n;
  void* params[] = {&pa, &pb, &pc, &nn};
  CU_ASSERT_OK(conf::Launch1D(Fn("vadd_f32"), (n + 127) / 128, 128, params));
  CU_ASSERT_OK(cuMemcpyDtoH(c.data(), pc, n * 4));
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_F(api_launch, HandWrittenPtx) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "hand_add_one.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "add_one"));
  std::vector<unsigned> v(777);
  std::iota(v.begin(), v.end(), 10u);
  conf::DeviceBuffer d(v.size() * 4);
  CU_ASSERT_OK(cuMemcpyHtoD(d.ptr(), v.data(), v.size() * 4));
  CUdeviceptr p = d.ptr();
  unsigned n = static_cast<unsigned>(v.size());
  void* params[] = {&p, &n};
  CU_ASSERT_OK(conf::Launch1D(f, 4, 256, params));
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, v.size() * 4));
  for (unsigned i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i + 11);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_launch, ParamsThroughExtraBuffer) {
  const int n = 100;
  conf::DeviceBuffer d(n * 4);
  struct {
    CUdeviceptr out;
    unsigned value;
    int n;
  } args{d.ptr(), 0xfeed, n};
  static_assert(sizeof(args) == 16);
  size_t size = sizeof(args);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  CU_ASSERT_OK(cuLaunchKernel(Fn("fill_u32"), 1, 1, 1, 128, 1, 1, 0, nullptr, nullptr, extra));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<unsigned> v(n);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), d.ptr(), n * 4));
  for (auto x : v) ASSERT_EQ(x, 0xfeedu);
}

TEST_F(api_launch, ExtraBufferTooSmall) {
  // NVIDIA's driver does not check the buffer size against the kernel's parameters (seen on an H200): the launch
  // succeeds and the missing parameter is undefined. The output buffer is large enough for any n of one block.
  conf::DeviceBuffer d(32 * 4);
  struct {
    CUdeviceptr out;
    unsigned value;
  } args{d.ptr(), 1};
  size_t size = sizeof(args);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  CU_EXPECT_OK(cuLaunchKernel(Fn("fill_u32"), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra));
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_launch, BothParamsAndExtra) {
  conf::DeviceBuffer d(64);
  CUdeviceptr p = d.ptr();
  unsigned value = 1;
  int n = 16;
  void* params[] = {&p, &value, &n};
  struct {
    CUdeviceptr out;
    unsigned value;
    int n;
  } args{p, 1, 16};
  size_t size = sizeof(args);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(Fn("fill_u32"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, extra));
}

struct Mixed {
  char c;
  double d;
  short s;
  int i;
};

TEST_F(api_launch, MixedParameterLayout) {
  conf::DeviceBuffer out(11 * 8);
  char c = -5;
  short s = -3000;
  int i = 123456789;
  long long ll = -(1ll << 40);
  float f = 1.5f;
  double d = -2.25;
  Mixed m{7, 3.125, -9, 42};
  unsigned char b = 200;
  CUdeviceptr po = out.ptr();
  void* params[] = {&c, &s, &i, &ll, &f, &d, &m, &b, &po};
  CU_ASSERT_OK(conf::Launch1D(Fn("mixed_params"), 1, 1, params));
  double r[11];
  CU_ASSERT_OK(cuMemcpyDtoH(r, po, sizeof(r)));
  double want[11] = {-5, -3000, 123456789, static_cast<double>(ll), 1.5, -2.25, 7, 3.125, -9, 42, 200};
  for (int k = 0; k < 11; ++k) EXPECT_EQ(r[k], want[k]) << "parameter " << k;
}

struct Geometry {
  unsigned gx, gy, gz, bx, by, bz;
};

void PrintTo(const Geometry& c, std::ostream* os) {
  *os << c.gx << "x" << c.gy << "x" << c.gz << "/" << c.bx << "x" << c.by << "x" << c.bz;
}

class api_launch_Geometry : public api_launch, public testing::WithParamInterface<Geometry> {};

TEST_P(api_launch_Geometry, EveryThreadSeesItsCoordinates) {
  Geometry g = GetParam();
  size_t threads = size_t{g.gx} * g.gy * g.gz * g.bx * g.by * g.bz;
  conf::DeviceBuffer out(threads * 6 * 4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_ASSERT_OK(
      cuLaunchKernel(Fn("write_coordinates"), g.gx, g.gy, g.gz, g.bx, g.by, g.bz, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<unsigned> v(threads * 6);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), p, v.size() * 4));
  size_t id = 0;
  for (unsigned bz = 0; bz < g.gz; ++bz)
    for (unsigned by = 0; by < g.gy; ++by)
      for (unsigned bx = 0; bx < g.gx; ++bx)
        for (unsigned tz = 0; tz < g.bz; ++tz)
          for (unsigned ty = 0; ty < g.by; ++ty)
            for (unsigned tx = 0; tx < g.bx; ++tx, ++id) {
              const unsigned* o = &v[id * 6];
              ASSERT_TRUE(o[0] == tx && o[1] == ty && o[2] == tz && o[3] == bx && o[4] == by && o[5] == bz)
                  << "thread " << id;
            }
}

INSTANTIATE_TEST_SUITE_P(All, api_launch_Geometry,
                         testing::Values(Geometry{1, 1, 1, 1, 1, 1}, Geometry{1, 1, 1, 32, 1, 1},
                                         Geometry{3, 1, 1, 100, 1, 1}, Geometry{2, 3, 4, 8, 4, 2},
                                         Geometry{1, 1, 1, 1024, 1, 1}, Geometry{5, 7, 1, 1, 1, 64},
                                         Geometry{1, 1, 1, 16, 16, 4}, Geometry{70, 1, 1, 33, 1, 1}),
                         [](const testing::TestParamInfo<Geometry>& i) {
                           const Geometry& g = i.param;
                           return "g" + std::to_string(g.gx) + "x" + std::to_string(g.gy) + "x" + std::to_string(g.gz) +
                                  "_b" + std::to_string(g.bx) + "x" + std::to_string(g.by) + "x" + std::to_string(g.bz);
                         });

TEST_F(api_launch, DynamicSharedMemory) {
  const int block = 256, grid = 4, n = block * grid;
  std::vector<int> in(n), out(n);
  std::iota(in.begin(), in.end(), 0);
  conf::DeviceBuffer din(n * 4), dout(n * 4);
  CU_ASSERT_OK(cuMemcpyHtoD(din.ptr(), in.data(), n * 4));
  CUdeviceptr pi = din.ptr(), po = dout.ptr();
  void* params[] = {&pi, &po};
  CU_ASSERT_OK(conf::Launch1D(Fn("reverse_dynamic_shared"), grid, block, params, block * 4));
  CU_ASSERT_OK(cuMemcpyDtoH(out.data(), po, n * 4));
  for (int b = 0; b < grid; ++b)
    for (int t = 0; t < block; ++t) ASSERT_EQ(out[b * block + t], b * block + block - 1 - t);
}

TEST_F(api_launch, StaticSharedMemory) {
  conf::DeviceBuffer out(8 * 4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_ASSERT_OK(conf::Launch1D(Fn("static_shared_16k"), 8, 128, params));
  int v[8];
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, sizeof(v)));
  for (int x : v) EXPECT_EQ(x, 4095 * 4096 / 2);
}

TEST_F(api_launch, OptInSharedMemory) {
  CUfunction f = Fn("reverse_dynamic_shared");
  int optin = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  int normal = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  if (optin <= normal) CONF_NOT_SUPPORTED("no opt-in shared memory");
  conf::DeviceBuffer din(32 * 4), dout(32 * 4);
  CUdeviceptr pi = din.ptr(), po = dout.ptr();
  void* params[] = {&pi, &po};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, normal + 1024, nullptr, params, nullptr))
      << "above 48 KiB needs the opt-in attribute";
  CU_ASSERT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  CU_EXPECT_OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, optin, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_launch, TooMuchSharedMemory) {
  CUfunction f = Fn("reverse_dynamic_shared");
  int optin = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  CUdeviceptr none = 0;
  void* params[] = {&none, &none};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, static_cast<unsigned>(optin) + 4096, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize()) << "a launch-time validation error does not stick";
}

TEST_F(api_launch, BlockTooLarge) {
  CUdeviceptr none = 0;
  void* params[] = {&none};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuLaunchKernel(Fn("write_coordinates"), 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuLaunchKernel(Fn("write_coordinates"), 1, 1, 1, 32, 32, 2, 0, nullptr, params, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuLaunchKernel(Fn("write_coordinates"), 1, 1, 1, 1, 1, 65, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_launch, ZeroDimensions) {
  CUfunction f = Fn("empty_kernel");
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 0, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 0, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
}

TEST_F(api_launch, GridTooLarge) {
  CUfunction f = Fn("empty_kernel");
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 65536, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 65536, 1, 1, 1, 0, nullptr, nullptr, nullptr));
}

TEST_F(api_launch, LargeGridX) {
  CU_EXPECT_OK(cuLaunchKernel(Fn("empty_kernel"), 1u << 20, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_launch, NullFunction) {
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
}

TEST_F(api_launch, NoContext) {
  CUfunction f = Fn("empty_kernel");
  conf::DrainContextStack();
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
}

TEST_F(api_launch, FunctionFromOtherContext) {
  CUfunction f = Fn("empty_kernel");
  CUcontext other;
  CU_ASSERT_OK(cuCtxCreate(&other, nullptr, 0, dev));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr))
      << "expectation from docs; GPU run will confirm";
  CU_EXPECT_OK(cuCtxDestroy(other));
}

TEST_F(api_launch, FunctionOfUnloadedModule) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "second.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "read_counter"));
  CU_ASSERT_OK(cuModuleUnload(m));
  CUdeviceptr none = 0;
  void* params[] = {&none};
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
}

TEST_F(api_launch, ManyLaunchesAccumulate) {
  CUfunction f = Fn("count_threads");
  for (int i = 0; i < 100; ++i) CU_ASSERT_OK(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  CUdeviceptr g;
  CU_ASSERT_OK(cuModuleGetGlobal(&g, nullptr, mod, "g_counter"));
  int v = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&v, g, 4));
  EXPECT_EQ(v, 100 * 128);
}

TEST_F(api_launch, ConstantMemoryRead) {
  conf::DeviceBuffer out(16 * 4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_ASSERT_OK(conf::Launch1D(Fn("read_constant_table"), 1, 16, params));
  int v[16];
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, sizeof(v)));
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[10], 144);
}

TEST_F(api_launch, LaunchKernelEx) {
  conf::DeviceBuffer d(256 * 4);
  CUdeviceptr p = d.ptr();
  unsigned value = 31337;
  int n = 256;
  void* params[] = {&p, &value, &n};
  CUlaunchConfig cfg{};
  cfg.gridDimX = 2;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  CU_ASSERT_OK(cuLaunchKernelEx(&cfg, Fn("fill_u32"), params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  unsigned v[256];
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, sizeof(v)));
  EXPECT_EQ(v[255], 31337u);
}

TEST_F(api_launch, LaunchKernelExWithPriorityAttribute) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attr.value.priority = 0;
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CU_EXPECT_OK(cuLaunchKernelEx(&cfg, Fn("empty_kernel"), nullptr, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
}

TEST_F(api_launch, LegacyParamSetAndLaunch) {
  CUfunction f = Fn("fill_u32");
  conf::DeviceBuffer d(64 * 4);
  CUdeviceptr p = d.ptr();
  CU_EXPECT_OK(cuParamSetv(f, 0, &p, sizeof(p)));
  CU_EXPECT_OK(cuParamSeti(f, 8, 606));
  CU_EXPECT_OK(cuParamSeti(f, 12, 64));
  CU_EXPECT_OK(cuParamSetSize(f, 16));
  CU_EXPECT_OK(cuFuncSetBlockShape(f, 64, 1, 1));
  CU_EXPECT_OK(cuLaunchGrid(f, 1, 1));
  CU_ASSERT_OK(cuCtxSynchronize());
  unsigned v[64];
  CU_ASSERT_OK(cuMemcpyDtoH(v, p, sizeof(v)));
  EXPECT_EQ(v[63], 606u);
}

TEST_F(api_launch, OccupancyMaxActiveBlocks) {
  int blocks = -1;
  CU_ASSERT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Fn("vadd_f32"), 128, 0));
  EXPECT_GE(blocks, 1);
  EXPECT_LE(blocks, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
}

TEST_F(api_launch, OccupancyMaxPotentialBlockSize) {
  int minGrid = 0, block = 0;
  CU_ASSERT_OK(cuOccupancyMaxPotentialBlockSize(&minGrid, &block, Fn("vadd_f32"), nullptr, 0, 0));
  EXPECT_GT(block, 0);
  EXPECT_LE(block, 1024);
  EXPECT_EQ(block % 32, 0);
  EXPECT_GE(minGrid, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
}

}  // namespace
