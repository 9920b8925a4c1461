// The interpreter's fast paths (ptx/rewrites.def): the switch parser, that each lowering rewrite fires on the kernels
// it is for (switching it off changes the op stream), and that results and faults are the same with every fast path
// on, each one off, the runtime ones off, and all off. The whole interpreter suite also runs with all of them off
// (ptx_exec_tests_no_rewrites) and with the runtime fast paths off (ptx_exec_tests_no_runtime_fast_paths).
#include "harness.h"
#include "ptx/checker.h"
#include "ptx/native.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace ptx::exec;

namespace {

ptxtest::Arena& rewriteArena() {
  static auto* a = new ptxtest::Arena(size_t(64) << 20);
  return *a;
}

std::shared_ptr<const Program> compileWith(const std::string& file, uint32_t rewrites) {
  CompileOptions options;
  options.rewrites = rewrites;
  CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + file), options);
  if (!r.program) throw std::runtime_error("compile failed: " + r.error);
  return r.program;
}

// A kernel written in the test, compiled with the rewrites in `mask`.
CompileResult compileText(const char* ptx, uint32_t mask) {
  CompileOptions options;
  options.rewrites = mask;
  return compile(ptx, options);
}

std::vector<uint32_t> allMasks() {
  std::vector<uint32_t> masks = {kAllRewrites, 0, kLoweringRewrites};
  for (unsigned k = 0; k < unsigned(Rewrite::count_); ++k) masks.push_back(kAllRewrites & ~(1u << k));
  return masks;
}

LaunchResult run(const Program& prog, const char* kernel, Dim3 grid, Dim3 block, const ptxtest::Params& p,
                 ExecConfig cfg = {}) {
  LaunchParams lp = ptxtest::launchParams(grid, block, p, rewriteArena());
  lp.config = cfg;
  return launch(prog, findKernel(prog, kernel), lp);
}

// Runs `kernel` of `ptx`, compiled with the rewrites in `mask`, over the parameters (out, in, n), out being
// `outBytes` bytes filled with 0xee first; returns out's bytes, or nothing after a failure it has reported.
std::vector<uint8_t> outputOf(const char* ptx, uint32_t mask, const char* kernel, Dim3 grid, Dim3 block, const void* in,
                              uint32_t n, size_t outBytes) {
  CompileResult cr = compileText(ptx, mask);
  if (!cr.program) {
    ADD_FAILURE() << cr.error;
    return {};
  }
  uint8_t* out = rewriteArena().alloc<uint8_t>(outBytes);
  std::memset(out, 0xee, outBytes);
  ptxtest::Params p(kernels(*cr.program)[0]);
  p.arg(out).arg(in).arg(n);
  LaunchResult r = run(*cr.program, kernel, grid, block, p);
  if (!r.ok()) {
    ADD_FAILURE() << r.fault.message;
    return {};
  }
  return std::vector<uint8_t>(out, out + outBytes);
}

// A fault under one set of rewrites is the fault under another: kind, PTX line, address, block and thread. The
// first mask's fault is the reference.
void expectSameFault(std::optional<Fault>& reference, const Fault& got, uint32_t mask) {
  if (!reference) {
    reference = got;
    return;
  }
  const Fault& ref = *reference;
  EXPECT_EQ(got.kind, ref.kind) << mask;
  EXPECT_EQ(got.ptxLine, ref.ptxLine) << mask;
  EXPECT_EQ(got.address, ref.address) << mask;
  EXPECT_EQ(got.block.x, ref.block.x) << mask;
  EXPECT_EQ(got.thread.x, ref.thread.x) << mask;
}

}  // namespace

TEST(Rewrites, ParseSwitches) {
  uint32_t m = 0;
  std::string error;
  ASSERT_TRUE(parseRewrites("none", m, error));
  EXPECT_EQ(m, 0u);
  ASSERT_TRUE(parseRewrites("all", m, error));
  EXPECT_EQ(m, kAllRewrites);
  ASSERT_TRUE(parseRewrites("-shared-fma-chains", m, error));
  EXPECT_EQ(m, kAllRewrites & ~rewriteBit(Rewrite::SharedFmaChains));
  ASSERT_TRUE(parseRewrites("none, +setp-branch", m, error));
  EXPECT_EQ(m, rewriteBit(Rewrite::SetpBranch));
  ASSERT_TRUE(parseRewrites("-runtime", m, error));
  EXPECT_EQ(m, kLoweringRewrites);
  ASSERT_TRUE(parseRewrites("none,+runtime,-global-runs", m, error));
  EXPECT_EQ(m, kRuntimeFastPaths & ~rewriteBit(Rewrite::GlobalRuns));
  EXPECT_NE(kRuntimeFastPaths & rewriteBit(Rewrite::SharedWarpLayouts), 0u);
  EXPECT_EQ(kRuntimeFastPaths & rewriteBit(Rewrite::SharedFmaChains), 0u);
  EXPECT_FALSE(parseRewrites("-no-such-rewrite", m, error));
  EXPECT_NE(error.find("unknown rewrite 'no-such-rewrite'"), std::string::npos) << error;
  EXPECT_NE(error.find("launch-constants"), std::string::npos) << error;
  for (unsigned k = 0; k < unsigned(Rewrite::count_); ++k) EXPECT_NE(rewriteName(Rewrite(k)), "?");
}

// Every lowering rewrite changes the lowering of at least one of the interpreter's kernels (so none is dead, and the
// differential runs below and ptx_exec_tests_no_rewrites exercise both forms of each). Runtime fast paths leave the
// op stream alone: a kernel only carries their switches.
TEST(Rewrites, EachFiresOnSomeKernel) {
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) GTEST_SKIP() << "rewrites restricted for this run";
  for (unsigned k = 0; k < unsigned(Rewrite::count_); ++k) {
    if (kRuntimeFastPaths & (1u << k)) continue;
    bool changed = false;
    for (const char* file : {"bench.ptx", "basic.ptx", "sync.ptx"}) {
      // against all the others on, and alone (a rewrite may take over the instructions another one would touch:
      // %tid reads that are launch constants never reach the special-register forms)
      ProgramStats on = programStats(*compileWith(file, kAllRewrites));
      ProgramStats off = programStats(*compileWith(file, kAllRewrites & ~(1u << k)));
      ProgramStats alone = programStats(*compileWith(file, 1u << k));
      ProgramStats none = programStats(*compileWith(file, 0));
      changed |= on.digest != off.digest || alone.digest != none.digest;
    }
    EXPECT_TRUE(changed) << rewriteName(Rewrite(k)) << " changes no kernel";
  }
}

// The same results, bit for bit, with every combination that switches one rewrite off, all off, and all on: a
// tiled shared-memory matmul (shared layouts, fma chains), vadd (launch constants, address adds, scaled indices),
// collatz (compare-and-branch loops).
TEST(Rewrites, SameResults) {
  const int n = 64;
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = float((i * 7) % 13) * 0.25f - 1.0f;
    b[i] = float((i * 5) % 11) * 0.5f;
  }
  float* da = rewriteArena().upload(a);
  float* db = rewriteArena().upload(b);
  std::vector<uint32_t> seeds(1000);
  for (int i = 0; i < 1000; ++i) seeds[size_t(i)] = uint32_t(i * 37 + 1);
  uint32_t* dseeds = rewriteArena().upload(seeds);
  std::vector<float> refMat, refAdd;
  std::vector<uint32_t> refSteps;
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    float* dc = rewriteArena().alloc<float>(n * n);
    ptxtest::Params pm(kernels(*prog)[size_t(findKernel(*prog, "matmul"))]);
    pm.arg(da).arg(db).arg(dc).arg(n);
    ASSERT_TRUE(run(*prog, "matmul", Dim3{n / 16, n / 16}, Dim3{16, 16}, pm).ok());
    std::vector<float> mat(dc, dc + n * n);
    float* dv = rewriteArena().alloc<float>(n * n);
    ptxtest::Params pv(kernels(*prog)[size_t(findKernel(*prog, "vadd"))]);
    pv.arg(da).arg(db).arg(dv).arg(n * n);
    ASSERT_TRUE(run(*prog, "vadd", Dim3{(n * n + 255) / 256}, Dim3{256}, pv).ok());
    std::vector<float> add(dv, dv + n * n);
    uint32_t* dsteps = rewriteArena().alloc<uint32_t>(1000);
    ptxtest::Params pc(kernels(*prog)[size_t(findKernel(*prog, "collatz"))]);
    pc.arg(static_cast<const uint32_t*>(dseeds)).arg(dsteps).arg(1000);
    ASSERT_TRUE(run(*prog, "collatz", Dim3{4}, Dim3{256}, pc).ok());
    std::vector<uint32_t> steps(dsteps, dsteps + 1000);
    if (mask == kAllRewrites) {
      refMat = mat;
      refAdd = add;
      refSteps = steps;
      continue;
    }
    EXPECT_EQ(std::memcmp(mat.data(), refMat.data(), mat.size() * sizeof(float)), 0) << "matmul, rewrites " << mask;
    EXPECT_EQ(std::memcmp(add.data(), refAdd.data(), add.size() * sizeof(float)), 0) << "vadd, rewrites " << mask;
    EXPECT_EQ(steps, refSteps) << "collatz, rewrites " << mask;
  }
}

// The same fault (kind, address, block, thread, line) when an access through a folded address runs off its buffer.
TEST(Rewrites, SameFaults) {
  const int n = 1000;
  float* da = rewriteArena().alloc<float>(n);
  float* db = rewriteArena().alloc<float>(n);
  float* dc = rewriteArena().alloc<float>(n);
  std::optional<Fault> ref;
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "vadd"))]);
    p.arg(static_cast<const float*>(da)).arg(static_cast<const float*>(db)).arg(dc).arg(n + 4096);
    ExecConfig cfg;
    cfg.deterministic = true;  // the first faulting thread is the same in every run
    LaunchResult r = run(*prog, "vadd", Dim3{(n + 4096 + 255) / 256}, Dim3{256}, p, cfg);
    ASSERT_FALSE(r.ok()) << "rewrites " << mask;
    expectSameFault(ref, r.fault, mask);
  }
}

// Atomics whose lanes share an address (warp-aggregated-atomics): the same memory and the same returned values with
// every mask, and the returned values are those of the lanes running one after the other in lane order (one host thread
// runs the CTAs and warps in order, so thread i sees the sum of the operands of threads 0..i-1). The last warp is
// partial.
TEST(Rewrites, SameAtomicResults) {
  const int n = 1000;
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    uint32_t* count = rewriteArena().alloc<uint32_t>(3);
    int32_t* extremes = rewriteArena().alloc<int32_t>(2);
    uint32_t* bits = rewriteArena().alloc<uint32_t>(3);
    uint32_t* seen = rewriteArena().alloc<uint32_t>(2 * n);
    std::memset(count, 0, 3 * sizeof(uint32_t));
    extremes[0] = -1000;
    extremes[1] = 1000;
    bits[0] = 0;
    bits[1] = 0;
    bits[2] = ~0u;
    ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "counters"))]);
    p.arg(count).arg(extremes).arg(bits).arg(seen).arg(n);
    ExecConfig cfg;
    cfg.threads = 1;
    ASSERT_TRUE(run(*prog, "counters", Dim3{(n + 255) / 256}, Dim3{256}, p, cfg).ok()) << mask;
    uint32_t sum = 0, orBits = 0, xorBits = 0;
    int hi = -1000, lo = 1000;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(seen[i], sum) << "atomicAdd result of thread " << i << ", rewrites " << mask;
      ASSERT_EQ(seen[n + i], orBits) << "atomicOr result of thread " << i << ", rewrites " << mask;
      sum += uint32_t(i % 7 + 1);
      orBits |= 1u << (i % 32);
      xorBits ^= uint32_t(i);
      hi = std::max(hi, (i * 37) % 101 - 50);
      lo = std::min(lo, (i * 37) % 101 - 50);
    }
    EXPECT_EQ(count[0], sum) << mask;
    EXPECT_EQ(count[1], uint32_t(n / 2)) << mask;
    EXPECT_EQ(count[2], uint32_t(n / 2)) << mask;
    EXPECT_EQ(extremes[0], hi) << mask;
    EXPECT_EQ(extremes[1], lo) << mask;
    EXPECT_EQ(bits[0], orBits) << mask;
    EXPECT_EQ(bits[1], xorBits) << mask;
    EXPECT_EQ(bits[2], 0u) << mask;
  }
}

// An atomic whose lanes all name one invalid address faults for the first executing lane with every mask, and one
// whose lanes name different addresses, some past their buffer, for the same lane as the per-lane path.
TEST(Rewrites, SameAtomicFaults) {
  const int n = 300;
  int32_t* extremes = rewriteArena().alloc<int32_t>(2);
  uint32_t* bits = rewriteArena().alloc<uint32_t>(3);
  uint32_t* seen = rewriteArena().alloc<uint32_t>(2 * n);
  // bytes up to 255 index 256 bins, but the buffer holds 64
  std::vector<uint8_t> in(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) in[size_t(i)] = uint8_t(i * 5);
  const uint8_t* din = rewriteArena().upload(in);
  uint32_t* bins = rewriteArena().alloc<uint32_t>(64);
  rewriteArena().limit(bins, 64 * sizeof(uint32_t));
  for (bool oneAddress : {true, false}) {
    std::optional<Fault> ref;
    for (uint32_t mask : allMasks()) {
      auto prog = compileWith("bench.ptx", mask);
      LaunchResult r;
      ExecConfig cfg;
      cfg.deterministic = true;
      if (oneAddress) {
        ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "counters"))]);
        p.arg(reinterpret_cast<uint32_t*>(uintptr_t(0x1000))).arg(extremes).arg(bits).arg(seen).arg(n);
        r = run(*prog, "counters", Dim3{(n + 255) / 256}, Dim3{256}, p, cfg);
      } else {
        ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "histogram"))]);
        p.arg(din).arg(bins).arg(n);
        r = run(*prog, "histogram", Dim3{2}, Dim3{256}, p, cfg);
      }
      ASSERT_FALSE(r.ok()) << "rewrites " << mask;
      expectSameFault(ref, r.fault, mask);
    }
  }
}

