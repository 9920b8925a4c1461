// Managed (unified) memory: cuMemAllocManaged, cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute(s),
// batch prefetch/discard. Host and device share the bytes already, so advice and prefetches only record what
// the attribute queries report (per allocation, not per page).
#include "api/impl.h"

#include "core/device.h"
#include "core/memory.h"
#include "impl/memory_internal.h"

#include <cstring>

namespace cuemu {
namespace {

// The managed allocation holding all of [devPtr, devPtr+count).
Expected<RegionPtr> managedRange(CUdeviceptr devPtr, size_t count) {
  if (!count) return makeError(CUDA_ERROR_INVALID_VALUE, "empty range");
  RegionPtr region = AddressSpace::instance().find(devPtr);
  if (!region || region->kind != MemoryKind::Managed || !region->contains(devPtr, count))
    return makeError(CUDA_ERROR_INVALID_VALUE, "not a managed memory range");
  return region;
}

// A location named by advice or prefetch: a device, or the host.
bool validLocation(const CUmemLocation& location) {
  switch (location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return deviceByOrdinal(location.id) != nullptr;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return location.id == 0;
    default: return false;
  }
}

CUmemLocation locationOfDevice(CUdevice device) {
  CUmemLocation location{};
  if (device == CU_DEVICE_CPU) {
    location.type = CU_MEM_LOCATION_TYPE_HOST;
  } else {
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
  }
  return location;
}

// The legacy attribute value of a location: a device ordinal, CU_DEVICE_CPU for the host.
int legacyId(int type, int id) {
  if (type == CU_MEM_LOCATION_TYPE_DEVICE) return id;
  if (type == 0) return CU_DEVICE_INVALID;
  return CU_DEVICE_CPU;
}

CUresult advise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) {
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  auto region = managedRange(devPtr, count);
  if (!region) return region.error().code;
  MemoryRegion& r = **region;
  bool needsLocation = advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION || advice == CU_MEM_ADVISE_SET_ACCESSED_BY ||
                       advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  if (needsLocation && !validLocation(location)) return CUDA_ERROR_INVALID_DEVICE;
  uint64_t bit = location.type == CU_MEM_LOCATION_TYPE_DEVICE ? uint64_t(1) << (location.id & 62) : uint64_t(1) << 63;
  switch (advice) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY: r.readMostly = true; return CUDA_SUCCESS;
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY: r.readMostly = false; return CUDA_SUCCESS;
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
      r.preferredLocationType = location.type;
      r.preferredLocation = location.id;
      return CUDA_SUCCESS;
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
      r.preferredLocationType = 0;
      r.preferredLocation = CU_DEVICE_INVALID;
      return CUDA_SUCCESS;
    case CU_MEM_ADVISE_SET_ACCESSED_BY: r.accessedByMask |= bit; return CUDA_SUCCESS;
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY: r.accessedByMask &= ~bit; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned flags, CUstream stream) {
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto region = managedRange(devPtr, count);
  if (!region) return region.error().code;
  if (!validLocation(location)) return CUDA_ERROR_INVALID_DEVICE;
  RegionPtr r = *region;
  return memops::runAsync(context, stream, [r, location] {
    r->lastPrefetchLocationType = location.type;
    r->lastPrefetchLocation = location.id;
    return CUDA_SUCCESS;
  });
}

CUresult rangeAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute, CUdeviceptr devPtr,
                        size_t count) {
  if (!data || !dataSize) return CUDA_ERROR_INVALID_VALUE;
  auto region = managedRange(devPtr, count);
  if (!region) return region.error().code;
  const MemoryRegion& r = **region;
  auto scalar = [&](int value) {
    if (dataSize != sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(data, &value, sizeof value);
    return CUDA_SUCCESS;
  };
  switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: return scalar(r.readMostly ? 1 : 0);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
      return scalar(legacyId(r.preferredLocationType, r.preferredLocation));
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: return scalar(r.preferredLocationType);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
      return scalar(r.preferredLocationType ? r.preferredLocation.load() : CU_DEVICE_INVALID);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      return scalar(legacyId(r.lastPrefetchLocationType, r.lastPrefetchLocation));
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: return scalar(r.lastPrefetchLocationType);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
      return scalar(r.lastPrefetchLocationType ? r.lastPrefetchLocation.load() : CU_DEVICE_INVALID);
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      if (dataSize % sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
      auto* out = static_cast<int*>(data);
      size_t slots = dataSize / sizeof(int), used = 0;
      uint64_t mask = r.accessedByMask;
      for (int device = 0; device < 63 && used < slots; ++device)
        if (mask & (uint64_t(1) << device)) out[used++] = device;
      if ((mask >> 63) && used < slots) out[used++] = CU_DEVICE_CPU;
      while (used < slots) out[used++] = CU_DEVICE_INVALID;
      return CUDA_SUCCESS;
    }
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult prefetchBatch(CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* locations, size_t* locationIdxs,
                       size_t numLocations, unsigned long long flags, CUstream stream, bool discard) {
  if (!dptrs || !sizes || !count || flags) return CUDA_ERROR_INVALID_VALUE;
  if (numLocations && (!locations || !locationIdxs || numLocations > count || locationIdxs[0] != 0))
    return CUDA_ERROR_INVALID_VALUE;
  if (!discard && !numLocations) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  for (size_t i = 0; i < numLocations; ++i) {
    if (!validLocation(locations[i])) return CUDA_ERROR_INVALID_DEVICE;
    if ((i && locationIdxs[i] <= locationIdxs[i - 1]) || locationIdxs[i] >= count) return CUDA_ERROR_INVALID_VALUE;
  }
  std::vector<std::pair<RegionPtr, CUmemLocation>> updates;
  size_t next = 0;
  CUmemLocation location{};
  for (size_t i = 0; i < count; ++i) {
    while (next < numLocations && locationIdxs[next] == i) location = locations[next++];
    auto region = managedRange(dptrs[i], sizes[i]);
    if (!region) return region.error().code;
    if (numLocations) updates.emplace_back(*region, location);
  }
  return memops::runAsync(context, stream, [updates = std::move(updates)] {
    for (auto& [region, where] : updates) {
      region->lastPrefetchLocationType = where.type;
      region->lastPrefetchLocation = where.id;
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace

namespace impl {

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  if (!dptr || !bytesize) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto region = context.memory().allocateManaged(bytesize, flags);
  if (!region) return region.error().code;
  *dptr = (*region)->start;
  return CUDA_SUCCESS;
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  return advise(devPtr, count, advice, locationOfDevice(device));
}
CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) {
  return advise(devPtr, count, advice, location);
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return prefetch(devPtr, count, locationOfDevice(dstDevice), 0, hStream);
}
CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                               CUstream hStream) {
  return prefetch(devPtr, count, location, flags, hStream);
}

CUresult cuMemPrefetchBatchAsync(CUdeviceptr* d, size_t* s, size_t n, CUmemLocation* l, size_t* li, size_t nl,
                                 unsigned long long f, CUstream st) {
  return prefetchBatch(d, s, n, l, li, nl, f, st, false);
}
CUresult cuMemDiscardBatchAsync(CUdeviceptr* d, size_t* s, size_t n, unsigned long long f, CUstream st) {
  return prefetchBatch(d, s, n, nullptr, nullptr, 0, f, st, true);
}
CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr* d, size_t* s, size_t n, CUmemLocation* l, size_t* li, size_t nl,
                                           unsigned long long f, CUstream st) {
  return prefetchBatch(d, s, n, l, li, nl, f, st, false);
}

CUresult cuMemRangeGetAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute, CUdeviceptr devPtr,
                                size_t count) {
  return rangeAttribute(data, dataSize, attribute, devPtr, count);
}

CUresult cuMemRangeGetAttributes(void** data, size_t* dataSizes, CUmem_range_attribute* attributes,
                                 size_t numAttributes, CUdeviceptr devPtr, size_t count) {
  if (!data || !dataSizes || !attributes || !numAttributes) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numAttributes; ++i)
    if (CUresult r = rangeAttribute(data[i], dataSizes[i], attributes[i], devPtr, count); r != CUDA_SUCCESS) return r;
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
