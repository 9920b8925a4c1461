// Stream-ordered allocation: cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemFreeAsync, cuMemPool*, and the
// device's default/current pool (cuDeviceGetDefaultMemPool, cuDeviceGet/SetMemPool, cuMemGet*/SetMemPool).
// An allocation is made at the call (earlier than stream order needs, which is allowed); a free happens in
// stream order. In a stream capture they become graph memory nodes: the allocation belongs to the graph (same
// address at every launch) and a free of such memory is a MEM_FREE node.
#include "api/impl.h"

#include "core/capture_mode.h"
#include "core/checkers.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/memory.h"
#include "core/mempool.h"
#include "impl/memory_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace cuemu {
namespace {

// Pool memory that is not device memory: pinned host pools and managed pools.
bool isHostPoolRegion(const MemoryRegion& region) {
  return (region.kind == MemoryKind::HostPinned || region.kind == MemoryKind::Managed) && region.pool;
}

CUresult allocFromPool(CUdeviceptr* dptr, size_t bytesize, std::shared_ptr<MemPool> pool, CUstream stream) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto resolved = context.streams().resolve(stream);
  if (!resolved) return resolved.error().code;
  if (!bytesize) {  // accepted, as driver 580 does; there is nothing to point at
    *dptr = 0;
    return CUDA_SUCCESS;
  }
  if (isCapturing(**resolved)) {
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, context.device().ordinal()};
    params.bytesize = bytesize;
    auto data = makeGraphAllocation(context, params);
    if (!data) return data.error().code;
    CUdeviceptr address = std::get<MemAllocNodeData>(*data).params.dptr;
    CUresult result = CUDA_SUCCESS;
    if (captureIfCapturing(**resolved, CU_GRAPH_NODE_TYPE_MEM_ALLOC, std::move(*data), result) && !result)
      *dptr = address;
    return result;
  }
  // Allocating in stream order on a stream that does not capture is unsafe during a capture (driver 580:
  // tools/gpu-probe/captureunsafe28), as cuMemAlloc is.
  if (unsafeCallRefusedDuringCapture()) return refuseUnsafeCallDuringCapture();
  if (!pool) pool = currentMemPool(context.device().ordinal());
  auto region = pool->allocate(context, bytesize);
  if (!region) return region.error().code;
  *dptr = (*region)->start;
  checkers::allocatedAsync(*dptr, bytesize);
  return CUDA_SUCCESS;
}

CUresult freeAsync(CUdeviceptr dptr, CUstream stream) {
  CUEMU_REQUIRE_CONTEXT(context);
  if (!dptr) return CUDA_SUCCESS;  // the pointer of a zero-byte allocation (driver 580 accepts it)
  if (isGraphAllocation(dptr)) {
    auto resolved = context.streams().resolve(stream);
    CUresult result = CUDA_SUCCESS;
    if (resolved &&
        captureIfCapturing(**resolved, CU_GRAPH_NODE_TYPE_MEM_FREE, NodeData{MemFreeNodeData{dptr}}, result))
      return result;
    if (!applicationMayFree(dptr)) return CUDA_ERROR_INVALID_VALUE;
  }
  // Freeing in stream order on a stream that does not capture is unsafe during a capture, as allocating is: refused
  // (the capture invalidated, the memory still allocated) unless relaxed (driver 580 on an H100:
  // tools/gpu-probe/freebrkpt28).
  if (auto resolved = context.streams().resolve(stream);
      resolved && !isCapturing(**resolved) && unsafeCallRefusedDuringCapture())
    return refuseUnsafeCallDuringCapture();
  RegionPtr region = AddressSpace::instance().findStart(dptr);
  if (!region || !(region->kind == MemoryKind::Device || isHostPoolRegion(*region))) return CUDA_ERROR_INVALID_VALUE;
  if (region->freePending.exchange(true)) return CUDA_ERROR_INVALID_VALUE;
  MemoryKind kind = region->kind;
  // cuMemAlloc memory (not a pool's) freed in stream order while a kernel on another stream still uses it: the
  // H100 (driver 580) lets the kernel finish with it, as cuMemFree waits for it (tools/gpu-probe/results/
  // clients17c-h100-2026-11-26.txt, memfree_async_other); the release waits for the grids running then.
  bool waitsForKernels = kind == MemoryKind::Device && !region->pool;
  CUresult queued = memops::runAsync(context, stream, [dptr, kind, waitsForKernels] {
    checkers::freedInStreamOrder(dptr);
    if (waitsForKernels)
      KernelsInFlight::instance().defer(0, 0, [dptr, kind] { (void)releaseRegion(dptr, {kind}); });
    else
      (void)releaseRegion(dptr, {kind});
    return CUDA_SUCCESS;
  });
  if (queued != CUDA_SUCCESS)
    region->freePending = false;
  else if (region->pool)
    region->pool->onFreeQueued(*region);
  return queued;
}

