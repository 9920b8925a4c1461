// Warp matrix instructions (isa/matrix.cpp) in nvcc-generated kernels (kernels/matrix.cu): results against host
// references computed from the PTX ISA's fragment layouts, and faults. Bit-exactness with the GPU for every form
// is the ptx.matrix.* conformance cases' job (conformance/golden/).
#include "harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena();
  return *a;
}

const Program& matrixProgram() {
  static std::shared_ptr<const Program> p = [] {
    CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/matrix.ptx"));
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

const KernelInfo& info(const char* name) { return kernels(matrixProgram())[size_t(findKernel(matrixProgram(), name))]; }

LaunchResult run(const char* name, Dim3 grid, Dim3 block, const Params& p) {
  return launch(matrixProgram(), findKernel(matrixProgram(), name), ptxtest::launchParams(grid, block, p, arena()));
}

uint16_t half(int v) {  // small integers as f16 (exact)
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned m = unsigned(v < 0 ? -v : v);
  int e = 31 - __builtin_clz(m);
  return uint16_t(sign | (e + 15) << 10 | ((m << (10 - e)) & 0x3ff));
}

TEST(PtxMatrix, WmmaGemmMatchesHostProduct) {
  const int n = 64;
  uint16_t* A = arena().alloc<uint16_t>(n * n);
  uint16_t* B = arena().alloc<uint16_t>(n * n);  // column-major
  float* C = arena().alloc<float>(n * n);
  std::vector<int> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = (i * 7) % 11 - 5;
    b[i] = (i * 5) % 9 - 4;
    A[i] = half(a[i]);
    B[i] = half(b[i]);
  }
  Params p(info("wmmagemm"));
  p.arg(A).arg(B).arg(C).arg(n);
  LaunchResult r = run("wmmagemm", Dim3{n / 32, n / 32}, Dim3{128}, p);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  int bad = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      long want = 0;
      for (int k = 0; k < n; ++k) want += long(a[i * n + k]) * b[j * n + k];
      if (C[i * n + j] != float(want) && bad++ < 5)
        ADD_FAILURE() << i << "," << j << ": " << C[i * n + j] << " vs " << want;
    }
  EXPECT_EQ(bad, 0);
}

TEST(PtxMatrix, MmaLoopAccumulatesIntoItsOwnResult) {
  uint32_t* a = arena().alloc<uint32_t>(32 * 4);
  uint32_t* b = arena().alloc<uint32_t>(32 * 2);
  float* out = arena().alloc<float>(2 * 32 * 4);
  for (int i = 0; i < 32 * 4; ++i) a[i] = 0x3c003c00u;  // 1.0 pairs
  for (int i = 0; i < 32 * 2; ++i) b[i] = 0x38003800u;  // 0.5 pairs
  Params p(info("mmaloop"));
  p.arg(a).arg(b).arg(out).arg(3);
  LaunchResult r = run("mmaloop", Dim3{1}, Dim3{64}, p);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (int i = 0; i < 2 * 32 * 4; ++i) ASSERT_EQ(out[i], 24.0f) << i;  // 3 x (16 x 1.0 x 0.5)
}

// ldmatrix.x4 of a 16x16 tile gives mma's A fragment: D = tile x B is the host product.
TEST(PtxMatrix, LdmatrixGivesTheMmaFragmentOfATile) {
  uint16_t* tile = arena().alloc<uint16_t>(256);
  uint32_t* b = arena().alloc<uint32_t>(64);
  float* out = arena().alloc<float>(128);
  int t[16][16], bm[16][8];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) t[i][j] = (i * 16 + j) % 13 - 6, tile[i * 16 + j] = half(t[i][j]);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) bm[k][n] = (k * 3 + n) % 7 - 3;
  // B fragment (ISA layout): lane l, register r holds B[2(l%4) + 8r + {0,1}][l/4]
  for (int l = 0; l < 32; ++l)
    for (int r = 0; r < 2; ++r) {
      int k = 2 * (l % 4) + 8 * r, col = l / 4;
      b[l * 2 + r] = uint32_t(half(bm[k][col])) | uint32_t(half(bm[k + 1][col])) << 16;
    }
  Params p(info("ldmatrixmma"));
  p.arg(tile).arg(b).arg(out);
  LaunchResult r = run("ldmatrixmma", Dim3{1}, Dim3{32}, p);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (int l = 0; l < 32; ++l)
    for (int e = 0; e < 4; ++e) {
      int row = l / 4 + 8 * (e / 2), col = 2 * (l % 4) + e % 2;
      int want = 0;
      for (int k = 0; k < 16; ++k) want += t[row][k] * bm[k][col];
      EXPECT_EQ(out[l * 4 + e], float(want)) << "lane " << l << " element " << e;
    }
}

