#include "core/mempool.h"

#include "core/context.h"
#include "core/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace cuemu {
namespace {

struct DevicePools {
  std::mutex mutex;
  std::map<int, std::shared_ptr<MemPool>> defaults;
  std::map<int, std::shared_ptr<MemPool>> current;
};

DevicePools& devicePools() {
  static auto* pools = new DevicePools;
  return *pools;
}

// Every pool with a handle, for the release at synchronisations.
struct PoolRegistry {
  std::mutex mutex;
  std::vector<std::weak_ptr<MemPool>> pools;
};

PoolRegistry& poolRegistry() {
  static auto* registry = new PoolRegistry;
  return *registry;
}

// An H100's pool reserves device memory in pieces of 32 MiB (asyncpool17: 1 KiB reserves 32 MiB, 40 MiB 64 MiB,
// 143 MiB 160 MiB).
constexpr uint64_t kReservationPiece = uint64_t(32) << 20;

}  // namespace

MemPool::MemPool(int device, const CUmemPoolProps& props, bool isDefault)
    : device_(device), props_(props), isDefault_(isDefault) {}

MemPool::~MemPool() {
  if (chargesDevice() && reserved_) AddressSpace::instance().uncharge(device_, reserved_);
  if (importedFd_ >= 0) close(importedFd_);
}

Expected<RegionPtr> MemPool::allocate(Context& context, uint64_t bytes) {
  if (importedFd_ >= 0) return makeError(CUDA_ERROR_INVALID_VALUE, "an imported pool cannot allocate");
  auto region = std::make_shared<MemoryRegion>();
  region->size = bytes;
  region->kind = hostMemory() ? MemoryKind::HostPinned : managedMemory() ? MemoryKind::Managed : MemoryKind::Device;
  if (managedMemory()) region->flags = CU_MEM_ATTACH_GLOBAL;
  region->device = device_;
  region->context = context.apiHandle();
  region->pool = shared_from_this();
  region->poolHandle = apiHandle();
  uint64_t commit = alignUp(bytes, AddressSpace::pageSize());
  if (commit < bytes) return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("pool allocation of {} bytes", bytes));
  AddressSpace& space = AddressSpace::instance();
  // A GPU pool grows in 2 MiB chunks and never limits itself below 32 MiB: an H100 serves 32 blocks of 1 MiB (and
  // single allocations up to 32 MiB) from pools of maximum size 2 KiB to 32 MiB, and refuses the 33rd
  // (tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt; conformance case
  // api.memory.ClientsHostPool.SmallMaximumSize). Above 32 MiB the maximum counts whole chunks.
  constexpr uint64_t kChunk = uint64_t(2) << 20, kLeast = uint64_t(32) << 20;
  uint64_t grow = 0;
  {
    std::lock_guard lock(mutex_);
    if (props_.maxSize && used_ + bytes > std::max(alignUp(props_.maxSize, kChunk), kLeast))
      return makeError(CUDA_ERROR_OUT_OF_MEMORY, "the pool's maximum size is reached");
    // The reservation grows by whole 32 MiB pieces, and the device's free memory shrinks by as much.
    uint64_t needed = alignUp(used_ + bytes, kReservationPiece);
    if (needed > reserved_) {
      grow = needed - reserved_;
      if (chargesDevice() && !space.charge(device_, grow))
        return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("pool allocation of {} bytes", bytes));
      reserved_ = needed;
      reservedHigh_ = std::max(reservedHigh_, reserved_);
    }
    used_ += bytes;
    usedHigh_ = std::max(usedHigh_, used_);
  }
  auto undo = [&] {
    std::lock_guard lock(mutex_);
    used_ -= bytes;
  };
  uint64_t alignment = bytes >= (uint64_t(2) << 20) ? uint64_t(2) << 20 : 0;
  // Memory of a pool that exports (cuMemPoolExportPointer) is the shared memory file's from the start.
  bool exports = props_.handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  auto result = space.allocate(region, commit, alignment, 0, exports ? Backing::Shared : Backing::Private);
  if (!result) {
    undo();
    return result;
  }
  // A pinned host pool's memory faults a kernel until the pool grants the device access (setAccess).
  if (hostMemory() && !deviceMayAccess(device_)) space.setKernelAccess(**result, false);
  return result;
}

void MemPool::onRelease(const MemoryRegion& region) {
  if (!region.freePending) onFreeQueued(region);  // cuMemFree, or a context's end: not counted yet
}

void MemPool::onFreeQueued(const MemoryRegion& region) {
  std::lock_guard lock(mutex_);
  if (importedFd_ >= 0) return;           // a mapping of another process's allocation: this pool never counted it
  used_ -= std::min(used_, region.size);  // the memory stays reserved until a synchronisation or a trim
}

void MemPool::shrinkReservation(uint64_t keep) {
  keep = std::max(keep, alignUp(used_, kReservationPiece));
  if (keep >= reserved_) return;
  if (chargesDevice()) AddressSpace::instance().uncharge(device_, reserved_ - keep);
  reserved_ = keep;
}

void MemPool::releaseAboveThreshold() {
  std::lock_guard lock(mutex_);
  // An H100 keeps whole pieces up to the threshold: 64 MiB of a 96 MiB reservation, one piece of 32 MiB when
  // the threshold is 64 MiB and 8 MiB are free (asyncpool17).
  if (reserved_ > releaseThreshold_) shrinkReservation(releaseThreshold_ / kReservationPiece * kReservationPiece);
}

