#include "exec/control.h"
#include "exec/control_ops.h"

#include "exec/handlers.h"
#include "exec/memory.h"
#include "exec/vector_ops.h"
#include "ptx/ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>

namespace ptx::exec {

using h::R;

const Op* raiseFault(Warp& w, const Op* op, int lane, FaultKind kind, uint64_t address, std::string message,
                     FaultAccess access) {
  Cta& cta = *w.cta;
  Job& job = *cta.job;
  Fault f;
  f.kind = kind;
  f.kernel = job.info->name;
  f.block = cta.id;
  uint32_t t = w.index * 32 + uint32_t(lane < 0 ? 0 : lane);
  Dim3 b = job.lp.block;
  f.thread = Dim3{t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
  f.ptxLine = op ? op->line : 0;
  f.address = address;
  f.access = access;
  if (kind == FaultKind::Assert) {
    f.message = std::move(message);
  } else {
    f.message = fmt::format("{} in kernel '{}' at PTX line {}, block ({},{},{}), thread ({},{},{}), address 0x{:x}: {}",
                            faultKindName(kind), f.kernel, f.ptxLine, f.block.x, f.block.y, f.block.z, f.thread.x,
                            f.thread.y, f.thread.z, address, message);
  }
  job.raise(std::move(f));
  w.state = WarpState::Faulted;
  w.pc = op;
  return nullptr;
}

namespace {

inline void setActive(Warp& w, uint32_t m) {
  w.active = m;
  w.exec = m;
}

const Program& programOf(const Warp& w) { return *w.cta->job->program; }

// Restores a caller after its callee finished for the lanes m.
const Op* doReturn(Warp& w, const StackEntry& e, uint32_t m) {
  const Program& p = programOf(w);
  const CallSite& cs = p.calls[e.callOp];
  const FunctionCode& callee = p.functions[cs.callee];
  uint32_t calleeFrame = w.frame;
  for (const CallArg& r : cs.rets) {
    h::forActive(m, [&](int i) {
      uint8_t* base = w.local + uint64_t(i) * w.localStride;
      std::memmove(base + e.frame + r.dst, base + calleeFrame + r.src, r.size);
    });
  }
  if (callee.recursive) {
    size_t n = callee.regBytes;
    std::memcpy(w.rf + callee.regBase, w.spill.data() + e.spill, n);
    w.spill.resize(e.spill);
  }
  w.frame = e.frame;
  setActive(w, e.outer & w.alive);
  return e.pc;
}

}  // namespace

namespace {

// Pops the warp's stack to the next path that has lanes: where it goes on, or nullptr when the stack is done.
const Op* resumeOwnStack(Warp& w) {
  while (!w.stack.empty()) {
    StackEntry e = w.stack.back();
    w.stack.pop_back();
    uint32_t m = e.mask & w.alive;
    if (e.kind == StackEntry::Call) {
      if (m == 0) {
        // every lane of the call exited inside the callee: unwind its frame and saved registers
        const Program& p = programOf(w);
        const FunctionCode& callee = p.functions[p.calls[e.callOp].callee];
        if (callee.recursive) {
          std::memcpy(w.rf + callee.regBase, w.spill.data() + e.spill, callee.regBytes);
          w.spill.resize(e.spill);
        }
        w.frame = e.frame;
        continue;
      }
      return doReturn(w, e, m);
    }
    if (m == 0) continue;
    setActive(w, m);
    return e.pc;
  }
  return nullptr;
}

// Pops the reconvergence entries waiting for `op`; returns where to continue.
inline const Op* popAt(Warp& w, const Op* op, const Op* next) {
  while (!w.stack.empty()) {
    StackEntry& e = w.stack.back();
    if (e.rpc != op || e.kind == StackEntry::Call) break;
    uint32_t m = e.mask & w.alive;
    if (e.kind == StackEntry::Join) {
      w.stack.pop_back();
      if (m) setActive(w, m);
      continue;
    }
    const Op* pc = e.pc;
    w.stack.pop_back();
    if (m == 0) continue;
    setActive(w, m);
    return pc;
  }
  return next;
}

// ---- Independent thread scheduling (LaneGroup, engine.h) ----------------------------------------------------------

// Takes `lanes` out of stack entries [0, n).
void withoutLanes(std::vector<StackEntry>& stack, size_t n, uint32_t lanes) {
  for (size_t k = 0; k < n; ++k) {
    stack[k].mask &= ~lanes;
    if (stack[k].kind == StackEntry::Call) stack[k].outer &= ~lanes;
  }
}

// Whether two groups at one op followed the same way there: the same entries but for their lanes.
bool sameStackShape(const std::vector<StackEntry>& a, const std::vector<StackEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    const StackEntry &x = a[k], &y = b[k];
    if (x.kind != y.kind || x.rpc != y.rpc || x.pc != y.pc || x.frame != y.frame || x.callOp != y.callOp) return false;
  }
  return true;
}

// Runs set-aside group k: the warp takes its path. Returns where it goes on.
const Op* takeGroup(Warp& w, size_t k) {
  LaneGroup g = std::move(w.setAside[k]);
  w.setAside.erase(w.setAside.begin() + std::ptrdiff_t(k));
  w.stack = std::move(g.stack);
  w.frame = g.frame;
  setActive(w, g.active & w.alive);
  return g.pc;
}

// Sets the running group aside, to go on at `at` waiting as `wait` says, and runs the first set-aside group that is
// on its way. Returns where that one goes on, or nullptr (nothing changed) when no set-aside group is on its way.
const Op* runAnotherGroup(Warp& w, const Op* at, LaneGroup::Wait wait) {
  size_t k = 0;
  while (k < w.setAside.size() && w.setAside[k].wait != LaneGroup::OnItsWay) ++k;
  if (k == w.setAside.size()) return nullptr;
  LaneGroup running{w.active, at, w.frame, wait, std::move(w.stack)};
  const Op* next = takeGroup(w, k);
  w.setAside.push_back(std::move(running));
  return next;
}

}  // namespace

namespace ctl {

// A warp whose running path spins in the loop from `resumeAt` to its back edge `backEdge` sets aside the lanes
// that wait on its stack: those of the innermost entry that has some waiting and that they may leave. Lanes that
// left the loop wait at its exit, the reconvergence op of a Join a branch of the loop pushed: they go on past it
// (a GPU does not hold them there: a lock's holder releases it after the loop). Lanes whose path has not started
// (a Pending entry's) start it. Either way they go on as a group of their own that runs now, while the spinning
// group waits to go on at `resumeAt`. Lanes waiting at the end of a branch around the loop stay there until the
// others come, as before (the loop may wait for another warp, which the warp's yield lets run). Returns where the new
// group goes on, or nullptr when no lanes may go (or the warp is in a recursive call, whose saved registers are the
// whole warp's).
const Op* detachWaitingLanes(Warp& w, const Op* resumeAt, const Op* backEdge) {
  if (!w.spill.empty()) return nullptr;
  uint32_t covered = w.active;
  uint32_t frame = w.frame;
  for (size_t i = w.stack.size(); i-- > 0;) {
    const StackEntry e = w.stack[i];
    if (e.kind == StackEntry::Call) {
      covered |= e.mask;
      frame = e.frame;
      continue;
    }
    const uint32_t lanes = e.mask & w.alive & ~covered;
    covered |= e.mask;
    if (!lanes) continue;
    if (e.kind == StackEntry::Join && !(e.from >= resumeAt && e.from <= backEdge)) continue;
    LaneGroup ahead;
    ahead.active = lanes;
    ahead.frame = frame;
    ahead.pc = e.kind == StackEntry::Join ? e.rpc : e.pc;  // past the reconvergence op's pop, or its path's start
    ahead.stack.assign(w.stack.begin(), w.stack.begin() + std::ptrdiff_t(i));
    withoutLanes(ahead.stack, i, ~lanes);
    withoutLanes(w.stack, i + 1, lanes);
    if (e.kind == StackEntry::Pending) w.stack.erase(w.stack.begin() + std::ptrdiff_t(i));
    w.setAside.push_back(LaneGroup{w.active, resumeAt, w.frame, LaneGroup::OnItsWay, std::move(w.stack)});
    w.stack = std::move(ahead.stack);
    w.frame = ahead.frame;
    setActive(w, lanes);
    return ahead.pc;
  }
  return nullptr;
}

// The set-aside groups waiting at the gathering `op`, on the same way there as the running group, join it.
void joinGroupsGatheredAt(Warp& w, const Op* op) {
  for (size_t k = 0; k < w.setAside.size();) {
    LaneGroup& g = w.setAside[k];
    if (g.wait == LaneGroup::AtGathering && g.pc == op && g.frame == w.frame && sameStackShape(g.stack, w.stack)) {
      for (size_t n = 0; n < w.stack.size(); ++n) {
        w.stack[n].mask |= g.stack[n].mask;
        w.stack[n].outer |= g.stack[n].outer;
      }
      setActive(w, (w.active | g.active) & w.alive);
      w.setAside.erase(w.setAside.begin() + std::ptrdiff_t(k));
      continue;
    }
    ++k;
  }
}

// At an op that needs the warp's lanes together (a barrier: `named` all lanes; a .sync collective: its
// membermask), while some are set aside: the groups waiting at this op on the same way join the running one, and
// it waits for the named groups still on their way. Returns nullptr when the op runs now (with the groups that
// joined), else where the warp goes on (another group). When every named group waits at another gathering, the
// op runs with the lanes that are here (as the warp ran before independent scheduling).
const Op* gatherLanes(Warp& w, const Op* op, uint32_t named) {
  joinGroupsGatheredAt(w, op);
  uint32_t away = 0;
  for (const LaneGroup& g : w.setAside) {
    uint32_t lanes = g.active;
    for (const StackEntry& e : g.stack) lanes |= e.mask;
    away |= lanes;
  }
  if ((away & named & w.alive) == 0) return nullptr;
  return runAnotherGroup(w, op, LaneGroup::AtGathering);
}

const Op* gatherMembers(Warp& w, const Op* op, uint32_t maskReg, uint32_t unnamed) {
  const uint32_t named = maskReg ? R<uint32_t>(w, maskReg)[std::countr_zero(w.exec | 0x80000000u)] : unnamed;
  return gatherLanes(w, op, named);
}

}  // namespace ctl

namespace {
// A warp none of whose lanes has a path left is done.
inline const Op* finishWarp(Warp& w) {
  setActive(w, 0);
  w.state = WarpState::Done;
  w.pc = nullptr;
  return nullptr;
}
}  // namespace

const Op* resumeNext(Warp& w) {
  for (;;) {
    if (const Op* next = resumeOwnStack(w)) return next;
    if (w.setAside.empty()) break;
    // the running group ended: the next one runs (on its way first, else one waiting at a gathering, which runs its
    // op with the groups that are there)
    size_t k = 0;
    while (k + 1 < w.setAside.size() && w.setAside[k].wait != LaneGroup::OnItsWay) ++k;
    const Op* next = takeGroup(w, k);
    if (w.active) return next;
  }
  return finishWarp(w);
}

namespace ctl {

namespace {

// A warp that waits for another CTA (or warp) spins in a loop; it must yield so that the one it waits for runs.
// Two signals, both checked on backward branches only: a loop iteration that leaves the warp's whole state (pc,
// masks, call stack, registers) as it found it can only be waiting for memory to change, so the warp yields at
// once (checked every kSpinCheckInterval back edges: snapshot at one back edge, compare at the next); and any
// warp yields after kWarpBudget back edges, so that loops that spin with a changing counter yield too.
struct SpinProbe {
  const Warp* warp = nullptr;
  uint64_t launchId = 0;
  uint32_t cta = 0;
  const Op* target = nullptr;
  uint32_t active = 0;
  size_t stackDepth = 0;
  uint32_t frame = 0;
  std::vector<uint8_t> registers;
};
thread_local SpinProbe tlProbe;
constexpr size_t kQuickProbeBytes = 4096;  // 32 registers of 32 bits (32 lanes each)

const Op* yieldAt(Warp& w, const Op* target, WarpState why) {
  w.state = why;
  w.pc = target;
  return nullptr;
}

// The running path of w spins (or loops long) at the back edge to `target`, and the warp yields as `why` says. It
// goes on with the lanes that wait on its stack, if any (independent thread scheduling: a lock's holder that waits
// at the loop's exit releases it), else with another set-aside group, else where it spins. It yields either way:
// the path may wait for another warp or CTA (a decoupled look-back's lanes spin while the others wait at the
// loop's reconvergence op, gather with them at its vote, and spin again), which the host thread must run.
const Op* spinsOn(Warp& w, const Op* backEdge, const Op* target, WarpState why) {
  if (!w.stack.empty())
    if (const Op* ahead = detachWaitingLanes(w, target, backEdge)) return yieldAt(w, ahead, why);
  if (!w.setAside.empty())
    if (const Op* other = runAnotherGroup(w, target, LaneGroup::OnItsWay)) return yieldAt(w, other, why);
  return yieldAt(w, target, why);
}

[[gnu::noinline]] const Op* backEdge(Warp& w, const Op* backEdgeOp, const Op* target) {
  SpinProbe& p = tlProbe;
  // A loop that reads a clock in two iterations in a row waits for time to pass: other warps and CTAs wait
  // alongside it. The first back edge after a clock read looks at the next iteration (checkInterval 0 marks that);
  // a clock read before a timed loop changes nothing. The warp yields as a long loop does (Yielded), so its CTA
  // counts among the few preempted ones a host thread keeps parked (kPreemptedCtas) rather than among the thousands
  // of CTAs waiting for memory: each parked CTA's wait ends while the others run.
  if (w.readTime || w.checkInterval == 0) {
    const bool readNow = w.readTime, readBefore = w.checkInterval == 0;
    w.readTime = false;
    if (p.warp == &w) p.warp = nullptr;
    if (readNow && !readBefore) {
      w.checkInterval = 0;
      w.budget = 1;
      return target;
    }
    w.budget = w.checkInterval = kSpinCheckInterval;
    if (readNow) return yieldAt(w, target, WarpState::Yielded);
    ++w.backEdges;
    return target;
  }
  const Job& job = *w.cta->job;
  // The registers compared: those the loop writes (rewrite loop-watches), or every declared register.
  const LoopWatch* watch = job.program->loopWatchAt(target);
  const RegisterRange whole{kFirstRegister,
                            job.code->constStart > kFirstRegister ? job.code->constStart - kFirstRegister : 0};
  const RegisterRange* ranges = watch ? &job.program->loopWatchRanges[watch->firstRange] : &whole;
  const uint32_t rangeCount = watch ? watch->rangeCount : 1;
  auto unchanged = [&] {
    const uint8_t* saved = p.registers.data();
    for (uint32_t k = 0; k < rangeCount; ++k) {
      if (std::memcmp(saved, w.rf + ranges[k].offset, ranges[k].bytes) != 0) return false;
      saved += ranges[k].bytes;
    }
    return true;
  };
  bool probed = p.warp == &w && p.launchId == job.launchId && p.cta == w.cta->linearId;
  if (probed && p.target == target && p.active == w.active && p.stackDepth == w.stack.size() && p.frame == w.frame &&
      unchanged()) {
    p.warp = nullptr;
    return spinsOn(w, backEdgeOp, target, WarpState::Waiting);
  }
  w.backEdges += w.checkInterval;
  if (w.backEdges >= kWarpBudget) {
    p.warp = nullptr;
    return spinsOn(w, backEdgeOp, target, WarpState::Yielded);
  }
  // look again later, twice as late as this time (quick-spin-probes)
  auto probeLater = [&] {
    w.probeInterval = std::clamp(w.probeInterval * 2, 2u, kSpinCheckInterval);
    w.budget = w.checkInterval = w.probeInterval;
    return target;
  };
  if (probed) {  // the state changed
    p.warp = nullptr;
    return probeLater();
  }
  // A quick probe (quick-spin-probes) only where the snapshot is small: spin loops write a few registers, while a
  // loop around a whole kernel body may write most of a large register file (cuSPARSE's spsm_v2_kernel: 170 KB per
  // warp), whose copy costs more than the iterations it saves.
  if (w.checkInterval < kSpinCheckInterval) {
    size_t bytes = 0;
    for (uint32_t k = 0; k < rangeCount; ++k) bytes += ranges[k].bytes;
    if (bytes > kQuickProbeBytes) return probeLater();
  }
  p.warp = &w;
  p.launchId = job.launchId;
  p.cta = w.cta->linearId;
  p.target = target;
  p.active = w.active;
  p.stackDepth = w.stack.size();
  p.frame = w.frame;
  p.registers.clear();
  for (uint32_t k = 0; k < rangeCount; ++k)
    p.registers.insert(p.registers.end(), w.rf + ranges[k].offset, w.rf + ranges[k].offset + ranges[k].bytes);
  w.budget = w.checkInterval = 1;
  return target;
}

inline const Op* jump(Warp& w, const Op* op, const Op* target) {
  if (target <= op) [[unlikely]] {
    if (--w.budget <= 0) return backEdge(w, op, target);
  }
  return target;
}

// (flattened: the stack push, an out-of-line vector call, was 3% of a reduction with divergent last phases)
[[gnu::flatten]] const Op* diverge(Warp& w, const Op* op, uint32_t taken, const Op* target) {
  uint32_t act = w.active, notTaken = act & ~taken;
  const Op* r = op->rpc;
  const Op* ft = op + 1;
  bool haveJoin = !w.stack.empty() && w.stack.back().kind == StackEntry::Join && w.stack.back().rpc == r &&
                  (w.stack.back().mask & act) == act;
  if (!haveJoin) w.stack.push_back(StackEntry{StackEntry::Join, act, r, r, 0, 0, 0, 0, op});
  if (target == r) {
    setActive(w, notTaken);
    return ft;
  }
  if (ft == r) {
    setActive(w, taken);
    return jump(w, op, target);
  }
  // Both sides run before the join: the fall-through side first, as the GPU does (measured on an H200 through a
  // barrier reached on both sides of an if/else, where the order is visible).
  w.stack.push_back(StackEntry{StackEntry::Pending, taken, r, target, 0, 0, 0, 0});
  setActive(w, notTaken);
  return ft;
}

// The threads a warp's barrier arrival counts: all that have not exited (a full warp without counting its bits).
inline uint32_t arrivingThreads(const Warp& w) { return w.alive == kFullMask ? 32 : laneCount(w.alive); }

bool barrierComplete(const Cta& cta, const Barrier& b);

// A bar.red's result, into the destination of warp x waiting at barrier b, whose phase completed.
[[gnu::noinline, gnu::cold]] void writeBarrierResult(Warp& x, const Barrier& b) {
  uint32_t result = 0;
  switch (x.barrierRedOp) {
    case 1: result = b.redPopc; break;
    case 2: result = b.redAnd; break;
    case 3: result = b.redOr; break;
    default: result = 0;
  }
  const uint32_t m = x.exec;
  if (x.barrierRedOp == 1) {
    uint32_t* d = R<uint32_t>(x, x.barrierDst);
    h::forActive(m, [&](int i) { d[i] = result; });
  } else {
    uint8_t* pd = R<uint8_t>(x, x.barrierDst);
    h::forActive(m, [&](int i) { pd[i] = uint8_t(result); });
  }
  x.barrierDst = 0;
}

// Releases the warps whose wait at barrier `id` ends with its current phase. The warps holding barrier credits
// stay: they arrive at the new phase at once (Barrier::carriedThreads), and when those arrivals complete it, it
// is released in turn. A warp whose credits end at an exit of all its threads (Warp::exitsAtRelease) ends here, as
// that exit would end it, once the barrier is in its new phase (the exit may complete phases itself).
void releaseBarrier(Cta& cta, uint32_t id) {
  Barrier& b = cta.barriers[id];
  uint32_t exiting = 0;
  do {
    const uint32_t slot = b.phase % Barrier::kReleaseSlots;
    b.carriedThreads -= std::exchange(b.endingThreads[slot], uint16_t(0));
    b.carriedWarps -= std::exchange(b.endingWarps[slot], uint8_t(0));
    cta.creditPhases += b.carriedWarps;
    for (uint32_t ready = std::exchange(b.releases[slot], 0u); ready; ready &= ready - 1) {
      const uint32_t index = uint32_t(std::countr_zero(ready));
      Warp& x = cta.warps[index];
      if (x.barrierDst) [[unlikely]]
        writeBarrierResult(x, b);
      if (x.exitsAtRelease) {
        exiting |= 1u << index;
        continue;
      }
      x.state = WarpState::Ready;
    }
    ++b.phase;
    b.startPhase();
    b.waiting = b.carriedWarps;
    b.arrived = b.carriedThreads;
  } while (b.carriedWarps && barrierComplete(cta, b));
  for (; exiting; exiting &= exiting - 1) {
    Warp& x = cta.warps[uint32_t(std::countr_zero(exiting))];
    x.exitsAtRelease = false;
    ++cta.creditExits;
    kernelEnd(x, nullptr);  // what the exit does when all the warp's threads take it, with nothing to reconverge
  }
}

// A barrier completes when the expected number of threads arrived (bar.sync with a count: that many; without:
// every thread that has not exited). A warp arrives with all its threads that have not exited, even when only one
// side of a divergent branch reached the barrier: measured on an H200 (bar.sync 0 on both sides of an even/odd
// branch in a 128-thread CTA completes when the first side of every warp arrived).
bool barrierComplete(const Cta& cta, const Barrier& b) {
  uint32_t need = b.expected ? b.expected : cta.liveThreads;
  return b.arrived >= need && b.arrived > 0;
}

}  // namespace

namespace {
// threads that exit may complete barriers the others wait on
[[gnu::noinline]] void releaseBarriersCompletedByExits(Cta& cta) {
  for (uint32_t used = cta.usedBarriers; used; used &= used - 1) {
    const uint32_t id = uint32_t(std::countr_zero(used));
    Barrier& b = cta.barriers[id];
    if (b.waiting && barrierComplete(cta, b)) releaseBarrier(cta, id);
  }
}
// (inline in the exits, with the barriers' part out of line: the calls were 5% of a vector add's time)
[[gnu::always_inline]] inline void noteLanesExitedImpl(Warp& w, uint32_t lanes) {
  Cta& cta = *w.cta;
  cta.liveThreads -= laneCount(lanes);
  if (lanes && w.alive == 0) --cta.liveWarps;
  if (lanes && cta.job->code->usesBarriers) releaseBarriersCompletedByExits(cta);
}
// resumeNext, with a warp that has nothing on its stack and no lane group set aside finished here
[[gnu::always_inline]] inline const Op* resumeAfterExit(Warp& w) {
  return !w.stack.empty() || !w.setAside.empty() ? resumeNext(w) : finishWarp(w);
}
}  // namespace

const Op* braUniform(Warp& w, const Op* op) { return jump(w, op, op->target); }

namespace {
[[gnu::always_inline]] inline const Op* branchWhere(Warp& w, const Op* op, const PredicateTest& test, uint32_t holds) {
  uint32_t taken = holds & w.active;
  if (taken == w.active) {
    // branch-to-barrier: nothing reconverges at the target (the entry on top of the stack, if any, waits elsewhere),
    // so its reconvergence op would only lead to the barrier after it
    const Op* target = op->target;
    if (test.toBarrier && target > op && (w.stack.empty() || w.stack.back().rpc != target))
      return syncAt(w, target + 1);
    return jump(w, op, target);
  }
  if (taken == 0) return op + 1;
  return diverge(w, op, taken, op->target);
}
}  // namespace

PTX_LANES const Op* braCond(Warp& w, const Op* op) {
  const PredicateTest test = PredicateTest::of(*op);
  return branchWhere(w, op, test, test.lanes(w));
}
PTX_LANES const Op* braCondOnSetp(Warp& w, const Op* op) {
  const PredicateTest test = PredicateTest::of(*op);
  return branchWhere(w, op, test, test.lanesOf(w.setpLanes));
}

const Op* brxIdx(Warp& w, const Op* op) {
  const IndexedBranch branch = IndexedBranch::of(*op);
  const auto& table = programOf(w).brxTables[branch.table];
  const uint32_t* idx = R<uint32_t>(w, branch.index);
  // group lanes by target
  uint32_t remaining = w.active;
  int first = std::countr_zero(remaining);
  if (idx[first] >= table.size())
    return raiseFault(w, op, first, FaultKind::IllegalInstruction, idx[first], "brx.idx index out of range");
  const Op* t0 = table[idx[first]];
  uint32_t same = 0;
  h::forActive(remaining, [&](int i) {
    if (idx[i] < table.size() && table[idx[i]] == t0) same |= 1u << i;
  });
  if (same == remaining) return jump(w, op, t0);
  // divergent: push one pending entry per other target, run the first group
  const Op* r = op->rpc;
  w.stack.push_back(StackEntry{StackEntry::Join, w.active, r, r, 0, 0, 0, 0, op});
  uint32_t rest = remaining & ~same;
  while (rest) {
    int l = std::countr_zero(rest);
    if (idx[l] >= table.size())
      return raiseFault(w, op, l, FaultKind::IllegalInstruction, idx[l], "brx.idx index out of range");
    const Op* t = table[idx[l]];
    uint32_t grp = 0;
    h::forActive(rest, [&](int i) {
      if (idx[i] < table.size() && table[idx[i]] == t) grp |= 1u << i;
    });
    w.stack.push_back(StackEntry{StackEntry::Pending, grp, r, t, 0, 0, 0, 0});
    rest &= ~grp;
  }
  setActive(w, same);
  return t0;
}

const Op* reconv(Warp& w, const Op* op) { return popAt(w, op, op + 1); }

const Op* reconvThenBarrier(Warp& w, const Op* op) {
  const Op* next = popAt(w, op, op + 1);
  return next == op + 1 ? syncAt(w, next) : next;
}

const Op* exitLanes(Warp& w, const Op* op) {
  uint32_t dying = w.exec;
  w.alive &= ~dying;
  setActive(w, w.active & ~dying);
  noteLanesExitedImpl(w, dying);
  if (w.active == 0) return resumeAfterExit(w);
  return op + 1;
}

// guard, exitLanes and unguard in one op: the lanes the predicate selects exit, the others go on
namespace {
[[gnu::always_inline]] inline const Op* exitLanesWhere(Warp& w, const Op* op, uint32_t holds) {
  const uint32_t dying = w.active & holds;
  if (dying == 0) return op + 1;
  w.alive &= ~dying;
  setActive(w, w.active & ~dying);
  noteLanesExitedImpl(w, dying);
  if (w.active == 0) return resumeAfterExit(w);
  return op + 1;
}
}  // namespace
PTX_LANES const Op* exitWhere(Warp& w, const Op* op) { return exitLanesWhere(w, op, PredicateTest::of(*op).lanes(w)); }
PTX_LANES const Op* exitWhereOnSetp(Warp& w, const Op* op) {
  return exitLanesWhere(w, op, PredicateTest::of(*op).lanesOf(w.setpLanes));
}

// The vector prefix's op of this file (exec/vector_ops.h): exitLanes, which for the prefix's whole warp with
// nothing on its stacks ends the warp.
void addControlVectorOps(std::vector<CuemuVectorOp>& rows) {
  rows.push_back({reinterpret_cast<const void*>(&exitLanes), kCuemuVectorExitAll, 0});
}

const Op* kernelEnd(Warp& w, const Op*) {
  uint32_t dying = w.active;
  w.alive &= ~dying;
  setActive(w, 0);
  noteLanesExitedImpl(w, dying);
  return resumeAfterExit(w);
}

const Op* funcEnd(Warp& w, const Op* op) {
  const Op* next = popAt(w, op, nullptr);
  if (next) return next;
  if (w.stack.empty() || w.stack.back().kind != StackEntry::Call)
    return raiseFault(w, op, std::countr_zero(w.active), FaultKind::IllegalInstruction, 0,
                      "return without a matching call");
  StackEntry e = w.stack.back();
  w.stack.pop_back();
  return doReturn(w, e, e.mask & w.alive);
}

const Op* call(Warp& w, const Op* op) {
  const Program& p = programOf(w);
  const uint32_t site = CallOperands::of(*op).site;
  const CallSite& cs = p.calls[site];
  const FunctionCode& callee = p.functions[cs.callee];
  uint32_t newFrame = w.frame + cs.callerFrameBytes;
  if (uint64_t(newFrame) + callee.frameBytes > w.localStride || w.stack.size() > 64 * kMaxCallDepth)
    return raiseFault(w, op, std::countr_zero(w.active), FaultKind::StackOverflow, 0,
                      fmt::format("call stack overflow calling '{}'", callee.name));
  uint32_t m = w.exec;
  for (const CallArg& a : cs.args) {
    h::forActive(m, [&](int i) {
      uint8_t* base = w.local + uint64_t(i) * w.localStride;
      if (a.kind == CallArg::FrameToFrame)
        std::memmove(base + newFrame + a.dst, base + w.frame + a.src, a.size);
      else
        std::memcpy(base + newFrame + a.dst, w.rf + a.src + size_t(i) * a.size, a.size);
    });
  }
  uint32_t spill = uint32_t(w.spill.size());
  if (callee.recursive) {
    w.spill.resize(spill + callee.regBytes);
    std::memcpy(w.spill.data() + spill, w.rf + callee.regBase, callee.regBytes);
  }
  w.stack.push_back(StackEntry{StackEntry::Call, m, nullptr, op + 1, w.frame, spill, site, w.active});
  w.frame = newFrame;
  setActive(w, m);
  return op->target;
}

PTX_LANES const Op* guard(Warp& w, const Op* op) {
  uint32_t m = w.active & PredicateTest::of(*op).lanes(w);
  if (m == 0) return op->target;
  w.exec = m;
  return op + 1;
}

const Op* unguard(Warp& w, const Op* op) {
  w.exec = w.active;
  return op + 1;
}

// The faults of bar.sync/bar.arrive/bar.red, out of the way of the barrier itself (which every warp reaches at
// every __syncthreads).
[[gnu::noinline, gnu::cold]] const Op* barrierFault(Warp& w, const Op* op, int lane, uint32_t id, uint32_t count) {
  const Cta& cta = *w.cta;
  if (id >= 16) return raiseFault(w, op, lane, FaultKind::IllegalInstruction, id, "barrier id out of range");
  if (count && (count % 32 != 0 || count > cta.nwarps * 32u))
    return raiseFault(w, op, lane, FaultKind::IllegalInstruction, count, "invalid barrier thread count");
  // Warps that name one barrier with different thread counts stop an H100 with an illegal instruction
  // (tools/gpu-probe/results/synccheck19-h100-2026-11-27.txt, variants 1 and 3)
  return raiseFault(w, op, lane, FaultKind::IllegalInstruction, count,
                    fmt::format("barrier {} reached with thread count {} while the warps waiting at it gave {}", id,
                                count, cta.barriers[id].expected));
}

// Barrier handoff (runtime fast path barrier-handoff): where w's run continues after it stopped at a barrier that
// is not complete: at the next Ready warp after it in index order, wrapping around, started as runCta starts a
// warp; nullptr (the run ends, back to runCta) when none is Ready, the handoff is off, or the grid faulted (the
// watchdog's stop, another CTA's fault: runCta would have seen it after this warp).
[[gnu::always_inline]] inline const Op* handOff(Warp& w) {
  Cta& cta = *w.cta;
  if (!cta.handoff || cta.job->faulted.load(std::memory_order_relaxed)) return nullptr;
  const uint32_t n = cta.nwarps;
  for (uint32_t k = 1, i = w.index; k < n; ++k) {
    if (++i == n) i = 0;
    Warp& next = cta.warps[i];
    if (next.state != WarpState::Ready) continue;
    beginRun(next, false);
    cta.current = &next;
    cta.handedOff = true;
    return next.pc;
  }
  return nullptr;
}

// Barrier credits (runtime fast path barrier-credits). A warp waiting at a barrier cannot change its registers, so
// the branches it would run after the release, when they read only its registers, go the same way now. From
// `next`, the op after a plain bar.sync of barrier `id`, this follows what the warp would run as long as that is
// a forward branch all its active lanes take alike (or none takes), a reconvergence op with nothing to reconverge
// there, or a plain bar.sync of the same barrier: each of those is a phase the warp would only pass through.
// Stops at anything else (a backward branch too: its spin check counts it), after kMaxRunAheadOps ops, or at
// `limit` barriers. Returns the barriers found and the op after the last; `nth`, when given, gets barrier
// number `nthIndex` (from 0) of them.
constexpr uint32_t kMaxRunAheadOps = 64;
struct RunAhead {
  uint32_t barriers = 0;
  const Op* resume = nullptr;
  bool sameInEveryCta = true;  // every branch it followed tests a thread constant, and nothing reconverged
  bool exits = false;          // resume is a guarded exit that every thread of the warp takes
};
PTX_LANES RunAhead runAheadOfBarrier(const Warp& w, const Op* next, uint32_t id, uint32_t limit,
                                     const Op** nth = nullptr, uint32_t nthIndex = 0) {
  RunAhead r;
  const Handler branch = &braCond, uniform = &braUniform, join = &reconv, joinThenBarrier = &reconvThenBarrier,
                barrier = &barSyncPlain;
  auto reconverges = [&](const Op* at) { return !w.stack.empty() && w.stack.back().rpc == at; };
  auto credit = [&](const Op* at) {
    if (nth && r.barriers == nthIndex) *nth = at;
    ++r.barriers;
    r.resume = at + 1;
  };
  const Op* o = next;
  for (uint32_t steps = 0; steps < kMaxRunAheadOps && r.barriers < limit; ++steps) {
    const Handler fn = o->fn;
    if (fn == branch) {
      const PredicateTest test = PredicateTest::of(*o);
      const uint32_t taken = test.lanes(w) & w.active;
      r.sameInEveryCta &= test.threadConstant;
      if (taken == 0) {
        ++o;
        continue;
      }
      const Op* target = o->target;
      if (taken != w.active || target <= o) break;
      // branch-to-barrier: the reconvergence op at the target leads to the barrier after it
      if (test.toBarrier && !reconverges(target) && target[1].fn == barrier && PlainBarrier::of(target[1]).id == id) {
        credit(target + 1);
        o = target + 2;
        continue;
      }
      o = target;
    } else if (fn == uniform) {
      if (o->target <= o) break;
      o = o->target;
    } else if (fn == join || fn == joinThenBarrier) {
      if (reconverges(o)) break;
      ++o;
    } else if (fn == barrier && PlainBarrier::of(*o).id == id) {
      credit(o);
      ++o;
    } else {
      // after the last barrier credited: an exit every thread of the warp takes ends the warp there
      if (fn == &exitWhere && r.barriers && o == r.resume && w.stack.empty() && w.active == w.alive) {
        const PredicateTest test = PredicateTest::of(*o);
        if ((test.lanes(w) & w.active) == w.active) {
          r.exits = true;
          r.sameInEveryCta &= test.threadConstant;
        }
      }
      break;
    }
  }
  return r;
}

// The credits of w arriving at the plain bar.sync `op` of barrier `id`: remembered (Warp::creditMemos) where they
// are the same in every CTA of the launch, which saves the unrolled reduction's idle warps most of their scans.
RunAhead takeBarrierCredits(Warp& w, const Op* op, uint32_t id) {
  constexpr uint32_t kMaxCredits = Barrier::kReleaseSlots - 1;
  if (!w.stack.empty()) return runAheadOfBarrier(w, op + 1, id, kMaxCredits);
  // (the op's address hashed: the barriers of an unrolled loop stand a fixed number of ops apart, which plain
  // modulo put into two of the 16 slots)
  const uint32_t hash = uint32_t(reinterpret_cast<uintptr_t>(op) / sizeof(Op)) * 2654435761u;
  static_assert(Warp::kCreditMemos == 16);
  Warp::CreditMemo& memo = w.creditMemos[hash >> 28];
  if (memo.at == op && memo.active == w.active) return RunAhead{memo.credits, memo.resume, true, memo.exits};
  const RunAhead r = runAheadOfBarrier(w, op + 1, id, kMaxCredits);
  if (r.sameInEveryCta) memo = {op, w.active, r.barriers, r.resume, r.exits};
  return r;
}

bool startsRunAhead(Handler fn) {
  return fn == &braCond || fn == &braUniform || fn == &reconvThenBarrier || fn == &reconv || fn == &barSyncPlain;
}

const Op* barrierWaitedAt(const Warp& w) {
  if (!w.pc) return nullptr;
  // the credits the warp has yet to pass: the phases between the barrier's and the one that releases it
  const uint32_t left = w.barrierReleasePhase - w.cta->barriers[w.barrierId].phase;
  if (left >= w.barrierCreditsTaken) return w.barrierArrival ? w.barrierArrival : w.pc - 1;
  const Op* at = nullptr;
  runAheadOfBarrier(w, w.barrierArrival + 1, w.barrierId, w.barrierCreditsTaken, &at, w.barrierCreditsTaken - left - 1);
  return at ? at : w.pc - 1;
}

// A warp waits at barrier `id`, arrived at by the bar.sync at `op`, once its arrival is counted (its bar.red
// destination set by the caller), holding `credits` arrivals at the barrier's next phases (plain bar.syncs only)
// and resuming at `resume`: the last arrival releases the waiting warps, itself included, and goes on unless it
// holds credits; any other passes the thread on or stops.
[[gnu::always_inline]] inline const Op* waitAtBarrier(Warp& w, Cta& cta, uint32_t id, const Op* op,
                                                      RunAhead credits = {}) {
  w.barrierId = id;
  w.state = WarpState::AtBarrier;
  w.barrierArrival = op;
  w.barrierCreditsTaken = uint8_t(credits.barriers);
  w.exitsAtRelease = credits.exits;
  w.pc = credits.barriers ? credits.resume : op + 1;
  Barrier& b = cta.barriers[id];
  w.barrierReleasePhase = b.phase + credits.barriers;
  const uint32_t slot = w.barrierReleasePhase % Barrier::kReleaseSlots;
  b.releases[slot] |= 1u << w.index;
  if (credits.barriers) {
    const uint32_t threads = arrivingThreads(w);
    b.endingThreads[slot] = uint16_t(b.endingThreads[slot] + threads);
    ++b.endingWarps[slot];
    b.carriedThreads += threads;
    ++b.carriedWarps;
  }
  if (barrierComplete(cta, b)) {
    releaseBarrier(cta, id);  // sets this warp Ready too, unless it holds credits (and writes the reduction result)
    if (w.state == WarpState::Ready) return w.pc;
  }
  return handOff(w);
}

const Op* barSync(Warp& w, const Op* op) {
  // a warp's threads arrive at a barrier together: its set-aside groups first come here
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = gatherLanes(w, op, kFullMask)) return other;
  Cta& cta = *w.cta;
  const BarrierOperands bar = BarrierOperands::of(*op);
  int lane = std::countr_zero(w.exec | 0x80000000u);
  uint32_t id = R<uint32_t>(w, bar.id)[lane];
  uint32_t count = bar.count ? R<uint32_t>(w, bar.count)[lane] : 0;
  if (id >= 16 || (count && (count % 32 != 0 || count > cta.nwarps * 32u))) [[unlikely]]
    return barrierFault(w, op, lane, id, count);
  Barrier& b = cta.barriers[id];
  cta.usedBarriers |= 1u << id;
  if (b.waiting && count != b.expected) [[unlikely]]
    return barrierFault(w, op, lane, id, count);
  if (b.waiting == 0) {
    b.expected = count;
    b.redAnd = 1;
    b.redOr = 0;
    b.redPopc = 0;
  }
  if (bar.isReduction()) {
    const uint8_t* pr = R<uint8_t>(w, bar.predicate);
    h::forActive(w.exec, [&](int i) {
      bool v = (pr[i] != 0) != bar.negated;
      b.redPopc += v;
      b.redAnd &= v;
      b.redOr |= v;
    });
  }
  b.waiting += 1;
  b.arrived += arrivingThreads(w);
  if (bar.kind == BarrierOperands::Arrive) {  // no wait
    if (barrierComplete(cta, b)) releaseBarrier(cta, id);
    return op + 1;
  }
  w.barrierDst = bar.isReduction() ? bar.result : 0;
  w.barrierRedOp = uint8_t(bar.isReduction() ? bar.kind - 1 : 0);
  return waitAtBarrier(w, cta, id, op);
}

// __syncthreads: as barSync for a plain sync, with the id from the op. What a phase's first arrival resets there
// is what startPhase left (no count, no reductions), so only a count given by the warps already waiting differs.
const Op* barSyncPlain(Warp& w, const Op* op) {
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = gatherLanes(w, op, kFullMask)) return other;
  Cta& cta = *w.cta;
  const PlainBarrier plain = PlainBarrier::of(*op);
  const uint32_t id = plain.id;
  Barrier& b = cta.barriers[id];
  if (b.waiting == 0)
    cta.usedBarriers |= 1u << id;
  else if (b.expected != 0) [[unlikely]]
    return barrierFault(w, op, std::countr_zero(w.exec | 0x80000000u), id, 0);
  b.waiting += 1;
  b.arrived += arrivingThreads(w);
  w.barrierDst = 0;
  // (most barriers are followed by work: they pay one test, not the call)
  if (cta.barrierCredits && plain.runsAhead) return waitAtBarrier(w, cta, id, op, takeBarrierCredits(w, op, id));
  return waitAtBarrier(w, cta, id, op);
}

