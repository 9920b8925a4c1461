// The native tier (ptx/native.h, docs/native-tier.md): the same kernels run interpreted and compiled give the same
// memory and the same faults. Each case compiles its module twice, one program per tier, and runs it on fresh
// copies of its buffers. The whole suite also runs with the tier on (ptx_exec_tests_native).
#include "harness.h"
#include "kernel_generator.h"

#include <ptx/native.h>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <numeric>
#include <random>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ptx::exec;

namespace {

ptxtest::Arena& nativeArena() {
  static auto* a = new ptxtest::Arena(size_t(128) << 20);
  return *a;
}

// A kernel argument: one of the case's buffers (its device address plus `offset` bytes) or a scalar.
struct Arg {
  int buffer = -1;
  int64_t value = 0;  // the scalar, or the byte offset into the buffer
};

struct Case {
  Case(std::string f, std::string k, Dim3 g, Dim3 b, std::vector<std::vector<uint8_t>> initial)
      : file(std::move(f)), kernel(std::move(k)), grid(g), block(b), buffers(std::move(initial)) {}
  std::string file, kernel;
  std::string text;  // the module's PTX, when not from `file`
  Dim3 grid, block;
  std::vector<std::vector<uint8_t>> buffers;  // initial contents
  std::vector<Arg> args;
  uint32_t dynamicShared = 0;
  ExecConfig config{};
  uint32_t rewrites = kAllRewrites;
};

struct Outcome {
  std::vector<std::vector<uint8_t>> buffers;
  Fault fault;
  int64_t faultOffset = 0;         // the fault's address less the first buffer's (each run has buffers of its own)
  uint64_t warpsRunByCtaCode = 0;  // LaunchResult::warpsRunByCtaCode
};

// tiering: compiled at its launch unless told otherwise
Outcome runCase(const Case& c, bool native, const NativeTierPolicy& tiering = {1, 0, false}) {
  const bool was = nativeTier();
  const NativeTierPolicy policy = nativeTierPolicy();
  setNativeTier(native);
  setNativeTierPolicy(tiering);
  // a text of its own: compile() gives the program of the same text while one lives (other tests' included)
  static std::atomic<int> serial{0};
  CompileOptions options;
  options.rewrites = c.rewrites;
  CompileResult compiled =
      compile((c.text.empty() ? ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + c.file) : c.text) +
                  "\n// native tier test " + std::to_string(serial++) + "\n",
              options);
  if (!compiled.program) throw std::runtime_error(compiled.error);
  const Program& program = *compiled.program;
  const int k = findKernel(program, c.kernel);
  if (k < 0) throw std::runtime_error("no kernel " + c.kernel);
  const KernelInfo& info = kernels(program)[size_t(k)];
  std::vector<uint8_t*> device;
  for (const auto& b : c.buffers) {
    device.push_back(nativeArena().alloc<uint8_t>(b.size()));
    std::memcpy(device.back(), b.data(), b.size());
  }
  std::vector<uint8_t> params(std::max<size_t>(info.paramBytes, 1));
  for (size_t i = 0; i < c.args.size() && i < info.params.size(); ++i) {
    const Arg& a = c.args[i];
    uint64_t v =
        a.buffer >= 0 ? reinterpret_cast<uint64_t>(device[size_t(a.buffer)]) + uint64_t(a.value) : uint64_t(a.value);
    std::memcpy(params.data() + info.params[i].offset, &v, info.params[i].size);
  }
  std::vector<uint64_t> globals = ptxtest::allocateGlobals(program, nativeArena());
  LaunchParams lp;
  lp.grid = c.grid;
  lp.block = c.block;
  lp.params = params.data();
  lp.paramBytes = info.paramBytes;
  lp.memory = &nativeArena();
  lp.globalAddresses = globals.data();
  lp.dynamicSharedBytes = c.dynamicShared;
  lp.config = c.config;
  Outcome out;
  const LaunchResult result = launch(program, k, lp);
  out.fault = result.fault;
  out.warpsRunByCtaCode = result.warpsRunByCtaCode;
  if (!device.empty() && out.fault.address) {
    out.faultOffset = int64_t(out.fault.address - reinterpret_cast<uint64_t>(device[0]));
    const std::string hex = fmt::format("0x{:x}", out.fault.address);
    if (size_t at = out.fault.message.find(hex); at != std::string::npos)
      out.fault.message.replace(at, hex.size(), "<buffer 0 + " + std::to_string(out.faultOffset) + ">");
  }
  for (size_t i = 0; i < c.buffers.size(); ++i) out.buffers.emplace_back(device[i], device[i] + c.buffers[i].size());
  setNativeTier(was);
  setNativeTierPolicy(policy);
  return out;
}

template <class T> std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Runs c in both tiers: the buffers must be equal byte for byte, and so must the fault (kind, kernel, block,
// thread, PTX line, address, message). Returns the native run's outcome.
Outcome expectSameInBothTiers(const Case& c) {
  const NativeTierStats before = nativeTierStats();
  Outcome interpreted = runCase(c, false);
  Outcome native = runCase(c, true);
  EXPECT_GT(nativeTierStats().kernelsCompiled, before.kernelsCompiled)
      << c.kernel << ": the native tier compiled nothing (" << nativeTierStats().lastRefusal << ")";
  EXPECT_GT(nativeTierStats().launchesCompiled, before.launchesCompiled) << c.kernel << ": no launch ran its code";
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const auto& a = interpreted.buffers[i];
    const auto& b = native.buffers[i];
    size_t differ = 0;
    while (differ < a.size() && a[differ] == b[differ]) ++differ;
    EXPECT_EQ(differ, a.size()) << c.kernel << ": buffer " << i << " differs first at byte " << differ;
  }
  EXPECT_EQ(native.fault.kind, interpreted.fault.kind) << c.kernel << ": " << native.fault.message;
  EXPECT_EQ(native.fault.kernel, interpreted.fault.kernel) << c.kernel;
  EXPECT_EQ(native.fault.ptxLine, interpreted.fault.ptxLine) << c.kernel;
  EXPECT_EQ(native.faultOffset, interpreted.faultOffset) << c.kernel;
  EXPECT_EQ(native.fault.address != 0, interpreted.fault.address != 0) << c.kernel;
  EXPECT_EQ(native.fault.block.x, interpreted.fault.block.x) << c.kernel;
  EXPECT_EQ(native.fault.thread.x, interpreted.fault.thread.x) << c.kernel;
  EXPECT_EQ(native.fault.thread.y, interpreted.fault.thread.y) << c.kernel;
  EXPECT_EQ(native.fault.message, interpreted.fault.message) << c.kernel;
  return native;
}

class NativeTier : public testing::Test {
 protected:
  void SetUp() override {
    if (!nativeTierUnavailable().empty()) GTEST_SKIP() << nativeTierUnavailable();
    // the compiler itself under test: no code from the on-disk cache (NativeCache tests it), unless asked
    ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 0);
  }
};

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i) * scale + offset;
  return v;
}