// Vector global loads and stores (global-vector-runs): float4 and float2 arrays by thread index, and a float2 array
// in reverse order, the same with every mask; and the same fault when the arrays end before the grid does (the
// last warps' vectors run past the buffer: the span check fails and the per-lane path faults at the first lane).
TEST(Rewrites, SameVectorResultsAndFaults) {
  const int n = 1000;  // 4 CTAs of 256, the last partial
  std::vector<float> values(size_t(4 * n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 97) * 0.5f - 3.0f;
  const float* in4 = rewriteArena().upload(values);
  const float* in2 = rewriteArena().upload(values);
  std::vector<float> ref4, ref2;
  std::optional<Fault> ref;
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    float* out4 = rewriteArena().alloc<float>(size_t(4 * n));
    float* out2 = rewriteArena().alloc<float>(size_t(2 * n));
    ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "vectors"))]);
    p.arg(in4).arg(out4).arg(in2).arg(out2).arg(n);
    ASSERT_TRUE(run(*prog, "vectors", Dim3{(n + 255) / 256}, Dim3{256}, p).ok()) << "rewrites " << mask;
    std::vector<float> got4(out4, out4 + 4 * n), got2(out2, out2 + 2 * n);
    if (mask == kAllRewrites) {
      ref4 = got4;
      ref2 = got2;
      EXPECT_EQ(got4[4 * 5 + 1], values[4 * 5] + 1.0f);             // lane 5's a.x + 1
      EXPECT_EQ(got2[2 * 7], values[size_t(2 * (n - 1 - 7) + 1)]);  // thread 7 read element n-1-7, swapped
    } else {
      EXPECT_EQ(std::memcmp(got4.data(), ref4.data(), got4.size() * sizeof(float)), 0) << "float4, rewrites " << mask;
      EXPECT_EQ(std::memcmp(got2.data(), ref2.data(), got2.size() * sizeof(float)), 0) << "float2, rewrites " << mask;
    }
  }
  // the float4 array holds 768 elements (three pages; the arena's next page is invalid): warp 24 (threads 768-799,
  // block 3) is the first whose vectors run past it
  std::vector<float> first(values.begin(), values.begin() + 4 * 768);
  const float* short4 = rewriteArena().upload(first);
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    float* out4 = rewriteArena().alloc<float>(size_t(4 * n));
    float* out2 = rewriteArena().alloc<float>(size_t(2 * n));
    ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "vectors"))]);
    p.arg(short4).arg(out4).arg(in2).arg(out2).arg(n);
    ExecConfig cfg;
    cfg.deterministic = true;
    LaunchResult r = run(*prog, "vectors", Dim3{(n + 255) / 256}, Dim3{256}, p, cfg);
    ASSERT_FALSE(r.ok()) << "rewrites " << mask;
    EXPECT_EQ(r.fault.block.x, 3u) << "rewrites " << mask;
    EXPECT_EQ(r.fault.thread.x, 0u) << "rewrites " << mask;
    expectSameFault(ref, r.fault, mask);
  }
}

// loop-watches: a loop's spin check compares only the registers its blocks write. `spin` waits in a three-instruction
// loop (a 32-bit load and a predicate: 128 + 64 bytes of register file, not the kernel's 200 registers);
// `scattered` has a block of its loop placed after the back edge, which writes %r5 (counted: the natural loop, not
// the instructions between header and back edge; that block's branch to $L_back goes backwards too, and the warp
// checks at every backward branch, so $L_back heads a loop of the same blocks); `calling` calls a function in its loop
// (no watch: the callee's writes are not the loop's instructions').
TEST(Rewrites, LoopWatchesCompareOnlyTheLoopsRegisters) {
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) GTEST_SKIP() << "rewrites restricted for this run";
  const char* ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) bump(.param .b32 x)
{
  .reg .b32 %t<2>;
  ld.param.b32 %t0, [x];
  add.s32 %t1, %t0, 1;
  st.param.b32 [r], %t1;
  ret;
}
.visible .entry spin(.param .u64 flag)
{
  .reg .pred %p<4>;
  .reg .b32 %r<200>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [flag];
  mov.u32 %r100, 7;
$L_wait:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_wait;
  st.global.u32 [%rd1+4], %r100;
  ret;
}
.visible .entry scattered(.param .u64 flag)
{
  .reg .pred %p<4>;
  .reg .b32 %r<200>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [flag];
  mov.u32 %r5, 0;
$L_head:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_side;
  bra.uni $L_done;
$L_back:
  bra.uni $L_head;
$L_done:
  st.global.u32 [%rd1+4], %r5;
  ret;
$L_side:
  add.s32 %r5, %r5, 1;
  bra.uni $L_back;
}
.visible .entry calling(.param .u64 flag)
{
  .reg .pred %p<4>;
  .reg .b32 %r<200>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [flag];
$L_wait:
  ld.volatile.global.u32 %r1, [%rd1];
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  call (b), bump, (a);
  ld.param.b32 %r2, [b];
  }
  setp.eq.s32 %p1, %r2, 1;
  @%p1 bra $L_wait;
  ret;
}
)";
  auto statsOf = [&](const char* kernel, uint32_t rewrites) {
    CompileOptions options;
    options.rewrites = rewrites;
    std::string text(ptx);
    // one kernel per program, so each kernel's count stands alone
    for (const char* other : {"spin", "scattered", "calling"})
      if (std::strcmp(other, kernel) != 0) {
        size_t at = text.find(std::string(".visible .entry ") + other);
        text.replace(at, std::strlen(".visible .entry "), ".func ");
      }
    CompileResult r = compile(text, options);
    EXPECT_TRUE(r.program) << r.error;
    return r.program ? programStats(*r.program) : ProgramStats{};
  };
  ProgramStats spin = statsOf("spin", kAllRewrites);
  EXPECT_EQ(spin.loopWatches, 1u);
  EXPECT_EQ(spin.loopWatchBytes, 128u + 64u) << "%r1 and %p1";
  ProgramStats scattered = statsOf("scattered", kAllRewrites);
  EXPECT_EQ(scattered.loopWatches, 2u);
  EXPECT_EQ(scattered.loopWatchBytes, 2 * (2 * 128u + 64u)) << "%r1, %p1 and the %r5 of the block after the back edge";
  ProgramStats calling = statsOf("calling", kAllRewrites);
  EXPECT_GT(calling.ops, 0u);
  EXPECT_EQ(calling.loopWatches, 0u);
  EXPECT_EQ(statsOf("spin", kAllRewrites & ~rewriteBit(Rewrite::LoopWatches)).loopWatches, 0u);
}

namespace {

// Tensor-core forms (narrow-tensor-sums, matrix-tile-lines): per lane, A (4 words), B (2) and C (4) from global
// memory, then mma m16n8k16 f32.f16 / f32.bf16, m16n8k8 f32.tf32 and m16n8k16 f16.f16 on them, 64 bytes out per lane;
// and wmma m16n16k16 (f16 x f16 + f32) loaded from and stored to global tiles with a stride.
const char* kMatrixKernels = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry mmas(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pout)
{
  .reg .b32 %a<4>;
  .reg .b32 %b<2>;
  .reg .f32 %c<4>;
  .reg .f32 %d<4>;
  .reg .b32 %h<4>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<12>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pc];
  ld.param.u64 %rd4, [pout];
  mul.wide.u32 %rd5, %r1, 16;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%rd6];
  mul.wide.u32 %rd7, %r1, 8;
  add.s64 %rd8, %rd2, %rd7;
  ld.global.v2.b32 {%b0, %b1}, [%rd8];
  add.s64 %rd9, %rd3, %rd5;
  ld.global.v4.f32 {%c0, %c1, %c2, %c3}, [%rd9];
  mul.wide.u32 %rd10, %r1, 64;
  add.s64 %rd11, %rd4, %rd10;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
  st.global.v4.f32 [%rd11], {%d0, %d1, %d2, %d3};
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
  st.global.v4.f32 [%rd11+16], {%d0, %d1, %d2, %d3};
  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
  st.global.v4.f32 [%rd11+32], {%d0, %d1, %d2, %d3};
  mov.b32 %h0, %c0;
  mov.b32 %h1, %c1;
  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%h2, %h3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%h0, %h1};
  st.global.v2.b32 [%rd11+48], {%h2, %h3};
  ret;
}
.visible .entry wmmas(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pout, .param .u32 stride)
{
  .reg .b32 %a<8>;
  .reg .b32 %b<8>;
  .reg .f32 %c<8>;
  .reg .f32 %d<8>;
  .reg .b32 %s;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pc];
  ld.param.u64 %rd4, [pout];
  ld.param.u32 %s, [stride];
  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%rd1], %s;
  wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, [%rd2], %s;
  wmma.load.c.sync.aligned.col.m16n16k16.global.f32 {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}, [%rd3], %s;
  wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, %s;
  ret;
}
)";

std::shared_ptr<const Program> compileMatrixWith(uint32_t rewrites) {
  CompileOptions options;
  options.rewrites = rewrites;
  CompileResult r = compile(kMatrixKernels, options);
  if (!r.program) throw std::runtime_error("compile failed: " + r.error);
  return r.program;
}

// Operand words for the sums: mostly values of moderate size (the float-lane sums take them), with zeros,
// subnormals, large values and, in some trials, infinities and NaNs (the double path takes those, per instruction
// or per output), and in some trials random bits.
struct OperandWords {
  uint64_t state;
  uint32_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return uint32_t(state >> 11);
  }
  uint16_t half(bool specials) {
    const uint32_t r = next(), kind = r % 64, sign = (r >> 6 & 1) << 15;
    if (kind == 0) return uint16_t(sign);
    if (kind == 1) return uint16_t(sign | (r >> 7 & 0x3ff));                        // subnormal
    if (kind == 2) return uint16_t(sign | 0x7800 | (r >> 7 & 0x3ff));               // near the largest
    if (kind == 3 && specials) return uint16_t(sign | 0x7c00 | (r >> 7 & 1) << 9);  // infinity or NaN
    return uint16_t(sign | (13 + (r >> 7) % 6) << 10 | (r >> 10 & 0x3ff));          // 2^-2 .. 2^3
  }
  uint32_t word(int mode) {
    if (mode == 2) return next();
    if (mode == 3) {  // tf32-like: an f32 of moderate size
      const uint32_t r = next();
      return (r & 0x80000000u) | (120 + r % 16) << 23 | (r >> 8 & 0x7fffff);
    }
    return uint32_t(half(mode == 1)) | uint32_t(half(mode == 1)) << 16;
  }
  float accumulator(bool specials) {
    const uint32_t r = next(), kind = r % 32;
    if (kind == 0) return 0.0f;
    if (kind == 1 && specials) return (r >> 5 & 1) ? INFINITY : -INFINITY;
    if (kind == 2 && specials) return NAN;
    if (kind == 3) return std::ldexp(float(r >> 8 & 0xff), -140);  // subnormal
    return std::ldexp(float(int(r >> 8 & 0xffff) - 32768), int(r >> 24 & 15) - 20);
  }
};

}  // namespace

