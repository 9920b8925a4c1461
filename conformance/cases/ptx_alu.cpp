// ptx.integer, ptx.float, ptx.convert, ptx.bits: one case per instruction form. Each case generates a small PTX
// kernel at run time that applies the instruction to arrays of operands (one element per thread), runs it on a
// cross product of edge values, and compares with results computed on the host from the PTX ISA's definition.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using u64 = uint64_t;
using u32 = uint32_t;
using s32 = int32_t;
using s64 = int64_t;

// ---- value sets ----------------------------------------------------------------------------------------------------

enum class Set { I16, I32, I64, F32, F64, Shift32, Shift64, Small32, F16, BF16, F16x2 };

u64 F2B(float f) {
  u32 b;
  std::memcpy(&b, &f, 4);
  return b;
}
float B2F(u64 b) {
  u32 v = static_cast<u32>(b);
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}
u64 D2B(double d) {
  u64 b;
  std::memcpy(&b, &d, 8);
  return b;
}
double B2D(u64 b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

const std::vector<u64>& Values(Set s) {
  static const std::vector<u64> i16 = {0, 1, 0xffff, 7, 0xfff9, 0x7fff, 0x8000, 0x1234, 0xfed4, 255, 256};
  static const std::vector<u64> i32 = {0,   1,          0xffffffff, 2,          7,          0xfffffff9,
                                       100, 0xffffff9c, 0x7fffffff, 0x80000000, 0x12345678, 0xdeadbeef,
                                       31,  32,         33,         0x80000001, 0x0000ffff, 0xffff0000};
  static const std::vector<u64> i64 = {0,
                                       1,
                                       ~u64{0},
                                       7,
                                       ~u64{6},
                                       0x7fffffffffffffffull,
                                       0x8000000000000000ull,
                                       0x123456789abcdef0ull,
                                       0xfedcba9876543210ull,
                                       63,
                                       64,
                                       0x100000000ull,
                                       0xffffffffull,
                                       0xffffffff00000000ull};
  static const std::vector<u64> f32 = {F2B(0.0f),
                                       F2B(-0.0f),
                                       F2B(1.0f),
                                       F2B(-1.0f),
                                       F2B(0.5f),
                                       F2B(-2.5f),
                                       F2B(1.5f),
                                       F2B(3.0f),
                                       F2B(3.14159265f),
                                       F2B(1e-3f),
                                       F2B(1e30f),
                                       F2B(-1e30f),
                                       F2B(3.4e38f),
                                       0x00000001u /*min denormal*/,
                                       0x807fffffu /*-max denormal*/,
                                       0x00800000u /*min normal*/,
                                       0x7f800000u /*inf*/,
                                       0xff800000u /*-inf*/,
                                       0x7fc00000u /*qNaN*/,
                                       0x7f800001u /*sNaN*/,
                                       0xffc12345u /*-NaN payload*/,
                                       F2B(16777216.0f),
                                       F2B(0.3333333f),
                                       F2B(-7.75e-20f)};
  static const std::vector<u64> f64 = {D2B(0.0),
                                       D2B(-0.0),
                                       D2B(1.0),
                                       D2B(-1.0),
                                       D2B(0.5),
                                       D2B(-2.5),
                                       D2B(3.141592653589793),
                                       D2B(1e-300),
                                       D2B(1e300),
                                       D2B(-1e300),
                                       0x0000000000000001ull,
                                       0x800fffffffffffffull,
                                       0x0010000000000000ull,
                                       0x7ff0000000000000ull,
                                       0xfff0000000000000ull,
                                       0x7ff8000000000000ull,
                                       0x7ff0000000000001ull,
                                       D2B(9007199254740993.0),
                                       D2B(1.0 / 3.0),
                                       D2B(-123456.789)};
  static const std::vector<u64> shift32 = {0, 1, 5, 31, 32, 33, 100, 0xffffffff};
  static const std::vector<u64> shift64 = {0, 1, 31, 32, 63, 64, 65, 0xffffffff};
  static const std::vector<u64> small32 = {0, 1, 2, 3, 4, 8, 15, 16, 24, 31, 32};
  static const std::vector<u64> f16 = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0xc100, 0x7c00, 0xfc00, 0x7e00, 0x7c01,
                                       0xfe12, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3555, 0x4248, 0x5640, 0x1400};
  static const std::vector<u64> bf16 = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0xc020, 0x7f80, 0xff80, 0x7fc0,
                                        0x7f81, 0x0001, 0x8080, 0x0080, 0x7f7f, 0x3eab, 0x4049, 0x42c8, 0xc2f7};
  static const std::vector<u64> f16x2 = [] {
    std::vector<u64> v;
    for (size_t i = 0; i < f16.size(); ++i) v.push_back(f16[i] | (f16[(i * 7 + 3) % f16.size()] << 16));
    return v;
  }();
  switch (s) {
    case Set::I16: return i16;
    case Set::I32: return i32;
    case Set::I64: return i64;
    case Set::F32: return f32;
    case Set::F64: return f64;
    case Set::Shift32: return shift32;
    case Set::Shift64: return shift64;
    case Set::Small32: return small32;
    case Set::F16: return f16;
    case Set::BF16: return bf16;
    case Set::F16x2: return f16x2;
  }
  return i32;
}

// ---- case description ----------------------------------------------------------------------------------------------

enum class Cmp { Exact, Float32, Float64, Float32ZeroSignFree, Float64ZeroSignFree, Approx32 };

struct Operand {
  int bits = 0;  // 0: unused
  Set set = Set::I32;
};

using Ref = std::function<u64(u64, u64, u64)>;
using Skip = std::function<bool(u64, u64, u64)>;

struct AluCase {
  std::string name;  // case name: instruction with '_' for '.'
  std::string body;  // PTX using %a %b %c -> %d
  Operand a, b, c;
  int dBits;
  Ref ref;
  Cmp cmp = Cmp::Exact;
  Skip skip = nullptr;   // inputs whose result PTX leaves unspecified
  double tolerance = 0;  // Approx32: relative error bound (or absolute below 1)
  std::string target = "sm_75";
};

std::string RegType(int bits) { return ".b" + std::to_string(bits); }

std::string KernelFor(const AluCase& c) {
  std::ostringstream k;
  k << ".version 7.8\n.target " << c.target << "\n.address_size 64\n\n";
  k << ".visible .entry alu(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)\n{\n";
  k << "\t.reg .pred %p<4>;\n\t.reg .pred %q;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<12>;\n";
  k << "\t.reg .f32 %tf<4>;\n\t.reg .f64 %td<4>;\n\t.reg .b32 %tr<4>;\n\t.reg .b64 %trd<4>;\n";
  for (auto [reg, op] : {std::pair{'a', c.a}, std::pair{'b', c.b}, std::pair{'c', c.c}})
    if (op.bits) k << "\t.reg " << RegType(op.bits) << " %" << reg << ";\n";
  k << "\t.reg " << RegType(c.dBits) << " %d;\n";
  k << "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmad.lo.u32 %r1, %r1, %r2, %r3;\n";
  k << "\tld.param.u32 %r2, [n];\n\tsetp.ge.u32 %p1, %r1, %r2;\n\t@%p1 bra DONE;\n\tcvt.u64.u32 %rd1, %r1;\n";
  int idx = 2;
  for (auto [reg, op] : {std::pair{'a', c.a}, std::pair{'b', c.b}, std::pair{'c', c.c}}) {
    if (!op.bits) continue;
    k << "\tld.param.u64 %rd" << idx << ", [p" << reg << "];\n\tcvta.to.global.u64 %rd" << idx << ", %rd" << idx
      << ";\n\tmad.lo.u64 %rd" << idx << ", %rd1, " << op.bits / 8 << ", %rd" << idx << ";\n\tld.global"
      << RegType(op.bits) << " %" << reg << ", [%rd" << idx << "];\n";
    ++idx;
  }
  k << "\t" << c.body << "\n";
  k << "\tld.param.u64 %rd9, [pd];\n\tcvta.to.global.u64 %rd9, %rd9;\n\tmad.lo.u64 %rd9, %rd1, " << c.dBits / 8
    << ", %rd9;\n\tst.global" << RegType(c.dBits) << " [%rd9], %d;\n";
  k << "DONE:\n\tret;\n}\n";
  return k.str();
}

u64 Mask(int bits) { return bits >= 64 ? ~u64{0} : ((u64{1} << bits) - 1); }

std::string Hex(u64 v, int bits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", bits / 4, static_cast<unsigned long long>(v));
  return buf;
}

bool IsNaN32(u64 b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu); }
bool IsNaN64(u64 b) { return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull); }

