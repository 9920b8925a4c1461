// ex2/rcp/rsqrt .approx on .f32 (exec/mufu.cpp) against results recorded on an H100 (mufu_vectors.inc, from
// tools/gpu-probe/mufu27): random operands of all classes, three quarters of them where the GPU's result is not
// the correctly rounded one, through a kernel, so lowering and execution are both checked.
#include "harness.h"

#include "exec/mufu.h"
#include "exec/numerics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace ptx::exec;

namespace {
#include "mufu_vectors.inc"

ptxtest::Arena& arena() {
  static auto* a = new ptxtest::Arena(size_t(16) << 20);
  return *a;
}

// d[i] = instruction(a[i]), CTAs of 256 threads
std::string kernel(const std::string& instruction) {
  return R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pd)
{
  .reg .f32 %x, %y;
  .reg .b32 %t, %c;
  .reg .b64 %a, %d, %o;
  ld.param.u64 %a, [pa];
  ld.param.u64 %d, [pd];
  mov.u32 %t, %tid.x;
  mov.u32 %c, %ctaid.x;
  mad.lo.u32 %t, %c, 256, %t;
  mul.wide.u32 %o, %t, 4;
  add.s64 %a, %a, %o;
  add.s64 %d, %d, %o;
  ld.global.f32 %x, [%a];
  )" + instruction +
         R"( %y, %x;
  st.global.f32 [%d], %y;
  ret;
}
)";
}

// Runs instruction over inputs (a multiple of 256) and compares with the GPU's results.
void expectGpuResults(const std::string& instruction, const std::vector<uint32_t>& inputs,
                      const std::vector<uint32_t>& gpu, ptxtest::Arena& memory) {
  const size_t n = inputs.size();
  ASSERT_EQ(n % 256, 0u);
  CompileResult r = compile(kernel(instruction));
  ASSERT_TRUE(r.program) << r.error;
  auto* in = memory.alloc<uint32_t>(n);
  auto* out = memory.alloc<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) in[i] = inputs[i], out[i] = 0xdeadbeef;
  ptxtest::Params params(kernels(*r.program)[0]);
  params.arg(in).arg(out);
  LaunchResult res = launch(*r.program, 0, ptxtest::launchParams(Dim3{uint32_t(n / 256)}, Dim3{256}, params, memory));
  ASSERT_TRUE(res.ok()) << res.fault.message;
  size_t failures = 0;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != gpu[i] && ++failures <= 8)
      ADD_FAILURE() << instruction << std::hex << " of 0x" << in[i] << ": 0x" << out[i] << ", the H100 gave 0x"
                    << gpu[i];
  EXPECT_EQ(failures, 0u) << instruction << ": of " << n;
}

template <size_t N> void expectGpuResults(const std::string& instruction, const uint32_t (&vectors)[N][2]) {
  std::vector<uint32_t> in(N), gpu(N);
  for (size_t i = 0; i < N; ++i) in[i] = vectors[i][0], gpu[i] = vectors[i][1];
  expectGpuResults(instruction, in, gpu, arena());
}

TEST(PtxSpecialFunctions, Ex2ApproxAsTheH100) {
  expectGpuResults("ex2.approx.ftz.f32", kEx2Ftz);
  expectGpuResults("ex2.approx.f32", kEx2);  // operands in [-160, 140]: subnormal results below -126
  expectGpuResults("ex2.approx.f32", kEx2Bits);
}

TEST(PtxSpecialFunctions, RcpApproxAsTheH100) {
  expectGpuResults("rcp.approx.ftz.f32", kRcpFtz);
  expectGpuResults("rcp.approx.f32", kRcp);
  expectGpuResults("rcp.approx.f32", kRcpSub);  // subnormal operands
}

TEST(PtxSpecialFunctions, RsqrtApproxAsTheH100) {
  expectGpuResults("rsqrt.approx.ftz.f32", kRsqrtFtz);
  expectGpuResults("rsqrt.approx.f32", kRsqrt);
  expectGpuResults("rsqrt.approx.f32", kRsqrtSub);
}

