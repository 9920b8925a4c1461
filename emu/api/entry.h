// What every exported entry point does around its implementation: the cuInit check, tracing, and a barrier
// that keeps C++ exceptions from crossing the C ABI.
#pragma once

#include "api/api_table.h"
#include "api/trace.h"
#include "core/driver.h"

#include <new>

namespace cuemu {

// Entry points that answer before cuInit, as NVIDIA's driver does (recorded in emu/api/recorded/preinit.txt).
constexpr bool worksBeforeInit(ApiId id) {
  switch (id) {
    case ApiId::cuInit:
    case ApiId::cuDriverGetVersion:
    case ApiId::cuGetErrorName:
    case ApiId::cuGetErrorString:
    case ApiId::cuGetProcAddress:
    case ApiId::cuGetProcAddress_v2:
    case ApiId::cuGetExportTable:
      return true;
    default:
      return false;
  }
}

// The answer of an entry point that cuemu does not implement (logged once per entry point).
CUresult notSupported(ApiId id);
// An exception escaped an implementation: report it, never let it cross the C ABI.
CUresult internalError(ApiId id, const char* what);

template <ApiId Id, typename Impl, typename... Args>
inline CUresult runEntry(const char* argNames, Impl&& impl, Args... args) noexcept {
  CUresult result;
  if (!worksBeforeInit(Id) && !driverInitialized()) [[unlikely]] {
    result = CUDA_ERROR_NOT_INITIALIZED;
  } else {
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
  if (trace::on()) [[unlikely]] {
    try {
      trace::call(Id, argNames, result, args...);
    } catch (...) {
    }
  }
  return result;
}

}  // namespace cuemu
