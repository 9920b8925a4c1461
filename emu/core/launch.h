// A kernel launch: validated on the calling thread (errors there do not stick), executed in stream order by
// the PTX interpreter; a fault while running sticks to the context with the real driver's code.
#pragma once

#include "api/cuda_internal.h"
#include "core/module.h"
#include "core/result.h"
#include "core/stream.h"

#include <ptx/exec.h>

#include <memory>
#include <optional>
#include <vector>

namespace cuemu {

class Context;
class Device;
class Stream;
struct MemoryRegion;
class TextureObjectsView;

struct LaunchRequest {
  std::shared_ptr<Function> function;
  ptx::exec::Dim3 grid, block;
  unsigned dynamicSharedBytes = 0;
  std::vector<uint8_t> params;
  bool cooperative = false;
  ptx::exec::Dim3 cluster{0, 0, 0};  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; {0,0,0}: not given
};

// Packs kernel arguments given either way the API accepts (kernelParams or the `extra` buffer).
Expected<std::vector<uint8_t>> packKernelParams(const ptx::exec::KernelInfo& info, void** kernelParams, void** extra);
// Checks a launch against its context and the device's limits (errors here never stick).
CUresult validateLaunch(Context& context, const LaunchRequest& request);
// Validates, then runs the launch in stream order (or adds a kernel node when the stream captures).
CUresult submitLaunch(Stream& stream, LaunchRequest request);
// The stream work of a validated launch (also what graph kernel nodes run). `textures`: the texture and surface
// objects as they were when the launch was queued (core/texture.h); null: those live when it runs.
// `conditionals`: the conditional handles the kernel may set (a graph kernel node's executable graph's; null: none).
StreamWork launchWork(Context& context, LaunchRequest request,
                      std::shared_ptr<const TextureObjectsView> textures = nullptr,
                      std::shared_ptr<const std::vector<CUgraphConditionalHandle>> conditionals = nullptr);

// The launching-thread fast path: a launch into an idle stream runs its grid at once on the launching thread
// (enqueueWorkRunIfIdle) when the grid is small (at most inlineLaunchThreads() threads), not cooperative, and its
// kernel finishes on its own (KernelInfo::mayWaitForOtherWork is false: it cannot wait for the host or other work,
// so running it before the launch returns is a legal schedule). A launch then costs no thread hand-off.
bool runsOnLaunchingThread(const LaunchRequest& request);
// CUEMU_INLINE_LAUNCH_THREADS (default 8192; 0 switches the fast path off).
uint64_t inlineLaunchThreads();
void setInlineLaunchThreads(std::optional<uint64_t> threads);  // tests; nullopt: back to the variable's value

// The per-grid object cache: a grid resolves each texture and surface object it names once per host thread instead
// of once per lane. CUEMU_GRID_OBJECT_CACHE=0 switches it off.
bool gridObjectCacheOn();
void setGridObjectCache(bool on);  // tests

// The occupancy calculator: blocks of `blockSize` threads with `dynamicSharedBytes` that one SM holds at once.
// The most shared memory, static and dynamic, a launch of the function may have.
uint64_t sharedBytesLimit(const Function& function, const Device& device);
int maxActiveBlocksPerSm(const Function& function, const Device& device, int blockSize, size_t dynamicSharedBytes);

// Device memory the driver uses for its own purposes (grid-sync workspaces, device-launch parameter buffers),
// zeroed, valid for kernels until the last reference goes; null when the device has no memory left.
std::shared_ptr<const MemoryRegion> allocateDriverMemory(Context& context, uint64_t bytes);

// The CUresult the real driver reports for an interpreter fault.
CUresult faultResult(ptx::exec::FaultKind kind);

}  // namespace cuemu
