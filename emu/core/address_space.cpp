#include "core/address_space.h"

#include "core/device.h"
#include "core/log.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace cuemu {
namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;
constexpr uint64_t kHugePage = uint64_t(2) << 20;

// Host RAM the process may use: physical memory, or the cgroup's limit when lower.
uint64_t hostMemoryLimit() {
  uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long limit = 0;
    if (std::fscanf(f, "%llu", &limit) == 1 && limit > 0 && limit < physical) physical = limit;
    std::fclose(f);
  }
  return physical;
}

}  // namespace

const char* memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Device: return "device";
    case MemoryKind::HostPinned: return "pinned host";
    case MemoryKind::HostRegistered: return "registered host";
    case MemoryKind::Managed: return "managed";
    case MemoryKind::Array: return "array";
    case MemoryKind::VmmReservation: return "address reservation";
    case MemoryKind::VmmMapping: return "mapping";
    case MemoryKind::IpcImport: return "IPC import";
  }
  return "?";
}

AddressSpace& AddressSpace::instance() {
  static AddressSpace* space = new AddressSpace;  // never destroyed: memory may be used during exit
  return *space;
}

uint64_t AddressSpace::pageSize() {
  static const uint64_t size = uint64_t(sysconf(_SC_PAGESIZE));
  return size;
}

