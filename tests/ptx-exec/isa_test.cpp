// Instruction semantics checked against what an H200 computes (values from conformance/golden/nvidia-h200.txt and
// the PTX ISA), on small hand-written kernels: one instruction form applied to arrays of operands.
#include "harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <numeric>
#include <set>
#include <cmath>
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

// A kernel `k(a, b, c, d, n)`: thread i loads a[i], b[i], c[i] (types ta/tb/tc), runs `body` (operands %a %b %c,
// result %d of type td) and stores d[i].
struct Form {
  std::string body;
  std::string ta, tb, tc, td;  // register types: b16, b32, b64, f32, f64
  std::string target = "sm_90";
};

unsigned bytesOf(const std::string& t) { return t == "b16" ? 2 : (t == "b64" || t == "f64") ? 8 : 4; }

std::string kernelText(const Form& f) {
  auto ld = [](const std::string& reg, const std::string& t, const char* param) {
    return "\tld.param.u64 %rd1, [" + std::string(param) + "];\n\tcvta.to.global.u64 %rd1, %rd1;\n" +
           "\tmul.wide.u32 %rd2, %r1, " + std::to_string(bytesOf(t)) + ";\n\tadd.u64 %rd1, %rd1, %rd2;\n" +
           "\tld.global." + t + " " + reg + ", [%rd1];\n";
  };
  std::string s = ".version 8.0\n.target " + f.target + "\n.address_size 64\n";
  s += ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)\n{\n";
  s += "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<4>;\n\t.reg .pred %q;\n";
  s += "\t.reg ." + f.ta + " %a;\n\t.reg ." + f.tb + " %b;\n\t.reg ." + f.tc + " %c;\n\t.reg ." + f.td + " %d;\n";
  s += "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmad.lo.u32 %r1, %r2, %r3, %r1;\n";
  s += "\tld.param.u32 %r2, [n];\n\tsetp.ge.u32 %p1, %r1, %r2;\n\t@%p1 bra DONE;\n";
  s += ld("%a", f.ta, "pa") + ld("%b", f.tb, "pb") + ld("%c", f.tc, "pc");
  s += "\t" + f.body + "\n";
  s += "\tld.param.u64 %rd1, [pd];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmul.wide.u32 %rd2, %r1, " +
       std::to_string(bytesOf(f.td)) + ";\n\tadd.u64 %rd1, %rd1, %rd2;\n\tst.global." + f.td + " [%rd1], %d;\n";
  s += "DONE:\n\tret;\n}\n";
  return s;
}

// Runs the form on the operand bit patterns; returns the result bit patterns.
std::vector<uint64_t> run(const Form& f, const std::vector<uint64_t>& a, const std::vector<uint64_t>& b = {},
                          const std::vector<uint64_t>& c = {}) {
  CompileResult cr = compile(kernelText(f));
  if (!cr.program) {
    ADD_FAILURE() << cr.error << "\n" << kernelText(f);
    return {};
  }
  size_t n = a.size();
  auto upload = [&](const std::vector<uint64_t>& v, const std::string& t) {
    unsigned w = bytesOf(t);
    uint8_t* p = arena().alloc<uint8_t>(n * w);
    for (size_t i = 0; i < n; ++i) {
      uint64_t x = i < v.size() ? v[i] : 0;
      std::memcpy(p + i * w, &x, w);
    }
    return p;
  };
  uint8_t *pa = upload(a, f.ta), *pb = upload(b, f.tb), *pc = upload(c, f.tc);
  uint8_t* pd = arena().alloc<uint8_t>(n * 8);
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(pa).arg(pb).arg(pc).arg(pd).arg(uint32_t(n));
  LaunchParams lp = ptxtest::launchParams(Dim3{uint32_t((n + 31) / 32)}, Dim3{32}, p, arena());
  LaunchResult r = launch(*cr.program, kernel, lp);
  EXPECT_TRUE(r.ok()) << r.fault.message;
  std::vector<uint64_t> out(n);
  unsigned w = bytesOf(f.td);
  for (size_t i = 0; i < n; ++i) std::memcpy(&out[i], pd + i * w, w);
  return out;
}

