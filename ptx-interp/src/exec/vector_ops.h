// The ops the native tier's vector prefix compiles into whole-warp vector code (native/jit/vector_prefix.cpp): each
// class's file lists its own, with the handler the lowering picks and the bitcode function that computes a warp of
// it (defined there, next to the handler, under PTX_NATIVE_BITCODE).
#pragma once

#include "native/abi.h"

#include <vector>

namespace ptx::exec {

void addFloatVectorOps(std::vector<CuemuVectorOp>& rows);    // isa/float.cpp
void addIntegerVectorOps(std::vector<CuemuVectorOp>& rows);  // isa/integer.cpp
void addCompareVectorOps(std::vector<CuemuVectorOp>& rows);  // isa/compare.cpp
void addMemoryVectorOps(std::vector<CuemuVectorOp>& rows);   // isa/memory.cpp
namespace ctl {
void addControlVectorOps(std::vector<CuemuVectorOp>& rows);  // control.cpp
}

}  // namespace ptx::exec
