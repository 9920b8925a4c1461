// Interpreter vs native C++: every benchmark runs the PTX kernel in the interpreter (the timed loop) and the same
// algorithm compiled natively for this CPU, and reports native_ms and ratio = interpreter time / native time.
// Ratios use one host thread on both sides; BM_Scaling measures 1..N threads; BM_LaunchLatency an empty launch.
#include "harness.h"

#include <ptx/native.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <ctime>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena(size_t(1) << 30);
  return *a;
}

std::shared_ptr<const Program> program() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/bench.ptx"));
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return p;
}

// The tensor-core kernels (kernels/matrix.cu).
std::shared_ptr<const Program> matrixProgram() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/matrix.ptx"));
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return p;
}

const KernelInfo& info(const char* name) { return kernels(*program())[size_t(findKernel(*program(), name))]; }
const KernelInfo& matrixInfo(const char* name) {
  return kernels(*matrixProgram())[size_t(findKernel(*matrixProgram(), name))];
}

LaunchResult run(const Program& prog, const char* name, Dim3 grid, Dim3 block, const Params& p, uint32_t threads = 1);
LaunchResult run(const char* name, Dim3 grid, Dim3 block, const Params& p, uint32_t threads = 1) {
  return run(*program(), name, grid, block, p, threads);
}

LaunchResult run(const Program& prog, const char* name, Dim3 grid, Dim3 block, const Params& p, uint32_t threads) {
  LaunchParams lp;
  lp.grid = grid;
  lp.block = block;
  lp.params = p.data();
  lp.paramBytes = p.size();
  lp.memory = &arena();
  lp.config.threads = threads;
  // PTX_BENCH_TIMEOUT_MS: run under the kernel watchdog, to measure what it costs (nothing per instruction).
  static const uint64_t timeoutMs =
      getenv("PTX_BENCH_TIMEOUT_MS") ? strtoull(getenv("PTX_BENCH_TIMEOUT_MS"), nullptr, 10) : 0;
  lp.config.timeoutMs = timeoutMs;
  return launch(prog, findKernel(prog, name), lp);
}

// Single-threaded comparisons use the calling thread's CPU time, which other processes on a busy machine do not
// inflate; multi-threaded runs use wall time.
double threadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
double seconds(const std::function<void()>& f) {
  double t0 = threadCpuNow();
  f();
  return threadCpuNow() - t0;
}
double wallSeconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best of a few runs of the native version.
double nativeSeconds(const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) best = std::min(best, seconds(f));
  return best;
}

// Runs the interpreter in the benchmark loop and reports the ratio to the native time.
// With the native tier on (--native), the first launch compiles the kernel: its compile time is reported apart.
void measure(benchmark::State& state, const std::function<void()>& interp, double native) {
  double best = 1e30;
  if (nativeTier()) interp();  // compiles, when no launch before did; not one of the timed runs
  for (auto _ : state) {
    double t = seconds(interp);
    best = std::min(best, t);
    state.SetIterationTime(t);
  }
  state.counters["native_ms"] = native * 1e3;
  state.counters["interp_ms"] = best * 1e3;
  state.counters["ratio"] = best / native;
  // the kernel's compile (its first launch, in this benchmark or just before it): wall time
  if (nativeTier()) state.counters["compile_ms"] = double(nativeTierStats().lastCompileNs) / 1e6;
}

void check(const LaunchResult& r, benchmark::State& state) {
  if (!r.ok()) state.SkipWithError(r.fault.message.c_str());
}

// ---- native versions (same algorithms, CTA structure flattened into loops) ------------------------------------
// Compiled for the best ISA of this CPU (x86-64-v3 clone: AVX2+FMA when available), like the interpreter's lane loops.
#if defined(__x86_64__)
#define NATIVE __attribute__((noinline, target_clones("arch=x86-64-v3", "default")))
#else
#define NATIVE __attribute__((noinline))
#endif

NATIVE void nativeVadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

NATIVE void nativeFma(float* out, int n, int iters) {
  for (int i = 0; i < n; ++i) {
    float x = float(i) * 0.001f, y = 1.0001f, z = 0.5f;
    for (int k = 0; k < iters; ++k) {
      x = std::fma(x, y, z);
      z = std::fma(z, y, x);
    }
    out[i] = x + z;
  }
}