AddressSpace::AddressSpace() {
  if (const char* mode = std::getenv("CUEMU_BOUNDS"); mode && *mode) {
    if (std::strcmp(mode, "exact") == 0)
      boundsMode_.store(BoundsMode::Exact, std::memory_order_relaxed);
    else if (std::strcmp(mode, "granule") != 0)
      CUEMU_ERROR("CUEMU_BOUNDS='{}' is neither 'granule' nor 'exact': using 'granule'", mode);
  }
  if (const char* ipc = std::getenv("CUEMU_IPC"); ipc && *ipc) {
    if (std::strcmp(ipc, "0") == 0 || std::strcmp(ipc, "off") == 0) {
      ipcEnabled_ = false;
      sharedFdFailed_ = true;  // no shared memory file: every allocation is private
      CUEMU_INFO("CUEMU_IPC={}: device memory is private, interprocess sharing of it is off", ipc);
    } else if (std::strcmp(ipc, "1") != 0 && std::strcmp(ipc, "on") != 0) {
      CUEMU_ERROR("CUEMU_IPC='{}' is neither 'on' (1) nor 'off' (0): IPC stays on", ipc);
    }
  }
  // Largest reservation the system grants (address-space limits, sanitizers), aligned to a huge page.
  for (uint64_t bytes : {1024 * kGiB, 256 * kGiB, 64 * kGiB, 16 * kGiB, 4 * kGiB}) {
    void* p = mmap(nullptr, bytes + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) continue;
    uint64_t raw = reinterpret_cast<uint64_t>(p);
    uint64_t aligned = alignUp(raw, kHugePage);
    if (aligned > raw) munmap(p, aligned - raw);
    munmap(reinterpret_cast<void*>(aligned + bytes), raw + kHugePage - aligned);
    uint64_t entries = bytes >> kChunkShift;
    void* table = mmap(nullptr, entries * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (table == MAP_FAILED) {
      munmap(reinterpret_cast<void*>(aligned), bytes);
      continue;
    }
    table_ = static_cast<std::atomic<uint32_t>*>(table);
    base_ = aligned;
    limit_ = bytes;
    // The first chunk stays unused: a guard below the lowest region.
    freeSpans_.emplace(kChunk, bytes - kChunk);
    rover_ = kChunk;
    CUEMU_INFO("device address range {:#x}-{:#x} ({} GiB)", base_, base_ + limit_, limit_ / kGiB);
    return;
  }
  CUEMU_ERROR("cannot reserve a device address range: every device allocation will fail");
}

uint64_t AddressSpace::accessibleBytes(uint64_t size) const {
  if (boundsMode() == BoundsMode::Exact) return size;
  uint64_t granule = size >= kHugePage ? kHugePage : kChunk;
  uint64_t rounded = alignUp(std::max<uint64_t>(size, 1), granule);
  return rounded < size ? size : rounded;  // sizes near 2^64 fail later as too large
}

bool AddressSpace::isAccessibleSlow(uint64_t address, uint64_t size) const noexcept {
  std::shared_lock lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return false;
  --it;
  // Adjacent VMM mappings form one accessible span.
  while (true) {
    const MemoryRegion& region = *it->second;
    uint64_t accessible = region.kernelAccessibleBytes();
    if (address < region.start || address - region.start >= std::max<uint64_t>(accessible, 1)) return false;
    bool vmm = region.kind == MemoryKind::VmmMapping;
    if (vmm && region.accessFlags.load(std::memory_order_relaxed) != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return false;
    uint64_t room = region.start + accessible - address;
    if (size <= room) return true;
    if (!vmm) return false;
    address += room;
    size -= room;
    if (++it == regions_.end() || it->second->kind != MemoryKind::VmmMapping) return false;
  }
}

RegionPtr AddressSpace::find(uint64_t address) const {
  std::shared_lock lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return nullptr;
  const RegionPtr& region = std::prev(it)->second;
  // An empty range still owns its start address (zero-byte registrations do not exist, but be exact).
  if (address - region->start < std::max<uint64_t>(region->size, 1)) return region;
  return nullptr;
}

RegionPtr AddressSpace::nearest(uint64_t address) const {
  std::shared_lock lock(mutex_);
  auto next = regions_.upper_bound(address);
  RegionPtr before = next == regions_.begin() ? nullptr : std::prev(next)->second;
  RegionPtr after = next == regions_.end() ? nullptr : next->second;
  if (before && (address < before->end() || !after)) return before;
  if (!before) return after;
  // compute-sanitizer's distances: bytes past the end counting the first byte past it, bytes before the start
  return address - before->end() + 1 <= after->start - address ? before : after;
}

RegionPtr AddressSpace::findReservation(uint64_t address) const {
  std::shared_lock lock(mutex_);
  auto it = reservations_.upper_bound(address);
  if (it == reservations_.begin()) return nullptr;
  const RegionPtr& region = std::prev(it)->second;
  return address - region->start < region->size ? region : nullptr;
}

RegionPtr AddressSpace::findStart(uint64_t address) const {
  std::shared_lock lock(mutex_);
  auto it = regions_.find(address);
  return it == regions_.end() ? nullptr : it->second;
}

std::vector<RegionPtr> AddressSpace::overlapping(uint64_t address, uint64_t size) const {
  std::vector<RegionPtr> result;
  std::shared_lock lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it != regions_.begin()) --it;
  for (; it != regions_.end() && it->first < address + size; ++it)
    if (it->second->end() > address) result.push_back(it->second);
  return result;
}

uint64_t AddressSpace::takeAddresses(uint64_t bytes, uint64_t alignment, uint64_t fixedAddress) {
  auto carve = [&](std::map<uint64_t, uint64_t>::iterator span, uint64_t at) {
    uint64_t spanStart = span->first, spanBytes = span->second;
    freeSpans_.erase(span);
    if (at > spanStart) freeSpans_.emplace(spanStart, at - spanStart);
    if (at + bytes < spanStart + spanBytes) freeSpans_.emplace(at + bytes, spanStart + spanBytes - at - bytes);
    rover_ = at + bytes;
    return base_ + at;
  };
  if (fixedAddress >= base_ && fixedAddress - base_ < limit_ && (fixedAddress & (alignment - 1)) == 0) {
    uint64_t at = fixedAddress - base_;
    auto span = freeSpans_.upper_bound(at);
    if (span != freeSpans_.begin()) {
      --span;
      if (at >= span->first && at + bytes <= span->first + span->second) return carve(span, at);
    }
  }
  // Next fit: first from the rover to the end of the range, then from the beginning.
  auto fit = [&](std::map<uint64_t, uint64_t>::iterator span, uint64_t from) -> uint64_t {
    uint64_t at = alignUp(std::max(span->first, from), alignment);
    return at + bytes <= span->first + span->second ? carve(span, at) : 0;
  };
  auto span = freeSpans_.upper_bound(rover_);
  if (span != freeSpans_.begin() && std::prev(span)->first + std::prev(span)->second > rover_) --span;
  for (; span != freeSpans_.end(); ++span)
    if (uint64_t address = fit(span, rover_)) return address;
  for (span = freeSpans_.begin(); span != freeSpans_.end(); ++span)
    if (uint64_t address = fit(span, 0)) return address;
  return 0;
}

void AddressSpace::returnAddresses(uint64_t start, uint64_t bytes) {
  uint64_t at = start - base_;
  auto next = freeSpans_.lower_bound(at);
  if (next != freeSpans_.end() && at + bytes == next->first) {
    bytes += next->second;
    next = freeSpans_.erase(next);
  }
  if (next != freeSpans_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      prev->second += bytes;
      return;
    }
  }
  freeSpans_.emplace(at, bytes);
}

