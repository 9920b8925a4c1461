// Copies and sets: every cuMemcpy* and cuMemset* form. Each validates its ranges at the call, then runs the
// byte moves in stream order (synchronous forms wait for them).
#include "api/impl.h"

#include "core/memory.h"
#include "core/memory_array.h"
#include "core/stream_lookup.h"
#include "impl/memory_internal.h"

#include <cstring>
#include <vector>

namespace cuemu {
namespace {

enum class Side { Host, Device, Any };

// Holds the memory of `region` (if any) for a copy or set: another thread freeing it, or destroying its context,
// meanwhile leaves it mapped until the work is done. A region freed before the lease is a freed pointer.
CUresult leaseFor(RegionPtr region, RegionLease& lease) {
  if (!region) return CUDA_SUCCESS;
  lease = RegionLease(std::move(region));
  return lease.valid() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult leaseFor(RegionPtr region, std::vector<RegionLease>& leases) { return leaseRegion(region, leases); }

// `more`: the leases of the VMM mappings past the first that the side runs on into (empty, no allocation, for the
// other copies).
template <class Leases> CUresult checkSide(uint64_t pointer, Side side, size_t bytes, bool& pageable, bool write,
                                           Leases& leases, std::vector<RegionLease>& more) {
  std::vector<RegionPtr> continuation;
  switch (side) {
    case Side::Host: {
      if (!pointer) return CUDA_ERROR_INVALID_VALUE;
      RegionPtr region = AddressSpace::instance().find(pointer);
      if (!region) pageable = true;
      return leaseFor(std::move(region), leases);
    }
    case Side::Device: {
      auto region = deviceRange(pointer, bytes, write, &continuation);
      if (!region) return region.error().code;
      // A copy that names a side device memory refuses a pinned host pool's memory even where the pool granted
      // the device access (driver 580: cuMemsetD8 takes it then, cuMemcpyDtoH does not).
      if (isHostPoolMemory(**region)) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult r = leaseRegions(continuation, more); r != CUDA_SUCCESS) return r;
      return leaseFor(std::move(*region), leases);
    }
    case Side::Any: {
      if (!pointer) return CUDA_ERROR_INVALID_VALUE;
      auto region = anyRange(pointer, bytes, write, &continuation);
      if (!region) return region.error().code;
      if (!*region) pageable = true;
      if (CUresult r = leaseRegions(continuation, more); r != CUDA_SUCCESS) return r;
      return leaseFor(std::move(*region), leases);
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult submit(Context& context, CUstream stream, bool async, bool pageable, StreamWork work,
                CUgraphNodeType capturedAs = CU_GRAPH_NODE_TYPE_MEMCPY) {
  if (!async || pageable) return memops::runAndWait(context, stream, std::move(work), capturedAs);
  return memops::runAsync(context, stream, std::move(work), capturedAs);
}

CUresult copyLinear(uint64_t dst, Side dstSide, uint64_t src, Side srcSide, size_t bytes, CUstream stream, bool async) {
  CUEMU_REQUIRE_CONTEXT(context);
  if (!bytes) return CUDA_SUCCESS;
  bool pageable = false;
  RegionLease dstLease, srcLease;  // no allocation on this path: most copies are small and frequent
  std::vector<RegionLease> more;   // (VMM mappings side by side only)
  if (CUresult r = checkSide(dst, dstSide, bytes, pageable, true, dstLease, more); r != CUDA_SUCCESS) return r;
  if (CUresult r = checkSide(src, srcSide, bytes, pageable, false, srcLease, more); r != CUDA_SUCCESS) return r;
  return submit(
      context, stream, async, pageable,
      [dst, src, bytes, dstLease = std::move(dstLease), srcLease = std::move(srcLease), more = std::move(more)] {
        copyBytes(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
        return CUDA_SUCCESS;
      });
}

CUresult copyPeer(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src, CUcontext srcContext, size_t bytes,
                  CUstream stream, bool async) {
  CUEMU_LOOKUP(dstOwner, Context, dstContext, CUDA_ERROR_INVALID_CONTEXT);
  CUEMU_LOOKUP(srcOwner, Context, srcContext, CUDA_ERROR_INVALID_CONTEXT);
  return copyLinear(dst, Side::Device, src, Side::Device, bytes, stream, async);
}

CUresult copyStrided(const CUDA_MEMCPY3D_PEER& descriptor, CUstream stream, bool async) {
  CUEMU_REQUIRE_CONTEXT(context);
  auto prepared = prepareCopy(descriptor);
  if (!prepared) return prepared.error().code;
  if (!prepared->widthBytes) return CUDA_SUCCESS;
  RegionLease dstLease, srcLease;
  std::vector<RegionLease> more;
  if (CUresult r = leaseFor(prepared->dst.region, dstLease); r != CUDA_SUCCESS) return r;
  if (CUresult r = leaseFor(prepared->src.region, srcLease); r != CUDA_SUCCESS) return r;
  if (CUresult r = leaseRegions(prepared->dst.continuation, more); r != CUDA_SUCCESS) return r;
  if (CUresult r = leaseRegions(prepared->src.continuation, more); r != CUDA_SUCCESS) return r;
  return submit(
      context, stream, async, prepared->touchesPageableHost,
      [copy = *prepared, dstLease = std::move(dstLease), srcLease = std::move(srcLease), more = std::move(more)] {
        copy.run();
        return CUDA_SUCCESS;
      });
}

CUresult copy3DPeer(const CUDA_MEMCPY3D_PEER* copy, CUstream stream, bool async) {
  if (!copy) return CUDA_ERROR_INVALID_VALUE;
  if ((copy->srcMemoryType != CU_MEMORYTYPE_ARRAY && copy->srcContext && !lookup<Context>(copy->srcContext)) ||
      (copy->dstMemoryType != CU_MEMORYTYPE_ARRAY && copy->dstContext && !lookup<Context>(copy->dstContext)))
    return CUDA_ERROR_INVALID_CONTEXT;
  return copyStrided(*copy, stream, async);
}

CUresult copy2D(const CUDA_MEMCPY2D* copy, CUstream stream, bool async) {
  if (!copy) return CUDA_ERROR_INVALID_VALUE;
  return copyStrided(toPeerCopy(*copy), stream, async);
}

CUresult copy3D(const CUDA_MEMCPY3D* copy, CUstream stream, bool async) {
  if (!copy) return CUDA_ERROR_INVALID_VALUE;
  if (copy->reserved0 || copy->reserved1) return CUDA_ERROR_INVALID_VALUE;
  return copyStrided(toPeerCopy(*copy), stream, async);
}

// Array <-> linear copies address the array's bytes as one run (its rows are packed).
Expected<uint8_t*> arrayBytes(CUarray handle, size_t offset, size_t bytes) {
  auto array = lookup<Array>(handle, CUDA_ERROR_INVALID_VALUE);
  if (!array) return array.takeError();
  if (offset > (*array)->totalBytes() || bytes > (*array)->totalBytes() - offset)
    return makeError(CUDA_ERROR_INVALID_VALUE, "the copy leaves the array");
  return (*array)->data() + offset;
}

CUresult copyWithArray(uint8_t* dst, CUarray dstArray, size_t dstOffset, Side dstSide, const uint8_t* src,
                       CUarray srcArray, size_t srcOffset, Side srcSide, size_t bytes, CUstream stream, bool async) {
  CUEMU_REQUIRE_CONTEXT(context);
  bool pageable = false;
  std::vector<RegionLease> leases;
  if (dstArray) {
    auto p = arrayBytes(dstArray, dstOffset, bytes);
    if (!p) return p.error().code;
    dst = *p;
    if (CUresult r = leaseFor(AddressSpace::instance().find(reinterpret_cast<uint64_t>(dst)), leases);
        r != CUDA_SUCCESS)
      return r;
  } else if (bytes) {
    if (CUresult r = checkSide(reinterpret_cast<uint64_t>(dst), dstSide, bytes, pageable, true, leases, leases);
        r != CUDA_SUCCESS)
      return r;
  }
  if (srcArray) {
    auto p = arrayBytes(srcArray, srcOffset, bytes);
    if (!p) return p.error().code;
    src = *p;
    if (CUresult r = leaseFor(AddressSpace::instance().find(reinterpret_cast<uint64_t>(src)), leases);
        r != CUDA_SUCCESS)
      return r;
  } else if (bytes) {
    if (CUresult r = checkSide(reinterpret_cast<uint64_t>(src), srcSide, bytes, pageable, false, leases, leases);
        r != CUDA_SUCCESS)
      return r;
  }
  if (!bytes) return CUDA_SUCCESS;
  return submit(context, stream, async, pageable, [dst, src, bytes, leases = std::move(leases)] {
    copyBytes(dst, src, bytes);
    return CUDA_SUCCESS;
  });
}

CUresult memset2D(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elementSize, size_t width, size_t height,
                  CUstream stream, bool async) {
  CUEMU_REQUIRE_CONTEXT(context);
  if (dst % elementSize) return CUDA_ERROR_INVALID_VALUE;
  if (!width || !height) return CUDA_SUCCESS;
  size_t rowBytes = width * elementSize;
  if (rowBytes / elementSize != width) return CUDA_ERROR_INVALID_VALUE;
  if (height > 1 && (pitch < rowBytes || pitch % elementSize)) return CUDA_ERROR_INVALID_VALUE;
  if (height > 1 && (height - 1) > (SIZE_MAX - rowBytes) / pitch) return CUDA_ERROR_INVALID_VALUE;
  size_t extent = (height - 1) * pitch + rowBytes;
  std::vector<RegionPtr> continuation;
  auto region = deviceRange(dst, extent, /*write=*/true, &continuation);
  if (!region) return region.error().code;
  RegionLease lease;
  std::vector<RegionLease> more;
  if (CUresult r = leaseFor(std::move(*region), lease); r != CUDA_SUCCESS) return r;
  if (CUresult r = leaseRegions(continuation, more); r != CUDA_SUCCESS) return r;
  return submit(
      context, stream, async, false,
      [=, lease = std::move(lease), more = std::move(more)] {
        fill2D(reinterpret_cast<uint8_t*>(dst), pitch, value, elementSize, width, height);
        return CUDA_SUCCESS;
      },
      CU_GRAPH_NODE_TYPE_MEMSET);
}

// cuMemcpyBatchAsync: `count` linear copies with attributes applying from attrsIdxs[i] on.
CUresult copyBatch(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
                   size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream stream) {
  if (failIdx) *failIdx = SIZE_MAX;
  if (!dsts || !srcs || !sizes || !count || !attrs || !attrsIdxs || !numAttrs || numAttrs > count)
    return CUDA_ERROR_INVALID_VALUE;
  if (namesLegacyStream(stream)) return CUDA_ERROR_INVALID_VALUE;
  if (attrsIdxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numAttrs; ++i) {
    if ((i && attrsIdxs[i] <= attrsIdxs[i - 1]) || attrsIdxs[i] >= count) return CUDA_ERROR_INVALID_VALUE;
    if (attrs[i].srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
        attrs[i].srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
      return CUDA_ERROR_INVALID_VALUE;
  }
  CUEMU_REQUIRE_CONTEXT(context);
  bool pageable = false;
  struct Op {
    void* dst;
    const void* src;
    size_t bytes;
  };
  std::vector<Op> ops;
  ops.reserve(count);
  std::vector<RegionLease> leases;
  for (size_t i = 0; i < count; ++i) {
    CUresult r = CUDA_SUCCESS;
    if (!sizes[i]) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) r = checkSide(dsts[i], Side::Any, sizes[i], pageable, true, leases, leases);
    if (r == CUDA_SUCCESS) r = checkSide(srcs[i], Side::Any, sizes[i], pageable, false, leases, leases);
    if (r != CUDA_SUCCESS) {
      if (failIdx) *failIdx = i;
      return r;
    }
    ops.push_back({reinterpret_cast<void*>(dsts[i]), reinterpret_cast<const void*>(srcs[i]), sizes[i]});
  }
  return submit(context, stream, true, pageable, [ops = std::move(ops), leases = std::move(leases)] {
    for (const Op& op : ops) copyBytes(op.dst, op.src, op.bytes);
    return CUDA_SUCCESS;
  });
}

Expected<CUDA_MEMCPY3D_PEER> batchOpToCopy(const CUDA_MEMCPY3D_BATCH_OP& op) {
  if (!op.extent.width || !op.extent.height || !op.extent.depth)
    return makeError(CUDA_ERROR_INVALID_VALUE, "empty extent");
  if (op.srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || op.srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
    return makeError(CUDA_ERROR_INVALID_VALUE, "invalid source access order");
  // Extents count elements: the array's element when one side is an array, bytes otherwise.
  unsigned elementBytes = 1;
  for (const CUmemcpy3DOperand* operand : {&op.src, &op.dst}) {
    if (operand->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
      auto array = lookup<Array>(operand->op.array.array, CUDA_ERROR_INVALID_VALUE);
      if (!array) return array.takeError();
      elementBytes = (*array)->elementBytes();
    } else if (operand->type != CU_MEMCPY_OPERAND_TYPE_POINTER) {
      return makeError(CUDA_ERROR_INVALID_VALUE, "invalid operand type");
    }
  }
  CUDA_MEMCPY3D_PEER c{};
  c.WidthInBytes = op.extent.width * elementBytes;
  c.Height = op.extent.height;
  c.Depth = op.extent.depth;
  auto fill = [&](const CUmemcpy3DOperand& operand, CUmemorytype& type, CUdeviceptr& device, CUarray& array, size_t& x,
                  size_t& y, size_t& z, size_t& pitch, size_t& height) {
    if (operand.type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
      type = CU_MEMORYTYPE_ARRAY;
      array = operand.op.array.array;
      x = operand.op.array.offset.x * elementBytes;
      y = operand.op.array.offset.y;
      z = operand.op.array.offset.z;
    } else {
      type = CU_MEMORYTYPE_UNIFIED;
      device = operand.op.ptr.ptr;
      pitch = (operand.op.ptr.rowLength ? operand.op.ptr.rowLength : op.extent.width) * elementBytes;
      height = operand.op.ptr.layerHeight ? operand.op.ptr.layerHeight : op.extent.height;
    }
  };
  fill(op.src, c.srcMemoryType, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight);
  fill(op.dst, c.dstMemoryType, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight);
  return c;
}

CUresult copy3DBatch(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx, unsigned long long flags,
                     CUstream stream) {
  if (failIdx) *failIdx = SIZE_MAX;
  if (!numOps || !opList || flags) return CUDA_ERROR_INVALID_VALUE;
  if (namesLegacyStream(stream)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  std::vector<PreparedCopy> copies;
  std::vector<RegionLease> leases;
  bool pageable = false;
  for (size_t i = 0; i < numOps; ++i) {
    auto descriptor = batchOpToCopy(opList[i]);
    Expected<PreparedCopy> prepared =
        descriptor ? prepareCopy(*descriptor) : Expected<PreparedCopy>(descriptor.takeError());
    if (!prepared) {
      if (failIdx) *failIdx = i;
      return prepared.error().code;
    }
    pageable |= prepared->touchesPageableHost;
    CUresult leased = leaseSide(prepared->dst, leases);
    if (leased == CUDA_SUCCESS) leased = leaseSide(prepared->src, leases);
    if (leased != CUDA_SUCCESS) {
      if (failIdx) *failIdx = i;
      return leased;
    }
    copies.push_back(*prepared);
  }
  return submit(context, stream, true, pageable, [copies = std::move(copies), leases = std::move(leases)] {
    for (const PreparedCopy& copy : copies) copy.run();
    return CUDA_SUCCESS;
  });
}

uint64_t u64(const void* p) { return reinterpret_cast<uint64_t>(p); }

}  // namespace

namespace impl {

// The default stream of the call: legacy, or per-thread in a _ptds form (core/stream_lookup.h).
constexpr CUstream kDefaultStream = nullptr;

// Unified copies: the direction comes from the pointers.
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return copyLinear(dst, Side::Any, src, Side::Any, n, kDefaultStream, false);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return copyLinear(dst, Side::Any, src, Side::Any, n, s, true);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  return copyLinear(dst, Side::Device, u64(src), Side::Host, n, kDefaultStream, false);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  return copyLinear(dst, Side::Device, u64(src), Side::Host, n, s, true);
}

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  return copyLinear(u64(dst), Side::Host, src, Side::Device, n, kDefaultStream, false);
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  return copyLinear(u64(dst), Side::Host, src, Side::Device, n, s, true);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return copyLinear(dst, Side::Device, src, Side::Device, n, kDefaultStream, false);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return copyLinear(dst, Side::Device, src, Side::Device, n, s, true);
}

CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n) {
  return copyPeer(dst, dc, src, sc, n, kDefaultStream, false);
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) {
  return copyPeer(dst, dc, src, sc, n, s, true);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* c) { return copy2D(c, kDefaultStream, false); }
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* c) { return copy2D(c, kDefaultStream, false); }
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* c, CUstream s) { return copy2D(c, s, true); }

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* c) { return copy3D(c, kDefaultStream, false); }
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* c, CUstream s) { return copy3D(c, s, true); }
CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* c) { return copy3DPeer(c, kDefaultStream, false); }
CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* c, CUstream s) { return copy3DPeer(c, s, true); }

