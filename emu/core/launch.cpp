#include "core/launch.h"

#include "core/checkers.h"
#include "core/config.h"
#include "core/context.h"
#include "core/device.h"
#include "core/device_runtime.h"
#include "core/graph.h"
#include "core/device_heap.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/stream.h"
#include "core/texture.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace cuemu {
namespace {

// The per-grid texture and surface object cache (resolveForGrid); -1: CUEMU_GRID_OBJECT_CACHE not read yet.
std::atomic<int> g_gridObjectCache{-1};

}  // namespace

void setGridObjectCache(bool on) { g_gridObjectCache.store(on, std::memory_order_relaxed); }

bool gridObjectCacheOn() {
  int state = g_gridObjectCache.load(std::memory_order_relaxed);
  if (state < 0) [[unlikely]] {
    const char* value = std::getenv("CUEMU_GRID_OBJECT_CACHE");
    state = !value || std::strcmp(value, "0") != 0;
    g_gridObjectCache.store(state, std::memory_order_relaxed);
  }
  return state;
}

namespace {

// The launching-thread fast path (runsOnLaunchingThread): the largest grid, in threads, it takes by default.
constexpr uint64_t kDefaultInlineLaunchThreads = 8192;
// setInlineLaunchThreads's value (tests), else CUEMU_INLINE_LAUNCH_THREADS.
constexpr uint64_t kNoOverride = ~uint64_t(0);
std::atomic<uint64_t> g_inlineLaunchThreads{kNoOverride};

// Global-memory checks for the interpreter, one per grid: the address space's O(1) table, read inline by the
// interpreter; adjacent VMM mappings through the region map; registered host memory through the ranges taken
// when the grid started (RegisteredHostSnapshot).
class DeviceMemoryValidator final : public ptx::exec::MemoryValidator {
 public:
  DeviceMemoryValidator() {
    const AddressSpace& space = AddressSpace::instance();
    if (space.limit()) {
      base = space.base();
      end = space.base() + space.limit();
      pageShift = AddressSpace::kChunkShift;
      validBytes = space.accessTable();
    }
  }
  bool checkSlow(uint64_t address, uint64_t size, bool write) const override {
    // Registered host memory (never inside the device ranges): a store into memory registered read-only faults,
    // as on the GPU; memory the application unmapped faults too (a GPU would still reach the pinned pages; the
    // host would crash).
    switch (registered_.check(address, size, write)) {
      case RegisteredHostSnapshot::Verdict::Allowed: return true;
      case RegisteredHostSnapshot::Verdict::Refused: return false;
      case RegisteredHostSnapshot::Verdict::CheckPages:
      case RegisteredHostSnapshot::Verdict::Outside: break;  // also device memory, and memory registered since
    }
    const AddressSpace& space = AddressSpace::instance();
    if (!space.isAccessible(address, size)) return false;
    if (space.isDeviceAddress(address)) return true;
    RegionPtr region = space.find(address);
    return !region || registeredHostUsable(*region, address, size, write);
  }

