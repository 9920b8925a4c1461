// Linear device memory: cuMemAlloc, cuMemAllocPitch, cuMemFree, cuMemGetInfo, cuMemGetAddressRange.
#include "api/impl.h"

#include "core/device.h"
#include "core/graph.h"
#include "core/limits.h"
#include "core/memory.h"
#include "impl/memory_internal.h"

namespace cuemu {

CUresult memops::runAndWait(Context& context, CUstream stream, StreamWork work, CUgraphNodeType capturedAs) {
  return runOnStreamAndWait(context, stream, std::move(work), capturedAs);
}

void memops::drainOwner(uint64_t address) {
  RegionPtr region = AddressSpace::instance().findStart(address);
  if (!region) return;
  if (auto owner = lookup<Context>(region->context)) (void)(*owner)->streams().synchronize();
}

namespace impl {

// The pitch cuMemAllocPitch rounds rows to: the GPU's preferred alignment for 2D accesses.
using limits::kPitchAlignment;

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  if (!bytesize) {
    *dptr = 0;  // driver 580 clears the output before refusing a zero-byte allocation
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUEMU_REQUIRE_CONTEXT(context);
  auto region = context.memory().allocateDevice(bytesize);
  if (!region) return region.error().code;
  *dptr = (*region)->start;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes) {
  if (!dptr || !pPitch || !WidthInBytes || !Height) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  size_t pitch = alignUp(WidthInBytes, kPitchAlignment);
  if (pitch < WidthInBytes || pitch > 2147483647 || Height > SIZE_MAX / pitch) return CUDA_ERROR_INVALID_VALUE;
  auto region = context.memory().allocateDevice(pitch * Height);
  if (!region) return region.error().code;
  *dptr = (*region)->start;
  *pPitch = pitch;
  return CUDA_SUCCESS;
}

// No current context is needed: the allocation knows its context (NVIDIA's driver frees it too, measured on an
// H100; numba's cuda.close() frees after popping its context).
CUresult cuMemFree_v2(CUdeviceptr dptr) {
  if (!dptr) return CUDA_SUCCESS;                                  // like free(NULL)
  if (!applicationMayFree(dptr)) return CUDA_ERROR_INVALID_VALUE;  // a graph's memory no launch has left allocated
  // Memory of a pinned host pool is freed here too (driver 580 accepts it).
  RegionPtr region = AddressSpace::instance().findStart(dptr);
  // cuMemAlloc memory waits for the owner's work; pool memory does not (an H100 frees it at once and a kernel still
  // using it faults: tools/gpu-probe/results/clients17c-h100-2026-11-26.txt, part unmap).
  if (!region || !region->pool) memops::drainOwner(dptr);
  bool hostPool = region && region->kind == MemoryKind::HostPinned && region->pool;
  auto released = hostPool ? releaseRegion(dptr, {MemoryKind::HostPinned})
                           : releaseRegion(dptr, {MemoryKind::Device, MemoryKind::Managed});
  return released ? CUDA_SUCCESS : released.error().code;
}

// Either output may be NULL (driver 580 accepts that).
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  CUEMU_REQUIRE_CONTEXT(context);
  // The current context's device, as cuemuDeviceGetMemoryInfo answers for any device.
  return impl::cuemuDeviceGetMemoryInfo(free, total, context.device().ordinal());
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  RegionPtr region = AddressSpace::instance().find(dptr);
  // Memory no device may reach: registered host memory, a host pool's without access, a VMM mapping before
  // cuMemSetAccess. The outputs are zeroed then, as driver 580 does.
  if (!region || region->kind == MemoryKind::HostRegistered || hostPoolHiddenFromDevice(*region) ||
      (region->kind == MemoryKind::VmmMapping && region->accessFlags.load() == CU_MEM_ACCESS_FLAGS_PROT_NONE)) {
    if (pbase) *pbase = 0;
    if (psize) *psize = 0;
    return CUDA_ERROR_NOT_FOUND;
  }
  // A mapping of host-located VMM memory answers base 0 with its size (driver 580 on an H100:
  // tools/gpu-probe/results/vmm17-h100-2026-11-27.txt, part hostvmm).
  if (pbase) *pbase = region->hostLocated ? 0 : region->start;
  if (psize) *psize = region->size;
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
