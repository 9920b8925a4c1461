// The native-code tier (docs/native-tier.md): kernels compiled for the host CPU from the interpreter's own handlers,
// with the same results and faults. Off by default; while on, a kernel is compiled once it is hot (NativeTierPolicy)
// and runs compiled from then on. It lives in a library of its own (libcuemu-native.so, built
// where LLVM 14 is installed), loaded only when the tier is switched on.
#pragma once

#include <cstdint>
#include <string>

namespace ptx::exec {

// Process-wide switch; default: the environment variable CUEMU_NATIVE (1/on: on). Launches started after the call
// follow it (kernels compile once hot: NativeTierPolicy).
void setNativeTier(bool on);
bool nativeTier();

// When a kernel is compiled (docs/native-tier.md, "Tiering"): it runs in the interpreter until it is hot, that is
// until it was launched `hotLaunches` times, ran `hotThreads` threads, or its launches took `hotInterpretedMs`
// milliseconds in the interpreter, all counted per program and kernel; then it compiles in the background (a child
// process, its launches interpreted meanwhile) and the first launch after the compile loads its code, or without
// `background` it compiles at that launch, which runs the code; later launches run its code. Deterministic launches
// follow the same policy: both tiers give the same results in the same order. Default: from
// CUEMU_NATIVE_HOT_LAUNCHES (3), CUEMU_NATIVE_HOT_THREADS (1048576), CUEMU_NATIVE_HOT_MS (100) and
// CUEMU_NATIVE_BACKGROUND (1; 0: off). {1, 0, false}: every kernel compiled at its first launch.
struct NativeTierPolicy {
  uint32_t hotLaunches = 3;
  uint64_t hotThreads = uint64_t(1) << 20;
  bool background = true;
  uint32_t hotInterpretedMs = 100;  // wall time of the kernel's interpreted launches; 0xffffffff: never hot by it
};
void setNativeTierPolicy(const NativeTierPolicy& policy);
NativeTierPolicy nativeTierPolicy();
// How much handler code a compiled kernel inlines (docs/native-tier.md, "Inlining budget"): ops are taken (those in
// loops first, then those with smaller handlers) until their handlers' IR instructions reach this many; the other
// ops call the interpreter's handler. Compiles started after the call follow it. Default: CUEMU_NATIVE_INLINE_BUDGET
// (60000; `all`: kNativeInlineAll).
constexpr uint32_t kNativeInlineAll = 0xffffffffu;  // every handler inlined
void setNativeInlineBudget(uint32_t instructions);
uint32_t nativeInlineBudget();
// Waits until the background compiles queued so far are done (tests, benchmarks).
void waitForNativeCompiles();

// The on-disk cache of compiled kernels as the environment sets it (docs/native-tier.md, "Cache";
// CUEMU_NATIVE_CACHE_DISABLE, _PATH, _MAXSIZE) and what it holds now: `cuemu info` shows it, and a CI job keeps `dir`
// between its runs to start with its kernels compiled.
struct NativeCacheInfo {
  std::string dir;                  // empty: the cache is off
  uint64_t maxBytes = 0;            // its size limit
  uint64_t kernels = 0, bytes = 0;  // compiled kernels' files in it, and all its files' bytes
};
NativeCacheInfo nativeCacheInfo();

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
  uint64_t opsInlined = 0, opsCalled = 0;  // ops whose handler the code inlines, ops that call the interpreter's
  uint64_t opsOverBudget = 0;              // of opsCalled: over CUEMU_NATIVE_INLINE_BUDGET (docs/native-tier.md)
  uint64_t vectorPrefixOps = 0;   // ops compiled into kernels' vector prefixes (docs/native-tier.md; not cache loads)
  uint64_t lastInstructions = 0;  // the last compiled kernel's IR instructions before optimisation
  uint64_t codeBytes = 0;
  uint64_t launchesCompiled = 0;     // launches that ran compiled code
  uint64_t launchesInterpreted = 0;  // launches of kernels not (yet) compiled while the tier was on
  uint64_t backgroundCompiles = 0;   // compiles a background process did (their code loads at the next launch)
  uint64_t cacheLoads = 0;           // of kernelsCompiled: loaded from the on-disk cache (docs/native-tier.md)
  uint64_t cacheWrites = 0;          // compiled and written to the cache
  // of cacheLoads: loaded by the interpreter's own loader, without the compiler's library (docs/native-tier.md, Cache)
  uint64_t cacheLoadsWithoutCompiler = 0;
  bool compilerLoaded = false;  // the compiler's library (libcuemu-native.so, with LLVM) is loaded in this process
  // launches that started interpreted and ran their kernel's code from a later CTA on, once it was compiled or loaded
  // while they ran (a launch that runs CUEMU_NATIVE_HOT_MS makes its kernel hot: docs/native-tier.md, Tiering)
  uint64_t upgradesDuringLaunch = 0;
  // compiles (here or in a background process) that read the prepared handler bitcode from the cache, and that
  // prepared it and wrote it there (docs/native-tier.md, Cache)
  uint64_t preparedLoads = 0, preparedWrites = 0;
  // background compiles in flight or queued at exit that were left to finish and write their code to the cache
  // (CUEMU_NATIVE_FINISH_AT_EXIT)
  uint64_t compilesFinishingAfterExit = 0;
  std::string lastRefusal;
};
NativeTierStats nativeTierStats();

}  // namespace ptx::exec
