// The GPU's special-function unit for .f32 operands: ex2.approx, rcp.approx and rsqrt.approx as an H100 computes
// them, bit for bit (mufu.cpp; tables recorded on the GPU by tools/gpu-probe/mufu27). Operands and results are
// f32 bit patterns; ftz selects the .ftz form (subnormal operands read as zero, subnormal results flushed).
#pragma once

#include <cstdint>

namespace ptx::exec::num {

uint32_t ex2ApproxF32(uint32_t x, bool ftz);
uint32_t rcpApproxF32(uint32_t x, bool ftz);
uint32_t rsqrtApproxF32(uint32_t x, bool ftz);

}  // namespace ptx::exec::num
