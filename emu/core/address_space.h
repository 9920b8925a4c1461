// The process's device address space. Device memory lives in one large range of virtual addresses reserved
// at first use (PROT_NONE, no swap reservation), so a device pointer IS a host address inside that range:
// copies are plain memcpy and the PTX interpreter dereferences device pointers directly after isAccessible().
//
// Every allocation the driver knows of is a MemoryRegion: device memory, pinned host memory and managed memory
// carved from the range, host memory registered by the application (outside the range), VMM reservations and
// mappings, IPC imports. Regions start on a chunk boundary and are followed by at least one unmapped guard chunk,
// so an overrun faults instead of touching a neighbour; small device allocations are the exception: they share
// slabs, as on a GPU (allocateSmall). A flat table with one 32-bit entry per chunk answers
// "may `size` bytes at `address` be accessed?" in O(1) without locks.
#pragma once

#include "api/cuda_internal.h"
#include "core/limits.h"
#include "core/result.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <vector>

namespace cuemu {

class Context;
class MemPool;

enum class MemoryKind : uint8_t {
  Device,          // cuMemAlloc, cuMemAllocPitch, stream-ordered pool allocations
  HostPinned,      // cuMemAllocHost / cuMemHostAlloc: host memory the device can address
  HostRegistered,  // cuMemHostRegister: the application's own memory (outside the range)
  Managed,         // cuMemAllocManaged
  Array,           // storage of a CUarray / mipmapped array level
  VmmReservation,  // cuMemAddressReserve: addresses only; mappings are separate regions inside it
  VmmMapping,      // cuMemMap of a physical allocation into a reservation
  IpcImport,       // cuIpcOpenMemHandle: another process's allocation mapped here
};

const char* memoryKindName(MemoryKind kind);

// One allocation. Immutable after registration except for the atomics (attributes the application may set).
struct MemoryRegion {
  uint64_t start = 0;
  uint64_t size = 0;           // bytes the application asked for (the valid range)
  uint64_t committedSize = 0;  // bytes made accessible (page multiple); 0 for registered / reservations
  uint64_t reservedSize = 0;   // virtual addresses taken from the range, guard excluded
  // Bytes from start that kernels may touch without a fault: the allocation rounded up to the mapping granule
  // where the GPU maps whole granules (AddressSpace::boundsMode), else exactly size.
  uint64_t accessibleSize = 0;
  MemoryKind kind = MemoryKind::Device;
  unsigned flags = 0;             // host-alloc / host-register / managed-attach flags, by kind
  int device = 0;                 // owning device ordinal
  CUcontext context = nullptr;    // owning context (the handle; null for pool/VMM memory owned by the device)
  uint64_t bufferId = 0;          // process-wide unique, never reused
  uint64_t chargedBytes = 0;      // bytes counted against the device's memory
  std::shared_ptr<MemPool> pool;  // stream-ordered allocations: keeps a destroyed pool alive until freed
  CUmemoryPool poolHandle = nullptr;
  void* hostAlias = nullptr;  // registered memory: the host address (equal to start: unified addressing)
  uint64_t arrayHandle = 0;   // Array kind: the owning CUarray handle value
  uint64_t vmmHandle = 0;     // VmmMapping: the physical allocation's handle value
  uint64_t vmmOffset = 0;     // VmmMapping: offset into the physical allocation
  // Its memory is the process's shared memory file at offset start - AddressSpace::base() from allocation on
  // (Backing::Shared, a small allocation through its slab): IPC exports it by naming that range.
  bool sharedBacking = false;
  uint64_t slab = 0;  // sub-allocated: the start of the shared slab holding it (AddressSpace::allocateSmall)
  std::shared_ptr<void> keepAlive;  // what the memory belongs to (a VMM physical allocation, an IPC import)
  // Copies and sets in flight hold leases (RegionLease), as do graph memcpy/memset nodes and stream memory
  // operations from their launch until they ran: freeing the region meanwhile (cuMemFree on another thread, or its
  // context's destruction) unregisters it at once but leaves its memory mapped until the last lease ends, so the
  // bytes never vanish under a running copy.
  std::atomic<int> leases{0};
  std::atomic<bool> released{false};
  std::atomic<bool> reclaimed{false};
  std::atomic<bool> syncMemops{false};
  std::atomic<bool> freePending{false};  // cuMemFreeAsync queued: a second free is an error
  // Its addresses outlive it (a graph allocation, GraphAllocation): released, its memory goes back but its addresses
  // stay taken (AddressSpace::allocate hands them to it again, stopHolding returns them). Regions of their own
  // chunks only, never slab blocks.
  std::atomic<bool> holdsAddresses{false};
  std::atomic<int> accessFlags{CU_MEM_ACCESS_FLAGS_PROT_READWRITE};  // VMM mappings: set by cuMemSetAccess
  // VMM mappings of memory on the host (cuMemCreate with a HOST or HOST_NUMA location): host memory, which the
  // host reaches once cuMemSetAccess grants a host location (hostAccessFlags) and kernels once it grants a device.
  bool hostLocated = false;
  std::atomic<int> hostAccessFlags{CU_MEM_ACCESS_FLAGS_PROT_NONE};
  // Managed memory advice (cuMemAdvise); read by cuMemRangeGetAttribute.
  std::atomic<int> preferredLocation{CU_DEVICE_INVALID};
  std::atomic<int> preferredLocationType{0};
  std::atomic<bool> readMostly{false};
  std::atomic<uint64_t> accessedByMask{0};
  std::atomic<int> lastPrefetchLocation{CU_DEVICE_INVALID};
  std::atomic<int> lastPrefetchLocationType{0};