#define EXPECT_BITS(form, inputs, expected, ...)                                                            \
  do {                                                                                                      \
    auto got_ = run(form, inputs, ##__VA_ARGS__);                                                           \
    std::vector<uint64_t> want_ = expected;                                                                 \
    ASSERT_EQ(got_.size(), want_.size());                                                                   \
    for (size_t i_ = 0; i_ < want_.size(); ++i_)                                                            \
      EXPECT_EQ(got_[i_], want_[i_]) << (form).body << " lane " << i_ << std::hex << ": got 0x" << got_[i_] \
                                     << ", want 0x" << want_[i_];                                           \
  } while (0)

using V = std::vector<uint64_t>;

// ---- NaN results ---------------------------------------------------------------------------------------------

TEST(PtxIsa, F64NaNOperandsComeBackQuietedLaterOperandWins) {
  Form add{"add.rn.f64 %d, %a, %b;", "f64", "f64", "b32", "f64"};
  EXPECT_BITS(add, (V{0x7ff8000000000000, 0x0, 0x7ff0000000000000, 0x3ff0000000000000}),
              (V{0x7ff8000000000001, 0x7ff8000000000001, 0xfff8000000000000, 0x7ff8000000000000}),
              V{0x7ff0000000000001, 0x7ff0000000000001, 0xfff0000000000000, 0x7ff8000000000000});
  Form mul{"mul.rz.f64 %d, %a, %b;", "f64", "f64", "b32", "f64"};
  EXPECT_BITS(mul, (V{0x0, 0xc007dee000000000}), (V{0xfff8000000000000, 0x7ffa097da0303ee6}),
              V{0xfff0000000000000, 0x7ffa097da0303ee6});
  // div prefers its first operand
  Form div{"div.rn.f64 %d, %a, %b;", "f64", "f64", "b32", "f64"};
  EXPECT_BITS(div, (V{0x7ff8000000000000, 0x0}), (V{0x7ff8000000000000, 0xfff8000000000000}),
              V{0x7ff0000000000001, 0x0});
  Form fma{"fma.rn.f64 %d, %a, %b, %c;", "f64", "f64", "f64", "f64"};
  EXPECT_BITS(fma, (V{0x7ff0000000000001, 0x7ff8000000000000, 0x0}),
              (V{0x7ff8000000000000, 0x7ff8000000000001, 0x7ff8000000000000}),
              V{0x3ff0000000000000, 0x7ff0000000000001, 0x3ff0000000000000},
              V{0x7ff8000000000000, 0xc004000000000000, 0x7ff8000000000000});
  Form sqrt{"sqrt.rn.f64 %d, %a;", "f64", "b32", "b32", "f64"};
  EXPECT_BITS(sqrt, (V{0xbff0000000000000, 0x7ff0000000000001}), (V{0xfff8000000000000, 0x7ff8000000000001}));
  Form mn{"min.f64 %d, %a, %b;", "f64", "f64", "b32", "f64"};
  EXPECT_BITS(mn, (V{0x7ff8000000000000}), (V{0x7ff8000000000001}), V{0x7ff0000000000001});
}

TEST(PtxIsa, AbsNegOfNaN) {
  EXPECT_BITS((Form{"abs.f32 %d, %a;", "b32", "b32", "b32", "b32"}), (V{0xffc12345, 0x80000001}),
              (V{0x7fffffff, 0x00000001}));
  EXPECT_BITS((Form{"neg.f32 %d, %a;", "b32", "b32", "b32", "b32"}), (V{0x7f800001, 0x3f800000}),
              (V{0x7fffffff, 0xbf800000}));
  EXPECT_BITS((Form{"neg.f64 %d, %a;", "f64", "b32", "b32", "f64"}), (V{0x7ff0000000000001, 0x3ff0000000000000}),
              (V{0x7ff8000000000001, 0xbff0000000000000}));
  EXPECT_BITS((Form{"abs.f64 %d, %a;", "f64", "b32", "b32", "f64"}), (V{0x7ff0000000000001}), (V{0x7ff8000000000001}));
  EXPECT_BITS((Form{"neg.f16 %d, %a;", "b16", "b32", "b32", "b16"}), (V{0xfe12, 0x3c00}), (V{0x7fff, 0xbc00}));
  EXPECT_BITS((Form{"abs.f16 %d, %a;", "b16", "b32", "b32", "b16"}), (V{0x7c01, 0xbc00}), (V{0x7fff, 0x3c00}));
}

TEST(PtxIsa, ConversionNaNsAndSaturation) {
  EXPECT_BITS((Form{"cvt.rzi.s64.f64 %d, %a;", "f64", "b32", "b32", "b64"}),
              (V{0x7ff8000000000000, 0x4000000000000000}), (V{0x8000000000000000, 2}));
  EXPECT_BITS((Form{"cvt.rn.f32.f64 %d, %a;", "f64", "b32", "b32", "b32"}), (V{0x7ff0000000000001}), (V{0x7fc00000}));
  EXPECT_BITS((Form{"cvt.f64.f32 %d, %a;", "b32", "b32", "b32", "f64"}), (V{0xffc12345}), (V{0xfff82468a0000000}));
  EXPECT_BITS((Form{"cvt.f32.bf16 %d, %a;", "b16", "b32", "b32", "b32"}), (V{0x7f81}), (V{0x7f810000}));
  EXPECT_BITS((Form{"cvt.f32.f16 %d, %a;", "b16", "b32", "b32", "b32"}), (V{0xfed4}), (V{0x7fffffff}));
  EXPECT_BITS((Form{"cvt.rn.f16.f64 %d, %a;", "f64", "b32", "b32", "b16"}), (V{0x7ff0000000000001}), (V{0x7e00}));
  EXPECT_BITS((Form{"cvt.rpi.f64.f64 %d, %a;", "f64", "b32", "b32", "f64"}), (V{0x7ff0000000000001}),
              (V{0x7ff8000000000001}));
  // .sat: -0 becomes +0
  EXPECT_BITS((Form{"cvt.sat.f32.f32 %d, %a;", "b32", "b32", "b32", "b32"}), (V{0x80000000, 0x3fc00000}),
              (V{0x0, 0x3f800000}));
  EXPECT_BITS((Form{"mul.rn.sat.f32 %d, %a, %b;", "b32", "b32", "b32", "b32"}), (V{0x80000000}), (V{0x0}),
              V{0x3f800000});
}

TEST(PtxIsa, NarrowConversions) {
  // f16x2: a in the upper half, b in the lower
  EXPECT_BITS((Form{"cvt.rn.f16x2.f32 %d, %a, %b;", "b32", "b32", "b32", "b32"}), (V{0x3f800000}), (V{0x3c00c000}),
              V{0xc0000000});
  EXPECT_BITS((Form{"cvt.rn.relu.f16.f32 %d, %a;", "b32", "b32", "b32", "b16"}),
              (V{0x80000000, 0xbf800000, 0x3f800000}), (V{0x0, 0x0, 0x3c00}));
  // e4m3: 1.0 = 0x38, 448 = 0x7e (satfinite clamps infinity), NaN = 0x7f
  EXPECT_BITS((Form{"cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b;", "b32", "b32", "b32", "b16"}),
              (V{0x3f800000, 0x7f800000, 0x7fc00000}), (V{0x38c0, 0x7efe, 0x7f00}), V{0xc0000000, 0xff800000, 0x0});
  // fp8 pairs widened to f16x2 (exact): upper byte to the upper half. e4m3 0x38 = 1.0, 0xc0 = -2.0, 0x7e = 448,
  // 0x01 = 2^-9 (subnormal), 0x7f NaN; e5m2 is f16's upper byte, its infinity (0x7c) stays infinite.
  EXPECT_BITS((Form{"cvt.rn.f16x2.e4m3x2 %d, %a;", "b16", "b32", "b32", "b32"}), (V{0x38c0, 0x7e01, 0x7f00}),
              (V{0x3c00c000, 0x5f001800, 0x7fff0000}));
  EXPECT_BITS((Form{"cvt.rn.f16x2.e5m2x2 %d, %a;", "b16", "b32", "b32", "b32"}), (V{0x3cc0, 0x7c01}),
              (V{0x3c00c000, 0x7c000100}));
  EXPECT_BITS((Form{"cvt.rn.relu.f16x2.e4m3x2 %d, %a;", "b16", "b32", "b32", "b32"}), (V{0x38c0}), (V{0x3c000000}));
  // tf32 rna: ties away from zero on the low 13 bits; NaN only loses its low bits
  EXPECT_BITS((Form{"cvt.rna.tf32.f32 %d, %a;", "b32", "b32", "b32", "b32"}), (V{0x3f801000, 0x3f800fff, 0xffc12345}),
              (V{0x3f802000, 0x3f800000, 0xffc12000}));
}

// ---- approximate functions as the GPU computes them -------------------------------------------------------------

TEST(PtxIsa, SinApproxReducesToRevolutionsInF32) {
  // huge arguments are whole revolutions: +-0; 2^24 * (1/2pi) rounded toward zero is ...0.75 revolutions: -1
  EXPECT_BITS((Form{"sin.approx.ftz.f32 %d, %a;", "b32", "b32", "b32", "b32"}),
              (V{0x7149f2ca, 0xf149f2ca, 0x4b800000, 0xcb556000}), (V{0x0, 0x80000000, 0xbf800000, 0x3f800000}));
}

TEST(PtxIsa, DivApproxFlushesReciprocalOfHugeDivisor) {
  EXPECT_BITS((Form{"div.approx.f32 %d, %a, %b;", "b32", "b32", "b32", "b32"}), (V{0x7f7fc99e, 0x7f800000, 0x40000000}),
              (V{0x0, 0x7fffffff, 0x3f800000}), V{0x7f7fc99e, 0x7f7fc99e, 0x40000000});
}

TEST(PtxIsa, RsqrtApproxF64IsCorrectlyRounded) {
  EXPECT_BITS((Form{"rsqrt.approx.f64 %d, %a;", "f64", "b32", "b32", "f64"}),
              (V{0x3fe0000000000000, 0x6378d9ebfdfd90e0, 0xbff0000000000000}),
              (V{0x3ff6a09e667f3bcd, 0x2e29ad2ef65206c0, 0xfff8000000000000}));
}

TEST(PtxIsa, RcpApproxFtzF64UsesUpperWords) {
  EXPECT_BITS((Form{"rcp.approx.ftz.f64 %d, %a;", "f64", "b32", "b32", "f64"}),
              (V{0xc004000000000000, 0x7ff8000000000000, 0x800fffffffffffff}),
              (V{0xbfd9999900000000, 0x7fffffff00000000, 0xfff0000000000000}));
}

// Upper words recorded on an H200 (tools/probes/rcp64h.cu) for operands 1 + k * 2^-20, among them significands
// where the GPU's value is one unit above the exact reciprocal's (712, 1016); the operand's low word is ignored and
// the exponent only scales the result, down to flushed subnormals.
TEST(PtxIsa, RcpApproxFtzF64MatchesGpuTable) {
  const std::pair<uint32_t, uint32_t> recorded[] = {
      {0, 0x3ff00000},     {1, 0x3feffffe},      {712, 0x3feffa71},    {713, 0x3feffa6f},    {1016, 0x3feff812},
      {65535, 0x3fee1e1f}, {300007, 0x3fe8e199}, {524288, 0x3fe55555}, {777777, 0x3fe25f53}, {1048575, 0x3fe00000}};
  V in, want;
  for (auto [k, hi] : recorded) {
    for (int64_t e : {1023, 1023 + 5, 1, 2046}) {
      in.push_back((uint64_t(e) << 52) | (uint64_t(k) << 32) | 0xdeadbeefu);
      int64_t field = int64_t(hi >> 20) + 1023 - e;
      want.push_back(field <= 0 ? 0 : (uint64_t(field) << 52 | uint64_t(hi & 0xfffff) << 32));
    }
  }
  EXPECT_BITS((Form{"rcp.approx.ftz.f64 %d, %a;", "f64", "b32", "b32", "f64"}), in, want);
}

TEST(PtxIsa, HalfEx2AndTanhApprox) {
  EXPECT_BITS((Form{"ex2.approx.f16 %d, %a;", "b16", "b32", "b32", "b16"}), (V{0x83ff, 0x4248, 0x5640, 0x3c00}),
              (V{0x3bff, 0x4868, 0x7c00, 0x4000}));
  EXPECT_BITS((Form{"tanh.approx.f16 %d, %a;", "b16", "b32", "b32", "b16"}), (V{0x3c00, 0x1400, 0x4826, 0x3800}),
              (V{0x3a17, 0x1400, 0x3c00, 0x3764}));
}

// ---- integer and bit forms -------------------------------------------------------------------------------------

TEST(PtxIsa, FnsOffsetZeroIsTheBaseBit) {
  EXPECT_BITS((Form{"fns.b32 %d, %a, %b, %c;", "b32", "b32", "b32", "b32"}), (V{0xffffffff, 0x2, 0x1, 0xf0}),
              (V{0, 1, 0xffffffff, 5}), V{0, 1, 1, 0}, V{0, 0, 0, 2});
}

TEST(PtxIsa, Mul24Hi) {
  EXPECT_BITS((Form{"mul24.hi.u32 %d, %a, %b;", "b32", "b32", "b32", "b32"}), (V{0xffffff, 0x12345678}),
              (V{0xfffffe00, 0x3456}), V{0xffffff, 0x100});
  EXPECT_BITS((Form{"mul24.hi.s32 %d, %a, %b;", "b32", "b32", "b32", "b32"}), (V{0xffffff}), (V{0xffffffff}), V{1});
}

// mad24.hi and mad.hi.sat (found missing by the native tier's generated kernels: the interpreter refused them at
// run time): the high bits of the product plus c, wrapping, or with .sat clamped to the s32 range
TEST(PtxIsa, Mad24HiAndMadHiSat) {
  EXPECT_BITS((Form{"mad24.hi.u32 %d, %a, %b, %c;", "b32", "b32", "b32", "b32"}), (V{0xffffff, 0x12345678}),
              (V{0x0, 0x3455}), V{0xffffff, 0x100}, V{0x200, 0xffffffff});
  EXPECT_BITS((Form{"mad24.hi.s32 %d, %a, %b, %c;", "b32", "b32", "b32", "b32"}), (V{0xffffff}), (V{0x2}), V{1}, V{3});
  EXPECT_BITS((Form{"mad24.hi.sat.s32 %d, %a, %b, %c;", "b32", "b32", "b32", "b32"}),
              (V{0x7fffff, 0x800000, 0xffffff, 0x10}), (V{0x7fffffff, 0x7fffffff, 0x80000000, 0x15}),
              V{0x7fffff, 0x800000, 1, 0x10000}, V{0x7fffffff, 0x40000000, 0x80000000, 5});
  EXPECT_BITS((Form{"mad.hi.sat.s32 %d, %a, %b, %c;", "b32", "b32", "b32", "b32"}),
              (V{0x7fffffff, 0x80000000, 0x40000000, 3}), (V{0x7fffffff, 0x7fffffff, 0x80000000, 7}),
              V{0x7fffffff, 0x80000000, 0xfffffffc, 5}, V{0x7fffffff, 0x7fffffff, 0x80000000, 7});
}

TEST(PtxIsa, TestpNormalCountsZero) {
  EXPECT_BITS((Form{"testp.normal.f32 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", "b32", "b32", "b32", "b32"}),
              (V{0x0, 0x80000000, 0x1, 0x3f800000, 0x7f800000}), (V{1, 1, 0, 1, 0}));
}

TEST(PtxIsa, MaxXorsignAbs) {
  EXPECT_BITS((Form{"max.xorsign.abs.f32 %d, %a, %b;", "b32", "b32", "b32", "b32"}),
              (V{0x00000000, 0x00000000, 0xbf800000, 0xc0200000}), (V{0x807fffff, 0x80000000, 0x3f800000, 0x40200000}),
              V{0x807fffff, 0xffc12345, 0x807fffff, 0x807fffff});
}

// ---- calls -------------------------------------------------------------------------------------------------------

LaunchResult launchOne(const std::string& text, uint32_t* out, uint32_t threads, uint32_t extra = 0) {
  CompileResult cr = compile(text);
  EXPECT_TRUE(cr.program) << cr.error;
  if (!cr.program) return {};
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(out).arg(extra);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{threads}, p, arena());
  return launch(*cr.program, kernel, lp);
}

