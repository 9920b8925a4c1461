// Conversions (OpClass Convert): cvt between every pair of types, the packed and narrow forms (f16x2, bf16x2,
// e4m3x2, e5m2x2, tf32, .relu, .satfinite).
#include "exec/lowerer.h"

namespace ptx::exec {

namespace h {

// cvt between numeric types: D, S are C++ carrier types; kinds give the PTX interpretation (for f16/bf16 which are
// carried as uint16_t).
enum Kind : uint8_t { KInt, KF16, KBF16, KF32, KF64 };
template <class T, Kind K> PTX_HOT double toDouble(T x) {
  if constexpr (K == KF16)
    return num::halfToFloat(x);
  else if constexpr (K == KBF16)
    return num::bf16ToFloat(x);
  else
    return double(x);
}
template <class D, Kind DK, class S, Kind SK, Round RM, bool IntRound, bool SAT, bool FTZ> PTX_HOT D cvtLane(S x) {
  if constexpr (SK == KInt && DK == KInt) {
    if constexpr (SAT) {
      // saturate to destination range
      if constexpr (std::is_signed_v<S>) {
        int64_t v = int64_t(x);
        int64_t lo = int64_t(std::numeric_limits<D>::min());
        if constexpr (std::is_unsigned_v<D> && sizeof(D) == 8) {
          return v < 0 ? D(0) : D(v);
        } else {
          int64_t hi =
              std::numeric_limits<D>::max() > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(std::numeric_limits<D>::max());
          return D(v < lo ? lo : (v > hi ? hi : v));
        }
      } else {
        uint64_t v = uint64_t(x);
        uint64_t hi = uint64_t(std::numeric_limits<D>::max());
        return D(v > hi ? hi : v);
      }
    } else {
      return D(x);
    }
  } else if constexpr (DK == KInt) {  // float -> int: IntRound mode, saturating
    using F = std::conditional_t<SK == KF64, double, float>;
    F v;
    if constexpr (SK == KF16 || SK == KBF16)
      v = F(toDouble<S, SK>(x));
    else
      v = F(x);
    if constexpr (FTZ) v = num::flush(v);
    // f64 NaN converts to the most negative signed integer (f32 NaN to 0), as measured on an H200
    if constexpr (SK == KF64 && std::is_signed_v<D>)
      if (v != v) return std::numeric_limits<D>::min();
    v = num::roundToInt(v, RM);
    return num::floatToInt<D>(v);
  } else if constexpr (DK == KF32 || DK == KF64) {
    using F = D;
    F r;
    if constexpr (SK == KInt) {
      r = F(x);  // rounding mode from MXCSR (set by the caller for non-RN)
    } else if constexpr (SK == KF16 || SK == KBF16) {
      r = F(toDouble<S, SK>(x));
    } else {
      F v = F(x);
      if constexpr (FTZ && SK == KF32) v = num::flush(F(x));
      r = v;
      if constexpr (FTZ && SK == KF32 && DK == KF64) r = F(num::flush(float(x)));
    }
    if constexpr (IntRound) r = num::roundToInt(r, RM);
    if constexpr (FTZ && DK == KF32) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    // NaN: f32/f16 -> f32 give the canonical NaN; f64 sources and destinations keep the quieted payload
    // (x86's conversions do the same), bf16 -> f32 keeps the bits (measured on an H200).
    if constexpr ((SK == KF32 || SK == KF16) && DK == KF32) r = num::canon(r);
    if constexpr (SK == KF64 && DK == KF64) r = num::nan64(r, x);
    return r;
  } else if constexpr (DK == KF16) {
    if constexpr (SK == KInt) {
      return num::doubleToHalf(double(x), RM, SAT);  // exact for <= 53-bit ints
    } else if constexpr (SK == KF64) {
      if (x != x) {  // quieted, payload truncated (the GPU's f64 -> f16 NaN; not canonical like f32 -> f16)
        uint64_t b = std::bit_cast<uint64_t>(x);
        return uint16_t(((b >> 48) & 0x8000u) | 0x7e00u | ((b >> 42) & 0x3ffu));
      }
      return num::doubleToHalf(x, RM, SAT);
    } else if constexpr (SK == KF32) {
      return num::floatToHalf(FTZ ? num::flush(x) : x, RM, SAT);
    } else {
      float f = float(toDouble<S, SK>(x));
      if constexpr (IntRound) f = num::roundToInt(f, RM);
      return num::floatToHalf(f, num::RN, SAT);
    }
  } else {  // bf16
    if constexpr (SK == KF32) {
      return num::floatToBf16(FTZ ? num::flush(x) : x, RM, SAT);
    } else if constexpr (SK == KBF16) {
      float f = num::bf16ToFloat(x);
      if constexpr (IntRound) f = num::roundToInt(f, RM);
      return num::floatToBf16(f, num::RN, SAT);
    } else {
      // via float with round-to-odd is not needed for ints <= 24 bits; accept double rounding otherwise
      double v = toDouble<S, SK>(x);
      return num::floatToBf16(float(v), RM, SAT);
    }
  }
}
template <class D, Kind DK, class S, Kind SK, Round RM, bool IntRound, bool SAT, bool FTZ>
PTX_LANES const Op* cvt(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  auto body = [&](int i) { return cvtLane<D, DK, S, SK, RM, IntRound, SAT, FTZ>(a[i]); };
  constexpr bool needMode =
      !IntRound && RM != num::RN && ((DK == KF32 || DK == KF64) && (SK == KInt || (SK == KF64 && DK == KF32)));
  if constexpr (needMode) {
    num::FpMode mode(RM, false);
    store<D>(w, op->d, body);
  } else {
    store<D>(w, op->d, body);
  }
  return op + 1;
}

}  // namespace h

using num::Round;
using ptx::Type;

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
    if (m.satfinite || !e5m2)
      r = maxFinite;
    else
      return uint8_t(sign | 0x7cu);
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
    if (m.ties_away)
      up = low >= 0x1000u;
    else if (m.round == num::RN)
      up = low > 0x1000u || (low == 0x1000u && (keep & 0x2000u));
    if (up) keep += 0x2000u;
    mag = keep;
    if (m.satfinite && mag >= 0x7f800000u) mag = 0x7f7fe000u;
  } else if (m.satfinite) {
    mag = 0x7f7fe000u;
  }
  return sign | mag;
}

