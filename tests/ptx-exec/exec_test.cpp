// End-to-end interpreter tests: nvcc-generated PTX (kernels/*.cu -> *.ptx) is parsed, lowered and run; results are
// compared with host computations.
#include "harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

struct Module {
  std::shared_ptr<const Program> prog;
  std::vector<uint64_t> globalAddrs;
};

Arena& arena() {
  static Arena* a = new Arena();
  return *a;
}

Module& load(const std::string& name) {
  static std::map<std::string, Module> cache;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + name));
  if (!r.program) throw std::runtime_error("compile failed: " + r.error);
  Module mod;
  mod.prog = r.program;
  mod.globalAddrs = ptxtest::allocateGlobals(*r.program, arena());
  return cache.emplace(name, std::move(mod)).first->second;
}

class CaptureHost : public HostServices {
 public:
  bool devicePrintf(std::string_view text) override {
    std::lock_guard<std::mutex> lock(m);
    out += text;
    return true;
  }
  std::mutex m;
  std::string out;
};

struct KernelRun {
  Module& mod;
  int kernel;
  explicit KernelRun(const std::string& file, const std::string& name)
      : mod(load(file)), kernel(findKernel(*mod.prog, name)) {
    if (kernel < 0) throw std::runtime_error("no kernel " + name);
  }
  const KernelInfo& info() const { return kernels(*mod.prog)[size_t(kernel)]; }
  LaunchResult operator()(Dim3 grid, Dim3 block, const Params& p, uint32_t dynShared = 0, ExecConfig cfg = {},
                          HostServices* host = nullptr) {
    LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
    lp.dynamicSharedBytes = dynShared;
    lp.globalAddresses = mod.globalAddrs.data();
    lp.host = host;
    lp.config = cfg;
    return launch(*mod.prog, kernel, lp);
  }
};

#define EXPECT_OK(r) EXPECT_TRUE((r).ok()) << (r).fault.message

TEST(PtxExec, VectorAdd) {
  KernelRun k("bench.ptx", "vadd");
  const int n = 1000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = float(n - i);
  }
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  float* dc = arena().alloc<float>(n);
  Params p(k.info());
  p.arg(da).arg(db).arg(dc).arg(n);
  auto r = k(Dim3{(n + 255) / 256}, Dim3{256}, p);
  EXPECT_OK(r);
  for (int i = 0; i < n; ++i) ASSERT_EQ(dc[i], a[i] + b[i]) << i;
}

TEST(PtxExec, FmaLoopBitExact) {
  KernelRun k("bench.ptx", "fmaloop");
  const int n = 256, iters = 37;
  float* out = arena().alloc<float>(n);
  Params p(k.info());
  p.arg(out).arg(iters);
  auto r = k(Dim3{2}, Dim3{128}, p);
  EXPECT_OK(r);
  for (int i = 0; i < n; ++i) {
    float x = float(i) * 0.001f, y = 1.0001f, z = 0.5f;
    for (int it = 0; it < iters; ++it) {
      x = std::fmaf(x, y, z);
      z = std::fmaf(z, y, x);
    }
    ASSERT_EQ(out[i], x + z) << i;
  }
}

TEST(PtxExec, SharedReduction) {
  KernelRun k("bench.ptx", "reduce");
  const int blocks = 8;
  std::vector<float> in(blocks * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 17);
  float* din = arena().upload(in);
  float* dout = arena().alloc<float>(blocks);
  Params p(k.info());
  p.arg(din).arg(dout);
  auto r = k(Dim3{blocks}, Dim3{256}, p);
  EXPECT_OK(r);
  for (int b = 0; b < blocks; ++b) {
    float s = 0;
    for (int t = 0; t < 256; ++t) s += in[b * 256 + t];
    EXPECT_EQ(dout[b], s) << b;
  }
}

TEST(PtxExec, TiledMatmul) {
  KernelRun k("bench.ptx", "matmul");
  const int n = 48;
  std::vector<float> A(n * n), B(n * n);
  for (int i = 0; i < n * n; ++i) {
    A[i] = float(i % 7) - 3;
    B[i] = float(i % 5) * 0.5f;
  }
  float* dA = arena().upload(A);
  float* dB = arena().upload(B);
  float* dC = arena().alloc<float>(n * n);
  Params p(k.info());
  p.arg(dA).arg(dB).arg(dC).arg(n);
  auto r = k(Dim3{n / 16, n / 16}, Dim3{16, 16}, p);
  EXPECT_OK(r);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int t = 0; t < n; ++t) acc = std::fmaf(A[i * n + t], B[t * n + j], acc);
      ASSERT_EQ(dC[i * n + j], acc) << i << "," << j;
    }
}

TEST(PtxExec, DivergentCollatz) {
  KernelRun k("bench.ptx", "collatz");
  const int n = 777;
  std::vector<unsigned> in(n);
  for (int i = 0; i < n; ++i) in[i] = unsigned(i + 1);
  unsigned* din = arena().upload(in);
  unsigned* dsteps = arena().alloc<unsigned>(n);
  Params p(k.info());
  p.arg(din).arg(dsteps).arg(n);
  auto r = k(Dim3{(n + 127) / 128}, Dim3{128}, p);
  EXPECT_OK(r);
  for (int i = 0; i < n; ++i) {
    unsigned long long x = in[i];
    unsigned s = 0;
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++s;
    }
    ASSERT_EQ(dsteps[i], s) << i;
  }
}

TEST(PtxExec, AtomicHistogramManyThreads) {
  KernelRun k("bench.ptx", "histogram");
  const int n = 100000;
  std::vector<unsigned char> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
  unsigned char* din = arena().upload(in);
  unsigned* bins = arena().alloc<unsigned>(256);
  std::memset(bins, 0, 256 * sizeof(unsigned));
  Params p(k.info());
  p.arg(din).arg(bins).arg(n);
  ExecConfig cfg;
  cfg.threads = 4;
  auto r = k(Dim3{64}, Dim3{256}, p, 0, cfg);
  EXPECT_OK(r);
  std::vector<unsigned> ref(256, 0);
  for (int i = 0; i < n; ++i) ref[in[i]]++;
  for (int b = 0; b < 256; ++b) ASSERT_EQ(bins[b], ref[b]) << b;
}

TEST(PtxExec, NestedDivergenceLoopsSwitch) {
  KernelRun k("basic.ptx", "divergent");
  const int n = 300;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i * 7 + 3;
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(n);
  Params p(k.info());
  p.arg(din).arg(dout).arg(n);
  auto r = k(Dim3{3}, Dim3{128}, p);
  EXPECT_OK(r);
  for (int i = 0; i < n; ++i) {
    int v = in[i], res = 0;
    if (v % 3 == 0) {
      res = v * 2;
      if (v % 2 == 0)
        res += 1;
      else
        res -= 1;
    } else if (v % 3 == 1) {
      for (int q = 0; q < v % 7; ++q) {
        if (q == 4) break;
        if (q % 2) continue;
        res += q;
      }
    } else {
      static const int tab[5] = {10, 11, 12, 13, 14};
      res = tab[v % 5];
    }
    ASSERT_EQ(dout[i], res) << i;
  }
}

int fibRef(int n) { return n < 2 ? n : fibRef(n - 1) + fibRef(n - 2); }

TEST(PtxExec, CallsAndRecursion) {
  KernelRun k("basic.ptx", "calls");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i;
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(64);
  float* fout = arena().alloc<float>(64);
  Params p(k.info());
  p.arg(din).arg(dout).arg(fout);
  auto r = k(Dim3{1}, Dim3{64}, p);
  EXPECT_OK(r);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(dout[i], fibRef(i % 12)) << i;
    float x = float(i) - 8.0f;
    EXPECT_EQ(fout[i], x < 0 ? -x * 0.5f : x * 0.5f) << i;
  }
}

TEST(PtxExec, WarpShuffleVoteBallot) {
  KernelRun k("basic.ptx", "warpops");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i * 3 + (i == 40 ? 200 : 0);
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(64 * 6);
  Params p(k.info());
  p.arg(din).arg(dout);
  auto r = k(Dim3{1}, Dim3{64}, p);
  EXPECT_OK(r);
  for (int w = 0; w < 2; ++w) {
    int sum = 0;
    unsigned ballot = 0;
    bool any = false;
    for (int l = 0; l < 32; ++l) {
      int v = in[w * 32 + l];
      sum += v;
      ballot |= unsigned(v & 1) << l;
      any = any || v > 100;
    }
    for (int l = 0; l < 32; ++l) {
      int i = w * 32 + l;
      EXPECT_EQ(dout[i * 6 + 0], sum);
      EXPECT_EQ(unsigned(dout[i * 6 + 1]), ballot);
      EXPECT_EQ(dout[i * 6 + 2], any ? 1 : 0);
      EXPECT_EQ(dout[i * 6 + 3], 1);
      EXPECT_EQ(dout[i * 6 + 4], l >= 1 ? in[i - 1] : in[i]);
      EXPECT_EQ(dout[i * 6 + 5], l + 3 < 32 ? in[i + 3] : in[i]);
    }
  }
}

