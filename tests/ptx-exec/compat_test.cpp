// PTX that NVIDIA's compilers, headers and old programs emit (issue 17): predefined constants, arrays as
// operands, half-precision set/setp, old .version/.target dialects, load pragmas, .local alignment and shfl
// with missing lanes. Expected values come from the PTX ISA; the kernels of the tests WarpSizeConstant,
// ArraysAsOperands, HalfPrecisionSetAndSetp, PackedSixteenBitIntegerArithmetic, HeaderSweepConversionsPacksAndCas16
// and LocalAndSharedAlignmentIsHonoured ran on an H100 with the same results (ArraysAsOperands before its two
// register-indexed shared accesses were added; tools/gpu-probe/front17.cpp,
// tools/gpu-probe/results/front17-h100-2026-11-26.txt; driver 580 also loads legacy_vecadd_ptx14.ptx).
#include "harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <sstream>
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

// Compiles `text` and launches kernel "k" with one parameter: a pointer to `words` zero-filled 32-bit words.
// Returns the words after the launch (empty, with a test failure, when the compile or the launch fails).
std::vector<uint32_t> runWords(const std::string& text, size_t words, Dim3 block = Dim3{1}, Dim3 grid = Dim3{1},
                               uint32_t fill = 0) {
  CompileResult cr = compile(text);
  if (!cr.program) {
    ADD_FAILURE() << cr.error << "\n" << text;
    return {};
  }
  auto* out = arena().alloc<uint32_t>(words);
  for (size_t i = 0; i < words; ++i) out[i] = fill;
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  if (kernels(*cr.program)[size_t(kernel)].params[0].size == 8)
    p.arg(out);
  else
    p.arg(uint32_t(reinterpret_cast<uint64_t>(out)));
  std::vector<uint64_t> globalAddrs = ptxtest::allocateGlobals(*cr.program, arena());
  LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
  lp.globalAddresses = globalAddrs.data();
  LaunchResult r = launch(*cr.program, kernel, lp);
  if (!r.ok()) {
    ADD_FAILURE() << r.fault.message << "\n" << text;
    return {};
  }
  return std::vector<uint32_t>(out, out + words);
}

// A float's bits, as the kernels store them.
uint32_t bitsOf(float x) { return std::bit_cast<uint32_t>(x); }

std::string header(const std::string& target = "sm_90", const std::string& version = "8.0") {
  return ".version " + version + "\n.target " + target + "\n.address_size 64\n";
}

// A kernel of one instruction, for the front end's checks: registers %r1-%r3 (.b32) and `regs`.
std::string kernelOfOne(const std::string& regs, const char* inst) {
  return ".visible .entry k(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n" + regs + "\t" + inst + "\n\tret;\n}\n";
}

}  // namespace

// nvcc writes `warpSize` as the predefined constant WARP_SZ; ptxas takes it in any constant expression.
TEST(PtxCompat, WarpSizeConstant) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, WARP_SZ;
	st.global.u32 [%rd1], %r1;
	add.u32 %r2, %r1, WARP_SZ-1;
	st.global.u32 [%rd1+4], %r2;
	and.b32 %r3, %r2, (WARP_SZ - 1) * 2;
	st.global.u32 [%rd1+8], %r3;
	mov.s32 %r4, -WARP_SZ;
	st.global.u32 [%rd1+12], %r4;
	mov.u32 %r5, 5;
	st.global.u32 [%rd1+WARP_SZ], %r5;
	ret;
}
)";
  auto w = runWords(text, 9);
  ASSERT_EQ(w.size(), 9u);
  EXPECT_EQ(w[0], 32u);
  EXPECT_EQ(w[1], 63u);
  EXPECT_EQ(w[2], 63u & 62u);
  EXPECT_EQ(w[3], uint32_t(-32));
  EXPECT_EQ(w[8], 5u);
}

// A register range may be named without '%' (`.reg .b64 rd<3>;`, then `rd1`): NVIDIA's nvJitLink writes cuFFTDx's
// inline assembly so (nvmath-python's device FFT), and ptxas takes it. The names work as operands, address bases
// (also with an offset) and vector elements, and inside a nested block that declares its own range.
TEST(PtxCompat, RegisterRangeNamedWithoutPercent) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b64 rd<3>;
	.reg .b32 r<4>;
	ld.param.u64 rd1, [out];
	mov.u32 r1, 40;
	add.u32 r2, r1, 2;
	st.global.u32 [rd1], r2;
	st.global.v2.u32 [rd1+8], {r1, r2};
	{
	.reg .f32 f<3>;
	cvt.rn.f32.u32 f1, r2;
	add.f32 f2, f1, f1;
	st.global.f32 [rd1+16], f2;
	}
	ret;
}
)";
  auto w = runWords(text, 5);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0], 42u);
  EXPECT_EQ(w[2], 40u);
  EXPECT_EQ(w[3], 42u);
  EXPECT_EQ(w[4], bitsOf(84.0f));
}