  uint64_t end() const { return start + size; }
  // Bytes kernels may touch from start (regions registered without a span of their own: exactly size).
  uint64_t kernelAccessibleBytes() const { return std::max(accessibleSize, size); }
  bool contains(uint64_t address, uint64_t bytes) const {
    return address >= start && address - start <= size && bytes <= size - (address - start);
  }
  bool isDeviceSide() const { return kind != MemoryKind::HostPinned && kind != MemoryKind::HostRegistered; }
};

using RegionPtr = std::shared_ptr<MemoryRegion>;

// A hold on a region's memory for the duration of a copy or set (see MemoryRegion::leases). Invalid (empty) when
// the region was already freed: the caller answers as for a freed pointer. Copies hold another lease.
class RegionLease {
 public:
  RegionLease() = default;
  explicit RegionLease(RegionPtr region);
  RegionLease(const RegionLease& other) : RegionLease(other.region_, true) {}
  RegionLease& operator=(const RegionLease& other);
  RegionLease(RegionLease&& other) noexcept = default;
  RegionLease& operator=(RegionLease&& other) noexcept;
  ~RegionLease() { end(); }
  bool valid() const { return region_ != nullptr; }

 private:
  RegionLease(const RegionPtr& region, bool alreadyHeld);
  void end();
  RegionPtr region_;
};

// Where a kernel's access beyond an allocation faults. NVIDIA's driver maps device memory in granules and a GPU
// faults only outside mapped memory: reads and writes a few bytes (or kilobytes) past a small allocation succeed
// there (measured on an H100: tools/gpu-probe/results/clients17-h100-2026-11-26.txt; past a 3 MiB allocation,
// +3 MiB+24 succeeds and +4 MiB faults). Programs and test suites rely on it, so that is the default.
enum class BoundsMode : uint8_t {
  Granule,  // default: allocations are accessible to the end of their granule (64 KiB below 2 MiB, 2 MiB above)
  Exact,    // CUEMU_BOUNDS=exact: one byte past the allocation faults (a checker's view, stricter than a GPU)
};

// What backs an allocation's memory. Memory another process may map (cuIpcGetMemHandle, cuMemPoolExportPointer)
// is the shared memory file's from the moment it is allocated: moving live memory onto a file at export time loses
// every write made between the copy and the remap (a kernel's, a copy's, another thread's).
enum class Backing : uint8_t {
  Private,  // anonymous memory (pinned host, managed, arrays, memory below 4 GiB, pools that do not export)
  Shared,   // the shared memory file at the region's offset in the range (Private without memfd or with IPC off)
};

class AddressSpace {
 public:
  // The process's address space, reserved on first call. Never destroyed (used during process exit).
  static AddressSpace& instance();

