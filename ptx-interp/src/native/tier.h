// The interpreter's side of the native tier (ptx/native.h): compiles a lowered program's ops through
// libcuemu-native.so and keeps the code with the program (Program::native).
#pragma once

#include "exec/engine.h"

namespace ptx::exec {

// The compiled code of a program, released with it.
struct NativeSlot {
  Handler entry = nullptr;  // nullptr: the program is interpreted
  void* handle = nullptr;
  ~NativeSlot();
};

namespace native {

// The function that runs warps of program p from any of its ops until they stop (as `while (op) op = op->fn(w,
// op)` does), compiled on first use; nullptr while the tier is off or when the program cannot be compiled.
Handler codeFor(const Program& p);

}  // namespace native
}  // namespace ptx::exec