// mma and wmma on operands the float-lane sums take and on ones they leave to the double path: the same bits with
// every mask.
TEST(Rewrites, SameMatrixResults) {
  std::vector<std::shared_ptr<const Program>> programs;
  std::vector<uint32_t> masks = allMasks();
  for (uint32_t mask : masks) programs.push_back(compileMatrixWith(mask));
  OperandWords gen{0x9e3779b97f4a7c15ull};
  uint32_t* da = rewriteArena().alloc<uint32_t>(32 * 4);
  uint32_t* db = rewriteArena().alloc<uint32_t>(32 * 2);
  float* dc = rewriteArena().alloc<float>(32 * 4);
  uint32_t* dout = rewriteArena().alloc<uint32_t>(32 * 16);
  const uint32_t stride = 20;  // elements between tile lines
  uint16_t* ta = rewriteArena().alloc<uint16_t>(16 * stride);
  uint16_t* tb = rewriteArena().alloc<uint16_t>(16 * stride);
  float* tc = rewriteArena().alloc<float>(16 * stride);
  float* td = rewriteArena().alloc<float>(16 * stride);
  for (int trial = 0; trial < 64; ++trial) {
    // modes: 0 moderate, 1 with infinities and NaNs, 2 random bits, 3 tf32-like
    const int mode = trial % 8 == 7 ? 2 : trial % 8 == 6 ? 1 : trial % 8 == 5 ? 3 : 0;
    const bool specialC = trial % 4 == 3;
    for (int i = 0; i < 32 * 4; ++i) da[i] = gen.word(mode);
    for (int i = 0; i < 32 * 2; ++i) db[i] = gen.word(mode);
    for (int i = 0; i < 32 * 4; ++i) dc[i] = gen.accumulator(specialC);
    for (uint32_t i = 0; i < 16 * stride; ++i) {
      ta[i] = uint16_t(gen.word(mode == 3 ? 0 : mode));
      tb[i] = uint16_t(gen.word(mode == 3 ? 0 : mode));
      tc[i] = gen.accumulator(specialC);
    }
    std::vector<uint32_t> ref, refTile;
    for (size_t m = 0; m < masks.size(); ++m) {
      const Program& prog = *programs[m];
      std::memset(dout, 0, 32 * 16 * sizeof(uint32_t));
      std::memset(td, 0, 16 * stride * sizeof(float));
      ptxtest::Params p(kernels(prog)[size_t(findKernel(prog, "mmas"))]);
      p.arg(static_cast<const uint32_t*>(da)).arg(static_cast<const uint32_t*>(db)).arg(static_cast<const float*>(dc));
      p.arg(dout);
      ASSERT_TRUE(run(prog, "mmas", Dim3{1}, Dim3{32}, p).ok()) << masks[m];
      ptxtest::Params pw(kernels(prog)[size_t(findKernel(prog, "wmmas"))]);
      pw.arg(static_cast<const uint16_t*>(ta)).arg(static_cast<const uint16_t*>(tb)).arg(static_cast<const float*>(tc));
      pw.arg(td).arg(stride);
      ASSERT_TRUE(run(prog, "wmmas", Dim3{1}, Dim3{32}, pw).ok()) << masks[m];
      std::vector<uint32_t> out(dout, dout + 32 * 16);
      std::vector<uint32_t> tile(reinterpret_cast<uint32_t*>(td), reinterpret_cast<uint32_t*>(td) + 16 * stride);
      if (m == 0) {
        ref = out;
        refTile = tile;
        continue;
      }
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out[i], ref[i]) << "mma word " << i << " (lane " << i / 16 << "), trial " << trial << ", rewrites "
                                  << masks[m];
      for (size_t i = 0; i < tile.size(); ++i)
        ASSERT_EQ(tile[i], refTile[i]) << "wmma element " << i << ", trial " << trial << ", rewrites " << masks[m];
    }
  }
}

// wmma.load and wmma.store whose tile runs past its buffer: the same fault with every mask (matrix-tile-lines
// checks every line first and leaves the fault to the per-element path).
TEST(Rewrites, SameMatrixFaults) {
  const uint32_t stride = 16;
  uint16_t* ta = rewriteArena().alloc<uint16_t>(16 * stride);
  uint16_t* tb = rewriteArena().alloc<uint16_t>(16 * stride);
  float* tc = rewriteArena().alloc<float>(16 * stride);
  float* td = rewriteArena().alloc<float>(16 * stride);
  for (bool storeFaults : {false, true}) {
    // the last line of B (column-major: column 15) ends 4 bytes past the buffer; or the stored tile's last row does
    rewriteArena().limit(tb, storeFaults ? 16 * stride * 2 : 16 * stride * 2 - 4);
    rewriteArena().limit(td, storeFaults ? 16 * stride * 4 - 4 : 16 * stride * 4);
    std::optional<Fault> ref;
    for (uint32_t mask : allMasks()) {
      auto prog = compileMatrixWith(mask);
      ptxtest::Params pw(kernels(*prog)[size_t(findKernel(*prog, "wmmas"))]);
      pw.arg(static_cast<const uint16_t*>(ta)).arg(static_cast<const uint16_t*>(tb)).arg(static_cast<const float*>(tc));
      pw.arg(td).arg(stride);
      LaunchResult r = run(*prog, "wmmas", Dim3{1}, Dim3{32}, pw);
      ASSERT_FALSE(r.ok()) << "rewrites " << mask;
      expectSameFault(ref, r.fault, mask);
    }
    EXPECT_EQ(ref->address, storeFaults ? uint64_t(reinterpret_cast<uintptr_t>(td)) + 16 * stride * 4 - 4
                                        : uint64_t(reinterpret_cast<uintptr_t>(tb)) + 16 * stride * 2 - 4);
  }
}

namespace {

// wgmma m64n128k16 (f32 accumulators, f16 or bf16 multiplicands, both from 128-byte swizzled shared tiles filled from
// global memory), the accumulators loaded from and stored to global memory: 64 words per thread.
std::string wgmmaKernel(const char* type) {
  std::string text = R"(
.version 8.3
.target sm_90a
.address_size 64
.visible .entry wgmmas(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pout)
{
  .reg .f32 %f<64>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .shared .align 1024 .b8 sa[8192];
  .shared .align 1024 .b8 sb[16384];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  cvt.u64.u32 %rd3, %r2;
  add.s64 %rd4, %rd1, %rd3;
  mov.u32 %r3, sa;
  add.u32 %r8, %r3, %r2;
)";
  // 128-byte swizzled K-major tiles: a line of 128 bytes per row of A (64) and of B (128)
  for (int part = 0; part < 4; ++part)
    text += "  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd4+" + std::to_string(2048 * part) +
            "];\n  st.shared.v4.b32 [%r8+" + std::to_string(2048 * part) + "], {%r4, %r5, %r6, %r7};\n";
  text += "  add.s64 %rd4, %rd2, %rd3;\n  mov.u32 %r3, sb;\n  add.u32 %r8, %r3, %r2;\n";
  for (int part = 0; part < 8; ++part)
    text += "  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd4+" + std::to_string(2048 * part) +
            "];\n  st.shared.v4.b32 [%r8+" + std::to_string(2048 * part) + "], {%r4, %r5, %r6, %r7};\n";
  text += R"(  bar.sync 0;
  mov.u32 %r3, sa;
  cvt.u64.u32 %rd5, %r3;
  shr.u64 %rd5, %rd5, 4;
  or.b64 %rd5, %rd5, 0x4000004000010000;
  mov.u32 %r3, sb;
  cvt.u64.u32 %rd6, %r3;
  shr.u64 %rd6, %rd6, 4;
  or.b64 %rd6, %rd6, 0x4000004000010000;
  ld.param.u64 %rd7, [pc];
  ld.param.u64 %rd8, [pout];
  mul.wide.u32 %rd9, %r1, 256;
  add.s64 %rd10, %rd7, %rd9;
  add.s64 %rd11, %rd8, %rd9;
)";
  std::string d = "{";
  for (int i = 0; i < 64; ++i) {
    text += "  ld.global.f32 %f" + std::to_string(i) + ", [%rd10+" + std::to_string(4 * i) + "];\n";
    d += (i ? ", %f" : "%f") + std::to_string(i);
  }
  text += "  wgmma.fence.sync.aligned;\n  wgmma.mma_async.sync.aligned.m64n128k16.f32." + std::string(type) + "." +
          type + " " + d +
          "}, %rd5, %rd6, 1, 1, -1, 0, 0;\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
  for (int i = 0; i < 64; ++i)
    text += "  st.global.f32 [%rd11+" + std::to_string(4 * i) + "], %f" + std::to_string(i) + ";\n";
  return text + "  ret;\n}\n";
}

}  // namespace

// wgmma (narrow-tensor-sums, matrix-tile-lines) on the operands of SameMatrixResults: the same bits with every mask.
TEST(Rewrites, SameWgmmaResults) {
  std::vector<uint32_t> masks = allMasks();
  OperandWords gen{0x2545f4914f6cdd1dull};
  uint32_t* da = rewriteArena().alloc<uint32_t>(8192 / 4);
  uint32_t* db = rewriteArena().alloc<uint32_t>(16384 / 4);
  float* dc = rewriteArena().alloc<float>(128 * 64);
  uint32_t* dout = rewriteArena().alloc<uint32_t>(128 * 64);
  for (const char* type : {"f16", "bf16"}) {
    std::vector<std::shared_ptr<const Program>> programs;
    for (uint32_t mask : masks) {
      CompileOptions options;
      options.rewrites = mask;
      CompileResult r = compile(wgmmaKernel(type), options);
      ASSERT_TRUE(r.program) << r.error;
      programs.push_back(r.program);
    }
    for (int trial = 0; trial < 16; ++trial) {
      const int mode = trial % 8 == 7 ? 2 : trial % 8 == 6 ? 1 : 0;
      for (int i = 0; i < 8192 / 4; ++i) da[i] = gen.word(mode);
      for (int i = 0; i < 16384 / 4; ++i) db[i] = gen.word(mode);
      for (int i = 0; i < 128 * 64; ++i) dc[i] = gen.accumulator(trial % 4 == 3);
      std::vector<uint32_t> ref;
      for (size_t m = 0; m < masks.size(); ++m) {
        const Program& prog = *programs[m];
        std::memset(dout, 0, 128 * 64 * sizeof(uint32_t));
        ptxtest::Params p(kernels(prog)[0]);
        p.arg(static_cast<const uint32_t*>(da))
            .arg(static_cast<const uint32_t*>(db))
            .arg(static_cast<const float*>(dc));
        p.arg(dout);
        ASSERT_TRUE(run(prog, "wgmmas", Dim3{1}, Dim3{128}, p).ok()) << masks[m];
        std::vector<uint32_t> out(dout, dout + 128 * 64);
        if (m == 0) {
          ref = out;
          continue;
        }
        for (size_t i = 0; i < out.size(); ++i)
          ASSERT_EQ(out[i], ref[i]) << type << " word " << i << ", trial " << trial << ", rewrites " << masks[m];
      }
    }
  }
}

// The shared-memory tree reduction (9 barriers, `if (t < k)` phases down to one lane) gives the same sums with every
// mask; branch-to-barrier fires on it (its phases' branches go straight to their barrier).
TEST(Rewrites, SameReductionResults) {
  const int blocks = 6;
  std::vector<float> in(size_t(blocks * 256));
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 13) - 4.0f;
  const float* din = rewriteArena().upload(in);
  for (uint32_t mask : allMasks()) {
    auto prog = compileWith("bench.ptx", mask);
    float* out = rewriteArena().alloc<float>(blocks);
    ptxtest::Params p(kernels(*prog)[size_t(findKernel(*prog, "reduce"))]);
    p.arg(din).arg(out);
    ASSERT_TRUE(run(*prog, "reduce", Dim3{blocks}, Dim3{256}, p).ok()) << "rewrites " << mask;
    for (int b = 0; b < blocks; ++b) {
      float sum = 0;
      for (int t = 0; t < 256; ++t) sum += in[size_t(b * 256 + t)];
      EXPECT_EQ(out[b], sum) << "block " << b << ", rewrites " << mask;  // small integers: exact in any order
    }
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;  // the masks above were cut to the run's
  const uint32_t without = kAllRewrites & ~rewriteBit(Rewrite::BranchToBarrier);
  EXPECT_NE(programStats(*compileWith("bench.ptx", kAllRewrites)).digest,
            programStats(*compileWith("bench.ptx", without)).digest);
}

// barrier-credits: 8 warps, 6 __syncthreads phases. Warps with nothing to do in a phase arrive at its barrier in
// advance (their branches test thread constants). Warp 7 passes phases 1 and 2 on credit and then reads what warp
// 0 wrote in phase 2; warp 1 runs phase 4 with 8 of its lanes; warp 6 exits after phase 0 (the barriers then count
// the others only), and the warps that wait on credit meanwhile must still complete every phase. The same memory
// with the fast path off; with it on the launch reports credited phases.
TEST(Rewrites, BarrierCreditsPassPhasesInAdvance) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry credits(.param .u64 out) {
  .reg .pred %p<8>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  mov.u32 %r5, %ctaid.x;
  add.s32 %r6, %r1, %r5;
  st.shared.u32 [%r4], %r6;
  bar.sync 0;
  setp.ge.u32 %p6, %r1, 192;
  setp.lt.u32 %p7, %r1, 224;
  and.pred %p6, %p6, %p7;
  @%p6 bra EXIT;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra PHASE2;
  ld.shared.u32 %r7, [%r4];
  ld.shared.u32 %r8, [%r4+256];
  add.s32 %r7, %r7, %r8;
  st.shared.u32 [%r4], %r7;
PHASE2:
  bar.sync 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra PHASE3;
  ld.shared.u32 %r9, [%r4];
  ld.shared.u32 %r10, [%r4+128];
  mul.lo.s32 %r10, %r10, 3;
  add.s32 %r9, %r9, %r10;
  st.shared.u32 [%r4], %r9;
PHASE3:
  bar.sync 0;
  setp.lt.u32 %p3, %r1, 224;
  @%p3 bra PHASE4;
  ld.shared.u32 %r11, [%r4+-896];
  shl.b32 %r11, %r11, 1;
  st.shared.u32 [%r4], %r11;
PHASE4:
  bar.sync 0;
  setp.lt.u32 %p4, %r1, 32;
  setp.ge.u32 %p5, %r1, 40;
  or.pred %p4, %p4, %p5;
  @%p4 bra PHASE5;
  ld.shared.u32 %r12, [%r4+768];
  add.s32 %r12, %r12, 7;
  st.shared.u32 [%r4], %r12;
PHASE5:
  bar.sync 0;
  ld.shared.u32 %r13, [%r4];
  mad.lo.s32 %r14, %r5, 256, %r1;
  mul.wide.u32 %rd2, %r14, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r13;
EXIT:
  ret;
}
)";
  const uint32_t blocks = 3;
  std::vector<uint32_t> expected(blocks * 256, 0xffffffffu);
  for (uint32_t b = 0; b < blocks; ++b) {
    uint32_t sh[256];
    for (uint32_t t = 0; t < 256; ++t) sh[t] = t + b;
    for (uint32_t t = 0; t < 64; ++t) sh[t] += sh[t + 64];
    for (uint32_t t = 0; t < 32; ++t) sh[t] += 3 * sh[t + 32];
    for (uint32_t t = 224; t < 256; ++t) sh[t] = sh[t - 224] << 1;
    for (uint32_t t = 32; t < 40; ++t) sh[t] = sh[t + 192] + 7;
    for (uint32_t t = 0; t < 256; ++t)
      if (t < 192 || t >= 224) expected[b * 256 + t] = sh[t];
  }
  const uint32_t without = kAllRewrites & ~rewriteBit(Rewrite::BarrierCredits);
  for (uint32_t mask : {kAllRewrites, without, 0u}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    for (ExecConfig cfg :
         {ExecConfig{}, ExecConfig{.deterministic = true}, ExecConfig{.deterministic = true, .scheduleSeed = 7}}) {
      uint32_t* out = rewriteArena().alloc<uint32_t>(blocks * 256);
      std::memset(out, 0xff, blocks * 256 * sizeof(uint32_t));
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out);
      LaunchResult r = run(*cr.program, "credits", Dim3{blocks}, Dim3{256}, p, cfg);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      for (uint32_t i = 0; i < blocks * 256; ++i)
        ASSERT_EQ(out[i], expected[i]) << "thread " << i % 256 << " of block " << i / 256 << ", rewrites " << mask;
      if (mask == kAllRewrites && (defaultRewrites() & kAllRewrites) == kAllRewrites) {
        // per CTA: warps 2-7 pass phase 1's barrier, 1-7 phase 2's (6 of them alive), ... on credit
        EXPECT_GT(r.barrierCreditPhases, 10u * blocks);
      } else if (mask != kAllRewrites) {
        EXPECT_EQ(r.barrierCreditPhases, 0u);
      }
    }
  }
}