TEST(PtxMatrix, LdmatrixOutsideSharedMemoryFaults) {
  uint32_t* out = arena().alloc<uint32_t>(32);
  Params ok(info("ldmatrixat"));
  ok.arg(0u).arg(out);
  LaunchResult r = run("ldmatrixat", Dim3{1}, Dim3{32}, ok);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  // lane l (l < 8) gets row l, columns 2(l%4)..: element index = row * 8 + col
  for (unsigned l = 0; l < 32; ++l) {
    unsigned row = l / 4, col = 2 * (l % 4);
    EXPECT_EQ(out[l], (row * 8 + col) | (row * 8 + col + 1) << 16) << l;
  }
  Params far(info("ldmatrixat"));
  far.arg(1u << 20).arg(out);
  r = run("ldmatrixat", Dim3{1}, Dim3{32}, far);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  Params odd(info("ldmatrixat"));
  odd.arg(2u).arg(out);
  r = run("ldmatrixat", Dim3{1}, Dim3{32}, odd);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress);
}

// wgmma (isa/wgmma.cpp): one warpgroup multiplies a 64 x 32 A by a 32 x 16 B, both K-major in shared memory with the
// 128-byte swizzle, in two K steps of 16 (the second with both descriptors' start moved 32 bytes into the swizzle
// lines, as a K loop does); pin: the shared-memory image, pout: D, register r of thread x at [x * 8 + r]; pdesc:
// where B starts in the image (B's descriptor start).
const char* kWgmmaPtx = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry wg(.param .u64 pin, .param .u64 pout, .param .u32 pdesc)
{
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  .reg .f32 %d<8>;
  .shared .align 1024 .b8 smem[10240];
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r9, [pdesc];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %r1;
COPY:
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.b32 %r3, [%rd4];
  mov.u32 %r4, smem;
  mad.lo.u32 %r4, %r2, 4, %r4;
  st.shared.b32 [%r4], %r3;
  add.u32 %r2, %r2, 128;
  setp.lt.u32 %p0, %r2, 2560;
  @%p0 bra COPY;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  mov.u32 %r5, smem;
  shr.u32 %r5, %r5, 4;
  cvt.u64.u32 %rd5, %r5;
  or.b64 %rd5, %rd5, 4611686293305360384;
  mov.u32 %r6, smem;
  add.u32 %r9, %r9, %r6;
  cvt.u64.u32 %rd6, %r9;
  shr.u64 %rd6, %rd6, 4;
  or.b64 %rd6, %rd6, 4611686293305360384;
  mov.f32 %d0, 0f00000000; mov.f32 %d1, 0f00000000; mov.f32 %d2, 0f00000000; mov.f32 %d3, 0f00000000;
  mov.f32 %d4, 0f00000000; mov.f32 %d5, 0f00000000; mov.f32 %d6, 0f00000000; mov.f32 %d7, 0f00000000;
  setp.eq.u32 %p1, %r1, %r1;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, %rd5, %rd6, %p1, 1, 1, 0, 0;
  add.s64 %rd5, %rd5, 2;
  add.s64 %rd6, %rd6, 2;
  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, %rd5, %rd6, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mul.wide.u32 %rd7, %r1, 32;
  add.s64 %rd8, %rd2, %rd7;
  st.global.v4.f32 [%rd8], {%d0, %d1, %d2, %d3};
  st.global.v4.f32 [%rd8+16], {%d4, %d5, %d6, %d7};
  ret;
}
)";

// Byte offset of element (row, k) of a K-major f16 operand with the 128-byte swizzle: rows of 128 bytes, atoms of 8
// rows 1024 bytes apart (the SBO), 16-byte chunks XORed with the row within the atom.
unsigned swizzled128(unsigned row, unsigned k) {
  unsigned addr = (row / 8) * 1024 + (row % 8) * 128 + 2 * k;
  return addr ^ (((addr >> 7) & 7) << 4);
}

// The shared-memory image kWgmmaPtx multiplies (A 64 x 32 at 0, B 32 x 16 at 8192, both K-major with the 128-byte
// swizzle) and the check of its D: warp w holds rows 16w..16w+15, mma's accumulator layout, one m16n8 block per four
// registers. Returns the number of wrong elements (the first few reported).
struct WgmmaTiles {
  int a[64][32], b[32][16];
  uint16_t* image = arena().alloc<uint16_t>(5120);
  float* out = arena().alloc<float>(128 * 8);