TEST(PtxExec, DynamicSharedMemory) {
  KernelRun k("basic.ptx", "dynshared");
  const int bs = 96, blocks = 3;
  std::vector<float> in(bs * blocks);
  std::iota(in.begin(), in.end(), 1.0f);
  float* din = arena().upload(in);
  float* dout = arena().alloc<float>(in.size());
  Params p(k.info());
  p.arg(din).arg(dout);
  auto r = k(Dim3{blocks}, Dim3{bs}, p, bs * sizeof(float));
  EXPECT_OK(r);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < bs; ++t) ASSERT_EQ(dout[b * bs + t], in[b * bs + bs - 1 - t]);
  // too little dynamic shared memory: the access is out of range and faults
  auto bad = k(Dim3{1}, Dim3{bs}, p, 16);
  EXPECT_EQ(bad.fault.kind, FaultKind::IllegalAddress);
}

TEST(PtxExec, OutOfBoundsGlobalFaults) {
  KernelRun k("basic.ptx", "oob");
  int* buf = arena().alloc<int>(16);
  for (long long off : {16LL * 1024, -5LL, 1LL << 40}) {
    Params p(k.info());
    p.arg(buf).arg(off);
    auto r = k(Dim3{2}, Dim3{32}, p);
    ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress) << off;
    EXPECT_EQ(r.fault.kernel, "oob");
    EXPECT_EQ(r.fault.address, reinterpret_cast<uint64_t>(buf + off));
    EXPECT_GT(r.fault.ptxLine, 0u);
    EXPECT_NE(r.fault.message.find("oob"), std::string::npos);
  }
  Params ok(k.info());
  ok.arg(buf).arg(3LL);
  EXPECT_OK(k(Dim3{1}, Dim3{1}, ok));
  EXPECT_EQ(buf[3], 1);
}

TEST(PtxExec, MisalignedFaults) {
  KernelRun k("basic.ptx", "misaligned");
  char* buf = arena().alloc<char>(64);
  Params p(k.info());
  p.arg(buf);
  auto r = k(Dim3{1}, Dim3{1}, p);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress);
}

// Labels are local to the block that defines them (ptxas agrees): CUTLASS's inline assembly repeats
// `{ LAB_WAIT: ... @P bra DONE; bra LAB_WAIT; DONE: }` for every barrier wait, and each block's branches must go to
// its own labels; a label outside the blocks with the same name is a third one.
TEST(PtxExec, BlockScopedLabels) {
  const std::string ptx =
      ".version 8.7\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 out) {\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<2>;\n  mov.u32 %r1, 0;\n"
      "  {\n  .reg .pred P1;\n  LAB_WAIT:\n  setp.gt.u32 P1, %r1, 3;\n  add.u32 %r1, %r1, 1;\n"
      "  @P1 bra DONE;\n  bra LAB_WAIT;\n  DONE:\n  }\n"
      "  {\n  .reg .pred P1;\n  LAB_WAIT:\n  setp.gt.u32 P1, %r1, 7;\n  add.u32 %r1, %r1, 10;\n"
      "  @P1 bra DONE;\n  bra LAB_WAIT;\n  DONE:\n  }\n"
      "  bra DONE;\n  mov.u32 %r1, 5;\nDONE:\n  ld.param.u64 %rd1, [out];\n  st.global.u32 [%rd1], %r1;\n"
      "  ret;\n}\n";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  auto* out = arena().alloc<uint32_t>(1);
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{1}, p, arena()));
  EXPECT_OK(r);
  // the first block counts 0..4 and leaves at 5; the second adds 10 twice (5 > 7 fails, 15 > 7 holds); the last
  // branch skips the move to the outer DONE
  EXPECT_EQ(*out, 25u);
}

// A branch to an assertion's failure call, which nvcc puts last in the function with nothing after it, is a dead
// end: the branches around it still reconverge where their other paths meet. Here each lane loops a different number
// of times past an assertion that never fails, stores its sum, and thread 0 reads every lane's after the barrier.
// When the failure call's block was taken to fall through to the function's end, the exit became the loop's
// reconvergence point: lanes that left the loop early reached the barrier apart from the others, the barrier (which
// counts a warp's arrival as all of it, as the H200 does) completed, and thread 0 read sums not yet stored (CUTLASS's
// sparse compressor lost rows this way).
TEST(PtxExec, AssertionPathsDoNotDelayReconvergence) {
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .func __assertfail(.param .b64 message, .param .b64 file, .param .b32 line, .param .b64 function,
                           .param .b64 charSize);
.global .align 1 .b8 text[2] = {65, 0};
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  .shared .align 4 .b32 s[64];
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
LOOP:
  setp.gt.u32 %p2, %r4, 1000;
  @%p2 bra FAIL;
  add.u32 %r3, %r3, %r4;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p3, %r4, %r2;
  @%p3 bra LOOP;
  shl.b32 %r6, %r1, 2;
  mov.u32 %r7, s;
  add.u32 %r8, %r7, %r6;
  st.shared.u32 [%r8], %r3;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r9, 0;
COPY:
  shl.b32 %r10, %r9, 2;
  add.u32 %r11, %r7, %r10;
  ld.shared.u32 %r12, [%r11];
  mul.wide.u32 %rd5, %r9, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r12;
  add.u32 %r9, %r9, 1;
  setp.lt.u32 %p1, %r9, 64;
  @%p1 bra COPY;
DONE:
  ret;
FAIL:
  mov.u64 %rd7, text;
  cvta.global.u64 %rd8, %rd7;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd8;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd8;
  .param .b32 param2;
  st.param.b32 [param2+0], 1;
  .param .b64 param3;
  st.param.b64 [param3+0], %rd8;
  .param .b64 param4;
  st.param.b64 [param4+0], 1;
  call.uni __assertfail, (param0, param1, param2, param3, param4);
  }
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  std::vector<uint32_t> trips(64);
  for (uint32_t i = 0; i < 64; ++i) trips[i] = 1 + (i * 7) % 13;
  uint32_t* in = arena().upload(trips);
  auto* out = arena().alloc<uint32_t>(64);
  Params p(kernels(*cr.program)[0]);
  p.arg(in).arg(out);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{64}, p, arena());
  std::vector<uint64_t> globals = ptxtest::allocateGlobals(*cr.program, arena());
  lp.globalAddresses = globals.data();
  LaunchResult r = launch(*cr.program, 0, lp);
  EXPECT_OK(r);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], trips[i] * (trips[i] - 1) / 2) << "lane " << i;
}

// CUTLASS's top-K softmax epilogue (example 61) declares a vector register with a plain name inside a block and uses
// its components (`mx.x`), and an inner `%f<11>` whose block still names %f2521 of the outer `%f<2522>`: both failed
// to load ("undefined identifier"). Each thread computes max(a, b) and max(b, c) into mx, picks one, and adds it
// to its own value through the outer range from inside the inner one.
TEST(PtxExec, VectorRegisterComponentsAndPartlyHiddenRanges) {
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .f32 %f<10>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 12;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  ld.global.f32 %f2, [%rd4+4];
  ld.global.f32 %f3, [%rd4+8];
  mov.f32 %f9, 0f41200000;
  {
  .reg .v2 .f32 mx;
  .reg .pred p;
  .reg .f32 %f<3>;
  max.f32 mx.x, %f9, 0f40000000;
  max.f32 mx.y, %f9, 0f41A00000;
  setp.gt.u32 p, %r1, 15;
  selp.f32 %f1, mx.x, mx.y, p;
  add.f32 %f9, %f9, %f1;
  }
  max.f32 %f4, %f1, %f2;
  max.f32 %f5, %f4, %f3;
  add.f32 %f6, %f5, %f9;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f6;
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  std::vector<float> in(3 * 32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(int(i * 7 % 23) - 11);
  float* din = arena().upload(in);
  float* dout = arena().alloc<float>(32);
  Params p(kernels(*cr.program)[0]);
  p.arg(din).arg(dout);
  EXPECT_OK(launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena())));
  for (int t = 0; t < 32; ++t) {
    // inside the block: mx = (max(10, 2), max(10, 20)) = (10, 20); the inner %f1 takes mx.x for t > 15, else
    // mx.y, and %f9 (the outer one) becomes 10 + that; the outer %f1..%f3 are the loaded values
    const float picked = t > 15 ? 10.0f : 20.0f;
    const float largest = std::max({in[3 * t], in[3 * t + 1], in[3 * t + 2]});
    EXPECT_EQ(dout[t], largest + 10.0f + picked) << t;
  }
}