const Op* syncAt(Warp& w, const Op* op) { return op->fn == &barSyncPlain ? barSyncPlain(w, op) : barSync(w, op); }

bool mayHandOff(const Op* op, const Op* end) {
  auto intoBarrier = [](const Op& o) { return o.fn == &braCond && PredicateTest::of(o).toBarrier; };
  return op->fn == &barSync || op->fn == &barSyncPlain || op->fn == &reconvThenBarrier || intoBarrier(*op) ||
         (op + 1 < end && intoBarrier(op[1]));
}

const Op* barWarpSync(Warp& w, const Op* op) {
  if (!w.setAside.empty()) [[unlikely]]
    if (const Op* other = gatherMembers(w, op, op->a, kFullMask)) return other;
  return op + 1;
}

const Op* endPrologue(Warp&, const Op*) { return nullptr; }

const Op* fence(Warp&, const Op* op) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return op + 1;
}

const Op* nop(Warp&, const Op* op) { return op + 1; }

const Op* nanosleep(Warp& w, const Op* op) {
  // A sleeping warp is waiting for someone else: let the other warps and CTAs run.
  w.state = WarpState::Waiting;
  w.pc = op + 1;
  return nullptr;
}

const Op* trap(Warp& w, const Op* op) {
  int lane = std::countr_zero(w.exec | 0x80000000u);
  const TrapOperands trap = TrapOperands::of(*op);
  // an H100 ends a grid that runs `trap` with CUDA_ERROR_LAUNCH_FAILED (tools/gpu-probe/printftrap28), and one that
  // runs `brkpt` without a debugger the same way (tools/gpu-probe/freebrkpt28)
  if (trap.kind == TrapOperands::Trap) return raiseFault(w, op, lane, FaultKind::Trap, 0, "trap instruction executed");
  if (trap.kind == TrapOperands::Brkpt)
    return raiseFault(w, op, lane, FaultKind::Trap, 0, "brkpt instruction executed");
  return raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, programOf(w).messages[trap.message]);
}

