// Conversions (OpClass Convert): cvt between every pair of types, the packed and narrow forms (f16x2, bf16x2,
// e4m3x2, e5m2x2, tf32, the sm_100/sm_120 e2m1x2, e2m3x2, e3m2x2 and ue8m0x2, .relu, .satfinite).
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

// The small float formats cvt rounds to (round to nearest even, the only mode it offers for them): exponent and
// mantissa bits, bias, largest finite value, and what NaN becomes. OCP FP8 e4m3 (no infinity, NaN 0x7f, max 448) and
// e5m2 (the f16 layout: infinities, max 57344); the sm_100/sm_120 formats without infinities or NaN, always
// .satfinite: FP4 e2m1 (max 6), FP6 e2m3 (max 7.5) and e3m2 (max 28), each in the low bits of its container, NaN
// becoming the positive largest value (as CUDA's cuda_fp4.hpp/cuda_fp6.hpp host conversions define them).
struct SmallFloat {
  int expBits, mbits, bias;
  float maxFinite;
  uint8_t nanCode;
  bool hasInfinity;
};
constexpr SmallFloat kE4M3{4, 3, 7, 448.0f, 0x7f, false}, kE5M2{5, 2, 15, 57344.0f, 0x7f, true},
    kE2M1{2, 1, 1, 6.0f, 0x7, false}, kE2M3{2, 3, 1, 7.5f, 0x1f, false}, kE3M2{3, 2, 3, 28.0f, 0x1f, false};

uint8_t toSmallFloatBits(float f, const NarrowMode& m, const SmallFloat& t) {
  if (f != f) return t.nanCode;
  if (m.relu) f = reluOf(f);
  const uint8_t sign = std::signbit(f) ? uint8_t(1u << (t.expBits + t.mbits)) : 0;
  double a = std::fabs(double(f));
  // quantum at this magnitude (subnormals share the minimum normal exponent's quantum)
  int e = a == 0 ? 1 - t.bias : std::max(std::ilogb(a), 1 - t.bias);
  double q = std::ldexp(1.0, e - t.mbits);
  double r = std::nearbyint(a / q) * q;
  if (r > t.maxFinite || std::isinf(a)) {
    if (m.satfinite || !t.hasInfinity)
      r = t.maxFinite;
    else
      return uint8_t(sign | 0x7cu);
  }
  if (r == 0) return sign;
  int re = std::max(std::ilogb(r), 1 - t.bias);
  uint32_t mant = uint32_t(r / std::ldexp(1.0, re - t.mbits));  // includes the implicit bit for normals
  uint32_t expField = mant >> t.mbits ? uint32_t(re + t.bias) : 0;
  return uint8_t(sign | expField << t.mbits | (mant & ((1u << t.mbits) - 1)));
}
uint8_t toFp8Bits(float f, const NarrowMode& m, bool e5m2) { return toSmallFloatBits(f, m, e5m2 ? kE5M2 : kE4M3); }

// ue8m0 (2^(e - 127), 0xff NaN) from a bf16 (CUDA's cuda_fp8.hpp defines it so): its exponent field, rounded up by one
// under .rp when the mantissa is not zero and the value is above 2^-127 and finite; .satfinite turns an overflow to
// 0xff (not a NaN's) into 0xfe. From f32: .rz takes the f32 truncated to bf16 (NaN as 0x7fff), .rp its magnitude
// rounded up to bf16.
uint8_t ue8m0FromBf16(uint16_t b, Round round, bool satfinite) {
  uint8_t e = uint8_t(b >> 7);
  if (round == num::RP && (b & 0x7fu) && (b & 0x7fffu) > 0x40u && (b & 0x7fffu) < 0x7f80u) ++e;
  if (satfinite && (b & 0x7fffu) <= 0x7f80u && e == 0xff) --e;
  return e;
}
uint8_t ue8m0FromFloat(float f, Round round, bool satfinite) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t b = 0;
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    b = 0x7fff;
  } else if (round == num::RP) {
    x &= 0x7fffffffu;
    b = uint16_t((x >> 16) + (x < 0x7f800000u && (x & 0xffffu) ? 1 : 0));
  } else {
    b = uint16_t(x >> 16);
  }
  return ue8m0FromBf16(b, round, satfinite);
}
uint16_t bf16FromUe8m0(uint8_t e) { return e == 0xff ? 0x7fffu : e == 0 ? 0x40u : uint16_t(e << 7); }

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
  // sm_100a/sm_120a: FP4 and FP6 pairs from two f32 (a to the high nibble or byte), and back to f16x2, exactly;
  // ue8m0 pairs from two f32 or a bf16x2 (.rz/.rp), and back to bf16x2
  NE2M1x2,
  NE2M3x2,
  NE3M2x2,
  NF16x2FromE2M1x2,
  NF16x2FromE2M3x2,
  NF16x2FromE3M2x2,
  NUE8M0x2,
  NUE8M0x2FromBF16x2,
  NBF16x2FromUE8M0x2,
};