NATIVE void nativeReduce(const float* in, float* out, int blocks) {
  for (int b = 0; b < blocks; ++b) {
    float s[256];
    for (int t = 0; t < 256; ++t) s[t] = in[b * 256 + t];
    for (int k = 128; k > 0; k >>= 1)
      for (int t = 0; t < k; ++t) s[t] += s[t + k];
    out[b] = s[0];
  }
}

NATIVE void nativeMatmul(const float* A, const float* B, float* C, int n) {
  for (int by = 0; by < n / 16; ++by)
    for (int bx = 0; bx < n / 16; ++bx) {
      float acc[16][16] = {};
      float As[16][16], Bs[16][16];
      for (int t = 0; t < n / 16; ++t) {
        for (int ty = 0; ty < 16; ++ty)
          for (int tx = 0; tx < 16; ++tx) {
            As[ty][tx] = A[(by * 16 + ty) * n + t * 16 + tx];
            Bs[ty][tx] = B[(t * 16 + ty) * n + bx * 16 + tx];
          }
        for (int ty = 0; ty < 16; ++ty)
          for (int tx = 0; tx < 16; ++tx)
            for (int k = 0; k < 16; ++k) acc[ty][tx] = std::fma(As[ty][k], Bs[k][tx], acc[ty][tx]);
      }
      for (int ty = 0; ty < 16; ++ty)
        for (int tx = 0; tx < 16; ++tx) C[(by * 16 + ty) * n + bx * 16 + tx] = acc[ty][tx];
    }
}

// What one warp's mma.sync.m16n8k16 computes (16x8 outputs, 16 products each), iters times, in f32.
// The f32 multiply-adds of an m16n8kK mma loop: A 16 x K, B K x 8 (K = 16 for mma.m16n8k16, 64 for the NVFP4 form).
template <int K> NATIVE void nativeMmaLoop(const float* a, const float* b, float* out, int warps, int iters) {
  for (int w = 0; w < warps; ++w) {
    float c[16][8] = {};
    for (int i = 0; i < iters; ++i)
      for (int r = 0; r < 16; ++r)
        for (int n = 0; n < 8; ++n) {
          float acc = c[r][n];
          for (int k = 0; k < K; ++k) acc = std::fma(a[r * K + k], b[k * 8 + n], acc);
          c[r][n] = acc;
        }
    out[w] = c[0][0] + c[15][7];
  }
}

NATIVE void nativeWgmmaLoop(const float* __restrict a, const float* __restrict b, float* out, int groups, int iters) {
  for (int g = 0; g < groups; ++g) {
    alignas(64) float c[64][128] = {};
    for (int i = 0; i < iters; ++i)
      for (int r = 0; r < 64; ++r)
        for (int k = 0; k < 16; ++k) {
          const float x = a[r * 16 + k];
          for (int n = 0; n < 128; ++n) c[r][n] = std::fma(x, b[k * 128 + n], c[r][n]);
        }
    out[g] = c[0][0] + c[63][127];
  }
}

NATIVE void nativeCollatz(const unsigned* in, unsigned* steps, int n) {
  for (int i = 0; i < n; ++i) {
    unsigned long long x = in[i];
    unsigned s = 0;
    while (x != 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++s;
    }
    steps[i] = s;
  }
}

// The optionprices kernel's formula with the host's libm (what a CPU port of such code would call).
NATIVE void nativeOptionPrices(const float* spot, const float* strike, const float* years, float* call, float rate,
                               float vol, int n) {
  auto normalCdf = [](float d) {
    const float k = 1.0f / (1.0f + 0.2316419f * std::fabs(d));
    const float poly =
        k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
    const float tail = 0.39894228f * std::exp(-0.5f * d * d) * poly;
    return d > 0 ? 1.0f - tail : tail;
  };
  for (int i = 0; i < n; ++i) {
    const float s = spot[i], x = strike[i], t = years[i], rootT = std::sqrt(t);
    const float d1 = (std::log(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * rootT), d2 = d1 - vol * rootT;
    call[i] = s * normalCdf(d1) - x * std::exp(-rate * t) * normalCdf(d2);
  }
}

NATIVE void nativeHistogram(const unsigned char* in, unsigned* bins, int n) {
  for (int i = 0; i < n; ++i) std::atomic_ref<unsigned>(bins[in[i]]).fetch_add(1, std::memory_order_relaxed);
}

// ---- benchmarks ---------------------------------------------------------------------------------------------------

void BM_VectorAdd(benchmark::State& state) {
  // VADD_N: another element count (262144: the arrays fit in L3, which separates memory from dispatch costs)
  const int n = getenv("VADD_N") ? atoi(getenv("VADD_N")) : 1 << 22;
  const uint32_t nb = uint32_t(n / 256);
  float* a = arena().alloc<float>(n);
  float* b = arena().alloc<float>(n);
  float* c = arena().alloc<float>(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 1.0f;
  }
  double native = nativeSeconds([&] { nativeVadd(a, b, c, n); });
  Params p(info("vadd"));
  p.arg(a).arg(b).arg(c).arg(n);
  LaunchResult r;
  measure(
      state, [&] { r = run("vadd", Dim3{nb}, Dim3{256}, p); }, native);
  check(r, state);
}

void BM_FmaLoop(benchmark::State& state) {
  const int n = 1 << 16, iters = 256;
  float* out = arena().alloc<float>(n);
  double native = nativeSeconds([&] { nativeFma(out, n, iters); });
  Params p(info("fmaloop"));
  p.arg(out).arg(iters);
  LaunchResult r;
  measure(
      state, [&] { r = run("fmaloop", Dim3{n / 256}, Dim3{256}, p); }, native);
  check(r, state);
}

void BM_SharedReduction(benchmark::State& state) {
  const int blocks = 8192;
  float* in = arena().alloc<float>(blocks * 256);
  float* out = arena().alloc<float>(blocks);
  for (int i = 0; i < blocks * 256; ++i) in[i] = float(i % 13);
  double native = nativeSeconds([&] { nativeReduce(in, out, blocks); });
  Params p(info("reduce"));
  p.arg(in).arg(out);
  LaunchResult r;
  measure(
      state, [&] { r = run("reduce", Dim3{blocks}, Dim3{256}, p); }, native);
  check(r, state);
}

void BM_TiledMatmul(benchmark::State& state) {
  const int n = 256;
  float* A = arena().alloc<float>(n * n);
  float* B = arena().alloc<float>(n * n);
  float* C = arena().alloc<float>(n * n);
  for (int i = 0; i < n * n; ++i) {
    A[i] = float(i % 7);
    B[i] = float(i % 5);
  }
  double native = nativeSeconds([&] { nativeMatmul(A, B, C, n); });
  Params p(info("matmul"));
  p.arg(A).arg(B).arg(C).arg(n);
  LaunchResult r;
  measure(
      state,
      [&] {
        r = run("matmul", Dim3{n / 16, n / 16}, Dim3{16, 16}, p);
      },
      native);
  check(r, state);
}

// Tensor cores: a loop of mma.sync.m16n8k16 (f16 x f16 + f32) against the same multiply-adds in native f32 code.
void BM_MmaLoop(benchmark::State& state) {
  const int warps = 256, iters = 64;
  uint32_t* a = arena().alloc<uint32_t>(32 * 4);
  uint32_t* b = arena().alloc<uint32_t>(32 * 2);
  float* out = arena().alloc<float>(warps * 32 * 4);
  for (int i = 0; i < 32 * 4; ++i) a[i] = 0x3c003c00u;  // pairs of 1.0
  for (int i = 0; i < 32 * 2; ++i) b[i] = 0x38003800u;  // pairs of 0.5
  std::vector<float> fa(16 * 16, 1.0f), fb(16 * 8, 0.5f), fout(warps);
  double native = nativeSeconds([&] { nativeMmaLoop<16>(fa.data(), fb.data(), fout.data(), warps, iters); });
  Params p(matrixInfo("mmaloop"));
  p.arg(a).arg(b).arg(out).arg(iters);
  LaunchResult r;
  measure(
      state, [&] { r = run(*matrixProgram(), "mmaloop", Dim3{uint32_t(warps / 4)}, Dim3{128}, p); }, native);
  check(r, state);
}

// sm_120's block-scaled mma (NVFP4: .kind::mxf4nvf4, e2m1 operands, four ue4m3 factors per row and column), a loop of
// m16n8k64 per warp accumulating into its own result, against the same multiply-adds (with the factors applied) in
// native f32 code.
const char* const kKindMmaLoop = R"(.version 9.0
.target sm_121a
.address_size 64
.visible .entry kindloop(.param .u64 pin, .param .u64 pout, .param .u32 iters) {
  .reg .pred %p;
  .reg .b32 %r<16>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r10, [iters];
  mov.u32 %r0, %laneid;
  mul.wide.u32 %rd3, %r0, 32;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];
  ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd4+16];
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
  mov.f32 %f4, 0f00000000;
