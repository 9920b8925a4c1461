#include "exec/lower_tables.h"

#include "exec/handlers.h"

namespace ptx::exec {

namespace {

using num::Round;
using ptx::Type;

template <class F> Handler withRound(Round r, F f) {
  switch (r) {
    case num::RZ: return f(std::integral_constant<Round, num::RZ>{});
    case num::RM: return f(std::integral_constant<Round, num::RM>{});
    case num::RP: return f(std::integral_constant<Round, num::RP>{});
    default: return f(std::integral_constant<Round, num::RN>{});
  }
}
template <class F> Handler withBool(bool b, F f) { return b ? f(std::true_type{}) : f(std::false_type{}); }

template <class F> Handler withIntType(Type t, F f) {
  switch (t) {
    case Type::b8: case Type::u8: return f(uint8_t{});
    case Type::s8: return f(int8_t{});
    case Type::b16: case Type::u16: return f(uint16_t{});
    case Type::s16: return f(int16_t{});
    case Type::b32: case Type::u32: return f(uint32_t{});
    case Type::s32: return f(int32_t{});
    case Type::b64: case Type::u64: return f(uint64_t{});
    case Type::s64: return f(int64_t{});
    default: return nullptr;
  }
}

bool isInt(Type t) {
  auto k = ptx::typeKind(t);
  return k == ptx::TypeKind::Signed || k == ptx::TypeKind::Unsigned || k == ptx::TypeKind::Bits;
}

// ---- half precision arithmetic -------------------------------------------------------------------------------

enum HOp { HAdd, HSub, HMul, HFma, HMin, HMax, HNeg, HAbs, HMinNaN, HMaxNaN, HEx2, HTanh };

template <bool BF> PTX_HOT float toF(uint16_t x) { return BF ? num::bf16ToFloat(x) : num::halfToFloat(x); }
template <bool BF> PTX_HOT uint16_t fromF(float x, Round r, bool sat) {
  return BF ? num::floatToBf16(x, r, sat) : num::floatToHalf(x, r, sat);
}
template <bool BF> PTX_HOT uint16_t fromD(double x, Round r, bool sat) {
  return BF ? num::floatToBf16(float(x), r, sat) : num::doubleToHalf(x, r, sat);
}
template <bool BF> PTX_HOT uint16_t flushH(uint16_t x) {
  if (BF) return (x & 0x7f80u) == 0 ? uint16_t(x & 0x8000u) : x;
  return (x & 0x7c00u) == 0 ? uint16_t(x & 0x8000u) : x;
}

template <HOp O, bool BF, int N, Round RM, bool FTZ, bool SAT, bool RELU>
const Op* halfOp(Warp& w, const Op* op) {
  using C = std::conditional_t<N == 2, uint32_t, uint16_t>;
  const C* a = h::R<C>(w, op->a);
  const C* b = h::R<C>(w, op->b);
  const C* c = h::R<C>(w, op->c);
  h::store<C>(w, op->d, [&](int i) -> C {
    C r = 0;
    for (int k = 0; k < N; ++k) {
      uint16_t x = uint16_t(a[i] >> (16 * k)), y = uint16_t(b[i] >> (16 * k)), z = uint16_t(c[i] >> (16 * k));
      if constexpr (FTZ) { x = flushH<BF>(x); y = flushH<BF>(y); z = flushH<BF>(z); }
      uint16_t out;
      bool xNaN = BF ? (x & 0x7fffu) > 0x7f80u : (x & 0x7fffu) > 0x7c00u;
      if constexpr (O == HNeg) {
        out = xNaN ? uint16_t(0x7fffu) : uint16_t(x ^ 0x8000u);  // NaN: canonical, as the GPU
      } else if constexpr (O == HAbs) {
        out = xNaN ? uint16_t(0x7fffu) : uint16_t(x & 0x7fffu);
      } else if constexpr (O == HEx2 || O == HTanh) {
        // approximate in hardware; its results match the exact function rounded toward zero (measured on an H200)
        float fx = toF<BF>(x);
        float v = O == HEx2 ? std::exp2(fx) : std::tanh(fx);
        out = xNaN ? uint16_t(0x7fffu) : fromF<BF>(v, num::RZ, false);
        if (O == HEx2 && !BF && v >= 65536.0f) out = 0x7c00u;  // overflow still gives infinity
        if constexpr (O == HTanh) {
          // except at the ends: tiny arguments come back unchanged, arguments whose tanh is within 2^-20 of +-1
          // give +-1 (both measured on an H200; the exact switch points are not known)
          float ax = std::fabs(fx);
          if (!xNaN && ax < 0x1p-8f) out = x;
          else if (!xNaN && 1.0 - std::tanh(double(ax)) < 0x1p-20) out = fromF<BF>(std::copysign(1.0f, fx), num::RN, false);
        }
      } else if constexpr (O == HMin || O == HMax || O == HMinNaN || O == HMaxNaN) {
        float fx = toF<BF>(x), fy = toF<BF>(y);
        if ((O == HMinNaN || O == HMaxNaN) && (fx != fx || fy != fy)) {
          out = BF ? 0x7fffu : num::kCanonicalNaN16;
        } else {
          float res = (O == HMin || O == HMinNaN) ? h::FMin::f(fx, fy) : h::FMax::f(fx, fy);
          if (res != res) out = BF ? 0x7fffu : num::kCanonicalNaN16;
          else out = (res == fx && std::signbit(res) == std::signbit(fx)) ? x : y;
        }
      } else if constexpr (O == HFma) {
        double v = double(toF<BF>(x)) * double(toF<BF>(y)) + double(toF<BF>(z));
        if constexpr (RELU) v = (v < 0) ? 0.0 : v;
        out = fromD<BF>(v, RM, SAT);
      } else {
        float fx = toF<BF>(x), fy = toF<BF>(y);
        float v = O == HAdd ? fx + fy : O == HSub ? fx - fy : fx * fy;
        out = fromF<BF>(v, RM, SAT);
      }
      if constexpr (FTZ) out = flushH<BF>(out);
      r |= C(C(out) << (16 * k));
    }
    return r;
  });
  return op + 1;
}

template <HOp O, bool BF, int N> Handler halfModes(Round r, bool ftz, bool sat, bool relu) {
  return withRound(r, [&](auto rm) {
    return withBool(ftz, [&](auto fz) {
      return withBool(sat, [&](auto st) {
        return withBool(relu, [&](auto rl) -> Handler {
          return &halfOp<O, BF, N, decltype(rm)::value, decltype(fz)::value, decltype(st)::value, decltype(rl)::value>;
        });
      });
    });
  });
}

template <HOp O> Handler halfByType(Type t, Round r, bool ftz, bool sat, bool relu) {
  switch (t) {
    case Type::f16: return halfModes<O, false, 1>(r, ftz, sat, relu);
    case Type::f16x2: return halfModes<O, false, 2>(r, ftz, sat, relu);
    case Type::bf16: return halfModes<O, true, 1>(r, ftz, sat, relu);
    case Type::bf16x2: return halfModes<O, true, 2>(r, ftz, sat, relu);
    default: return nullptr;
  }
}

}  // namespace

Handler halfHandler(ptx::Opcode opc, Type t, Round r, bool ftz, bool sat, bool relu) {
  switch (opc) {
    case ptx::Opcode::Add: return halfByType<HAdd>(t, r, ftz, sat, false);
    case ptx::Opcode::Sub: return halfByType<HSub>(t, r, ftz, sat, false);
    case ptx::Opcode::Mul: return halfByType<HMul>(t, r, ftz, sat, false);
    case ptx::Opcode::Fma: return halfByType<HFma>(t, r, ftz, sat, relu);
    case ptx::Opcode::Neg: return halfByType<HNeg>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Abs: return halfByType<HAbs>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Min: return relu ? halfByType<HMinNaN>(t, num::RN, ftz, false, false)
                                       : halfByType<HMin>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Max: return relu ? halfByType<HMaxNaN>(t, num::RN, ftz, false, false)
                                       : halfByType<HMax>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Ex2: return halfByType<HEx2>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Tanh: return halfByType<HTanh>(t, num::RN, false, false, false);
    default: return nullptr;
  }
}

// ---- packed and narrow conversions: f16x2/bf16x2/e4m3x2/e5m2x2 from two f32, .relu, .satfinite, tf32 -----------

namespace {

struct NarrowMode {
  Round round;
  bool relu, satfinite, ties_away;
};

PTX_HOT float reluOf(float f) { return std::signbit(f) ? 0.0f : f; }  // -0 becomes +0 too

uint16_t toHalfBits(float f, const NarrowMode& m, bool bf) {
  if (f != f) return 0x7fffu;
  if (m.relu) f = reluOf(f);
  uint16_t h = bf ? num::floatToBf16(f, m.round, false) : num::floatToHalf(f, m.round, false);
  uint16_t inf = bf ? 0x7f80u : 0x7c00u, maxFinite = bf ? 0x7f7fu : 0x7bffu;
  if (m.satfinite && (h & 0x7fffu) == inf) h = uint16_t((h & 0x8000u) | maxFinite);
  return h;
}

// 8-bit floats (OCP FP8): e4m3 (bias 7, no infinity, NaN 0x7f, max 448), e5m2 (bias 15, f16 layout, max 57344).
uint8_t toFp8Bits(float f, const NarrowMode& m, bool e5m2) {
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  const float maxFinite = e5m2 ? 57344.0f : 448.0f;
  if (f != f) return 0x7fu;
  if (m.relu) f = reluOf(f);
  uint8_t sign = std::signbit(f) ? 0x80u : 0;
  double a = std::fabs(double(f));
  // quantum at this magnitude (subnormals share the minimum normal exponent's quantum)
  int e = a == 0 ? 1 - bias : std::max(std::ilogb(a), 1 - bias);
  double q = std::ldexp(1.0, e - mbits);
  double r = std::nearbyint(a / q) * q;  // round to nearest even (the only mode cvt offers for fp8)
  if (r > maxFinite || std::isinf(a)) {
    if (m.satfinite || !e5m2) r = maxFinite;
    else return uint8_t(sign | 0x7cu);
  }
  if (r == 0) return sign;
  int re = std::max(std::ilogb(r), 1 - bias);
  uint32_t mant = uint32_t(r / std::ldexp(1.0, re - mbits));  // includes the implicit bit for normals
  uint32_t expField = mant >> mbits ? uint32_t(re + bias) : 0;
  return uint8_t(sign | expField << mbits | (mant & ((1u << mbits) - 1)));
}

uint32_t toTf32Bits(float f, const NarrowMode& m) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (f != f) return x & ~0x1fffu;  // NaN: the low bits dropped, nothing else (a signaling NaN may become inf)
  uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu;
  if (mag < 0x7f800000u) {
    uint32_t low = mag & 0x1fffu, keep = mag & ~0x1fffu;
    bool up = false;
    if (m.ties_away) up = low >= 0x1000u;
    else if (m.round == num::RN) up = low > 0x1000u || (low == 0x1000u && (keep & 0x2000u));
    if (up) keep += 0x2000u;
    mag = keep;
    if (m.satfinite && mag >= 0x7f800000u) mag = 0x7f7fe000u;
  } else if (m.satfinite) {
    mag = 0x7f7fe000u;
  }
  return sign | mag;
}

// aux: bits 0-3 kind, 4-5 rounding, 6 relu, 7 satfinite, 8 ties away
enum NarrowKind : uint32_t {
  NF16, NBF16, NF16x2, NBF16x2, NE4M3x2, NE5M2x2, NTF32,
  NE4M3x2FromF16x2, NE5M2x2FromF16x2,   // cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f16x2: each half, high to high
  NF16x2FromE4M3x2, NF16x2FromE5M2x2,   // cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2: exact, high byte to high half
};

// An 8-bit float as a float (exact). NaN (e4m3 S.1111.111, e5m2 exponent 31 with a mantissa) comes back as NaN.
PTX_HOT float fp8ToFloat(uint8_t x, bool e5m2) {
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  uint32_t mant = x & ((1u << mbits) - 1), exp = (x & 0x7fu) >> mbits;
  float sign = (x & 0x80u) ? -1.0f : 1.0f;
  if (e5m2 && exp == 31) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (!e5m2 && (x & 0x7fu) == 0x7fu) return std::numeric_limits<float>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(float(mant), 1 - bias - mbits);
  return sign * std::ldexp(float(mant | (1u << mbits)), int(exp) - bias - mbits);
}

const Op* cvtNarrow(Warp& w, const Op* op) {
  const float* a = h::R<float>(w, op->a);
  const float* b = h::R<float>(w, op->b);
  NarrowMode m{Round((op->aux >> 4) & 3), bool(op->aux & 64), bool(op->aux & 128), bool(op->aux & 256)};
  switch (NarrowKind(op->aux & 15)) {
    case NE4M3x2FromF16x2: case NE5M2x2FromF16x2: {
      bool e5 = (op->aux & 15) == NE5M2x2FromF16x2;
      const uint32_t* x = h::R<uint32_t>(w, op->a);
      h::store<uint16_t>(w, op->d, [&](int i) {
        return uint16_t(toFp8Bits(num::halfToFloat(uint16_t(x[i] >> 16)), m, e5) << 8 |
                        toFp8Bits(num::halfToFloat(uint16_t(x[i])), m, e5));
      });
      break;
    }
    case NF16x2FromE4M3x2: case NF16x2FromE5M2x2: {
      bool e5 = (op->aux & 15) == NF16x2FromE5M2x2;
      const uint16_t* x = h::R<uint16_t>(w, op->a);
      auto half = [&](uint8_t v) -> uint32_t {
        float f = fp8ToFloat(v, e5);
        if (f != f) return 0x7fffu;
        if (m.relu) f = reluOf(f);
        return num::floatToHalf(f, num::RN, false);
      };
      h::store<uint32_t>(w, op->d, [&](int i) { return half(uint8_t(x[i] >> 8)) << 16 | half(uint8_t(x[i])); });
      break;
    }
    case NF16: case NBF16: {
      bool bf = (op->aux & 15) == NBF16;
      h::store<uint16_t>(w, op->d, [&](int i) { return toHalfBits(a[i], m, bf); });
      break;
    }
    case NF16x2: case NBF16x2: {
      bool bf = (op->aux & 15) == NBF16x2;
      h::store<uint32_t>(w, op->d, [&](int i) {
        return uint32_t(toHalfBits(a[i], m, bf)) << 16 | toHalfBits(b[i], m, bf);
      });
      break;
    }
    case NE4M3x2: case NE5M2x2: {
      bool e5 = (op->aux & 15) == NE5M2x2;
      h::store<uint16_t>(w, op->d, [&](int i) {
        return uint16_t(toFp8Bits(a[i], m, e5) << 8 | toFp8Bits(b[i], m, e5));
      });
      break;
    }
    case NTF32: h::store<uint32_t>(w, op->d, [&](int i) { return toTf32Bits(a[i], m); }); break;
  }
  return op + 1;
}

}  // namespace