void AddressSpace::setAccessible(uint64_t start, uint64_t bytes, bool accessible) {
  uint64_t end = start + bytes;
  for (uint64_t chunk = start & ~kChunkMask; chunk < end; chunk += kChunk) {
    uint64_t available = accessible ? std::min<uint64_t>(end - chunk, kSaturated) : 0;
    table_[(chunk - base_) >> kChunkShift].store(static_cast<uint32_t>(available), std::memory_order_release);
  }
}

bool AddressSpace::commit(uint64_t start, uint64_t bytes) {
  // A fixed anonymous mapping without MAP_NORESERVE: under strict overcommit the kernel refuses it here
  // (CUDA_ERROR_OUT_OF_MEMORY) instead of killing the process when the memory is touched.
  void* p = mmap(reinterpret_cast<void*>(start), bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0);
  if (p == MAP_FAILED) {
    mmap(reinterpret_cast<void*>(start), bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    return false;
  }
  if (bytes >= 2 * kHugePage) madvise(p, bytes, MADV_HUGEPAGE);  // fewer TLB misses in large copies
  return true;
}

bool AddressSpace::commitShared(uint64_t start, uint64_t bytes) {
  // The file's pages are counted when touched, not here: strict overcommit does not refuse this mapping, the
  // device's capacity (half of the host's memory unless configured) bounds it instead.
  void* p = mmap(reinterpret_cast<void*>(start), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, sharedFd_,
                 off_t(start - base_));
  if (p == MAP_FAILED) {
    mmap(reinterpret_cast<void*>(start), bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    return false;
  }
  // Huge pages of shared memory only where the host allows them on request (shmem_enabled "advise" or above).
  if (bytes >= 2 * kHugePage) madvise(p, bytes, MADV_HUGEPAGE);
  return true;
}

void AddressSpace::decommit(const MemoryRegion& region) {
  if (region.sharedBacking && sharedFd_ >= 0)
    fallocate(sharedFd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(region.start - base_),
              off_t(region.committedSize));
  // Replacing the pages with a fresh reservation frees them and their commit charge in one call.
  mmap(reinterpret_cast<void*>(region.start), region.reservedSize, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

Expected<RegionPtr> AddressSpace::allocate(RegionPtr region, uint64_t commitBytes, uint64_t alignment,
                                           uint64_t fixedAddress, Backing backing) {
  if (!limit_) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "no device address range");
  alignment = std::max(alignment, kChunk);
  // Memory kernels can reach (commitBytes != 0) is committed to the end of its accessible span.
  uint64_t accessible = commitBytes ? accessibleBytes(region->size) : region->size;
  uint64_t reserved = alignUp(std::max<uint64_t>(accessible, 1), kChunk);
  if (reserved < accessible || reserved > limit_) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "size too large");
  if (commitBytes) commitBytes = std::max(commitBytes, accessible);
  commitBytes = alignUp(commitBytes, pageSize());
  std::unique_lock lock(mutex_);
  uint64_t start = 0;
  auto held = region->holdsAddresses.load() ? held_.find(fixedAddress) : held_.end();
  bool wasHeld = held != held_.end() && held->second == reserved + kChunk;
  if (wasHeld) {  // the addresses it held: its own again
    start = fixedAddress;
    held_.erase(held);
  } else {
    start = takeAddresses(reserved + kChunk, alignment, fixedAddress);  // + one guard chunk
  }
  if (!start) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "device address range exhausted");
  bool shared = commitBytes && backing == Backing::Shared && sharedFd() >= 0;
  if (commitBytes && !(shared ? commitShared(start, commitBytes) : commit(start, commitBytes))) {
    if (wasHeld)
      held_.emplace(start, reserved + kChunk);
    else
      returnAddresses(start, reserved + kChunk);
    return makeError(CUDA_ERROR_OUT_OF_MEMORY, "the host refused to commit memory");
  }
  region->start = start;
  region->sharedBacking = shared;
  region->reservedSize = reserved;
  region->committedSize = commitBytes;
  region->accessibleSize = commitBytes ? accessible : region->size;
  region->bufferId = nextBufferId();
  if (region->kind == MemoryKind::VmmReservation) {
    reservations_.emplace(start, region);
  } else {
    regions_.emplace(start, region);
    if (commitBytes) setAccessible(start, region->accessibleSize, true);
  }
  return region;
}

Expected<std::shared_ptr<AddressSpace::MappedWindow>> AddressSpace::mapWindow(int fd, uint64_t fileOffset,
                                                                              uint64_t bytes, uint64_t alignment) {
  if (!limit_) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "no device address range");
  bytes = alignUp(std::max<uint64_t>(bytes, 1), pageSize());
  uint64_t reserved = alignUp(bytes, kChunk);
  if (reserved > limit_) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "size too large");
  std::unique_lock lock(mutex_);
  uint64_t start = takeAddresses(reserved + kChunk, std::max(alignment, kChunk), 0);  // + one guard chunk
  if (!start) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "device address range exhausted");
  void* p = mmap(reinterpret_cast<void*>(start), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                 off_t(fileOffset));
  if (p == MAP_FAILED) {
    int error = errno;
    mmap(reinterpret_cast<void*>(start), bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    returnAddresses(start, reserved + kChunk);
    return makeError(CUDA_ERROR_OUT_OF_MEMORY, std::string("mmap: ") + std::strerror(error));
  }
  setAccessible(start, bytes, true);
  auto window = std::make_shared<MappedWindow>();
  window->start = start;
  window->bytes = bytes;
  window->reserved = reserved;
  return window;
}

