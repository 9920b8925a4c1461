// Half-precision arithmetic (OpClass Arith on .f16, .bf16 and their x2 pairs), computed in float or double and
// rounded once.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using num::Round;
using ptx::Type;

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

template <HOp O, bool BF, int N, Round RM, bool FTZ, bool SAT, bool RELU> const Op* halfOp(Warp& w, const Op* op) {
  using C = std::conditional_t<N == 2, uint32_t, uint16_t>;
  const C* a = h::R<C>(w, op->a);
  const C* b = h::R<C>(w, op->b);
  const C* c = h::R<C>(w, op->c);
  h::store<C>(w, op->d, [&](int i) -> C {
    C r = 0;
    for (int k = 0; k < N; ++k) {
      uint16_t x = uint16_t(a[i] >> (16 * k)), y = uint16_t(b[i] >> (16 * k)), z = uint16_t(c[i] >> (16 * k));
      if constexpr (FTZ) {
        x = flushH<BF>(x);
        y = flushH<BF>(y);
        z = flushH<BF>(z);
      }
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
          if (!xNaN && ax < 0x1p-8f)
            out = x;
          else if (!xNaN && 1.0 - std::tanh(double(ax)) < 0x1p-20)
            out = fromF<BF>(std::copysign(1.0f, fx), num::RN, false);
        }
      } else if constexpr (O == HMin || O == HMax || O == HMinNaN || O == HMaxNaN) {
        float fx = toF<BF>(x), fy = toF<BF>(y);
        if ((O == HMinNaN || O == HMaxNaN) && (fx != fx || fy != fy)) {
          out = BF ? 0x7fffu : num::kCanonicalNaN16;
        } else {
          float res = (O == HMin || O == HMinNaN) ? h::FMin::f(fx, fy) : h::FMax::f(fx, fy);
          if (res != res)
            out = BF ? 0x7fffu : num::kCanonicalNaN16;
          else
            out = (res == fx && std::signbit(res) == std::signbit(fx)) ? x : y;
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
  return byRound(r, [&](auto rm) {
    return byBool(ftz, [&](auto fz) {
      return byBool(sat, [&](auto st) {
        return byBool(relu, [&](auto rl) -> Handler {
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
    case ptx::Opcode::Min:
      return relu ? halfByType<HMinNaN>(t, num::RN, ftz, false, false)
                  : halfByType<HMin>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Max:
      return relu ? halfByType<HMaxNaN>(t, num::RN, ftz, false, false)
                  : halfByType<HMax>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Ex2: return halfByType<HEx2>(t, num::RN, ftz, false, false);
    case ptx::Opcode::Tanh: return halfByType<HTanh>(t, num::RN, false, false, false);
    default: return nullptr;
  }
}

namespace lowering {

void KernelLowerer::lowerHalf(const Instruction& in) {
  Type t = in.type();
  Round rm = roundingOf(in.rounding);
  bool relu = in.has(ptx::Flag::relu) || in.has(ptx::Flag::NaN);
  if (in.opcode == ptx::Opcode::Mul) saveContractedFactors(in, t);
  // an add/sub fused with the mul of its product, as ptxas fuses them (exec/contraction.cpp)
  const bool contracted =
      (in.opcode == ptx::Opcode::Add || in.opcode == ptx::Opcode::Sub) && contractions_[curInst_].mul != kNoIndex;
  Handler hnd = halfHandler(contracted ? ptx::Opcode::Fma : in.opcode, t, rm, in.has(ptx::Flag::ftz),
                            in.has(ptx::Flag::sat), relu);
  if (!hnd) return unsupported(in);
  unsigned nsrc = in.numOperands - 1;
  uint32_t s[3] = {kZeroReg, kZeroReg, kZeroReg};
  if (contracted) {
    const auto fused = contractedSources(in, t, halfHandler(ptx::Opcode::Neg, t, num::RN, false, false, false));
    std::copy(fused.begin(), fused.end(), s);
    nsrc = 0;
  }
  for (unsigned k = 0; k < nsrc && k < 3; ++k) s[k] = src(opnd(in, k + 1), t);
  Dst d = dst(opnd(in, 0), t);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = s[0];
  op.b = s[1];
  op.c = s[2];
  finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec
