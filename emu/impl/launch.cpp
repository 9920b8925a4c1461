// Launching kernels, function attributes and occupancy.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/event.h"
#include "core/launch.h"
#include "core/limits.h"
#include "core/module.h"
#include "core/stream_lookup.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cuemu {
namespace {

int deviceAttribute(const Device& device, CUdevice_attribute attribute, int fallback) {
  int value = 0;
  return device.attribute(attribute, value) == CUDA_SUCCESS ? value : fallback;
}

bool currentIsGreen() {
  auto context = requireCurrentContext();
  return context && (*context)->greenHandle();
}

CUresult launch(CUfunction f, ptx::exec::Dim3 grid, ptx::exec::Dim3 block, unsigned sharedBytes, CUstream hStream,
                void** kernelParams, void** extra, bool cooperative, ptx::exec::Dim3 cluster = {0, 0, 0}) {
  auto function = resolveFunction(f);
  if (!function) return function.error().code;
  auto params = packKernelParams((*function)->info(), kernelParams, extra);
  if (!params) return params.error().code;
  auto stream = lookupStream(hStream);
  if (!stream) return stream.error().code;
  // A stream of a green context may be used from its device's other contexts (and the reverse): a CUkernel then
  // resolves in the stream's context, as it has one function per context (cuda.core's green-context tests).
  Context& streamContext = (*stream)->context();
  if (&(*function)->module().context() != &streamContext && (streamContext.greenHandle() || currentIsGreen())) {
    pushCurrentContext(streamContext.shared_from_this());
    function = resolveFunction(f);
    popCurrentContext();
    if (!function) return function.error().code;
  }
  LaunchRequest request{*function, grid, block, sharedBytes, std::move(*params), cooperative, cluster};
  return submitLaunch(**stream, std::move(request));
}

CUresult launchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, CUstream stream, void** kernelParams, void** extra) {
  return launch(f, {gx, gy, gz}, {bx, by, bz}, shared, stream, kernelParams, extra, false);
}

// Blocks in the cluster shape the kernel requires; 0 when it requires none.
int requiredClusterSize(const Function& f) {
  return f.requiredClusterWidth.load() * f.requiredClusterHeight.load() * f.requiredClusterDepth.load();
}

// The cluster shape a launch gives is checked with the rest of its configuration (core/launch.cpp: launchShape).
CUresult launchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  if (!config) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs && !config->attrs) return CUDA_ERROR_INVALID_VALUE;
  bool cooperative = false;
  ptx::exec::Dim3 cluster{0, 0, 0};
  CUevent programmaticEvent = nullptr;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: cooperative = a.value.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: {
        // Answers of driver 580 on an H100: no event, an event that keeps timing, flags (conformance
        // ptx.async_Pdl.ProgrammaticEventErrors).
        const auto& pe = a.value.programmaticEvent;
        CUEMU_LOOKUP(event, Event, pe.event);
        if (pe.flags) return CUDA_ERROR_INVALID_VALUE;
        if (!event->timingDisabled()) return CUDA_ERROR_NOT_SUPPORTED;
        programmaticEvent = pe.event;
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const auto& d = a.value.clusterDim;
        if (!d.x || !d.y || !d.z) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        cluster = ptx::exec::Dim3{d.x, d.y, d.z};
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        // a hint with no effect here; values past the enumeration are refused (driver 580 on an H100)
        if (unsigned(a.value.clusterSchedulingPolicyPreference) > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
          return CUDA_ERROR_INVALID_VALUE;
        break;
      default:
        // Priority, access policy, programmatic serialization, memory sync domains ...: scheduling hints
        // with no observable effect on a CPU; accepted.
        if (a.id <= CU_LAUNCH_ATTRIBUTE_IGNORE || a.id >= CU_LAUNCH_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
        break;
    }
  }
  CUresult r = launch(f, {config->gridDimX, config->gridDimY, config->gridDimZ},
                      {config->blockDimX, config->blockDimY, config->blockDimZ}, config->sharedMemBytes,
                      config->hStream, kernelParams, extra, cooperative, cluster);
  // The programmatic event completes once every block triggered it (griddepcontrol.launch_dependents, or its
  // start) or exited: kernels run to completion here, so it is recorded right behind the kernel, which is the
  // latest moment the GPU may complete it. Programmatic stream serialization needs nothing: the dependent kernel
  // starting after its predecessor finished is a legal schedule, and griddepcontrol.wait then returns at once.
  // (In cuLaunchKernelEx_ptsz the per-thread default stream is in force here too: core/stream_lookup.h.)
  if (r == CUDA_SUCCESS && programmaticEvent) r = impl::cuEventRecord(programmaticEvent, config->hStream);
  return r;
}

