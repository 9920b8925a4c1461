// Which `.shared` variables are the kernel's dynamic shared memory (lower.cpp, isa/memory.cpp).
#pragma once

#include "ptx/ir.h"

namespace ptx::exec::lowering {

// A `.extern .shared` variable is the kernel's dynamic shared memory unless it declares its size: a sized one
// (`.extern .shared .b8 a[260];`, as Taichi's LLVM writes its block-shared arrays) is a static allocation of that
// size, as driver 580 loads it (an H200: CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 260, launched with no dynamic bytes).
inline bool isDynamicShared(const ptx::Variable& v) {
  return v.linkage == ptx::Linkage::extern_ && (v.dims.empty() || v.dims[0] == 0);
}

}  // namespace ptx::exec::lowering
