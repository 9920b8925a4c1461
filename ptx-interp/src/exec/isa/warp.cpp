// Warp collectives (OpClass Warp): shfl, vote, match, redux, activemask, elect.
#include "exec/checking.h"
#include "exec/control.h"
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;

// Typed operand views of the warp collectives' ops: what each op's fields mean, named; the one place that packs
// them at lowering (into) and reads them in the handler (of). A register offset of 0 means "none".

// vote[.sync]: the lanes' predicate (negated or not) combined over each member group; the result is a predicate,
// or the u32 ballot.
struct VoteOperands {
  enum Mode : uint8_t { All = 0, Any = 1, Uni = 2, Ballot = 3 };
  Mode mode = All;
  uint32_t predicate = 0;
  bool negated = false;
  uint32_t members = 0;  // u32 membermask register (0: every executing lane is one group)
  uint32_t result = 0;

  static VoteOperands of(const Op& op) {
    VoteOperands v;
    v.mode = Mode(op.aux & 15);
    v.predicate = op.a;
    v.negated = (op.aux & 16) != 0;
    v.members = op.c;
    v.result = op.d;
    return v;
  }
  void into(Op& op) const {
    op.d = result;
    op.a = predicate;
    op.aux = uint32_t(mode) | (negated ? 16 : 0);
    op.c = members;
  }
};

// shfl.sync.mode.b32 d[|p], a, b, c, membermask.
struct ShuffleOperands {
  enum Mode : uint8_t { Up = 0, Down = 1, Butterfly = 2, Index = 3 };
  Mode mode = Up;
  uint32_t value = 0;    // a: the b32 register read from the source lane
  uint32_t lane = 0;     // b: lane offset, xor mask or index
  uint32_t clamp = 0;    // c: clamp and segment mask
  uint32_t members = 0;  // membermask register
  uint32_t result = 0;   // d
  uint32_t inRange = 0;  // p: predicate result (0: none)

  static ShuffleOperands of(const Op& op) {
    ShuffleOperands v;
    v.mode = Mode(op.aux);
    v.value = op.a;
    v.lane = op.b;
    v.clamp = op.c;
    v.members = op.e;
    v.result = op.d;
    v.inRange = op.f;
    return v;
  }
  void into(Op& op) const {
    op.d = result;
    op.f = inRange;
    op.a = value;
    op.b = lane;
    op.c = clamp;
    op.e = members;
    op.aux = mode;
  }
};

// match.any/all.sync.b32/b64 d[|p], a, membermask.
struct MatchOperands {
  bool all = false;       // match.all (else match.any)
  uint8_t size = 4;       // bytes of the compared value
  uint32_t value = 0;     // a
  uint32_t members = 0;   // membermask register (0: none)
  uint32_t result = 0;    // d: u32 mask
  uint32_t allEqual = 0;  // p: match.all's predicate (0: none)

  static MatchOperands of(const Op& op) {
    MatchOperands v;
    v.all = op.aux == 1;
    v.size = uint8_t(op.imm);
    v.value = op.a;
    v.members = op.b;
    v.result = op.d;
    v.allEqual = op.f;
    return v;
  }
  void into(Op& op) const {
    op.d = result;
    op.f = allEqual;
    op.a = value;
    op.imm = size;
    op.aux = all ? 1 : 0;
    op.b = members;
  }
};

// redux.sync.op.u32/s32 d, a, membermask.
struct ReduxOperands {
  enum Kind : uint8_t { Add = 0, Min = 1, Max = 2, And = 3, Or = 4, Xor = 5 };
  Kind kind = Add;
  bool isSigned = false;  // min/max compare as s32
  uint32_t value = 0;     // a
  uint32_t members = 0;   // membermask register (0: none)
  uint32_t result = 0;    // d

  static ReduxOperands of(const Op& op) {
    ReduxOperands v;
    v.kind = Kind(op.aux & 0xff);
    v.isSigned = ((op.aux >> 8) & 1) != 0;
    v.value = op.a;
    v.members = op.b;
    v.result = op.d;
    return v;
  }
  void into(Op& op) const {
    op.d = result;
    op.a = value;
    op.b = members;
    op.aux = uint32_t(kind) | (isSigned ? 256 : 0);
  }
};

// elect.sync d|p, membermask.
struct ElectOperands {
  uint32_t members = 0;   // a: membermask register
  uint32_t leader = 0;    // d: the leader's lane (0: none)
  uint32_t isLeader = 0;  // p (0: none)

