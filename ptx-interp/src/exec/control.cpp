#include "exec/control.h"

#include "exec/handlers.h"
#include "exec/memory.h"
#include "ptx/ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>

namespace ptx::exec {

using h::R;

const Op* raiseFault(Warp& w, const Op* op, int lane, FaultKind kind, uint64_t address, std::string message) {
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

const Op* resumeNext(Warp& w) {
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
  setActive(w, 0);
  w.state = WarpState::Done;
  w.pc = nullptr;
  return nullptr;
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

const Op* yieldAt(Warp& w, const Op* target, WarpState why) {
  w.state = why;
  w.pc = target;
  return nullptr;
}

[[gnu::noinline]] const Op* backEdge(Warp& w, const Op* target) {
  SpinProbe& p = tlProbe;
  const Job& job = *w.cta->job;
  uint32_t first = kFirstRegister, last = job.code->constStart;
  bool probed = p.warp == &w && p.launchId == job.launchId && p.cta == w.cta->linearId;
  if (probed && p.target == target && p.active == w.active && p.stackDepth == w.stack.size() && p.frame == w.frame &&
      (last <= first || std::memcmp(p.registers.data(), w.rf + first, last - first) == 0)) {
    p.warp = nullptr;
    return yieldAt(w, target, WarpState::Waiting);
  }
  w.backEdges += w.checkInterval;
  if (w.backEdges >= kWarpBudget) {
    p.warp = nullptr;
    return yieldAt(w, target, WarpState::Yielded);
  }
  if (probed) {  // the state changed: look again later
    p.warp = nullptr;
    w.budget = w.checkInterval = kSpinCheckInterval;
    return target;
  }
  p.warp = &w;
  p.launchId = job.launchId;
  p.cta = w.cta->linearId;
  p.target = target;
  p.active = w.active;
  p.stackDepth = w.stack.size();
  p.frame = w.frame;
  if (last > first) p.registers.assign(w.rf + first, w.rf + last);
  w.budget = w.checkInterval = 1;
  return target;
}

inline const Op* jump(Warp& w, const Op* op, const Op* target) {
  if (target <= op) [[unlikely]] {
    if (--w.budget <= 0) return backEdge(w, target);
  }
  return target;
}

const Op* diverge(Warp& w, const Op* op, uint32_t taken, const Op* target) {
  uint32_t act = w.active, notTaken = act & ~taken;
  const Op* r = op->rpc;
  const Op* ft = op + 1;
  bool haveJoin = !w.stack.empty() && w.stack.back().kind == StackEntry::Join && w.stack.back().rpc == r &&
                  (w.stack.back().mask & act) == act;
  if (!haveJoin) w.stack.push_back(StackEntry{StackEntry::Join, act, r, r, 0, 0, 0, 0});
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

void releaseBarrier(Cta& cta, uint32_t id) {
  Barrier& b = cta.barriers[id];
  uint32_t result = 0;
  for (Warp& x : cta.warps) {
    if (x.state == WarpState::AtBarrier && x.barrierId == id) {
      if (x.barrierDst) {
        switch (x.barrierRedOp) {
          case 1: result = b.redPopc; break;
          case 2: result = b.redAnd; break;
          case 3: result = b.redOr; break;
          default: result = 0;
        }
        uint32_t* d = R<uint32_t>(x, x.barrierDst);
        uint32_t m = x.exec;
        if (x.barrierRedOp == 1) {
          h::forActive(m, [&](int i) { d[i] = result; });
        } else {
          uint8_t* pd = R<uint8_t>(x, x.barrierDst);
          h::forActive(m, [&](int i) { pd[i] = uint8_t(result); });
        }
        x.barrierDst = 0;
      }
      x.state = WarpState::Ready;
    }
  }
  b = Barrier{};
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
void noteLanesExitedImpl(Warp& w, uint32_t lanes) {
  Cta& cta = *w.cta;
  cta.liveThreads -= laneCount(lanes);
  if (lanes && w.alive == 0) --cta.liveWarps;
  if (lanes && cta.job->code->usesBarriers) {
    // threads that exit may complete barriers the others wait on
    for (uint32_t id = 0; id < 16; ++id) {
      Barrier& b = cta.barriers[id];
      if (b.waiting && barrierComplete(cta, b)) releaseBarrier(cta, id);
    }
  }
}
}  // namespace

const Op* braUniform(Warp& w, const Op* op) { return jump(w, op, op->target); }

PTX_LANES const Op* braCond(Warp& w, const Op* op) {
  uint32_t pm = predMask(R<uint8_t>(w, op->a));
  if (op->aux & 1) pm = ~pm;
  uint32_t taken = pm & w.active;
  if (taken == w.active) return jump(w, op, op->target);
  if (taken == 0) return op + 1;
  return diverge(w, op, taken, op->target);
}

const Op* brxIdx(Warp& w, const Op* op) {
  const auto& table = programOf(w).brxTables[op->aux];
  const uint32_t* idx = R<uint32_t>(w, op->a);
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
  w.stack.push_back(StackEntry{StackEntry::Join, w.active, r, r, 0, 0, 0, 0});
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

const Op* exitLanes(Warp& w, const Op* op) {
  uint32_t dying = w.exec;
  w.alive &= ~dying;
  setActive(w, w.active & ~dying);
  noteLanesExitedImpl(w, dying);
  if (w.active == 0) return resumeNext(w);
  return op + 1;
}

const Op* kernelEnd(Warp& w, const Op*) {
  uint32_t dying = w.active;
  w.alive &= ~dying;
  setActive(w, 0);
  noteLanesExitedImpl(w, dying);
  return resumeNext(w);
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
  const CallSite& cs = p.calls[op->aux];
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
  w.stack.push_back(StackEntry{StackEntry::Call, m, nullptr, op + 1, w.frame, spill, op->aux, w.active});
  w.frame = newFrame;
  setActive(w, m);
  return op->target;
}

PTX_LANES const Op* guard(Warp& w, const Op* op) {
  uint32_t pm = predMask(R<uint8_t>(w, op->a));
  if (op->aux & 1) pm = ~pm;
  uint32_t m = w.active & pm;
  if (m == 0) return op->target;
  w.exec = m;
  return op + 1;
}

const Op* unguard(Warp& w, const Op* op) {
  w.exec = w.active;
  return op + 1;
}

// aux: 0 sync, 1 arrive, 2 red.popc, 3 red.and, 4 red.or; d: red destination; c: red predicate (aux bit 8: negated)
const Op* barSync(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  int lane = std::countr_zero(w.exec | 0x80000000u);
  uint32_t id = R<uint32_t>(w, op->a)[lane];
  uint32_t count = op->b ? R<uint32_t>(w, op->b)[lane] : 0;
  if (id >= 16) return raiseFault(w, op, lane, FaultKind::IllegalInstruction, id, "barrier id out of range");
  if (count && (count % 32 != 0 || count > cta.nwarps * 32u))
    return raiseFault(w, op, lane, FaultKind::IllegalInstruction, count, "invalid barrier thread count");
  Barrier& b = cta.barriers[id];
  if (b.waiting == 0) {
    b.expected = count;
    b.redAnd = 1;
    b.redOr = 0;
    b.redPopc = 0;
  }
  uint32_t kind = op->aux & 0xff;
  if (kind >= 2) {
    const uint8_t* pr = R<uint8_t>(w, op->c);
    bool neg = (op->aux >> 8) & 1;
    h::forActive(w.exec, [&](int i) {
      bool v = (pr[i] != 0) != neg;
      b.redPopc += v;
      b.redAnd &= v;
      b.redOr |= v;
    });
  }
  b.waiting += 1;
  b.arrived += laneCount(w.alive);
  if (kind == 1) {  // arrive: no wait
    if (barrierComplete(cta, b)) releaseBarrier(cta, id);
    return op + 1;
  }
  w.barrierId = id;
  w.barrierDst = kind >= 2 ? op->d : 0;
  w.barrierRedOp = uint8_t(kind >= 2 ? kind - 1 : 0);
  w.state = WarpState::AtBarrier;
  w.pc = op + 1;
  if (barrierComplete(cta, b)) {
    releaseBarrier(cta, id);  // sets this warp Ready too (and writes the reduction result)
    return op + 1;
  }
  return nullptr;
}

const Op* barWarpSync(Warp&, const Op* op) { return op + 1; }

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
  if (op->aux == 0) return raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, "trap instruction executed");
  if (op->aux == 1) return raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, "brkpt instruction executed");
  return raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, programOf(w).messages[op->imm]);
}

PTX_LANES const Op* vote(Warp& w, const Op* op) {
  uint32_t pm = predMask(R<uint8_t>(w, op->a));
  if (op->aux & 16) pm = ~pm;
  uint32_t m = w.exec;
  uint32_t ballot = pm & m;
  switch (op->aux & 15) {
    case 0: { uint8_t v = (ballot == m); h::store<uint8_t>(w, op->d, [&](int) { return v; }); break; }
    case 1: { uint8_t v = ballot != 0; h::store<uint8_t>(w, op->d, [&](int) { return v; }); break; }
    case 2: { uint8_t v = ballot == 0 || ballot == m; h::store<uint8_t>(w, op->d, [&](int) { return v; }); break; }
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
      case 0: j = uint32_t(i) - bval; pval = int32_t(j) >= int32_t(maxLane); break;
      case 1: j = uint32_t(i) + bval; pval = j <= maxLane; break;
      case 2: j = uint32_t(i) ^ bval; pval = j <= maxLane; break;
      default: j = minLane | (bval & ~segMask); pval = j <= maxLane; break;
    }
    if (!pval) j = uint32_t(i);
    j &= 31;
    valid[i] = uint8_t(pval);
    return ((alive >> j) & 1) ? src[j] : 0u;
  });
  if (op->f) h::store<uint8_t>(w, op->f, [&](int i) { return valid[i]; });
  return op + 1;
}

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

namespace {
PTX_LANES void broadcast32(uint32_t* d, uint32_t v, uint32_t m) {
  for (int i = 0; i < 32; ++i) d[i] = ((m >> i) & 1) ? v : d[i];
}
PTX_LANES void iota32(uint32_t* d, uint32_t base, uint32_t m) {
  for (int i = 0; i < 32; ++i) d[i] = ((m >> i) & 1) ? base + uint32_t(i) : d[i];
}
}  // namespace

const Op* sreg(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const Job& job = *cta.job;
  Dim3 blk = job.lp.block, grid = job.lp.grid;
  uint32_t comp = op->e;
  uint32_t m = w.exec;
  uint32_t* d32 = R<uint32_t>(w, op->d);
  uint64_t v = 0;
  bool wide = false;
  auto sr = static_cast<ptx::SpecialReg>(op->aux);
  switch (sr) {
    case ptx::SpecialReg::tid: {  // sregHandler gives %tid.x/y/z their own handler; kept for completeness
      alignas(64) uint32_t lanes[32];
      threadIndexLanes(blk, w.index, comp, lanes);
      h::forActive(m, [&](int i) { d32[i] = lanes[i]; });
      return op + 1;
    }
    case ptx::SpecialReg::laneid: iota32(d32, 0, m); return op + 1;
    case ptx::SpecialReg::lanemask_eq: h::forActive(m, [&](int i) { d32[i] = 1u << i; }); return op + 1;
    case ptx::SpecialReg::lanemask_le: h::forActive(m, [&](int i) { d32[i] = uint32_t((2ull << i) - 1); }); return op + 1;
    case ptx::SpecialReg::lanemask_lt: h::forActive(m, [&](int i) { d32[i] = (1u << i) - 1; }); return op + 1;
    case ptx::SpecialReg::lanemask_ge: h::forActive(m, [&](int i) { d32[i] = ~((1u << i) - 1); }); return op + 1;
    case ptx::SpecialReg::lanemask_gt: h::forActive(m, [&](int i) { d32[i] = uint32_t(~((2ull << i) - 1)); }); return op + 1;
    case ptx::SpecialReg::ntid: v = blk.component(comp); break;
    case ptx::SpecialReg::ctaid: v = cta.id.component(comp); break;
    case ptx::SpecialReg::nctaid: v = grid.component(comp); break;
    case ptx::SpecialReg::warpid: v = w.index; break;
    case ptx::SpecialReg::nwarpid: v = cta.nwarps; break;
    case ptx::SpecialReg::smid: v = cta.linearId % job.smCount; break;
    case ptx::SpecialReg::nsmid: v = job.smCount; break;
    case ptx::SpecialReg::gridid: v = job.lp.gridId; wide = true; break;
    case ptx::SpecialReg::clock:
    case ptx::SpecialReg::clock_hi:
    case ptx::SpecialReg::clock64: {
      uint64_t t = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
      if (sr == ptx::SpecialReg::clock64) { v = t; wide = true; }
      else v = sr == ptx::SpecialReg::clock ? uint32_t(t) : uint32_t(t >> 32);
      break;
    }
    case ptx::SpecialReg::globaltimer:
    case ptx::SpecialReg::globaltimer_lo:
    case ptx::SpecialReg::globaltimer_hi: {
      uint64_t t = cta.job->host->globalTimerNs();
      if (sr == ptx::SpecialReg::globaltimer) { v = t; wide = true; }
      else v = sr == ptx::SpecialReg::globaltimer_lo ? uint32_t(t) : uint32_t(t >> 32);
      break;
    }
    case ptx::SpecialReg::total_smem_size:
    case ptx::SpecialReg::aggr_smem_size: v = cta.sharedBytes; break;
    case ptx::SpecialReg::dynamic_smem_size: v = job.lp.dynamicSharedBytes; break;
    case ptx::SpecialReg::is_explicit_cluster: {
      uint8_t* d8 = R<uint8_t>(w, op->d);
      h::forActive(m, [&](int i) { d8[i] = 0; });
      return op + 1;
    }
    case ptx::SpecialReg::clusterid: v = cta.id.component(comp); break;
    case ptx::SpecialReg::nclusterid: v = grid.component(comp); break;
    case ptx::SpecialReg::cluster_ctaid: v = 0; break;
    case ptx::SpecialReg::cluster_nctaid: v = 1; break;
    case ptx::SpecialReg::cluster_ctarank: v = 0; break;
    case ptx::SpecialReg::cluster_nctarank: v = 1; break;
    default:
      if (op->aux >= uint32_t(ptx::SpecialReg::envreg0) && op->aux <= uint32_t(ptx::SpecialReg::envreg31))
        v = job.lp.envRegs[op->aux - uint32_t(ptx::SpecialReg::envreg0)];
      else
        v = 0;
      wide = op->f == 8;
      break;
  }
  if (wide) {
    uint64_t* d64 = R<uint64_t>(w, op->d);
    h::forActive(m, [&](int i) { d64[i] = v; });
  } else {
    broadcast32(d32, uint32_t(v), m);
  }
  return op + 1;
}

namespace {
// The special registers every kernel reads, without the generic handler's switch: %tid (one-dimensional blocks:
// consecutive lanes) and the launch-uniform %ctaid.
template <int Comp> PTX_LANES const Op* sregTid(Warp& w, const Op* op) {
  alignas(64) uint32_t v[32];
  threadIndexLanes(w.cta->job->lp.block, w.index, Comp, v);
  h::storeLanes<uint32_t>(w, op->d, v);
  return op + 1;
}
template <int Comp> PTX_LANES const Op* sregCtaid(Warp& w, const Op* op) {
  const uint32_t v = w.cta->id.component(Comp);
  h::store<uint32_t>(w, op->d, [&](int) { return v; });
  return op + 1;
}
}  // namespace

Handler sregHandler(ptx::SpecialReg sr, uint32_t component) {
  if (component < 3 && sr == ptx::SpecialReg::tid)
    return component == 0 ? &sregTid<0> : component == 1 ? &sregTid<1> : &sregTid<2>;
  if (component < 3 && sr == ptx::SpecialReg::ctaid)
    return component == 0 ? &sregCtaid<0> : component == 1 ? &sregCtaid<1> : &sregCtaid<2>;
  return &sreg;
}

const Op* localAddr(Warp& w, const Op* op) {
  uint64_t v = uint64_t(w.frame) + uint64_t(op->imm);
  if (op->f == 8) h::store<uint64_t>(w, op->d, [&](int) { return v; });
  else h::store<uint32_t>(w, op->d, [&](int) { return uint32_t(v); });
  return op + 1;
}

