// Handles as the application sees them. A CUcontext, CUstream, CUmodule ... is not a pointer to our object
// but an encoded {kind, generation, slot} value, checked on every use: a stale handle (object destroyed), a
// handle of the wrong kind, or garbage yields an error instead of a crash. Objects are shared_ptr-owned so
// that work in flight keeps what it uses alive even if the application destroys it meanwhile.
#pragma once

#include "core/result.h"

#include <cstdint>
#include <deque>
#include <new>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace cuemu {

enum class HandleKind : uint8_t {
  Context = 1,
  Module,
  Function,
  Stream,
  Event,
  Library,
  Kernel,
  LinkState,
  Array,
  MipmappedArray,
  MemPool,
  Graph,
  GraphNode,
  GraphExec,
  TexObject,
  SurfObject,
  UserObject,
  GreenContext,
  ExternalMemory,
  ExternalSemaphore,
  GraphicsResource,
  MemGenericAllocation,
  DevResourceDesc,
  LogsCallback,
  Count
};

const char* handleKindName(HandleKind kind);

// Handles look like the user-space pointers NVIDIA's driver hands out: 16-byte aligned, below 2^47, never 0.
// Clients rely on it (cuda.core stores handles as signed 64-bit integers). Each value lies in a range of
// address space reserved without access at first use, so no real object ever has a handle's address and a
// host pointer passed by mistake is never taken for a handle. The offset into that range encodes
// {kind, generation, slot}: bits 4-23 slot, 24-35 generation, 36-40 kind.
struct HandleBits {
  static constexpr unsigned kAlignShift = 4;
  static constexpr unsigned kSlotBits = 20;
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's layout leaves no 2 TiB of application address space next to the device address space's
  // 1 TiB: three generation bits less (a 256 GiB range) in its builds (tools/sanitize.sh thread).
  static constexpr unsigned kGenerationBits = 9;
#else
  static constexpr unsigned kGenerationBits = 12;
#endif
  static constexpr unsigned kKindBits = 5;
  static constexpr uint32_t kMaxSlots = uint32_t(1) << kSlotBits;
  static constexpr uint16_t kGenerationMask = (uint16_t(1) << kGenerationBits) - 1;
  static constexpr uint64_t kRangeBytes = uint64_t(1) << (kAlignShift + kSlotBits + kGenerationBits + kKindBits);
  static_assert(unsigned(HandleKind::Count) <= (1u << kKindBits), "handle kinds must fit their bits");

  // Start of the reserved range (reserved on first use; 0 when the system refused it: creations then fail).
  static uint64_t base();
  static uint64_t encode(HandleKind kind, uint32_t slot, uint16_t generation) {
    uint64_t index = (uint64_t(kind) << (kSlotBits + kGenerationBits)) |
                     (uint64_t(generation & kGenerationMask) << kSlotBits) | slot;
    return base() + (index << kAlignShift);
  }
  static bool isHandle(uint64_t value) {
    uint64_t b = base();
    return b && value - b < kRangeBytes && (value & ((uint64_t(1) << kAlignShift) - 1)) == 0;
  }
  static uint64_t index(uint64_t value) { return (value - base()) >> kAlignShift; }
  static HandleKind kind(uint64_t value) { return HandleKind(index(value) >> (kSlotBits + kGenerationBits)); }
  static uint32_t slot(uint64_t value) { return uint32_t(index(value) & (kMaxSlots - 1)); }
  static uint16_t generation(uint64_t value) { return uint16_t((index(value) >> kSlotBits) & kGenerationMask); }
};