// nvcc writes __syncthreads_and(x) as a block with predicates of its own, `{ .reg .pred %p1; .reg .pred %p2;
// setp.ne.u32 %p1, x, 0; bar.red.and.pred %p2, 0, %p1; selp.u32 r, 1, 0, %p2; }`, inside functions that declare
// `%p<N>`: the block's %p1 hides the outer one. cuemu resolved it to the outer %p1 (a range's register before a
// plainly declared name), so the block overwrote a predicate the code after it still used: CUB's segmented radix
// sort then diverged at its next barrier and scattered to wrong ranks (tools/repro/cub_radix_passes_in_a_loop.cu).
TEST(PtxExec, InnerPlainRegisterHidesTheOuterRangesRegister) {
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 40;
  and.b32 %r2, %r1, 1;
  {
  .reg .pred %p1;
  .reg .pred %p2;
  setp.ne.u32 %p1, %r2, 0;
  bar.red.and.pred %p2, 0, %p1;
  selp.u32 %r3, 1, 0, %p2;
  }
  {
  .reg .pred %p1;
  setp.ne.u32 %p1, %r2, 0;
  selp.u32 %r4, 10, 0, %p1;
  }
  selp.u32 %r5, 100, 0, %p1;
  add.u32 %r6, %r3, %r4;
  add.u32 %r7, %r6, %r5;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  uint32_t* out = arena().alloc<uint32_t>(64);
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  EXPECT_OK(launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{64}, p, arena())));
  for (uint32_t t = 0; t < 64; ++t) {
    // the barrier's AND over every thread's (t odd) is false; the second block's own %p1 is t odd; the outer %p1,
    // set before both blocks, is still t < 40
    const uint32_t expected = 0 + ((t & 1) ? 10 : 0) + (t < 40 ? 100 : 0);
    EXPECT_EQ(out[t], expected) << "thread " << t;
  }
}

// A `.extern .shared` array that declares its size is a static allocation, not the kernel's dynamic shared memory:
// driver 580 on an H200 gives `.extern .shared .align 8 .b8 arr[260];` 260 static bytes
// (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) and runs this kernel with no dynamic bytes (out = 64). Taichi's LLVM declares
// its block-shared arrays so (ti.simt.block.SharedArray, its parallel scan); cuemu took them for dynamic shared
// memory, of 0 bytes at Taichi's launches, and the first store faulted (out-of-range shared address 0x404).
TEST(PtxExec, SizedExternSharedArrayIsStatic) {
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 8 .b8 arr[260];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, arr;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.shared.u32 [%rd3], %r1;
  bar.sync 0;
  ld.shared.u32 %r2, [arr+256];
  ld.param.u64 %rd4, [out];
  st.global.u32 [%rd4], %r2;
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  EXPECT_EQ(kernels(*cr.program)[0].staticSharedBytes, 260u);
  uint32_t* out = arena().alloc<uint32_t>(1);
  out[0] = 0;
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  EXPECT_OK(launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{65}, p, arena())));
  EXPECT_EQ(out[0], 64u);
}

// The shared window as an H200 lays it out (tools/gpu-probe/smemwindow29.cu): the driver's 1 KiB first, the
// kernel's .shared variables from 0x400, its dynamic shared memory after them; %total_smem_size counts the kernel's
// bytes in 128-byte units, %aggr_smem_size the reserved ones too, unrounded. A generic address agrees with its shared
// address in the bits below the cluster rank, so a pointer swizzled as a generic address (CuTe XORs bits 7-9 into 4-6
// for its cp.async destinations) is the swizzled shared address after cvta: with the block at a 64-byte boundary
// only, CUTLASS's gather GEMM (example 52) faulted or copied to the wrong rows.
TEST(PtxExec, SharedWindowLayout) {
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 1024 .b8 dyn[];
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<24>;
  .shared .align 4 .b8 st[200];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, st;
  mov.u32 %r2, dyn;
  mov.u32 %r3, %total_smem_size;
  mov.u32 %r4, %aggr_smem_size;
  mov.u32 %r5, %dynamic_smem_size;
  mov.u32 %r6, %reserved_smem_offset_begin;
  mov.u32 %r7, %reserved_smem_offset_end;
  mov.u32 %r8, %reserved_smem_offset_cap;
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
  mov.u32 %r10, %tid.x;
  shl.b32 %r11, %r10, 4;
  cvt.u64.u32 %rd2, %r11;
  cvta.shared.u64 %rd3, dyn;
  add.s64 %rd4, %rd3, %rd2;
  and.b64 %rd5, %rd4, 896;
  shr.u64 %rd6, %rd5, 3;
  xor.b64 %rd7, %rd6, %rd4;
  cvta.to.shared.u64 %rd8, %rd7;
  cvt.u32.u64 %r12, %rd8;
  st.shared.u32 [%r12], %r10;
  and.b64 %rd9, %rd4, 16777215;
  cvt.u32.u64 %r13, %rd9;
  add.u32 %r14, %r2, %r11;
  setp.ne.u32 %p1, %r13, %r14;
  selp.u32 %r15, 1, 0, %p1;
  bar.sync 0;
  ld.shared.u32 %r17, [%r14];
  mul.wide.u32 %rd10, %r10, 8;
  add.s64 %rd11, %rd1, %rd10;
  st.global.v2.u32 [%rd11+32], {%r17, %r15};
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  EXPECT_EQ(kernels(*cr.program)[0].staticSharedBytes, 200u);  // the driver's bytes are not the kernel's
  const uint32_t rows = 64, dynamicBytes = 16 * rows + 4;
  auto* out = arena().alloc<uint32_t>(8 + 2 * rows);
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{rows}, p, arena());
  lp.dynamicSharedBytes = dynamicBytes;
  LaunchResult r = launch(*cr.program, 0, lp);
  EXPECT_OK(r);
  EXPECT_EQ(out[0], 0x400u);  // st
  EXPECT_EQ(out[1], 0x800u);  // dyn, at its alignment after st
  EXPECT_EQ(out[2], (0x800u - 0x400u + dynamicBytes + 127) / 128 * 128);
  EXPECT_EQ(out[3], 0x800u + dynamicBytes);
  EXPECT_EQ(out[4], dynamicBytes);
  EXPECT_EQ(out[5], 0u);
  EXPECT_EQ(out[6], 288u);
  EXPECT_EQ(out[7], 1024u);
  for (uint32_t t = 0; t < rows; ++t) {
    EXPECT_EQ(out[8 + 2 * t], t ^ ((t >> 3) & 7)) << "row " << t << " holds another thread's value";
    EXPECT_EQ(out[8 + 2 * t + 1], 0u) << "generic and shared addresses disagree for thread " << t;
  }
}

TEST(PtxExec, DevicePrintf) {
  KernelRun k("basic.ptx", "printer");
  CaptureHost host;
  Params p(k.info());
  p.arg(42);
  auto r = k(Dim3{1}, Dim3{2}, p, 0, {}, &host);
  EXPECT_OK(r);
  EXPECT_EQ(host.out, "hello 42 from 0, str 1.50\nhello 42 from 1, str 1.50\n");
}

TEST(PtxExec, AssertAndTrap) {
  KernelRun a("basic.ptx", "asserter");
  Params p0(a.info());
  p0.arg(0);
  EXPECT_OK(a(Dim3{1}, Dim3{32}, p0));
  Params p1(a.info());
  p1.arg(1);
  auto r = a(Dim3{2}, Dim3{32}, p1);
  ASSERT_EQ(r.fault.kind, FaultKind::Assert);
  EXPECT_NE(r.fault.message.find("Assertion `x == 0` failed"), std::string::npos) << r.fault.message;
  EXPECT_NE(r.fault.message.find("basic.cu"), std::string::npos) << r.fault.message;
  KernelRun t("basic.ptx", "trapper");
  Params pt(t.info());
  EXPECT_EQ(t(Dim3{1}, Dim3{1}, pt).fault.kind, FaultKind::Trap);
}

TEST(PtxExec, GlobalVariables) {
  KernelRun k("basic.ptx", "globals");
  float* out = arena().alloc<float>(64);
  Params p(k.info());
  p.arg(out);
  auto r = k(Dim3{3}, Dim3{64}, p);
  EXPECT_OK(r);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], 1.5f + float(i % 4));
  const auto& gl = globals(*k.mod.prog);
  for (size_t g = 0; g < gl.size(); ++g)
    if (gl[g].name == "counter") {
      EXPECT_EQ(*reinterpret_cast<int*>(k.mod.globalAddrs[g]), 3 * 64);
    }
}

TEST(PtxExec, AtomicsAllKinds) {
  KernelRun k("basic.ptx", "atomics");
  int* iv = arena().alloc<int>(4);
  unsigned* uv = arena().alloc<unsigned>(4);
  float* fv = arena().alloc<float>(1);
  double* dv = arena().alloc<double>(1);
  unsigned long long* lv = arena().alloc<unsigned long long>(1);
  std::memset(iv, 0, 16);
  std::memset(uv, 0, 16);
  *fv = 0;
  *dv = 0;
  *lv = 0;
  Params p(k.info());
  p.arg(iv).arg(uv).arg(fv).arg(dv).arg(lv);
  auto r = k(Dim3{1}, Dim3{64}, p);
  EXPECT_OK(r);
  EXPECT_EQ(iv[0], 64);
  EXPECT_EQ(iv[1], 63);
  EXPECT_EQ(iv[2], -63);
  EXPECT_EQ(iv[3], 128);
  EXPECT_EQ(uv[0], 64u % 11u);
  EXPECT_EQ(uv[1], 7u);
  EXPECT_EQ(uv[2], 5u);
  EXPECT_EQ(uv[3], 0xffffffffu);
  EXPECT_EQ(*fv, 32.0f);
  EXPECT_EQ(*dv, 16.0);
  EXPECT_EQ(*lv, 192ull);
}