// aux: 1 shared, 2 local, 3 param. Source width f (4/8); destination is 64-bit.
const Op* cvtaToGeneric(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  auto src = [&](int i) -> uint64_t {
    return op->f == 4 ? uint64_t(R<uint32_t>(w, op->a)[i]) : R<uint64_t>(w, op->a)[i];
  };
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  alignas(64) uint64_t tmp[32];
  for (int i = 0; i < 32; ++i) {
    uint64_t a = src(i);
    switch (op->aux) {
      case 1: tmp[i] = sh + a; break;
      case 2: tmp[i] = lo + uint64_t(i) * w.localStride + a; break;
      default: tmp[i] = pb + a; break;
    }
  }
  h::storeLanes<uint64_t>(w, op->d, tmp);
  return op + 1;
}

const Op* cvtaFromGeneric(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const uint64_t* a = R<uint64_t>(w, op->a);
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  alignas(64) uint64_t tmp[32];
  for (int i = 0; i < 32; ++i) {
    switch (op->aux) {
      case 1: tmp[i] = a[i] - sh; break;
      case 2: tmp[i] = a[i] - (lo + uint64_t(i) * w.localStride); break;
      default: tmp[i] = a[i] - pb; break;
    }
  }
  if (op->f == 4) h::store<uint32_t>(w, op->d, [&](int i) { return uint32_t(tmp[i]); });
  else h::storeLanes<uint64_t>(w, op->d, tmp);
  return op + 1;
}

