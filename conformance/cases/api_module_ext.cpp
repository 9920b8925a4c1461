// api.module (continued): JIT options, forward-declared device functions, __managed__ variables, loading mode,
// linker inputs; api.launch: cluster occupancy and compile-time cluster shapes, occupancy edge cases.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness.h"

namespace {

using conf::ContextTest;

const char* kTinyPtx =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry tiny(.param .u64 out)\n{\n"
    "\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n"
    "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 7;\n"
    "\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";

// ---- JIT options ---------------------------------------------------------------------------------------------------

using api_module_Jit = ContextTest;

// Every option a PTX load can be given with a meaningful value is accepted together.
TEST_F(api_module_Jit, ClassicOptionsTogether) {
  char info[2048] = {}, error[2048] = {};
  CUjit_option opts[] = {CU_JIT_MAX_REGISTERS,
                         CU_JIT_THREADS_PER_BLOCK,
                         CU_JIT_WALL_TIME,
                         CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_OPTIMIZATION_LEVEL,
                         CU_JIT_TARGET_FROM_CUCONTEXT,
                         CU_JIT_FALLBACK_STRATEGY,
                         CU_JIT_GENERATE_DEBUG_INFO,
                         CU_JIT_LOG_VERBOSE,
                         CU_JIT_GENERATE_LINE_INFO,
                         CU_JIT_CACHE_MODE};
  void* vals[] = {reinterpret_cast<void*>(64),
                  reinterpret_cast<void*>(128),
                  nullptr,
                  info,
                  reinterpret_cast<void*>(sizeof info),
                  error,
                  reinterpret_cast<void*>(sizeof error),
                  reinterpret_cast<void*>(3),
                  nullptr,
                  reinterpret_cast<void*>(CU_PREFER_PTX),
                  reinterpret_cast<void*>(0),
                  reinterpret_cast<void*>(1),
                  reinterpret_cast<void*>(1),
                  reinterpret_cast<void*>(CU_JIT_CACHE_OPTION_CG)};
  constexpr unsigned n = sizeof opts / sizeof opts[0];
  static_assert(n == sizeof vals / sizeof vals[0]);
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, kTinyPtx, n, opts, vals));
  float wall = -1.0f;
  std::memcpy(&wall, &vals[2], sizeof wall);
  EXPECT_GE(wall, 0.0f) << "CU_JIT_WALL_TIME: milliseconds as a float in the value slot";
  EXPECT_EQ(error[0], '\0') << error;
  CUfunction f;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "tiny"));
  CU_EXPECT_OK(cuModuleUnload(m));
}

// CU_JIT_LOG_VERBOSE fills the info log of a successful load.
TEST_F(api_module_Jit, VerboseInfoLog) {
  char info[4096] = {};
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* vals[] = {info, reinterpret_cast<void*>(sizeof info), reinterpret_cast<void*>(1)};
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, kTinyPtx, 3, opts, vals));
  EXPECT_GT(std::strlen(info), 0u) << "a verbose compilation reports what it did";
  CU_EXPECT_OK(cuModuleUnload(m));
}

// The error log is cut to its buffer and stays NUL-terminated.
TEST_F(api_module_Jit, ErrorLogTruncatedToBuffer) {
  char error[8];
  std::memset(error, 'x', sizeof error);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, reinterpret_cast<void*>(sizeof error)};
  const char* bad = ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\tbogus.op %r1;\n}\n";
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_PTX, cuModuleLoadDataEx(&m, bad, 2, opts, vals));
  EXPECT_NE(std::memchr(error, '\0', sizeof error), nullptr) << "the log is NUL-terminated within its buffer";
}

TEST_F(api_module_Jit, OptionsWithoutValues) {
  CUjit_option opts[] = {CU_JIT_LOG_VERBOSE};
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleLoadDataEx(&m, kTinyPtx, 1, opts, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleLoadDataEx(&m, kTinyPtx, 1, nullptr, nullptr));
}

