// CTAs that wait for other CTAs (kernels/sync.cu): a decoupled look-back scan and a cooperative grid barrier must
// terminate with correct results on one host thread, on several, and in shuffled deterministic schedules, with
// grids much larger than the number of host threads.
#include "harness.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <numeric>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena(size_t(64) << 20);
  return *a;
}

const Program& program() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/sync.ptx"));
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

LaunchResult run(const char* name, Dim3 grid, Dim3 block, const Params& p, ExecConfig config,
                 const std::array<uint32_t, 32>& envRegs = {}, bool cooperative = false) {
  LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
  lp.config = config;
  lp.envRegs = envRegs;
  lp.cooperative = cooperative;
  return launch(program(), findKernel(program(), name), lp);
}

const KernelInfo& info(const char* name) { return kernels(program())[size_t(findKernel(program(), name))]; }

// sync.ptx compiled without the runtime fast path quick-spin-probes
const Program& programWithoutQuickProbes() {
  static std::shared_ptr<const Program> p = [] {
    CompileOptions options;
    options.rewrites = kAllRewrites & ~rewriteBit(Rewrite::QuickSpinProbes);
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/sync.ptx"), options);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

struct Schedule {
  const char* name;
  ExecConfig config;
};

std::vector<Schedule> schedules() {
  std::vector<Schedule> s;
  s.push_back({"1 thread", ExecConfig{1, false, 0, 0}});
  s.push_back({"2 threads", ExecConfig{2, false, 0, 0}});
  s.push_back({"4 threads", ExecConfig{4, false, 0, 0}});
  s.push_back({"deterministic", ExecConfig{1, true, 0, 0}});
  s.push_back({"shuffled (seed 3)", ExecConfig{1, true, 3, 0}});
  s.push_back({"shuffled (seed 11)", ExecConfig{1, true, 11, 0}});
  return s;
}

constexpr int kTile = 512;  // kScanThreads * kItemsPerThread in sync.cu

TEST(PtxSync, DecoupledLookBackScanTerminates) {
  const int tiles = 300, n = tiles * kTile - 77;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[size_t(i)] = (i * 7919) % 13 - 4;
  std::vector<int> expect(n);
  std::partial_sum(in.begin(), in.end(), expect.begin());
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(n);
  auto* status = arena().alloc<unsigned long long>(tiles);
  for (const Schedule& s : schedules()) {
    for (int sleepy : {0, 1}) {
      std::memset(status, 0, tiles * sizeof(unsigned long long));
      std::memset(dout, 0, n * sizeof(int));
      Params p(info("lookbackScan"));
      p.arg(din).arg(dout).arg(status).arg(n).arg(sleepy);
      LaunchResult r = run("lookbackScan", Dim3{tiles}, Dim3{128}, p, s.config);
      ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(dout[i], expect[size_t(i)]) << s.name << " sleepy " << sleepy << " at " << i;
    }
  }
}

// The cooperative-groups grid barrier reads its workspace {wsSize, barrier} from %envreg1:%envreg2.
std::array<uint32_t, 32> gridWorkspace() {
  auto* ws = arena().alloc<uint32_t>(64);
  std::memset(ws, 0, 256);
  ws[0] = 256;
  std::array<uint32_t, 32> env{};
  env[1] = uint32_t(reinterpret_cast<uint64_t>(ws) >> 32);
  env[2] = uint32_t(reinterpret_cast<uint64_t>(ws));
  return env;
}

TEST(PtxSync, CooperativeGridSyncWithManyCtas) {
  const int n = 20000, steps = 6;
  std::vector<int> init(n);
  for (int i = 0; i < n; ++i) init[size_t(i)] = i % 5;
  std::vector<int> a = init, b(n);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i)
      b[size_t(i)] = a[size_t(i)] + (i > 0 ? a[size_t(i) - 1] : 0) + (i + 1 < n ? a[size_t(i) + 1] : 0);
    std::swap(a, b);
  }
  int* da = arena().alloc<int>(n);
  int* db = arena().alloc<int>(n);
  for (const Schedule& s : schedules()) {
    for (uint32_t blocks : {3u, 64u, 200u}) {
      std::memcpy(da, init.data(), n * sizeof(int));
      Params p(info("gridRelax"));
      p.arg(da).arg(db).arg(n).arg(steps);
      LaunchResult r = run("gridRelax", Dim3{blocks}, Dim3{96}, p, s.config, gridWorkspace(), true);
      ASSERT_TRUE(r.ok()) << s.name << ", " << blocks << " blocks: " << r.fault.message;
      const int* result = steps % 2 ? db : da;
      for (int i = 0; i < n; ++i) ASSERT_EQ(result[i], a[size_t(i)]) << s.name << ", " << blocks << " blocks, at " << i;
    }
  }
}

