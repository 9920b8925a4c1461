// Primary contexts: one per device, shared with the CUDA runtime, reference counted by retain/release.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"

namespace cuemu::impl {

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  *pctx = (*device)->retainPrimary()->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  return (*device)->releasePrimary();
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return impl::cuDevicePrimaryCtxRelease_v2(dev); }

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  (*device)->resetPrimary();
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return impl::cuDevicePrimaryCtxReset_v2(dev); }

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  bool isActive = false;
  (*device)->primaryState(*flags, isActive);
  *active = isActive ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  if (!validContextFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  return (*device)->setPrimaryFlags(flags, /*whileActive=*/true);
}

// The original form refuses to change an active primary context.
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  if (!validContextFlags(flags)) return CUDA_ERROR_INVALID_VALUE;
  return (*device)->setPrimaryFlags(flags, /*whileActive=*/false);
}

}  // namespace cuemu::impl
