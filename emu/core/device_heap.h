// The device-side heap of a context (kernels' `malloc`/`free`): one device allocation of
// CU_LIMIT_MALLOC_HEAP_SIZE bytes, made at the first malloc and freed with the context's memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace cuemu {

class Context;
struct MemoryRegion;

class DeviceHeap {
 public:
  // The heap of the context (created on first use; a context reset starts a new one).
  static DeviceHeap& of(Context& context);

  // 16-byte aligned block of `size` bytes, or 0 when the heap is exhausted (or cannot be allocated).
  uint64_t allocate(Context& context, uint64_t size);
  // Frees a block returned by allocate; other addresses are ignored, as the GPU does.
  void release(uint64_t address);

 private:
  std::mutex mutex_;
  std::weak_ptr<MemoryRegion> region_;
  bool failed_ = false;
  bool created_ = false;
  std::map<uint64_t, uint64_t> free_;  // start -> bytes, coalesced
  std::map<uint64_t, uint64_t> used_;  // start -> bytes
};

}  // namespace cuemu
