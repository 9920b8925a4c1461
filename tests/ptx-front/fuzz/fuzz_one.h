// What the fuzzer asks of one input, shared by the libFuzzer target and the regression test that replays the
// checked-in crashers in every build: parse (or reject) without crashing, hanging or unbounded allocation; an
// accepted module checks, prints, and re-parses to an equal module; one that checks gives lazy loading's front end
// (kernel bodies kept as text and parsed again) the same log and module.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ptx/check.h"
#include "ptx/parse.h"
#include "ptx/print.h"

namespace ptx_fuzz {

// Returns an empty string when the input behaves, else what went wrong.
inline std::string runOne(std::string_view text) {
  ptx::Diagnostics diags("fuzz", 20);
  ptx::ParseOptions options;
  options.maxVariableBytes = uint64_t(1) << 24;  // keep the fuzzer's memory bounded
  auto module = ptx::parseModule(text, diags, options);
  (void)diags.format();
  if (diags.hasErrors()) return {};
  bool checked = ptx::checkModule(*module, diags);
  (void)diags.format();
  if (checked) {
    // Lazy loading's front end (entry bodies kept as text, parsed again) gives the same log and module.
    ptx::FrontEndResult whole = ptx::parseAndCheck(text, "fuzz");
    ptx::KeptBodies kept;
    ptx::FrontEndResult lazy = ptx::parseAndCheck(
        text, "fuzz", {}, [](const ptx::Module&, uint32_t) { return true; }, kept);
    if (lazy.log != whole.log || lazy.ok != whole.ok) return "the lazy front end's log differs: " + lazy.log;
    if (whole.ok) {
      for (const auto& [function, place] : kept.bodies) {
        ptx::Diagnostics body("fuzz", 20);
        if (!ptx::parseEntryBody(*lazy.module, function, kept.text, place, kept.names, body))
          return "a kept body does not parse again: " + body.format();
      }
      std::string keptDiff = ptx::diffModules(*whole.module, *lazy.module);
      if (!keptDiff.empty()) return "a kept body parses again to another body: " + keptDiff;
    }
  }
  std::string printed = ptx::printModule(*module);
  ptx::Diagnostics again("printed", 20);
  auto reparsed = ptx::parseModule(printed, again, options);
  if (again.hasErrors()) return "the printed module does not parse: " + again.format();
  std::string diff = ptx::diffModules(*module, *reparsed);
  if (!diff.empty()) return "the printed module differs after re-parsing: " + diff;
  return {};
}

}  // namespace ptx_fuzz
