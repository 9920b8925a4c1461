// Warp collectives (OpClass Warp): shfl, vote, match, redux, activemask, elect.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace lowering {

void KernelLowerer::lowerWarp(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::ShflSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::u32), c = src(opnd(in, 3), Type::u32);
      uint32_t mask = in.numOperands > 4 ? src(opnd(in, 4), Type::u32) : literal(0xffffffffu, 4);
      Op& op = emit(&ctl::shfl);
      if (d0.kind == OperandKind::RegPair) {
        op.d = regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else {
        op.d = dst(d0, Type::b32).off;
      }
      op.a = a;
      op.b = b;
      op.c = c;
      op.e = mask;
      switch (in.shfl) {
        case ptx::ShflMode::up: op.aux = 0; break;
        case ptx::ShflMode::down: op.aux = 1; break;
        case ptx::ShflMode::bfly: op.aux = 2; break;
        default: op.aux = 3; break;
      }
      return;
    }
    case Opcode::Shfl: return unsupported(in, "shfl without .sync (use shfl.sync)");
    case Opcode::Vote:
    case Opcode::VoteSync: {
      bool ballot = in.vote == ptx::VoteMode::ballot;
      const Operand& d0 = opnd(in, 0);
      bool neg;
      uint32_t p = srcPred(opnd(in, 1), neg);
      uint32_t d = ballot ? dst(d0, Type::b32).off : dst(d0, Type::pred).off;
      Op& op = emit(&ctl::vote);
      op.d = d;
      op.a = p;
      uint32_t kind = in.vote == ptx::VoteMode::all ? 0 : in.vote == ptx::VoteMode::any ? 1 : in.vote == ptx::VoteMode::uni ? 2 : 3;
      op.aux = kind | (neg ? 16 : 0);
      return;
    }
    case Opcode::Activemask: {
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::activemask);
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::MatchSync: {
      Type t = in.type();
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), t);
      Op& op = emit(&ctl::matchSync);
      if (d0.kind == OperandKind::RegPair) {
        op.d = regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else {
        op.d = dst(d0, Type::b32).off;
      }
      op.a = a;
      op.imm = sizeOf(t);
      op.aux = in.vote == ptx::VoteMode::all ? 1 : 0;
      return;
    }
    case Opcode::ReduxSync: {
      Type t = in.type();
      if (sizeOf(t) != 4 || isFloat(t)) return unsupported(in);
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(&ctl::reduxSync);
      op.d = d.off;
      op.a = a;
      uint32_t kind = 0;
      switch (in.redOp) {
        case ptx::RedOp::add: kind = 0; break;
        case ptx::RedOp::min: kind = 1; break;
        case ptx::RedOp::max: kind = 2; break;
        case ptx::RedOp::and_: kind = 3; break;
        case ptx::RedOp::or_: kind = 4; break;
        case ptx::RedOp::xor_: kind = 5; break;
        default: return unsupported(in);
      }
      op.aux = kind | (isSigned(t) ? 256 : 0);
      finish(d);
      return;
    }
    case Opcode::ElectSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t mask = src(opnd(in, 1), Type::u32);
      Op& op = emit(&ctl::electSync);
      if (d0.kind == OperandKind::RegPair) {
        op.d = d0.index == kNoIndex ? 0 : regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else if (d0.kind == OperandKind::Reg) {
        op.d = regOf(d0.index);
      }
      op.a = mask;
      return;
    }
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
