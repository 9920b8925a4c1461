// Memory instructions (OpClass Memory): ld, ldu, st and the hint instructions. Handler selection for every
// (space x address size x type x vector) form and the lowering of the addressing modes.
#include "exec/lowerer.h"
#include "exec/shared_linkage.h"
#include "exec/memory.h"
#include "exec/vector_ops.h"

namespace ptx::exec {

using mem::Space;
using ptx::Type;

namespace {

template <Space S, class A, int Indexed = mem::kAddrPlain> Handler ldFor(Type m, unsigned rs, unsigned n) {
  using namespace mem;
  if (n == 1) {
    switch (m) {
      case Type::b8:
      case Type::u8:
        switch (rs) {
          case 1: return ldScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return ldScalar<S, A, uint8_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, uint8_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint8_t, uint64_t, Indexed>();
        }
        break;
      case Type::s8:
        switch (rs) {
          case 1: return ldScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return ldScalar<S, A, int8_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, int8_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int8_t, uint64_t, Indexed>();
        }
        break;
      case Type::b16:
      case Type::u16:
      case Type::f16:
      case Type::bf16:
        switch (rs) {
          case 2: return ldScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, uint16_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint16_t, uint64_t, Indexed>();
        }
        break;
      case Type::s16:
        switch (rs) {
          case 2: return ldScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return ldScalar<S, A, int16_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int16_t, uint64_t, Indexed>();
        }
        break;
      case Type::b32:
      case Type::u32:
      case Type::f32:
      case Type::f16x2:
      case Type::bf16x2:
        switch (rs) {
          case 4: return ldScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, uint32_t, uint64_t, Indexed>();
        }
        break;
      case Type::s32:
        switch (rs) {
          case 4: return ldScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return ldScalar<S, A, int32_t, uint64_t, Indexed>();
        }
        break;
      case Type::b64:
      case Type::u64:
      case Type::s64:
      case Type::f64:
        if (rs == 8) return ldScalar<S, A, uint64_t, uint64_t, Indexed>();
        break;
      case Type::b128:
        if (rs == 16) return ldScalar<S, A, B128, B128, Indexed>();
        break;
      default: break;
    }
    return nullptr;
  }
  if constexpr (Indexed != mem::kAddrPlain) return nullptr;  // vectors have no indexed form
  unsigned ms = m == Type::pred ? 1 : ptx::typeSize(m);
  if (ms != rs) return nullptr;
  switch (ms) {
    case 1: return n == 2 ? ldVector<S, A, uint8_t, 2>() : n == 4 ? ldVector<S, A, uint8_t, 4>() : nullptr;
    case 2: return n == 2 ? ldVector<S, A, uint16_t, 2>() : n == 4 ? ldVector<S, A, uint16_t, 4>() : nullptr;
    case 4: return n == 2 ? ldVector<S, A, uint32_t, 2>() : n == 4 ? ldVector<S, A, uint32_t, 4>() : nullptr;
    case 8: return n == 2 ? ldVector<S, A, uint64_t, 2>() : nullptr;
  }
  return nullptr;
}

template <Space S, class A, int Indexed = mem::kAddrPlain> Handler stFor(Type m, unsigned rs, unsigned n) {
  using namespace mem;
  unsigned ms = ptx::typeSize(m);
  if (n == 1) {
    if (rs < ms) return nullptr;
    switch (ms) {
      case 1:
        switch (rs) {
          case 1: return stScalar<S, A, uint8_t, uint8_t, Indexed>();
          case 2: return stScalar<S, A, uint8_t, uint16_t, Indexed>();
          case 4: return stScalar<S, A, uint8_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint8_t, uint64_t, Indexed>();
        }
        break;
      case 2:
        switch (rs) {
          case 2: return stScalar<S, A, uint16_t, uint16_t, Indexed>();
          case 4: return stScalar<S, A, uint16_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint16_t, uint64_t, Indexed>();
        }
        break;
      case 4:
        switch (rs) {
          case 4: return stScalar<S, A, uint32_t, uint32_t, Indexed>();
          case 8: return stScalar<S, A, uint32_t, uint64_t, Indexed>();
        }
        break;
      case 8: return stScalar<S, A, uint64_t, uint64_t, Indexed>();
      case 16:
        if (rs == 16) return stScalar<S, A, B128, B128, Indexed>();
        break;
    }
    return nullptr;
  }
  if constexpr (Indexed != mem::kAddrPlain) return nullptr;  // vectors have no indexed form
  if (ms != rs) return nullptr;
  switch (ms) {
    case 1: return n == 2 ? stVector<S, A, uint8_t, 2>() : n == 4 ? stVector<S, A, uint8_t, 4>() : nullptr;
    case 2: return n == 2 ? stVector<S, A, uint16_t, 2>() : n == 4 ? stVector<S, A, uint16_t, 4>() : nullptr;
    case 4: return n == 2 ? stVector<S, A, uint32_t, 2>() : n == 4 ? stVector<S, A, uint32_t, 4>() : nullptr;
    case 8: return n == 2 ? stVector<S, A, uint64_t, 2>() : nullptr;
  }
  return nullptr;
}

template <Space S, class A> Handler ldMaskedFor(unsigned elemSize, unsigned n) {
  using namespace mem;
  switch (elemSize * 8 + n) {
    case 8 + 1: return &ldMasked<S, A, uint8_t, 1>;
    case 8 + 2: return &ldMasked<S, A, uint8_t, 2>;
    case 8 + 4: return &ldMasked<S, A, uint8_t, 4>;
    case 16 + 1: return &ldMasked<S, A, uint16_t, 1>;
    case 16 + 2: return &ldMasked<S, A, uint16_t, 2>;
    case 16 + 4: return &ldMasked<S, A, uint16_t, 4>;
    case 32 + 1: return &ldMasked<S, A, uint32_t, 1>;
    case 32 + 2: return &ldMasked<S, A, uint32_t, 2>;
    case 32 + 4: return &ldMasked<S, A, uint32_t, 4>;
    case 64 + 1: return &ldMasked<S, A, uint64_t, 1>;
    case 64 + 2: return &ldMasked<S, A, uint64_t, 2>;
    case 64 + 4: return &ldMasked<S, A, uint64_t, 4>;
    default: return nullptr;
  }
}

Handler ldMaskedHandler(Space space, unsigned addrSize, unsigned elemSize, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global:
      return a32 ? ldMaskedFor<Space::Global, uint32_t>(elemSize, n)
                 : ldMaskedFor<Space::Global, uint64_t>(elemSize, n);
    case Space::Shared:
      return a32 ? ldMaskedFor<Space::Shared, uint32_t>(elemSize, n)
                 : ldMaskedFor<Space::Shared, uint64_t>(elemSize, n);
    case Space::Local:
      return a32 ? ldMaskedFor<Space::Local, uint32_t>(elemSize, n) : ldMaskedFor<Space::Local, uint64_t>(elemSize, n);
    case Space::Frame: return ldMaskedFor<Space::Frame, uint64_t>(elemSize, n);
    case Space::Param:
      return a32 ? ldMaskedFor<Space::Param, uint32_t>(elemSize, n) : ldMaskedFor<Space::Param, uint64_t>(elemSize, n);
    case Space::Generic: return a32 ? nullptr : ldMaskedFor<Space::Generic, uint64_t>(elemSize, n);
  }
  return nullptr;
}

Handler ldIndexedHandler(Type m, unsigned rs) { return ldFor<Space::Global, uint64_t, mem::kAddrSum>(m, rs, 1); }
Handler stIndexedHandler(Type m, unsigned rs) { return stFor<Space::Global, uint64_t, mem::kAddrSum>(m, rs, 1); }
Handler ldScaledHandler(Type m, unsigned rs, bool signedIndex) {
  return signedIndex ? ldFor<Space::Global, uint64_t, mem::kAddrScaledSigned>(m, rs, 1)
                     : ldFor<Space::Global, uint64_t, mem::kAddrScaledUnsigned>(m, rs, 1);
}
Handler stScaledHandler(Type m, unsigned rs, bool signedIndex) {
  return signedIndex ? stFor<Space::Global, uint64_t, mem::kAddrScaledSigned>(m, rs, 1)
                     : stFor<Space::Global, uint64_t, mem::kAddrScaledUnsigned>(m, rs, 1);
}

Handler ldParamHandler(Type m, unsigned rs) {
  using namespace mem;
  unsigned ms = ptx::typeSize(m);
  bool sgn = ptx::typeKind(m) == ptx::TypeKind::Signed;
  switch (ms) {
    case 1:
      switch (rs) {
        case 1: return &ldParamUniform<uint8_t, uint8_t>;
        case 2: return sgn ? &ldParamUniform<int8_t, uint16_t> : &ldParamUniform<uint8_t, uint16_t>;
        case 4: return sgn ? &ldParamUniform<int8_t, uint32_t> : &ldParamUniform<uint8_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int8_t, uint64_t> : &ldParamUniform<uint8_t, uint64_t>;
      }
      break;
    case 2:
      switch (rs) {
        case 2: return &ldParamUniform<uint16_t, uint16_t>;
        case 4: return sgn ? &ldParamUniform<int16_t, uint32_t> : &ldParamUniform<uint16_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int16_t, uint64_t> : &ldParamUniform<uint16_t, uint64_t>;
      }
      break;
    case 4:
      switch (rs) {
        case 4: return &ldParamUniform<uint32_t, uint32_t>;
        case 8: return sgn ? &ldParamUniform<int32_t, uint64_t> : &ldParamUniform<uint32_t, uint64_t>;
      }
      break;
    case 8:
      if (rs == 8) return &ldParamUniform<uint64_t, uint64_t>;
      break;
    case 16:
      if (rs == 16) return &ldParamUniform<B128, B128>;
      break;
  }
  return nullptr;
}

}  // namespace

