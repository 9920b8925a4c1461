#include "core/device_heap.h"

#include "core/checkers.h"

#include "core/context.h"
#include "core/memory.h"

#include <iterator>
#include <unordered_map>

namespace cuemu {

DeviceHeap& DeviceHeap::of(Context& context) {
  static std::mutex registryMutex;
  static auto* registry = new std::unordered_map<unsigned long long, std::unique_ptr<DeviceHeap>>;
  std::lock_guard lock(registryMutex);
  auto found = registry->find(context.id());
  if (found != registry->end()) return *found->second;
  // drop the heaps of destroyed contexts (their memory went with the context)
  for (auto it = registry->begin(); it != registry->end();) {
    bool dead;
    {
      std::lock_guard heapLock(it->second->mutex_);
      dead = it->second->created_ && it->second->region_.expired();
    }
    if (dead)
      it = registry->erase(it);
    else
      ++it;
  }
  auto& fresh = (*registry)[context.id()];
  fresh = std::make_unique<DeviceHeap>();
  return *fresh;
}

uint64_t DeviceHeap::allocate(Context& context, uint64_t size) {
  std::lock_guard lock(mutex_);
  if (region_.expired()) {
    if (failed_ || created_) return 0;  // no heap memory, or the context's memory is gone
    size_t bytes = 0;
    context.limit(CU_LIMIT_MALLOC_HEAP_SIZE, bytes);
    auto region = context.memory().allocateDevice(bytes ? bytes : 1);
    if (!region) {
      failed_ = true;
      return 0;
    }
    region_ = *region;
    created_ = true;
    free_.clear();
    free_[(*region)->start] = (*region)->size & ~uint64_t(15);
  }
  uint64_t need = (size + 15) & ~uint64_t(15);
  if (need < size) return 0;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    uint64_t start = it->first, rest = it->second - need;
    free_.erase(it);
    if (rest) free_[start + need] = rest;
    used_[start] = need;
    if (checkers::on()) [[unlikely]]
      checkers::heapAllocated(start, size);
    return start;
  }
  return 0;
}

void DeviceHeap::release(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto u = used_.find(address);
  if (u == used_.end()) return;
  if (checkers::on()) [[unlikely]]
    checkers::heapFreed(address);
  uint64_t start = u->first, bytes = u->second;
  used_.erase(u);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += bytes;
      return;
    }
  }
  free_[start] = bytes;
}

}  // namespace cuemu