AddressSpace::MappedWindow::~MappedWindow() {
  AddressSpace& space = AddressSpace::instance();
  std::unique_lock lock(space.mutex_);
  space.setAccessible(start, bytes, false);
  mmap(reinterpret_cast<void*>(start), reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
       0);
  space.returnAddresses(start, reserved + kChunk);
}

Expected<RegionPtr> AddressSpace::registerInWindow(RegionPtr region, std::shared_ptr<MappedWindow> window,
                                                   uint64_t offset) {
  if (offset > window->bytes || region->size > window->bytes - offset)
    return makeError(CUDA_ERROR_INVALID_VALUE, "the block lies outside its mapping");
  std::unique_lock lock(mutex_);
  uint64_t start = window->start + offset;
  if (regions_.count(start)) return makeError(CUDA_ERROR_ALREADY_MAPPED, "a block is already imported there");
  region->start = start;
  region->accessibleSize = window->bytes - offset;  // kernels may touch the rest of the window
  region->bufferId = nextBufferId();
  region->keepAlive = std::move(window);
  regions_.emplace(start, region);
  return region;
}

Expected<RegionPtr> AddressSpace::allocateSmall(RegionPtr region) {
  if (boundsMode() == BoundsMode::Exact || region->size > kSmallAllocationMax || !limit_)
    return makeError(CUDA_ERROR_NOT_SUPPORTED, "not a small allocation");
  const uint64_t units = alignUp(std::max<uint64_t>(region->size, 1), kSlabUnit) / kSlabUnit;
  constexpr uint64_t kUnitsPerSlab = kSlabBytes / kSlabUnit;
  // First fit in a slab: the run of `units` free bits, searched bit by bit (runs are at most 64 units).
  auto findRun = [&](Slab& slab) -> int64_t {
    if (kUnitsPerSlab - slab.units < units) return -1;
    uint64_t run = 0;
    for (uint64_t i = 0; i < kUnitsPerSlab; ++i) {
      if (run == 0 && (i & 63) == 0 && slab.taken[i / 64] == ~uint64_t(0)) {
        i += 63;
        continue;
      }
      run = (slab.taken[i / 64] >> (i & 63)) & 1 ? 0 : run + 1;
      if (run == units) return int64_t(i + 1 - units);
    }
    return -1;
  };
  std::unique_lock lock(mutex_);
  uint64_t slabStart = 0;
  int64_t unit = -1;
  if (auto hinted = slabs_.find(slabHint_); hinted != slabs_.end()) {
    unit = findRun(hinted->second);
    slabStart = hinted->first;
  }
  for (auto it = slabs_.begin(); unit < 0 && it != slabs_.end(); ++it) {
    unit = findRun(it->second);
    slabStart = it->first;
  }
  if (unit < 0) {
    slabStart = takeAddresses(kSlabBytes + kChunk, kSlabBytes, 0);  // + one guard chunk
    if (!slabStart) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "device address range exhausted");
    bool shared = sharedFd() >= 0;
    if (!(shared ? commitShared(slabStart, kSlabBytes) : commit(slabStart, kSlabBytes))) {
      returnAddresses(slabStart, kSlabBytes + kChunk);
      return makeError(CUDA_ERROR_OUT_OF_MEMORY, "the host refused to commit memory");
    }
    setAccessible(slabStart, kSlabBytes, true);
    slabs_.emplace(slabStart, Slab{}).first->second.sharedBacking = shared;
    unit = 0;
  }
  Slab& slab = slabs_.at(slabStart);
  region->sharedBacking = slab.sharedBacking;
  if (slabStart == spareSlab_) {
    spareSlab_ = 0;
    setAccessible(slabStart, kSlabBytes, true);
  }
  for (uint64_t i = uint64_t(unit); i < uint64_t(unit) + units; ++i) slab.taken[i / 64] |= uint64_t(1) << (i & 63);
  slab.units += units;
  slabHint_ = slabStart;
  region->start = slabStart + uint64_t(unit) * kSlabUnit;
  region->slab = slabStart;
  region->reservedSize = 0;
  region->committedSize = 0;
  region->accessibleSize = units * kSlabUnit;
  region->bufferId = nextBufferId();
  std::memset(reinterpret_cast<void*>(region->start), 0, units * kSlabUnit);  // fresh memory reads as zero
  regions_.emplace(region->start, region);
  return region;
}

