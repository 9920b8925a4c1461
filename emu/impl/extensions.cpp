// cuemu's own extensions (include/cuemu.h): deterministic mode switched at run time, cuemu's version.
#include "api/impl.h"

#include "core/address_space.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/stream.h"

namespace cuemu::impl {

CUresult cuemuSetDeterministic(int enabled) {
  if (enabled != 0 && enabled != 1) return CUDA_ERROR_INVALID_VALUE;
  switchDeterministicMode(enabled == 1);
  return CUDA_SUCCESS;
}

CUresult cuemuGetDeterministic(int* enabled) {
  if (!enabled) return CUDA_ERROR_INVALID_VALUE;
  *enabled = deterministicMode() ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuemuGetVersion(int* major, int* minor, int* patch) {
  if (major) *major = CUEMU_VERSION_MAJOR;
  if (minor) *minor = CUEMU_VERSION_MINOR;
  if (patch) *patch = CUEMU_VERSION_PATCH;
  return CUDA_SUCCESS;
}

CUresult cuemuDeviceGetMemoryInfo(size_t* free, size_t* total, CUdevice dev) {
  if (!driverInitialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  int ordinal = (*device)->ordinal();
  uint64_t capacity = AddressSpace::capacity(ordinal);
  uint64_t used = AddressSpace::instance().used(ordinal);
  if (total) *total = capacity;
  if (free) *free = used < capacity ? capacity - used : 0;
  return CUDA_SUCCESS;
}

CUresult cuemuDeviceGetPcieLink(int* generation, int* width, CUdevice dev) {
  if (!driverInitialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  const DeviceProfile& profile = (*device)->profile();
  if (profile.pcieGeneration == 0) return CUDA_ERROR_NOT_SUPPORTED;
  if (generation) *generation = profile.pcieGeneration;
  if (width) *width = profile.pcieWidth;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