 private:
  RegisteredHostSnapshot registered_;
};

// The texture and surface objects a grid's fetches name, resolved once per host thread and object instead of once
// per lane (the handle table's lock and reference count cost more than a fetch): each host thread keeps a few
// (grid, handle) -> object entries; the grid's ObjectPins keep those objects alive until the grid ends, so an
// entry of a finished grid (another serial) is never used.
std::atomic<uint64_t> g_gridSerial{1};

template <class Object> class ObjectPins {
 public:
  template <class Resolve> std::shared_ptr<const Object> pin(uint64_t handle, const Resolve& resolve) {
    std::lock_guard lock(mutex_);
    auto found = pinned_.find(handle);
    if (found != pinned_.end()) return found->second;
    std::shared_ptr<const Object> object = resolve(handle);
    if (object) pinned_.emplace(handle, object);
    return object;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<const Object>> pinned_;
};

// A live texture or surface object, or null.
template <class Object> std::shared_ptr<const Object> liveObject(uint64_t handle) {
  auto live = lookup<Object>(handle);
  return live ? std::shared_ptr<const Object>(*live) : nullptr;
}

template <class Object> struct ObjectCache {
  static constexpr unsigned kEntries = 4;
  struct Entry {
    uint64_t grid = 0, handle = 0;
    const Object* object = nullptr;
  };
  Entry entries[kEntries];
  unsigned next = 0;

  const Object* find(uint64_t grid, uint64_t handle) const {
    for (const Entry& e : entries)
      if (e.grid == grid && e.handle == handle) return e.object;
    return nullptr;
  }
  void add(uint64_t grid, uint64_t handle, const Object* object) {
    entries[next] = Entry{grid, handle, object};
    next = (next + 1) % kEntries;
  }
};

template <class Object, class Resolve>
const Object* resolveForGrid(ObjectPins<Object>& pins, const Resolve& resolve, uint64_t grid, uint64_t handle) {
  thread_local ObjectCache<Object> cache;
  if (!gridObjectCacheOn()) return nullptr;
  if (const Object* object = cache.find(grid, handle)) return object;
  auto object = pins.pin(handle, resolve);
  if (object) cache.add(grid, handle, object.get());
  return object.get();
}

class ContextHostServices final : public ptx::exec::HostServices {
 public:
  ContextHostServices(Context& context, GridRuntime& runtime, const TextureObjectsView* textures,
                      const ConditionalHandles* conditionals)
      : context_(context), runtime_(runtime), textures_(textures), conditionals_(conditionals) {}
  bool devicePrintf(std::string_view text) override {
    context_.modules().appendPrintf(text);
    return true;
  }
  // The interpreter's tex/tld4 (a warp at a time; the per-lane textureFetch is not used): the lanes through one
  // object are fetched together, the object resolved and its sampler prepared once.
  bool textureFetchWarp(const ptx::exec::TextureWarpRequest& request, int& faultLane, std::string& error) override {
    auto resolve = [this](uint64_t handle) {
      return textures_ ? textures_->texture(handle) : liveObject<TexObject>(handle);
    };
    for (uint32_t left = request.lanes; left;) {
      int first = std::countr_zero(left);
      uint64_t handle = request.handles[first];
      uint32_t same = 0;
      for (uint32_t m = left; m; m &= m - 1) {
        int lane = std::countr_zero(m);
        same |= uint32_t(request.handles[lane] == handle) << lane;
      }
      left &= ~same;
      std::shared_ptr<const TexObject> held;
      const TexObject* object = resolveForGrid(texturePins_, resolve, serial_, handle);
      if (!object) {
        held = resolve(handle);
        object = held.get();
      }
      if (!object) {
        faultLane = first;
        error = fmt::format("{:#x} is not a texture object", handle);
        return false;
      }
      if (!object->fetchLanes(request, same, faultLane, error)) return false;
    }
    return true;
  }
  bool surfaceAccess(const ptx::exec::SurfaceRequest& request, void* data, std::string& error) override {
    auto resolve = [this](uint64_t handle) {
      return textures_ ? textures_->surface(handle) : liveObject<SurfObject>(handle);
    };
    if (const SurfObject* cached = resolveForGrid(surfacePins_, resolve, serial_, request.handle))
      return cached->access(request, data, error);
    auto object = resolve(request.handle);
    if (!object) {
      error = fmt::format("{:#x} is not a surface object", request.handle);
      return false;
    }
    return object->access(request, data, error);
  }
  uint64_t deviceMalloc(uint64_t size) override { return DeviceHeap::of(context_).allocate(context_, size); }
  void deviceFree(uint64_t address) override { DeviceHeap::of(context_).release(address); }
  bool setGraphConditional(uint64_t handle, uint32_t value) override {
    return setConditionalValue(conditionals_, handle, value);
  }
  void deterministicStall(std::string_view kernel, unsigned seconds) override {
    if (size_t children = runtime_.launchedGrids()) {
      CUEMU_WARN(
          "kernel '{}' has waited {} s for memory without progress, and it launched {} child grid(s) from "
          "the device: on cuemu a child grid runs only after its parent grid has finished (CUDA dynamic "
          "parallelism does not promise that a parent sees its children's work before then either), so a "
          "parent waiting for its children never finishes.",
          kernel, seconds, children);
      return;
    }
    CUEMU_WARN(
        "deterministic mode: every CTA of kernel '{}' has waited {} s for memory without progress; work "
        "runs in program order on one thread, so a kernel waiting for work queued after it (another "
        "stream's kernel, copy or host function) never finishes. Run without CUEMU_DETERMINISTIC (or "
        "cuemuSetDeterministic(0)) to let such work run concurrently.",
        kernel, seconds);
  }

  // CUDA dynamic parallelism (core/device_runtime.h).
  uint64_t deviceParameterBuffer(const ptx::exec::DeviceLaunchConfig& config, uint32_t bytes, uint32_t align,
                                 int32_t& error) override {
    return runtime_.parameterBuffer(config, bytes, align, error);
  }
  int32_t deviceLaunch(uint64_t buffer, uint64_t stream, const ptx::exec::DeviceLaunchConfig* config,
                       const ptx::exec::DeviceCaller&) override {
    return runtime_.launch(buffer, stream, config);
  }
  int32_t deviceStreamCreate(uint32_t flags, uint64_t& stream) override { return runtime_.streamCreate(flags, stream); }
  int32_t deviceStreamDestroy(uint64_t stream) override { return runtime_.streamDestroy(stream); }
  int32_t deviceEventCreate(uint32_t flags, uint64_t& event) override { return runtime_.eventCreate(flags, event); }
  int32_t deviceEventRecord(uint64_t event, uint64_t stream, uint32_t) override {
    return runtime_.eventRecord(event, stream);
  }
  int32_t deviceStreamWaitEvent(uint64_t stream, uint64_t event, uint32_t flags) override {
    return runtime_.streamWaitEvent(stream, event, flags);
  }
  int32_t deviceEventDestroy(uint64_t event) override { return runtime_.eventDestroy(event); }
  int32_t deviceMemcpyAsync(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t kind, uint64_t stream,
                            const ptx::exec::DeviceCaller&) override {
    return runtime_.memcpyAsync(dst, src, bytes, kind, stream);
  }
  int32_t deviceMemsetAsync(uint64_t dst, uint32_t value, uint64_t bytes, uint64_t stream,
                            const ptx::exec::DeviceCaller&) override {
    return runtime_.memsetAsync(dst, value, bytes, stream);
  }
  int32_t deviceGraphLaunch(uint64_t graphExec, uint64_t stream, const ptx::exec::DeviceCaller&) override {
    return runtime_.graphLaunch(graphExec, stream);
  }
  int32_t deviceOrdinal(int32_t& device) override { return runtime_.ordinal(device); }
  int32_t deviceCount(int32_t& count) override {
    count = int32_t(devices().size());
    return 0;
  }
  int32_t deviceAttribute(int32_t attribute, int32_t device, int32_t& value) override {
    return runtime_.attribute(attribute, device, value);
  }
  int32_t deviceLimit(int32_t limit, uint64_t& value) override { return runtime_.limit(limit, value); }
  int32_t runtimeVersion(int32_t& version) override {
    version = kDeviceRuntimeVersion;
    return 0;
  }
  uint64_t deviceErrorText(int32_t error, bool name) override { return cuemu::deviceErrorText(context_, error, name); }

 private:
  Context& context_;
  GridRuntime& runtime_;
  const TextureObjectsView* textures_;      // null: only live objects
  const ConditionalHandles* conditionals_;  // null: the grid may set none
  const uint64_t serial_ = g_gridSerial.fetch_add(1, std::memory_order_relaxed);
  ObjectPins<TexObject> texturePins_;
  ObjectPins<SurfObject> surfacePins_;
};

ptx::exec::ExecConfig execConfig(const Device& device) {
  ptx::exec::ExecConfig config;
  if (const char* threads = std::getenv("CUEMU_THREADS")) config.threads = unsigned(std::atoi(threads));
  config.deterministic = deterministicMode();
  if (const char* seed = std::getenv("CUEMU_SCHEDULE_SEED")) config.scheduleSeed = std::strtoull(seed, nullptr, 0);
  config.smCount = unsigned(device.profile().smCount);
  config.timeoutMs = kernelTimeoutMs();
  static const bool timeWaitsYield = [] {
    const char* value = std::getenv("CUEMU_TIME_WAITS_YIELD");
    return !value || std::strcmp(value, "0") != 0;
  }();
  config.timeWaitsYield = timeWaitsYield;
  static const bool idleThreadsSleep = [] {
    const char* value = std::getenv("CUEMU_IDLE_THREADS_SLEEP");
    return !value || std::strcmp(value, "0") != 0;
  }();
  config.idleThreadsSleep = idleThreadsSleep;
  return config;
}

int attribute(const Device& device, CUdevice_attribute a, int fallback) {
  int v = 0;
  return device.attribute(a, v) == CUDA_SUCCESS ? v : fallback;
}

bool sameShape(const ptx::exec::Dim3& a, const ptx::exec::Dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

// What a launch runs: the grid and block in CTAs and threads, and the cluster shape ({0,0,0}: clusters of one CTA).
struct LaunchShape {
  ptx::exec::Dim3 grid, block, cluster{0, 0, 0};
};

// The shape of a launch as driver 580 takes it (tools/gpu-probe/results/clusters18-h100-2026-11-26.txt,
// blockclusters26-h100-2026-11-26.txt). The cluster shape is the launch attribute's, else the function's required
// one (.reqnctapercluster, or cuFuncSetAttribute's REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH, which refuses every launch
// until all three are set), else none, which a .explicitcluster kernel refuses. A .blocksareclusters kernel
// (__block_size__) counts its grid in clusters of its .reqnctapercluster and its block must be .reqntid or 1.
CUresult launchShape(const LaunchRequest& r, LaunchShape& shape) {
  using ptx::exec::Dim3;
  const Function& f = *r.function;
  const auto& info = f.info();
  shape.grid = r.grid;
  shape.block = r.block;
  const Dim3 required{uint32_t(f.requiredClusterWidth.load()), uint32_t(f.requiredClusterHeight.load()),
                      uint32_t(f.requiredClusterDepth.load())};
  const bool requiresShape = required.x || required.y || required.z;
  if (requiresShape && (!required.x || !required.y || !required.z)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  const bool given = r.cluster.x || r.cluster.y || r.cluster.z;
  if (given && requiresShape && !sameShape(r.cluster, required)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (info.blocksareclusters) {
    if (!sameShape(r.block, info.reqntid) && !sameShape(r.block, Dim3{1, 1, 1})) return CUDA_ERROR_INVALID_VALUE;
    const auto& c = info.reqnctapercluster;
    const uint64_t x = uint64_t(r.grid.x) * c.x, y = uint64_t(r.grid.y) * c.y, z = uint64_t(r.grid.z) * c.z;
    if (x > 0x7FFFFFFFu || y > 65535 || z > 65535) return CUDA_ERROR_INVALID_VALUE;
    shape.grid = Dim3{uint32_t(x), uint32_t(y), uint32_t(z)};
    shape.block = info.reqntid;
  }
  if (given)
    shape.cluster = r.cluster;
  else if (requiresShape)
    shape.cluster = required;
  else if (info.explicitcluster)
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  const Dim3& c = shape.cluster;
  if (c.x) {
    const uint64_t size = c.count();
    if (size >
        uint64_t(f.nonPortableClusterAllowed.load() ? limits::kNonPortableClusterSize : limits::kPortableClusterSize))
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (info.maxclusterrank && size > info.maxclusterrank) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (shape.grid.x % c.x || shape.grid.y % c.y || shape.grid.z % c.z) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  return CUDA_SUCCESS;
}

CUresult validate(const LaunchRequest& r, const Device& device) {
  const auto& info = r.function->info();
  if (!r.grid.x || !r.grid.y || !r.grid.z || !r.block.x || !r.block.y || !r.block.z) return CUDA_ERROR_INVALID_VALUE;
  LaunchShape shape;
  if (CUresult refused = launchShape(r, shape)) return refused;
  const auto& g = shape.grid;
  const auto& b = shape.block;
  if (g.x > 0x7FFFFFFFu || g.y > 65535 || g.z > 65535) return CUDA_ERROR_INVALID_VALUE;
  if (b.x > 1024 || b.y > 1024 || b.z > 64) return CUDA_ERROR_INVALID_VALUE;
  if (b.count() > r.function->maxThreadsPerBlock()) return CUDA_ERROR_INVALID_VALUE;
  // A block shape other than .reqntid's is refused by the launch itself (driver 580); the context stays usable.
  if (info.reqntid.x && (b.x != info.reqntid.x || b.y != info.reqntid.y || b.z != info.reqntid.z))
    return CUDA_ERROR_INVALID_VALUE;
  if (info.staticSharedBytes + uint64_t(r.dynamicSharedBytes) > sharedBytesLimit(*r.function, device))
    return CUDA_ERROR_INVALID_VALUE;
  // A cooperative grid must be co-resident, as the occupancy calculator counts it.
  if (r.cooperative &&
      g.count() > uint64_t(maxActiveBlocksPerSm(*r.function, device, int(b.count()), r.dynamicSharedBytes)) *
                      uint64_t(attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1)))
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  return CUDA_SUCCESS;
}

// The grid-sync workspace of a cooperative launch (cooperative groups' `grid_workspace {wsSize, barrier}`):
// zeroed device memory of the context, taken when the launch runs and returned when it is done.
constexpr uint64_t kGridWorkspaceBytes = 256;

std::shared_ptr<const MemoryRegion> allocateGridWorkspace(Context& context) {
  auto region = allocateDriverMemory(context, kGridWorkspaceBytes);
  if (!region) return nullptr;
  uint32_t header[2] = {uint32_t(kGridWorkspaceBytes), 0};  // fresh memory is zero: only wsSize to write
  std::memcpy(reinterpret_cast<void*>(region->start), header, sizeof header);
  return region;
}

// The context's kept grid-sync workspace lives in its context-local storage (released at teardown).
char gridWorkspaceKey;

void keepGridWorkspace(Context& context, const std::shared_ptr<const MemoryRegion>& workspace) {
  static std::mutex keeping;  // two first cooperative launches at once: one is kept
  std::lock_guard lock(keeping);
  void* value = nullptr;
  if (context.storageGet(&gridWorkspaceKey, value)) return;
  context.storagePut(
      &gridWorkspaceKey, new std::shared_ptr<const MemoryRegion>(workspace),
      [](CUcontext, void*, void* kept) { delete static_cast<std::shared_ptr<const MemoryRegion>*>(kept); });
}

std::shared_ptr<const MemoryRegion> keptGridWorkspace(Context& context) {
  void* value = nullptr;
  if (!context.storageGet(&gridWorkspaceKey, value) || !value) return nullptr;
  return *static_cast<std::shared_ptr<const MemoryRegion>*>(value);
}

struct GridLaunch {
  int kernel = -1;
  ptx::exec::Dim3 grid, block, cluster{0, 0, 0};
  unsigned dynamicSharedBytes = 0;
  const std::vector<uint8_t>* params = nullptr;
  bool cooperative = false;
  const TextureObjectsView* textures = nullptr;      // the launch's view (grids it launches from kernels share it)
  const ConditionalHandles* conditionals = nullptr;  // what cudaGraphSetConditional may set (children share it)
};

// Runs one grid with `runtime` answering its device runtime calls.
CUresult runGrid(Context& context, const Module& module, const ptx::exec::ExecConfig& config, const GridLaunch& g,
                 GridRuntime& runtime) {
  GridInFlight inFlight;  // memory released while it runs stays mapped until it ends (core/memory.h)
  // Each cooperative execution (a graph may replay the launch) gets its own grid-sync workspace. Driver 580 keeps
  // the workspace of a context's first cooperative launch and hands it to every later launch of the context,
  // cooperative or not (tools/gpu-probe/envreg17.cpp on an H100): a kernel launched plainly that syncs its grid
  // (CuPy's cupyx.jit `cg.sync(this_grid())`) then finds one, where before any cooperative launch it traps.
  std::shared_ptr<const MemoryRegion> workspace;
  if (g.cooperative) {
    workspace = allocateGridWorkspace(context);
    if (!workspace) return CUDA_ERROR_OUT_OF_MEMORY;
    keepGridWorkspace(context, workspace);
  } else {
    workspace = keptGridWorkspace(context);
  }
  ContextHostServices host(context, runtime, g.textures, g.conditionals);
  DeviceMemoryValidator memory;
  ptx::exec::LaunchParams params;
  params.grid = g.grid;
  params.block = g.block;
  params.dynamicSharedBytes = g.dynamicSharedBytes;
  params.params = g.params->data();
  params.paramBytes = g.params->size();
  params.globalAddresses = module.globalAddresses().data();
  params.memory = &memory;
  params.host = &host;
  params.config = config;
  params.cooperative = g.cooperative;
  params.cluster = g.cluster;
  if (workspace) {
    params.envRegs[1] = uint32_t(workspace->start >> 32);
    params.envRegs[2] = uint32_t(workspace->start);
  }
  auto watch =
      checkers::LaunchWatch::start(ptx::exec::declaredKernels(module.program())[size_t(g.kernel)].name, params);
  auto result = ptx::exec::launch(module.program(), g.kernel, params);
  CUresult code = faultResult(result.fault.kind);
  if (watch) [[unlikely]] {
    bool reported = false;
    code = watch->finish(result, module.program(), code, reported);
    if (reported || code == CUDA_SUCCESS) return code;
  }
  if (result.ok()) return CUDA_SUCCESS;
  if (result.fault.kind == ptx::exec::FaultKind::Timeout)
    CUEMU_ERROR("kernel fault ({}): {} (CUEMU_KERNEL_TIMEOUT); the error is sticky, as a GPU watchdog's",
                ptx::exec::faultKindName(result.fault.kind), result.fault.message);
  else if (result.fault.kind == ptx::exec::FaultKind::IllegalInstruction)
    // An instruction the interpreter does not execute: say which kernel of which binary (a library) needs it.
    CUEMU_ERROR("kernel fault ({}): kernel {} of {}: {}", ptx::exec::faultKindName(result.fault.kind),
                result.fault.kernel, module.image().name, result.fault.message);
  else
    CUEMU_ERROR("kernel fault ({}): {}", ptx::exec::faultKindName(result.fault.kind), result.fault.message);
  return code;
}

// Runs a grid the host launched and everything it and its descendants launch from kernels (core/device_runtime.h),
// depth first: a stack of the grids whose work has not all run yet.
CUresult runGridTree(Context& context, const Module& module, const ptx::exec::ExecConfig& config,
                     const GridLaunch& root) {
  size_t pendingLimit = 0;
  context.limit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, pendingLimit);
  struct Level {
    std::vector<DeviceWork> work;
    size_t next = 0;
    unsigned depth = 0;
  };
  std::vector<Level> levels;
  auto run = [&](const GridLaunch& g, unsigned depth) {
    GridRuntime runtime(context, module.program(), depth, pendingLimit);
    CUresult result = runGrid(context, module, config, g, runtime);
    if (result == CUDA_SUCCESS) levels.push_back(Level{runtime.takeWork(), 0, depth});
    return result;
  };
  if (CUresult result = run(root, 0)) return result;
  while (!levels.empty()) {
    Level& level = levels.back();
    if (level.next == level.work.size()) {
      levels.pop_back();
      continue;
    }
    DeviceWork work = std::move(level.work[level.next++]);
    // A tail launch takes its parent's place in the chain of incomplete grids; other children are one deeper.
    unsigned depth = work.order == DeviceWork::Order::TailLaunch ? level.depth : level.depth + 1;
    CUresult result;
    if (work.kind == DeviceWork::Kind::Grid) {
      GridLaunch child;
      child.kernel = work.kernel;
      child.grid = work.grid;
      child.block = work.block;
      child.dynamicSharedBytes = work.sharedBytes;
      child.params = &work.params;
      child.textures = root.textures;
      child.conditionals = root.conditionals;
      result = run(child, depth);
    } else if (work.kind == DeviceWork::Kind::Graph) {
      result = runDeviceGraph(work);
    } else {
      result = runDeviceCopy(work);
    }
    if (result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

}  // namespace

std::shared_ptr<const MemoryRegion> allocateDriverMemory(Context& context, uint64_t bytes) {
  auto region = std::make_shared<MemoryRegion>();
  region->size = bytes;
  region->kind = MemoryKind::Device;
  region->device = context.device().ordinal();
  region->context = context.apiHandle();
  AddressSpace& space = AddressSpace::instance();
  auto allocated = space.allocate(region, alignUp(bytes, AddressSpace::pageSize()));
  if (!allocated) return nullptr;
  uint64_t start = region->start;
  // Context teardown may have released it already: release() then finds nothing.
  return std::shared_ptr<const MemoryRegion>(
      region.get(), [keep = region, start](const MemoryRegion*) { AddressSpace::instance().release(start); });
}

Expected<std::vector<uint8_t>> packKernelParams(const ptx::exec::KernelInfo& info, void** kernelParams, void** extra) {
  std::vector<uint8_t> buffer(info.paramBytes);
  if (kernelParams && extra) return makeError(CUDA_ERROR_INVALID_VALUE, "both kernelParams and extra given");
  if (extra) {
    const void* data = nullptr;
    const size_t* size = nullptr;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (i > 64) return makeError(CUDA_ERROR_INVALID_VALUE, "unterminated extra array");
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        data = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
        size = static_cast<const size_t*>(extra[i + 1]);
      else
        return makeError(CUDA_ERROR_INVALID_VALUE, "unknown entry in extra");
    }
    if (!data || !size) return makeError(CUDA_ERROR_INVALID_VALUE, "extra lacks the buffer or its size");
    if (*size < info.paramBytes) return makeError(CUDA_ERROR_INVALID_VALUE, "parameter buffer too small");
    std::memcpy(buffer.data(), data, info.paramBytes);
    return buffer;
  }
  if (!info.params.empty() && !kernelParams) return makeError(CUDA_ERROR_INVALID_VALUE, "kernel parameters missing");
  for (std::size_t i = 0; i < info.params.size(); ++i) {
    if (!kernelParams[i]) return makeError(CUDA_ERROR_INVALID_VALUE, "NULL kernel parameter pointer");
    std::memcpy(buffer.data() + info.params[i].offset, kernelParams[i], info.params[i].size);
  }
  return buffer;
}

uint64_t sharedBytesLimit(const Function& function, const Device& device) {
  const auto& info = function.info();
  // 48 KiB per block (the device's MAX_SHARED_MEMORY_PER_BLOCK) unless
  // cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) opted in to more.
  int maxDynamic = function.maxDynamicSharedBytes.load();
  uint64_t limit = uint64_t(attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152));
  if (maxDynamic >= 0) limit = std::max<uint64_t>(limit, uint64_t(maxDynamic) + info.staticSharedBytes);
  // Static shared memory alone may pass 48 KiB up to the opt-in maximum (49,156 static bytes launch on an H100,
  // driver 580; more fails the load, or wraps negative and fails the launch).
  uint64_t optin = uint64_t(attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448));
  if (info.staticSharedBytes <= optin) limit = std::max<uint64_t>(limit, info.staticSharedBytes);
  return limit;
}

// As an H200 answers (tools/gpu-probe/occupancy29.py): blocks the launch would refuse (more shared memory than the
// function may have) fit none; the kernel's .reqntid/.maxntid do not enter (a .reqntid 1 kernel asked about blocks of
// 128 threads fits 16 per SM); a block's shared memory takes whole 128-byte units.
int maxActiveBlocksPerSm(const Function& function, const Device& device, int blockSize, size_t dynamicShared) {
  const auto& info = function.info();
  if (info.staticSharedBytes + uint64_t(dynamicShared) > sharedBytesLimit(function, device)) return 0;
  int warpsPerBlock = (blockSize + 31) / 32;
  int maxThreadsPerSm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048);
  int maxBlocksPerSm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32);
  int regsPerSm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536);
  int sharedPerSm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 233472);
  int reservedPerBlock = attribute(device, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 1024);
  if (blockSize <= 0 || blockSize > attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024)) return 0;
  int byThreads = maxThreadsPerSm / (warpsPerBlock * 32);
  int regs = std::max(function.reportedRegisters(), 16);
  int regsPerWarp = ((regs * 32 + 255) / 256) * 256;  // allocation unit of 256 registers per warp
  int byRegs = regsPerSm / std::max(1, regsPerWarp * warpsPerBlock);
  size_t shared = ptx::exec::sharedAllocationBytes(info.staticSharedBytes + dynamicShared + reservedPerBlock);
  int byShared = shared ? int(sharedPerSm / shared) : maxBlocksPerSm;
  return std::max(0, std::min({byThreads, byRegs, byShared, maxBlocksPerSm}));
}

