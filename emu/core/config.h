// The emulated machine's configuration: how many virtual devices, which profile each follows, how much
// memory each reports. Read once at cuInit from environment variables and, optionally, a file:
//
//   CUEMU_CONFIG=path            a file of `key = value` lines ('#' starts a comment); keys as below, in
//                                lower case without the CUEMU_ prefix (device_count = 2) or spelled as the
//                                variable (CUEMU_DEVICE_COUNT = 2). Environment variables override the file.
//   CUEMU_DEVICE_COUNT=n         number of devices, 0..64 (default 1; 0 makes cuInit fail with NO_DEVICE)
//   CUEMU_DEVICE_PROFILE=name    profile of every device: h100 (default), h200, rtx-pro-6000 (compute capability
//                                12.0, also "sm_120"), gb10 (12.1, also "sm_121") or l4 (8.9, also "sm_89");
//                                docs/devices.md
//   CUEMU_DEVICE_MEMORY=size     memory each device reports: bytes, or with K/M/G/T (KiB, MiB, ...) suffix;
//                                default: half of the host's physical memory
//   CUEMU_DEVICE_NAME=text       name every device reports (default: the profile's)
//   CUEMU_DEVICE_SM_COUNT=n      multiprocessor count of every device (default: the profile's)
//   CUEMU_DEVICE<i>_PROFILE, CUEMU_DEVICE<i>_MEMORY, CUEMU_DEVICE<i>_NAME, CUEMU_DEVICE<i>_SM_COUNT
//                                the same for device i only (overrides the setting for all devices)
//
// Any other CUEMU_DEVICE* variable or file key is an error: a typo must not silently give a default machine.
//
// Execution settings, read from the environment on first use:
//   CUEMU_KERNEL_TIMEOUT=seconds  the watchdog: a grid that runs longer (decimals allowed, e.g. 0.5) is stopped
//                                 and its launch fails with CUDA_ERROR_LAUNCH_TIMEOUT, sticky as a GPU's
//                                 watchdog error; unset or 0: no limit. An invalid value is logged and ignored.
#pragma once

#include "core/device.h"
#include "core/result.h"

#include <map>
#include <string>
#include <vector>

namespace cuemu {

struct MachineConfig {
  std::vector<DeviceProfile> devices;
};

// Settings by canonical key (lower case, no prefix: "device_count", "device1_memory").
using ConfigSettings = std::map<std::string, std::string>;

// Builds the machine from settings. `defaultMemory` is what a device reports when no memory is configured.
Expected<MachineConfig> buildMachineConfig(const ConfigSettings& settings, uint64_t defaultMemory);

// Parses a configuration file's text into settings (errors name the line).
Expected<ConfigSettings> parseConfigText(const std::string& text, const std::string& origin);

// Canonical key for an environment variable name or file key ("CUEMU_DEVICE_COUNT" -> "device_count"),
// or empty when the name is not a configuration key (no CUEMU_DEVICE prefix).
std::string configKey(const std::string& name);

// Parses "8G", "512MiB", "1073741824" into bytes.
Expected<uint64_t> parseByteSize(const std::string& text);

// The machine described by CUEMU_CONFIG and the environment.
Expected<MachineConfig> loadMachineConfig();

// Parses a CUEMU_KERNEL_TIMEOUT value (seconds) into milliseconds; 0 = no limit.
Expected<uint64_t> parseKernelTimeout(const std::string& text);
// CUEMU_KERNEL_TIMEOUT in milliseconds (0 = no limit), read once.
uint64_t kernelTimeoutMs();

}  // namespace cuemu
