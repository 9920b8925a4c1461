// Tensor maps (TMA descriptors): cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col(Wide), cuTensorMapReplaceAddress.
// Every documented requirement is checked; the 128 opaque bytes are those driver 580 writes on an H100
// (ptx/tensor_map.h), which tensormap.replace edits and the interpreter's tensor copies read.
#include "api/impl.h"
#include "core/context.h"
#include "core/device.h"

#include <ptx/tensor_map.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

namespace cuemu::impl {
namespace {

using ptx::TensorMap;
static_assert(sizeof(CUtensorMap) == 128);

// The packed types (16 elements of 4 or 6 bits a unit) are compute capability 10's and 12's (an H100 or H200
// refuses them): cuda.h's requirements for them are checked, none measured on a GPU.
bool isPacked(CUtensorMapDataType type) {
  return type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B || type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
         type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}
bool isPaddedPacked(CUtensorMapDataType type) { return isPacked(type) && type != CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B; }

// The compute capability the map is for: the current context's device, else device 0 (the encoders take no device).
int targetCcMajor() {
  if (auto context = currentContext()) return context->device().profile().ccMajor;
  const Device* device = deviceByOrdinal(0);
  return device ? device->profile().ccMajor : 9;
}

// Bytes of one element in shared memory (a packed type: of one 16-element unit); 0 for a type the device lacks.
unsigned elementBytes(CUtensorMapDataType type) {
  if (isPacked(type)) {
    TensorMap packed;
    packed.dataType = static_cast<ptx::TensorMapType>(type);
    return targetCcMajor() >= 10 ? packed.packedSharedBytes() : 0;
  }
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;
  }
}

bool isFloat(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return true;
    default: return false;
  }
}

unsigned swizzleSpan(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    default: return 128;  // the 128-byte family
  }
}

// The requirements tiled and im2col maps share; fills the common part of the encoding.
CUresult checkCommon(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, cuuint32_t minRank, void* address,
                     const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* elementStrides,
                     CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                     CUtensorMapFloatOOBfill oobFill, TensorMap& out) {
  // Driver 580 accepts a map at any host address (measured at offsets 4 to 48 mod 64: tools/gpu-probe/ipc17.cpp),
  // although CUtensorMap is declared 64-byte aligned; a kernel parameter copy is what must be aligned.
  if (!map) return CUDA_ERROR_INVALID_VALUE;
  unsigned bytes = elementBytes(type);
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
    return CUDA_ERROR_INVALID_VALUE;
  // the 128-byte atom swizzles need compute capability 10.0 (an H100 refuses them); cuemu models 9.0
  if (swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || swizzle > CU_TENSOR_MAP_SWIZZLE_128B) return CUDA_ERROR_INVALID_VALUE;
  if (l2 < CU_TENSOR_MAP_L2_PROMOTION_NONE || l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B) return CUDA_ERROR_INVALID_VALUE;
  if (oobFill < CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE || oobFill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return CUDA_ERROR_INVALID_VALUE;
  if (oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !isFloat(type)) return CUDA_ERROR_INVALID_VALUE;
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) minRank = std::max(minRank, 3u);
  if (rank < minRank || rank > 5) return CUDA_ERROR_INVALID_VALUE;
  // an interleave of 32 bytes takes any swizzle (measured on an H100: 32B and 128B both encode)
  unsigned addressAlign = interleave == CU_TENSOR_MAP_INTERLEAVE_32B || isPaddedPacked(type) ? 32 : 16;
  if (type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  // the padded packed types swizzle in the 128-byte mode only (the atom modes aside, which cuemu does not model)
  if (isPaddedPacked(type) && swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && swizzle != CU_TENSOR_MAP_SWIZZLE_128B)
    return CUDA_ERROR_INVALID_VALUE;
  // a null address encodes (measured on an H200: conformance api.misc.TensorMapNullAddress), a misaligned one not
  if (reinterpret_cast<uintptr_t>(address) % addressAlign) return CUDA_ERROR_INVALID_VALUE;
  if (!dims || !elementStrides || (rank > 1 && !strides)) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (uint64_t{1} << 32)) return CUDA_ERROR_INVALID_VALUE;
    if (elementStrides[i] == 0 || elementStrides[i] > 8) return CUDA_ERROR_INVALID_VALUE;
  }
  // dimension 0 of a packed type counts its elements: a multiple of 128 (ALIGN16B) or 2 (ALIGN8B)
  if (isPacked(type) && dims[0] % (isPaddedPacked(type) ? 128 : 2)) return CUDA_ERROR_INVALID_VALUE;
  unsigned strideAlign = interleave == CU_TENSOR_MAP_INTERLEAVE_32B || isPaddedPacked(type) ? 32 : 16;
  for (unsigned i = 0; i + 1 < rank; ++i)
    if (strides[i] % strideAlign || strides[i] >= (uint64_t{1} << 40)) return CUDA_ERROR_INVALID_VALUE;
  out = TensorMap{};
  out.dataType = static_cast<ptx::TensorMapType>(type);
  out.rank = static_cast<uint8_t>(rank);
  out.interleave = static_cast<uint8_t>(interleave);
  out.swizzle = static_cast<uint8_t>(swizzle);
  out.l2Promotion = static_cast<uint8_t>(l2);
  out.oobFill = static_cast<uint8_t>(oobFill);
  out.address = reinterpret_cast<uintptr_t>(address);
  for (unsigned i = 0; i < rank; ++i) {
    out.dims[i] = dims[i];
    out.elementStrides[i] = static_cast<uint8_t>(elementStrides[i]);
  }
  for (unsigned i = 0; i + 1 < rank; ++i) out.strides[i] = strides[i];
  return CUDA_SUCCESS;
}

