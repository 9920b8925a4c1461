// Shared by the memory entry points (emu/impl/memory_*.cpp): stream ordering of memory operations.
#pragma once

#include "api/cuda_internal.h"
#include "core/context.h"
#include "core/stream.h"

#include <memory>

namespace cuemu::memops {

// Runs `work` in order on `stream` and returns once it has run (synchronous copies and sets, and
// asynchronous ones that touch pageable host memory, which the application may reuse on return).
// While the stream captures, both add a graph node of type `capturedAs` instead.
CUresult runAndWait(Context& context, CUstream stream, StreamWork work,
                    CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY);

// Runs `work` in order on `stream`; returns once it is queued.
inline CUresult runAsync(Context& context, CUstream stream, StreamWork work,
                         CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY) {
  return enqueueOnStream(context, stream, std::move(work), capturedAs);
}

// Frees of memory wait for the work of the owning context first, as the driver's do: work in flight may
// still read or write it.
void drainOwner(uint64_t address);

// The current context, or the error the API returns without one.
#define CUEMU_REQUIRE_CONTEXT(var)                         \
  auto var##_expected = ::cuemu::requireCurrentContext();  \
  if (!var##_expected) return var##_expected.error().code; \
  ::cuemu::Context& var = **var##_expected

}  // namespace cuemu::memops