Handler ldHandler(Space space, unsigned addrSize, Type m, unsigned rs, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global:
      return a32 ? ldFor<Space::Global, uint32_t>(m, rs, n) : ldFor<Space::Global, uint64_t>(m, rs, n);
    case Space::Shared:
      return a32 ? ldFor<Space::Shared, uint32_t>(m, rs, n) : ldFor<Space::Shared, uint64_t>(m, rs, n);
    case Space::Local: return a32 ? ldFor<Space::Local, uint32_t>(m, rs, n) : ldFor<Space::Local, uint64_t>(m, rs, n);
    case Space::Frame: return ldFor<Space::Frame, uint64_t>(m, rs, n);
    case Space::Param: return a32 ? ldFor<Space::Param, uint32_t>(m, rs, n) : ldFor<Space::Param, uint64_t>(m, rs, n);
    case Space::Generic: return a32 ? nullptr : ldFor<Space::Generic, uint64_t>(m, rs, n);
  }
  return nullptr;
}

Handler stHandler(Space space, unsigned addrSize, Type m, unsigned rs, unsigned n) {
  bool a32 = addrSize == 4;
  switch (space) {
    case Space::Global:
      return a32 ? stFor<Space::Global, uint32_t>(m, rs, n) : stFor<Space::Global, uint64_t>(m, rs, n);
    case Space::Shared:
      return a32 ? stFor<Space::Shared, uint32_t>(m, rs, n) : stFor<Space::Shared, uint64_t>(m, rs, n);
    case Space::Local: return a32 ? stFor<Space::Local, uint32_t>(m, rs, n) : stFor<Space::Local, uint64_t>(m, rs, n);
    case Space::Frame: return stFor<Space::Frame, uint64_t>(m, rs, n);
    case Space::Param: return nullptr;
    case Space::Generic: return a32 ? nullptr : stFor<Space::Generic, uint64_t>(m, rs, n);
  }
  return nullptr;
}

