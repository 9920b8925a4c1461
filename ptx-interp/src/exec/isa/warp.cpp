// Warp collectives (OpClass Warp): shfl, vote, match, redux, activemask, elect.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;

// Op: aux: 0 all 1 any 2 uni 3 ballot; bit 4 negate pred; c = membermask
PTX_LANES const Op* vote(Warp& w, const Op* op) {
  uint32_t pm = predMask(R<uint8_t>(w, op->a));
  if (op->aux & 16) pm = ~pm;
  uint32_t m = w.exec;
  uint32_t ballot = pm & m;
  switch (op->aux & 15) {
    case 0: {
      uint8_t v = (ballot == m);
      h::store<uint8_t>(w, op->d, [&](int) { return v; });
      break;
    }
    case 1: {
      uint8_t v = ballot != 0;
      h::store<uint8_t>(w, op->d, [&](int) { return v; });
      break;
    }
    case 2: {
      uint8_t v = ballot == 0 || ballot == m;
      h::store<uint8_t>(w, op->d, [&](int) { return v; });
      break;
    }
    default: h::store<uint32_t>(w, op->d, [&](int) { return ballot; }); break;
  }
  return op + 1;
}

const Op* activemask(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  h::store<uint32_t>(w, op->d, [&](int) { return m; });
  return op + 1;
}

// shfl.sync.mode.b32 d[|p], a, b, c, membermask: aux = mode (0 up 1 down 2 bfly 3 idx); f = predicate out.
// The source lane and the predicate follow the PTX ISA's pseudo-code; what the ISA leaves undefined is what an
// H100 does (tools/gpu-probe/results/clients17-h100-2026-11-26.txt): a source lane that does not exist (a block
// smaller than the warp) or has exited gives 0 with the predicate still true; a lane that is alive but not
// executing gives its register's value.
// Op: aux: mode; a src, b lane, c clamp, e membermask, f pred out
const Op* shfl(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  alignas(64) uint32_t src[32];
  std::memcpy(src, a, sizeof src);
  alignas(64) uint8_t valid[32];
  const uint32_t alive = w.alive;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t bval = b[i] & 31, cval = c[i];
    uint32_t clamp = cval & 31, segMask = (cval >> 8) & 31;
    uint32_t maxLane = (uint32_t(i) & segMask) | (clamp & ~segMask);
    uint32_t minLane = uint32_t(i) & segMask;
    uint32_t j = 0;
    bool pval = false;
    switch (op->aux) {
      case 0:
        j = uint32_t(i) - bval;
        pval = int32_t(j) >= int32_t(maxLane);
        break;
      case 1:
        j = uint32_t(i) + bval;
        pval = j <= maxLane;
        break;
      case 2:
        j = uint32_t(i) ^ bval;
        pval = j <= maxLane;
        break;
      default:
        j = minLane | (bval & ~segMask);
        pval = j <= maxLane;
        break;
    }
    if (!pval) j = uint32_t(i);
    j &= 31;
    valid[i] = uint8_t(pval);
    return ((alive >> j) & 1) ? src[j] : 0u;
  });
  if (op->f) h::store<uint8_t>(w, op->f, [&](int i) { return valid[i]; });
  return op + 1;
}

// Op: aux: 0 any, 1 all; imm: size 4/8
const Op* matchSync(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  alignas(64) uint32_t res[32] = {};
  alignas(64) uint8_t pred[32] = {};
  if (op->imm == 8) {
    const uint64_t* a = R<uint64_t>(w, op->a);
    h::forActive(m, [&](int i) {
      uint32_t s = 0;
      h::forActive(m, [&](int j) { s |= uint32_t(a[j] == a[i]) << j; });
      res[i] = s;
    });
  } else {
    const uint32_t* a = R<uint32_t>(w, op->a);
    h::forActive(m, [&](int i) {
      uint32_t s = 0;
      h::forActive(m, [&](int j) { s |= uint32_t(a[j] == a[i]) << j; });
      res[i] = s;
    });
  }
  if (op->aux == 1) {  // all: mask if all equal, else 0
    bool all = true;
    h::forActive(m, [&](int i) { all = all && res[i] == m; });
    for (int i = 0; i < 32; ++i) {
      pred[i] = all;
      res[i] = all ? m : 0;
    }
    if (op->f) h::store<uint8_t>(w, op->f, [&](int i) { return pred[i]; });
  }
  h::store<uint32_t>(w, op->d, [&](int i) { return res[i]; });
  return op + 1;
}

// aux: 0 add 1 min 2 max 3 and 4 or 5 xor; bit 8: signed
// Op: aux: op kind
const Op* reduxSync(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  uint32_t m = w.exec;
  bool sgn = (op->aux >> 8) & 1;
  uint32_t kind = op->aux & 0xff;
  uint32_t acc = kind == 3 ? 0xffffffffu : 0;
  bool first = true;
  h::forActive(m, [&](int i) {
    uint32_t v = a[i];
    switch (kind) {
      case 0: acc += v; break;
      case 1: acc = first ? v : (sgn ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v)); break;
      case 2: acc = first ? v : (sgn ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v)); break;
      case 3: acc &= v; break;
      case 4: acc |= v; break;
      default: acc ^= v; break;
    }
    first = false;
  });
  h::store<uint32_t>(w, op->d, [&](int) { return acc; });
  return op + 1;
}

const Op* electSync(Warp& w, const Op* op) {
  const uint32_t* mm = R<uint32_t>(w, op->a);
  int lane = std::countr_zero(w.exec | 0x80000000u);
  uint32_t members = mm[lane] & w.exec;
  int leader = members ? std::countr_zero(members) : -1;
  if (op->d) h::store<uint32_t>(w, op->d, [&](int) { return uint32_t(leader); });
  if (op->f) h::store<uint8_t>(w, op->f, [&](int i) { return uint8_t(i == leader); });
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerWarp(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::ShflSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::u32), c = src(opnd(in, 3), Type::u32);
      uint32_t mask = in.numOperands > 4 ? src(opnd(in, 4), Type::u32) : literal(0xffffffffu, 4);
      Op& op = emit(&shfl);
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
      Op& op = emit(&vote);
      op.d = d;
      op.a = p;
      uint32_t kind = in.vote == ptx::VoteMode::all   ? 0
                      : in.vote == ptx::VoteMode::any ? 1
                      : in.vote == ptx::VoteMode::uni ? 2
                                                      : 3;
      op.aux = kind | (neg ? 16 : 0);
      return;
    }
    case Opcode::Activemask: {
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&activemask);
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::MatchSync: {
      Type t = in.type();
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), t);
      Op& op = emit(&matchSync);
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
      Op& op = emit(&reduxSync);
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
      Op& op = emit(&electSync);
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
