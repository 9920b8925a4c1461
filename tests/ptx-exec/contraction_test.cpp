// Multiply-add contraction (exec/contraction.cpp): a mul and the add/sub of its product, neither with a rounding
// modifier, round once where ptxas fuses them, twice where it does not, and twice everywhere with
// CompileOptions::contractMulAdd off. The GPU's own results for these patterns are the conformance cases
// ptx.contraction.*; here the rules are checked against host arithmetic.
#include "harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace ptx::exec;

namespace {

ptxtest::Arena& arena() {
  static auto* a = new ptxtest::Arena(size_t(16) << 20);
  return *a;
}

// One thread: d[0], d[1] from body over a = p[0], b = p[1], c = p[2], e = p[3] (f64), with n = 5.
constexpr const char* kHead = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pp, .param .u32 n)
{
  .reg .f64 %a, %b, %c, %e, %t<8>, %d<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [pp];
  ld.param.u32 %r1, [n];
  ld.global.f64 %a, [%rd1];
  ld.global.f64 %b, [%rd1+8];
  ld.global.f64 %c, [%rd1+16];
  ld.global.f64 %e, [%rd1+24];
  mov.f64 %d0, 0d0000000000000000;
  mov.f64 %d1, 0d0000000000000000;
)";
constexpr const char* kTail = R"(
  st.global.f64 [%rd1+32], %d0;
  st.global.f64 [%rd1+40], %d1;
  ret;
}
)";

struct Outputs {
  double d0, d1;
};

Outputs run(const std::string& body, bool contract, double a, double b, double c, double e) {
  CompileOptions options;
  options.contractMulAdd = contract;
  CompileResult r = compile(std::string(kHead) + body + kTail, options);
  if (!r.program) throw std::runtime_error("compile failed: " + r.error);
  const KernelInfo& k = kernels(*r.program)[0];
  auto* p = arena().alloc<double>(6);
  p[0] = a, p[1] = b, p[2] = c, p[3] = e, p[4] = p[5] = -1;
  ptxtest::Params params(k);
  params.arg(p).arg(5u);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{1}, params, arena());
  LaunchResult res = launch(*r.program, 0, lp);
  if (!res.ok()) throw std::runtime_error("launch failed: " + res.fault.message);
  return {p[4], p[5]};
}

// a * b rounds to 1 (1 - 2^-54 is halfway, to even); fused with -1 it is -2^-54.
constexpr double kA = 1 + 0x1p-27, kB = 1 - 0x1p-27;
const double kFused = std::fma(kA, kB, -1.0);  // -2^-54

TEST(PtxContraction, FusesWhereAnAddOrSubTakesTheProduct) {
  ASSERT_EQ(kFused, -0x1p-54);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\n", true, kA, kB, -1, 0).d0, kFused);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %c, %t1;\n", true, kA, kB, -1, 0).d0, kFused);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nsub.f64 %d0, %t1, %c;\n", true, kA, kB, 1, 0).d0, kFused);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nsub.f64 %d0, %c, %t1;\n", true, kA, kB, 1, 0).d0, -kFused);
  // through a neg of the product
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nneg.f64 %t2, %t1;\nadd.f64 %d0, %t2, %c;\n", true, kA, kB, 1, 0).d0, -kFused);
  // the product used by two adds: both fuse
  Outputs two = run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\nadd.f64 %d1, %t1, %e;\n", true, kA, kB, -1, -1);
  EXPECT_EQ(two.d0, kFused);
  EXPECT_EQ(two.d1, kFused);
  // both operands products: the first fuses (the second rounds to 1 first)
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nmul.f64 %t2, %c, %e;\nadd.f64 %d0, %t1, %t2;\n", true, kA, kB, 1, -1).d0,
            kFused);
  EXPECT_EQ(run("mul.f64 %t2, %c, %e;\nmul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %t2;\n", true, kA, kB, 1, -1).d0,
            kFused);
  // a factor written between the mul and the add fuses with its value at the mul (ptxas works on SSA)
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nmov.f64 %a, %e;\nadd.f64 %d0, %t1, %c;\n", true, kA, kB, -1, 5).d0, kFused);
  // a guarded add fuses too
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 add.f64 %d0, %t1, %c;\n", true, kA, kB, -1, 0).d0,
            kFused);
}

