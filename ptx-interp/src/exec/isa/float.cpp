// Single- and double-precision arithmetic (OpClass Arith on .f32, .f64 and .f32x2).
#include "exec/lowerer.h"
#include "exec/mufu.h"
#include "exec/vector_ops.h"

namespace ptx::exec {

// Typed operand views of the float ops that carry more than d = f(a, b, c): the one place that packs the extra
// fields at lowering (into) and reads them in the handler (of).
namespace floatops {

// abs / neg on f32 and f64 bit patterns: .ftz flushes an f32 subnormal result to a zero of its sign.
struct SignOp {
  bool ftz = false;
  static SignOp of(const Op& op) { return {op.aux != 0}; }
  void into(Op& op) const { op.aux = ftz ? 1 : 0; }
};

// testp.op d, a: which class of value the predicate tests for.
struct ClassTest {
  enum Kind : uint8_t { Finite = 0, Infinite = 1, Number = 2, NotANumber = 3, Normal = 4, Subnormal = 5 };
  Kind kind = Finite;
  static ClassTest of(const Op& op) { return {Kind(op.aux)}; }
  void into(Op& op) const { op.aux = kind; }
};

}  // namespace floatops

namespace h {

struct FDiv;
// NaN results: f32 canonical, f64 from the operands (see num::nan64); div.f64 prefers its first operand.
template <class F, class T> PTX_HOT T nanResult(T r, T x, T y) {
  if constexpr (std::is_same_v<T, double>) {
    if constexpr (std::is_same_v<F, FDiv>)
      return num::nan64(r, y, x);
    else
      return num::nan64(r, x, y);
  } else {
    return num::canon(r);
  }
}
template <class T> PTX_HOT T nanResult(T r, T x, T y, T z) {
  if constexpr (std::is_same_v<T, double>)
    return num::nan64(r, x, y, z);
  else
    return num::canon(r);
}
template <class T> PTX_HOT T nanResult(T r, T x) {
  if constexpr (std::is_same_v<T, double>)
    return num::nan64(r, x);
  else
    return num::canon(r);
}

// One lane of a binary floating-point op (the rounding mode is the MXCSR's: fbinary sets it).
template <class T, class F, bool FTZ, bool SAT> PTX_HOT T fbinaryLane(T x, T y) {
  if constexpr (FTZ) {
    x = num::flush(x);
    y = num::flush(y);
  }
  T r = F::f(x, y);
  if constexpr (FTZ) r = num::flush(r);
  if constexpr (SAT) r = num::saturate(r);
  return nanResult<F>(r, x, y);
}

// Floating point with rounding mode / ftz / sat: the MXCSR is set around the lane loop for non-default modes.
template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* fbinary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  auto body = [&](int i) { return fbinaryLane<T, F, FTZ, SAT>(a[i], b[i]); };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}
struct FFma;

// fma: in the x86-64-v3 clone std::fma is the FMA instruction and the lane loop vectorises; the baseline clone
// (CPUs without AVX2/FMA) calls the library's fma per lane.

// One lane of a ternary floating-point op (the rounding mode is the MXCSR's: fternary sets it).
template <class T, class F, bool FTZ, bool SAT> PTX_HOT T fternaryLane(T x, T y, T z) {
  if constexpr (FTZ) {
    x = num::flush(x);
    y = num::flush(y);
    z = num::flush(z);
  }
  T r = F::f(x, y, z);
  if constexpr (FTZ) r = num::flush(r);
  if constexpr (SAT) r = num::saturate(r);
  return nanResult(r, x, y, z);
}

template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* fternary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  auto body = [&](int i) { return fternaryLane<T, F, FTZ, SAT>(a[i], b[i], c[i]); };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}
template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* funary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  auto body = [&](int i) {
    T x = a[i];
    if constexpr (FTZ) x = num::flush(x);
    T r = F::f(x);
    if constexpr (FTZ) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    return r;
  };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}

// ---- floating point functors ----------------------------------------------------------------------------------

