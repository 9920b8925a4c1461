#include "core/context.h"

#include "core/device.h"
#include "core/memory.h"
#include "core/module.h"
#include "core/stream.h"

#include <algorithm>
#include <vector>

namespace cuemu {
namespace {

std::atomic<unsigned long long> g_nextContextId{1};

// The per-thread stack. Holding shared_ptrs keeps a context object alive while it is current somewhere;
// a destroyed context is detected through its handle no longer being in the table.
std::vector<std::shared_ptr<Context>>& threadStack() {
  thread_local std::vector<std::shared_ptr<Context>> stack;
  return stack;
}

}  // namespace

Context::Context(Device& device, unsigned flags, bool primary)
    : device_(device), primary_(primary), id_(g_nextContextId.fetch_add(1)), flags_(flags) {
  reinitialize();
}

Context::~Context() { teardown(); }

void Context::registerHandle() {
  if (!handle_) handle_ = contextTable().insert(shared_from_this());
}

void Context::setStickyError(CUresult error) {
  CUresult expected = CUDA_SUCCESS;
  sticky_.compare_exchange_strong(expected, error, std::memory_order_acq_rel);
}

void Context::reinitialize() {
  memory_ = std::make_unique<ContextMemory>(*this);
  streams_ = std::make_unique<ContextStreams>(*this);
  modules_ = std::make_unique<ContextModules>(*this);
  sticky_.store(CUDA_SUCCESS, std::memory_order_release);
}

void Context::teardown() {
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

HandleTable<Context>& contextTable() {
  static auto* table = new HandleTable<Context>;  // never destroyed: used during process exit
  return *table;
}

std::shared_ptr<Context> findContext(CUcontext handle) { return contextTable().find(handleValue(handle)); }

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
  stack.erase(std::remove_if(stack.begin(), stack.end(), [&](const auto& c) { return c.get() == &context; }),
              stack.end());
}

Expected<std::shared_ptr<Context>> requireCurrentContext() {
  auto context = currentContext();
  if (!context) return makeError(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!contextTable().find(context->handle()))
    return makeError(CUDA_ERROR_CONTEXT_IS_DESTROYED, "the current context was destroyed");
  return context;
}

}  // namespace cuemu
