// A feature that an environment variable switches on for the whole process (CUEMU_TRACE, CUEMU_TIMELINE), read
// on first use. Asking whether it is on costs one relaxed atomic load, so entry points and stream items may ask
// every time.
#pragma once

#include <atomic>

namespace cuemu {

class EnvSwitch {
 public:
  // `read` reads the variable, prepares the feature when it is set, and returns whether it is on.
  explicit constexpr EnvSwitch(bool (*read)()) : read_(read) {}

  bool on() {
    int state = state_.load(std::memory_order_relaxed);
    if (state == kUnread) [[unlikely]]
      return readNow();
    return state == kOn;
  }

 private:
  enum : int { kUnread = 0, kOff = 1, kOn = 2 };
  bool readNow() {
    bool enabled = read_();
    state_.store(enabled ? kOn : kOff, std::memory_order_relaxed);
    return enabled;
  }

  std::atomic<int> state_{kUnread};
  bool (*read_)();
};

}  // namespace cuemu