struct FAdd {
  template <class T> static PTX_HOT T f(T a, T b) { return a + b; }
};
struct FSub {
  template <class T> static PTX_HOT T f(T a, T b) { return a - b; }
};
struct FMul {
  template <class T> static PTX_HOT T f(T a, T b) { return a * b; }
};
struct FDiv {
  template <class T> static PTX_HOT T f(T a, T b) { return a / b; }
};
struct FFma {
  template <class T> static PTX_HOT T f(T a, T b, T c) {
    if constexpr (std::is_same_v<T, float>)
      return __builtin_fmaf(a, b, c);
    else
      return __builtin_fma(a, b, c);
  }
};
// mad.f32 without rounding modifier is a multiply then add (two roundings) per the ISA.
struct FMadNoFuse {
  template <class T> static PTX_HOT T f(T a, T b, T c) { return a * b + c; }
};
struct FSqrt {
  template <class T> static PTX_HOT T f(T a) { return nanResult(std::sqrt(a), a); }
};
struct FRcp {
  template <class T> static PTX_HOT T f(T a) { return nanResult(T(1) / a, a); }
};
// rcp.approx.ftz.f64 reads only the upper 32 bits of its operand and computes only the upper 32 bits of the result
// (low word zero). Measured on an H200 for all 2^20 upper significands: the result's significand is the GPU's
// single-precision reciprocal approximation of the same 20 bits, cut to 20 bits, which is the exact reciprocal's or
// one unit more (num::rcp64hUpperWord's table); the exponent only scales it, and the low word of the operand is
// ignored. Subnormal operands and results are flushed to zero.
struct FRcpApproxF64 {
  template <class T> static PTX_HOT T f(T a) {
    uint64_t bits = std::bit_cast<uint64_t>(double(a));
    uint64_t sign = bits & 0x8000000000000000ull;
    int exponent = int((bits >> 52) & 0x7ff);
    uint32_t significand = uint32_t(bits >> 32) & 0xfffff;
    if (exponent == 0x7ff) {
      if (significand) return T(std::bit_cast<double>(0x7fffffff00000000ull));  // NaN (the upper word's bits only)
      return T(std::bit_cast<double>(sign));                                    // 1/inf = 0
    }
    if (exponent == 0) return T(std::bit_cast<double>(sign | 0x7ff0000000000000ull));  // ftz: 1/0 = inf
    uint32_t upper = num::rcp64hUpperWord(significand);  // for an operand in [1, 2): exponent field 0x3ff or 0x3fe
    int resultExponent = int(upper >> 20) + 1023 - exponent;
    if (resultExponent <= 0) return T(std::bit_cast<double>(sign));  // ftz
    uint64_t rb = (uint64_t(uint32_t(resultExponent) << 20 | (upper & 0xfffff)) << 32);
    return T(std::bit_cast<double>(rb | sign));
  }
};
// rsqrt.approx.f64 on the GPU is correctly rounded (measured on an H200): one Newton step in binary128 from the
// double estimate, then a single rounding.
PTX_HOT double rsqrtF64(double a) {
  double y = 1.0 / std::sqrt(a);
  if (!(a > 0) || !std::isfinite(a) || y == 0 || !std::isfinite(y)) return num::nan64(y, a);
  __float128 q = y, x = a;
  q = q + q * (__float128(0.5) - __float128(0.5) * x * q * q);
  return double(q);
}
struct FRsqrt {
  template <class T> static PTX_HOT T f(T a) {
    if constexpr (std::is_same_v<T, double>)
      return rsqrtF64(a);
    else  // .f32 is lowered to specialFunctionF32 before this functor is chosen
      return std::bit_cast<float>(num::rsqrtApproxF32(std::bit_cast<uint32_t>(a), false));
  }
};
struct FAbs {
  template <class T> static PTX_HOT T f(T a) { return std::fabs(a); }
};
struct FNeg {
  template <class T> static PTX_HOT T f(T a) { return -a; }
};
// sin/cos.approx: the GPU reduces the argument to revolutions first, x * f32(1/2pi) rounded toward zero to f32,
// and evaluates the function on that value's fraction (measured on an H200: huge arguments give +-0 for sin).
PTX_HOT double revolutionsFraction(float x) {
  double p = double(std::fabs(x)) * double(0.159154936671257019f);  // exact product
  float t = float(p);
  if (double(t) > p) t = std::nextafter(t, 0.0f);
  return double(t) - std::floor(double(t));
}
struct FSin {
  template <class T> static PTX_HOT T f(T a) {
    if (!std::isfinite(a)) return std::bit_cast<float>(num::kCanonicalNaN32);
    double r = std::sin(6.283185307179586476925286766559 * revolutionsFraction(a));
    return T(std::signbit(a) ? -r : r);
  }
};
struct FCos {
  template <class T> static PTX_HOT T f(T a) {
    if (!std::isfinite(a)) return std::bit_cast<float>(num::kCanonicalNaN32);
    return T(std::cos(6.283185307179586476925286766559 * revolutionsFraction(a)));
  }
};
struct FLg2 {
  template <class T> static PTX_HOT T f(T a) { return num::canon(T(std::log2(double(a)))); }
};
// ex2/rcp/rsqrt .approx on .f32: the GPU's special-function unit, bit for bit (exec/mufu.cpp), a warp at a time;
// integer work on the bit patterns, so no MXCSR mode is set.
template <void (*Fn)(const uint32_t*, uint32_t*, bool), bool FTZ> const Op* specialFunctionF32(Warp& w, const Op* op) {
  alignas(64) uint32_t r[32];
  Fn(R<uint32_t>(w, op->a), r, FTZ);
  storeLanes<uint32_t>(w, op->d, r);
  return op + 1;
}
// div.approx.f32 is a * rcp.approx(b) (the GPU's reciprocal, exec/mufu.cpp), rounded once; the reciprocal of
// |b| > 2^126 is subnormal and flushed to zero. .ftz flushes the operands and the result.
template <bool FTZ> PTX_LANES const Op* divApproxF32(Warp& w, const Op* op) {
  const float* a = R<float>(w, op->a);
  const float* b = R<float>(w, op->b);
  alignas(64) uint32_t divisor[32], reciprocal[32];
  for (int i = 0; i < 32; ++i) divisor[i] = std::bit_cast<uint32_t>(FTZ ? num::flush(b[i]) : b[i]);
  num::rcpApproxF32(divisor, reciprocal, false);
  store<float>(w, op->d, [&](int i) {
    const float r = (FTZ ? num::flush(a[i]) : a[i]) * num::flush(std::bit_cast<float>(reciprocal[i]));
    return num::canon(FTZ ? num::flush(r) : r);
  });
  return op + 1;
}
struct FTanh {
  template <class T> static PTX_HOT T f(T a) { return num::canon(T(std::tanh(double(a)))); }
};

