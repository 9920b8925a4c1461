// The reliability cases (issue 24): hostile input and races against the driver API, one case per process.
//   cuemu-reliability-cases --list       name, theme, hang limit and expected-failure reason of every case
//   cuemu-reliability-cases NAME         runs one case: exit 0 when cuemu behaved, 1 with a message when it
//                                        answered something unexpected (WRONG); a crash or a hang is the
//                                        runner's to see (run.cpp).
// A case asserts what the real driver does where that is measured (conformance/expectations), and otherwise only
// what any driver must do: no host crash, no hang, an error code rather than success for garbage.
#include "cases.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace reliability {

const char* kKernels = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry store(.param .u64 p, .param .u32 v)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry addOne(.param .u64 p, .param .u32 n)
{
  .reg .u64 %rd<4>;
  .reg .u32 %r<6>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %q1, %r2, %r1;
  @%q1 bra $L_done;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  add.u32 %r5, %r5, 1;
  st.global.u32 [%rd3], %r5;
$L_done:
  ret;
}

.visible .entry forever()
{
$L_loop:
  bra.uni $L_loop;
}

.visible .entry barrierForever()
{
$L_loop:
  bar.sync 0;
  bra.uni $L_loop;
}

.visible .entry spinUntilSet(.param .u64 flag)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [flag];
$L_spin:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %q1, %r1, 0;
  @%q1 bra $L_spin;
  ret;
}

.visible .entry trapNow()
{
  trap;
}

.visible .entry loadMisaligned(.param .u64 p)
{
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  add.u64 %rd2, %rd1, 1;
  ld.global.u32 %r1, [%rd2];
  st.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry tornVectors(.param .u64 p, .param .u64 bad, .param .u32 iterations)
{
  .reg .u64 %rd<8>;
  .reg .u32 %r<12>;
  .reg .pred %q<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [bad];
  ld.param.u32 %r1, [iterations];
  mov.u32 %r2, %tid.x;
  setp.ne.u32 %q1, %r2, 0;
  @%q1 bra $L_done;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, 0;
  setp.ne.u32 %q2, %r3, 0;
  @%q2 bra $L_read;
$L_write:
  add.u32 %r4, %r4, 1;
  cvt.u64.u32 %rd3, %r4;
  st.global.v2.u64 [%rd1], {%rd3, %rd3};
  st.global.v4.u32 [%rd1+16], {%r4, %r4, %r4, %r4};
  setp.lt.u32 %q3, %r4, %r1;
  @%q3 bra $L_write;
  bra.uni $L_done;
$L_read:
  ld.volatile.global.v2.u64 {%rd4, %rd5}, [%rd1];
  setp.ne.u64 %q3, %rd4, %rd5;
  @%q3 red.global.add.u32 [%rd2], 1;
  ld.volatile.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd1+16];
  xor.b32 %r9, %r5, %r8;
  xor.b32 %r10, %r6, %r7;
  or.b32 %r9, %r9, %r10;
  setp.ne.u32 %q3, %r9, 0;
  @%q3 red.global.add.u32 [%rd2], 1;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %q3, %r4, %r1;
  @%q3 bra $L_read;
$L_done:
  ret;
}

.visible .entry fixedShape() .reqntid 64, 1, 1
{
  ret;
}
)";

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

Register::Register(Case c) { registry().push_back(c); }

[[noreturn]] void wrong(const std::string& message) {
  std::fprintf(stderr, "WRONG: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

std::string resultName(CUresult r) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) return "CUresult " + std::to_string(int(r));
  return name;
}

void expectResult(CUresult got, CUresult expected, const char* what) {
  if (got != expected) wrong(std::string(what) + ": " + resultName(got) + ", expected " + resultName(expected));
}

void expectError(CUresult got, const char* what) {
  if (got == CUDA_SUCCESS) wrong(std::string(what) + ": CUDA_SUCCESS, expected an error");
}

CUcontext setUp() {
  expectResult(cuInit(0), CUDA_SUCCESS, "cuInit");
  CUdevice device = 0;
  expectResult(cuDeviceGet(&device, 0), CUDA_SUCCESS, "cuDeviceGet");
  CUcontext context = nullptr;
  expectResult(cuCtxCreate(&context, nullptr, 0, device), CUDA_SUCCESS, "cuCtxCreate");
  return context;
}

CUmodule loadKernels() {
  CUmodule module = nullptr;
  expectResult(cuModuleLoadData(&module, kKernels), CUDA_SUCCESS, "cuModuleLoadData(kernels)");
  return module;
}

CUfunction kernel(CUmodule module, const char* name) {
  CUfunction function = nullptr;
  expectResult(cuModuleGetFunction(&function, module, name), CUDA_SUCCESS, name);
  return function;
}

CUresult launch(CUfunction f, unsigned grid, unsigned block, void** params, CUstream stream) {
  return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, params, nullptr);
}

}  // namespace reliability

using reliability::registry;

namespace {

// The cases test the libcuda.so.1 they were built with. A machine with a GPU often has NVIDIA's driver on
// LD_LIBRARY_PATH (/usr/local/nvidia/lib64), which a RUNPATH would lose to: this binary links with an RPATH
// (CMakeLists.txt), and a case stops here rather than test another driver.
bool usesBuiltDriver() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuInit), &info) || !info.dli_fname) return false;
  char* loaded = realpath(info.dli_fname, nullptr);
  char* built = realpath(RELIABILITY_CUDA_LIBRARY, nullptr);
  bool same = loaded && built && std::strcmp(loaded, built) == 0;
  if (!same)
    std::fprintf(stderr, "WRONG: cuInit comes from %s, not from the driver under test %s\n",
                 loaded ? loaded : info.dli_fname, RELIABILITY_CUDA_LIBRARY);
  std::free(loaded);
  std::free(built);
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& c : registry())
      std::printf("%s\t%s\t%u\t%s\n", c.name, c.theme, c.hangSeconds, c.expectedFailure ? c.expectedFailure : "");
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
    return 2;
  }
  for (const auto& c : registry())
    if (std::strcmp(c.name, argv[1]) == 0) {
      if (!usesBuiltDriver()) return 1;
      c.run();
      std::fflush(stdout);
      return 0;
    }
  std::fprintf(stderr, "no case named %s\n", argv[1]);
  return 2;
}