enum NarrowKind : uint32_t {
  NF16,
  NBF16,
  NF16x2,
  NBF16x2,
  NE4M3x2,
  NE5M2x2,
  NTF32,
  NE4M3x2FromF16x2,
  NE5M2x2FromF16x2,  // cvt.rn.satfinite{.relu}.e4m3x2/e5m2x2.f16x2: each half, high to high
  NF16x2FromE4M3x2,
  NF16x2FromE5M2x2,  // cvt.rn{.relu}.f16x2.e4m3x2/e5m2x2: exact, high byte to high half
};

// The typed operand view of a narrowing conversion (cvtNarrow): which conversion and its modes; the one place that
// packs them into the op at lowering (into) and reads them in the handler (of).
struct NarrowOperands {
  NarrowKind kind = NF16;
  NarrowMode mode{Round::RN, false, false, false};

  static NarrowOperands of(const Op& op) {
    return {NarrowKind(op.aux & 15),
            NarrowMode{Round((op.aux >> 4) & 3), (op.aux & 64) != 0, (op.aux & 128) != 0, (op.aux & 256) != 0}};
  }
  void into(Op& op) const {
    op.aux = uint32_t(kind) | uint32_t(mode.round) << 4 | (mode.relu ? 64u : 0u) | (mode.satfinite ? 128u : 0u) |
             (mode.ties_away ? 256u : 0u);
  }
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
  const NarrowOperands n = NarrowOperands::of(*op);
  const NarrowMode& m = n.mode;
  switch (n.kind) {
    case NE4M3x2FromF16x2:
    case NE5M2x2FromF16x2: {
      bool e5 = n.kind == NE5M2x2FromF16x2;
      const uint32_t* x = h::R<uint32_t>(w, op->a);
      h::store<uint16_t>(w, op->d, [&](int i) {
        return uint16_t(toFp8Bits(num::halfToFloat(uint16_t(x[i] >> 16)), m, e5) << 8 |
                        toFp8Bits(num::halfToFloat(uint16_t(x[i])), m, e5));
      });
      break;
    }
    case NF16x2FromE4M3x2:
    case NF16x2FromE5M2x2: {
      bool e5 = n.kind == NF16x2FromE5M2x2;
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
    case NF16:
    case NBF16: {
      bool bf = n.kind == NBF16;
      h::store<uint16_t>(w, op->d, [&](int i) { return toHalfBits(a[i], m, bf); });
      break;
    }
    case NF16x2:
    case NBF16x2: {
      bool bf = n.kind == NBF16x2;
      h::store<uint32_t>(w, op->d,
                         [&](int i) { return uint32_t(toHalfBits(a[i], m, bf)) << 16 | toHalfBits(b[i], m, bf); });
      break;
    }
    case NE4M3x2:
    case NE5M2x2: {
      bool e5 = n.kind == NE5M2x2;
      h::store<uint16_t>(w, op->d,
                         [&](int i) { return uint16_t(toFp8Bits(a[i], m, e5) << 8 | toFp8Bits(b[i], m, e5)); });
      break;
    }
    case NTF32: h::store<uint32_t>(w, op->d, [&](int i) { return toTf32Bits(a[i], m); }); break;
  }
  return op + 1;
}

}  // namespace

