// What every exported entry point does around its implementation, as its row of generated/entries.def says
// (api/entry_policy.h): the cuInit check, the process-wide kernel fault (core/fault.h), refusals during a capture
// or in a legacy context, the default stream, tracing, and a barrier that keeps C++ exceptions from crossing the
// C ABI.
#pragma once

#include "api/api_table.h"
#include "api/entry_policy.h"
#include "api/trace.h"
#include "core/capture_mode.h"
#include "core/checkers.h"
#include "core/checkpoint.h"
#include "core/context_legacy.h"
#include "core/driver.h"
#include "core/fault.h"
#include "core/stream_lookup.h"
#include "core/timeline.h"

#include <new>
#include <type_traits>

namespace cuemu {

template <typename T> constexpr bool isNullObjectHandle(const T& value) {
  if constexpr (std::is_same_v<T, CUcontext> || std::is_same_v<T, CUevent> || std::is_same_v<T, CUstream> ||
                std::is_same_v<T, CUfunction> || std::is_same_v<T, CUlibrary>) {
    return value == nullptr;
  } else {
    return false;
  }
}

// Before cuInit: the answer of an entry point without BeforeInit. A few reject a NULL handle first.
template <ApiId Id, typename... Args> CUresult answerBeforeInit(const Args&... args) {
  constexpr CUresult nullAnswer = hasPolicy(Id, entry_policy::NullBeforeInitInvalidValue)    ? CUDA_ERROR_INVALID_VALUE
                                  : hasPolicy(Id, entry_policy::NullBeforeInitInvalidHandle) ? CUDA_ERROR_INVALID_HANDLE
                                                                                             : CUDA_SUCCESS;
  if constexpr (nullAnswer != CUDA_SUCCESS) {
    if ((isNullObjectHandle(args) || ...)) return nullAnswer;
  }
  return CUDA_ERROR_NOT_INITIALIZED;
}

constexpr bool isCheckpointEntry(ApiId id) {
  return id == ApiId::cuCheckpointProcessGetState || id == ApiId::cuCheckpointProcessGetRestoreThreadId ||
         id == ApiId::cuCheckpointProcessLock || id == ApiId::cuCheckpointProcessCheckpoint ||
         id == ApiId::cuCheckpointProcessRestore || id == ApiId::cuCheckpointProcessUnlock;
}

// The answer of an entry point that cuemu does not implement (logged once per entry point).
CUresult notSupported(ApiId id);
// An exception escaped an implementation: report it, never let it cross the C ABI.
CUresult internalError(ApiId id, const char* what);

template <ApiId Id, typename Impl, typename... Args>
inline CUresult runEntry(const char* argNames, Impl&& impl, Args... args) noexcept {
  CUresult result;
  using namespace entry_policy;
  const bool timed = timeline::on();
  uint64_t startNs = 0;
  const char* outerCall = nullptr;
  if (timed) [[unlikely]] {
    startNs = timeline::nowNs();
    outerCall = timeline::setCurrentCall(apiInfo(Id).name.data());
  }
  // A process locked for a checkpoint (core/checkpoint.h) takes no calls but the checkpoint entry points.
  if constexpr (!isCheckpointEntry(Id)) checkpoint::waitWhileLocked();
  if (!hasPolicy(Id, BeforeInit) && !driverInitialized()) [[unlikely]] {
    result = answerBeforeInit<Id>(args...);
  } else if (CUresult fault = processFault(); fault != CUDA_SUCCESS && !hasPolicy(Id, SurvivesFault | BeforeInit))
      [[unlikely]] {
    result = fault;
  } else if (hasPolicy(Id, UnsafeInCapture) && unsafeCallRefusedDuringCapture()) [[unlikely]] {
    result = refuseUnsafeCallDuringCapture();
  } else if (hasPolicy(Id, RefusesLegacyContext) && currentContextIsLegacy()) [[unlikely]] {
    result = CUDA_ERROR_INVALID_CONTEXT;
  } else {
    DefaultStreamScope defaultStream(hasPolicy(Id, PerThreadDefaultStream));
    try {
      result = impl(args...);
    } catch (const std::bad_alloc&) {
      result = CUDA_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
      result = internalError(Id, e.what());
    } catch (...) {
      result = internalError(Id, "unknown exception");
    }
  }
  if (timed) [[unlikely]] {
    timeline::apiCall(apiInfo(Id).name, startNs, timeline::nowNs(), result);
    timeline::setCurrentCall(outerCall);
  }
  if (checkers::on()) [[unlikely]]
    checkers::afterCall<Id>(result, args...);
  if (trace::on()) [[unlikely]] {
    try {
      trace::call(Id, argNames, result, args...);
    } catch (...) {}
  }
  return result;
}

}  // namespace cuemu