// `arr[i]` is the address of element i, scaled by the scalar element size (ptxas scales a .v2 .u32 or a 2-D
// .u32 array by 4 too); ld/st read it as a memory operand, mov/cvta as an address. Register indices too.
TEST(PtxCompat, ArraysAsOperands) {
  std::string text = header() + R"(
.global .align 4 .u32 g[8] = {10, 11, 12, 13, 14, 15, 16, 17};
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<12>;
	.reg .b64 %rd<8>;
	.shared .align 8 .u32 local0[64];
	.shared .align 8 .u16 half0[8];
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, 7;
	st.shared.u32 local0[3], %r1;
	mov.u64 %rd2, local0[3];
	mov.u64 %rd3, local0;
	sub.u64 %rd4, %rd2, %rd3;
	cvt.u32.u64 %r2, %rd4;
	st.global.u32 [%rd1], %r2;
	ld.shared.u32 %r3, [local0+12];
	st.global.u32 [%rd1+4], %r3;
	ld.global.u32 %r4, g[5];
	st.global.u32 [%rd1+8], %r4;
	mov.u32 %r5, 2;
	ld.global.u32 %r6, g[%r5];
	st.global.u32 [%rd1+12], %r6;
	ld.global.u32 %r7, g[%r5+3];
	st.global.u32 [%rd1+16], %r7;
	cvt.u64.u32 %rd5, %r5;
	ld.global.u32 %r8, g[%rd5+-1];
	st.global.u32 [%rd1+20], %r8;
	mov.u32 %r9, half0[%r5+1];
	mov.u32 %r10, half0;
	sub.u32 %r9, %r9, %r10;
	st.global.u32 [%rd1+24], %r9;
	cvta.shared.u64 %rd6, local0[3];
	ld.u32 %r11, [%rd6];
	st.global.u32 [%rd1+28], %r11;
	mov.u64 %rd7, g[7];
	ld.global.u32 %r11, [%rd7];
	st.global.u32 [%rd1+32], %r11;
	mov.u32 %r1, 41;
	st.shared.u32 local0[%r5+8], %r1;
	ld.shared.u32 %r11, local0[10];
	st.global.u32 [%rd1+36], %r11;
	ld.shared.u32 %r11, local0[%r5+8];
	st.global.u32 [%rd1+40], %r11;
	ret;
}
)";
  auto w = runWords(text, 11);
  ASSERT_EQ(w.size(), 11u);
  EXPECT_EQ(w[0], 12u);  // local0[3] is 12 bytes in
  EXPECT_EQ(w[1], 7u);   // stored through local0[3]
  EXPECT_EQ(w[2], 15u);  // g[5]
  EXPECT_EQ(w[3], 12u);  // g[%r5]
  EXPECT_EQ(w[4], 15u);  // g[%r5+3]
  EXPECT_EQ(w[5], 11u);  // g[%rd5-1]
  EXPECT_EQ(w[6], 6u);   // half0[%r5+1]: 3 elements of 2 bytes
  EXPECT_EQ(w[7], 7u);   // cvta of local0[3]
  EXPECT_EQ(w[8], 17u);  // mov of g[7]
  EXPECT_EQ(w[9], 41u);  // st.shared local0[%r5+8] is local0[10]
  EXPECT_EQ(w[10], 41u);
}

// set/setp on halves and pairs, as cuda_fp16.hpp/cuda_bf16.hpp emit them (__heq2, __hltu2_mask, __hisnan, ...):
// true is 1.0 in an f16/bf16 destination's format, all ones in an integer one, per half for pairs (PTX ISA).
TEST(PtxCompat, HalfPrecisionSetAndSetp) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b16 %h<12>;
	.reg .pred %p<6>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	// f16 pairs: a = {lo 1.0, hi NaN}, b = {lo 2.0, hi 1.0}
	mov.b32 %r1, 0x7E003C00;
	mov.b32 %r2, 0x3C004000;
	set.lt.f16x2.f16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1], %r3;
	set.ltu.f16x2.f16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+4], %r3;
	set.ltu.u32.f16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+8], %r3;
	set.eq.s32.f16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+12], %r3;
	set.nan.f16x2.f16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+16], %r3;
	mov.b32 {%h1, %h2}, %r1;
	mov.b32 {%h3, %h4}, %r2;
	set.lt.f16.f16 %h5, %h1, %h3;
	st.global.u16 [%rd1+20], %h5;
	set.nan.f16.f16 %h5, %h2, %h3;
	st.global.u16 [%rd1+22], %h5;
	set.lt.u32.f16 %r3, %h1, %h3;
	st.global.u32 [%rd1+24], %r3;
	set.gt.u16.f16 %h5, %h1, %h3;
	st.global.u16 [%rd1+28], %h5;
	set.le.u16.f16 %h5, %h1, %h3;
	st.global.u16 [%rd1+30], %h5;
	// bf16 pairs: a = {lo 1.0, hi NaN}, b = {lo 2.0, hi 1.0}
	mov.b32 %r4, 0x7FC03F80;
	mov.b32 %r5, 0x3F804000;
	set.lt.bf16x2.bf16x2 %r3, %r4, %r5;
	st.global.u32 [%rd1+32], %r3;
	set.ltu.u32.bf16x2 %r3, %r4, %r5;
	st.global.u32 [%rd1+36], %r3;
	mov.b32 {%h6, %h7}, %r4;
	set.nan.bf16.bf16 %h5, %h7, %h6;
	st.global.u16 [%rd1+40], %h5;
	set.lt.bf16.bf16 %h5, %h6, %h7;
	st.global.u16 [%rd1+42], %h5;
	// .ftz: the f16 subnormal 0x0001 equals zero
	mov.b16 %h8, 0x0001;
	mov.b16 %h9, 0x8000;
	set.eq.f16.f16 %h5, %h8, %h9;
	st.global.u16 [%rd1+44], %h5;
	set.eq.ftz.f16.f16 %h5, %h8, %h9;
	st.global.u16 [%rd1+46], %h5;
	// setp on pairs: p|q are the low and high halves' results; combined with c
	setp.lt.f16x2 %p1|%p2, %r1, %r2;
	selp.u32 %r6, 1, 0, %p1;
	selp.u32 %r7, 2, 0, %p2;
	or.b32 %r6, %r6, %r7;
	st.global.u32 [%rd1+48], %r6;
	setp.eq.f16 %p3, %h1, %h1;
	setp.ltu.or.bf16x2 %p1|%p2, %r4, %r5, !%p3;
	selp.u32 %r6, 1, 0, %p1;
	selp.u32 %r7, 2, 0, %p2;
	or.b32 %r6, %r6, %r7;
	st.global.u32 [%rd1+52], %r6;
	set.lt.and.f16x2.f16x2 %r3, %r1, %r2, !%p3;
	st.global.u32 [%rd1+56], %r3;
	setp.eq.ftz.f16 %p4, %h8, %h9;
	selp.u32 %r6, 1, 0, %p4;
	st.global.u32 [%rd1+60], %r6;
	ret;
}
)";
  auto w = runWords(text, 16);
  ASSERT_EQ(w.size(), 16u);
  EXPECT_EQ(w[0], 0x00003C00u);
  EXPECT_EQ(w[1], 0x3C003C00u);
  EXPECT_EQ(w[2], 0xFFFFFFFFu);
  EXPECT_EQ(w[3], 0x00000000u);
  EXPECT_EQ(w[4], 0x3C000000u);
  EXPECT_EQ(w[5], 0x3C003C00u);  // set.nan (hi NaN) : set.lt (1 < 2)
  EXPECT_EQ(w[6], 0xFFFFFFFFu);
  EXPECT_EQ(w[7], 0xFFFF0000u);  // set.le.u16 : set.gt.u16
  EXPECT_EQ(w[8], 0x00003F80u);
  EXPECT_EQ(w[9], 0xFFFFFFFFu);
  EXPECT_EQ(w[10], 0x00003F80u);  // set.lt.bf16 (1.0 < NaN: false) : set.nan
  EXPECT_EQ(w[11], 0x3C000000u);  // ftz: equal; without: not
  EXPECT_EQ(w[12], 1u);
  EXPECT_EQ(w[13], 3u);  // ltu: lo 1 < 2, hi unordered; .or with !%p3 (false)
  EXPECT_EQ(w[14], 0u);
  EXPECT_EQ(w[15], 1u);
}

