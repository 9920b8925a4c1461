// Registers in CPU registers (docs/native-tier.md, "Registers"): a compiled kernel's accesses to the warp's register
// file at constant offsets go to stack copies of the registers it uses, which SROA and mem2reg turn into SSA values;
// the register file in memory is brought up to date before every call that could read it and at every exit, and the
// copies are reloaded after every call that could write it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace ptx::exec::native {

struct PromotionStats {
  uint32_t slots = 0;        // register-file ranges promoted (each a stack copy)
  uint32_t memorySlots = 0;  // ranges left in memory: accessed at offsets only known at run time
  uint32_t calls = 0;        // calls that the copies are written back before and reloaded after
  uint32_t forwarded = 0;    // forwardStackConstants' loads replaced
  std::string refused;       // non-empty: nothing was promoted, and why
};

// Replaces loads from the kernel's stack objects with the constant that the object's one store there wrote, where
// that store dominates the load and nothing else writes those bytes: handlers copy their op's fields into operand
// views on the stack (FoldOps makes the stored fields constants), and the register offsets read back from them must
// be constants for promoteRegisters. GVN does not do it: an atomic acquire load (the memory validator's) between the
// store and the load is, for LLVM, a write to every location, even a stack object whose address never escapes.
// Returns the loads replaced.
uint32_t forwardStackConstants(llvm::Function& kernel);

// Promotes the register-file accesses of `kernel` (a compiled kernel: its first argument is the Warp). Run after the
// handlers are inlined and their op fields folded, so that register offsets are constants.
PromotionStats promoteRegisters(llvm::Function& kernel);

// Which functions of the handler units may read or write a warp's register file (through a Warp's rf field,
// directly or through what they call): calls of the others need no write-back of the kernel's register copies.
// Record every unit before its functions are bound or renamed (compiler.cpp: prepareUnit), name it after, then
// mark the linked module.
class RegisterFileUsers {
 public:
  void record(llvm::Module& unit, size_t index);
  void nameAfterPreparing(size_t index);
  // `isInterpreterFunction`: whether a function that no unit defines is the interpreter's (assumed to touch
  // registers) rather than the C or C++ library's
  void mark(llvm::Module& linked, const std::function<bool(const std::string&)>& isInterpreterFunction);

 private:
  struct Node {
    bool direct = false;                                 // reads an rf field, or calls through a pointer
    std::vector<const llvm::Function*> calleeFunctions;  // until the unit is named
    std::vector<std::string> callees;                    // their names after preparing
    std::string name;                                    // after preparing
  };
  std::map<std::pair<size_t, const llvm::Function*>, Node> nodes_;
};

// The attribute RegisterFileUsers::mark gives functions that never touch a register file.
constexpr const char* kRegistersUntouched = "cuemu-registers-untouched";

// Marks NoInline the functions of a handler unit that reach the register file of another warp than the one they
// are given (barrier releases write bar.red results into every waiting warp's registers): inlined, their stores
// would bypass the kernel's register copies; called, the copies are written back before and reloaded after.
void keepOtherWarpsOutOfLine(llvm::Module& unit);

}  // namespace ptx::exec::native
