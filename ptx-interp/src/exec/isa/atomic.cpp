// Atomic instructions (OpClass Atomic): atom and red, scalar and vector forms.
#include "exec/lowerer.h"
#include "exec/memory.h"

namespace ptx::exec {

using mem::Space;
using ptx::Type;

namespace {

template <Space S, class A, class T> Handler atomOps(mem::AOp op) {
  using namespace mem;
  constexpr bool fp = std::is_floating_point_v<T>;
  switch (op) {
    case AAdd: return &atom<S, A, T, AAdd>;
    case AMin: return &atom<S, A, T, AMin>;
    case AMax: return &atom<S, A, T, AMax>;
    case AExch: return &atom<S, A, T, AExch>;
    case ACas: return &atom<S, A, T, ACas>;
    default: break;
  }
  if constexpr (!fp) {
    switch (op) {
      case AInc:
        if constexpr (std::is_unsigned_v<T> && sizeof(T) == 4) return &atom<S, A, T, AInc>;
        break;
      case ADec:
        if constexpr (std::is_unsigned_v<T> && sizeof(T) == 4) return &atom<S, A, T, ADec>;
        break;
      case AAnd: return &atom<S, A, T, AAnd>;
      case AOr: return &atom<S, A, T, AOr>;
      case AXor: return &atom<S, A, T, AXor>;
      default: break;
    }
  }
  return nullptr;
}

template <Space S, class A> Handler atomFor(Type t, mem::AOp op) {
  switch (t) {
    case Type::b32:
    case Type::u32: return atomOps<S, A, uint32_t>(op);
    case Type::s32: return atomOps<S, A, int32_t>(op);
    case Type::b64:
    case Type::u64: return atomOps<S, A, uint64_t>(op);
    case Type::s64: return atomOps<S, A, int64_t>(op);
    case Type::f32: return atomOps<S, A, float>(op);
    case Type::f64: return atomOps<S, A, double>(op);
    case Type::f16:
      return op == mem::AAdd   ? &mem::atom<S, A, uint16_t, mem::AAddF16>
             : op == mem::AMin ? &mem::atom<S, A, uint16_t, mem::AMinF16>
             : op == mem::AMax ? &mem::atom<S, A, uint16_t, mem::AMaxF16>
                               : nullptr;
    case Type::bf16:
      return op == mem::AAdd   ? &mem::atom<S, A, uint16_t, mem::AAddBF16>
             : op == mem::AMin ? &mem::atom<S, A, uint16_t, mem::AMinBF16>
             : op == mem::AMax ? &mem::atom<S, A, uint16_t, mem::AMaxBF16>
                               : nullptr;
    case Type::b16:
      return op == mem::ACas ? &mem::atom<S, A, uint16_t, mem::ACas> : nullptr;  // sm_70 atomicCAS on 16 bits
    case Type::f16x2: return op == mem::AAdd ? &mem::atom<S, A, uint32_t, mem::AAddF16x2> : nullptr;
    case Type::bf16x2: return op == mem::AAdd ? &mem::atom<S, A, uint32_t, mem::AAddBF16x2> : nullptr;
    case Type::b128:
      if (op == mem::AExch) return &mem::atom<S, A, mem::B128, mem::AExch>;
      if (op == mem::ACas) return &mem::atom<S, A, mem::B128, mem::ACas>;
      return nullptr;
    default: return nullptr;
  }
}

Handler atomHandler(Space space, unsigned addrSize, Type t, mem::AOp op) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global: return a32 ? nullptr : atomFor<Space::Global, uint64_t>(t, op);
    case Space::Shared: return a32 ? atomFor<Space::Shared, uint32_t>(t, op) : atomFor<Space::Shared, uint64_t>(t, op);
    case Space::Generic: return a32 ? nullptr : atomFor<Space::Generic, uint64_t>(t, op);
    default: return nullptr;
  }
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerAtomic(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Atom: return lowerAtom(in, false);
    case Opcode::Red: return lowerAtom(in, true);
    case Opcode::RedAsync: {
      // red.async [a], b, [mbar]: a reduction on shared::cluster memory that then completes its size in bytes on the
      // mbarrier (memory.cpp: st.async)
      Instruction red = in;
      red.opcode = Opcode::Red;
      red.numOperands = 2;
      lowerAtom(red, true);
      emitCompleteTx(address(in, opnd(in, 2)), literal(ptx::typeSize(in.type()), 4));
      return;
    }
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerAtom(const Instruction& in, bool isRed) {
  using mem::AOp;
  AOp aop;
  switch (in.redOp) {
    case ptx::RedOp::add: aop = mem::AAdd; break;
    case ptx::RedOp::min: aop = mem::AMin; break;
    case ptx::RedOp::max: aop = mem::AMax; break;
    case ptx::RedOp::inc: aop = mem::AInc; break;
    case ptx::RedOp::dec: aop = mem::ADec; break;
    case ptx::RedOp::and_: aop = mem::AAnd; break;
    case ptx::RedOp::or_: aop = mem::AOr; break;
    case ptx::RedOp::xor_: aop = mem::AXor; break;
    case ptx::RedOp::exch: aop = mem::AExch; break;
    case ptx::RedOp::cas: aop = mem::ACas; break;
    default: return unsupported(in, "atomic operation");
  }
  Type t = in.type();
  if (in.vec) return lowerVectorAtom(in, isRed, aop);
  unsigned k = 0;
  Dst d;
  bool hasDst = !isRed;
  if (hasDst) d = dst(opnd(in, k++), t);
  const Operand& addrOp = opnd(in, k++);
  Addr a = address(in, addrOp);
  clusterAccessAsGeneric(in, addrOp, a);
  if (a.space == mem::Param || a.space == mem::Local || a.space == mem::Frame)
    return unsupported(in, "atomics on this state space");
  uint32_t b = src(opnd(in, k++), t);
  uint32_t c = aop == mem::ACas ? src(opnd(in, k++), t) : kZeroReg;
  Handler hnd = atomHandler(a.space, a.baseSize, t, aop);
  if (!hnd) return unsupported(in, "atomic type");
  if (checkedAccesses()) emitAccessCheck(a, checking::CheckedAccess::Atomic, uint32_t(ptx::typeSize(t)));
  mem::AtomicOperands{a.base, a.imm, b, c, hasDst ? d.off : 0}.into(emit(hnd));
  if (hasDst) finish(d);
}

// atom/red.vN (sm_90: f16/bf16 x2..x8, f32 x2/x4 with add, min, max): each element is its own atomic operation
// (the ISA makes no promise for the vector as a whole), so it lowers to one scalar atomic per element.
void KernelLowerer::lowerVectorAtom(const Instruction& in, bool isRed, mem::AOp aop) {
  Type t = in.type();
  unsigned n = in.vec;
  unsigned k = 0;
  const Operand* dstVec = isRed ? nullptr : &opnd(in, k++);
  const Operand& addrOp = opnd(in, k++);
  Addr a = address(in, addrOp);
  clusterAccessAsGeneric(in, addrOp, a);
  const Operand& srcVec = opnd(in, k++);
  auto isVectorOf = [&](const Operand& o) { return o.kind == OperandKind::Vector && o.value == int64_t(n); };
  if ((dstVec && !isVectorOf(*dstVec)) || !isVectorOf(srcVec)) fail(line_, "vector operand expected");
  if (a.space == mem::Param || a.space == mem::Local || a.space == mem::Frame)
    return unsupported(in, "atomics on this state space");
  Handler hnd = atomHandler(a.space, a.baseSize, t, aop);
  if (!hnd) return unsupported(in, "vector atomic type");
  // The elements run one after another: a destination that is also a later element's source would be read after
  // it was written.
  if (dstVec)
    for (unsigned e = 0; e < n; ++e)
      for (unsigned later = e + 1; later < n; ++later) {
        const Operand& d = fn_->elems[dstVec->index + e];
        const Operand& b = fn_->elems[srcVec.index + later];
        if (d.kind == OperandKind::Reg && b.kind == OperandKind::Reg && d.index == b.index)
          return unsupported(in, "a vector atomic whose destination element is a later source element");
      }
  for (unsigned e = 0; e < n; ++e) {
    uint32_t b = src(fn_->elems[srcVec.index + e], t);
    Dst d;
    if (dstVec) d = dst(fn_->elems[dstVec->index + e], t);
    mem::AtomicOperands{a.base, a.imm + int64_t(e * ptx::typeSize(t)), b, kZeroReg, dstVec ? d.off : 0}.into(emit(hnd));
    if (dstVec) finish(d);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
