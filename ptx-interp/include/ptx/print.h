// Printing a ptx::Module back to PTX text, and comparing modules (for round-trip tests).
#pragma once

#include <string>

#include "ptx/ir.h"

namespace ptx {

// PTX text that parses back to an equal module (see diffModules).
std::string printModule(const Module& module);

// Text of one operand / instruction as the printer writes it (for diagnostics and traces).
std::string printOperand(const Module& module, const Function& function, const Operand& operand);
std::string printInstruction(const Module& module, const Function& function, const Instruction& instruction);

// Structural comparison: names instead of StrIds, labels by name and target, debug locations by content.
// Returns "" when equal, else a description of the first difference.
std::string diffModules(const Module& a, const Module& b);

}  // namespace ptx
