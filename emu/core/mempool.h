// Memory pools for stream-ordered allocation (cuMemAllocAsync, cuMemPool*). Each device has a default pool
// and a current pool; applications create more. A pool hands out device memory from the address space and
// keeps the statistics the pool attributes report, as an H100's pool does (tools/gpu-probe/asyncpool17.cpp): its
// used size is the bytes asked for, it reserves device memory in 32 MiB chunks, and freed memory stays reserved
// (counted against the device, so cuMemAlloc may find none) until a stream, event or context synchronisation
// releases what is above the release threshold, or cuMemPoolTrimTo.
#pragma once

#include "api/cuda_internal.h"
#include "core/address_space.h"
#include "core/handle.h"
#include "core/result.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace cuemu {

class Context;

class MemPool : public std::enable_shared_from_this<MemPool> {
 public:
  static constexpr HandleKind kKind = HandleKind::MemPool;

  MemPool(int device, const CUmemPoolProps& props, bool isDefault);
  ~MemPool();

  // A pool imported from another process (cuMemPoolImportFromShareableHandle): its memory file. Such a pool
  // only maps pointers exported from the original (cuMemPoolImportPointer).
  void setImportedFd(int fd) { importedFd_ = fd; }
  int importedFd() const { return importedFd_; }

  int device() const { return device_; }
  // A pool of pinned host memory (location HOST or HOST_NUMA): its allocations are host memory the device can
  // address, like cuMemHostAlloc's, and are not charged to the device.
  bool hostMemory() const {
    return props_.allocType == CU_MEM_ALLOCATION_TYPE_PINNED && props_.location.type != CU_MEM_LOCATION_TYPE_DEVICE;
  }
  // A pool of managed memory (CU_MEM_ALLOCATION_TYPE_MANAGED): its allocations are cuMemAllocManaged's kind.
  bool managedMemory() const { return props_.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED; }
  // Imported pools map each exported allocation once (by its offset in the exporter's memory file): a second
  // import of a live one answers the first mapping.
  RegionPtr findImport(uint64_t offset);
  void rememberImport(uint64_t offset, const RegionPtr& region);
  bool isDefault() const { return isDefault_; }
  const CUmemPoolProps& props() const { return props_; }
  uint64_t handle() const { return handle_; }
  CUmemoryPool apiHandle() const { return toApiHandle<CUmemoryPool>(handle_); }

  // An allocation of `bytes` owned by `context` (the stream's context).
  Expected<RegionPtr> allocate(Context& context, uint64_t bytes);
  // Bookkeeping after one of the pool's regions left the address space.
  void onRelease(const MemoryRegion& region);
  // cuMemFreeAsync queued the region's free: an H100's pool stops counting it as used at once, before the stream
  // reaches the free (asyncpool17); its release then changes nothing more.
  void onFreeQueued(const MemoryRegion& region);
  // What a synchronisation does: reserved memory above the release threshold goes back to the device.
  void releaseAboveThreshold();

  CUresult getAttribute(CUmemPool_attribute attribute, void* value);
  CUresult setAttribute(CUmemPool_attribute attribute, const void* value);
  void trimTo(uint64_t minBytesToKeep);

  // Access of devices: a device pool's own device always has read-write access, other devices what was set. A
  // pinned host pool starts with no device access (an H100 faults a kernel that touches it and refuses memsets and
  // device-side copies of it: tools/gpu-probe/results/clients17c-h100-2026-11-26.txt) until it is granted.
  CUresult setAccess(const CUmemAccessDesc* descriptors, size_t count);
  CUmemAccess_flags access(const CUmemLocation& location);
  bool deviceMayAccess(int device);

  // Registers the pool in the handle table (once).
  void registerHandle(uint64_t handle);
  // Live allocations count (a pool with allocations can still be destroyed: they stay valid until freed).
  uint64_t usedBytes();

 private:
  const int device_;
  const CUmemPoolProps props_;
  const bool isDefault_;
  uint64_t handle_ = 0;
  std::mutex mutex_;
  // Shrinks the reservation to `keep` bytes (never below the chunks in use), giving the rest back to the device.
  void shrinkReservation(uint64_t keep);
  bool chargesDevice() const { return !hostMemory() && importedFd_ < 0; }

  uint64_t used_ = 0, usedHigh_ = 0, reserved_ = 0, reservedHigh_ = 0;
  uint64_t releaseThreshold_ = 0;
  int followEventDependencies_ = 1, allowOpportunistic_ = 1, allowInternalDependencies_ = 1;
  std::map<int, CUmemAccess_flags> peerAccess_;
  int importedFd_ = -1;
  std::map<uint64_t, std::weak_ptr<MemoryRegion>> imports_;
};

// The device's default pool (created on first use) and its current pool (cuDeviceSetMemPool).
std::shared_ptr<MemPool> defaultMemPool(int device);
std::shared_ptr<MemPool> currentMemPool(int device);
void setCurrentMemPool(int device, std::shared_ptr<MemPool> pool);
// cuStreamSynchronize, cuEventSynchronize and cuCtxSynchronize: every pool of the device releases its reserved
// memory above its release threshold (cuStreamQuery and cuMemFree's implicit waits do not).
void releasePoolMemoryAtSynchronize(int device);

}  // namespace cuemu
