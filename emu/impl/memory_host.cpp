// Page-locked host memory: cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost, cuMemHostRegister/Unregister,
// cuMemHostGetDevicePointer, cuMemHostGetFlags. With unified addressing the device pointer of host memory is
// its host address.
#include "api/impl.h"

#include "core/memory.h"
#include "impl/memory_internal.h"

namespace cuemu {
namespace {

constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

CUresult hostAlloc(void** pp, size_t bytesize, unsigned flags) {
  if (!pp || !bytesize || (flags & ~kHostAllocFlags)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto region = context.memory().allocateHost(bytesize, flags);
  if (!region) return region.error().code;
  *pp = reinterpret_cast<void*>((*region)->start);
  return CUDA_SUCCESS;
}

CUresult hostRegister(void* p, size_t bytesize, unsigned flags) {
  if (!p || !bytesize || (flags & ~kHostRegisterFlags)) return CUDA_ERROR_INVALID_VALUE;
  if (flags & CU_MEMHOSTREGISTER_IOMEMORY) return CUDA_ERROR_NOT_SUPPORTED;  // no I/O memory on a CPU device
  CUEMU_REQUIRE_CONTEXT(context);
  if (reinterpret_cast<uint64_t>(p) + bytesize < reinterpret_cast<uint64_t>(p)) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 refuses unmapped and PROT_NONE pages, and read-only pages unless registered read-only.
  if (!hostPagesAllow(p, bytesize, flags & CU_MEMHOSTREGISTER_READ_ONLY)) return CUDA_ERROR_INVALID_VALUE;
  auto region = context.memory().registerHost(p, bytesize, flags);
  return region ? CUDA_SUCCESS : region.error().code;
}

// The pinned or registered region holding `p`.
RegionPtr hostRegion(const void* p) {
  RegionPtr region = AddressSpace::instance().find(reinterpret_cast<uint64_t>(p));
  return region && !region->isDeviceSide() ? region : nullptr;
}

}  // namespace

namespace impl {

CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) { return hostAlloc(pp, bytesize, 0); }
CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) { return hostAlloc(pp, bytesize, Flags); }

// Like cuMemFree_v2, without a current context too (measured on an H100).
CUresult cuMemFreeHost(void* p) {
  memops::drainOwner(reinterpret_cast<uint64_t>(p));
  auto released = releaseRegion(reinterpret_cast<uint64_t>(p), {MemoryKind::HostPinned});
  return released ? CUDA_SUCCESS : released.error().code;
}

CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) { return hostRegister(p, bytesize, Flags); }
CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) { return hostRegister(p, bytesize, Flags); }

CUresult cuMemHostUnregister(void* p) {
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  memops::drainOwner(reinterpret_cast<uint64_t>(p));
  auto released = releaseRegion(reinterpret_cast<uint64_t>(p), {MemoryKind::HostRegistered});
  if (released) return CUDA_SUCCESS;
  // A pointer inside a registered range is a wrong argument, not an unregistered range (driver 580).
  RegionPtr inside = hostRegion(p);
  return inside && inside->kind == MemoryKind::HostRegistered ? CUDA_ERROR_INVALID_VALUE
                                                              : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  if (!pdptr || !p || Flags) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  if (!hostRegion(p)) return CUDA_ERROR_INVALID_VALUE;
  *pdptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  if (!pFlags || !p) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  RegionPtr region = hostRegion(p);
  if (!region) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = region->flags;
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