// bench.ptx's vector add of 1000 elements: not a multiple of the block, so the last warps are partial.
Case vectorAdd() {
  const int n = 1000;
  Case vadd{"bench.ptx",
            "vadd",
            Dim3{4},
            Dim3{256},
            {bytesOf(ramp(n, 0.5f, 1)), bytesOf(ramp(n, -0.25f, 3)), std::vector<uint8_t>(n * 4)}};
  vadd.args = {{0}, {1}, {2}, {-1, n}};
  return vadd;
}

// bench.ptx's barrier reduction over `blocks` CTAs of 256 threads
Case reduction(int blocks) {
  Case c{"bench.ptx",
         "reduce",
         Dim3{uint32_t(blocks)},
         Dim3{256},
         {bytesOf(ramp(blocks * 256, 0.125f, -7)), std::vector<uint8_t>(size_t(blocks) * 4)}};
  c.args = {{0}, {1}};
  return c;
}

// bench.ptx's 16x16 shared-tile matmul of n x n matrices
Case tiledMatmul(int n) {
  Case c{"bench.ptx",
         "matmul",
         Dim3{uint32_t(n / 16), uint32_t(n / 16)},
         Dim3{16, 16},
         {bytesOf(ramp(n * n, 0.01f, -1)), bytesOf(ramp(n * n, -0.02f, 2)), std::vector<uint8_t>(size_t(n) * n * 4)}};
  c.args = {{0}, {1}, {2}, {-1, n}};
  return c;
}

}  // namespace

TEST_F(NativeTier, VectorAddAndFmaLoop) {
  expectSameInBothTiers(vectorAdd());
  Case fma{"bench.ptx", "fmaloop", Dim3{3}, Dim3{96}, {std::vector<uint8_t>(3 * 96 * 4)}};
  fma.args = {{0}, {-1, 37}};
  Outcome out = expectSameInBothTiers(fma);
  float first = 0;
  std::memcpy(&first, out.buffers[0].data() + 4, 4);
  EXPECT_NE(first, 0.0f);  // it ran
}

TEST_F(NativeTier, DivergentLoopsAndBranches) {
  std::vector<unsigned> in(777);
  std::iota(in.begin(), in.end(), 1u);
  Case collatz{"bench.ptx", "collatz", Dim3{7}, Dim3{128}, {bytesOf(in), std::vector<uint8_t>(in.size() * 4)}};
  collatz.args = {{0}, {1}, {-1, int64_t(in.size())}};
  expectSameInBothTiers(collatz);
  std::vector<int> values(300);
  std::mt19937 rng(7);
  for (int& v : values) v = int(rng() % 1000);
  Case divergent{"basic.ptx", "divergent", Dim3{3}, Dim3{128}, {bytesOf(values), std::vector<uint8_t>(300 * 4)}};
  divergent.args = {{0}, {1}, {-1, 300}};
  expectSameInBothTiers(divergent);
  Case calls{"basic.ptx",
             "calls",
             Dim3{1},
             Dim3{64},
             {bytesOf(std::vector<int>(values.begin(), values.begin() + 64)), std::vector<uint8_t>(64 * 4),
              std::vector<uint8_t>(64 * 4)}};
  calls.args = {{0}, {1}, {2}};
  expectSameInBothTiers(calls);
}

TEST_F(NativeTier, BarriersSharedMemoryAndWarpCollectives) {
  expectSameInBothTiers(reduction(16));
  expectSameInBothTiers(tiledMatmul(64));
  std::vector<int> values(96);
  std::iota(values.begin(), values.end(), -20);
  Case warpops{"basic.ptx", "warpops", Dim3{1}, Dim3{96}, {bytesOf(values), std::vector<uint8_t>(96 * 6 * 4)}};
  warpops.args = {{0}, {1}};
  expectSameInBothTiers(warpops);
  Case dynshared{
      "basic.ptx", "dynshared", Dim3{2}, Dim3{64}, {bytesOf(ramp(128, 1, 0)), std::vector<uint8_t>(128 * 4)}};
  dynshared.args = {{0}, {1}};
  dynshared.dynamicShared = 64 * 4;
  expectSameInBothTiers(dynshared);
}

TEST_F(NativeTier, Atomics) {
  std::vector<uint8_t> bytes(20000);
  std::mt19937 rng(3);
  for (uint8_t& b : bytes) b = uint8_t(rng());
  // one host thread: the bins' final values do not depend on the order, the atomics' order does not matter
  Case histogram{"bench.ptx", "histogram", Dim3{20}, Dim3{256}, {bytes, std::vector<uint8_t>(256 * 4)}};
  histogram.args = {{0}, {1}, {-1, int64_t(bytes.size())}};
  expectSameInBothTiers(histogram);
  Case atomics{"basic.ptx",
               "atomics",
               Dim3{1},
               Dim3{128},
               {std::vector<uint8_t>(16), std::vector<uint8_t>(16), std::vector<uint8_t>(4), std::vector<uint8_t>(8),
                std::vector<uint8_t>(8)}};
  atomics.args = {{0}, {1}, {2}, {3}, {4}};
  atomics.config.deterministic = true;  // the float sums are the same in any order of 0.5s, the CAS winner is not
  expectSameInBothTiers(atomics);
}

// Both CTAs of oob and trapper fault: which one reports first depends on the host threads' timing, in both tiers
// (and on a GPU), so the fault cases run on one host thread, where CTA 0 runs first.
TEST_F(NativeTier, FaultsReportTheSameKernelBlockThreadLineAndAddress) {
  Case oob{"basic.ptx", "oob", Dim3{2}, Dim3{32}, {std::vector<uint8_t>(64)}};
  oob.args = {{0}, {-1, 16 * 1024}};
  oob.config.threads = 1;
  Outcome out = expectSameInBothTiers(oob);
  EXPECT_EQ(out.fault.kind, FaultKind::IllegalAddress);
  Case misaligned{"basic.ptx", "misaligned", Dim3{1}, Dim3{1}, {std::vector<uint8_t>(64)}};
  misaligned.args = {{0}};
  out = expectSameInBothTiers(misaligned);
  EXPECT_EQ(out.fault.kind, FaultKind::MisalignedAddress);
  Case trapper{"basic.ptx", "trapper", Dim3{2}, Dim3{64}, {}};
  trapper.config.threads = 1;
  out = expectSameInBothTiers(trapper);
  EXPECT_EQ(out.fault.kind, FaultKind::Trap);
}

// Whether this run compiles vector prefixes as the tests count them: not with registers in SSA values
// (CUEMU_NATIVE_REGISTERS=ssa: every op's block keeps its values there), nor where lowering rewrites are off (the
// prefix knows the fused forms of the accesses and of the guarded exit; ptx_exec_tests_no_rewrites); and whether
// CTAs run through their entry: not where runtime fast paths are off either (ptx_exec_tests_no_runtime_fast_paths).
bool vectorPrefixExpected() {
  const char* registers = std::getenv("CUEMU_NATIVE_REGISTERS");
  return !(registers && std::strcmp(registers, "ssa") == 0) && (defaultRewrites() | kRuntimeFastPaths) == kAllRewrites;
}
bool ctaEntryExpected() { return vectorPrefixExpected() && defaultRewrites() == kAllRewrites; }