bool Matches(const AluCase& c, u64 want, u64 got) {
  switch (c.cmp) {
    case Cmp::Exact: return want == got;
    case Cmp::Float32: return IsNaN32(want) ? IsNaN32(got) : want == got;
    case Cmp::Float64: return IsNaN64(want) ? IsNaN64(got) : want == got;
    case Cmp::Float32ZeroSignFree:
      if (IsNaN32(want)) return IsNaN32(got);
      return want == got || ((want & 0x7fffffff) == 0 && (got & 0x7fffffff) == 0);
    case Cmp::Float64ZeroSignFree:
      if (IsNaN64(want)) return IsNaN64(got);
      return want == got || ((want << 1) == 0 && (got << 1) == 0);
    case Cmp::Approx32: {
      float w = B2F(want), g = B2F(got);
      if (std::isnan(w)) return std::isnan(g);
      if (std::isinf(w)) return w == g;
      double err = std::fabs(static_cast<double>(w) - g);
      return err <= c.tolerance * std::max(1.0, std::fabs(static_cast<double>(w)));
    }
  }
  return false;
}

void PrintTo(const AluCase& c, std::ostream* os) { *os << c.name; }

// Loads the case's kernel into a fresh context, runs it on the inputs and returns one output per input.
// Fails the current case (and returns false) on any driver error.
bool RunKernel(const AluCase& c, const std::vector<u64>& va, const std::vector<u64>& vb, const std::vector<u64>& vc,
               std::vector<u64>* results) {
  std::string ptx = KernelFor(c);
  if (const char* dir = std::getenv("CUEMU_CONF_DUMP_PTX")) {
    // Lets a developer check every generated kernel with ptxas: CUEMU_CONF_DUMP_PTX=/tmp/k ... --cases 'ptx.*'
    std::ofstream(std::string(dir) + "/" + c.name + ".ptx") << ptx;
  }
  bool ok = false;
  [&] {
    CU_ASSERT_OK(cuInit(0));
    CUdevice dev;
    CU_ASSERT_OK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CU_ASSERT_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
    struct Guard {
      CUcontext c;
      ~Guard() { cuCtxDestroy(c); }
    } guard{ctx};
    const size_t n = va.size();
    ASSERT_GT(n, 0u);
    CUmodule mod = nullptr;
    char log[4096] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
    CU_ASSERT_OK(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals)) << log << "\n" << ptx;
    CUfunction f;
    CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "alu"));
    auto upload = [&](const std::vector<u64>& v, int bits, CUdeviceptr* out) -> CUresult {
      *out = 0;
      if (!bits) return CUDA_SUCCESS;
      std::vector<unsigned char> bytes(n * static_cast<size_t>(bits) / 8);
      for (size_t i = 0; i < n; ++i) std::memcpy(bytes.data() + i * bits / 8, &v[i], static_cast<size_t>(bits) / 8);
      CUresult r = cuMemAlloc(out, bytes.size());
      if (r != CUDA_SUCCESS) return r;
      return cuMemcpyHtoD(*out, bytes.data(), bytes.size());
    };
    CUdeviceptr da, db, dc, dd;
    CU_ASSERT_OK(upload(va, c.a.bits, &da));
    CU_ASSERT_OK(upload(vb, c.b.bits, &db));
    CU_ASSERT_OK(upload(vc, c.c.bits, &dc));
    CU_ASSERT_OK(cuMemAlloc(&dd, n * c.dBits / 8));
    unsigned count = static_cast<unsigned>(n);
    void* params[] = {&da, &db, &dc, &dd, &count};
    CU_ASSERT_OK(
        cuLaunchKernel(f, static_cast<unsigned>((n + 127) / 128), 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    CU_ASSERT_OK(cuCtxSynchronize());
    std::vector<unsigned char> out(n * c.dBits / 8);
    CU_ASSERT_OK(cuMemcpyDtoH(out.data(), dd, out.size()));
    results->assign(n, 0);
    for (size_t i = 0; i < n; ++i)
      std::memcpy(&(*results)[i], out.data() + i * c.dBits / 8, static_cast<size_t>(c.dBits) / 8);
    ok = true;
  }();
  return ok;
}

void RunAluCase(const AluCase& c) {
  // Inputs: the cross product of the operands' value sets, minus the skipped combinations.
  std::vector<u64> va, vb, vc;
  const auto& sa = Values(c.a.set);
  const auto& sb = c.b.bits ? Values(c.b.set) : std::vector<u64>{0};
  const auto& sc = c.c.bits ? Values(c.c.set) : std::vector<u64>{0};
  for (u64 x : sa)
    for (u64 y : sb)
      for (u64 z : sc) {
        u64 xa = x & Mask(c.a.bits), yb = y & Mask(c.b.bits ? c.b.bits : 64), zc = z & Mask(c.c.bits ? c.c.bits : 64);
        if (c.skip && c.skip(xa, yb, zc)) continue;
        va.push_back(xa);
        vb.push_back(yb);
        vc.push_back(zc);
      }
  std::vector<u64> got;
  if (!RunKernel(c, va, vb, vc, &got)) return;
  int failures = 0;
  for (size_t i = 0; i < va.size() && failures < 8; ++i) {
    u64 want = c.ref(va[i], vb[i], vc[i]) & Mask(c.dBits);
    if (!Matches(c, want, got[i])) {
      ++failures;
      ADD_FAILURE() << c.body << " a=" << Hex(va[i], c.a.bits) << (c.b.bits ? " b=" + Hex(vb[i], c.b.bits) : "")
                    << (c.c.bits ? " c=" + Hex(vc[i], c.c.bits) : "") << ": got " << Hex(got[i], c.dBits)
                    << ", expected " << Hex(want, c.dBits);
    }
  }
  EXPECT_EQ(failures, 0) << va.size() << " inputs";
}

// ---- host references -----------------------------------------------------------------------------------------------

s32 S32(u64 v) { return static_cast<s32>(static_cast<u32>(v)); }
s64 S64(u64 v) { return static_cast<s64>(v); }
int16_t S16(u64 v) { return static_cast<int16_t>(static_cast<uint16_t>(v)); }
u64 FromS32(s64 v) { return static_cast<u32>(static_cast<s32>(v)); }

