// Virtual memory management: cuMemAddressReserve/Free, cuMemCreate/Release, cuMemMap/Unmap,
// cuMemSetAccess/GetAccess, granularity, properties, handle retain, POSIX file descriptor export/import.
#include "api/impl.h"

#include "core/device.h"
#include "core/memory.h"
#include "core/memory_vmm.h"
#include "impl/memory_internal.h"

#include <algorithm>
#include <fcntl.h>

namespace cuemu {
namespace {

bool aligned(uint64_t value) { return value % kVmmGranularity == 0; }

// Where physical memory may be: on a device, or on the host (HOST with any id, HOST_NUMA node 0; HOST_NUMA_CURRENT
// has a granularity but cannot be created), as driver 580 answers on an H100
// (tools/gpu-probe/results/vmm17-h100-2026-11-27.txt, parts hostvmm).
CUresult validateProp(const CUmemAllocationProp* prop, bool creating) {
  if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  switch (prop->location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (!deviceByOrdinal(prop->location.id)) return CUDA_ERROR_INVALID_DEVICE;
      break;
    case CU_MEM_LOCATION_TYPE_HOST: break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (prop->location.id != 0) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      if (creating) return CUDA_ERROR_INVALID_VALUE;
      break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (prop->requestedHandleTypes & ~memops::kCreatableHandleTypes) return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

bool isHostLocation(const CUmemLocation& location) {
  return location.type == CU_MEM_LOCATION_TYPE_HOST ||
         (location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && location.id == 0);
}

// The mappings covering [ptr, ptr+size) exactly and contiguously, or empty.
std::vector<RegionPtr> mappingsCovering(uint64_t ptr, uint64_t size) {
  std::vector<RegionPtr> found = AddressSpace::instance().overlapping(ptr, size);
  uint64_t at = ptr;
  for (const RegionPtr& r : found) {
    if (r->kind != MemoryKind::VmmMapping || r->start > at) return {};
    at = r->end();
  }
  if (found.empty() || at < ptr + size) return {};
  return found;
}

}  // namespace

namespace impl {

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
  if (!granularity) return CUDA_ERROR_INVALID_VALUE;
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = validateProp(prop, /*creating=*/false); r != CUDA_SUCCESS) return r;
  *granularity = kVmmGranularity;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  if (!ptr || !size || !aligned(size) || flags) return CUDA_ERROR_INVALID_VALUE;
  if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;
  auto region = std::make_shared<MemoryRegion>();
  region->size = size;
  region->kind = MemoryKind::VmmReservation;
  auto reserved = AddressSpace::instance().allocate(region, 0, std::max<uint64_t>(alignment, kVmmGranularity), addr);
  if (!reserved) return reserved.error().code;
  *ptr = (*reserved)->start;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  AddressSpace& space = AddressSpace::instance();
  RegionPtr reservation = space.findReservation(ptr);
  if (!reservation || reservation->start != ptr || reservation->size != size) return CUDA_ERROR_INVALID_VALUE;
  if (!space.overlapping(ptr, size).empty()) return CUDA_ERROR_INVALID_VALUE;  // still mapped
  KernelsInFlight::instance().settle(ptr, size);                               // the addresses may be reused at once
  space.release(ptr);
  return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
  if (!handle || !size || flags) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = validateProp(prop, /*creating=*/true); r != CUDA_SUCCESS) return r;
  if (!aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (prop->allocFlags.compressionType > CU_MEM_ALLOCATION_COMP_GENERIC) return CUDA_ERROR_INVALID_VALUE;
  // Fabric handles need an IMEX channel, which this machine (like the H100 it was measured on) has not.
  if (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) return CUDA_ERROR_NOT_PERMITTED;
  bool host = prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE;
  // The compression granted, as the H100 reports it: none for GPUDirect RDMA memory or where unsupported.
  CUmemAllocationProp granted = *prop;
  if (host || granted.allocFlags.gpuDirectRDMACapable ||
      !deviceByOrdinal(prop->location.id)->profile().genericCompression)
    granted.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_NONE;
  if (host) granted.location = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};  // what the H100 reports for both host types
  auto created = PhysicalAllocation::create(size, granted);
  if (!created) return created.error().code;
  *handle = PhysicalAllocation::retain(*created);
  return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  CUEMU_LOOKUP(allocation, PhysicalAllocation, handle, CUDA_ERROR_INVALID_VALUE);
  if (!allocation->release()) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  if (!size || flags || !aligned(ptr) || !aligned(size) || !aligned(offset)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(allocation, PhysicalAllocation, handle);
  if (offset > allocation->size() || size > allocation->size() - offset) return CUDA_ERROR_INVALID_VALUE;
  AddressSpace& space = AddressSpace::instance();
  RegionPtr reservation = space.findReservation(ptr);
  if (!reservation || !reservation->contains(ptr, size)) return CUDA_ERROR_INVALID_VALUE;
  if (!space.overlapping(ptr, size).empty()) return CUDA_ERROR_INVALID_VALUE;  // already mapped there
  KernelsInFlight::instance().settle(ptr, size);  // an unmapping deferred there must not undo this mapping
  auto mapped = space.mapFile(ptr, size, allocation->fd(), offset);
  if (!mapped) return mapped.error().code;
  auto region = std::make_shared<MemoryRegion>();
  region->start = ptr;
  region->size = size;
  region->kind = MemoryKind::VmmMapping;
  region->hostLocated = allocation->hostMemory();
  region->device = region->hostLocated ? 0 : allocation->prop().location.id;
  region->vmmHandle = handle;
  region->vmmOffset = offset;
  region->accessFlags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  region->keepAlive = allocation;
  space.insertRegion(std::move(region));
  return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  if (!size || !aligned(ptr) || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  auto mappings = mappingsCovering(ptr, size);
  if (mappings.empty() || mappings.front()->start != ptr || mappings.back()->end() != ptr + size)
    return CUDA_ERROR_INVALID_VALUE;
  AddressSpace& space = AddressSpace::instance();
  // Kernels fault on the range from now on (as a GPU's do: tools/gpu-probe/results/clients17c-h100-*.txt, part
  // unmap); the pages go once the grids running now have ended (KernelsInFlight), so none of them can touch
  // memory that is gone.
  for (const RegionPtr& r : mappings) space.eraseRegion(r->start);
  KernelsInFlight::instance().defer(ptr, size, [ptr, size] { AddressSpace::instance().unmapFile(ptr, size); });
  return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  if (!desc || !count || !size) return CUDA_ERROR_INVALID_VALUE;
  // One address space serves every device: the most permissive device request applies. Host locations are for
  // memory on the host.
  int deviceFlags = -1, hostFlags = -1;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    if (isHostLocation(desc[i].location)) {
      hostFlags = std::max<int>(hostFlags, desc[i].flags);
      continue;
    }
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (!deviceByOrdinal(desc[i].location.id)) return CUDA_ERROR_INVALID_DEVICE;
    deviceFlags = std::max<int>(deviceFlags, desc[i].flags);
  }
  auto mappings = mappingsCovering(ptr, size);
  if (mappings.empty()) return CUDA_ERROR_INVALID_VALUE;
  for (const RegionPtr& r : mappings) {
    uint64_t from = std::max<uint64_t>(r->start, ptr), to = std::min<uint64_t>(r->end(), ptr + size);
    if (from != r->start || to != r->end()) return CUDA_ERROR_INVALID_VALUE;  // access is per mapping
    if (hostFlags >= 0 && !r->hostLocated) return CUDA_ERROR_INVALID_VALUE;
  }
  for (const RegionPtr& r : mappings) {
    int device = deviceFlags >= 0 ? deviceFlags : r->accessFlags.load();
    int host = hostFlags >= 0 ? hostFlags : r->hostAccessFlags.load();
    // Kernels run on the host's threads here: memory the device may touch stays mapped for them.
    auto done = AddressSpace::instance().setProtection(r->start, r->size, std::max(device, host), device);
    if (!done) return done.error().code;
    r->accessFlags = device;
    r->hostAccessFlags = host;
  }
  return CUDA_SUCCESS;
}

CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().find(ptr);
  if (isHostLocation(*location) && region && region->kind == MemoryKind::VmmMapping && region->hostLocated) {
    *flags = static_cast<unsigned long long>(region->hostAccessFlags.load());
    return CUDA_SUCCESS;
  }
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || !deviceByOrdinal(location->id)) return CUDA_ERROR_INVALID_DEVICE;
  if (!region || region->kind != MemoryKind::VmmMapping) return CUDA_ERROR_INVALID_VALUE;
  *flags = static_cast<unsigned long long>(region->accessFlags.load());
  return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(allocation, PhysicalAllocation, handle, CUDA_ERROR_INVALID_VALUE);
  *prop = allocation->prop();
  return CUDA_SUCCESS;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().find(reinterpret_cast<uint64_t>(addr));
  if (!region || region->kind != MemoryKind::VmmMapping) return CUDA_ERROR_INVALID_VALUE;
  auto allocation = std::static_pointer_cast<PhysicalAllocation>(region->keepAlive);
  *handle = PhysicalAllocation::retain(allocation);
  return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags) {
  if (!shareableHandle || flags) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(allocation, PhysicalAllocation, handle, CUDA_ERROR_INVALID_VALUE);
  if (handleType == CU_MEM_HANDLE_TYPE_FABRIC)
    return allocation->prop().requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC ? CUDA_ERROR_NOT_PERMITTED
                                                                               : CUDA_ERROR_INVALID_VALUE;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  if (!(allocation->prop().requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_INVALID_VALUE;
  int fd = fcntl(allocation->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(shareableHandle) = fd;
  return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType) {
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  if (shHandleType == CU_MEM_HANDLE_TYPE_FABRIC) return CUDA_ERROR_NOT_PERMITTED;
  if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  int fd = static_cast<int>(reinterpret_cast<intptr_t>(osHandle));
  auto imported = PhysicalAllocation::import(fd);
  if (!imported) return imported.error().code;
  *handle = PhysicalAllocation::retain(*imported);
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