Handler cvtNarrowHandler(Type d, Type s, Round round, bool tiesAway, bool relu, bool satfinite,
                         NarrowOperands* operands, unsigned* sources) {
  NarrowKind kind;
  *sources = 1;
  if (s == Type::f16x2 && (d == Type::e4m3x2 || d == Type::e5m2x2)) {
    kind = d == Type::e4m3x2 ? NE4M3x2FromF16x2 : NE5M2x2FromF16x2;
    *operands = {kind, NarrowMode{round, relu, satfinite, false}};
    return &cvtNarrow;
  }
  if (d == Type::f16x2 && (s == Type::e4m3x2 || s == Type::e5m2x2)) {
    kind = s == Type::e4m3x2 ? NF16x2FromE4M3x2 : NF16x2FromE5M2x2;
    *operands = {kind, NarrowMode{round, relu, false, false}};
    return &cvtNarrow;
  }
  if (s != Type::f32) return nullptr;
  switch (d) {
    case Type::f16: kind = NF16; break;
    case Type::bf16: kind = NBF16; break;
    case Type::f16x2:
      kind = NF16x2;
      *sources = 2;
      break;
    case Type::bf16x2:
      kind = NBF16x2;
      *sources = 2;
      break;
    case Type::e4m3x2:
      kind = NE4M3x2;
      *sources = 2;
      break;
    case Type::e5m2x2:
      kind = NE5M2x2;
      *sources = 2;
      break;
    case Type::tf32: kind = NTF32; break;
    default: return nullptr;
  }
  *operands = {kind, NarrowMode{round, relu, satfinite, tiesAway}};
  return &cvtNarrow;
}