// An element-wise kernel of the vector add's shape, as nvcc writes it: thread i = %ctaid.x * %ntid.x + %tid.x (%r1)
// runs `body` where i < n (the last parameter, %r2). The first two parameters are arrays of `bytes`-byte elements:
// %rd5 and %rd7 are the addresses of their element i, %rd4 its byte offset; `third` loads the third parameter, of
// type `thirdType`.
std::string elementwiseKernel(const char* name, const char* thirdType, const char* third, unsigned bytes,
                              const char* body) {
  return fmt::format(R"(
.visible .entry {0}(.param .u64 p0, .param .u64 p1, .param .{1} p2, .param .u32 p3) {{
  .reg .pred %p<2>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<8>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [p0];
  ld.param.u64 %rd2, [p1];
  {2}
  ld.param.u32 %r2, [p3];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra $L_done;
  cvta.to.global.u64 %rd3, %rd1;
  mul.wide.s32 %rd4, %r1, {3};
  add.s64 %rd5, %rd3, %rd4;
  cvta.to.global.u64 %rd6, %rd2;
  add.s64 %rd7, %rd6, %rd4;
{4}
$L_done:
  ret;
}}
)",
                     name, thirdType, third, bytes, body);
}
constexpr const char* kElementwiseHeader = ".version 8.0\n.target sm_90\n.address_size 64\n";

// A vector add whose sum goes through cvt.rzi (no op of the prefix): the prefix ends there, and the cvt reads the
// sum from the register file.
std::string vectorAddThenConvert() {
  return kElementwiseHeader + elementwiseKernel("vaddcvt", "u64", "ld.param.u64 %rd8, [p2];", 4, R"(
  ld.global.f32 %f1, [%rd7];
  ld.global.f32 %f2, [%rd5];
  add.f32 %f3, %f2, %f1;
  cvt.rzi.s32.f32 %r6, %f3;
  cvta.to.global.u64 %rd9, %rd8;
  add.s64 %rd10, %rd9, %rd4;
  st.global.u32 [%rd10], %r6;)");
}

// y = a * x + y in f32 (fma) and the same with f64 arrays and an f64 add after the fma: the prefix's other float ops
// and its 8-byte accesses (y's address stays a register: the add is not fused into the load and the store).
std::string axpy() {
  return kElementwiseHeader + elementwiseKernel("saxpy", "f32", "ld.param.f32 %f1, [p2];", 4, R"(
  ld.global.f32 %f2, [%rd5];
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd7], %f4;)") +
         elementwiseKernel("daxpy", "f64", "ld.param.f64 %fd1, [p2];", 8, R"(
  ld.global.f64 %fd2, [%rd5];
  ld.global.f64 %fd3, [%rd7];
  fma.rn.f64 %fd4, %fd1, %fd2, %fd3;
  add.f64 %fd5, %fd4, %fd2;
  st.global.f64 [%rd7], %fd5;)");
}

// numba-cuda's c[i] = a[i] + b[i] as it writes it: a 64-bit index against a 64-bit size (setp.ge.s64 and its exit),
// Python's negative-index wrap (shr.s64 by 63, and with the extent, add), the byte offset by shl.b64, and loads and
// stores through the sum of two registers: 64-bit compares and shifts by an immediate in the prefix.
constexpr const char* kNumbaAdd = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry nbadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pn) {
  .reg .pred %p<2>;
  .reg .f32 %f<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<27>;
  ld.param.u64 %rd2, [pa];
  ld.param.u64 %rd4, [pb];
  ld.param.u64 %rd6, [pc];
  ld.param.u64 %rd8, [pn];
  mov.u32 %r1, %tid.x;
  cvt.s64.s32 %rd9, %r1;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %ctaid.x;
  mul.wide.s32 %rd10, %r2, %r3;
  add.s64 %rd1, %rd10, %rd9;
  setp.ge.s64 %p1, %rd1, %rd8;
  @%p1 bra $L_done;
  cvta.to.global.u64 %rd11, %rd2;
  shr.s64 %rd12, %rd1, 63;
  and.b64 %rd13, %rd12, %rd8;
  add.s64 %rd14, %rd13, %rd1;
  shl.b64 %rd15, %rd14, 2;
  add.s64 %rd16, %rd11, %rd15;
  cvta.to.global.u64 %rd19, %rd4;
  add.s64 %rd21, %rd19, %rd15;
  ld.global.f32 %f1, [%rd21];
  ld.global.f32 %f2, [%rd16];
  add.f32 %f3, %f2, %f1;
  cvta.to.global.u64 %rd24, %rd6;
  add.s64 %rd26, %rd24, %rd15;
  st.global.f32 [%rd26], %f3;
$L_done:
  ret;
}
)";

// Runs c compiled after `decoy` (compiled too), which leaves other values in the warps' register files, and expects
// the interpreter's memory: a value the prefix computed and an op after it reads must have gone to the register file
// (the interpreter's run of c itself would leave the same values there).
void expectTheInterpretersMemoryAfter(const Case& decoy, const Case& c) {
  runCase(decoy, true);
  const Outcome native = runCase(c, true);
  const Outcome interpreted = runCase(c, false);
  for (size_t i = 0; i < c.buffers.size(); ++i) EXPECT_EQ(native.buffers[i], interpreted.buffers[i]) << "buffer " << i;
}

