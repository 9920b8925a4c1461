// The driver's view of the CUDA headers: every ABI name literally (no versioned-name macros), so the
// library can define each exported symbol, legacy and per-thread forms included.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
#include <cudaProfiler.h>

// Interop entry points take window-system types; cuemu only needs ABI-equivalent spellings for them
// (tools/gen-api/gen_api.py maps the types when it writes entries.def).
struct CUeglFrameOpaque {
  unsigned char bytes[1];
};
