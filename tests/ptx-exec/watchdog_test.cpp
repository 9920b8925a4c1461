// The kernel timeout (ExecConfig::timeoutMs, the driver's CUEMU_KERNEL_TIMEOUT): grids that never end (a loop
// without exit, a spin on a flag nothing writes, a barrier inside an endless loop) are stopped with
// FaultKind::Timeout naming the kernel, on one host thread, on several and in deterministic mode; a grid that
// ends in time is not disturbed.
#include "harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

constexpr const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry forever()
{
$L_loop:
  bra.uni $L_loop;
}

.visible .entry spinOnFlag(.param .u64 flag)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [flag];
$L_spin:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_spin;
  ret;
}

.visible .entry barrierForever()
{
  .reg .u32 %r<3>;
  mov.u32 %r1, 0;
$L_loop:
  bar.sync 0;
  add.u32 %r1, %r1, 1;
  bra.uni $L_loop;
}

// Each CTA waits `ns` nanoseconds of %globaltimer (as a GPU's clock-block kernel waits for %clock64), then
// records when it started and when it ended.
.visible .entry waitForTime(.param .u64 out, .param .u64 ns)
{
  .reg .u64 %rd<8>;
  .reg .u32 %r<2>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [ns];
  mov.u64 %rd3, %globaltimer;
$L_wait:
  mov.u64 %rd4, %globaltimer;
  sub.u64 %rd5, %rd4, %rd3;
  setp.lt.u64 %p1, %rd5, %rd2;
  @%p1 bra $L_wait;
  mov.u32 %r1, %ctaid.x;
  mul.wide.u32 %rd6, %r1, 16;
  add.u64 %rd7, %rd1, %rd6;
  st.global.v2.u64 [%rd7], {%rd3, %rd4};
  ret;
}

// Each CTA reads %globaltimer, runs 1000 iterations that read no clock, reads it again and records both.
.visible .entry timedLoop(.param .u64 out)
{
  .reg .u64 %rd<6>;
  .reg .u32 %r<3>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, %globaltimer;
  mov.u32 %r1, 0;
$L_loop:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 1000;
  @%p1 bra $L_loop;
  mov.u64 %rd3, %globaltimer;
  mov.u32 %r2, %ctaid.x;
  mul.wide.u32 %rd4, %r2, 16;
  add.u64 %rd5, %rd1, %rd4;
  st.global.v2.u64 [%rd5], {%rd2, %rd3};
  ret;
}

.visible .entry finite(.param .u64 out)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<3>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 0;
$L_loop:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 100000;
  @%p1 bra $L_loop;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

Arena& arena() {
  static Arena* a = new Arena(size_t(16) << 20);
  return *a;
}

