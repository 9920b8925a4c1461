// ptx.atomic, ptx.warp, ptx.barrier, ptx.control, ptx.memory: kernels from kernels/cu/ptx_ops.cu (nvcc PTX), each
// checked against results computed on the host.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "harness.h"

namespace {

class PtxKernelTest : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "ptx_ops.ptx"));
  }
  CUfunction Fn(const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, mod, name), CUDA_SUCCESS) << name;
    return f;
  }
  template <class T> CUdeviceptr Upload(const std::vector<T>& v) {
    CUdeviceptr p = 0;
    EXPECT_EQ(cuMemAlloc(&p, std::max<size_t>(v.size() * sizeof(T), 4)), CUDA_SUCCESS);
    if (!v.empty()) {
      EXPECT_EQ(cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T)), CUDA_SUCCESS);
    }
    owned.push_back(p);
    return p;
  }
  template <class T> CUdeviceptr Zeros(size_t n) { return Upload(std::vector<T>(n)); }
  template <class T> std::vector<T> Download(CUdeviceptr p, size_t n) {
    std::vector<T> v(n);
    EXPECT_EQ(cuMemcpyDtoH(v.data(), p, n * sizeof(T)), CUDA_SUCCESS);
    return v;
  }
  CUresult Run(const char* name, unsigned grid, unsigned block, std::vector<void*> params, unsigned shared = 0) {
    CUfunction f = Fn(name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    CUresult r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, nullptr, params.data(), nullptr);
    if (r != CUDA_SUCCESS) return r;
    return cuCtxSynchronize();
  }
  void TearDown() override {
    for (auto p : owned) cuMemFree(p);
    ContextTest::TearDown();
  }
  CUmodule mod = nullptr;
  std::vector<CUdeviceptr> owned;
};

// ---- atomics -------------------------------------------------------------------------------------------------------

using ptx_atomic = PtxKernelTest;

TEST_F(ptx_atomic, AddU32ManyThreads) {
  CUdeviceptr counter = Zeros<unsigned>(1);
  unsigned per = 10;
  CU_ASSERT_OK(Run("atomic_add_u32", 64, 256, {&counter, &per}));
  EXPECT_EQ(Download<unsigned>(counter, 1)[0], 64u * 256u * 10u);
}

TEST_F(ptx_atomic, AddU64) {
  CUdeviceptr counter = Upload(std::vector<unsigned long long>{0xffffffff00000000ull});
  unsigned long long value = 0x100000001ull;
  CU_ASSERT_OK(Run("atomic_add_u64", 8, 128, {&counter, &value}));
  EXPECT_EQ(Download<unsigned long long>(counter, 1)[0], 0xffffffff00000000ull + 1024 * 0x100000001ull);
}

TEST_F(ptx_atomic, AddF32ExactSum) {
  CUdeviceptr sum = Zeros<float>(1);
  CU_ASSERT_OK(Run("atomic_add_f32", 16, 256, {&sum}));
  EXPECT_EQ(Download<float>(sum, 1)[0], 2048.0f) << "0.5 * 4096, exact in any order";
}

TEST_F(ptx_atomic, AddF64ExactSum) {
  CUdeviceptr sum = Zeros<double>(1);
  CU_ASSERT_OK(Run("atomic_add_f64", 16, 256, {&sum}));
  EXPECT_EQ(Download<double>(sum, 1)[0], 1024.0);
}

TEST_F(ptx_atomic, MinMaxSigned) {
  CUdeviceptr mn = Upload(std::vector<int>{1 << 30}), mx = Upload(std::vector<int>{-(1 << 30)});
  CU_ASSERT_OK(Run("atomic_minmax_s32", 4, 250, {&mn, &mx}));
  int wantMin = 1 << 30, wantMax = -(1 << 30);
  for (int id = 0; id < 1000; ++id) {
    int v = (id * 7919) % 1000 - 500;
    wantMin = std::min(wantMin, v);
    wantMax = std::max(wantMax, v);
  }
  EXPECT_EQ(Download<int>(mn, 1)[0], wantMin);
  EXPECT_EQ(Download<int>(mx, 1)[0], wantMax);
}

