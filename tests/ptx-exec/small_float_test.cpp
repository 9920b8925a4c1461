// The sm_100/sm_120 small-float conversions (cvt to and from e2m1x2, e2m3x2, e3m2x2, ue8m0x2) against NVIDIA's own
// definition of them: the host conversions of the toolkit's cuda_fp4.h, cuda_fp6.h and cuda_fp8.h (what a program
// gets when it converts on the CPU; the device side of those headers is these cvt instructions). Built where the
// toolkit's headers are (tests/ptx-exec/CMakeLists.txt). No GPU of compute capability 10 or 12 has recorded them.
#include "harness.h"

#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena(size_t(64) << 20);
  return *a;
}

const char* kKernels = R"(
.version 8.7
.target sm_120a
.address_size 64
.visible .entry narrow(.param .u64 in, .param .u64 out)
{
  .reg .b8 %c<2>;
  .reg .b16 %h<12>;
  .reg .b32 %r<8>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r4, 8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v2.f32 {%f1, %f2}, [%rd4];
  mov.b32 %r5, %f1;
  cvt.rn.satfinite.e2m1x2.f32 %c1, %f1, %f2;
  cvt.rn.satfinite.e2m3x2.f32 %h1, %f1, %f2;
  cvt.rn.satfinite.e3m2x2.f32 %h2, %f1, %f2;
  cvt.rz.ue8m0x2.f32 %h3, %f1, %f2;
  cvt.rz.satfinite.ue8m0x2.f32 %h4, %f1, %f2;
  cvt.rp.ue8m0x2.f32 %h5, %f1, %f2;
  cvt.rp.satfinite.ue8m0x2.f32 %h6, %f1, %f2;
  cvt.rz.ue8m0x2.bf16x2 %h7, %r5;
  cvt.rp.satfinite.ue8m0x2.bf16x2 %h8, %r5;
  mul.wide.u32 %rd3, %r4, 32;
  add.s64 %rd5, %rd2, %rd3;
  st.global.b8 [%rd5], %c1;
  st.global.b16 [%rd5+2], %h1;
  st.global.b16 [%rd5+4], %h2;
  st.global.b16 [%rd5+6], %h3;
  st.global.b16 [%rd5+8], %h4;
  st.global.b16 [%rd5+10], %h5;
  st.global.b16 [%rd5+12], %h6;
  st.global.b16 [%rd5+14], %h7;
  st.global.b16 [%rd5+16], %h8;
  ret;
}
.visible .entry widen(.param .u64 in, .param .u64 out)
{
  .reg .b8 %c<2>;
  .reg .b16 %h<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r4, 2;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.b16 %h1, [%rd4];
  ld.global.b8 %c1, [%rd4];
  and.b16 %h2, %h1, 0x3f3f;
  cvt.rn.f16x2.e2m1x2 %r5, %c1;
  cvt.rn.f16x2.e2m3x2 %r6, %h2;
  cvt.rn.f16x2.e3m2x2 %r7, %h2;
  cvt.rn.bf16x2.ue8m0x2 %r8, %h1;
  mul.wide.u32 %rd3, %r4, 16;
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.b32 [%rd5], {%r5, %r6, %r7, %r8};
  ret;
}
)";

const Program& program() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(kKernels);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

struct Narrowed {
  uint8_t e2m1;
  uint8_t pad;
  uint16_t e2m3, e3m2, rz, rzSat, rp, rpSat, bf16Rz, bf16RpSat;
  uint8_t rest[14];
};
static_assert(sizeof(Narrowed) == 32);

// Pairs of floats: every special value against the others, the formats' halfway points and boundaries, and random
// values over the whole exponent range.
std::vector<float> inputs() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          INFINITY,
                          -INFINITY,
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::bit_cast<float>(0x7f800001u),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          std::ldexp(1.0f, -127),
                          std::ldexp(1.0f, -126),
                          std::ldexp(1.5f, -127),
                          std::ldexp(1.0f, 127),
                          std::ldexp(1.5f, 127),
                          std::bit_cast<float>(0x7f7f0001u),
                          std::bit_cast<float>(0x7f7f8000u)};
  for (float base :
       {0.125f, 0.0625f, 0.03125f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f,  2.5f,  3.0f,  3.5f,
        4.0f,   5.0f,    6.0f,     6.5f,  7.0f, 7.25f, 7.5f, 7.75f, 8.0f, 24.0f, 26.0f, 28.0f, 30.0f, 32.0f})
    for (float s : {1.0f, -1.0f}) {
      v.push_back(s * base);
      v.push_back(s * std::nextafter(base, 0.0f));
      v.push_back(s * std::nextafter(base, INFINITY));
    }
  std::mt19937 rng(5);
  for (int i = 0; i < 4000; ++i) {
    const uint32_t bits = rng();
    v.push_back(i % 2 ? std::bit_cast<float>(bits)
                      : std::ldexp(float(bits % 65536) / 4096.0f, int(rng() % 40) - 20) * (bits & 1 ? -1.0f : 1.0f));
  }
  return v;
}