// Level barriers between the CTAs of a launch that is not cooperative, as cuSPARSE's triangular solve waits between
// levels: right values in every schedule. A warp resumed at a barrier that is not complete yet, or released from it
// and then waiting at the next level's, is parked after a few iterations of its spin (quick-spin-probes): with one
// host thread (deterministic: the same count every run) the warps spin fewer than 16 iterations per level on
// average, where they spun 64 or more with the spin checked every 64 back edges.
uint64_t levelBarrierSpins(const Program& prog, const ExecConfig& config, const char* name) {
  const int ctas = 24, levels = 30, threads = 64;
  std::vector<int> expect(size_t(ctas) * levels);
  for (int c = 0; c < ctas; ++c) expect[size_t(c)] = 3 * c + 1;
  for (int l = 1; l < levels; ++l)
    for (int c = 0; c < ctas; ++c) expect[size_t(l * ctas + c)] = expect[size_t((l - 1) * ctas + (c + 1) % ctas)] + c;
  int* values = arena().alloc<int>(expect.size());
  auto* arrived = arena().alloc<unsigned>(levels);
  auto* spins = arena().alloc<unsigned>(1);
  std::memset(values, 0, expect.size() * sizeof(int));
  std::memcpy(values, expect.data(), ctas * sizeof(int));
  std::memset(arrived, 0, levels * sizeof(unsigned));
  *spins = 0;
  Params p(info("levelBarriers"));
  p.arg(values).arg(arrived).arg(spins).arg(levels);
  LaunchParams lp = ptxtest::launchParams(Dim3{ctas}, Dim3{threads}, p, arena());
  lp.config = config;
  LaunchResult r = launch(prog, findKernel(prog, "levelBarriers"), lp);
  EXPECT_TRUE(r.ok()) << name << ": " << r.fault.message;
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(values[i], expect[i]) << name << " at " << i;
  return *spins / 32 / (ctas * threads / 32) / (levels - 1);  // iterations per warp and level
}

TEST(PtxSync, LevelBarriersParkWaitingWarpsQuickly) {
  for (const Schedule& s : schedules()) levelBarrierSpins(program(), s.config, s.name);
  if (!(defaultRewrites() & rewriteBit(Rewrite::QuickSpinProbes))) GTEST_SKIP() << "quick-spin-probes switched off";
  const ExecConfig deterministic{1, true, 0, 0};
  const uint64_t quick = levelBarrierSpins(program(), deterministic, "deterministic");
  EXPECT_EQ(levelBarrierSpins(program(), deterministic, "deterministic, again"), quick);
  const uint64_t every64 = levelBarrierSpins(programWithoutQuickProbes(), deterministic, "without quick-spin-probes");
  EXPECT_LT(quick, 16u);
  EXPECT_GE(every64, 64u);
}

// Without the workspace (a launch that is not cooperative) grid.sync() traps, as on the GPU.
TEST(PtxSync, GridSyncOutsideCooperativeLaunchTraps) {
  int* da = arena().alloc<int>(64);
  int* db = arena().alloc<int>(64);
  Params p(info("gridRelax"));
  p.arg(da).arg(db).arg(64).arg(1);
  LaunchResult r = run("gridRelax", Dim3{2}, Dim3{32}, p, ExecConfig{1, false, 0, 0});
  EXPECT_EQ(r.fault.kind, FaultKind::Trap) << r.fault.message;
}

}  // namespace

// Cluster launch control (sm_100 and later; CUTLASS's dynamic persistent schedulers): each CTA counts its own
// %ctaid.x as a work item, then asks clusterlaunchcontrol.try_cancel for the next CTA that has not started, counts
// that one, and so on until a cancel fails. Every item must be counted exactly once under every schedule (a
// cancelled CTA never runs), the response's .v4 and ::x/::y forms must agree, and some cancels must succeed.
TEST(PtxSync, ClusterLaunchControlCancelsUnstartedCtas) {
  const std::string ptx = R"(
.version 8.7
.target sm_100a
.address_size 64
.visible .entry clc(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .b128 %q<2>;
  .shared .align 16 .b8 resp[16];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r10, bar;
  mov.u32 %r11, resp;
  mbarrier.init.shared::cta.b64 [%r10], 1;
  mov.u32 %r5, 0;
LOOP:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  atom.global.add.u32 %r2, [%rd3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r10], 16;
  clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r11], [%r10];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r10], %r5;
  @!%p1 bra WAIT;
  xor.b32 %r5, %r5, 1;
  ld.shared.b128 %q1, [%r11];
  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p2, %q1;
  @!%p2 bra DONE;
  clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r1, %r6, %r7, _}, %q1;
  clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r12, %q1;
  clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r13, %q1;
  mul.wide.u32 %rd2, %r9, 4;
  add.s64 %rd3, %rd1, %rd2;
  atom.global.add.u32 %r2, [%rd3], 1;
  setp.ne.u32 %p3, %r12, %r1;
  @%p3 atom.global.add.u32 %r2, [%rd3+4], 1;
  setp.ne.u32 %p3, %r13, %r6;
  @%p3 atom.global.add.u32 %r2, [%rd3+4], 1;
  bra LOOP;
DONE:
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  const KernelInfo& k = kernels(*cr.program)[0];
  ASSERT_EQ(k.unsupported, "");
  constexpr uint32_t n = 300;
  for (const Schedule& s : schedules()) {
    SCOPED_TRACE(s.name);
    auto* out = arena().alloc<uint32_t>(n + 2);
    std::memset(out, 0, (n + 2) * 4);
    Params p(k);
    p.arg(out).arg(n);
    LaunchParams lp = ptxtest::launchParams(Dim3{n}, Dim3{1}, p, arena());
    lp.config = s.config;
    LaunchResult r = launch(*cr.program, 0, lp);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1u) << "work item " << i;
    EXPECT_GT(out[n], 0u) << "no cancel succeeded";
    EXPECT_EQ(out[n + 1], 0u) << "the response's forms disagree";
  }
}
