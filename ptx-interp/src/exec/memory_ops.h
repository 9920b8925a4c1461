// Typed operand views of the memory and atomic ops (memory.h's handlers, isa/memory.cpp and isa/atomic.cpp's
// lowering): what an Op's untyped fields (a..f, imm, aux) mean for each family, named. Each view is the one place
// that packs its fields into an Op (into: the lowering) and reads them back (of: the handler). The state space and
// the address size are not operands: they are template arguments of the handler the lowering picks (the checking
// ops, which serve every space, carry the Space below as an operand: checking.h).
#pragma once

#include "exec/engine.h"

#include <cstdint>

namespace ptx::exec::mem {

// The state space of an access as the handlers see it (memory.h: resolve). Local: absolute offset in the thread's
// local memory; Frame: offset relative to the current function's frame.
enum Space : uint8_t { Global, Shared, Local, Frame, Param, Generic };

// ld / ldu / st: element k of the access (a vector's k-th, k = 0 for a scalar) in register values[k], written by
// loads and read by stores; the address is register `address` (32 or 64 bits by the handler) plus `offset`.
// Scalar shared accesses carry the tag of their base register's layout slot (memory.h: sharedLayout).
struct Access {
  uint32_t address = 0;
  int64_t offset = 0;
  uint32_t values[4] = {};
  uint32_t layoutTag = 0;

  static Access of(const Op& op) { return {op.a, op.imm, {op.d, op.b, op.c, op.e}, op.aux}; }
  void into(Op& op) const {
    op.a = address;
    op.imm = offset;
    op.d = values[0];
    op.b = values[1];
    op.c = values[2];
    op.e = values[3];
    op.aux = layoutTag;
  }
};

// A load after `.pragma "used_bytes_mask"`: an Access whose bytes j with bit j of usedBytes clear never fault.
struct MaskedLoad {
  uint32_t address = 0;
  int64_t offset = 0;
  uint32_t values[4] = {};
  uint32_t usedBytes = 0;

  static MaskedLoad of(const Op& op) { return {op.a, op.imm, {op.d, op.b, op.c, op.e}, op.aux}; }
  void into(Op& op) const { Access{address, offset, {values[0], values[1], values[2], values[3]}, usedBytes}.into(op); }
};

// ld.param of an entry's parameter by name (the same in every lane): `count` elements from byte `offset` of the
// parameter buffer into values[0..count).
struct ParamLoad {
  int64_t offset = 0;
  uint32_t values[4] = {};
  uint32_t count = 1;

  static ParamLoad of(const Op& op) { return {op.imm, {op.d, op.b, op.c, op.e}, op.f}; }
  void into(Op& op) const {
    op.imm = offset;
    op.d = values[0];
    op.b = values[1];
    op.c = values[2];
    op.e = values[3];
    op.f = count;
  }
};

// A scalar global ld/st with its address arithmetic folded in (the address-adds and scaled-indices rewrites;
// memory.h: AddrMode): base + index, or base + (index << shift) with a 32-bit index, plus offset. `sum` is the
// folded add's own destination register, which nothing else reads: the per-lane path writes the address there, as
// the add would have.
struct FusedAccess {
  uint32_t base = 0;
  uint32_t index = 0;
  uint32_t shift = 0;  // scaled forms
  uint32_t sum = 0;
  int64_t offset = 0;
  uint32_t value = 0;

  static FusedAccess of(const Op& op) { return {op.a, op.b, op.f, op.c, op.imm, op.d}; }
  void into(Op& op) const {
    op.a = base;
    op.b = index;
    op.f = shift;
    op.c = sum;
    op.imm = offset;
    op.d = value;
  }
};

// shared-add-steps: x = [base + first], y = [base + second], sum = x + y, [base + first] = sum; the layout slot of
// the base register (a prologue slot, kLayoutReuse); target: the op after the four.
struct SharedAddStep {
  uint32_t base = 0, x = 0, y = 0, sum = 0;
  uint32_t first = 0, second = 0;
  uint32_t layoutTag = 0;

  static SharedAddStep of(const Op& op) { return {op.a, op.b, op.c, op.d, uint32_t(op.imm), op.e, op.aux}; }
  void into(Op& op) const {
    op.a = base;
    op.b = x;
    op.c = y;
    op.d = sum;
    op.imm = int64_t(first);
    op.e = second;
    op.aux = layoutTag;
  }
};

// A fused chain of shared-memory inner-product steps (the shared-fma-chains rewrite; memory.h: fmaSharedChain):
// Program::fmaSteps[firstStep, firstStep + steps) accumulate from register `accumulator` into `result`; the op's
// target is where the fast path continues, after the original instructions' ops. largestXOffset/largestYOffset: the
// largest of the steps' offsets, which the one-base form checks (memory.h: fmaSharedChainOneBaseAvx).
struct SharedFmaChain {
  uint32_t firstStep = 0;
  uint32_t steps = 0;
  uint32_t accumulator = 0;
  uint32_t result = 0;
  uint32_t largestXOffset = 0, largestYOffset = 0;

  static SharedFmaChain of(const Op& op) { return {uint32_t(op.imm), op.f, op.c, op.d, op.a, op.b}; }
  void into(Op& op) const {
    op.imm = int64_t(firstStep);
    op.f = steps;
    op.c = accumulator;
    op.d = result;
    op.a = largestXOffset;
    op.b = largestYOffset;
  }
};

// atom / red (one element; vector atomics are one op per element): the address is register `address` (32 or 64
// bits by the handler) plus `offset`; `operand` is b, `compare` cas's second operand (the zero register
// otherwise); the old value goes to `result`, 0 for red.
struct AtomicOperands {
  uint32_t address = 0;
  int64_t offset = 0;
  uint32_t operand = 0;
  uint32_t compare = 0;
  uint32_t result = 0;  // 0: no result (red)

  static AtomicOperands of(const Op& op) { return {op.a, op.imm, op.b, op.c, op.d}; }
  void into(Op& op) const {
    op.a = address;
    op.imm = offset;
    op.b = operand;
    op.c = compare;
    op.d = result;
  }
};

}  // namespace ptx::exec::mem
