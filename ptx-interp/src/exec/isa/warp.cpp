// Warp collectives (OpClass Warp): shfl, vote, match, redux, activemask, elect.
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;

// The lanes a .sync collective runs over, for each active lane: its membermask among the active lanes. One
// instruction's lanes may name different groups (each lane of a cooperative-groups labeled partition names its
// own), so `fn(group, users)` runs once per distinct group, `users` being the active lanes that named it.
// maskReg 0: no membermask operand, every active lane is in one group.
template <class F> void forEachMemberGroup(Warp& w, uint32_t maskReg, F fn) {
  uint32_t m = w.exec;
  if (!maskReg) return fn(m, m);
  const uint32_t* mm = R<uint32_t>(w, maskReg);
  uint32_t left = m;
  while (left) {
    uint32_t group = mm[std::countr_zero(left)] & m;
    uint32_t users = 0;
    h::forActive(left, [&](int i) { users |= uint32_t((mm[i] & m) == group) << i; });
    fn(group, users);
    left &= ~users;
  }
}

// Op: aux: 0 all 1 any 2 uni 3 ballot; bit 4 negate pred; c = membermask (0: none)
PTX_LANES const Op* vote(Warp& w, const Op* op) {
  uint32_t pm = predMask(R<uint8_t>(w, op->a));
  if (op->aux & 16) pm = ~pm;
  alignas(64) uint32_t result[32] = {};
  forEachMemberGroup(w, op->c, [&](uint32_t group, uint32_t users) {
    uint32_t ballot = pm & group;
    uint32_t v = 0;
    switch (op->aux & 15) {
      case 0: v = ballot == group; break;
      case 1: v = ballot != 0; break;
      case 2: v = ballot == 0 || ballot == group; break;
      default: v = ballot; break;
    }
    h::forActive(users, [&](int i) { result[i] = v; });
  });
  if ((op->aux & 15) == 3)
    h::store<uint32_t>(w, op->d, [&](int i) { return result[i]; });
  else
    h::store<uint8_t>(w, op->d, [&](int i) { return uint8_t(result[i]); });
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

// Op: aux: 0 any, 1 all; imm: size 4/8; b = membermask (0: none)
template <class T> void matchGroups(Warp& w, const Op* op, uint32_t* res, uint8_t* pred) {
  const T* a = R<T>(w, op->a);
  forEachMemberGroup(w, op->b, [&](uint32_t group, uint32_t users) {
    if (op->aux == 1) {  // all: the group if every member holds the same value, else 0
      bool all = true;
      T first = a[std::countr_zero(group ? group : users)];
      h::forActive(group, [&](int j) { all = all && a[j] == first; });
      h::forActive(users, [&](int i) {
        res[i] = all ? group : 0;
        pred[i] = all;
      });
    } else {
      h::forActive(users, [&](int i) {
        uint32_t same = 0;
        h::forActive(group, [&](int j) { same |= uint32_t(a[j] == a[i]) << j; });
        res[i] = same;
      });
    }
  });
}

const Op* matchSync(Warp& w, const Op* op) {
  alignas(64) uint32_t res[32] = {};
  alignas(64) uint8_t pred[32] = {};
  if (op->imm == 8)
    matchGroups<uint64_t>(w, op, res, pred);
  else
    matchGroups<uint32_t>(w, op, res, pred);
  if (op->aux == 1 && op->f) h::store<uint8_t>(w, op->f, [&](int i) { return pred[i]; });
  h::store<uint32_t>(w, op->d, [&](int i) { return res[i]; });
  return op + 1;
}

// aux: 0 add 1 min 2 max 3 and 4 or 5 xor; bit 8: signed; b = membermask
const Op* reduxSync(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  bool sgn = (op->aux >> 8) & 1;
  uint32_t kind = op->aux & 0xff;
  alignas(64) uint32_t result[32] = {};
  forEachMemberGroup(w, op->b, [&](uint32_t group, uint32_t users) {
    uint32_t acc = kind == 3 ? 0xffffffffu : 0;
    bool first = true;
    h::forActive(group, [&](int i) {
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
    h::forActive(users, [&](int i) { result[i] = acc; });
  });
  h::store<uint32_t>(w, op->d, [&](int i) { return result[i]; });
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
      uint32_t members = in.opcode == Opcode::VoteSync && in.numOperands > 2 ? src(opnd(in, 2), Type::u32) : 0;
      Op& op = emit(&vote);
      op.d = d;
      op.a = p;
      uint32_t kind = in.vote == ptx::VoteMode::all   ? 0
                      : in.vote == ptx::VoteMode::any ? 1
                      : in.vote == ptx::VoteMode::uni ? 2
                                                      : 3;
      op.aux = kind | (neg ? 16 : 0);
      op.c = members;
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
      uint32_t members = in.numOperands > 2 ? src(opnd(in, 2), Type::u32) : 0;
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
      op.b = members;
      return;
    }
    case Opcode::ReduxSync: {
      Type t = in.type();
      if (sizeOf(t) != 4 || isFloat(t)) return unsupported(in);
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      uint32_t members = in.numOperands > 2 ? src(opnd(in, 2), Type::u32) : 0;
      Op& op = emit(&reduxSync);
      op.d = d.off;
      op.a = a;
      op.b = members;
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
