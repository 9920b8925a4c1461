// Declarations of every implemented entry point, cuemu::impl::<exported name>, with the exported signature.
// Implementations live in emu/impl/<area>.cpp; the entry-point layer (api/entries.cpp) calls them.
#pragma once

#include "api/cuda_internal.h"

namespace cuemu::impl {
#define CUEMU_ENTRY(status, family, name, params, args, policy, target) CUEMU_IMPL_DECL_##status(name, params)
#define CUEMU_IMPL_DECL_IMPL(name, params) CUresult name params;
#define CUEMU_IMPL_DECL_STUB(name, params)
#define CUEMU_IMPL_DECL_PT(name, params)
#include "generated/entries.def"
#undef CUEMU_ENTRY
#undef CUEMU_IMPL_DECL_IMPL
#undef CUEMU_IMPL_DECL_STUB
#undef CUEMU_IMPL_DECL_PT

// cuemu's own extensions (include/cuemu.h), exported by api/extensions.cpp.
CUresult cuemuSetDeterministic(int enabled);
CUresult cuemuGetDeterministic(int* enabled);
CUresult cuemuGetVersion(int* major, int* minor, int* patch);
CUresult cuemuDeviceGetMemoryInfo(size_t* free, size_t* total, CUdevice dev);
CUresult cuemuDeviceGetPcieLink(int* generation, int* width, CUdevice dev);
}  // namespace cuemu::impl
