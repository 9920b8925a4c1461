// Lowering: checked PTX IR -> Program (op streams, layouts, kernel and global descriptions).
#pragma once

#include "exec/engine.h"
#include "ptx/ir.h"

#include <memory>
#include <string>

namespace ptx::exec {

// Returns nullptr and sets `error` ("line N: message") when the module uses something the interpreter cannot run.
// `rewrites`: the rewrites it may use (ptx/rewrites.def bits).
std::unique_ptr<Program> lowerModule(const ptx::Module& module, std::string& error, uint32_t rewrites = kAllRewrites);

// `.target map_f64_to_f32`: demotes the module's double-precision instructions to single precision (map_f64.cpp).
// Runs after the check (which sees the module as written) and before lowerModule.
void demoteF64ToF32(ptx::Module& module);

}  // namespace ptx::exec