// The vector prefix (docs/native-tier.md, "Vector prefix"): the vector add's first six ops run as vector code for
// whole warps, and every warp its checks turn away runs on through the kernel's switch with the same results and
// faults: a partial last warp (lanes exit), indices that are not consecutive in a warp (a 16 x 16 block), an access
// past the buffer's end, a misaligned array. CUEMU_NATIVE_VECTOR=0 compiles no prefix.
TEST_F(NativeTier, TheVectorPrefixLeavesWhatItsChecksTurnAwayToTheSwitch) {
  const uint64_t prefixed = vectorPrefixExpected() ? 1 : 0;
  const auto prefixOps = [] { return nativeTierStats().vectorPrefixOps; };
  uint64_t before = prefixOps();
  Case guarded = vectorAdd();  // (the output's elements past n must stay as they are)
  guarded.buffers[2] = bytesOf(std::vector<float>(1024, -7.0f));
  expectSameInBothTiers(guarded);
  EXPECT_EQ(prefixOps(), before + prefixed * 6) << "setp and its exit, two loads, the add, the store";
  Case whole = guarded;  // (no lane exits: the partial warp's predicate is false in every lane there)
  whole.args[3].value = 1024;
  whole.buffers = {bytesOf(ramp(1024, 2, 0)), bytesOf(ramp(1024, 3, 1)), std::vector<uint8_t>(4096)};
  expectTheInterpretersMemoryAfter(whole, guarded);
  Case converted = guarded;
  converted.text = vectorAddThenConvert();
  converted.kernel = "vaddcvt";
  Case convertedDecoy = whole;
  convertedDecoy.text = vectorAddThenConvert();
  convertedDecoy.kernel = "vaddcvt";
  before = prefixOps();
  expectTheInterpretersMemoryAfter(convertedDecoy, converted);
  EXPECT_EQ(prefixOps(), before + prefixed * 2 * 5) << "setp and its exit, two loads, the add";
  Case square = vectorAdd();
  square.grid = Dim3{2};
  square.block = Dim3{16, 16};
  expectSameInBothTiers(square);
  Case past = vectorAdd();
  past.args[3].value = 1024 * 1024;  // n past the buffers: the first warp past them faults
  past.grid = Dim3{8};
  past.config.threads = 1;
  EXPECT_EQ(expectSameInBothTiers(past).fault.kind, FaultKind::IllegalAddress);
  Case misaligned = vectorAdd();
  misaligned.args[1].value = 2;
  EXPECT_EQ(expectSameInBothTiers(misaligned).fault.kind, FaultKind::MisalignedAddress);
  ::setenv("CUEMU_NATIVE_VECTOR", "0", 1);
  before = prefixOps();
  expectSameInBothTiers(vectorAdd());
  EXPECT_EQ(prefixOps(), before);
  ::unsetenv("CUEMU_NATIVE_VECTOR");
}

// The CTA entry (runtime fast path compiled-ctas): where the vector prefix reaches the kernel's exit, a CTA of full
// warps that its context set up before runs them all in one call of the kernel's code, and a warp that code cannot
// finish goes on through the scheduler from where the code stopped, with the same memory and faults: the first CTA of
// each context runs as before (nothing is placed yet), a warp in the middle of the last CTA stops where some of its
// lanes exit and the warps after it exit whole; saxpy, daxpy and numba-cuda's add run whole CTAs too; accesses past
// buffers of 1000 elements fault. Off, no warp runs that way and the results are the same.
TEST_F(NativeTier, CompiledCtasRunWholeWarpsAndLeaveTheRestToTheScheduler) {
  const bool entry = ctaEntryExpected();
  const int n = 16 * 256 - 100;
  Case vadd{"bench.ptx",
            "vadd",
            Dim3{16},
            Dim3{256},
            {bytesOf(ramp(n, 0.5f, 1)), bytesOf(ramp(n, -0.25f, 3)), bytesOf(std::vector<float>(16 * 256, -7.0f))}};
  vadd.args = {{0}, {1}, {2}, {-1, n}};
  vadd.config.threads = 1;
  // CTAs 1-14 in the code, and CTA 15's first four warps; its fifth has lanes past n, the others none in it (CTA 0 is
  // its context's first: nothing is placed yet)
  const uint64_t byCode = entry ? 14 * 8 + 4 : 0;
  EXPECT_EQ(expectSameInBothTiers(vadd).warpsRunByCtaCode, byCode);
  Case whole = vadd;  // (no lane exits: the stopped warp's predicate must come from the code, not from this run)
  whole.args[3].value = 16 * 256;
  whole.buffers = {bytesOf(ramp(16 * 256, 2, 0)), bytesOf(ramp(16 * 256, 3, 1)), std::vector<uint8_t>(16 * 1024)};
  expectTheInterpretersMemoryAfter(whole, vadd);
  // f32 fma, f64 accesses, fma and add; NaN operands (the f64 ops keep an operand's payload, the f32 ones give the
  // canonical NaN) and signed zeros among the values
  std::vector<float> xs = ramp(16 * 256, 0.75f, -9), ys = ramp(16 * 256, -1.5f, 4);
  std::vector<double> xd(16 * 256), yd(16 * 256);
  for (size_t i = 0; i < xs.size(); ++i) {
    xd[i] = double(xs[i]) / 3, yd[i] = double(ys[i]) * 7;
    if (i % 97 == 5) xs[i] = std::bit_cast<float>(0x7fc01234u), xd[i] = std::bit_cast<double>(0xfff8000000abcdefull);
    if (i % 89 == 7) ys[i] = -0.0f, yd[i] = -0.0;
  }
  Case saxpy{"", "saxpy", Dim3{16}, Dim3{256}, {bytesOf(xs), bytesOf(ys)}};
  saxpy.text = axpy();
  saxpy.args = {{0}, {1}, {-1, int64_t(std::bit_cast<uint32_t>(-2.5f))}, {-1, n}};
  saxpy.config.threads = 1;
  EXPECT_EQ(expectSameInBothTiers(saxpy).warpsRunByCtaCode, byCode);
  Case daxpy{"", "daxpy", Dim3{16}, Dim3{256}, {bytesOf(xd), bytesOf(yd)}};
  daxpy.text = axpy();
  daxpy.args = {{0}, {1}, {-1, int64_t(std::bit_cast<uint64_t>(0.3))}, {-1, n}};
  daxpy.config.threads = 1;
  EXPECT_EQ(expectSameInBothTiers(daxpy).warpsRunByCtaCode, byCode);
  Case numba = vadd;
  numba.file.clear();
  numba.text = kNumbaAdd;
  numba.kernel = "nbadd";
  EXPECT_EQ(expectSameInBothTiers(numba).warpsRunByCtaCode, byCode);
  Case past = vadd;  // (buffers of 1000 elements: the accesses run past the last of them)
  past.buffers = {bytesOf(ramp(1000, 0.5f, 1)), bytesOf(ramp(1000, -0.25f, 3)), std::vector<uint8_t>(4000)};
  EXPECT_EQ(expectSameInBothTiers(past).fault.kind, FaultKind::IllegalAddress);
  Case off = vadd;
  off.rewrites = kAllRewrites & ~rewriteBit(Rewrite::CompiledCtas);
  EXPECT_EQ(expectSameInBothTiers(off).warpsRunByCtaCode, 0u);
}

// The inline budget (docs/native-tier.md, "Inlining budget"): ops over it call the interpreter's handlers, and give
// the same memory and faults; none inlined (0), and a budget that inlines some ops of each kernel.
TEST_F(NativeTier, OpsOverTheInlineBudgetCallTheInterpretersHandlers) {
  const uint32_t was = nativeInlineBudget();
  for (uint32_t budget : {0u, 3000u}) {
    SCOPED_TRACE(fmt::format("budget {}", budget));
    setNativeInlineBudget(budget);
    const NativeTierStats before = nativeTierStats();
    expectSameInBothTiers(reduction(4));
    expectSameInBothTiers(tiledMatmul(32));
    std::vector<unsigned> in(300);
    std::iota(in.begin(), in.end(), 1u);
    Case collatz{"bench.ptx", "collatz", Dim3{3}, Dim3{128}, {bytesOf(in), std::vector<uint8_t>(in.size() * 4)}};
    collatz.args = {{0}, {1}, {-1, int64_t(in.size())}};
    expectSameInBothTiers(collatz);
    Case oob{"basic.ptx", "oob", Dim3{2}, Dim3{32}, {std::vector<uint8_t>(64)}};
    oob.args = {{0}, {-1, 16 * 1024}};
    oob.config.threads = 1;
    EXPECT_EQ(expectSameInBothTiers(oob).fault.kind, FaultKind::IllegalAddress);
    const NativeTierStats after = nativeTierStats();
    EXPECT_GT(after.opsOverBudget, before.opsOverBudget);
    if (budget == 0)
      EXPECT_EQ(after.opsInlined, before.opsInlined);
    else
      EXPECT_GT(after.opsInlined, before.opsInlined);
  }
  setNativeInlineBudget(was);
}