// A register limit given to the JIT bounds what the function reports.
TEST_F(api_module_Jit, MaxRegistersBoundsNumRegs) {
  CUjit_option opts[] = {CU_JIT_MAX_REGISTERS};
  void* vals[] = {reinterpret_cast<void*>(32)};
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, conf::GetImage("vector.ptx").ptr(), 1, opts, vals));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "mixed_params"));
  int regs = -1;
  CU_EXPECT_OK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  EXPECT_GE(regs, 0);
  EXPECT_LE(regs, 32);
  CU_EXPECT_OK(cuModuleUnload(m));
}

// A block-size limit given to the JIT bounds the function's block size; larger launches fail.
TEST_F(api_module_Jit, MaxThreadsPerBlockBoundsTheFunction) {
  CUjit_option opts[] = {CU_JIT_MAX_THREADS_PER_BLOCK};
  void* vals[] = {reinterpret_cast<void*>(128)};
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, kTinyPtx, 1, opts, vals));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "tiny"));
  int maxThreads = -1;
  CU_EXPECT_OK(cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
  EXPECT_GT(maxThreads, 0);
  EXPECT_LE(maxThreads, 128);
  conf::DeviceBuffer out(4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_EXPECT_OK(conf::Launch1D(f, 1, 128, params));
  EXPECT_NE(CUDA_SUCCESS, cuLaunchKernel(f, 1, 1, 1, 1024, 1, 1, 0, nullptr, params, nullptr))
      << "a block larger than the function allows";
  cuCtxSynchronize();
  CU_EXPECT_OK(cuModuleUnload(m));
}

// ---- PTX structure -------------------------------------------------------------------------------------------------

using api_module_Ptx = ContextTest;

// A call through a declaration that precedes the definition (as nvcc writes recursive code and linked modules).
TEST_F(api_module_Ptx, CallBeforeDefinition) {
  const char* ptx =
      ".version 7.0\n.target sm_52\n.address_size 64\n"
      ".visible .func (.param .b32 r) twice(.param .b32 x);\n"
      ".visible .entry call_twice(.param .u64 out)\n{\n"
      "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n"
      "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 21;\n"
      "\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n"
      "\tcall.uni (r), twice, (a);\n\tld.param.b32 %r2, [r];\n\t}\n"
      "\tst.global.u32 [%rd2], %r2;\n\tret;\n}\n"
      ".visible .func (.param .b32 r) twice(.param .b32 x)\n{\n"
      "\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [x];\n\tadd.s32 %r2, %r1, %r1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n";
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, ptx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "call_twice"));
  conf::DeviceBuffer out(4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_ASSERT_OK(conf::Launch1D(f, 1, 1, params));
  int v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, p, 4));
  EXPECT_EQ(v, 42);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Ptx, PtxVersionTooNewThroughLibrary) {
  const char* bad = ".version 99.9\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  CUlibrary lib = nullptr;
  // Driver 580 (measured on an H200) loads the library and fails each use of it.
  CU_ASSERT_OK(cuLibraryLoadData(&lib, bad, nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned count = 99;
  CU_EXPECT_OK(cuLibraryGetKernelCount(&count, lib));
  EXPECT_EQ(count, 0u) << "no kernel could be compiled";
  CUkernel k = nullptr;
  CU_EXPECT(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, cuLibraryGetKernel(&k, lib, "k"));
  CUmodule m = nullptr;
  CU_EXPECT(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, cuLibraryGetModule(&m, lib));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

// ---- __managed__ variables -----------------------------------------------------------------------------------------

using api_module_Managed = ContextTest;

const char* kManagedPtx =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .global .attribute(.managed) .align 4 .u32 m_value;\n"
    ".visible .global .align 4 .u32 d_value;\n"
    ".visible .entry store_managed(.param .u32 v)\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
    "\tld.param.u32 %r1, [v];\n\tmov.u64 %rd1, m_value;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

TEST_F(api_module_Managed, LibraryGetManaged) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, kManagedPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_EXPECT_OK(cuLibraryGetManaged(&p, &size, lib, "m_value"));
  EXPECT_NE(p, 0u);
  EXPECT_EQ(size, 4u);
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&p, &size, lib, "d_value")) << "a plain __device__ variable";
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&p, &size, lib, "no_such_variable"));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLibraryGetManaged(&p, &size, lib, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetManaged(&p, &size, nullptr, "m_value"));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

