// Synchronisation (OpClass Sync): bar/barrier (sync, arrive, red), bar.warp.sync, membar and fence, mbarrier
// objects (their state: exec/async.h), cluster launch control (clusterlaunchcontrol).
#include "exec/async.h"
#include "exec/control_ops.h"
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;
namespace mbar = async::mbar;

// mbarrier ops (MbarrierOperands): the object's address in slot 0 (exec/async.h), up to two u32 or u64 operand
// registers and a destination.
constexpr uint32_t kMbarFlag = 1u << async::kOpBits, kParity = kMbarFlag << 1, kTry = kMbarFlag << 2;
struct MbarrierOperands {
  async::AddressSlot object;
  uint32_t operand = 0;   // init: count; arrive: arrivals; expect/complete_tx: bytes; waits: token or parity
  uint32_t txBytes = 0;   // arrive.expect_tx: expected bytes (the zero register: none)
  uint32_t result = 0;    // arrive: the state token (u64); waits: the predicate; pending_count: the count
  bool drop = false;      // arrive_drop (one bit with complete: no op has both)
  bool complete = false;  // complete_tx (else expect_tx)
  bool parity = false;    // waits on a phase parity instead of a token
  bool tryWait = false;   // try_wait: the warp stops while the phase is not complete

  static MbarrierOperands of(const Op& op) {
    const bool flag = (op.aux & kMbarFlag) != 0;
    return {async::AddressSlot::of(op, 0), op.b, op.c, op.d, flag, flag, (op.aux & kParity) != 0, (op.aux & kTry) != 0};
  }
  void into(Op& op) const {
    op.aux = (drop || complete ? kMbarFlag : 0) | (parity ? kParity : 0) | (tryWait ? kTry : 0);
    op.b = operand;
    op.c = txBytes;
    object.into(op, 0);
    op.d = result;  // after the slot: mbarrier ops have no slot 2
  }
};

