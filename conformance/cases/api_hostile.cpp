// api.*.Hostile: inputs an application should not give but may (issue 24): launches against .reqntid, PTX over the
// hardware's limits, huge limits, protected host pages, module files that are not files, many tiny allocations.
// Cases named `<case>.<CUDA_ERROR_...>` assert the code in their name: it was not known before the GPU run, which
// ran one instance per plausible code (tools/gpu-probe/results/reliability24-h100-2026-11-26.txt has the raw
// answers); the instance that passed on the GPU is the one registered here.
#include "harness.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using conf::ContextTest;

// A case whose expected code is part of its name: `suite.test.CODE`.
class CodeCase : public ContextTest {
 public:
  CodeCase(void (*body)(CUresult), CUresult expected) : body_(body), expected_(expected) {}
  void TestBody() override { body_(expected_); }

 private:
  void (*body_)(CUresult);
  CUresult expected_;
};

struct CodeCaseRegistration {
  CodeCaseRegistration(const char* suite, const char* test, CUresult expected, const char* codeName,
                       void (*body)(CUresult)) {
    std::string name = std::string(test) + "/" + codeName;
    testing::RegisterTest(suite, name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [=]() -> ContextTest* { return new CodeCase(body, expected); });
  }
};

// CODE_CASE(suite, Test, CUDA_ERROR_X) { ... expectedCode ... }: registers suite.Test.CUDA_ERROR_X.
#define CODE_CASE(suite, test, code)                                                                     \
  void suite##_##test(CUresult);                                                                         \
  const CodeCaseRegistration suite##_##test##_registration(#suite, #test, code, #code, &suite##_##test); \
  void suite##_##test([[maybe_unused]] CUresult expectedCode)

