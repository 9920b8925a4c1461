// Device memory as the API sees it: per-context ownership of allocations, resolving pointers given to copies
// and sets, and the copy engine. Addresses, accessibility and accounting live in core/address_space.h.
#pragma once

#include "api/cuda_internal.h"
#include "core/address_space.h"
#include "core/result.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace cuemu {

class Context;

// The context's part: everything allocated "in" a context dies with it.
class ContextMemory {
 public:
  explicit ContextMemory(Context& context) : context_(context) {}
  // Releases every allocation, pinned or registered host range, array and IPC mapping of the context.
  void teardown();

  // cuMemAlloc: `bytes` of device memory of the context's device, charged against the device's capacity. Small
  // allocations share slabs (AddressSpace::allocateSmall) unless `ownMapping` (memory that must be made again at
  // the same address later: graph allocations), which also keeps its addresses taken when it is freed
  // (MemoryRegion::holdsAddresses) until AddressSpace::stopHolding.
  Expected<RegionPtr> allocateDevice(uint64_t bytes, bool ownMapping = false);
  // The same at exactly `address` (a graph allocation made again where the application freed it: the addresses it
  // held); fails if those addresses are taken.
  Expected<RegionPtr> allocateDeviceAt(uint64_t bytes, uint64_t address);
  // The same at an address below 4 GiB (the 32-bit legacy entry points).
  Expected<RegionPtr> allocateDeviceBelow4GiB(uint64_t bytes);
  // cuMemAllocHost / cuMemHostAlloc: pinned host memory (in the device range: host and device pointer equal).
  Expected<RegionPtr> allocateHost(uint64_t bytes, unsigned flags);
  // cuMemAllocManaged.
  Expected<RegionPtr> allocateManaged(uint64_t bytes, unsigned attachFlags);
  // cuMemHostRegister.
  Expected<RegionPtr> registerHost(void* pointer, uint64_t bytes, unsigned flags);

  Context& context() { return context_; }

 private:
  Expected<RegionPtr> allocate(uint64_t bytes, MemoryKind kind, unsigned flags, bool charged, bool below4GiB = false,
                               uint64_t fixedAddress = 0, bool ownMapping = false);
  Context& context_;
};

// Memory released while kernels run (issue 24). A GPU kernel that touches memory freed or unmapped under it faults
// with CUDA_ERROR_ILLEGAL_ADDRESS (measured on an H100: tools/gpu-probe/results/clients17c-h100-2026-11-26.txt).
// Here a kernel checks an address and then touches host memory: if the memory were unmapped between the two the
// host process would crash. So a release makes the memory inaccessible to kernels at once (their next check
// faults cleanly) and defers the unmapping until every grid that was running at that moment has ended.
class KernelsInFlight {
 public:
  static KernelsInFlight& instance();
  uint64_t enter();
  void exit(uint64_t ticket);
  // Runs `unmap` once the grids running now have ended (at once when none runs). It unmaps [start, start+bytes)
  // (0 bytes: addresses that nothing can map again before the action runs).
  void defer(uint64_t start, uint64_t bytes, std::function<void()> unmap);
  // Waits for the deferred unmappings overlapping [start, start+bytes): a new mapping there must not be undone.
  void settle(uint64_t start, uint64_t bytes);

 private:
  struct Deferred {
    uint64_t ticket, start, bytes;
    std::function<void()> unmap;
  };
  std::mutex mutex_;
  std::condition_variable settled_;
  uint64_t next_ = 1;
  std::multiset<uint64_t> running_;
  std::vector<Deferred> deferred_;
};

// One grid's run, for KernelsInFlight.
class GridInFlight {
 public:
  GridInFlight() : ticket_(KernelsInFlight::instance().enter()) {}
  ~GridInFlight() { KernelsInFlight::instance().exit(ticket_); }
  GridInFlight(const GridInFlight&) = delete;
  GridInFlight& operator=(const GridInFlight&) = delete;

 private:
  uint64_t ticket_;
};

// Releases the allocation that starts at `address` if it is one of `kinds`. An unknown pointer, an interior
// pointer and a region of another kind are CUDA_ERROR_INVALID_VALUE.
Expected<RegionPtr> releaseRegion(uint64_t address, std::initializer_list<MemoryKind> kinds);
// Frees a region already unregistered from the address space: its charge, pool bookkeeping.
void settleReleasedRegion(const MemoryRegion& region);

// Memory of a pinned host pool that has not granted its device access: host memory only, which device-side
// copies, sets and address-range queries do not accept (driver 580 on an H100).
bool hostPoolHiddenFromDevice(const MemoryRegion& region);
// Memory of a pinned host pool (location HOST or HOST_NUMA), with or without device access.
bool isHostPoolMemory(const MemoryRegion& region);

// The region holding [address, address+bytes) on the device side (device, managed, pinned/registered host
// memory addressed by its device pointer), or CUDA_ERROR_INVALID_VALUE. `write`: the range is a copy's or a set's
// destination, which memory registered read-only cannot be (driver 580).
// `continuation`: where the caller can hold several regions (copies and sets), a range that starts in a VMM
// mapping may run on into the mappings mapped right after it (cuMemMap side by side in one reservation, as pools
// that grow do: ggml's, PyTorch's expandable segments; a GPU copies across the seams): those come back there, in
// address order, each with access. Without it such a range is refused, as a range past any allocation's end.
Expected<RegionPtr> deviceRange(uint64_t address, uint64_t bytes, bool write = false,
                                std::vector<RegionPtr>* continuation = nullptr);