// A kernel in the dialect of CUDA 4 era PTX (`.version 1.4`, `.target sm_10, map_f64_to_f32`, 16-bit special
// register moves, no .address_size): it loads, and its .f64 arithmetic runs in f32 on the low half of 64-bit
// storage (the .f64 parameter carries a float in its low 4 bytes), as the PTX ISA specifies for map_f64_to_f32.
TEST(PtxCompat, LegacyPtx14WithMapF64ToF32) {
  std::string text = ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/legacy_vecadd_ptx14.ptx");
  CompileResult cr = compile(text);
  ASSERT_TRUE(cr.program) << cr.error;
  const int n = 300;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.1f * float(i);
    b[i] = 1.0f / float(i + 1);
  }
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  float* dc = arena().alloc<float>(n);
  int kernel = findKernel(*cr.program, "_Z6VecAddPKfS0_Pfid");
  ASSERT_GE(kernel, 0);
  const KernelInfo& info = kernels(*cr.program)[size_t(kernel)];
  ASSERT_EQ(info.params.size(), 5u);
  EXPECT_EQ(info.params[4].size, 8u);  // .f64 storage stays 64 bits
  const float scale = 1.5f;
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &scale, 4);
  Params p(info);
  p.arg(da).arg(db).arg(dc).arg(int32_t(n)).arg(uint64_t(scaleBits) | (uint64_t(0xdeadbeef) << 32));
  LaunchParams lp = ptxtest::launchParams(Dim3{3}, Dim3{128}, p, arena());
  LaunchResult r = launch(*cr.program, kernel, lp);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (int i = 0; i < n; ++i) ASSERT_EQ(dc[i], (a[i] + b[i]) * scale) << "element " << i;
}

// Every PTX version from 1.4 and every .target the driver JIT-compiles (with the texmode/debug options) loads.
TEST(PtxCompat, OldAndNewTargetsLoad) {
  struct Case {
    const char* version;
    const char* target;
  };
  const Case cases[] = {
      {"1.4", "sm_10"},   {"1.4", "sm_10, map_f64_to_f32"},
      {"1.4", "sm_11"},   {"1.4", "sm_12"},
      {"1.5", "sm_13"},   {"1.4", "sm_13, texmode_unified"},
      {"2.0", "sm_20"},   {"2.3", "sm_21, texmode_independent"},
      {"3.0", "sm_30"},   {"3.0", "sm_20, debug"},
      {"3.1", "sm_35"},   {"4.0", "sm_32"},
      {"4.1", "sm_37"},   {"4.0", "sm_50"},
      {"4.1", "sm_52"},   {"4.2", "sm_53"},
      {"5.0", "sm_60"},   {"5.0", "sm_61"},
      {"5.0", "sm_62"},   {"6.0", "sm_70"},
      {"6.1", "sm_72"},   {"6.3", "sm_75"},
      {"7.0", "sm_80"},   {"7.1", "sm_86"},
      {"7.4", "sm_87"},   {"7.8", "sm_89"},
      {"7.8", "sm_90"},   {"8.0", "sm_90a"},
      {"8.6", "sm_100a"}, {"8.8", "sm_100f"},
      {"8.6", "sm_101"},  {"8.8", "sm_103"},
      {"9.0", "sm_110"},  {"8.7", "sm_120"},
      {"8.8", "sm_121"},  {"9.0", "sm_121a"},
      {"9.0", "sm_10"},   {"2.3", "sm_20"},
  };
  for (const Case& c : cases) {
    std::string text = std::string(".version ") + c.version + "\n.target " + c.target + R"(
.entry k (.param .u64 out)
{
	.reg .u16 %rh<3>;
	.reg .u32 %r<4>;
	.reg .u64 %rd<3>;
	mov.u16 %rh1, %ntid.x;
	cvt.u32.u16 %r1, %rh1;
	cvt.u32.u16 %r2, %tid.x;
	add.u32 %r3, %r1, %r2;
	ld.param.u64 %rd1, [out];
	st.global.u32 [%rd1+0], %r3;
	exit;
}
)";
    auto w = runWords(text, 1, Dim3{5});
    ASSERT_EQ(w.size(), 1u) << c.version << " " << c.target;
    EXPECT_GE(w[0], 5u) << c.version << " " << c.target;
  }
}

namespace {
// Kernel k(out, in): `body` reads through %rd2 (= in) and writes through %rd1 (= out); `in` is a 28-byte buffer of
// floats 1..7 that ends where memory ends. Returns the launch result and the first 4 words of out.
LaunchResult runOn28ByteBuffer(const std::string& body, std::vector<float>& outWords,
                               const std::string& target = "sm_90", const std::string& version = "8.3") {
  std::string text = header(target, version) + R"(
.visible .entry k(.param .u64 out, .param .u64 in)
{
	.reg .b64 %rd<3>;
	.reg .f32 %f<5>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
)" + body + R"(
	ret;
}
)";
  CompileResult cr = compile(text);
  if (!cr.program) {
    ADD_FAILURE() << cr.error;
    return {};
  }
  float* in = arena().alloc<float>(7);
  for (int i = 0; i < 7; ++i) in[i] = float(i + 1);
  arena().limit(in, 28);
  float* out = arena().alloc<float>(4);
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(out).arg(in);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{1}, p, arena());
  LaunchResult r = launch(*cr.program, kernel, lp);
  outWords.assign(out, out + 4);
  return r;
}
}  // namespace

