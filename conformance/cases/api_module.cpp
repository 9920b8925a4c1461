// api.module: loading PTX, fatbinaries and cubins, JIT logs, functions, globals, unloading.
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;
using api_module = ContextTest;

const char* kMinimalPtx =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry nothing()\n{\n\tret;\n}\n";

TEST_F(api_module, LoadPtxText) {
  CUmodule m = nullptr;
  CU_ASSERT_OK(cuModuleLoadData(&m, kMinimalPtx));
  EXPECT_NE(m, nullptr);
  CUfunction f = nullptr;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "nothing"));
  EXPECT_NE(f, nullptr);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module, LoadNvccPtx) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.ptx"));
  for (const char* name : {"vadd_f32", "vadd_i32", "fill_u32", "write_coordinates", "reverse_dynamic_shared",
                           "mixed_params", "empty_kernel"}) {
    CUfunction f = nullptr;
    CU_EXPECT_OK(cuModuleGetFunction(&f, m, name)) << name;
  }
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module, LoadHandWrittenPtx) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "hand_add_one.ptx"));
  CUfunction f;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "add_one"));
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module, LoadDataExWithLogs) {
  char info[4096] = {}, error[4096] = {};
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* vals[] = {info, reinterpret_cast<void*>(sizeof(info)), error, reinterpret_cast<void*>(sizeof(error)),
                  reinterpret_cast<void*>(1)};
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, kMinimalPtx, 5, opts, vals));
  EXPECT_EQ(error[0], '\0') << error;
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module, LoadDataExAcceptsCommonOptions) {
  float wall = -1;
  CUjit_option opts[] = {CU_JIT_MAX_REGISTERS, CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_GENERATE_LINE_INFO, CU_JIT_CACHE_MODE,
                         CU_JIT_WALL_TIME};
  void* vals[] = {reinterpret_cast<void*>(32), reinterpret_cast<void*>(3), reinterpret_cast<void*>(1),
                  reinterpret_cast<void*>(CU_JIT_CACHE_OPTION_CA), nullptr};
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadDataEx(&m, kMinimalPtx, 5, opts, vals));
  std::memcpy(&wall, &vals[4], sizeof(wall));
  EXPECT_GE(wall, 0.0f) << "CU_JIT_WALL_TIME returns milliseconds as a float in the value slot";
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module, BadPtxSyntax) {
  const char* bad =
      ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry broken()\n{\n\tthis is not ptx;\n}\n";
  char error[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, reinterpret_cast<void*>(sizeof(error))};
  CUmodule m = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_PTX, cuModuleLoadDataEx(&m, bad, 2, opts, vals));
  EXPECT_GT(std::strlen(error), 0u) << "the error log explains the failure";
  size_t written = reinterpret_cast<size_t>(vals[1]);
  EXPECT_GT(written, 0u) << "the size slot returns the log length";
}

TEST_F(api_module, BadPtxUndefinedRegister) {
  const char* bad =
      ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry broken()\n{\n\tadd.s32 %r1, %r2, 1;\n\tret;\n}\n";
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_PTX, cuModuleLoadData(&m, bad));
}

TEST_F(api_module, BadPtxUnknownTarget) {
  const char* bad = ".version 7.0\n.target sm_9999\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_PTX, cuModuleLoadData(&m, bad));
}

TEST_F(api_module, PtxVersionTooNew) {
  const char* bad = ".version 99.9\n.target sm_52\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, cuModuleLoadData(&m, bad));
}

TEST_F(api_module, EmptyImage) {
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, ""));
}

TEST_F(api_module, GarbageImage) {
  std::vector<unsigned char> junk(4096);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<unsigned char>(i * 37 + 11);
  junk.back() = 0;
  CUmodule m;
  CUresult r = cuModuleLoadData(&m, junk.data());
  EXPECT_TRUE(r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX) << conf::Describe(r);
}

TEST_F(api_module, LoadNullImage) {
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&m, nullptr));
}

TEST_F(api_module, LoadNullResult) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(nullptr, kMinimalPtx)); }

TEST_F(api_module, LoadNoContext) {
  conf::DrainContextStack();
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuModuleLoadData(&m, kMinimalPtx));
}

TEST_F(api_module, LoadFileMissing) {
  CUmodule m;
  CU_EXPECT(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, "/nonexistent/cuemu-conformance/none.ptx"));
}