// Credits that depend only on thread constants are remembered per warp across the CTAs a host thread runs, and
// forgotten when a launch brings other constants: three launches in a row on one host thread, with `tid < n` for
// n = 64, 192, 64 (warps 2-5 idle in phase 1 of the first and third, busy in the second).
// Barrier credits that end at a guarded exit every thread of the warp takes (`if (t != 0) return;` after the last
// __syncthreads): the release ends the warp there, and thread 0, which goes on to a barrier of its own, finds the
// other threads gone. Warp 1 ends so from its second barrier, warps 2-7 from their first: 7 warps per CTA.
TEST(Rewrites, BarrierCreditsEndAtExits) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry exits(.param .u64 out) {
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  mov.u32 %r5, %ctaid.x;
  mad.lo.s32 %r6, %r1, 3, %r5;
  st.shared.u32 [%r4], %r6;
  bar.sync 0;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra SKIP1;
  ld.shared.u32 %r7, [%r4];
  ld.shared.u32 %r8, [%r4+256];
  add.s32 %r7, %r7, %r8;
  st.shared.u32 [%r4], %r7;
SKIP1:
  bar.sync 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra SKIP2;
  ld.shared.u32 %r9, [%r4];
  ld.shared.u32 %r10, [%r4+128];
  add.s32 %r9, %r9, %r10;
  st.shared.u32 [%r4], %r9;
SKIP2:
  bar.sync 0;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra DONE;
  bar.sync 1;
  ld.shared.u32 %r11, [%r4+124];
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r11;
DONE:
  ret;
}
)";
  constexpr uint32_t blocks = 6;
  std::vector<uint32_t> expected(blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    // s[31] after both steps: the sum of s[31 + 32 k] for k = 0..3, s[t] = 3t + b
    uint32_t sum = 0;
    for (uint32_t k = 0; k < 4; ++k) sum += 3 * (31 + 32 * k) + b;
    expected[b] = sum;
  }
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::BarrierCredits)}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    for (ExecConfig cfg : {ExecConfig{}, ExecConfig{.deterministic = true, .scheduleSeed = 3}}) {
      uint32_t* out = rewriteArena().alloc<uint32_t>(blocks);
      std::memset(out, 0xff, blocks * sizeof(uint32_t));
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out);
      LaunchResult r = run(*cr.program, "exits", Dim3{blocks}, Dim3{256}, p, cfg);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      for (uint32_t b = 0; b < blocks; ++b) EXPECT_EQ(out[b], expected[b]) << "block " << b << ", rewrites " << mask;
      if (mask == kAllRewrites && (defaultRewrites() & kAllRewrites) == kAllRewrites) {
        EXPECT_EQ(r.barrierCreditExits, 7u * blocks);
      } else if (mask != kAllRewrites) {
        EXPECT_EQ(r.barrierCreditExits, 0u);
      }
    }
  }
}

TEST(Rewrites, BarrierCreditsFollowEachLaunchsConstants) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry phases(.param .u64 out, .param .u32 n) {
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  setp.ge.u32 %p1, %r1, %r9;
  @%p1 bra P2;
  ld.shared.u32 %r5, [%r4];
  add.s32 %r5, %r5, 1000;
  st.shared.u32 [%r4], %r5;
P2:
  bar.sync 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra P3;
  ld.shared.u32 %r6, [%r4+512];
  st.shared.u32 [%r4], %r6;
P3:
  bar.sync 0;
  ld.shared.u32 %r7, [%r4];
  mov.u32 %r10, %ctaid.x;
  mad.lo.s32 %r11, %r10, 256, %r1;
  mul.wide.u32 %rd2, %r11, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  const uint32_t blocks = 4;
  for (uint32_t n : {64u, 192u, 64u}) {
    uint32_t* out = rewriteArena().alloc<uint32_t>(blocks * 256);
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out).arg(n);
    LaunchResult r = run(*cr.program, "phases", Dim3{blocks}, Dim3{256}, p, ExecConfig{.deterministic = true});
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t i = 0; i < blocks * 256; ++i) {
      const uint32_t t = i % 256, from = t < 32 ? t + 128 : t;
      ASSERT_EQ(out[i], from + (from < n ? 1000 : 0)) << "thread " << t << " of block " << i / 256 << ", n " << n;
    }
    if ((defaultRewrites() & kAllRewrites) == kAllRewrites) {
      EXPECT_GT(r.barrierCreditPhases, 0u) << n;
    }
  }
}

// shared-partial-blocks: lanes 0-9 of warp 0 load and store through a thread-constant base whose 32 addresses are one
// block; the other lanes' destination register (7) and shared words (t + 100) must survive the whole-block moves.
TEST(Rewrites, SharedPartialBlocksKeepTheLanesThatDoNotExecute) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry partial(.param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[512];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  add.s32 %r8, %r1, 100;
  st.shared.u32 [%r4], %r8;
  mov.u32 %r5, 7;
  bar.sync 0;
  setp.lt.u32 %p1, %r1, 10;
  @!%p1 bra SKIP;
  ld.shared.u32 %r5, [%r4+128];
  add.s32 %r6, %r1, 1000;
  st.shared.u32 [%r4], %r6;
SKIP:
  bar.sync 0;
  ld.shared.u32 %r7, [%r4];
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r5, %r7};
  ret;
}
)";
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::SharedPartialBlocks), 0u}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    uint32_t* out = rewriteArena().alloc<uint32_t>(128);
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out);
    LaunchResult r = run(*cr.program, "partial", Dim3{1}, Dim3{64}, p);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t t = 0; t < 64; ++t) {
      EXPECT_EQ(out[2 * t], t < 10 ? t + 132 : 7u) << "thread " << t << ", rewrites " << mask;
      EXPECT_EQ(out[2 * t + 1], t < 10 ? t + 1000 : t + 100) << "thread " << t << ", rewrites " << mask;
    }
  }
}

// cta-indices: registers computed from %ctaid (times immediates and %ntid, plus immediates and a thread constant or
// %tid) are written at CTA set-up. A 2-D grid of 3x2 CTAs of 96 threads (warp 2 full, no partial warp: 3 warps),
// several host threads: the global index by mad.lo and by mul.lo + add, %ctaid.y * 7 + 3 by shl and adds, one with
// a thread-constant lane term (tid * 4) and a register defined twice (not a CTA index: it must keep its second value).
TEST(Rewrites, CtaIndicesAreThoseOfEachCta) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry indices(.param .u64 out) {
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ctaid.y;
  mad.lo.s32 %r5, %r1, %r2, %r3;
  mul.lo.s32 %r6, %r2, %r1;
  add.s32 %r7, %r3, %r6;
  shl.b32 %r8, %r4, 3;
  sub.s32 %r9, %r8, %r4;
  mul.lo.u32 %r10, %r4, 7;
  add.s32 %r11, %r10, 3;
  shl.b32 %r12, %r3, 2;
  add.s32 %r13, %r11, %r12;
  add.s32 %r14, %r5, 5;
  add.s32 %r14, %r14, %r4;
  mov.u32 %r15, %nctaid.x;
  mad.lo.s32 %r16, %r4, %r15, %r1;
  mad.lo.s32 %r17, %r16, 96, %r3;
  mul.wide.u32 %rd2, %r17, 24;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r5, %r7};
  st.global.v2.u32 [%rd3+8], {%r9, %r11};
  st.global.v2.u32 [%rd3+16], {%r13, %r14};
  ret;
}
)";
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::CtaIndices), 0u}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    for (ExecConfig cfg : {ExecConfig{.threads = 2}, ExecConfig{.deterministic = true}}) {
      const uint32_t total = 6 * 96;
      uint32_t* out = rewriteArena().alloc<uint32_t>(total * 6);
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out);
      LaunchResult r = run(*cr.program, "indices", Dim3{3, 2}, Dim3{96}, p, cfg);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 3; ++x)
          for (uint32_t t = 0; t < 96; ++t) {
            const uint32_t* o = out + ((y * 3 + x) * 96 + t) * 6;
            const uint32_t global = x * 96 + t;
            ASSERT_EQ(o[0], global) << x << "," << y << " thread " << t << ", rewrites " << mask;
            ASSERT_EQ(o[1], global) << x << "," << y << " thread " << t << ", rewrites " << mask;
            ASSERT_EQ(o[2], y * 7) << x << "," << y << " thread " << t << ", rewrites " << mask;
            ASSERT_EQ(o[3], y * 7 + 3) << x << "," << y << " thread " << t << ", rewrites " << mask;
            ASSERT_EQ(o[4], y * 7 + 3 + 4 * t) << x << "," << y << " thread " << t << ", rewrites " << mask;
            ASSERT_EQ(o[5], global + 5 + y) << x << "," << y << " thread " << t << ", rewrites " << mask;
          }
    }
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;
  CompileOptions without;
  without.rewrites = kAllRewrites & ~rewriteBit(Rewrite::CtaIndices);
  EXPECT_LT(programStats(*compile(ptx).program).ops, programStats(*compile(ptx, without).program).ops);
}