// The tier's switch and its report: what compiled, and that a program is compiled once for all its launches.
TEST_F(NativeTier, CompilesOncePerProgramAndReports) {
  const bool was = nativeTier();
  const NativeTierPolicy policy = nativeTierPolicy();
  setNativeTier(true);
  setNativeTierPolicy({1, 0, false});
  CompileResult compiled =
      compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/bench.ptx") + "\n// native tier: compiles once\n");
  ASSERT_TRUE(compiled.program) << compiled.error;
  const int k = findKernel(*compiled.program, "vadd");
  const KernelInfo& info = kernels(*compiled.program)[size_t(k)];
  float* a = nativeArena().alloc<float>(64);
  ptxtest::Params p(info);
  p.arg(a).arg(a).arg(a).arg(64);
  const NativeTierStats before = nativeTierStats();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(*compiled.program, k, ptxtest::launchParams(Dim3{1}, Dim3{64}, p, nativeArena())).ok());
  const NativeTierStats after = nativeTierStats();
  EXPECT_EQ(after.kernelsCompiled, before.kernelsCompiled + 1);
  EXPECT_GT(after.opsInlined, before.opsInlined);
  EXPECT_GT(after.compileNs, before.compileNs);
  EXPECT_GT(after.codeBytes, before.codeBytes);
  setNativeTier(was);
  setNativeTierPolicy(policy);
}

// Tiering (NativeTierPolicy): a kernel is interpreted until hot, by launches or by threads, then compiled in the
// background (or at the hot launch itself), and every launch gives the same memory.
// A process that exits while a background compile runs exits as it would without the tier: the compile's process
// is killed, no LLVM code runs on a thread of the exiting process (a compiler thread here crashed it: "LLVM ERROR:
// out of memory", status 134).
// In a death test's child: switches the tier on and launches vadd once (bench.ptx, a text of its own: `tag`) with a
// policy that queues its background compile at that launch; leaves with status 3 or 4 where that fails. The
// program it returns stays alive while the caller waits.
// (withFmaLoop: then bench.ptx's FMA loop too, whose compile waits in the queue behind the vector add's)
CompileResult launchVaddWithABackgroundCompile(const std::string& tag, bool withFmaLoop = false) {
  setNativeTier(true);
  setNativeTierPolicy({1, 0, true});
  float* a = nativeArena().alloc<float>(256);
  CompileResult r =
      compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/bench.ptx") + "\n// native tier: " + tag + "\n");
  if (!r.program) std::_Exit(3);
  const int k = findKernel(*r.program, "vadd");
  ptxtest::Params p(kernels(*r.program)[size_t(k)]);
  p.arg(a).arg(a).arg(a).arg(256);
  if (!launch(*r.program, k, ptxtest::launchParams(Dim3{1}, Dim3{256}, p, nativeArena())).ok()) std::_Exit(4);
  if (withFmaLoop) {
    const int f = findKernel(*r.program, "fmaloop");
    ptxtest::Params q(kernels(*r.program)[size_t(f)]);
    q.arg(a).arg(3);
    if (!launch(*r.program, f, ptxtest::launchParams(Dim3{1}, Dim3{256}, q, nativeArena())).ok()) std::_Exit(7);
  }
  return r;
}

TEST_F(NativeTier, ExitDuringABackgroundCompile) {
  EXPECT_EXIT(
      {
        ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 1);
        const CompileResult r = launchVaddWithABackgroundCompile("exit during a compile");
        // the compile reads the handler bitcode for seconds: exit in the middle of it
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::fprintf(stderr, "exiting\n");
        std::exit(0);
      },
      testing::ExitedWithCode(0), "exiting");
}

// Whether this process has a child process: the background compile's (a process whose parent, the fourth field of
// /proc/<pid>/stat, is this one).
bool hasChildProcess() {
  std::error_code ec;
  const std::string self = std::to_string(getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const size_t end = line.rfind(')');  // the command, in parentheses, may hold spaces
    if (end == std::string::npos) continue;
    std::istringstream fields(line.substr(end + 1));
    std::string state, parent;
    if (fields >> state >> parent && parent == self) return true;
  }
  return false;
}

// With the environment's cache on, the compile in flight at exit is left to finish in its own process
// (CUEMU_NATIVE_FINISH_AT_EXIT), and the compiles still queued finish in one more: the program exits as before, and
// both kernels' code appears in the cache afterwards, so that the program's next run has them at their hot launches
// (NativeCache tests that load).
TEST_F(NativeTier, ACompileInFlightAtExitFinishesIntoTheCache) {
  const std::string dir = testing::TempDir() + "cuemu-native-finish-at-exit-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  auto objects = [&] {
    size_t n = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) n += entry.path().extension() == ".o";
    return n;
  };
  EXPECT_EXIT(
      {
        ::unsetenv("CUEMU_NATIVE_CACHE_DISABLE");
        ::unsetenv("CUEMU_NATIVE_FINISH_AT_EXIT");
        ::setenv("CUEMU_NATIVE_CACHE_PATH", dir.c_str(), 1);
        const CompileResult r = launchVaddWithABackgroundCompile("a compile finishing after exit", true);
        // exit once the compile's process runs (it prepares the handler bitcode for a second or more first)
        for (int waited = 0; !hasChildProcess() && waited < 200; ++waited)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!hasChildProcess()) std::_Exit(5);
        if (objects() != 0) std::_Exit(6);
        std::fprintf(stderr, "exiting\n");
        std::exit(0);
      },
      testing::ExitedWithCode(0), "exiting");
  // the compiles' processes, left running, write the code (1.5-3 s: each prepares the handler bitcode, the folder
  // being new; 34 s at nice 10 beside three busy processes and ctest -j2)
  for (int waited = 0; objects() < 2 && waited < 240 * 20; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(objects(), 2u) << "the vector add's and the FMA loop's code in " << dir;
  std::filesystem::remove_all(dir);
}