  // Whether `size` bytes at `address` may be read and written through the device: O(1), lock-free for memory
  // inside the range, a map lookup for registered host memory. Thread-safe.
  bool isAccessible(uint64_t address, uint64_t size) const noexcept {
    uint64_t offset = address - base_;
    if (offset < limit_) {
      uint32_t available = table_[offset >> kChunkShift].load(std::memory_order_acquire);
      uint64_t inChunk = offset & kChunkMask;
      if (inChunk < available && size <= available - inChunk) return true;
      if (available == 0) return false;
    }
    // Beyond 4 GiB from a chunk, across adjacent VMM mappings, or outside the range: ask the region map.
    return isAccessibleSlow(address, size);
  }

  // The region containing `address` (interior pointers included), or null. VMM reservations are kept apart
  // (findReservation): inside one, find() answers the mapping.
  RegionPtr find(uint64_t address) const;
  RegionPtr findReservation(uint64_t address) const;
  // The region containing `address`, else the closest one before or after it (null when there is none): the
  // allocation a checker's report names.
  RegionPtr nearest(uint64_t address) const;
  // The region starting exactly at `address`, or null.
  RegionPtr findStart(uint64_t address) const;
  // Regions overlapping [address, address+size).
  std::vector<RegionPtr> overlapping(uint64_t address, uint64_t size) const;
  bool inRange(uint64_t address) const { return address - base_ < limit_; }
  // In the main range or the range below 4 GiB: never pageable host memory.
  bool isDeviceAddress(uint64_t address) const { return inRange(address) || inLowRange(address); }

  // Takes addresses for a region of `size` bytes (plus a guard) from the range, commits `commitBytes` of it
  // read-write (0 = addresses only), and registers `region` there. `alignment` is a power of two (0 = chunk).
  // `fixedAddress`, if non-zero, asks for that address (VMM reservations); it is only a hint.
  // A region that holds its addresses (MemoryRegion::holdsAddresses) and asks for the addresses an earlier region of
  // that kind left held gets exactly them, which no other allocation can take.
  Expected<RegionPtr> allocate(RegionPtr region, uint64_t commitBytes, uint64_t alignment = 0,
                               uint64_t fixedAddress = 0, Backing backing = Backing::Private);
  // Ends `region`'s hold on its addresses: returned now if it is already released and its memory gone, else when
  // that happens.
  void stopHolding(MemoryRegion& region);
  // Small device allocations share slabs of kSlabBytes (one host mapping each) in kSlabUnit steps, as the GPU's
  // allocator packs them (an H100 puts 1-byte allocations 512 bytes apart in 2 MiB chunks); two host mappings per
  // allocation exhausted vm.max_map_count after ~32,700 of them. The block is zeroed. A kernel may touch the whole
  // slab without a fault (on the GPU the chunk is mapped too): only the API checks the block's bounds. Fails
  // (returns an error) in exact bounds mode and for sizes above kSmallAllocationMax: allocate() serves those.
  // Slabs are Backing::Shared.
  Expected<RegionPtr> allocateSmall(RegionPtr region);
  static constexpr uint64_t kSlabBytes = uint64_t(2) << 20;
  static constexpr uint64_t kSlabUnit = 512;
  static constexpr uint64_t kSmallAllocationMax = 32 * 1024;

  // The same below 4 GiB, for the 32-bit legacy entry points (cuMemAlloc with CUdeviceptr_v1): from a small
  // second range reserved on first use. Its regions are found through the region map (no fast-table entries).
  Expected<RegionPtr> allocateBelow4GiB(RegionPtr region, uint64_t commitBytes);
  // Registers a region that needs no addresses from the range (registered host memory).
  Expected<RegionPtr> registerExternal(RegionPtr region);
  // The regions registerExternal registered and release has not released yet, by start (a launch checks them
  // once: RegisteredHostSnapshot).
  std::vector<RegionPtr> externalRegions() const;
  // Unregisters the region starting at `start`, decommits and returns its addresses (once its last lease ends).
  // Returns the region.
  RegionPtr release(uint64_t start);
  // Unregisters every region `predicate` selects (context teardown); returns them.
  std::vector<RegionPtr> releaseIf(const std::function<bool(const MemoryRegion&)>& predicate);
  // Whether kernels may touch a region registered here (its kernel-accessible bytes; regions of their own chunks
  // only), or every region `predicate` selects: pinned host pools follow their devices' access grants this way.
  // The memory stays mapped for the host.
  void setKernelAccess(const MemoryRegion& region, bool accessible);
  void setKernelAccess(const std::function<bool(const MemoryRegion&)>& predicate, bool accessible);