TEST_F(ptx_atomic, MinMaxUnsigned) {
  CUdeviceptr mn = Upload(std::vector<unsigned>{0xffffffffu}), mx = Zeros<unsigned>(1);
  CU_ASSERT_OK(Run("atomic_minmax_u32", 4, 256, {&mn, &mx}));
  unsigned wantMin = 0xffffffffu, wantMax = 0;
  for (unsigned id = 0; id < 1024; ++id) {
    unsigned v = (id * 2654435761u) ^ 0x5bd1e995u;
    wantMin = std::min(wantMin, v);
    wantMax = std::max(wantMax, v);
  }
  EXPECT_EQ(Download<unsigned>(mn, 1)[0], wantMin);
  EXPECT_EQ(Download<unsigned>(mx, 1)[0], wantMax);
}

TEST_F(ptx_atomic, Bitwise) {
  CUdeviceptr a = Upload(std::vector<unsigned>{0xffffffffu}), o = Zeros<unsigned>(1), x = Zeros<unsigned>(1);
  CU_ASSERT_OK(Run("atomic_bitwise", 2, 100, {&a, &o, &x}));
  unsigned wa = 0xffffffffu, wo = 0, wx = 0;
  for (unsigned id = 0; id < 200; ++id) {
    wa &= ~(1u << (id % 32)) | 0x80000000u;
    wo |= 1u << (id % 31);
    wx ^= id;
  }
  EXPECT_EQ(Download<unsigned>(a, 1)[0], wa);
  EXPECT_EQ(Download<unsigned>(o, 1)[0], wo);
  EXPECT_EQ(Download<unsigned>(x, 1)[0], wx);
}

TEST_F(ptx_atomic, ExchangeHandsOutEachValueOnce) {
  const unsigned threads = 512;
  CUdeviceptr slot = Zeros<unsigned>(1), seen = Zeros<unsigned>(threads + 1);
  CU_ASSERT_OK(Run("atomic_exch_unique", 2, 256, {&slot, &seen}));
  auto counts = Download<unsigned>(seen, threads + 1);
  unsigned last = Download<unsigned>(slot, 1)[0];
  ASSERT_GE(last, 1u);
  for (unsigned v = 0; v <= threads; ++v) EXPECT_EQ(counts[v], v == last ? 0u : 1u) << "value " << v;
}

TEST_F(ptx_atomic, CompareAndSwapTickets) {
  const unsigned threads = 256;
  CUdeviceptr next = Zeros<unsigned>(1), order = Zeros<unsigned>(threads);
  CU_ASSERT_OK(Run("atomic_cas_ticket", 2, 128, {&next, &order}));
  EXPECT_EQ(Download<unsigned>(next, 1)[0], threads);
  auto o = Download<unsigned>(order, threads);
  std::set<unsigned> ids(o.begin(), o.end());
  EXPECT_EQ(ids.size(), threads) << "every ticket taken by exactly one thread";
  EXPECT_EQ(*ids.begin(), 1u);
}

TEST_F(ptx_atomic, IncDecWrap) {
  CUdeviceptr inc = Zeros<unsigned>(1), dec = Zeros<unsigned>(1);
  unsigned limit = 9;
  CU_ASSERT_OK(Run("atomic_inc_dec", 1, 25, {&inc, &dec, &limit}));
  // inc: old >= limit ? 0 : old+1 ; dec: (old == 0 || old > limit) ? limit : old-1. Order does not matter for the end
  // value.
  unsigned i = 0, d = 0;
  for (int k = 0; k < 25; ++k) {
    i = i >= limit ? 0 : i + 1;
    d = (d == 0 || d > limit) ? limit : d - 1;
  }
  EXPECT_EQ(Download<unsigned>(inc, 1)[0], i);
  EXPECT_EQ(Download<unsigned>(dec, 1)[0], d);
}

