// Every exported cu* symbol, generated from generated/entries.def. An implemented entry forwards to
// cuemu::impl::<name>, a _ptsz/_ptds form to the implementation of its plain form; a stub answers
// CUDA_ERROR_NOT_SUPPORTED. Both go through runEntry (cuInit check,
// tracing, exception barrier). Exports are listed in a version script built from the same table.
#include "api/impl.h"

#include "api/entry.h"
#include "core/fatbin.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define CUEMU_EXPORT extern "C" __attribute__((visibility("default")))
#define CUEMU_UNPAREN(...) __VA_ARGS__
#define CUEMU_ENTRY(status, family, name, params, args, policy, target) CUEMU_ENTRY_##status(name, params, args, target)
// (tlEntryCaller: which binary called, for messages about the images it hands the driver)
#define CUEMU_ENTRY_IMPL(name, params, args, target)                                                 \
  CUEMU_EXPORT CUresult name params {                                                                \
    ::cuemu::tlEntryCaller = __builtin_return_address(0);                                            \
    return ::cuemu::runEntry<::cuemu::ApiId::name>(#args, ::cuemu::impl::name CUEMU_CALL_ARGS args); \
  }
// A per-thread-default-stream form runs its plain form's implementation; runEntry sets the default stream.
#define CUEMU_ENTRY_PT(name, params, args, target)                                                     \
  CUEMU_EXPORT CUresult name params {                                                                  \
    ::cuemu::tlEntryCaller = __builtin_return_address(0);                                              \
    return ::cuemu::runEntry<::cuemu::ApiId::name>(#args, ::cuemu::impl::target CUEMU_CALL_ARGS args); \
  }
#define CUEMU_CALL_ARGS(...) __VA_OPT__(, ) __VA_ARGS__
#define CUEMU_ENTRY_STUB(name, params, args, target)                                                      \
  CUEMU_EXPORT CUresult name params {                                                                     \
    return ::cuemu::runEntry<::cuemu::ApiId::name>(                                                       \
        #args, [](auto...) { return ::cuemu::notSupported(::cuemu::ApiId::name); } CUEMU_CALL_ARGS args); \
  }
#include "generated/entries.def"
