// The native tier (ptx/native.h, docs/native-tier.md): the same kernels run interpreted and compiled give the same
// memory and the same faults. Each case compiles its module twice, one program per tier, and runs it on fresh
// copies of its buffers. The whole suite also runs with the tier on (ptx_exec_tests_native).
#include "harness.h"

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
#include <numeric>
#include <random>
#include <vector>

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
};

struct Outcome {
  std::vector<std::vector<uint8_t>> buffers;
  Fault fault;
  int64_t faultOffset = 0;  // the fault's address less the first buffer's (each run has buffers of its own)
};

Outcome runCase(const Case& c, bool native) {
  const bool was = nativeTier();
  const NativeTierPolicy policy = nativeTierPolicy();
  setNativeTier(native);
  setNativeTierPolicy({1, 0, false});  // compiled at its launch
  // a text of its own: compile() gives the program of the same text while one lives (other tests' included)
  static std::atomic<int> serial{0};
  CompileResult compiled =
      compile((c.text.empty() ? ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + c.file) : c.text) +
              "\n// native tier test " + std::to_string(serial++) + "\n");
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
  out.fault = launch(program, k, lp).fault;
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
  const uint64_t compiledBefore = nativeTierStats().kernelsCompiled;
  Outcome interpreted = runCase(c, false);
  Outcome native = runCase(c, true);
  EXPECT_GT(nativeTierStats().kernelsCompiled, compiledBefore)
      << c.kernel << ": the native tier compiled nothing (" << nativeTierStats().lastRefusal << ")";
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
  const int blocks = 16;
  Case reduce{"bench.ptx",
              "reduce",
              Dim3{blocks},
              Dim3{256},
              {bytesOf(ramp(blocks * 256, 0.125f, -7)), std::vector<uint8_t>(blocks * 4)}};
  reduce.args = {{0}, {1}};
  expectSameInBothTiers(reduce);
  const int n = 64;
  Case matmul{"bench.ptx",
              "matmul",
              Dim3{n / 16, n / 16},
              Dim3{16, 16},
              {bytesOf(ramp(n * n, 0.01f, -1)), bytesOf(ramp(n * n, -0.02f, 2)), std::vector<uint8_t>(n * n * 4)}};
  matmul.args = {{0}, {1}, {2}, {-1, n}};
  expectSameInBothTiers(matmul);
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
TEST_F(NativeTier, ExitDuringABackgroundCompile) {
  EXPECT_EXIT(
      {
        ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 1);
        setNativeTier(true);
        setNativeTierPolicy({1, 0, true});
        float* a = nativeArena().alloc<float>(256);
        CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/bench.ptx") +
                                  "\n// native tier: exit during a compile\n");
        if (!r.program) std::_Exit(3);
        const int k = findKernel(*r.program, "vadd");
        ptxtest::Params p(kernels(*r.program)[size_t(k)]);
        p.arg(a).arg(a).arg(a).arg(256);
        if (!launch(*r.program, k, ptxtest::launchParams(Dim3{1}, Dim3{256}, p, nativeArena())).ok()) std::_Exit(4);
        // the compile reads the handler bitcode for seconds: exit in the middle of it
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::fprintf(stderr, "exiting\n");
        std::exit(0);
      },
      testing::ExitedWithCode(0), "exiting");
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
  setNativeTierPolicy({3, uint64_t(1) << 40, true});
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

  // deterministic launches, compiled at the hot launch (background off), which runs the code
  setNativeTierPolicy({2, uint64_t(1) << 40, false});
  CompileResult second = program();
  d = run(second, 4, true);
  EXPECT_EQ(d.launchesInterpreted, 1u);
  d = run(second, 4, true);
  EXPECT_EQ(d.compiled, 1u);
  EXPECT_EQ(d.background, 0u);
  EXPECT_EQ(d.launchesCompiled, 1u);

  // hot by threads: 1024 + 1024 reach 2048 at the second launch
  setNativeTierPolicy({100, 2048, false});
  CompileResult third = program();
  d = run(third, 4, false);
  EXPECT_EQ(d.launchesInterpreted, 1u);
  d = run(third, 4, false);
  EXPECT_EQ(d.compiled, 1u);
  EXPECT_EQ(d.launchesCompiled, 1u);

  const NativeTierStats s = nativeTierStats();
  EXPECT_GE(s.backgroundCompiles, 1u);
  setNativeTier(was);
  setNativeTierPolicy(policy);
}