TEST_F(api_module, LoadFilePtx) {
  char path[] = "/tmp/cuemu-conf-module-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  auto img = conf::GetImage("vector.ptx");
  ASSERT_EQ(write(fd, img.data, img.size), static_cast<ssize_t>(img.size));
  close(fd);
  CUmodule m;
  CUresult r = cuModuleLoad(&m, path);
  unlink(path);
  CU_ASSERT_OK(r);
  CUfunction f;
  CU_EXPECT_OK(cuModuleGetFunction(&f, m, "vadd_f32"));
  CU_EXPECT_OK(cuModuleUnload(m));
}

// ---- images: PTX inside fatbins, cubins ---------------------------------------------------------------------------

using api_module_Images = ContextTest;

void ExpectVaddWorks(CUmodule m) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "vadd_i32"));
  const int n = 1000;
  std::vector<int> a(n), b(n), c(n, 0);
  for (int i = 0; i < n; ++i) a[i] = i, b[i] = 3 * i;
  CUdeviceptr da, db, dc;
  CU_ASSERT_OK(cuMemAlloc(&da, n * 4));
  CU_ASSERT_OK(cuMemAlloc(&db, n * 4));
  CU_ASSERT_OK(cuMemAlloc(&dc, n * 4));
  CU_ASSERT_OK(cuMemcpyHtoD(da, a.data(), n * 4));
  CU_ASSERT_OK(cuMemcpyHtoD(db, b.data(), n * 4));
  int nn = n;
  void* params[] = {&da, &db, &dc, &nn};
  CU_ASSERT_OK(conf::Launch1D(f, (n + 255) / 256, 256, params));
  CU_ASSERT_OK(cuMemcpyDtoH(c.data(), dc, n * 4));
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], 4 * i);
  cuMemFree(da);
  cuMemFree(db);
  cuMemFree(dc);
}

TEST_F(api_module_Images, LoadFatbinPtxCompressed) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector.fatbin"));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, LoadFatbinPtxUncompressed) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector_nocompress.fatbin"));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, LoadFatbinMixedSassAndPtx) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector_mixed.fatbin"));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, LoadFatBinaryEntryPoint) {
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadFatBinary(&m, conf::GetImage("vector.fatbin").ptr()));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, LoadFatbinSassOnly) {
  // sm_90 machine code only: loads on an sm_90 GPU.
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) != 9 ||
      conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) != 0)
    CONF_NOT_SUPPORTED("SASS for sm_90 only");
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector_sass_only.fatbin"));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, LoadCubinSm90) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) != 9 ||
      conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) != 0)
    CONF_NOT_SUPPORTED("SASS for sm_90 only");
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "vector_sm90.cubin"));
  ExpectVaddWorks(m);
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Images, TruncatedFatbin) {
  auto img = conf::GetImage("vector_nocompress.fatbin");
  ASSERT_GT(img.size, 64u);
  // cuModuleLoadData has no size argument, so the bytes after the cut are zeros up to the size the header claims
  // (anything else would make the driver read past the buffer).
  std::vector<unsigned char> cut(img.data, img.data + 40);
  cut.resize(img.size + 64, 0);
  CUmodule m;
  CUresult r = cuModuleLoadData(&m, cut.data());
  // The entry after the cut is a PTX entry with empty contents: driver 580 answers CUDA_ERROR_UNKNOWN (measured on
  // an H200).
  CU_EXPECT(CUDA_ERROR_UNKNOWN, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

// ---- functions and globals ----------------------------------------------------------------------------------------

class api_module_Symbols : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
  }
  void TearDown() override {
    if (mod) cuModuleUnload(mod);
    ContextTest::TearDown();
  }
  CUmodule mod = nullptr;
};

TEST_F(api_module_Symbols, GetFunctionMissing) {
  CUfunction f;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, mod, "no_such_kernel"));
}

TEST_F(api_module_Symbols, GetFunctionNulls) {
  CUfunction f;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(nullptr, mod, "vadd_f32"));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(&f, mod, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, nullptr, "vadd_f32"));
}

TEST_F(api_module_Symbols, GetFunctionIsStable) {
  CUfunction a, b;
  CU_ASSERT_OK(cuModuleGetFunction(&a, mod, "vadd_f32"));
  CU_ASSERT_OK(cuModuleGetFunction(&b, mod, "vadd_f32"));
  EXPECT_EQ(a, b);
}

TEST_F(api_module_Symbols, GetFunctionOfDeviceVariable) {
  CUfunction f;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, mod, "g_counter"));
}