// The inner dimension of a box in bytes must fit the swizzle pattern (INTERLEAVE_NONE only).
bool fitsSwizzle(CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, uint64_t innerBytes) {
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || swizzle == CU_TENSOR_MAP_SWIZZLE_NONE) return true;
  return innerBytes <= swizzleSpan(swizzle);
}

void store(CUtensorMap* map, const TensorMap& encoding) {
  ptx::encodeTensorMap(encoding, reinterpret_cast<uint8_t*>(map));
}

}  // namespace

CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  TensorMap encoding;
  if (CUresult r = checkCommon(tensorMap, tensorDataType, tensorRank, 1, globalAddress, globalDim, globalStrides,
                               elementStrides, interleave, swizzle, l2Promotion, oobFill, encoding))
    return r;
  if (!boxDim) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < tensorRank; ++i) {
    if (boxDim[i] == 0 || boxDim[i] > 256) return CUDA_ERROR_INVALID_VALUE;
    encoding.box[i] = static_cast<uint16_t>(boxDim[i]);
  }
  // rows of whole 16-byte units, interleaved or not (measured on an H100 for both interleaves with and without
  // swizzles: conformance ptx.async_TensorMap.EncodeInterleavedRowBytes)
  uint64_t innerBytes = uint64_t{boxDim[0]} * elementBytes(tensorDataType);
  if (isPacked(tensorDataType)) {
    // a row of whole units: 128 elements of a padded type (cuda.h), whole 16-byte pieces of 16U4_ALIGN8B
    if (isPaddedPacked(tensorDataType) ? boxDim[0] != 128 : boxDim[0] % 32) return CUDA_ERROR_INVALID_VALUE;
    innerBytes = uint64_t{boxDim[0]} / ptx::TensorMap::kPackedUnitElements * elementBytes(tensorDataType);
  }
  if (innerBytes % 16) return CUDA_ERROR_INVALID_VALUE;
  if (!fitsSwizzle(interleave, swizzle, innerBytes)) return CUDA_ERROR_INVALID_VALUE;
  store(tensorMap, encoding);
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                 void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                 const int* pixelBoxLowerCorner, const int* pixelBoxUpperCorner,
                                 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                 const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill) {
  TensorMap encoding;
  // im2col maps of the packed types: cuemu's copies move packed types in tile mode only
  if (isPacked(tensorDataType)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = checkCommon(tensorMap, tensorDataType, tensorRank, 3, globalAddress, globalDim, globalStrides,
                               elementStrides, interleave, swizzle, l2Promotion, oobFill, encoding))
    return r;
  if (!pixelBoxLowerCorner || !pixelBoxUpperCorner) return CUDA_ERROR_INVALID_VALUE;
  // One spatial offset per dimension beyond channels and batch, with a range that shrinks as their number grows.
  unsigned spatial = tensorRank - 2;
  int limit = spatial == 1 ? 32768 : spatial == 2 ? 128 : 16;
  for (unsigned i = 0; i < spatial; ++i) {
    for (int corner : {pixelBoxLowerCorner[i], pixelBoxUpperCorner[i]})
      if (corner < -limit || corner > limit - 1) return CUDA_ERROR_INVALID_VALUE;
    encoding.lowerCorner[i] = static_cast<int16_t>(pixelBoxLowerCorner[i]);
    encoding.upperCorner[i] = static_cast<int16_t>(pixelBoxUpperCorner[i]);
  }
  if (channelsPerPixel == 0 || channelsPerPixel > 256) return CUDA_ERROR_INVALID_VALUE;
  if (pixelsPerColumn == 0 || pixelsPerColumn > 1024) return CUDA_ERROR_INVALID_VALUE;
  uint64_t innerBytes = uint64_t{channelsPerPixel} * elementBytes(tensorDataType);
  // a pixel's channels are whole 16-byte units, interleaved or not, and the box (the channels of all pixels) is at
  // most 128 KiB (measured on an H200: both interleaves with every element size, ranks 3-5 and every swizzle, and f32
  // without interleave; tools/gpu-probe/im2colil28.cpp, conformance ptx.async_TensorMap.EncodeInterleavedIm2colPixels)
  if (innerBytes % 16) return CUDA_ERROR_INVALID_VALUE;
  if (innerBytes * pixelsPerColumn > (uint64_t{1} << 17)) return CUDA_ERROR_INVALID_VALUE;
  if (!fitsSwizzle(interleave, swizzle, innerBytes)) return CUDA_ERROR_INVALID_VALUE;
  encoding.im2col = true;
  encoding.channels = static_cast<uint16_t>(channelsPerPixel);
  encoding.pixels = static_cast<uint16_t>(pixelsPerColumn);
  store(tensorMap, encoding);
  return CUDA_SUCCESS;
}