// shared-add-steps: `s[t] += s[t + 64]` (u32) for t < n through a thread-constant base, as one op: full warps (n = 64)
// and a partial one (n = 40: lanes 8-31 of warp 1 keep their shared word and registers), the loaded values and the
// sum still in their registers afterwards; an offset past the shared block (bump) leaves the four ops to fault as
// without the rewrite.
TEST(Rewrites, SharedAddStepsAsTheFourOps) {
  auto kernel = [](int bump) {
    return std::string(R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry step(.param .u64 out, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[512];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  mul.lo.s32 %r8, %r1, 3;
  st.shared.u32 [%r4], %r8;
  st.shared.u32 [%r4+256], %r1;
  mov.u32 %r5, 7;
  mov.u32 %r6, 7;
  mov.u32 %r7, 7;
  bar.sync 0;
  setp.ge.u32 %p1, %r1, %r9;
  @%p1 bra DONE;
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r6, [%r4+)") +
           std::to_string(256 + bump) + R"(];
  add.s32 %r7, %r6, %r5;
  st.shared.u32 [%r4], %r7;
DONE:
  bar.sync 0;
  ld.shared.u32 %r10, [%r4];
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r10, %r5, %r6, %r7};
  ret;
}
)";
  };
  const std::string ok = kernel(0);
  for (uint32_t n : {64u, 40u})
    for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::SharedAddSteps), 0u}) {
      CompileResult cr = compileText(ok.c_str(), mask);
      ASSERT_TRUE(cr.program) << cr.error;
      uint32_t* out = rewriteArena().alloc<uint32_t>(64 * 4);
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out).arg(n);
      LaunchResult r = run(*cr.program, "step", Dim3{1}, Dim3{64}, p);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      for (uint32_t t = 0; t < 64; ++t) {
        const uint32_t x = 3 * t, y = t, in = t < n;
        EXPECT_EQ(out[4 * t], in ? x + y : x) << "thread " << t << ", n " << n << ", rewrites " << mask;
        EXPECT_EQ(out[4 * t + 1], in ? x : 7u) << "thread " << t << ", n " << n << ", rewrites " << mask;
        EXPECT_EQ(out[4 * t + 2], in ? y : 7u) << "thread " << t << ", n " << n << ", rewrites " << mask;
        EXPECT_EQ(out[4 * t + 3], in ? x + y : 7u) << "thread " << t << ", n " << n << ", rewrites " << mask;
      }
    }
  // f32: NaN inputs give the canonical NaN, subnormals add exactly, as the unfused add.f32 does (bits compared)
  std::string floats = ok;
  for (auto [from, to] : {std::pair<std::string, std::string>{"ld.shared.u32 %r5", "ld.shared.f32 %r5"},
                          {"ld.shared.u32 %r6", "ld.shared.f32 %r6"},
                          {"add.s32 %r7", "add.f32 %r7"},
                          {"st.shared.u32 [%r4], %r7", "st.shared.f32 [%r4], %r7"},
                          {"mul.lo.s32 %r8, %r1, 3;",
                           "mul.lo.s32 %r8, %r1, 3;\n  and.b32 %r11, %r1, 3;\n  setp.eq.u32 "
                           "%p0, %r11, 0;\n  or.b32 %r12, %r1, 2141192192;\n  selp.b32 %r8, "
                           "%r12, %r8, %p0;"}}) {
    const size_t at = floats.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    floats.replace(at, from.size(), to);
  }
  std::vector<uint32_t> unfused;
  for (uint32_t mask : {kAllRewrites & ~rewriteBit(Rewrite::SharedAddSteps), kAllRewrites}) {
    CompileResult cr = compileText(floats.c_str(), mask);
    ASSERT_TRUE(cr.program) << cr.error;
    uint32_t* out = rewriteArena().alloc<uint32_t>(64 * 4);
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out).arg(40u);
    LaunchResult r = run(*cr.program, "step", Dim3{1}, Dim3{64}, p);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    std::vector<uint32_t> got(out, out + 64 * 4);
    if (unfused.empty()) {
      unfused = got;
      EXPECT_EQ(got[3], 0x7fffffffu) << "a NaN input's sum";
      continue;
    }
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], unfused[i]) << "word " << i;
  }
  // s[t + 8] += s[t]: the second block lies below the first and overlaps it, so the first's stores must wait for
  // both loads of every lane, as the unfused ops' loads come before their store
  std::string below = ok;
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"ld.shared.u32 %r5, [%r4];", "ld.shared.u32 %r5, [%r4+32];"},
        {"ld.shared.u32 %r6, [%r4+256];", "ld.shared.u32 %r6, [%r4];"},
        {"st.shared.u32 [%r4], %r7;", "st.shared.u32 [%r4+32], %r7;"}}) {
    const size_t at = below.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    below.replace(at, from.size(), to);
  }
  for (uint32_t n : {64u, 40u, 12u}) {
    std::vector<uint32_t> reference;
    for (uint32_t mask : {kAllRewrites & ~rewriteBit(Rewrite::SharedAddSteps), kAllRewrites}) {
      CompileResult cr = compileText(below.c_str(), mask);
      ASSERT_TRUE(cr.program) << cr.error;
      uint32_t* out = rewriteArena().alloc<uint32_t>(64 * 4);
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out).arg(n);
      LaunchResult r = run(*cr.program, "step", Dim3{1}, Dim3{64}, p);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      std::vector<uint32_t> got(out, out + 64 * 4);
      if (reference.empty()) {
        reference = got;
        EXPECT_EQ(got[4 * 9], 3u * 9u + 3u * 1u) << "s[9] = s[9] + s[1], the loads before any store";
        continue;
      }
      for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], reference[i]) << "word " << i << ", n " << n;
    }
  }
  const std::string past = kernel(1024);
  std::optional<Fault> reference;
  for (uint32_t mask : {kAllRewrites & ~rewriteBit(Rewrite::SharedAddSteps), kAllRewrites}) {
    CompileResult cr = compileText(past.c_str(), mask);
    ASSERT_TRUE(cr.program) << cr.error;
    uint32_t* out = rewriteArena().alloc<uint32_t>(64 * 4);
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out).arg(64u);
    LaunchResult r = run(*cr.program, "step", Dim3{1}, Dim3{64}, p);
    ASSERT_FALSE(r.ok()) << "rewrites " << mask;
    expectSameFault(reference, r.fault, mask);
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;
  CompileOptions without;
  without.rewrites = kAllRewrites & ~rewriteBit(Rewrite::SharedAddSteps);
  EXPECT_NE(programStats(*compile(ok).program).digest, programStats(*compile(ok, without).program).digest);
}

// A deadlock found while a warp waits on barrier credits names the barrier it waits at then, as without them: warp
// 0 arrives at the first bar.sync 0 with credits for the next two; warp 1 stops at bar.sync 1, which can never
// complete, while warp 0 waits at the second bar.sync 0.
TEST(Rewrites, BarrierCreditsReportTheBarrierWaitedAt) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry stuck() {
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  bar.sync 0;
  @%p1 bra FIRST;
  bar.sync 1;
FIRST:
  bar.sync 0;
  @%p1 bra SECOND;
SECOND:
  bar.sync 0;
  ret;
}
)";
  const std::string text(ptx);
  const size_t at = text.find("FIRST:\n");
  const uint32_t firstLine = uint32_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) + 2;
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::BarrierCredits)}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    ptxtest::Params p(kernels(*cr.program)[0]);
    LaunchResult r = run(*cr.program, "stuck", Dim3{1}, Dim3{64}, p);
    ASSERT_EQ(r.fault.kind, FaultKind::Deadlock) << r.fault.message;
    EXPECT_EQ(r.fault.ptxLine, firstLine) << r.fault.message << ", rewrites " << mask;
    EXPECT_EQ(r.fault.thread.x, 0u) << "rewrites " << mask;
    if (mask == kAllRewrites && (defaultRewrites() & kAllRewrites) == kAllRewrites) {
      EXPECT_EQ(r.barrierCreditPhases, 1u);
    }
  }
}

// thread-constants: what every CTA of a launch computes alike from %tid, parameters and immediates (a shared
// address, `tid < n`, a selp on it) runs once per warp in the prologue; what depends on %ctaid, a register with two
// definitions (one guarded) and float work stay in the kernel. Two launches in a row on one host thread with
// different n: the prologue runs again for the second launch's parameters. 48 threads: warp 1 has 16 lanes.
TEST(Rewrites, ThreadConstantsAreThoseOfEveryCta) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry hoist(.param .u64 out, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<3>;
  .shared .align 4 .b8 s[512];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, s;
  add.s32 %r5, %r4, %r3;
  setp.lt.u32 %p1, %r2, %r1;
  selp.u32 %r6, 7, 9, %p1;
  mov.u32 %r7, %ctaid.x;
  mad.lo.s32 %r8, %r7, 48, %r2;
  xor.b32 %r9, %r2, %r7;
  mov.u32 %r10, 3;
  @%p1 mov.u32 %r10, 5;
  cvt.rn.f32.u32 %f1, %r2;
  mul.f32 %f2, %f1, 0f3F000000;
  mov.b32 %r15, %f2;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  xor.b32 %r11, %r2, 1;
  shl.b32 %r12, %r11, 2;
  add.s32 %r13, %r4, %r12;
  ld.shared.u32 %r14, [%r13];
  mul.wide.u32 %rd2, %r8, 32;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r3, %r5, %r6, %r9};
  st.global.v4.u32 [%rd3+16], {%r10, %r14, %r8, %r15};
  ret;
}
)";
  const uint32_t blocks = 3, threads = 48;
  ExecConfig oneThread;
  oneThread.threads = 1;
  std::map<uint32_t, std::vector<uint32_t>> reference;  // per n: the results without any rewrite
  for (uint32_t mask : {0u, kAllRewrites & ~rewriteBit(Rewrite::ThreadConstants), kAllRewrites}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    for (uint32_t n : {10u, 40u, 10u}) {
      uint32_t* out = rewriteArena().alloc<uint32_t>(blocks * threads * 8);
      std::memset(out, 0xee, blocks * threads * 8 * sizeof(uint32_t));
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out).arg(n);
      LaunchResult r = run(*cr.program, "hoist", Dim3{blocks}, Dim3{threads}, p, oneThread);
      ASSERT_TRUE(r.ok()) << r.fault.message;
      std::vector<uint32_t> got(out, out + blocks * threads * 8);
      for (uint32_t b = 0; b < blocks; ++b)
        for (uint32_t t = 0; t < threads; ++t) {
          const uint32_t* v = &got[(b * threads + t) * 8];
          const std::string where = "block " + std::to_string(b) + " thread " + std::to_string(t) + " n " +
                                    std::to_string(n) + " rewrites " + std::to_string(mask);
          EXPECT_EQ(v[0], 4 * t) << where;
          EXPECT_EQ(v[1], got[1] + 4 * t) << where;  // s + 4t: thread 0 of block 0 has s's offset
          EXPECT_EQ(v[2], t < n ? 7u : 9u) << where;
          EXPECT_EQ(v[3], t ^ b) << where;
          EXPECT_EQ(v[4], t < n ? 5u : 3u) << where;
          EXPECT_EQ(v[5], t ^ 1u) << where;
          EXPECT_EQ(v[6], b * threads + t) << where;
          EXPECT_EQ(v[7], std::bit_cast<uint32_t>(float(t) * 0.5f)) << where;
        }
      auto [it, inserted] = reference.emplace(n, got);
      if (!inserted) {
        EXPECT_EQ(got, it->second) << "n " << n << ", rewrites " << mask;
      }
    }
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;  // the masks above were cut to the run's
  CompileOptions with, without;
  without.rewrites = kAllRewrites & ~rewriteBit(Rewrite::ThreadConstants);
  EXPECT_NE(programStats(*compile(ptx, with).program).digest, programStats(*compile(ptx, without).program).digest);
}

// A kernel (params out, stride, bias) whose threads access shared memory at tid * stride + bias, run for each case
// under each mask on one host thread: the fault (kind, and the thread the rewrites-off run names) or, without one,
// each thread's value (expected(thread, case)) and the same values under every mask.
namespace {
struct SharedAccessCase {
  uint32_t stride, bias;
  FaultKind fault;
  uint32_t thread;
};
void expectSharedAccessCases(const char* ptx, const char* kernel, uint32_t threads,
                             std::initializer_list<uint32_t> masks, std::initializer_list<SharedAccessCase> cases,
                             const std::function<uint32_t(uint32_t, const SharedAccessCase&)>& expected) {
  for (const SharedAccessCase& c : cases) {
    std::optional<Fault> reference;
    std::vector<uint32_t> values;
    for (uint32_t mask : masks) {
      CompileOptions options;
      options.rewrites = mask;
      CompileResult cr = compile(ptx, options);
      ASSERT_TRUE(cr.program) << cr.error;
      uint32_t* out = rewriteArena().alloc<uint32_t>(threads);
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out).arg(c.stride).arg(c.bias);
      ExecConfig oneThread;
      oneThread.threads = 1;
      LaunchResult r = run(*cr.program, kernel, Dim3{1}, Dim3{threads}, p, oneThread);
      EXPECT_EQ(r.fault.kind, c.fault) << "stride " << c.stride << " bias " << c.bias << ", rewrites " << mask;
      if (c.fault != FaultKind::None) {
        EXPECT_EQ(r.fault.thread.x, c.thread) << "stride " << c.stride << ", rewrites " << mask;
        expectSameFault(reference, r.fault, mask);
        continue;
      }
      std::vector<uint32_t> got(out, out + threads);
      for (uint32_t t = 0; t < threads; ++t)
        EXPECT_EQ(got[t], expected(t, c)) << "thread " << t << " stride " << c.stride << ", rewrites " << mask;
      if (values.empty())
        values = got;
      else
        EXPECT_EQ(got, values) << "stride " << c.stride << ", rewrites " << mask;
    }
  }
}
}  // namespace

// Shared accesses through thread-constant base registers reuse a layout the prologue computed once per warp: it
// must still leave every lane's check to the per-lane path where the addresses are misaligned or out of the block,
// with the fault of the rewrites-off run (the right lane), and give the same values where they are fine.
TEST(Rewrites, ThreadConstantSharedBasesFaultAsWithout) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry bases(.param .u64 out, .param .u32 stride, .param .u32 bias) {
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [stride];
  ld.param.u32 %r2, [bias];
  mov.u32 %r3, %tid.x;
  mul.lo.u32 %r4, %r3, %r1;
  add.u32 %r5, %r4, %r2;
  mov.u32 %r6, s;
  add.u32 %r7, %r6, %r5;
  st.shared.u32 [%r7], %r3;
  bar.sync 0;
  ld.shared.u32 %r8, [%r7];
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  ret;
}
)";
  // stride 0: every thread's store to one word, the last one (thread 63) written wins
  expectSharedAccessCases(ptx, "bases", 64, {0u, kAllRewrites},
                          {{4, 0, FaultKind::None, 0},
                           {2, 0, FaultKind::MisalignedAddress, 1},
                           {4, 1000, FaultKind::IllegalAddress, 6},
                           {0, 8, FaultKind::None, 0}},
                          [](uint32_t t, const SharedAccessCase& c) { return c.stride ? t : 63u; });
}

// Shared accesses of partial warps: the even lanes of each warp store and load shared memory at tid * stride + bias
// (the odd ones branch around); where an executing lane's address is misaligned or past the block, the fault names
// that lane with the fast paths on and off, and the values are the same. (A partial-warp fast path that checked the
// 32 addresses at once was tried and dropped: for the 1-16 lanes of a tree reduction's last phases it cost as much
// as checking each lane.)
TEST(Rewrites, PartialWarpSharedAccessesFaultAsWithout) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry evens(.param .u64 out, .param .u32 stride, .param .u32 bias) {
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [stride];
  ld.param.u32 %r2, [bias];
  mov.u32 %r3, %tid.x;
  mov.u32 %r9, %ctaid.x;
  add.u32 %r10, %r3, %r9;
  mul.lo.u32 %r4, %r3, %r1;
  add.u32 %r5, %r4, %r2;
  mov.u32 %r6, s;
  add.u32 %r7, %r6, %r5;
  mov.u32 %r8, 0;
  and.b32 %r11, %r3, 1;
  setp.eq.u32 %p1, %r11, 1;
  @%p1 bra SKIP;
  st.shared.u32 [%r7], %r10;
  ld.shared.u32 %r8, [%r7];
SKIP:
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  ret;
}
)";
  // stride 0: the even lanes' stores to one word, in lane order per warp (warp 0, then warp 1)
  expectSharedAccessCases(ptx, "evens", 48, {0u, kAllRewrites, kLoweringRewrites},
                          {{4, 0, FaultKind::None, 0},
                           {4, 2, FaultKind::MisalignedAddress, 0},
                           {4, 1000, FaultKind::IllegalAddress, 6},
                           {0, 8, FaultKind::None, 0}},
                          [](uint32_t t, const SharedAccessCase& c) {
                            return t % 2 ? 0u : c.stride ? t : (t < 32 ? 30u : 46u);
                          });
}

