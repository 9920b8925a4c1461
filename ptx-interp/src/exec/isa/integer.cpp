// Integer arithmetic, logic and bit manipulation (OpClass Arith and Logic on integer types, and prmt), including
// the SIMD .u16x2/.s16x2 forms.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

struct SatAddF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) + int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct SatSubF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) - int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct MinReluF {
  template <class T> static PTX_HOT T f(T a, T b) { T r = a < b ? a : b; return r < 0 ? T(0) : r; }
};
struct MaxReluF {
  template <class T> static PTX_HOT T f(T a, T b) { T r = a > b ? a : b; return r < 0 ? T(0) : r; }
};

}  // namespace

namespace lowering {

// Integer arithmetic, logic and bit manipulation.
void KernelLowerer::lowerArith(const Instruction& in) {
  Type t = in.type();
  Opcode oc = in.opcode;
  auto bin = [&](Handler hnd, Type at, Type bt, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    finish(d);
  };
  auto un = [&](Handler hnd, Type at, Type dt) {
    uint32_t a = src(opnd(in, 1), at);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
    return &prog_.ops.back();
  };
  auto ter = [&](Handler hnd, Type at, Type bt, Type ct, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt), c = src(opnd(in, 3), ct);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    op.c = c;
    finish(d);
    return &prog_.ops.back();
  };
  auto wideType = [&](Type x) {
    switch (x) {
      case Type::s16: return Type::s32;
      case Type::u16: return Type::u32;
      case Type::s32: return Type::s64;
      case Type::u32: return Type::u64;
      default: fail(line_, ".wide needs a 16 or 32-bit type");
    }
  };
  bool sat = in.has(ptx::Flag::sat);
  bool cc = in.has(ptx::Flag::cc);
  if (t == Type::pred) {
    switch (oc) {
      case Opcode::And: return bin(&h::predLogic<0>, t, t, t);
      case Opcode::Or: return bin(&h::predLogic<1>, t, t, t);
      case Opcode::Xor: return bin(&h::predLogic<2>, t, t, t);
      case Opcode::Not: un(&h::predLogic<3>, t, t); return;
      default: return unsupported(in);
    }
  }
  switch (oc) {
    case Opcode::Add:
    case Opcode::Sub: {
      bool add = oc == Opcode::Add;
      if (sat) {
        if (t != Type::s32) return unsupported(in);
        return bin(add ? &h::binary<int32_t, SatAddF> : &h::binary<int32_t, SatSubF>, t, t, t);
      }
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return add ? &h::binary<T, h::AddF> : &h::binary<T, h::SubF>;
                 }), t, t, t);
    }
    case Opcode::AddCC: case Opcode::AddC: case Opcode::SubCC: case Opcode::SubC: {
      bool sub = oc == Opcode::SubCC || oc == Opcode::SubC;
      bool useC = oc == Opcode::AddC || oc == Opcode::SubC;
      bool setC = oc == Opcode::AddCC || oc == Opcode::SubCC || cc;
      unsigned sz = sizeOf(t);
      Handler hnd = nullptr;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (sub) {
          if (useC) return setC ? &h::addCarry<T, true, true, true> : &h::addCarry<T, true, true, false>;
          return &h::addCarry<T, true, false, true>;
        }
        if (useC) return setC ? &h::addCarry<T, false, true, true> : &h::addCarry<T, false, true, false>;
        return &h::addCarry<T, false, false, true>;
      };
      if (sz == 4) hnd = pick(uint32_t{});
      else if (sz == 8) hnd = pick(uint64_t{});
      else return unsupported(in);
      return bin(hnd, t, t, t);
    }
    case Opcode::Mul: {
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::mulWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::mulWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::mulWide<int32_t, int64_t>; break;
          default: hnd = &h::mulWide<uint32_t, uint64_t>; break;
        }
        return bin(hnd, t, t, wt);
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return hi ? &h::binary<T, h::MulHiF> : &h::binary<T, h::MulLoF>;
                 }), t, t, t);
    }
    case Opcode::Mad: {
      if (sat) return unsupported(in);
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::madWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::madWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::madWide<int32_t, int64_t>; break;
          default: hnd = &h::madWide<uint32_t, uint64_t>; break;
        }
        ter(hnd, t, t, wt, wt);
        return;
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      if (cc) {
        Handler hnd = sizeOf(t) == 4 ? (hi ? (isSigned(t) ? &h::madCarry<int32_t, true, false, true> : &h::madCarry<uint32_t, true, false, true>)
                                           : &h::madCarry<uint32_t, false, false, true>)
                                     : (hi ? (isSigned(t) ? &h::madCarry<int64_t, true, false, true> : &h::madCarry<uint64_t, true, false, true>)
                                           : &h::madCarry<uint64_t, false, false, true>);
        ter(hnd, t, t, t, t);
        return;
      }
      ter(byInt163264(t, line_, [&](auto x) -> Handler {
            using T = decltype(x);
            return hi ? &h::ternary<T, h::MadHiF> : &h::ternary<T, h::MadLoF>;
          }), t, t, t, t);
      return;
    }
    case Opcode::MadCC: case Opcode::MadC: {
      bool hi = in.mulMode == ptx::MulMode::hi;
      bool useC = oc == Opcode::MadC;
      bool setC = oc == Opcode::MadCC || cc;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (hi) return useC ? (setC ? &h::madCarry<T, true, true, true> : &h::madCarry<T, true, true, false>) : &h::madCarry<T, true, false, true>;
        return useC ? (setC ? &h::madCarry<T, false, true, true> : &h::madCarry<T, false, true, false>) : &h::madCarry<T, false, false, true>;
      };
      Handler hnd;
      switch (t) {
        case Type::s32: hnd = pick(int32_t{}); break;
        case Type::u32: case Type::b32: hnd = pick(uint32_t{}); break;
        case Type::s64: hnd = pick(int64_t{}); break;
        case Type::u64: case Type::b64: hnd = pick(uint64_t{}); break;
        default: return unsupported(in);
      }
      ter(hnd, t, t, t, t);
      return;
    }
    case Opcode::Mul24:
      if (in.mulMode == ptx::MulMode::hi) return bin(isSigned(t) ? &h::mul24hi<int32_t> : &h::mul24hi<uint32_t>, t, t, t);
      return bin(isSigned(t) ? &h::mul24lo<int32_t> : &h::mul24lo<uint32_t>, t, t, t);
    case Opcode::Mad24:
      if (in.mulMode == ptx::MulMode::hi || sat) return unsupported(in);
      ter(isSigned(t) ? &h::mad24lo<int32_t> : &h::mad24lo<uint32_t>, t, t, t, t);
      return;
    case Opcode::Sad:
      ter(byInt163264(t, line_, [](auto x) -> Handler { return &h::sad<decltype(x)>; }), t, t, t, t);
      return;
    case Opcode::Div:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::DivIF>; }), t, t, t);
    case Opcode::Rem:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::RemIF>; }), t, t, t);
    case Opcode::Abs:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::AbsIF>; }), t, t);
      return;
    case Opcode::Neg:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NegIF>; }), t, t);
      return;
    case Opcode::Min:
    case Opcode::Max: {
      if (ptx::typeKind(t) == ptx::TypeKind::Unsigned && in.has(ptx::Flag::relu)) return unsupported(in);
      bool mn = oc == Opcode::Min;
      if (in.has(ptx::Flag::relu)) {
        if (t != Type::s32) return unsupported(in);
        return bin(mn ? &h::binary<int32_t, MinReluF> : &h::binary<int32_t, MaxReluF>, t, t, t);
      }
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return mn ? &h::binary<T, h::MinF> : &h::binary<T, h::MaxF>;
                 }), t, t, t);
    }
    case Opcode::Popc:
    case Opcode::Clz: {
      Op* op = un(sizeOf(t) == 8 ? &h::popcClz<uint64_t> : &h::popcClz<uint32_t>, t, Type::u32);
      op->aux = oc == Opcode::Clz;
      return;
    }
    case Opcode::Bfind: {
      bool sh = in.has(ptx::Flag::shiftamt);
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = sh ? &h::bfind<int32_t, true> : &h::bfind<int32_t, false>; break;
        case Type::u32: hnd = sh ? &h::bfind<uint32_t, true> : &h::bfind<uint32_t, false>; break;
        case Type::s64: hnd = sh ? &h::bfind<int64_t, true> : &h::bfind<int64_t, false>; break;
        case Type::u64: hnd = sh ? &h::bfind<uint64_t, true> : &h::bfind<uint64_t, false>; break;
        default: return unsupported(in);
      }
      un(hnd, t, Type::u32);
      return;
    }
    case Opcode::Brev:
      un(sizeOf(t) == 8 ? &h::unary<uint64_t, h::BrevF> : &h::unary<uint32_t, h::BrevF>, t, t);
      return;
    case Opcode::Bfe: {
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = &h::bfe<int32_t>; break;
        case Type::u32: case Type::b32: hnd = &h::bfe<uint32_t>; break;
        case Type::s64: hnd = &h::bfe<int64_t>; break;
        case Type::u64: case Type::b64: hnd = &h::bfe<uint64_t>; break;
        default: return unsupported(in);
      }
      ter(hnd, t, Type::u32, Type::u32, t);
      return;
    }
    case Opcode::Bfi: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t), c = src(opnd(in, 3), Type::u32),
               e = src(opnd(in, 4), Type::u32);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(sizeOf(t) == 8 ? &h::bfi<uint64_t> : &h::bfi<uint32_t>);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      op.e = e;
      finish(d);
      return;
    }
    case Opcode::And: case Opcode::Or: case Opcode::Xor: {
      return bin(byBits(sizeOf(t), line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return oc == Opcode::And ? &h::binary<T, h::AndF> : oc == Opcode::Or ? &h::binary<T, h::OrF> : &h::binary<T, h::XorF>;
                 }), t, t, t);
    }
    case Opcode::Not:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NotF>; }), t, t);
      return;
    case Opcode::Cnot:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::CnotF>; }), t, t);
      return;
    case Opcode::Shl:
      return bin(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), true>; }), t, Type::u32, t);
    case Opcode::Shr: {
      Handler hnd = isSigned(t) ? byInt163264(t, line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; })
                                : byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; });
      return bin(hnd, t, Type::u32, t);
    }
    case Opcode::Lop3: {
      Op* op = ter(&ctl::lop3, Type::b32, Type::b32, Type::b32, Type::b32);
      const Operand& lut = opnd(in, 4);
      if (lut.kind != OperandKind::Imm) fail(line_, "lop3 needs an immediate lookup table");
      op->imm = lut.value & 0xff;
      return;
    }
    case Opcode::Shf: {
      bool left = fn_->hasMod(in, ptx::Mod::shf_l);
      bool clamp = in.has(ptx::Flag::clamp);
      Handler hnd = left ? (clamp ? &h::shf<true, true> : &h::shf<true, false>) : (clamp ? &h::shf<false, true> : &h::shf<false, false>);
      ter(hnd, Type::b32, Type::b32, Type::u32, Type::b32);
      return;
    }
    case Opcode::Prmt: {
      Op* op = ter(&ctl::prmt, Type::b32, Type::b32, Type::b32, Type::b32);
      uint32_t mode = 0;
      if (fn_->hasMod(in, ptx::Mod::f4e)) mode = 1;
      else if (fn_->hasMod(in, ptx::Mod::b4e)) mode = 2;
      else if (fn_->hasMod(in, ptx::Mod::rc8)) mode = 3;
      else if (fn_->hasMod(in, ptx::Mod::ecl)) mode = 4;
      else if (fn_->hasMod(in, ptx::Mod::ecr)) mode = 5;
      else if (fn_->hasMod(in, ptx::Mod::rc16)) mode = 6;
      op->aux = mode;
      return;
    }
    case Opcode::Dp4a: case Opcode::Dp2a: {
      Type ta = in.types[0], tb = in.numTypes > 1 ? in.types[1] : in.types[0];
      uint32_t aux = (isSigned(ta) ? 1 : 0) | (isSigned(tb) ? 2 : 0);
      if (oc == Opcode::Dp2a && in.mulMode == ptx::MulMode::hi) aux |= 4;
      Op* op = ter(oc == Opcode::Dp4a ? &ctl::dp4a : &ctl::dp2a, Type::b32, Type::b32, Type::b32, Type::b32);
      op->aux = aux;
      return;
    }
    case Opcode::Fns: {
      ter(&ctl::fns, Type::b32, Type::u32, Type::s32, Type::b32);
      return;
    }
    case Opcode::Bmsk: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::bmsk);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.aux = in.has(ptx::Flag::wrap) ? 1 : 0;
      finish(d);
      return;
    }
    case Opcode::Szext: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::szext);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.aux = (isSigned(t) ? 1 : 0) | (in.has(ptx::Flag::wrap) ? 2 : 0);
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

// add/min/max on .u16x2/.s16x2 (sm_90 SIMD integer forms).
void KernelLowerer::lowerPacked16(const Instruction& in) {
  bool s = in.type() == Type::s16x2;
  Handler hnd = nullptr;
  switch (in.opcode) {
    case Opcode::Add: hnd = s ? &h::packed16<0, true> : &h::packed16<0, false>; break;
    case Opcode::Min: hnd = s ? &h::packed16<1, true> : &h::packed16<1, false>; break;
    case Opcode::Max: hnd = s ? &h::packed16<2, true> : &h::packed16<2, false>; break;
    default: return unsupported(in);
  }
  uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::b32);
  Dst d = dst(opnd(in, 0), Type::b32);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  op.aux = in.has(ptx::Flag::relu) ? 1 : 0;
  finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec
