#include "core/memory.h"

#include "core/checkers.h"

#include "core/context.h"
#include "core/device.h"
#include "core/memory_array.h"
#include "core/mempool.h"
#include "core/polled_words.h"

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

namespace cuemu {

void ContextMemory::teardown() {
  CUcontext self = context_.apiHandle();
  auto released = AddressSpace::instance().releaseIf([self](const MemoryRegion& r) { return r.context == self; });
  for (const RegionPtr& region : released) {
    if (region->kind == MemoryKind::Array && region->arrayHandle) forgetArray(region->arrayHandle);
    settleReleasedRegion(*region);
  }
}

Expected<RegionPtr> ContextMemory::allocate(uint64_t bytes, MemoryKind kind, unsigned flags, bool charged,
                                            bool below4GiB, uint64_t fixedAddress, bool ownMapping) {
  auto region = std::make_shared<MemoryRegion>();
  region->size = bytes;
  region->kind = kind;
  region->flags = flags;
  region->device = context_.device().ordinal();
  region->context = context_.apiHandle();
  region->holdsAddresses = ownMapping;  // made again at the same address: the addresses stay taken when it is freed
  uint64_t commit = alignUp(bytes, AddressSpace::pageSize());
  if (commit < bytes) return makeError(CUDA_ERROR_OUT_OF_MEMORY, "size too large");
  AddressSpace& space = AddressSpace::instance();
  if (charged) {
    if (!space.charge(region->device, commit))
      return makeError(CUDA_ERROR_OUT_OF_MEMORY,
                       fmt::format("{} bytes requested, {} of {} in use", bytes, space.used(region->device),
                                   AddressSpace::capacity(region->device)));
    region->chargedBytes = commit;
  }
  // Large allocations are 2 MiB aligned, as on the GPU (and huge pages become possible).
  uint64_t alignment = bytes >= (uint64_t(2) << 20) ? uint64_t(2) << 20 : 0;
  Expected<RegionPtr> result = makeError(CUDA_ERROR_NOT_SUPPORTED, "");
  if (kind == MemoryKind::Device && !below4GiB && !fixedAddress && !ownMapping) result = space.allocateSmall(region);
  if (!result && result.error().code == CUDA_ERROR_NOT_SUPPORTED)
    result = below4GiB ? space.allocateBelow4GiB(region, commit)
                       : space.allocate(region, commit, alignment, fixedAddress,
                                        kind == MemoryKind::Device ? Backing::Shared : Backing::Private);
  if (!result && charged) space.uncharge(region->device, commit);
  return result;
}

Expected<RegionPtr> ContextMemory::allocateDevice(uint64_t bytes, bool ownMapping) {
  return allocate(bytes, MemoryKind::Device, 0, /*charged=*/true, /*below4GiB=*/false, /*fixedAddress=*/0, ownMapping);
}

Expected<RegionPtr> ContextMemory::allocateDeviceAt(uint64_t bytes, uint64_t address) {
  auto region = allocate(bytes, MemoryKind::Device, 0, /*charged=*/true, /*below4GiB=*/false, address,
                         /*ownMapping=*/true);
  if (!region || (*region)->start == address) return region;
  AddressSpace::instance().stopHolding(**region);  // not the addresses asked for: given back when released
  (void)releaseRegion((*region)->start, {MemoryKind::Device});
  return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("the addresses at {:#x} are taken", address));
}

Expected<RegionPtr> ContextMemory::allocateDeviceBelow4GiB(uint64_t bytes) {
  return allocate(bytes, MemoryKind::Device, 0, /*charged=*/true, /*below4GiB=*/true);
}

Expected<RegionPtr> ContextMemory::allocateHost(uint64_t bytes, unsigned flags) {
  auto result = allocate(bytes, MemoryKind::HostPinned, flags, /*charged=*/false);
  if (!result) return makeError(CUDA_ERROR_OUT_OF_MEMORY, result.error().message);
  return result;
}

Expected<RegionPtr> ContextMemory::allocateManaged(uint64_t bytes, unsigned attachFlags) {
  return allocate(bytes, MemoryKind::Managed, attachFlags, /*charged=*/true);
}