  WgmmaTiles() {
    std::memset(image, 0, 10240);
    for (int i = 0; i < 64; ++i)
      for (int k = 0; k < 32; ++k) a[i][k] = (i * 3 + k * 7) % 9 - 4, image[swizzled128(i, k) / 2] = half(a[i][k]);
    for (int k = 0; k < 32; ++k)
      for (int n = 0; n < 16; ++n)
        b[k][n] = (k * 5 + n * 3) % 7 - 3, image[(8192 + swizzled128(n, k)) / 2] = half(b[k][n]);
  }
  int wrongElements() const {
    int bad = 0;
    for (unsigned x = 0; x < 128; ++x)
      for (unsigned reg = 0; reg < 8; ++reg) {
        const unsigned l = x % 32, row = 16 * (x / 32) + l / 4 + 8 * ((reg % 4) / 2);
        const unsigned col = 8 * (reg / 4) + 2 * (l % 4) + reg % 2;
        int want = 0;
        for (int k = 0; k < 32; ++k) want += a[row][k] * b[k][col];
        if (out[x * 8 + reg] != float(want) && bad++ < 5)
          ADD_FAILURE() << "row " << row << " column " << col << ": " << out[x * 8 + reg] << ", want " << want;
      }
    return bad;
  }
};

TEST(PtxMatrix, WgmmaMultipliesSwizzledSharedTiles) {
  static std::shared_ptr<const Program> prog = [] {
    CompileResult r = compile(kWgmmaPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  WgmmaTiles tiles;
  const KernelInfo& ki = kernels(*prog)[size_t(findKernel(*prog, "wg"))];
  auto launchAt = [&](unsigned descStart) {
    Params p(ki);
    p.arg(tiles.image).arg(tiles.out).arg(descStart);
    return launch(*prog, findKernel(*prog, "wg"), ptxtest::launchParams(Dim3{1}, Dim3{128}, p, arena()));
  };
  LaunchResult r = launchAt(8192);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(tiles.wrongElements(), 0);
  // a descriptor past the CTA's shared memory faults (inside the descriptor's 2^18 bytes: beyond, its 14-bit start
  // wraps round to the driver's reserved bytes, which a CTA may read)
  r = launchAt(0x3e000);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
}

// wgmma.wait_group waits for the warpgroup: thread 0 overwrites B in shared memory right after its wait (as
// CUTLASS releases a pipeline stage after one thread's wait), which must not change what the other three warps
// multiply, whichever warp runs first (deterministic schedules with shuffled warp orders). Until 2026-11-28 a warp
// computed its share when it issued the wgmma and its wait returned at once, so warps that issued later read the
// zeros (CUTLASS's examples 50 and 63 failed so).
TEST(PtxMatrix, WgmmaWaitGroupWaitsForTheWarpgroup) {
  std::string text = kWgmmaPtx;
  const std::string wait = "  wgmma.wait_group.sync.aligned 0;\n";
  text.replace(text.find(wait), wait.size(),
               wait +
                   "  setp.ne.u32 %p0, %r1, 0;\n  @%p0 bra STORE;\n  mov.u32 %r10, 0;\n  mov.u32 %r12, 0;\n"
                   "ZERO:\n  mov.u32 %r11, smem;\n  add.u32 %r11, %r11, 8192;\n  add.u32 %r11, %r11, %r10;\n"
                   "  st.shared.b32 [%r11], %r12;\n  add.u32 %r10, %r10, 4;\n  setp.lt.u32 %p0, %r10, 2048;\n"
                   "  @%p0 bra ZERO;\nSTORE:\n");
  CompileResult cr = compile(text);
  ASSERT_TRUE(cr.program) << cr.error;
  const KernelInfo& ki = kernels(*cr.program)[0];
  for (uint32_t seed = 0; seed < 8; ++seed) {
    SCOPED_TRACE(seed);
    WgmmaTiles tiles;
    Params p(ki);
    p.arg(tiles.image).arg(tiles.out).arg(8192u);
    LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{128}, p, arena());
    lp.config = ExecConfig{1, true, seed, 0};
    LaunchResult r = launch(*cr.program, 0, lp);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    EXPECT_EQ(tiles.wrongElements(), 0);
  }
}

}  // namespace

