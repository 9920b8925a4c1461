// Behaviour that real clients (numba-cuda, cuda.core, CuPy, cudart 13.4+) rely on, measured on an H100 with driver
// 580 (tools/gpu-probe/clients17.cpp, results in tools/gpu-probe/results/clients17-h100-*.txt).
#include "harness.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using api_init_Clients = conf::DeviceTest;
using api_memory_Clients = conf::ContextTest;
using api_module_Clients = conf::ContextTest;
using api_context_Clients = conf::ContextTest;

CUuuid Uuid(const char* hex) {
  CUuuid id{};
  for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  return id;
}

// cudart 13.4+ (cuda-bindings 13.4, 13.5) asks for 21318c60..., NVRTC and nvJitLink for da9151d3...; the driver
// hands both a table, and refuses a UUID it does not know.
TEST_F(api_init_Clients, ExportTablesOfNewerRuntimes) {
  for (const char* hex : {"21318c60971432488ca641ff7324c8f2", "da9151d33ae6cc41a5c04f26d533e328"}) {
    CUuuid id = Uuid(hex);
    const void* table = nullptr;
    CU_EXPECT_OK(cuGetExportTable(&table, &id)) << hex;
    EXPECT_NE(table, nullptr) << hex;
  }
  CUuuid unknown = Uuid("0123456789abcdef0123456789abcdef");
  const void* table = reinterpret_cast<const void*>(0x1234);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&table, &unknown));
}

// A child forked after cuInit cannot use the driver: cuInit and everything after it answer NOT_INITIALIZED; the
// version query still works.
CONF_FRESH_BODY(ForkAfterInit) {
  if (cuInit(0) != CUDA_SUCCESS) return -1;
  CUdevice dev;
  if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return -2;
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    int count = -1, version = 0;
    CUcontext c = nullptr;
    int code = 0;
    code |= cuInit(0) == CUDA_ERROR_NOT_INITIALIZED ? 1 : 0;
    code |= cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED ? 2 : 0;
    code |= cuDeviceGet(&dev, 0) == CUDA_ERROR_NOT_INITIALIZED ? 4 : 0;
    code |= cuCtxCreate(&c, nullptr, 0, 0) == CUDA_ERROR_NOT_INITIALIZED ? 8 : 0;
    code |= cuCtxGetCurrent(&c) == CUDA_ERROR_NOT_INITIALIZED ? 16 : 0;
    code |= cuDriverGetVersion(&version) == CUDA_SUCCESS ? 32 : 0;
    _exit(code);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -3;
  // The parent still works.
  CUcontext c = nullptr;
  if (cuCtxCreate(&c, nullptr, 0, dev) != CUDA_SUCCESS) return -4;
  cuCtxDestroy(c);
  return WEXITSTATUS(status);
}

TEST(api_init_Fork, ChildAfterInitIsNotInitialized) {
  auto r = conf::RunFresh("ForkAfterInit");
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 63) << "bits: 1 cuInit, 2 count, 4 deviceGet, 8 ctxCreate, 16 getCurrent (NOT_INITIALIZED), "
                             "32 driverGetVersion (SUCCESS)";
}

// numba's cuda.close() frees memory after popping its context.
TEST_F(api_memory_Clients, FreeWithoutCurrentContext) {
  CUdeviceptr d = 0;
  void* h = nullptr;
  CU_ASSERT_OK(cuMemAlloc(&d, 4096));
  CU_ASSERT_OK(cuMemAllocHost(&h, 4096));
  CUcontext popped = nullptr;
  CU_ASSERT_OK(cuCtxPopCurrent(&popped));
  CU_EXPECT_OK(cuMemFree(d));
  CU_EXPECT_OK(cuMemFreeHost(h));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemFree(d)) << "double free";
  CU_EXPECT_OK(cuMemFree(0));
  CU_ASSERT_OK(cuCtxPushCurrent(popped));
}

TEST_F(api_memory_Clients, HostUnregisterInteriorPointer) {
  std::vector<char> buffer(3 * 4096);
  CU_ASSERT_OK(cuMemHostRegister(buffer.data(), buffer.size(), 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemHostUnregister(buffer.data() + 64));
  CU_EXPECT_OK(cuMemHostUnregister(buffer.data()));
  CU_EXPECT(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buffer.data()));
}

TEST_F(api_module_Clients, NameOfNullFunctionOrKernel) {
  const char* name = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuFuncGetName(&name, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuKernelGetName(&name, nullptr));
}

// The register limit of a link (numba passes max_registers to cuLinkCreate) bounds what the linked kernel reports.
const char* ManyLivePtx() {
  static const std::string ptx = [] {
    std::string s =
        ".version 8.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry many_live(.param .u64 p)\n{\n  .reg .b32 %r<42>;\n  .reg .b64 %rd<2>;\n"
        "  ld.param.u64 %rd1, [p];\n";
    for (int i = 1; i <= 40; ++i)
      s += "  ld.global.u32 %r" + std::to_string(i) + ", [%rd1+" + std::to_string(4 * i) + "];\n";
    for (int i = 1; i < 40; ++i)
      s += "  mul.lo.u32 %r" + std::to_string(i) + ", %r" + std::to_string(i) + ", %r" + std::to_string(i + 1) + ";\n";
    s += "  mov.u32 %r41, 0;\n";
    for (int i = 1; i <= 40; ++i) s += "  add.u32 %r41, %r41, %r" + std::to_string(i) + ";\n";
    s += "  st.global.u32 [%rd1], %r41;\n  ret;\n}\n";
    return s;
  }();
  return ptx.c_str();
}