TEST(PtxExec, Conversions) {
  KernelRun k("basic.ptx", "conversions");
  std::vector<float> f = {1.7f, -2.5f, 3e9f, -3e9f, NAN, 0.49999997f, 65520.0f, 1e-8f};
  std::vector<double> d = {1.0 / 3, 1e300, -1e-300, 2.5, 0.1, 1e10, -0.0, 123.456};
  int n = int(f.size());
  float* df = arena().upload(f);
  double* dd = arena().upload(d);
  int* di = arena().alloc<int>(n);
  unsigned* du = arena().alloc<unsigned>(n);
  float* dfo = arena().alloc<float>(4 * n);
  unsigned short* dh = arena().alloc<unsigned short>(n);
  Params p(k.info());
  p.arg(df).arg(dd).arg(di).arg(du).arg(dfo).arg(dh);
  auto r = k(Dim3{1}, Dim3{uint32_t(n)}, p);
  EXPECT_OK(r);
  std::vector<int> ei = {1, -2, 2147483647, -2147483647 - 1, 0, 0, 65520, 0};
  std::vector<unsigned> eu = {2, 0, 3000000000u, 0, 0, 0, 65520, 0};
  std::vector<unsigned short> eh = {0x3ecd, 0xc100, 0x7c00, 0xfc00, 0x7fff, 0x3800, 0x7c00, 0x0000};
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(di[i], ei[size_t(i)]) << i;
    EXPECT_EQ(du[i], eu[size_t(i)]) << i;
    // the kernel's integer arithmetic wraps (mad.lo.s32); so does this, without signed overflow
    EXPECT_EQ(dfo[4 * i + 0], float(int32_t(uint32_t(ei[size_t(i)]) * 3u + 1u))) << i;
    EXPECT_EQ(dfo[4 * i + 1], float(d[size_t(i)])) << i;
    float q = f[size_t(i)] / 3.0f;
    if (std::isnan(q)) {
      EXPECT_EQ(std::bit_cast<uint32_t>(dfo[4 * i + 2]), 0x7fffffffu);
    } else {
      EXPECT_EQ(dfo[4 * i + 2], q) << i;
    }
    EXPECT_EQ(dh[i], eh[size_t(i)]) << i;
  }
}

TEST(PtxExec, SpinWaitingBlocksMakeProgress) {
  KernelRun k("basic.ptx", "spin");
  const int blocks = 40;
  int* flags = arena().alloc<int>(blocks);
  int* out = arena().alloc<int>(blocks);
  std::memset(flags, 0, blocks * sizeof(int));
  Params p(k.info());
  p.arg(flags).arg(out);
  for (uint32_t threads : {1u, 2u}) {
    std::memset(flags, 0, blocks * sizeof(int));
    ExecConfig cfg;
    cfg.threads = threads;
    auto r = k(Dim3{blocks}, Dim3{64}, p, 0, cfg);
    EXPECT_OK(r);
    for (int b = 0; b < blocks; ++b) ASSERT_EQ(out[b], b + 1);
  }
}

// Blocks that wait for an earlier block finish once it has, instead of staying parked (each holding its registers
// and shared memory) until the whole grid has started: on one host thread, a parked block gets a turn between two
// new ones. Before, all 299 blocks that wait were parked at once.
TEST(PtxExec, BlocksWaitingForEarlierOnesDoNotPileUp) {
  KernelRun k("basic.ptx", "lookback");
  const int blocks = 300;
  int* flags = arena().alloc<int>(blocks);
  int* started = arena().alloc<int>(1);
  int* out = arena().alloc<int>(blocks);
  for (bool deterministic : {false, true}) {
    std::memset(flags, 0, blocks * sizeof(int));
    *started = 0;
    Params p(k.info());
    p.arg(flags).arg(started).arg(out);
    ExecConfig cfg;
    cfg.threads = 1;
    cfg.deterministic = deterministic;
    auto r = k(Dim3{blocks}, Dim3{32}, p, 0, cfg);
    EXPECT_OK(r);
    for (int b = 0; b < blocks; ++b) ASSERT_EQ(out[b], b + 1);
    EXPECT_LE(r.maxParkedCtas, 2u) << (deterministic ? "deterministic" : "default") << " schedule";
  }
}

TEST(PtxExec, DeterministicScheduleIsReproducible) {
  KernelRun k("bench.ptx", "histogram");
  const int n = 5000;
  std::vector<unsigned char> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 31);
  unsigned char* din = arena().upload(in);
  unsigned* bins = arena().alloc<unsigned>(256);
  for (uint64_t seed : {0ull, 7ull}) {
    std::memset(bins, 0, 1024);
    Params p(k.info());
    p.arg(din).arg(bins).arg(n);
    ExecConfig cfg;
    cfg.deterministic = true;
    cfg.scheduleSeed = seed;
    EXPECT_OK(k(Dim3{8}, Dim3{64}, p, 0, cfg));
    unsigned total = 0;
    for (int b = 0; b < 256; ++b) total += bins[b];
    EXPECT_EQ(total, unsigned(n));
  }
}

TEST(PtxExec, ConcurrentLaunchesFromManyThreads) {
  KernelRun k("bench.ptx", "vadd");
  const int n = 4096;
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  std::vector<float*> outs;
  for (int t = 0; t < 4; ++t) outs.push_back(arena().alloc<float>(n));
  std::vector<std::thread> th;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    th.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        Params p(k.info());
        p.arg(da).arg(db).arg(outs[size_t(t)]).arg(n);
        if (!k(Dim3{n / 128}, Dim3{128}, p).ok()) failures++;
      }
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < n; ++i) ASSERT_EQ(outs[size_t(t)][i], 3.0f);
}

TEST(PtxExec, BadLaunchConfigurationsAreRejected) {
  KernelRun k("bench.ptx", "vadd");
  Params p(k.info());
  EXPECT_EQ(k(Dim3{1}, Dim3{2048}, p).fault.kind, FaultKind::LaunchInvalid);
  EXPECT_EQ(k(Dim3{0}, Dim3{32}, p).fault.kind, FaultKind::LaunchInvalid);
  LaunchParams lp;
  lp.memory = &arena();
  EXPECT_EQ(launch(*k.mod.prog, 99, lp).fault.kind, FaultKind::LaunchInvalid);
}

TEST(PtxExec, UnsupportedInstructionFailsAtLaunchWithItsName) {
  const char* src = R"(
.version 8.6
.target sm_100a
.address_size 64
.visible .entry fine() { ret; }
.visible .entry uses_tcgen05(.param .u64 t)
{
  .reg .b32 %r<5>;
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];
  ret;
}
)";
  CompileResult cr = compile(src);
  ASSERT_TRUE(cr.program) << cr.error;
  LaunchParams lp;
  lp.memory = &arena();
  lp.params = "\0\0\0\0\0\0\0\0";
  lp.paramBytes = 8;
  EXPECT_TRUE(launch(*cr.program, findKernel(*cr.program, "fine"), lp).ok());
  auto r = launch(*cr.program, findKernel(*cr.program, "uses_tcgen05"), lp);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.fault.message.find("tcgen05.ld.sync.aligned.32x32b"), std::string::npos) << r.fault.message;
}

