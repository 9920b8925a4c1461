// Process-wide driver state: whether cuInit succeeded. Created lazily (no static constructors).
#pragma once

#include "core/result.h"

#include <atomic>

namespace cuemu {

namespace detail {
extern std::atomic<bool> g_initialized;
}

inline bool driverInitialized() noexcept { return detail::g_initialized.load(std::memory_order_acquire); }

// cuInit's work: reads the configuration, creates the virtual devices. Idempotent; thread-safe.
CUresult initializeDriver(unsigned flags);

// The driver version cuemu reports (what NVIDIA's driver 580 reports for CUDA 13.0).
inline constexpr int kDriverVersion = 13000;

}  // namespace cuemu