namespace lowering {

void KernelLowerer::lowerMemory(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Ld:
    case Opcode::Ldu: return lowerLdSt(in, false);
    case Opcode::St: return lowerLdSt(in, true);
    case Opcode::StAsync: {
      // st.async [a], b, [mbar]: a store into (another CTA's) shared::cluster memory that then completes its size in
      // bytes on the mbarrier, in the same CTA as the destination. Stores run at issue here, as copies do.
      Instruction store = in;
      store.opcode = Opcode::St;
      store.numOperands = 2;
      lowerLdSt(store, true);
      const uint32_t bytes = ptx::typeSize(in.type()) * (in.vec ? in.vec : 1);
      emitCompleteTx(address(in, opnd(in, 2)), literal(bytes, 4));
      return;
    }
    // cache hints: nothing to do without caches
    case Opcode::Prefetch:
    case Opcode::Prefetchu:
    case Opcode::Applypriority:
    case Opcode::Discard: emit(&ctl::nop); return;
    default: return unsupported(in);
  }
}

KernelLowerer::Addr KernelLowerer::address(const Instruction& in, const Operand& o) {
  Addr a;
  if (o.kind != OperandKind::Address) fail(line_, "memory operand must be an address [..]");
  a.imm = o.value;
  mem::Space byInst;
  switch (in.space) {
    case ptx::Space::global:
    case ptx::Space::const_: byInst = mem::Global; break;
    case ptx::Space::shared:
    case ptx::Space::shared_cta:
    case ptx::Space::shared_cluster: byInst = mem::Shared; break;
    case ptx::Space::local: byInst = mem::Local; break;
    case ptx::Space::param:
    case ptx::Space::param_entry:
    case ptx::Space::param_func: byInst = mem::Param; break;
    case ptx::Space::none: byInst = mem::Generic; break;
    default: fail(line_, "unsupported state space");
  }
  a.space = byInst;
  if (o.symKind == SymKind::None) {
    if (o.flags & ptx::kAddrAbsolute) {
      a.base = kZeroReg;
      a.baseSize = 8;
    } else {
      a.base = regOf(o.index);
      a.baseSize = sizeOf(regType(o.index));
      if (a.baseSize != 4 && a.baseSize != 8) fail(line_, "address register must be 32 or 64 bits");
    }
    if (a.space == mem::Param && !fn_->isEntry) a.space = mem::Frame;  // a function's own params live in its frame
    return a;
  }
  a.base = kZeroReg;
  a.baseSize = 8;
  switch (o.symKind) {
    case SymKind::Global: {
      const ptx::Variable& v = mod_.globals[o.index];
      if (v.space == ptx::Space::shared) {
        a.space = mem::Shared;
        a.base = sharedAddress(0, 8);  // the CTA's rank bits
        a.imm += lowering::isDynamicShared(v) ? dynamicSharedBase_ : moduleSharedOffset_.at(o.index);
        return a;
      }
      uint32_t g = globalMap_[o.index];
      if (g == kNoIndex) fail(line_, "unsupported variable in address");
      a.base = globalAddress(g, 0, 8);
      a.space = byInst == mem::Generic ? mem::Generic : mem::Global;
      return a;
    }
    case SymKind::Local: {
      const ptx::Variable& v = fn_->locals[o.index];
      if (v.space == ptx::Space::shared) {
        a.space = mem::Shared;
        a.base = sharedAddress(0, 8);
        a.imm += lowering::isDynamicShared(v) ? dynamicSharedBase_ : fi_->localOffset[o.index];
        return a;
      }
      a.space = mem::Frame;
      a.imm += fi_->localOffset[o.index];
      return a;
    }
    case SymKind::Param:
      if (fn_->isEntry) {
        a.space = mem::Param;
        a.paramUniform = true;
        a.imm += info_->params.at(o.index).offset;
      } else {
        a.space = mem::Frame;
        a.imm += fi_->paramOffset.at(o.index);
      }
      return a;
    case SymKind::Return:
      a.space = mem::Frame;
      a.imm += fi_->returnOffset.at(o.index);
      return a;
    default: fail(line_, "unsupported address operand");
  }
}