// Instructions the front end accepts but the interpreter does not execute (multimem,
// tcgen05.commit): the module loads, the other kernels run, and launching one of these kernels fails with an
// IllegalInstruction fault that names the instruction.
TEST(PtxExec, AcceptedButUnexecutedInstructionsFailAtLaunchWithTheirNames) {
  struct Case {
    const char* target;
    const char* kernel;
    const char* instruction;
    const char* expectInMessage;
  };
  const Case cases[] = {
      {"sm_90a", "multimem_ld_reduce", "multimem.ld_reduce.relaxed.sys.global.add.u32 %r2, [%rd1];",
       "multimem.ld_reduce"},
      {"sm_90a", "multimem_st", "multimem.st.relaxed.gpu.global.v4.f32 [%rd1], {%f1,%f2,%f3,%f4};", "multimem.st"},
      {"sm_90a", "multimem_red", "multimem.red.release.cta.global.min.s32 [%rd1], %r1;", "multimem.red"},
      {"sm_100a", "tcgen05_commit",
       "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r1], %h1;",
       "tcgen05.commit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    std::string src = std::string(".version 8.6\n.target ") + c.target +
                      "\n.address_size 64\n.visible .entry fine() { ret; }\n.visible .entry " + c.kernel +
                      "(.param .u64 t)\n{\n  .reg .b16 %h<3>;\n  .reg .b32 %r<10>;\n  .reg .f32 %f<9>;\n"
                      "  .reg .b64 %rd<3>;\n  ld.param.u64 %rd1, [t];\n  " +
                      c.instruction + "\n  ret;\n}\n";
    CompileResult cr = compile(src);
    ASSERT_TRUE(cr.program) << cr.error;
    LaunchParams lp;
    lp.memory = &arena();
    lp.params = "\0\0\0\0\0\0\0\0";
    lp.paramBytes = 8;
    EXPECT_TRUE(launch(*cr.program, findKernel(*cr.program, "fine"), lp).ok());
    auto r = launch(*cr.program, findKernel(*cr.program, c.kernel), lp);
    EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
    EXPECT_NE(r.fault.message.find(c.expectInMessage), std::string::npos) << r.fault.message;
    EXPECT_NE(r.fault.message.find("not supported"), std::string::npos) << r.fault.message;
  }
}

// Video instructions, one thread: each case loads a, b, c as constants, runs the instruction and stores d. Expected
// values follow the PTX ISA's definition (selection and sign extension, the operation, clamping to the destination
// or its selected part, then the secondary operation or the merge into c) where an H200 agrees; the scalar cases
// marked "H200" are where it does not, with the GPU's result (conformance/golden/nvidia-h200.txt, isa/video.cpp).
TEST(PtxExec, VideoInstructions) {
  struct Case {
    const char* instruction;  // operands %a %b %c, result %d
    uint32_t a, b, c, expected;
  };
  const Case cases[] = {
      {"vadd.u32.u32.u32 %d, %a, %b;", 0xffffffffu, 1, 0, 0},
      // H200: an unsigned whole-word .sat only clamps negative results; a carry out is dropped.
      {"vadd.u32.u32.u32.sat %d, %a, %b;", 0xffffffffu, 1, 0, 0},
      {"vsub.u32.u32.u32.sat %d, %a, %b;", 0, 1, 0, 0},
      {"vadd.s32.s32.s32.sat %d, %a, %b;", 0x7fffffffu, 1, 0, 0x7fffffffu},
      {"vsub.s32.u32.u32.sat %d, %a, %b;", 1, 3, 0, 0xfffffffeu},
      {"vsub.u32.u32.u32.sat %d, %a, %b;", 1, 3, 0, 0},
      {"vabsdiff.u32.s32.s32 %d, %a.b0, %b.b1;", 0xf0, 0x1000, 0, 32},
      {"vmin.s32.s32.u32 %d, %a.h1, %b.h0;", 0xffff0000u, 5, 0, 0xffffffffu},
      {"vmax.u32.u32.u32.add %d, %a.b3, %b.b2, %c;", 0x7f000000u, 0x00fe0000u, 1000, 1254},
      {"vadd.u32.u32.u32.sat %d.b1, %a, %b, %c;", 200, 100, 0xaabbccddu, 0xaabbffddu},
      {"vadd.s32.s32.s32 %d.h1, %a, %b, %c;", 0x12345, 1, 0x11112222u, 0x23462222u},
      {"vmin.s32.s32.s32.min %d, %a, %b, %c;", 5, 7, 0xfffffffdu, 0xfffffffdu},
      {"vshl.u32.u32.u32.clamp %d, %a, %b;", 1, 40, 0, 0},
      {"vshl.u32.u32.u32.clamp.sat %d, %a, %b;", 1, 40, 0, 0xffffffffu},
      {"vshl.u32.u32.u32.wrap %d, %a, %b;", 1, 33, 0, 2},
      {"vshr.s32.s32.u32.wrap %d, %a, %b;", 0x80000000u, 4, 0, 0xf8000000u},
      {"vshr.u32.u32.u32.clamp %d, %a.h1, %b;", 0xf0000000u, 4, 0, 0x0f00},
      {"vset.u32.u32.lt %d, %a, %b;", 1, 2, 0, 1},
      {"vset.s32.u32.gt %d, %a, %b;", 0xffffffffu, 0, 0, 0},
      {"vset.u32.u32.ne.add %d, %a, %b, %c;", 1, 2, 41, 42},
      {"vset.u32.u32.eq %d.b2, %a, %b, %c;", 7, 7, 0xffffffffu, 0xff01ffffu},
      {"vmad.u32.u32.u32 %d, %a, %b, %c;", 3, 4, 5, 17},
      {"vmad.s32.s32.s32 %d, -%a, %b, %c;", 3, 4, 5, 0xfffffff9u},
      {"vmad.u32.u32.u32 %d, %a, %b, -%c;", 2, 3, 10, 0xfffffffcu},
      {"vmad.u32.u32.u32.po %d, %a, %b, %c;", 3, 4, 5, 18},
      {"vmad.s32.s32.s32.shr7 %d, %a, %b, %c;", 256, 3, 0, 6},
      {"vmad.u32.u32.u32.sat %d, %a, %b, %c;", 0x10000, 0x10000, 0, 0xffffffffu},
      {"vmad.s32.s32.s32 %d, %a.h0, %b.b1, %c;", 0xfffe, 0x300, 10, 4},
      // H200: vmad multiplies whole-word .u32 sources as signed 32-bit numbers and .sat after -c clamps to s32.
      {"vmad.u32.u32.u32.sat %d, %a, %b.b1, -%c;", 0xffffffffu, 0xffffffffu, 0, 0xffffff01u},
      {"vmad.u32.u32.u32.sat %d, %a, %b.b1, -%c;", 0x7fffffffu, 0x0000ff00u, 0, 0x7fffffffu},
      // H200: c is sign-extended and .shr15 shifts arithmetically.
      {"vmad.u32.u32.u32.po.shr15 %d, %a, %b, %c;", 0, 0x80000000u, 0x80000000u, 0xffff0000u},
      // H200: a part destination's .sat turns a negative result into the part's maximum.
      {"vsub.u32.s32.u32.sat %d.b2, %a.h1, %b, %c;", 0, 1, 1, 0x00ff0001u},
      {"vsub.s32.s32.s32.sat %d.b0, %a, %b, %c;", 0, 1, 0xaabbccddu, 0xaabbcc7fu},
      // H200: .min with an unsigned destination compares unsigned, so a negative result (-1) loses to c.
      {"vmin.u32.s32.u32.min %d, %a.b3, %b, %c;", 0xffffffffu, 0, 0xffff0000u, 0xffff0000u},
      // H200: vset's secondary operation takes the first source type's signedness (c = -1 here).
      {"vset.s32.u32.lt.max %d, %a, %b, %c;", 0, 0xffffffffu, 0xffffffffu, 1},
      {"vset.u32.u32.lt.max %d, %a, %b, %c;", 0, 0xffffffffu, 0xffffffffu, 0xffffffffu},
      // H200: vshl.sat sign-extends from bit 33 (2 << 32 reads as negative) before clamping.
      {"vshl.s32.s32.u32.clamp.sat %d, %a, %b;", 2, 32, 0, 0x80000000u},
      {"vshl.s32.s32.u32.clamp.sat %d, %a, %b;", 1, 32, 0, 0x7fffffffu},
      {"vabsdiff4.u32.u32.u32 %d, %a, %b, %c;", 0x10203040u, 0x40302010u, 0, 0x30101030u},
      {"vabsdiff4.u32.u32.u32.add %d, %a, %b, %c;", 0x10203040u, 0x40302010u, 5, 133},
      {"vadd4.u32.u32.u32.sat %d, %a, %b, %c;", 0xf0010203u, 0x20010101u, 0, 0xff020304u},
      {"vadd4.u32.u32.u32 %d, %a, %b, %c;", 0xf0010203u, 0x20010101u, 0, 0x10020304u},
      {"vsub4.s32.s32.s32.sat %d, %a, %b, %c;", 0x80000000u, 0x01000000u, 0, 0x80000000u},
      {"vmin4.u32.u32.u32 %d, %a.b4567, %b.b0123, %c;", 0x01020304u, 0x05060708u, 0, 0x04030201u},
      {"vset4.u32.u32.lt %d, %a, %b, %c;", 0x01020304u, 0x04030201u, 0, 0x01010000u},
      {"vadd2.u32.u32.u32.add %d, %a, %b, %c;", 0x00010002u, 0x00030004u, 100, 110},
      {"vmax2.s32.s32.s32 %d.h1, %a, %b, %c;", 0xffff0005u, 0x00020003u, 0xaaaabbbbu, 0x0002bbbbu},
      {"vavrg2.u32.u32.u32 %d, %a, %b, %c;", 0x00030001u, 0x00040002u, 0, 0x00040002u},
  };
  const size_t n = sizeof cases / sizeof cases[0];
  std::string src =
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry video(.param .u64 out)\n{\n"
      "  .reg .b32 %a, %b, %c, %d;\n  .reg .b64 %rd1;\n  ld.param.u64 %rd1, [out];\n";
  for (size_t i = 0; i < n; ++i)
    src += "  mov.b32 %a, " + std::to_string(cases[i].a) + ";\n  mov.b32 %b, " + std::to_string(cases[i].b) +
           ";\n  mov.b32 %c, " + std::to_string(cases[i].c) + ";\n  " + cases[i].instruction +
           "\n  st.global.u32 [%rd1+" + std::to_string(4 * i) + "], %d;\n";
  src += "  ret;\n}\n";
  CompileResult cr = compile(src);
  ASSERT_TRUE(cr.program) << cr.error;
  uint32_t* out = arena().alloc<uint32_t>(n);
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  LaunchParams lp;
  lp.params = p.data();
  lp.paramBytes = p.size();
  lp.memory = &arena();
  LaunchResult r = launch(*cr.program, 0, lp);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(out[i], cases[i].expected) << cases[i].instruction << " a=" << cases[i].a << " b=" << cases[i].b
                                         << " c=" << cases[i].c;
}

// CUDA's SIMD intrinsics that nvcc builds from vabsdiff4/vabsdiff2 (nvcc-generated PTX), against the intrinsics'
// documented per-byte / per-half-word results.
TEST(PtxExec, SimdIntrinsicsBuiltOnVideoInstructions) {
  KernelRun k("basic.ptx", "simd_video");
  std::vector<uint32_t> a = {0, 0x10203040u, 0x80ff7f01u, 0xffffffffu, 0x12345678u, 0x807f0080u, 0x01020304u};
  std::vector<uint32_t> b = {0, 0x40302010u, 0x7f0180ffu, 0x00000000u, 0x87654321u, 0x7f80ff7fu, 0xfffefdfcu};
  for (uint32_t i = 0; i < 64; ++i) {  // and some mixed patterns
    a.push_back(i * 0x9e3779b9u);
    b.push_back(~i * 0x85ebca6bu);
  }
  const int n = int(a.size());
  uint32_t* da = arena().upload(a);
  uint32_t* db = arena().upload(b);
  uint32_t* out = arena().alloc<uint32_t>(size_t(7 * n));
  Params p(k.info());
  p.arg(da).arg(db).arg(out).arg(n);
  EXPECT_OK(k(Dim3{1}, Dim3{uint32_t(n)}, p));
  auto byte = [](uint32_t v, int i) { return int((v >> (8 * i)) & 0xff); };
  auto sbyte = [](uint32_t v, int i) { return int(int8_t(uint8_t(v >> (8 * i)))); };
  for (int t = 0; t < n; ++t) {
    uint32_t x = a[size_t(t)], y = b[size_t(t)];
    uint32_t absdiffu = 0, absdiffs = 0, sadu = 0, sads = 0, sadu2 = 0, abs4 = 0, absss4 = 0;
    for (int i = 0; i < 4; ++i) {
      int du = std::abs(byte(x, i) - byte(y, i)), ds = std::abs(sbyte(x, i) - sbyte(y, i));
      absdiffu |= uint32_t(du & 0xff) << (8 * i);
      absdiffs |= uint32_t(ds & 0xff) << (8 * i);
      sadu += uint32_t(du);
      sads += uint32_t(ds);
      abs4 |= uint32_t(std::abs(sbyte(x, i)) & 0xff) << (8 * i);
      absss4 |= uint32_t(std::min(std::abs(sbyte(x, i)), 127)) << (8 * i);
    }
    for (int i = 0; i < 2; ++i)
      sadu2 += uint32_t(std::abs(int((x >> (16 * i)) & 0xffff) - int((y >> (16 * i)) & 0xffff)));
    const uint32_t want[7] = {absdiffu, absdiffs, sadu, sads, sadu2, abs4, absss4};
    const char* names[7] = {"__vabsdiffu4", "__vabsdiffs4", "__vsadu4", "__vsads4", "__vsadu2", "__vabs4", "__vabsss4"};
    for (int f = 0; f < 7; ++f)
      EXPECT_EQ(out[7 * t + f], want[f]) << names[f] << "(0x" << std::hex << x << ", 0x" << y << ")";
  }
}

TEST(PtxExec, ParamLayout) {
  const char* src = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[20], .param .u32 d) { ret; }
)";
  CompileResult cr = compile(src);
  ASSERT_TRUE(cr.program) << cr.error;
  const KernelInfo& ki = kernels(*cr.program)[0];
  ASSERT_EQ(ki.params.size(), 4u);
  EXPECT_EQ(ki.params[0].offset, 0u);
  EXPECT_EQ(ki.params[1].offset, 8u);
  EXPECT_EQ(ki.params[2].offset, 16u);
  EXPECT_EQ(ki.params[2].size, 20u);
  EXPECT_EQ(ki.params[3].offset, 36u);
  EXPECT_EQ(ki.paramBytes, 40u);
}