TEST(PtxContraction, RoundsTwiceWhereNothingFuses) {
  // switched off
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\n", false, kA, kB, -1, 0).d0, 0.0);
  // a rounding modifier on either side
  EXPECT_EQ(run("mul.rn.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\n", true, kA, kB, -1, 0).d0, 0.0);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.rn.f64 %d0, %t1, %c;\n", true, kA, kB, -1, 0).d0, 0.0);
  // the product also stored, or compared: it stays a rounded product for every use
  Outputs stored = run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\nmov.f64 %d1, %t1;\n", true, kA, kB, -1, 0);
  EXPECT_EQ(stored.d0, 0.0);
  EXPECT_EQ(stored.d1, 1.0);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %c;\nsetp.gt.f64 %p1, %t1, %e;\n"
                "selp.f64 %d1, %c, %e, %p1;\n",
                true, kA, kB, -1, 0)
                .d0,
            0.0);
  // the add in another block: after a branch, in a loop
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra L1;\nadd.f64 %d0, %t1, %c;\nL1:\n", true, kA,
                kB, -1, 0)
                .d0,
            0.0);
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nmov.f64 %d0, %c;\nmov.u32 %r2, 0;\nLOOP:\nadd.f64 %d0, %d0, %t1;\n"
                "add.u32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, 1;\n@%p1 bra LOOP;\n",
                true, kA, kB, -1, 0)
                .d0,
            0.0);
  // the same product twice in one add
  EXPECT_EQ(run("mul.f64 %t1, %a, %b;\nadd.f64 %d0, %t1, %t1;\n", true, kA, kB, 0, 0).d0, 2.0);
}

// f32 with .ftz and .sat, and f16: the same rules.
TEST(PtxContraction, SinglesAndHalves) {
  const std::string f32 = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pp)
{
  .reg .f32 %f<8>;
  .reg .b16 %h<8>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [pp];
  ld.global.f32 %f1, [%rd1];
  ld.global.f32 %f2, [%rd1+4];
  ld.global.f32 %f3, [%rd1+8];
  mul.ftz.f32 %f4, %f1, %f2;
  add.ftz.f32 %f5, %f4, %f3;
  st.global.f32 [%rd1+16], %f5;
  mul.f32 %f6, %f1, %f2;
  add.ftz.f32 %f7, %f6, %f3;
  st.global.f32 [%rd1+20], %f7;
  ld.global.b16 %h1, [%rd1+32];
  ld.global.b16 %h2, [%rd1+34];
  ld.global.b16 %h3, [%rd1+36];
  mul.f16 %h4, %h1, %h2;
  sub.f16 %h5, %h4, %h3;
  st.global.b16 [%rd1+40], %h5;
  ret;
}
)";
  for (bool contract : {true, false}) {
    CompileOptions options;
    options.contractMulAdd = contract;
    CompileResult r = compile(f32, options);
    ASSERT_TRUE(r.program) << r.error;
    auto* p = arena().alloc<float>(12);
    const float a = 1 + 0x1p-13f, b = 1 - 0x1p-13f;
    p[0] = a, p[1] = b, p[2] = -1;
    auto* hp = reinterpret_cast<uint16_t*>(p + 8);
    hp[0] = 0x3c10, hp[1] = 0x3be0, hp[2] = 0x3c00;  // 1 + 2^-6, 1 - 2^-6, 1
    ptxtest::Params params(kernels(*r.program)[0]);
    params.arg(p);
    LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{1}, params, arena());
    ASSERT_TRUE(launch(*r.program, 0, lp).ok());
    EXPECT_EQ(p[4], contract ? std::fma(a, b, -1.0f) : 0.0f) << contract;
    EXPECT_EQ(p[5], 0.0f) << "mul without .ftz, add with it: no fusion";
    EXPECT_EQ(hp[4], contract ? 0x8c00 : 0x0000) << contract;  // -2^-12 fused
  }
}

}  // namespace
