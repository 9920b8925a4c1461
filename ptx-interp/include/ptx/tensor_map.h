// The 128 opaque bytes of a CUtensorMap, in the layout driver 580 writes on an H100 (measured with
// tools/gpu-probe/tmap18.cpp, one encoding parameter varied at a time): written by the driver
// (cuTensorMapEncodeTiled/Im2col, emu/impl/tensor_map.cpp), edited in place by tensormap.replace and read by the
// tensor copies (src/exec/isa/async_copy.cpp). Programs copy, patch and inspect these bytes, so cuemu keeps the
// GPU's layout rather than one of its own. The enumerations' values are the CUDA driver API's (cuda.h:
// CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapFloatOOBfill), restated here because
// the interpreter does not include cuda.h.
#pragma once

#include <cstdint>
#include <cstring>

namespace ptx {

// CUtensorMapDataType values
// (the last three are the packed types of compute capability 10 and later: 16U4_ALIGN8B, 16U4_ALIGN16B,
// 16U6_ALIGN16B)
enum class TensorMapType : uint8_t {
  u8,
  u16,
  u32,
  s32,
  u64,
  s64,
  f16,
  f32,
  f64,
  bf16,
  f32ftz,
  tf32,
  tf32ftz,
  u4x16,
  u4x16Padded,
  u6x16Padded
};
// CUtensorMapSwizzle values (NONE, 32B, 64B, 128B; the 128B atom variants follow)
constexpr uint8_t kTensorMapSwizzle128B = 3;
// CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
constexpr uint8_t kTensorMapOobNan = 1;
// The NaN an H100 writes for out-of-bounds elements on request, this pair of bytes repeated at every element size.
constexpr uint16_t kTensorMapNanHalf = 0x7ff7;

// A tensor map's contents, decoded.
struct TensorMap {
  uint64_t address = 0;
  bool im2col = false;
  TensorMapType dataType = TensorMapType::u8;
  uint8_t rank = 1;
  uint8_t interleave = 0;   // CUtensorMapInterleave
  uint8_t swizzle = 0;      // CUtensorMapSwizzle (NONE..128B)
  uint8_t l2Promotion = 0;  // CUtensorMapL2promotion
  uint8_t oobFill = 0;      // CUtensorMapFloatOOBfill
  uint64_t dims[5] = {1, 1, 1, 1, 1};
  uint64_t strides[4] = {};           // bytes between consecutive indices of dimensions 1..rank-1
  uint16_t box[5] = {1, 1, 1, 1, 1};  // tiled: the box; im2col: unused
  uint8_t elementStrides[5] = {1, 1, 1, 1, 1};
  uint16_t channels = 1, pixels = 1;  // im2col: channels per pixel, pixels per column
  int16_t lowerCorner[3] = {}, upperCorner[3] = {};

  // The packed types move units of 16 elements: 8 bytes of 4-bit ones or 12 of 6-bit ones in global memory, the
  // same 8 bytes in shared memory (16U4_ALIGN8B) or each unit padded to 16 bytes there (the ALIGN16B types: the
  // layout ldmatrix's .b4x16_p64 and .b6x16_p32 read). Dimension 0 counts elements (cuda.h). A copy's transaction
  // bytes are the data bytes (8 or 12 a unit), as CUTLASS's sm_120 kernels expect.
  static constexpr unsigned kPackedUnitElements = 16;
  bool packed() const { return dataType >= TensorMapType::u4x16; }
  unsigned packedGlobalBytes() const { return dataType == TensorMapType::u6x16Padded ? 12 : 8; }
  unsigned packedSharedBytes() const { return dataType == TensorMapType::u4x16 ? 8 : 16; }