// A kernel's store to a managed variable is visible to the host through the pointer, after synchronisation.
TEST_F(api_module_Managed, KernelStoreSeenByHost) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, kManagedPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_ASSERT_OK(cuLibraryGetManaged(&p, &size, lib, "m_value"));
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "store_managed"));
  unsigned value = 0x5eed;
  void* params[] = {&value};
  CU_ASSERT_OK(conf::Launch1D(reinterpret_cast<CUfunction>(k), 1, 1, params));
  unsigned seen = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&seen, p, 4));
  EXPECT_EQ(seen, value);
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

// ---- loading mode --------------------------------------------------------------------------------------------------

CONF_FRESH_BODY(LoadingModeFromEnvironment) {
  setenv("CUDA_MODULE_LOADING", arg.c_str(), 1);
  if (cuInit(0) != CUDA_SUCCESS) return -1;
  CUmoduleLoadingMode mode;
  if (cuModuleGetLoadingMode(&mode) != CUDA_SUCCESS) return -2;
  return static_cast<int>(mode);
}

TEST(api_module_LoadingMode, HonoursEnvironment) {
  auto eager = conf::RunFresh("LoadingModeFromEnvironment", "EAGER");
  ASSERT_TRUE(eager.ran) << eager.output;
  EXPECT_EQ(eager.result, static_cast<int>(CU_MODULE_EAGER_LOADING));
  auto lazy = conf::RunFresh("LoadingModeFromEnvironment", "LAZY");
  ASSERT_TRUE(lazy.ran) << lazy.output;
  EXPECT_EQ(lazy.result, static_cast<int>(CU_MODULE_LAZY_LOADING));
}

TEST(api_module_LoadingMode, NullOutput) {
  CU_ASSERT_OK(cuInit(0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleGetLoadingMode(nullptr));
}

// ---- linker inputs -------------------------------------------------------------------------------------------------

using api_module_LinkInputs = ContextTest;

TEST_F(api_module_LinkInputs, FatbinaryHoldingPtx) {
  auto image = conf::GetImage("vector.fatbin");
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  CU_ASSERT_OK(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, const_cast<unsigned char*>(image.data), image.size,
                             "vector.fatbin", 0, nullptr, nullptr));
  void* cubin = nullptr;
  size_t size = 0;
  CU_ASSERT_OK(cuLinkComplete(link, &cubin, &size));
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, cubin));
  CU_EXPECT_OK(cuLinkDestroy(link));
  CUfunction f;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "vadd_f32"));
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_LinkInputs, DuplicateDefinition) {
  const char* a =
      ".version 7.0\n.target sm_52\n.address_size 64\n"
      ".visible .func (.param .b32 r) same(.param .b32 x)\n{\n\t.reg .b32 %r<2>;\n"
      "\tld.param.b32 %r1, [x];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n"
      ".visible .entry use_same()\n{\n\tret;\n}\n";
  const char* b =
      ".version 7.0\n.target sm_52\n.address_size 64\n"
      ".visible .func (.param .b32 r) same(.param .b32 x)\n{\n\t.reg .b32 %r<2>;\n"
      "\tld.param.b32 %r1, [x];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n";
  char error[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, reinterpret_cast<void*>(sizeof error)};
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(2, opts, vals, &link));
  CU_ASSERT_OK(
      cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(a), std::strlen(a) + 1, "a.ptx", 0, nullptr, nullptr));
  CUresult added =
      cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(b), std::strlen(b) + 1, "b.ptx", 0, nullptr, nullptr);
  void* cubin = nullptr;
  size_t size = 0;
  CUresult completed = added == CUDA_SUCCESS ? cuLinkComplete(link, &cubin, &size) : added;
  EXPECT_NE(CUDA_SUCCESS, completed) << "two strong definitions of one function";
  EXPECT_NE(std::string(error).find("same"), std::string::npos) << "the log names the symbol: " << error;
  CU_EXPECT_OK(cuLinkDestroy(link));
}