TEST_F(ptx_atomic, SharedMemoryHistogram) {
  const int n = 10000;
  std::vector<unsigned> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned>(i * i + 3 * i);
  CUdeviceptr din = Upload(in), out = Zeros<unsigned>(16);
  int nn = n;
  CU_ASSERT_OK(Run("atomic_shared_histogram", 1, 256, {&din, &out, &nn}));
  std::vector<unsigned> want(16);
  for (auto v : in) want[v % 16]++;
  EXPECT_EQ(Download<unsigned>(out, 16), want);
}

// ---- warp collectives ------------------------------------------------------------------------------------------

using ptx_warp = PtxKernelTest;

struct ShflParams {
  int srcLane, delta;
};

class ptx_warp_Shuffle : public PtxKernelTest, public testing::WithParamInterface<ShflParams> {};

void PrintTo(const ShflParams& p, std::ostream* os) { *os << p.srcLane << "/" << p.delta; }

TEST_P(ptx_warp_Shuffle, IdxUpDownXor) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = 1000 + i * 7;
  CUdeviceptr din = Upload(in), idx = Zeros<int>(threads), up = Zeros<int>(threads), down = Zeros<int>(threads),
              bfly = Zeros<int>(threads);
  int src = GetParam().srcLane, delta = GetParam().delta;
  CU_ASSERT_OK(Run("warp_shfl", 1, threads, {&din, &idx, &up, &down, &bfly, &src, &delta}));
  auto vi = Download<int>(idx, threads), vu = Download<int>(up, threads), vd = Download<int>(down, threads),
       vb = Download<int>(bfly, threads);
  for (int t = 0; t < threads; ++t) {
    int warp = t / 32 * 32, lane = t % 32;
    EXPECT_EQ(vi[t], in[warp + (src % 32)]) << "idx lane " << t;
    EXPECT_EQ(vu[t], lane - delta >= 0 ? in[t - delta] : in[t]) << "up lane " << t;
    EXPECT_EQ(vd[t], lane + delta < 32 ? in[t + delta] : in[t]) << "down lane " << t;
    EXPECT_EQ(vb[t], in[warp + ((lane ^ delta) & 31)]) << "xor lane " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ptx_warp_Shuffle,
                         testing::Values(ShflParams{0, 1}, ShflParams{5, 2}, ShflParams{31, 16}, ShflParams{37, 31},
                                         ShflParams{17, 0}),
                         [](const testing::TestParamInfo<ShflParams>& i) {
                           return "src" + std::to_string(i.param.srcLane) + "_delta" + std::to_string(i.param.delta);
                         });

TEST_F(ptx_warp, ShuffleWidth) {
  for (int width : {2, 4, 8, 16, 32}) {
    std::vector<int> in(32);
    std::iota(in.begin(), in.end(), 100);
    CUdeviceptr din = Upload(in), out = Zeros<int>(32);
    CU_ASSERT_OK(Run("warp_shfl_width", 1, 32, {&din, &out, &width}));
    auto v = Download<int>(out, 32);
    for (int t = 0; t < 32; ++t) {
      int sub = t % width;
      EXPECT_EQ(v[t], sub + 1 < width ? in[t + 1] : in[t]) << "width " << width << " lane " << t;
    }
  }
}