const Program& program() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(kPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

LaunchResult run(const char* name, Dim3 grid, Dim3 block, const Params& p, ExecConfig config) {
  LaunchParams lp;
  lp.grid = grid;
  lp.block = block;
  lp.params = p.data();
  lp.paramBytes = p.size();
  lp.memory = &arena();
  lp.config = config;
  return launch(program(), findKernel(program(), name), lp);
}

const KernelInfo& info(const char* name) { return kernels(program())[size_t(findKernel(program(), name))]; }

std::vector<std::pair<const char*, ExecConfig>> configs() {
  ExecConfig one, two, deterministic;
  one.threads = 1;
  two.threads = 2;
  deterministic.threads = 1;
  deterministic.deterministic = true;
  for (ExecConfig* c : {&one, &two, &deterministic}) c->timeoutMs = 100;
  return {{"1 thread", one}, {"2 threads", two}, {"deterministic", deterministic}};
}

void expectTimeout(const LaunchResult& r, const char* kernel, const char* config) {
  EXPECT_EQ(r.fault.kind, FaultKind::Timeout) << kernel << ", " << config << ": " << r.fault.message;
  EXPECT_EQ(r.fault.kernel, kernel);
  EXPECT_NE(r.fault.message.find(kernel), std::string::npos) << r.fault.message;
}

TEST(PtxWatchdog, StopsAnEndlessLoop) {
  for (auto& [name, config] : configs())
    expectTimeout(run("forever", Dim3{4}, Dim3{64}, Params(info("forever")), config), "forever", name);
}

TEST(PtxWatchdog, StopsASpinOnAFlagNothingWrites) {
  auto* flag = arena().alloc<uint32_t>(1);
  *flag = 0;
  for (auto& [name, config] : configs()) {
    Params p(info("spinOnFlag"));
    p.arg(reinterpret_cast<uint64_t>(flag));
    expectTimeout(run("spinOnFlag", Dim3{8}, Dim3{32}, p, config), "spinOnFlag", name);
  }
}

TEST(PtxWatchdog, StopsABarrierInAnEndlessLoop) {
  for (auto& [name, config] : configs())
    expectTimeout(run("barrierForever", Dim3{2}, Dim3{256}, Params(info("barrierForever")), config), "barrierForever",
                  name);
}

TEST(PtxWatchdog, GridThatEndsInTimeIsNotDisturbed) {
  auto* out = arena().alloc<uint32_t>(1);
  for (auto& [name, config] : configs()) {
    *out = 0;
    ExecConfig generous = config;
    generous.timeoutMs = 60000;
    Params p(info("finite"));
    p.arg(reinterpret_cast<uint64_t>(out));
    LaunchResult r = run("finite", Dim3{1}, Dim3{32}, p, generous);
    EXPECT_TRUE(r.ok()) << name << ": " << r.fault.message;
    EXPECT_EQ(*out, 100000u) << name;
  }
}

// ExecConfig::timeWaitsYield: a warp that reads a clock yields at its backward branch, so on one host thread the
// CTAs of a grid that wait for time wait in the same interval (each starts before the first one ends: a host thread
// starts new CTAs while fewer than 16 are parked), with the same results as running each wait to its end (off: every
// CTA starts after the previous one ended).
TEST(PtxWatchdog, CtasWaitingForTimeWaitTogether) {
  constexpr uint32_t kCtas = 4;
  auto* out = arena().alloc<uint64_t>(2 * kCtas);
  for (bool yield : {true, false}) {
    ExecConfig config;
    config.threads = 1;
    config.timeWaitsYield = yield;
    std::memset(out, 0, sizeof(uint64_t) * 2 * kCtas);
    Params p(info("waitForTime"));
    // 20 us: shorter than the 4096 back edges after which any warp yields, so without the yield each CTA ends its
    // wait before the next one starts.
    p.arg(reinterpret_cast<uint64_t>(out)).arg(uint64_t(20'000));
    LaunchResult r = run("waitForTime", Dim3{kCtas}, Dim3{64}, p, config);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    uint64_t firstEnd = ~uint64_t(0), lastStart = 0;
    for (uint32_t c = 0; c < kCtas; ++c) {
      EXPECT_GE(out[2 * c + 1] - out[2 * c], 20'000u) << "CTA " << c << " did not wait its time";
      firstEnd = std::min(firstEnd, out[2 * c + 1]);
      lastStart = std::max(lastStart, out[2 * c]);
    }
    if (yield)
      EXPECT_LT(lastStart, firstEnd) << "the CTAs waited one after the other";
    else
      EXPECT_GE(lastStart, firstEnd) << "without yielding, one host thread runs the CTAs in turn";
  }
}

// A clock read before and after a loop that reads no clock is not a wait for time: the warp does not yield, so on
// one host thread each CTA's timed loop runs to its end before the next CTA starts (timings measured with clock()
// around a computation stay those of the computation).
TEST(PtxWatchdog, AClockReadBeforeATimedLoopDoesNotYield) {
  constexpr uint32_t kCtas = 4;
  auto* out = arena().alloc<uint64_t>(2 * kCtas);
  ExecConfig config;
  config.threads = 1;
  Params p(info("timedLoop"));
  p.arg(reinterpret_cast<uint64_t>(out));
  LaunchResult r = run("timedLoop", Dim3{kCtas}, Dim3{32}, p, config);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t c = 1; c < kCtas; ++c)
    EXPECT_GE(out[2 * c], out[2 * c - 1]) << "CTA " << c << " started before CTA " << c - 1 << " ended";
}

}  // namespace