  // VMM: maps `bytes` of the file `fd` at `offset` over `address` (inside a reservation), shared, PROT_NONE
  // until setProtection. unmapFile restores the reservation.
  Expected<bool> mapFile(uint64_t address, uint64_t bytes, int fd, uint64_t offset);
  void unmapFile(uint64_t address, uint64_t bytes);
  // Protection of an in-range span and its accessibility entries (cuMemSetAccess): the host's mapping gets
  // `accessFlags`, kernels `kernelFlags` (the same unless given).
  Expected<bool> setProtection(uint64_t address, uint64_t bytes, int accessFlags, int kernelFlags = -1);
  // Registers/unregisters a region in the lookup map without taking addresses (VMM mappings inside a
  // reservation).
  void insertRegion(RegionPtr region);
  void eraseRegion(uint64_t start);

  // IPC imports: `bytes` of the file `fd` from `fileOffset` (page-aligned) mapped read-write at fresh addresses
  // aligned to `alignment`, kernel-accessible throughout. The blocks imported from it are regions inside it
  // (registerInWindow), each holding the window (MemoryRegion::keepAlive): it is unmapped when the last is gone,
  // so blocks of one exported slab share one mapping, as on a GPU.
  struct MappedWindow {
    uint64_t start = 0, bytes = 0, reserved = 0;
    ~MappedWindow();
  };
  Expected<std::shared_ptr<MappedWindow>> mapWindow(int fd, uint64_t fileOffset, uint64_t bytes, uint64_t alignment);
  // Registers `region` (region->size bytes) at window->start + `offset`; the API sees the region alone.
  Expected<RegionPtr> registerInWindow(RegionPtr region, std::shared_ptr<MappedWindow> window, uint64_t offset);

  // IPC: the shared memory file and the region's offset in it (not page-aligned for a small allocation), for a
  // region allocated with Backing::Shared; nothing is moved or remapped. CUDA_ERROR_NOT_SUPPORTED for other memory.
  Expected<std::pair<int, uint64_t>> shareRegion(const RegionPtr& region) const;
  // The shared memfd itself (created on first use), or -1 where memfd is unavailable or IPC is off.
  int sharedFileDescriptor();
  // Whether device memory may be exported to other processes (CUEMU_IPC, default on). Off, device memory is
  // private anonymous memory, which the host backs with transparent huge pages where shared memory gets none:
  // the first touch of a large allocation is then several times faster, and cuIpcGetMemHandle, pools with
  // POSIX descriptors and their exports answer CUDA_ERROR_NOT_SUPPORTED.
  bool ipcEnabled() const { return ipcEnabled_; }

  // Device memory accounting against each device's configured capacity (CUDA_ERROR_OUT_OF_MEMORY past it).
  bool charge(int device, uint64_t bytes);
  void uncharge(int device, uint64_t bytes);
  uint64_t used(int device) const;
  static uint64_t capacity(int device);