void KernelLowerer::emitAccessCheck(const Addr& a, checking::CheckedAccess::Kind kind, uint32_t bytes, bool strong) {
  uint32_t kinds = checkedAccesses();
  bool wanted = a.space == mem::Generic || (a.space == mem::Shared && (kinds & kCheckSharedHazards)) ||
                (a.space == mem::Global && (kinds & kCheckGlobalAccesses));
  if (!wanted) return;
  checking::CheckedAccess{a.base, a.baseSize == 4, a.imm, bytes, a.space, kind, strong}.into(emit(&checking::access));
}

static uint32_t accessBytesMask(unsigned bytes) { return bytes >= 32 ? kNoIndex : (1u << bytes) - 1; }

// The mask of a `.pragma "used_bytes_mask N"` right before the current instruction, or kNoIndex (no pragma, or all
// 32 bytes used: then the plain load is the same).
uint32_t KernelLowerer::usedBytesMask() const {
  for (const ptx::BodyPragma& pr : fn_->bodyPragmas) {
    uint32_t mask = 0;
    bool malformed = false;
    if (pr.position == curInst_ && ptx::usedBytesMaskPragma(mod_.str(pr.text), mask, malformed) && !malformed &&
        mask != kNoIndex)
      return mask;
  }
  return kNoIndex;
}