// One table per object type. T must expose `static constexpr HandleKind kKind`.
template <typename T> class HandleTable {
 public:
  // Registers the object and returns its handle value. Freed slots are reused oldest first, so a stale handle
  // stays invalid for as long as possible (its generation comes round again only after 4096 reuses of its slot).
  // Throws std::bad_alloc when every slot of this kind is live (the API's exception barrier answers
  // CUDA_ERROR_OUT_OF_MEMORY).
  uint64_t insert(std::shared_ptr<T> object) {
    std::unique_lock lock(mutex_);
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.front();
      free_.pop_front();
    } else {
      if (slots_.size() >= HandleBits::kMaxSlots || !HandleBits::base()) throw std::bad_alloc();
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& s = slots_[slot];
    s.object = std::move(object);
    return HandleBits::encode(T::kKind, slot, s.generation);
  }

  // The live object behind a handle, or null for anything else.
  std::shared_ptr<T> find(uint64_t value) const {
    if (!HandleBits::isHandle(value) || HandleBits::kind(value) != T::kKind) return nullptr;
    std::shared_lock lock(mutex_);
    uint32_t slot = HandleBits::slot(value);
    if (slot >= slots_.size()) return nullptr;
    const Slot& s = slots_[slot];
    if (s.generation != HandleBits::generation(value)) return nullptr;
    return s.object;
  }

  // Unregisters the handle; returns the object (so the caller decides when it dies), or null if stale.
  std::shared_ptr<T> erase(uint64_t value) {
    if (!HandleBits::isHandle(value) || HandleBits::kind(value) != T::kKind) return nullptr;
    std::unique_lock lock(mutex_);
    uint32_t slot = HandleBits::slot(value);
    if (slot >= slots_.size()) return nullptr;
    Slot& s = slots_[slot];
    if (s.generation != HandleBits::generation(value) || !s.object) return nullptr;
    std::shared_ptr<T> object = std::move(s.object);
    s.object.reset();
    s.generation = (s.generation + 1) & HandleBits::kGenerationMask;  // a later object here gets another handle
    free_.push_back(slot);
    return object;
  }

  template <typename Fn> void forEach(Fn&& fn) const {
    std::shared_lock lock(mutex_);
    for (const Slot& s : slots_)
      if (s.object) fn(s.object);
  }

 private:
  struct Slot {
    std::shared_ptr<T> object;
    uint16_t generation = 1;
  };
  mutable std::shared_mutex mutex_;
  std::vector<Slot> slots_;
  std::deque<uint32_t> free_;
};

// The handle type the API uses for T (CUcontext for Context, ...), converted both ways by one template.
template <typename ApiHandle> uint64_t handleValue(ApiHandle handle) {
  if constexpr (std::is_integral_v<ApiHandle>)  // CUtexObject, CUmemGenericAllocationHandle, ...
    return static_cast<uint64_t>(handle);
  else
    return reinterpret_cast<uint64_t>(handle);
}
template <typename ApiHandle> ApiHandle toApiHandle(uint64_t value) { return reinterpret_cast<ApiHandle>(value); }

// The one table of T's handles (never destroyed: handles are looked up during process exit).
template <typename T> HandleTable<T>& handleTable() {
  static auto* table = new HandleTable<T>;
  return *table;
}

// The live T behind an API handle (CUevent, CUgraph, ..., or a handle's integer value), or the error the entry
// point answers for a NULL, stale, wrong-kind or garbage handle: `invalid`. Which code each entry point answers is
// the real driver's (conformance records them): most say CUDA_ERROR_INVALID_HANDLE, the graph, memory-pool and
// texture-object entries CUDA_ERROR_INVALID_VALUE, contexts CUDA_ERROR_INVALID_CONTEXT. Entry points that answer
// NULL with another code than a stale handle test NULL first (or through entries.def's before-init policies).
template <typename T, typename ApiHandle>
Expected<std::shared_ptr<T>> lookup(ApiHandle handle, CUresult invalid = CUDA_ERROR_INVALID_HANDLE) {
  if (auto object = handleTable<T>().find(handleValue(handle))) return object;
  return makeError(invalid,
                   std::string(handleValue(handle) ? "not a live " : "NULL ") + handleKindName(T::kKind) + " handle");
}

}  // namespace cuemu

// In a function returning CUresult: declares `std::shared_ptr<T> var`, the live object behind the handle, or
// returns the error code of lookup<T>(handle, codes...).
#define CUEMU_LOOKUP(var, T, ...)                      \
  auto var##_lookup = ::cuemu::lookup<T>(__VA_ARGS__); \
  if (!var##_lookup) return var##_lookup.error().code; \
  std::shared_ptr<T> var = std::move(*var##_lookup)
