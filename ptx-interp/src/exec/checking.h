// The checking ops (ptx/checker.h): emitted before memory accesses and barriers only in code compiled while
// ptx::exec::checkedAccesses() is non-zero.
#pragma once

#include "exec/engine.h"
#include "ptx/checker.h"

namespace ptx::exec::checking {

// The rewrites code compiled now may use: without the ones that fold address arithmetic into the access (the
// checking op reads the address from its register) while checking is on; all otherwise.
uint32_t rewritesAllowed();

// Op fields of access(): a = address register, imm = offset, f = bytes, aux = what (the flags below | space).
constexpr uint32_t kAccessWrite = 1u << 8, kAccessAddr32 = 1u << 9, kAccessAtomic = 1u << 10, kAccessStrong = 1u << 11;
const Op* access(Warp& w, const Op* op);
// Before bar.sync/barrier.sync/bar.red: aux = checkedAccesses() at compile time.
const Op* barrier(Warp& w, const Op* op);
// Before bar.warp.sync (__syncwarp) while shared hazards are checked: the warp's lanes are ordered from here on.
const Op* warpSync(Warp& w, const Op* op);
// Before membar/fence of gpu or system scope while fences are checked (kCheckFences).
const Op* fence(Warp& w, const Op* op);

}  // namespace ptx::exec::checking