// Whether an open descriptor is a cuemu process's device-memory file (what a pool export hands out).
bool isDeviceMemoryFile(int fd) {
  char link[64], target[128];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = 0;
  return std::strncmp(target, "/memfd:cuemu-device-memory", 26) == 0;
}

// The device a pool location names (pools live on devices in cuemu).
Expected<int> poolDevice(const CUmemLocation* location, CUmemAllocationType type) {
  if (!location) return makeError(CUDA_ERROR_INVALID_VALUE, "no location");
  if (type != CU_MEM_ALLOCATION_TYPE_PINNED) return makeError(CUDA_ERROR_NOT_SUPPORTED, "only pinned pools");
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) return makeError(CUDA_ERROR_NOT_SUPPORTED, "only device pools");
  if (!deviceByOrdinal(location->id)) return makeError(CUDA_ERROR_INVALID_DEVICE, "no such device");
  return location->id;
}

bool isDevicePinned(const CUmemLocation& location, CUmemAllocationType type) {
  return type == CU_MEM_ALLOCATION_TYPE_PINNED && location.type == CU_MEM_LOCATION_TYPE_DEVICE;
}

// The device a pool at `location` belongs to in cuemu (host and managed pools: device 0, the host's one NUMA node
// being 0, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID), or nothing where the location is not one such a pool can have.
std::optional<int> poolLocation(const CUmemLocation& location, CUmemAllocationType type) {
  bool managed = type == CU_MEM_ALLOCATION_TYPE_MANAGED;
  if (!managed && type != CU_MEM_ALLOCATION_TYPE_PINNED) return std::nullopt;
  switch (location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (!deviceByOrdinal(location.id)) return std::nullopt;
      return location.id;
    case CU_MEM_LOCATION_TYPE_HOST: return 0;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return location.id == 0 ? std::optional<int>(0) : std::nullopt;
    case CU_MEM_LOCATION_TYPE_NONE: return managed ? std::optional<int>(0) : std::nullopt;  // no preferred location
    default: return std::nullopt;
  }
}

// Default and current pools of the locations other than a device's pinned memory (pinned host memory, managed
// memory): made on first use, one per allocation type and location.
class LocationPools {
 public:
  Expected<std::shared_ptr<MemPool>> defaultPool(const CUmemLocation& location, CUmemAllocationType type) {
    auto device = poolLocation(location, type);
    if (!device) return makeError(CUDA_ERROR_INVALID_VALUE, "no pool at that location");
    std::lock_guard lock(mutex_);
    auto& pool = defaults_[key(location, type)];
    if (!pool) {
      CUmemPoolProps props{};
      props.allocType = type;
      props.location = location;
      pool = std::make_shared<MemPool>(*device, props, /*isDefault=*/true);
      pool->registerHandle(handleTable<MemPool>().insert(pool));
    }
    return pool;
  }
  Expected<std::shared_ptr<MemPool>> currentPool(const CUmemLocation& location, CUmemAllocationType type) {
    {
      std::lock_guard lock(mutex_);
      auto it = current_.find(key(location, type));
      if (it != current_.end() && lookup<MemPool>(it->second->handle())) return it->second;
    }
    return defaultPool(location, type);
  }
  CUresult setCurrent(const CUmemLocation& location, CUmemAllocationType type, std::shared_ptr<MemPool> pool) {
    if (!poolLocation(location, type)) return CUDA_ERROR_INVALID_VALUE;
    const CUmemPoolProps& props = pool->props();
    if (props.allocType != type || props.location.type != location.type) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(mutex_);
    current_[key(location, type)] = std::move(pool);
    return CUDA_SUCCESS;
  }

