// Per-context loaded modules. Filled in by the modules area.
#pragma once

namespace cuemu {

class Context;

class ContextModules {
 public:
  explicit ContextModules(Context& context) : context_(context) {}
  // Releases everything this part owns; called once when the context is destroyed or reset.
  void teardown() {}

 private:
  [[maybe_unused]] Context& context_;
};

}  // namespace cuemu
