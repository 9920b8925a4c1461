// The 128 opaque bytes of a CUtensorMap as cuemu encodes them: written by the driver (cuTensorMapEncodeTiled/Im2col,
// emu/impl/tensor_map.cpp), read by the interpreter's tensor copies (cp.async.bulk.tensor,
// src/exec/isa/async_copy.cpp). The enumerations' values are the CUDA driver API's (cuda.h: CUtensorMapDataType,
// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapFloatOOBfill), restated here because the interpreter does not
// include cuda.h.
#pragma once

#include <cstdint>

namespace ptx {

struct TensorMapEncoding {
  static constexpr uint32_t kMagic = 0x414d5443;  // "CTMA"
  uint32_t magic;
  uint8_t im2col;
  uint8_t dataType;  // CUtensorMapDataType
  uint8_t rank;
  uint8_t interleave;   // CUtensorMapInterleave
  uint8_t swizzle;      // CUtensorMapSwizzle
  uint8_t l2Promotion;  // CUtensorMapL2promotion
  uint8_t oobFill;      // CUtensorMapFloatOOBfill
  uint8_t elementBytes;
  uint64_t address;
  uint64_t dims[5];
  uint64_t strides[4];  // bytes between consecutive indices of dimensions 1..rank-1
  uint16_t box[5];      // tiled: box size; im2col: box[0] = channels per pixel, box[1] = pixels per column
  uint8_t elementStrides[5];
  int8_t reservedCorner;
  int16_t lowerCorner[3];
  int16_t upperCorner[3];
};
static_assert(sizeof(TensorMapEncoding) <= 128, "a CUtensorMap has 128 bytes");

// CUtensorMapDataType values
enum class TensorMapType : uint8_t { u8, u16, u32, s32, u64, s64, f16, f32, f64, bf16, f32ftz, tf32, tf32ftz };
// CUtensorMapSwizzle values (NONE, 32B, 64B, 128B; the 128B atom variants follow)
constexpr uint8_t kTensorMapSwizzle128B = 3;
// CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
constexpr uint8_t kTensorMapOobNan = 1;

}  // namespace ptx