// The wide im2col maps of compute capability 10's `.im2col::w` copies. Driver 580 encodes them on an H200 too
// (tools/gpu-probe/im2colwide30.cpp, results/im2colwide30-h200-2026-11-28.txt): the bytes are those of an im2col map
// whose only nonzero corners are the width's (the first spatial dimension), both modes give the same bytes, and every
// argument the probe varied is checked as cuTensorMapEncodeIm2col checks it, the mode besides. The copies themselves
// need compute capability 10 (sm_100a), which no cuemu profile has.
CUresult cuTensorMapEncodeIm2colWide(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                     void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                     int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth,
                                     cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                     const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                     CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  if (mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W && mode != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128)
    return CUDA_ERROR_INVALID_VALUE;
  const int lower[3] = {pixelBoxLowerCornerWidth, 0, 0}, upper[3] = {pixelBoxUpperCornerWidth, 0, 0};
  return impl::cuTensorMapEncodeIm2col(tensorMap, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                                       lower, upper, channelsPerPixel, pixelsPerColumn, elementStrides, interleave,
                                       swizzle, l2Promotion, oobFill);
}

CUresult cuTensorMapReplaceAddress(CUtensorMap* tensorMap, void* globalAddress) {
  if (!tensorMap) return CUDA_ERROR_INVALID_VALUE;  // at any host alignment, as cuTensorMapEncodeTiled
  auto* bytes = reinterpret_cast<uint8_t*>(tensorMap);
  const TensorMap encoding = ptx::decodeTensorMap(bytes);
  unsigned align = encoding.interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (!globalAddress || reinterpret_cast<uintptr_t>(globalAddress) % align) return CUDA_ERROR_INVALID_VALUE;
  ptx::tensor_map_layout::store<uint64_t>(bytes, ptx::tensor_map_layout::kAddress,
                                          reinterpret_cast<uintptr_t>(globalAddress));
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
