#include "core/context.h"
#include "core/context_legacy.h"

#include "core/device.h"
#include "core/limits.h"
#include "core/memory.h"
#include "core/mempool.h"
#include "core/module.h"
#include "core/stream.h"

#include <algorithm>
#include <vector>

namespace cuemu {
namespace {

std::atomic<unsigned long long> g_nextContextId{1};

// The per-thread stack. Holding shared_ptrs keeps a context object alive while it is current somewhere;
// a destroyed context is detected through its alive flag.
// The CUDA runtime calls the driver from exit handlers, after the exiting thread's thread_local objects are
// destroyed: from then on that thread gets a fresh (deliberately leaked) stack instead of a destroyed one.
using ContextStack = std::vector<std::shared_ptr<Context>>;
thread_local bool t_stackDestroyed = false;  // trivially destructible: readable until the thread is gone
struct ContextStackHolder {
  ContextStack stack;
  ~ContextStackHolder() { t_stackDestroyed = true; }
};

ContextStack& threadStack() {
  if (t_stackDestroyed) [[unlikely]] {
    thread_local ContextStack* late = new ContextStack;
    return *late;
  }
  thread_local ContextStackHolder holder;
  return holder.stack;
}

// The limits a new context starts with: what NVIDIA's driver reports on Hopper (emu/api/recorded/device.txt).
constexpr size_t kDefaultStackSize = 1024;
constexpr size_t kDefaultPrintfFifoSize = 8650752;
constexpr size_t kDefaultMallocHeapSize = 8 * 1024 * 1024;
constexpr size_t kDefaultSyncDepth = 2;
constexpr size_t kDefaultPendingLaunchCount = 2048;
constexpr size_t kDefaultL2FetchGranularity = 64;
constexpr size_t kMaxL2FetchGranularity = 128;
using limits::kMaxMallocHeapShare;
using limits::kMaxPrintfFifoSize;
using limits::kMaxStackSize;
using limits::kMinMallocHeapSize;
using limits::kMinPrintfFifoSize;
using limits::kStackGranularity;

}  // namespace

std::atomic<int>& legacyContextCount() {
  static constinit std::atomic<int> count{0};
  return count;
}

bool currentContextIsLegacyLookup() {
  auto context = currentContext();
  return context && context->apiVersion() == kLegacyContextApiVersion;
}

Context::Context(Device& device, unsigned flags, bool primary, unsigned apiVersion)
    : device_(device), primary_(primary), apiVersion_(apiVersion), id_(0), flags_(flags) {
  if (apiVersion_ == kLegacyContextApiVersion) legacyContextCount().fetch_add(1, std::memory_order_relaxed);
  reinitialize();
}

Context::~Context() {
  teardown();
  // The parts go in this order: ~ContextStreams drains once more and flushes the modules' printf buffer, so the
  // modules must outlive it (member order would destroy them first: a use after free TSan found, issue 24).
  streams_.reset();
  modules_.reset();
  memory_.reset();
  if (apiVersion_ == kLegacyContextApiVersion) legacyContextCount().fetch_sub(1, std::memory_order_relaxed);
}

void Context::registerHandle() {
  if (!handle_) handle_ = handleTable<Context>().insert(shared_from_this());
}

void Context::resetSettings() {
  const DeviceProfile& profile = device_.profile();
  std::lock_guard lock(settingsMutex_);
  limits_.fill(0);
  limits_[CU_LIMIT_STACK_SIZE] = kDefaultStackSize;
  limits_[CU_LIMIT_PRINTF_FIFO_SIZE] = kDefaultPrintfFifoSize;
  limits_[CU_LIMIT_MALLOC_HEAP_SIZE] = kDefaultMallocHeapSize;
  limits_[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = kDefaultSyncDepth;
  limits_[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = kDefaultPendingLaunchCount;
  limits_[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = kDefaultL2FetchGranularity;
  limits_[CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = static_cast<size_t>(profile.defaultPersistingL2Bytes());
  limits_[CU_LIMIT_SHMEM_SIZE] = static_cast<size_t>(profile.sharedMemPerBlockOptin);
  limits_[CU_LIMIT_CIG_ENABLED] = 0;
  peers_.clear();
  cacheConfig_.store(CU_FUNC_CACHE_PREFER_NONE, std::memory_order_relaxed);
  sharedConfig_.store(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE, std::memory_order_relaxed);
  smCount_.store(profile.smCount, std::memory_order_relaxed);
}

void Context::reinitialize() {
  memory_ = std::make_unique<ContextMemory>(*this);
  streams_ = std::make_unique<ContextStreams>(*this);
  modules_ = std::make_unique<ContextModules>(*this);
  usage_.store(1, std::memory_order_relaxed);
  id_.store(g_nextContextId.fetch_add(1), std::memory_order_relaxed);
  resetSettings();
  tornDown_ = false;
}

void Context::teardown() {
  if (tornDown_) return;
  tornDown_ = true;
  // Order matters: pending work may use modules and memory.
  if (streams_) streams_->teardown();
  if (modules_) modules_->teardown();
  if (memory_) memory_->teardown();
  std::map<void*, StorageEntry> storage;
  {
    std::lock_guard lock(storageMutex_);
    storage.swap(storage_);
  }
  for (auto& [key, entry] : storage)
    if (entry.destructor) entry.destructor(apiHandle(), key, entry.value);
}

CUresult Context::synchronize() {
  if (CUresult capturing = streams_->refuseDuringCapture()) return capturing;
  CUresult drained = streams_->synchronize();
  afterHostSynchronize();
  return drained != CUDA_SUCCESS ? drained : stickyError();
}

void Context::afterHostSynchronize() {
  modules_->flushPrintf();
  releasePoolMemoryAtSynchronize(device_.ordinal());
}

CUresult Context::limit(CUlimit which, size_t& value) const {
  const DeviceProfile& profile = device_.profile();
  switch (which) {
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
      // Devices of compute capability 9.0 and later have no device-side synchronisation.
      if (profile.ccMajor >= 9) return CUDA_ERROR_UNSUPPORTED_LIMIT;
      break;
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
      return CUDA_ERROR_UNSUPPORTED_LIMIT;  // only CIG contexts have it; cuemu creates none
    default:
      if (static_cast<unsigned>(which) >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard lock(settingsMutex_);
  value = limits_[which];
  return CUDA_SUCCESS;
}

CUresult Context::setLimit(CUlimit which, size_t value) {
  const DeviceProfile& profile = device_.profile();
  switch (which) {
    case CU_LIMIT_STACK_SIZE:
      if (value >= kMaxStackSize) return CUDA_ERROR_INVALID_VALUE;
      value = (value + kStackGranularity - 1) / kStackGranularity * kStackGranularity;
      break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: value = std::clamp(value, kMinPrintfFifoSize, kMaxPrintfFifoSize); break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: {
      auto maxHeap =
          static_cast<size_t>(static_cast<double>(AddressSpace::capacity(device_.ordinal())) * kMaxMallocHeapShare);
      value = std::clamp(value, kMinMallocHeapSize, std::max(maxHeap, kMinMallocHeapSize));
      break;
    }
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: break;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
      if (profile.ccMajor >= 9) return CUDA_ERROR_UNSUPPORTED_LIMIT;
      break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
      // A hint: values above the documented range are clamped.
      value = std::min(value, kMaxL2FetchGranularity);
      break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
      value = std::min(value, static_cast<size_t>(profile.maxPersistingL2Bytes()));
      break;
    case CU_LIMIT_SHMEM_SIZE:
    case CU_LIMIT_CIG_ENABLED: return CUDA_ERROR_INVALID_VALUE;  // can only be queried
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: return CUDA_ERROR_UNSUPPORTED_LIMIT;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard lock(settingsMutex_);
  limits_[which] = value;
  return CUDA_SUCCESS;
}

CUresult Context::enablePeerAccess(const Context& peer) {
  std::lock_guard lock(settingsMutex_);
  if (!peers_.insert(peer.id()).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
}

CUresult Context::disablePeerAccess(const Context& peer) {
  std::lock_guard lock(settingsMutex_);
  if (peers_.erase(peer.id()) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return CUDA_SUCCESS;
}

bool Context::peerAccessEnabled(const Context& peer) const {
  std::lock_guard lock(settingsMutex_);
  return peers_.count(peer.id()) != 0;
}

void Context::storagePut(void* key, void* value, StorageDestructor destructor) {
  std::lock_guard lock(storageMutex_);
  storage_[key] = StorageEntry{value, destructor};
}

bool Context::storageGet(void* key, void*& value) {
  std::lock_guard lock(storageMutex_);
  auto it = storage_.find(key);
  if (it == storage_.end()) return false;
  value = it->second.value;
  return true;
}

bool Context::storageErase(void* key) {
  std::lock_guard lock(storageMutex_);
  return storage_.erase(key) != 0;
}

std::shared_ptr<Context> currentContext() {
  auto& stack = threadStack();
  return stack.empty() ? nullptr : stack.back();
}

void pushCurrentContext(std::shared_ptr<Context> context) { threadStack().push_back(std::move(context)); }

std::shared_ptr<Context> popCurrentContext() {
  auto& stack = threadStack();
  if (stack.empty()) return nullptr;
  auto top = std::move(stack.back());
  stack.pop_back();
  return top;
}

void setCurrentContext(std::shared_ptr<Context> context) {
  auto& stack = threadStack();
  if (!context) {
    if (!stack.empty()) stack.pop_back();
    return;
  }
  if (stack.empty())
    stack.push_back(std::move(context));
  else
    stack.back() = std::move(context);
}

void forgetContextOnThisThread(const Context& context) {
  auto& stack = threadStack();
  if (!stack.empty() && stack.back().get() == &context) stack.pop_back();
}

std::size_t contextStackDepth() { return threadStack().size(); }

Expected<std::shared_ptr<Context>> requireCurrentContext() {
  auto context = currentContext();
  if (!context) return makeError(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!context->isAlive())
    return makeError(CUDA_ERROR_CONTEXT_IS_DESTROYED, context->isPrimary()
                                                          ? "the current context is an inactive primary context"
                                                          : "the current context was destroyed");
  return context;
}

Expected<std::shared_ptr<Context>> resolveContext(CUcontext handle) {
  if (!handle) return requireCurrentContext();
  auto context = lookup<Context>(handle, CUDA_ERROR_INVALID_CONTEXT);
  if (!context) return context;
  if (!(*context)->isAlive()) return makeError(CUDA_ERROR_CONTEXT_IS_DESTROYED, "an inactive primary context");
  return context;
}

}  // namespace cuemu