// NVRTC 13 widens loads and marks the bytes it does not need: `.pragma "used_bytes_mask 3855"` before a 16-byte
// load at offset 16 of a 28-byte buffer uses bytes 0-3 and 8-11 only; the 4 bytes past the end must not fault.
TEST(PtxCompat, UsedBytesMaskLoadDoesNotFaultOnUnusedBytes) {
  std::vector<float> out;
  LaunchResult r = runOn28ByteBuffer(R"(
	.pragma "used_bytes_mask 3855";
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];
	st.global.f32 [%rd1], %f1;
	st.global.f32 [%rd1+4], %f3;
	st.global.f32 [%rd1+8], %f2;
)",
                                     out);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 7.0f);
  EXPECT_EQ(out[2], 6.0f);  // unused but mapped: what is there
  // A byte the mask uses is checked as always.
  r = runOn28ByteBuffer(R"(
	.pragma "used_bytes_mask 0xf0ff";
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];
	st.global.f32 [%rd1], %f1;
)",
                        out);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  // Without the pragma the same load faults.
  r = runOn28ByteBuffer(R"(
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];
	st.global.f32 [%rd1], %f1;
)",
                        out);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  // Generic addressing, and a 64-bit pair.
  r = runOn28ByteBuffer(R"(
	.reg .b64 %x<3>;
	.pragma "used_bytes_mask 0xf";
	ld.v2.u64 {%x1, %x2}, [%rd2+16];
	st.global.u64 [%rd1], %x1;
)",
                        out);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[1], 6.0f);
}

// `.align N` on .local and .shared data: the generic address of every thread's copy is a multiple of N (an H100
// gives a `.local .align 256` array 256: measured, every thread's cvta'd address % 256 == 0), in callees too.
TEST(PtxCompat, LocalAndSharedAlignmentIsHonoured) {
  std::string text = header() + R"(
.func (.param .b64 r) callee()
{
	.local .align 4 .b8 pad[4];
	.local .align 512 .b8 deep[24];
	.reg .b64 %q<3>;
	mov.u64 %q1, deep;
	cvta.local.u64 %q2, %q1;
	st.param.b64 [r], %q2;
	ret;
}
.visible .entry k(.param .u64 out)
{
	.local .align 8 .b8 small[12];
	.local .align 256 .b8 big[40];
	.shared .align 4 .b8 s0[4];
	.shared .align 1024 .b8 s1[16];
	.reg .b32 %r<4>;
	.reg .b64 %rd<12>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 16;
	add.u64 %rd3, %rd1, %rd2;
	mov.u64 %rd4, big;
	cvta.local.u64 %rd5, %rd4;
	rem.u64 %rd6, %rd5, 256;
	st.global.u32 [%rd3], %rd6;
	mov.u64 %rd7, s1;
	cvta.shared.u64 %rd8, %rd7;
	rem.u64 %rd9, %rd8, 1024;
	st.global.u32 [%rd3+4], %rd9;
	{
	.param .b64 ret0;
	call.uni (ret0), callee, ();
	ld.param.b64 %rd10, [ret0];
	}
	rem.u64 %rd11, %rd10, 512;
	st.global.u32 [%rd3+8], %rd11;
	mov.u64 %rd4, small;
	cvta.local.u64 %rd5, %rd4;
	rem.u64 %rd6, %rd5, 8;
	st.global.u32 [%rd3+12], %rd6;
	ret;
}
)";
  auto w = runWords(text, 4 * 70, Dim3{70}, Dim3{2}, 0xffffffffu);
  ASSERT_EQ(w.size(), 4u * 70);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(w[i], 0u) << "thread " << i / 4 << " check " << i % 4;
}

// A 32-bit address register plus an offset is a 32-bit address: the sum wraps modulo 2^32. cuBLAS's transpose
// kernels (compute_120 PTX, run on the gb10 profile by CuPy's asfortranarray) store to [%r+8320] with %r below their
// shared array; without the wrap the address left the shared window and the launch faulted.
TEST(PtxCompat, ThirtyTwoBitAddressPlusOffsetWraps) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.shared .align 8 .b8 cs[64];
	.reg .b32 %r<12>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, cs;
	sub.u32 %r2, %r1, 1048576;
	mov.u32 %r3, 7;
	st.shared.u32 [%r2+1048580], %r3;
	mov.u32 %r4, 9;
	mov.u32 %r5, 11;
	st.shared.v2.u32 [%r2+1048584], {%r4, %r5};
	atom.shared.add.u32 %r6, [%r2+1048580], 100;
	ld.shared.u32 %r7, [%r1+4];
	ld.shared.v2.u32 {%r8, %r9}, [%r2+1048584];
	st.global.u32 [%rd1], %r6;
	st.global.u32 [%rd1+4], %r7;
	st.global.u32 [%rd1+8], %r8;
	st.global.u32 [%rd1+12], %r9;
	ret;
}
)";
  for (const char* target : {"sm_90", "sm_120"}) {
    std::string source = text;
    source.replace(source.find("sm_90"), 5, target);
    source.replace(source.find(".version 8.0"), 12, ".version 8.7");
    auto w = runWords(source, 4);
    ASSERT_EQ(w.size(), 4u) << target;
    EXPECT_EQ(w[0], 7u) << target;    // the atom's old value: the word stored through the wrapped address
    EXPECT_EQ(w[1], 107u) << target;  // cs[1] after the atom
    EXPECT_EQ(w[2], 9u) << target;
    EXPECT_EQ(w[3], 11u) << target;
  }
}

