// Scalar numeric helpers shared by the handlers: GPU NaN conventions, rounding-mode control, f16/bf16.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <xmmintrin.h>

namespace ptx::exec::num {

#define PTX_HOT __attribute__((always_inline)) inline

// Functions whose lane loops profit from wider vectors (the handlers, the special-function unit's warp forms) are
// compiled twice (x86-64 baseline and x86-64-v3: AVX2, FMA, BMI, POPCNT) and picked at load time by the dynamic
// loader (ifunc). The clone is named by ISA level, not by CPU: an
// "arch=haswell" clone is chosen only on Intel Haswell-family CPUs (the resolver tests the CPU model), so AMD
// CPUs ran the baseline code.
// Sanitizer builds get one copy. The native tier's bitcode (PTX_NATIVE_BITCODE) has one copy, compiled for the host
// CPU when a kernel is compiled.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && !defined(PTX_NATIVE_BITCODE)
#define PTX_LANES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PTX_LANES
#endif

// NVIDIA GPUs return this NaN from every f32 arithmetic operation whose result is NaN.
constexpr uint32_t kCanonicalNaN32 = 0x7fffffffu;
constexpr uint64_t kCanonicalNaN64 = 0x7fffffffffffffffull;
constexpr uint16_t kCanonicalNaN16 = 0x7fffu;

PTX_HOT float canon(float x) { return x != x ? std::bit_cast<float>(kCanonicalNaN32) : x; }
PTX_HOT double canon(double x) { return x != x ? std::bit_cast<double>(kCanonicalNaN64) : x; }

PTX_HOT float flush(float x) { return std::fabs(x) < std::numeric_limits<float>::min() ? std::copysign(0.0f, x) : x; }
PTX_HOT double flush(double x) { return x; }  // .ftz applies to f32 only

// .sat clamps to [+0, 1]: NaN and -0 become +0.
PTX_HOT float saturate(float x) { return !(x > 0.0f) ? 0.0f : (x > 1.0f ? 1.0f : x); }
PTX_HOT double saturate(double x) { return !(x > 0.0) ? 0.0 : (x > 1.0 ? 1.0 : x); }

// f64 NaN results on the GPU are not canonical: a NaN operand comes back quieted, and an invalid operation on
// non-NaN operands gives the default NaN 0xfff8000000000000 (what x86 computes too). Where several operands are
// NaN, the later PTX operand wins (c over b over a), except for div.
PTX_HOT double quiet(double x) { return std::bit_cast<double>(std::bit_cast<uint64_t>(x) | (uint64_t(1) << 51)); }
constexpr uint64_t kDefaultNaN64 = 0xfff8000000000000ull;
PTX_HOT double nan64(double r, double a, double b) {
  if (r == r) return r;
  if (b != b) return quiet(b);
  if (a != a) return quiet(a);
  return std::bit_cast<double>(kDefaultNaN64);
}
PTX_HOT double nan64(double r, double a, double b, double c) {
  if (r == r) return r;
  if (c != c) return quiet(c);
  return nan64(r, a, b);
}
PTX_HOT double nan64(double r, double a) {
  if (r == r) return r;
  return a != a ? quiet(a) : std::bit_cast<double>(kDefaultNaN64);
}

enum Round : int { RN = 0, RZ = 1, RM = 2, RP = 3 };

// Sets the host rounding mode (and FTZ/DAZ for .ftz) for the lifetime of the object. Handlers for the default
// mode (round to nearest, no ftz) never construct one.
class FpMode {
 public:
  FpMode(Round r, bool ftz) : saved_(_mm_getcsr()) {
    unsigned csr = saved_ & ~0x6000u & ~0x8040u;
    static constexpr unsigned rc[4] = {0x0000u, 0x6000u, 0x2000u, 0x4000u};
    csr |= rc[r];
    if (ftz) csr |= 0x8040u;
    _mm_setcsr(csr);
    asm volatile("" ::: "memory");
  }
  ~FpMode() {
    asm volatile("" ::: "memory");
    _mm_setcsr(saved_);
  }
  FpMode(const FpMode&) = delete;
  FpMode& operator=(const FpMode&) = delete;

 private:
  unsigned saved_;
};

// ---- small floats: the value of an IEEE-like format without infinities or NaN (FP4 e2m1, FP6 e2m3/e3m2, the
// finite codes of FP8): exponent bias 2^(ebits-1) - 1, subnormals at exponent field 0, the sign above the exponent
inline double miniFloatValue(uint32_t bits, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t sign = (bits >> (ebits + mbits)) & 1, exp = (bits >> mbits) & ((1u << ebits) - 1);
  const uint32_t man = bits & ((1u << mbits) - 1);
  const double v = exp == 0 ? std::ldexp(double(man), 1 - bias - mbits)
                            : std::ldexp(double(man | (1u << mbits)), int(exp) - bias - mbits);
  return sign ? -v : v;
}

// ---- f16 / bf16 (bit patterns in uint16_t) ------------------------------------------------------------------

PTX_HOT float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 112) << 23 | man << 13;
  }
  return std::bit_cast<float>(bits);
}

