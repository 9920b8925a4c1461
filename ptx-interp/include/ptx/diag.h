// Diagnostics of the PTX front end: `file:line:col: error: message` lines, as the driver copies them into
// CU_JIT_ERROR_LOG_BUFFER / CU_JIT_INFO_LOG_BUFFER.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptx {

enum class Severity : uint8_t { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  uint32_t line = 0;  // 1-based, 0 = whole module
  uint32_t col = 0;
  std::string message;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string_view fileName = "<ptx>", size_t maxErrors = 100)
      : fileName_(fileName), maxErrors_(maxErrors) {}

  void error(uint32_t line, uint32_t col, std::string message);
  void warning(uint32_t line, uint32_t col, std::string message);

  bool hasErrors() const { return errorCount_ != 0; }
  size_t errorCount() const { return errorCount_; }
  // True once maxErrors errors were reported; later errors are counted but not stored.
  bool full() const { return errorCount_ >= maxErrors_; }
  const std::vector<Diagnostic>& all() const { return diags_; }
  const std::string& fileName() const { return fileName_; }

  // One line per diagnostic: "file:line:col: error: message\n".
  std::string format() const;

 private:
  std::string fileName_;
  size_t maxErrors_;
  size_t errorCount_ = 0;
  std::vector<Diagnostic> diags_;
};

}  // namespace ptx
