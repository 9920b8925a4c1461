// The GPU's special-function unit for .f32 operands: ex2.approx, rcp.approx and rsqrt.approx as an H100 computes
// them, bit for bit (mufu.cpp; tables recorded on the GPU by tools/gpu-probe/mufu27). Operands and results are
// f32 bit patterns; ftz selects the .ftz form (subnormal operands read as zero, subnormal results flushed).
#pragma once

#include <cstdint>

namespace ptx::exec::num {

uint32_t ex2ApproxF32(uint32_t x, bool ftz);
uint32_t rcpApproxF32(uint32_t x, bool ftz);
uint32_t rsqrtApproxF32(uint32_t x, bool ftz);

// The same for the 32 lanes of a warp (out[i] = f(x[i]), every lane; the functions are pure): what the handlers call,
// since the tables' memory reads of 32 lanes then overlap.
void ex2ApproxF32(const uint32_t* x, uint32_t* out, bool ftz);
void rcpApproxF32(const uint32_t* x, uint32_t* out, bool ftz);
void rsqrtApproxF32(const uint32_t* x, uint32_t* out, bool ftz);

}  // namespace ptx::exec::num
