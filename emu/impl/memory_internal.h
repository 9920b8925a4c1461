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

// Handle types memory may be created with: POSIX file descriptors, and fabric handles, which driver 580 on an H100
// advertises (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED) and accepts at creation but refuses to export with
// CUDA_ERROR_NOT_PERMITTED without an IMEX channel (tools/gpu-probe/results/clients17c-h100-2026-11-26.txt). A
// software device never has an IMEX channel, so its fabric exports and imports are never permitted.
inline constexpr unsigned kCreatableHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;

// The current context, or the error the API returns without one.
#define CUEMU_REQUIRE_CONTEXT(var)                         \
  auto var##_expected = ::cuemu::requireCurrentContext();  \
  if (!var##_expected) return var##_expected.error().code; \
  ::cuemu::Context& var = **var##_expected

}  // namespace cuemu::memops