 private:
  static std::tuple<int, int, int> key(const CUmemLocation& location, CUmemAllocationType type) {
    return {int(type), int(location.type), location.type == CU_MEM_LOCATION_TYPE_HOST ? 0 : location.id};
  }
  std::mutex mutex_;
  std::map<std::tuple<int, int, int>, std::shared_ptr<MemPool>> defaults_, current_;
};

LocationPools& locationPools() {
  static auto* pools = new LocationPools;
  return *pools;
}

}  // namespace

namespace impl {

CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return allocFromPool(dptr, bytesize, nullptr, hStream);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  return allocFromPool(dptr, bytesize, std::move(found), hStream);
}
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return freeAsync(dptr, hStream); }

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  if (!pool || !props) return CUDA_ERROR_INVALID_VALUE;
  bool managed = props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED && !managed) return CUDA_ERROR_INVALID_VALUE;
  if (props->handleTypes & ~memops::kCreatableHandleTypes) return CUDA_ERROR_NOT_SUPPORTED;
  // With IPC off (CUEMU_IPC=0) the device reports no pool handle type, and such a pool is refused as any type the
  // device does not support.
  if ((props->handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) && !AddressSpace::instance().ipcEnabled())
    return CUDA_ERROR_NOT_SUPPORTED;
  if (managed && props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_INVALID_VALUE;  // not shareable
  auto device = poolLocation(props->location, props->allocType);
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  // Pinned host pools, as driver 580 answers (tools/gpu-probe/ipc17.cpp): HOST pools cannot be shared.
  if (props->location.type == CU_MEM_LOCATION_TYPE_HOST && props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  auto created = std::make_shared<MemPool>(*device, *props, /*isDefault=*/false);
  created->registerHandle(handleTable<MemPool>().insert(created));
  *pool = created->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  if (found->isDefault()) return CUDA_ERROR_INVALID_VALUE;
  handleTable<MemPool>().erase(found->handle());
  // A destroyed current pool leaves the device with its default pool (currentMemPool checks liveness).
  // Outstanding allocations keep the object alive until they are freed.
  return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  return found->getAttribute(attr, value);
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  return found->setAttribute(attr, value);
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  found->trimTo(minBytesToKeep);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  if (!map && count) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  return found->setAccess(map, count);
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool, CUmemLocation* location) {
  if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || !deviceByOrdinal(location->id)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, memPool, CUDA_ERROR_INVALID_VALUE);
  *flags = found->access(*location);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pool_out = defaultMemPool(dev)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pool = currentMemPool(dev)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  if (found->device() != dev) return CUDA_ERROR_INVALID_DEVICE;
  setCurrentMemPool(dev, std::move(found));
  return CUDA_SUCCESS;
}

CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location, CUmemAllocationType type) {
  if (!pool_out || !location) return CUDA_ERROR_INVALID_VALUE;
  if (isDevicePinned(*location, type)) {
    auto device = poolDevice(location, type);
    if (!device) return device.error().code;
    *pool_out = defaultMemPool(*device)->apiHandle();
    return CUDA_SUCCESS;
  }
  auto found = locationPools().defaultPool(*location, type);
  if (!found) return found.error().code;
  *pool_out = (*found)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  if (!pool || !location) return CUDA_ERROR_INVALID_VALUE;
  if (isDevicePinned(*location, type)) {
    auto device = poolDevice(location, type);
    if (!device) return device.error().code;
    *pool = currentMemPool(*device)->apiHandle();
    return CUDA_SUCCESS;
  }
  auto found = locationPools().currentPool(*location, type);
  if (!found) return found.error().code;
  *pool = (*found)->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
  if (!location) return CUDA_ERROR_INVALID_VALUE;
  if (isDevicePinned(*location, type)) {
    auto device = poolDevice(location, type);
    if (!device) return device.error().code;
    return impl::cuDeviceSetMemPool(*device, pool);
  }
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  return locationPools().setCurrent(*location, type, std::move(found));
}

// Pool sharing between processes: the pool's memory file is the process's shared memfd; an exported pointer
// names its offset there.
namespace {
struct PoolPointerPayload {
  uint32_t magic;
  uint32_t version;
  uint64_t offset;
  uint64_t size;
  uint64_t bufferId;
  uint8_t hostMemory;  // exported from a pinned host pool
  uint8_t reserved[31];
};
static_assert(sizeof(PoolPointerPayload) == sizeof(CUmemPoolPtrExportData), "export data is 64 bytes");
constexpr uint32_t kPoolPointerMagic = 0x504D4543;  // "CEMP"
}  // namespace