TEST_F(ptx_warp, VoteBallotAnyAll) {
  const int threads = 128;
  std::vector<int> in(threads, 0);
  for (int t = 0; t < 32; ++t) in[t] = 1;              // warp 0: all
  for (int t = 32; t < 64; ++t) in[t] = (t % 3 == 0);  // warp 1: some
  for (int t = 96; t < 128; ++t) in[t] = (t == 127);   // warp 3: one; warp 2: none
  CUdeviceptr din = Upload(in), ballot = Zeros<unsigned>(4), any = Zeros<int>(4), all = Zeros<int>(4),
              active = Zeros<unsigned>(threads);
  CU_ASSERT_OK(Run("warp_vote", 1, threads, {&din, &ballot, &any, &all, &active}));
  auto b = Download<unsigned>(ballot, 4);
  auto a = Download<int>(any, 4), l = Download<int>(all, 4);
  auto act = Download<unsigned>(active, threads);
  for (int w = 0; w < 4; ++w) {
    unsigned want = 0;
    for (int lane = 0; lane < 32; ++lane)
      if (in[w * 32 + lane]) want |= 1u << lane;
    EXPECT_EQ(b[w], want) << "warp " << w;
    EXPECT_EQ(a[w] != 0, want != 0) << "warp " << w;
    EXPECT_EQ(l[w] != 0, want == 0xffffffffu) << "warp " << w;
  }
  for (int t = 0; t < threads; t += 3) {
    // Inside `if (t % 3 == 0)`: the mask holds this lane and only lanes that took the branch.
    unsigned lane = t % 32, branch = 0;
    for (int u = t / 32 * 32; u < t / 32 * 32 + 32; ++u)
      if (u % 3 == 0) branch |= 1u << (u % 32);
    EXPECT_TRUE(act[t] & (1u << lane)) << "lane " << t;
    EXPECT_EQ(act[t] & ~branch, 0u) << "lane " << t;
  }
}

TEST_F(ptx_warp, MatchAny) {
  std::vector<int> in(32);
  for (int t = 0; t < 32; ++t) in[t] = t % 5;
  CUdeviceptr din = Upload(in), out = Zeros<unsigned>(32);
  CU_ASSERT_OK(Run("warp_match_any", 1, 32, {&din, &out}));
  auto v = Download<unsigned>(out, 32);
  for (int t = 0; t < 32; ++t) {
    unsigned want = 0;
    for (int u = 0; u < 32; ++u)
      if (in[u] == in[t]) want |= 1u << u;
    EXPECT_EQ(v[t], want) << "lane " << t;
  }
}

TEST_F(ptx_warp, ReduceSum) {
  const int threads = 256;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = i * i - 50;
  CUdeviceptr din = Upload(in), out = Zeros<int>(threads / 32);
  CU_ASSERT_OK(Run("warp_reduce_sum", 1, threads, {&din, &out}));
  auto v = Download<int>(out, threads / 32);
  for (int w = 0; w < threads / 32; ++w)
    EXPECT_EQ(v[w], std::accumulate(in.begin() + w * 32, in.begin() + w * 32 + 32, 0)) << "warp " << w;
}

TEST_F(ptx_warp, DivergentBallotAndActiveMask) {
  CUdeviceptr out = Zeros<unsigned>(32);
  CU_ASSERT_OK(Run("warp_divergent_ballot", 1, 32, {&out}));
  auto v = Download<unsigned>(out, 32);
  for (int t = 0; t < 32; ++t) {
    unsigned want = t % 2 == 0 ? 0x11111111u : 0xaaaaaaaau;  // ballot of t%4==0 among even lanes / odd lanes' mask
    EXPECT_EQ(v[t], want) << "lane " << t;
  }
}

// ---- barriers --------------------------------------------------------------------------------------------------

using ptx_barrier = PtxKernelTest;

class ptx_barrier_BlockSum : public PtxKernelTest, public testing::WithParamInterface<int> {};

TEST_P(ptx_barrier_BlockSum, TreeReduction) {
  int block = GetParam(), grid = 3;
  std::vector<int> in(block * grid);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i % 97) - 13;
  CUdeviceptr din = Upload(in), out = Zeros<int>(grid);
  CU_ASSERT_OK(Run("barrier_block_sum", grid, block, {&din, &out}));
  auto v = Download<int>(out, grid);
  for (int b = 0; b < grid; ++b)
    EXPECT_EQ(v[b], std::accumulate(in.begin() + b * block, in.begin() + (b + 1) * block, 0)) << "block " << b;
}

INSTANTIATE_TEST_SUITE_P(All, ptx_barrier_BlockSum, testing::Values(32, 64, 128, 256, 512, 1024),
                         [](const testing::TestParamInfo<int>& i) { return "block" + std::to_string(i.param); });

