// Synchronisation (OpClass Sync): bar/barrier (sync, arrive, red), bar.warp.sync, membar and fence, mbarrier
// objects (their state: exec/async.h).
#include "exec/async.h"
#include "exec/control_ops.h"
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;
namespace mbar = async::mbar;

// mbarrier ops: the object's address in slot 0 (a + imm, exec/async.h), operand registers b and c, destination d.
constexpr uint32_t kMbarFlag = 1u << async::kOpBits;
// init: b = count (u32)
const Op* mbarrierInit(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, 0, i, 8, 8, true);
    if (!p) return nullptr;
    mbar::init(p, R<uint32_t>(w, op->b)[i]);
  }
  return op + 1;
}
// inval: the object is ordinary memory again (zeroed, as nothing may rely on its contents)
const Op* mbarrierInval(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, 0, i, 8, 8, true);
    if (!p) return nullptr;
    std::memset(p, 0, 8);
  }
  return op + 1;
}
// arrive / arrive_drop{.expect_tx}: b = arrival count (u32), c = expected bytes (u32, 0: none), d = token (u64);
// kMbarFlag: drop
const Op* mbarrierArrive(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, 0, i, 8, 8, true);
    if (!p) return nullptr;
    R<uint64_t>(w, op->d)[i] = mbar::arrive(p, R<uint32_t>(w, op->b)[i], R<uint32_t>(w, op->c)[i], op->aux & kMbarFlag);
  }
  return op + 1;
}
// expect_tx / complete_tx: b = bytes (u32); kMbarFlag: complete
const Op* mbarrierTx(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, 0, i, 8, 8, true);
    if (!p) return nullptr;
    uint32_t bytes = R<uint32_t>(w, op->b)[i];
    if (op->aux & kMbarFlag)
      mbar::completeTx(p, bytes);
    else
      mbar::expectTx(p, bytes);
  }
  return op + 1;
}
// test_wait / try_wait: d = predicate, whether the phase of token b (u64) or of parity b (u32, kParity) completed.
// try_wait may suspend the thread until the phase completes or a time limit passes: a warp whose wait is not over
// stops there (Waiting) with false, so the warps and CTAs it waits for run before its loop asks again.
constexpr uint32_t kParity = kMbarFlag << 1, kTry = kMbarFlag << 2;
const Op* mbarrierWait(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  bool incomplete = false;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, 0, i, 8, 8, false);
    if (!p) return nullptr;
    uint32_t waited = (op->aux & kParity) ? R<uint32_t>(w, op->b)[i] & 1 : mbar::phase(R<uint64_t>(w, op->b)[i]);
    bool done = mbar::phase(mbar::load(p)) != waited;
    R<uint8_t>(w, op->d)[i] = done;
    incomplete |= !done;
  }
  if (incomplete && (op->aux & kTry)) {
    w.state = WarpState::Waiting;
    w.pc = op + 1;
    return nullptr;
  }
  return op + 1;
}
// barrier.cluster.arrive / wait (.relaxed, .aligned: the same here). A warp arrives once per phase with all its
// threads that have not exited, as at bar.sync; a phase completes when every live thread of the cluster arrived
// (threads that exit later no longer count: the test repeats at each wait). A warp whose phase is not complete
// stops at the wait (Waiting) and asks again when it is resumed: the other CTAs of the cluster run in between
// (launch.cpp: runCluster).
bool completeClusterPhase(Cluster& cluster) {
  if (cluster.barrierArrived < cluster.liveThreads()) return false;
  cluster.barrierArrived = 0;
  ++cluster.barrierPhase;
  ++cluster.progress;
  return true;
}
const Op* clusterArrive(Warp& w, const Op* op) {
  Cluster& cluster = *w.cta->cluster;
  if (w.clusterArrived && w.clusterPhase == cluster.barrierPhase) return op + 1;  // the rest of a divergent warp
  w.clusterArrived = true;
  w.clusterPhase = cluster.barrierPhase;
  cluster.barrierArrived += laneCount(w.alive);
  completeClusterPhase(cluster);
  return op + 1;
}
const Op* clusterWait(Warp& w, const Op* op) {
  Cluster& cluster = *w.cta->cluster;
  if (w.clusterArrived && w.clusterPhase == cluster.barrierPhase && !completeClusterPhase(cluster)) {
    w.state = WarpState::Waiting;
    w.pc = op;
    return nullptr;
  }
  w.clusterArrived = false;
  return op + 1;
}

