// What HostServices' device runtime calls (ptx/exec.h) may answer besides cudaError_t values.
#pragma once

#include <cstdint>

namespace ptx::exec {

// HostServices::deviceGraphLaunch: the launching thread faults with an illegal address instead of getting an error
// (a graph not instantiated for device launch, as on an H100 with driver 580).
inline constexpr int32_t kDeviceGraphLaunchFault = -1;

}  // namespace ptx::exec
