// The interface between the interpreter (native/tier.cpp, in libptxinterp) and the native tier's compiler
// (native/jit, libcuemu-native.so, which the interpreter loads with dlopen only when the tier is switched on).
// Plain C types: the library is built from the same sources, and the version guards against a stale copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptx::exec {
struct Op;
struct Warp;
}  // namespace ptx::exec

extern "C" {

constexpr uint32_t kCuemuNativeAbiVersion = 9;

// CuemuNativeOptions::inlineBudget: every handler inlined, however large the kernel
constexpr uint32_t kCuemuNativeInlineAll = 0xffffffffu;

// An op the vector prefix (native/jit/vector_prefix.cpp) compiles into whole-warp vector code: its handler, what it
// computes (kind) and how (parameter). The interpreter's table (exec/vector_ops.h) is the one list of them.
enum CuemuVectorKind : uint32_t {
  kCuemuVectorFloatBinary = 1,   // d = a op b, f32 or f64, round to nearest; parameter: cuemuVectorFloat*'s op,
                                 // the bytes of an operand from bit 8
  kCuemuVectorCompare32 = 2,     // setp d = a cmp b on 32-bit integers; parameter: cuemuVectorCompare32's cmp
  kCuemuVectorLoadGlobal = 3,    // ld.global of 4 or 8 bytes through a 64-bit address; parameter bits 0-1: how the
                                 // address is formed (mem::AddrMode: plain, sum, scaled signed or unsigned), bits from
                                 // 8: the bytes
  kCuemuVectorStoreGlobal = 4,   // st.global likewise
  kCuemuVectorExitAll = 5,       // exit (ret of a kernel) of all lanes: the warp ends
  kCuemuVectorFloatTernary = 6,  // d = fma(a, b, c) likewise
  kCuemuVectorIntBinary = 7,     // d = a op b on 32- or 64-bit integers, wrapping; parameter: cuemuVectorInt*'s op,
                                 // the bytes from bit 8
  kCuemuVectorMulWide = 8,       // mul.wide of 32-bit integers; parameter 1: signed
  kCuemuVectorCompare64 = 9,     // kCuemuVectorCompare32 on 64-bit integers
  kCuemuVectorShiftImmediate = 10,  // shift by op.imm; parameter 1: left, 2: signed, the bytes from bit 8
};
struct CuemuVectorOp {
  const void* handler;
  uint32_t kind;
  uint32_t parameter;
};

struct CuemuNativeOptions {
  // 1: the light pipeline (inline the handlers, fold their ops, simplify); 2, 3: LLVM's O2, O3 pipelines
  uint32_t optLevel = 1;
  // per op: 1 compiles its handler into the function, 0 calls its handler pointer (ops of other kernels of an eagerly
  // lowered module); nullptr: all
  const uint8_t* compileOp = nullptr;
  // where the ops the code runs are (`ops` may be a copy of them, read while compiling); nullptr: at `ops`
  const ptx::exec::Op* original = nullptr;
  // the on-disk cache's folder instead of the one the environment names (CUEMU_NATIVE_CACHE_*), used even where the
  // environment turns the cache off: a background compile hands its code to the process through it (tier.cpp)
  const char* cacheDir = nullptr;
  // per op: 1 returns what its handler returns to the caller (an op that may pass the host thread to another warp:
  // ctl::mayHandOff, whose next op the caller runs on that warp); nullptr: none
  const uint8_t* leaveOp = nullptr;
  // the light pipeline inlines handlers into the kernel until their IR instructions reach this many; the other ops
  // call the interpreter's handler (docs/native-tier.md, "Inlining budget"; CUEMU_NATIVE_INLINE_BUDGET).
  // kCuemuNativeInlineAll: every handler with bitcode inlined
  uint32_t inlineBudget = kCuemuNativeInlineAll;
  // 1: only load the code from the cache; where it is not there, fail (message "not in the cache") and compile nothing
  uint32_t cacheOnly = 0;
  // the name of the code's file in the cache (native/cache_key.h: the interpreter's side computes it, so that it can
  // load cached code without this library); nullptr: the code is not cached
  const char* cacheKey = nullptr;
  // the kernel's first op (where its warps start), and the ops the vector prefix compiles (none: no prefix)
  uint32_t entryOp = 0;
  const CuemuVectorOp* vectorOps = nullptr;
  uint32_t vectorOpCount = 0;
};

// What one compile did (docs/native-tier.md).
struct CuemuNativeResult {
  // The kernel's code: runs the warp from `op` (an op of the compiled program) until it stops (returns nullptr).
  const ptx::exec::Op* (*entry)(ptx::exec::Warp&, const ptx::exec::Op*) = nullptr;
  void* handle = nullptr;        // for release()
  uint64_t compileNs = 0;        // wall time of the whole compile
  uint64_t prepareNs = 0;        // of it: the process's first compile reads the handler bitcode and the symbols
  uint32_t opsInlined = 0;       // ops whose handler's code was compiled into the kernel
  uint32_t opsCalled = 0;        // ops that call the interpreter's handler (no bitcode for it, or over the budget)
  uint32_t opsOverBudget = 0;    // of opsCalled: ops whose handler has bitcode, over the inline budget
  uint32_t instructions = 0;     // the kernel's IR instructions before optimisation (0: loaded from the cache)
  uint32_t codeBytes = 0;        // machine code
  uint32_t vectorPrefixOps = 0;  // ops compiled into the vector prefix (native/jit/vector_prefix.h)
  uint32_t fromCache = 0;        // 1: loaded from the on-disk cache (nothing compiled)
  uint32_t cacheWritten = 0;     // 1: compiled and written to the cache
  // 1: this compile read the process's prepared handler bitcode from the cache (prepareNs is then milliseconds);
  // preparedWritten: prepared it and wrote it there
  uint32_t preparedFromCache = 0, preparedWritten = 0;
  char message[512] = {};  // why entry is null
};

struct CuemuNativeApi {
  uint32_t version;
  // Compiles ops[0..count) (a lowered program's op array) into one function. Ops never change after lowering.
  bool (*compile)(const ptx::exec::Op* ops, size_t count, const CuemuNativeOptions* options, CuemuNativeResult* out);
  void (*release)(void* handle);
};

// The library's one export.
const CuemuNativeApi* cuemuNativeApi();
}