Handler cvtNarrowHandler(Type d, Type s, Round round, bool tiesAway, bool relu, bool satfinite, uint32_t* aux,
                         unsigned* sources) {
  uint32_t kind;
  *sources = 1;
  if (s == Type::f16x2 && (d == Type::e4m3x2 || d == Type::e5m2x2)) {
    kind = d == Type::e4m3x2 ? NE4M3x2FromF16x2 : NE5M2x2FromF16x2;
    *aux = kind | uint32_t(round) << 4 | (relu ? 64u : 0u) | (satfinite ? 128u : 0u);
    return &cvtNarrow;
  }
  if (d == Type::f16x2 && (s == Type::e4m3x2 || s == Type::e5m2x2)) {
    kind = s == Type::e4m3x2 ? NF16x2FromE4M3x2 : NF16x2FromE5M2x2;
    *aux = kind | uint32_t(round) << 4 | (relu ? 64u : 0u);
    return &cvtNarrow;
  }
  if (s != Type::f32) return nullptr;
  switch (d) {
    case Type::f16: kind = NF16; break;
    case Type::bf16: kind = NBF16; break;
    case Type::f16x2: kind = NF16x2; *sources = 2; break;
    case Type::bf16x2: kind = NBF16x2; *sources = 2; break;
    case Type::e4m3x2: kind = NE4M3x2; *sources = 2; break;
    case Type::e5m2x2: kind = NE5M2x2; *sources = 2; break;
    case Type::tf32: kind = NTF32; break;
    default: return nullptr;
  }
  *aux = kind | uint32_t(round) << 4 | (relu ? 64u : 0u) | (satfinite ? 128u : 0u) | (tiesAway ? 256u : 0u);
  return &cvtNarrow;
}

