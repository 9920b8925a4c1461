// What the fuzzer asks of one input, shared by the libFuzzer target and the regression test that replays the
// checked-in crashers in every build: parse (or reject) without crashing, hanging or unbounded allocation; an
// accepted module checks, prints, and re-parses to an equal module.
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
  ptx::checkModule(*module, diags);
  (void)diags.format();
  std::string printed = ptx::printModule(*module);
  ptx::Diagnostics again("printed", 20);
  auto reparsed = ptx::parseModule(printed, again, options);
  if (again.hasErrors()) return "the printed module does not parse: " + again.format();
  std::string diff = ptx::diffModules(*module, *reparsed);
  if (!diff.empty()) return "the printed module differs after re-parsing: " + diff;
  return {};
}

}  // namespace ptx_fuzz
