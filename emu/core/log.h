// Diagnostics with distinct meanings. All output goes to the log sink chosen by CUEMU_LOG
// (unset: warnings and errors only, to stderr; "1"/"stderr": everything to stderr; a path: everything there).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace cuemu::log {

enum class Level { Trace, Info, Warn, Error };

bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args> void emit(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cuemu::log

// INFO: something a user debugging their program may want to know.
#define CUEMU_INFO(...) ::cuemu::log::emit(::cuemu::log::Level::Info, __VA_ARGS__)
// WARN: the program did something legal but suspicious, or cuemu approximates the hardware.
#define CUEMU_WARN(...) ::cuemu::log::emit(::cuemu::log::Level::Warn, __VA_ARGS__)
// ERROR: an API call fails for a reason the user must see (e.g. a rejected module).
#define CUEMU_ERROR(...) ::cuemu::log::emit(::cuemu::log::Level::Error, __VA_ARGS__)
