// Contexts: the container of everything a CUDA program creates on a device, and the per-thread stack of
// current contexts. Each API area keeps its per-context state in its own part (memory, streams, modules),
// declared by that area's header and torn down in a fixed order when the context is destroyed.
#pragma once

#include "api/cuda_internal.h"
#include "core/fault.h"
#include "core/handle.h"
#include "core/result.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace cuemu {

class Device;
class ContextMemory;   // emu/core/memory.h
class ContextStreams;  // emu/core/stream.h
class ContextModules;  // emu/core/module.h

// What cuCtxGetApiVersion answers: contexts made by the _v2-and-later entry points (and primary contexts)
// report 3020, those made by the original cuCtxCreate 3010.
inline constexpr unsigned kContextApiVersion = 3020;
inline constexpr unsigned kLegacyContextApiVersion = 3010;

class Context : public std::enable_shared_from_this<Context> {
 public:
  static constexpr HandleKind kKind = HandleKind::Context;

  Context(Device& device, unsigned flags, bool primary, unsigned apiVersion = kContextApiVersion);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Device& device() const { return device_; }
  bool isPrimary() const { return primary_; }
  uint64_t handle() const { return handle_; }
  CUcontext apiHandle() const { return toApiHandle<CUcontext>(handle_); }
  unsigned long long id() const { return id_.load(std::memory_order_relaxed); }
  unsigned apiVersion() const { return apiVersion_; }
  // The flags as given at creation or by cuCtxSetFlags / cuDevicePrimaryCtxSetFlags.
  unsigned flags() const { return flags_.load(std::memory_order_relaxed); }
  // cuCtxGetFlags adds CU_CTX_MAP_HOST (mapped pinned memory is always available) except for contexts made by
  // cuCtxCreate_v4, which report their flags exactly (driver 580 on an H100).
  bool reportsMapHost() const { return reportsMapHost_; }
  void setReportsMapHost(bool reports) { reportsMapHost_ = reports; }
  void setFlags(unsigned flags) { flags_.store(flags, std::memory_order_relaxed); }

  // A context is alive from creation until cuCtxDestroy; a primary context while it is retained and not
  // reset. A thread whose current context is not alive gets CUDA_ERROR_CONTEXT_IS_DESTROYED.
  bool isAlive() const { return alive_.load(std::memory_order_acquire); }
  void setAlive(bool alive) { alive_.store(alive, std::memory_order_release); }

  // An error from asynchronous work (a kernel fault) sticks: on NVIDIA's driver it poisons the whole process,
  // this context and all others (core/fault.h), so the state is process-wide.
  CUresult stickyError() const { return processFault(); }
  void setStickyError(CUresult error) { raiseProcessFault(error); }

  ContextMemory& memory() { return *memory_; }
  ContextStreams& streams() { return *streams_; }
  ContextModules& modules() { return *modules_; }

  // Waits for all work of the context (cuCtxSynchronize), then does what every host synchronisation does
  // (afterHostSynchronize); returns the sticky error, if any.
  CUresult synchronize();
  // What a synchronisation the application asks for (stream, event or context) does once the work it waited for
  // is done: device printf output appears, and stream-ordered pools release memory above their thresholds.
  void afterHostSynchronize();

  // Limits (cuCtxGetLimit/cuCtxSetLimit), with the answers NVIDIA's driver gives on the modelled part.
  CUresult limit(CUlimit which, size_t& value) const;
  CUresult setLimit(CUlimit which, size_t value);

  CUfunc_cache cacheConfig() const { return cacheConfig_.load(std::memory_order_relaxed); }
  void setCacheConfig(CUfunc_cache config) { cacheConfig_.store(config, std::memory_order_relaxed); }
  CUsharedconfig sharedMemConfig() const { return sharedConfig_.load(std::memory_order_relaxed); }
  void setSharedMemConfig(CUsharedconfig config) { sharedConfig_.store(config, std::memory_order_relaxed); }