// shfl.sync with source lanes that do not exist (blocks smaller than a warp) or have exited, full and partial
// member masks, every mode and width: each line an H100 recorded (tools/gpu-probe/clients17.cpp, shflPtx(); thread
// t holds 100*t+7 and writes value/predicate; 3735928559 = the thread exited before writing) is reproduced.
TEST(PtxCompat, ShflWithMissingLanesMatchesH100) {
  std::string ptx = ".version 8.0\n.target sm_75\n.address_size 64\n";
  for (const char* mode : {"up", "down", "bfly", "idx"}) {
    ptx += std::string(".visible .entry shfl_") + mode +
           "(.param .u64 out, .param .u32 b, .param .u32 c, .param .u32 mask, .param .u32 exitFrom)\n{\n"
           "  .reg .pred %p<3>;\n  .reg .b32 %r<10>;\n  .reg .b64 %rd<4>;\n"
           "  mov.u32 %r1, %tid.x;\n  ld.param.u32 %r2, [exitFrom];\n  setp.ge.u32 %p1, %r1, %r2;\n  @%p1 ret;\n"
           "  mad.lo.u32 %r3, %r1, 100, 7;\n  ld.param.u32 %r4, [b];\n  ld.param.u32 %r5, [c];\n"
           "  ld.param.u32 %r6, [mask];\n"
           "  shfl.sync." +
           std::string(mode) +
           ".b32 %r7|%p2, %r3, %r4, %r5, %r6;\n"
           "  selp.u32 %r8, 1, 0, %p2;\n"
           "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 8;\n  add.s64 %rd3, %rd1, %rd2;\n"
           "  st.global.v2.u32 [%rd3], {%r7, %r8};\n  ret;\n}\n";
  }
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  std::istringstream results(
      ptxtest::readFile(std::string(CUEMU_GPU_PROBE_RESULTS) + "/clients17-h100-2026-11-26.txt"));
  std::string line;
  int checked = 0;
  auto* out = arena().alloc<uint32_t>(128);
  while (std::getline(results, line)) {
    if (line.rfind("shfl ", 0) != 0) continue;
    std::istringstream in(line);
    std::string word, mode;
    uint32_t b = 0, c = 0, mask = 0, threads = 0, exitFrom = 0;
    in >> word >> mode >> word >> b >> word >> std::hex >> c >> word >> mask >> std::dec >> word >> threads >> word >>
        exitFrom >> word >> word;
    ASSERT_EQ(word, "0:") << line;
    int kernel = findKernel(*cr.program, "shfl_" + mode);
    ASSERT_GE(kernel, 0) << line;
    for (int i = 0; i < 128; ++i) out[i] = 0xdeadbeefu;
    Params p(kernels(*cr.program)[size_t(kernel)]);
    p.arg(out).arg(b).arg(c).arg(mask).arg(exitFrom);
    LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{threads}, p, arena());
    LaunchResult r = launch(*cr.program, kernel, lp);
    ASSERT_TRUE(r.ok()) << line << ": " << r.fault.message;
    std::string got;
    for (uint32_t t = 0; t < threads && t < 64; ++t)
      got += " " + std::to_string(out[2 * t]) + "/" + std::to_string(out[2 * t + 1]);
    EXPECT_EQ(got, line.substr(line.find(':') + 1)) << line.substr(0, line.find(':'));
    ++checked;
  }
  EXPECT_EQ(checked, 68);
}

// add/min/max on .u16x2/.s16x2 (sm_90: device_functions.h's __vadd2, __vmins2, __vmaxs2 ... emit them; a module
// with one did not load): each half on its own, add wrapping, .relu clamping negative halves to 0.
TEST(PtxCompat, PackedSixteenBitIntegerArithmetic) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 0x8001FFFF;
	mov.b32 %r2, 0x7FFF0002;
	add.u16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1], %r3;
	add.s16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+4], %r3;
	min.u16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+8], %r3;
	max.u16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+12], %r3;
	min.s16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+16], %r3;
	max.s16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+20], %r3;
	min.relu.s16x2 %r3, %r1, %r2;
	st.global.u32 [%rd1+24], %r3;
	max.relu.s16x2 %r3, %r1, %r1;
	st.global.u32 [%rd1+28], %r3;
	ret;
}
)";
  auto w = runWords(text, 8);
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(w[0], 0x00000001u);
  EXPECT_EQ(w[1], 0x00000001u);
  EXPECT_EQ(w[2], 0x7FFF0002u);
  EXPECT_EQ(w[3], 0x8001FFFFu);
  EXPECT_EQ(w[4], 0x8001FFFFu);
  EXPECT_EQ(w[5], 0x7FFF0002u);
  EXPECT_EQ(w[6], 0x00000000u);
  EXPECT_EQ(w[7], 0x00000000u);
}

// Forms the header sweep (tools/ptx-sweep) found loading but failing at launch: cuda_fp8.hpp's f16x2 <-> fp8x2
// conversions, cuda_bf16.hpp's `mov.b16 %rs, {b8, 0}` and sm_70's 16-bit atomicCAS. Values by the PTX ISA and
// the OCP FP8 formats (e4m3: bias 7, max 448, NaN S.1111.111; e5m2: bias 15, max 57344).
TEST(PtxCompat, HeaderSweepConversionsPacksAndCas16) {
  std::string text = header() + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b8 %c<3>;
	.reg .b16 %h<4>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 0x3C00C000;
	cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1;
	st.global.u16 [%rd1], %h1;
	cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r1;
	st.global.u16 [%rd1+2], %h1;
	mov.b32 %r1, 0x7BFF7C00;
	cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1;
	st.global.u16 [%rd1+4], %h1;
	cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r1;
	st.global.u16 [%rd1+6], %h1;
	mov.b16 %h2, 0x38C0;
	cvt.rn.f16x2.e4m3x2 %r2, %h2;
	st.global.u32 [%rd1+8], %r2;
	mov.b16 %h2, 0x017F;
	cvt.rn.f16x2.e4m3x2 %r2, %h2;
	st.global.u32 [%rd1+12], %r2;
	mov.b16 %h2, 0x3CC0;
	cvt.rn.f16x2.e5m2x2 %r2, %h2;
	st.global.u32 [%rd1+16], %r2;
	mov.b16 %h2, 0x38C0;
	cvt.rn.relu.f16x2.e4m3x2 %r2, %h2;
	st.global.u32 [%rd1+20], %r2;
	mov.b16 %h3, 0x3412;
	mov.b16 {%c1, %c2}, %h3;
	mov.b16 %h3, {%c2, 0};
	st.global.u16 [%rd1+24], %h3;
	mov.b16 %h3, 0x1234;
	st.global.u16 [%rd1+28], %h3;
	mov.b16 %h2, 0x5678;
	st.global.u16 [%rd1+30], %h2;
	atom.global.cas.b16 %h1, [%rd1+28], %h3, 0xBEEF;
	st.global.u16 [%rd1+26], %h1;
	ret;
}
)";
  auto w = runWords(text, 8);
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(w[0], 0x3CC038C0u);  // e5m2x2 : e4m3x2 of {1.0, -2.0}
  EXPECT_EQ(w[1], 0x7B7B7E7Eu);  // satfinite of {65504, inf}
  EXPECT_EQ(w[2], 0x3C00C000u);
  EXPECT_EQ(w[3], 0x18007FFFu);  // e4m3 subnormal 2^-9, NaN
  EXPECT_EQ(w[4], 0x3C00C000u);
  EXPECT_EQ(w[5], 0x3C000000u);  // .relu
  EXPECT_EQ(w[6], 0x12340034u);  // cas returned the old 0x1234 : {0x34, 0}
  EXPECT_EQ(w[7], 0x5678BEEFu);  // swapped, the neighbour untouched
}