TEST_F(api_module_Clients, LinkMaxRegistersBoundsNumRegs) {
  for (int limit : {24, 32}) {  // below 24 ptxas may not honour the limit (16 gave 22 on an H100)
    CUjit_option opts[] = {CU_JIT_MAX_REGISTERS};
    void* vals[] = {reinterpret_cast<void*>(static_cast<uintptr_t>(limit))};
    CUlinkState link;
    CU_ASSERT_OK(cuLinkCreate(1, opts, vals, &link));
    const char* ptx = ManyLivePtx();
    CU_ASSERT_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx), std::strlen(ptx) + 1, "many.ptx", 0,
                               nullptr, nullptr));
    void* image = nullptr;
    size_t size = 0;
    CU_ASSERT_OK(cuLinkComplete(link, &image, &size));
    CUmodule m;
    CU_ASSERT_OK(cuModuleLoadData(&m, image));
    CU_EXPECT_OK(cuLinkDestroy(link));
    CUfunction f;
    CU_ASSERT_OK(cuModuleGetFunction(&f, m, "many_live"));
    int regs = -1;
    CU_EXPECT_OK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    EXPECT_GT(regs, 0);
    EXPECT_LE(regs, limit);
    CU_EXPECT_OK(cuModuleUnload(m));
  }
}

// cuda.core keeps handles in signed 64-bit integers: NVIDIA's are user-space pointers.
TEST_F(api_context_Clients, HandlesLookLikePointers) {
  CUmodule mod;
  CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "write_through_pointer"));
  CUstream s;
  CUevent e;
  CUgraph g;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuEventCreate(&e, 0));
  CU_ASSERT_OK(cuGraphCreate(&g, 0));
  for (const void* h : {static_cast<const void*>(ctx), static_cast<const void*>(mod), static_cast<const void*>(f),
                        static_cast<const void*>(s), static_cast<const void*>(e), static_cast<const void*>(g)}) {
    auto value = reinterpret_cast<uintptr_t>(h);
    EXPECT_NE(value, 0u);
    EXPECT_LT(value, uintptr_t{1} << 47) << "a user-space address";
    EXPECT_EQ(value % 16, 0u) << "aligned like an allocation";
  }
  CU_EXPECT_OK(cuGraphDestroy(g));
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// A context made by cuCtxCreate_v4 without parameters reports exactly the flags it was made with.
TEST_F(api_context_Clients, FlagsOfContextCreateV4WithoutParams) {
  CUcontext c = nullptr;
  CU_ASSERT_OK(cuCtxCreate_v4(&c, nullptr, CU_CTX_SCHED_YIELD, dev));
  unsigned flags = 0;
  CU_EXPECT_OK(cuCtxGetFlags(&flags));
  EXPECT_EQ(flags, unsigned{CU_CTX_SCHED_YIELD});
  CU_EXPECT_OK(cuCtxDestroy(c));
}

// ---- kernel accesses past an allocation ---------------------------------------------------------------------------

const char* kAccessPtx = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .entry read32(.param .u64 p, .param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
.visible .entry write32(.param .u64 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

class api_memory_Bounds : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuModuleLoadData(&mod, kAccessPtx));
    CU_ASSERT_OK(cuModuleGetFunction(&reader, mod, "read32"));
    CU_ASSERT_OK(cuModuleGetFunction(&writer, mod, "write32"));
    CU_ASSERT_OK(cuMemAlloc(&out, 64));
  }
  CUresult Access(CUdeviceptr where, bool write) {
    void* readParams[] = {&where, &out};
    void* writeParams[] = {&where};
    CUresult r = cuLaunchKernel(write ? writer : reader, 1, 1, 1, 1, 1, 1, 0, nullptr, write ? writeParams : readParams,
                                nullptr);
    return r == CUDA_SUCCESS ? cuCtxSynchronize() : r;
  }
  CUmodule mod = nullptr;
  CUfunction reader = nullptr, writer = nullptr;
  CUdeviceptr out = 0;
};

// The GPU maps memory in granules: a few bytes (numba's tests go 24 past a 40-byte buffer) up to 64 KiB past a
// small allocation, and up to the 2 MiB-rounded end of a large one, neither read nor write faults.
TEST_F(api_memory_Bounds, AccessesWithinTheMappingGranuleDoNotFault) {
  CUdeviceptr small = 0, large = 0;
  CU_ASSERT_OK(cuMemAlloc(&small, 40));
  for (size_t offset : {size_t{40}, size_t{64}, size_t{512}, size_t{4096}, size_t{65532}}) {
    CU_EXPECT_OK(Access(small + offset, false)) << "read at +" << offset;
    CU_EXPECT_OK(Access(small + offset, true)) << "write at +" << offset;
  }
  size_t size = size_t{3} << 20;
  CU_ASSERT_OK(cuMemAlloc(&large, size));
  for (size_t offset : {size, size + 24, (size_t{4} << 20) - 4}) {
    CU_EXPECT_OK(Access(large + offset, false)) << "read at +" << offset;
    CU_EXPECT_OK(Access(large + offset, true)) << "write at +" << offset;
  }
  CU_EXPECT_OK(cuMemFree(small));
  CU_EXPECT_OK(cuMemFree(large));
}

class api_memory_Bounds_Faults : public api_memory_Bounds {};

TEST_F(api_memory_Bounds_Faults, BeyondTheGranuleOfALargeAllocation) {
  CUdeviceptr large = 0;
  size_t size = size_t{3} << 20;
  CU_ASSERT_OK(cuMemAlloc(&large, size));
  CU_EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, Access(large + (size_t{64} << 20), false));
}

}  // namespace
