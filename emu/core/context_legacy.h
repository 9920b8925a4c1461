// Whether the calling thread's current context was made by the original cuCtxCreate (API version 3010). The
// entry-point layer asks on every call of a _v2 memory entry point, so the answer is one relaxed load while no
// such context exists.
#pragma once

#include <atomic>

namespace cuemu {

// Live contexts of API version 3010 (maintained by Context's constructor and destructor).
std::atomic<int>& legacyContextCount();

bool currentContextIsLegacyLookup();

inline bool currentContextIsLegacy() {
  return legacyContextCount().load(std::memory_order_relaxed) != 0 && currentContextIsLegacyLookup();
}

}  // namespace cuemu