const char* kCallHeader = R"(.version 8.0
.target sm_80
.address_size 64
)";
const char* kKernelStart = R"(.visible .entry k(.param .u64 out, .param .u32 extra)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<10>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r8, [extra];
)";
const char* kKernelEnd = R"(  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r9;
  ret;
}
)";

// nvcc -G declares every function before the kernels and defines it after them: calls name the declaration.
TEST(PtxIsa, CallBeforeDefinitionReachesTheDefinition) {
  std::string text = std::string(kCallHeader) + ".func (.param .b32 r) twice(.param .b32 x);\n" + kKernelStart +
                     "  {\n  .param .b32 a;\n  .param .b32 r;\n  st.param.b32 [a], %r1;\n"
                     "  call.uni (r), twice, (a);\n  ld.param.b32 %r9, [r];\n  }\n" +
                     kKernelEnd +
                     ".func (.param .b32 r) twice(.param .b32 x)\n{\n  .reg .b32 %t<3>;\n  ld.param.b32 %t1, [x];\n"
                     "  add.u32 %t2, %t1, %t1;\n  st.param.b32 [r], %t2;\n  ret;\n}\n";
  uint32_t* out = arena().alloc<uint32_t>(32);
  LaunchResult r = launchOne(text, out, 32);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], 2 * i);
}