// sm_100's add/sub/mul/fma on .f32x2 (sm_100_rt.h's __fadd2_rn & co., found by the header sweep): the f32
// operation with its rounding mode on each half of a 64-bit register.
TEST(PtxCompat, PairedSinglePrecisionArithmetic) {
  std::string text = header("sm_100a", "8.6") + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	mov.b64 %rd2, 0xC00000003FC00000;
	mov.b64 %rd3, 0x404000003E800000;
	add.rn.f32x2 %rd4, %rd2, %rd3;
	st.global.u64 [%rd1], %rd4;
	sub.f32x2 %rd4, %rd2, %rd3;
	st.global.u64 [%rd1+8], %rd4;
	mul.rz.f32x2 %rd4, %rd2, %rd3;
	st.global.u64 [%rd1+16], %rd4;
	fma.rn.f32x2 %rd4, %rd2, %rd3, %rd2;
	st.global.u64 [%rd1+24], %rd4;
	mov.b64 %rd5, 0x3F8000003F800000;
	mov.b64 %rd6, 0x3300000133000001;
	add.rp.f32x2 %rd7, %rd5, %rd6;
	st.global.u64 [%rd1+32], %rd7;
	add.rn.f32x2 %rd7, %rd5, %rd6;
	st.global.u64 [%rd1+40], %rd7;
	ret;
}
)";
  auto w = runWords(text, 12);
  ASSERT_EQ(w.size(), 12u);
  EXPECT_EQ(w[0], bitsOf(1.75f));
  EXPECT_EQ(w[1], bitsOf(1.0f));
  EXPECT_EQ(w[2], bitsOf(1.25f));
  EXPECT_EQ(w[3], bitsOf(-5.0f));
  EXPECT_EQ(w[4], bitsOf(0.375f));
  EXPECT_EQ(w[5], bitsOf(-6.0f));
  EXPECT_EQ(w[6], bitsOf(1.875f));
  EXPECT_EQ(w[7], bitsOf(-8.0f));
  EXPECT_EQ(w[8], 0x3F800001u);  // rounded up, each half
  EXPECT_EQ(w[9], 0x3F800001u);
  EXPECT_EQ(w[10], 0x3F800000u);  // to nearest
  EXPECT_EQ(w[11], 0x3F800000u);
}

// sm_100's mixed-precision add/sub/fma.f32.{f16,bf16} (XLA's fused kernels for f16/bf16 data, LLVM folding
// cvt.f32.f16 into the f32 operation): a (and b) widened exactly, then one .f32 operation with its rounding and .sat;
// .f16 subnormals become normal .f32 values, .bf16 subnormals stay (no .ftz). A mul.f32 whose product such an add
// takes is not contracted into an fma with the 16-bit operand.
TEST(PtxCompat, MixedPrecisionArithmetic) {
  std::string text = header("sm_100a", "8.6") + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b16 %h<8>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b16 %h1, 0x3E00;
	mov.b32 %r1, 0f3E800000;
	add.rn.f32.f16 %r2, %h1, %r1;
	sub.rn.f32.f16 %r3, %h1, %r1;
	mov.b16 %h2, 0xC040;
	add.rz.f32.bf16 %r4, %h2, %r1;
	mov.b16 %h3, 0x4000;
	fma.rn.f32.f16 %r5, %h1, %h3, %r1;
	st.global.v4.b32 [%rd1], {%r2, %r3, %r4, %r5};
	mov.b16 %h4, 0x3C00;
	mov.b32 %r6, 0f33000001;
	add.rp.f32.f16 %r7, %h4, %r6;
	add.f32.f16 %r8, %h4, %r6;
	add.rn.sat.f32.f16 %r9, %h1, %r1;
	mov.b16 %h5, 0x7E00;
	sub.sat.f32.f16 %r10, %h5, %r1;
	st.global.v4.b32 [%rd1+16], {%r7, %r8, %r9, %r10};
	mov.b16 %h6, 0x0001;
	add.f32.f16 %r11, %h6, 0f00000000;
	add.f32.bf16 %r12, %h6, 0f00000000;
	mov.b32 %r13, 0f40400000;
	mul.f32 %r14, %r13, 0f3F000000;
	add.f32.f16 %r15, %h1, %r14;
	fma.rm.sat.f32.bf16 %r13, %h2, %h2, %r1;
	st.global.v4.b32 [%rd1+32], {%r11, %r12, %r15, %r13};
	ret;
}
)";
  auto w = runWords(text, 12);
  ASSERT_EQ(w.size(), 12u);
  EXPECT_EQ(w[0], bitsOf(1.75f));   // f16 1.5 + 0.25
  EXPECT_EQ(w[1], bitsOf(1.25f));   // f16 1.5 - 0.25
  EXPECT_EQ(w[2], bitsOf(-2.75f));  // bf16 -3 + 0.25
  EXPECT_EQ(w[3], bitsOf(3.25f));   // 1.5 * 2 + 0.25
  EXPECT_EQ(w[4], 0x3F800001u);     // 1 + 2^-25(1 + 2^-23) rounded up
  EXPECT_EQ(w[5], 0x3F800000u);     // to nearest (the default)
  EXPECT_EQ(w[6], bitsOf(1.0f));    // .sat
  EXPECT_EQ(w[7], 0u);              // .sat: NaN gives +0
  EXPECT_EQ(w[8], 0x33800000u);     // f16 2^-24: normal in f32
  EXPECT_EQ(w[9], 0x00010000u);     // bf16 0x0001 (an f32 subnormal) kept
  EXPECT_EQ(w[10], bitsOf(3.0f));   // 1.5 + 3 * 0.5, not fused with the f16 operand
  EXPECT_EQ(w[11], bitsOf(1.0f));   // (-3)(-3) + 0.25 saturated
}

