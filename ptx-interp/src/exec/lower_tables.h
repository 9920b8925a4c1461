// Handler selection for the instruction families with many (type x type x mode) specialisations. Split from
// lower.cpp so the template instantiations compile in parallel. Each returns nullptr when the combination is not
// supported (the caller reports the instruction).
#pragma once

#include "exec/engine.h"
#include "exec/memory.h"
#include "exec/numerics.h"
#include "ptx/ir.h"

namespace ptx::exec {

// cvt with destination type d and source type s.
Handler cvtHandler(ptx::Type d, ptx::Type s, num::Round round, bool intRound, bool sat, bool ftz);

// ld/st: memory type m (size and signedness), register size regSize, vector count n, address register size
// addrSize (4 or 8).
Handler ldHandler(mem::Space space, unsigned addrSize, ptx::Type m, unsigned regSize, unsigned n);
// Loads after `.pragma "used_bytes_mask"` (registers as wide as the elements; elemSize 1, 2, 4 or 8; n 1, 2, 4).
Handler ldMaskedHandler(mem::Space space, unsigned addrSize, unsigned elemSize, unsigned n);
Handler stHandler(mem::Space space, unsigned addrSize, ptx::Type m, unsigned regSize, unsigned n);
Handler ldParamHandler(ptx::Type m, unsigned regSize);
// Scalar global ld/st whose address is the sum of two 64-bit registers a + b (+ imm): the fused form of an address
// add and its only use. c names the add's destination (the per-lane path computes the sum there).
Handler ldIndexedHandler(ptx::Type m, unsigned regSize);
Handler stIndexedHandler(ptx::Type m, unsigned regSize);
// base + (sign- or zero-extended 32-bit index << shift): the fused mul.wide, add.s64 and access
Handler ldScaledHandler(ptx::Type m, unsigned regSize, bool signedIndex);
Handler stScaledHandler(ptx::Type m, unsigned regSize, bool signedIndex);

// atom/red: op kind, value type t.
Handler atomHandler(mem::Space space, unsigned addrSize, ptx::Type t, mem::AOp op);

// cvt to f16x2/bf16x2/e4m3x2/e5m2x2 (from two f32), tf32, and the .relu/.satfinite forms of f16/bf16; sets the
// op's aux and the number of source operands.
Handler cvtNarrowHandler(ptx::Type d, ptx::Type s, num::Round round, bool tiesAway, bool relu, bool satfinite,
                         uint32_t* aux, unsigned* sources);

// f16/bf16 scalar and packed arithmetic.
Handler halfHandler(ptx::Opcode opc, ptx::Type t, num::Round round, bool ftz, bool sat, bool relu);

// Video instructions (scalar and SIMD): sets the op's aux (modes) and imm (selectors); nullptr for an unknown form.
Handler videoHandler(const ptx::Function& fn, const ptx::Instruction& in, uint32_t* aux, uint64_t* imm);

}  // namespace ptx::exec
