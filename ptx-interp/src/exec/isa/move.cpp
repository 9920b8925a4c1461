// Moves (OpClass Move): mov (registers, special registers, vector pack and unpack), cvta, isspacep.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace lowering {

void KernelLowerer::lowerMov(const Instruction& in) {
  Type t = in.type();
  const Operand& d0 = opnd(in, 0);
  const Operand& s0 = opnd(in, 1);
  unsigned size = sizeOf(t);
  if (d0.kind == OperandKind::Vector) {  // unpack
    unsigned n = unsigned(d0.value);
    unsigned part = size / n;
    uint32_t a = src(s0, t);
    uint32_t regs[4] = {0, 0, 0, 0};
    std::vector<Dst> dsts;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    for (unsigned k = 0; k < n; ++k) {
      const Operand& e = fn_->elems[d0.index + k];
      if (e.kind == OperandKind::Sink) continue;
      Dst d = dst(e, pt);
      regs[k] = d.off;
      dsts.push_back(d);
    }
    Handler hnd = nullptr;
    if (size == 8 && n == 2) hnd = &h::unpack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4) hnd = &h::unpack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2) hnd = &h::unpack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4) hnd = &h::unpack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2) hnd = &h::unpack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2) hnd = &h::unpack128;
    else return unsupported(in);
    Op& op = emit(hnd);
    op.a = a;
    op.d = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
    for (auto& d : dsts) finish(d);
    return;
  }
  if (s0.kind == OperandKind::Vector) {  // pack
    unsigned n = unsigned(s0.value);
    unsigned part = size / n;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    uint32_t regs[4] = {0, 0, 0, 0};
    for (unsigned k = 0; k < n; ++k) regs[k] = src(fn_->elems[s0.index + k], pt);
    Handler hnd = nullptr;
    if (size == 8 && n == 2) hnd = &h::pack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4) hnd = &h::pack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2) hnd = &h::pack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4) hnd = &h::pack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2) hnd = &h::pack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2) hnd = &h::pack128;
    else return unsupported(in);
    Dst d = dst(d0, t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
    finish(d);
    return;
  }
  if (s0.kind == OperandKind::Special && d0.kind == OperandKind::Reg) {
    auto sr = static_cast<ptx::SpecialReg>(s0.index);
    unsigned ss = ptx::specialRegSize(sr);
    if (ss == sizeOf(regType(d0.index))) {
      uint32_t component = ptx::specialRegHasComponents(sr) ? ptx::selComponent(s0.sel) : 0;
      Op& op = emit(ctl::sregHandler(sr, component));
      op.d = regOf(d0.index);
      op.aux = s0.index;
      op.e = component;
      op.f = ss;
      return;
    }
  }
  uint32_t a = src(s0, t);
  Dst d = dst(d0, t);
  Op& op = emit(size == 16 ? &h::mov<h::B128> : byBits(size, line_, [](auto x) -> Handler { return &h::mov<decltype(x)>; }));
  op.d = d.off;
  op.a = a;
  finish(d);
}

void KernelLowerer::lowerMove(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Mov: return lowerMov(in);
    case Opcode::Prmt: return lowerArith(in);
    case Opcode::Cvta: return lowerCvta(in);
    case Opcode::Isspacep: return lowerIsspacep(in);
    default: return unsupported(in);
  }
}

// cvta{.to}.space: global and generic addresses are the same; the other windows convert per lane.
void KernelLowerer::lowerCvta(const Instruction& in) {
  Type t = in.type();
  bool to = in.has(ptx::Flag::to);
  uint32_t space = 0;
  switch (in.space) {
    case ptx::Space::global: case ptx::Space::const_: space = 0; break;
    case ptx::Space::shared: case ptx::Space::shared_cta: case ptx::Space::shared_cluster: space = 1; break;
    case ptx::Space::local: space = 2; break;
    case ptx::Space::param: case ptx::Space::param_entry: space = fn_->isEntry ? 3 : 2; break;
    default: return unsupported(in);
  }
  unsigned size = sizeOf(t);
  if (space == 0) {  // global and generic addresses are the same
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(size == 8 ? &h::mov<uint64_t> : &h::mov<uint32_t>);
    op.d = d.off;
    op.a = a;
    finish(d);
    return;
  }
  if (to) {
    uint32_t a = src(opnd(in, 1), Type::u64);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(&ctl::cvtaFromGeneric);
    op.d = d.off;
    op.a = a;
    op.aux = space;
    op.f = size;
    finish(d);
  } else {
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), Type::u64);
    Op& op = emit(&ctl::cvtaToGeneric);
    op.d = d.off;
    op.a = a;
    op.aux = space;
    op.f = size;
    finish(d);
  }
  return;
}

void KernelLowerer::lowerIsspacep(const Instruction& in) {
  uint32_t space = 0;
  switch (in.space) {
    case ptx::Space::global: space = 0; break;
    case ptx::Space::shared: case ptx::Space::shared_cta: case ptx::Space::shared_cluster: space = 1; break;
    case ptx::Space::local: space = 2; break;
    case ptx::Space::param: case ptx::Space::param_entry: space = 3; break;
    case ptx::Space::const_: space = 0; break;
    default: return unsupported(in);
  }
  uint32_t a = src(opnd(in, 1), Type::u64);
  Dst d = dst(opnd(in, 0), Type::pred);
  Op& op = emit(&ctl::isspacep);
  op.d = d.off;
  op.a = a;
  op.aux = space;
  finish(d);
  return;
}

}  // namespace lowering

}  // namespace ptx::exec