// A 256-bit access (PTX ISA 8.8: .v8 of 32-bit elements, .v4 of 64-bit ones, sm_100 and later; XLA writes them for
// compute capability 12) runs as its two 128-bit halves: each element is still read or written once, and a vector
// access promises no atomicity beyond its elements. The bounds check covers all 32 bytes; a used_bytes_mask pragma
// applies to each half's bytes (a half with no used byte is not read).
void KernelLowerer::lowerWideLdSt(const Instruction& in, bool isStore, Addr a) {
  const Type t = in.type();
  const unsigned n = in.vec, ms = ptx::typeSize(t);
  if (n * ms != 32) return unsupported(in, "a vector wider than 256 bits");
  if (a.paramUniform) return unsupported(in, "a 256-bit parameter load");
  uint32_t regs[8] = {};
  std::vector<std::pair<uint32_t, Dst>> pendingDst;
  vectorAccessRegs(in, opnd(in, isStore ? 1 : 0), n, isStore, regs, pendingDst);
  if (checkedAccesses()) {
    const bool strong = in.sem != ptx::Sem::none && in.sem != ptx::Sem::weak;
    emitAccessCheck(a, isStore ? checking::CheckedAccess::Write : checking::CheckedAccess::Read, 32, strong);
  }
  const unsigned half = n / 2;
  const uint32_t used = isStore ? kNoIndex : usedBytesMask();
  for (unsigned h = 0; h < 2; ++h) {
    Addr part = a;
    part.imm += 16 * h;
    const uint32_t* r = regs + h * half;
    const uint32_t partUsed = used == kNoIndex ? 0xffffu : (used >> (16 * h)) & 0xffffu;
    if (partUsed == 0) continue;
    if (partUsed != 0xffffu) {
      Handler hnd = ldMaskedHandler(a.space, a.baseSize, ms, half);
      if (!hnd) return unsupported(in, "operand types of a used_bytes_mask load");
      mem::MaskedLoad{part.base, part.imm, {r[0], r[1], r[2], r[3]}, partUsed}.into(emit(hnd));
      continue;
    }
    Handler hnd = isStore ? stHandler(a.space, a.baseSize, t, ms, half) : ldHandler(a.space, a.baseSize, t, ms, half);
    if (!hnd) return unsupported(in, "operand types / state space combination");
    const uint32_t layoutTag = a.space == mem::Shared ? rewrites_[curInst_].sharedLayout : 0;
    mem::Access{part.base, part.imm, {r[0], r[1], r[2], r[3]}, layoutTag}.into(emit(hnd));
  }
  for (auto& [k, d] : pendingDst) finish(d);
}

void KernelLowerer::vectorAccessRegs(const Instruction& in, const Operand& valOp, unsigned n, bool isStore,
                                     uint32_t* regs, std::vector<std::pair<uint32_t, Dst>>& pending) {
  if (valOp.kind != OperandKind::Vector || valOp.value != int64_t(n)) fail(line_, "vector operand expected");
  for (unsigned k = 0; k < n; ++k) {
    const Operand& e = fn_->elems[valOp.index + k];
    if (isStore) {
      regs[k] = src(e, in.type());
    } else {
      Dst d = dst(e, in.type());
      regs[k] = d.off;
      if (d.convert) pending.push_back({k, d});
    }
  }
}