LOOP:
  mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}, %r7, {0, 0}, %r8, {0, 0};
  sub.u32 %r10, %r10, 1;
  setp.ne.u32 %p, %r10, 0;
  @%p bra LOOP;
  mov.u32 %r11, %ctaid.x;
  mov.u32 %r12, %tid.x;
  mad.lo.u32 %r13, %r11, 128, %r12;
  mul.wide.u32 %rd3, %r13, 16;
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};
  ret;
}
)";

void BM_KindMmaLoop(benchmark::State& state) {
  const int warps = 256, iters = 64;
  static std::shared_ptr<const Program> prog = [] {
    auto r = compile(kKindMmaLoop);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  uint32_t* in = arena().alloc<uint32_t>(32 * 8);
  float* out = arena().alloc<float>(warps * 32 * 4);
  for (int l = 0; l < 32; ++l) {
    for (int q = 0; q < 6; ++q) in[l * 8 + q] = 0x22222222u;  // e2m1 1.0 everywhere
    in[l * 8 + 6] = in[l * 8 + 7] = 0x38383838u;              // ue4m3 1.0
  }
  std::vector<float> fa(16 * 64, 1.0f), fb(64 * 8, 1.0f), fout(warps);
  double native = nativeSeconds([&] { nativeMmaLoop<64>(fa.data(), fb.data(), fout.data(), warps, iters); });
  Params p(kernels(*prog)[0]);
  p.arg(in).arg(out).arg(iters);
  LaunchResult r;
  measure(
      state, [&] { r = run(*prog, "kindloop", Dim3{uint32_t(warps / 4)}, Dim3{128}, p); }, native);
  check(r, state);
}

// What running a grid costs without its work: a kernel that only returns, launched as BM_VectorAdd launches (2^22
// threads in CTAs of 256), against the native vector add. Its time is the floor of vector add's in the same tier:
// CTA and warp set-up and scheduling (ratio: that floor's share of the native vector add; per_warp_ns).
const char* const kEmptyGrid = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry empty(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) {
  ret;
}
)";