const Op* localAddr(Warp& w, const Op* op) {
  const LocalAddress a = LocalAddress::of(*op);
  uint64_t v = uint64_t(w.frame) + uint64_t(a.offset);
  if (a.bytes == 8)
    h::store<uint64_t>(w, a.result, [&](int) { return v; });
  else
    h::store<uint32_t>(w, a.result, [&](int) { return uint32_t(v); });
  return op + 1;
}
const Op* deviceMalloc(Warp& w, const Op* op) {
  const BuiltinCallOperands call = BuiltinCallOperands::of(*op);
  const uint64_t* size = R<uint64_t>(w, call.args[0]);
  uint64_t* out = R<uint64_t>(w, call.result);
  HostServices& host = *w.cta->job->host;
  h::forActive(w.exec, [&](int i) { out[i] = size[i] ? host.deviceMalloc(size[i]) : 0; });
  return op + 1;
}

const Op* deviceFree(Warp& w, const Op* op) {
  const uint64_t* ptr = R<uint64_t>(w, BuiltinCallOperands::of(*op).args[0]);
  HostServices& host = *w.cta->job->host;
  h::forActive(w.exec, [&](int i) {
    if (ptr[i]) host.deviceFree(ptr[i]);
  });
  return op + 1;
}

// ---- CUDA graph conditional nodes (issue 17) ----
const Op* graphSetConditional(Warp& w, const Op* op) {
  const BuiltinCallOperands call = BuiltinCallOperands::of(*op);
  const uint64_t* handle = R<uint64_t>(w, call.args[0]);
  const uint32_t* value = R<uint32_t>(w, call.args[1]);
  HostServices& host = *w.cta->job->host;
  for (uint32_t lanes = w.exec; lanes; lanes &= lanes - 1) {
    int i = std::countr_zero(lanes);
    if (!host.setGraphConditional(handle[i], value[i]))
      return raiseFault(w, op, i, FaultKind::IllegalAddress, handle[i],
                        "cudaGraphSetConditional: the handle is not a conditional handle of the graph that launched "
                        "this kernel");
  }
  return op + 1;
}

}  // namespace ctl
}  // namespace ptx::exec
