// The linker asks the interpreter which extern functions it provides itself (the device runtime, for
// isBuiltinExternal). The fuzz build leaves the interpreter out, so it provides none here: their .extern
// declarations stay undefined like any other, which the link accepts as driver 580's does.
#include "exec/device_runtime.h"

namespace ptx::exec {
const RuntimeFunction* findRuntimeFunction(std::string_view) { return nullptr; }
}  // namespace ptx::exec