void KernelLowerer::lowerLdSt(const Instruction& in, bool isStore) {
  Type t = in.type();
  if (t == Type::b128 && in.vec) return unsupported(in, "vectors of 128-bit elements");
  const Operand& addrOp = opnd(in, isStore ? 0 : 1);
  const Operand& valOp = opnd(in, isStore ? 1 : 0);
  Addr a = address(in, addrOp);
  clusterAccessAsGeneric(in, addrOp, a);
  unsigned n = in.vec ? in.vec : 1;
  // `_` among a stored vector's values (LLVM's undefined elements: XLA stores six values with st.global.v8.b32):
  // those elements are not written, as ptxas masks them out of the 256-bit store (sm_100a SASS of {six values, _,
  // _}: STG.E.ENL2.256 with the element mask 0x3f; ptxas refuses `_` in a v4 store, sm_90).
  if (isStore && in.vec && valOp.kind == OperandKind::Vector) {
    bool sink = false;
    for (unsigned k = 0; k < n; ++k) sink |= fn_->elems[valOp.index + k].kind == OperandKind::Sink;
    if (sink) {
      const unsigned ms = ptx::typeSize(t);
      const bool strong = in.sem != ptx::Sem::none && in.sem != ptx::Sem::weak;
      for (unsigned k = 0; k < n; ++k) {
        const Operand& e = fn_->elems[valOp.index + k];
        if (e.kind == OperandKind::Sink) continue;
        Addr part = a;
        part.imm += k * ms;
        if (checkedAccesses() && !a.paramUniform) emitAccessCheck(part, checking::CheckedAccess::Write, ms, strong);
        const uint32_t value = src(e, t);
        Handler hnd = stHandler(a.space, a.baseSize, t, ms, 1);
        if (!hnd) return unsupported(in, "operand types / state space combination");
        mem::Access{part.base, part.imm, {value, 0, 0, 0}, 0}.into(emit(hnd));
      }
      return;
    }
  }
  if (n > 4 || (n == 4 && ptx::typeSize(t) == 8)) return lowerWideLdSt(in, isStore, a);
  uint32_t regs[4] = {0, 0, 0, 0};
  unsigned regSize = 0;
  std::vector<std::pair<uint32_t, Dst>> pendingDst;
  unsigned ms = ptx::typeSize(t);
  if (checkedAccesses() && !a.paramUniform) {
    const bool strong = in.sem != ptx::Sem::none && in.sem != ptx::Sem::weak;
    emitAccessCheck(a, isStore ? checking::CheckedAccess::Write : checking::CheckedAccess::Read, ms * n, strong);
  }
  if (n == 1) {
    if (isStore) {
      if (valOp.kind == OperandKind::Reg) {
        regs[0] = regOf(valOp.index);
        regSize = sizeOf(regType(valOp.index));
        if (regSize < ms) regs[0] = src(valOp, t), regSize = ms;
      } else {
        regs[0] = src(valOp, t);
        regSize = ms;
      }
    } else {
      if (valOp.kind == OperandKind::Reg && sizeOf(regType(valOp.index)) >= ms) {
        regs[0] = regOf(valOp.index);
        regSize = sizeOf(regType(valOp.index));
      } else {
        Dst d = dst(valOp, t);
        regs[0] = d.off;
        regSize = ms;
        pendingDst.push_back({0, d});
      }
    }
  } else {
    vectorAccessRegs(in, valOp, n, isStore, regs, pendingDst);
    regSize = ms;
  }
  if (!isStore && a.paramUniform) {
    Handler hnd = ldParamHandler(t, regSize);
    if (!hnd) return unsupported(in, "operand types");
    mem::ParamLoad{a.imm, {regs[0], regs[1], regs[2], regs[3]}, n}.into(emit(hnd));
    if (n > 1 && regSize != ms) fail(line_, "vector parameter load into wider registers");
  } else if (uint32_t used = isStore ? kNoIndex : usedBytesMask();
             used != kNoIndex && regSize == ms && (used & accessBytesMask(ms * n)) != accessBytesMask(ms * n)) {
    Handler hnd = ldMaskedHandler(a.space, a.baseSize, ms, n);
    if (!hnd) return unsupported(in, "operand types of a used_bytes_mask load");
    mem::MaskedLoad{a.base, a.imm, {regs[0], regs[1], regs[2], regs[3]}, used}.into(emit(hnd));
  } else {
    uint32_t folded = rewrites_[curInst_].foldedAdd;
    Handler hnd = nullptr;
    if (folded != kNoIndex && rewrites_[curInst_].foldedMul != kNoIndex) {
      const Instruction& add = fn_->instructions[folded];
      const Instruction& mul = fn_->instructions[rewrites_[curInst_].foldedMul];
      const Operand& x = fn_->operands[add.firstOperand + 1];
      const Operand& y = fn_->operands[add.firstOperand + 2];
      const Operand& base = launchConstRegs_.count(x.index) ? x : y;
      bool signedIndex = mul.type() == Type::s32;
      hnd = isStore ? stScaledHandler(t, regSize, signedIndex) : ldScaledHandler(t, regSize, signedIndex);
      if (hnd) {
        const uint32_t index = regOf(fn_->operands[mul.firstOperand + 1].index);
        const uint32_t shift = uint32_t(std::countr_zero(uint64_t(fn_->operands[mul.firstOperand + 2].value)));
        mem::FusedAccess{regOf(base.index), index, shift, a.base, a.imm, regs[0]}.into(emit(hnd));
        for (auto& [k, d] : pendingDst) finish(d);
        return;
      }
      // no fused form for these types: the product after all (the index still holds its value here, and only
      // folded adds read the product), then the add and the access as below
      lowerBody(mul);
    }
    if (folded != kNoIndex) {
      hnd = isStore ? stIndexedHandler(t, regSize) : ldIndexedHandler(t, regSize);
      if (hnd) {
        const Instruction& add = fn_->instructions[folded];
        const uint32_t base = regOf(fn_->operands[add.firstOperand + 1].index);
        const uint32_t index = regOf(fn_->operands[add.firstOperand + 2].index);
        mem::FusedAccess{base, index, 0, a.base, a.imm, regs[0]}.into(emit(hnd));
        for (auto& [k, d] : pendingDst) finish(d);
        return;
      }
      lowerBody(fn_->instructions[folded]);  // no fused handler for these types: the add after all
    }
    hnd = isStore ? stHandler(a.space, a.baseSize, t, regSize, n) : ldHandler(a.space, a.baseSize, t, regSize, n);
    if (!hnd) return unsupported(in, "operand types / state space combination");
    const uint32_t layoutTag = a.space == mem::Shared ? rewrites_[curInst_].sharedLayout : 0;
    mem::Access{a.base, a.imm, {regs[0], regs[1], regs[2], regs[3]}, layoutTag}.into(emit(hnd));
  }
  for (auto& [k, d] : pendingDst) finish(d);
}

}  // namespace lowering