// ---- Occupancy (core/launch.cpp computes it) ------------------------------------------------------------

CUresult maxActiveBlocks(int* numBlocks, CUfunction func, int blockSize, size_t dynamicShared, unsigned flags) {
  // A block size above the kernel's limit fits zero blocks; a non-positive one is not a block size.
  if (!numBlocks || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(func);
  if (!function) return function.error().code;
  *numBlocks = maxActiveBlocksPerSm(**function, (*function)->module().context().device(), blockSize, dynamicShared);
  return CUDA_SUCCESS;
}

CUresult maxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func, CUoccupancyB2DSize toShared,
                               size_t dynamicShared, int limit, unsigned flags) {
  if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(func);
  if (!function) return function.error().code;
  const Device& device = (*function)->module().context().device();
  int maxBlock = int((*function)->maxThreadsPerBlock());
  if (limit > 0) maxBlock = std::min(maxBlock, limit);
  int bestBlock = 0, bestThreads = 0, bestBlocks = 0;
  for (int size = maxBlock - maxBlock % 32 ? maxBlock - maxBlock % 32 : maxBlock; size > 0; size -= 32) {
    size_t shared = toShared ? toShared(size) : dynamicShared;
    int blocks = maxActiveBlocksPerSm(**function, device, size, shared);
    if (blocks * size > bestThreads) {
      bestThreads = blocks * size;
      bestBlock = size;
      bestBlocks = blocks;
    }
  }
  *blockSize = bestBlock;
  *minGridSize = bestBlocks * deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132);
  return CUDA_SUCCESS;
}

// ---- Cluster occupancy -----------------------------------------------------------------------------------------

using limits::kNonPortableClusterSize;
using limits::kPortableClusterSize;

int clusterSizeLimit(const Function& f) {
  return f.nonPortableClusterAllowed.load() ? kNonPortableClusterSize : kPortableClusterSize;
}

// The blocks of `config` one SM holds, for cluster calculations; errors for configurations no launch accepts.
Expected<int> clusterBlocksPerSm(const Function& f, const CUlaunchConfig& config) {
  const Device& device = f.module().context().device();
  if (device.profile().ccMajor < 9) return makeError(CUDA_ERROR_NOT_SUPPORTED, "thread block clusters need sm_90");
  uint64_t blockSize = uint64_t(config.blockDimX) * config.blockDimY * config.blockDimZ;
  if (blockSize == 0 || blockSize > uint64_t(device.profile().maxThreadsPerBlock))
    return makeError(CUDA_ERROR_INVALID_VALUE, "bad block size");
  return std::min(maxActiveBlocksPerSm(f, device, int(blockSize), config.sharedMemBytes),
                  limits::kMaxClusterBlocksPerSm);
}