// The on-disk cache (docs/native-tier.md, "Cache"), across processes: ctest runs this test twice with the same
// CUEMU_NATIVE_CACHE_PATH, first with CUEMU_NATIVE_CACHE_TEST=fill (an emptied cache: every kernel compiled and
// written), then with =load (every kernel loaded, none compiled). Each run checks both tiers' memory equal.
TEST(NativeCache, ASecondProcessLoadsTheKernelsFromTheCache) {
  const char* phase = std::getenv("CUEMU_NATIVE_CACHE_TEST");
  const char* dir = std::getenv("CUEMU_NATIVE_CACHE_PATH");
  if (!phase || !dir) GTEST_SKIP() << "run by ctest (ptx_exec_tests_native_cache_fill, _load)";
  if (!nativeTierUnavailable().empty()) GTEST_SKIP() << nativeTierUnavailable();
  ::unsetenv("CUEMU_NATIVE_CACHE_DISABLE");
  const bool fill = std::strcmp(phase, "fill") == 0;
  if (fill) std::filesystem::remove_all(dir);
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
  if (fill) {
    EXPECT_EQ(after.cacheWrites - before.cacheWrites, 3u);
    EXPECT_EQ(after.cacheLoads - before.cacheLoads, 0u);
  } else {
    EXPECT_EQ(after.cacheLoads - before.cacheLoads, 3u);
    EXPECT_EQ(after.cacheWrites - before.cacheWrites, 0u);
  }
}

// ---- generated kernels: the interpreter and the tier on random programs ---------------------------------------

namespace {

// Random PTX kernels (seeded, so a failure names the kernel that reproduces it): each thread loads six values,
// runs a random sequence of integer, floating-point, compare, select, conversion, 64-bit and warp instructions,
// some predicated, in straight-line code, in if/else with divergent conditions and in loops with a trip count of
// 0-7 that differs per lane, and stores its registers.
class KernelGenerator {
 public:
  explicit KernelGenerator(uint64_t seed) : rng_(seed) {}

  std::string kernel(const std::string& name) {
    body_.clear();
    labels_ = 0;
    emit("mov.u32 %r20, %tid.x;");
    emit("mov.u32 %r21, %ctaid.x;");
    emit("mov.u32 %r22, %ntid.x;");
    emit("mad.lo.u32 %r20, %r21, %r22, %r20;");
    emit("mul.wide.u32 %rd10, %r20, 48;");
    emit("ld.param.u64 %rd11, [in];");
    emit("ld.param.u64 %rd12, [out];");
    emit("add.u64 %rd11, %rd11, %rd10;");
    emit("add.u64 %rd12, %rd12, %rd10;");
    emit("ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd11];");
    emit("ld.global.v2.f32 {%f0, %f1}, [%rd11+16];");
    emit("cvt.rn.f32.s32 %f2, %r2;");
    emit("mul.wide.u32 %rd0, %r1, %r3;");
    emit("cvt.u64.u32 %rd1, %r0;");
    emit("setp.lt.u32 %p0, %r0, %r1;");
    emit("setp.lt.u32 %p1, %r2, %r3;");
    const int regions = 1 + int(rng_() % 3);
    for (int k = 0; k < regions; ++k) {
      switch (rng_() % 3) {
        case 0: straight(3 + int(rng_() % 6), true); break;
        case 1: ifElse(); break;
        default: loop(); break;
      }
    }
    emit("st.global.v4.u32 [%rd12], {%r0, %r1, %r2, %r3};");
    emit("st.global.v4.f32 [%rd12+16], {%f0, %f1, %f2, %f0};");
    emit("xor.b64 %rd0, %rd0, %rd1;");
    emit("st.global.u64 [%rd12+32], %rd0;");
    return ".visible .entry " + name +
           "(.param .u64 out, .param .u64 in)\n{\n.reg .b32 %r<24>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<13>;\n"
           ".reg .pred %p<6>;\n" +
           body_ + "ret;\n}\n";
  }

 private:
  std::string r() { return fmt::format("%r{}", rng_() % 4); }
  std::string f() { return fmt::format("%f{}", rng_() % 3); }
  std::string p() { return fmt::format("%p{}", rng_() % 2); }
  std::string rd() { return fmt::format("%rd{}", rng_() % 2); }
  void emit(const std::string& line) { body_ += line + "\n"; }