TEST_F(api_module_LinkInputs, NullData) {
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLinkAddData(link, CU_JIT_INPUT_PTX, nullptr, 10, "x", 0, nullptr, nullptr));
  CU_EXPECT_OK(cuLinkDestroy(link));
}

// ---- clusters ------------------------------------------------------------------------------------------------------

class api_launch_Cluster : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) GTEST_SKIP() << "not-supported: no clusters";
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
    CU_ASSERT_OK(cuModuleGetFunction(&vadd, mod, "vadd_f32"));
    cfg.gridDimX = 16;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 128;
    cfg.blockDimY = cfg.blockDimZ = 1;
  }
  void TearDown() override {
    if (mod) cuModuleUnload(mod);
    ContextTest::TearDown();
  }
  CUmodule mod = nullptr;
  CUfunction vadd = nullptr;
  CUlaunchConfig cfg{};
};

TEST_F(api_launch_Cluster, PotentialSizeIsPortableByDefault) {
  int size = 0;
  CU_ASSERT_OK(cuOccupancyMaxPotentialClusterSize(&size, vadd, &cfg));
  EXPECT_GE(size, 1);
  EXPECT_LE(size, 8) << "8 is the portable cluster size limit";
  CU_ASSERT_OK(cuFuncSetAttribute(vadd, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
  int nonPortable = 0;
  CU_EXPECT_OK(cuOccupancyMaxPotentialClusterSize(&nonPortable, vadd, &cfg));
  EXPECT_GE(nonPortable, size);
  EXPECT_LE(nonPortable, 16);
}

// Measured on an H200 (driver 580): a kernel without a cluster shape, launched without one, fits no clusters.
TEST_F(api_launch_Cluster, ActiveClustersWithoutAClusterSizeAreZero) {
  int clusters = -1;
  CU_EXPECT_OK(cuOccupancyMaxActiveClusters(&clusters, vadd, &cfg));
  EXPECT_EQ(clusters, 0) << "neither the function nor the configuration gives a cluster size";
}

TEST_F(api_launch_Cluster, ActiveClustersBoundedByTheDevice) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 4;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CU_ASSERT_OK(cuOccupancyMaxActiveClusters(&clusters, vadd, &cfg));
  int sms = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  int blocksPerSm = 0;
  CU_ASSERT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, vadd, 128, 0));
  EXPECT_GE(clusters, 1);
  EXPECT_LE(clusters, sms * blocksPerSm / 4);
}

TEST_F(api_launch_Cluster, NullArguments) {
  int v = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(&v, vadd, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(nullptr, vadd, &cfg));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&v, vadd, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(nullptr, vadd, &cfg));
}

// A kernel compiled with a cluster shape (.reqnctapercluster, __cluster_dims__) reports it; it cannot be changed,
// and launches use it. Measured on an H200 (driver 580).
TEST_F(api_launch_Cluster, CompiledClusterShape) {
  const char* ptx =
      ".version 7.8\n.target sm_90\n.address_size 64\n"
      ".visible .entry clustered() .reqnctapercluster 2, 1, 1\n{\n\tret;\n}\n";
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, ptx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "clustered"));
  int w = 0, h = 0, d = 0;
  CU_EXPECT_OK(cuFuncGetAttribute(&w, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f));
  CU_EXPECT_OK(cuFuncGetAttribute(&h, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, f));
  CU_EXPECT_OK(cuFuncGetAttribute(&d, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, f));
  EXPECT_EQ(w, 2);
  EXPECT_EQ(h, 1);
  EXPECT_EQ(d, 1);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
  CU_EXPECT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2)) << "the value it already has";
  int size = 0;
  CU_EXPECT_OK(cuOccupancyMaxPotentialClusterSize(&size, f, &cfg));
  EXPECT_EQ(size, 8) << "the compiled shape does not limit the potential size";
  int clusters = 0;
  CU_EXPECT_OK(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
  EXPECT_GT(clusters, 0) << "the compiled shape gives the cluster size";
  CU_EXPECT_OK(cuLaunchKernelEx(&cfg, f, nullptr, nullptr)) << "launched with its compiled shape";
  CU_EXPECT_OK(cuCtxSynchronize());
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 4;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  CUlaunchConfig conflicting = cfg;
  conflicting.attrs = &attr;
  conflicting.numAttrs = 1;
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernelEx(&conflicting, f, nullptr, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuOccupancyMaxActiveClusters(&clusters, f, &conflicting));
  CU_EXPECT_OK(cuCtxSynchronize());
  CU_EXPECT_OK(cuModuleUnload(m));
}

