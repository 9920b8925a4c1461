// cuemu's own exported extensions (include/cuemu.h). They are not driver entry points: no entry in the API
// table, no cuInit requirement (a program may choose the mode before it initialises the driver), and a kernel
// fault does not stop them. Like every export, they keep exceptions from crossing the C ABI.
#include "api/impl.h"  // first: it sets up cuda.h the way the driver sees it
#include "cuemu.h"

#include "core/log.h"

#include <exception>
#include <new>

#define CUEMU_EXTENSION extern "C" __attribute__((visibility("default")))

namespace {

template <typename Impl> CUresult extensionBarrier(const char* name, Impl&& impl) noexcept {
  try {
    return impl();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    CUEMU_ERROR("{}: internal error: {}", name, e.what());
  } catch (...) {
    CUEMU_ERROR("{}: internal error", name);
  }
  return CUDA_ERROR_UNKNOWN;
}

}  // namespace

CUEMU_EXTENSION CUresult cuemuSetDeterministic(int enabled) {
  return extensionBarrier("cuemuSetDeterministic", [&] { return cuemu::impl::cuemuSetDeterministic(enabled); });
}

CUEMU_EXTENSION CUresult cuemuGetDeterministic(int* enabled) {
  return extensionBarrier("cuemuGetDeterministic", [&] { return cuemu::impl::cuemuGetDeterministic(enabled); });
}

CUEMU_EXTENSION CUresult cuemuGetVersion(int* major, int* minor, int* patch) {
  return extensionBarrier("cuemuGetVersion", [&] { return cuemu::impl::cuemuGetVersion(major, minor, patch); });
}

CUEMU_EXTENSION CUresult cuemuDeviceGetMemoryInfo(size_t* free, size_t* total, CUdevice dev) {
  return extensionBarrier("cuemuDeviceGetMemoryInfo",
                          [&] { return cuemu::impl::cuemuDeviceGetMemoryInfo(free, total, dev); });
}

CUEMU_EXTENSION CUresult cuemuDeviceGetPcieLink(int* generation, int* width, CUdevice dev) {
  return extensionBarrier("cuemuDeviceGetPcieLink",
                          [&] { return cuemu::impl::cuemuDeviceGetPcieLink(generation, width, dev); });
}