namespace {

// ---- mma with a .kind (sm_120a/f): FP4/FP6/FP8 products, block scaling ----------------------------------------
// No compute-capability-12 GPU has recorded these forms; the host references below place elements by the PTX ISA's
// fragment formulas for the 8-bit (m16n8k32) and 4-bit (m16n8k64) types and the scale factors as CUTLASS's sm_120
// traits do for {byte-id, thread-id} = {0, 0}. Values are small enough that every sum is exact.

// One warp: loads A (4 registers), B (2), C (4 floats), the scale words of A and B, runs `mma`, stores D.
std::string kindKernel(const std::string& mma, const std::string& target = "sm_121a") {
  return ".version 9.0\n.target " + target +
         "\n.address_size 64\n"
         ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
         "  .reg .b16 %rs<4>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<9>;\n  .reg .b64 %rd<6>;\n"
         "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  mov.u32 %r0, %laneid;\n"
         "  mul.wide.u32 %rd3, %r0, 48;\n  add.s64 %rd4, %rd1, %rd3;\n"
         "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];\n  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd4+16];\n"
         "  ld.global.v2.b32 {%r5, %r6}, [%rd4+32];\n  ld.global.v2.b32 {%r7, %r8}, [%rd4+40];\n"
         "  mov.b16 %rs0, 0;\n  mov.b16 %rs1, 1;\n  mov.b16 %rs2, 2;\n  mov.b16 %rs3, 3;\n  " +
         mma +
         "\n  mul.wide.u32 %rd3, %r0, 16;\n  add.s64 %rd5, %rd2, %rd3;\n"
         "  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n  ret;\n}\n";
}

struct KindInput {
  uint32_t a[4];
  float c[4];
  uint32_t b[2];
  uint32_t scaleA, scaleB;
};
static_assert(sizeof(KindInput) == 48);

// Runs kernel `ptx` with the per-lane inputs; D[row][col] from the standard m16n8 f32 accumulator layout.
LaunchResult runKind(const std::string& ptx, const KindInput* lanes, float (*d)[8],
                     const CompileOptions& options = {}) {
  CompileResult cr = compile(ptx, options);
  EXPECT_TRUE(cr.program) << cr.error;
  if (!cr.program) return {};
  auto* in = arena().alloc<KindInput>(32);
  auto* out = arena().alloc<float>(128);
  std::memcpy(in, lanes, 32 * sizeof(KindInput));
  Params p(kernels(*cr.program)[0]);
  p.arg(in).arg(out);
  LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena()));
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned i = 0; i < 4; ++i) d[l / 4 + 8 * (i / 2)][2 * (l % 4) + i % 2] = out[l * 4 + i];
  return r;
}

// D[i][j] is C's element plus the sum over k < K of product(i, j, k), exactly.
template <class Product> void expectProducts(const float (*d)[8], const KindInput* in, unsigned K, Product product) {
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 8; ++j) {
      double want = in[4 * (i % 8) + (j / 2)].c[2 * (i / 8) + j % 2];
      for (unsigned k = 0; k < K; ++k) want += product(i, j, k);
      EXPECT_EQ(d[i][j], float(want)) << "row " << i << " column " << j;
    }
}

// e2m1 values by code (sign in bit 3)
double e2m1(unsigned code) {
  static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8) ? -v[code & 7] : v[code & 7];
}

// Packed e2m1 (.kind::mxf4nvf4, m16n8k64) with four ue4m3 scale factors per row and column, the selectors in 16-bit
// registers as nvcc writes them for CUTLASS: D = (A x scale_A)(B x scale_B) + C.
TEST(PtxMatrix, KindMxf4nvf4ScalesPackedFp4Products) {
  unsigned a[16][64], b[64][8];
  double sa[16][4], sb[8][4];
  static const uint8_t kUe4m3[4] = {0x38, 0x40, 0x30, 0x3c};  // 1, 2, 0.5, 1.5
  static const double kUe4m3Value[4] = {1, 2, 0.5, 1.5};
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned k = 0; k < 64; ++k) a[i][k] = (i * 7 + k * 3) % 16;
  for (unsigned k = 0; k < 64; ++k)
    for (unsigned j = 0; j < 8; ++j) b[k][j] = (k * 5 + j * 11 + 1) % 16;
  KindInput in[32] = {};
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned g = l / 4, t = l % 4;
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned n = 0; n < 8; ++n)  // a_i, i = 8r + n: row g (+8 for odd r), column 8t + n (+32 for r >= 2)
        in[l].a[r] |= a[g + 8 * (r % 2)][8 * t + n + 32 * (r / 2)] << (4 * n);
    for (unsigned r = 0; r < 2; ++r)
      for (unsigned n = 0; n < 8; ++n)  // b_i, i = 8r + n: row 8t + n (+32 for r = 1), column g
        in[l].b[r] |= b[8 * t + n + 32 * r][g] << (4 * n);
    for (unsigned i = 0; i < 4; ++i) in[l].c[i] = float(int(l + i) % 5 - 2);
    // A: lane 4g holds row g's four factors, lane 4g + 1 row g + 8's (CUTLASS copies them to 4g + 2 and 4g + 3)
    const unsigned row = g + 8 * (t % 2), col = g;
    for (unsigned q = 0; q < 4; ++q) {
      const unsigned fa = (row + q) % 4, fb = (col * 3 + q) % 4;
      in[l].scaleA |= uint32_t(kUe4m3[fa]) << (8 * q);
      in[l].scaleB |= uint32_t(kUe4m3[fb]) << (8 * q);
      sa[row][q] = kUe4m3Value[fa];
      sb[col][q] = kUe4m3Value[fb];
    }
  }
  float d[16][8];
  LaunchResult r = runKind(kindKernel("mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32."
                                      "e2m1.e2m1.f32.ue4m3 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
                                      "{%f5,%f6,%f7,%f8}, {%r7}, {%rs0,%rs0}, {%r8}, {%rs0,%rs0};"),
                           in, d);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  expectProducts(d, in, 64, [&](unsigned i, unsigned j, unsigned k) {
    return e2m1(a[i][k]) * sa[i][k / 16] * e2m1(b[k][j]) * sb[j][k / 16];
  });
}