void AddressSpace::releaseSlabBlock(const MemoryRegion& region) {
  auto it = slabs_.find(region.slab);
  if (it == slabs_.end()) return;
  Slab& slab = it->second;
  uint64_t first = (region.start - region.slab) / kSlabUnit, units = region.accessibleSize / kSlabUnit;
  for (uint64_t i = first; i < first + units; ++i) slab.taken[i / 64] &= ~(uint64_t(1) << (i & 63));
  slab.units -= units;
  if (slab.units) return;
  // The last block of the slab: kernels fault on it from now on; its memory and addresses go back unless it becomes
  // the spare (its blocks are zeroed when handed out again).
  setAccessible(region.slab, kSlabBytes, false);
  if (!spareSlab_) {
    spareSlab_ = region.slab;
    return;
  }
  if (slab.sharedBacking && sharedFd_ >= 0)
    fallocate(sharedFd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(region.slab - base_), off_t(kSlabBytes));
  mmap(reinterpret_cast<void*>(region.slab), kSlabBytes, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  returnAddresses(region.slab, kSlabBytes + kChunk);
  slabs_.erase(it);
}

Expected<RegionPtr> AddressSpace::allocateBelow4GiB(RegionPtr region, uint64_t commitBytes) {
  constexpr uint64_t kLowBytes = uint64_t(512) << 20;
  std::unique_lock lock(mutex_);
  if (!lowTried_) {
    lowTried_ = true;
    // Candidate places for 512 MiB below 4 GiB, above where non-PIE executables and their heaps live.
    for (uint64_t hint : {uint64_t(0x80000000), uint64_t(0xC0000000), uint64_t(0x40000000), uint64_t(0x20000000)}) {
      void* p = mmap(reinterpret_cast<void*>(hint), kLowBytes, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == MAP_FAILED) continue;
      if (reinterpret_cast<uint64_t>(p) != hint) {  // kernels before 4.17 treat the flag as a hint
        munmap(p, kLowBytes);
        continue;
      }
      lowBase_.store(hint, std::memory_order_relaxed);
      lowLimit_.store(kLowBytes, std::memory_order_release);
      lowFreeSpans_.emplace(hint + kChunk, kLowBytes - kChunk);  // the first chunk is a guard
      break;
    }
  }
  uint64_t lowLimit = lowLimit_.load(std::memory_order_relaxed);
  if (!lowLimit) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "no addresses below 4 GiB are free");
  uint64_t accessible = commitBytes ? accessibleBytes(region->size) : region->size;
  uint64_t reserved = alignUp(std::max<uint64_t>(accessible, 1), kChunk);
  if (reserved < accessible || reserved >= lowLimit) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "size too large");
  if (commitBytes) commitBytes = std::max(commitBytes, accessible);
  commitBytes = alignUp(commitBytes, pageSize());
  uint64_t need = reserved + kChunk;  // + one guard chunk
  auto span = std::find_if(lowFreeSpans_.begin(), lowFreeSpans_.end(), [&](auto& s) { return s.second >= need; });
  if (span == lowFreeSpans_.end()) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "the range below 4 GiB is full");
  uint64_t start = span->first;
  if (commitBytes && !commit(start, commitBytes))
    return makeError(CUDA_ERROR_OUT_OF_MEMORY, "the host refused to commit memory");
  uint64_t rest = span->second - need;
  lowFreeSpans_.erase(span);
  if (rest) lowFreeSpans_.emplace(start + need, rest);
  region->start = start;
  region->reservedSize = reserved;
  region->committedSize = commitBytes;
  region->accessibleSize = commitBytes ? accessible : region->size;
  region->bufferId = nextBufferId();
  regions_.emplace(start, region);
  return region;
}