TEST_F(api_module_Symbols, GlobalAddressAndSize) {
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "g_counter"));
  EXPECT_NE(p, 0u);
  EXPECT_EQ(size, 4u);
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "g_words"));
  EXPECT_EQ(size, 1024u);
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "c_table"));
  EXPECT_EQ(size, 64u);
}

TEST_F(api_module_Symbols, GlobalInitializers) {
  CUdeviceptr p;
  size_t size;
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "c_table"));
  int table[16] = {};
  CU_ASSERT_OK(cuMemcpyDtoH(table, p, sizeof(table)));
  EXPECT_EQ(table[0], 1);
  EXPECT_EQ(table[15], 1597);
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "g_scale"));
  float scale = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&scale, p, 4));
  EXPECT_EQ(scale, 2.0f);
}

TEST_F(api_module_Symbols, GlobalOptionalOutputs) {
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_EXPECT_OK(cuModuleGetGlobal(&p, nullptr, mod, "g_counter"));
  CU_EXPECT_OK(cuModuleGetGlobal(nullptr, &size, mod, "g_counter"));
  EXPECT_EQ(size, 4u);
}

TEST_F(api_module_Symbols, GlobalMissing) {
  CUdeviceptr p;
  size_t size;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&p, &size, mod, "no_such_global"));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuModuleGetGlobal(&p, &size, mod, "vadd_f32"))
      << "a kernel's name is the wrong kind of symbol (measured on driver 580)";
}

TEST_F(api_module_Symbols, GlobalWrittenFromHostSeenByKernel) {
  CUdeviceptr p;
  size_t size;
  CU_ASSERT_OK(cuModuleGetGlobal(&p, &size, mod, "g_scale"));
  float three = 3.0f;
  CU_ASSERT_OK(cuMemcpyHtoD(p, &three, 4));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "scale_by_global"));
  float data[4] = {1, 2, 3, 4};
  CUdeviceptr d;
  CU_ASSERT_OK(cuMemAlloc(&d, sizeof(data)));
  CU_ASSERT_OK(cuMemcpyHtoD(d, data, sizeof(data)));
  int n = 4;
  void* params[] = {&d, &n};
  CU_ASSERT_OK(conf::Launch1D(f, 1, 32, params));
  CU_ASSERT_OK(cuMemcpyDtoH(data, d, sizeof(data)));
  EXPECT_EQ(data[3], 12.0f);
  CU_EXPECT_OK(cuMemFree(d));
}

TEST_F(api_module_Symbols, ModulesHaveSeparateGlobals) {
  CUmodule second;
  CU_ASSERT_OK(conf::LoadModule(&second, "second.ptx"));
  CUdeviceptr a, b;
  size_t size;
  CU_ASSERT_OK(cuModuleGetGlobal(&a, &size, mod, "g_counter"));
  CU_ASSERT_OK(cuModuleGetGlobal(&b, &size, second, "g_counter"));
  EXPECT_NE(a, b);
  int va = -1, vb = -1;
  CU_ASSERT_OK(cuMemcpyDtoH(&va, a, 4));
  CU_ASSERT_OK(cuMemcpyDtoH(&vb, b, 4));
  EXPECT_EQ(va, 0);
  EXPECT_EQ(vb, 100);
  CU_EXPECT_OK(cuModuleUnload(second));
}

TEST_F(api_module_Symbols, SameModuleLoadedTwiceIsIndependent) {
  CUmodule again;
  CU_ASSERT_OK(conf::LoadModule(&again, "vector.ptx"));
  EXPECT_NE(again, mod);
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuModuleGetGlobal(&a, nullptr, mod, "g_counter"));
  CU_ASSERT_OK(cuModuleGetGlobal(&b, nullptr, again, "g_counter"));
  EXPECT_NE(a, b);
  CU_EXPECT_OK(cuModuleUnload(again));
}

TEST_F(api_module_Symbols, FunctionCount) {
  unsigned count = 0;
  CU_ASSERT_OK(cuModuleGetFunctionCount(&count, mod));
  EXPECT_EQ(count, 16u) << "kernels in vector.cu";
  std::vector<CUfunction> fns(count);
  CU_EXPECT_OK(cuModuleEnumerateFunctions(fns.data(), count, mod));
  for (auto f : fns) {
    const char* name = nullptr;
    CU_EXPECT_OK(cuFuncGetName(&name, f));
    EXPECT_NE(name, nullptr);
  }
}

TEST_F(api_module_Symbols, FuncGetName) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "mixed_params"));
  const char* name = nullptr;
  CU_EXPECT_OK(cuFuncGetName(&name, f));
  EXPECT_STREQ(name, "mixed_params");
}