// branch-to-barrier must not skip a reconvergence point that something waits at: in warps 0-3 the first branch
// diverges (lanes 16-31 go to DONE and wait there) and the second one sends the other half to DONE as well, every
// lane it has; the reconvergence op must bring lanes 16-31 back before the barrier, so that the whole warp passes it
// together (activemask after it: all 32 lanes; skipped, lanes 0-15 would go on alone and 16-31 pass the barrier
// later). In warps 4-7 the lanes 0-15 write s[t] = t + 1000 between the barriers.
TEST(Rewrites, BranchToBarrierKeepsWaitingLanes) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry nested(.param .u64 out) {
  .reg .pred %p<3>;
  .reg .b32 %r<13>;
  .reg .b64 %rd<5>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  and.b32 %r5, %r1, 31;
  setp.ge.u32 %p1, %r5, 16;
  @%p1 bra DONE;
  setp.lt.u32 %p2, %r1, 128;
  @%p2 bra DONE;
  add.s32 %r6, %r1, 1000;
  st.shared.u32 [%r4], %r6;
DONE:
  bar.sync 0;
  xor.b32 %r7, %r1, 1;
  shl.b32 %r8, %r7, 2;
  add.s32 %r9, %r3, %r8;
  ld.shared.u32 %r10, [%r9];
  mov.u32 %r11, %ctaid.x;
  mad.lo.s32 %r11, %r11, 256, %r1;
  mul.wide.u32 %rd2, %r11, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
  activemask.b32 %r12;
  st.global.u32 [%rd3+4096], %r12;
  ret;
}
)";
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::BranchToBarrier), 0u}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    uint32_t* out = rewriteArena().alloc<uint32_t>(1024 + 512);
    std::memset(out, 0xff, (1024 + 512) * sizeof(uint32_t));
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out);
    LaunchResult r = run(*cr.program, "nested", Dim3{2}, Dim3{256}, p);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (uint32_t i = 0; i < 512; ++i) {
      const uint32_t t = i % 256, u = t ^ 1u;
      const uint32_t expected = u >= 128 && (u & 31) < 16 ? u + 1000 : u;
      ASSERT_EQ(out[i], expected) << "thread " << t << " of block " << i / 256 << ", rewrites " << mask;
      ASSERT_EQ(out[1024 + i], 0xffffffffu) << "thread " << t << " of block " << i / 256 << ", rewrites " << mask;
    }
  }
}

// Vector (.v2/.v4) shared-memory loads and stores (shared-warp-layouts, shared-layouts; the patterns of cuBLAS's
// SIMT SGEMM: a warp's consecutive float2 and one float2 broadcast to every lane). Thread t of a CTA of n threads:
// - stores {t, t+1000, t+2000, t+3000} (v4.u32) at 16t (consecutive); {t, ~t} (v2.u32) at 2048 + 8(t/16) (one
//   address per half-warp: the highest lane's vector is stored); {t, 3t} (v2.u64) at 2304 + 16(t%4) (four addresses
//   per warp, lane order: the highest lane of the last warp wins);
// - loads out[t][0..3] = its v4 back (+ `ldShift` bytes: a misaligned vector), out[4..9] = the v2.u32 at
//   8(t/32) + {0, 256, 512} (one vector per warp, one base register: the layout computed once and reused; the
//   last through a 64-bit register), out[10..11] = the v2 at 8(31 - t%32) + 256(t/32) (lanes in reverse order),
//   out[12..15] = the v2.u64 at 2304 + 16(t%4), out[16..17] = the v2.u32 at 2048 + 8(t/16), out[18..19] = the
//   v4.u8 at 4t (bytes of consecutive 4-byte vectors), out[20..23] = the v4 at 16t + `ldBump` (past the block
//   when bumped), out[24..27] = the v2.u32 at 8t (a warp's 32 consecutive vectors, as cuBLAS reads its A tile) and
//   swapped, out[28..31] = the v2.u64 that lane t % 32 of warp 0 stored at 4096 + 16(t % 32) ({t, 5t}: consecutive
//   stores and loads); then stores its v4 again at 16t + `stBump`.
const char* kSharedVectors = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry vshared(.param .u64 out, .param .u32 ldShift, .param .u32 ldBump, .param .u32 stBump)
{
  .reg .b16 %rs<5>;
  .reg .b32 %r<40>;
  .reg .b32 %v<2>;
  .reg .b64 %rd<12>;
  .reg .b64 %vd<4>;
  .shared .align 16 .b8 buf[8192];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  shl.b32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  add.u32 %r5, %r1, 1000;
  add.u32 %r6, %r1, 2000;
  add.u32 %r7, %r1, 3000;
  st.shared.v4.u32 [%r4], {%r1, %r5, %r6, %r7};
  shr.u32 %r8, %r1, 4;
  shl.b32 %r8, %r8, 3;
  add.u32 %r9, %r2, %r8;
  not.b32 %r10, %r1;
  st.shared.v2.u32 [%r9+2048], {%r1, %r10};
  and.b32 %r11, %r1, 3;
  shl.b32 %r11, %r11, 4;
  add.u32 %r12, %r2, %r11;
  cvt.u64.u32 %rd1, %r1;
  mul.lo.u64 %rd2, %rd1, 3;
  st.shared.v2.u64 [%r12+2304], {%rd1, %rd2};
  mul.lo.u64 %vd0, %rd1, 5;
  st.shared.v2.u64 [%r4+4096], {%rd1, %vd0};
  bar.sync 0;
  ld.param.u32 %r13, [ldShift];
  add.u32 %r14, %r4, %r13;
  ld.shared.v4.u32 {%r15, %r16, %r17, %r18}, [%r14];
  shr.u32 %r19, %r1, 5;
  shl.b32 %r20, %r19, 3;
  add.u32 %r20, %r2, %r20;
  ld.shared.v2.u32 {%r21, %r22}, [%r20];
  ld.shared.v2.u32 {%r23, %r24}, [%r20+256];
  cvt.u64.u32 %rd3, %r20;
  ld.shared.v2.u32 {%r25, %r26}, [%rd3+512];
  and.b32 %r27, %r1, 31;
  sub.u32 %r27, 31, %r27;
  shl.b32 %r27, %r27, 3;
  shl.b32 %r28, %r19, 8;
  add.u32 %r27, %r27, %r28;
  add.u32 %r27, %r2, %r27;
  ld.shared.v2.u32 {%r29, %r30}, [%r27];
  ld.shared.v2.u64 {%rd4, %rd5}, [%r12+2304];
  ld.shared.v2.u32 {%r31, %r32}, [%r9+2048];
  shl.b32 %r33, %r1, 2;
  add.u32 %r33, %r2, %r33;
  ld.shared.v4.u8 {%rs1, %rs2, %rs3, %rs4}, [%r33];
  ld.param.u32 %r34, [ldBump];
  add.u32 %r34, %r4, %r34;
  ld.shared.v4.u32 {%r35, %r36, %r37, %r38}, [%r34];
  shl.b32 %v0, %r1, 3;
  add.u32 %v0, %r2, %v0;
  ld.shared.v2.u32 {%v0, %v1}, [%v0];
  and.b32 %r19, %r1, 31;
  shl.b32 %r19, %r19, 4;
  add.u32 %r19, %r2, %r19;
  ld.shared.v2.u64 {%vd1, %vd2}, [%r19+4096];
  ld.param.u32 %r39, [stBump];
  add.u32 %r39, %r4, %r39;
  st.shared.v4.u32 [%r39], {%r1, %r5, %r6, %r7};
  ld.param.u64 %rd6, [out];
  mul.wide.u32 %rd7, %r1, 128;
  add.s64 %rd8, %rd6, %rd7;
  st.global.v4.u32 [%rd8], {%r15, %r16, %r17, %r18};
  st.global.v4.u32 [%rd8+16], {%r21, %r22, %r23, %r24};
  st.global.v4.u32 [%rd8+32], {%r25, %r26, %r29, %r30};
  st.global.v2.u64 [%rd8+48], {%rd4, %rd5};
  st.global.v2.u32 [%rd8+64], {%r31, %r32};
  cvt.u32.u16 %r5, %rs1;
  cvt.u32.u16 %r6, %rs2;
  cvt.u32.u16 %r7, %rs3;
  cvt.u32.u16 %r10, %rs4;
  shl.b32 %r6, %r6, 8;
  or.b32 %r5, %r5, %r6;
  shl.b32 %r10, %r10, 8;
  or.b32 %r7, %r7, %r10;
  st.global.v2.u32 [%rd8+72], {%r5, %r7};
  st.global.v4.u32 [%rd8+80], {%r35, %r36, %r37, %r38};
  st.global.v4.u32 [%rd8+96], {%v0, %v1, %v1, %v0};
  st.global.v2.u64 [%rd8+112], {%vd1, %vd2};
  ret;
}
)";

struct SharedVectorRun {
  LaunchResult result;
  std::vector<uint32_t> out;
};
SharedVectorRun runSharedVectors(uint32_t mask, uint32_t threads, uint32_t ldShift, uint32_t ldBump, uint32_t stBump,
                                 Checker* checker = nullptr) {
  // one program per mask and checker setting: ptx_exec_tests_native compiles each program's kernel for the host
  static std::map<std::pair<uint32_t, uint32_t>, std::shared_ptr<const Program>> programs;
  std::shared_ptr<const Program>& program = programs[{mask, checkedAccesses()}];
  if (!program) {
    CompileOptions options;
    options.rewrites = mask;
    CompileResult cr = compile(kSharedVectors, options);
    if (!cr.program) throw std::runtime_error(cr.error);
    program = cr.program;
  }
  uint32_t* out = rewriteArena().alloc<uint32_t>(size_t(32) * threads);
  std::memset(out, 0xee, size_t(32) * threads * sizeof(uint32_t));
  ptxtest::Params p(kernels(*program)[0]);
  p.arg(out).arg(ldShift).arg(ldBump).arg(stBump);
  LaunchParams lp = ptxtest::launchParams(Dim3{2}, Dim3{threads}, p, rewriteArena());
  lp.config.deterministic = true;  // warps reach the stores in order: the last warp's vectors stay
  lp.checker = checker;
  SharedVectorRun r;
  r.result = launch(*program, 0, lp);
  r.out.assign(out, out + size_t(32) * threads);
  return r;
}

// The masks that change how kSharedVectors' accesses run: all on, all off, the lowering rewrites only, and the two
// shared fast paths off one at a time (each mask is a compile, and ptx_exec_tests_native compiles every kernel).
std::vector<uint32_t> sharedVectorMasks() {
  return {kAllRewrites, 0, kLoweringRewrites, kAllRewrites & ~rewriteBit(Rewrite::SharedWarpLayouts),
          kAllRewrites & ~rewriteBit(Rewrite::SharedLayouts)};
}

// What thread t of a CTA of n threads reads (kSharedVectors, nothing bumped).
std::vector<uint32_t> sharedVectorsExpected(uint32_t t, uint32_t n) {
  auto slot = [&](uint32_t byte) {  // element byte/4 of the consecutive v4 stores
    uint32_t s = byte / 16, k = byte % 16 / 4;
    return s + 1000 * k;
  };
  const uint32_t w = t / 32, h = std::min(16 * (t / 16) + 15, n - 1);
  uint32_t last = 0;  // the highest thread of the last warp with t % 4 == t's
  for (uint32_t u = 0; u < n; ++u)
    if (u % 4 == t % 4 && u / 32 == (n - 1) / 32) last = u;
  const uint32_t r = 8 * (31 - t % 32) + 256 * w;
  const uint32_t b = t * 4;  // bytes of the v4.u8 load: little-endian bytes of slot element b/4
  auto byteAt = [&](uint32_t a) { return (slot(a & ~3u) >> (8 * (a & 3))) & 0xff; };
  std::vector<uint32_t> v = {t,
                             t + 1000,
                             t + 2000,
                             t + 3000,
                             slot(8 * w),
                             slot(8 * w + 4),
                             slot(8 * w + 256),
                             slot(8 * w + 260),
                             slot(8 * w + 512),
                             slot(8 * w + 516),
                             slot(r),
                             slot(r + 4),
                             last,
                             0,
                             3 * last,
                             0,
                             h,
                             ~h,
                             byteAt(b) | byteAt(b + 1) << 8,
                             byteAt(b + 2) | byteAt(b + 3) << 8,
                             t,
                             t + 1000,
                             t + 2000,
                             t + 3000,
                             slot(8 * t),
                             slot(8 * t + 4),
                             slot(8 * t + 4),
                             slot(8 * t),
                             t % 32,
                             0,
                             5 * (t % 32),
                             0};
  return v;
}