Handler cvtHandler(Type d, Type s, Round round, bool intRound, bool sat, bool ftz) {
  using h::Kind;
  // integer <-> integer
  if (isIntegerType(d) && isIntegerType(s)) {
    return byIntType(d, [&](auto dt) {
      using D = decltype(dt);
      return byIntType(s, [&](auto st) -> Handler {
        using S = decltype(st);
        if (sat) return &h::cvt<D, h::KInt, S, h::KInt, num::RN, false, true, false>;
        return &h::convertWidth<D, S>;
      });
    });
  }
  // float -> integer
  if (isIntegerType(d) && (s == Type::f32 || s == Type::f64)) {
    return byIntType(d, [&](auto dt) {
      using D = decltype(dt);
      return byRound(round, [&](auto rm) -> Handler {
        constexpr Round R = decltype(rm)::value;
        if (s == Type::f64) return &h::cvt<D, h::KInt, double, h::KF64, R, true, false, false>;
        if (ftz) return &h::cvt<D, h::KInt, float, h::KF32, R, true, false, true>;
        return &h::cvt<D, h::KInt, float, h::KF32, R, true, false, false>;
      });
    });
  }
  // integer -> f32/f64
  if ((d == Type::f32 || d == Type::f64) && isIntegerType(s)) {
    return byIntType(s, [&](auto st) {
      using S = decltype(st);
      return byRound(round, [&](auto rm) {
        constexpr Round R = decltype(rm)::value;
        return byBool(sat, [&](auto sa) -> Handler {
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
    return byRound(round, [&](auto rm) {
      constexpr Round R = decltype(rm)::value;
      return byBool(sat, [&](auto sa) {
        constexpr bool SAT = decltype(sa)::value;
        return byBool(ftz, [&](auto fz) {
          constexpr bool FTZ = decltype(fz)::value;
          return byBool(intRound, [&](auto ir) -> Handler {
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

namespace lowering {

void KernelLowerer::lowerConvert(const Instruction& in) {
  if (in.opcode != Opcode::Cvt) return unsupported(in);
  lowerCvt(in);
}

void KernelLowerer::lowerCvt(const Instruction& in) {
  Type dt = in.types[0];
  Type st = in.numTypes > 1 ? in.types[1] : in.types[0];
  Round rm = roundingOf(in.rounding);
  bool ir = isIntRounding(in.rounding);
  bool sat = in.has(ptx::Flag::sat);
  bool ftz = in.has(ptx::Flag::ftz);
  bool dInt = !isFloat(dt), sInt = !isFloat(st);
  bool relu = in.has(ptx::Flag::relu), satfinite = in.has(ptx::Flag::satfinite);
  if (relu || satfinite || dt == Type::f16x2 || dt == Type::bf16x2 || dt == Type::e4m3x2 || dt == Type::e5m2x2 ||
      dt == Type::tf32) {
    NarrowOperands narrow;
    unsigned nsrc = 0;
    Handler hnd = cvtNarrowHandler(dt, st, rm, in.rounding == ptx::Rounding::rna, relu, satfinite, &narrow, &nsrc);
    if (!hnd || in.numOperands != nsrc + 1) return unsupported(in, "conversion");
    uint32_t a = src(opnd(in, 1), st), b = nsrc > 1 ? src(opnd(in, 2), st) : kZeroReg;
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    narrow.into(op);
    finish(d);
    return;
  }
  uint32_t a = src(opnd(in, 1), st);
  Type curT = st;
  // f16/bf16 to non-f32: go through f32 (exact)
  if ((st == Type::f16 || st == Type::bf16) && dt != Type::f32 && dt != st) {
    uint32_t t1 = temp(4);
    Op& op = emit(cvtHandler(Type::f32, st, num::RN, false, false, false));
    op.d = t1;
    op.a = a;
    a = t1;
    curT = Type::f32;
  }
  // integers to f16/bf16: through f64 (exact for the values that do not overflow)
  if (sInt && (dt == Type::f16 || dt == Type::bf16)) {
    uint32_t t1 = temp(8);
    Op& op = emit(cvtHandler(Type::f64, st, num::RN, false, false, false));
    op.d = t1;
    op.a = a;
    a = t1;
    curT = Type::f64;
    if (dt == Type::bf16) {
      uint32_t t2 = temp(4);
      Op& op2 = emit(cvtHandler(Type::f32, Type::f64, rm, false, false, false));
      op2.d = t2;
      op2.a = t1;
      a = t2;
      curT = Type::f32;
    }
  }
  if (dt == Type::bf16 && curT == Type::f64) {
    uint32_t t2 = temp(4);
    Op& op2 = emit(cvtHandler(Type::f32, Type::f64, rm, false, false, false));
    op2.d = t2;
    op2.a = a;
    a = t2;
    curT = Type::f32;
  }
  (void)dInt;
  Handler hnd = cvtHandler(dt, curT, rm, ir || (dInt && !sInt), sat, ftz);
  if (!hnd) return unsupported(in, "conversion");
  Dst d = dst(opnd(in, 0), dt);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec
