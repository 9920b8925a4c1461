#include "core/driver.h"

#include "core/device.h"
#include "core/log.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <mutex>
#include <pthread.h>

namespace cuemu {
namespace detail {
std::atomic<bool> g_initialized{false};
}

namespace {

// A child forked after cuInit cannot use the driver (NVIDIA's answers CUDA_ERROR_NOT_INITIALIZED to cuInit and to
// everything that needs it, measured on an H100 with driver 580: tools/gpu-probe/results/clients17-*.txt): the
// parent's devices, contexts and worker threads are not the child's.
std::atomic<bool> g_forkedAfterInit{false};

void markChildAfterFork() {
  if (detail::g_initialized.load(std::memory_order_relaxed)) {
    g_forkedAfterInit.store(true, std::memory_order_relaxed);
    detail::g_initialized.store(false, std::memory_order_relaxed);
  }
}

}  // namespace

CUresult initializeDriver(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (g_forkedAfterInit.load(std::memory_order_relaxed)) return CUDA_ERROR_NOT_INITIALIZED;
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (detail::g_initialized.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  auto created = createDevices();
  if (!created) {
    CUEMU_ERROR("cuInit failed: {}", created.error().message);
    return created.error().code;
  }
  static const int registered = pthread_atfork(nullptr, nullptr, markChildAfterFork);
  (void)registered;
  detail::g_initialized.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}

Expected<int> parseDriverVersion(std::string_view text) {
  int major = 0, minor = 0, version = -1;
  const char* end = text.data() + text.size();
  if (auto dot = text.find('.'); dot != std::string_view::npos) {
    auto [m, e1] = std::from_chars(text.data(), text.data() + dot, major);
    auto [n, e2] = std::from_chars(text.data() + dot + 1, end, minor);
    if (e1 == std::errc() && e2 == std::errc() && m == text.data() + dot && n == end && dot + 2 == text.size())
      version = major * 1000 + minor * 10;
  } else if (auto [p, e] = std::from_chars(text.data(), end, version); e != std::errc() || p != end) {
    version = -1;
  }
  if (version < kDriverVersion || version > 13090 || version % 10 != 0)
    return makeError(CUDA_ERROR_INVALID_VALUE,
                     fmt::format("'{}' is not a CUDA 13 version from 13.0 to 13.9 (such as 13.4 or 13040)", text));
  return version;
}

int reportedDriverVersion() {
  static const int version = [] {
    const char* text = std::getenv("CUEMU_DRIVER_VERSION");
    if (!text || !*text) return kDriverVersion;
    auto parsed = parseDriverVersion(text);
    if (parsed) return *parsed;
    CUEMU_ERROR("CUEMU_DRIVER_VERSION: {}: reporting {}.{}", parsed.error().message, kDriverVersion / 1000,
                kDriverVersion % 1000 / 10);
    return kDriverVersion;
  }();
  return version;
}

}  // namespace cuemu