Expected<RegionPtr> ContextMemory::registerHost(void* pointer, uint64_t bytes, unsigned flags) {
  auto region = std::make_shared<MemoryRegion>();
  region->start = reinterpret_cast<uint64_t>(pointer);
  region->size = bytes;
  region->kind = MemoryKind::HostRegistered;
  region->flags = flags;
  region->device = context_.device().ordinal();
  region->context = context_.apiHandle();
  region->hostAlias = pointer;
  return AddressSpace::instance().registerExternal(std::move(region));
}

void settleReleasedRegion(const MemoryRegion& region) {
  if (region.pool) {
    region.pool->onRelease(region);
    return;
  }
  if (region.chargedBytes) AddressSpace::instance().uncharge(region.device, region.chargedBytes);
}

KernelsInFlight& KernelsInFlight::instance() {
  static auto* tracker = new KernelsInFlight;  // never destroyed: grids may end during process exit
  return *tracker;
}

uint64_t KernelsInFlight::enter() {
  std::lock_guard lock(mutex_);
  uint64_t ticket = next_++;
  running_.insert(ticket);
  return ticket;
}

void KernelsInFlight::exit(uint64_t ticket) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mutex_);
    running_.erase(running_.find(ticket));
    // A deferred unmapping waits for the grids that began before it (tickets below its own).
    uint64_t oldest = running_.empty() ? next_ : *running_.begin();
    auto keep =
        std::partition(deferred_.begin(), deferred_.end(), [oldest](const Deferred& d) { return d.ticket > oldest; });
    for (auto it = keep; it != deferred_.end(); ++it) ready.push_back(std::move(it->unmap));
    deferred_.erase(keep, deferred_.end());
  }
  if (ready.empty()) return;
  for (auto& unmap : ready) unmap();
  std::lock_guard lock(mutex_);
  settled_.notify_all();
}

void KernelsInFlight::defer(uint64_t start, uint64_t bytes, std::function<void()> unmap) {
  {
    std::lock_guard lock(mutex_);
    if (!running_.empty()) {
      deferred_.push_back({next_, start, bytes, std::move(unmap)});
      return;
    }
  }
  unmap();
}

void KernelsInFlight::settle(uint64_t start, uint64_t bytes) {
  std::unique_lock lock(mutex_);
  settled_.wait(lock, [&] {
    return std::none_of(deferred_.begin(), deferred_.end(), [&](const Deferred& d) {
      return d.bytes && d.start < start + bytes && start < d.start + d.bytes;
    });
  });
}

