// Lowering: checked PTX IR -> Program (op streams, layouts, kernel and global descriptions).
#pragma once

#include "exec/engine.h"
#include "ptx/check.h"
#include "ptx/ir.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ptx::exec {

// Returns nullptr and sets `error` ("line N: message") when the module uses something the interpreter cannot run.
// `rewrites`: the rewrites it may use (ptx/rewrites.def bits); `contractMulAdd`: CompileOptions::contractMulAdd.
std::unique_ptr<Program> lowerModule(const ptx::Module& module, std::string& error, uint32_t rewrites = kAllRewrites,
                                     bool contractMulAdd = true);

namespace lowering {
// What a body refers to that reachability needs (KernelLowerer::collectReachable and addressesTakenIn read it from
// the body itself): functions named by operands (callees or not; declarations as written), those of them other
// than a call's callee (addresses taken), module .shared variables, and whether it makes an indirect call.
struct BodyRefs {
  bool indirectCall = false;
  std::vector<uint32_t> functions, addressTaken, sharedGlobals;
};
BodyRefs bodyRefs(const ptx::Module& m, const ptx::Function& fn);
}  // namespace lowering

// The entry bodies a lazy load keeps as text (ptx::parseAndCheck with a KeepEntryBody: `keep`), and what each
// refers to, for the reachability of kernels whose body is not parsed again yet.
struct KeptKernelBodies {
  bool keep(const ptx::Module& module, uint32_t function);
  ptx::KeptBodies bodies;
  std::map<uint32_t, lowering::BodyRefs> refs;  // the kept bodies that refer to something
};

// Lazy lowering: the module-level program (globals; the kernels as declared, static shared size included) that
// keeps `module` and lowers each kernel on first use.
std::unique_ptr<Program> describeForLazyLowering(std::unique_ptr<ptx::Module> module, std::string& error,
                                                 uint32_t rewrites = kAllRewrites, KeptKernelBodies kept = {},
                                                 bool contractMulAdd = true);
// The code of `kernel`: the program itself (codeKernel = kernel) when lowered eagerly, else the kernel's own program
// (codeKernel = 0), lowered now if it was not yet. Thread-safe: two threads asking first lower it once. A kernel
// whose lowering fails gets a program whose kernel carries the error as `unsupported` (its launches fail with it).
const Program& loweredKernel(const Program& program, int kernel, int& codeKernel);
// The program whose code came from PTX line `ptxLine`: `program` itself, or under lazy lowering the kernel's own
// program that holds that line's source information (source_lines.cpp); `program` when none does.
const Program& programOfLine(const Program& program, uint32_t ptxLine);

// `.target map_f64_to_f32`: demotes the module's double-precision instructions to single precision (map_f64.cpp).
// Runs after the check (which sees the module as written) and before lowerModule.
void demoteF64ToF32(ptx::Module& module);

}  // namespace ptx::exec