// FP6 and FP4 in bytes (.kind::f8f6f4, m16n8k32): e2m3 (bits 5:0) times e2m1 (bits 5:2), no scaling.
TEST(PtxMatrix, KindF8f6f4MultipliesFp6ByFp4InBytes) {
  unsigned a[16][32], b[32][8];
  auto e2m3 = [](unsigned code) {  // sign bit 5, exponent bits 4:3 (bias 1), mantissa 2:0
    const unsigned e = (code >> 3) & 3, m = code & 7;
    const double v = e ? std::ldexp(8.0 + m, int(e) - 4) : m / 8.0;
    return (code & 0x20) ? -v : v;
  };
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned k = 0; k < 32; ++k) a[i][k] = (i * 13 + k * 7) % 64;
  for (unsigned k = 0; k < 32; ++k)
    for (unsigned j = 0; j < 8; ++j) b[k][j] = (k * 3 + j * 5) % 16;
  KindInput in[32] = {};
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned g = l / 4, t = l % 4;
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned n = 0; n < 4; ++n)  // a_i, i = 4r + n: row g (+8 for odd r), column 4t + n (+16 for r >= 2)
        in[l].a[r] |= (a[g + 8 * (r % 2)][4 * t + n + 16 * (r / 2)] | 0xc0u) << (8 * n);  // bits 7:6 not read
    for (unsigned r = 0; r < 2; ++r)
      for (unsigned n = 0; n < 4; ++n)  // b_i, i = 4r + n: row 4t + n (+16 for r = 1), column g
        in[l].b[r] |= (b[4 * t + n + 16 * r][g] << 2 | 0x3u) << (8 * n);  // bits 1:0 and 7:6 not read
    for (unsigned i = 0; i < 4; ++i) in[l].c[i] = 0.25f * float(int(l * 3 + i) % 7 - 3);
  }
  float d[16][8];
  LaunchResult r = runKind(kindKernel("mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.f32.e2m3.e2m1.f32 "
                                      "{%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};"),
                           in, d);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  expectProducts(d, in, 32, [&](unsigned i, unsigned j, unsigned k) { return e2m3(a[i][k]) * e2m1(b[k][j]); });
}

// .kind::mxf8f6f4 with other selectors: byte-id 2 takes each lane's third byte, thread-id 1 of A the lanes 4g + 2
// and 4g + 3, thread-id 3 of B lane 4g + 3; ue8m0 factors are powers of two. A factor NaN (0xff) gives NaN.
TEST(PtxMatrix, KindMxf8f6f4SelectsScaleFactors) {
  KindInput in[32] = {};
  for (unsigned l = 0; l < 32; ++l) {
    for (unsigned r = 0; r < 4; ++r) in[l].a[r] = 0x38383838u;  // e4m3 1.0 everywhere
    for (unsigned r = 0; r < 2; ++r) in[l].b[r] = 0x3c3c3c3cu;  // e5m2 1.0 everywhere
    const unsigned g = l / 4, t = l % 4;
    // byte 2 of lane 4g + 2 (row g) and 4g + 3 (row g + 8): 2^(row - 4); the other bytes and lanes: 2^20, never read
    in[l].scaleA = 0x93939393u;
    if (t >= 2) in[l].scaleA = (in[l].scaleA & ~0xff0000u) | uint32_t(127 + (g + 8 * (t - 2)) - 4) << 16;
    in[l].scaleB = 0x93939393u;
    if (t == 3) in[l].scaleB = (in[l].scaleB & ~0xff0000u) | uint32_t(127 + g) << 16;
  }
  float d[16][8];
  const std::string form =
      "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e5m2.f32.ue8m0 "
      "{%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8}, %r7, {2, 1}, %r8, {%rs2, %rs3};";
  LaunchResult r = runKind(kindKernel(form), in, d);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 8; ++j) EXPECT_EQ(d[i][j], std::ldexp(32.0f, int(i) - 4 + int(j))) << i << "," << j;
  in[5].scaleA |= 0xff0000u;  // lane 4 + 1: not a lane thread-id 1 reads
  in[6].scaleA |= 0xff0000u;  // lane 4 + 2: row 1's factor
  r = runKind(kindKernel(form), in, d);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (unsigned j = 0; j < 8; ++j) {
    EXPECT_TRUE(std::isnan(d[1][j])) << j;
    EXPECT_EQ(d[9][j], std::ldexp(32.0f, 5 + int(j))) << j;
  }
}