// CUEMU_SPECIAL_FUNCTIONS=host (ctest ptx_exec_tests_host_special_functions): the host's correctly rounded
// functions instead of the GPU's tables.
TEST(PtxSpecialFunctions, HostModelIsCorrectlyRounded) {
  const char* model = std::getenv("CUEMU_SPECIAL_FUNCTIONS");
  if (!model || std::string(model) != "host") GTEST_SKIP() << "run with CUEMU_SPECIAL_FUNCTIONS=host";
  std::vector<uint32_t> in, ex2, rcp;
  for (const auto& v : kEx2Ftz) in.push_back(v[0]);
  for (uint32_t x : in) {
    const float f = std::bit_cast<float>(x);
    const bool flushed = (x & 0x7f800000u) == 0;
    const double a = flushed ? 0.0 : double(f);
    ex2.push_back(std::isnan(f) ? 0x7fffffffu : std::bit_cast<uint32_t>(float(std::exp2(a))));
    rcp.push_back(std::isnan(f) ? 0x7fffffffu
                                : std::bit_cast<uint32_t>(float(1.0 / (flushed ? std::copysign(0.0, f) : a))));
  }
  for (uint32_t& r : ex2)
    if ((r & 0x7f800000u) == 0) r &= 0x80000000u;
  for (uint32_t& r : rcp)
    if ((r & 0x7f800000u) == 0) r &= 0x80000000u;
  expectGpuResults("ex2.approx.ftz.f32", in, ex2, arena());
  expectGpuResults("rcp.approx.ftz.f32", in, rcp, arena());
}

// Every recorded result, where tools/gpu-probe/mufu27/verify.py has unpacked them (CUEMU_MUFU_RECORDS=folder of
// "<instruction>.<set>.in/.out" files, raw little-endian u32): 65.7 million operands in 18 sets.
TEST(PtxSpecialFunctions, EveryRecordedResult) {
  const char* folder = std::getenv("CUEMU_MUFU_RECORDS");
  if (!folder) GTEST_SKIP() << "CUEMU_MUFU_RECORDS not set (tools/gpu-probe/mufu27/verify.py)";
  auto read = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<uint32_t> v(std::filesystem::file_size(p) / 4);
    f.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * 4));
    return v;
  };
  size_t files = 0, operands = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".in") continue;
    const std::string name = entry.path().stem().string();  // "ex2.approx.ftz.f32.p1"
    const std::string instruction = name.substr(0, name.rfind('.'));
    std::vector<uint32_t> in = read(entry.path()),
                          gpu = read(std::filesystem::path(entry.path()).replace_extension(".out"));
    ASSERT_EQ(in.size(), gpu.size()) << name;
    while (in.size() % 256) in.push_back(in.back()), gpu.push_back(gpu.back());
    ptxtest::Arena memory(in.size() * 8 + (size_t(1) << 20));
    SCOPED_TRACE(name);
    expectGpuResults(instruction, in, gpu, memory);
    ++files;
    operands += in.size();
  }
  EXPECT_GT(files, 0u);
  std::printf("%zu files, %zu operands\n", files, operands);
}

// The handlers compute a warp at a time (num::*ApproxF32 on 32 lanes: the table reads of the lanes overlap, and
// lanes of other classes take the lane-by-lane path). Their results must be the lane-by-lane functions' (which
// every recorded GPU result checks) for every lane of warps that mix operand classes, and lanes left out by a
// predicate keep their register. Also div.approx, whose reciprocal is the warp form's.
std::string maskedKernel(const std::string& instruction, bool binary) {
  return R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)
{
  .reg .pred %p;
  .reg .f32 %x, %z, %y;
  .reg .b32 %t, %c, %m;
  .reg .b64 %a, %b, %d, %o;
  ld.param.u64 %a, [pa];
  ld.param.u64 %b, [pb];
  ld.param.u64 %d, [pd];
  mov.u32 %t, %tid.x;
  mov.u32 %c, %ctaid.x;
  mad.lo.u32 %t, %c, 256, %t;
  mul.wide.u32 %o, %t, 4;
  add.s64 %a, %a, %o;
  add.s64 %b, %b, %o;
  add.s64 %d, %d, %o;
  ld.global.f32 %x, [%a];
  ld.global.f32 %z, [%b];
  mov.b32 %y, 0x7fc00123;
  rem.u32 %m, %t, 7;
  setp.ne.u32 %p, %m, 3;
  @%p )" +
         instruction + (binary ? " %y, %x, %z;" : " %y, %x;") + R"(
  st.global.f32 [%d], %y;
  ret;
}
)";
}

