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

// barrier(), before bar.sync/barrier.sync/bar.red: what the code was compiled to check (checkedAccesses() then).
struct CheckedBarrier {
  uint32_t checks = 0;

  static CheckedBarrier of(const Op& op) { return {op.aux}; }
  void into(Op& op) const { op.aux = checks; }
};
const Op* barrier(Warp& w, const Op* op);
// Before bar.warp.sync (__syncwarp) while shared hazards are checked: the warp's lanes are ordered from here on.
const Op* warpSync(Warp& w, const Op* op);
// Before membar/fence of gpu or system scope while fences are checked (kCheckFences).
const Op* fence(Warp& w, const Op* op);

}  // namespace ptx::exec::checking