  static ElectOperands of(const Op& op) {
    ElectOperands v;
    v.members = op.a;
    v.leader = op.d;
    v.isLeader = op.f;
    return v;
  }
  void into(Op& op) const {
    op.d = leader;
    op.f = isLeader;
    op.a = members;
  }
};

// The lanes a .sync collective runs over, for each active lane: its membermask among the active lanes. One
// instruction's lanes may name different groups (each lane of a cooperative-groups labeled partition names its
// own), so `fn(group, users)` runs once per distinct group, `users` being the active lanes that named it. A lane
// that a mask names but that executes the instruction with another mask takes no part: an H100 computes a ballot
// or a redux of lanes 0-15 naming all 32, beside lanes 16-31 naming themselves, over lanes 0-15 alone
// (tools/gpu-probe/results/synccheck19-h100-2026-11-27.txt, variants 8 and 9), so `group` is what both say.
// maskReg 0: no membermask operand, every active lane is in one group.
// Independent thread scheduling: a collective first gathers the set-aside lanes of the warp that its membermask
// (the first executing lane's; maskReg 0: the executing lanes) names (ctl::gatherMembers). nullptr: run it now.

template <class F> void forEachMemberGroup(Warp& w, uint32_t maskReg, F fn) {
  uint32_t m = w.exec;
  if (!maskReg) return fn(m, m);
  const uint32_t* mm = R<uint32_t>(w, maskReg);
  uint32_t left = m;
  while (left) {
    uint32_t group = mm[std::countr_zero(left)] & m;
    uint32_t users = 0;
    h::forActive(left, [&](int i) { users |= uint32_t((mm[i] & m) == group) << i; });
    fn(group & users, users);
    left &= ~users;
  }
}

PTX_LANES const Op* vote(Warp& w, const Op* op) {
  const VoteOperands v = VoteOperands::of(*op);
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = ctl::gatherMembers(w, op, v.members, w.exec)) return other;
  const uint32_t* mm = v.members ? R<uint32_t>(w, v.members) : nullptr;
  uint32_t pm = predMask(R<uint8_t>(w, v.predicate));
  if (v.negated) pm = ~pm;
  auto outcome = [&](uint32_t group) -> uint32_t {
    const uint32_t ballot = pm & group;
    switch (v.mode) {
      case VoteOperands::All: return ballot == group;
      case VoteOperands::Any: return ballot != 0;
      case VoteOperands::Uni: return ballot == 0 || ballot == group;
      default: return ballot;
    }
  };
  auto store = [&](auto value) {
    if (v.mode == VoteOperands::Ballot)
      h::store<uint32_t>(w, v.result, [&](int i) { return value(i); });
    else
      h::store<uint8_t>(w, v.result, [&](int i) { return uint8_t(value(i)); });
  };
  // an H100 stops a vote.sync by a thread outside its own membermask (synccheck19, variant 8)
  auto outside = [&](uint32_t lanes) {
    return raiseFault(w, op, std::countr_zero(lanes), FaultKind::IllegalInstruction, 0,
                      "vote.sync by a thread that its membermask leaves out");
  };
  if (!mm || h::oneMask(w.exec, mm)) {  // nearly always: one group, every executing lane naming the same lanes
    const uint32_t members = mm ? mm[std::countr_zero(w.exec | 0x80000000u)] : w.exec;
    if (uint32_t out = w.exec & ~members) return outside(out);
    const uint32_t x = outcome(members & w.exec);
    store([x](int) { return x; });
    return op + 1;
  }
  if (uint32_t out = h::lanesOutsideTheirMask(w.exec, mm)) return outside(out);
  alignas(64) uint32_t result[32] = {};
  forEachMemberGroup(w, v.members, [&](uint32_t group, uint32_t users) {
    const uint32_t x = outcome(group);
    h::forActive(users, [&](int i) { result[i] = x; });
  });
  store([&](int i) { return result[i]; });
  return op + 1;
}

const Op* activemask(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  h::store<uint32_t>(w, op->d, [&](int) { return m; });
  return op + 1;
}

