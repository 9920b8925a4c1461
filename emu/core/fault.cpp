#include "core/fault.h"

#include <atomic>

namespace cuemu {
namespace {

// A plain atomic needs no constructor at load time (constant-initialised).
std::atomic<CUresult> g_processFault{CUDA_SUCCESS};

}  // namespace

CUresult processFault() noexcept { return g_processFault.load(std::memory_order_acquire); }

void raiseProcessFault(CUresult fault) noexcept {
  if (fault == CUDA_SUCCESS) return;
  CUresult expected = CUDA_SUCCESS;
  g_processFault.compare_exchange_strong(expected, fault, std::memory_order_acq_rel);
}

void clearProcessFaultForTesting() noexcept { g_processFault.store(CUDA_SUCCESS, std::memory_order_release); }

}  // namespace cuemu