// init: operand = count (u32)
const Op* mbarrierInit(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, v.object, i, 8, 8, true);
    if (!p) return nullptr;
    mbar::init(p, R<uint32_t>(w, v.operand)[i]);
  }
  return op + 1;
}
// inval: the object is ordinary memory again (zeroed, as nothing may rely on its contents)
const Op* mbarrierInval(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, v.object, i, 8, 8, true);
    if (!p) return nullptr;
    std::memset(p, 0, 8);
  }
  return op + 1;
}
// arrive / arrive_drop{.expect_tx}: operand = arrival count (u32), txBytes = expected bytes (u32), result = token
const Op* mbarrierArrive(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, v.object, i, 8, 8, true);
    if (!p) return nullptr;
    R<uint64_t>(w, v.result)[i] = mbar::arrive(p, R<uint32_t>(w, v.operand)[i], R<uint32_t>(w, v.txBytes)[i], v.drop);
  }
  return op + 1;
}
// expect_tx / complete_tx: operand = bytes (u32)
const Op* mbarrierTx(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, v.object, i, 8, 8, true);
    if (!p) return nullptr;
    uint32_t bytes = R<uint32_t>(w, v.operand)[i];
    if (v.complete)
      mbar::completeTx(p, bytes);
    else
      mbar::expectTx(p, bytes);
  }
  return op + 1;
}
// test_wait / try_wait: result = predicate, whether the phase of token `operand` (u64) or of parity `operand` (u32)
// completed. try_wait may suspend the thread until the phase completes or a time limit passes: a warp whose wait is
// not over stops there (Waiting) with false, so the warps and CTAs it waits for run before its loop asks again.
const Op* mbarrierWait(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  uint32_t m = w.exec;
  bool incomplete = false;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = async::lanePointer(w, op, v.object, i, 8, 8, false);
    if (!p) return nullptr;
    uint32_t waited = v.parity ? R<uint32_t>(w, v.operand)[i] & 1 : mbar::phase(R<uint64_t>(w, v.operand)[i]);
    bool done = mbar::phase(mbar::load(p)) != waited;
    R<uint8_t>(w, v.result)[i] = done;
    incomplete |= !done;
  }
  if (incomplete && v.tryWait) {
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

// pending_count: result (u32) = the pending arrivals a token (operand, u64) recorded; no object
const Op* mbarrierPendingCount(Warp& w, const Op* op) {
  const MbarrierOperands v = MbarrierOperands::of(*op);
  const uint64_t* t = R<uint64_t>(w, v.operand);
  uint32_t* d = R<uint32_t>(w, v.result);
  h::forActive(w.exec, [&](int i) { d[i] = mbar::pending(t[i]); });
  return op + 1;
}

// Cluster launch control (sm_100 and later): try_cancel asks to cancel the launch of a cluster that has not started,
// so that the asking CTA does its work instead (CUTLASS's dynamic persistent tile schedulers). Here a cancel takes
// the next cluster the grid would start (async::cancelUnstartedCluster), or fails when none is left; the cancelled
// cluster never runs. The 16-byte response (opaque to programs: cuemu's own encoding,
// words 0-2 the first CTA's %ctaid x, y, z and word 3 bit 0 whether the cancel succeeded) goes to [addr] and its
// bytes complete on the mbarrier, in the asking CTA or, with .multicast::cluster::all, in every CTA of its cluster
// at the same offsets. Done at once: a legal schedule of the asynchronous request.
struct CancelResponse {
  uint32_t ctaid[3];
  uint32_t canceled;
};
static_assert(sizeof(CancelResponse) == 16);

CancelResponse cancelNextCluster(Job& job) {
  uint64_t linear = 0;
  if (!async::cancelUnstartedCluster(job, linear)) return {{0, 0, 0}, 0};
  const Dim3& shape = job.clusterShape;
  const uint64_t gx = job.lp.grid.x / shape.x, gy = job.lp.grid.y / shape.y;
  return {
      {uint32_t(linear % gx * shape.x), uint32_t(linear / gx % gy * shape.y), uint32_t(linear / (gx * gy) * shape.z)},
      1};
}

// try_cancel: [response] (slot 0), [mbarrier] (slot 1); aux bit kMulticastAll: every CTA of the cluster
constexpr uint32_t kMulticastAll = 1u << async::kOpBits;
const Op* clusterTryCancel(Warp& w, const Op* op) {
  const async::AddressSlot response = async::AddressSlot::of(*op, 0), barrier = async::AddressSlot::of(*op, 1);
  const bool all = op->aux & kMulticastAll;
  uint32_t m = w.exec;
  while (m) {
    const int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* r = async::lanePointer(w, op, response, i, 16, 16, true);
    if (!r) return nullptr;
    uint8_t* b = async::lanePointer(w, op, barrier, i, 8, 8, true);
    if (!b) return nullptr;
    const CancelResponse answer = cancelNextCluster(*w.cta->job);
    if (!all) {
      std::memcpy(r, &answer, sizeof answer);
      mbar::completeTx(b, sizeof answer);
      continue;
    }
    const uint64_t responseOffset = uint64_t(r - w.cta->shared), barrierOffset = uint64_t(b - w.cta->shared);
    for (Cta* c : w.cta->cluster->ctas) {
      std::memcpy(c->shared + responseOffset, &answer, sizeof answer);
      mbar::completeTx(c->shared + barrierOffset, sizeof answer);
    }
  }
  return op + 1;
}

// query_cancel: a = the response (b128); .is_canceled: d = the predicate; .get_first_ctaid: d, e, f = x, y, z (a
// lone ::x, ::y or ::z: d, with b the component)
const Op* clusterIsCanceled(Warp& w, const Op* op) {
  const CancelResponse* r = reinterpret_cast<const CancelResponse*>(R<h::B128>(w, op->a));
  h::store<uint8_t>(w, op->d, [&](int i) { return uint8_t(r[i].canceled & 1); });
  return op + 1;
}
const Op* clusterFirstCtaid(Warp& w, const Op* op) {
  const CancelResponse* r = reinterpret_cast<const CancelResponse*>(R<h::B128>(w, op->a));
  h::store<uint32_t>(w, op->d, [&](int i) { return r[i].ctaid[op->b]; });
  if (op->b == 0 && op->aux) {  // the .v4 form
    h::store<uint32_t>(w, op->e, [&](int i) { return r[i].ctaid[1]; });
    h::store<uint32_t>(w, op->f, [&](int i) { return r[i].ctaid[2]; });
  }
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerMbarrier(const Instruction& in) {
  auto object = [&](unsigned k) { return asyncSlot(address(in, opnd(in, k)), 0); };
  MbarrierOperands v;
  switch (in.opcode) {
    case Opcode::MbarrierInit:
      v.operand = src(opnd(in, 1), Type::u32);
      v.object = object(0);
      v.into(emit(&mbarrierInit));
      return;
    case Opcode::MbarrierInval:
      v.object = object(0);
      v.into(emit(&mbarrierInval));
      return;
    case Opcode::MbarrierArrive:
    case Opcode::MbarrierArriveDrop: {
      // state, [addr] {, count} | .expect_tx: state, [addr], bytes (one arrival)
      bool expectTx = in.has(ptx::Flag::expect_tx);
      uint32_t count = literal(1, 4), bytes = kZeroReg;
      if (in.numOperands > 2) (expectTx ? bytes : count) = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::u64);
      v.drop = in.opcode == Opcode::MbarrierArriveDrop;
      v.operand = count;
      v.txBytes = bytes;
      v.object = object(1);
      v.result = d.off;
      v.into(emit(&mbarrierArrive));
      finish(d);
      return;
    }
    case Opcode::MbarrierExpectTx:
    case Opcode::MbarrierCompleteTx:
      v.operand = src(opnd(in, 1), Type::u32);
      v.complete = in.opcode == Opcode::MbarrierCompleteTx;
      v.object = object(0);
      v.into(emit(&mbarrierTx));
      return;
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry: {
      // waitComplete, [addr], state | phaseParity {, suspendTimeHint}: the hint only bounds how long to wait
      v.parity = in.has(ptx::Flag::parity);
      v.tryWait = in.opcode == Opcode::MbarrierTry;
      v.operand = src(opnd(in, 2), v.parity ? Type::u32 : Type::u64);
      Dst d = dst(opnd(in, 0), Type::pred);
      v.object = object(1);
      v.result = d.off;
      v.into(emit(&mbarrierWait));
      finish(d);
      return;
    }
    case Opcode::MbarrierPendingCount: {
      v.operand = src(opnd(in, 1), Type::u64);
      Dst d = dst(opnd(in, 0), Type::u32);
      v.result = d.off;
      v.into(emit(&mbarrierPendingCount));
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

void KernelLowerer::emitCompleteTx(const Addr& object, uint32_t bytesReg) {
  MbarrierOperands v;
  v.complete = true;
  v.operand = bytesReg;
  v.object = asyncSlot(object, 0);
  v.into(emit(&mbarrierTx));
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
      if (in.numOperands > 0) emitCollectiveCheck(WarpCollective::WarpSync, src(opnd(in, 0), Type::u32));
      if (checkedAccesses() & kCheckSharedHazards) emit(&checking::warpSync);
      // a: the membermask register (0: none), the lanes it gathers (ctl::gatherMembers)
      emit(&ctl::barWarpSync).a = in.numOperands > 0 ? src(opnd(in, 0), Type::u32) : 0;
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
    case Opcode::ClusterlaunchcontrolTryCancel: {
      if (!fn_->hasMod(in, ptx::Mod::mbarrier_complete_tx_bytes))
        return unsupported(in, "clusterlaunchcontrol.try_cancel without .mbarrier::complete_tx::bytes");
      const async::AddressSlot response = asyncSlot(address(in, opnd(in, 0)), 0);
      const async::AddressSlot barrier = asyncSlot(address(in, opnd(in, 1)), 1);
      Op& e = emit(&clusterTryCancel);
      e.aux = fn_->hasMod(in, ptx::Mod::multicast_cluster_all) ? kMulticastAll : 0;
      response.into(e, 0);
      barrier.into(e, 1);
      return;
    }
    case Opcode::ClusterlaunchcontrolQueryCancel: {
      const uint32_t response = src(opnd(in, 1), Type::b128);
      const Operand& out = opnd(in, 0);
      if (fn_->hasMod(in, ptx::Mod::is_canceled)) {
        Dst d = dst(out, Type::pred);
        Op& e = emit(&clusterIsCanceled);
        e.a = response;
        e.d = d.off;
        finish(d);
        return;
      }
      if (out.kind == OperandKind::Vector) {  // .get_first_ctaid.v4: {x, y, z, _}
        if (out.value != 4) fail(line_, "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4 takes 4 registers");
        Dst d[3];
        for (unsigned k = 0; k < 3; ++k) d[k] = dst(fn_->elems[out.index + k], Type::b32);
        Op& e = emit(&clusterFirstCtaid);
        e.a = response;
        e.aux = 1;
        e.d = d[0].off;
        e.e = d[1].off;
        e.f = d[2].off;
        for (const Dst& x : d) finish(x);
        return;
      }
      Dst d = dst(out, Type::b32);
      Op& e = emit(&clusterFirstCtaid);
      e.a = response;
      e.b = fn_->hasMod(in, ptx::Mod::get_first_ctaid_y) ? 1 : fn_->hasMod(in, ptx::Mod::get_first_ctaid_z) ? 2 : 0;
      e.d = d.off;
      finish(d);
      return;
    }
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
  if (uint32_t checks = checkedAccesses() & (kCheckSharedHazards | kCheckBarriers | kCheckWarpMasks))
    checking::CheckedBarrier{checks, bar.id, bar.count, bar.kind == Bar::Arrive}.into(emit(&checking::barrier));
  if (enabled(Rewrite::PlainBarriers) && bar.isPlainSync() && in.numOperands > 0 &&
      opnd(in, 0).kind == OperandKind::Imm && uint64_t(opnd(in, 0).value) < 16) {
    ctl::PlainBarrier{uint32_t(opnd(in, 0).value), false}.into(emit(&ctl::barSyncPlain));
    return;
  }
  bar.into(emit(&ctl::barSync));
}

// A reconvergence op right before a bar.sync without a thread count runs the barrier itself (one dispatch less),
// and a conditional branch to it gets toBarrier: when every lane takes it and nothing waits to reconverge there it
// runs the barrier at once (control.cpp: braCond). An `if (t < k) {...} __syncthreads();` costs a warp with no lane
// inside one dispatch (the setp that runs its branch, setp-branch) instead of three. (First, whatever the switches: a
// plain bar.sync followed by an op that may start a run ahead of it is marked for barrier credits, so that the
// others, followed by work, test one bit.)
void KernelLowerer::fuseBranchesToBarriers(uint32_t firstOp) {
  std::vector<Op>& ops = prog_.ops;
  for (uint32_t i = firstOp; i + 1 < here(); ++i)
    if (ops[i].fn == &ctl::barSyncPlain && ctl::startsRunAhead(ops[i + 1].fn)) {
      ctl::PlainBarrier plain = ctl::PlainBarrier::of(ops[i]);
      plain.runsAhead = true;
      plain.into(ops[i]);
    }
  if (!enabled(Rewrite::BranchToBarrier)) return;
  for (uint32_t i = firstOp; i + 1 < here(); ++i)
    if (ops[i].fn == &ctl::reconv &&
        (ops[i + 1].fn == &ctl::barSyncPlain ||
         (ops[i + 1].fn == &ctl::barSync && ctl::BarrierOperands::of(ops[i + 1]).isPlainSync())))
      ops[i].fn = &ctl::reconvThenBarrier;
  for (const PendingTarget& pt : pending_) {
    if (pt.kind != PendingTarget::Absolute || pt.rpc || ops[pt.op].fn != &ctl::braCond) continue;
    if (ops[pt.value].fn != &ctl::reconvThenBarrier) continue;
    ctl::PredicateTest test = ctl::PredicateTest::of(ops[pt.op]);
    test.toBarrier = true;
    test.into(ops[pt.op]);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