// Arrays.
CUresult cuMemcpyHtoA_v2(CUarray dst, size_t off, const void* src, size_t n) {
  return copyWithArray(nullptr, dst, off, Side::Device, static_cast<const uint8_t*>(src), nullptr, 0, Side::Host, n,
                       kDefaultStream, false);
}
CUresult cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void* src, size_t n, CUstream s) {
  return copyWithArray(nullptr, dst, off, Side::Device, static_cast<const uint8_t*>(src), nullptr, 0, Side::Host, n, s,
                       true);
}
CUresult cuMemcpyAtoH_v2(void* dst, CUarray src, size_t off, size_t n) {
  return copyWithArray(static_cast<uint8_t*>(dst), nullptr, 0, Side::Host, nullptr, src, off, Side::Device, n,
                       kDefaultStream, false);
}
CUresult cuMemcpyAtoHAsync_v2(void* dst, CUarray src, size_t off, size_t n, CUstream s) {
  return copyWithArray(static_cast<uint8_t*>(dst), nullptr, 0, Side::Host, nullptr, src, off, Side::Device, n, s, true);
}
CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, CUarray src, size_t off, size_t n) {
  return copyWithArray(reinterpret_cast<uint8_t*>(dst), nullptr, 0, Side::Device, nullptr, src, off, Side::Device, n,
                       kDefaultStream, false);
}
CUresult cuMemcpyDtoA_v2(CUarray dst, size_t off, CUdeviceptr src, size_t n) {
  return copyWithArray(nullptr, dst, off, Side::Device, reinterpret_cast<const uint8_t*>(src), nullptr, 0, Side::Device,
                       n, kDefaultStream, false);
}
CUresult cuMemcpyAtoA_v2(CUarray dst, size_t doff, CUarray src, size_t soff, size_t n) {
  return copyWithArray(nullptr, dst, doff, Side::Device, nullptr, src, soff, Side::Device, n, kDefaultStream, false);
}

