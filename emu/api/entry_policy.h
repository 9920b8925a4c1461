// What the entry layer (api/entry.h) does around each exported entry point, read from the policy and status
// columns of generated/entries.def: the table is the only place that says which entry points answer before
// cuInit, survive a kernel fault, are refused during a stream capture or in a legacy context, or default to the
// per-thread stream.
#pragma once

#include "api/api_table.h"

namespace cuemu {

namespace entry_policy {
enum : unsigned {
  None = 0,
  // Answers before cuInit, as driver 580 does (recorded in emu/api/recorded/preinit.txt), and after a kernel fault.
  BeforeInit = 1u << 0,
  // Before cuInit a NULL object handle is refused with this code instead of NOT_INITIALIZED (driver 580:
  // conformance cases api.init.BeforeInit.*).
  NullBeforeInitInvalidValue = 1u << 1,
  NullBeforeInitInvalidHandle = 1u << 2,
  // Still answers after a kernel fault poisoned the process (core/fault.h). Driver 580: error strings and
  // versions, device queries, the context stack and releasing what the application holds; cuCtxGetApiVersion and
  // cuDevicePrimaryCtxReset too (cudaDeviceReset calls both after a fault); a graph is a host object.
  SurvivesFault = 1u << 3,
  // May synchronise implicitly: refused with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED during a global-mode capture
  // (any thread) or a thread-local one of this thread, unless this thread chose the relaxed mode.
  UnsafeInCapture = 1u << 4,
  // A _v2 form of an entry point that also exists in the original 32-bit form: it refuses a context made by the
  // original cuCtxCreate (API version 3010) with CUDA_ERROR_INVALID_CONTEXT, as the 32-bit forms refuse every other
  // context (driver 580, measured on an H200; emu/impl/memory_legacy.cpp).
  RefusesLegacyContext = 1u << 5,
  // Status PT: a _ptsz/_ptds form, run with the per-thread stream as the default stream (core/stream_lookup.h).
  PerThreadDefaultStream = 1u << 6,
};
}  // namespace entry_policy

namespace detail {
using namespace entry_policy;
#define CUEMU_STATUS_POLICY_IMPL None
#define CUEMU_STATUS_POLICY_STUB None
#define CUEMU_STATUS_POLICY_PT PerThreadDefaultStream
#define CUEMU_ENTRY(status, family, name, params, args, policy, target) unsigned(policy) | CUEMU_STATUS_POLICY_##status,
inline constexpr unsigned kEntryPolicies[] = {
#include "generated/entries.def"
};
#undef CUEMU_ENTRY
#undef CUEMU_STATUS_POLICY_IMPL
#undef CUEMU_STATUS_POLICY_STUB
#undef CUEMU_STATUS_POLICY_PT
static_assert(sizeof(kEntryPolicies) / sizeof(kEntryPolicies[0]) == kApiCount, "one policy per exported symbol");
}  // namespace detail

constexpr bool hasPolicy(ApiId id, unsigned policy) {
  return (detail::kEntryPolicies[static_cast<std::size_t>(id)] & policy) != 0;
}

}  // namespace cuemu