// float -> f16 with the given rounding (RN ties-to-even, RZ, RM, RP); NaN -> canonical f16 NaN.
inline uint16_t floatToHalf(float f, Round r = RN, bool sat = false) {
  if (sat) f = saturate(f);
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return kCanonicalNaN16;
  bool neg = sign != 0;
  auto roundUp = [&](bool lsb, bool halfBit, bool sticky) -> bool {
    switch (r) {
      case RN: return halfBit && (sticky || lsb);
      case RZ: return false;
      case RM: return neg && (halfBit || sticky);
      case RP: return !neg && (halfBit || sticky);
    }
    return false;
  };
  auto overflow = [&]() -> uint16_t {
    bool toInf = r == RN || (r == RP && !neg) || (r == RM && neg);
    return uint16_t(sign | (toInf ? 0x7c00u : 0x7bffu));
  };
  if (ax == 0x7f800000u) return uint16_t(sign | 0x7c00u);
  int exp = int(ax >> 23) - 127;
  uint32_t man = (ax & 0x7fffffu) | (ax >= 0x800000u ? 0x800000u : 0);
  if (ax < 0x800000u) exp = -126;  // f32 subnormal
  if (exp > 15) return overflow();
  if (exp >= -14) {  // normal half
    uint32_t m = man >> 13;
    bool halfBit = (man >> 12) & 1, sticky = (man & 0xfffu) != 0;
    uint32_t v = uint32_t(exp + 15) << 10 | (m & 0x3ffu);
    if (roundUp(m & 1, halfBit, sticky)) ++v;
    if (v >= 0x7c00u) return overflow();
    return uint16_t(sign | v);
  }
  // subnormal half: value = man * 2^(exp-23); half subnormal unit = 2^-24
  int shift = (-14 - exp) + 13;
  if (shift > 31) {
    bool up = roundUp(false, false, man != 0);
    return uint16_t(sign | (up ? 1u : 0u));
  }
  uint32_t m = man >> shift;
  bool halfBit = (man >> (shift - 1)) & 1;
  bool sticky = (man & ((1u << (shift - 1)) - 1)) != 0;
  if (roundUp(m & 1, halfBit, sticky)) ++m;
  return uint16_t(sign | m);
}

inline uint16_t doubleToHalf(double d, Round r = RN, bool sat = false) {
  if (sat) d = saturate(d);
  // Round to float with sticky bit preserved (round-to-odd) so the second rounding is exact.
  float f = static_cast<float>(d);
  if (f == f && static_cast<double>(f) != d && std::isfinite(f)) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    // truncate toward zero, then force odd
    double af = std::fabs(static_cast<double>(f)), ad = std::fabs(d);
    if (af > ad) bits -= 1;
    bits |= 1;
    f = std::bit_cast<float>(bits);
  }
  return floatToHalf(f, r, false);
}

PTX_HOT float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

inline uint16_t floatToBf16(float f, Round r = RN, bool sat = false) {
  if (sat) f = saturate(f);
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  bool neg = x >> 31;
  uint32_t lower = x & 0xffffu;
  uint32_t up = x >> 16;
  bool inc = false;
  switch (r) {
    case RN: inc = lower > 0x8000u || (lower == 0x8000u && (up & 1)); break;
    case RZ: inc = false; break;
    case RM: inc = neg && lower; break;
    case RP: inc = !neg && lower; break;
  }
  if ((x & 0x7fffffffu) == 0x7f800000u) inc = false;
  return uint16_t(up + (inc ? 1 : 0));
}

// double -> bf16 with one rounding (to float by round-to-odd first, then to bf16).
inline uint16_t doubleToBf16(double d, Round r = RN) {
  float f = static_cast<float>(d);
  if (f == f && static_cast<double>(f) != d && std::isfinite(f)) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) bits -= 1;
    bits |= 1;
    f = std::bit_cast<float>(bits);
  }
  return floatToBf16(f, r, false);
}

// ---- float -> integer conversions (GPU semantics: NaN -> 0, saturate to the range) -------------------------

template <class I, class F> PTX_HOT I floatToInt(F x) {
  if (x != x) return 0;
  constexpr F lo = F(std::numeric_limits<I>::min());
  constexpr F hiExcl = F(std::numeric_limits<I>::max()) + F(1);  // power of two, exact
  if (x <= lo) return std::numeric_limits<I>::min();
  if (x >= hiExcl) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

template <class F> PTX_HOT F roundToInt(F x, Round r) {
  switch (r) {
    case RN: return std::nearbyint(x);
    case RZ: return std::trunc(x);
    case RM: return std::floor(x);
    case RP: return std::ceil(x);
  }
  return x;
}

// Upper word of rcp.approx.ftz.f64 for an operand 1.0 with these 20 upper significand bits, as the GPU computes it
// (a table recorded on an H200: the exact reciprocal cut to 20 bits, or one unit more; rcp64h.cpp).
uint32_t rcp64hUpperWord(uint32_t significand);

}  // namespace ptx::exec::num