// Operands of every class, mixed within warps: normal numbers of every exponent, the ends of the ranges the tables
// serve (exponent fields 1, 252-254; ex2 around -126, 128 and 256), zeros, subnormals, infinities and NaNs.
std::vector<uint32_t> mixedOperands(size_t n, uint32_t seed) {
  static const uint32_t kEdges[] = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
      0xffc00001u, 0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x00ffffffu, 0x7e000000u, 0x7e7fffffu,
      0x7e800000u, 0x7effffffu, 0xfe800001u, 0x3f800000u, 0xbf800000u, 0x40000000u, 0xc2fc0000u, 0xc2fc0001u,
      0xc2fbffffu, 0xc3000000u, 0xc3000001u, 0x42fe0000u, 0x43000000u, 0x437fffffu, 0x43800000u, 0xc37fffffu,
      0xc3800000u, 0x33ffffffu, 0x34000000u, 0xb4000000u, 0x3f7fffffu, 0x3fffffffu, 0x40800000u, 0x00000100u};
  std::vector<uint32_t> v(n);
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 32);
  };
  for (uint32_t& x : v) {
    const uint32_t r = next(), pick = r % 8;
    if (pick == 0)
      x = kEdges[next() % (sizeof kEdges / sizeof kEdges[0])];
    else if (pick == 1)
      x = next();  // any bits
    else if (pick <= 4)
      x = (next() & 0x807fffffu) | (0x7a + next() % 12) << 23;  // |x| in [2^-5, 2^7): ex2's tables
    else
      x = (next() & 0x807fffffu) | (1 + next() % 254) << 23;  // any normal number
  }
  return v;
}

TEST(PtxSpecialFunctions, WarpFormsAsTheLaneForms) {
  const size_t n = size_t(1) << 18;
  ptxtest::Arena memory(n * 16 + (size_t(1) << 20));
  const std::vector<uint32_t> xs = mixedOperands(n, 1), zs = mixedOperands(n, 2);
  auto* a = memory.alloc<uint32_t>(n);
  auto* b = memory.alloc<uint32_t>(n);
  auto* d = memory.alloc<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) a[i] = xs[i], b[i] = zs[i];
  using Lane = uint32_t (*)(uint32_t, bool);
  auto divide = [](uint32_t x, uint32_t y, bool ftz) {
    const float dividend = std::bit_cast<float>(x), divisor = std::bit_cast<float>(y);
    const uint32_t r = num::rcpApproxF32(std::bit_cast<uint32_t>(ftz ? num::flush(divisor) : divisor), false);
    const float q = (ftz ? num::flush(dividend) : dividend) * num::flush(std::bit_cast<float>(r));
    return std::bit_cast<uint32_t>(num::canon(ftz ? num::flush(q) : q));
  };
  const struct {
    const char* instruction;
    Lane lane;  // nullptr: div.approx
    bool ftz;
  } cases[] = {{"ex2.approx.f32", &num::ex2ApproxF32, false},
               {"ex2.approx.ftz.f32", &num::ex2ApproxF32, true},
               {"rcp.approx.f32", &num::rcpApproxF32, false},
               {"rcp.approx.ftz.f32", &num::rcpApproxF32, true},
               {"rsqrt.approx.f32", &num::rsqrtApproxF32, false},
               {"rsqrt.approx.ftz.f32", &num::rsqrtApproxF32, true},
               {"div.approx.f32", nullptr, false},
               {"div.approx.ftz.f32", nullptr, true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.instruction);
    CompileResult r = compile(maskedKernel(c.instruction, c.lane == nullptr));
    ASSERT_TRUE(r.program) << r.error;
    ptxtest::Params params(kernels(*r.program)[0]);
    params.arg(a).arg(b).arg(d);
    LaunchResult res = launch(*r.program, 0, ptxtest::launchParams(Dim3{uint32_t(n / 256)}, Dim3{256}, params, memory));
    ASSERT_TRUE(res.ok()) << res.fault.message;
    size_t failures = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t want = i % 7 == 3 ? 0x7fc00123u : c.lane ? c.lane(xs[i], c.ftz) : divide(xs[i], zs[i], c.ftz);
      if (d[i] != want && ++failures <= 8)
        ADD_FAILURE() << std::hex << "lane " << i % 32 << ", operands 0x" << xs[i] << " 0x" << zs[i] << ": 0x" << d[i]
                      << ", lane by lane 0x" << want;
    }
    EXPECT_EQ(failures, 0u) << "of " << n;
  }
}

}  // namespace
