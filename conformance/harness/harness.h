// Shared helpers for conformance cases. Cases use only the public driver API (<cuda.h>), so the same
// binary runs against cuemu's libcuda.so.1 and against NVIDIA's driver.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conf {

// The enumerator name of a CUresult from the suite's own table (not from the driver under test).
std::string ResultName(CUresult r);

// Every CUresult value cuda.h defines, in declaration order.
const std::vector<CUresult>& AllResults();

// Formats "CUDA_ERROR_X (n)" for failure messages.
std::string Describe(CUresult r);

testing::AssertionResult ResultIs(const char* expectedExpr, const char* callExpr, CUresult expected, CUresult actual);

// A kernel image embedded in the binary (PTX text, fatbinary or cubin). Text images are NUL-terminated;
// size excludes the terminator.
struct Image {
  const unsigned char* data = nullptr;
  size_t size = 0;
  const void* ptr() const { return data; }
  std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};
// Fails the current case (ADD_FAILURE) and returns an empty image when the name is unknown.
Image GetImage(std::string_view name);
std::vector<std::string> ImageNames();

// Runs `body` registered under `name` in a fresh process (the same binary, re-executed), so that process-global
// state (cuInit, primary contexts) starts from scratch. The body's return value comes back as `result`.
struct FreshResult {
  bool ran = false;     // the child started and reported a result
  int result = 0;       // the body's return value
  int exitStatus = -1;  // raw waitpid status
  std::string output;   // everything the child printed on stdout
};
FreshResult RunFresh(const std::string& name, const std::string& arg = "", int timeoutSeconds = 30);

using FreshBody = int (*)(const std::string& arg);
struct FreshRegistration {
  FreshRegistration(const char* name, FreshBody body);
};
// Called by main() for `--fresh NAME ARG`; returns the process exit code.
int RunFreshBodyInThisProcess(const std::string& name, const std::string& arg);

// Fixture: cuInit(0), device 0, and a new context (cuCtxCreate) current on this thread; destroyed afterwards.
// Cases that need a context start from a clean one, so faults or leaks of one case cannot leak into the next.
class ContextTest : public testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
};

// Fixture: cuInit(0) and device 0, no context.
class DeviceTest : public testing::Test {
 protected:
  void SetUp() override;
  CUdevice dev = 0;
};

int DeviceCount();                                     // after cuInit; 0 on failure
int Attribute(CUdevice dev, CUdevice_attribute attr);  // -1 on failure

// Loads an embedded image with cuModuleLoadData into the current context.
CUresult LoadModule(CUmodule* mod, std::string_view imageName);

// Launches f with a 1D configuration and kernelParams; synchronizes the context.
CUresult Launch1D(CUfunction f, unsigned grid, unsigned block, void** params, unsigned sharedBytes = 0,
                  CUstream stream = nullptr);

// Device buffer owned by the current context, freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  CUdeviceptr* addr() { return &ptr_; }
  CUresult status() const { return status_; }
  size_t size() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
  CUresult status_ = CUDA_SUCCESS;
};

// An exported symbol of the driver library under test (for ABI versions cuda.h no longer declares); NULL if absent.
void* SymbolAddress(const char* name);
template <class F> F Symbol(const char* name) { return reinterpret_cast<F>(SymbolAddress(name)); }

// Pops every context from this thread's stack (cleanup after cases that push).
void DrainContextStack();

// Bytes of one element of a tensor map's data type (the 1- to 8-byte types of CUtensorMapDataType).
unsigned TensorMapElementBytes(CUtensorMapDataType type);

// Golden outputs (conformance/golden/, README "Golden numerics"): a case's outputs as recorded on a GPU, keyed by
// the case name, with a hash of the kernel and inputs they were recorded for.
struct GoldenEntry {
  uint64_t hash = 0;
  std::vector<uint64_t> outputs;
};
uint64_t Fnv(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);
// The entries of the file CUEMU_CONF_GOLDEN names (none without it); *source: its path.
const std::map<std::string, GoldenEntry>& GoldenData(std::string* source);
// With CUEMU_CONF_GOLDEN_RECORD set (run-on-gpu.sh): appends one case's outputs to that file and returns true.
bool GoldenRecord(const std::string& name, uint64_t hash, const std::vector<uint64_t>& outputs);
// The golden entry of `name`, if it was recorded for `hash`; otherwise nullptr after a test failure that says why
// (CUEMU_CONF_GOLDEN not set, no entry of that name, or one recorded for other inputs or another kernel).
const GoldenEntry* GoldenFor(const std::string& name, uint64_t hash);

}  // namespace conf

// Asserts the exact CUresult of a call and prints both codes by name on mismatch.
#define CU_ASSERT(expected, call) ASSERT_PRED_FORMAT2(::conf::ResultIs, expected, call)
#define CU_EXPECT(expected, call) EXPECT_PRED_FORMAT2(::conf::ResultIs, expected, call)
#define CU_ASSERT_OK(call) CU_ASSERT(CUDA_SUCCESS, call)
#define CU_EXPECT_OK(call) CU_EXPECT(CUDA_SUCCESS, call)

// Registers a body that RunFresh can execute in a new process.
#define CONF_FRESH_BODY(name)                                               \
  static int name(const std::string& arg);                                  \
  static const ::conf::FreshRegistration name##_registration(#name, &name); \
  static int name([[maybe_unused]] const std::string& arg)

// Marks the current case not-supported (GoogleTest skip) with a reason.
#define CONF_NOT_SUPPORTED(reason) GTEST_SKIP() << "not-supported: " << reason