const char* kTwoTargets = R"(.func (.param .b32 r) add_one(.param .b32 x)
{
  .reg .b32 %t<3>;
  ld.param.b32 %t1, [x];
  add.u32 %t2, %t1, 1;
  st.param.b32 [r], %t2;
  ret;
}
.func (.param .b32 r) times_three(.param .b32 x)
{
  .reg .b32 %t<3>;
  ld.param.b32 %t1, [x];
  mul.lo.u32 %t2, %t1, 3;
  st.param.b32 [r], %t2;
  ret;
}
)";
// lanes pick a target by parity (divergent indirect call); lane 5 uses `extra` added to the address
const char* kIndirectBody = R"(  mov.u64 %rd5, add_one;
  mov.u64 %rd6, times_three;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 1;
  selp.b64 %rd7, %rd6, %rd5, %p1;
  setp.eq.u32 %p2, %r1, 5;
  cvt.u64.u32 %rd8, %r8;
  @%p2 add.u64 %rd7, %rd7, %rd8;
  mov.u32 %r9, 1000;
  setp.lt.u32 %p3, %r1, 30;
  {
  .param .b32 a;
  .param .b32 r;
  st.param.b32 [a], %r1;
  proto : .callprototype (.param .b32 _) _ (.param .b32 _);
  @%p3 call (r), %rd7, (a), proto;
  @%p3 ld.param.b32 %r9, [r];
  }
)";