TEST(PtxSmallFloats, NarrowingMatchesCudaHostConversions) {
  const std::vector<float> values = inputs();
  std::vector<float> pairs;  // (a, b): a goes to the high part
  for (size_t i = 0; i < values.size(); ++i) {
    pairs.push_back(values[i]);
    pairs.push_back(values[(i * 7 + 3) % values.size()]);
  }
  const uint32_t n = uint32_t(pairs.size() / 2), blocks = (n + 127) / 128;
  float* in = arena().alloc<float>(size_t(blocks) * 256);
  std::memcpy(in, pairs.data(), pairs.size() * 4);
  auto* out = arena().alloc<Narrowed>(size_t(blocks) * 128);
  const KernelInfo& k = kernels(program())[size_t(findKernel(program(), "narrow"))];
  Params p(k);
  p.arg(in).arg(out);
  LaunchResult r =
      launch(program(), findKernel(program(), "narrow"), ptxtest::launchParams(Dim3{blocks}, Dim3{128}, p, arena()));
  ASSERT_TRUE(r.ok()) << r.fault.message;
  unsigned failures = 0;
  for (uint32_t i = 0; i < n && failures < 20; ++i) {
    const float a = pairs[2 * i], b = pairs[2 * i + 1];
    const float2 host{b, a};  // the headers keep .x in the low part
    const Narrowed& got = out[i];
    uint32_t abits = std::bit_cast<uint32_t>(a), bbits = std::bit_cast<uint32_t>(b);
    __nv_bfloat162_raw bf;
    bf.x = uint16_t(abits);
    bf.y = uint16_t(abits >> 16);
    const struct {
      const char* what;
      unsigned got, want;
    } checks[] = {
        {"e2m1x2", got.e2m1, __nv_cvt_float2_to_fp4x2(host, __NV_E2M1, cudaRoundNearest)},
        {"e2m3x2", got.e2m3, __nv_cvt_float2_to_fp6x2(host, __NV_E2M3, cudaRoundNearest)},
        {"e3m2x2", got.e3m2, __nv_cvt_float2_to_fp6x2(host, __NV_E3M2, cudaRoundNearest)},
        {"ue8m0x2 rz", got.rz, __nv_cvt_float2_to_e8m0x2(host, __NV_NOSAT, cudaRoundZero)},
        {"ue8m0x2 rz satfinite", got.rzSat, __nv_cvt_float2_to_e8m0x2(host, __NV_SATFINITE, cudaRoundZero)},
        {"ue8m0x2 rp", got.rp, __nv_cvt_float2_to_e8m0x2(host, __NV_NOSAT, cudaRoundPosInf)},
        {"ue8m0x2 rp satfinite", got.rpSat, __nv_cvt_float2_to_e8m0x2(host, __NV_SATFINITE, cudaRoundPosInf)},
        {"ue8m0x2.bf16x2 rz", got.bf16Rz, __nv_cvt_bfloat162raw_to_e8m0x2(bf, __NV_NOSAT, cudaRoundZero)},
        {"ue8m0x2.bf16x2 rp satfinite", got.bf16RpSat,
         __nv_cvt_bfloat162raw_to_e8m0x2(bf, __NV_SATFINITE, cudaRoundPosInf)},
    };
    for (const auto& c : checks)
      if (c.got != c.want) {
        ++failures;
        ADD_FAILURE() << c.what << " of (" << a << " = 0x" << std::hex << abits << ", " << b << " = 0x" << bbits
                      << "): 0x" << c.got << ", CUDA's host conversion 0x" << c.want;
      }
  }
}

TEST(PtxSmallFloats, WideningMatchesCudaHostConversions) {
  constexpr uint32_t n = 65536;
  auto* in = arena().alloc<uint16_t>(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = uint16_t(i);
  auto* out = arena().alloc<uint32_t>(size_t(n) * 4);
  const KernelInfo& k = kernels(program())[size_t(findKernel(program(), "widen"))];
  Params p(k);
  p.arg(in).arg(out);
  LaunchResult r =
      launch(program(), findKernel(program(), "widen"), ptxtest::launchParams(Dim3{n / 128}, Dim3{128}, p, arena()));
  ASSERT_TRUE(r.ok()) << r.fault.message;
  unsigned failures = 0;
  auto word = [](auto raw) { return uint32_t(raw.y) << 16 | raw.x; };
  for (uint32_t i = 0; i < n && failures < 20; ++i) {
    const uint16_t six = uint16_t(i & 0x3f3f);
    const struct {
      const char* what;
      uint32_t got, want;
    } checks[] = {
        {"f16x2.e2m1x2", out[4 * i], word(__nv_cvt_fp4x2_to_halfraw2(__nv_fp4x2_storage_t(i & 0xff), __NV_E2M1))},
        {"f16x2.e2m3x2", out[4 * i + 1], word(__nv_cvt_fp6x2_to_halfraw2(six, __NV_E2M3))},
        {"f16x2.e3m2x2", out[4 * i + 2], word(__nv_cvt_fp6x2_to_halfraw2(six, __NV_E3M2))},
        {"bf16x2.ue8m0x2", out[4 * i + 3], word(__nv_cvt_e8m0x2_to_bf162raw(__nv_fp8x2_storage_t(i)))},
    };
    for (const auto& c : checks)
      if (c.got != c.want) {
        ++failures;
        ADD_FAILURE() << c.what << " of 0x" << std::hex << i << ": 0x" << c.got << ", CUDA's host conversion 0x"
                      << c.want;
      }
  }
}

}  // namespace