  // Bytes of one element (packed types: of one unit in shared memory).
  unsigned elementBytes() const {
    if (packed()) return packedSharedBytes();
    switch (dataType) {
      case TensorMapType::u8: return 1;
      case TensorMapType::u16:
      case TensorMapType::f16:
      case TensorMapType::bf16: return 2;
      case TensorMapType::u64:
      case TensorMapType::s64:
      case TensorMapType::f64: return 8;
      default: return 4;
    }
  }
};

// Where each field lives. The word at kFlags holds bit fields; dimensions, box sizes and element strides are stored
// minus one, global strides in 16-byte units (32 low bits per stride, the 4 high bits of stride i in bits 4i..4i+3
// of the word at kStrideHigh).
namespace tensor_map_layout {
constexpr unsigned kAddress = 0;          // u64
constexpr unsigned kFlags = 8;            // u32
constexpr unsigned kStrides = 12;         // u32 x 4
constexpr unsigned kStrideHigh = 28;      // u32
constexpr unsigned kDims = 32;            // u32 x 5
constexpr unsigned kElementStrides = 52;  // u16: 3 bits per dimension
constexpr unsigned kBox = 55;             // u8 x 5 (tiled); im2col: channels at kBox
constexpr unsigned kCorners = 56;         // im2col: lower then upper corner, a u16 each
constexpr unsigned kPixels = 60;          // im2col: u16
constexpr unsigned kBoxBytes = 64;        // u32: bytes a copy of the box moves (derived; tensormap.replace keeps it)
constexpr unsigned kSharedAlign = 72;     // u16: alignment the box needs in shared memory (derived, likewise)

// Bit fields of the flags word: {shift, width}
struct Bits {
  unsigned shift, width;
  constexpr uint32_t mask() const { return ((1u << width) - 1) << shift; }
};
constexpr Bits kIm2col{0, 1};
constexpr Bits kRankMinusOne{4, 3};
constexpr Bits kElementType{7, 4};  // the PTX ISA's .elemtype code, tf32 as f32 plus kTf32
constexpr Bits kInterleave{11, 2};
constexpr Bits kSwizzle{13, 2};
constexpr Bits kNanFill{15, 1};
constexpr Bits kTf32{16, 1};
constexpr Bits kL2Promotion{17, 2};

template <typename T> inline T load(const uint8_t* p, unsigned offset) {
  T v;
  std::memcpy(&v, p + offset, sizeof v);
  return v;
}
template <typename T> inline void store(uint8_t* p, unsigned offset, T v) { std::memcpy(p + offset, &v, sizeof v); }
inline uint32_t field(const uint8_t* p, Bits b) { return (load<uint32_t>(p, kFlags) & b.mask()) >> b.shift; }
inline void setField(uint8_t* p, Bits b, uint32_t v) {
  store<uint32_t>(p, kFlags, (load<uint32_t>(p, kFlags) & ~b.mask()) | ((v << b.shift) & b.mask()));
}

// The PTX .elemtype codes (0 u8 .. 10 bf16, 11 tf32, 12 tf32.ftz, 13 b4x16, 14 b4x16_p64, 15 b6x16_p32) of the CUDA
// data types, and back. (Where a GPU of compute capability 10 or 12 stores the packed types' codes was not measured:
// cuemu stores them as the others.)
constexpr uint8_t kElemtypeOf[16] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 11, 12, 13, 14, 15};
inline TensorMapType typeOfElemtype(uint32_t code) {
  for (uint8_t t = 0; t < 16; ++t)
    if (kElemtypeOf[t] == code) return TensorMapType(t);
  return TensorMapType::u8;
}
// Writes a PTX .elemtype code (0..12) as the H100 stores it.
inline void setElemtype(uint8_t* p, uint32_t code) {
  const bool tf32 = code == 11 || code == 12;
  setField(p, kElementType, tf32 ? code - 4 : code);
  setField(p, kTf32, tf32);
}
inline uint32_t elemtype(const uint8_t* p) {
  uint32_t code = field(p, kElementType);
  return field(p, kTf32) && (code == 7 || code == 8) ? code + 4 : code;
}

inline void setGlobalStride(uint8_t* p, unsigned i, uint64_t bytes) {
  const uint64_t units = bytes >> 4;
  store<uint32_t>(p, kStrides + 4 * i, uint32_t(units));
  uint32_t high = load<uint32_t>(p, kStrideHigh) & ~(0xfu << (4 * i));
  store<uint32_t>(p, kStrideHigh, high | uint32_t((units >> 32) & 0xf) << (4 * i));
}
inline uint64_t globalStride(const uint8_t* p, unsigned i) {
  const uint64_t high = (load<uint32_t>(p, kStrideHigh) >> (4 * i)) & 0xf;
  return (high << 32 | load<uint32_t>(p, kStrides + 4 * i)) << 4;
}
inline void setElementStride(uint8_t* p, unsigned i, uint32_t stride) {
  uint16_t v = load<uint16_t>(p, kElementStrides) & uint16_t(~(7u << (3 * i)));
  store<uint16_t>(p, kElementStrides, uint16_t(v | ((stride - 1) & 7) << (3 * i)));
}
inline unsigned elementStride(const uint8_t* p, unsigned i) {
  return ((load<uint16_t>(p, kElementStrides) >> (3 * i)) & 7) + 1;
}
}  // namespace tensor_map_layout

