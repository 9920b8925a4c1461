// Control flow (branches, reconvergence, calls, exit), barriers, traps and the services the driver provides to
// kernels (printf, assert, malloc, conditional graph handles): the handlers of the warp state machine (control.cpp).
#pragma once

#include "exec/engine.h"
#include "ptx/ir.h"

namespace ptx::exec::ctl {

const Op* braUniform(Warp& w, const Op* op);  // target
const Op* braCond(Warp& w, const Op* op);     // a = predicate, aux&1 = negated, target, rpc
const Op* brxIdx(Warp& w, const Op* op);      // a = u32 index register, aux = table index, rpc
const Op* reconv(Warp& w, const Op* op);
const Op* exitLanes(Warp& w, const Op* op);  // exit / ret of a kernel for the executing lanes
const Op* kernelEnd(Warp& w, const Op* op);
const Op* funcEnd(Warp& w, const Op* op);  // return from a called function
const Op* call(Warp& w, const Op* op);     // aux = call site, target = callee entry
const Op* guard(Warp& w, const Op* op);    // a = predicate, aux&1 = negated, target = op after the unguard
const Op* unguard(Warp& w, const Op* op);
const Op* barSync(Warp& w, const Op* op);  // a = barrier id reg, b = thread count reg (0 = all), aux: kind
const Op* barWarpSync(Warp& w, const Op* op);
const Op* fence(Warp& w, const Op* op);
const Op* nop(Warp& w, const Op* op);
const Op* nanosleep(Warp& w, const Op* op);
const Op* trap(Warp& w, const Op* op);          // aux: 0 trap, 1 brkpt, 2 unsupported (message in program)
const Op* localAddr(Warp& w, const Op* op);     // d(u32/u64 per f) = frame + imm
const Op* vprintf(Warp& w, const Op* op);       // a = fmt generic ptr reg, b = args ptr reg, d = result reg
const Op* assertFail(Warp& w, const Op* op);    // a..e: message, file, line, function regs
const Op* deviceMalloc(Warp& w, const Op* op);  // a = size reg, d = pointer reg (HostServices::deviceMalloc)
const Op* deviceFree(Warp& w, const Op* op);    // a = pointer reg
// CUDA graph conditional nodes (issue 17)
const Op* graphSetConditional(Warp& w, const Op* op);  // a = handle reg, b = value reg

}  // namespace ptx::exec::ctl