// Two processes whose same kernel gets hot at once (a program run twice at once) compile it once: the second's
// compile process waits for the first's lock on the kernel's key (tier.cpp: CompileLock) and then loads the code the
// first wrote to the cache. Each process is this test binary run afresh (CompileOnceHelper) on an emptied cache folder;
// it exits with 1 where its compile wrote the code, 0 where it found it in the cache. Without the lock both compile
// (both prepare the handler bitcode for a second or more, from the same moment) and both write.
TEST_F(NativeTier, CompileOnceHelper) {
  const char* dir = std::getenv("CUEMU_NATIVE_COMPILE_ONCE_HELPER");
  if (!dir) GTEST_SKIP() << "run by TwoProcessesCompilingOneKernelCompileItOnce";
  ::unsetenv("CUEMU_NATIVE_CACHE_DISABLE");
  ::setenv("CUEMU_NATIVE_CACHE_PATH", dir, 1);
  const CompileResult kept = launchVaddWithABackgroundCompile("two processes compiling one kernel");
  // (the compile queued at the hot launch; its process reports when the code is in the cache: 1.5-3 s, more while
  // the other helper's compile holds the lock)
  for (int waited = 0;
       nativeTierStats().backgroundCompiles == 0 && nativeTierStats().kernelsRefused == 0 && waited < 240 * 20;
       ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const NativeTierStats s = nativeTierStats();
  std::_Exit(s.backgroundCompiles == 1 && s.kernelsRefused == 0 ? int(s.cacheWrites) : 9);
}
TEST_F(NativeTier, TwoProcessesCompilingOneKernelCompileItOnce) {
  const std::string dir = testing::TempDir() + "cuemu-native-compile-once-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const std::string prefix = "CUEMU_NATIVE_COMPILE_ONCE_HELPER=";
  std::vector<std::string> environment = {prefix + dir};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) environment.push_back(*e);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=NativeTier.CompileOnceHelper";
  char* argv[] = {self.data(), filter.data(), nullptr};
  pid_t children[2];
  for (pid_t& child : children) ASSERT_EQ(posix_spawn(&child, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
  int wrote = 0;
  for (pid_t child : children) {
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_LE(WEXITSTATUS(status), 1) << "a helper's compile did not load its kernel's code";
    wrote += WEXITSTATUS(status);
  }
  EXPECT_EQ(wrote, 1) << "processes whose compiles wrote the kernel's code (" << dir << ")";
  size_t locks = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) locks += entry.path().extension() == ".lock";
  EXPECT_EQ(locks, 0u) << "lock files left in " << dir;
  std::filesystem::remove_all(dir);
}

// A launch that runs long gets hot while it runs (its time, NativeTierPolicy::hotInterpretedMs) and switches to the
// kernel's code for the CTAs it starts after the compile (native::upgrade, polled every 64 CTAs a thread starts): one
// launch of 512 CTAs on one host thread, hot after 1 ms, compiled at that poll (background off), and its results the
// interpreter's.
TEST_F(NativeTier, ALongLaunchSwitchesToCompiledCodeWhileItRuns) {
  Case fma{"bench.ptx", "fmaloop", Dim3{512}, Dim3{32}, {std::vector<uint8_t>(512 * 32 * 4)}};
  fma.args = {{0}, {-1, 2000}};
  fma.config.threads = 1;
  const Outcome interpreted = runCase(fma, false);
  const NativeTierStats before = nativeTierStats();
  const Outcome switched = runCase(fma, true, NativeTierPolicy{1000, uint64_t(1) << 40, false, 1});
  const NativeTierStats after = nativeTierStats();
  EXPECT_EQ(after.upgradesDuringLaunch - before.upgradesDuringLaunch, 1u) << after.lastRefusal;
  EXPECT_EQ(after.launchesCompiled, before.launchesCompiled) << "the launch started interpreted";
  EXPECT_EQ(after.kernelsCompiled - before.kernelsCompiled, 1u);
  EXPECT_EQ(switched.buffers, interpreted.buffers);
  EXPECT_EQ(switched.fault.kind, FaultKind::None);
}

TEST_F(NativeTier, HotKernelsCompileAndLaterLaunchesRunTheirCode) {
  const bool was = nativeTier();
  const NativeTierPolicy policy = nativeTierPolicy();
  setNativeTier(true);
  static std::atomic<int> serial{0};
  constexpr int n = 1000;
  float* a = nativeArena().alloc<float>(n);
  float* b = nativeArena().alloc<float>(n);
  float* c = nativeArena().alloc<float>(n);
  for (int i = 0; i < n; ++i) a[i] = float(i) * 0.5f, b[i] = float(n - i) * 0.25f;
  struct Counts {
    uint64_t compiled, background, launchesCompiled, launchesInterpreted;
  };
  auto counts = [] {
    const NativeTierStats s = nativeTierStats();
    return Counts{s.kernelsCompiled, s.backgroundCompiles, s.launchesCompiled, s.launchesInterpreted};
  };
  // one launch of a fresh program's vadd, with 256-thread blocks; returns what changed in the counts
  auto program = [&] {
    CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/bench.ptx") +
                              "\n// native tier: tiering " + std::to_string(serial++) + "\n");
    EXPECT_TRUE(r.program) << r.error;
    return r;
  };
  auto run = [&](const CompileResult& r, uint32_t blocks, bool deterministic) {
    const int k = findKernel(*r.program, "vadd");
    ptxtest::Params p(kernels(*r.program)[size_t(k)]);
    p.arg(a).arg(b).arg(c).arg(n);
    std::fill(c, c + n, -1.0f);
    LaunchParams lp = ptxtest::launchParams(Dim3{blocks}, Dim3{256}, p, nativeArena());
    lp.config.deterministic = deterministic;
    const Counts before = counts();
    EXPECT_TRUE(launch(*r.program, k, lp).ok());
    const int covered = std::min<int>(n, int(blocks) * 256);
    for (int i = 0; i < covered; ++i) EXPECT_EQ(c[i], a[i] + b[i]) << "element " << i;
    const Counts after = counts();
    return Counts{after.compiled - before.compiled, after.background - before.background,
                  after.launchesCompiled - before.launchesCompiled,
                  after.launchesInterpreted - before.launchesInterpreted};
  };

  // hot at the third launch: compiled in the background, the fourth launch runs the code
  constexpr uint32_t kNever = 0xffffffffu;  // not hot by interpreted time (the last case)
  setNativeTierPolicy({3, uint64_t(1) << 40, true, kNever});
  CompileResult first = program();
  for (int launchNo = 1; launchNo <= 3; ++launchNo) {
    const Counts d = run(first, 4, false);
    EXPECT_EQ(d.launchesInterpreted, 1u) << "launch " << launchNo;
    EXPECT_EQ(d.launchesCompiled, 0u) << "launch " << launchNo;
  }
  waitForNativeCompiles();
  Counts d = run(first, 4, false);
  EXPECT_EQ(d.launchesCompiled, 1u);
  EXPECT_EQ(d.launchesInterpreted, 0u);
  EXPECT_EQ(d.compiled, 1u) << "the background compile's code, loaded at this launch";

  // With background compiles off, a fresh program whose first launch (of `blocks` blocks) stays interpreted and
  // whose second (4 blocks) is the hot one: that launch compiles the kernel and runs its code.
  auto hotAtTheSecondLaunch = [&](const NativeTierPolicy& tiering, uint32_t blocks, bool deterministic) {
    setNativeTierPolicy(tiering);
    CompileResult r = program();
    EXPECT_EQ(run(r, blocks, deterministic).launchesInterpreted, 1u);
    const Counts hot = run(r, 4, deterministic);
    EXPECT_EQ(hot.compiled, 1u);
    EXPECT_EQ(hot.background, 0u);
    EXPECT_EQ(hot.launchesCompiled, 1u);
  };
  // deterministic launches, hot by launches
  hotAtTheSecondLaunch({2, uint64_t(1) << 40, false, kNever}, 4, true);
  // hot by threads: 1024 + 1024 reach 2048 at the second launch
  hotAtTheSecondLaunch({100, 2048, false, kNever}, 4, false);
  // hot by interpreted time: a launch of 800,000 warps takes more than the millisecond (at tens of nanoseconds a
  // warp; small launches never reach it), so it gets hot while it runs and switches to the compiled code
  // (ALongLaunchSwitchesToCompiledCodeWhileItRuns), and the next launch runs the code from its start
  setNativeTierPolicy({100, uint64_t(1) << 40, false, 1});
  const CompileResult slow = program();
  const uint64_t upgradesBefore = nativeTierStats().upgradesDuringLaunch;
  const Counts longLaunch = run(slow, 100000, false);
  EXPECT_EQ(longLaunch.launchesInterpreted, 1u);
  EXPECT_EQ(longLaunch.compiled, 1u);
  EXPECT_EQ(nativeTierStats().upgradesDuringLaunch - upgradesBefore, 1u);
  const Counts afterIt = run(slow, 4, false);
  EXPECT_EQ(afterIt.launchesCompiled, 1u);
  EXPECT_EQ(afterIt.compiled, 0u);

  const NativeTierStats s = nativeTierStats();
  EXPECT_GE(s.backgroundCompiles, 1u);
  setNativeTier(was);
  setNativeTierPolicy(policy);
}