// abs/neg keep NaN payloads (sign-bit operations), so they bypass canonicalisation: use unary<> with bit ops.
// On a NaN operand the GPU returns the canonical NaN (f32) or the operand quieted with its sign unchanged (f64).
template <class U> PTX_HOT U nanOfSignOp(U x) {
  if constexpr (sizeof(U) == 4)
    return U(num::kCanonicalNaN32);
  else
    return U(x | (U(1) << 51));
}
template <class T> const Op* fabsBits(Warp& w, const Op* op) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U* a = R<U>(w, op->a);
  constexpr U m = ~(U(1) << (sizeof(U) * 8 - 1));
  constexpr U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  const bool ftz = floatops::SignOp::of(*op).ftz;
  store<U>(w, op->d, [&](int i) {
    U x = U(a[i] & m);
    if (x > inf) return nanOfSignOp<U>(a[i]);
    if (sizeof(T) == 4 && ftz && (x & 0x7f800000u) == 0) x = 0;
    return x;
  });
  return op + 1;
}
template <class T> const Op* fnegBits(Warp& w, const Op* op) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U* a = R<U>(w, op->a);
  constexpr U s = U(1) << (sizeof(U) * 8 - 1);
  constexpr U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  const bool ftz = floatops::SignOp::of(*op).ftz;
  store<U>(w, op->d, [&](int i) {
    if (U(a[i] & ~s) > inf) return nanOfSignOp<U>(a[i]);
    U x = U(a[i] ^ s);
    if (sizeof(T) == 4 && ftz && (x & 0x7f800000u) == 0) x &= s;
    return x;
  });
  return op + 1;
}

}  // namespace h

