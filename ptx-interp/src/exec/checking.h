// The checking ops (ptx/checker.h): emitted before memory accesses and barriers only in code compiled while
// ptx::exec::checkedAccesses() is non-zero.
#pragma once

#include "exec/engine.h"
#include "exec/memory_ops.h"
#include "ptx/checker.h"

namespace ptx::exec::checking {

// The rewrites code compiled now may use: without the ones that fold address arithmetic into the access (the
// checking op reads the address from its register) while checking is on; all otherwise.
uint32_t rewritesAllowed();

// access(), before a memory access: `bytes` bytes at register `address` (32 or 64 bits) + offset in `space`.
struct CheckedAccess {
  enum Kind : uint8_t { Read, Write, Atomic };
  uint32_t address = 0;
  bool address32 = false;
  int64_t offset = 0;
  uint32_t bytes = 0;
  mem::Space space = mem::Global;
  Kind kind = Read;
  bool strong = false;  // a .volatile, .relaxed, .acquire or .release load or store

  static CheckedAccess of(const Op& op) {
    return {op.a,
            ((op.aux >> 8) & 1) != 0,
            op.imm,
            op.f,
            mem::Space(op.aux & 0xff),
            Kind((op.aux >> 9) & 3),
            ((op.aux >> 11) & 1) != 0};
  }
  void into(Op& op) const {
    op.a = address;
    op.imm = offset;
    op.f = bytes;
    op.aux = uint32_t(space) | (address32 ? 1u << 8 : 0) | uint32_t(kind) << 9 | (strong ? 1u << 11 : 0);
  }
};
const Op* access(Warp& w, const Op* op);

// barrier(), before bar/barrier sync, arrive and red: what the code was compiled to check (checkedAccesses() then),
// and the barrier's id and thread-count registers (0: no count).
struct CheckedBarrier {
  uint32_t checks = 0;
  uint32_t id = 0, count = 0;
  bool arrive = false;  // bar.arrive: the warp does not wait

  static CheckedBarrier of(const Op& op) { return {op.aux & 0xffff, op.a, op.b, (op.aux >> 16) != 0}; }
  void into(Op& op) const {
    op.aux = checks | (arrive ? 1u << 16 : 0);
    op.a = id;
    op.b = count;
  }
};
const Op* barrier(Warp& w, const Op* op);
// Before bar.warp.sync (__syncwarp) while shared hazards are checked: the warp's lanes are ordered from here on.
const Op* warpSync(Warp& w, const Op* op);
// collective(), before a warp collective with a membermask while synccheck runs (kCheckBarriers: a bar.warp.sync or
// vote.sync by a thread outside its own mask, as compute-sanitizer checks; kCheckWarpMasks: every mask).
struct CheckedCollective {
  uint32_t checks = 0;
  uint32_t members = 0;  // the membermask register
  WarpCollective collective = WarpCollective::WarpSync;

  static CheckedCollective of(const Op& op) { return {op.aux & 0xffff, op.a, WarpCollective(op.aux >> 16)}; }
  void into(Op& op) const {
    op.aux = checks | uint32_t(collective) << 16;
    op.a = members;
  }
};
const Op* collective(Warp& w, const Op* op);
// The checks a collective gets from code compiled now (0: none, emit no checking op).
uint32_t collectiveChecks(WarpCollective c);
// Before membar/fence of gpu or system scope while fences are checked (kCheckFences).
const Op* fence(Warp& w, const Op* op);

}  // namespace ptx::exec::checking
