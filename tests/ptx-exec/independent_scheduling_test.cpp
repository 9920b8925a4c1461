// Independent thread scheduling (exec/engine.h: LaneGroup): threads of one warp that wait for each other through
// memory make progress, as on Volta and later GPUs, where the reconvergence stack alone would spin forever; and the
// lanes that went their own ways come together again at barriers and .sync collectives.
#include "harness.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena(size_t(16) << 20);
  return *a;
}

// Each kernel takes (out, lock, data); blocks of any size.
constexpr const char* kKernels = R"(
.version 8.0
.target sm_90
.address_size 64

// Every thread swaps 1 into the lock until it reads 0 back (Taichi's mutex_lock_i32), adds one to a counter that
// the lock guards, with a plain load and store, and stores 0 into the lock.
.visible .entry spinLock(.param .u64 out, .param .u64 lock, .param .u64 data)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [lock];
  ld.param.u64 %rd2, [data];
SPIN:
  atom.global.exch.b32 %r1, [%rd1], 1;
  setp.eq.s32 %p1, %r1, 1;
  @%p1 bra SPIN;
  ld.volatile.global.u32 %r2, [%rd2];
  add.s32 %r2, %r2, 1;
  st.volatile.global.u32 [%rd2], %r2;
  membar.gl;
  atom.global.exch.b32 %r3, [%rd1], 0;
  ret;
}

// The same lock, then the whole block at a barrier: thread 0 stores the counter, which by then counts every thread
// of the block (each block has its own lock and counter).
.visible .entry spinLockThenBarrier(.param .u64 out, .param .u64 lock, .param .u64 data)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [lock];
  ld.param.u64 %rd2, [data];
  ld.param.u64 %rd3, [out];
  mov.u32 %r4, %ctaid.x;
  mul.wide.u32 %rd4, %r4, 4;
  add.u64 %rd1, %rd1, %rd4;
  add.u64 %rd2, %rd2, %rd4;
  add.u64 %rd3, %rd3, %rd4;
SPIN:
  atom.global.exch.b32 %r1, [%rd1], 1;
  setp.eq.s32 %p1, %r1, 1;
  @%p1 bra SPIN;
  ld.volatile.global.u32 %r2, [%rd2];
  add.s32 %r2, %r2, 1;
  st.volatile.global.u32 [%rd2], %r2;
  membar.gl;
  atom.global.exch.b32 %r3, [%rd1], 0;
  bar.sync 0;
  mov.u32 %r5, %tid.x;
  setp.ne.u32 %p2, %r5, 0;
  @%p2 bra DONE;
  ld.volatile.global.u32 %r6, [%rd2];
  st.global.u32 [%rd3], %r6;
DONE:
  ret;
}

// The lock's counter value each thread saw, summed over the warp by a butterfly of shfl.sync with a full
// membermask: the shuffles wait for every lane. out[global warp] = 0 + 1 + ... + 31 within a warp's turn order
// is not fixed, so each thread contributes the value it read minus the values of the warp's other threads: the
// sum of the 32 values read is 32*base + 0 + ... + 31, stored with the base the first thread of the warp read.
.visible .entry spinLockThenShuffle(.param .u64 out, .param .u64 lock, .param .u64 data)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [lock];
  ld.param.u64 %rd2, [data];
  ld.param.u64 %rd3, [out];
SPIN:
  atom.global.exch.b32 %r1, [%rd1], 1;
  setp.eq.s32 %p1, %r1, 1;
  @%p1 bra SPIN;
  ld.volatile.global.u32 %r2, [%rd2];
  add.s32 %r3, %r2, 1;
  st.volatile.global.u32 [%rd2], %r3;
  membar.gl;
  atom.global.exch.b32 %r4, [%rd1], 0;
  shfl.sync.bfly.b32 %r5, %r2, 16, 31, -1;
  add.s32 %r2, %r2, %r5;
  shfl.sync.bfly.b32 %r5, %r2, 8, 31, -1;
  add.s32 %r2, %r2, %r5;
  shfl.sync.bfly.b32 %r5, %r2, 4, 31, -1;
  add.s32 %r2, %r2, %r5;
  shfl.sync.bfly.b32 %r5, %r2, 2, 31, -1;
  add.s32 %r2, %r2, %r5;
  shfl.sync.bfly.b32 %r5, %r2, 1, 31, -1;
  add.s32 %r2, %r2, %r5;
  mov.u32 %r6, %tid.x;
  mov.u32 %r7, %ctaid.x;
  mov.u32 %r8, %ntid.x;
  mad.lo.u32 %r6, %r7, %r8, %r6;
  mul.wide.u32 %rd4, %r6, 4;
  add.u64 %rd3, %rd3, %rd4;
  st.global.u32 [%rd3], %r2;
  ret;
}

