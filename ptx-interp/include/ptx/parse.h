// Parsing PTX text into a ptx::Module.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptx/diag.h"
#include "ptx/ir.h"

namespace ptx {

// The module-scope names (variables and functions) of a parsed module in the order the parser bound them, so that
// a body parsed again later (parseEntryBody) resolves every name as it resolved where the body stands in the text.
class ModuleNames {
 public:
  struct Binding {
    SymKind kind = SymKind::None;  // Global or Function; None: not bound
    uint32_t index = 0;            // Module::globals or Module::functions
  };
  void bind(StrId name, Binding b);  // the next binding (a first one or a definition after a declaration)
  void finish();                     // after the last bind(), before lookup()
  uint32_t count() const { return count_; }
  // `name` as bound after the first `visible` bindings.
  Binding lookup(StrId name, uint32_t visible) const;

 private:
  struct Entry {
    Binding binding;
    uint32_t sequence = 0;  // bindings made before this one
  };
  std::vector<Entry> first_;                    // by StrId
  std::vector<std::pair<StrId, Entry>> later_;  // bindings that replaced another, in the order made
  uint32_t count_ = 0;
};

// Where a body stands in the text the parser read (ParseOptions::keepText).
struct BodyPlace {
  uint64_t offset = 0;        // of its '{'
  uint64_t length = 0;        // up to and with its '}'
  SourceLoc start;            // of its '{'
  uint32_t visibleNames = 0;  // ModuleNames bindings made before it
  uint32_t debugLocs = 0;     // Module::debugLocs before it (its .loc entries follow)
};

struct ParseOptions {
  std::string_view fileName = "<ptx>";  // used in diagnostics
  size_t maxErrors = 100;
  // Hard limits so that hostile input cannot make the parser allocate without bound.
  size_t maxInputBytes = size_t(1) << 30;
  uint64_t maxVariableBytes = uint64_t(1) << 32;  // largest initialised/declared array
  unsigned maxNesting = 64;                       // nested { } blocks and initializer braces
  // Lazy loading. Called after each .entry body while no error was reported; true drops the body from the module
  // (the entry keeps its header and the variables its body declares) to be parsed again by parseEntryBody.
  std::function<bool(Module& module, uint32_t function, const BodyPlace& place)> entryBodyParsed;
  ModuleNames* names = nullptr;     // receives the module-scope bindings
  std::string* keepText = nullptr;  // receives the text as the parser read it (what BodyPlace offsets refer to)
};

// Parses `text` (need not be NUL-terminated). Syntax and name-resolution errors go to `diags`; on any error the
// returned module may be partial and must not be executed. Never throws for bad input.
std::unique_ptr<Module> parseModule(std::string_view text, Diagnostics& diags, const ParseOptions& options = {});

// Parses again the body of .entry `function` that ParseOptions::entryBodyParsed dropped: `text` and `names` are
// what keepText and names received. False (with diagnostics) when it does not parse as it did the first time.
bool parseEntryBody(Module& module, uint32_t function, std::string_view text, const BodyPlace& place,
                    const ModuleNames& names, Diagnostics& diags);

// Lookup helpers shared by the parser, the checker and the printer.
Mod findMod(std::string_view token);                          // ".rn" -> Mod::rn; Mod::count_ if unknown
Type findType(std::string_view token);                        // ".u32" -> Type::u32; Type::none if unknown
bool findSpecialReg(std::string_view name, SpecialReg& out);  // "%tid"

}  // namespace ptx