Expected<RegionPtr> AddressSpace::registerExternal(RegionPtr region) {
  std::unique_lock lock(mutex_);
  uint64_t start = region->start, end = region->start + region->size;
  if (limit_ && start < base_ + limit_ && end > base_)
    return makeError(CUDA_ERROR_INVALID_VALUE, "range overlaps device memory");
  auto it = regions_.lower_bound(start);
  if (it != regions_.end() && it->first < end)
    return makeError(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "range overlaps a registered range");
  if (it != regions_.begin() && std::prev(it)->second->end() > start)
    return makeError(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "range overlaps a registered range");
  region->bufferId = nextBufferId();
  regions_.emplace(start, region);
  external_.emplace(start, region);
  return region;
}

std::vector<RegionPtr> AddressSpace::externalRegions() const {
  std::shared_lock lock(mutex_);
  std::vector<RegionPtr> regions;
  regions.reserve(external_.size());
  for (const auto& [start, region] : external_) regions.push_back(region);
  return regions;
}

RegionLease::RegionLease(RegionPtr region) : region_(std::move(region)) {
  if (!region_) return;
  // Sequentially consistent with release(): either release() sees this lease and leaves the unmapping to it, or
  // this sees the release and gives up.
  region_->leases.fetch_add(1);
  if (region_->released.load()) end();
}

RegionLease::RegionLease(const RegionPtr& region, bool alreadyHeld) : region_(region) {
  // Another lease holds the region: the memory cannot be reclaimed meanwhile.
  if (region_ && alreadyHeld) region_->leases.fetch_add(1);
}

RegionLease& RegionLease::operator=(const RegionLease& other) {
  if (this != &other) {
    end();
    region_ = other.region_;
    if (region_) region_->leases.fetch_add(1);
  }
  return *this;
}

RegionLease& RegionLease::operator=(RegionLease&& other) noexcept {
  if (this != &other) {
    end();
    region_ = std::move(other.region_);
  }
  return *this;
}

