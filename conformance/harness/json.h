// Minimal JSON for the suite's result files: a writer helper and a small reader (objects, arrays, strings,
// numbers, booleans, null). The result format is ours, so no general-purpose library is needed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conf::json {

std::string Quote(std::string_view s);

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;  // in file order

  const Value* Find(std::string_view key) const;
  std::string StringOr(std::string_view key, std::string fallback) const;
};

// Returns nullopt and sets *error on malformed input.
std::optional<Value> Parse(std::string_view text, std::string* error);

}  // namespace conf::json