u64 Clz32(u64 v) {
  u32 x = static_cast<u32>(v);
  return x ? static_cast<u64>(__builtin_clz(x)) : 32;
}
u64 Clz64(u64 v) { return v ? static_cast<u64>(__builtin_clzll(v)) : 64; }
u64 Brev32(u64 v) {
  u32 x = static_cast<u32>(v), r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
u64 Brev64(u64 v) {
  u64 r = 0;
  for (int i = 0; i < 64; ++i) r |= ((v >> i) & 1u) << (63 - i);
  return r;
}
u64 Bfind32(u64 v, bool isSigned, bool shiftAmt) {
  u32 x = static_cast<u32>(v);
  if (isSigned && (x & 0x80000000u)) x = ~x;
  if (!x) return 0xffffffffu;
  u32 pos = 31 - static_cast<u32>(__builtin_clz(x));
  return shiftAmt ? 31 - pos : pos;
}
u64 Bfe32(u64 a, u64 b, u64 c, bool isSigned) {
  u32 x = static_cast<u32>(a), pos = static_cast<u32>(b) & 0xff, len = static_cast<u32>(c) & 0xff;
  u32 msb = 31;
  bool sbit = isSigned && (len == 0 ? false : ((pos + len - 1 > msb) ? (x >> msb) & 1 : (x >> (pos + len - 1)) & 1));
  u32 d = 0;
  for (u32 i = 0; i <= msb; ++i) {
    bool bit = (i < len && pos + i <= msb) ? (x >> (pos + i)) & 1 : sbit;
    d |= static_cast<u32>(bit) << i;
  }
  return d;
}
u64 Prmt(u64 a, u64 b, u64 c) {
  u64 bytes = (static_cast<u64>(static_cast<u32>(b)) << 32) | static_cast<u32>(a);
  u32 sel = static_cast<u32>(c), d = 0;
  for (int i = 0; i < 4; ++i) {
    u32 s = (sel >> (4 * i)) & 0xf;
    u32 byte = static_cast<u32>(bytes >> (8 * (s & 7))) & 0xff;
    if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
    d |= byte << (8 * i);
  }
  return d;
}

u64 SatAdd32(u64 a, u64 b) {
  s64 r = static_cast<s64>(S32(a)) + S32(b);
  r = std::min<s64>(std::max<s64>(r, INT32_MIN), INT32_MAX);
  return FromS32(r);
}
u64 SatSub32(u64 a, u64 b) {
  s64 r = static_cast<s64>(S32(a)) - S32(b);
  r = std::min<s64>(std::max<s64>(r, INT32_MIN), INT32_MAX);
  return FromS32(r);
}

// Float helpers with a rounding mode.
template <class F> auto Rounded(int mode, F f) {
  int old = std::fegetround();
  std::fesetround(mode);
  auto r = f();
  std::fesetround(old);
  return r;
}

float FlushF(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
u64 Canon32(float x) { return std::isnan(x) ? 0x7fffffffu : F2B(x); }
u64 Canon64(double x) { return std::isnan(x) ? 0x7fffffffffffffffull : D2B(x); }

Ref F32Bin(int mode, bool ftz, float (*op)(float, float)) {
  return [=](u64 a, u64 b, u64) {
    volatile float x = B2F(a), y = B2F(b);
    if (ftz) {
      x = FlushF(x);
      y = FlushF(y);
    }
    float r = Rounded(mode, [&] {
      volatile float v = op(x, y);
      return static_cast<float>(v);
    });
    if (ftz) r = FlushF(r);
    return Canon32(r);
  };
}
Ref F64Bin(int mode, double (*op)(double, double)) {
  return [=](u64 a, u64 b, u64) {
    volatile double x = B2D(a), y = B2D(b);
    double r = Rounded(mode, [&] {
      volatile double v = op(x, y);
      return static_cast<double>(v);
    });
    return Canon64(r);
  };
}

float AddF(float a, float b) { return a + b; }
float SubF(float a, float b) { return a - b; }
float MulF(float a, float b) { return a * b; }
float DivF(float a, float b) { return a / b; }
double AddD(double a, double b) { return a + b; }
double SubD(double a, double b) { return a - b; }
double MulD(double a, double b) { return a * b; }
double DivD(double a, double b) { return a / b; }

float PtxMinF(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a < b ? a : b;
}
float PtxMaxF(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a > b ? a : b;
}

// PTX float -> integer conversion: round as asked, saturate to the destination range, NaN -> 0.
template <class I> u64 FloatToInt(double v, int mode) {
  if (std::isnan(v)) return 0;
  double r = Rounded(mode, [&] { return std::nearbyint(v); });
  if (r <= static_cast<double>(std::numeric_limits<I>::min()))
    return static_cast<u64>(std::numeric_limits<I>::min()) & Mask(8 * sizeof(I));
  if (r >= static_cast<double>(std::numeric_limits<I>::max()))
    return static_cast<u64>(std::numeric_limits<I>::max()) & Mask(8 * sizeof(I));
  return static_cast<u64>(static_cast<I>(r)) & Mask(8 * sizeof(I));
}

// float -> IEEE half, round to nearest even.
u64 FloatToHalf(float f) {
  u32 x = static_cast<u32>(F2B(f));
  u32 sign = (x >> 16) & 0x8000;
  if (std::isnan(f)) return 0x7fff;  // canonical NaN on the GPU
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 5.9604645e-08f / 2) {
    if (a > 2.9802322e-08f) return sign | 1;
    return sign;
  }
  // Scale into the half grid and round with the host's round-to-nearest-even.
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5,1)
  int exp = e - 1;    // a = 1.x * 2^exp
  if (exp < -14) {    // subnormal half: units of 2^-24
    float units = std::nearbyint(a * 16777216.0f);
    return sign | static_cast<u32>(units);
  }
  float mant = std::nearbyint(std::ldexp(a, 10 - exp));  // 1024..2048
  if (mant >= 2048.0f) {
    mant /= 2;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00;
  return sign | static_cast<u32>((exp + 15) << 10) | (static_cast<u32>(mant) & 0x3ff);
}
float HalfToFloat(u64 h) {
  u32 sign = (h & 0x8000) ? 1 : 0, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

Operand I(int bits, Set s) { return {bits, s}; }
const Operand N{};

// ---- the cases -----------------------------------------------------------------------------------------------------

std::vector<AluCase> IntegerCases() {
  Operand A32 = I(32, Set::I32), A64 = I(64, Set::I64), A16 = I(16, Set::I16);
  Skip nonzeroB32 = [](u64, u64 b, u64) { return static_cast<u32>(b) == 0; };
  Skip nonzeroB64 = [](u64, u64 b, u64) { return b == 0; };
  Skip signedDivBad32 = [](u64 a, u64 b, u64) {
    return static_cast<u32>(b) == 0 || (static_cast<u32>(a) == 0x80000000u && static_cast<u32>(b) == 0xffffffffu);
  };
  Skip signedDivBad64 = [](u64 a, u64 b, u64) { return b == 0 || (a == 0x8000000000000000ull && b == ~u64{0}); };
  return {
      {"add_s32", "add.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a + b; }},
      {"add_u64", "add.u64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a + b; }},
      {"add_s16", "add.s16 %d, %a, %b;", A16, A16, N, 16, [](u64 a, u64 b, u64) { return a + b; }},
      {"add_sat_s32", "add.sat.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return SatAdd32(a, b); }},
      {"sub_s32", "sub.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a - b; }},
      {"sub_s64", "sub.s64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a - b; }},
      {"sub_sat_s32", "sub.sat.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return SatSub32(a, b); }},
      {"mul_lo_s32", "mul.lo.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a * b; }},
      {"mul_hi_s32", "mul.hi.s32 %d, %a, %b;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return static_cast<u64>((static_cast<s64>(S32(a)) * S32(b)) >> 32); }},
      {"mul_hi_u32", "mul.hi.u32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return (a * b) >> 32; }},
      {"mul_wide_s32", "mul.wide.s32 %d, %a, %b;", A32, A32, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>(static_cast<s64>(S32(a)) * S32(b)); }},
      {"mul_wide_u32", "mul.wide.u32 %d, %a, %b;", A32, A32, N, 64, [](u64 a, u64 b, u64) { return a * b; }},
      {"mul_wide_s16", "mul.wide.s16 %d, %a, %b;", A16, A16, N, 32,
       [](u64 a, u64 b, u64) { return static_cast<u64>(static_cast<u32>(S16(a) * S16(b))); }},
      {"mul_lo_u64", "mul.lo.u64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a * b; }},
      {"mul_hi_u64", "mul.hi.u64 %d, %a, %b;", A64, A64, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>((static_cast<unsigned __int128>(a) * b) >> 64); }},
      {"mul_hi_s64", "mul.hi.s64 %d, %a, %b;", A64, A64, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>((static_cast<__int128>(S64(a)) * S64(b)) >> 64); }},
      {"mad_lo_s32", "mad.lo.s32 %d, %a, %b, %c;", A32, A32, I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return a * b + c; }},
      {"mad_hi_u32", "mad.hi.u32 %d, %a, %b, %c;", A32, A32, I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return ((a * b) >> 32) + c; }},
      {"mad_wide_u32", "mad.wide.u32 %d, %a, %b, %c;", A32, A32, I(64, Set::I64), 64,
       [](u64 a, u64 b, u64 c) { return a * b + c; }},
      {"mad_lo_s64", "mad.lo.s64 %d, %a, %b, %c;", A64, A64, I(64, Set::Shift64), 64,
       [](u64 a, u64 b, u64 c) { return a * b + c; }},
      {"div_u32", "div.u32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a / b; }, Cmp::Exact,
       nonzeroB32},
      {"div_s32", "div.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return FromS32(S32(a) / S32(b)); },
       Cmp::Exact, signedDivBad32},
      {"rem_u32", "rem.u32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a % b; }, Cmp::Exact,
       nonzeroB32},
      {"rem_s32", "rem.s32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return FromS32(S32(a) % S32(b)); },
       Cmp::Exact, signedDivBad32},
      {"div_u64", "div.u64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a / b; }, Cmp::Exact,
       nonzeroB64},
      {"div_s64", "div.s64 %d, %a, %b;", A64, A64, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>(S64(a) / S64(b)); }, Cmp::Exact, signedDivBad64},
      {"rem_s64", "rem.s64 %d, %a, %b;", A64, A64, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>(S64(a) % S64(b)); }, Cmp::Exact, signedDivBad64},
      {"abs_s32", "abs.s32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) { return static_cast<u32>(a) == 0x80000000u ? a : FromS32(std::abs(S32(a))); }},
      {"neg_s32", "neg.s32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return 0 - a; }},
      {"abs_s64", "abs.s64 %d, %a;", A64, N, N, 64,
       [](u64 a, u64, u64) { return a == 0x8000000000000000ull ? a : static_cast<u64>(std::llabs(S64(a))); }},
      {"min_s32", "min.s32 %d, %a, %b;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return FromS32(std::min(S32(a), S32(b))); }},
      {"max_s32", "max.s32 %d, %a, %b;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return FromS32(std::max(S32(a), S32(b))); }},
      {"min_u32", "min.u32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return std::min(a, b); }},
      {"max_u64", "max.u64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return std::max(a, b); }},
      {"min_s64", "min.s64 %d, %a, %b;", A64, A64, N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>(std::min(S64(a), S64(b))); }},
      {"min_s16", "min.s16 %d, %a, %b;", A16, A16, N, 16,
       [](u64 a, u64 b, u64) { return static_cast<u64>(static_cast<uint16_t>(std::min(S16(a), S16(b)))); }},
      {"sad_u32", "sad.u32 %d, %a, %b, %c;", A32, A32, I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return (a > b ? a - b : b - a) + c; }},
      {"setp_lt_s32", "setp.lt.s32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return u64{S32(a) < S32(b)}; }},
      {"setp_lt_u32", "setp.lt.u32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return u64{a < b}; }},
      {"setp_ge_s64", "setp.ge.s64 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A64, A64, N, 32,
       [](u64 a, u64 b, u64) { return u64{S64(a) >= S64(b)}; }},
      {"setp_hi_u64", "setp.hi.u64 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A64, A64, N, 32,
       [](u64 a, u64 b, u64) { return u64{a > b}; }},
      {"setp_eq_b32", "setp.eq.b32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A32, A32, N, 32,
       [](u64 a, u64 b, u64) { return u64{a == b}; }},
      {"setp_ne_s16", "setp.ne.s16 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", A16, A16, N, 32,
       [](u64 a, u64 b, u64) { return u64{a != b}; }},
      {"setp_le_s32_and", "setp.eq.u32 %p2, %r1, %r1;\n\tsetp.le.and.s32 %q, %a, %b, %p2;\n\tselp.u32 %d, 1, 0, %q;",
       A32, A32, N, 32, [](u64 a, u64 b, u64) { return u64{S32(a) <= S32(b)}; }},
      {"selp_b32", "setp.ne.u32 %q, %c, 0;\n\tselp.b32 %d, %a, %b, %q;", A32, A32, I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return c ? a : b; }},
  };
}

std::vector<AluCase> BitsCases() {
  Operand A32 = I(32, Set::I32), A64 = I(64, Set::I64);
  return {
      {"and_b32", "and.b32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a & b; }},
      {"or_b32", "or.b32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a | b; }},
      {"xor_b32", "xor.b32 %d, %a, %b;", A32, A32, N, 32, [](u64 a, u64 b, u64) { return a ^ b; }},
      {"not_b32", "not.b32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return ~a; }},
      {"cnot_b32", "cnot.b32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return u64{a == 0}; }},
      {"and_b64", "and.b64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a & b; }},
      {"xor_b64", "xor.b64 %d, %a, %b;", A64, A64, N, 64, [](u64 a, u64 b, u64) { return a ^ b; }},
      {"shl_b32", "shl.b32 %d, %a, %b;", A32, I(32, Set::Shift32), N, 32,
       [](u64 a, u64 b, u64) { return b >= 32 ? 0 : a << b; }},
      {"shr_u32", "shr.u32 %d, %a, %b;", A32, I(32, Set::Shift32), N, 32,
       [](u64 a, u64 b, u64) { return b >= 32 ? 0 : a >> b; }},
      {"shr_s32", "shr.s32 %d, %a, %b;", A32, I(32, Set::Shift32), N, 32,
       [](u64 a, u64 b, u64) { return FromS32(S32(a) >> std::min<u64>(b, 31)); }},
      {"shl_b64", "shl.b64 %d, %a, %b;", A64, I(32, Set::Shift64), N, 64,
       [](u64 a, u64 b, u64) { return b >= 64 ? 0 : a << b; }},
      {"shr_s64", "shr.s64 %d, %a, %b;", A64, I(32, Set::Shift64), N, 64,
       [](u64 a, u64 b, u64) { return static_cast<u64>(S64(a) >> std::min<u64>(b, 63)); }},
      {"shr_u64", "shr.u64 %d, %a, %b;", A64, I(32, Set::Shift64), N, 64,
       [](u64 a, u64 b, u64) { return b >= 64 ? 0 : a >> b; }},
      {"popc_b32", "popc.b32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) { return static_cast<u64>(__builtin_popcount(static_cast<u32>(a))); }},
      {"popc_b64", "popc.b64 %d, %a;", A64, N, N, 32,
       [](u64 a, u64, u64) { return static_cast<u64>(__builtin_popcountll(a)); }},
      {"clz_b32", "clz.b32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return Clz32(a); }},
      {"clz_b64", "clz.b64 %d, %a;", A64, N, N, 32, [](u64 a, u64, u64) { return Clz64(a); }},
      {"brev_b32", "brev.b32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return Brev32(a); }},
      {"brev_b64", "brev.b64 %d, %a;", A64, N, N, 64, [](u64 a, u64, u64) { return Brev64(a); }},
      {"bfind_u32", "bfind.u32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return Bfind32(a, false, false); }},
      {"bfind_s32", "bfind.s32 %d, %a;", A32, N, N, 32, [](u64 a, u64, u64) { return Bfind32(a, true, false); }},
      {"bfind_shiftamt_u32", "bfind.shiftamt.u32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) { return Bfind32(a, false, true); }},
      {"bfe_u32", "bfe.u32 %d, %a, %b, %c;", A32, I(32, Set::Small32), I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return Bfe32(a, b, c, false); }},
      {"bfe_s32", "bfe.s32 %d, %a, %b, %c;", A32, I(32, Set::Small32), I(32, Set::Small32), 32,
       [](u64 a, u64 b, u64 c) { return Bfe32(a, b, c, true); }},
      {"prmt_b32", "prmt.b32 %d, %a, %b, %c;", A32, A32, I(32, Set::I32), 32,
       [](u64 a, u64 b, u64 c) { return Prmt(a, b, c); }},
  };
}

std::vector<AluCase> FloatCases() {
  Operand F = I(32, Set::F32), D = I(64, Set::F64);
  auto f32 = [](const char* name, const char* body, Ref r, Cmp cmp = Cmp::Float32) {
    return AluCase{name, body, I(32, Set::F32), I(32, Set::F32), N, 32, std::move(r), cmp};
  };
  auto f64 = [](const char* name, const char* body, Ref r, Cmp cmp = Cmp::Float64) {
    return AluCase{name, body, I(64, Set::F64), I(64, Set::F64), N, 64, std::move(r), cmp};
  };
  auto unaryF = [&](const char* name, const char* body, Ref r, Cmp cmp = Cmp::Float32, double tol = 0) {
    AluCase c{name, body, F, N, N, 32, std::move(r), cmp};
    c.tolerance = tol;
    return c;
  };
  std::vector<AluCase> v = {
      f32("add_rn_f32", "add.rn.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, false, AddF)),
      f32("add_rz_f32", "add.rz.f32 %d, %a, %b;", F32Bin(FE_TOWARDZERO, false, AddF)),
      f32("add_rm_f32", "add.rm.f32 %d, %a, %b;", F32Bin(FE_DOWNWARD, false, AddF)),
      f32("add_rp_f32", "add.rp.f32 %d, %a, %b;", F32Bin(FE_UPWARD, false, AddF)),
      f32("add_ftz_f32", "add.ftz.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, true, AddF)),
      f32("sub_rn_f32", "sub.rn.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, false, SubF)),
      f32("mul_rn_f32", "mul.rn.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, false, MulF)),
      f32("mul_rz_f32", "mul.rz.f32 %d, %a, %b;", F32Bin(FE_TOWARDZERO, false, MulF)),
      f32("mul_ftz_f32", "mul.ftz.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, true, MulF)),
      f32("div_rn_f32", "div.rn.f32 %d, %a, %b;", F32Bin(FE_TONEAREST, false, DivF)),
      f32("div_rz_f32", "div.rz.f32 %d, %a, %b;", F32Bin(FE_TOWARDZERO, false, DivF)),
      f32(
          "min_f32", "min.f32 %d, %a, %b;", [](u64 a, u64 b, u64) { return Canon32(PtxMinF(B2F(a), B2F(b))); },
          Cmp::Float32ZeroSignFree),
      f32(
          "max_f32", "max.f32 %d, %a, %b;", [](u64 a, u64 b, u64) { return Canon32(PtxMaxF(B2F(a), B2F(b))); },
          Cmp::Float32ZeroSignFree),
      f32(
          "add_sat_f32", "add.sat.f32 %d, %a, %b;",
          [](u64 a, u64 b, u64) {
            float r = B2F(a) + B2F(b);
            if (std::isnan(r)) return F2B(0.0f);
            return F2B(std::min(1.0f, std::max(0.0f, r)));
          },
          Cmp::Float32ZeroSignFree),
      f32(
          "setp_lt_f32", "setp.lt.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{B2F(a) < B2F(b)}; }, Cmp::Exact),
      f32(
          "setp_ltu_f32", "setp.ltu.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{!(B2F(a) >= B2F(b))}; }, Cmp::Exact),
      f32(
          "setp_eq_f32", "setp.eq.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{B2F(a) == B2F(b)}; }, Cmp::Exact),
      f32(
          "setp_neu_f32", "setp.neu.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{!(B2F(a) == B2F(b))}; }, Cmp::Exact),
      f32(
          "setp_num_f32", "setp.num.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{!std::isnan(B2F(a)) && !std::isnan(B2F(b))}; }, Cmp::Exact),
      f32(
          "setp_nan_f32", "setp.nan.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{std::isnan(B2F(a)) || std::isnan(B2F(b))}; }, Cmp::Exact),
      f32(
          "setp_ge_f32", "setp.ge.f32 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;",
          [](u64 a, u64 b, u64) { return u64{B2F(a) >= B2F(b)}; }, Cmp::Exact),
      f32(
          "copysign_f32", "copysign.f32 %d, %a, %b;",
          [](u64 a, u64 b, u64) { return (b & 0x7fffffffu) | (a & 0x80000000u); }, Cmp::Exact),
      unaryF(
          "abs_f32", "abs.f32 %d, %a;", [](u64 a, u64, u64) { return a & 0x7fffffffu; }, Cmp::Float32),
      unaryF(
          "neg_f32", "neg.f32 %d, %a;", [](u64 a, u64, u64) { return a ^ 0x80000000u; }, Cmp::Float32),
      unaryF("sqrt_rn_f32", "sqrt.rn.f32 %d, %a;", [](u64 a, u64, u64) { return Canon32(std::sqrt(B2F(a))); }),
      unaryF("rcp_rn_f32", "rcp.rn.f32 %d, %a;",
             [](u64 a, u64, u64) {
               volatile float one = 1.0f;
               return Canon32(one / B2F(a));
             }),
      unaryF(
          "sqrt_approx_f32", "sqrt.approx.f32 %d, %a;",
          [](u64 a, u64, u64) { return Canon32(std::sqrt(FlushF(B2F(a)))); }, Cmp::Approx32, 1e-6),
      unaryF(
          "rsqrt_approx_f32", "rsqrt.approx.f32 %d, %a;",
          [](u64 a, u64, u64) { return Canon32(1.0f / std::sqrt(FlushF(B2F(a)))); }, Cmp::Approx32, 1e-6),
      unaryF(
          "ex2_approx_ftz_f32", "ex2.approx.ftz.f32 %d, %a;",
          [](u64 a, u64, u64) { return Canon32(FlushF(std::exp2(FlushF(B2F(a))))); }, Cmp::Approx32, 1e-6),
      unaryF(
          "lg2_approx_f32", "lg2.approx.f32 %d, %a;",
          [](u64 a, u64, u64) { return Canon32(std::log2(FlushF(B2F(a)))); }, Cmp::Approx32, 1e-6),
      unaryF(
          "sin_approx_f32", "sin.approx.f32 %d, %a;", [](u64 a, u64, u64) { return Canon32(std::sin(B2F(a))); },
          Cmp::Approx32, 1e-6),
      unaryF(
          "cos_approx_f32", "cos.approx.f32 %d, %a;", [](u64 a, u64, u64) { return Canon32(std::cos(B2F(a))); },
          Cmp::Approx32, 1e-6),
      f64("add_rn_f64", "add.rn.f64 %d, %a, %b;", F64Bin(FE_TONEAREST, AddD)),
      f64("add_rm_f64", "add.rm.f64 %d, %a, %b;", F64Bin(FE_DOWNWARD, AddD)),
      f64("sub_rp_f64", "sub.rp.f64 %d, %a, %b;", F64Bin(FE_UPWARD, SubD)),
      f64("mul_rn_f64", "mul.rn.f64 %d, %a, %b;", F64Bin(FE_TONEAREST, MulD)),
      f64("mul_rz_f64", "mul.rz.f64 %d, %a, %b;", F64Bin(FE_TOWARDZERO, MulD)),
      f64("div_rn_f64", "div.rn.f64 %d, %a, %b;", F64Bin(FE_TONEAREST, DivD)),
      f64(
          "min_f64", "min.f64 %d, %a, %b;",
          [](u64 a, u64 b, u64) {
            double x = B2D(a), y = B2D(b);
            if (std::isnan(x) && std::isnan(y)) return Canon64(x);
            return Canon64(std::isnan(x) ? y : std::isnan(y) ? x : std::min(x, y));
          },
          Cmp::Float64ZeroSignFree),
      {"setp_gt_f64", "setp.gt.f64 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", D, D, N, 32,
       [](u64 a, u64 b, u64) { return u64{B2D(a) > B2D(b)}; }},
      {"setp_equ_f64", "setp.equ.f64 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", D, D, N, 32,
       [](u64 a, u64 b, u64) { return u64{!(B2D(a) < B2D(b)) && !(B2D(a) > B2D(b))}; }},
      {"sqrt_rn_f64", "sqrt.rn.f64 %d, %a;", D, N, N, 64, [](u64 a, u64, u64) { return Canon64(std::sqrt(B2D(a))); },
       Cmp::Float64},
      {"abs_f64", "abs.f64 %d, %a;", D, N, N, 64, [](u64 a, u64, u64) { return a & 0x7fffffffffffffffull; },
       Cmp::Float64},
      {"neg_f64", "neg.f64 %d, %a;", D, N, N, 64, [](u64 a, u64, u64) { return a ^ 0x8000000000000000ull; },
       Cmp::Float64},
  };
  // Fused multiply-add with a third operand from a reduced set (the cross product stays small).
  AluCase fma32{"fma_rn_f32",
                "fma.rn.f32 %d, %a, %b, %c;",
                F,
                F,
                I(32, Set::F32),
                32,
                [](u64 a, u64 b, u64 c) { return Canon32(std::fma(B2F(a), B2F(b), B2F(c))); },
                Cmp::Float32};
  AluCase fma64{"fma_rn_f64",
                "fma.rn.f64 %d, %a, %b, %c;",
                D,
                D,
                I(64, Set::F64),
                64,
                [](u64 a, u64 b, u64 c) { return Canon64(std::fma(B2D(a), B2D(b), B2D(c))); },
                Cmp::Float64};
  AluCase fmaRz{"fma_rz_f32",
                "fma.rz.f32 %d, %a, %b, %c;",
                F,
                F,
                I(32, Set::F32),
                32,
                [](u64 a, u64 b, u64 c) {
                  return Canon32(Rounded(FE_TOWARDZERO, [&] {
                    volatile float x = B2F(a), y = B2F(b), z = B2F(c);
                    return std::fma(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z));
                  }));
                },
                Cmp::Float32};
  v.push_back(fma32);
  v.push_back(fma64);
  v.push_back(fmaRz);
  // sin/cos are specified on [-pi, pi] only; keep their inputs finite and small.
  for (auto& c : v)
    if (c.name == "sin_approx_f32" || c.name == "cos_approx_f32")
      c.skip = [](u64 a, u64, u64) { return !(std::fabs(B2F(a)) <= 3.15f); };
  // ex2/lg2/rsqrt/sqrt approximate: compare where the ISA bound is meaningful (no subnormal inputs).
  for (auto& c : v) {
    if (c.name == "ex2_approx_ftz_f32") c.skip = [](u64 a, u64, u64) { return !(std::fabs(B2F(a)) <= 100.0f); };
    if (c.name == "lg2_approx_f32" || c.name == "rsqrt_approx_f32" || c.name == "sqrt_approx_f32")
      c.skip = [](u64 a, u64, u64) { return std::fpclassify(B2F(a)) == FP_SUBNORMAL; };
  }
  return v;
}

std::vector<AluCase> ConvertCases() {
  Operand F = I(32, Set::F32), D = I(64, Set::F64), A32 = I(32, Set::I32), A64 = I(64, Set::I64), A16 = I(16, Set::I16);
  return {
      {"cvt_rni_s32_f32", "cvt.rni.s32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return FloatToInt<int32_t>(B2F(a), FE_TONEAREST); }},
      {"cvt_rzi_s32_f32", "cvt.rzi.s32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return FloatToInt<int32_t>(B2F(a), FE_TOWARDZERO); }},
      {"cvt_rmi_s32_f32", "cvt.rmi.s32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return FloatToInt<int32_t>(B2F(a), FE_DOWNWARD); }},
      {"cvt_rpi_s32_f32", "cvt.rpi.s32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return FloatToInt<int32_t>(B2F(a), FE_UPWARD); }},
      {"cvt_rzi_u32_f32", "cvt.rzi.u32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return FloatToInt<uint32_t>(B2F(a), FE_TOWARDZERO); }},
      {"cvt_rzi_s64_f64", "cvt.rzi.s64.f64 %d, %a;", D, N, N, 64,
       [](u64 a, u64, u64) {
         double v = B2D(a);
         if (std::isnan(v)) return u64{0x8000000000000000ull};  // from f64, NaN gives the minimum (measured, H200)
         if (v >= 9.2233720368547758e18) return u64{0x7fffffffffffffffull};
         if (v <= -9.2233720368547758e18) return u64{0x8000000000000000ull};
         return static_cast<u64>(static_cast<s64>(std::trunc(v)));
       }},
      {"cvt_rni_s32_f64", "cvt.rni.s32.f64 %d, %a;", D, N, N, 32,
       [](u64 a, u64, u64) {
         // From f64, NaN gives the minimum (measured on an H200; from f32 it gives 0).
         return std::isnan(B2D(a)) ? u64{0x80000000u} : FloatToInt<int32_t>(B2D(a), FE_TONEAREST);
       }},
      {"cvt_rn_f32_s32", "cvt.rn.f32.s32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) { return F2B(static_cast<float>(S32(a))); }},
      {"cvt_rz_f32_s32", "cvt.rz.f32.s32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) {
         // Exact in double; step the nearest float toward zero when it rounded away from zero. (The compiler
         // does not honour fesetround around an int->float conversion.)
         double exact = static_cast<double>(static_cast<s32>(S32(a)));
         float f = static_cast<float>(exact);
         if (std::fabs(static_cast<double>(f)) > std::fabs(exact)) f = std::nextafter(f, 0.0f);
         return F2B(f);
       }},
      {"cvt_rn_f32_u32", "cvt.rn.f32.u32 %d, %a;", A32, N, N, 32,
       [](u64 a, u64, u64) { return F2B(static_cast<float>(static_cast<u32>(a))); }},
      {"cvt_rn_f32_u64", "cvt.rn.f32.u64 %d, %a;", A64, N, N, 32,
       [](u64 a, u64, u64) { return F2B(static_cast<float>(a)); }},
      {"cvt_rn_f64_s64", "cvt.rn.f64.s64 %d, %a;", A64, N, N, 64,
       [](u64 a, u64, u64) { return D2B(static_cast<double>(S64(a))); }},
      {"cvt_rn_f32_f64", "cvt.rn.f32.f64 %d, %a;", D, N, N, 32,
       [](u64 a, u64, u64) { return Canon32(static_cast<float>(B2D(a))); }, Cmp::Float32},
      {"cvt_rz_f32_f64", "cvt.rz.f32.f64 %d, %a;", D, N, N, 32,
       [](u64 a, u64, u64) {
         return Canon32(Rounded(FE_TOWARDZERO, [&] {
           volatile double x = B2D(a);
           return static_cast<float>(x);
         }));
       },
       Cmp::Float32},
      {"cvt_f64_f32", "cvt.f64.f32 %d, %a;", F, N, N, 64,
       [](u64 a, u64, u64) { return Canon64(static_cast<double>(B2F(a))); }, Cmp::Float64},
      {"cvt_rni_f32_f32", "cvt.rni.f32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return Canon32(Rounded(FE_TONEAREST, [&] { return std::nearbyint(B2F(a)); })); },
       Cmp::Float32},
      {"cvt_rzi_f32_f32", "cvt.rzi.f32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return Canon32(std::trunc(B2F(a))); }, Cmp::Float32},
      {"cvt_rn_f16_f32", "cvt.rn.f16.f32 %d, %a;", F, N, N, 16, [](u64 a, u64, u64) { return FloatToHalf(B2F(a)); },
       Cmp::Exact},
      {"cvt_f32_f16", "cvt.f32.f16 %d, %a;", A16, N, N, 32, [](u64 a, u64, u64) { return Canon32(HalfToFloat(a)); },
       Cmp::Float32},
      {"cvt_s32_s16", "cvt.s32.s16 %d, %a;", A16, N, N, 32, [](u64 a, u64, u64) { return FromS32(S16(a)); }},
      {"cvt_u32_u16", "cvt.u32.u16 %d, %a;", A16, N, N, 32, [](u64 a, u64, u64) { return a & 0xffff; }},
      {"cvt_u32_u64", "cvt.u32.u64 %d, %a;", A64, N, N, 32, [](u64 a, u64, u64) { return a & 0xffffffffu; }},
      {"cvt_s64_s32", "cvt.s64.s32 %d, %a;", A32, N, N, 64,
       [](u64 a, u64, u64) { return static_cast<u64>(static_cast<s64>(S32(a))); }},
      {"cvt_sat_s32_s64", "cvt.sat.s32.s64 %d, %a;", A64, N, N, 32,
       [](u64 a, u64, u64) { return FromS32(std::min<s64>(std::max<s64>(S64(a), INT32_MIN), INT32_MAX)); }},
      {"cvt_sat_u16_s32", "cvt.sat.u16.s32 %d, %a;", A32, N, N, 16,
       [](u64 a, u64, u64) { return static_cast<u64>(std::min<s64>(std::max<s64>(S32(a), 0), 65535)); }},
      {"cvt_sat_f32_f32", "cvt.sat.f32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) {
         float v = B2F(a);
         if (std::isnan(v)) return F2B(0.0f);
         return F2B(std::min(1.0f, std::max(0.0f, v)));
       },
       Cmp::Float32ZeroSignFree},
      {"cvt_ftz_f32_f32", "cvt.ftz.f32.f32 %d, %a;", F, N, N, 32,
       [](u64 a, u64, u64) { return Canon32(FlushF(B2F(a))); }, Cmp::Float32},
      {"mov_b64_pack", "mov.b64 %d, {%a, %b};", A32, A32, N, 64, [](u64 a, u64 b, u64) { return (b << 32) | a; }},
  };
}

std::string CaseName(const testing::TestParamInfo<AluCase>& i) { return i.param.name; }

class ptx_integer : public testing::TestWithParam<AluCase> {};
TEST_P(ptx_integer, Alu) { RunAluCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_integer, testing::ValuesIn(IntegerCases()), CaseName);

class ptx_bits : public testing::TestWithParam<AluCase> {};
TEST_P(ptx_bits, Alu) { RunAluCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_bits, testing::ValuesIn(BitsCases()), CaseName);

class ptx_float : public testing::TestWithParam<AluCase> {};
TEST_P(ptx_float, Alu) { RunAluCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_float, testing::ValuesIn(FloatCases()), CaseName);

class ptx_convert : public testing::TestWithParam<AluCase> {};
TEST_P(ptx_convert, Alu) { RunAluCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_convert, testing::ValuesIn(ConvertCases()), CaseName);

// ---- ptx.golden: outputs recorded on a real GPU, compared bit for bit
// ------------------------------------------------
//
// Every instruction form above, and forms whose results the host cannot compute exactly (half precision, bfloat16,
// approximate transcendental functions, packed and fused integer forms), runs on edge values plus seeded random
// values. With CUEMU_CONF_GOLDEN_RECORD=FILE set (run-on-gpu.sh sets it), each case appends its outputs to FILE and
// passes once the kernel ran; otherwise it compares with the outputs in CUEMU_CONF_GOLDEN (the committed
// conformance/golden/nvidia-<gpu>.txt): bit for bit, approximate forms within twice the ISA's bound.

struct Rng {
  u64 state;
  u64 operator()() {
    u64 z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

u64 RandomFor(Set s, Rng& r) {
  auto sign = [&] { return (r() & 1) ? -1.0 : 1.0; };
  switch (s) {
    case Set::I16: return r() & 0xffff;
    case Set::I32: return (r() & 1) ? r() & 0xffffffffu : static_cast<u64>(static_cast<s64>(r() % 201) - 100);
    case Set::I64: return (r() & 1) ? r() : static_cast<u64>(static_cast<s64>(r() % 2001) - 1000);
    case Set::F32:
      return (r() & 1) ? r() & 0xffffffffu
                       : F2B(static_cast<float>(sign() * std::ldexp(1.0 + static_cast<double>(r() % 4096) / 4096.0,
                                                                    static_cast<int>(r() % 61) - 30)));
    case Set::F64:
      return (r() & 1) ? r()
                       : D2B(sign() * std::ldexp(1.0 + static_cast<double>(r() % 65536) / 65536.0,
                                                 static_cast<int>(r() % 121) - 60));
    case Set::Shift32: return r() % 70;
    case Set::Shift64: return r() % 140;
    case Set::Small32: return r() % 40;
    case Set::F16:
    case Set::BF16: return r() & 0xffff;
    case Set::F16x2: return r() & 0xffffffffu;
  }
  return 0;
}

void GoldenInputs(const AluCase& c, std::vector<u64>* va, std::vector<u64>* vb, std::vector<u64>* vc) {
  const auto& sa = Values(c.a.set);
  const std::vector<u64> none{0};
  const auto& sb = c.b.bits ? Values(c.b.set) : none;
  const auto& sc = c.c.bits ? Values(c.c.set) : none;
  auto add = [&](u64 x, u64 y, u64 z) {
    x &= Mask(c.a.bits);
    y &= Mask(c.b.bits ? c.b.bits : 64);
    z &= Mask(c.c.bits ? c.c.bits : 64);
    if (c.skip && c.skip(x, y, z)) return;
    va->push_back(x);
    vb->push_back(y);
    vc->push_back(z);
  };
  size_t total = sa.size() * sb.size() * sc.size(), stride = (total + 319) / 320;
  for (size_t k = 0; k < total; k += stride)
    add(sa[k / (sb.size() * sc.size())], sb[(k / sc.size()) % sb.size()], sc[k % sc.size()]);
  Rng r{conf::Fnv(c.name.data(), c.name.size())};
  for (int i = 0; i < 192; ++i) {
    u64 x = RandomFor(c.a.set, r), y = c.b.bits ? RandomFor(c.b.set, r) : 0, z = c.c.bits ? RandomFor(c.c.set, r) : 0;
    add(x, y, z);
  }
}

bool GoldenMatches(const AluCase& c, u64 want, u64 got) {
  if (c.cmp != Cmp::Approx32) return want == got;
  float w = B2F(want), g = B2F(got);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (std::isinf(w) || std::isinf(g)) return w == g;
  return std::fabs(static_cast<double>(w) - g) <= 2 * c.tolerance * std::max(1.0, std::fabs(static_cast<double>(w)));
}

void RunGoldenCase(const AluCase& c) {
  std::vector<u64> va, vb, vc;
  GoldenInputs(c, &va, &vb, &vc);
  std::string ptx = KernelFor(c);
  u64 hash = conf::Fnv(ptx.data(), ptx.size());
  hash = conf::Fnv(va.data(), va.size() * 8, hash);
  hash = conf::Fnv(vb.data(), vb.size() * 8, hash);
  hash = conf::Fnv(vc.data(), vc.size() * 8, hash);
  std::vector<u64> got;
  if (!RunKernel(c, va, vb, vc, &got)) return;
  if (conf::GoldenRecord(c.name, hash, got)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor(c.name, hash);
  if (!golden) return;
  ASSERT_EQ(golden->outputs.size(), got.size());
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 8; ++i) {
    u64 want = golden->outputs[i] & Mask(c.dBits);
    if (!GoldenMatches(c, want, got[i])) {
      ++failures;
      ADD_FAILURE() << c.body << " a=" << Hex(va[i], c.a.bits) << (c.b.bits ? " b=" + Hex(vb[i], c.b.bits) : "")
                    << (c.c.bits ? " c=" + Hex(vc[i], c.c.bits) : "") << ": got " << Hex(got[i], c.dBits)
                    << ", the GPU gave " << Hex(want, c.dBits);
    }
  }
  EXPECT_EQ(failures, 0) << got.size() << " inputs";
}

// Forms whose results come only from the GPU.
std::vector<AluCase> GoldenOnlyCases() {
  Operand F = I(32, Set::F32), D = I(64, Set::F64), A32 = I(32, Set::I32), A64 = I(64, Set::I64), H = I(16, Set::F16),
          B = I(16, Set::BF16), H2 = I(32, Set::F16x2), S32 = I(32, Set::Shift32), Sm = I(32, Set::Small32);
  auto g = [](const char* name, const char* body, Operand a, Operand b, Operand c, int d, const char* target = "sm_75",
              Cmp cmp = Cmp::Exact, double tol = 0) {
    AluCase k{name, body, a, b, c, d, nullptr, cmp};
    k.target = target;
    k.tolerance = tol;
    return k;
  };
  return {
      g("add_rn_f16", "add.rn.f16 %d, %a, %b;", H, H, N, 16),
      g("sub_rn_f16", "sub.rn.f16 %d, %a, %b;", H, H, N, 16),
      g("mul_rn_f16", "mul.rn.f16 %d, %a, %b;", H, H, N, 16),
      g("add_ftz_f16", "add.ftz.f16 %d, %a, %b;", H, H, N, 16),
      g("add_sat_f16", "add.sat.f16 %d, %a, %b;", H, H, N, 16),
      g("fma_rn_f16", "fma.rn.f16 %d, %a, %b, %c;", H, H, H, 16),
      g("neg_f16", "neg.f16 %d, %a;", H, N, N, 16),
      g("abs_f16", "abs.f16 %d, %a;", H, N, N, 16, "sm_80"),
      g("min_f16", "min.f16 %d, %a, %b;", H, H, N, 16, "sm_80"),
      g("max_NaN_f16", "max.NaN.f16 %d, %a, %b;", H, H, N, 16, "sm_80"),
      g("ex2_approx_f16", "ex2.approx.f16 %d, %a;", H, N, N, 16),
      g("tanh_approx_f16", "tanh.approx.f16 %d, %a;", H, N, N, 16),
      g("setp_lt_f16", "setp.lt.f16 %q, %a, %b;\n\tselp.u32 %d, 1, 0, %q;", H, H, N, 32),
      g("add_rn_f16x2", "add.rn.f16x2 %d, %a, %b;", H2, H2, N, 32),
      g("mul_rn_f16x2", "mul.rn.f16x2 %d, %a, %b;", H2, H2, N, 32),
      g("fma_rn_f16x2", "fma.rn.f16x2 %d, %a, %b, %c;", H2, H2, H2, 32),
      g("cvt_rn_f16_f64", "cvt.rn.f16.f64 %d, %a;", D, N, N, 16),
      g("cvt_rz_f16_f32", "cvt.rz.f16.f32 %d, %a;", F, N, N, 16),
      g("cvt_rn_relu_f16_f32", "cvt.rn.relu.f16.f32 %d, %a;", F, N, N, 16, "sm_80"),
      g("cvt_rn_f16x2_f32", "cvt.rn.f16x2.f32 %d, %a, %b;", F, F, N, 32, "sm_80"),
      g("cvt_rn_bf16_f32", "cvt.rn.bf16.f32 %d, %a;", F, N, N, 16, "sm_80"),
      g("cvt_f32_bf16", "cvt.f32.bf16 %d, %a;", B, N, N, 32, "sm_90"),
      g("cvt_rna_tf32_f32", "cvt.rna.tf32.f32 %d, %a;", F, N, N, 32, "sm_80"),
      g("cvt_rn_satfinite_e4m3x2_f32", "cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b;", F, F, N, 16, "sm_90"),
      g("add_rn_bf16", "add.rn.bf16 %d, %a, %b;", B, B, N, 16, "sm_90"),
      g("mul_rn_bf16", "mul.rn.bf16 %d, %a, %b;", B, B, N, 16, "sm_90"),
      g("fma_rn_bf16", "fma.rn.bf16 %d, %a, %b, %c;", B, B, B, 16, "sm_80"),
      g("min_NaN_f32", "min.NaN.f32 %d, %a, %b;", F, F, N, 32, "sm_80"),
      g("max_xorsign_abs_f32", "max.xorsign.abs.f32 %d, %a, %b;", F, F, N, 32, "sm_86"),
      g("fma_rn_sat_f32", "fma.rn.sat.f32 %d, %a, %b, %c;", F, F, F, 32),
      g("mul_rn_sat_f32", "mul.rn.sat.f32 %d, %a, %b;", F, F, N, 32),
      g("div_approx_f32", "div.approx.f32 %d, %a, %b;", F, F, N, 32),
      g("div_full_f32", "div.full.f32 %d, %a, %b;", F, F, N, 32, "sm_75", Cmp::Approx32, 4e-7),
      g("rcp_approx_f32", "rcp.approx.f32 %d, %a;", F, N, N, 32),  // bit for bit since 2026-11-27 (exec/mufu.cpp)
      g("tanh_approx_f32", "tanh.approx.f32 %d, %a;", F, N, N, 32, "sm_75", Cmp::Approx32, 1e-3),
      g("ex2_approx_f32", "ex2.approx.f32 %d, %a;", F, N, N, 32),
      g("lg2_approx_ftz_f32", "lg2.approx.ftz.f32 %d, %a;", F, N, N, 32, "sm_75", Cmp::Approx32, 3e-7),
      g("sin_approx_ftz_f32", "sin.approx.ftz.f32 %d, %a;", F, N, N, 32, "sm_75", Cmp::Approx32, 1e-6),
      g("rsqrt_approx_ftz_f32", "rsqrt.approx.ftz.f32 %d, %a;", F, N, N, 32),
      g("rcp_approx_ftz_f64", "rcp.approx.ftz.f64 %d, %a;", D, N, N, 64),
      g("rsqrt_approx_f64", "rsqrt.approx.f64 %d, %a;", D, N, N, 64),
      g("testp_finite_f32", "testp.finite.f32 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", F, N, N, 32),
      g("testp_infinite_f32", "testp.infinite.f32 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", F, N, N, 32),
      g("testp_notanumber_f64", "testp.notanumber.f64 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", D, N, N, 32),
      g("testp_normal_f32", "testp.normal.f32 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", F, N, N, 32),
      g("testp_subnormal_f32", "testp.subnormal.f32 %q, %a;\n\tselp.u32 %d, 1, 0, %q;", F, N, N, 32),
      g("copysign_f64", "copysign.f64 %d, %a, %b;", D, D, N, 64),
      g("mul24_lo_s32", "mul24.lo.s32 %d, %a, %b;", A32, A32, N, 32),
      g("mul24_hi_u32", "mul24.hi.u32 %d, %a, %b;", A32, A32, N, 32),
      g("mad24_lo_s32", "mad24.lo.s32 %d, %a, %b, %c;", A32, A32, Sm, 32),
      g("dp4a_u32_u32", "dp4a.u32.u32 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("dp4a_s32_s32", "dp4a.s32.s32 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("dp2a_lo_s32_s32", "dp2a.lo.s32.s32 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("shf_l_wrap_b32", "shf.l.wrap.b32 %d, %a, %b, %c;", A32, A32, S32, 32),
      g("shf_r_clamp_b32", "shf.r.clamp.b32 %d, %a, %b, %c;", A32, A32, S32, 32),
      g("lop3_b32_0x96", "lop3.b32 %d, %a, %b, %c, 0x96;", A32, A32, A32, 32),
      g("lop3_b32_0xe8", "lop3.b32 %d, %a, %b, %c, 0xe8;", A32, A32, A32, 32),
      g("bmsk_clamp_b32", "bmsk.clamp.b32 %d, %a, %b;", Sm, Sm, N, 32),
      g("szext_wrap_s32", "szext.wrap.s32 %d, %a, %b;", A32, S32, N, 32),
      g("fns_b32", "fns.b32 %d, %a, %b, %c;", A32, Sm, I(32, Set::I32), 32),
      g("bfi_b32", "bfi.b32 %d, %a, %b, %c, 8;", A32, A32, Sm, 32),
      g("add_cc_carry_u32", "add.cc.u32 %tr1, %a, %b;\n\taddc.u32 %d, 0, 0;", A32, A32, N, 32),
      g("sub_cc_borrow_u32", "sub.cc.u32 %tr1, %a, %b;\n\tsubc.u32 %d, 0, 0;", A32, A32, N, 32),
      g("add_cc_u64_chain", "add.cc.u64 %trd1, %a, %b;\n\taddc.u64 %d, 0, 0;", A64, A64, N, 64),
      g("cvt_rni_s16_f32", "cvt.rni.s16.f32 %d, %a;", F, N, N, 16),
      g("cvt_sat_s8_s32", "cvt.sat.s8.s32 %d, %a;", A32, N, N, 16),
      g("cvt_rpi_f64_f64", "cvt.rpi.f64.f64 %d, %a;", D, N, N, 64),
      g("cvt_rn_f32_s64", "cvt.rn.f32.s64 %d, %a;", A64, N, N, 32),
      g("cvt_rz_f64_u64", "cvt.rz.f64.u64 %d, %a;", A64, N, N, 64),
      g("cvt_rm_f32_f64", "cvt.rm.f32.f64 %d, %a;", D, N, N, 32),
      // Video instructions (the interpreter follows the ISA's definition; these record what the GPU computes).
      g("vadd_sat_s32_u32_s32_b0_h1", "vadd.s32.u32.s32.sat %d, %a.b0, %b.h1;", A32, A32, N, 32),
      g("vsub_sat_u32_h1_merge_b2", "vsub.u32.s32.u32.sat %d.b2, %a.h1, %b, %c;", A32, A32, A32, 32),
      g("vabsdiff_s32_add", "vabsdiff.s32.s32.s32.add %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vmin_u32_s32_min", "vmin.u32.s32.u32.min %d, %a.b3, %b, %c;", A32, A32, A32, 32),
      g("vmax_sat_s32_merge_h0", "vmax.s32.u32.s32.sat %d.h0, %a, %b.h1, %c;", A32, A32, A32, 32),
      g("vshl_clamp_sat_s32", "vshl.s32.s32.u32.clamp.sat %d, %a, %b;", A32, S32, N, 32),
      g("vshr_wrap_u32_add", "vshr.u32.u32.u32.wrap.add %d, %a, %b, %c;", A32, S32, A32, 32),
      g("vmad_s32_neg_a", "vmad.s32.s32.s32 %d, -%a.h0, %b.h1, %c;", A32, A32, A32, 32),
      g("vmad_u32_neg_c_sat", "vmad.u32.u32.u32.sat %d, %a, %b.b1, -%c;", A32, A32, A32, 32),
      g("vmad_u32_po_shr15", "vmad.u32.u32.u32.po.shr15 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vset_lt_s32_u32_max", "vset.s32.u32.lt.max %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vset_ne_merge_b1", "vset.u32.s32.ne %d.b1, %a.b2, %b.b2, %c;", A32, A32, A32, 32),
      g("vabsdiff4_u32", "vabsdiff4.u32.u32.u32 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vabsdiff4_s32_add", "vabsdiff4.s32.s32.s32.add %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vadd4_sat_s32_mask", "vadd4.s32.s32.s32.sat %d.b31, %a, %b.b1032, %c;", A32, A32, A32, 32),
      g("vavrg4_s32", "vavrg4.s32.s32.s32 %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vmin4_u32_selectors", "vmin4.u32.u32.u32 %d, %a.b4567, %b.b0123, %c;", A32, A32, A32, 32),
      g("vset4_ge_s32_add", "vset4.s32.s32.ge.add %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vsub2_sat_s32", "vsub2.s32.s32.s32.sat %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vavrg2_u32_h1", "vavrg2.u32.u32.u32 %d.h1, %a.h21, %b, %c;", A32, A32, A32, 32),
      g("vmax2_s32_add", "vmax2.s32.u32.s32.add %d, %a, %b, %c;", A32, A32, A32, 32),
      // Forms whose rules were read from ptxas's output for sm_90 (lower_video.cpp), recorded to confirm them.
      g("vadd_sat_u32", "vadd.u32.u32.u32.sat %d, %a, %b;", A32, A32, N, 32),
      g("vsub_sat_s32_merge_b0", "vsub.s32.s32.s32.sat %d.b0, %a, %b, %c;", A32, A32, A32, 32),
      g("vadd_u32_s32_min", "vadd.u32.s32.s32.min %d, %a, %b, %c;", A32, A32, A32, 32),
      g("vshr_clamp_sat_s32", "vshr.s32.s32.u32.clamp.sat %d, %a, %b;", A32, S32, N, 32),
      g("vshl_clamp_sat_u32_merge_b1", "vshl.u32.u32.u32.clamp.sat %d.b1, %a, %b, %c;", A32, S32, A32, 32),
  };
}

std::vector<AluCase> GoldenCases() {
  std::vector<AluCase> all;
  for (auto* list : {IntegerCases, BitsCases, FloatCases, ConvertCases, GoldenOnlyCases})
    for (auto& c : list()) all.push_back(c);
  return all;
}

class ptx_golden : public testing::TestWithParam<AluCase> {};
TEST_P(ptx_golden, Bits) { RunGoldenCase(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_golden, testing::ValuesIn(GoldenCases()), CaseName);

}  // namespace
