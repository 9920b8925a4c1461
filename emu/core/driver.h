// Process-wide driver state: whether cuInit succeeded. Created lazily (no static constructors).
#pragma once

#include "core/result.h"

#include <atomic>
#include <string_view>

namespace cuemu {

namespace detail {
extern std::atomic<bool> g_initialized;
}

inline bool driverInitialized() noexcept { return detail::g_initialized.load(std::memory_order_acquire); }

// cuInit's work: reads the configuration, creates the virtual devices. Idempotent; thread-safe.
CUresult initializeDriver(unsigned flags);

// The driver version NVIDIA's driver 580 reports (CUDA 13.0), which cuemu's API follows.
inline constexpr int kDriverVersion = 13000;

// The CUDA version cuemu reports (cuDriverGetVersion, NVML) and accepts (the newest cuGetProcAddress request, the
// newest PTX ISA: 13.Y accepts ISA 9.Y): kDriverVersion, or the 13.Y that CUEMU_DRIVER_VERSION names (`cuemu run
// --driver-version 13.Y`), as the user-mode driver of a newer release (NVIDIA's forward-compatibility package on an
// older kernel driver) would report it. For clients that hand the driver PTX only when it is at least as new as
// their toolkit and otherwise compile SASS themselves (NVIDIA Warp). The entry points stay driver 580's. Read once;
// an invalid value is logged and ignored.
int reportedDriverVersion();

// Parses a CUEMU_DRIVER_VERSION value, "13.4" or "13040", into 13040; 13.0 to 13.9 only (the ABI is CUDA 13's).
Expected<int> parseDriverVersion(std::string_view text);

}  // namespace cuemu