void BM_GridOverhead(benchmark::State& state) {
  static std::shared_ptr<const Program> prog = [] {
    auto r = compile(kEmptyGrid);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  const int n = getenv("VADD_N") ? atoi(getenv("VADD_N")) : 1 << 22;
  float* a = arena().alloc<float>(n);
  float* b = arena().alloc<float>(n);
  float* c = arena().alloc<float>(n);
  for (int i = 0; i < n; ++i) a[i] = float(i), b[i] = 1.0f;
  double native = nativeSeconds([&] { nativeVadd(a, b, c, n); });
  Params p(kernels(*prog)[0]);
  p.arg(a).arg(b).arg(c).arg(n);
  LaunchResult r;
  measure(
      state, [&] { r = run(*prog, "empty", Dim3{uint32_t(n / 256)}, Dim3{256}, p); }, native);
  state.counters["per_warp_ns"] = state.counters["interp_ms"] * 1e6 / double(n / 32);
  check(r, state);
}

// A 256x256 GEMM with wmma (f16 inputs, f32 accumulators) against the native tiled f32 GEMM of BM_TiledMatmul.
void BM_WmmaGemm(benchmark::State& state) {
  const int n = 256;
  uint16_t* A = arena().alloc<uint16_t>(n * n);
  uint16_t* B = arena().alloc<uint16_t>(n * n);
  float* C = arena().alloc<float>(n * n);
  for (int i = 0; i < n * n; ++i) {
    A[i] = uint16_t(0x3c00 + (i % 7));
    B[i] = uint16_t(0x3800 + (i % 5));
  }
  std::vector<float> fa(n * n, 1.0f), fb(n * n, 0.5f), fc(n * n);
  double native = nativeSeconds([&] { nativeMatmul(fa.data(), fb.data(), fc.data(), n); });
  Params p(matrixInfo("wmmagemm"));
  p.arg(A).arg(B).arg(C).arg(n);
  LaunchResult r;
  measure(
      state,
      [&] {
        r = run(*matrixProgram(), "wmmagemm", Dim3{n / 32, n / 32}, Dim3{128}, p);
      },
      native);
  check(r, state);
}

// Hopper: a loop of wgmma.mma_async m64n128k16 (f16 x f16 + f32, A and B in shared memory through 128-byte swizzled
// descriptors) on one warpgroup per CTA, against the same multiply-adds in native f32 code.
const char* kWgmmaLoop = R"(
.version 8.3
.target sm_90a
.address_size 64
.visible .entry wgmmaloop(.param .u64 out, .param .u32 n)
{
  .reg .f32 %f<64>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  .shared .align 1024 .b8 sa[8192];
  .shared .align 1024 .b8 sb[16384];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.b32 %r5, 0x3c003c00;
  mov.u32 %r3, sa;
  add.u32 %r4, %r3, %r2;
  st.shared.v4.b32 [%r4], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+2048], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+4096], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+6144], {%r5, %r5, %r5, %r5};
  mov.b32 %r5, 0x38003800;
  mov.u32 %r3, sb;
  add.u32 %r4, %r3, %r2;
  st.shared.v4.b32 [%r4], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+2048], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+4096], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+6144], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+8192], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+10240], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+12288], {%r5, %r5, %r5, %r5};
  st.shared.v4.b32 [%r4+14336], {%r5, %r5, %r5, %r5};
  bar.sync 0;
  mov.u32 %r3, sa;
  cvt.u64.u32 %rd1, %r3;
  shr.u64 %rd1, %rd1, 4;
  or.b64 %rd1, %rd1, 0x4000004000010000;
  mov.u32 %r3, sb;
  cvt.u64.u32 %rd2, %r3;
  shr.u64 %rd2, %rd2, 4;
  or.b64 %rd2, %rd2, 0x4000004000010000;
  ld.param.u32 %r6, [n];
  mov.u32 %r7, 0;
)";