// ---- occupancy edge cases ------------------------------------------------------------------------------------------

using api_launch_Occupancy = ContextTest;

TEST_F(api_launch_Occupancy, BlockLargerThanTheFunctionFitsNothing) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "vadd_f32"));
  int blocks = -1;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 2048, 0));
  EXPECT_EQ(blocks, 0);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, -32, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, f, 128, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 128, 0));
  CU_EXPECT_OK(cuModuleUnload(m));
}

// The occupancy calculator as an H200 answers it (tools/gpu-probe/occupancy29.py), for the question CUTLASS's CuTe
// DSL asks before it sizes a persistent grid: a one-thread kernel (.reqntid 1, 1, 1), blocks of 128 threads, all the
// shared memory a block may have.
const char* kOneThreadPtx =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry one_thread()\n.reqntid 1, 1, 1\n{\n\tret;\n}\n";

TEST_F(api_launch_Occupancy, RequiredBlockShapeDoesNotLimitOccupancy) {
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kOneThreadPtx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "one_thread"));
  int blocks = -1;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
  const int threads = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  const int most = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  EXPECT_EQ(blocks, std::min(threads / 128, most)) << "the kernel's .reqntid does not enter";
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_launch_Occupancy, SharedMemoryBeyondTheFunctionLimitFitsNothing) {
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kOneThreadPtx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "one_thread"));
  const int optin = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  int blocks = -1;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 1, size_t(optin)));
  EXPECT_EQ(blocks, 0) << "more than the default 48 KiB without the opt-in";
  CU_EXPECT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 1, size_t(optin)));
  EXPECT_EQ(blocks, 1);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_launch_Occupancy, ClustersTakeAtMostEightBlocksPerSm) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) GTEST_SKIP() << "not-supported: no clusters";
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kOneThreadPtx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "one_thread"));
  const int optin = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  CU_ASSERT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  const int perSm = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  auto clusters = [&](unsigned size, size_t shared) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = size;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = size;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 128;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = unsigned(shared);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = -1;
    CU_EXPECT_OK(cuOccupancyMaxActiveClusters(&n, f, &cfg));
    return n;
  };
  const size_t eightPerSm = size_t(perSm / 8 - 1024), sixteenPerSm = size_t(perSm / 16 - 1024);
  int blocks = 0;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, sixteenPerSm));
  EXPECT_EQ(blocks, 16);
  for (unsigned size : {1u, 2u, 4u}) {
    EXPECT_EQ(clusters(size, sixteenPerSm), clusters(size, eightPerSm)) << "clusters of " << size;
    EXPECT_GT(clusters(size, size_t(optin)), 0) << "one block per SM, clusters of " << size;
  }
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_launch_Occupancy, MoreDynamicSharedFitsFewerBlocks) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "reverse_dynamic_shared"));
  int few = 0, many = 0;
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&many, f, 64, 0));
  CU_EXPECT_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&few, f, 64, 40 << 10));
  EXPECT_GE(many, 1);
  EXPECT_GE(few, 1);
  EXPECT_LT(few, many);
  int perSm = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  EXPECT_LE(few, perSm / (40 << 10));
  CU_EXPECT_OK(cuModuleUnload(m));
}

}  // namespace
