// Warp matrix instructions (isa/matrix.cpp) in nvcc-generated kernels (kernels/matrix.cu): results against host
// references computed from the PTX ISA's fragment layouts, and faults. Bit-exactness with the GPU for every form
// is the ptx.matrix.* conformance cases' job (conformance/golden/).
#include "harness.h"

#include <gtest/gtest.h>

#include <cstring>
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

TEST(PtxMatrix, WgmmaMultipliesSwizzledSharedTiles) {
  static std::shared_ptr<const Program> prog = [] {
    CompileResult r = compile(kWgmmaPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  uint16_t* image = arena().alloc<uint16_t>(5120);
  float* out = arena().alloc<float>(128 * 8);
  std::memset(image, 0, 10240);
  int a[64][32], b[32][16];
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 32; ++k) a[i][k] = (i * 3 + k * 7) % 9 - 4, image[swizzled128(i, k) / 2] = half(a[i][k]);
  for (int k = 0; k < 32; ++k)
    for (int n = 0; n < 16; ++n)
      b[k][n] = (k * 5 + n * 3) % 7 - 3, image[(8192 + swizzled128(n, k)) / 2] = half(b[k][n]);
  const KernelInfo& ki = kernels(*prog)[size_t(findKernel(*prog, "wg"))];
  auto launchAt = [&](unsigned descStart) {
    Params p(ki);
    p.arg(image).arg(out).arg(descStart);
    return launch(*prog, findKernel(*prog, "wg"), ptxtest::launchParams(Dim3{1}, Dim3{128}, p, arena()));
  };
  LaunchResult r = launchAt(8192);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  int bad = 0;
  for (unsigned x = 0; x < 128; ++x)
    for (unsigned reg = 0; reg < 8; ++reg) {
      // warp w holds rows 16w..16w+15: mma's accumulator layout, one m16n8 block per four registers
      const unsigned l = x % 32, row = 16 * (x / 32) + l / 4 + 8 * ((reg % 4) / 2);
      const unsigned col = 8 * (reg / 4) + 2 * (l % 4) + reg % 2;
      int want = 0;
      for (int k = 0; k < 32; ++k) want += a[row][k] * b[k][col];
      if (out[x * 8 + reg] != float(want) && bad++ < 5)
        ADD_FAILURE() << "row " << row << " column " << col << ": " << out[x * 8 + reg] << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
  // a descriptor past the CTA's shared memory faults
  r = launchAt(0x3ff00);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
}

}  // namespace