// exact-scaled-sums against the general path: random e4m3 x e5m2 operands with ue8m0 factors from 2^-40 to 2^40, so
// that some outputs need more than double's 53 bits (the fast path declines them) and the rest do not; both ways
// give the same bits.
TEST(PtxMatrix, KindExactScaledSumsMatchTheGeneralPath) {
  const std::string form = kindKernel(
      "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e5m2.f32.ue8m0 "
      "{%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8}, %r7, {0, 0}, %r8, {0, 0};");
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    const unsigned spread = trial < 10 ? 4 : 40;  // narrow: the fast path takes it; wide: mostly not
    KindInput in[32] = {};
    for (unsigned l = 0; l < 32; ++l) {
      auto bytes = [&](unsigned manBits, unsigned bias) {  // normal values near 1, either sign
        uint32_t w = 0;
        for (unsigned q = 0; q < 4; ++q) {
          const uint32_t exp = bias - 3 + rng() % 7, man = rng() & ((1u << manBits) - 1), sign = rng() & 1;
          w |= (sign << 7 | exp << manBits | man) << (8 * q);
        }
        return w;
      };
      for (uint32_t& w : in[l].a) w = bytes(3, 7);
      for (uint32_t& w : in[l].b) w = bytes(2, 15);
      for (float& c : in[l].c) c = float(int(rng() % 2001) - 1000) / 8.0f;
      in[l].scaleA = 127 + rng() % (2 * spread + 1) - spread;
      in[l].scaleB = 127 + rng() % (2 * spread + 1) - spread;
    }
    float fast[16][8], general[16][8];
    CompileOptions all;
    CompileOptions without;
    without.rewrites = kAllRewrites & ~rewriteBit(Rewrite::ExactScaledSums);
    for (auto [options, d] : {std::pair{&all, fast}, std::pair{&without, general}}) {
      LaunchResult r = runKind(form, in, d, *options);
      ASSERT_TRUE(r.ok()) << r.fault.message;
    }
    EXPECT_EQ(std::memcmp(fast, general, sizeof fast), 0);
  }
}

// A selector register out of its range is an illegal instruction that says so.
TEST(PtxMatrix, KindSelectorOutOfRangeFaults) {
  KindInput in[32] = {};
  float d[16][8];
  LaunchResult r = runKind(kindKernel("mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32."
                                      "e2m1.e2m1.f32.ue4m3 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
                                      "{%f5,%f6,%f7,%f8}, {%r7}, {%rs0,%rs2}, {%r8}, {%rs0,%rs0};"),
                           in, d);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.fault.message.find("{byte-id, thread-id} of A is {0, 2}"), std::string::npos) << r.fault.message;
}

// ldmatrix .m8n16 with 4- and 6-bit source formats: each row's 16 packed elements (least significant bits first) land
// one per byte, lane l getting row l/4, columns 4(l%4)..+3 of each matrix (PTX ISA text; not recorded on a GPU).
TEST(PtxMatrix, LdmatrixUnpacksFourAndSixBitRows) {
  for (unsigned bits : {4u, 6u}) {
    SCOPED_TRACE(bits);
    const std::string format = bits == 4 ? ".b4x16_p64" : ".b6x16_p32";
    const std::string ptx =
        ".version 9.0\n.target sm_121a\n.address_size 64\n"
        ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
        "  .reg .b32 %r<12>;\n  .reg .b64 %rd<6>;\n  .shared .align 16 .b8 s[512];\n"
        "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  mov.u32 %r0, %laneid;\n"
        "  mul.wide.u32 %rd3, %r0, 16;\n  add.s64 %rd4, %rd1, %rd3;\n"
        "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];\n  mov.u32 %r5, s;\n"
        "  mad.lo.u32 %r6, %r0, 16, %r5;\n  st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};\n"
        "  bar.warp.sync -1;\n"
        "  ldmatrix.sync.aligned.m8n16.x4.shared.b8x16" +
        format +
        " {%r7, %r8, %r9, %r10}, [%r6];\n"
        "  add.s64 %rd5, %rd2, %rd3;\n  st.global.v4.b32 [%rd5], {%r7, %r8, %r9, %r10};\n"
        "  ret;\n}\n";
    CompileResult cr = compile(ptx);
    ASSERT_TRUE(cr.program) << cr.error;
    auto* in = arena().alloc<uint8_t>(512);
    auto* out = arena().alloc<uint32_t>(128);
    unsigned elems[32][16];  // row r = 8 j + i of matrix j
    for (unsigned r = 0; r < 32; ++r) {
      unsigned __int128 packed = 0;
      for (unsigned c = 0; c < 16; ++c) {
        elems[r][c] = (r * 5 + c * 3 + 1) & ((1u << bits) - 1);
        packed |= static_cast<unsigned __int128>(elems[r][c]) << (bits * c);
      }
      for (unsigned q = 0; q < 16; ++q) in[r * 16 + q] = q < 2 * bits ? uint8_t(packed >> (8 * q)) : 0xa5;
    }
    Params p(kernels(*cr.program)[0]);
    p.arg(in).arg(out);
    LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena()));
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned j = 0; j < 4; ++j)
        for (unsigned b = 0; b < 4; ++b)
          EXPECT_EQ((out[l * 4 + j] >> (8 * b)) & 0xff, elems[8 * j + l / 4][4 * (l % 4) + b])
              << "lane " << l << " matrix " << j << " byte " << b;
  }
}