namespace mem {

namespace {
template <class A> Handler fmaSharedChainFor(bool oneBase) {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx) return oneBase ? &fmaSharedChainOneBaseAvx<A> : &fmaSharedChainAvx<A>;
#endif
  (void)oneBase;
  return &fmaSharedChain<A>;
}
}  // namespace

Handler fmaSharedChainHandler(unsigned baseSize, bool oneBase) {
  return baseSize == 4 ? fmaSharedChainFor<uint32_t>(oneBase) : fmaSharedChainFor<uint64_t>(oneBase);
}

bool isFusedWithFallback(Handler h) {
  for (unsigned baseSize : {4u, 8u})
    for (bool variant : {false, true})
      if (h == sharedAddStepHandler(baseSize, variant) || h == fmaSharedChainHandler(baseSize, variant)) return true;
  return false;
}

}  // namespace mem

// The vector prefix's ops of this class (exec/vector_ops.h): 4- and 8-byte global loads and stores through a 64-bit
// address, in each of its forms (plain, the fused add's sum, the fused mul.wide's scaled index); the parameter is
// the form (AddrMode) with the bytes from bit 8.
void addMemoryVectorOps(std::vector<CuemuVectorOp>& rows) {
  using namespace mem;
  const auto both = [&](auto element, auto mode) {
    using M = decltype(element);
    constexpr int Ix = decltype(mode)::value;
    const uint32_t parameter = uint32_t(Ix) | uint32_t(sizeof(M)) << 8;
    rows.push_back(
        {reinterpret_cast<const void*>(ldScalar<Global, uint64_t, M, M, Ix>()), kCuemuVectorLoadGlobal, parameter});
    rows.push_back(
        {reinterpret_cast<const void*>(stScalar<Global, uint64_t, M, M, Ix>()), kCuemuVectorStoreGlobal, parameter});
  };
  const auto modes = [&](auto element) {
    both(element, std::integral_constant<int, kAddrPlain>{});
    both(element, std::integral_constant<int, kAddrSum>{});
    both(element, std::integral_constant<int, kAddrScaledSigned>{});
    both(element, std::integral_constant<int, kAddrScaledUnsigned>{});
  };
  modes(uint32_t{});
  modes(uint64_t{});
}

}  // namespace ptx::exec

#if defined(PTX_NATIVE_BITCODE)
// For the native tier's vector prefix (native/jit/vector_prefix.cpp), in bitcode only: whether warp w's global
// access of [lo, end) takes the handlers' whole-warp path, which checks the span as this does (consecutiveGlobal).
extern "C" bool cuemuVectorSpanValid(const ptx::exec::Warp* w, uint64_t lo, uint64_t end) {
  return ptx::exec::mem::spanValid(*w->cta->job->lp.memory, lo, end);
}
#endif