TEST_F(api_module_Symbols, FuncGetModule) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  CUmodule m = nullptr;
  CU_EXPECT_OK(cuFuncGetModule(&m, f));
  EXPECT_EQ(m, mod);
}

TEST_F(api_module_Symbols, FuncParamInfo) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  size_t offset = 99, size = 99;
  CU_EXPECT_OK(cuFuncGetParamInfo(f, 0, &offset, &size));
  EXPECT_EQ(offset, 0u);
  EXPECT_EQ(size, 8u);
  CU_EXPECT_OK(cuFuncGetParamInfo(f, 3, &offset, &size));
  EXPECT_EQ(offset, 24u);
  EXPECT_EQ(size, 4u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 4, &offset, &size));
}

struct FuncAttrCase {
  CUfunction_attribute attr;
  const char* name;
};

void PrintTo(const FuncAttrCase& c, std::ostream* os) { *os << c.name; }

const FuncAttrCase kFuncAttrs[] = {
    {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK"},
    {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
    {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CONST_SIZE_BYTES"},
    {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"},
    {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS"},
    {CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX_VERSION"},
    {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "BINARY_VERSION"},
    {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, "CACHE_MODE_CA"},
    {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
    {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "PREFERRED_SHARED_MEMORY_CARVEOUT"},
};

class api_module_FuncAttribute : public api_module_Symbols, public testing::WithParamInterface<FuncAttrCase> {};

TEST_P(api_module_FuncAttribute, Query) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "static_shared_16k"));
  int v = -12345;
  CU_ASSERT_OK(cuFuncGetAttribute(&v, GetParam().attr, f));
  switch (GetParam().attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      EXPECT_GT(v, 0);
      EXPECT_LE(v, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: EXPECT_EQ(v, 16384); break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: EXPECT_EQ(v, 75) << "compiled for compute_75"; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      EXPECT_EQ(v, 10 * conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                       conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
          << "JIT compiled for this device";
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: EXPECT_GE(v, -1); break;
    default: EXPECT_GE(v, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, api_module_FuncAttribute, testing::ValuesIn(kFuncAttrs),
                         [](const testing::TestParamInfo<FuncAttrCase>& i) { return i.param.name; });

TEST_F(api_module_Symbols, FuncAttributeBad) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr));
}

TEST_F(api_module_Symbols, FuncSetMaxDynamicShared) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "reverse_dynamic_shared"));
  int optin = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  CU_EXPECT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  int v = 0;
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  EXPECT_EQ(v, optin);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1));
}

TEST_F(api_module_Symbols, FuncCacheConfig) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  CU_EXPECT_OK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncSetCacheConfig(f, static_cast<CUfunc_cache>(9)));
}

TEST_F(api_module_Symbols, UnloadTwice) {
  CUmodule m;
  CU_ASSERT_OK(conf::LoadModule(&m, "second.ptx"));
  CU_ASSERT_OK(cuModuleUnload(m));
  CUmodule again;
  CU_ASSERT_OK(conf::LoadModule(&again, "second.ptx"));
  if (again == m) {
    cuModuleUnload(again);
    CONF_NOT_SUPPORTED("the driver reused the unloaded handle value");
  }
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(m));
  CU_EXPECT_OK(cuModuleUnload(again));
}

TEST_F(api_module_Symbols, UnloadNull) { CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(nullptr)); }

TEST_F(api_module_Symbols, LoadingMode) {
  CUmoduleLoadingMode mode;
  CU_EXPECT_OK(cuModuleGetLoadingMode(&mode));
  EXPECT_TRUE(mode == CU_MODULE_EAGER_LOADING || mode == CU_MODULE_LAZY_LOADING);
}

TEST_F(api_module_Symbols, FunctionIsLoaded) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  CU_EXPECT_OK(cuFuncLoad(f));
  CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_UNLOADED;
  CU_EXPECT_OK(cuFuncIsLoaded(&state, f));
  EXPECT_EQ(state, CU_FUNCTION_LOADING_STATE_LOADED);
}

// ---- libraries (context-independent loading) ----------------------------------------------------------------------

using api_module_Library = ContextTest;

