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

enum HOp { HAdd, HSub, HMul, HFma, HMin, HMax, HNeg, HAbs, HMinNaN, HMaxNaN };

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
      if constexpr (O == HNeg) {
        out = uint16_t(x ^ 0x8000u);
      } else if constexpr (O == HAbs) {
        out = uint16_t(x & 0x7fffu);
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
    default: return nullptr;
  }
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
