// CUDA dynamic parallelism (CDP2): the driver's half of the device runtime. The interpreter implements the
// device runtime's entry points (ptx-interp: exec/device_runtime.cpp) and asks the HostServices of the running
// grid for launches, streams, events and device properties; GridRuntime answers them for one grid.
//
// Execution model. A grid launched from a kernel (a child) never runs while its parent grid runs: the parent's
// launches are recorded, and once every CTA of the parent has finished, the launching thread (the stream's
// worker, not a thread of the interpreter's pool) runs them one after the other, each with its own work after
// it, depth first (launch.cpp: runGridTree, a loop, not a recursion: nesting may go thousands deep). This is one
// of the schedules CDP2 allows (there is no device-side synchronisation, so no CTA may wait for a child) and it
// cannot deadlock the fixed pool, in deterministic mode neither:
//  - grids launched into the block's NULL stream or a device stream run in launch order, which keeps every
//    stream's order and satisfies every event; memcpy/memset from a kernel are ordered with them;
//  - fire-and-forget grids run in the same order (nothing may depend on when they run);
//  - tail launches run after the parent and all its other work, in the order they were made, at the parent's
//    nesting depth (on an H100 a grid that tail-launches itself 40 times in a row runs 40 times);
//  - graphs launched from a kernel (cudaGraphLaunch into cudaStreamGraphTailLaunch, ...FireAndForget or
//    ...FireAndForgetAsSibling) run as tail launches or fire-and-forget grids do, their nodes one after the other;
//  - the parent's work item (what the host synchronises with) is complete only when all of it has run.
// The price: a parent that spins until its child has written something never finishes (on a GPU it usually
// does, without a promise); in deterministic mode cuemu says so after 5 s (HostServices::deterministicStall).
// cuemu keeps at most kMaxRecordedWork launches and copies of one grid (a kernel that launches without end
// would otherwise exhaust the host's memory); past that, launches fail with cudaErrorLaunchPendingCountExceeded.
// Limits, as measured on an H100 (driver 580): there is no nesting limit of its own (a chain of nested launches
// reaches depth 2048), but every grid of such a chain is incomplete while its descendants run, and
// cudaLimitDevRuntimePendingLaunchCount (default 2048) bounds the incomplete launches: the launch from depth
// 2048 fails with cudaErrorLaunchPendingCountExceeded. cuemu counts the incomplete ancestors of the launching
// grid, itself included; siblings it launched earlier do not count, because on a GPU they run (and complete)
// while their parent still launches: one thread's 3000 launches under a limit of 64 all succeed there.
#pragma once

#include "api/cuda_internal.h"

#include <ptx/exec.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace cuemu {

class Context;
struct MemoryRegion;

inline constexpr size_t kMaxRecordedWork = size_t(1) << 20;

// What cudaRuntimeGetVersion answers in a kernel: the device runtime's own version, not the toolkit's (measured on
// an H100 with CUDA 13.0's libcudadevrt).
inline constexpr int32_t kDeviceRuntimeVersion = 6000;

// One piece of work a kernel asked for: a grid, or a copy / fill ordered with the grids of its stream.
struct DeviceWork {
  enum class Kind { Grid, Copy, Fill, Graph } kind = Kind::Grid;
  enum class Order { Stream, TailLaunch, FireAndForget } order = Order::Stream;
  // Grid
  int kernel = -1;
  ptx::exec::Dim3 grid, block;
  uint32_t sharedBytes = 0;
  std::vector<uint8_t> params;
  // Copy / Fill
  uint64_t dst = 0, src = 0, bytes = 0;
  uint8_t value = 0;
  // Graph: the executable graph's handle (instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
  uint64_t graphExec = 0;
};

// Runs a copy or fill a kernel asked for (CUDA_ERROR_ILLEGAL_ADDRESS when the memory went away meanwhile).
CUresult runDeviceCopy(const DeviceWork& work);
// Runs the executable graph a kernel launched, on the calling thread (its nodes in order; the stream's worker
// runs the grid tree the launch belongs to). A graph destroyed meanwhile runs nothing.
CUresult runDeviceGraph(const DeviceWork& work);

// cudaGetErrorName (`name`) / cudaGetErrorString called in a kernel: the device address of the text the device
// runtime gives for `error` (as recorded on an H100), in a copy of all texts kept in the context's device memory;
// 0 when that memory cannot be had.
uint64_t deviceErrorText(Context& context, int32_t error, bool name);

class GridRuntime {
 public:
  // `depth`: the grid's incomplete device-launched ancestors, itself included (0 for a grid the host launched);
  // `pendingLimit`: cudaLimitDevRuntimePendingLaunchCount when the host launched the tree.
  GridRuntime(Context& context, const ptx::exec::Program& program, unsigned depth, uint64_t pendingLimit);
  GridRuntime(const GridRuntime&) = delete;
  GridRuntime& operator=(const GridRuntime&) = delete;

  unsigned depth() const { return depth_; }

  // HostServices::device* for the grid (results are cudaError_t values).
  uint64_t parameterBuffer(const ptx::exec::DeviceLaunchConfig& config, uint32_t bytes, uint32_t align, int32_t& error);
  int32_t launch(uint64_t buffer, uint64_t stream, const ptx::exec::DeviceLaunchConfig* config);
  int32_t streamCreate(uint32_t flags, uint64_t& stream);
  int32_t streamDestroy(uint64_t stream);
  int32_t eventCreate(uint32_t flags, uint64_t& event);
  int32_t eventRecord(uint64_t event, uint64_t stream);
  int32_t streamWaitEvent(uint64_t stream, uint64_t event, uint32_t flags);
  int32_t eventDestroy(uint64_t event);
  int32_t memcpyAsync(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t kind, uint64_t stream);
  int32_t memsetAsync(uint64_t dst, uint32_t value, uint64_t bytes, uint64_t stream);
  int32_t graphLaunch(uint64_t graphExec, uint64_t stream);
  int32_t attribute(int32_t attribute, int32_t device, int32_t& value);
  int32_t limit(int32_t limit, uint64_t& value);
  int32_t ordinal(int32_t& device);

  // Grids launched so far (and not yet taken by takeWork).
  size_t launchedGrids();

  // After the grid has finished: the work it asked for, in the order it is to run (tail launches last). The
  // parameter buffers are released: launches copied their arguments.
  std::vector<DeviceWork> takeWork();

 private:
  struct Buffer {
    ptx::exec::DeviceLaunchConfig config;
    uint32_t bytes = 0;
  };
  // Orders a launch may go into; 0 on an unknown stream handle.
  bool orderOf(uint64_t stream, DeviceWork::Order& order) const;
  uint64_t allocateBuffer(uint32_t bytes, uint32_t align);
  void enqueue(DeviceWork work);

  Context& context_;
  const ptx::exec::Program& program_;
  unsigned depth_;
  uint64_t pendingLimit_;
  std::mutex mutex_;
  std::vector<DeviceWork> work_;
  std::map<uint64_t, Buffer> buffers_;  // handed out, not launched yet
  std::vector<std::shared_ptr<const MemoryRegion>> chunks_;
  uint64_t chunkUsed_ = 0;
  std::set<uint64_t> streams_, events_;
};

}  // namespace cuemu