// ldmatrix .m16n16 .trans and stmatrix .m16n8 .trans, the 8-bit forms of sm_100a/sm_120a (layouts from CUTLASS's
// SM100_U8x16_LDSM_T and SM100_U8x16_STSM_T traits; not recorded on a GPU). The load must give lane l, register
// 2j + h, byte b the element at row 4(l%4) + b, column 8h + l/4 of matrix j. CUTLASS shuffles those bytes
// (prmt 0x5410 and 0x7632 of each register pair) into the stores' register layout; the store must then write, with
// rows addressed as the load's were, the load's rows back in the order the two traits' thread-to-row maps imply:
// stored row p holds loaded row 16(p/16) + (p&1) + 2((p>>3)&1) + 4((p>>1)&3). The 4- and 6-bit sources unpack each
// row first, as .m8n16 does.
TEST(PtxMatrix, LdmatrixAndStmatrixMoveTransposedBytes) {
  for (unsigned bits : {8u, 4u, 6u}) {
    SCOPED_TRACE(bits);
    const std::string type = bits == 8 ? ".b8" : bits == 4 ? ".b8x16.b4x16_p64" : ".b8x16.b6x16_p32";
    const std::string ptx =
        ".version 9.0\n.target sm_120a\n.address_size 64\n"
        ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 pregs) {\n"
        "  .reg .b32 %r<20>;\n  .reg .b64 %rd<9>;\n  .shared .align 16 .b8 s[512];\n  .shared .align 16 .b8 t[512];\n"
        "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u64 %rd7, [pregs];\n"
        "  mov.u32 %r0, %laneid;\n  mul.wide.u32 %rd3, %r0, 16;\n  add.s64 %rd4, %rd1, %rd3;\n"
        "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];\n  mov.u32 %r5, s;\n"
        "  mad.lo.u32 %r6, %r0, 16, %r5;\n  st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};\n"
        "  bar.warp.sync -1;\n"
        "  ldmatrix.sync.aligned.m16n16.x2.trans.shared" +
        type +
        " {%r7, %r8, %r9, %r10}, [%r6];\n"
        "  add.s64 %rd8, %rd7, %rd3;\n  st.global.v4.b32 [%rd8], {%r7, %r8, %r9, %r10};\n"
        "  prmt.b32 %r11, %r7, %r8, 0x5410;\n  prmt.b32 %r12, %r7, %r8, 0x7632;\n"
        "  prmt.b32 %r13, %r9, %r10, 0x5410;\n  prmt.b32 %r14, %r9, %r10, 0x7632;\n"
        "  mov.u32 %r15, t;\n  mad.lo.u32 %r16, %r0, 16, %r15;\n"
        "  stmatrix.sync.aligned.m16n8.x4.trans.shared.b8 [%r16], {%r11, %r12, %r13, %r14};\n"
        "  bar.warp.sync -1;\n  ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r16];\n"
        "  add.s64 %rd5, %rd2, %rd3;\n  st.global.v4.b32 [%rd5], {%r1, %r2, %r3, %r4};\n"
        "  ret;\n}\n";
    CompileResult cr = compile(ptx);
    ASSERT_TRUE(cr.program) << cr.error;
    auto* in = arena().alloc<uint8_t>(512);
    auto* out = arena().alloc<uint8_t>(512);
    auto* regs = arena().alloc<uint32_t>(128);
    uint8_t elems[32][16];  // row 16 j + i of matrix j, as the load sees it (unpacked)
    for (unsigned r = 0; r < 32; ++r) {
      unsigned __int128 packed = 0;
      for (unsigned c = 0; c < 16; ++c) {
        elems[r][c] = uint8_t((r * 37 + c * 11 + 5) & (bits == 8 ? 0xff : (1u << bits) - 1));
        packed |= static_cast<unsigned __int128>(elems[r][c]) << (bits * c);
      }
      for (unsigned q = 0; q < 16; ++q)
        in[r * 16 + q] = bits == 8 ? elems[r][q] : q < 2 * bits ? uint8_t(packed >> (8 * q)) : 0xa5;
    }
    Params p(kernels(*cr.program)[0]);
    p.arg(in).arg(out).arg(regs);
    LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena()));
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned reg = 0; reg < 4; ++reg)
        for (unsigned b = 0; b < 4; ++b)
          EXPECT_EQ((regs[l * 4 + reg] >> (8 * b)) & 0xff,
                    elems[16 * (reg / 2) + 4 * (l % 4) + b][8 * (reg % 2) + l / 4])
              << "lane " << l << " register " << reg << " byte " << b;
    for (unsigned row = 0; row < 32; ++row) {
      const unsigned from = 16 * (row / 16) + (row & 1) + 2 * ((row >> 3) & 1) + 4 * ((row >> 1) & 3);
      EXPECT_EQ(std::memcmp(out + 16 * row, elems[from], 16), 0) << "stored row " << row;
    }
  }
}

