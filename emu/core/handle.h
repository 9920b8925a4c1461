// Handles as the application sees them. A CUcontext, CUstream, CUmodule ... is not a pointer to our object
// but an encoded {kind, generation, slot} value, checked on every use: a stale handle (object destroyed), a
// handle of the wrong kind, or garbage yields an error instead of a crash. Objects are shared_ptr-owned so
// that work in flight keeps what it uses alive even if the application destroys it meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace cuemu {

enum class HandleKind : uint8_t {
  Context = 1, Module, Function, Stream, Event, Library, Kernel, LinkState, Array, MipmappedArray,
  MemPool, Graph, GraphNode, GraphExec, TexObject, SurfObject, UserObject, GreenContext, ExternalMemory,
  ExternalSemaphore, GraphicsResource, MemGenericAllocation, DevResourceDesc, LogsCallback, Count
};

const char* handleKindName(HandleKind kind);

// Layout of a handle value: bits 0-23 slot, 24-39 generation, 40-47 kind, 48-63 a fixed tag.
// The tag makes handles recognisable in traces and keeps them far from small values such as
// CU_STREAM_LEGACY (0x1) and CU_STREAM_PER_THREAD (0x2).
struct HandleBits {
  static constexpr uint64_t kTag = 0xC0DEull << 48;
  static constexpr uint64_t kTagMask = 0xFFFFull << 48;
  static uint64_t encode(HandleKind kind, uint32_t slot, uint16_t generation) {
    return kTag | (uint64_t(kind) << 40) | (uint64_t(generation) << 24) | slot;
  }
  static bool isHandle(uint64_t value) { return (value & kTagMask) == kTag; }
  static HandleKind kind(uint64_t value) { return HandleKind((value >> 40) & 0xFF); }
  static uint32_t slot(uint64_t value) { return value & 0xFFFFFF; }
  static uint16_t generation(uint64_t value) { return (value >> 24) & 0xFFFF; }
};

// One table per object type. T must expose `static constexpr HandleKind kKind`.
template <typename T>
class HandleTable {
 public:
  // Registers the object and returns its handle value.
  uint64_t insert(std::shared_ptr<T> object) {
    std::unique_lock lock(mutex_);
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
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
    ++s.generation;  // a later object in this slot gets a different handle
    free_.push_back(slot);
    return object;
  }

  template <typename Fn>
  void forEach(Fn&& fn) const {
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
  std::vector<uint32_t> free_;
};

// The handle type the API uses for T (CUcontext for Context, ...), converted both ways by one template.
template <typename ApiHandle>
uint64_t handleValue(ApiHandle handle) {
  return reinterpret_cast<uint64_t>(handle);
}
template <typename ApiHandle>
ApiHandle toApiHandle(uint64_t value) {
  return reinterpret_cast<ApiHandle>(value);
}

}  // namespace cuemu