  // one instruction; warp-wide ones only where every lane of the warp runs (uniform)
  std::string instruction(bool uniform) {
    static const char* const binary32[] = {"add.s32", "sub.s32", "mul.lo.s32", "mul.hi.u32", "and.b32",
                                           "or.b32",  "xor.b32", "shl.b32",    "shr.u32",    "shr.s32",
                                           "min.s32", "max.u32", "min.u32",    "rem.u32",    "div.s32"};
    static const char* const unary32[] = {"not.b32", "abs.s32", "neg.s32", "popc.b32", "clz.b32", "brev.b32"};
    static const char* const binaryF[] = {"add.rn.f32", "sub.f32",    "mul.rn.f32",  "min.f32",
                                          "max.f32",    "div.rn.f32", "add.ftz.f32", "mul.ftz.f32"};
    static const char* const unaryF[] = {"abs.f32",    "neg.f32",        "sqrt.rn.f32",
                                         "rcp.rn.f32", "ex2.approx.f32", "lg2.approx.f32"};
    static const char* const cmpI[] = {"lt.s32", "gt.u32", "eq.b32", "ne.s32", "le.u32", "ge.s32"};
    static const char* const cmpF[] = {"lt.f32", "gtu.f32", "eq.f32", "nan.f32", "num.f32", "geu.f32"};
    const unsigned kinds = uniform ? 16 : 13;
    switch (rng_() % kinds) {
      case 0:
      case 1: {
        const std::string op = binary32[rng_() % std::size(binary32)];
        // division by zero: the divisor is made odd (the GPU's result for 0 is not what a CPU gives)
        if (op == "rem.u32" || op == "div.s32") {
          const std::string b = r();
          return fmt::format("or.b32 %r23, {}, 1;\n{} {}, {}, %r23;", b, op, r(), r());
        }
        return fmt::format("{} {}, {}, {};", op, r(), r(), r());
      }
      case 2: return fmt::format("{} {}, {};", unary32[rng_() % std::size(unary32)], r(), r());
      case 3: return fmt::format("mad.lo.s32 {}, {}, {}, {};", r(), r(), r(), r());
      case 4:
        switch (rng_() % 4) {
          case 0: return fmt::format("bfe.u32 {}, {}, {}, {};", r(), r(), r(), r());
          case 1: return fmt::format("bfi.b32 {}, {}, {}, {}, {};", r(), r(), r(), r(), r());
          case 2: return fmt::format("prmt.b32 {}, {}, {}, {};", r(), r(), r(), r());
          default: return fmt::format("lop3.b32 {}, {}, {}, {}, {};", r(), r(), r(), r(), rng_() % 256);
        }
      case 5:
      case 6: return fmt::format("{} {}, {}, {};", binaryF[rng_() % std::size(binaryF)], f(), f(), f());
      case 7: return fmt::format("{} {}, {};", unaryF[rng_() % std::size(unaryF)], f(), f());
      case 8: return fmt::format("fma.rn.f32 {}, {}, {}, {};", f(), f(), f(), f());
      case 9:
        switch (rng_() % 4) {
          case 0: return fmt::format("cvt.rn.f32.s32 {}, {};", f(), r());
          case 1: return fmt::format("cvt.rzi.s32.f32 {}, {};", r(), f());
          case 2: return fmt::format("mov.b32 {}, {};", r(), f());
          default: return fmt::format("cvt.rni.u32.f32 {}, {};", r(), f());
        }
      case 10:
        switch (rng_() % 4) {
          case 0: return fmt::format("setp.{} {}, {}, {};", cmpI[rng_() % std::size(cmpI)], p(), r(), r());
          case 1: return fmt::format("setp.{} {}, {}, {};", cmpF[rng_() % std::size(cmpF)], p(), f(), f());
          case 2: return fmt::format("and.pred {}, {}, {};", p(), p(), p());
          default: return fmt::format("xor.pred {}, {}, {};", p(), p(), p());
        }
      case 11:
        return rng_() % 2 ? fmt::format("selp.b32 {}, {}, {}, {};", r(), r(), r(), p())
                          : fmt::format("selp.f32 {}, {}, {}, {};", f(), f(), f(), p());
      case 12:
        switch (rng_() % 4) {
          case 0: return fmt::format("mul.wide.u32 {}, {}, {};", rd(), r(), r());
          case 1: return fmt::format("add.s64 {}, {}, {};", rd(), rd(), rd());
          case 2: return fmt::format("shr.u64 {}, {}, {};", rd(), rd(), r());
          default: return fmt::format("cvt.u32.u64 {}, {};", r(), rd());
        }
      case 13: return fmt::format("shfl.sync.bfly.b32 {}, {}, {}, 31, -1;", r(), r(), 1u << (rng_() % 5));
      case 14: return fmt::format("vote.sync.ballot.b32 {}, {}, -1;", r(), p());
      default: return fmt::format("shfl.sync.idx.b32 {}, {}, {}, 31, -1;", r(), r(), r());
    }
  }

