// Semantic checks of a parsed ptx::Module: target and version gating, instruction types and operand kinds,
// state spaces, call signatures. Rejections are reported as `file:line:col: error: message` diagnostics.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptx/diag.h"
#include "ptx/ir.h"
#include "ptx/parse.h"

namespace ptx {

struct CheckOptions {
  // SM version the module will run on (80 for sm_80); 0 = the module's own .target. Instructions newer than
  // this are rejected, like ptxas -arch, and so is a module whose every .target is newer.
  unsigned targetSm = 0;
  // Accept a PTX ISA newer than 9.0 (the newest NVIDIA's driver 580 compiles). The driver sets this for PTX that
  // stands in for a cubin the real driver would load instead (a library's fatbinary with SASS for the device).
  bool acceptNewerIsa = false;
};

// Returns true when the module has no errors. Run only on modules that parsed without errors.
bool checkModule(const Module& module, Diagnostics& diags, const CheckOptions& options = {});

// The whole front end for a module load (cuModuleLoadData, cuLinkAddData): parse, then check.
struct FrontEndResult {
  std::unique_ptr<Module> module;  // null when rejected
  std::string log;                 // "file:line:col: error: ..." lines (warnings too) for the JIT log buffers
  bool ok = false;
};
FrontEndResult parseAndCheck(std::string_view text, std::string_view fileName = "<ptx>",
                             const CheckOptions& options = {});

// Lazy loading keeps the bodies of kernels as text until their first use: after a clean parse and check, the
// module has each kept .entry's header and the variables its body declares, not the body; parseEntryBody(module,
// function, text, place, names, diags) puts a body back.
struct KeptBodies {
  std::string text;                                    // the text as the parser read it
  ModuleNames names;                                   // the module-scope bindings
  std::vector<std::pair<uint32_t, BodyPlace>> bodies;  // (Module::functions index, place), in function order
};
// Asked for each .entry body that parsed and checked without a diagnostic, with the body still in the module:
// true keeps it as text and drops it from the module.
using KeepEntryBody = std::function<bool(const Module& module, uint32_t function)>;
// parseAndCheck keeping entry bodies as text: the same module (less the kept bodies) and the same log.
FrontEndResult parseAndCheck(std::string_view text, std::string_view fileName, const CheckOptions& options,
                             const KeepEntryBody& keep, KeptBodies& kept);

// `.pragma "used_bytes_mask N";` (PTX 8.3; NVRTC puts it before loads it widened): bit i of N set = byte i of the
// next load's data is used. Returns false when `text` is another pragma; otherwise sets `mask` (the low 32 bits of
// the integer, decimal or hex, as ptxas reads it) or `malformed` when the argument is not one integer.
bool usedBytesMaskPragma(std::string_view text, uint32_t& mask, bool& malformed);

// Known targets: the PTX ISA version (major*10+minor) a target first appeared in; 0 when unknown.
unsigned minPtxVersionForTarget(unsigned smVersion, bool archSpecific, bool familySpecific);

}  // namespace ptx