// pending_count: d (u32) = the pending arrivals a token (b, u64) recorded
const Op* mbarrierPendingCount(Warp& w, const Op* op) {
  const uint64_t* t = R<uint64_t>(w, op->b);
  uint32_t* d = R<uint32_t>(w, op->d);
  h::forActive(w.exec, [&](int i) { d[i] = mbar::pending(t[i]); });
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerMbarrier(const Instruction& in) {
  auto object = [&](Op& op, unsigned k) { setAddressSlot(op, 0, address(in, opnd(in, k))); };
  switch (in.opcode) {
    case Opcode::MbarrierInit: {
      uint32_t count = src(opnd(in, 1), Type::u32);
      Op& op = emit(&mbarrierInit);
      op.b = count;
      object(op, 0);
      return;
    }
    case Opcode::MbarrierInval: {
      Op& op = emit(&mbarrierInval);
      object(op, 0);
      return;
    }
    case Opcode::MbarrierArrive:
    case Opcode::MbarrierArriveDrop: {
      // state, [addr] {, count} | .expect_tx: state, [addr], bytes (one arrival)
      bool expectTx = in.has(ptx::Flag::expect_tx);
      uint32_t count = literal(1, 4), bytes = kZeroReg;
      if (in.numOperands > 2) (expectTx ? bytes : count) = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::u64);
      Op& op = emit(&mbarrierArrive);
      op.aux = in.opcode == Opcode::MbarrierArriveDrop ? kMbarFlag : 0;
      op.b = count;
      op.c = bytes;
      object(op, 1);
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::MbarrierExpectTx:
    case Opcode::MbarrierCompleteTx: {
      uint32_t bytes = src(opnd(in, 1), Type::u32);
      Op& op = emit(&mbarrierTx);
      op.aux = in.opcode == Opcode::MbarrierCompleteTx ? kMbarFlag : 0;
      op.b = bytes;
      object(op, 0);
      return;
    }
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry: {
      // waitComplete, [addr], state | phaseParity {, suspendTimeHint}: the hint only bounds how long to wait
      bool parity = in.has(ptx::Flag::parity);
      uint32_t waited = src(opnd(in, 2), parity ? Type::u32 : Type::u64);
      Dst d = dst(opnd(in, 0), Type::pred);
      Op& op = emit(&mbarrierWait);
      op.aux = (parity ? kParity : 0) | (in.opcode == Opcode::MbarrierTry ? kTry : 0);
      op.b = waited;
      object(op, 1);
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::MbarrierPendingCount: {
      uint32_t token = src(opnd(in, 1), Type::u64);
      Dst d = dst(opnd(in, 0), Type::u32);
      Op& op = emit(&mbarrierPendingCount);
      op.b = token;
      op.d = d.off;
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

void KernelLowerer::emitCompleteTx(const Addr& object, uint32_t bytesReg) {
  Op& op = emit(&mbarrierTx);
  op.aux = kMbarFlag;
  op.b = bytesReg;
  setAddressSlot(op, 0, object);
}

void KernelLowerer::lowerSync(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::BarSync:
    case Opcode::BarrierSync:
    case Opcode::BarArrive:
    case Opcode::BarrierArrive:
    case Opcode::BarRed:
    case Opcode::BarrierRed: return lowerBar(in);
    case Opcode::BarWarpSync:
      if (checkedAccesses() & kCheckSharedHazards) emit(&checking::warpSync);
      emit(&ctl::barWarpSync);
      return;
    case Opcode::Membar:
    case Opcode::Fence:
      if ((checkedAccesses() & kCheckFences) && (in.scope == ptx::Scope::gpu || in.scope == ptx::Scope::sys))
        emit(&checking::fence);
      emit(&ctl::fence);
      return;
    // Programmatic dependent launch: a grid runs only after the grids before it in its stream finished (a legal
    // schedule of the launch attribute), so wait finds its prerequisites complete and launch_dependents has no
    // one to release early.
    case Opcode::Griddepcontrol: emit(&ctl::nop); return;
    case Opcode::BarrierClusterArrive: emit(&clusterArrive); return;
    case Opcode::BarrierClusterWait: emit(&clusterWait); return;
    case Opcode::MbarrierInit:
    case Opcode::MbarrierInval:
    case Opcode::MbarrierArrive:
    case Opcode::MbarrierArriveDrop:
    case Opcode::MbarrierExpectTx:
    case Opcode::MbarrierCompleteTx:
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry:
    case Opcode::MbarrierPendingCount: return lowerMbarrier(in);
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerBar(const Instruction& in) {
  usesBarriers_ = true;
  using Bar = ctl::BarrierOperands;
  Bar bar;
  unsigned k = 0;
  switch (in.opcode) {
    case Opcode::BarSync:
    case Opcode::BarrierSync: bar.kind = Bar::Sync; break;
    case Opcode::BarArrive:
    case Opcode::BarrierArrive: bar.kind = Bar::Arrive; break;
    case Opcode::BarRed:
    case Opcode::BarrierRed:
      switch (in.redOp) {
        case ptx::RedOp::popc: bar.kind = Bar::RedPopc; break;
        case ptx::RedOp::and_: bar.kind = Bar::RedAnd; break;
        case ptx::RedOp::or_: bar.kind = Bar::RedOr; break;
        default: return unsupported(in);
      }
      {
        Type dt = bar.kind == Bar::RedPopc ? Type::u32 : Type::pred;
        const Operand& d0 = opnd(in, k++);
        if (d0.kind != OperandKind::Reg || sizeOf(regType(d0.index)) != sizeOf(dt)) fail(line_, "bar.red destination");
        bar.result = regOf(d0.index);
      }
      break;
    default: return unsupported(in);
  }
  bar.id = in.numOperands > k ? src(opnd(in, k++), Type::u32) : literal(0, 4);
  unsigned remaining = in.numOperands - k;
  if (bar.isReduction()) {
    if (remaining == 2) bar.count = src(opnd(in, k++), Type::u32);
    bar.predicate = srcPred(opnd(in, k++), bar.negated);
  } else if (remaining >= 1) {
    bar.count = src(opnd(in, k++), Type::u32);
  }
  if (uint32_t checks = checkedAccesses() & (kCheckSharedHazards | kCheckBarriers); checks && bar.kind != Bar::Arrive)
    emit(&checking::barrier).aux = checks;
  bar.into(emit(&ctl::barSync));
}

}  // namespace lowering

}  // namespace ptx::exec
