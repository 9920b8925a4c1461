// Per-context streams and the ordering of asynchronous work. (The streams area fills this in.)
#pragma once

#include "api/cuda_internal.h"

#include <functional>

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

// Work submitted to a stream: runs after everything submitted to that stream before it (and, for the legacy
// default stream, after all blocking streams' work). Returns the CUresult to record (a failure sticks to the
// context only if `sticky` says so).
using StreamWork = std::function<CUresult()>;

// Enqueues `work` on `stream` of the current context (0 / CU_STREAM_LEGACY / CU_STREAM_PER_THREAD accepted).
// Validates the stream handle (CUDA_ERROR_INVALID_HANDLE) and that it belongs to `context`
// (CUDA_ERROR_INVALID_CONTEXT). Until the stream engine lands this runs `work` synchronously.
CUresult enqueueOnStream(Context& context, CUstream stream, StreamWork work);

}  // namespace cuemu