  // SMs the context may use (execution affinity); the whole device unless created with a smaller share.
  int smCount() const { return smCount_.load(std::memory_order_relaxed); }
  void setSmCount(int count) { smCount_.store(count, std::memory_order_relaxed); }

  // The green context this context belongs to (its handle value), or 0 for an ordinary context.
  uint64_t greenHandle() const { return greenHandle_.load(std::memory_order_relaxed); }
  void setGreenHandle(uint64_t handle) { greenHandle_.store(handle, std::memory_order_relaxed); }

  // Legacy cuCtxAttach/cuCtxDetach usage count (1 at creation). detach() returns the count left.
  void attach() { usage_.fetch_add(1, std::memory_order_relaxed); }
  unsigned detach() { return usage_.fetch_sub(1, std::memory_order_acq_rel) - 1; }

  // Peer access from this context to allocations of `peer` (cuCtxEnablePeerAccess/DisablePeerAccess).
  // Contexts are identified by id, so a destroyed peer never matches a new one.
  CUresult enablePeerAccess(const Context& peer);
  CUresult disablePeerAccess(const Context& peer);
  bool peerAccessEnabled(const Context& peer) const;

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
  // Creates fresh per-area state after teardown (primary context reuse): new id, default limits and
  // configuration, no peers (a kernel fault is process-wide and survives this).
  void reinitialize();
  bool tornDown() const { return tornDown_; }

 private:
  void resetSettings();

  Device& device_;
  const bool primary_;
  const unsigned apiVersion_;
  uint64_t handle_ = 0;
  std::atomic<unsigned long long> id_;
  std::atomic<unsigned> flags_;
  bool reportsMapHost_ = true;  // set before the handle is published
  std::atomic<bool> alive_{true};
  std::atomic<unsigned> usage_{1};
  std::atomic<CUfunc_cache> cacheConfig_{CU_FUNC_CACHE_PREFER_NONE};
  std::atomic<CUsharedconfig> sharedConfig_{CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE};
  std::atomic<int> smCount_{0};
  std::atomic<uint64_t> greenHandle_{0};
  bool tornDown_ = false;
  std::unique_ptr<ContextMemory> memory_;
  std::unique_ptr<ContextStreams> streams_;
  std::unique_ptr<ContextModules> modules_;

  mutable std::mutex settingsMutex_;
  std::array<size_t, CU_LIMIT_MAX> limits_{};
  std::set<unsigned long long> peers_;

  std::mutex storageMutex_;
  struct StorageEntry {
    void* value;
    StorageDestructor destructor;
  };
  std::map<void*, StorageEntry> storage_;
};

// The registered context behind an API handle (alive or not: an inactive primary context is found), or null.

// This thread's context stack. The top is the current context.
std::shared_ptr<Context> currentContext();
void pushCurrentContext(std::shared_ptr<Context> context);
std::shared_ptr<Context> popCurrentContext();
// Replaces the top (cuCtxSetCurrent); a null context pops it.
void setCurrentContext(std::shared_ptr<Context> context);
// Pops a destroyed context if it is this thread's current one (as cuCtxDestroy does); other threads and
// deeper stack entries keep it and find it destroyed on their next use.
void forgetContextOnThisThread(const Context& context);
// Number of contexts on this thread's stack (tests).
std::size_t contextStackDepth();

// The calling thread's current context, or the error the API returns when there is none
// (CUDA_ERROR_INVALID_CONTEXT) or when it was destroyed or is an inactive primary context
// (CUDA_ERROR_CONTEXT_IS_DESTROYED).
Expected<std::shared_ptr<Context>> requireCurrentContext();

// The context an entry point with a CUcontext argument works on: the current context for NULL, otherwise
// the live context behind the handle (CUDA_ERROR_INVALID_CONTEXT for a stale or foreign handle,
// CUDA_ERROR_CONTEXT_IS_DESTROYED for an inactive primary context).
Expected<std::shared_ptr<Context>> resolveContext(CUcontext handle);

}  // namespace cuemu
