// Interprocess memory: cuIpcGetMemHandle / cuIpcOpenMemHandle / cuIpcCloseMemHandle. cuMemAlloc memory lives in
// the process's shared memfd from allocation on; the handle names the exporting process, its descriptor and the
// allocation's offset, and the importer maps that range through /proc/<pid>/fd. Event handles name a slot of
// the exporter's shared event file (core/ipc_event.h), mapped the same way.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/ipc_event.h"
#include "core/memory.h"
#include "impl/memory_internal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

namespace cuemu {
namespace {

// What a CUipcMemHandle carries (64 bytes).
struct IpcPayload {
  uint32_t magic;
  uint32_t version;
  int32_t pid;
  int32_t fd;
  uint64_t offset;
  uint64_t size;
  uint64_t bufferId;
  int32_t device;
  // A small (sub-allocated) block (inSlab 1): its offset in its slab (2 MiB, aligned to 2 MiB), which the
  // importer maps whole so that the block keeps its offset in a 2 MiB chunk, as on a GPU.
  uint32_t inSlab;
  uint32_t offsetInSlab;
  uint32_t reserved[3];
};
static_assert(sizeof(IpcPayload) == sizeof(CUipcMemHandle), "an IPC handle is 64 bytes");
constexpr uint32_t kIpcMagic = 0x4D455543;  // "CUEM"

// Imports are reference counted: opening the same handle twice yields the same pointer.
struct ImportKey {
  int32_t pid;
  uint64_t bufferId;
  bool operator<(const ImportKey& o) const { return pid != o.pid ? pid < o.pid : bufferId < o.bufferId; }
};
struct Imports {
  std::mutex mutex;
  std::map<ImportKey, std::pair<uint64_t, int>> byKey;  // -> address, opens
  // The mappings of exported file ranges, by exporting process and file offset: blocks of one exported slab share
  // one (each imported block holds it).
  std::map<std::pair<int32_t, uint64_t>, std::weak_ptr<AddressSpace::MappedWindow>> windows;
};
Imports& imports() {
  static auto* table = new Imports;
  return *table;
}

}  // namespace

namespace impl {

CUresult cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  RegionPtr region = AddressSpace::instance().find(dptr);
  if (!region || region->kind != MemoryKind::Device || region->pool) return CUDA_ERROR_INVALID_VALUE;
  auto shared = AddressSpace::instance().shareRegion(region);
  if (!shared) return shared.error().code;
  IpcPayload payload{};
  payload.magic = kIpcMagic;
  payload.version = 1;
  payload.pid = getpid();
  payload.fd = shared->first;
  payload.offset = shared->second;
  payload.size = region->size;
  payload.bufferId = region->bufferId;
  payload.device = region->device;
  payload.inSlab = region->slab != 0;
  payload.offsetInSlab = region->slab ? uint32_t(region->start - region->slab) : 0;
  std::memcpy(pHandle, &payload, sizeof payload);
  return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  if (!pdptr || (Flags & ~unsigned(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  IpcPayload payload;
  std::memcpy(&payload, &handle, sizeof payload);
  if (payload.magic != kIpcMagic || payload.version != 1 || !payload.size) return CUDA_ERROR_INVALID_VALUE;
  // The driver refuses handles exported by the calling process itself.
  if (payload.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;
  Imports& table = imports();
  std::lock_guard lock(table.mutex);
  ImportKey key{payload.pid, payload.bufferId};
  if (auto it = table.byKey.find(key); it != table.byKey.end()) {
    RegionPtr open = AddressSpace::instance().find(it->second.first);
    if (open && open->kind == MemoryKind::IpcImport) {
      ++it->second.second;
      *pdptr = it->second.first;
      return CUDA_SUCCESS;
    }
    table.byKey.erase(it);  // closed by its context's destruction
  }
  int fd = open(fmt::format("/proc/{}/fd/{}", payload.pid, payload.fd).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;  // the exporter is gone (or not ours to open)
  // A small allocation lies inside its slab: the importer maps the whole slab 2 MiB-aligned, once, and hands out
  // each block at its offset there, the block alone being the allocation the API sees (measured on an H100: the
  // imported pointer keeps its offset in the 2 MiB chunk, two blocks of one chunk keep their distance,
  // cuMemGetAddressRange gives the block's start and size, copies past the block fail;
  // tools/gpu-probe/results/rel24-cdp-ipc-h100-2026-11-26.txt).
  uint64_t windowBytes = payload.size, windowAlignment = 0;
  if (payload.inSlab) {
    if (payload.offsetInSlab >= AddressSpace::kSlabBytes || payload.offset < payload.offsetInSlab) {
      close(fd);
      return CUDA_ERROR_INVALID_VALUE;
    }
    windowBytes = windowAlignment = AddressSpace::kSlabBytes;
  } else if (payload.offsetInSlab) {
    close(fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  AddressSpace& space = AddressSpace::instance();
  uint64_t windowOffset = payload.offset - payload.offsetInSlab;
  std::erase_if(table.windows, [](const auto& entry) { return entry.second.expired(); });
  std::shared_ptr<AddressSpace::MappedWindow> window = table.windows[{payload.pid, windowOffset}].lock();
  if (!window || window->bytes < payload.offsetInSlab + payload.size) {
    auto mapped = space.mapWindow(fd, windowOffset, windowBytes, windowAlignment);
    if (!mapped) {
      close(fd);
      return mapped.error().code;
    }
    window = std::move(*mapped);
    table.windows[{payload.pid, windowOffset}] = window;
  }
  close(fd);  // the mapping keeps the memory
  auto region = std::make_shared<MemoryRegion>();
  region->size = payload.size;
  region->kind = MemoryKind::IpcImport;
  region->device = context.device().ordinal();
  region->context = context.apiHandle();
  auto placed = space.registerInWindow(region, std::move(window), payload.offsetInSlab);
  if (!placed) return placed.error().code;
  table.byKey.emplace(key, std::make_pair(region->start, 1));
  *pdptr = region->start;
  return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return impl::cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  RegionPtr region = AddressSpace::instance().find(dptr);
  if (!region || region->kind != MemoryKind::IpcImport) return CUDA_ERROR_INVALID_VALUE;
  Imports& table = imports();
  std::lock_guard lock(table.mutex);
  bool handedOut = false;
  for (auto it = table.byKey.begin(); it != table.byKey.end(); ++it) {
    if (it->second.first != dptr) continue;
    handedOut = true;
    if (--it->second.second > 0) return CUDA_SUCCESS;
    table.byKey.erase(it);
    break;
  }
  // Only the pointer cuIpcOpenMemHandle gave (the start, unless the export was a small allocation).
  if (!handedOut && region->start != dptr) return CUDA_ERROR_INVALID_VALUE;
  memops::drainOwner(dptr);
  AddressSpace::instance().release(region->start);
  return CUDA_SUCCESS;
}

CUresult cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, Event, event);
  // An event created without CU_EVENT_INTERPROCESS is CUDA_ERROR_INVALID_HANDLE (measured on driver 580).
  if (!found->ipc()) return CUDA_ERROR_INVALID_HANDLE;
  found->ipc()->exportHandle(*pHandle);
  return CUDA_SUCCESS;
}

CUresult cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  auto shared = IpcEventState::open(handle);
  if (!shared) return shared.error().code;
  // The imported event behaves like a local one created with CU_EVENT_DISABLE_TIMING.
  auto event = std::make_shared<Event>(context, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING);
  event->attachIpc(std::move(*shared));
  event->setHandle(handleTable<Event>().insert(event));
  *phEvent = toApiHandle<CUevent>(event->handle());
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
