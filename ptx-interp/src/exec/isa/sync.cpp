// Synchronisation (OpClass Sync): bar/barrier (sync, arrive, red), bar.warp.sync, membar and fence.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace lowering {

void KernelLowerer::lowerSync(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::BarSync: case Opcode::BarrierSync: case Opcode::BarArrive: case Opcode::BarrierArrive:
    case Opcode::BarRed: case Opcode::BarrierRed: return lowerBar(in);
    case Opcode::BarWarpSync: emit(&ctl::barWarpSync); return;
    case Opcode::Membar: case Opcode::Fence: emit(&ctl::fence); return;
    // without a dependent launch in flight there is nothing to wait for or to release
    case Opcode::Griddepcontrol: emit(&ctl::nop); return;
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerBar(const Instruction& in) {
  usesBarriers_ = true;
  Op tmp;
  uint32_t kind = 0;
  unsigned k = 0;
  uint32_t dReg = 0;
  switch (in.opcode) {
    case Opcode::BarSync: case Opcode::BarrierSync: kind = 0; break;
    case Opcode::BarArrive: case Opcode::BarrierArrive: kind = 1; break;
    case Opcode::BarRed: case Opcode::BarrierRed:
      switch (in.redOp) {
        case ptx::RedOp::popc: kind = 2; break;
        case ptx::RedOp::and_: kind = 3; break;
        case ptx::RedOp::or_: kind = 4; break;
        default: return unsupported(in);
      }
      {
        Type dt = kind == 2 ? Type::u32 : Type::pred;
        const Operand& d0 = opnd(in, k++);
        if (d0.kind != OperandKind::Reg || sizeOf(regType(d0.index)) != sizeOf(dt)) fail(line_, "bar.red destination");
        dReg = regOf(d0.index);
      }
      break;
    default: return unsupported(in);
  }
  uint32_t id = in.numOperands > k ? src(opnd(in, k++), Type::u32) : literal(0, 4);
  uint32_t count = 0;
  uint32_t pred = 0;
  bool neg = false;
  unsigned remaining = in.numOperands - k;
  if (kind >= 2) {
    if (remaining == 2) count = src(opnd(in, k++), Type::u32);
    pred = srcPred(opnd(in, k++), neg);
  } else if (remaining >= 1) {
    count = src(opnd(in, k++), Type::u32);
  }
  Op& op = emit(&ctl::barSync);
  op.a = id;
  op.b = count;
  op.c = pred;
  op.d = dReg;
  op.aux = kind | (neg ? 256 : 0);
}

}  // namespace lowering

}  // namespace ptx::exec
