// What every exported entry point does around its implementation: the cuInit check, the process-wide kernel
// fault (core/fault.h), tracing, and a barrier
// that keeps C++ exceptions from crossing the C ABI.
#pragma once

#include "api/api_table.h"
#include "api/trace.h"
#include "core/capture_mode.h"
#include "core/context_legacy.h"
#include "core/driver.h"
#include "core/fault.h"

#include <new>
#include <type_traits>

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

// A few entry points reject a NULL handle before they look at cuInit (measured on driver 580: conformance cases
// api.init.BeforeInit.*). The answer they give then, or CUDA_SUCCESS for every other entry point.
constexpr CUresult nullHandleAnswerBeforeInit(ApiId id) {
  switch (id) {
    case ApiId::cuCtxDestroy:
    case ApiId::cuCtxDestroy_v2:
      return CUDA_ERROR_INVALID_VALUE;
    case ApiId::cuEventDestroy:
    case ApiId::cuEventDestroy_v2:
    case ApiId::cuEventElapsedTime:
    case ApiId::cuEventElapsedTime_v2:
    case ApiId::cuEventQuery:
    case ApiId::cuEventSynchronize:
    case ApiId::cuFuncGetAttribute:
    case ApiId::cuLibraryUnload:
    case ApiId::cuStreamDestroy:
    case ApiId::cuStreamDestroy_v2:
      return CUDA_ERROR_INVALID_HANDLE;
    default:
      return CUDA_SUCCESS;
  }
}

template <typename T>
constexpr bool isNullObjectHandle(const T& value) {
  if constexpr (std::is_same_v<T, CUcontext> || std::is_same_v<T, CUevent> || std::is_same_v<T, CUstream> ||
                std::is_same_v<T, CUfunction> || std::is_same_v<T, CUlibrary>) {
    return value == nullptr;
  } else {
    return false;
  }
}

template <ApiId Id, typename... Args>
CUresult answerBeforeInit(const Args&... args) {
  constexpr CUresult nullAnswer = nullHandleAnswerBeforeInit(Id);
  if constexpr (nullAnswer != CUDA_SUCCESS) {
    if ((isNullObjectHandle(args) || ...)) return nullAnswer;
  }
  return CUDA_ERROR_NOT_INITIALIZED;
}


// Entry points that still answer after a kernel fault poisoned the process (core/fault.h): error strings and
// versions, device queries, the context stack, and releasing what the application holds. Measured on driver
// 580: cuCtxDestroy, cuCtxPushCurrent, cuCtxPopCurrent and cuGraphCreate succeed (a graph is a host object);
// cuCtxGetApiVersion and cuDevicePrimaryCtxReset too, since cudaDeviceReset, which calls both, succeeds after a
// fault; cuCtxCreate, cuDevicePrimaryCtxRetain, cuMemAlloc, cuEventCreate, cuStreamQuery, cuStreamDestroy and
// every synchronisation return the fault.
constexpr bool survivesProcessFault(ApiId id) {
  if (worksBeforeInit(id)) return true;
  switch (id) {
    case ApiId::cuDeviceGet:
    case ApiId::cuDeviceGetCount:
    case ApiId::cuDeviceGetName:
    case ApiId::cuDeviceGetUuid:
    case ApiId::cuDeviceGetUuid_v2:
    case ApiId::cuDeviceGetAttribute:
    case ApiId::cuDeviceTotalMem:
    case ApiId::cuDeviceTotalMem_v2:
    case ApiId::cuDeviceComputeCapability:
    case ApiId::cuDeviceGetProperties:
    case ApiId::cuDeviceGetPCIBusId:
    case ApiId::cuDeviceGetByPCIBusId:
    case ApiId::cuDevicePrimaryCtxGetState:
    case ApiId::cuCtxGetCurrent:
    case ApiId::cuCtxSetCurrent:
    case ApiId::cuCtxPushCurrent:
    case ApiId::cuCtxPushCurrent_v2:
    case ApiId::cuCtxPopCurrent:
    case ApiId::cuCtxPopCurrent_v2:
    case ApiId::cuCtxGetDevice:
    case ApiId::cuCtxGetDevice_v2:
    case ApiId::cuCtxGetApiVersion:
    case ApiId::cuCtxDestroy:
    case ApiId::cuCtxDestroy_v2:
    case ApiId::cuDevicePrimaryCtxRelease:
    case ApiId::cuDevicePrimaryCtxRelease_v2:
    case ApiId::cuDevicePrimaryCtxReset:
    case ApiId::cuDevicePrimaryCtxReset_v2:
    case ApiId::cuGraphCreate:
    case ApiId::cuGraphDestroy:
      return true;
    default:
      return false;
  }
}