TEST(PtxIsa, IndirectCallsDivergeByTarget) {
  std::string text = std::string(kCallHeader) + kTwoTargets + kKernelStart + kIndirectBody + kKernelEnd;
  uint32_t* out = arena().alloc<uint32_t>(32);
  LaunchResult r = launchOne(text, out, 32);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], i >= 30 ? 1000u : (i % 2 ? 3 * i : i + 1)) << i;
}

TEST(PtxIsa, IndirectCallThroughABadAddressFaults) {
  std::string text = std::string(kCallHeader) + kTwoTargets + kKernelStart + kIndirectBody + kKernelEnd;
  uint32_t* out = arena().alloc<uint32_t>(32);
  LaunchResult r = launchOne(text, out, 32, 0x1000);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.fault.message.find("indirect call"), std::string::npos) << r.fault.message;
}

// Function pointers in a global table (a vtable): the initializer's relocations give the same handles as
// `mov.u64 %rd, f`.
TEST(PtxIsa, IndirectCallThroughAFunctionTableInitializer) {
  std::string text = std::string(kCallHeader) + kTwoTargets +
                     ".global .align 8 .u64 table[2] = {add_one, times_three};\n" + kKernelStart +
                     "  and.b32 %r2, %r1, 1;\n  mul.wide.u32 %rd3, %r2, 8;\n  mov.u64 %rd4, table;\n"
                     "  add.u64 %rd4, %rd4, %rd3;\n  ld.global.u64 %rd7, [%rd4];\n"
                     "  {\n  .param .b32 a;\n  .param .b32 r;\n  st.param.b32 [a], %r1;\n"
                     "  proto : .callprototype (.param .b32 _) _ (.param .b32 _);\n  call (r), %rd7, (a), proto;\n"
                     "  ld.param.b32 %r9, [r];\n  }\n" +
                     kKernelEnd;
  CompileResult cr = compile(text);
  ASSERT_TRUE(cr.program) << cr.error;
  std::vector<uint64_t> addresses;
  for (const GlobalInfo& g : globals(*cr.program)) {
    uint8_t* p = arena().alloc<uint8_t>(g.size);
    if (!g.init.empty()) std::memcpy(p, g.init.data(), g.init.size());
    for (const Relocation& rel : g.relocations) {
      ASSERT_TRUE(rel.isFunction);
      uint64_t v = (kFunctionAddressBase | rel.symbol) + uint64_t(rel.addend);
      std::memcpy(p + rel.offset, &v, 8);
    }
    addresses.push_back(reinterpret_cast<uint64_t>(p));
  }
  uint32_t* out = arena().alloc<uint32_t>(32);
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(out).arg(uint32_t(0));
  LaunchParams lp;
  lp.grid = Dim3{1};
  lp.block = Dim3{32};
  lp.params = p.data();
  lp.paramBytes = p.size();
  lp.globalAddresses = addresses.data();
  lp.memory = &arena();
  LaunchResult r = launch(*cr.program, kernel, lp);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], i % 2 ? 3 * i : i + 1) << i;
}

