// Virtual memory management: physical allocations (cuMemCreate) are memfd-backed, so they can be mapped at
// several addresses (cuMemMap into cuMemAddressReserve ranges) and shared with other processes as file
// descriptors (cuMemExportToShareableHandle / cuMemImportFromShareableHandle).
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/result.h"

#include <cstdint>
#include <memory>

namespace cuemu {

// The granularity of VMM sizes, offsets and addresses (the GPU's 2 MiB large page).
constexpr uint64_t kVmmGranularity = uint64_t(2) << 20;

class PhysicalAllocation {
 public:
  static constexpr HandleKind kKind = HandleKind::MemGenericAllocation;

  // A new allocation of `size` bytes for `prop`, charged to its device (host memory is not).
  static Expected<std::shared_ptr<PhysicalAllocation>> create(uint64_t size, const CUmemAllocationProp& prop);
  // An allocation shared by another process (or this one) through a file descriptor (duplicated here).
  static Expected<std::shared_ptr<PhysicalAllocation>> import(int fd);
  ~PhysicalAllocation();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  const CUmemAllocationProp& prop() const { return prop_; }
  // Memory on the host (a HOST or HOST_NUMA location; reported as HOST_NUMA node 0, as driver 580 does).
  bool hostMemory() const { return prop_.location.type != CU_MEM_LOCATION_TYPE_DEVICE; }
  uint64_t blockId() const { return blockId_; }

  // The handle the application holds: each cuMemCreate / cuMemRetainAllocationHandle adds a reference, each
  // cuMemRelease drops one; at zero the handle is invalid but mappings keep the memory alive.
  static uint64_t retain(const std::shared_ptr<PhysicalAllocation>& self);
  bool release();

 private:
  PhysicalAllocation() = default;
  int fd_ = -1;
  uint64_t size_ = 0;
  CUmemAllocationProp prop_{};
  uint64_t charged_ = 0;
  uint64_t blockId_ = 0;
  int references_ = 0;
  uint64_t handle_ = 0;
};

}  // namespace cuemu