// The on-disk cache (docs/native-tier.md, "Cache"), across processes: ctest runs this test with the same
// CUEMU_NATIVE_CACHE_PATH, first with CUEMU_NATIVE_CACHE_TEST=fill (an emptied cache: every kernel compiled and
// written, and the prepared handler bitcode), then with =load (every kernel loaded by the interpreter's own loader,
// none compiled). With =prepared, =damaged and =damaged-code it runs in a folder of its own holding files of the fill
// run (CUEMU_NATIVE_CACHE_FROM): only the prepared bitcode, whole (every kernel compiled without preparing the
// bitcode) or cut short (prepared again, and written again), or everything with the kernels' files damaged, one cut
// short and two with a byte changed (each found damaged by its hash, removed, compiled anew and written again). Each
// run checks both tiers' memory equal.
TEST(NativeCache, ASecondProcessLoadsTheKernelsFromTheCache) {
  const char* phase = std::getenv("CUEMU_NATIVE_CACHE_TEST");
  const char* dir = std::getenv("CUEMU_NATIVE_CACHE_PATH");
  if (!phase || !dir)
    GTEST_SKIP() << "run by ctest (ptx_exec_tests_native_cache_fill, _load, _prepared, _damaged, _damaged-code)";
  if (!nativeTierUnavailable().empty()) GTEST_SKIP() << nativeTierUnavailable();
  ::unsetenv("CUEMU_NATIVE_CACHE_DISABLE");
  const std::string kind = phase;
  const bool load = kind == "load", damagedCode = kind == "damaged-code";
  const char* loader = std::getenv("CUEMU_NATIVE_LOADER");
  const bool throughCompiler = loader && std::string(loader) == "compiler";
  if (!load) std::filesystem::remove_all(dir);
  if (kind == "prepared" || kind == "damaged" || damagedCode) {
    const char* from = std::getenv("CUEMU_NATIVE_CACHE_FROM");
    ASSERT_NE(from, nullptr);
    std::filesystem::create_directories(dir);
    size_t copied = 0, kernels = 0;
    for (const auto& entry : std::filesystem::directory_iterator(from)) {
      const bool prepared = entry.path().extension() == ".prepared";
      if (!prepared && !(damagedCode && entry.path().extension() == ".o")) continue;
      const std::filesystem::path to = std::filesystem::path(dir) / entry.path().filename();
      std::filesystem::copy_file(entry.path(), to);
      if (prepared ? kind == "damaged" : damagedCode && kernels == 0) {
        std::filesystem::resize_file(to, std::filesystem::file_size(to) / 2);
      } else if (!prepared && damagedCode) {  // one byte changed in the middle: the file is whole, its code is not
        std::fstream file(to, std::ios::in | std::ios::out | std::ios::binary);
        file.seekg(std::streamoff(std::filesystem::file_size(to) / 2));
        const char byte = char(file.get() ^ 0x5a);
        file.seekp(std::streamoff(std::filesystem::file_size(to) / 2));
        file.put(byte);
      }
      copied += prepared;
      kernels += !prepared;
    }
    ASSERT_EQ(copied, 1u) << "the fill run left one prepared bitcode file in " << from;
    if (damagedCode) {
      ASSERT_EQ(kernels, 3u) << "the fill run left three kernels' files in " << from;
    }
  }
  const NativeTierStats before = nativeTierStats();
  expectSameInBothTiers(vectorAdd());
  std::vector<unsigned> in(777);
  std::iota(in.begin(), in.end(), 1u);
  Case collatz{"bench.ptx", "collatz", Dim3{7}, Dim3{128}, {bytesOf(in), std::vector<uint8_t>(in.size() * 4)}};
  collatz.args = {{0}, {1}, {-1, int64_t(in.size())}};
  expectSameInBothTiers(collatz);
  Case oob{"basic.ptx", "oob", Dim3{2}, Dim3{32}, {std::vector<uint8_t>(64)}};
  oob.args = {{0}, {-1, 16 * 1024}};
  oob.config.threads = 1;  // one host thread: CTA 0 reports the fault (see FaultsReportTheSame...)
  const Outcome out = expectSameInBothTiers(oob);  // the fault report of code from the cache too
  EXPECT_NE(out.fault.kind, FaultKind::None);
  const NativeTierStats after = nativeTierStats();
  EXPECT_EQ(after.kernelsCompiled - before.kernelsCompiled, 3u);
  if (load) {
    EXPECT_EQ(after.cacheLoads - before.cacheLoads, 3u);
    // by the interpreter's loader: no compiler involved (the library is loaded here only because the test asked
    // whether the tier is there); with CUEMU_NATIVE_LOADER=compiler (ctest's _load_through_compiler) by the compiler
    EXPECT_EQ(after.cacheLoadsWithoutCompiler - before.cacheLoadsWithoutCompiler, throughCompiler ? 0u : 3u);
    EXPECT_EQ(after.cacheWrites - before.cacheWrites, 0u);
    EXPECT_EQ(after.preparedLoads + after.preparedWrites, before.preparedLoads + before.preparedWrites);
  } else {
    EXPECT_EQ(after.cacheWrites - before.cacheWrites, 3u);
    EXPECT_EQ(after.cacheLoads - before.cacheLoads, 0u);
    // the bitcode is prepared (or read) once per process, at its first compile
    const bool reads = kind == "prepared" || damagedCode;
    EXPECT_EQ(after.preparedLoads - before.preparedLoads, reads ? 1u : 0u);
    EXPECT_EQ(after.preparedWrites - before.preparedWrites, reads ? 0u : 1u);
  }
  if (load) {
    // with background compiles, the hot launch itself loads code that is in the cache: no background compile, and
    // that launch runs it
    const NativeTierStats b = nativeTierStats();
    const Outcome interpreted = runCase(vectorAdd(), false);
    const Outcome hot = runCase(vectorAdd(), true, NativeTierPolicy{1, uint64_t(1) << 40, true, 0xffffffffu});
    const NativeTierStats a = nativeTierStats();
    EXPECT_EQ(a.launchesCompiled - b.launchesCompiled, 1u) << "the hot launch ran the code from the cache";
    EXPECT_EQ(a.cacheLoads - b.cacheLoads, 1u);
    EXPECT_EQ(a.cacheLoadsWithoutCompiler - b.cacheLoadsWithoutCompiler, throughCompiler ? 0u : 1u);
    EXPECT_EQ(a.backgroundCompiles, b.backgroundCompiles);
    EXPECT_EQ(hot.buffers, interpreted.buffers);
    // a kernel whose code is in the cache runs it from its first launch, hot or not (the default policy: hot at the
    // third launch), where the interpreter's loader loads it (through the compiler's library, at the hot launch)
    const NativeTierStats c = nativeTierStats();
    const Outcome first = runCase(vectorAdd(), true, NativeTierPolicy{3, uint64_t(1) << 40, true, 0xffffffffu});
    const NativeTierStats d = nativeTierStats();
    EXPECT_EQ(d.launchesCompiled - c.launchesCompiled, throughCompiler ? 0u : 1u) << "the first launch ran cached code";
    EXPECT_EQ(d.cacheLoads - c.cacheLoads, throughCompiler ? 0u : 1u);
    EXPECT_EQ(first.buffers, interpreted.buffers);
  }
  if (kind == "damaged") {  // written anew, whole: the same size as the fill run's
    const char* from = std::getenv("CUEMU_NATIVE_CACHE_FROM");
    uintmax_t whole = 0, now = 0;
    for (const auto& entry : std::filesystem::directory_iterator(from))
      if (entry.path().extension() == ".prepared") whole = entry.file_size();
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".prepared") now = entry.file_size();
    EXPECT_EQ(now, whole);
  }
}