RegionPtr MemPool::findImport(uint64_t offset) {
  std::lock_guard lock(mutex_);
  auto it = imports_.find(offset);
  if (it == imports_.end()) return nullptr;
  RegionPtr region = it->second.lock();
  // Freed (cuMemFree) but still referenced elsewhere: no longer a mapping to hand out.
  if (!region || AddressSpace::instance().findStart(region->start) != region) {
    imports_.erase(it);
    return nullptr;
  }
  return region;
}

void MemPool::rememberImport(uint64_t offset, const RegionPtr& region) {
  std::lock_guard lock(mutex_);
  imports_[offset] = region;
}

uint64_t MemPool::usedBytes() {
  std::lock_guard lock(mutex_);
  return used_;
}

void MemPool::trimTo(uint64_t minBytesToKeep) {
  std::lock_guard lock(mutex_);
  shrinkReservation(alignUp(minBytesToKeep, kReservationPiece));  // a trim to 4 MiB keeps 32 (asyncpool17)
}

void MemPool::registerHandle(uint64_t handle) {
  handle_ = handle;
  PoolRegistry& registry = poolRegistry();
  std::lock_guard lock(registry.mutex);
  std::erase_if(registry.pools, [](const std::weak_ptr<MemPool>& pool) { return pool.expired(); });
  registry.pools.push_back(weak_from_this());
}

void releasePoolMemoryAtSynchronize(int device) {
  std::vector<std::shared_ptr<MemPool>> pools;
  {
    PoolRegistry& registry = poolRegistry();
    std::lock_guard lock(registry.mutex);
    for (const auto& weak : registry.pools)
      if (auto pool = weak.lock(); pool && pool->device() == device) pools.push_back(std::move(pool));
  }
  for (const auto& pool : pools) pool->releaseAboveThreshold();
}

CUresult MemPool::getAttribute(CUmemPool_attribute attribute, void* value) {
  std::lock_guard lock(mutex_);
  auto u64 = [&](uint64_t v) {
    std::memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
  };
  auto i32 = [&](int v) {
    std::memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
  };
  switch (attribute) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: return i32(followEventDependencies_);
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: return i32(allowOpportunistic_);
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: return i32(allowInternalDependencies_);
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: return u64(releaseThreshold_);
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: return u64(reserved_);
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: return u64(reservedHigh_);
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: return u64(used_);
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: return u64(usedHigh_);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult MemPool::setAttribute(CUmemPool_attribute attribute, const void* value) {
  std::lock_guard lock(mutex_);
  int i = 0;
  uint64_t u = 0;
  switch (attribute) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      std::memcpy(&i, value, sizeof i);
      (attribute == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES ? followEventDependencies_
       : attribute == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC     ? allowOpportunistic_
                                                                    : allowInternalDependencies_) = i != 0;
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      std::memcpy(&u, value, sizeof u);
      releaseThreshold_ = u;  // applies at the next synchronisation
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      // Only a reset to zero is allowed: the watermark restarts from the current value.
      std::memcpy(&u, value, sizeof u);
      if (u != 0) return CUDA_ERROR_INVALID_VALUE;
      if (attribute == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
        usedHigh_ = used_;
      else
        reservedHigh_ = reserved_;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult MemPool::setAccess(const CUmemAccessDesc* descriptors, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const CUmemAccessDesc& d = descriptors[i];
    if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE || !deviceByOrdinal(d.location.id))
      return CUDA_ERROR_INVALID_VALUE;
    if (d.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && d.flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        d.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    // The owning device's access cannot be changed.
    if (!hostMemory() && d.location.id == device_ && d.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_DEVICE;
  }
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < count; ++i)
      if (hostMemory() || descriptors[i].location.id != device_)
        peerAccess_[descriptors[i].location.id] = descriptors[i].flags;
  }
  // Kernels see a pinned host pool's allocations exactly while its device has access (imported pools map the
  // exporter's blocks in windows of their own and keep them accessible).
  if (hostMemory() && importedFd_ < 0)
    AddressSpace::instance().setKernelAccess([this](const MemoryRegion& r) { return r.pool.get() == this; },
                                             deviceMayAccess(device_));
  return CUDA_SUCCESS;
}

bool MemPool::deviceMayAccess(int device) {
  return access(CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, device}) != CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

CUmemAccess_flags MemPool::access(const CUmemLocation& location) {
  if (!hostMemory() && location.id == device_) return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  std::lock_guard lock(mutex_);
  auto it = peerAccess_.find(location.id);
  return it == peerAccess_.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second;
}

std::shared_ptr<MemPool> defaultMemPool(int device) {
  DevicePools& pools = devicePools();
  std::lock_guard lock(pools.mutex);
  auto& pool = pools.defaults[device];
  if (!pool) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    pool = std::make_shared<MemPool>(device, props, /*isDefault=*/true);
    pool->registerHandle(handleTable<MemPool>().insert(pool));
  }
  return pool;
}

std::shared_ptr<MemPool> currentMemPool(int device) {
  {
    DevicePools& pools = devicePools();
    std::lock_guard lock(pools.mutex);
    auto it = pools.current.find(device);
    if (it != pools.current.end() && lookup<MemPool>(it->second->handle())) return it->second;
  }
  return defaultMemPool(device);
}

void setCurrentMemPool(int device, std::shared_ptr<MemPool> pool) {
  DevicePools& pools = devicePools();
  std::lock_guard lock(pools.mutex);
  pools.current[device] = std::move(pool);
}

}  // namespace cuemu