// Lane 0 waits for a flag that lane 1 sets on the other side of a branch; the waiting side is the one the warp
// runs first (the fall-through side), so the setter's path has not started when lane 0 spins.
.visible .entry waitForTheOtherSide(.param .u64 out, .param .u64 lock, .param .u64 data)
{
  .reg .pred %p<4>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [data];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r4, %ctaid.x;
  mul.wide.u32 %rd4, %r4, 4;
  add.u64 %rd1, %rd1, %rd4;
  add.u64 %rd3, %rd3, %rd4;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SETTER;
WAIT:
  ld.volatile.global.u32 %r2, [%rd1];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra WAIT;
  add.u32 %r3, %r2, 100;
  st.global.u32 [%rd3], %r3;
  bra JOIN;
SETTER:
  setp.ne.u32 %p3, %r1, 1;
  @%p3 bra JOIN;
  st.volatile.global.u32 [%rd1], 7;
JOIN:
  bar.warp.sync -1;
  ret;
}
)";

const Program& program() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(kKernels);
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
  return {{"1 thread", ExecConfig{1, false, 0, 0}},
          {"2 threads", ExecConfig{2, false, 0, 0}},
          {"deterministic", ExecConfig{1, true, 0, 0}},
          {"shuffled (seed 5)", ExecConfig{1, true, 5, 0}}};
}

LaunchResult run(const char* name, Dim3 grid, Dim3 block, uint32_t* out, uint32_t* lock, uint32_t* data,
                 ExecConfig config) {
  const KernelInfo& info = kernels(program())[size_t(findKernel(program(), name))];
  Params p(info);
  p.arg(out).arg(lock).arg(data);
  LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
  lp.config = config;
  lp.config.timeoutMs = 20000;  // a regression hangs: the watchdog turns it into a failure
  return launch(program(), findKernel(program(), name), lp);
}

struct Buffers {
  uint32_t* out;
  uint32_t* lock;
  uint32_t* data;
  explicit Buffers(size_t n) {
    std::vector<uint32_t> zeros(n, 0);
    out = arena().upload(zeros);
    lock = arena().upload(zeros);
    data = arena().upload(zeros);
  }
};

}  // namespace

TEST(PtxIndependentScheduling, ThreadsOfOneWarpTakeASpinLockInTurn) {
  const struct { uint32_t blocks, threads; } shapes[] = {{1, 32}, {1, 1}, {1, 7}, {2, 64}, {8, 128}, {3, 100}};
  for (const Schedule& s : schedules()) {
    for (auto shape : shapes) {
      SCOPED_TRACE(std::string(s.name) + ", " + std::to_string(shape.blocks) + " x " + std::to_string(shape.threads));
      Buffers b(1);
      LaunchResult r = run("spinLock", Dim3{shape.blocks}, Dim3{shape.threads}, b.out, b.lock, b.data, s.config);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      EXPECT_EQ(b.data[0], shape.blocks * shape.threads);
      EXPECT_EQ(b.lock[0], 0u);
    }
  }
}

TEST(PtxIndependentScheduling, LanesThatWentAheadWaitAtTheBarrier) {
  for (const Schedule& s : schedules()) {
    SCOPED_TRACE(s.name);
    constexpr uint32_t blocks = 4, threads = 96;
    Buffers b(blocks);
    LaunchResult r = run("spinLockThenBarrier", Dim3{blocks}, Dim3{threads}, b.out, b.lock, b.data, s.config);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t k = 0; k < blocks; ++k) EXPECT_EQ(b.out[k], threads) << "block " << k;
  }
}

TEST(PtxIndependentScheduling, LanesThatWentAheadWaitAtAFullWarpShuffle) {
  for (const Schedule& s : schedules()) {
    SCOPED_TRACE(s.name);
    constexpr uint32_t blocks = 2, threads = 64;
    Buffers b(blocks * threads);
    LaunchResult r = run("spinLockThenShuffle", Dim3{blocks}, Dim3{threads}, b.out, b.lock, b.data, s.config);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    EXPECT_EQ(b.data[0], blocks * threads);
    // each thread read a distinct counter value; a warp's 32 values sum to 32 * (the smallest) + 0 + ... + 31 when
    // its threads took the lock one after another, and in any case every lane of the warp holds the same sum
    for (uint32_t warp = 0; warp < blocks * threads / 32; ++warp) {
      for (uint32_t lane = 1; lane < 32; ++lane)
        EXPECT_EQ(b.out[warp * 32 + lane], b.out[warp * 32]) << "warp " << warp << " lane " << lane;
    }
    uint64_t total = 0;
    for (uint32_t warp = 0; warp < blocks * threads / 32; ++warp) total += b.out[warp * 32];
    const uint64_t n = blocks * threads;
    EXPECT_EQ(total, n * (n - 1) / 2);  // the warps' sums together: 0 + 1 + ... + n-1, each value read once
  }
}

TEST(PtxIndependentScheduling, ALaneWaitsForTheOtherSideOfABranch) {
  for (const Schedule& s : schedules()) {
    SCOPED_TRACE(s.name);
    constexpr uint32_t blocks = 3;
    Buffers b(blocks);
    LaunchResult r = run("waitForTheOtherSide", Dim3{blocks}, Dim3{32}, b.out, b.lock, b.data, s.config);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t k = 0; k < blocks; ++k) EXPECT_EQ(b.out[k], 107u) << "block " << k;
  }
}