// The vector prefix's ops of this class (exec/vector_ops.h): f32 and f64 add, sub, mul and fma, rounded to nearest,
// no ftz or saturation; the parameter is cuemuVectorFloat's `op`, with the operands' bytes from bit 8.
void addFloatVectorOps(std::vector<CuemuVectorOp>& rows) {
  const auto row = [&](Handler handler, uint32_t kind, uint32_t op, uint32_t bytes) {
    rows.push_back({reinterpret_cast<const void*>(handler), kind, op | bytes << 8});
  };
  row(&h::fbinary<float, h::FAdd, num::RN, false, false>, kCuemuVectorFloatBinary, 0, 4);
  row(&h::fbinary<float, h::FSub, num::RN, false, false>, kCuemuVectorFloatBinary, 1, 4);
  row(&h::fbinary<float, h::FMul, num::RN, false, false>, kCuemuVectorFloatBinary, 2, 4);
  row(&h::fternary<float, h::FFma, num::RN, false, false>, kCuemuVectorFloatTernary, 3, 4);
  row(&h::fbinary<double, h::FAdd, num::RN, false, false>, kCuemuVectorFloatBinary, 0, 8);
  row(&h::fbinary<double, h::FSub, num::RN, false, false>, kCuemuVectorFloatBinary, 1, 8);
  row(&h::fbinary<double, h::FMul, num::RN, false, false>, kCuemuVectorFloatBinary, 2, 8);
  row(&h::fternary<double, h::FFma, num::RN, false, false>, kCuemuVectorFloatTernary, 3, 8);
}

