// Virtual devices: the emulated GPUs, each described by a profile. Every CU_DEVICE_ATTRIBUTE_* answer comes
// from one table (core/device_attributes.def) evaluated against the profile.
#pragma once

#include "api/cuda_internal.h"
#include "core/result.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cuemu {

class Context;

struct DeviceProfile {
  std::string name = "cuemu virtual H100";
  int ccMajor = 9;
  int ccMinor = 0;
  int smCount = 132;
  uint64_t totalMemory = 0;  // bytes; 0 = a share of host RAM chosen at cuInit
};

class Device {
 public:
  Device(int ordinal, DeviceProfile profile);

  int ordinal() const { return ordinal_; }
  const DeviceProfile& profile() const { return profile_; }
  const CUuuid& uuid() const { return uuid_; }
  int pciBusId() const { return ordinal_ + 1; }  // distinct per device, stable
  int pciDeviceId() const { return 0; }
  int pciDomainId() const { return 0; }

  // Value of a device attribute, or CUDA_ERROR_INVALID_VALUE for an unknown attribute.
  CUresult attribute(CUdevice_attribute attribute, int& value) const;

  // The device's primary context (created on first request, never destroyed while the process lives;
  // "inactive" when its reference count is zero).
  std::shared_ptr<Context> primaryContext();

 private:
  int ordinal_;
  DeviceProfile profile_;
  CUuuid uuid_{};
  std::mutex primaryMutex_;
  std::shared_ptr<Context> primary_;
};

// The configured devices; empty before cuInit.
std::vector<Device*>& devices();
// The device with this ordinal, or null.
Device* deviceByOrdinal(CUdevice ordinal);

// Builds the virtual devices from the environment (CUEMU_DEVICES, ...). Fails with a message on an invalid
// configuration.
Expected<bool> createDevices();

}  // namespace cuemu
