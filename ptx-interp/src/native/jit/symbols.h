// The interpreter's symbols in this process: where each function and variable of the object that holds the
// interpreter (libcuda.so, or a test program) is, read from its ELF symbol table. The native tier finds each op's
// handler by name in the bitcode, and binds the bitcode's mutable variables and the functions it does not compile
// to the interpreter's own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

namespace ptx::exec::native {

struct SymbolIndex {
  std::string object;  // the file read
  uint64_t bias = 0;   // where it is loaded: an address less this is the same in every process
  std::string error;   // non-empty: no symbols (the tier then calls every handler)
  // defined function and variable symbols by name (TLS excluded); 0: several symbols of the name differ
  std::unordered_map<std::string, uint64_t> byName;
  // function symbols by address, gcc's target_clones suffix (.arch_x86_64_v3, .default) removed
  std::map<uint64_t, std::string> functions;

  uint64_t address(const std::string& name) const {
    auto it = byName.find(name);
    return it == byName.end() ? 0 : it->second;
  }
};

// The symbols of the loaded object that contains `anchor` (an address in its code).
SymbolIndex readSymbols(const void* anchor);

}  // namespace ptx::exec::native