// vadd's address adds are fused into its loads and store (one op computes base + offset); a fault still names the
// first lane out of range: c holds 1024 elements, so thread 0 of block 4 stores past its end.
TEST(PtxExec, FusedAddressStoreFaultsAtTheFirstLaneOutOfRange) {
  KernelRun k("bench.ptx", "vadd");
  const int n = 2048;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 0.25f;
  }
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  float* dc = arena().alloc<float>(1024);
  Params p(k.info());
  p.arg(da).arg(db).arg(dc).arg(n);
  ExecConfig cfg;
  cfg.deterministic = true;
  auto r = k(Dim3{n / 256}, Dim3{256}, p, 0, cfg);
  ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  EXPECT_EQ(r.fault.address, reinterpret_cast<uint64_t>(dc + 1024));
  EXPECT_EQ(r.fault.block.x, 4u);
  EXPECT_EQ(r.fault.thread.x, 0u);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(dc[i], a[i] + b[i]) << i;
}

Module& loadText(const std::string& key, const std::string& text) {
  static std::map<std::string, Module> cache;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  CompileResult r = compile(text);
  if (!r.program) throw std::runtime_error("compile failed: " + r.error);
  Module mod;
  mod.prog = r.program;
  return cache.emplace(key, std::move(mod)).first->second;
}

LaunchResult runText(Module& mod, Dim3 grid, Dim3 block, const Params& p) {
  LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
  return launch(*mod.prog, 0, lp);
}

// One warp, shared-memory accesses of every half-warp layout the full-warp path distinguishes: one address per
// half (byte store: the highest lane of each half wins; byte load widened), both halves storing the same
// consecutive words (the second half's values stay), 16-bit loads of every other halfword (scattered, sign
// extended) and of consecutive halfwords widened to 32 bits.
const char* kSharedHalves = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry halves(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 buf[128];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 4;
  mov.u32 %r3, buf;
  add.u32 %r4, %r3, %r2;
  st.shared.u8 [%r4], %r1;
  bar.sync 0;
  ld.shared.u8 %r5, [%r4];
  and.b32 %r6, %r1, 15;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r6, %r3;
  mul.lo.s32 %r7, %r1, -3;
  st.shared.u32 [%r6+64], %r7;
  bar.sync 0;
  ld.shared.s16 %r8, [%r6+64];
  shl.b32 %r9, %r1, 1;
  add.u32 %r9, %r9, %r3;
  ld.shared.u16 %r10, [%r9+64];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 12;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  st.global.u32 [%rd3+4], %r8;
  st.global.u32 [%rd3+8], %r10;
  ret;
}
)";

TEST(PtxExec, SharedHalfWarpLayouts) {
  Module& mod = loadText("halves", kSharedHalves);
  uint32_t* out = arena().alloc<uint32_t>(96);
  Params p(kernels(*mod.prog)[0]);
  p.arg(out);
  auto r = runText(mod, Dim3{1}, Dim3{32}, p);
  EXPECT_OK(r);
  uint32_t words[16];
  for (int j = 0; j < 16; ++j) words[j] = uint32_t(-3 * (16 + j));
  uint16_t halves[32];
  std::memcpy(halves, words, sizeof halves);
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(out[l * 3], l < 16 ? 15u : 31u) << l;
    EXPECT_EQ(out[l * 3 + 1], uint32_t(int32_t(int16_t(halves[2 * (l & 15)])))) << l;
    EXPECT_EQ(out[l * 3 + 2], uint32_t(halves[l])) << l;
  }
}

// A fused address add whose load overwrites one of the add's operands (the index): every lane's address is taken
// before any result is written. out[i] = tab[tab[i] / 8] with tab holding byte offsets.
const char* kChase = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry chase(.param .u64 tab, .param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [tab];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 8;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u64 %rd2, [%rd3];
  add.s64 %rd4, %rd1, %rd2;
  ld.global.u64 %rd5, [%rd4];
  ld.param.u64 %rd6, [out];
  cvta.to.global.u64 %rd6, %rd6;
  mul.wide.u32 %rd7, %r1, 8;
  add.s64 %rd6, %rd6, %rd7;
  st.global.u64 [%rd6], %rd5;
  ret;
}
)";

TEST(PtxExec, FusedAddressLoadOverwritingItsIndex) {
  Module& mod = loadText("chase", kChase);
  uint64_t* tab = arena().alloc<uint64_t>(32);
  uint64_t* out = arena().alloc<uint64_t>(32);
  for (uint64_t i = 0; i < 32; ++i) tab[i] = (i * 5 + 3) % 32 * 8;
  Params p(kernels(*mod.prog)[0]);
  p.arg(tab).arg(out);
  for (uint32_t threads : {32u, 20u}) {  // full warp (fast path) and a partial one (per-lane path)
    std::fill(out, out + 32, ~uint64_t(0));
    EXPECT_OK(runText(mod, Dim3{1}, Dim3{threads}, p));
    for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], i < threads ? tab[tab[i] / 8] : ~uint64_t(0)) << i;
  }
}

