// Per-context device memory (owned allocations). Filled in by the memory area.
#pragma once

namespace cuemu {

class Context;

class ContextMemory {
 public:
  explicit ContextMemory(Context& context) : context_(context) {}
  // Releases everything this part owns; called once when the context is destroyed or reset.
  void teardown() {}

 private:
  [[maybe_unused]] Context& context_;
};

}  // namespace cuemu
