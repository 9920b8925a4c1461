// The native-code tier (docs/native-tier.md): kernels compiled for the host CPU from the interpreter's own handlers,
// with the same results and faults. Off by default; while on, a kernel is compiled at its first launch (on the
// launching thread) and runs compiled from then on. It lives in a library of its own (libcuemu-native.so, built
// where LLVM 14 is installed), loaded only when the tier is switched on.
#pragma once

#include <cstdint>
#include <string>

namespace ptx::exec {

// Process-wide switch; default: the environment variable CUEMU_NATIVE (1/on: on). Launches started after the call
// follow it.
void setNativeTier(bool on);
bool nativeTier();

// Empty when the tier's library loads; otherwise why it does not (the tier is then absent and kernels are
// interpreted; CUEMU_NATIVE=1 says so once on stderr).
std::string nativeTierUnavailable();

// What the tier did in this process so far.
struct NativeTierStats {
  uint64_t kernelsCompiled = 0;  // kernels compiled (each once per program that holds it)
  uint64_t kernelsRefused = 0;   // interpreted instead: too many ops (CUEMU_NATIVE_MAX_OPS, default 20000), or the
                                 // compile failed; lastRefusal says why for the last one
  uint64_t compileNs = 0;        // wall time of all compiles
  uint64_t lastCompileNs = 0;
  uint64_t prepareNs = 0;  // of compileNs: the first compile's reading of the handler bitcode and symbols
  uint64_t opsInlined = 0, opsCalled = 0;
  uint64_t codeBytes = 0;
  std::string lastRefusal;
};
NativeTierStats nativeTierStats();

}  // namespace ptx::exec