const Op* isspacep(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const uint64_t* a = R<uint64_t>(w, op->a);
  uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
  uint64_t lo = reinterpret_cast<uint64_t>(w.local);
  uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
  const MemoryValidator& mv = *cta.job->lp.memory;
  h::store<uint8_t>(w, op->d, [&](int i) -> uint8_t {
    uint64_t x = a[i];
    bool s = x - sh < cta.sharedBytes;
    bool l = x - (lo + uint64_t(i) * w.localStride) < w.localStride;
    bool p = x - pb < cta.job->paramBuffer.size();
    switch (op->aux) {
      case 1: return s;
      case 2: return l;
      case 3: return p;
      default: return !s && !l && !p && mv.check(x, 1, false);
    }
  });
  return op + 1;
}

const Op* prmt(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  uint32_t mode = op->aux;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint64_t x = (uint64_t(b[i]) << 32) | a[i];
    uint8_t bytes[8];
    for (int k = 0; k < 8; ++k) bytes[k] = uint8_t(x >> (8 * k));
    uint32_t s = c[i];
    uint32_t r = 0;
    if (mode == 0) {
      for (int k = 0; k < 4; ++k) {
        uint32_t sel = (s >> (4 * k)) & 15;
        uint8_t v = bytes[sel & 7];
        if (sel & 8) v = (v & 0x80) ? 0xff : 0;
        r |= uint32_t(v) << (8 * k);
      }
      return r;
    }
    uint32_t n = s & 3;
    static const uint8_t f4e[4][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}};
    static const uint8_t b4e[4][4] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}};
    static const uint8_t rc8[4][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
    static const uint8_t ecl[4][4] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}};
    static const uint8_t ecr[4][4] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}};
    static const uint8_t rc16[4][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}};
    const uint8_t(*t)[4] = mode == 1 ? f4e : mode == 2 ? b4e : mode == 3 ? rc8 : mode == 4 ? ecl : mode == 5 ? ecr : rc16;
    for (int k = 0; k < 4; ++k) r |= uint32_t(bytes[t[n][k]]) << (8 * k);
    return r;
  });
  return op + 1;
}

const Op* lop3(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  uint32_t lut = uint32_t(op->imm);
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t x = a[i], y = b[i], z = c[i], r = 0;
    if (lut & 0x01) r |= ~x & ~y & ~z;
    if (lut & 0x02) r |= ~x & ~y & z;
    if (lut & 0x04) r |= ~x & y & ~z;
    if (lut & 0x08) r |= ~x & y & z;
    if (lut & 0x10) r |= x & ~y & ~z;
    if (lut & 0x20) r |= x & ~y & z;
    if (lut & 0x40) r |= x & y & ~z;
    if (lut & 0x80) r |= x & y & z;
    return r;
  });
  return op + 1;
}