// sm_100's three-input min/max.f32 (PTX ISA 8.8): XLA's reductions take the min of three loaded values in one
// instruction (JAX's jnp.any(v <= 0) missed every third and fourth element of a v4 load: cuemu took two sources).
// NaN sources are passed over unless .NaN, .abs takes magnitudes, -0 is below +0.
TEST(PtxCompat, ThreeInputMinMax) {
  std::string text = header("sm_100a", "8.8") + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<24>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 0f40400000;
	mov.b32 %r2, 0f3F800000;
	mov.b32 %r3, 0fC0A00000;
	min.f32 %r4, %r1, %r2, %r3;
	max.f32 %r5, %r3, %r2, %r1;
	max.f32 %r6, %r2, %r3, %r3;
	mov.b32 %r7, 0f7FC00000;
	min.f32 %r8, %r7, %r1, %r2;
	min.NaN.f32 %r9, %r1, %r2, %r7;
	st.global.v4.b32 [%rd1], {%r4, %r5, %r6, %r8};
	mov.b32 %r10, 0fC0E00000;
	max.abs.f32 %r11, %r2, %r10, %r3;
	min.abs.f32 %r12, %r10, %r3, %r1;
	mov.b32 %r13, 0f00000000;
	mov.b32 %r14, 0f80000000;
	min.f32 %r15, %r13, %r13, %r14;
	st.global.v4.b32 [%rd1+16], {%r9, %r11, %r12, %r15};
	max.f32 %r16, %r14, %r14, %r13;
	max.f32 %r17, %r7, %r7, %r7;
	max.NaN.f32 %r18, %r7, %r1, %r2;
	min.f32 %r19, %r1, 0f41200000, 0fBF800000;
	st.global.v4.b32 [%rd1+32], {%r16, %r17, %r18, %r19};
	ret;
}
)";
  auto w = runWords(text, 12);
  ASSERT_EQ(w.size(), 12u);
  EXPECT_EQ(w[0], bitsOf(-5.0f));  // the third source is the least
  EXPECT_EQ(w[1], bitsOf(3.0f));   // the third source is the greatest
  EXPECT_EQ(w[2], bitsOf(1.0f));
  EXPECT_EQ(w[3], bitsOf(1.0f));    // a NaN source passed over
  EXPECT_EQ(w[4], 0x7FFFFFFFu);     // .NaN
  EXPECT_EQ(w[5], bitsOf(7.0f));    // .abs
  EXPECT_EQ(w[6], bitsOf(3.0f));    // .abs
  EXPECT_EQ(w[7], 0x80000000u);     // -0 < +0
  EXPECT_EQ(w[8], 0x00000000u);     // +0 > -0
  EXPECT_EQ(w[9], 0x7FFFFFFFu);     // all NaN
  EXPECT_EQ(w[10], 0x7FFFFFFFu);    // .NaN
  EXPECT_EQ(w[11], bitsOf(-1.0f));  // immediate sources
}

// `_` among the values of a 256-bit store (LLVM's undefined elements; XLA's st.global.v8.b32 of six values, JAX's
// jnp.cross faulted with "unsupported source operand"): those elements are not written, as ptxas masks them out of
// the store (sm_100a SASS: STG.E.ENL2.256 with the element mask 0x3f).
TEST(PtxCompat, SinkInAStoredVectorIsNotWritten) {
  std::string text = header("sm_100a", "8.8") + R"(
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 11;
	mov.b32 %r2, 22;
	st.global.v8.b32 [%rd1], {%r2, %r1, %r1, %r2, %r1, %r2, _, _};
	st.global.v8.b32 [%rd1+32], {_, %r1, _, %r2, _, _, _, %r1};
	ret;
}
)";
  auto w = runWords(text, 16, Dim3{1}, Dim3{1}, 0xAAAAAAAAu);
  ASSERT_EQ(w.size(), 16u);
  const uint32_t u = 0xAAAAAAAAu;
  EXPECT_EQ(w, (std::vector<uint32_t>{22, 11, 11, 22, 11, 22, u, u, u, 11, u, 22, u, u, u, 11}));
}

// The three-input forms need sm_100 and PTX ISA 8.8, take .f32 only and no .xorsign.
TEST(PtxCompat, ThreeInputMinMaxIsCheckedByTheFrontEnd) {
  auto body = [](const char* inst) { return kernelOfOne("\t.reg .b64 %rd<4>;\n", inst); };
  EXPECT_TRUE(compile(header("sm_100a", "8.8") + body("max.NaN.abs.f32 %r1, %r1, %r2, %r3;")).program);
  EXPECT_TRUE(compile(header("sm_120", "8.8") + body("min.ftz.f32 %r1, %r1, %r2, %r3;")).program);
  for (const char* bad :
       {"min.xorsign.abs.f32 %r1, %r1, %r2, %r3;", "min.f64 %rd1, %rd1, %rd2, %rd3;", "max.s32 %r1, %r1, %r2, %r3;"}) {
    CompileResult cr = compile(header("sm_100a", "8.8") + body(bad));
    EXPECT_FALSE(cr.program) << bad;
  }
  CompileResult old = compile(header("sm_90", "8.8") + body("min.f32 %r1, %r1, %r2, %r3;"));
  EXPECT_FALSE(old.program);
  EXPECT_NE(old.error.find("sm_100"), std::string::npos) << old.error;
  CompileResult isa = compile(header("sm_100a", "8.7") + body("min.f32 %r1, %r1, %r2, %r3;"));
  EXPECT_FALSE(isa.program);
}

