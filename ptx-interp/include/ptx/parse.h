// Parsing PTX text into a ptx::Module.
#pragma once

#include <memory>
#include <string_view>

#include "ptx/diag.h"
#include "ptx/ir.h"

namespace ptx {

struct ParseOptions {
  std::string_view fileName = "<ptx>";  // used in diagnostics
  size_t maxErrors = 100;
  // Hard limits so that hostile input cannot make the parser allocate without bound.
  size_t maxInputBytes = size_t(1) << 30;
  uint64_t maxVariableBytes = uint64_t(1) << 32;  // largest initialised/declared array
  unsigned maxNesting = 64;                       // nested { } blocks and initializer braces
};

// Parses `text` (need not be NUL-terminated). Syntax and name-resolution errors go to `diags`; on any error the
// returned module may be partial and must not be executed. Never throws for bad input.
std::unique_ptr<Module> parseModule(std::string_view text, Diagnostics& diags, const ParseOptions& options = {});

// Lookup helpers shared by the parser, the checker and the printer.
Mod findMod(std::string_view token);                          // ".rn" -> Mod::rn; Mod::count_ if unknown
Type findType(std::string_view token);                        // ".u32" -> Type::u32; Type::none if unknown
bool findSpecialReg(std::string_view name, SpecialReg& out);  // "%tid"

}  // namespace ptx
