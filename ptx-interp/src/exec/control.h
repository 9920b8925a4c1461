// Control flow (branches, reconvergence, calls, exit), barriers, traps and the services the driver provides to
// kernels (printf, assert, malloc, conditional graph handles): the handlers of the warp state machine (control.cpp).
#pragma once

#include "exec/engine.h"
#include "ptx/ir.h"

namespace ptx::exec::ctl {

const Op* braUniform(Warp& w, const Op* op);  // target
// Operands: the views of control_ops.h, named beside each handler.
const Op* braCond(Warp& w, const Op* op);  // PredicateTest; target, rpc
const Op* brxIdx(Warp& w, const Op* op);   // IndexedBranch; rpc
const Op* reconv(Warp& w, const Op* op);
const Op* reconvThenBarrier(Warp& w, const Op* op);  // reconv right before a plain bar.sync (branch-to-barrier)
const Op* exitLanes(Warp& w, const Op* op);          // exit / ret of a kernel for the executing lanes
const Op* exitWhere(Warp& w, const Op* op);  // PredicateTest: the active lanes where it holds exit (guarded-exits)
// braCond and exitWhere run by the setp that wrote their predicate (setp-branch), given the lanes where its bytes are
// nonzero in Warp::setpLanes: read back from the register, they waited for the setp's store (a tenth of a vector
// add's time). (Handler-shaped, so that the native tier compiles them into the setp, as it does the handlers.)
const Op* braCondOnSetp(Warp& w, const Op* op);
const Op* exitWhereOnSetp(Warp& w, const Op* op);
const Op* kernelEnd(Warp& w, const Op* op);
const Op* funcEnd(Warp& w, const Op* op);  // return from a called function
const Op* call(Warp& w, const Op* op);     // CallOperands; target = callee entry
const Op* guard(Warp& w, const Op* op);    // PredicateTest; target = op after the unguard
const Op* unguard(Warp& w, const Op* op);
const Op* barSync(Warp& w, const Op* op);       // BarrierOperands
const Op* barSyncPlain(Warp& w, const Op* op);  // the barrier id in aux (< 16); no count (rewrite plain-barriers)
// The bar.sync at op, plain or not (branch-to-barrier's callers: what follows a reconvergence op).
const Op* syncAt(Warp& w, const Op* op);
// Whether running op (of the ops before `end`) may pass the host thread to another warp of the CTA (barrier
// handoff: it returns that warp's next op, to run as Cta::current): the barriers, the branches and reconvergence
// ops that lead into one, and any op before such a branch (a setp that runs the branch after it: setp-branch).
bool mayHandOff(const Op* op, const Op* end);
const Op* barWarpSync(Warp& w, const Op* op);
// Independent thread scheduling (LaneGroup, engine.h): a spinning path lets the lanes that wait on the warp's stack
// go on as a group of their own (returns where, or nullptr: none wait); an op that needs the lanes `named` together
// first gathers the warp's groups (returns nullptr: run it now; else where the warp goes on meanwhile). A .sync op's
// named lanes are the first executing lane's membermask in register maskReg, or `unnamed` without one (maskReg 0).
const Op* detachWaitingLanes(Warp& w, const Op* resumeAt, const Op* backEdge);
const Op* gatherLanes(Warp& w, const Op* op, uint32_t named);
const Op* gatherMembers(Warp& w, const Op* op, uint32_t maskReg, uint32_t unnamed);
// The barrier op a warp AtBarrier waits at (what faults and checks report): where it arrived, or, after the phases
// of its barrier credits it passed, the plain bar.sync it arrived at in advance.
const Op* barrierWaitedAt(const Warp& w);
// Whether an op with this handler may start a run ahead of a barrier (barrier credits; PlainBarrier::runsAhead).
bool startsRunAhead(Handler fn);
const Op* endPrologue(Warp& w, const Op* op);  // the end of a kernel's prologue (KernelCode::prologueOp)
const Op* fence(Warp& w, const Op* op);
const Op* nop(Warp& w, const Op* op);
const Op* nanosleep(Warp& w, const Op* op);
const Op* trap(Warp& w, const Op* op);       // TrapOperands
const Op* localAddr(Warp& w, const Op* op);  // LocalAddress
// The built-in functions (BuiltinCallOperands, arguments in the callee's order)
const Op* vprintf(Warp& w, const Op* op);       // (format, arguments) -> result
const Op* assertFail(Warp& w, const Op* op);    // (message, file, line, function)
const Op* deviceMalloc(Warp& w, const Op* op);  // (size) -> pointer (HostServices::deviceMalloc)
const Op* deviceFree(Warp& w, const Op* op);    // (pointer)
// CUDA graph conditional nodes (issue 17)
const Op* graphSetConditional(Warp& w, const Op* op);  // (handle, value)

}  // namespace ptx::exec::ctl
