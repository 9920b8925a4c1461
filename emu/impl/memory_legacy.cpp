// The original 32-bit memory entry points (cuMemAlloc, cuMemcpyHtoD, ... without _v2), kept by the driver for
// programs built before CUDA 3.2: device pointers are CUdeviceptr_v1 (32 bits) and sizes unsigned int.
// Allocations made through them come from a range below 4 GiB, so the pointer they return is the real one;
// every other form converts its arguments and runs the _v2 entry point. A device pointer above 4 GiB (memory
// from the 64-bit entry points) cannot be expressed and is CUDA_ERROR_NOT_SUPPORTED where one is returned.
// Like driver 580 (measured on an H200), these entry points only serve a context made by the original
// cuCtxCreate (API version 3010): in any other context, or with none, they answer CUDA_ERROR_INVALID_CONTEXT
// before looking at their arguments.
#include "api/impl.h"

#include "core/device.h"
#include "core/limits.h"
#include "core/memory.h"
#include "impl/memory_internal.h"

#include <algorithm>
#include <climits>

namespace cuemu {
namespace {

using limits::kPitchAlignment;

CUresult storePointer(CUdeviceptr_v1* out, CUdeviceptr value) {
  if (value > UINT_MAX) return CUDA_ERROR_NOT_SUPPORTED;
  *out = static_cast<CUdeviceptr_v1>(value);
  return CUDA_SUCCESS;
}

CUDA_MEMCPY2D widen(const CUDA_MEMCPY2D_v1& c) {
  CUDA_MEMCPY2D w{};
  w.srcXInBytes = c.srcXInBytes;
  w.srcY = c.srcY;
  w.srcMemoryType = c.srcMemoryType;
  w.srcHost = c.srcHost;
  w.srcDevice = c.srcDevice;
  w.srcArray = c.srcArray;
  w.srcPitch = c.srcPitch;
  w.dstXInBytes = c.dstXInBytes;
  w.dstY = c.dstY;
  w.dstMemoryType = c.dstMemoryType;
  w.dstHost = c.dstHost;
  w.dstDevice = c.dstDevice;
  w.dstArray = c.dstArray;
  w.dstPitch = c.dstPitch;
  w.WidthInBytes = c.WidthInBytes;
  w.Height = c.Height;
  return w;
}

CUDA_MEMCPY3D widen(const CUDA_MEMCPY3D_v1& c) {
  CUDA_MEMCPY3D w{};
  w.srcXInBytes = c.srcXInBytes;
  w.srcY = c.srcY;
  w.srcZ = c.srcZ;
  w.srcLOD = c.srcLOD;
  w.srcMemoryType = c.srcMemoryType;
  w.srcHost = c.srcHost;
  w.srcDevice = c.srcDevice;
  w.srcArray = c.srcArray;
  w.reserved0 = c.reserved0;
  w.srcPitch = c.srcPitch;
  w.srcHeight = c.srcHeight;
  w.dstXInBytes = c.dstXInBytes;
  w.dstY = c.dstY;
  w.dstZ = c.dstZ;
  w.dstLOD = c.dstLOD;
  w.dstMemoryType = c.dstMemoryType;
  w.dstHost = c.dstHost;
  w.dstDevice = c.dstDevice;
  w.dstArray = c.dstArray;
  w.reserved1 = c.reserved1;
  w.dstPitch = c.dstPitch;
  w.dstHeight = c.dstHeight;
  w.WidthInBytes = c.WidthInBytes;
  w.Height = c.Height;
  w.Depth = c.Depth;
  return w;
}

bool fits(size_t value) { return value <= UINT_MAX; }

bool inLegacyContext() {
  auto context = currentContext();
  // A destroyed legacy context passes here and gets CUDA_ERROR_CONTEXT_IS_DESTROYED from the common check.
  return context && context->apiVersion() == kLegacyContextApiVersion;
}

#define CUEMU_REQUIRE_LEGACY_CONTEXT() \
  if (!inLegacyContext()) return CUDA_ERROR_INVALID_CONTEXT

}  // namespace

namespace impl {

CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  if (!bytesize) {
    *dptr = 0;
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUEMU_REQUIRE_CONTEXT(context);
  auto region = context.memory().allocateDeviceBelow4GiB(bytesize);
  if (!region) return region.error().code;
  *dptr = static_cast<CUdeviceptr_v1>((*region)->start);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pPitch, unsigned int WidthInBytes, unsigned int Height,
                         unsigned int ElementSizeBytes) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!dptr || !pPitch || !WidthInBytes || !Height) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  size_t pitch = alignUp(WidthInBytes, kPitchAlignment);
  if (!fits(pitch) || !fits(pitch * Height)) return CUDA_ERROR_INVALID_VALUE;
  auto region = context.memory().allocateDeviceBelow4GiB(pitch * Height);
  if (!region) return region.error().code;
  *dptr = static_cast<CUdeviceptr_v1>((*region)->start);
  *pPitch = static_cast<unsigned>(pitch);
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr_v1 dptr) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemFree_v2(dptr);
}