// The typed operand view of a narrowing conversion (cvtNarrow): which conversion and its modes; the one place that
// packs them into the op at lowering (into) and reads them in the handler (of).
struct NarrowOperands {
  NarrowKind kind = NF16;
  NarrowMode mode{Round::RN, false, false, false};

  static NarrowOperands of(const Op& op) {
    return {NarrowKind(op.aux & 31),
            NarrowMode{Round((op.aux >> 5) & 3), (op.aux & 128) != 0, (op.aux & 256) != 0, (op.aux & 512) != 0}};
  }
  void into(Op& op) const {
    op.aux = uint32_t(kind) | uint32_t(mode.round) << 5 | (mode.relu ? 128u : 0u) | (mode.satfinite ? 256u : 0u) |
             (mode.ties_away ? 512u : 0u);
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
    case NE2M1x2:
      h::store<uint8_t>(w, op->d, [&](int i) {
        return uint8_t(toSmallFloatBits(a[i], m, kE2M1) << 4 | toSmallFloatBits(b[i], m, kE2M1));
      });
      break;
    case NE2M3x2:
    case NE3M2x2: {
      const SmallFloat& t = n.kind == NE2M3x2 ? kE2M3 : kE3M2;
      h::store<uint16_t>(
          w, op->d, [&](int i) { return uint16_t(toSmallFloatBits(a[i], m, t) << 8 | toSmallFloatBits(b[i], m, t)); });
      break;
    }
    case NF16x2FromE2M1x2:
    case NF16x2FromE2M3x2:
    case NF16x2FromE3M2x2: {
      const SmallFloat& t = n.kind == NF16x2FromE2M1x2 ? kE2M1 : n.kind == NF16x2FromE2M3x2 ? kE2M3 : kE3M2;
      const unsigned width = n.kind == NF16x2FromE2M1x2 ? 4 : 8;  // a nibble (of a .b8) or a byte (of a .b16) each
      const uint8_t* x8 = h::R<uint8_t>(w, op->a);
      const uint16_t* x16 = h::R<uint16_t>(w, op->a);
      auto half = [&](uint8_t v) -> uint32_t {
        float f = float(num::miniFloatValue(v, t.expBits, t.mbits));  // exact (no NaN or infinity in FP4, FP6)
        if (m.relu) f = reluOf(f);
        return num::floatToHalf(f, num::RN, false);
      };
      h::store<uint32_t>(w, op->d, [&](int i) {
        const uint32_t mask = (1u << width) - 1, x = width == 4 ? x8[i] : x16[i];
        return half(uint8_t((x >> width) & mask)) << 16 | half(uint8_t(x & mask));
      });
      break;
    }
    case NUE8M0x2:
      h::store<uint16_t>(w, op->d, [&](int i) {
        return uint16_t(ue8m0FromFloat(a[i], m.round, m.satfinite) << 8 | ue8m0FromFloat(b[i], m.round, m.satfinite));
      });
      break;
    case NUE8M0x2FromBF16x2: {
      const uint32_t* x = h::R<uint32_t>(w, op->a);
      h::store<uint16_t>(w, op->d, [&](int i) {
        return uint16_t(ue8m0FromBf16(uint16_t(x[i] >> 16), m.round, m.satfinite) << 8 |
                        ue8m0FromBf16(uint16_t(x[i]), m.round, m.satfinite));
      });
      break;
    }
    case NBF16x2FromUE8M0x2: {
      const uint16_t* x = h::R<uint16_t>(w, op->a);
      h::store<uint32_t>(w, op->d, [&](int i) {
        return uint32_t(bf16FromUe8m0(uint8_t(x[i] >> 8))) << 16 | bf16FromUe8m0(uint8_t(x[i]));
      });
      break;
    }
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
  if (d == Type::f16x2 && (s == Type::e2m1x2 || s == Type::e2m3x2 || s == Type::e3m2x2)) {
    kind = s == Type::e2m1x2 ? NF16x2FromE2M1x2 : s == Type::e2m3x2 ? NF16x2FromE2M3x2 : NF16x2FromE3M2x2;
    *operands = {kind, NarrowMode{round, relu, false, false}};
    return &cvtNarrow;
  }
  if (d == Type::bf16x2 && s == Type::ue8m0x2) {
    *operands = {NBF16x2FromUE8M0x2, NarrowMode{round, false, false, false}};
    return &cvtNarrow;
  }
  if (d == Type::ue8m0x2 && s == Type::bf16x2) {
    *operands = {NUE8M0x2FromBF16x2, NarrowMode{round, false, satfinite, false}};
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
    case Type::e2m1x2:
    case Type::e2m3x2:
    case Type::e3m2x2:
      kind = d == Type::e2m1x2 ? NE2M1x2 : d == Type::e2m3x2 ? NE2M3x2 : NE3M2x2;
      *sources = 2;
      break;
    case Type::ue8m0x2:
      kind = NUE8M0x2;
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
      dt == Type::tf32 || dt == Type::e2m1x2 || dt == Type::e2m3x2 || dt == Type::e3m2x2 || dt == Type::ue8m0x2) {
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