// ---- 128-bit data and half-precision atomics -------------------------------------------------------------------

LaunchResult launchText(const std::string& text, std::vector<void*> args, uint32_t threads, uint32_t blocks = 1) {
  CompileResult cr = compile(text);
  EXPECT_TRUE(cr.program) << cr.error;
  if (!cr.program) return {};
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  for (void* a : args) p.arg(a);
  LaunchParams lp = ptxtest::launchParams(Dim3{blocks}, Dim3{threads}, p, arena());
  return launch(*cr.program, kernel, lp);
}

TEST(PtxIsa, B128LoadStoreMoveAndAtomics) {
  const char* text = R"(.version 8.3
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<12>;
  .reg .b128 %x<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [out];
  cvt.u64.u32 %rd3, %r1;
  add.u64 %rd4, %rd3, 0x1000000000;
  mov.b128 %x1, {%rd3, %rd4};
  mul.wide.u32 %rd5, %r1, 16;
  add.u64 %rd6, %rd2, %rd5;
  st.global.b128 [%rd6], %x1;
  ld.global.b128 %x2, [%rd6];
  mov.b128 {%rd7, %rd8}, %x2;
  add.u64 %rd7, %rd7, 1;
  mov.b128 %x2, {%rd7, %rd8};
  st.global.b128 [%rd6+512], %x2;
  // every thread swaps its pair into buf[0]; the old pairs form a chain from the initial value
  atom.global.exch.b128 %x3, [%rd1], %x1;
  st.global.b128 [%rd6+1024], %x3;
  // cas: only the thread whose pair is expected (0x55, 0x66) succeeds... none here: buf[1] stays
  mov.b64 %rd9, 0x55;
  mov.b64 %rd10, 0x66;
  mov.b128 %x2, {%rd9, %rd10};
  atom.global.cas.b128 %x3, [%rd1+16], %x2, %x1;
  st.global.b128 [%rd6+1536], %x3;
  ret;
}
)";
  uint64_t* buf = arena().alloc<uint64_t>(4);
  buf[0] = 7;
  buf[1] = 8;
  buf[2] = 0x55;
  buf[3] = 0x66;
  uint64_t* out = arena().alloc<uint64_t>(4 * 32 * 2);
  LaunchResult r = launchText(text, {buf, out}, 32);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  std::vector<uint64_t> want, got(out, out + 128);
  for (uint64_t i = 0; i < 32; ++i) want.insert(want.end(), {i, i + 0x1000000000});
  for (uint64_t i = 0; i < 32; ++i) want.insert(want.end(), {i + 1, i + 0x1000000000});
  EXPECT_EQ(got, want);
  // the exchanges form one chain: each old pair (the initial one or a thread's) comes back exactly once
  std::set<std::pair<uint64_t, uint64_t>> olds;
  for (uint64_t i = 0; i < 32; ++i) olds.insert({out[128 + 2 * i], out[128 + 2 * i + 1]});
  EXPECT_EQ(olds.size(), 32u);
  EXPECT_EQ(olds.count({7, 8}), 1u);
  // the first cas finds {0x55, 0x66}; later ones find the winner's pair
  std::multiset<std::pair<uint64_t, uint64_t>> cas;
  for (uint64_t i = 0; i < 32; ++i) cas.insert({out[192 + 2 * i], out[192 + 2 * i + 1]});
  EXPECT_EQ(cas.count({0x55, 0x66}), 1u);
  EXPECT_EQ(buf[3], buf[2] + 0x1000000000);
}

TEST(PtxIsa, HalfPrecisionAtomicAdds) {
  const char* text = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf)
{
  .reg .b16 %h<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [buf];
  mov.b16 %h1, 0x3c00;
  atom.global.add.noftz.f16 %h2, [%rd1], %h1;
  mov.b16 %h1, 0x3f80;
  red.global.add.noftz.bf16 [%rd1+2], %h1;
  mov.b32 %r1, 0x40003c00;
  atom.global.add.noftz.f16x2 %r2, [%rd1+4], %r1;
  mov.b32 %r1, 0x3f803f80;
  red.global.add.noftz.bf16x2 [%rd1+8], %r1;
  ret;
}
)";
  uint16_t* buf = arena().alloc<uint16_t>(8);
  std::memset(buf, 0, 16);
  LaunchResult r = launchText(text, {buf}, 64, 4);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(buf[0], 0x5c00);  // 256.0 in f16
  EXPECT_EQ(buf[1], 0x4380);  // 256.0 in bf16
  EXPECT_EQ(buf[2], 0x5c00);
  EXPECT_EQ(buf[3], 0x6000);  // 512.0
  EXPECT_EQ(buf[4], 0x4380);
  EXPECT_EQ(buf[5], 0x4380);
}

// Vector atomics (sm_90): every element is its own atomic operation; f16/bf16 take min and max only in this form.
TEST(PtxIsa, VectorAtomicsActPerElement) {
  const char* text = R"(.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf, .param .u64 olds)
{
  .reg .b16 %h<8>;
  .reg .b32 %r<4>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [olds];
  mov.u32 %r1, %tid.x;
  cvt.rn.f16.u32 %h1, %r1;
  neg.f16 %h2, %h1;
  atom.global.v2.f16.max.noftz {%h3, %h4}, [%rd1], {%h1, %h2};
  cvt.rn.f32.u32 %f7, %r1;
  cvt.rn.bf16.f32 %h5, %f7;
  neg.bf16 %h6, %h5;
  red.global.v2.bf16.min.noftz [%rd1+4], {%h5, %h6};
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0f40000000;
  atom.global.v4.f32.add {%f3, %f4, %f5, %f6}, [%rd1+8], {%f1, %f2, %f1, %f2};
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd3, %rd2, %rd3;
  st.global.b16 [%rd3], %h3;
  st.global.b16 [%rd3+2], %h4;
  ret;
}
)";
  uint16_t* buf = arena().alloc<uint16_t>(12);
  std::memset(buf, 0, 24);
  buf[0] = 0xfc00;  // -inf (f16): every max wins
  buf[1] = 0x7e00;  // NaN (f16): the first max returns the operand
  uint16_t* olds = arena().alloc<uint16_t>(128);
  LaunchResult r = launchText(text, {buf, olds}, 64, 1);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(buf[0], 0x53e0);  // max of 0..63 = 63.0 in f16
  EXPECT_EQ(buf[1], 0x8000);  // max of NaN, -0, -1 ... -63 = -0 (the NaN gives way to the first operand)
  EXPECT_EQ(buf[2], 0x0000);  // min of +0 (initial) and 0 ... 63 in bf16 = +0
  EXPECT_EQ(buf[3], 0xc27c);  // min of +0 (initial), -0, -1 ... -63 in bf16 = -63.0
  float sums[4];
  std::memcpy(sums, buf + 4, 16);
  EXPECT_EQ(sums[0], 64.0f);
  EXPECT_EQ(sums[1], 128.0f);
  EXPECT_EQ(sums[2], 64.0f);
  EXPECT_EQ(sums[3], 128.0f);
  std::set<uint16_t> seen;
  for (int i = 0; i < 64; ++i) seen.insert(olds[2 * i]);
  EXPECT_EQ(seen.count(0xfc00), 1u) << "exactly one thread saw the initial -inf";
}

// ---- device-side malloc/free through the driver's heap ------------------------------------------------------------

class HeapHost : public HostServices {
 public:
  uint64_t deviceMalloc(uint64_t size) override {
    std::lock_guard<std::mutex> lock(m);
    if (used + size > 4096) return 0;
    uint64_t p = reinterpret_cast<uint64_t>(heap) + used;
    used += (size + 15) & ~uint64_t(15);
    ++allocations;
    return p;
  }
  void deviceFree(uint64_t address) override {
    std::lock_guard<std::mutex> lock(m);
    freed.push_back(address);
  }
  std::mutex m;
  uint8_t* heap = arena().alloc<uint8_t>(4096);
  uint64_t used = 0;
  int allocations = 0;
  std::vector<uint64_t> freed;
};

const char* kMallocKernel = R"(.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.extern .func free(.param .b64 free_param_0);
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd1, %r1, 8;
  add.u64 %rd1, %rd1, 8;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd1;
  .param .b64 retval0;
  call.uni (retval0), malloc, (param0);
  ld.param.b64 %rd2, [retval0];
  }
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r1, 8;
  add.u64 %rd3, %rd3, %rd4;
  setp.eq.u64 %p1, %rd2, 0;
  @%p1 bra NULL;
  add.u32 %r2, %r1, 1000;
  st.global.u32 [%rd2], %r2;
  ld.global.u32 %r3, [%rd2];
  cvt.u64.u32 %rd5, %r3;
  st.global.u64 [%rd3], %rd5;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd2;
  call.uni free, (param0);
  }
  ret;
NULL:
  st.global.u64 [%rd3], 0xdead;
  ret;
}
)";

LaunchResult launchMalloc(uint64_t* out, HostServices* host) {
  CompileResult cr = compile(kMallocKernel);
  EXPECT_TRUE(cr.program) << cr.error;
  if (!cr.program) return {};
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(out);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{64}, p, arena());
  lp.host = host;
  return launch(*cr.program, kernel, lp);
}

TEST(PtxIsa, DeviceMallocAndFreeUseTheHostHeap) {
  HeapHost host;
  uint64_t* out = arena().alloc<uint64_t>(64);
  LaunchResult r = launchMalloc(out, &host);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  // 8..512 bytes each (rounded to 16): the 4 KiB heap runs out part way; those threads get NULL
  int nulls = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    if (out[i] == 0xdead)
      ++nulls;
    else
      EXPECT_EQ(out[i], 1000u + i);
  }
  EXPECT_GT(nulls, 0);
  EXPECT_EQ(host.allocations, 64 - nulls);
  EXPECT_EQ(int(host.freed.size()), host.allocations);
}

TEST(PtxIsa, DeviceMallocWithoutAHeapReturnsNull) {
  uint64_t* out = arena().alloc<uint64_t>(64);
  LaunchResult r = launchMalloc(out, nullptr);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], 0xdeadu);
}

// ---- cudaGraphSetConditional (conditional graph nodes), a device-runtime function the host answers ----------

class ConditionalHost : public HostServices {
 public:
  bool setGraphConditional(uint64_t handle, uint32_t value) override {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(handle, value);
    return handle != refused;
  }
  std::mutex m;
  std::vector<std::pair<uint64_t, uint32_t>> calls;
  uint64_t refused = 0;  // a handle the kernel may not set
};

