// The vector prefix (docs/native-tier.md, "Vector prefix"): a kernel's first ops, from its entry to the first op it
// does not know, compiled for a whole warp as vector code over SSA values instead of handler calls over the register
// file. Each op of it is one of exec/vector_ops.h's: its semantics are the bitcode functions defined next to the
// handler; the prefix adds only where the values live. Where a check of the handlers' whole-warp path fails (a lane
// exits, an access is not one valid run of consecutive elements) or the prefix ends, the values computed so far go
// to the register file and the warp goes on through the kernel's switch at that op, as the interpreter would run it.
#pragma once

#include "native/abi.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace ptx::exec {
struct Op;
}

namespace ptx::exec::native {

struct VectorPrefix {
  // blocks that end in a branch to the kernel's switch, with the op the warp goes on at there
  struct Exit {
    llvm::BasicBlock* block;
    llvm::Value* op;
  };
  std::vector<Exit> exits;
  uint32_t ops = 0;         // ops compiled into the prefix (0: none; `entry` then only branches to the switch)
  bool endsAtExit = false;  // it ends at the kernel's exit of a whole warp: the function has a CTA entry
};

// CUEMU_NATIVE_VECTOR=0 switches the prefix off (part of the cache's identity).
bool vectorPrefixEnabled();

// How far ahead of a warp's global access the prefix prefetches its lines for the warps after it
// (CUEMU_NATIVE_PREFETCH, bytes; 0: not at all; part of the cache's identity). The default measured best of 512 to
// 16384 on vector add with its arrays in memory (docs/native-tier.md, Vector prefix).
constexpr uint64_t kDefaultPrefetchDistance = 2048;
uint64_t prefetchDistance();

// Where the prefix goes: `entry` is the kernel function's first block, which the prefix ends (with its test and
// code, or with a branch to `dispatch` where the kernel starts with no op the prefix knows); `dispatch` the switch on
// the op to run; opAt(i) the address of op i; blockOf(i) op i's block (nullptr: none, the switch runs it).
struct VectorPrefixPlaces {
  llvm::BasicBlock* entry;
  llvm::BasicBlock* dispatch;
  std::function<llvm::Constant*(size_t)> opAt;
  std::function<llvm::BasicBlock*(size_t)> blockOf;
};

// Emits the prefix into fn (the kernel's function: its arguments are the warp and the op it starts at). `handlers`:
// the handler bitcode (the prefix's functions are declared from it).
VectorPrefix emitVectorPrefix(llvm::Module& m, const llvm::Module& handlers, llvm::Function& fn,
                              const VectorPrefixPlaces& places, const Op* ops, size_t count,
                              const CuemuNativeOptions& options);

}  // namespace ptx::exec::native
