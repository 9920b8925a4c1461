#include "ptx/diag.h"

#include <fmt/format.h>

namespace ptx {

void Diagnostics::error(uint32_t line, uint32_t col, std::string message) {
  ++errorCount_;
  if (errorCount_ <= maxErrors_) diags_.push_back(Diagnostic{Severity::Error, line, col, std::move(message)});
}

void Diagnostics::warning(uint32_t line, uint32_t col, std::string message) {
  if (diags_.size() < maxErrors_ * 2) diags_.push_back(Diagnostic{Severity::Warning, line, col, std::move(message)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const Diagnostic& d : diags_) {
    const char* sev = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
    out += fmt::format("{}:{}:{}: {}: {}\n", fileName_, d.line, d.col, sev, d.message);
  }
  if (errorCount_ > maxErrors_) out += fmt::format("{}: too many errors ({} in all)\n", fileName_, errorCount_);
  return out;
}

}  // namespace ptx