TEST(Rewrites, SameSharedVectorResults) {
  // full warps (the fast paths), a half-full last warp and one of 4 lanes (per lane)
  for (uint32_t threads : {128u, 80u, 100u}) {
    for (uint32_t mask : sharedVectorMasks()) {
      SharedVectorRun r = runSharedVectors(mask, threads, 0, 0, 0);
      ASSERT_TRUE(r.result.ok()) << r.result.fault.message << ", rewrites " << mask;
      for (uint32_t t = 0; t < threads; ++t) {
        const std::vector<uint32_t> want = sharedVectorsExpected(t, threads);
        for (uint32_t j = 0; j < 32; ++j)
          ASSERT_EQ(r.out[32 * t + j], want[j])
              << "thread " << t << " word " << j << " of " << threads << " threads, rewrites " << mask;
      }
    }
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;  // the masks above were cut to the run's
  // shared-layouts covers the vector loads through one base register (%r20): the op stream changes
  auto digest = [](uint32_t mask) {
    CompileOptions options;
    options.rewrites = mask;
    return programStats(*compile(kSharedVectors, options).program).digest;
  };
  EXPECT_NE(digest(kAllRewrites), digest(kAllRewrites & ~rewriteBit(Rewrite::SharedLayouts)));
}

// A misaligned vector, vectors past the block in a load whose layout is checked (some lanes of a warp) and in a
// store: the same fault with every mask, for the lowest bad lane of the warp that runs into it first.
TEST(Rewrites, SameSharedVectorFaults) {
  struct Case {
    const char* what;
    uint32_t ldShift, ldBump, stBump;
    FaultKind kind;
  };
  // 8192 - 7552 = 640 = 16 * 40: threads 40 and up load past the block; the store pushes every lane past it
  for (const Case& c : {Case{"misaligned", 8, 0, 0, FaultKind::MisalignedAddress},
                        Case{"load past the block", 0, 7552, 0, FaultKind::IllegalAddress},
                        Case{"store past the block", 0, 0, 8192, FaultKind::IllegalAddress}}) {
    for (uint32_t threads : {128u, 80u}) {
      std::optional<Fault> ref;
      for (uint32_t mask : sharedVectorMasks()) {
        SharedVectorRun r = runSharedVectors(mask, threads, c.ldShift, c.ldBump, c.stBump);
        ASSERT_EQ(r.result.fault.kind, c.kind) << c.what << ", rewrites " << mask;
        const uint32_t t = r.result.fault.thread.x;
        if (c.ldBump) {
          EXPECT_TRUE(t == 40 || (t > 40 && t % 32 == 0)) << c.what << ": thread " << t;
          EXPECT_EQ(r.result.fault.address, kReservedSharedBytes + 16u * t + c.ldBump) << c.what;
        } else {
          EXPECT_EQ(t % 32, 0u) << c.what;
          EXPECT_EQ(r.result.fault.address, kReservedSharedBytes + 16u * t + c.ldShift + c.stBump) << c.what;
        }
        expectSameFault(ref, r.result.fault, mask);
      }
    }
  }
}

// With racecheck on (the checking op before each access), the fast paths report the same hazards: the v2.u64
// stores of every warp to the same four vectors, unsynchronised between warps.
TEST(Rewrites, SameSharedVectorHazards) {
  struct Hazards : Checker {
    std::mutex mutex;
    std::vector<std::tuple<int, uint32_t, uint32_t, uint64_t>> seen;  // kind, earlier line, line, address
    void globalAccesses(const CheckSite&, uint32_t, uint32_t, const uint64_t*, uint32_t, GlobalAccess) override {}
    bool divergentBarrier(const CheckSite&, uint32_t, uint32_t, uint32_t) override { return false; }
    void sharedHazard(const CheckSite& site, HazardKind kind, uint32_t earlierLine, uint64_t address,
                      bool withinWarp) override {
      std::lock_guard lock(mutex);
      if (!withinWarp) seen.emplace_back(int(kind), earlierLine, site.ptxLine, address);
    }
  };
  struct Checking {  // for this test's compiles only
    Checking() { setCheckedAccesses(kCheckSharedHazards); }
    ~Checking() { setCheckedAccesses(0); }
  } on;
  std::optional<std::vector<std::tuple<int, uint32_t, uint32_t, uint64_t>>> ref;
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::SharedWarpLayouts), 0u}) {
    Hazards h;
    SharedVectorRun r = runSharedVectors(mask, 128, 0, 0, 0, &h);
    EXPECT_TRUE(r.result.ok()) << r.result.fault.message;
    EXPECT_FALSE(h.seen.empty());
    if (!ref)
      ref = h.seen;
    else
      EXPECT_EQ(h.seen, *ref) << "rewrites " << mask;
  }
}

// masked-compares and integer-mads: a Collatz loop on 64-bit seeds (some of which wrap, capped at 300 steps) whose
// lanes leave it one by one, with bit tests of 16, 32 and 64 bits (the and's result first or second, a register or
// an immediate value, one right before a branch on it, one whose result is also read elsewhere and stays an and) and
// mul.lo/add pairs (the product first or second, register and immediate factors, negative ones), in a third warp
// that is partial. Every combination of the two gives the same bytes, and each changes the kernel's ops.
TEST(Rewrites, MaskedComparesAndIntegerMadsAsThePairs) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry pairs(.param .u64 out, .param .u64 in, .param .u32 n) {
  .reg .pred %p<9>;
  .reg .b16 %h<6>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd3, %r2, 8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u64 %rd5, [%rd4];
  mov.u32 %r3, 0;
  mov.u32 %r10, 5;
  mov.u32 %r11, 0;
  mov.u16 %h1, 9;
  mov.u64 %rd10, 77;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
LOOP:
  and.b64 %rd7, %rd5, 1;
  setp.eq.b64 %p2, %rd7, 1;
  mul.lo.s64 %rd8, %rd5, 3;
  add.s64 %rd9, %rd8, 1;
  shr.u64 %rd10, %rd5, 1;
  selp.b64 %rd5, %rd9, %rd10, %p2;
  cvt.u32.u64 %r4, %rd5;
  and.b32 %r5, %r4, 6;
  setp.ne.u32 %p3, %r5, 4;
  mul.lo.u32 %r6, %r4, %r2;
  add.u32 %r10, %r10, %r6;
  @%p3 add.u32 %r10, %r10, 1;
  cvt.u16.u32 %h2, %r4;
  and.b16 %h3, %h2, 240;
  setp.ne.s16 %p4, %h1, %h3;
  mul.lo.s16 %h4, %h2, -3;
  add.s16 %h1, %h1, %h4;
  @%p4 add.u32 %r3, %r3, 2;
  and.b32 %r8, %r4, 3;
  setp.eq.u32 %p7, %r8, 0;
  add.u32 %r11, %r11, %r8;
  @%p7 add.u32 %r11, %r11, 1000;
  and.b32 %r7, %r4, 8;
  setp.eq.u32 %p6, %r7, 0;
  @%p6 bra SKIP;
  mul.lo.s32 %r12, %r3, -7;
  add.s32 %r11, %r12, %r11;
SKIP:
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p8, %r3, 300;
  setp.ne.s64 %p5, %rd5, 1;
  and.pred %p5, %p5, %p8;
  @%p5 bra LOOP;
DONE:
  cvt.u32.u16 %r13, %h1;
  mul.wide.u32 %rd11, %r2, 32;
  add.s64 %rd12, %rd1, %rd11;
  st.global.u64 [%rd12], %rd5;
  st.global.u32 [%rd12+8], %r3;
  st.global.u32 [%rd12+12], %r10;
  st.global.u32 [%rd12+16], %r11;
  st.global.u32 [%rd12+20], %r13;
  st.global.u64 [%rd12+24], %rd10;
  ret;
}
)";
  const uint32_t threads = 96, n = 80;
  std::vector<uint64_t> seeds(threads);
  for (uint32_t i = 0; i < threads; ++i) seeds[i] = i % 3 == 2 ? ~uint64_t(0) - i * 977 : uint64_t(i * 37 + 1);
  const uint64_t* in = rewriteArena().upload(seeds);
  const uint32_t bits = rewriteBit(Rewrite::MaskedCompares) | rewriteBit(Rewrite::IntegerMads);
  std::vector<uint8_t> reference;
  for (uint32_t mask : {kAllRewrites & ~bits, kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::MaskedCompares),
                        kAllRewrites & ~rewriteBit(Rewrite::IntegerMads), bits, 0u}) {
    const std::vector<uint8_t> got = outputOf(ptx, mask, "pairs", Dim3{1}, Dim3{threads}, in, n, threads * 32);
    ASSERT_FALSE(got.empty()) << "rewrites " << mask;
    if (reference.empty()) {
      reference = got;
      uint64_t x0;  // seed 1 goes 4, 2, 1
      std::memcpy(&x0, &got[0], 8);
      EXPECT_EQ(x0, 1u);
      continue;
    }
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], reference[i]) << "byte " << i << " (thread " << i / 32 << "), rewrites " << mask;
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;
  const uint64_t all = programStats(*compileText(ptx, kAllRewrites).program).digest;
  for (Rewrite each : {Rewrite::MaskedCompares, Rewrite::IntegerMads})
    EXPECT_NE(all, programStats(*compileText(ptx, kAllRewrites & ~rewriteBit(each)).program).digest)
        << rewriteName(each);
}

// shared-fma-chains whose x loads all go through one base register and y loads through another (the one-base
// form, mem::fmaSharedChainOneBaseAvx): x and y per half-warp one element, 16 consecutive ones (the same for both
// halves, or 32 in a row) or scattered, with NaN payloads, infinities times zero, signed zeros, subnormals and
// overflow among the inputs; the bits are those of the unfused ops with every switch that changes how the chain
// runs, for whole and partial warps. A largest x offset that only some lanes' bases push past the block faults as
// the unfused loads do.
TEST(Rewrites, SharedFmaChainsOfOneBaseAsTheUnfusedOps) {
  const std::map<std::string, std::string> bases = {
      {"row", "shr.u32 %r7, %r1, 4;\n  shl.b32 %r7, %r7, 6;\n  add.u32 %rB, %r3, %r7;"},
      {"column", "and.b32 %r8, %r1, 15;\n  shl.b32 %r8, %r8, 2;\n  add.u32 %rB, %r3, %r8;"},
      {"lane", "shl.b32 %r9, %r1, 2;\n  and.b32 %r9, %r9, 127;\n  add.u32 %rB, %r3, %r9;"},
      {"scattered",
       "mul.lo.u32 %r10, %r1, 7;\n  and.b32 %r10, %r10, 31;\n  shl.b32 %r10, %r10, 2;\n  add.u32 %rB, "
       "%r3, %r10;"},
      {"one", "add.u32 %rB, %r3, 12;"}};
  auto kernel = [&](const std::string& x, const std::string& y, int lastX) {
    std::string xs = bases.at(x), ys = bases.at(y);
    xs.replace(xs.find("%rB"), 3, "%r5");
    ys.replace(ys.find("%rB"), 3, "%r11");
    std::string s = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry chain(.param .u64 out, .param .u64 in) {
  .reg .b32 %r<16>;
  .reg .f32 %f<20>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 tile[2048];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r3, tile;
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
)";
    for (int j = 0; j < 8; ++j)
      s += "  ld.global.f32 %f1, [%rd3+" + std::to_string(256 * j) + "];\n  st.shared.f32 [%r4+" +
           std::to_string(256 * j) + "], %f1;\n";
    s += "  bar.sync 0;\n  " + xs + "\n  " + ys + "\n  add.u32 %r6, %r11, 1024;\n";
    s += R"(  ld.global.f32 %f3, [%rd3];
  ld.shared.f32 %f4, [%r5];
  ld.shared.f32 %f5, [%r6];
  fma.rn.f32 %f6, %f4, %f5, %f3;
  ld.shared.f32 %f7, [%r5+4];
  ld.shared.f32 %f8, [%r6+64];
  fma.rn.f32 %f9, %f8, %f7, %f6;
  ld.shared.f32 %f10, [%r5+8];
  ld.shared.f32 %f11, [%r6+128];
  fma.rn.f32 %f12, %f10, %f11, %f9;
  ld.shared.f32 %f13, [%r5+)" +
         std::to_string(lastX) + R"(];
  ld.shared.f32 %f14, [%r6+192];
  fma.rn.f32 %f15, %f13, %f14, %f12;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  add.s64 %rd5, %rd4, %rd2;
  st.global.f32 [%rd5], %f15;
  ret;
}
)";
    return s;
  };
  std::vector<float> in(512);
  for (int i = 0; i < 512; ++i) in[size_t(i)] = float((i * 37) % 23) * 0.37f - 3.1f;
  in[3] = std::bit_cast<float>(0x7fc01234u);  // a quiet NaN with a payload
  in[70] = std::bit_cast<float>(0xff812345u);
  in[5] = INFINITY;
  in[257] = 0.0f;
  in[17] = -0.0f;
  in[300] = std::bit_cast<float>(0x00000321u);  // subnormals
  in[301] = std::bit_cast<float>(0x80400000u);
  in[2] = 3e38f;
  in[260] = 3e38f;
  const float* din = rewriteArena().upload(in);
  const std::vector<uint32_t> masks = {
      kAllRewrites & ~rewriteBit(Rewrite::SharedFmaChains),   kAllRewrites,
      kAllRewrites & ~rewriteBit(Rewrite::ThreadConstants),   kAllRewrites & ~rewriteBit(Rewrite::SharedLayouts),
      kAllRewrites & ~rewriteBit(Rewrite::SharedWarpLayouts), 0u};
  for (const auto& [x, xCode] : bases)
    for (const auto& [y, yCode] : bases)
      for (uint32_t threads : {64u, 48u}) {
        const std::string text = kernel(x, y, 12);
        std::vector<uint32_t> reference;
        for (uint32_t mask : masks) {
          CompileResult cr = compileText(text.c_str(), mask);
          ASSERT_TRUE(cr.program) << cr.error;
          uint32_t* out = rewriteArena().alloc<uint32_t>(64);
          std::fill(out, out + 64, 0xeeeeeeeeu);
          ptxtest::Params p(kernels(*cr.program)[0]);
          p.arg(out).arg(din);
          LaunchResult r = run(*cr.program, "chain", Dim3{1}, Dim3{threads}, p);
          ASSERT_TRUE(r.ok()) << r.fault.message;
          std::vector<uint32_t> got(out, out + 64);
          if (reference.empty()) {
            reference = got;
            continue;
          }
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], reference[i])
                << "x " << x << ", y " << y << ", " << threads << " threads, lane " << i << ", rewrites " << mask;
        }
      }
  // x bases up to 192 (row): the last x offset passes the block for the upper rows only
  for (const std::string y : {"column", "row"}) {
    const std::string text = kernel("row", y, 1900);
    std::optional<Fault> reference;
    for (uint32_t mask : masks) {
      CompileResult cr = compileText(text.c_str(), mask);
      ASSERT_TRUE(cr.program) << cr.error;
      uint32_t* out = rewriteArena().alloc<uint32_t>(64);
      ptxtest::Params p(kernels(*cr.program)[0]);
      p.arg(out).arg(din);
      ExecConfig cfg;
      cfg.deterministic = true;
      LaunchResult r = run(*cr.program, "chain", Dim3{1}, Dim3{64}, p, cfg);
      ASSERT_FALSE(r.ok()) << "rewrites " << mask;
      EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
      expectSameFault(reference, r.fault, mask);
    }
  }
}

