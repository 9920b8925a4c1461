// The interpreter's side of the native tier (ptx/native.h): compiles a lowered program's ops through
// libcuemu-native.so and keeps the code with the program (Program::native).
#pragma once

#include "exec/engine.h"

#include <map>
#include <memory>

namespace ptx::exec {
namespace native {
class LoadedObject;
}

// The compiled code of a program's kernels (a lazily lowered program has one), released with the program.
struct NativeSlot {
  struct Code {
    Handler entry = nullptr;                       // nullptr: the kernel is interpreted
    void* handle = nullptr;                        // the compiler library's (CuemuNativeApi::release)
    std::shared_ptr<native::LoadedObject> object;  // or: loaded from the cache without it (object_loader.h)
    uint64_t launches = 0, threads = 0;            // while interpreted (NativeTierPolicy)
    uint64_t interpretedNs = 0;                    // wall time of those launches
    bool cacheProbed = false;                      // its first launch looked for its code in the cache
    // Queued: a background compile is queued or running; InCache: it put the code in the cache, and the next launch
    // loads it; CompileHere: it could not (code naming addresses of this process), and the next launch compiles;
    // Done: compiled, or refused
    enum State : uint8_t { Cold, Queued, InCache, CompileHere, Done } state = Cold;
  };
  std::map<uint32_t, Code> kernels;  // by the kernel's entry function (Program::functions index)
  ~NativeSlot();
};

namespace native {

// The function that runs warps of the kernel whose entry function is `entry` (of program p) from any op of p until
// they stop (as `while (op) op = op->fn(w, op)` does): the kernel's own ops and every non-entry function's, while
// ops of p's other kernels call their handlers. Counts a launch of `threads` threads; compiled once the kernel is
// hot (NativeTierPolicy). nullptr while the tier is off, the kernel is not compiled yet, or it cannot be.
Handler codeFor(const Program& p, const FunctionCode& entry, uint64_t threads = 0);
// For a launch that started interpreted and has run `runningNs` so far (launch.cpp polls it between CTAs): the
// kernel's code once it can run, else nullptr. The launch makes the kernel hot by its time (NativeTierPolicy::
// hotInterpretedMs, its earlier launches' time counted in), which queues its compile, and the code is loaded when the
// compile put it in the cache: the launch's later CTAs, and its warps as they resume, run it.
Handler upgrade(const Program& p, const FunctionCode& entry, uint64_t runningNs);
// Adds an interpreted launch's wall time to the kernel's count (NativeTierPolicy::hotInterpretedMs), where codeFor
// counted the launch.
void interpreted(const Program& p, const FunctionCode& entry, uint64_t ns);

}  // namespace native
}  // namespace ptx::exec
