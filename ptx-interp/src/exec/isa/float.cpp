// Single- and double-precision arithmetic (OpClass Arith on .f32, .f64 and .f32x2).
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

// min/max.xorsign.abs: the min/max of the magnitudes with the sign sign(a) ^ sign(b).
template <bool Max> struct FXorsignAbs {
  template <class T> static PTX_HOT T f(T a, T b) {
    T m = Max ? h::FMax::f(std::fabs(a), std::fabs(b)) : h::FMin::f(std::fabs(a), std::fabs(b));
    if (m != m) return m;
    return std::signbit(a) != std::signbit(b) ? -m : m;
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
  uint32_t kind = op->aux;
  h::store<uint8_t>(w, op->d, [&](int i) -> uint8_t {
    T x = a[i];
    switch (kind) {
      case 0: return std::isfinite(x);
      case 1: return std::isinf(x);
      case 2: return !std::isnan(x);
      case 3: return std::isnan(x);
      case 4: return std::isnormal(x) || x == 0;  // zero counts as normal on the GPU (measured on an H200)
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
      return byBool(ftz, [&](auto fz) {
        return byBool(sat, [&](auto st) -> Handler {
          return fn(F{}, r, fz, st);
        });
      });
    });
  };
  // Emits hnd with sources `n` operands from index 1 into operand 0; pairs unpack, run it per half and pack.
  auto emitWith = [&](Handler hnd, unsigned n) {
    if (!pair) {
      uint32_t s[3] = {0, 0, 0};
      for (unsigned k = 0; k < n; ++k) s[k] = src(opnd(in, 1 + k), t);
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
      Op& u = emit(&h::unpack<uint32_t, uint64_t, 2>);
      u.a = r;
      u.d = lo[k];
      u.b = hi[k];
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
    Op& p = emit(&h::pack<uint32_t, uint64_t, 2>);
    p.d = d.off;
    p.a = rlo;
    p.b = rhi;
    finish(d);
  };
  auto bin = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fbinary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 2);
  };
  auto ter = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fternary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 3);
  };
  auto un = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(t, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::funary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
  };
  switch (oc) {
    case Opcode::Add: return bin(h::FAdd{});
    case Opcode::Sub: return bin(h::FSub{});
    case Opcode::Mul: return bin(h::FMul{});
    case Opcode::Div:
      if (in.has(ptx::Flag::approx) && t == Type::f32) return bin(h::FDivApprox{});
      return bin(h::FDiv{});
    case Opcode::Fma: return ter(h::FFma{});
    case Opcode::Mad:
      if (in.rounding == ptx::Rounding::none && t == Type::f32) return ter(h::FMadNoFuse{});
      return ter(h::FFma{});
    case Opcode::Min:
      if (in.has(ptx::Flag::xorsign)) return bin(FXorsignAbs<false>{});
      if (in.has(ptx::Flag::NaN)) return bin(FMinNaN{});
      return bin(h::FMin{});
    case Opcode::Max:
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
    case Opcode::Ex2: return un(h::FEx2{});
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
      op.aux = ftz;
      finish(d);
      return;
    }
    case Opcode::Testp: {
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), Type::pred);
      uint32_t kind = 0;
      if (fn_->hasMod(in, ptx::Mod::finite)) kind = 0;
      else if (fn_->hasMod(in, ptx::Mod::infinite)) kind = 1;
      else if (fn_->hasMod(in, ptx::Mod::number)) kind = 2;
      else if (fn_->hasMod(in, ptx::Mod::notanumber)) kind = 3;
      else if (fn_->hasMod(in, ptx::Mod::normal)) kind = 4;
      else if (fn_->hasMod(in, ptx::Mod::subnormal)) kind = 5;
      Op& op = emit(t == Type::f32 ? &testp<float> : &testp<double>);
      op.d = d.off;
      op.a = a;
      op.aux = kind;
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