// Consecutive global accesses of a full warp go as one block, converting when the register is wider than memory:
// s16 loads sign-extend into 32-bit registers, u8 stores keep the low byte.
const char* kWidenNarrow = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry widen(.param .u64 in, .param .u64 out8, .param .u64 out32)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 2;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.s16 %r2, [%rd3];
  ld.param.u64 %rd4, [out8];
  cvta.to.global.u64 %rd4, %rd4;
  cvt.u64.u32 %rd5, %r1;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u8 [%rd6], %r2;
  ld.param.u64 %rd7, [out32];
  cvta.to.global.u64 %rd7, %rd7;
  mul.wide.u32 %rd8, %r1, 4;
  add.s64 %rd9, %rd7, %rd8;
  st.global.u32 [%rd9], %r2;
  ret;
}
)";

TEST(PtxExec, ConsecutiveGlobalAccessesConvertWidths) {
  Module& mod = loadText("widen", kWidenNarrow);
  int16_t* in = arena().alloc<int16_t>(32);
  uint8_t* out8 = arena().alloc<uint8_t>(32);
  uint32_t* out32 = arena().alloc<uint32_t>(32);
  for (int i = 0; i < 32; ++i) in[i] = int16_t(-1000 + 77 * i);
  Params p(kernels(*mod.prog)[0]);
  p.arg(in).arg(out8).arg(out32);
  for (uint32_t threads : {32u, 20u}) {  // full warp (one block) and a partial one (per-lane path)
    std::fill(out8, out8 + 32, uint8_t(0xee));
    std::fill(out32, out32 + 32, 0xeeeeeeeeu);
    EXPECT_OK(runText(mod, Dim3{1}, Dim3{threads}, p));
    for (uint32_t i = 0; i < 32; ++i) {
      EXPECT_EQ(out8[i], i < threads ? uint8_t(in[i]) : uint8_t(0xee)) << i;
      EXPECT_EQ(out32[i], i < threads ? uint32_t(int32_t(in[i])) : 0xeeeeeeeeu) << i;
    }
  }
}

// ---- fused shared-memory inner products and cached shared layouts (mem::fmaSharedChain, mem::sharedLayout) ----

// out[t] = sum over k < 4 of tile[16 * (t / 16) + k] * tile[128 + 16 * k + t % 16] as a chain of fma.rn.f32, the
// shape of a 16x16 tiled matmul's unrolled inner loop: the x loads share one base register (per-half broadcast,
// its layout computed once and reused), the y loads another (consecutive per half). The last y load goes through
// a register that adds the `extra` parameter, `LASTX` is the last x load's offset: both can push an access out of
// the shared block.
const char* kSharedDot = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry dot(.param .u64 out, .param .u64 in, .param .u32 extra)
{
  .reg .b32 %r<10>;
  .reg .f32 %f<16>;
  .reg .b64 %rd<6>;
  .shared .align 4 .b8 tile[1024];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  ld.global.f32 %f2, [%rd3+512];
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, tile;
  add.u32 %r4, %r3, %r2;
  st.shared.f32 [%r4], %f1;
  st.shared.f32 [%r4+512], %f2;
  bar.sync 0;
  shr.u32 %r5, %r1, 4;
  shl.b32 %r5, %r5, 6;
  add.u32 %r5, %r3, %r5;
  and.b32 %r6, %r1, 15;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r3, %r6;
  ld.param.u32 %r7, [extra];
  add.u32 %r8, %r6, %r7;
  mov.f32 %f3, 0f00000000;
  ld.shared.f32 %f4, [%r5];
  ld.shared.f32 %f5, [%r6+512];
  fma.rn.f32 %f6, %f4, %f5, %f3;
  ld.shared.f32 %f7, [%r5+4];
  ld.shared.f32 %f8, [%r6+576];
  fma.rn.f32 %f9, %f8, %f7, %f6;
  ld.shared.f32 %f10, [%r5+8];
  ld.shared.f32 %f11, [%r6+640];
  fma.rn.f32 %f12, %f10, %f11, %f9;
  ld.shared.f32 %f13, [%r5+LASTX];
  ld.shared.f32 %f14, [%r8+704];
  fma.rn.f32 %f15, %f13, %f14, %f12;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  add.s64 %rd5, %rd4, %rd2;
  st.global.f32 [%rd5], %f15;
  ret;
}
)";

std::string sharedDotText(int lastX) {
  std::string s = kSharedDot;
  s.replace(s.find("LASTX"), 5, std::to_string(lastX));
  return s;
}

TEST(PtxExec, SharedInnerProductChain) {
  Module& mod = loadText("dot12", sharedDotText(12));
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[size_t(i)] = float((i * 37) % 23) * 0.37f - 3.1f;
  in[3] = std::bit_cast<float>(0x7fc01234u);  // a NaN with a payload: the result is the canonical NaN
  float* din = arena().upload(in);
  float* out = arena().alloc<float>(128);
  // 128 threads: the full-warp fused path; 48: the second warp is half full, so its chain falls back to the
  // original ops; results are the same either way
  for (uint32_t threads : {128u, 48u}) {
    std::fill(out, out + 128, -1.0f);
    Params p(kernels(*mod.prog)[0]);
    p.arg(out).arg(din).arg(0u);
    auto r = runText(mod, Dim3{1}, Dim3{threads}, p);
    EXPECT_OK(r);
    for (uint32_t t = 0; t < threads; ++t) {
      float acc = 0;
      for (uint32_t k = 0; k < 4; ++k) acc = std::fmaf(in[16 * (t / 16) + k], in[128 + 16 * k + t % 16], acc);
      if (std::isnan(acc))
        EXPECT_EQ(std::bit_cast<uint32_t>(out[t]), 0x7fffffffu) << threads << " " << t;
      else
        EXPECT_EQ(out[t], acc) << threads << " " << t;
    }
  }
}

TEST(PtxExec, SharedInnerProductChainFaults) {
  std::vector<float> in(256, 1.0f);
  float* din = arena().upload(in);
  float* out = arena().alloc<float>(128);
  // the last y load through another register, pushed past the block for every lane
  Module& mod = loadText("dot12", sharedDotText(12));
  Params p(kernels(*mod.prog)[0]);
  p.arg(out).arg(din).arg(4096u);
  auto r = runText(mod, Dim3{1}, Dim3{64}, p);
  ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  // which warp runs into it first is up to the schedule (the warp that completes the barrier goes on at once);
  // the fault names the lowest lane of that warp and its address
  uint32_t t = r.fault.thread.x;
  EXPECT_EQ(t % 32, 0u);
  // (shared addresses start after the driver's reserved bytes)
  EXPECT_EQ(r.fault.address, kReservedSharedBytes + 4096u + 704 + (t % 16) * 4);
  // a reused x layout whose larger offset pushes every half-warp but the first past the block (x base
  // 64 * (t / 16) + 1008 + 4 > 1024): the reuse must notice and the per-lane path fault at the first such lane
  Module& far = loadText("dot1008", sharedDotText(1008));
  Params q(kernels(*far.prog)[0]);
  q.arg(out).arg(din).arg(0u);
  auto f = runText(far, Dim3{1}, Dim3{128}, q);
  ASSERT_EQ(f.fault.kind, FaultKind::IllegalAddress) << f.fault.message;
  t = f.fault.thread.x;
  EXPECT_TRUE(t == 16 || (t >= 32 && t % 32 == 0)) << t;
  EXPECT_EQ(f.fault.address, kReservedSharedBytes + 64u * (t / 16) + 1008);
}

// setp right before the branch on its predicate runs the branch; under a guard, lanes the setp skips keep their
// old predicate: p1 = tid < 8, then for tid < 16 only, p1 = tid >= 4.
const char* kGuardedSetpBranch = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry gsb(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 8;
  setp.lt.u32 %p2, %r1, 16;
  @%p2 setp.ge.u32 %p1, %r1, 4;
  @%p1 bra TAKEN;
  mov.u32 %r2, 1;
  bra.uni DONE;
TAKEN:
  mov.u32 %r2, 2;
DONE:
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";

TEST(PtxExec, GuardedSetpBeforeBranchKeepsSkippedLanes) {
  Module& mod = loadText("gsb", kGuardedSetpBranch);
  uint32_t* out = arena().alloc<uint32_t>(32);
  Params p(kernels(*mod.prog)[0]);
  p.arg(out);
  EXPECT_OK(runText(mod, Dim3{1}, Dim3{32}, p));
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], (t >= 4 && t < 16) ? 2u : 1u) << t;
}

// %tid components of a three-dimensional block whose x extent is not a multiple of the warp size.
const char* kTid3d = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry tid3(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.u32 %r6, %r3, %r5, %r2;
  mad.lo.u32 %r6, %r6, %r4, %r1;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r6, 12;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  st.global.u32 [%rd3+4], %r2;
  st.global.u32 [%rd3+8], %r3;
  ret;
}
)";

