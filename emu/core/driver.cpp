#include "core/driver.h"

#include "core/device.h"
#include "core/log.h"

#include <mutex>

namespace cuemu {
namespace detail {
std::atomic<bool> g_initialized{false};
}

CUresult initializeDriver(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (detail::g_initialized.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  auto created = createDevices();
  if (!created) {
    CUEMU_ERROR("cuInit failed: {}", created.error().message);
    return created.error().code;
  }
  detail::g_initialized.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}

}  // namespace cuemu