// shfl.sync.mode.b32 d[|p], a, b, c, membermask (ShuffleOperands). The source lane and the predicate follow the PTX
// ISA's pseudo-code; what the ISA leaves undefined is what an H100 does
// (tools/gpu-probe/results/clients17-h100-2026-11-26.txt): a source lane that does not exist (a block smaller than the
// warp) or has exited gives 0 with the predicate still true; a lane that is alive but not executing gives its
// register's value; a lane executing it with another membermask gives 0 (synccheck19-h100-2026-11-27.txt, variant 7).
const Op* shfl(Warp& w, const Op* op) {
  const ShuffleOperands v = ShuffleOperands::of(*op);
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = ctl::gatherMembers(w, op, v.members, w.exec)) return other;
  const uint32_t* a = R<uint32_t>(w, v.value);
  const uint32_t* b = R<uint32_t>(w, v.lane);
  const uint32_t* c = R<uint32_t>(w, v.clamp);
  alignas(64) uint32_t src[32];
  std::memcpy(src, a, sizeof src);
  alignas(64) uint8_t valid[32];
  const uint32_t alive = w.alive;
  const uint32_t* mm = R<uint32_t>(w, v.members);
  const bool oneMask = h::oneMask(w.exec, mm);  // nearly always: every executing lane names the same lanes
  h::store<uint32_t>(w, v.result, [&](int i) -> uint32_t {
    uint32_t bval = b[i] & 31, cval = c[i];
    uint32_t clamp = cval & 31, segMask = (cval >> 8) & 31;
    uint32_t maxLane = (uint32_t(i) & segMask) | (clamp & ~segMask);
    uint32_t minLane = uint32_t(i) & segMask;
    uint32_t j = 0;
    bool pval = false;
    switch (v.mode) {
      case ShuffleOperands::Up:
        j = uint32_t(i) - bval;
        pval = int32_t(j) >= int32_t(maxLane);
        break;
      case ShuffleOperands::Down:
        j = uint32_t(i) + bval;
        pval = j <= maxLane;
        break;
      case ShuffleOperands::Butterfly:
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
    if (!oneMask && ((w.exec >> j) & 1) && mm[j] != mm[i]) return 0u;
    return ((alive >> j) & 1) ? src[j] : 0u;
  });
  if (v.inRange) h::store<uint8_t>(w, v.inRange, [&](int i) { return valid[i]; });
  return op + 1;
}

template <class T> void matchGroups(Warp& w, const MatchOperands& v, uint32_t* res, uint8_t* pred) {
  const T* a = R<T>(w, v.value);
  forEachMemberGroup(w, v.members, [&](uint32_t group, uint32_t users) {
    if (v.all) {  // all: the group if every member holds the same value, else 0
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
  const MatchOperands v = MatchOperands::of(*op);
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = ctl::gatherMembers(w, op, v.members, w.exec)) return other;
  if (v.size == 8)
    matchGroups<uint64_t>(w, v, res, pred);
  else
    matchGroups<uint32_t>(w, v, res, pred);
  if (v.all && v.allEqual) h::store<uint8_t>(w, v.allEqual, [&](int i) { return pred[i]; });
  h::store<uint32_t>(w, v.result, [&](int i) { return res[i]; });
  return op + 1;
}

const Op* reduxSync(Warp& w, const Op* op) {
  const ReduxOperands r = ReduxOperands::of(*op);
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = ctl::gatherMembers(w, op, r.members, w.exec)) return other;
  const uint32_t* a = R<uint32_t>(w, r.value);
  const bool sgn = r.isSigned;
  alignas(64) uint32_t result[32] = {};
  forEachMemberGroup(w, r.members, [&](uint32_t group, uint32_t users) {
    uint32_t acc = r.kind == ReduxOperands::And ? 0xffffffffu : 0;
    bool first = true;
    h::forActive(group, [&](int i) {
      uint32_t v = a[i];
      switch (r.kind) {
        case ReduxOperands::Add: acc += v; break;
        case ReduxOperands::Min:
          acc = first ? v : (sgn ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v));
          break;
        case ReduxOperands::Max:
          acc = first ? v : (sgn ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v));
          break;
        case ReduxOperands::And: acc &= v; break;
        case ReduxOperands::Or: acc |= v; break;
        default: acc ^= v; break;
      }
      first = false;
    });
    h::forActive(users, [&](int i) { result[i] = acc; });
  });
  h::store<uint32_t>(w, r.result, [&](int i) { return result[i]; });
  return op + 1;
}