CUresult maxPotentialClusterSize(int* clusterSize, CUfunction func, const CUlaunchConfig* config) {
  if (!clusterSize || !config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(func);
  if (!function) return function.error().code;
  const Function& f = **function;
  auto blocksPerSm = clusterBlocksPerSm(f, *config);
  if (!blocksPerSm) return blocksPerSm.error().code;
  // A shape compiled into the kernel does not limit the answer (driver 580 reports 8 for a kernel compiled with
  // .reqnctapercluster 2,1,1; measured on an H200). A cluster's blocks take distinct SMs of one GPC.
  const std::vector<int> gpcs = f.module().context().device().profile().gpcLayout();
  const int largestGpc = gpcs.empty() ? 0 : *std::max_element(gpcs.begin(), gpcs.end());
  *clusterSize = *blocksPerSm == 0 ? 0 : std::min(clusterSizeLimit(f), largestGpc);
  return CUDA_SUCCESS;
}

CUresult maxActiveClusters(int* numClusters, CUfunction func, const CUlaunchConfig* config) {
  if (!numClusters || !config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(func);
  if (!function) return function.error().code;
  const Function& f = **function;
  int size = 0;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& d = config->attrs[i].value.clusterDim;
      size = int(d.x * d.y * d.z);
      if (size <= 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
  int required = requiredClusterSize(f);
  if (required && size && size != required) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (!size) size = required;
  if (!size) {
    // Neither the kernel nor the configuration asks for clusters: none fit (driver 580 answers success and 0).
    *numClusters = 0;
    return CUDA_SUCCESS;
  }
  if (size > clusterSizeLimit(f)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  auto blocksPerSm = clusterBlocksPerSm(f, *config);
  if (!blocksPerSm) return blocksPerSm.error().code;
  // Each GPC of at least `size` SMs holds its SMs' blocks in clusters of `size` on distinct SMs; one of fewer SMs
  // holds none (an H200's answers for every size and blocks-per-SM count, DeviceProfile::gpcSms).
  int clusters = 0;
  for (int sms : f.module().context().device().profile().gpcLayout())
    if (sms >= size) clusters += sms * *blocksPerSm / size;
  *numClusters = clusters;
  return CUDA_SUCCESS;
}

// ---- Function attributes -------------------------------------------------------------------------------------

CUresult functionAttribute(int* out, CUfunction_attribute attribute, Function& f) {
  const auto& info = f.info();
  const Device& device = f.module().context().device();
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out = int(f.maxThreadsPerBlock()); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *out = int(info.staticSharedBytes); break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *out = int(f.module().constBytes()); break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *out = int(info.localBytesPerThread); break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *out = f.reportedRegisters(); break;
    // The virtual architecture the PTX targets (75 for compute_75), not the ISA version (driver 580).
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *out = f.module().image().targetArch; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *out = device.profile().ccMajor * 10 + device.profile().ccMinor; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *out = f.module().image().cacheModeCa; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: {
      int set = f.maxDynamicSharedBytes.load();
      *out = set >= 0 ? set
                      : std::max(0, deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152) -
                                        int(info.staticSharedBytes));
      break;
    }
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *out = f.preferredCarveout.load(); break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *out = info.explicitcluster; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *out = f.requiredClusterWidth.load(); break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *out = f.requiredClusterHeight.load(); break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *out = f.requiredClusterDepth.load(); break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *out = f.nonPortableClusterAllowed.load(); break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *out = f.clusterSchedulingPolicy.load(); break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult setFunctionAttribute(Function& f, CUfunction_attribute attribute, int value) {
  const Device& device = f.module().context().device();
  int optIn = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value + int(f.info().staticSharedBytes) > optIn) return CUDA_ERROR_INVALID_VALUE;
      f.maxDynamicSharedBytes = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      f.preferredCarveout = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: {
      if (value < 0) return CUDA_ERROR_INVALID_VALUE;
      auto& slot = attribute == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH    ? f.requiredClusterWidth
                   : attribute == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT ? f.requiredClusterHeight
                                                                            : f.requiredClusterDepth;
      // A shape fixed at compile time (__cluster_dims__) can only be set to what it already is (driver 580
      // answers CUDA_ERROR_INVALID_VALUE for another value; measured on an H200).
      if (f.compiledClusterDims) return value == slot.load() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
      slot = value;
      return CUDA_SUCCESS;
    }
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      if (value != 0 && value != 1) return CUDA_ERROR_INVALID_VALUE;
      f.nonPortableClusterAllowed = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: f.clusterSchedulingPolicy = value; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;  // the others are read-only
  }
}

template <typename Fn> CUresult withFunction(CUfunction handle, Fn&& fn) {
  auto function = resolveFunction(handle);
  if (!function) return function.error().code;
  return fn(**function);
}

}  // namespace

namespace impl {

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return launchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                      kernelParams, extra);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return launchKernelEx(config, f, kernelParams, extra);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                   unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream, void** kernelParams) {
  return launch(f, {gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}, sharedMemBytes, hStream,
                kernelParams, nullptr, true);
}
// Launches one cooperative kernel per device. Unless the flags say otherwise, each launch waits for the work
// already queued in every listed stream, and later work in every listed stream waits for all the kernels: each
// stream takes the others' current ends as dependencies (the mechanism event waits use).
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* launchParamsList, unsigned int numDevices,
                                              unsigned int flags) {
  constexpr unsigned kKnownFlags = CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
                                   CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;
  if (!launchParamsList || !numDevices || (flags & ~kKnownFlags)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::shared_ptr<Stream>> streams;
  const CUDA_LAUNCH_PARAMS& first = launchParamsList[0];
  for (unsigned i = 0; i < numDevices; ++i) {
    const CUDA_LAUNCH_PARAMS& p = launchParamsList[i];
    // The legacy and per-thread default streams name no device: each launch needs a stream of its own.
    if (!p.hStream || p.hStream == CU_STREAM_LEGACY || p.hStream == CU_STREAM_PER_THREAD)
      return CUDA_ERROR_INVALID_HANDLE;
    auto stream = lookupStream(p.hStream);
    if (!stream) return stream.error().code;
    for (auto& earlier : streams)
      if (&earlier->context().device() == &(*stream)->context().device())
        return CUDA_ERROR_INVALID_DEVICE;  // one launch per device
    if (p.gridDimX != first.gridDimX || p.gridDimY != first.gridDimY || p.gridDimZ != first.gridDimZ ||
        p.blockDimX != first.blockDimX || p.blockDimY != first.blockDimY || p.blockDimZ != first.blockDimZ ||
        p.sharedMemBytes != first.sharedMemBytes)
      return CUDA_ERROR_INVALID_VALUE;  // every device runs the same configuration
    streams.push_back(std::move(*stream));
  }
  auto crossWait = [&] {
    if (streams.size() < 2) return;
    std::vector<StreamPosition> ends;
    for (auto& s : streams) ends.push_back({s, s->lastSubmitted()});
    for (size_t i = 0; i < streams.size(); ++i) {
      std::vector<StreamPosition> others;
      for (size_t j = 0; j < ends.size(); ++j)
        if (j != i) others.push_back(ends[j]);
      streams[i]->context().streams().submit(*streams[i], nullptr, std::move(others));
    }
  };
  if (!(flags & CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC)) crossWait();
  for (unsigned i = 0; i < numDevices; ++i) {
    const CUDA_LAUNCH_PARAMS& p = launchParamsList[i];
    // The launch resolves its function in the stream's context (a CUkernel has one function per context).
    pushCurrentContext(streams[i]->context().shared_from_this());
    CUresult r = launch(p.function, {p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ},
                        p.sharedMemBytes, p.hStream, p.kernelParams, nullptr, true);
    popCurrentContext();
    if (r) return r;
  }
  if (!(flags & CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC)) crossWait();
  return CUDA_SUCCESS;
}

// ---- The legacy launch API -----------------------------------------------------------------------------------

CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z) {
  if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    std::lock_guard lock(f.legacyMutex);
    f.legacy.blockX = x, f.legacy.blockY = y, f.legacy.blockZ = z;
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes) {
  return withFunction(hfunc, [&](Function& f) {
    std::lock_guard lock(f.legacyMutex);
    f.legacy.sharedBytes = bytes;
    return CUDA_SUCCESS;
  });
}
CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes) {
  if (numbytes > limits::kMaxKernelParamBytes) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    std::lock_guard lock(f.legacyMutex);
    f.legacy.params.resize(numbytes);
    return CUDA_SUCCESS;
  });
}
CUresult cuParamSetv(CUfunction hfunc, int offset, void* ptr, unsigned int numbytes) {
  if (offset < 0 || (!ptr && numbytes)) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    std::lock_guard lock(f.legacyMutex);
    if (size_t(offset) + numbytes > limits::kMaxKernelParamBytes) return CUDA_ERROR_INVALID_VALUE;
    if (f.legacy.params.size() < size_t(offset) + numbytes) f.legacy.params.resize(size_t(offset) + numbytes);
    if (numbytes) std::memcpy(f.legacy.params.data() + offset, ptr, numbytes);
    return CUDA_SUCCESS;
  });
}
CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value) {
  return impl::cuParamSetv(hfunc, offset, &value, 4);
}
CUresult cuParamSetf(CUfunction hfunc, int offset, float value) { return impl::cuParamSetv(hfunc, offset, &value, 4); }
CUresult cuParamSetTexRef(CUfunction hfunc, int, CUtexref) {
  return withFunction(hfunc, [](Function&) { return CUDA_ERROR_NOT_SUPPORTED; });
}

