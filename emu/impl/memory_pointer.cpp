// Pointer queries: cuPointerGetAttribute(s), cuPointerSetAttribute.
#include "api/impl.h"

#include "core/context.h"
#include "core/memory.h"
#include "core/memory_vmm.h"
#include "core/mempool.h"
#include "impl/memory_internal.h"

#include <cstring>

namespace cuemu {
namespace {

template <typename T> CUresult put(void* data, T value) {
  std::memcpy(data, &value, sizeof value);
  return CUDA_SUCCESS;
}

// One attribute of the region holding `ptr`. Truth values are written as 4-byte integers.
// A VMM mapping's physical allocation.
const PhysicalAllocation* physicalOf(const MemoryRegion& r) {
  return r.kind == MemoryKind::VmmMapping ? static_cast<const PhysicalAllocation*>(r.keepAlive.get()) : nullptr;
}

// The mapping that holds `ptr` in region r (start, bytes): an H100 maps cuMemAlloc, pinned and managed memory in
// 2 MiB pieces (a 4 KiB allocation reports 2 MiB; tools/gpu-probe/results/vmm17-h100-2026-11-27.txt), and small
// device allocations share cuemu's 2 MiB slabs as they share the GPU's. A memory pool maps its memory in 32 MiB
// pieces aligned to 32 MiB, device and pinned host pools alike: every allocation reports the piece holding the
// queried address, one of 100 MiB too (its last byte another piece;
// tools/gpu-probe/results/pool17-h100-2026-11-27.txt). cuemu does not pack a pool's allocations as the GPU does, so
// which of them share a piece can differ. A VMM mapping is its own.
std::pair<uint64_t, uint64_t> mappingOf(const MemoryRegion& r, uint64_t ptr) {
  constexpr uint64_t kMappingBytes = uint64_t(2) << 20, kPoolPieceBytes = uint64_t(32) << 20;
  if (r.pool) return {ptr & ~(kPoolPieceBytes - 1), kPoolPieceBytes};
  if (r.slab) return {r.slab, AddressSpace::kSlabBytes};
  const bool pieces = r.kind == MemoryKind::Device || r.kind == MemoryKind::HostPinned || r.kind == MemoryKind::Managed;
  if (!pieces) return {r.start, r.size};
  return {r.start, (r.size + kMappingBytes - 1) / kMappingBytes * kMappingBytes};
}

CUresult attributeOf(const MemoryRegion& r, uint64_t ptr, CUpointer_attribute attribute, void* data) {
  bool vmm = r.kind == MemoryKind::VmmMapping;
  bool host = !r.isDeviceSide() || r.hostLocated;
  // Host-pool memory without device access has no context, device pointer or range start (driver 580); a VMM
  // mapping no device may access yet has no device pointer.
  bool hidden = hostPoolHiddenFromDevice(r);
  bool vmmUnreachable = vmm && r.accessFlags.load() == CU_MEM_ACCESS_FLAGS_PROT_NONE;
  // A VMM mapping's range is its reservation, as on an H100 (tools/gpu-probe/results/vmm17-h100-2026-11-27.txt).
  RegionPtr reservation = vmm ? AddressSpace::instance().findReservation(ptr) : nullptr;
  switch (attribute) {
    // Pool memory answers no context on an H100, device and pinned host pools alike (vmm17 results).
    case CU_POINTER_ATTRIBUTE_CONTEXT: return put(data, hidden || r.pool ? CUcontext{} : r.context);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      return put(data, static_cast<unsigned>(host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE));
    // A failed device or host pointer query still writes a null pointer, as on an H100.
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      if (hidden || vmmUnreachable) return put(data, CUdeviceptr{}), CUDA_ERROR_INVALID_VALUE;
      return put(data, static_cast<CUdeviceptr>(ptr));
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      // Device memory has no host address (in cuemu it has one, but programs must not learn to rely on it).
      if (!host && r.kind != MemoryKind::Managed)
        return put(data, static_cast<void*>(nullptr)), CUDA_ERROR_INVALID_VALUE;
      return put(data, reinterpret_cast<void*>(ptr));
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: {
      if (host) return CUDA_ERROR_INVALID_VALUE;
      CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens{r.bufferId, 0};
      return put(data, tokens);
    }
    // Managed memory's memory operations are always synchronous (an H100 reads 1 without a set).
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      return put(data, static_cast<int>(r.syncMemops.load() || r.kind == MemoryKind::Managed));
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: return put(data, static_cast<unsigned long long>(r.bufferId));
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: return put(data, static_cast<int>(r.kind == MemoryKind::Managed));
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return put(data, r.device);
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      return put(data, static_cast<int>(r.kind == MemoryKind::Device && !r.pool));
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      return put(data, hidden ? CUdeviceptr{} : reservation ? CUdeviceptr(reservation->start) : CUdeviceptr(r.start));
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      return put(data, static_cast<size_t>(reservation ? reservation->size : r.size));
    case CU_POINTER_ATTRIBUTE_MAPPED: return put(data, 1);
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: {
      unsigned types = CU_MEM_HANDLE_TYPE_NONE;
      if (const PhysicalAllocation* physical = physicalOf(r)) types = physical->prop().requestedHandleTypes;
      if (r.pool) types = r.pool->props().handleTypes;
      return put(data, types);
    }
    // cuMemAlloc memory is GPUDirect RDMA capable on an H100; pools, host, managed and VMM memory are not.
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      return put(data, static_cast<int>(r.kind == MemoryKind::Device && !r.pool && !r.hostLocated));
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      return put(data, static_cast<int>(r.kind == MemoryKind::VmmMapping ? r.accessFlags.load()
                                                                         : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return put(data, r.poolHandle);
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: return put(data, static_cast<size_t>(mappingOf(r, ptr).second));
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return put(data, reinterpret_cast<void*>(mappingOf(r, ptr).first));
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return put(data, static_cast<unsigned long long>(r.bufferId));
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return put(data, 0);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// The answer for memory the driver does not know (cuPointerGetAttributes does not fail on it).
CUresult attributeOfUnknown(CUpointer_attribute attribute, void* data) {
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return put(data, CUcontext{});
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return put(data, 0u);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: return put(data, CUdeviceptr{});
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return put(data, static_cast<void*>(nullptr));
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return put(data, CUDA_POINTER_ATTRIBUTE_P2P_TOKENS{});
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return put(data, 0ull);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return put(data, -2);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: return put(data, CUdeviceptr{});
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: return put(data, size_t{0});
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return put(data, static_cast<void*>(nullptr));
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return put(data, CUmemoryPool{});
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: return put(data, 0u);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return put(data, 0);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

namespace impl {

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().find(ptr);
  if (!region) return CUDA_ERROR_INVALID_VALUE;
  return attributeOf(*region, ptr, attribute, data);
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                                CUdeviceptr ptr) {
  if (!numAttributes || !attributes || !data) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().find(ptr);
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
    CUresult r =
        region ? attributeOf(*region, ptr, attributes[i], data[i]) : attributeOfUnknown(attributes[i], data[i]);
    // Attributes that do not apply to this kind of memory read as their empty value.
    if (r == CUDA_ERROR_INVALID_VALUE && region) r = attributeOfUnknown(attributes[i], data[i]);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult cuPointerSetAttribute(const void* value, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().find(ptr);
  if (!region) return CUDA_ERROR_INVALID_VALUE;
  if (attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) return CUDA_ERROR_INVALID_VALUE;
  // VMM memory keeps its memory operations asynchronous (driver 580 on an H100: not supported).
  if (region->kind == MemoryKind::VmmMapping) return CUDA_ERROR_NOT_SUPPORTED;
  int enable = 0;
  std::memcpy(&enable, value, sizeof enable);
  region->syncMemops.store(enable != 0);
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