Handler cvtHandler(Type d, Type s, Round round, bool intRound, bool sat, bool ftz) {
  using h::Kind;
  // integer <-> integer
  if (isInt(d) && isInt(s)) {
    return withIntType(d, [&](auto dt) {
      using D = decltype(dt);
      return withIntType(s, [&](auto st) -> Handler {
        using S = decltype(st);
        if (sat) return &h::cvt<D, h::KInt, S, h::KInt, num::RN, false, true, false>;
        return &h::convertWidth<D, S>;
      });
    });
  }
  // float -> integer
  if (isInt(d) && (s == Type::f32 || s == Type::f64)) {
    return withIntType(d, [&](auto dt) {
      using D = decltype(dt);
      return withRound(round, [&](auto rm) -> Handler {
        constexpr Round R = decltype(rm)::value;
        if (s == Type::f64) return &h::cvt<D, h::KInt, double, h::KF64, R, true, false, false>;
        if (ftz) return &h::cvt<D, h::KInt, float, h::KF32, R, true, false, true>;
        return &h::cvt<D, h::KInt, float, h::KF32, R, true, false, false>;
      });
    });
  }
  // integer -> f32/f64
  if ((d == Type::f32 || d == Type::f64) && isInt(s)) {
    return withIntType(s, [&](auto st) {
      using S = decltype(st);
      return withRound(round, [&](auto rm) {
        constexpr Round R = decltype(rm)::value;
        return withBool(sat, [&](auto sa) -> Handler {
          constexpr bool SAT = decltype(sa)::value;
          if (d == Type::f32) return &h::cvt<float, h::KF32, S, h::KInt, R, false, SAT, false>;
          return &h::cvt<double, h::KF64, S, h::KInt, R, false, SAT, false>;
        });
      });
    });
  }
  // float <-> float
  auto ff = [&](auto dtag, auto dk, auto stag, auto sk) -> Handler {
    using D = decltype(dtag);
    using S = decltype(stag);
    constexpr Kind DK = decltype(dk)::value;
    constexpr Kind SK = decltype(sk)::value;
    return withRound(round, [&](auto rm) {
      constexpr Round R = decltype(rm)::value;
      return withBool(sat, [&](auto sa) {
        constexpr bool SAT = decltype(sa)::value;
        return withBool(ftz, [&](auto fz) {
          constexpr bool FTZ = decltype(fz)::value;
          return withBool(intRound, [&](auto ir) -> Handler {
            constexpr bool IR = decltype(ir)::value;
            return &h::cvt<D, DK, S, SK, R, IR, SAT, FTZ>;
          });
        });
      });
    });
  };
  using KF32 = std::integral_constant<Kind, h::KF32>;
  using KF64 = std::integral_constant<Kind, h::KF64>;
  using KF16 = std::integral_constant<Kind, h::KF16>;
  using KBF16 = std::integral_constant<Kind, h::KBF16>;
  if (d == Type::f32 && s == Type::f32) return ff(float{}, KF32{}, float{}, KF32{});
  if (d == Type::f64 && s == Type::f64) return ff(double{}, KF64{}, double{}, KF64{});
  if (d == Type::f64 && s == Type::f32) return ff(double{}, KF64{}, float{}, KF32{});
  if (d == Type::f32 && s == Type::f64) return ff(float{}, KF32{}, double{}, KF64{});
  if (d == Type::f16 && s == Type::f32) return ff(uint16_t{}, KF16{}, float{}, KF32{});
  if (d == Type::f16 && s == Type::f64) return ff(uint16_t{}, KF16{}, double{}, KF64{});
  if (d == Type::f32 && s == Type::f16) return ff(float{}, KF32{}, uint16_t{}, KF16{});
  if (d == Type::f64 && s == Type::f16) return ff(double{}, KF64{}, uint16_t{}, KF16{});
  if (d == Type::bf16 && s == Type::f32) return ff(uint16_t{}, KBF16{}, float{}, KF32{});
  if (d == Type::f32 && s == Type::bf16) return ff(float{}, KF32{}, uint16_t{}, KBF16{});
  if (d == Type::f16 && s == Type::f16) return ff(uint16_t{}, KF16{}, uint16_t{}, KF16{});
  if (d == Type::bf16 && s == Type::bf16) return ff(uint16_t{}, KBF16{}, uint16_t{}, KBF16{});
  return nullptr;
}

}  // namespace ptx::exec