// The bytes driver 580 writes for a map (derived fields included); unused dimensions hold size 1, stride 0.
inline void encodeTensorMap(const TensorMap& m, uint8_t out[128]) {
  namespace L = tensor_map_layout;
  std::memset(out, 0, 128);
  L::store<uint64_t>(out, L::kAddress, m.address);
  L::setField(out, L::kIm2col, m.im2col);
  L::setField(out, L::kRankMinusOne, m.rank - 1u);
  L::setElemtype(out, L::kElemtypeOf[unsigned(m.dataType)]);
  L::setField(out, L::kInterleave, m.interleave);
  L::setField(out, L::kSwizzle, m.swizzle);
  L::setField(out, L::kNanFill, m.oobFill);
  L::setField(out, L::kL2Promotion, m.l2Promotion);
  for (unsigned i = 0; i + 1 < m.rank; ++i) L::setGlobalStride(out, i, m.strides[i]);
  uint64_t boxBytes = m.packed() ? m.packedGlobalBytes() : m.elementBytes();  // a packed unit: its data bytes
  for (unsigned i = 0; i < m.rank; ++i) {
    L::store<uint32_t>(out, L::kDims + 4 * i, uint32_t(m.dims[i] - 1));
    L::setElementStride(out, i, m.elementStrides[i]);
    if (!m.im2col) {
      out[L::kBox + i] = uint8_t(m.box[i] - 1);
      // measured: box / element stride rounded down (a box of 8 with stride 3 counts 2, one of 1 with stride 5 none);
      // a packed type's row is its units (element strides do not apply to dimension 0)
      boxBytes *= i == 0 && m.packed() ? m.box[0] / TensorMap::kPackedUnitElements : m.box[i] / m.elementStrides[i];
    }
  }
  if (m.im2col) {
    out[L::kBox] = uint8_t(m.channels - 1);
    // each corner a u16 of one offset per spatial dimension, 16, 8 or 5 bits wide for one, two or three
    const unsigned spatial = m.rank - 2u, width = spatial == 1 ? 16 : spatial == 2 ? 8 : 5;
    uint32_t lower = 0, upper = 0;
    for (unsigned i = 0; i < spatial; ++i) {
      const uint32_t mask = (1u << width) - 1;
      lower |= (uint32_t(m.lowerCorner[i]) & mask) << (width * i);
      upper |= (uint32_t(m.upperCorner[i]) & mask) << (width * i);
    }
    L::store<uint16_t>(out, L::kCorners, uint16_t(lower));
    L::store<uint16_t>(out, L::kCorners + 2, uint16_t(upper));
    L::store<uint16_t>(out, L::kPixels, uint16_t(m.pixels - 1));
    boxBytes *= uint64_t(m.channels) * m.pixels;
  }
  L::store<uint32_t>(out, L::kBoxBytes, uint32_t(boxBytes));
  L::store<uint16_t>(out, L::kSharedAlign, uint16_t(m.swizzle ? 128u << m.swizzle : 16u));
}

inline TensorMap decodeTensorMap(const uint8_t in[128]) {
  namespace L = tensor_map_layout;
  TensorMap m;
  m.address = L::load<uint64_t>(in, L::kAddress);
  m.im2col = L::field(in, L::kIm2col);
  m.rank = uint8_t(L::field(in, L::kRankMinusOne) + 1);
  m.dataType = L::typeOfElemtype(L::elemtype(in));
  m.interleave = uint8_t(L::field(in, L::kInterleave));
  m.swizzle = uint8_t(L::field(in, L::kSwizzle));
  m.oobFill = uint8_t(L::field(in, L::kNanFill));
  m.l2Promotion = uint8_t(L::field(in, L::kL2Promotion));
  for (unsigned i = 0; i < 5; ++i) {
    m.dims[i] = uint64_t(L::load<uint32_t>(in, L::kDims + 4 * i)) + 1;
    m.elementStrides[i] = uint8_t(L::elementStride(in, i));
    m.box[i] = uint16_t(in[L::kBox + i] + 1);
  }
  for (unsigned i = 0; i < 4; ++i) m.strides[i] = L::globalStride(in, i);
  m.channels = uint16_t(in[L::kBox] + 1);
  m.pixels = uint16_t(L::load<uint16_t>(in, L::kPixels) + 1);
  if (m.im2col && m.rank >= 3) {
    const unsigned spatial = m.rank - 2u, width = spatial == 1 ? 16 : spatial == 2 ? 8 : 5;
    const uint32_t lower = L::load<uint16_t>(in, L::kCorners), upper = L::load<uint16_t>(in, L::kCorners + 2);
    for (unsigned i = 0; i < spatial; ++i) {  // sign-extended from `width` bits
      const unsigned shift = 32 - width;
      m.lowerCorner[i] = int16_t(int32_t((lower >> (width * i)) << shift) >> shift);
      m.upperCorner[i] = int16_t(int32_t((upper >> (width * i)) << shift) >> shift);
    }
  }
  return m;
}

}  // namespace ptx