CUresult cuMemGetInfo(unsigned int* free, unsigned int* total) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  size_t f = 0, t = 0;
  CUresult r = impl::cuMemGetInfo_v2(&f, &t);
  if (r != CUDA_SUCCESS) return r;
  // The 32-bit form reports at most 4 GiB - 1, as cuDeviceTotalMem does.
  if (free) *free = static_cast<unsigned>(std::min<size_t>(f, UINT_MAX));
  if (total) *total = static_cast<unsigned>(std::min<size_t>(t, UINT_MAX));
  return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange(CUdeviceptr_v1* pbase, unsigned int* psize, CUdeviceptr_v1 dptr) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult r = impl::cuMemGetAddressRange_v2(&base, &size, dptr);
  if (r != CUDA_SUCCESS) return r;
  if (base > UINT_MAX || !fits(size)) return CUDA_ERROR_NOT_SUPPORTED;
  if (pbase) *pbase = static_cast<CUdeviceptr_v1>(base);
  if (psize) *psize = static_cast<unsigned>(size);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocHost(void** pp, unsigned int bytesize) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemAllocHost_v2(pp, bytesize);
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr_v1* pdptr, void* p, unsigned int Flags) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!pdptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr wide = 0;
  CUresult r = impl::cuMemHostGetDevicePointer_v2(&wide, p, Flags);
  return r != CUDA_SUCCESS ? r : storePointer(pdptr, wide);
}

CUresult cuMemcpyHtoD(CUdeviceptr_v1 dst, const void* src, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyHtoD_v2(dst, src, n);
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dst, const void* src, unsigned int n, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyHtoDAsync_v2(dst, src, n, s);
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr_v1 src, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyDtoH_v2(dst, src, n);
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr_v1 src, unsigned int n, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyDtoHAsync_v2(dst, src, n, s);
}
CUresult cuMemcpyDtoD(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyDtoD_v2(dst, src, n);
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dst, CUdeviceptr_v1 src, unsigned int n, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyDtoDAsync_v2(dst, src, n, s);
}
CUresult cuMemcpyDtoA(CUarray dst, unsigned int off, CUdeviceptr_v1 src, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyDtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyAtoD(CUdeviceptr_v1 dst, CUarray src, unsigned int off, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyAtoD_v2(dst, src, off, n);
}
CUresult cuMemcpyHtoA(CUarray dst, unsigned int off, const void* src, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyHtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyHtoAAsync(CUarray dst, unsigned int off, const void* src, unsigned int n, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyHtoAAsync_v2(dst, off, src, n, s);
}
CUresult cuMemcpyAtoH(void* dst, CUarray src, unsigned int off, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyAtoH_v2(dst, src, off, n);
}
CUresult cuMemcpyAtoHAsync(void* dst, CUarray src, unsigned int off, unsigned int n, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyAtoHAsync_v2(dst, src, off, n, s);
}
CUresult cuMemcpyAtoA(CUarray dst, unsigned int doff, CUarray src, unsigned int soff, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemcpyAtoA_v2(dst, doff, src, soff, n);
}

CUresult cuMemcpy2D(const CUDA_MEMCPY2D_v1* c) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY2D w = widen(*c);
  return impl::cuMemcpy2D_v2(&w);
}
CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1* c) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY2D w = widen(*c);
  return impl::cuMemcpy2DUnaligned_v2(&w);
}
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1* c, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY2D w = widen(*c);
  return impl::cuMemcpy2DAsync_v2(&w, s);
}
CUresult cuMemcpy3D(const CUDA_MEMCPY3D_v1* c) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D w = widen(*c);
  return impl::cuMemcpy3D_v2(&w);
}
CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1* c, CUstream s) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D w = widen(*c);
  return impl::cuMemcpy3DAsync_v2(&w, s);
}

CUresult cuMemsetD8(CUdeviceptr_v1 d, unsigned char v, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD8_v2(d, v, n);
}
CUresult cuMemsetD16(CUdeviceptr_v1 d, unsigned short v, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD16_v2(d, v, n);
}
CUresult cuMemsetD32(CUdeviceptr_v1 d, unsigned int v, unsigned int n) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD32_v2(d, v, n);
}
CUresult cuMemsetD2D8(CUdeviceptr_v1 d, unsigned int p, unsigned char v, unsigned int w, unsigned int h) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD2D8_v2(d, p, v, w, h);
}
CUresult cuMemsetD2D16(CUdeviceptr_v1 d, unsigned int p, unsigned short v, unsigned int w, unsigned int h) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD2D16_v2(d, p, v, w, h);
}
CUresult cuMemsetD2D32(CUdeviceptr_v1 d, unsigned int p, unsigned int v, unsigned int w, unsigned int h) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  return impl::cuMemsetD2D32_v2(d, p, v, w, h);
}

CUresult cuArrayCreate(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR_v1* desc) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY_DESCRIPTOR w{desc->Width, desc->Height, desc->Format, desc->NumChannels};
  return impl::cuArrayCreate_v2(pHandle, &w);
}

CUresult cuArray3DCreate(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1* desc) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR w{desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels, desc->Flags};
  return impl::cuArray3DCreate_v2(pHandle, &w);
}

CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR_v1* desc, CUarray hArray) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY_DESCRIPTOR w{};
  CUresult r = impl::cuArrayGetDescriptor_v2(&w, hArray);
  if (r != CUDA_SUCCESS) return r;
  if (!fits(w.Width) || !fits(w.Height)) return CUDA_ERROR_NOT_SUPPORTED;
  *desc = {static_cast<unsigned>(w.Width), static_cast<unsigned>(w.Height), w.Format, w.NumChannels};
  return CUDA_SUCCESS;
}

CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR_v1* desc, CUarray hArray) {
  CUEMU_REQUIRE_LEGACY_CONTEXT();
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR w{};
  CUresult r = impl::cuArray3DGetDescriptor_v2(&w, hArray);
  if (r != CUDA_SUCCESS) return r;
  if (!fits(w.Width) || !fits(w.Height) || !fits(w.Depth)) return CUDA_ERROR_NOT_SUPPORTED;
  *desc = {static_cast<unsigned>(w.Width),
           static_cast<unsigned>(w.Height),
           static_cast<unsigned>(w.Depth),
           w.Format,
           w.NumChannels,
           w.Flags};
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