// The mixed-precision forms need sm_100 and PTX ISA 8.6, and take no .ftz.
TEST(PtxCompat, MixedPrecisionArithmeticIsCheckedByTheFrontEnd) {
  auto body = [](const char* inst) { return kernelOfOne("\t.reg .b16 %h<2>;\n", inst); };
  EXPECT_TRUE(compile(header("sm_100a", "8.6") + body("add.rn.f32.f16 %r1, %h1, %r2;")).program);
  EXPECT_TRUE(compile(header("sm_120", "8.7") + body("fma.rn.f32.bf16 %r1, %h1, %h1, %r2;")).program);
  for (const char* bad :
       {"add.rn.f32.f16 %r1, %r2, %r2;", "add.ftz.f32.f16 %r1, %h1, %r2;", "fma.rn.f32.f16 %r1, %h1, %r2, %r2;",
        "add.f16.f32 %h1, %h1, %r2;", "fma.f32.f16 %r1, %h1, %h1, %r2;"}) {
    CompileResult cr = compile(header("sm_100a", "8.6") + body(bad));
    EXPECT_FALSE(cr.program) << bad;
  }
  CompileResult old = compile(header("sm_90", "8.6") + body("sub.rn.f32.bf16 %r1, %h1, %r2;"));
  EXPECT_FALSE(old.program);
  EXPECT_NE(old.error.find("sm_100"), std::string::npos) << old.error;
}

// Warp collectives whose lanes name different member groups in one instruction, as cooperative groups'
// labeled_partition does (NVIDIA's warpAggregatedAtomicsCG sample: match.any.sync gives each lane its group, then
// redux.sync.max over that group): each lane's result covers its own group only. Lane i holds value v(i) and label
// i % 3; the group of lane i is every lane with its label.
TEST(PtxCompat, CollectivesOverPerLaneMemberGroups) {
  const char* ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %laneid;
  rem.u32 %r2, %r1, 3;
  mul.lo.u32 %r3, %r1, 2654435761;
  shr.u32 %r3, %r3, 8;
  activemask.b32 %r4;
  match.any.sync.b32 %r5, %r2, %r4;
  redux.sync.max.s32 %r6, %r3, %r5;
  redux.sync.add.u32 %r7, %r1, %r5;
  setp.lt.u32 %p1, %r1, 16;
  vote.sync.ballot.b32 %r8, %p1, %r5;
  vote.sync.all.pred %p2, %p1, %r5;
  selp.u32 %r9, 1, 0, %p2;
  match.all.sync.b32 %r10|%p3, %r2, %r5;
  selp.u32 %r11, 1, 0, %p3;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 32;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r8};
  st.global.v2.u32 [%rd3+16], {%r9, %r10};
  st.global.u32 [%rd3+24], %r11;
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  auto* out = arena().alloc<uint32_t>(32 * 8);
  Params p(kernels(*cr.program)[0]);
  p.arg(out);
  LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena()));
  ASSERT_TRUE(r.ok()) << r.fault.message;
  auto value = [](uint32_t lane) { return (lane * 2654435761u) >> 8; };
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t group = 0, sum = 0, ballot = 0;
    int32_t max = INT32_MIN;
    for (uint32_t j = 0; j < 32; ++j) {
      if (j % 3 != lane % 3) continue;
      group |= 1u << j;
      sum += j;
      max = std::max(max, int32_t(value(j)));
      if (j < 16) ballot |= 1u << j;
    }
    const uint32_t* o = out + 8 * lane;
    EXPECT_EQ(o[0], group) << "match.any, lane " << lane;
    EXPECT_EQ(int32_t(o[1]), max) << "redux.max.s32 over the group, lane " << lane;
    EXPECT_EQ(o[2], sum) << "redux.add over the group, lane " << lane;
    EXPECT_EQ(o[3], ballot) << "vote.ballot over the group, lane " << lane;
    EXPECT_EQ(o[4], 0u) << "vote.all: no group lies wholly below lane 16, lane " << lane;
    EXPECT_EQ(o[5], group) << "match.all: a group's members share the label, lane " << lane;
    EXPECT_EQ(o[6], 1u) << "match.all's predicate, lane " << lane;
  }
}

// PTX ISA 8.8's 256-bit accesses (.v8 of 32-bit elements, .v4 of 64-bit ones), which XLA writes for compute
// capability 12: every element lands where the ISA puts it, in global and shared memory, read-only loads included.
TEST(PtxCompat, WideVectorAccessesMoveAllThirtyTwoBytes) {
  std::string text = header("sm_120", "8.8") + R"(
.global .align 32 .u32 src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<6>;
	.reg .f32 %f<9>;
	.shared .align 32 .b8 tile[32];
	ld.param.u64 %rd1, [out];
	mov.u64 %rd2, src;
	ld.global.nc.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd2];
	st.global.v8.b32 [%rd1], {%r8, %r7, %r6, %r5, %r4, %r3, %r2, %r1};
	ld.global.v4.b64 {%rd2, %rd3, %rd4, %rd5}, [src];
	st.shared.v4.u64 [tile], {%rd5, %rd4, %rd3, %rd2};
	ld.shared.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [tile];
	st.global.v8.f32 [%rd1+32], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};
	ret;
}
)";
  auto w = runWords(text, 16);
  ASSERT_EQ(w.size(), 16u);
  const uint32_t reversed[8] = {8, 7, 6, 5, 4, 3, 2, 1};
  const uint32_t pairsReversed[8] = {7, 8, 5, 6, 3, 4, 1, 2};  // 64-bit elements of the pairs (1,2) .. (7,8)
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(w[size_t(i)], reversed[i]) << i;
    EXPECT_EQ(w[size_t(8 + i)], pairsReversed[i]) << i;
  }
}

// A 256-bit load is checked as one access: the last four bytes past the buffer fault, unless a used_bytes_mask
// leaves them out.
TEST(PtxCompat, WideLoadFaultsPastTheBufferUnlessItsBytesAreUnused) {
  auto run = [](const std::string& pragma, std::vector<float>& out) {
    return runOn28ByteBuffer("\t.reg .f32 %g<9>;\n" + pragma + R"(
	ld.global.v8.f32 {%g1, %g2, %g3, %g4, %g5, %g6, %g7, %g8}, [%rd2];
	st.global.v4.f32 [%rd1], {%g1, %g3, %g5, %g7};
)",
                             out, "sm_120", "8.8");
  };
  std::vector<float> out;
  EXPECT_EQ(run("", out).fault.kind, FaultKind::IllegalAddress);
  LaunchResult r = run("\t.pragma \"used_bytes_mask 0x0f0f0f0f\";", out);  // elements 0, 2, 4, 6 only
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(out, (std::vector<float>{1, 3, 5, 7}));
}
