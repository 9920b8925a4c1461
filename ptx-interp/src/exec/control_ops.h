// Typed operand views of the control-flow ops (control.cpp's handlers): what an Op's untyped fields (a..f, imm,
// aux) mean for each family, named. Each view is the one place that packs its fields into an Op (into: the
// lowering) and reads them back (of: the handler), so a handler never decodes aux bits of its own. The other
// classes' views live with their handlers (ptx-interp/README.md: "Where an instruction lives").
#pragma once

#include "exec/engine.h"

#include <cstdint>

namespace ptx::exec::ctl {

// braCond and guard: the lanes whose predicate register, possibly negated, is true branch / execute. toBarrier
// (braCond, rewrite branch-to-barrier): the target is a reconvergence op that runs the bar.sync after it
// (reconvThenBarrier). threadConstant (braCond and exitWhere, rewrite thread-constants): the predicate is one of the
// entry's thread constants, the same in every CTA of a launch (what barrier credits may remember across CTAs).
struct PredicateTest {
  uint32_t predicate = 0;  // predicate register
  bool negated = false;
  bool toBarrier = false;
  bool threadConstant = false;

  static PredicateTest of(const Op& op) { return {op.a, (op.aux & 1) != 0, (op.aux & 2) != 0, (op.aux & 4) != 0}; }
  // The lanes of w where the test holds (all 32; callers mask them with the lanes they care about).
  [[gnu::always_inline]] uint32_t lanes(const Warp& w) const { return lanesOf(predMask(w.reg<uint8_t>(predicate))); }
  // ... given the lanes where the predicate's bytes are nonzero
  [[gnu::always_inline]] uint32_t lanesOf(uint32_t predicateLanes) const {
    return negated ? ~predicateLanes : predicateLanes;
  }
  void into(Op& op) const {
    op.a = predicate;
    op.aux = (negated ? 1 : 0) | (toBarrier ? 2 : 0) | (threadConstant ? 4 : 0);
  }
};

// barSyncPlain (rewrite plain-barriers): the barrier id, and whether the op after it may start a run ahead of the
// barrier (barrier credits: a branch, a reconvergence op or another plain bar.sync), marked after lowering.
struct PlainBarrier {
  uint32_t id = 0;
  bool runsAhead = false;

  static PlainBarrier of(const Op& op) { return {op.aux & 0xff, (op.aux & 0x100) != 0}; }
  void into(Op& op) const { op.aux = id | (runsAhead ? 0x100 : 0); }
};

// brx.idx: each lane jumps to entry `index` of a jump table (Program::brxTables); the reconvergence op is rpc.
struct IndexedBranch {
  uint32_t index = 0;  // u32 index register
  uint32_t table = 0;  // Program::brxTables index

  static IndexedBranch of(const Op& op) { return {op.a, op.aux}; }
  void into(Op& op) const {
    op.a = index;
    op.aux = table;
  }
};

// call: the call site (Program::calls: callee, argument and result copies); the callee's entry is the op's target.
struct CallOperands {
  uint32_t site = 0;

  static CallOperands of(const Op& op) { return {op.aux}; }
  void into(Op& op) const { op.aux = site; }
};

// bar.sync / bar.arrive / bar.red: barrier id and thread count registers (count 0: every live thread of the CTA);
// the reductions combine a predicate register, possibly negated, into a u32 (popc) or predicate result register.
// The kinds' values are what Warp::barrierRedOp records, plus one.
struct BarrierOperands {
  enum Kind : uint8_t { Sync = 0, Arrive = 1, RedPopc = 2, RedAnd = 3, RedOr = 4 };
  Kind kind = Sync;
  uint32_t id = 0;         // u32 register
  uint32_t count = 0;      // u32 register, 0: none
  uint32_t predicate = 0;  // reductions: the predicate register
  bool negated = false;
  uint32_t result = 0;  // reductions: the destination register

  bool isReduction() const { return kind >= RedPopc; }
  bool isPlainSync() const { return kind == Sync && count == 0; }
  static BarrierOperands of(const Op& op) {
    return {Kind(op.aux & 0xff), op.a, op.b, op.c, ((op.aux >> 8) & 1) != 0, op.d};
  }
  void into(Op& op) const {
    op.a = id;
    op.b = count;
    op.c = predicate;
    op.d = result;
    op.aux = uint32_t(kind) | (negated ? 256 : 0);
  }
};

// trap / brkpt, and the trap that stands for an instruction the interpreter cannot run (its message in
// Program::messages).
struct TrapOperands {
  enum Kind : uint8_t { Trap = 0, Brkpt = 1, Unsupported = 2 };
  Kind kind = Trap;
  uint32_t message = 0;  // Unsupported: Program::messages index

  static TrapOperands of(const Op& op) { return {Kind(op.aux), uint32_t(op.imm)}; }
  void into(Op& op) const {
    op.aux = kind;
    op.imm = int64_t(message);
  }
};

// The generic address of a local or parameter variable of the current function's frame: frame + offset into
// `result`, of `bytes` (4 or 8).
struct LocalAddress {
  uint32_t result = 0;
  int64_t offset = 0;
  uint32_t bytes = 8;

  static LocalAddress of(const Op& op) { return {op.d, op.imm, op.f}; }
  void into(Op& op) const {
    op.d = result;
    op.imm = offset;
    op.f = bytes;
  }
};

// A call of one of the driver's built-in functions (isa/control.cpp: kBuiltinFunctions): its argument registers in
// order (the zero register past its count) and its result register (0: none).
struct BuiltinCallOperands {
  uint32_t args[4] = {};
  uint32_t result = 0;

  static BuiltinCallOperands of(const Op& op) { return {{op.a, op.b, op.c, op.e}, op.d}; }
  void into(Op& op) const {
    op.a = args[0];
    op.b = args[1];
    op.c = args[2];
    op.e = args[3];
    op.d = result;
  }
};

// A call of the device runtime (CUDA dynamic parallelism): the call site (Program::runtimeSites: the function, its
// arguments and result in the caller's frame).
struct RuntimeCallOperands {
  uint32_t site = 0;

  static RuntimeCallOperands of(const Op& op) { return {op.aux}; }
  void into(Op& op) const { op.aux = site; }
};

}  // namespace ptx::exec::ctl