Expected<RegionPtr> releaseRegion(uint64_t address, std::initializer_list<MemoryKind> kinds) {
  AddressSpace& space = AddressSpace::instance();
  RegionPtr region = space.findStart(address);
  if (!region || std::find(kinds.begin(), kinds.end(), region->kind) == kinds.end())
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{:#x} is not the start of such an allocation", address));
  // The lease keeps the memory mapped (and its addresses taken) until the grids running now have ended.
  auto hold = std::make_shared<RegionLease>(region);
  // Two threads freeing the same pointer: only one finds it still registered.
  region = space.release(address);
  if (!region) return makeError(CUDA_ERROR_INVALID_VALUE, "already freed");
  KernelsInFlight::instance().defer(region->start, 0, [hold]() mutable { hold.reset(); });
  settleReleasedRegion(*region);
  return region;
}

bool registeredHostUsable(const MemoryRegion& region, uint64_t address, uint64_t bytes, bool write) {
  if (region.kind != MemoryKind::HostRegistered) return true;
  if (write && (region.flags & CU_MEMHOSTREGISTER_READ_ONLY)) return false;
  uint64_t page = AddressSpace::pageSize();
  uint64_t start = address & ~(page - 1);
  uint64_t end = alignUp(address + std::max<uint64_t>(bytes, 1), page);
  // mincore fails with ENOMEM where a page is not mapped; small spans (a kernel's access) need no allocation.
  unsigned char small[8];
  std::vector<unsigned char> large;
  uint64_t pages = (end - start) / page;
  unsigned char* residency = small;
  if (pages > sizeof small) {
    large.resize(pages);
    residency = large.data();
  }
  return mincore(reinterpret_cast<void*>(start), end - start, residency) == 0;
}

RegisteredHostSnapshot::RegisteredHostSnapshot() {
  std::vector<RegionPtr> regions = AddressSpace::instance().externalRegions();
  ranges_.reserve(regions.size());
  uint64_t page = AddressSpace::pageSize();
  for (const RegionPtr& region : regions) {
    uint64_t start = region->start & ~(page - 1);
    uint64_t end = alignUp(region->start + std::max<uint64_t>(region->size, 1), page);
    // msync fails with ENOMEM where part of the span is not mapped; MS_ASYNC writes nothing back and, unlike
    // mincore, needs no buffer of one byte per page.
    bool mapped = msync(reinterpret_cast<void*>(start), end - start, MS_ASYNC) == 0;
    ranges_.push_back({region->start, region->size, (region->flags & CU_MEMHOSTREGISTER_READ_ONLY) != 0, mapped});
  }
}

bool hostPagesAllow(const void* p, size_t bytes, bool readOnly) {
  uint64_t start = reinterpret_cast<uint64_t>(p), end = start + bytes;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return true;  // cannot tell: accept, as before
  // The mappings are sorted; walk those covering [start, end) and require them contiguous and accessible.
  uint64_t covered = start;
  char line[512];
  while (covered < end && std::fgets(line, sizeof line, maps)) {
    unsigned long long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%llx-%llx %4s", &lo, &hi, perms) != 3) continue;
    if (hi <= covered) continue;
    if (lo > covered) break;  // a hole
    if (perms[0] != 'r' || (!readOnly && perms[1] != 'w')) break;
    covered = hi;
  }
  std::fclose(maps);
  return covered >= end;
}

bool isHostPoolMemory(const MemoryRegion& region) {
  return region.kind == MemoryKind::HostPinned && region.pool && region.pool->hostMemory();
}

bool hostPoolHiddenFromDevice(const MemoryRegion& region) {
  return isHostPoolMemory(region) && !region.pool->deviceMayAccess(region.device);
}

namespace {

bool mappingWithoutAccess(const MemoryRegion& region) {
  return region.kind == MemoryKind::VmmMapping &&
         region.accessFlags.load(std::memory_order_relaxed) == CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

Error pastTheEnd(const MemoryRegion& region, uint64_t address, uint64_t bytes) {
  return makeError(CUDA_ERROR_INVALID_VALUE,
                   fmt::format("{} bytes at {:#x} run past the end of the {}-byte allocation at {:#x}", bytes, address,
                               region.size, region.start));
}

// [address, address+bytes) starts in `first` and runs past its end: the VMM mappings that continue it, each
// starting where the one before ends and with access, or the reason there are none.
Expected<std::vector<RegionPtr>> mappingsAfter(const RegionPtr& first, uint64_t address, uint64_t bytes) {
  if (first->kind != MemoryKind::VmmMapping || address + bytes < address) return pastTheEnd(*first, address, bytes);
  std::vector<RegionPtr> more;
  const uint64_t end = address + bytes;
  for (uint64_t covered = first->start + first->size; covered < end;) {
    RegionPtr next = AddressSpace::instance().find(covered);
    if (!next || next->kind != MemoryKind::VmmMapping || next->start != covered)
      return pastTheEnd(*first, address, bytes);
    if (mappingWithoutAccess(*next)) return makeError(CUDA_ERROR_INVALID_VALUE, "mapping without access");
    covered = next->start + next->size;
    more.push_back(std::move(next));
  }
  return more;
}

}  // namespace

Expected<RegionPtr> deviceRange(uint64_t address, uint64_t bytes, bool write, std::vector<RegionPtr>* continuation) {
  RegionPtr region = AddressSpace::instance().find(address);
  if (!region) return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{:#x} is not device memory", address));
  if (!region->contains(address, bytes)) {
    if (!continuation) return pastTheEnd(*region, address, bytes);
    auto more = mappingsAfter(region, address, bytes);
    if (!more) return more.takeError();
    *continuation = std::move(*more);
  }
  if (mappingWithoutAccess(*region)) return makeError(CUDA_ERROR_INVALID_VALUE, "mapping without access");
  if (hostPoolHiddenFromDevice(*region))
    return makeError(CUDA_ERROR_INVALID_VALUE,
                     fmt::format("{:#x} is memory of a pinned host pool without device access", address));
  if (!registeredHostUsable(*region, address, bytes, write))
    return makeError(CUDA_ERROR_INVALID_VALUE,
                     fmt::format("registered host memory at {:#x} is read-only or no longer mapped", address));
  return region;
}

Expected<RegionPtr> anyRange(uint64_t address, uint64_t bytes, bool write, std::vector<RegionPtr>* continuation) {
  AddressSpace& space = AddressSpace::instance();
  if (RegionPtr region = space.find(address)) {
    if (!region->contains(address, bytes)) {
      if (!continuation)
        return makeError(CUDA_ERROR_INVALID_VALUE,
                         fmt::format("{} bytes at {:#x} run past the end of the allocation at {:#x}", bytes, address,
                                     region->start));
      auto more = mappingsAfter(region, address, bytes);
      if (!more) return more.takeError();
      if (mappingWithoutAccess(*region)) return makeError(CUDA_ERROR_INVALID_VALUE, "mapping without access");
      *continuation = std::move(*more);
    }
    if (!registeredHostUsable(*region, address, bytes, write))
      return makeError(CUDA_ERROR_INVALID_VALUE,
                       fmt::format("registered host memory at {:#x} is read-only or no longer mapped", address));
    return region;
  }
  if (space.isDeviceAddress(address))
    return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("{:#x} is freed or unmapped device memory", address));
  return RegionPtr();
}

CUresult leaseRegion(const RegionPtr& region, std::vector<RegionLease>& leases) {
  if (!region) return CUDA_SUCCESS;  // pageable host memory
  RegionLease lease(region);
  if (!lease.valid()) return CUDA_ERROR_INVALID_VALUE;  // freed since it was checked
  leases.push_back(std::move(lease));
  return CUDA_SUCCESS;
}

CUresult leaseRegions(const std::vector<RegionPtr>& regions, std::vector<RegionLease>& leases) {
  for (const RegionPtr& region : regions)
    if (CUresult r = leaseRegion(region, leases); r != CUDA_SUCCESS) return r;
  return CUDA_SUCCESS;
}

CUresult leaseSide(const CopySide& side, std::vector<RegionLease>& leases) {
  if (CUresult r = leaseRegion(side.region, leases); r != CUDA_SUCCESS) return r;
  return leaseRegions(side.continuation, leases);
}

bool isPageableHost(const void* pointer) { return !AddressSpace::instance().find(reinterpret_cast<uint64_t>(pointer)); }

namespace {

// Copies with memmove, except the words a stream polls (polled_words.h), which get one atomic store each.
void copyAroundPolled(const HostWrite& write, uint8_t* d, const uint8_t* s, size_t bytes) {
  std::vector<uint8_t> staged;
  if (d < s + bytes && s < d + bytes) {  // overlapping: the pieces are copied in address order, so read first
    staged.assign(s, s + bytes);
    s = staged.data();
  }
  write.writeAroundPolled(
      d, bytes, [&](size_t from, size_t to) { std::memmove(d + from, s + from, to - from); },
      [&](size_t at) { return s[at]; });
}

void copyRun(const HostWrite& write, uint8_t* d, const uint8_t* s, size_t bytes) {
  if (checkers::on()) [[unlikely]]
    checkers::hostWrote(reinterpret_cast<uint64_t>(d), bytes);
  if (!write.plain(d, bytes)) [[unlikely]] {
    copyAroundPolled(write, d, s, bytes);
    return;
  }
  // One core's memcpy rarely saturates memory bandwidth; very large copies are split across a few threads.
  constexpr size_t kParallelThreshold = size_t(64) << 20;
  constexpr size_t kPerThread = size_t(32) << 20;
  static const unsigned cores = std::thread::hardware_concurrency();  // glibc reads sysfs for this
  if (bytes < kParallelThreshold || cores < 4) {
    std::memmove(d, s, bytes);
    return;
  }
  if (d < s + bytes && s < d + bytes) {  // overlapping: only memmove is correct
    std::memmove(d, s, bytes);
    return;
  }
  size_t parts = std::min<size_t>({bytes / kPerThread, cores / 2, 8});
  size_t step = alignUp(bytes / parts, 4096);
  std::vector<std::thread> helpers;
  helpers.reserve(parts - 1);
  for (size_t i = 1; i < parts && i * step < bytes; ++i) {
    size_t offset = i * step, n = std::min(step, bytes - offset);
    helpers.emplace_back([=] { std::memcpy(d + offset, s + offset, n); });
  }
  std::memcpy(d, s, std::min(step, bytes));
  for (auto& t : helpers) t.join();
}

void fillRow(uint8_t* row, uint32_t value, unsigned elementSize, size_t count) {
  switch (elementSize) {
    case 1: std::memset(row, int(value & 0xFF), count); break;
    case 2: std::fill_n(reinterpret_cast<uint16_t*>(row), count, static_cast<uint16_t>(value)); break;
    default: std::fill_n(reinterpret_cast<uint32_t*>(row), count, value); break;
  }
}

}  // namespace

void copyBytes(void* dst, const void* src, size_t bytes) {
  HostWrite write;
  copyRun(write, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
}

void copy3D(CopySide dst, CopySide src, size_t widthBytes, size_t height, size_t depth) {
  if (!widthBytes || !height || !depth) return;
  HostWrite write;
  bool rowsContiguous = dst.pitch == widthBytes && src.pitch == widthBytes;
  if (rowsContiguous &&
      (depth == 1 || (dst.slicePitch == widthBytes * height && src.slicePitch == widthBytes * height))) {
    copyRun(write, dst.origin, src.origin, widthBytes * height * depth);
    return;
  }
  for (size_t z = 0; z < depth; ++z) {
    uint8_t* d = dst.origin + z * dst.slicePitch;
    const uint8_t* s = src.origin + z * src.slicePitch;
    if (rowsContiguous) {
      copyRun(write, d, s, widthBytes * height);
      continue;
    }
    for (size_t y = 0; y < height; ++y) {
      uint8_t* row = d + y * dst.pitch;
      if (write.plain(row, widthBytes)) [[likely]]
        std::memmove(row, s + y * src.pitch, widthBytes);
      else
        copyAroundPolled(write, row, s + y * src.pitch, widthBytes);
      if (checkers::on()) [[unlikely]]
        checkers::hostWrote(reinterpret_cast<uint64_t>(row), widthBytes);
    }
  }
}

void fill2D(uint8_t* dst, size_t pitch, uint32_t value, unsigned elementSize, size_t count, size_t height) {
  HostWrite write;
  for (size_t y = 0; y < height; ++y) {
    uint8_t* row = dst + y * pitch;
    size_t bytes = count * elementSize;
    if (checkers::on()) [[unlikely]]
      checkers::hostWrote(reinterpret_cast<uint64_t>(row), bytes);
    if (write.plain(row, bytes)) [[likely]] {
      fillRow(row, value, elementSize, count);
      continue;
    }
    auto byteAt = [&](size_t at) { return uint8_t(value >> (8 * (at % elementSize))); };
    write.writeAroundPolled(
        row, bytes,
        [&](size_t from, size_t to) {
          if (from % elementSize == 0 && to % elementSize == 0 &&
              reinterpret_cast<uintptr_t>(row + from) % elementSize == 0) {
            fillRow(row + from, value, elementSize, (to - from) / elementSize);
            return;
          }
          for (size_t at = from; at < to; ++at) row[at] = byteAt(at);
        },
        byteAt);
  }
}

}  // namespace cuemu