const char* const kReqntidPtx = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry req64(.param .u64 out) .reqntid 64, 1, 1
{
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

// ---- launches ------------------------------------------------------------------------------------------------------

// The GPU refuses a block shape that contradicts .reqntid at the launch, and the context stays usable.
CODE_CASE(api_launch_Hostile, ReqntidMismatchRefusedAtLaunch, CUDA_ERROR_INVALID_VALUE) {
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kReqntidPtx));
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, m, "req64"));
  conf::DeviceBuffer out(64 * 4);
  CUdeviceptr p = out.ptr();
  void* params[] = {&p};
  CU_EXPECT(expectedCode, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT(expectedCode, cuLaunchKernel(f, 1, 1, 1, 32, 2, 1, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  CU_EXPECT_OK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned v[64] = {};
  CU_EXPECT_OK(cuMemcpyDtoH(v, p, sizeof v));
  EXPECT_EQ(v[63], 63u);
  CU_EXPECT_OK(cuModuleUnload(m));
}

// ---- module loads --------------------------------------------------------------------------------------------------

std::string ParamKernel(unsigned bytes) {
  return ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry bigparams(.param .align 4 .b8 p[" +
         std::to_string(bytes) + "])\n{\n  ret;\n}\n";
}

std::string SharedKernel(const char* count) {
  return std::string(".version 7.0\n.target sm_50\n.address_size 64\n.shared .align 4 .b8 a[") + count +
         "];\n.visible .entry usesShared(.param .u64 out)\n{\n  .reg .u64 %rd<3>;\n  .reg .u32 %r<2>;\n"
         "  mov.u64 %rd1, a;\n  ld.shared.u32 %r1, [%rd1];\n  ld.param.u64 %rd2, [out];\n"
         "  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";
}

// cuModuleLoadDataEx with an error log buffer; the log comes back in `log`.
CUresult LoadWithLog(CUmodule* m, const std::string& text, std::string* log) {
  std::vector<char> errors(8192, 0);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {errors.data(), reinterpret_cast<void*>(uintptr_t(errors.size()))};
  CUresult r = cuModuleLoadDataEx(m, text.c_str(), 2, opts, vals);
  *log = errors.data();
  return r;
}

CODE_CASE(api_module_Hostile, ParamsOverLimit, CUDA_ERROR_INVALID_PTX) {
  CUmodule m = nullptr;
  std::string log;
  CUresult r = LoadWithLog(&m, ParamKernel(32768), &log);
  CU_EXPECT(expectedCode, r);
  if (r != CUDA_SUCCESS) {
    EXPECT_FALSE(log.empty()) << "the error log names the problem";
  }
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

CODE_CASE(api_module_Hostile, SharedOf4e9Bytes, CUDA_SUCCESS) {
  CUmodule m = nullptr;
  std::string log;
  CUresult r = LoadWithLog(&m, SharedKernel("4000000000"), &log);
  CU_EXPECT(expectedCode, r);
  if (r != CUDA_SUCCESS) {
    EXPECT_FALSE(log.empty()) << "the error log names the problem";
  }
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

CODE_CASE(api_module_Hostile, SharedOverTheDeviceMaximum, CUDA_ERROR_INVALID_PTX) {
  CUmodule m = nullptr;
  std::string log;
  CUresult r = LoadWithLog(&m, SharedKernel("300000"), &log);
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

CODE_CASE(api_module_Hostile, StaticSharedOver48KiB, CUDA_SUCCESS) {
  CUmodule m = nullptr;
  std::string log;
  CUresult r = LoadWithLog(&m, SharedKernel("49156"), &log);
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

// A fatbinary whose PTX entries hold only zero bytes (the header is intact).
CODE_CASE(api_module_Hostile, FatbinPtxEntryAllZero, CUDA_ERROR_INVALID_PTX) {
  auto img = conf::GetImage("vector_nocompress.fatbin");
  ASSERT_GT(img.size, 16u);
  std::vector<unsigned char> bytes(img.data, img.data + img.size);
  uint16_t headerSize;
  uint64_t dataSize;
  std::memcpy(&headerSize, &bytes[6], 2);
  std::memcpy(&dataSize, &bytes[8], 8);
  int zeroed = 0;
  for (uint64_t offset = headerSize; offset + 0x40 <= headerSize + dataSize && offset + 0x40 <= bytes.size();) {
    uint16_t kind;
    uint32_t entryHeader;
    uint64_t payload;
    std::memcpy(&kind, &bytes[offset], 2);
    std::memcpy(&entryHeader, &bytes[offset + 4], 4);
    std::memcpy(&payload, &bytes[offset + 8], 8);
    ASSERT_LE(offset + entryHeader + payload, bytes.size());
    if (kind == 1) {
      std::memset(&bytes[offset + entryHeader], 0, payload);
      ++zeroed;
    }
    offset += entryHeader + payload;
  }
  ASSERT_GT(zeroed, 0);
  CUmodule m;
  CUresult r = cuModuleLoadData(&m, bytes.data());
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

CODE_CASE(api_module_Hostile, LoadDirectory, CUDA_ERROR_OUT_OF_MEMORY) {
  CUmodule m;
  CUresult r = cuModuleLoad(&m, "/tmp");
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

CODE_CASE(api_module_Hostile, LoadDevNull, CUDA_ERROR_INVALID_IMAGE) {
  CUmodule m;
  CUresult r = cuModuleLoad(&m, "/dev/null");
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
}

// ---- limits --------------------------------------------------------------------------------------------------------

CODE_CASE(api_context_Hostile, StackLimitOf1TiB, CUDA_ERROR_INVALID_VALUE) {
  size_t before = 0, after = 0;
  CU_ASSERT_OK(cuCtxGetLimit(&before, CU_LIMIT_STACK_SIZE));
  CUresult r = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, size_t(1) << 40);
  CU_EXPECT(expectedCode, r);
  CU_EXPECT_OK(cuCtxGetLimit(&after, CU_LIMIT_STACK_SIZE));
  if (r != CUDA_SUCCESS) {
    EXPECT_EQ(after, before);
  }
}

CODE_CASE(api_context_Hostile, HeapLimitOf32TiB, CUDA_SUCCESS) {
  size_t before = 0, after = 0;
  CU_ASSERT_OK(cuCtxGetLimit(&before, CU_LIMIT_MALLOC_HEAP_SIZE));
  CUresult r = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, size_t(32) << 40);
  CU_EXPECT(expectedCode, r);
  CU_EXPECT_OK(cuCtxGetLimit(&after, CU_LIMIT_MALLOC_HEAP_SIZE));
  if (r != CUDA_SUCCESS) {
    EXPECT_EQ(after, before);
  }
}

// ---- host memory ---------------------------------------------------------------------------------------------------

// A page of the process with protection `prot` (unmapped at scope exit).
class ProtectedPage {
 public:
  explicit ProtectedPage(int prot) : size_(size_t(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    std::memset(p, 0x5a, size_);
    mprotect(p, size_, prot);
    page_ = p;
  }
  ~ProtectedPage() {
    if (page_) munmap(page_, size_);
  }
  void* get() const { return page_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  void* page_ = nullptr;
};

// cuMemHostRegister of one page mapped with `protection`, with `flags`: the code driver 580 answers.
void expectRegisterOfProtectedPage(int protection, unsigned flags, CUresult expectedCode) {
  ProtectedPage page(protection);
  ASSERT_NE(page.get(), nullptr);
  CUresult r = cuMemHostRegister(page.get(), page.size(), flags);
  CU_EXPECT(expectedCode, r);
  if (r == CUDA_SUCCESS) {
    CU_EXPECT_OK(cuMemHostUnregister(page.get()));
  }
}

CODE_CASE(api_memory_Hostile, RegisterReadOnlyPage, CUDA_ERROR_INVALID_VALUE) {
  expectRegisterOfProtectedPage(PROT_READ, 0, expectedCode);
}

CODE_CASE(api_memory_Hostile, RegisterReadOnlyPageWithReadOnlyFlag, CUDA_SUCCESS) {
  expectRegisterOfProtectedPage(PROT_READ, CU_MEMHOSTREGISTER_READ_ONLY, expectedCode);
}

CODE_CASE(api_memory_Hostile, RegisterInaccessiblePage, CUDA_ERROR_INVALID_VALUE) {
  expectRegisterOfProtectedPage(PROT_NONE, 0, expectedCode);
}

CODE_CASE(api_memory_Hostile, RegisterInaccessiblePageWithReadOnlyFlag, CUDA_ERROR_INVALID_VALUE) {
  expectRegisterOfProtectedPage(PROT_NONE, CU_MEMHOSTREGISTER_READ_ONLY, expectedCode);
}

const char* const kStorePtx = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry store(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry load(.param .u64 p, .param .u64 out)
{
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

using api_memory_Hostile_Fixed = ContextTest;

// Memory registered read-only is readable by kernels.
TEST_F(api_memory_Hostile_Fixed, KernelReadsReadOnlyRegisteredPage) {
  ProtectedPage page(PROT_READ);
  ASSERT_NE(page.get(), nullptr);
  CU_ASSERT_OK(cuMemHostRegister(page.get(), page.size(), CU_MEMHOSTREGISTER_READ_ONLY | CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr d = 0;
  CU_ASSERT_OK(cuMemHostGetDevicePointer(&d, page.get(), 0));
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kStorePtx));
  CUfunction load;
  CU_ASSERT_OK(cuModuleGetFunction(&load, m, "load"));
  conf::DeviceBuffer out(4);
  CUdeviceptr o = out.ptr();
  void* params[] = {&d, &o};
  CU_EXPECT_OK(cuLaunchKernel(load, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, o, 4));
  EXPECT_EQ(v, 0x5a5a5a5au);
  CU_EXPECT_OK(cuMemHostUnregister(page.get()));
  CU_EXPECT_OK(cuModuleUnload(m));
}

// ~32,700 one-byte allocations exhausted cuemu's host mappings (two per allocation); the GPU sub-allocates.
TEST_F(api_memory_Hostile_Fixed, FortyThousandOneByteAllocations) {
  std::vector<CUdeviceptr> ptrs;
  ptrs.reserve(40000);
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < 40000 && r == CUDA_SUCCESS; ++i) {
    CUdeviceptr p = 0;
    r = cuMemAlloc(&p, 1);
    if (r == CUDA_SUCCESS) ptrs.push_back(p);
  }
  CU_EXPECT_OK(r);
  EXPECT_EQ(ptrs.size(), 40000u);
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kStorePtx));
  CUfunction store;
  CU_ASSERT_OK(cuModuleGetFunction(&store, m, "store"));
  CUdeviceptr last = ptrs.back();
  void* params[] = {&last};
  CU_EXPECT_OK(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  unsigned char v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, last, 1));
  EXPECT_EQ(v, 7);
  for (CUdeviceptr p : ptrs) CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuModuleUnload(m));
}

// A kernel store into memory registered read-only.

CODE_CASE(api_memory_Hostile_Faults, KernelStoreIntoReadOnlyRegisteredPage, CUDA_ERROR_ILLEGAL_ADDRESS) {
  ProtectedPage page(PROT_READ);
  ASSERT_NE(page.get(), nullptr);
  CU_ASSERT_OK(cuMemHostRegister(page.get(), page.size(), CU_MEMHOSTREGISTER_READ_ONLY | CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr d = 0;
  CU_ASSERT_OK(cuMemHostGetDevicePointer(&d, page.get(), 0));
  CUmodule m;
  CU_ASSERT_OK(cuModuleLoadData(&m, kStorePtx));
  CUfunction store;
  CU_ASSERT_OK(cuModuleGetFunction(&store, m, "store"));
  void* params[] = {&d};
  CU_EXPECT_OK(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_EXPECT(expectedCode, cuCtxSynchronize());
}

}  // namespace