  uint64_t nextBufferId() { return nextBufferId_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t base() const { return base_; }
  uint64_t limit() const { return limit_; }
  // The table behind isAccessible's fast path, one entry per chunk from base(): bytes accessible from the chunk's
  // start on (0 = none). For the PTX interpreter's inline checks (ptx::exec::MemoryValidator has this layout).
  const std::atomic<uint32_t>* accessTable() const { return table_; }
  static uint64_t pageSize();
  // From CUEMU_BOUNDS (`granule`, the default, or `exact`) when the range is reserved; setBoundsMode changes it
  // for allocations made afterwards (each allocation keeps the span it was made with).
  BoundsMode boundsMode() const { return boundsMode_.load(std::memory_order_relaxed); }
  void setBoundsMode(BoundsMode mode) { boundsMode_.store(mode, std::memory_order_relaxed); }
  // The bytes from an allocation's start that kernels may touch, for an allocation of `size` bytes.
  uint64_t accessibleBytes(uint64_t size) const;

  static constexpr unsigned kChunkShift = 16;  // 64 KiB: covers every page size Linux uses
  static constexpr uint64_t kChunk = uint64_t(1) << kChunkShift;
  static constexpr uint64_t kChunkMask = kChunk - 1;

 private:
  AddressSpace();
  bool isAccessibleSlow(uint64_t address, uint64_t size) const noexcept;
  // Addresses: a next-fit allocator over the free spans of the range, so freed addresses are reused as late as
  // possible (a stale pointer keeps faulting for a long time). Requires mutex_ held exclusively.
  uint64_t takeAddresses(uint64_t bytes, uint64_t alignment, uint64_t fixedAddress);
  void returnAddresses(uint64_t start, uint64_t bytes);
  void setAccessible(uint64_t start, uint64_t bytes, bool accessible);
  bool commit(uint64_t start, uint64_t bytes);
  // The same from the shared memory file (its pages at offset start - base_, holes until touched).
  bool commitShared(uint64_t start, uint64_t bytes);
  void decommit(const MemoryRegion& region);
  int sharedFd();

  static constexpr uint32_t kSaturated = UINT32_MAX;

  std::atomic<BoundsMode> boundsMode_{BoundsMode::Granule};
  uint64_t base_ = 0;
  uint64_t limit_ = 0;  // bytes reserved (0 if the reservation failed)
  std::atomic<uint32_t>* table_ = nullptr;
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, RegionPtr> regions_;       // by start; never overlapping
  std::map<uint64_t, RegionPtr> reservations_;  // VMM reservations, by start
  std::map<uint64_t, RegionPtr> external_;      // registered host memory, by start (also in regions_)
  std::map<uint64_t, uint64_t> freeSpans_;      // start -> bytes (offsets from base_)
  // Addresses released regions hold (MemoryRegion::holdsAddresses): start -> bytes taken, guard included.
  std::map<uint64_t, uint64_t> held_;
  // The low range (allocateBelow4GiB): absolute start -> bytes of its free spans; reserved on first use.
  std::atomic<uint64_t> lowBase_{0};
  std::atomic<uint64_t> lowLimit_{0};  // set once (0: not reserved)
  bool lowTried_ = false;
  std::map<uint64_t, uint64_t> lowFreeSpans_;
  bool inLowRange(uint64_t address) const {
    uint64_t limit = lowLimit_.load(std::memory_order_acquire);
    return address - lowBase_.load(std::memory_order_relaxed) < limit;
  }
  uint64_t rover_ = 0;
  // Slabs by start: which kSlabUnit blocks are taken, and how many.
  struct Slab {
    std::vector<uint64_t> taken = std::vector<uint64_t>(kSlabBytes / kSlabUnit / 64, 0);
    uint64_t units = 0;
    bool sharedBacking = false;  // the shared memory file's (Backing::Shared)
  };
  std::map<uint64_t, Slab> slabs_;
  uint64_t slabHint_ = 0;  // the slab that served the last small allocation
  // One slab whose last block was freed stays mapped (kernels fault on it until it serves a block again): a
  // program that allocates and frees one small buffer in a loop (CUB's temporary storage) would otherwise make and
  // unmake a slab each time. 0: none.
  uint64_t spareSlab_ = 0;
  void releaseSlabBlock(const MemoryRegion& region);
  // Decommits a released region and returns its addresses: exactly once, when it is released and unleased.
  void reclaim(MemoryRegion& region);
  friend class RegionLease;
  int sharedFd_ = -1;
  bool sharedFdFailed_ = false;  // memfd_create or its size refused, or IPC off: not tried again
  bool ipcEnabled_ = true;
  std::atomic<uint64_t> nextBufferId_{1};
  static constexpr int kMaxDevices = limits::kMaxDevices;
  std::atomic<uint64_t> used_[kMaxDevices] = {};
};

// Round `value` up to a multiple of the power of two `alignment`.
constexpr uint64_t alignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }

}  // namespace cuemu