void RegionLease::end() {
  if (!region_) return;
  if (region_->leases.fetch_sub(1) == 1 && region_->released.load()) AddressSpace::instance().reclaim(*region_);
  region_.reset();
}

void AddressSpace::reclaim(MemoryRegion& region) {
  if (region.reclaimed.exchange(true)) return;
  std::unique_lock lock(mutex_);
  if (region.slab) {
    releaseSlabBlock(region);
  } else if (region.reservedSize && inLowRange(region.start)) {
    decommit(region);
    uint64_t at = region.start, bytes = region.reservedSize + kChunk;
    auto next = lowFreeSpans_.lower_bound(at);
    if (next != lowFreeSpans_.end() && at + bytes == next->first) {
      bytes += next->second;
      next = lowFreeSpans_.erase(next);
    }
    if (next != lowFreeSpans_.begin() && std::prev(next)->first + std::prev(next)->second == at)
      std::prev(next)->second += bytes;
    else
      lowFreeSpans_.emplace(at, bytes);
  } else if (region.reservedSize) {
    decommit(region);
    if (region.holdsAddresses.load())  // a graph allocation's: taken until its graph is gone (stopHolding)
      held_[region.start] = region.reservedSize + kChunk;
    else
      returnAddresses(region.start, region.reservedSize + kChunk);
  }
}

void AddressSpace::stopHolding(MemoryRegion& region) {
  std::unique_lock lock(mutex_);  // reclaim reads the flag under it: one of the two returns the addresses
  region.holdsAddresses.store(false);
  if (auto it = held_.find(region.start); it != held_.end() && region.reclaimed.load()) {
    returnAddresses(it->first, it->second);
    held_.erase(it);
  }
}

RegionPtr AddressSpace::release(uint64_t start) {
  RegionPtr region;
  {
    std::unique_lock lock(mutex_);
    if (auto it = regions_.find(start); it != regions_.end()) {
      region = std::move(it->second);
      regions_.erase(it);
      external_.erase(start);
    } else if (auto r = reservations_.find(start); r != reservations_.end()) {
      region = std::move(r->second);
      reservations_.erase(r);
    } else {
      return nullptr;
    }
    // Kernels fault on it from now on; the memory itself stays until the last lease ends.
    if (!region->slab && region->reservedSize && !inLowRange(region->start) &&
        region->kind != MemoryKind::VmmReservation)
      setAccessible(region->start, region->kernelAccessibleBytes(), false);
  }
  region->released.store(true);
  if (region->leases.load() == 0) reclaim(*region);
  return region;
}

std::vector<RegionPtr> AddressSpace::releaseIf(const std::function<bool(const MemoryRegion&)>& predicate) {
  std::vector<uint64_t> starts;
  {
    std::shared_lock lock(mutex_);
    for (auto& [start, region] : regions_)
      if (predicate(*region)) starts.push_back(start);
    for (auto& [start, region] : reservations_)
      if (predicate(*region)) starts.push_back(start);
  }
  std::vector<RegionPtr> released;
  for (uint64_t start : starts)
    if (auto region = release(start)) released.push_back(std::move(region));
  return released;
}

namespace {
// Regions whose chunks are their own: their fast-table entries may change without touching a neighbour's.
bool ownsChunks(const MemoryRegion& region) { return !region.slab && region.reservedSize; }
}  // namespace

void AddressSpace::setKernelAccess(const MemoryRegion& region, bool accessible) {
  std::unique_lock lock(mutex_);
  auto it = regions_.find(region.start);
  if (it != regions_.end() && it->second.get() == &region && ownsChunks(region) && inRange(region.start))
    setAccessible(region.start, region.kernelAccessibleBytes(), accessible);
}

void AddressSpace::setKernelAccess(const std::function<bool(const MemoryRegion&)>& predicate, bool accessible) {
  std::unique_lock lock(mutex_);
  for (auto& [start, region] : regions_)
    if (ownsChunks(*region) && inRange(start) && predicate(*region))
      setAccessible(start, region->kernelAccessibleBytes(), accessible);
}