const Op* electSync(Warp& w, const Op* op) {
  const ElectOperands v = ElectOperands::of(*op);
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = ctl::gatherMembers(w, op, v.members, w.exec)) return other;
  const uint32_t* mm = R<uint32_t>(w, v.members);
  int lane = std::countr_zero(w.exec | 0x80000000u);
  uint32_t members = mm[lane] & w.exec;
  int leader = members ? std::countr_zero(members) : -1;
  if (v.leader) h::store<uint32_t>(w, v.leader, [&](int) { return uint32_t(leader); });
  if (v.isLeader) h::store<uint8_t>(w, v.isLeader, [&](int i) { return uint8_t(i == leader); });
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::emitCollectiveCheck(WarpCollective collective, uint32_t members) {
  if (uint32_t checks = checking::collectiveChecks(collective))
    checking::CheckedCollective{checks, members, collective}.into(emit(&checking::collective));
}

void KernelLowerer::lowerWarp(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::ShflSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::u32), c = src(opnd(in, 3), Type::u32);
      uint32_t mask = in.numOperands > 4 ? src(opnd(in, 4), Type::u32) : literal(0xffffffffu, 4);
      emitCollectiveCheck(WarpCollective::Shuffle, mask);
      Op& op = emit(&shfl);
      ShuffleOperands v;
      if (d0.kind == OperandKind::RegPair) {
        v.result = regOf(d0.index);
        v.inRange = regOf(uint32_t(d0.value));
      } else {
        v.result = dst(d0, Type::b32).off;
      }
      v.value = a;
      v.lane = b;
      v.clamp = c;
      v.members = mask;
      switch (in.shfl) {
        case ptx::ShflMode::up: v.mode = ShuffleOperands::Up; break;
        case ptx::ShflMode::down: v.mode = ShuffleOperands::Down; break;
        case ptx::ShflMode::bfly: v.mode = ShuffleOperands::Butterfly; break;
        default: v.mode = ShuffleOperands::Index; break;
      }
      v.into(op);
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
      if (members) emitCollectiveCheck(WarpCollective::Vote, members);
      VoteOperands v;
      v.result = d;
      v.predicate = p;
      v.mode = in.vote == ptx::VoteMode::all   ? VoteOperands::All
               : in.vote == ptx::VoteMode::any ? VoteOperands::Any
               : in.vote == ptx::VoteMode::uni ? VoteOperands::Uni
                                               : VoteOperands::Ballot;
      v.negated = neg;
      v.members = members;
      v.into(emit(&vote));
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
      if (members) emitCollectiveCheck(WarpCollective::Match, members);
      Op& op = emit(&matchSync);
      MatchOperands v;
      if (d0.kind == OperandKind::RegPair) {
        v.result = regOf(d0.index);
        v.allEqual = regOf(uint32_t(d0.value));
      } else {
        v.result = dst(d0, Type::b32).off;
      }
      v.value = a;
      v.size = uint8_t(sizeOf(t));
      v.all = in.vote == ptx::VoteMode::all;
      v.members = members;
      v.into(op);
      return;
    }
    case Opcode::ReduxSync: {
      Type t = in.type();
      if (sizeOf(t) != 4 || isFloat(t)) return unsupported(in);
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      uint32_t members = in.numOperands > 2 ? src(opnd(in, 2), Type::u32) : 0;
      if (members) emitCollectiveCheck(WarpCollective::Redux, members);
      Op& op = emit(&reduxSync);
      ReduxOperands r;
      r.result = d.off;
      r.value = a;
      r.members = members;
      r.into(op);
      switch (in.redOp) {
        case ptx::RedOp::add: r.kind = ReduxOperands::Add; break;
        case ptx::RedOp::min: r.kind = ReduxOperands::Min; break;
        case ptx::RedOp::max: r.kind = ReduxOperands::Max; break;
        case ptx::RedOp::and_: r.kind = ReduxOperands::And; break;
        case ptx::RedOp::or_: r.kind = ReduxOperands::Or; break;
        case ptx::RedOp::xor_: r.kind = ReduxOperands::Xor; break;
        default: return unsupported(in);
      }
      r.isSigned = isSigned(t);
      r.into(op);
      finish(d);
      return;
    }
    case Opcode::ElectSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t mask = src(opnd(in, 1), Type::u32);
      emitCollectiveCheck(WarpCollective::Elect, mask);
      ElectOperands v;
      if (d0.kind == OperandKind::RegPair) {
        v.leader = d0.index == kNoIndex ? 0 : regOf(d0.index);
        v.isLeader = regOf(uint32_t(d0.value));
      } else if (d0.kind == OperandKind::Reg) {
        v.leader = regOf(d0.index);
      }
      v.members = mask;
      v.into(emit(&electSync));
      return;
    }
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