std::shared_ptr<const Program> wgmmaProgram() {
  static std::shared_ptr<const Program> p = [] {
    std::string text = kWgmmaLoop, d = "{";
    for (int i = 0; i < 64; ++i) {
      text += "  mov.f32 %f" + std::to_string(i) + ", 0f00000000;\n";
      d += (i ? ", %f" : "%f") + std::to_string(i);
    }
    text += "LOOP:\n  wgmma.fence.sync.aligned;\n  wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " + d +
            "}, %rd1, %rd2, 1, 1, 1, 0, 0;\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n"
            "  add.u32 %r7, %r7, 1;\n  setp.lt.u32 %p1, %r7, %r6;\n  @%p1 bra LOOP;\n"
            "  ld.param.u64 %rd3, [out];\n  mov.u32 %r3, %ctaid.x;\n  mad.lo.u32 %r3, %r3, 128, %r1;\n"
            "  mul.wide.u32 %rd4, %r3, 4;\n  add.s64 %rd3, %rd3, %rd4;\n  st.global.f32 [%rd3], %f0;\n  ret;\n}\n";
    auto r = compile(text);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return p;
}

void BM_WgmmaLoop(benchmark::State& state) {
  const int groups = 4, iters = 32;
  float* out = arena().alloc<float>(groups * 128);
  std::vector<float> fa(64 * 16, 1.0f), fb(16 * 128, 0.5f), fout(groups);
  double native = nativeSeconds([&] { nativeWgmmaLoop(fa.data(), fb.data(), fout.data(), groups, iters); });
  const KernelInfo& k = kernels(*wgmmaProgram())[0];
  Params p(k);
  p.arg(out).arg(uint32_t(iters));
  LaunchResult r;
  measure(
      state, [&] { r = run(*wgmmaProgram(), "wgmmaloop", Dim3{uint32_t(groups)}, Dim3{128}, p); }, native);
  check(r, state);
  if (r.ok() && out[0] != float(8 * iters)) state.SkipWithError("wrong wgmma result");
}

void BM_DivergentCollatz(benchmark::State& state) {
  const int n = 1 << 16;
  unsigned* in = arena().alloc<unsigned>(n);
  unsigned* steps = arena().alloc<unsigned>(n);
  for (int i = 0; i < n; ++i) in[i] = unsigned(i + 1);
  double native = nativeSeconds([&] { nativeCollatz(in, steps, n); });
  Params p(info("collatz"));
  p.arg(in).arg(steps).arg(n);
  LaunchResult r;
  measure(
      state, [&] { r = run("collatz", Dim3{n / 256}, Dim3{256}, p); }, native);
  check(r, state);
}

// Special-function-heavy code with random operands (Black-Scholes, as NVIDIA's option-pricing samples compute it):
// ex2/rcp/rsqrt run the H100's measured tables (exec/mufu.cpp), lg2 the host's function.
void BM_SpecialFunctions(benchmark::State& state) {
  const int n = 1 << 20;
  float* spot = arena().alloc<float>(n);
  float* strike = arena().alloc<float>(n);
  float* years = arena().alloc<float>(n);
  float* call = arena().alloc<float>(n);
  uint32_t seed = 12345;
  auto uniform = [&](float lo, float hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * float(seed >> 8) * (1.0f / 16777216.0f);
  };
  for (int i = 0; i < n; ++i) {
    spot[i] = uniform(5.0f, 30.0f);
    strike[i] = uniform(1.0f, 100.0f);
    years[i] = uniform(0.25f, 10.0f);
  }
  double native = nativeSeconds([&] { nativeOptionPrices(spot, strike, years, call, 0.02f, 0.30f, n); });
  Params p(info("optionprices"));
  p.arg(spot).arg(strike).arg(years).arg(call).arg(0.02f).arg(0.30f).arg(n);
  LaunchResult r;
  measure(
      state, [&] { r = run("optionprices", Dim3{n / 128}, Dim3{128}, p); }, native);
  check(r, state);
}

// The histogram kernel on 4M input bytes that `fill` writes, against nativeHistogram on the same bytes.
template <class Fill> void measureHistogram(benchmark::State& state, Fill fill) {
  const int n = 1 << 22;
  unsigned char* in = arena().alloc<unsigned char>(n);
  unsigned* bins = arena().alloc<unsigned>(256);
  fill(in, n);
  double native = nativeSeconds([&] { nativeHistogram(in, bins, n); });
  Params p(info("histogram"));
  p.arg(in).arg(bins).arg(n);
  LaunchResult r;
  measure(
      state, [&] { r = run("histogram", Dim3{256}, Dim3{256}, p); }, native);
  check(r, state);
}

void BM_AtomicHistogram(benchmark::State& state) {
  measureHistogram(state, [](unsigned char* in, int n) {
    for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned char>((unsigned(i) * 2654435761u) >> 24);
  });
}

// The same kernel on input whose bytes are all equal: every lane of a warp adds to one counter (the lanes combine
// into one host atomic: warp-aggregated-atomics), against native code adding 1 per element to one std::atomic.
void BM_AtomicCounter(benchmark::State& state) {
  measureHistogram(state, [](unsigned char* in, int n) { std::fill(in, in + n, static_cast<unsigned char>(7)); });
}

// The global-atomic histogram on 1..N host threads (wall time: needs an idle machine) against native code on as many
// std::threads sharing the std::atomic bins; ratio = interpreter / native with the same number of threads.
void BM_AtomicHistogramThreads(benchmark::State& state) {
  const uint32_t threads = uint32_t(state.range(0));
  const int n = 1 << 22;
  unsigned char* in = arena().alloc<unsigned char>(n);
  unsigned* bins = arena().alloc<unsigned>(256);
  for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned char>((unsigned(i) * 2654435761u) >> 24);
  double native = 1e30;
  for (int k = 0; k < 5; ++k)
    native = std::min(native, wallSeconds([&] {
                        std::vector<std::thread> pool;
                        const int part = n / int(threads);
                        for (uint32_t t = 0; t < threads; ++t)
                          pool.emplace_back([&, t] { nativeHistogram(in + t * part, bins, part); });
                        for (auto& th : pool) th.join();
                      }));
  Params p(info("histogram"));
  p.arg(in).arg(bins).arg(n);
  LaunchResult r;
  double best = 1e30;
  for (auto _ : state) {
    double t = wallSeconds([&] { r = run("histogram", Dim3{256}, Dim3{256}, p, threads); });
    best = std::min(best, t);
    state.SetIterationTime(t);
  }
  state.counters["native_ms"] = native * 1e3;
  state.counters["interp_ms"] = best * 1e3;
  state.counters["ratio"] = best / native;
  check(r, state);
}

// Interpreter scaling: the same collatz work on 1..N host threads. Wall time is what a user sees but needs an idle
// machine; CPU-time accounting shows the parallel speedup on a busy one: with 2 threads the critical path is the
// busier of the two threads (launching thread = its own CPU time, helper = process CPU time minus that), so
// cpu_speedup = (process CPU time of the 1-thread run) / that critical path.
double processCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

void BM_Scaling(benchmark::State& state) {
  uint32_t threads = uint32_t(state.range(0));
  const int n = 1 << 16;
  unsigned* in = arena().alloc<unsigned>(n);
  unsigned* steps = arena().alloc<unsigned>(n);
  for (int i = 0; i < n; ++i) in[i] = unsigned(i + 1);
  Params p(info("collatz"));
  p.arg(in).arg(steps).arg(n);
  LaunchResult r;
  double oneThread = 1e30;
  for (int i = 0; i < 3; ++i) {
    double p0 = processCpuNow();
    r = run("collatz", Dim3{n / 256}, Dim3{256}, p, 1);
    oneThread = std::min(oneThread, processCpuNow() - p0);
  }
  double bestPath = 1e30, bestProcess = 1e30;
  for (auto _ : state) {
    double p0 = processCpuNow(), t0 = threadCpuNow();
    double t = wallSeconds([&] { r = run("collatz", Dim3{n / 256}, Dim3{256}, p, threads); });
    double caller = threadCpuNow() - t0, process = processCpuNow() - p0;
    bestPath = std::min(bestPath, std::max(caller, process - caller));
    bestProcess = std::min(bestProcess, process);
    state.SetIterationTime(t);
  }
  state.counters["cpu_ms"] = bestProcess * 1e3;
  if (threads <= 2) state.counters["cpu_speedup"] = oneThread / bestPath;
  check(r, state);
}

// Launch latency: an (almost) empty kernel of one warp, on the calling thread.
void BM_LaunchLatency(benchmark::State& state) {
  float* a = arena().alloc<float>(32);
  Params p(info("vadd"));
  p.arg(a).arg(a).arg(a).arg(0);
  LaunchResult r;
  for (auto _ : state) {
    r = run("vadd", Dim3{1}, Dim3{32}, p, 0);
    benchmark::DoNotOptimize(r);
  }
  check(r, state);
}

}  // namespace

