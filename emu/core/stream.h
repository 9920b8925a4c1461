// Per-context streams and events. Filled in by the streams area.
#pragma once

namespace cuemu {

class Context;

class ContextStreams {
 public:
  explicit ContextStreams(Context& context) : context_(context) {}
  // Releases everything this part owns; called once when the context is destroyed or reset.
  void teardown() {}

 private:
  [[maybe_unused]] Context& context_;
};

}  // namespace cuemu