static CUresult legacyLaunch(CUfunction hfunc, int gridW, int gridH, CUstream stream) {
  if (gridW <= 0 || gridH <= 0) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(hfunc);
  if (!function) return function.error().code;
  Function& f = **function;
  Function::LegacyLaunchState state;
  {
    std::lock_guard lock(f.legacyMutex);
    state = f.legacy;
  }
  state.params.resize(std::max<size_t>(state.params.size(), f.info().paramBytes));
  size_t size = state.params.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, state.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  // A kernel without parameters gets no buffer (an empty vector has no data pointer to pass).
  return launch(hfunc, {unsigned(gridW), unsigned(gridH), 1},
                {unsigned(state.blockX), unsigned(state.blockY), unsigned(state.blockZ)}, state.sharedBytes, stream,
                nullptr, size ? extra : nullptr, false);
}
CUresult cuLaunch(CUfunction f) { return legacyLaunch(f, 1, 1, nullptr); }
CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height) {
  return legacyLaunch(f, grid_width, grid_height, nullptr);
}
CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream) {
  return legacyLaunch(f, grid_width, grid_height, hStream);
}

// ---- Functions -------------------------------------------------------------------------------------------------

CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) { return functionAttribute(pi, attrib, f); });
}
CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return withFunction(hfunc, [&](Function& f) { return setFunctionAttribute(f, attrib, value); });
}
CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    f.cacheConfig = config;
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
  if (config < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    f.sharedConfig = config;
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  if (!hmod) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(hfunc, [&](Function& f) {
    *hmod = toApiHandle<CUmodule>(f.module().handle());
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;  // a NULL function too (driver 580)
  return withFunction(hfunc, [&](Function& f) {
    *name = f.info().name.c_str();
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  if (!paramOffset && !paramSize) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(func, [&](Function& f) {
    const auto& params = f.info().params;
    if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset) *paramOffset = params[paramIndex].offset;
    if (paramSize) *paramSize = params[paramIndex].size;
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  if (!state) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(function, [&](Function&) {
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
  });
}
CUresult cuFuncLoad(CUfunction function) {
  return withFunction(function, [](Function&) { return CUDA_SUCCESS; });
}

CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  return withFunction(reinterpret_cast<CUfunction>(kernel),
                      [&](Function& f) { return functionAttribute(pi, attrib, f); });
}
CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  return withFunction(reinterpret_cast<CUfunction>(kernel),
                      [&](Function& f) { return setFunctionAttribute(f, attrib, val); });
}
CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  if (!deviceByOrdinal(dev)) return CUDA_ERROR_INVALID_DEVICE;
  return impl::cuFuncSetCacheConfig(reinterpret_cast<CUfunction>(kernel), config);
}

// ---- Occupancy -------------------------------------------------------------------------------------------------

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize) {
  return maxActiveBlocks(numBlocks, func, blockSize, dynamicSMemSize, 0);
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags) {
  return maxActiveBlocks(numBlocks, func, blockSize, dynamicSMemSize, flags);
}
CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit) {
  return maxPotentialBlockSize(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                               blockSizeLimit, 0);
}
CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags) {
  return maxPotentialBlockSize(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                               blockSizeLimit, flags);
}
CUresult cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func, const CUlaunchConfig* config) {
  return maxPotentialClusterSize(clusterSize, func, config);
}
CUresult cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func, const CUlaunchConfig* config) {
  return maxActiveClusters(numClusters, func, config);
}
CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize) {
  if (!dynamicSmemSize || numBlocks <= 0) return CUDA_ERROR_INVALID_VALUE;
  return withFunction(func, [&](Function& f) {
    const Device& device = f.module().context().device();
    int sharedPerSm = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 233472);
    int reserved = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 1024);
    int optIn = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448);
    if (blockSize <= 0 || blockSize > int(f.maxThreadsPerBlock())) return CUDA_ERROR_INVALID_VALUE;
    long perBlock = sharedPerSm / numBlocks - reserved - long(f.info().staticSharedBytes);
    // A launch may not use more than the function's limit (48 KiB minus static unless raised with
    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): an H100 answers at most that (cuda.core's occupancy tests).
    int set = f.maxDynamicSharedBytes.load();
    const long perBlockDefault = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152);
    long functionLimit = set >= 0 ? set : std::max(0L, perBlockDefault - long(f.info().staticSharedBytes));
    long limit = std::min<long>(optIn - long(f.info().staticSharedBytes), functionLimit);
    *dynamicSmemSize = size_t(std::max(0L, std::min<long>(perBlock, limit)));
    return CUDA_SUCCESS;
  });
}

}  // namespace impl
}  // namespace cuemu
