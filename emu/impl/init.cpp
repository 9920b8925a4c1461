// Initialization, version and error strings.
#include "api/impl.h"

#include "api/entry.h"
#include "core/checkpoint.h"
#include "core/driver.h"
#include "core/log.h"

#include <atomic>

namespace cuemu {

CUresult notSupported(ApiId id) {
  static std::atomic<bool> reported[kApiCount];
  if (!reported[static_cast<std::size_t>(id)].exchange(true))
    CUEMU_INFO("{} is not implemented by cuemu: returning CUDA_ERROR_NOT_SUPPORTED", apiInfo(id).name);
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult internalError(ApiId id, const char* what) {
  CUEMU_ERROR("internal error in {}: {}", apiInfo(id).name, what);
  return CUDA_ERROR_UNKNOWN;
}

namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* description;
};

constexpr ErrorText kErrors[] = {
#define CUEMU_RESULT(code, name, text) {CUresult(code), #name, text},
#include "generated/errors.def"
#undef CUEMU_RESULT
};

const ErrorText* findError(CUresult code) {
  for (const auto& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}

}  // namespace

const char* errorName(CUresult code) {
  const ErrorText* e = findError(code);
  return e ? e->name : nullptr;
}

namespace impl {

CUresult cuInit(unsigned int flags) {
  CUresult r = initializeDriver(flags);
  if (r == CUDA_SUCCESS) checkpoint::startService();  // another process may checkpoint this one from now on
  return r;
}

CUresult cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = reportedDriverVersion();
  return CUDA_SUCCESS;
}

// NVIDIA's driver crashes on a NULL output pointer here; cuemu answers CUDA_ERROR_INVALID_VALUE.
CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = findError(error);
  *pStr = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = findError(error);
  *pStr = e ? e->description : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace impl
}  // namespace cuemu