  void straight(int n, bool uniform) {
    for (int i = 0; i < n; ++i) {
      std::string line = instruction(uniform);
      // some predicated (not the two-line division, whose guard must run)
      if (!uniform && line.find('\n') == std::string::npos && rng_() % 4 == 0)
        line = (rng_() % 2 ? "@" : "@!") + p() + " " + line;
      emit(line);
    }
  }

  void ifElse() {
    const int k = labels_++;
    emit(fmt::format("setp.lt.u32 %p4, {}, {};", r(), r()));
    emit(fmt::format("@%p4 bra ELSE{};", k));
    straight(1 + int(rng_() % 4), false);
    emit(fmt::format("bra JOIN{};", k));
    emit(fmt::format("ELSE{}:", k));
    straight(1 + int(rng_() % 4), false);
    emit(fmt::format("JOIN{}:", k));
  }

  void loop() {
    const int k = labels_++;
    emit(fmt::format("and.b32 %r8, {}, 7;", r()));
    emit("mov.u32 %r9, 0;");
    emit(fmt::format("LOOP{}:", k));
    emit("setp.ge.u32 %p5, %r9, %r8;");
    emit(fmt::format("@%p5 bra END{};", k));
    straight(1 + int(rng_() % 5), false);
    emit("add.u32 %r9, %r9, 1;");
    emit(fmt::format("bra LOOP{};", k));
    emit(fmt::format("END{}:", k));
  }

  std::mt19937_64 rng_;
  std::string body_;
  int labels_ = 0;
};

}  // namespace

// Both tiers on generated kernels: memory equal byte for byte. CUEMU_NATIVE_GENERATED: how many kernels (12 here;
// ctest's ptx_exec_tests_native_generated runs 200); the kernel's index gives its seed, so
// CUEMU_NATIVE_GENERATED_FIRST=k CUEMU_NATIVE_GENERATED=1 reproduces kernel k.
TEST_F(NativeTier, GeneratedKernelsGiveTheInterpretersMemory) {
  const char* count = std::getenv("CUEMU_NATIVE_GENERATED");
  const char* first = std::getenv("CUEMU_NATIVE_GENERATED_FIRST");
  const int kernels = count ? std::atoi(count) : 12;
  const int start = first ? std::atoi(first) : 0;
  constexpr int threads = 64, blocks = 2;
  std::mt19937 data(11);
  std::vector<uint32_t> in(threads * blocks * 12);
  for (uint32_t& v : in) {
    // small integers, floats around 1, and anything: the interesting values of each class
    switch (data() % 3) {
      case 0: v = data() % 64; break;
      case 1: v = std::bit_cast<uint32_t>(float(int(data() % 2001) - 1000) / 256.0f); break;
      default: v = uint32_t(data());
    }
  }
  for (int k = start; k < start + kernels; ++k) {
    KernelGenerator generator(uint64_t(k) * 0x9e3779b97f4a7c15ull + 1);
    Case c{"",
           "gen" + std::to_string(k),
           Dim3{blocks},
           Dim3{threads},
           {std::vector<uint8_t>(threads * blocks * 48), bytesOf(in)}};
    c.text = ".version 7.8\n.target sm_80\n.address_size 64\n" + generator.kernel(c.kernel);
    c.args = {{0}, {1}};
    SCOPED_TRACE("generated kernel " + std::to_string(k) + ":\n" + c.text);
    const Outcome out = expectSameInBothTiers(c);
    EXPECT_EQ(out.fault.kind, FaultKind::None) << out.fault.message;
    if (HasFailure()) break;
  }
}
