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

}  // namespace