void AddressSpace::insertRegion(RegionPtr region) {
  std::unique_lock lock(mutex_);
  region->bufferId = nextBufferId();
  regions_.emplace(region->start, std::move(region));
}

void AddressSpace::eraseRegion(uint64_t start) {
  std::unique_lock lock(mutex_);
  if (auto it = regions_.find(start); it != regions_.end()) {
    setAccessible(start, it->second->size, false);
    regions_.erase(it);
  }
}

Expected<bool> AddressSpace::mapFile(uint64_t address, uint64_t bytes, int fd, uint64_t offset) {
  void* p = mmap(reinterpret_cast<void*>(address), bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, off_t(offset));
  if (p == MAP_FAILED) return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("mmap: {}", std::strerror(errno)));
  return true;
}

void AddressSpace::unmapFile(uint64_t address, uint64_t bytes) {
  {
    std::unique_lock lock(mutex_);
    setAccessible(address, bytes, false);
  }
  mmap(reinterpret_cast<void*>(address), bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
       0);
}

Expected<bool> AddressSpace::setProtection(uint64_t address, uint64_t bytes, int accessFlags, int kernelFlags) {
  if (kernelFlags < 0) kernelFlags = accessFlags;
  int prot = accessFlags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
             : accessFlags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                               : PROT_NONE;
  if (mprotect(reinterpret_cast<void*>(address), bytes, prot) != 0)
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("mprotect: {}", std::strerror(errno)));
  std::unique_lock lock(mutex_);
  // The fast check answers read-write access; read-only spans go through the slow path's region flags.
  setAccessible(address, bytes, kernelFlags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  return true;
}

int AddressSpace::sharedFd() {
  if (sharedFd_ >= 0 || sharedFdFailed_) return sharedFd_;
  // One file as large as the range, sparse: an address's memory is at its offset in the range.
  int fd = memfd_create("cuemu-device-memory", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, off_t(limit_)) != 0) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    sharedFdFailed_ = true;
    CUEMU_INFO("no shared memory file ({}): device memory is private, IPC unavailable", std::strerror(errno));
    return -1;
  }
  sharedFd_ = fd;
  return fd;
}

int AddressSpace::sharedFileDescriptor() {
  std::unique_lock lock(mutex_);
  return sharedFd();
}

Expected<std::pair<int, uint64_t>> AddressSpace::shareRegion(const RegionPtr& region) const {
  if (!inRange(region->start)) return makeError(CUDA_ERROR_INVALID_VALUE, "memory below 4 GiB cannot be shared");
  if (!region->sharedBacking)
    return makeError(CUDA_ERROR_NOT_SUPPORTED, ipcEnabled_
                                                   ? "the memory is not the shared memory file's (memfd unavailable?)"
                                                   : "device memory is private (CUEMU_IPC=0)");
  std::shared_lock lock(mutex_);
  return std::pair<int, uint64_t>(sharedFd_, region->start - base_);
}

uint64_t AddressSpace::capacity(int device) {
  Device* d = deviceByOrdinal(device);
  if (d && d->profile().totalMemory) return d->profile().totalMemory;
  // Unset: half of the host's memory (a program filling its "GPU" must not push the host into swap or the
  // OOM killer), in whole MiB.
  static const uint64_t share = (hostMemoryLimit() / 2) & ~((uint64_t(1) << 20) - 1);
  return share;
}

bool AddressSpace::charge(int device, uint64_t bytes) {
  if (device < 0 || device >= kMaxDevices) return false;
  uint64_t cap = capacity(device);
  uint64_t current = used_[device].load(std::memory_order_relaxed);
  do {
    if (bytes > cap || current > cap - bytes) return false;
  } while (!used_[device].compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  return true;
}

void AddressSpace::uncharge(int device, uint64_t bytes) {
  if (device >= 0 && device < kMaxDevices) used_[device].fetch_sub(bytes, std::memory_order_relaxed);
}

uint64_t AddressSpace::used(int device) const {
  return device >= 0 && device < kMaxDevices ? used_[device].load(std::memory_order_relaxed) : 0;
}

}  // namespace cuemu
