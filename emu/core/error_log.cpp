#include "core/error_log.h"

#include <fmt/format.h>
#include <pthread.h>

#include <chrono>
#include <deque>
#include <mutex>

namespace cuemu::errorlog {
namespace {

struct Registration {
  uint64_t id;
  Callback callback;
  void* userData;
};

struct Log {
  std::mutex mutex;
  std::deque<std::string> entries;  // formatted lines, oldest first
  uint32_t next = 0;                // iterator value of the next entry
  std::vector<Registration> callbacks;
  uint64_t nextCallbackId = 1;
};

// Created on first use and never destroyed (messages may come during process exit).
Log& log() {
  static Log* instance = new Log;
  return *instance;
}

std::string format(CUlogLevel level, std::string_view message) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  return fmt::format("[{}.{:03}][{}][CUDA][{}] {}", ms / 1000, ms % 1000, static_cast<unsigned long>(pthread_self()),
                     level == CU_LOG_LEVEL_ERROR ? "E" : "W", message);
}

}  // namespace

void append(CUlogLevel level, std::string_view message) {
  Log& l = log();
  std::vector<Registration> callbacks;
  {
    std::lock_guard lock(l.mutex);
    l.entries.push_back(format(level, message));
    if (l.entries.size() > kCapacity) l.entries.pop_front();
    ++l.next;
    callbacks = l.callbacks;
  }
  // Callbacks run outside the lock: they may call cuLogs* themselves.
  for (const Registration& r : callbacks) {
    std::string copy(message);
    r.callback(r.userData, level, copy.data(), copy.size());
  }
}

uint32_t current() {
  Log& l = log();
  std::lock_guard lock(l.mutex);
  return l.next;
}

std::vector<std::string> entriesFrom(uint32_t from, uint32_t& next) {
  Log& l = log();
  std::lock_guard lock(l.mutex);
  uint32_t oldest = l.next - static_cast<uint32_t>(l.entries.size());
  if (from < oldest || from > l.next) from = oldest;
  std::vector<std::string> out(l.entries.begin() + (from - oldest), l.entries.end());
  next = l.next;
  return out;
}

uint64_t addCallback(Callback callback, void* userData) {
  Log& l = log();
  std::lock_guard lock(l.mutex);
  uint64_t id = l.nextCallbackId++;
  l.callbacks.push_back({id, callback, userData});
  return id;
}

bool removeCallback(uint64_t id) {
  Log& l = log();
  std::lock_guard lock(l.mutex);
  for (auto it = l.callbacks.begin(); it != l.callbacks.end(); ++it) {
    if (it->id == id) {
      l.callbacks.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace cuemu::errorlog
