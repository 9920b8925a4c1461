// The native tier's cache keys (docs/native-tier.md, "Cache"), computed by the interpreter's side of the tier
// (tier.cpp) without the compiler's library: a process whose kernels are all in the cache loads them without ever
// loading LLVM (object_loader.h). The compiler writes the code it makes under the key it is given
// (CuemuNativeOptions::cacheKey).
#pragma once

#include "exec/engine.h"
#include "native/abi.h"

#include <string>

namespace ptx::exec::native {

// The loaded object that holds the interpreter (libcuda.so, or a program linking ptx-interp): the compiled code
// names its functions and variables by their offset from `bias`, as the compiler's SymbolIndex does.
struct InterpreterObject {
  std::string path;
  uint64_t bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> segments;  // its loaded segments [begin, end)
  bool contains(uint64_t address) const {
    for (const auto& [begin, end] : segments)
      if (address >= begin && address < end) return true;
    return false;
  }
};
const InterpreterObject& interpreterObject();

// The host CPU as the compiler sees it: LLVM picks its target CPU and features from the CPUID leaves this reads and
// the register state the operating system enables (XCR0), so equal strings mean equal code. The same on every core.
std::string cpuIdentity();

// The key of compiling ops[0..count) (a copy of the program's ops at `base`) with `options` by the compiler library
// at `libraryPath`: SHA-256 of the tier's identity (the cache format, the ABI, the library's and the interpreter's
// files by path, size and time, the host CPU by its CPUID, the environment that changes code generation), the options
// and the ops with their addresses made relative (handlers to the interpreter's object, targets and reconvergence
// points to the op array; an op's other fields hold no addresses: lowering puts them in constant registers).
// "": not cacheable (a handler outside the interpreter's object, a target outside the program).
std::string cacheKey(const Op* ops, const Op* base, size_t count, const CuemuNativeOptions& options,
                     const std::string& libraryPath);

}  // namespace ptx::exec::native