// Shifts and 64-bit mul.lo by immediates take handlers of their own (h::shiftByImmediate, h::mulByImmediate: the
// amount or the factor is the op's, not a register's), which must give what the register forms give: every shift
// type and direction with amounts 0 to past the width (and the largest .u32), and 64-bit products by factors below
// 2^32 and above (the register form), alone and folded into an add (integer-mads), for full and partial warps.
TEST(Rewrites, ImmediateShiftsAndFactorsAsTheRegisterForms) {
  const std::vector<std::pair<std::string, std::string>> shifts = {
      {"shl.b16", "%h"}, {"shr.u16", "%h"},  {"shr.s16", "%h"},  {"shl.b32", "%r"}, {"shr.u32", "%r"},
      {"shr.s32", "%r"}, {"shl.b64", "%rd"}, {"shr.u64", "%rd"}, {"shr.s64", "%rd"}};
  const std::vector<std::string> amounts = {"0", "1", "5", "15", "16", "31", "32", "63", "64", "65", "4294967295"};
  const std::vector<std::string> factors = {"0", "1", "3", "12", "4294967295", "4294967296", "-3"};
  auto kernel = [&](bool immediate) {
    std::string s = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry forms(.param .u64 out, .param .u64 in, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b16 %h<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r6, [n];
  setp.ge.u32 %p1, %r1, %r6;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u64 %rd5, [%rd4];
  cvt.u32.u64 %r2, %rd5;
  cvt.u16.u64 %h1, %rd5;
  mul.wide.u32 %rd6, %r1, 1024;
  add.s64 %rd7, %rd2, %rd6;
)";
    int slot = 0;
    for (const auto& [op, reg] : shifts)
      for (const std::string& k : amounts) {
        const std::string amount = immediate ? k : "%r3";
        if (!immediate) s += "  mov.u32 %r3, " + k + ";\n";
        const std::string x = reg == "%h" ? "%h1" : reg == "%r" ? "%r2" : "%rd5";
        const std::string d = reg == "%h" ? "%h2" : reg == "%r" ? "%r4" : "%rd8";
        const std::string width = reg == "%h" ? "u16" : reg == "%r" ? "u32" : "u64";
        s += "  " + op + " " + d + ", " + x + ", " + amount + ";\n  st.global." + width + " [%rd7+" +
             std::to_string(8 * slot++) + "], " + d + ";\n";
      }
    for (const std::string& k : factors)
      for (const char* type : {"s64", "u64"}) {
        const std::string factor = immediate ? k : "%rd9";
        if (!immediate) s += "  mov.b64 %rd9, " + k + ";\n";
        s += std::string("  mul.lo.") + type + " %rd10, %rd5, " + factor + ";\n  st.global.u64 [%rd7+" +
             std::to_string(8 * slot++) + "], %rd10;\n";
        s += std::string("  mul.lo.") + type + " %rd11, %rd5, " + factor + ";\n  add." + type +
             " %rd12, %rd11, %rd5;\n  st.global.u64 [%rd7+" + std::to_string(8 * slot++) + "], %rd12;\n";
      }
    s += "DONE:\n  ret;\n}\n";
    return s;
  };
  std::vector<uint64_t> values(64);
  for (uint32_t i = 0; i < 64; ++i)
    values[i] =
        (i % 4 == 0 ? 0x8000000000000000ull : 0) ^ (uint64_t(i) * 0x9e3779b97f4a7c15ull) ^ (i % 3 ? 0 : 0xffff8001u);
  const uint64_t* in = rewriteArena().upload(values);
  for (uint32_t n : {64u, 45u}) {
    std::vector<uint8_t> reference;
    for (bool immediate : {false, true}) {
      const std::vector<uint8_t> got =
          outputOf(kernel(immediate).c_str(), kAllRewrites, "forms", Dim3{1}, Dim3{64}, in, n, 64 * 1024);
      ASSERT_FALSE(got.empty()) << "immediate " << immediate;
      if (reference.empty()) {
        reference = got;
        continue;
      }
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], reference[i]) << "thread " << i / 1024 << ", slot " << (i % 1024) / 8 << ", n " << n;
    }
  }
}

// setp-branch on guarded exits: a setp right before `@p bra` to the kernel's ret runs the exit itself (32-bit, 64-bit
// and masked compares, the guard negated or not), and a whole warp's exit takes the lanes from the bytes the setp
// computed instead of reading them back. The predicates are read again after the exits (selp), so a wrong byte in the
// register shows; warps are whole, partial (80 threads) and mixed in which lanes leave at each exit.
TEST(Rewrites, SetpExitsAsTheUnfusedOps) {
  const char* ptx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry exits(.param .u64 out, .param .u64 in, .param .u32 n) {
  .reg .pred %p<6>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd3, %r2, 8;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u64 %rd6, [%rd5];
  st.global.u64 [%rd4], %rd6;
  setp.ge.s32 %p1, %r2, %r1;
  @%p1 bra DONE;
  setp.lt.u64 %p2, %rd6, 5000;
  @!%p2 bra DONE;
  cvt.u32.u64 %r4, %rd6;
  and.b32 %r5, %r4, 6;
  setp.eq.u32 %p3, %r5, 4;
  @%p3 bra DONE;
  and.b32 %r6, %r4, 1;
  setp.ne.u32 %p4, %r6, 0;
  @%p4 setp.gt.u32 %p5, %r4, 600;
  @!%p4 setp.gt.u32 %p5, %r4, 900;
  @%p5 bra DONE;
  selp.u32 %r7, 3, 5, %p1;
  selp.u32 %r8, 7, 11, %p2;
  selp.u32 %r9, 13, 17, %p3;
  selp.u32 %r10, 19, 23, %p5;
  mad.lo.u32 %r11, %r7, %r8, %r9;
  mad.lo.u32 %r12, %r11, %r10, %r4;
  cvt.u64.u32 %rd7, %r12;
  st.global.u64 [%rd4], %rd7;
DONE:
  ret;
}
)";
  const uint32_t threads = 80;
  std::vector<uint64_t> values(threads);
  for (uint32_t i = 0; i < threads; ++i) values[i] = i % 5 == 3 ? 7000 + i : uint64_t(i * 37 % 1000);
  const uint64_t* in = rewriteArena().upload(values);
  const uint32_t fused = rewriteBit(Rewrite::SetpBranch);
  for (uint32_t n : {80u, 64u, 40u, 0u}) {
    std::vector<uint8_t> reference;
    for (uint32_t mask : {kAllRewrites & ~fused, kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::GuardedExits),
                          fused | rewriteBit(Rewrite::GuardedExits), 0u}) {
      const std::vector<uint8_t> got = outputOf(ptx, mask, "exits", Dim3{2}, Dim3{threads}, in, n, threads * 8);
      ASSERT_FALSE(got.empty()) << "rewrites " << mask << ", n " << n;
      if (reference.empty()) {
        reference = got;
        // thread 2 (value 74: 74 & 6 = 2, even and under 900) reaches the end: 5 * 7 + 17, times 23, plus 74
        uint64_t x2;
        std::memcpy(&x2, &got[2 * 8], 8);
        EXPECT_EQ(x2, n > 2 ? uint64_t((5 * 7 + 17) * 23 + 74) : 74u) << n;
        continue;
      }
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], reference[i]) << "byte " << i << " (thread " << i / 8 << "), rewrites " << mask << ", n "
                                        << n;
    }
  }
  if ((defaultRewrites() & kAllRewrites) != kAllRewrites) return;
  EXPECT_NE(programStats(*compileText(ptx, kAllRewrites).program).digest,
            programStats(*compileText(ptx, kAllRewrites & ~fused).program).digest);
}

// fresh-cta-pass: the first turns of a new CTA's warps, where warps wait for one another through memory (warp w
// spins until warp w + 1 has raised its flag, so the last warp finishes first and the others one by one after
// it), leave the CTA to its scheduler as its own first pass would. Each thread records the order in which its warp
// got past its wait (a per-CTA counter every lane bumps), which the schedule decides: with one host thread it is the
// same with and without the fast path, and the warps finish last to first. So is the order across CTAs (a counter
// of the grid's), which tells whether a CTA was parked or went on after its first turns.
TEST(Rewrites, FreshCtaPassLeavesWaitingWarpsToTheScheduler) {
  const char* ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 out, .param .u64 flags, .param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [flags];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  shr.u32 %r3, %r1, 5;
  mov.u32 %r4, %ntid.x;
  shr.u32 %r5, %r4, 5;
  mul.lo.u32 %r6, %r2, %r5;
  add.u32 %r7, %r6, %r3;
  mul.wide.u32 %rd3, %r7, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.u32 %r8, %r3, 1;
  setp.ge.u32 %p1, %r8, %r5;
  @%p1 bra $L_go;
$L_wait:
  ld.volatile.global.u32 %r9, [%rd4+4];
  setp.eq.u32 %p2, %r9, 0;
  @%p2 bra $L_wait;
$L_go:
  mul.wide.u32 %rd5, %r2, 4;
  ld.param.u64 %rd6, [flags];
  add.s64 %rd7, %rd6, 4096;
  add.s64 %rd8, %rd7, %rd5;
  atom.global.add.u32 %r10, [%rd8], 1;
  atom.global.add.u32 %r12, [%rd6+8188], 1;
  mad.lo.u32 %r11, %r2, %r4, %r1;
  mul.wide.u32 %rd9, %r11, 4;
  add.s64 %rd10, %rd1, %rd9;
  st.global.u32 [%rd10], %r10;
  add.s64 %rd11, %rd6, 8192;
  add.s64 %rd12, %rd11, %rd9;
  st.global.u32 [%rd12], %r12;
  membar.gl;
  st.volatile.global.u32 [%rd4], 1;
  ret;
}
)";
  constexpr uint32_t kCtas = 6, kThreads = 128, kWarps = kThreads / 32;
  std::vector<uint32_t> reference, gridReference;
  for (uint32_t mask : {kAllRewrites, kAllRewrites & ~rewriteBit(Rewrite::FreshCtaPass)}) {
    CompileResult cr = compileText(ptx, mask);
    ASSERT_TRUE(cr.program) << cr.error;
    uint32_t* out = rewriteArena().alloc<uint32_t>(kCtas * kThreads);
    // a flag per warp, a counter per CTA from 1024, the grid's counter at 2047, the grid's order from 2048
    uint32_t* flags = rewriteArena().alloc<uint32_t>(2048 + kCtas * kThreads);
    std::memset(flags, 0, (2048 + kCtas * kThreads) * sizeof(uint32_t));
    ptxtest::Params p(kernels(*cr.program)[0]);
    p.arg(out).arg(flags).arg(0u);
    ExecConfig cfg;
    cfg.deterministic = true;
    ASSERT_TRUE(run(*cr.program, "chain", Dim3{kCtas}, Dim3{kThreads}, p, cfg).ok()) << mask;
    std::vector<uint32_t> order(out, out + kCtas * kThreads);
    for (uint32_t t = 0; t < kCtas * kThreads; ++t) {
      const uint32_t warp = (t % kThreads) / 32;
      ASSERT_EQ(order[t], (kWarps - 1 - warp) * 32 + t % 32) << "thread " << t << ", rewrites " << mask;
    }
    std::vector<uint32_t> gridOrder(flags + 2048, flags + 2048 + kCtas * kThreads);
    if (reference.empty()) {
      reference = order;
      gridReference = gridOrder;
    } else {
      EXPECT_EQ(order, reference) << mask;
      EXPECT_EQ(gridOrder, gridReference) << mask;
    }
  }
}