// Batches.
CUresult cuMemcpyBatchAsync(CUdeviceptr* d, CUdeviceptr* s, size_t* z, size_t n, CUmemcpyAttributes* a, size_t* ai,
                            size_t na, size_t* f, CUstream st) {
  return copyBatch(d, s, z, n, a, ai, na, f, st);
}
CUresult cuMemcpyBatchAsync_v2(CUdeviceptr* d, CUdeviceptr* s, size_t* z, size_t n, CUmemcpyAttributes* a, size_t* ai,
                               size_t na, CUstream st) {
  return copyBatch(d, s, z, n, a, ai, na, nullptr, st);
}
CUresult cuMemcpy3DBatchAsync(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* f, unsigned long long flags, CUstream st) {
  return copy3DBatch(n, ops, f, flags, st);
}
CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream st) {
  return copy3DBatch(n, ops, nullptr, flags, st);
}

// Sets.
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  return memset2D(d, n, v, 1, n, 1, kDefaultStream, false);
}
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) {
  return memset2D(d, n * 2, v, 2, n, 1, kDefaultStream, false);
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) {
  return memset2D(d, n * 4, v, 4, n, 1, kDefaultStream, false);
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  return memset2D(d, n, v, 1, n, 1, s, true);
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  return memset2D(d, n * 2, v, 2, n, 1, s, true);
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  return memset2D(d, n * 4, v, 4, n, 1, s, true);
}
CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) {
  return memset2D(d, p, v, 1, w, h, kDefaultStream, false);
}
CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) {
  return memset2D(d, p, v, 2, w, h, kDefaultStream, false);
}
CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h) {
  return memset2D(d, p, v, 4, w, h, kDefaultStream, false);
}
CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) {
  return memset2D(d, p, v, 1, w, h, s, true);
}
CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s) {
  return memset2D(d, p, v, 2, w, h, s, true);
}
CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s) {
  return memset2D(d, p, v, 4, w, h, s, true);
}

}  // namespace impl
}  // namespace cuemu
