#include "core/device_runtime.h"

#include "core/address_space.h"
#include "core/context.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/launch.h"
#include "core/memory.h"

#include <ptx/device_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

namespace cuemu {
namespace {

// cudaError_t values (driver_types.h).
constexpr int32_t kSuccess = 0;
constexpr int32_t kInvalidValue = 1;
constexpr int32_t kMemoryAllocation = 2;
constexpr int32_t kInvalidConfiguration = 9;
constexpr int32_t kLaunchPendingCountExceeded = 69;
constexpr int32_t kInvalidDeviceFunction = 98;
constexpr int32_t kInvalidDevice = 101;
constexpr int32_t kUnsupportedLimit = 215;
constexpr int32_t kInvalidResourceHandle = 400;

// Device-side stream handles with a meaning of their own (cuda_device_runtime_api.h).
constexpr uint64_t kStreamNull = 0;
constexpr uint64_t kStreamLegacy = 1;
constexpr uint64_t kStreamPerThread = 2;
constexpr uint64_t kStreamTailLaunch = 3;
constexpr uint64_t kStreamFireAndForget = 4;
// The streams a kernel launches graphs into (cuda_device_runtime_api.h).
constexpr uint64_t kGraphTailLaunch = uint64_t(1) << 56;
constexpr uint64_t kGraphFireAndForget = uint64_t(2) << 56;
constexpr uint64_t kGraphFireAndForgetAsSibling = uint64_t(3) << 56;
// cudaStreamCreateWithFlags / cudaEventCreateWithFlags flags a kernel must pass.
constexpr uint32_t kStreamNonBlocking = 1;
constexpr uint32_t kEventDisableTiming = 2;
// cudaMemcpyKind values a kernel may use: device to device, default (unified addressing).
constexpr uint32_t kMemcpyDeviceToDevice = 3;
constexpr uint32_t kMemcpyDefault = 4;

// Parameter buffers come from chunks of device memory of this size (larger buffers get a chunk of their own).
constexpr uint64_t kChunkBytes = 256 * 1024;

// Handles of device streams and events: process-wide unique, far from the special values above.
std::atomic<uint64_t> gNextHandle{0x10000};

uint64_t newHandle() { return gNextHandle.fetch_add(0x10); }

bool accessible(uint64_t address, uint64_t bytes) {
  return bytes == 0 || AddressSpace::instance().isAccessible(address, bytes);
}

}  // namespace

GridRuntime::GridRuntime(Context& context, const ptx::exec::Program& program, unsigned depth, uint64_t pendingLimit)
    : context_(context), program_(program), depth_(depth), pendingLimit_(pendingLimit) {}

bool GridRuntime::orderOf(uint64_t stream, DeviceWork::Order& order) const {
  switch (stream) {
    case kStreamNull:
    case kStreamLegacy:
    case kStreamPerThread: order = DeviceWork::Order::Stream; return true;
    case kStreamTailLaunch: order = DeviceWork::Order::TailLaunch; return true;
    case kStreamFireAndForget: order = DeviceWork::Order::FireAndForget; return true;
    default: order = DeviceWork::Order::Stream; return streams_.count(stream) != 0;
  }
}

uint64_t GridRuntime::allocateBuffer(uint32_t bytes, uint32_t align) {
  uint64_t size = std::max<uint64_t>(bytes, 1);
  if (!chunks_.empty()) {
    uint64_t at = alignUp(chunkUsed_, std::max<uint32_t>(align, 8));
    if (at + size <= chunks_.back()->size) {
      chunkUsed_ = at + size;
      return chunks_.back()->start + at;
    }
  }
  auto chunk = allocateDriverMemory(context_, std::max(size, kChunkBytes));
  if (!chunk) return 0;
  chunks_.push_back(chunk);
  chunkUsed_ = size;
  return chunk->start;
}

uint64_t GridRuntime::parameterBuffer(const ptx::exec::DeviceLaunchConfig& config, uint32_t bytes, uint32_t align,
                                      int32_t& error) {
  // The new grid and the launching grid's incomplete device-launched ancestors (itself included).
  if (uint64_t(depth_) + 1 > pendingLimit_) {
    error = kLaunchPendingCountExceeded;
    return 0;
  }
  std::lock_guard lock(mutex_);
  if (work_.size() + buffers_.size() >= kMaxRecordedWork) {
    error = kLaunchPendingCountExceeded;
    return 0;
  }
  uint64_t address = allocateBuffer(bytes, align);
  if (!address) {
    error = kMemoryAllocation;
    return 0;
  }
  buffers_[address] = Buffer{config, bytes};
  return address;
}

int32_t GridRuntime::launch(uint64_t buffer, uint64_t stream, const ptx::exec::DeviceLaunchConfig* config) {
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(buffer);
  if (it == buffers_.end()) return kInvalidValue;
  DeviceWork work;
  if (!orderOf(stream, work.order)) return kInvalidResourceHandle;
  const ptx::exec::DeviceLaunchConfig& c = config ? *config : it->second.config;
  const auto& kernels = ptx::exec::declaredKernels(program_);
  if (c.kernel < 0 || size_t(c.kernel) >= kernels.size()) return kInvalidDeviceFunction;
  const ptx::exec::KernelInfo& info = kernels[size_t(c.kernel)];
  if (!c.grid.x || !c.grid.y || !c.grid.z || !c.block.x || !c.block.y || !c.block.z || c.grid.y > 65535 ||
      c.grid.z > 65535 || c.grid.x > 0x7FFFFFFFu || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64 ||
      c.block.count() > info.maxThreadsOfAnyShape() ||
      uint64_t(info.staticSharedBytes) + c.sharedBytes > uint64_t(context_.device().profile().sharedMemPerBlockOptin))
    return kInvalidConfiguration;
  if (it->second.bytes < info.paramBytes) return kInvalidValue;
  work.kernel = c.kernel;
  work.grid = c.grid;
  work.block = c.block;
  work.sharedBytes = c.sharedBytes;
  // The arguments are taken now: the kernel may reuse the memory they came from as soon as the call returns.
  auto* params = reinterpret_cast<const uint8_t*>(buffer);
  work.params.assign(params, params + info.paramBytes);
  buffers_.erase(it);
  work_.push_back(std::move(work));
  return kSuccess;
}

int32_t GridRuntime::streamCreate(uint32_t flags, uint64_t& stream) {
  // Device streams never synchronise with the NULL stream, whatever the flags say; both values are accepted
  // (measured: cudaStreamDefault succeeds on an H100).
  if (flags != kStreamNonBlocking && flags != 0) return kInvalidValue;
  std::lock_guard lock(mutex_);
  stream = newHandle();
  streams_.insert(stream);
  return kSuccess;
}

int32_t GridRuntime::streamDestroy(uint64_t stream) {
  std::lock_guard lock(mutex_);
  // Work already in the stream still runs: streams only order work, and the order is kept in work_.
  return streams_.erase(stream) ? kSuccess : kInvalidResourceHandle;
}

int32_t GridRuntime::eventCreate(uint32_t flags, uint64_t& event) {
  // Events of kernels cannot time (measured: cudaEventDefault is cudaErrorInvalidValue on an H100).
  if (flags != kEventDisableTiming) return kInvalidValue;
  std::lock_guard lock(mutex_);
  event = newHandle();
  events_.insert(event);
  return kSuccess;
}

// Events order streams; work of this grid runs in launch order anyway, which satisfies every wait.
int32_t GridRuntime::eventRecord(uint64_t event, uint64_t stream) {
  std::lock_guard lock(mutex_);
  DeviceWork::Order order;
  if (!events_.count(event) || !orderOf(stream, order) || order != DeviceWork::Order::Stream)
    return kInvalidResourceHandle;
  return kSuccess;
}

int32_t GridRuntime::streamWaitEvent(uint64_t stream, uint64_t event, uint32_t flags) {
  if (flags != 0) return kInvalidValue;
  std::lock_guard lock(mutex_);
  DeviceWork::Order order;
  if (!events_.count(event) || !orderOf(stream, order) || order != DeviceWork::Order::Stream)
    return kInvalidResourceHandle;
  return kSuccess;
}

int32_t GridRuntime::eventDestroy(uint64_t event) {
  std::lock_guard lock(mutex_);
  return events_.erase(event) ? kSuccess : kInvalidResourceHandle;
}

int32_t GridRuntime::memcpyAsync(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t kind, uint64_t stream) {
  if (kind != kMemcpyDeviceToDevice && kind != kMemcpyDefault) return kInvalidValue;
  if (!accessible(dst, bytes) || !accessible(src, bytes)) return kInvalidValue;
  std::lock_guard lock(mutex_);
  DeviceWork work;
  if (!orderOf(stream, work.order) || work.order != DeviceWork::Order::Stream) return kInvalidResourceHandle;
  if (work_.size() >= kMaxRecordedWork) return kLaunchPendingCountExceeded;
  work.kind = DeviceWork::Kind::Copy;
  work.dst = dst;
  work.src = src;
  work.bytes = bytes;
  work_.push_back(std::move(work));
  return kSuccess;
}

int32_t GridRuntime::memsetAsync(uint64_t dst, uint32_t value, uint64_t bytes, uint64_t stream) {
  if (!accessible(dst, bytes)) return kInvalidValue;
  std::lock_guard lock(mutex_);
  DeviceWork work;
  if (!orderOf(stream, work.order) || work.order != DeviceWork::Order::Stream) return kInvalidResourceHandle;
  if (work_.size() >= kMaxRecordedWork) return kLaunchPendingCountExceeded;
  work.kind = DeviceWork::Kind::Fill;
  work.dst = dst;
  work.bytes = bytes;
  work.value = uint8_t(value);
  work_.push_back(std::move(work));
  return kSuccess;
}

int32_t GridRuntime::graphLaunch(uint64_t graphExec, uint64_t stream) {
  DeviceWork work;
  work.kind = DeviceWork::Kind::Graph;
  work.graphExec = graphExec;
  switch (stream) {
    case kGraphTailLaunch: work.order = DeviceWork::Order::TailLaunch; break;
    case kGraphFireAndForget:
    case kGraphFireAndForgetAsSibling: work.order = DeviceWork::Order::FireAndForget; break;
    default: return kInvalidValue;
  }
  auto exec = lookup<GraphExec>(graphExec);
  if (!exec) return kInvalidValue;
  // The H100 (driver 580) faults the launching grid with an illegal address (tools/gpu-probe/results/
  // cdp-graph-launch-h100-2026-11-26.txt; runtime.cdp_graph_launch_unflagged).
  if (!((*exec)->flags() & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)) return ptx::exec::kDeviceGraphLaunchFault;
  std::lock_guard lock(mutex_);
  if (work_.size() >= kMaxRecordedWork) return kLaunchPendingCountExceeded;
  work_.push_back(std::move(work));
  return kSuccess;
}

int32_t GridRuntime::attribute(int32_t attribute, int32_t device, int32_t& value) {
  // cudaDeviceAttr values are the driver's CUdevice_attribute values.
  Device* d = deviceByOrdinal(device);
  if (!d) return kInvalidDevice;
  int v = 0;
  if (d->attribute(CUdevice_attribute(attribute), v) != CUDA_SUCCESS) return kInvalidValue;
  value = v;
  return kSuccess;
}

int32_t GridRuntime::limit(int32_t which, uint64_t& value) {
  // cudaLimit values are the driver's CUlimit values.
  size_t v = 0;
  if (which < 0 || context_.limit(CUlimit(which), v) != CUDA_SUCCESS) return kUnsupportedLimit;
  value = v;
  return kSuccess;
}

int32_t GridRuntime::ordinal(int32_t& device) {
  device = context_.device().ordinal();
  return kSuccess;
}

size_t GridRuntime::launchedGrids() {
  std::lock_guard lock(mutex_);
  return size_t(
      std::count_if(work_.begin(), work_.end(), [](const DeviceWork& w) { return w.kind == DeviceWork::Kind::Grid; }));
}

std::vector<DeviceWork> GridRuntime::takeWork() {
  std::vector<DeviceWork> work;
  std::lock_guard lock(mutex_);
  work.swap(work_);
  buffers_.clear();
  chunks_.clear();
  std::stable_partition(work.begin(), work.end(),
                        [](const DeviceWork& w) { return w.order != DeviceWork::Order::TailLaunch; });
  return work;
}

CUresult runDeviceGraph(const DeviceWork& work) {
  auto exec = lookup<GraphExec>(work.graphExec);
  return exec ? (*exec)->runHere() : CUDA_SUCCESS;
}

CUresult runDeviceCopy(const DeviceWork& w) {
  if (!accessible(w.dst, w.bytes)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  if (w.kind == DeviceWork::Kind::Fill) {
    std::memset(reinterpret_cast<void*>(w.dst), w.value, w.bytes);
    return CUDA_SUCCESS;
  }
  if (!accessible(w.src, w.bytes)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  std::memmove(reinterpret_cast<void*>(w.dst), reinterpret_cast<const void*>(w.src), w.bytes);
  return CUDA_SUCCESS;
}

namespace {

// The device runtime's texts (emu/api/recorded/device-runtime-errors.tsv), laid out as one block: for each code its
// name and its description, NUL-terminated, and last the text of every other code.
struct ErrorTexts {
  struct Row {
    int32_t code;
    uint32_t name, text;  // offsets into `block`
  };
  std::vector<Row> rows;
  std::string block;
  uint32_t unrecognized = 0;

  ErrorTexts() {
    auto add = [this](std::string_view s) {
      uint32_t at = uint32_t(block.size());
      block.append(s);
      block.push_back('\0');
      return at;
    };
#define CUEMU_DEVICE_RUNTIME_ERROR(code, name, text) rows.push_back({code, add(#name), add(text)});
#include "api/generated/device_runtime_errors.def"
#undef CUEMU_DEVICE_RUNTIME_ERROR
    unrecognized = add("unrecognized error code");
  }
  uint32_t offsetOf(int32_t code, bool name) const {
    for (const Row& r : rows)
      if (r.code == code) return name ? r.name : r.text;
    return unrecognized;
  }
};

const ErrorTexts& errorTexts() {
  static const ErrorTexts texts;
  return texts;
}

}  // namespace

uint64_t deviceErrorText(Context& context, int32_t error, bool name) {
  // One copy per context, in the context's device memory (it goes with the context; a reset makes a new one).
  static std::mutex mutex;
  static auto* copies = new std::unordered_map<unsigned long long, std::weak_ptr<MemoryRegion>>;
  const ErrorTexts& texts = errorTexts();
  std::lock_guard lock(mutex);
  std::shared_ptr<MemoryRegion> copy = (*copies)[context.id()].lock();
  if (!copy) {
    std::erase_if(*copies, [](const auto& entry) { return entry.second.expired(); });
    auto region = context.memory().allocateDevice(texts.block.size());
    if (!region) return 0;
    copy = *region;
    std::memcpy(reinterpret_cast<void*>(copy->start), texts.block.data(), texts.block.size());
    (*copies)[context.id()] = copy;
  }
  return copy->start + texts.offsetOf(error, name);
}

}  // namespace cuemu
