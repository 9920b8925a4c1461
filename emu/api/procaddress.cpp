// cuGetProcAddress: which exported function answers a (symbol, requested CUDA version, flags) request.
// The answers are NVIDIA driver 580's, recorded on a GPU (tools/gpu-record) and compiled into
// generated/procaddress.def; this file only searches that table.
#include "api/impl.h"
#include "core/driver.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string_view>

// Every export, declared from the same table (the interop ones are in no header cuemu includes).
#define CUEMU_ENTRY(status, family, name, params, args, policy, target) extern "C" CUresult name params;
#include "generated/entries.def"
#undef CUEMU_ENTRY

namespace cuemu {
namespace {

struct ProcRow {
  std::string_view symbol;
  bool perThread;
  int firstVersion;
  void* function;
};

#define CUEMU_PROC(symbol, perThread, version, export) \
  ProcRow{symbol, perThread != 0, version, reinterpret_cast<void*>(&::export)},
const ProcRow kRows[] = {
#include "generated/procaddress.def"
};
#undef CUEMU_PROC

constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

struct Lookup {
  CUresult result;
  CUdriverProcAddressQueryResult status;
  void* function;
};

Lookup lookup(const char* symbol, int version, cuuint64_t flags) {
  if (version > reportedDriverVersion() || (flags & ~kKnownFlags))
    return {CUDA_ERROR_INVALID_VALUE, CU_GET_PROC_ADDRESS_SUCCESS, nullptr};
  const bool perThread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  std::string_view name(symbol);
  // Rows are sorted by symbol, then flag, then version (the generator emits them sorted).
  auto [first, last] = std::equal_range(std::begin(kRows), std::end(kRows), name, [](const auto& a, const auto& b) {
    if constexpr (std::is_same_v<std::decay_t<decltype(a)>, ProcRow>)
      return a.symbol < b;
    else
      return a < b.symbol;
  });
  if (first == last) return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, nullptr};
  void* best = nullptr;
  for (auto it = first; it != last; ++it)
    if (it->perThread == perThread && it->firstVersion <= version) best = it->function;
  if (!best) return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, nullptr};
  return {CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, best};
}

CUresult getProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult* status) {
  // NVIDIA's driver crashes on a NULL symbol or output; cuemu answers CUDA_ERROR_INVALID_VALUE.
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  Lookup found = lookup(symbol, version, flags);
  *pfn = found.function;
  if (found.result != CUDA_SUCCESS) return found.result;
  if (status) *status = found.status;
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

// The original form has no status output: a symbol it cannot hand back is CUDA_ERROR_NOT_FOUND (the _v2 form
// answers CUDA_SUCCESS with a NULL function there, measured on driver 580).
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  CUresult result = getProcAddress(symbol, pfn, cudaVersion, flags, nullptr);
  return result == CUDA_SUCCESS && !*pfn ? CUDA_ERROR_NOT_FOUND : result;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
  return getProcAddress(symbol, pfn, cudaVersion, flags, symbolStatus);
}

}  // namespace impl
}  // namespace cuemu