TEST_F(ptx_barrier, CountAndOr) {
  for (int pattern = 0; pattern < 4; ++pattern) {
    std::vector<int> in(200);
    for (int t = 0; t < 200; ++t)
      in[t] = pattern == 0 ? 0 : pattern == 1 ? 1 : pattern == 2 ? (t % 7 == 0) : (t != 150);
    CUdeviceptr din = Upload(in), count = Zeros<int>(1), all = Zeros<int>(1), any = Zeros<int>(1);
    CU_ASSERT_OK(Run("barrier_count_and_or", 1, 200, {&din, &count, &all, &any}));
    int c = static_cast<int>(std::count(in.begin(), in.end(), 1));
    EXPECT_EQ(Download<int>(count, 1)[0], c) << "pattern " << pattern;
    EXPECT_EQ(Download<int>(all, 1)[0] != 0, c == 200) << "pattern " << pattern;
    EXPECT_EQ(Download<int>(any, 1)[0] != 0, c > 0) << "pattern " << pattern;
  }
}

TEST_F(ptx_barrier, SharedRotateRounds) {
  const int block = 256, rounds = 37;
  CUdeviceptr out = Zeros<int>(block);
  int r = rounds;
  CU_ASSERT_OK(Run("barrier_shared_rotate", 1, block, {&out, &r}));
  auto v = Download<int>(out, block);
  for (int t = 0; t < block; ++t) EXPECT_EQ(v[t], (t + rounds) % block) << "thread " << t;
}

TEST_F(ptx_barrier, WarpSync) {
  CUdeviceptr out = Zeros<int>(32);
  CU_ASSERT_OK(Run("barrier_warp_sync", 1, 32, {&out}));
  auto v = Download<int>(out, 32);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(v[t], (31 - t) * 3);
}

// ---- control flow ----------------------------------------------------------------------------------------------

using ptx_control = PtxKernelTest;

int Collatz(unsigned long long n) {
  int s = 0;
  while (n != 1) {
    n = (n % 2) ? 3 * n + 1 : n / 2;
    ++s;
  }
  return s;
}

TEST_F(ptx_control, DivergentLoops) {
  const int n = 3000;
  CUdeviceptr out = Zeros<int>(n);
  int nn = n;
  CU_ASSERT_OK(Run("control_collatz", (n + 127) / 128, 128, {&out, &nn}));
  auto v = Download<int>(out, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], Collatz(i + 1)) << i;
}

TEST_F(ptx_control, Recursion) {
  CUdeviceptr out = Zeros<unsigned>(64);
  CU_ASSERT_OK(Run("control_recursion", 1, 64, {&out}));
  auto v = Download<unsigned>(out, 64);
  auto fib = [](unsigned n) {
    unsigned a = 0, b = 1;
    for (unsigned i = 0; i < n; ++i) {
      unsigned t = a + b;
      a = b;
      b = t;
    }
    return a;
  };
  for (unsigned t = 0; t < 64; ++t) EXPECT_EQ(v[t], fib(t % 16)) << t;
}

TEST_F(ptx_control, Switch) {
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = i * 37 - 1000;
  CUdeviceptr din = Upload(in), out = Zeros<int>(256);
  CU_ASSERT_OK(Run("control_switch", 1, 256, {&din, &out}));
  auto v = Download<int>(out, 256);
  for (int t = 0; t < 256; ++t) {
    int x = in[t], r;
    switch (x & 7) {
      case 0: r = 10; break;
      case 1: r = x * 3; break;
      case 2: r = -x; break;
      case 3: r = x ^ 0x55; break;
      case 5: r = x << 2; break;
      default: r = 7;
    }
    EXPECT_EQ(v[t], r) << t;
  }
}

TEST_F(ptx_control, EarlyExit) {
  CUdeviceptr out = Zeros<int>(100);
  CU_ASSERT_OK(Run("control_early_exit", 1, 100, {&out}));
  auto v = Download<int>(out, 100);
  for (int t = 0; t < 100; ++t) EXPECT_EQ(v[t], t % 5 == 0 ? -1 : t) << t;
}