CUresult faultResult(ptx::exec::FaultKind kind) {
  using K = ptx::exec::FaultKind;
  switch (kind) {
    case K::None: return CUDA_SUCCESS;
    case K::IllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case K::MisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case K::InvalidAddressSpace: return CUDA_ERROR_INVALID_ADDRESS_SPACE;
    case K::IllegalInstruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case K::Assert: return CUDA_ERROR_ASSERT;
    case K::StackOverflow: return CUDA_ERROR_LAUNCH_FAILED;
    case K::Deadlock: return CUDA_ERROR_LAUNCH_FAILED;
    case K::LaunchInvalid: return CUDA_ERROR_INVALID_VALUE;
    case K::Timeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
    case K::ClusterAddress: return CUDA_ERROR_LAUNCH_FAILED;  // measured on an H100 (clusters18 probe)
    case K::Trap: return CUDA_ERROR_LAUNCH_FAILED;            // measured on an H100 (printftrap28 probe)
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

CUresult validateLaunch(Context& context, const LaunchRequest& request) {
  if (&request.function->module().context() != &context) return CUDA_ERROR_INVALID_HANDLE;
  return validate(request, context.device());
}

CUresult submitLaunch(Stream& stream, LaunchRequest request) {
  Context& context = stream.context();
  if (CUresult sticky = context.stickyError()) return sticky;
  if (CUresult invalid = validateLaunch(context, request)) return invalid;
  CUresult captured;
  if (captureIfCapturing(stream, CU_GRAPH_NODE_TYPE_KERNEL, KernelNodeData{request, nullptr, nullptr, {}, {}},
                         captured))
    return captured;
  if (timeline::on()) [[unlikely]]
    timeline::labelNextItem(request.function->info().name);
  const bool runIfIdle = runsOnLaunchingThread(request);
  StreamWork work = launchWork(context, std::move(request), std::make_shared<TextureObjectsView>());
  if (runIfIdle) return enqueueWorkRunIfIdle(stream, std::move(work), CU_GRAPH_NODE_TYPE_KERNEL);
  return enqueueWork(stream, std::move(work));
}

uint64_t inlineLaunchThreads() {
  static const uint64_t threads = [] {
    const char* value = std::getenv("CUEMU_INLINE_LAUNCH_THREADS");
    return value && *value ? std::strtoull(value, nullptr, 10) : kDefaultInlineLaunchThreads;
  }();
  const uint64_t override = g_inlineLaunchThreads.load(std::memory_order_relaxed);
  return override == kNoOverride ? threads : override;
}

void setInlineLaunchThreads(std::optional<uint64_t> threads) {
  g_inlineLaunchThreads.store(threads.value_or(kNoOverride), std::memory_order_relaxed);
}

bool runsOnLaunchingThread(const LaunchRequest& request) {
  const uint64_t threads = request.grid.count() * request.block.count();
  return threads <= inlineLaunchThreads() && !request.cooperative && !request.function->info().mayWaitForOtherWork;
}

StreamWork launchWork(Context& context, LaunchRequest request, std::shared_ptr<const TextureObjectsView> textures,
                      std::shared_ptr<const ConditionalHandles> conditionals) {
  auto config = execConfig(context.device());
  return [request = std::move(request), config, &context, textures = std::move(textures),
          conditionals = std::move(conditionals)]() -> CUresult {
    LaunchShape shape;
    if (CUresult refused = launchShape(request, shape)) return refused;  // validated: a function attribute changed
    GridLaunch g;
    g.kernel = request.function->kernelIndex();
    g.grid = shape.grid;
    g.block = shape.block;
    g.cluster = shape.cluster;
    g.dynamicSharedBytes = request.dynamicSharedBytes;
    g.params = &request.params;
    g.cooperative = request.cooperative;
    g.textures = textures.get();
    g.conditionals = conditionals.get();
    return runGridTree(context, request.function->module(), config, g);
  };
}

}  // namespace cuemu