// ---- generated kernels: the interpreter and the tier on random programs ---------------------------------------

// Both tiers on generated kernels (kernel_generator.h): all memory equal byte for byte (the registers each thread
// stores, its shared and local slots, the scratch buffer its atomics update). CUEMU_NATIVE_GENERATED: how many kernels
// (4 in every run of the suite, as each costs 1-3 s; ctest's ptx_exec_tests_native_generated runs 100,
// tools/native-identity.sh thousands); the kernel's index gives its seed, so CUEMU_NATIVE_GENERATED_FIRST=k
// CUEMU_NATIVE_GENERATED=1 reproduces kernel k. CUEMU_NATIVE_GENERATED_PRINT=1 prints each kernel's text.
TEST_F(NativeTier, GeneratedKernelsGiveTheInterpretersMemory) {
  using ptxtest::KernelGenerator;
  const char* count = std::getenv("CUEMU_NATIVE_GENERATED");
  const char* first = std::getenv("CUEMU_NATIVE_GENERATED_FIRST");
  const bool print = std::getenv("CUEMU_NATIVE_GENERATED_PRINT") != nullptr;
  const int kernels = count ? std::atoi(count) : 4;
  const int start = first ? std::atoi(first) : 0;
  constexpr int blocks = 2;
  int deterministic = 0;
  for (int k = start; k < start + kernels; ++k) {
    const uint64_t seed = uint64_t(k) * 0x9e3779b97f4a7c15ull + 1;
    KernelGenerator generator(seed);
    const int threads = k % 4 == 3 ? 128 : 64;
    std::mt19937 data{uint32_t(seed)};
    // small integers, floats around 1, values at the edges of each class (zeros, infinities, NaNs, subnormals,
    // extremes), and anything
    auto word = [&]() -> uint32_t {
      static constexpr uint32_t edges[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fffffff,
                                           0x00000001, 0x807fffff, 0x3f800000, 0xbf800000, 0xffffffff, 0x00010000,
                                           0x7bff7bff, 0x3c00fc00, 0x0001ffff, 0x4f000000};
      switch (data() % 4) {
        case 0: return data() % 64;
        case 1: return std::bit_cast<uint32_t>(float(int(data() % 2001) - 1000) / 256.0f);
        case 2: return edges[data() % std::size(edges)];
        default: return uint32_t(data());
      }
    };
    std::vector<uint32_t> in(size_t(threads * blocks * KernelGenerator::kInputBytes / 4));
    for (uint32_t& v : in) v = word();
    std::vector<uint32_t> scratch(
        size_t(threads * blocks * KernelGenerator::kSlotBytes + blocks * KernelGenerator::kCounterBytes) / 4);
    for (uint32_t& v : scratch) v = word();
    Case c{"",
           "gen" + std::to_string(k),
           Dim3{blocks},
           Dim3{uint32_t(threads)},
           {std::vector<uint8_t>(size_t(threads * blocks * KernelGenerator::kOutputBytes)), bytesOf(in),
            bytesOf(scratch)}};
    c.text = ".version 8.0\n.target sm_90\n.address_size 64\n" + generator.kernel(c.kernel, threads);
    c.args = {{0}, {1}, {2}};
    c.config.deterministic = generator.deterministic();
    // deterministic launches in a permuted CTA and warp order too: the same permutation in both tiers
    if (generator.deterministic() && k % 3 == 0) c.config.scheduleSeed = seed;
    deterministic += generator.deterministic();
    if (print)
      std::printf("generated kernel %d (%s):\n%s\n", k, c.config.deterministic ? "deterministic" : "threads",
                  c.text.c_str());
    SCOPED_TRACE("generated kernel " + std::to_string(k) + " (CUEMU_NATIVE_GENERATED_FIRST=" + std::to_string(k) +
                 " CUEMU_NATIVE_GENERATED=1):\n" + c.text);
    const Outcome out = expectSameInBothTiers(c);
    EXPECT_EQ(out.fault.kind, FaultKind::None) << out.fault.message;
    if (HasFailure()) break;
  }
  std::printf("%d generated kernels (%d with deterministic launches) from %d\n", kernels, deterministic, start);
}