TEST_F(ptx_control, NestedDivergence) {
  CUdeviceptr out = Zeros<int>(128);
  CU_ASSERT_OK(Run("control_nested_divergence", 1, 128, {&out}));
  auto v = Download<int>(out, 128);
  for (int t = 0; t < 128; ++t) {
    int want = 0;
    for (int i = 0; i < (t % 7); ++i) {
      if ((t + i) % 3 == 0) continue;
      if (i == 5 && t % 2) break;
      want += i * t;
    }
    EXPECT_EQ(v[t], want) << t;
  }
}

// ---- memory spaces ---------------------------------------------------------------------------------------------

using ptx_memory = PtxKernelTest;

TEST_F(ptx_memory, ConstantBank) {
  const int n = 100;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(i) - 10.0f;
  CUdeviceptr dx = Upload(x), dy = Zeros<float>(n);
  int nn = n;
  CU_ASSERT_OK(Run("memory_constant_poly", 1, 128, {&dx, &dy, &nn}));
  auto y = Download<float>(dy, n);
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    // The kernel may contract into fma; allow the difference of one rounding step.
    float want = ((3.5f * v + 2.0f) * v + -1.25f) * v + 0.5f;
    EXPECT_NEAR(y[i], want, std::fabs(want) * 1e-6f + 1e-6f) << i;
  }
}

TEST_F(ptx_memory, LocalArray) {
  CUdeviceptr out = Zeros<int>(64);
  int k = 13;
  CU_ASSERT_OK(Run("memory_local_array", 1, 64, {&out, &k}));
  auto v = Download<int>(out, 64);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(v[t], ((t + k) % 64) * t) << t;
}

TEST_F(ptx_memory, VectorLoadsStores) {
  const int n = 300;
  std::vector<float> in(n * 4);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  CUdeviceptr din = Upload(in), dout = Zeros<float>(n * 4);
  int nn = n;
  CU_ASSERT_OK(Run("memory_vector_copy", 3, 128, {&din, &dout, &nn}));
  auto v = Download<float>(dout, n * 4);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c) ASSERT_EQ(v[i * 4 + c], in[i * 4 + 3 - c]) << i;
}

TEST_F(ptx_memory, ByteAccess) {
  const int n = 1001;
  std::vector<unsigned char> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 13);
  CUdeviceptr din = Upload(in), dout = Zeros<unsigned char>(n);
  int nn = n;
  CU_ASSERT_OK(Run("memory_byte_access", 8, 128, {&din, &dout, &nn}));
  auto v = Download<unsigned char>(dout, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[n - 1 - i], static_cast<unsigned char>(in[i] + 1)) << i;
}

TEST_F(ptx_memory, GlobalInitializedArray) {
  CUdeviceptr out = Zeros<unsigned long long>(4);
  CU_ASSERT_OK(Run("memory_global_state", 1, 32, {&out}));
  EXPECT_EQ(Download<unsigned long long>(out, 4), (std::vector<unsigned long long>{10, 20, 30, 40}));
}

class ptx_memory_Generic : public PtxKernelTest, public testing::WithParamInterface<int> {};

TEST_P(ptx_memory_Generic, PointerToEachSpace) {
  int which = GetParam();
  std::vector<int> g(32);
  std::iota(g.begin(), g.end(), 500);
  CUdeviceptr dg = Upload(g), out = Zeros<int>(32);
  CU_ASSERT_OK(Run("memory_generic_pointers", 1, 32, {&dg, &which, &out}));
  auto v = Download<int>(out, 32);
  for (int t = 0; t < 32; ++t) {
    int want = which == 0 ? 500 + t : which == 1 ? 100 + t : 7 + t % 4;
    EXPECT_EQ(v[t], want) << t;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ptx_memory_Generic, testing::Values(0, 1, 2), [](const testing::TestParamInfo<int>& i) {
  return std::string(i.param == 0 ? "global" : i.param == 1 ? "shared" : "local");
});

}  // namespace