// Potentially unsafe calls while a stream captures (they may synchronise implicitly): refused with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED during a global-mode capture (any thread) or a thread-local one of this
// thread, unless this thread chose the relaxed mode (cuThreadExchangeStreamCaptureMode).
constexpr bool unsafeDuringCapture(ApiId id) {
  switch (id) {
    case ApiId::cuMemAlloc_v2:
    case ApiId::cuMemAllocPitch_v2:
    case ApiId::cuMemAllocHost_v2:
    case ApiId::cuMemHostAlloc:
    case ApiId::cuMemAllocManaged:
    case ApiId::cuEventQuery:
    case ApiId::cuEventSynchronize:
      return true;
    default:
      return false;
  }
}

// The _v2 forms of the memory entry points that also exist in the original 32-bit form refuse a context made by
// the original cuCtxCreate (API version 3010) with CUDA_ERROR_INVALID_CONTEXT, as the 32-bit forms refuse every
// other context (measured on an H200, driver 580; emu/impl/memory_legacy.cpp). Unversioned entry points serve both.
constexpr bool refusesLegacyContext(ApiId id) {
  switch (id) {
    case ApiId::cuMemAlloc_v2:
    case ApiId::cuMemAllocPitch_v2:
    case ApiId::cuMemFree_v2:
    case ApiId::cuMemGetInfo_v2:
    case ApiId::cuMemGetAddressRange_v2:
    case ApiId::cuMemAllocHost_v2:
    case ApiId::cuMemHostGetDevicePointer_v2:
    case ApiId::cuMemcpyHtoD_v2:
    case ApiId::cuMemcpyHtoD_v2_ptds:
    case ApiId::cuMemcpyHtoDAsync_v2:
    case ApiId::cuMemcpyHtoDAsync_v2_ptsz:
    case ApiId::cuMemcpyDtoH_v2:
    case ApiId::cuMemcpyDtoH_v2_ptds:
    case ApiId::cuMemcpyDtoHAsync_v2:
    case ApiId::cuMemcpyDtoHAsync_v2_ptsz:
    case ApiId::cuMemcpyDtoD_v2:
    case ApiId::cuMemcpyDtoD_v2_ptds:
    case ApiId::cuMemcpyDtoDAsync_v2:
    case ApiId::cuMemcpyDtoDAsync_v2_ptsz:
    case ApiId::cuMemcpyDtoA_v2:
    case ApiId::cuMemcpyDtoA_v2_ptds:
    case ApiId::cuMemcpyAtoD_v2:
    case ApiId::cuMemcpyAtoD_v2_ptds:
    case ApiId::cuMemcpyHtoA_v2:
    case ApiId::cuMemcpyHtoA_v2_ptds:
    case ApiId::cuMemcpyHtoAAsync_v2:
    case ApiId::cuMemcpyHtoAAsync_v2_ptsz:
    case ApiId::cuMemcpyAtoH_v2:
    case ApiId::cuMemcpyAtoH_v2_ptds:
    case ApiId::cuMemcpyAtoHAsync_v2:
    case ApiId::cuMemcpyAtoHAsync_v2_ptsz:
    case ApiId::cuMemcpyAtoA_v2:
    case ApiId::cuMemcpyAtoA_v2_ptds:
    case ApiId::cuMemcpy2D_v2:
    case ApiId::cuMemcpy2D_v2_ptds:
    case ApiId::cuMemcpy2DUnaligned_v2:
    case ApiId::cuMemcpy2DUnaligned_v2_ptds:
    case ApiId::cuMemcpy2DAsync_v2:
    case ApiId::cuMemcpy2DAsync_v2_ptsz:
    case ApiId::cuMemcpy3D_v2:
    case ApiId::cuMemcpy3D_v2_ptds:
    case ApiId::cuMemcpy3DAsync_v2:
    case ApiId::cuMemcpy3DAsync_v2_ptsz:
    case ApiId::cuMemsetD8_v2:
    case ApiId::cuMemsetD8_v2_ptds:
    case ApiId::cuMemsetD16_v2:
    case ApiId::cuMemsetD16_v2_ptds:
    case ApiId::cuMemsetD32_v2:
    case ApiId::cuMemsetD32_v2_ptds:
    case ApiId::cuMemsetD2D8_v2:
    case ApiId::cuMemsetD2D8_v2_ptds:
    case ApiId::cuMemsetD2D16_v2:
    case ApiId::cuMemsetD2D16_v2_ptds:
    case ApiId::cuMemsetD2D32_v2:
    case ApiId::cuMemsetD2D32_v2_ptds:
    case ApiId::cuArrayCreate_v2:
    case ApiId::cuArray3DCreate_v2:
    case ApiId::cuArrayGetDescriptor_v2:
    case ApiId::cuArray3DGetDescriptor_v2:
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
    result = answerBeforeInit<Id>(args...);
  } else if (CUresult fault = processFault(); fault != CUDA_SUCCESS && !survivesProcessFault(Id)) [[unlikely]] {
    result = fault;
  } else if (unsafeDuringCapture(Id) && unsafeCallRefusedDuringCapture()) [[unlikely]] {
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  } else if (refusesLegacyContext(Id) && currentContextIsLegacy()) [[unlikely]] {
    result = CUDA_ERROR_INVALID_CONTEXT;
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