namespace {

// min/max.xorsign.abs: the min/max of the magnitudes with the sign sign(a) ^ sign(b).
template <bool Max> struct FXorsignAbs {
  template <class T> static PTX_HOT T f(T a, T b) {
    T m = Max ? h::FMax::f(std::fabs(a), std::fabs(b)) : h::FMin::f(std::fabs(a), std::fabs(b));
    if (m != m) return m;
    return std::signbit(a) != std::signbit(b) ? -m : m;
  }
};
// Three-input min/max (sm_100): of a, b and c as the two-input forms choose (a NaN source is passed over, -0 < +0);
// .NaN: NaN when any source is; .abs: of the magnitudes.
template <bool Max, bool NaN, bool Abs> struct FMinMax3 {
  template <class T> static PTX_HOT T f(T a, T b, T c) {
    if constexpr (Abs) {
      a = std::fabs(a);
      b = std::fabs(b);
      c = std::fabs(c);
    }
    if constexpr (NaN)
      if (a != a || b != b || c != c) return T(NAN);
    if constexpr (Max)
      return h::FMax::f(h::FMax::f(a, b), c);
    else
      return h::FMin::f(h::FMin::f(a, b), c);
  }
};
struct FMinNaN {
  template <class T> static PTX_HOT T f(T a, T b) { return (a != a || b != b) ? T(NAN) : h::FMin::f(a, b); }
};
struct FMaxNaN {
  template <class T> static PTX_HOT T f(T a, T b) { return (a != a || b != b) ? T(NAN) : h::FMax::f(a, b); }
};

template <class T> const Op* testp(Warp& w, const Op* op) {
  const T* a = h::R<T>(w, op->a);
  using C = floatops::ClassTest;
  const C::Kind kind = C::of(*op).kind;
  h::store<uint8_t>(w, op->d, [&](int i) -> uint8_t {
    T x = a[i];
    switch (kind) {
      case C::Finite: return std::isfinite(x);
      case C::Infinite: return std::isinf(x);
      case C::Number: return !std::isnan(x);
      case C::NotANumber: return std::isnan(x);
      case C::Normal: return std::isnormal(x) || x == 0;  // zero counts as normal on the GPU (measured on an H200)
      default: return std::fpclassify(x) == FP_SUBNORMAL;
    }
  });
  return op + 1;
}

// copysign.type d, a, b: the sign of a with the rest of b.
template <class U> const Op* copysignOp(Warp& w, const Op* op) {
  const U* a = h::R<U>(w, op->a);
  const U* b = h::R<U>(w, op->b);
  constexpr U s = U(1) << (sizeof(U) * 8 - 1);
  h::store<U>(w, op->d, [&](int i) { return U((a[i] & s) | (b[i] & ~s)); });
  return op + 1;
}

// The .f16 / .bf16 source of a mixed-precision add/sub/fma.f32.atype widened to .f32 (exact).
template <bool BF16> const Op* widen16(Warp& w, const Op* op) {
  const uint16_t* a = h::R<uint16_t>(w, op->a);
  h::store<float>(w, op->d, [&](int i) { return BF16 ? num::bf16ToFloat(a[i]) : num::halfToFloat(a[i]); });
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerFloat(const Instruction& in) {
  Type t = in.type();
  Opcode oc = in.opcode;
  Round rm = roundingOf(in.rounding);
  // .f32x2 (sm_100 add/sub/mul/fma): the f32 operation on each half of 64-bit registers, low half first.
  const bool pair = t == Type::f32x2;
  const Type et = pair ? Type::f32 : t;
  bool ftz = in.has(ptx::Flag::ftz) && et == Type::f32;
  bool sat = in.has(ptx::Flag::sat);
  auto modes = [&](auto tag, auto fn) -> Handler {
    using F = decltype(tag);
    return byRound(rm, [&](auto r) {
      return byBool(ftz, [&](auto fz) { return byBool(sat, [&](auto st) -> Handler { return fn(F{}, r, fz, st); }); });
    });
  };
  // Emits hnd with sources `n` operands from index 1 into operand 0; pairs unpack, run it per half and pack.
  // (`given`: the sources, instead of the instruction's operands)
  auto emitWith = [&](Handler hnd, unsigned n, const uint32_t* given = nullptr) {
    if (!pair) {
      uint32_t s[3] = {0, 0, 0};
      for (unsigned k = 0; k < n; ++k) s[k] = given ? given[k] : src(opnd(in, 1 + k), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = s[0];
      op.b = s[1];
      op.c = s[2];
      finish(d);
      return;
    }
    uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (unsigned k = 0; k < n; ++k) {
      uint32_t r = src(opnd(in, 1 + k), Type::b64);
      lo[k] = temp(4);
      hi[k] = temp(4);
      h::VectorParts{r, {lo[k], hi[k]}}.intoUnpack(emit(&h::unpack<uint32_t, uint64_t, 2>));
    }
    uint32_t rlo = temp(4), rhi = temp(4);
    for (int half = 0; half < 2; ++half) {
      const uint32_t* s = half ? hi : lo;
      Op& op = emit(hnd);
      op.d = half ? rhi : rlo;
      op.a = s[0];
      op.b = s[1];
      op.c = s[2];
    }
    Dst d = dst(opnd(in, 0), Type::b64);
    h::VectorParts{d.off, {rlo, rhi}}.intoPack(emit(&h::pack<uint32_t, uint64_t, 2>));
    finish(d);
  };
  auto bin = [&](auto functor, const uint32_t* given = nullptr) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fbinary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 2, given);
  };
  auto ter = [&](auto functor, const uint32_t* given = nullptr) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fternary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 3, given);
  };
  // d = hnd(a): one source operand of type t
  auto emitUnary = [&](Handler hnd) {
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
  };
  auto un = [&](auto functor) {
    using Fn = decltype(functor);
    emitUnary(byFloat(t, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::funary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    }));
  };
  // Mixed precision (sm_100): add/sub{.rnd}{.sat}.f32.atype d, a, c and fma.rnd{.sat}.f32.abtype d, a, b, c: a (and
  // b) are .f16 or .bf16, widened to .f32 exactly; the operation is then the .f32 one, rounded once.
  if (in.numTypes == 2 && t == Type::f32 && (oc == Opcode::Add || oc == Opcode::Sub || oc == Opcode::Fma)) {
    const Type st = in.types[1];
    if (st != Type::f16 && st != Type::bf16) return unsupported(in);
    const unsigned n = oc == Opcode::Fma ? 3 : 2, narrow = n - 1;
    uint32_t s[3] = {0, 0, 0};
    for (unsigned k = 0; k < n; ++k) {
      const uint32_t r = src(opnd(in, 1 + k), k < narrow ? st : t);
      if (k == narrow) {
        s[k] = r;
        continue;
      }
      s[k] = temp(4);
      Op& op = emit(st == Type::bf16 ? &widen16<true> : &widen16<false>);
      op.d = s[k];
      op.a = r;
    }
    if (oc == Opcode::Fma) return ter(h::FFma{}, s);
    if (oc == Opcode::Add) return bin(h::FAdd{}, s);
    return bin(h::FSub{}, s);
  }
  if ((oc == Opcode::Add || oc == Opcode::Sub) && contractions_[curInst_].mul != kNoIndex) {
    // fused with the mul of its product, as ptxas fuses them (exec/contraction.cpp)
    const auto s = contractedSources(in, t, t == Type::f32 ? &h::fnegBits<float> : &h::fnegBits<double>);
    return ter(h::FFma{}, s.data());
  }
  // ex2/rcp/rsqrt .approx.f32 (rcp.approx.f32 and .ftz only: the rounded forms are IEEE)
  auto special = [&](auto fn) {
    emitUnary(ftz ? &h::specialFunctionF32<decltype(fn)::value, true>
                  : &h::specialFunctionF32<decltype(fn)::value, false>);
  };
  using SpecialFn = void (*)(const uint32_t*, uint32_t*, bool);
  if (t == Type::f32 &&
      (oc == Opcode::Ex2 || oc == Opcode::Rsqrt || (oc == Opcode::Rcp && in.has(ptx::Flag::approx)))) {
    if (oc == Opcode::Ex2) return special(std::integral_constant<SpecialFn, &num::ex2ApproxF32>{});
    if (oc == Opcode::Rsqrt) return special(std::integral_constant<SpecialFn, &num::rsqrtApproxF32>{});
    return special(std::integral_constant<SpecialFn, &num::rcpApproxF32>{});
  }
  // min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c (sm_100): three sources
  auto minMax3 = [&](auto isMax) {
    constexpr bool mx = decltype(isMax)::value;
    const bool nan = in.has(ptx::Flag::NaN), abs = in.has(ptx::Flag::abs);
    if (nan) return abs ? ter(FMinMax3<mx, true, true>{}) : ter(FMinMax3<mx, true, false>{});
    return abs ? ter(FMinMax3<mx, false, true>{}) : ter(FMinMax3<mx, false, false>{});
  };
  switch (oc) {
    case Opcode::Add: return bin(h::FAdd{});
    case Opcode::Sub: return bin(h::FSub{});
    case Opcode::Mul: saveContractedFactors(in, t); return bin(h::FMul{});
    case Opcode::Div:
      if (in.has(ptx::Flag::approx) && t == Type::f32)
        return emitWith(ftz ? &h::divApproxF32<true> : &h::divApproxF32<false>, 2);
      return bin(h::FDiv{});
    case Opcode::Fma: return ter(h::FFma{});
    case Opcode::Mad:
      if (in.rounding == ptx::Rounding::none && t == Type::f32) return ter(h::FMadNoFuse{});
      return ter(h::FFma{});
    case Opcode::Min:
      if (in.numOperands == 4) return minMax3(std::false_type{});
      if (in.has(ptx::Flag::xorsign)) return bin(FXorsignAbs<false>{});
      if (in.has(ptx::Flag::NaN)) return bin(FMinNaN{});
      return bin(h::FMin{});
    case Opcode::Max:
      if (in.numOperands == 4) return minMax3(std::true_type{});
      if (in.has(ptx::Flag::xorsign)) return bin(FXorsignAbs<true>{});
      if (in.has(ptx::Flag::NaN)) return bin(FMaxNaN{});
      return bin(h::FMax{});
    case Opcode::Sqrt: return un(h::FSqrt{});
    case Opcode::Rcp:
      if (in.has(ptx::Flag::approx) && t == Type::f64) return un(h::FRcpApproxF64{});
      return un(h::FRcp{});
    case Opcode::Rsqrt: return un(h::FRsqrt{});
    case Opcode::Sin: return un(h::FSin{});
    case Opcode::Cos: return un(h::FCos{});
    case Opcode::Lg2: return un(h::FLg2{});
    case Opcode::Tanh: return un(h::FTanh{});
    case Opcode::Abs:
    case Opcode::Neg: {
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      Handler hnd = t == Type::f32 ? (oc == Opcode::Abs ? &h::fabsBits<float> : &h::fnegBits<float>)
                                   : (oc == Opcode::Abs ? &h::fabsBits<double> : &h::fnegBits<double>);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      floatops::SignOp{ftz}.into(op);
      finish(d);
      return;
    }
    case Opcode::Testp: {
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), Type::pred);
      using C = floatops::ClassTest;
      C test;
      if (fn_->hasMod(in, ptx::Mod::finite))
        test.kind = C::Finite;
      else if (fn_->hasMod(in, ptx::Mod::infinite))
        test.kind = C::Infinite;
      else if (fn_->hasMod(in, ptx::Mod::number))
        test.kind = C::Number;
      else if (fn_->hasMod(in, ptx::Mod::notanumber))
        test.kind = C::NotANumber;
      else if (fn_->hasMod(in, ptx::Mod::normal))
        test.kind = C::Normal;
      else if (fn_->hasMod(in, ptx::Mod::subnormal))
        test.kind = C::Subnormal;
      Op& op = emit(t == Type::f32 ? &testp<float> : &testp<double>);
      op.d = d.off;
      op.a = a;
      test.into(op);
      finish(d);
      return;
    }
    case Opcode::Copysign: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(t == Type::f32 ? &copysignOp<uint32_t> : &copysignOp<uint64_t>);
      op.d = d.off;
      op.a = a;
      op.b = b;
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec

#if defined(PTX_NATIVE_BITCODE)
// A warp of those ops for the native tier's vector prefix (native/jit/vector_prefix.cpp), in bitcode only: the lanes
// of fbinary and fternary with all 32 executing; op 0 add, 1 sub, 2 mul, 3 fma (c unused by the others). The
// operands never overlap (restrict: no run-time overlap test for the vectoriser to emit).
namespace {
template <class T>
void floatWarp(const T* __restrict a, const T* __restrict b, const T* __restrict c, T* __restrict d, uint32_t op) {
  using namespace ptx::exec::h;
  if (op == 0)
    for (int i = 0; i < 32; ++i) d[i] = fbinaryLane<T, FAdd, false, false>(a[i], b[i]);
  else if (op == 1)
    for (int i = 0; i < 32; ++i) d[i] = fbinaryLane<T, FSub, false, false>(a[i], b[i]);
  else if (op == 2)
    for (int i = 0; i < 32; ++i) d[i] = fbinaryLane<T, FMul, false, false>(a[i], b[i]);
  else
    for (int i = 0; i < 32; ++i) d[i] = fternaryLane<T, FFma, false, false>(a[i], b[i], c[i]);
}
}  // namespace
extern "C" void cuemuVectorFloat32(const float* __restrict a, const float* __restrict b, const float* __restrict c,
                                   float* __restrict d, uint32_t op) {
  floatWarp(a, b, c, d, op);
}
extern "C" void cuemuVectorFloat64(const double* __restrict a, const double* __restrict b, const double* __restrict c,
                                   double* __restrict d, uint32_t op) {
  floatWarp(a, b, c, d, op);
}
#endif
