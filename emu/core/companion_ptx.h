// Companion PTX: the PTX a client compiled a SASS-only image from, found beside it. Some clients assemble their
// PTX inside their own process and hand the driver only the result: CUTLASS's CuTe DSL (nvidia-cutlass-dsl) runs
// NVIDIA's PTX compiler, linked into its MLIR library, and loads a fatbinary of SASS; nothing a launcher can
// redirect (as cuemu-ptxas serves Triton and XLA). The DSL writes each PTX it compiles into a folder when asked
// (CUTE_DSL_KEEP=ptx, CUTE_DSL_DUMP_DIR); `cuemu run` asks it to, and names that folder in CUEMU_COMPANION_PTX_DIR.
//
// CUEMU_COMPANION_PTX_DIR is a list of folders separated by colons; FOLDER/* names every folder in FOLDER written
// since this process started (the DSL compiles its occupancy probe into a temporary folder of its own, with
// --dump-dir). For a SASS-only image the driver looks there for the PTX that defines every kernel of the SASS, written
// since this process started (another process's file with the same kernel names may hold other code), newest
// first, and keeps what it found under the SASS's hash in the user's cache folder (cuemu/companion-ptx/): the DSL
// caches its compiled SASS across runs and writes no PTX for what it takes from that cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuemu {

struct CompanionPtx {
  std::string text;
  std::string path;  // where it was found (for the log)
};

// The companion PTX of the SASS `sass` (an ELF cubin) whose kernels are `kernels`, or nothing: no folder is named,
// none matches, or the kernels are unknown.
std::optional<CompanionPtx> findCompanionPtx(std::string_view sass, const std::vector<std::string>& kernels);

// The names a PTX module declares with .entry or .func (what findCompanionPtx compares with a cubin's kernels).
std::vector<std::string> declaredFunctionNames(std::string_view ptx);

}  // namespace cuemu
