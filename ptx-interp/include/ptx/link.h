// Linking PTX modules (what cuLink* does for cuemu): several PTX texts become one PTX text that the front end
// loads like any module. External declarations are resolved against the other inputs' definitions
// (.visible strong, .weak overridable, .common merged), file-local symbols that clash are renamed, debug file
// numbers are kept apart. The result is PTX, so a linked image is as inspectable as its inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptx::link {

struct Input {
  std::string name;  // for messages: file or buffer name
  std::string text;  // PTX source
};

struct Result {
  bool ok = false;
  std::string ptx;  // the linked module (NUL-free text)
  std::string log;  // one line per problem: "error   : ..." / "info    : ..."
  // Functions declared .extern that no input defines. Like driver 580's linker, the link still succeeds (the
  // log names them) and the module loads; a call to one faults when it runs.
  std::vector<std::string> undefinedFunctions;
};

// Symbols every module may use without a definition: the device runtime the interpreter provides.
bool isBuiltinExternal(std::string_view name);

// `maxRegisters` (CU_JIT_MAX_REGISTERS of the link, 0 = none) becomes a `.maxnreg` directive of every kernel
// that has none, so the limit travels with the linked PTX into the module that loads it.
Result linkModules(const std::vector<Input>& inputs, unsigned maxRegisters = 0);

}  // namespace ptx::link