constexpr const char* kGraphSetConditionalPtx = R"(.version 8.0
.target sm_80
.address_size 64
.extern .func cudaGraphSetConditional(.param .b64 cudaGraphSetConditional_param_0, .param .b32 cudaGraphSetConditional_param_1);
.visible .entry k(.param .u64 base)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 3;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [base];
  cvt.u64.u32 %rd2, %r1;
  add.u64 %rd3, %rd1, %rd2;
  mul.lo.u32 %r2, %r1, 10;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd3;
  .param .b32 param1;
  st.param.b32 [param1], %r2;
  call.uni cudaGraphSetConditional, (param0, param1);
  }
DONE:
  ret;
}
)";

TEST(PtxIsa, GraphSetConditionalReachesTheHostForEachActiveLane) {
  CompileResult cr = compile(kGraphSetConditionalPtx);
  ASSERT_TRUE(cr.program) << cr.error;
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(uint64_t(0x100));
  ConditionalHost host;
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena());
  lp.host = &host;
  LaunchResult r = launch(*cr.program, kernel, lp);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  std::sort(host.calls.begin(), host.calls.end());
  EXPECT_EQ(host.calls, (std::vector<std::pair<uint64_t, uint32_t>>{{0x100, 0}, {0x101, 10}, {0x102, 20}}));
}

// A handle the launching kernel may not set (another graph's, or any from a kernel outside a graph) faults the
// lane with an illegal address, as on an H100; the lanes before it in the warp have set theirs.
TEST(PtxIsa, GraphSetConditionalOfAHandleTheKernelMayNotSetFaults) {
  CompileResult cr = compile(kGraphSetConditionalPtx);
  ASSERT_TRUE(cr.program) << cr.error;
  int kernel = findKernel(*cr.program, "k");
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(uint64_t(0x100));
  ConditionalHost host;
  host.refused = 0x101;
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena());
  lp.host = &host;
  LaunchResult r = launch(*cr.program, kernel, lp);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  EXPECT_EQ(r.fault.address, 0x101u);
  EXPECT_EQ(r.fault.thread.x, 1u);
  EXPECT_EQ(host.calls.front(), (std::pair<uint64_t, uint32_t>{0x100, 0}));
}

// ---- barriers in divergent code ----------------------------------------------------------------------------------
// Measured on an H200: a warp arrives with all its threads when the first side of a divergent branch (the
// fall-through side) reaches bar.sync; the barrier completes before the other side ran.

TEST(PtxIsa, BarSyncOnBothSidesOfADivergentBranch) {
  const char* text = R"(.version 8.0
.target sm_80
.address_size 64
.shared .align 4 .b32 sh[128];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sh;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  st.shared.u32 [%r4], 0xdead;
  bar.sync 0;
  and.b32 %r5, %r1, 1;
  setp.eq.u32 %p1, %r5, 1;
  @%p1 bra ODD;
  mul.lo.u32 %r6, %r1, 5;
  st.shared.u32 [%r4], %r6;
  bar.sync 0;
  ld.shared.u32 %r9, [%r4+4];
  bra.uni DONE;
ODD:
  mul.lo.u32 %r6, %r1, 3;
  st.shared.u32 [%r4], %r6;
  bar.sync 0;
  ld.shared.u32 %r9, [%r4+-4];
DONE:
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r9;
  ret;
}
)";
  uint32_t* out = arena().alloc<uint32_t>(128);
  LaunchResult r = launchText(text, {out}, 128);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(out[i], i % 2 ? (i - 1) * 5 : 0xdeadu) << i;
}

}  // namespace

namespace {

// ---- deterministic mode: a grid that waits for memory nothing else will write ------------------------------------

// Releases the waiting kernel when told it stalled, as a host thread writing mapped memory would.
class StallWitness : public HostServices {
 public:
  explicit StallWitness(uint32_t* flag) : flag_(flag) {}
  void deterministicStall(std::string_view kernel, unsigned) override {
    name = std::string(kernel);
    ++calls;
    std::atomic_ref<uint32_t>(*flag_).store(7, std::memory_order_release);
  }
  std::string name;
  int calls = 0;

 private:
  uint32_t* flag_;
};

TEST(PtxIsa, DeterministicModeReportsAGridThatWaitsWithoutProgress) {
  const char* text = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 flag, .param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
WAIT:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";
  CompileResult cr = compile(text);
  ASSERT_TRUE(cr.program) << cr.error;
  int kernel = findKernel(*cr.program, "k");
  uint32_t* flag = arena().alloc<uint32_t>(1);
  uint32_t* out = arena().alloc<uint32_t>(1);
  *flag = 0;
  *out = 0;
  Params p(kernels(*cr.program)[size_t(kernel)]);
  p.arg(flag).arg(out);
  StallWitness witness(flag);
  LaunchParams lp = ptxtest::launchParams(Dim3{2}, Dim3{32}, p, arena());
  lp.host = &witness;
  lp.config.deterministic = true;
  lp.config.stallNoticeMs = 200;
  LaunchResult r = launch(*cr.program, kernel, lp);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(witness.calls, 1) << "told once";
  EXPECT_EQ(witness.name, "k");
  EXPECT_EQ(*out, 7u);
}

}  // namespace