TEST(PtxExec, ThreadIndexComponents) {
  Module& mod = loadText("tid3", kTid3d);
  const Dim3 block{5, 7, 3};
  const uint32_t n = block.x * block.y * block.z;
  uint32_t* out = arena().alloc<uint32_t>(3 * n);
  Params p(kernels(*mod.prog)[0]);
  p.arg(out);
  EXPECT_OK(runText(mod, Dim3{1}, block, p));
  for (uint32_t t = 0; t < n; ++t) {
    EXPECT_EQ(out[3 * t], t % block.x) << t;
    EXPECT_EQ(out[3 * t + 1], t / block.x % block.y) << t;
    EXPECT_EQ(out[3 * t + 2], t / (block.x * block.y)) << t;
  }
}

// %tid and %ctaid moved once into registers are written when each CTA is set up instead of by ops: the values
// must follow every CTA a host thread's reused register file runs, and launches of other block shapes. %r5 is
// defined twice (the op path) and %r4 only on one side of a branch.
const char* kIndexConsts = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry idx(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r5, %ctaid.y;
  mov.u32 %r6, %ntid.x;
  mov.u32 %r7, %ntid.y;
  mov.u32 %r8, %nctaid.x;
  mad.lo.u32 %r9, %r2, %r6, %r1;
  mad.lo.u32 %r10, %r5, %r8, %r3;
  mul.lo.u32 %r11, %r6, %r7;
  mad.lo.u32 %r9, %r10, %r11, %r9;
  mov.u32 %r4, 77;
  setp.eq.u32 %p1, %r1, 1;
  @%p1 bra $skip;
  mov.u32 %r4, %ctaid.x;
$skip:
  mov.u32 %r5, %tid.x;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r9, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};
  ret;
}
)";

TEST(PtxExec, IndexRegistersFollowEveryCtaAndLaunch) {
  Module& mod = loadText("idx", kIndexConsts);
  for (auto [grid, block] : {std::pair{Dim3{3, 2, 1}, Dim3{8, 4, 1}}, std::pair{Dim3{2, 3, 1}, Dim3{64, 1, 1}},
                             std::pair{Dim3{4, 1, 1}, Dim3{5, 7, 1}}}) {
    const uint32_t threads = block.x * block.y, n = grid.x * grid.y * threads;
    uint32_t* out = arena().alloc<uint32_t>(4 * n);
    Params p(kernels(*mod.prog)[0]);
    p.arg(out);
    EXPECT_OK(runText(mod, grid, block, p));
    for (uint32_t g = 0; g < n; ++g) {
      const uint32_t cta = g / threads, t = g % threads, tx = t % block.x, ty = t / block.x;
      const uint32_t cx = cta % grid.x;
      EXPECT_EQ(out[4 * g], ty) << g;
      EXPECT_EQ(out[4 * g + 1], cx) << g;
      EXPECT_EQ(out[4 * g + 2], tx == 1 ? 77u : cx) << g;
      EXPECT_EQ(out[4 * g + 3], tx) << g;
    }
  }
}

// in[i] with i = %tid.x * stride + offset (signed), out[%tid.x] (unsigned index): both become accesses that scale
// the 32-bit index themselves (findScaledIndices), the mul.wide and add.s64 not emitted.
const char* kScaledGather = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry gather(.param .u64 in, .param .u64 out, .param .u32 stride, .param .u32 offset)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [stride];
  ld.param.u32 %r2, [offset];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r3, %r1, %r2;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, 0f3F800000;
  mul.wide.u32 %rd7, %r3, 4;
  add.s64 %rd8, %rd4, %rd7;
  st.global.f32 [%rd8], %f2;
  ret;
}
)";

TEST(PtxExec, ScaledIndexAccesses) {
  Module& mod = loadText("gather", kScaledGather);
  std::vector<float> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i);
  float* buf = arena().upload(data);
  float* out = arena().alloc<float>(64);
  auto run = [&](const float* in, uint32_t threads, int32_t stride, int32_t offset) {
    Params p(kernels(*mod.prog)[0]);
    p.arg(in).arg(out).arg(uint32_t(stride)).arg(uint32_t(offset));
    return runText(mod, Dim3{1}, Dim3{threads}, p);
  };
  struct Case {
    int64_t shift;  // in = buf + shift
    uint32_t threads;
    int32_t stride, offset;
  } cases[] = {{0, 64, 1, 0},      // consecutive
               {8, 64, 1, -5},     // negative indices
               {0, 64, 3, 2},      // strided: the layout path
               {0, 40, 1, 7},      // a partial warp: the per-lane path
               {512, 64, -2, 0}};  // descending
  for (const Case& c : cases) {
    const float* in = buf + c.shift;
    auto ok = run(in, c.threads, c.stride, c.offset);
    ASSERT_TRUE(ok.ok()) << ok.fault.message;
    for (uint32_t t = 0; t < c.threads; ++t)
      EXPECT_EQ(out[t], float(c.shift + int64_t(t) * c.stride + c.offset) + 1.0f) << t << " stride " << c.stride;
  }
  // one past the end: the fault names the first lane out of bounds and its address
  auto r = run(buf, 64, 1, 1024 - 40);
  ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 40u);
  EXPECT_EQ(r.fault.address, reinterpret_cast<uint64_t>(buf + 1024));
  // indices that wrap past INT32_MAX within a warp are not consecutive: lane 9 of the second warp reads
  // in + 4 * INT32_MIN
  const int32_t high = INT32_MAX - 40;
  const float* shifted = reinterpret_cast<const float*>(reinterpret_cast<uint64_t>(buf) - 4 * uint64_t(int64_t(high)));
  auto w = run(shifted, 64, 1, high);
  ASSERT_EQ(w.fault.kind, FaultKind::IllegalAddress) << w.fault.message;
  EXPECT_EQ(w.fault.thread.x, 41u);
  EXPECT_EQ(w.fault.address, reinterpret_cast<uint64_t>(shifted) + 4 * uint64_t(int64_t(INT32_MIN)));
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], float(t) + 1.0f) << t;
}

// Half-warps that are each 16 consecutive elements, rows of a 2-D tile: out[row * pitch + col] = in[same] + tid
// with col = tid % 16, row = tid / 16. A pitch of 8 makes the halves overlap: lane order decides (higher lanes win).
// Scaled: both accesses scale the index themselves. Plain: the value is loaded twice through %rd4 (read twice, so
// its add stays) and the store is base + offset (%rd3 is read by an add that stays, so the mul stays): out = 2 *
// in + tid.
std::string halfRowsText(bool plain) {
  std::string load = plain ? "  ld.global.u32 %r6, [%rd4];\n  ld.global.u32 %r8, [%rd4];\n  add.s32 %r9, %r6, %r8;\n"
                           : "  ld.global.u32 %r9, [%rd4];\n";
  return R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry rows(.param .u64 in, .param .u64 out, .param .u32 pitch)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [pitch];
  mov.u32 %r2, %tid.x;
  and.b32 %r3, %r2, 15;
  shr.u32 %r4, %r2, 4;
  mad.lo.s32 %r5, %r4, %r1, %r3;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
)" + load +
         R"(  add.s32 %r7, %r9, %r2;
  st.global.u32 [%rd5], %r7;
  ret;
}
)";
}

class HalfWarps : public ::testing::TestWithParam<bool> {};

TEST_P(HalfWarps, ConsecutiveRuns) {
  const bool plain = GetParam();
  Module& mod = loadText(plain ? "rowsPlain" : "rows", halfRowsText(plain));
  std::vector<uint32_t> data(1024);
  for (uint32_t i = 0; i < data.size(); ++i) data[i] = i * 1000;
  uint32_t* in = arena().upload(data);
  for (uint32_t pitch : {16u, 40u, 8u, 0u}) {
    uint32_t* out = arena().alloc<uint32_t>(1024);
    std::vector<int64_t> expect(1024, -1);
    for (uint32_t t = 0; t < 64; ++t) {
      uint32_t e = (t / 16) * pitch + t % 16;
      expect[e] = int64_t(e) * 1000 * (plain ? 2 : 1) + t;  // in lane order: the last writer wins
    }
    Params p(kernels(*mod.prog)[0]);
    p.arg(in).arg(out).arg(pitch);
    EXPECT_OK(runText(mod, Dim3{1}, Dim3{64}, p));
    for (uint32_t e = 0; e < 1024; ++e)
      if (expect[e] >= 0) {
        EXPECT_EQ(out[e], uint32_t(expect[e])) << "pitch " << pitch << " element " << e;
      }
  }
  // the second half's row past the end of the allocation: the fault names lane 16 and its address
  Params p(kernels(*mod.prog)[0]);
  uint32_t* out = arena().alloc<uint32_t>(1024);
  p.arg(in).arg(out).arg(1024u);
  auto r = runText(mod, Dim3{1}, Dim3{32}, p);
  ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 16u);
  EXPECT_EQ(r.fault.address, reinterpret_cast<uint64_t>(in + 1024));
}
INSTANTIATE_TEST_SUITE_P(PtxExec, HalfWarps, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "PlainAndSum" : "Scaled"; });

}  // namespace
