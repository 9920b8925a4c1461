#include "core/log.h"

#include "core/error_log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cuemu::log {
namespace {

struct Sink {
  std::FILE* file = stderr;
  Level threshold = Level::Warn;
  std::mutex mutex;
};

// Created on first use, never destroyed: logging must work during process exit too.
Sink& sink() {
  static Sink* instance = [] {
    auto* s = new Sink;
    const char* value = std::getenv("CUEMU_LOG");
    if (value && *value) {
      s->threshold = Level::Trace;
      if (std::strcmp(value, "1") != 0 && std::strcmp(value, "stderr") != 0) {
        if (std::FILE* f = std::fopen(value, "a")) s->file = f;
      }
    }
    return s;
  }();
  return *instance;
}

const char* prefix(Level level) {
  switch (level) {
    case Level::Trace: return "cuemu: ";
    case Level::Info: return "cuemu: ";
    case Level::Warn: return "cuemu: warning: ";
    case Level::Error: return "cuemu: error: ";
  }
  return "cuemu: ";
}

}  // namespace

bool enabled(Level level) { return level >= sink().threshold; }

void write(Level level, std::string_view message) {
  // Warnings and errors also go to the driver's error log that programs read with cuLogs*.
  if (level >= Level::Warn)
    errorlog::append(level == Level::Error ? CU_LOG_LEVEL_ERROR : CU_LOG_LEVEL_WARNING, message);
  Sink& s = sink();
  std::lock_guard lock(s.mutex);
  std::fprintf(s.file, "%s%.*s\n", prefix(level), static_cast<int>(message.size()), message.data());
  std::fflush(s.file);
}

}  // namespace cuemu::log