const Op* dp4a(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  bool sa = op->aux & 1, sb = op->aux & 2;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    int64_t acc = (sa || sb) ? int64_t(int32_t(c[i])) : int64_t(c[i]);
    for (int k = 0; k < 4; ++k) {
      int32_t x = sa ? int32_t(int8_t(a[i] >> (8 * k))) : int32_t(uint8_t(a[i] >> (8 * k)));
      int32_t y = sb ? int32_t(int8_t(b[i] >> (8 * k))) : int32_t(uint8_t(b[i] >> (8 * k)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  });
  return op + 1;
}

const Op* dp2a(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  bool sa = op->aux & 1, sb = op->aux & 2, hi = op->aux & 4;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    int64_t acc = (sa || sb) ? int64_t(int32_t(c[i])) : int64_t(c[i]);
    for (int k = 0; k < 2; ++k) {
      int32_t x = sa ? int32_t(int16_t(a[i] >> (16 * k))) : int32_t(uint16_t(a[i] >> (16 * k)));
      uint32_t bb = b[i] >> (hi ? 16 : 0);
      int32_t y = sb ? int32_t(int8_t(bb >> (8 * k))) : int32_t(uint8_t(bb >> (8 * k)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  });
  return op + 1;
}

const Op* fns(Warp& w, const Op* op) {
  const uint32_t* mask = R<uint32_t>(w, op->a);
  const uint32_t* base = R<uint32_t>(w, op->b);
  const int32_t* off = R<int32_t>(w, op->c);
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t m = mask[i], b = base[i];
    int32_t o = off[i];
    if (b > 31) return 0xffffffffu;
    if (o == 0) return ((m >> b) & 1) ? b : 0xffffffffu;  // offset 0: the base bit itself
    if (o > 0) {
      int n = o;
      for (uint32_t p = b; p < 32; ++p)
        if ((m >> p) & 1 && --n == 0) return p;
    } else {
      int n = -o;
      for (int p = int(b); p >= 0; --p)
        if ((m >> p) & 1 && --n == 0) return uint32_t(p);
    }
    return 0xffffffffu;
  });
  return op + 1;
}

const Op* bmsk(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  bool wrap = op->aux & 1;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t pos = wrap ? a[i] & 31 : std::min(a[i], 32u);
    uint32_t len = wrap ? b[i] & 31 : std::min(b[i], 32u);
    uint64_t m = ((uint64_t(1) << len) - 1) << pos;
    return uint32_t(m);
  });
  return op + 1;
}

const Op* szext(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  bool sgn = op->aux & 1, wrap = op->aux & 2;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t n = wrap ? b[i] & 31 : std::min(b[i], 32u);
    if (n >= 32) return a[i];
    if (n == 0) return 0;
    uint32_t v = a[i] & ((1u << n) - 1);
    if (sgn && ((v >> (n - 1)) & 1)) v |= ~((1u << n) - 1);
    return v;
  });
  return op + 1;
}

// Device-side malloc/free: the driver's heap (HostServices), one call per executing lane in lane order.
const Op* deviceMalloc(Warp& w, const Op* op) {
  const uint64_t* size = R<uint64_t>(w, op->a);
  uint64_t* out = R<uint64_t>(w, op->d);
  HostServices& host = *w.cta->job->host;
  h::forActive(w.exec, [&](int i) { out[i] = size[i] ? host.deviceMalloc(size[i]) : 0; });
  return op + 1;
}

const Op* deviceFree(Warp& w, const Op* op) {
  const uint64_t* ptr = R<uint64_t>(w, op->a);
  HostServices& host = *w.cta->job->host;
  h::forActive(w.exec, [&](int i) {
    if (ptr[i]) host.deviceFree(ptr[i]);
  });
  return op + 1;
}

// ---- CUDA graph conditional nodes (issue 17) ----
const Op* graphSetConditional(Warp& w, const Op* op) {
  const uint64_t* handle = R<uint64_t>(w, op->a);
  const uint32_t* value = R<uint32_t>(w, op->b);
  HostServices& host = *w.cta->job->host;
  h::forActive(w.exec, [&](int i) { host.setGraphConditional(handle[i], value[i]); });
  return op + 1;
}

}  // namespace ctl
}  // namespace ptx::exec