// Sparse .kind::f8f6f4 (mma.sp::ordered_metadata, m16n8k64): A keeps two of every four elements of a row, named by
// 4-bit metadata nibbles (lanes 4g and 4g + 2 for row g's groups 0-7 and 8-15, 4g + 1 and 4g + 3 for row g + 8's,
// as the H100 recorded for 8-bit types), and D is the dense product.
TEST(PtxMatrix, KindSparseSelectsByMetadata) {
  const std::string ptx =
      ".version 9.0\n.target sm_121a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
      "  .reg .b32 %r<16>;\n  .reg .f32 %f<9>;\n  .reg .b64 %rd<6>;\n"
      "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  mov.u32 %r0, %laneid;\n"
      "  mul.wide.u32 %rd3, %r0, 64;\n  add.s64 %rd4, %rd1, %rd3;\n"
      "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd4];\n"
      "  ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd4+16];\n"
      "  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd4+32];\n  ld.global.b32 %r9, [%rd4+48];\n"
      "  mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e4m3.e2m1.f32 "
      "{%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6,%r7,%r8}, {%f5,%f6,%f7,%f8}, %r9, 0;\n"
      "  mul.wide.u32 %rd3, %r0, 16;\n  add.s64 %rd5, %rd2, %rd3;\n"
      "  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n  ret;\n}\n";
  struct Lane {
    uint32_t a[4], b[4];
    float c[4];
    uint32_t meta, pad[3];
  };
  static_assert(sizeof(Lane) == 64);
  auto e4m3 = [](unsigned code) {  // the codes used here: exponent 6..8, no NaN
    const unsigned e = (code >> 3) & 15, m = code & 7;
    const double v = std::ldexp(8.0 + m, int(e) - 10);
    return (code & 0x80) ? -v : v;
  };
  double a[16][64] = {};
  unsigned packedA[16][32], bcode[64][8], meta[16][16];
  static const unsigned kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned grp = 0; grp < 16; ++grp) {
      const unsigned* pair = kPairs[(i * 5 + grp) % 6];
      meta[i][grp] = pair[0] | pair[1] << 2;
      for (unsigned h = 0; h < 2; ++h) {
        const unsigned code = (0x30 + (i * 3 + grp * 7 + h) % 24) | ((i + grp + h) % 3 == 0 ? 0x80 : 0);
        packedA[i][2 * grp + h] = code;
        a[i][4 * grp + pair[h]] = e4m3(code);
      }
    }
  for (unsigned k = 0; k < 64; ++k)
    for (unsigned j = 0; j < 8; ++j) bcode[k][j] = (k * 7 + j * 3) % 16;
  Lane in[32] = {};
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned g = l / 4, t = l % 4;
    for (unsigned r = 0; r < 4; ++r)
      for (unsigned n = 0; n < 4; ++n) {  // packed A: the m16n8k32 8-bit layout; B: rows 4t + 16r + n, column g
        in[l].a[r] |= packedA[g + 8 * (r % 2)][4 * t + n + 16 * (r / 2)] << (8 * n);
        in[l].b[r] |= (bcode[4 * t + 16 * r + n][g] << 2) << (8 * n);
      }
    for (unsigned i = 0; i < 4; ++i) in[l].c[i] = float(int(l + 2 * i) % 3 - 1);
    const unsigned row = g + 8 * (t % 2), first = 8 * (t / 2);
    for (unsigned q = 0; q < 8; ++q) in[l].meta |= meta[row][first + q] << (4 * q);
  }
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  auto* dev = arena().alloc<Lane>(32);
  auto* out = arena().alloc<float>(128);
  std::memcpy(dev, in, sizeof in);
  Params p(kernels(*cr.program)[0]);
  p.arg(dev).arg(out);
  LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena()));
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned e = 0; e < 4; ++e) {
      const unsigned row = l / 4 + 8 * (e / 2), col = 2 * (l % 4) + e % 2;
      double want = in[l].c[e];
      for (unsigned k = 0; k < 64; ++k) want += a[row][k] * e2m1(bcode[k][col]);
      EXPECT_EQ(out[l * 4 + e], float(want)) << "row " << row << " column " << col;
    }
}

}  // namespace
