// Control-flow, synchronisation, warp-level and miscellaneous handlers (implemented in control.cpp).
#pragma once

#include "exec/engine.h"
#include "ptx/ir.h"

namespace ptx::exec::ctl {

const Op* braUniform(Warp& w, const Op* op);   // target
const Op* braCond(Warp& w, const Op* op);      // a = predicate, aux&1 = negated, target, rpc
const Op* brxIdx(Warp& w, const Op* op);       // a = u32 index register, aux = table index, rpc
const Op* reconv(Warp& w, const Op* op);
const Op* exitLanes(Warp& w, const Op* op);    // exit / ret of a kernel for the executing lanes
const Op* kernelEnd(Warp& w, const Op* op);
const Op* funcEnd(Warp& w, const Op* op);      // return from a called function
const Op* call(Warp& w, const Op* op);         // aux = call site, target = callee entry
const Op* guard(Warp& w, const Op* op);        // a = predicate, aux&1 = negated, target = op after the unguard
const Op* unguard(Warp& w, const Op* op);
const Op* barSync(Warp& w, const Op* op);      // a = barrier id reg, b = thread count reg (0 = all), aux: kind
const Op* barWarpSync(Warp& w, const Op* op);
const Op* fence(Warp& w, const Op* op);
const Op* nop(Warp& w, const Op* op);
const Op* nanosleep(Warp& w, const Op* op);
const Op* trap(Warp& w, const Op* op);         // aux: 0 trap, 1 brkpt, 2 unsupported (message in program)
const Op* vote(Warp& w, const Op* op);         // aux: 0 all 1 any 2 uni 3 ballot; bit 4 negate pred; c = membermask
const Op* activemask(Warp& w, const Op* op);
const Op* shfl(Warp& w, const Op* op);         // aux: mode; a src, b lane, c clamp, e membermask, f pred out
const Op* matchSync(Warp& w, const Op* op);    // aux: 0 any, 1 all; imm: size 4/8
const Op* reduxSync(Warp& w, const Op* op);    // aux: op kind
const Op* electSync(Warp& w, const Op* op);
const Op* sreg(Warp& w, const Op* op);         // aux: SpecialReg, e: component
Handler sregHandler(ptx::SpecialReg sr, uint32_t component);  // sreg or a specialised form (%tid, %ctaid)
const Op* localAddr(Warp& w, const Op* op);    // d(u32/u64 per f) = frame + imm
const Op* cvtaToGeneric(Warp& w, const Op* op);    // aux: space (1 shared 2 local 3 param), f: addr size
const Op* cvtaFromGeneric(Warp& w, const Op* op);  // aux: space
const Op* isspacep(Warp& w, const Op* op);         // aux: space (0 global 1 shared 2 local 3 param 4 const)
const Op* vprintf(Warp& w, const Op* op);          // a = fmt generic ptr reg, b = args ptr reg, d = result reg
const Op* assertFail(Warp& w, const Op* op);       // a..e: message, file, line, function regs
const Op* deviceMalloc(Warp& w, const Op* op);     // a = size reg, d = pointer reg (HostServices::deviceMalloc)
const Op* deviceFree(Warp& w, const Op* op);       // a = pointer reg
// CUDA graph conditional nodes (issue 17)
const Op* graphSetConditional(Warp& w, const Op* op);  // a = handle reg, b = value reg
const Op* prmt(Warp& w, const Op* op);
const Op* lop3(Warp& w, const Op* op);
const Op* dp4a(Warp& w, const Op* op);  // aux bit0: a signed, bit1: b signed
const Op* dp2a(Warp& w, const Op* op);  // aux bit0/1 signedness, bit2: hi
const Op* fns(Warp& w, const Op* op);
const Op* bmsk(Warp& w, const Op* op);  // aux: 1 = wrap
const Op* szext(Warp& w, const Op* op); // aux: 1 = signed, 2 = wrap

}  // namespace ptx::exec::ctl