TEST_F(api_module_Library, LoadAndGetKernel) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k;
  CU_EXPECT_OK(cuLibraryGetKernel(&k, lib, "vadd_i32"));
  CUfunction f;
  CU_EXPECT_OK(cuKernelGetFunction(&f, k));
  unsigned count = 0;
  CU_EXPECT_OK(cuLibraryGetKernelCount(&count, lib));
  EXPECT_EQ(count, 16u);
  CUdeviceptr g;
  size_t size = 0;
  CU_EXPECT_OK(cuLibraryGetGlobal(&g, &size, lib, "g_counter"));
  EXPECT_EQ(size, 4u);
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

TEST_F(api_module_Library, KernelUsableAsFunction) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "fill_u32"));
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAlloc(&p, 64 * 4));
  unsigned value = 77;
  int n = 64;
  void* params[] = {&p, &value, &n};
  CU_ASSERT_OK(conf::Launch1D(reinterpret_cast<CUfunction>(k), 1, 64, params));
  unsigned out[64];
  CU_ASSERT_OK(cuMemcpyDtoH(out, p, sizeof(out)));
  EXPECT_EQ(out[63], 77u);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

TEST_F(api_module_Library, MissingKernel) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "nope"));
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

// ---- linker -------------------------------------------------------------------------------------------------------

using api_module_Link = ContextTest;

const char* kLinkCaller =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".extern .func (.param .b32 r) triple(.param .b32 x);\n"
    ".visible .entry call_triple(.param .u64 out)\n{\n"
    "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 14;\n"
    "\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n"
    "\tcall.uni (r), triple, (a);\n\tld.param.b32 %r2, [r];\n\t}\n"
    "\tst.global.u32 [%rd2], %r2;\n\tret;\n}\n";

const char* kLinkCallee =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .func (.param .b32 r) triple(.param .b32 x)\n{\n"
    "\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [x];\n\tmul.lo.s32 %r2, %r1, 3;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n";

TEST_F(api_module_Link, TwoPtxFiles) {
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  CU_ASSERT_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(kLinkCaller), std::strlen(kLinkCaller) + 1,
                             "caller.ptx", 0, nullptr, nullptr));
  CU_ASSERT_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(kLinkCallee), std::strlen(kLinkCallee) + 1,
                             "callee.ptx", 0, nullptr, nullptr));
  void* cubin = nullptr;
  size_t size = 0;
  CU_ASSERT_OK(cuLinkComplete(link, &cubin, &size));
  EXPECT_GT(size, 0u);
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, cubin));
  CU_EXPECT_OK(cuLinkDestroy(link));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "call_triple"));
  CUdeviceptr out;
  CU_ASSERT_OK(cuMemAlloc(&out, 4));
  void* params[] = {&out};
  CU_ASSERT_OK(conf::Launch1D(f, 1, 1, params));
  int v = 0;
  CU_ASSERT_OK(cuMemcpyDtoH(&v, out, 4));
  EXPECT_EQ(v, 42);
  CU_EXPECT_OK(cuMemFree(out));
  CU_EXPECT_OK(cuModuleUnload(m));
}

TEST_F(api_module_Link, MissingSymbol) {
  char error[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, reinterpret_cast<void*>(sizeof(error))};
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(2, opts, vals, &link));
  CU_ASSERT_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(kLinkCaller), std::strlen(kLinkCaller) + 1,
                             "caller.ptx", 0, nullptr, nullptr));
  void* cubin = nullptr;
  size_t size = 0;
  // Driver 580 names the missing function in the error log. On an H200 it failed the link with
  // CUDA_ERROR_INVALID_SOURCE in a fresh process (three times in a row) but completed it, log and all, in the
  // suite's process after other links (twice): both answers are the driver's; cuemu fails the link.
  CUresult r = cuLinkComplete(link, &cubin, &size);
  EXPECT_TRUE(r == CUDA_ERROR_INVALID_SOURCE || r == CUDA_SUCCESS) << conf::Describe(r);
  EXPECT_NE(std::string(error).find("Undefined reference to 'triple' in 'caller.ptx'"), std::string::npos)
      << "the log names the missing symbol and the input: " << error;
  if (r != CUDA_SUCCESS) {
    EXPECT_EQ(cubin, nullptr);
  }
  CU_EXPECT_OK(cuLinkDestroy(link));
}

TEST_F(api_module_Link, BadPtxInput) {
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  const char* bad = ".version 7.0\n.target sm_52\n.address_size 64\nnonsense\n";
  CU_EXPECT(CUDA_ERROR_INVALID_PTX, cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(bad), std::strlen(bad) + 1,
                                                  "bad.ptx", 0, nullptr, nullptr));
  CU_EXPECT_OK(cuLinkDestroy(link));
}

}  // namespace
