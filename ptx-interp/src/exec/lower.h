// Lowering: checked PTX IR -> Program (op streams, layouts, kernel and global descriptions).
#pragma once

#include "exec/engine.h"
#include "ptx/ir.h"

#include <memory>
#include <string>

namespace ptx::exec {

// Returns nullptr and sets `error` ("line N: message") when the module uses something the interpreter cannot run.
std::unique_ptr<Program> lowerModule(const ptx::Module& module, std::string& error);

}  // namespace ptx::exec