BENCHMARK(BM_VectorAdd)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_GridOverhead)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_FmaLoop)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_SharedReduction)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_TiledMatmul)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_MmaLoop)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_KindMmaLoop)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_WmmaGemm)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_WgmmaLoop)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_DivergentCollatz)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_SpecialFunctions)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_AtomicHistogram)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_AtomicCounter)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
BENCHMARK(BM_AtomicHistogramThreads)->UseManualTime()->Unit(benchmark::kMillisecond)->DenseRange(1, 2, 1)->MinTime(0.3);
BENCHMARK(BM_Scaling)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->DenseRange(1, int(std::max(1u, std::thread::hardware_concurrency())), 1)
    ->MinTime(0.3);
BENCHMARK(BM_LaunchLatency)->Unit(benchmark::kMicrosecond);

// --native-compile-table: compiles every kernel of the test kernels' modules in the native tier (CUEMU_NATIVE_OPT:
// the LLVM level, default 1; CUEMU_NATIVE_INLINE_BUDGET) and prints each one's op count, the ops that call their
// handler because of the inline budget, the IR instructions before optimisation and the compile time (wall time,
// the first launch's compile), with a launch that gives every parameter 0 (it may fault: only the compile is
// measured).
int nativeCompileTable() {
  if (!nativeTierUnavailable().empty()) {
    std::fprintf(stderr, "--native-compile-table: %s\n", nativeTierUnavailable().c_str());
    return 2;
  }
  setNativeTier(true);
  setNativeTierPolicy({1, 0, false});
  ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 0);
  std::printf("%-12s %-40s %6s %6s %8s %10s\n", "module", "kernel", "ops", "budget", "IR", "compile ms");
  for (const char* file : {"bench.ptx", "basic.ptx", "sync.ptx", "cluster.ptx", "matrix.ptx"}) {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + file));
    if (!r.program) continue;
    const std::vector<KernelInfo>& all = kernels(*r.program);
    for (size_t k = 0; k < all.size(); ++k) {
      const NativeTierStats before = nativeTierStats();
      std::vector<uint8_t> params(std::max<size_t>(all[k].paramBytes, 1));
      LaunchParams lp;
      lp.grid = Dim3{1};
      lp.block = Dim3{32};
      lp.params = params.data();
      lp.paramBytes = all[k].paramBytes;
      lp.memory = &arena();
      std::vector<uint64_t> globals = ptxtest::allocateGlobals(*r.program, arena());
      lp.globalAddresses = globals.data();
      lp.config.timeoutMs = 2000;
      launch(*r.program, int(k), lp);
      const NativeTierStats after = nativeTierStats();
      if (after.kernelsCompiled == before.kernelsCompiled) continue;
      std::printf("%-12s %-40.40s %6llu %6llu %8llu %10.1f\n", file, all[k].name.c_str(),
                  (unsigned long long)(after.opsInlined + after.opsCalled - before.opsInlined - before.opsCalled),
                  (unsigned long long)(after.opsOverBudget - before.opsOverBudget),
                  (unsigned long long)after.lastInstructions, double(after.lastCompileNs) / 1e6);
    }
  }
  const NativeTierStats s = nativeTierStats();
  std::printf(
      "first compile's preparation (bitcode, symbols): %.1f ms; all compiles %.1f ms (%llu ops over the "
      "inline budget)\n",
      double(s.prepareNs) / 1e6, double(s.compileNs) / 1e6, (unsigned long long)s.opsOverBudget);
  return 0;
}

// CUEMU_REWRITES (as the driver reads it) restricts the fast paths every compile of the run may use, so that one
// binary measures what a fast path gains or costs (tools/bench/interp-ratios.sh passes it through).
int main(int argc, char** argv) {
  if (const char* spec = std::getenv("CUEMU_REWRITES")) {
    uint32_t mask = 0;
    std::string error;
    if (!parseRewrites(spec, mask, error)) {
      std::fprintf(stderr, "CUEMU_REWRITES: %s\n", error.c_str());
      return 2;
    }
    setDefaultRewrites(mask);
  }
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--native-compile-table") == 0) return nativeCompileTable();
  // --native (or CUEMU_NATIVE=1): the kernels run in the native tier (ptx/native.h); "interp_ms" is then its time
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--native") != 0) continue;
    if (!nativeTierUnavailable().empty()) {
      std::fprintf(stderr, "--native: %s\n", nativeTierUnavailable().c_str());
      return 2;
    }
    setNativeTier(true);
    setNativeTierPolicy({1, 0, false});  // compiled at the first launch, which measure() leaves out of the timing
    ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 0);  // compile_ms: the compile, not a load from the cache
    for (int k = i; k + 1 < argc; ++k) argv[k] = argv[k + 1];
    --argc;
    --i;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