CUresult cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool, CUmemAllocationHandleType handleType,
                                          unsigned long long flags) {
  if (!handle_out || flags) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  if (found->importedFd() >= 0) return CUDA_ERROR_INVALID_VALUE;  // an import is not re-exported
  // A pool made with the fabric type exports nothing without an IMEX channel, a file descriptor neither (driver
  // 580 on an H100: tools/gpu-probe/results/clients17c-round2-h100-2026-11-26.txt).
  if (found->props().handleTypes & CU_MEM_HANDLE_TYPE_FABRIC) return CUDA_ERROR_NOT_PERMITTED;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      !(found->props().handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_INVALID_VALUE;
  int shared = AddressSpace::instance().sharedFileDescriptor();
  if (shared < 0) return CUDA_ERROR_NOT_SUPPORTED;
  int fd = fcntl(shared, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(handle_out) = fd;
  return CUDA_SUCCESS;
}

CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle, CUmemAllocationHandleType handleType,
                                            unsigned long long flags) {
  if (!pool_out || flags || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int given = static_cast<int>(reinterpret_cast<intptr_t>(handle));
  // Driver 580 (tools/gpu-probe/ipc17.cpp, case api.memory.ClientsIpc.ImportChecksTheDescriptor): a descriptor that
  // is not open, or a pipe, is CUDA_ERROR_UNKNOWN; a file that is not a pool's (stdin) INVALID_VALUE.
  struct stat st {};
  if (fstat(given, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return CUDA_ERROR_UNKNOWN;
  if (!isDeviceMemoryFile(given)) return CUDA_ERROR_INVALID_VALUE;
  int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  auto imported = std::make_shared<MemPool>(0, props, /*isDefault=*/false);
  imported->setImportedFd(fd);
  imported->registerHandle(handleTable<MemPool>().insert(imported));
  *pool_out = imported->apiHandle();
  return CUDA_SUCCESS;
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) {
  if (!shareData_out) return CUDA_ERROR_INVALID_VALUE;
  RegionPtr region = AddressSpace::instance().findStart(ptr);
  if (!region || !region->pool || region->pool->importedFd() >= 0 ||
      !(region->pool->props().handleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_INVALID_VALUE;
  auto shared = AddressSpace::instance().shareRegion(region);
  if (!shared) return shared.error().code;
  PoolPointerPayload payload{};
  payload.magic = kPoolPointerMagic;
  payload.version = 1;
  payload.offset = shared->second;
  payload.size = region->size;
  payload.bufferId = region->bufferId;
  payload.hostMemory = region->pool->hostMemory();
  std::memcpy(shareData_out, &payload, sizeof payload);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData* shareData) {
  if (!ptr_out || !shareData) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MemPool, pool, CUDA_ERROR_INVALID_VALUE);
  if (found->importedFd() < 0) return CUDA_ERROR_INVALID_VALUE;
  PoolPointerPayload payload;
  std::memcpy(&payload, shareData, sizeof payload);
  if (payload.magic != kPoolPointerMagic || !payload.size) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  // A live earlier import of the same allocation: driver 580 answers the same address for device memory and
  // CUDA_ERROR_ALREADY_MAPPED for host-pool memory.
  if (RegionPtr earlier = found->findImport(payload.offset)) {
    if (payload.hostMemory) return CUDA_ERROR_ALREADY_MAPPED;
    *ptr_out = earlier->start;
    return CUDA_SUCCESS;
  }
  auto region = std::make_shared<MemoryRegion>();
  region->size = payload.size;
  region->kind = payload.hostMemory ? MemoryKind::HostPinned : MemoryKind::Device;
  region->device = found->device();
  region->context = context.apiHandle();
  region->pool = found;
  region->poolHandle = found->apiHandle();
  AddressSpace& space = AddressSpace::instance();
  auto placed = space.allocate(region, 0);
  if (!placed) return placed.error().code;
  auto mapped = space.mapFile(region->start, alignUp(payload.size, AddressSpace::pageSize()), found->importedFd(),
                              payload.offset);
  if (mapped) mapped = space.setProtection(region->start, region->size, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  if (!mapped) {
    space.release(region->start);
    return mapped.error().code;
  }
  found->rememberImport(payload.offset, region);
  *ptr_out = region->start;
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