// A pointer given where either side is allowed (cuMemcpy, CU_MEMORYTYPE_UNIFIED): a known region must hold
// the whole range (or, with `continuation`, VMM mappings side by side, as deviceRange); an unknown pointer outside
// the device range is pageable host memory; an unknown pointer inside the device range (freed memory) is
// CUDA_ERROR_INVALID_VALUE. Returns the region or null for host.
Expected<RegionPtr> anyRange(uint64_t address, uint64_t bytes, bool write = false,
                             std::vector<RegionPtr>* continuation = nullptr);

// Registered host memory stays the application's: it may unmap it (a GPU keeps the pinned pages; cuemu cannot) or
// have registered it read-only. Whether [address, address+bytes) of such a region may still be read (or
// written): the pages are mapped, and not registered read-only for a write.
bool registeredHostUsable(const MemoryRegion& region, uint64_t address, uint64_t bytes, bool write);
// Registered host memory as one kernel launch sees it. Checking the pages on every kernel access cost a syscall
// each (mincore); a launch instead takes the registered ranges and checks their pages once, so an access is a
// range test. A range with pages missing at launch (the application unmapped some) keeps the per-access check,
// so an access to its missing pages is a clean ILLEGAL_ADDRESS and one to its mapped pages works. Memory
// unmapped while the kernel runs is not noticed (on a GPU the pinned pages would stay; here the host faults).
class RegisteredHostSnapshot {
 public:
  RegisteredHostSnapshot();
  enum class Verdict : uint8_t {
    Allowed,     // inside a registered range that was fully mapped at launch (and writable, for a write)
    Refused,     // a write into a range registered read-only
    CheckPages,  // inside a range with pages missing at launch: ask registeredHostUsable
    Outside,     // in no range registered at launch
  };
  Verdict check(uint64_t address, uint64_t bytes, bool write) const {
    // The ranges are sorted by start and do not overlap: the one that may hold `address` is the last starting
    // at or below it.
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                  [](uint64_t a, const Range& range) { return a < range.start; });
    if (after == ranges_.begin()) return Verdict::Outside;
    const Range& range = *std::prev(after);
    if (address - range.start >= range.bytes || bytes > range.bytes - (address - range.start)) return Verdict::Outside;
    if (write && range.readOnly) return Verdict::Refused;
    return range.mapped ? Verdict::Allowed : Verdict::CheckPages;
  }

 private:
  struct Range {
    uint64_t start, bytes;
    bool readOnly, mapped;
  };
  std::vector<Range> ranges_;
};

// Whether [p, p+bytes) is mapped with read access, and write access unless `readOnly` (cuMemHostRegister).
bool hostPagesAllow(const void* p, size_t bytes, bool readOnly);

// Whether a host pointer needs a synchronous copy: pageable memory (not pinned, not registered) that the
// application may reuse as soon as the call returns.
bool isPageableHost(const void* pointer);

// The copy engine: memcpy, split across threads for very large copies where that adds bandwidth.
void copyBytes(void* dst, const void* src, size_t bytes);

// A side of a strided copy: the address of element (0,0,0) and the distances between rows and slices.
struct CopySide {
  uint8_t* origin = nullptr;
  size_t pitch = 0;
  size_t slicePitch = 0;
  RegionPtr region;                     // the allocation (or array storage) it lies in; null for pageable host memory
  std::vector<RegionPtr> continuation;  // VMM mappings the side runs on into (deviceRange)
};
void copy3D(CopySide dst, CopySide src, size_t widthBytes, size_t height, size_t depth);

// Holds `region`'s memory in `leases` until the copy or set that checked it has run (see RegionLease): memory freed
// meanwhile (cuMemFree, a context's destruction on another thread) stays mapped under it. Null (pageable host
// memory) needs no lease; a region freed since it was checked is CUDA_ERROR_INVALID_VALUE.
CUresult leaseRegion(const RegionPtr& region, std::vector<RegionLease>& leases);
// Each of `regions` (the VMM mappings a range runs on into: deviceRange's continuation).
CUresult leaseRegions(const std::vector<RegionPtr>& regions, std::vector<RegionLease>& leases);
// A copy side's allocation and the mappings it runs on into.
CUresult leaseSide(const CopySide& side, std::vector<RegionLease>& leases);

// A validated strided copy, ready to run (also what graph memcpy nodes run).
struct PreparedCopy {
  CopySide dst, src;
  size_t widthBytes = 0, height = 1, depth = 1;
  bool touchesPageableHost = false;  // an asynchronous form must still finish before returning
  void run() const { copy3D(dst, src, widthBytes, height, depth); }
};
// Validates a copy described like the driver's 3D copies (2D and 3D descriptors convert to this form):
// memory types, pointers, arrays, pitches and that every byte lies inside its allocation.
Expected<PreparedCopy> prepareCopy(const CUDA_MEMCPY3D_PEER& copy);
CUDA_MEMCPY3D_PEER toPeerCopy(const CUDA_MEMCPY2D& copy);
CUDA_MEMCPY3D_PEER toPeerCopy(const CUDA_MEMCPY3D& copy);

// Fills `count` elements of `elementSize` (1, 2, 4) bytes with `value`, in `height` rows `pitch` apart.
void fill2D(uint8_t* dst, size_t pitch, uint32_t value, unsigned elementSize, size_t count, size_t height);

}  // namespace cuemu
