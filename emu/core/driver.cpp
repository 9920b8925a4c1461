#include "core/driver.h"

#include "core/device.h"
#include "core/log.h"

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

}  // namespace cuemu
