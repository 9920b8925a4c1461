// Contexts: the container of everything a CUDA program creates on a device, and the per-thread stack of
// current contexts. Each API area keeps its per-context state in its own part (memory, streams, modules),
// declared by that area's header and torn down in a fixed order when the context is destroyed.
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace cuemu {

class Device;
class ContextMemory;   // emu/core/memory.h
class ContextStreams;  // emu/core/stream.h
class ContextModules;  // emu/core/module.h

class Context : public std::enable_shared_from_this<Context> {
 public:
  static constexpr HandleKind kKind = HandleKind::Context;

  Context(Device& device, unsigned flags, bool primary);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Device& device() const { return device_; }
  bool isPrimary() const { return primary_; }
  uint64_t handle() const { return handle_; }
  CUcontext apiHandle() const { return toApiHandle<CUcontext>(handle_); }
  unsigned long long id() const { return id_; }
  unsigned flags() const { return flags_.load(std::memory_order_relaxed); }
  void setFlags(unsigned flags) { flags_.store(flags, std::memory_order_relaxed); }

  // An error from asynchronous work (a kernel fault) sticks to the context: every later call that
  // synchronises or launches returns it, until the context is destroyed (or the primary context reset).
  CUresult stickyError() const { return sticky_.load(std::memory_order_acquire); }
  void setStickyError(CUresult error);

  ContextMemory& memory() { return *memory_; }
  ContextStreams& streams() { return *streams_; }
  ContextModules& modules() { return *modules_; }

  // Context-local storage used by the CUDA runtime (export table c693336e...): destructors run at teardown.
  using StorageDestructor = void (*)(CUcontext, void* key, void* value);
  void storagePut(void* key, void* value, StorageDestructor destructor);
  bool storageGet(void* key, void*& value);
  bool storageErase(void* key);

  // Registers the context in the handle table (once, after construction).
  void registerHandle();
  // Frees everything the context owns (streams drained first, then modules, then memory) and runs the
  // context-local storage destructors. Idempotent. The handle stays valid for primary contexts.
  void teardown();
  // Creates fresh per-area state after teardown (primary context reuse).
  void reinitialize();

 private:
  Device& device_;
  const bool primary_;
  uint64_t handle_ = 0;
  unsigned long long id_;
  std::atomic<unsigned> flags_;
  std::atomic<CUresult> sticky_{CUDA_SUCCESS};
  std::unique_ptr<ContextMemory> memory_;
  std::unique_ptr<ContextStreams> streams_;
  std::unique_ptr<ContextModules> modules_;
  std::mutex storageMutex_;
  struct StorageEntry {
    void* value;
    StorageDestructor destructor;
  };
  std::map<void*, StorageEntry> storage_;
};

HandleTable<Context>& contextTable();

// The live context behind an API handle, or null.
std::shared_ptr<Context> findContext(CUcontext handle);

// This thread's context stack. The top is the current context.
std::shared_ptr<Context> currentContext();
void pushCurrentContext(std::shared_ptr<Context> context);
std::shared_ptr<Context> popCurrentContext();
// Replaces the top (cuCtxSetCurrent); a null context pops it.
void setCurrentContext(std::shared_ptr<Context> context);
// Removes a destroyed context from this thread's stack (other threads find it stale on their next use).
void forgetContextOnThisThread(const Context& context);

// The calling thread's current context, or the error the API returns when there is none
// (CUDA_ERROR_INVALID_CONTEXT), or the sticky error of a context that has one when `checkSticky` is set.
Expected<std::shared_ptr<Context>> requireCurrentContext();

}  // namespace cuemu
