// ptx.async.TensorMap*: the bytes of tensor maps and tensormap.replace (sm_90a). The expected map bytes were
// measured on an H100 with driver 580 (tools/gpu-probe/tmap18.cpp); the expected boxes of the tensor copies made
// with a replaced map are computed here from the map's meaning. The tensor is a 1 MiB buffer whose 32-bit word i
// holds i, so every copied element tells where it came from.
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;
using ptx_async_TensorMap = ContextTest;

constexpr size_t kDataBytes = 1 << 20;
constexpr size_t kBoxDump = 1024;

std::vector<uint8_t> Hex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2) v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

// A tiled map's parameters; the baseline is a 64 x 32 f32 tensor with rows of 1024 bytes and an 8 x 8 box.
struct Tiled {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  unsigned rank = 2;
  uint64_t offset = 0;
  cuuint64_t dims[5] = {64, 32, 4, 3, 2};
  cuuint64_t strides[4] = {1024, 32768, 131072, 393216};
  cuuint32_t box[5] = {8, 8, 1, 1, 1};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  CUresult encode(CUtensorMap& m, CUdeviceptr data) const {
    std::memset(&m, 0, sizeof m);
    return cuTensorMapEncodeTiled(&m, type, rank, reinterpret_cast<void*>(data + offset), dims, strides, box, es,
                                  interleave, swizzle, l2, oob);
  }
  unsigned elementBytes() const { return conf::TensorMapElementBytes(type); }
};

uint8_t DataByte(size_t offset) { return uint8_t(uint32_t(offset / 4) >> (8 * (offset % 4))); }

// The shared memory a tile-mode load of the box at `coords` leaves (starting as 0xee bytes): elements row-major,
// ceil(box / element stride) per dimension (dimension 0's stride moves nothing on an H100); out-of-bounds elements
// zeros or the H100's NaN (0x7ff7 repeated); swizzled rows at least the swizzle span apart, 16-byte chunk bits [4, 4 +
// s) XOR-ed with address bits [7, 7 + s).
std::vector<uint8_t> ExpectedBox(const Tiled& t, const int* coords) {
  std::vector<uint8_t> out(kBoxDump, 0xee);
  const unsigned eb = t.elementBytes();
  unsigned count[5] = {1, 1, 1, 1, 1}, step[5] = {1, 1, 1, 1, 1};
  size_t elements = 1;
  for (unsigned i = 0; i < t.rank; ++i) {
    step[i] = i == 0 ? 1 : t.es[i];
    count[i] = (t.box[i] + step[i] - 1) / step[i];
    elements *= count[i];
  }
  const unsigned s = unsigned(t.swizzle);
  const size_t rowBytes = size_t(count[0]) * eb;
  const size_t pitch = s ? std::max<size_t>(rowBytes, size_t(16) << s) : rowBytes;
  unsigned k[5] = {};
  for (size_t e = 0; e < elements; ++e) {
    size_t off = e / count[0] * pitch + e % count[0] * eb;
    if (s) off ^= ((off >> 7) & ((1u << s) - 1)) << 4;
    bool inside = true;
    size_t global = t.offset;
    for (unsigned i = 0; i < t.rank; ++i) {
      const int64_t x = int64_t(coords[i]) + int64_t(k[i]) * step[i];
      if (x < 0 || uint64_t(x) >= t.dims[i]) inside = false;
      global += size_t(x) * (i == 0 ? eb : t.strides[i - 1]);
    }
    for (unsigned b = 0; b < eb && off + b < out.size(); ++b)
      out[off + b] = inside ? DataByte(global + b) : t.oob ? uint8_t(b % 2 ? 0x7f : 0xf7) : 0;
    for (unsigned i = 0; i < t.rank && ++k[i] == count[i]; ++i) k[i] = 0;
  }
  return out;
}

std::string FirstDiff(const uint8_t* got, const uint8_t* want, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
  return "";
}

struct Data {
  conf::DeviceBuffer buffer{kDataBytes};
  Data() {
    std::vector<uint32_t> words(kDataBytes / 4);
    for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(i);
    EXPECT_EQ(cuMemcpyHtoD(buffer.ptr(), words.data(), kDataBytes), CUDA_SUCCESS);
  }
};

// Encodings, one parameter varied at a time from the baseline: bytes 8..127 as the H100 writes them (bytes 0..7
// hold the address).
struct Encoding {
  const char* label;
  Tiled tiled;
  const char* bytes;
};

std::vector<Encoding> Encodings() {
  std::vector<Encoding> v;
  auto add = [&](const char* label, const char* bytes, auto change) {
    Tiled t;
    change(t);
    v.push_back({label, t, bytes});
  };
  const auto none = [](Tiled&) {};
  add("base",
      "9003000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      none);
  add("u8, box 16 x 8",
      "1000000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000f07000000000000"
      "00800000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.type = CU_TENSOR_MAP_DATA_TYPE_UINT8, t.box[0] = 16; });
  add("bf16, box 16 x 8",
      "1005000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000f07000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, t.box[0] = 16; });
  add("f32 ftz, box 16 x 8",
      "1004000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000f07000000000000"
      "00000200000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, t.box[0] = 16; });
  add("tf32, box 16 x 8",
      "9003010040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000f07000000000000"
      "00000200000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.type = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, t.box[0] = 16; });
  add("tf32 ftz, box 16 x 8",
      "1004010040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000f07000000000000"
      "00000200000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.type = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, t.box[0] = 16; });
  add("rank 1",
      "8003000000000000000000000000000000000000000000003f000000000000000000000000000000000000000000000700000000000000"
      "00200000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.rank = 1; });
  add("rank 5",
      "c003000040000000000800000020000000600000000000003f0000001f0000000300000002000000010000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.rank = 5; });
  add("dims[0] 2^32",
      "900300004000000000000000000000000000000000000000ffffffff1f0000000000000000000000000000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.dims[0] = cuuint64_t(1) << 32; });
  add("strides[0] 2^40 - 16",
      "90030000ffffffff0000000000000000000000000f0000003f0000001f0000000000000000000000000000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.strides[0] = (cuuint64_t(1) << 40) - 16; });
  add("box[1] 256",
      "9003000040000000000000000000000000000000000000003f0000001f00000000000000000000000000000000000007ff000000000000"
      "00002000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.box[1] = 256; });
  add("element strides 3, 1",
      "9003000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000200000707000000000000"
      "00400000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.es[0] = 3; });
  add("element strides 1, 8",
      "9003000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000003800000707000000000000"
      "00200000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.es[1] = 8; });
  add("rank 3, element strides 1, 1, 5",
      "a003000040000000000800000000000000000000000000003f0000001f0000000300000000000000000000000001000707000000000000"
      "00000000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.rank = 3, t.es[2] = 5; });
  add("rank 3, box[2] 3",
      "a003000040000000000800000000000000000000000000003f0000001f0000000300000000000000000000000000000707020000000000"
      "00000300000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.rank = 3, t.box[2] = 3; });
  add("rank 3, interleave 32B, swizzle 128B",
      "a073000040000000000800000000000000000000000000003f0000001f0000000300000000000000000000000000000707000000000000"
      "00000100000000000000040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) {
        t.rank = 3, t.interleave = CU_TENSOR_MAP_INTERLEAVE_32B, t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
      });
  add("swizzle 64B",
      "9043000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000707000000000000"
      "00000100000000000000020000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; });
  add("L2 promotion 256B",
      "9003060040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B; });
  add("NaN fill",
      "9083000040000000000000000000000000000000000000003f0000001f0000000000000000000000000000000000000707000000000000"
      "00000100000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
      "00000000000000000000",
      [](Tiled& t) { t.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; });
  return v;
}

TEST_F(ptx_async_TensorMap, EncodeTiledBytes) {
  Data data;
  for (const Encoding& e : Encodings()) {
    CUtensorMap m;
    ASSERT_EQ(e.tiled.encode(m, data.buffer.ptr()), CUDA_SUCCESS) << e.label;
    const auto* bytes = reinterpret_cast<const uint8_t*>(&m);
    uint64_t address;
    std::memcpy(&address, bytes, 8);
    EXPECT_EQ(address, data.buffer.ptr() + e.tiled.offset) << e.label;
    std::vector<uint8_t> want = Hex(e.bytes);
    ASSERT_EQ(want.size(), 120u) << e.label;
    EXPECT_EQ(FirstDiff(bytes + 8, want.data(), 120), "") << e.label << " (offsets from byte 8)";
  }
}

// Which inner box rows an interleaved layout takes (box[0] times the element size, in bytes), for both interleaves
// and a few swizzles: the results an H100 gives are recorded in the golden file.
TEST_F(ptx_async_TensorMap, EncodeInterleavedRowBytes) {
  Data data;
  std::vector<uint64_t> got;
  std::string key;
  for (CUtensorMapInterleave il : {CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B})
    for (CUtensorMapSwizzle sw : {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_128B})
      for (unsigned rowBytes : {2u, 8u, 16u, 24u, 32u, 48u, 64u, 128u, 256u}) {
        Tiled t;
        t.rank = 3;
        t.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        t.interleave = il;
        t.swizzle = sw;
        t.box[0] = rowBytes / 2;
        CUtensorMap m;
        got.push_back(uint64_t(t.encode(m, data.buffer.ptr())));
        key += std::to_string(il) + "/" + std::to_string(sw) + "/" + std::to_string(rowBytes) + " ";
      }
  const uint64_t hash = conf::Fnv(key.data(), key.size());
  if (conf::GoldenRecord("tensormap_encode_interleaved_rows", hash, got)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor("tensormap_encode_interleaved_rows", hash);
  if (!golden) return;
  ASSERT_EQ(golden->outputs.size(), got.size());
  std::istringstream labels(key);
  for (size_t i = 0; i < got.size(); ++i) {
    std::string label;
    labels >> label;
    EXPECT_EQ(got[i], golden->outputs[i]) << "interleave/swizzle/row bytes " << label;
  }
}

// cuTensorMapEncodeIm2col with an interleaved layout: which pixel sizes (channels x element bytes) and box sizes
// (x pixels) driver 580 accepts, and the box bytes it derives (the map's word at byte 64), per interleave, element
// size, channels and pixels; an NHWC tensor with 1024-byte W stride.
TEST_F(ptx_async_TensorMap, EncodeInterleavedIm2colPixels) {
  Data data;
  std::vector<uint64_t> got;
  std::string key;
  const CUtensorMapDataType types[] = {CU_TENSOR_MAP_DATA_TYPE_UINT8, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                       CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT64};
  for (CUtensorMapInterleave il : {CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B})
    for (CUtensorMapDataType type : types)
      for (unsigned channels : {1u, 2u, 4u, 8u, 16u, 64u, 128u, 256u})
        for (unsigned pixels : {16u, 256u, 1024u}) {
          const cuuint64_t dims[4] = {64, 6, 5, 3};
          const cuuint64_t strides[3] = {1024, 8192, 65536};
          const int lower[2] = {0, 0}, upper[2] = {0, 0};
          const cuuint32_t es[4] = {1, 1, 1, 1};
          CUtensorMap m;
          std::memset(&m, 0, sizeof m);
          const CUresult rc = cuTensorMapEncodeIm2col(
              &m, type, 4, reinterpret_cast<void*>(data.buffer.ptr()), dims, strides, lower, upper, channels, pixels,
              es, il, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
          uint32_t boxBytes = 0;
          if (rc == CUDA_SUCCESS) std::memcpy(&boxBytes, reinterpret_cast<const uint8_t*>(&m) + 64, 4);
          got.push_back(uint64_t(rc) << 32 | boxBytes);
          key += std::to_string(il) + "/" + std::to_string(type) + "/" + std::to_string(channels) + "/" +
                 std::to_string(pixels) + " ";
        }
  const uint64_t hash = conf::Fnv(key.data(), key.size());
  if (conf::GoldenRecord("tensormap_encode_interleaved_im2col", hash, got)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor("tensormap_encode_interleaved_im2col", hash);
  if (!golden) return;
  ASSERT_EQ(golden->outputs.size(), got.size());
  std::istringstream labels(key);
  for (size_t i = 0; i < got.size(); ++i) {
    std::string label;
    labels >> label;
    EXPECT_EQ(got[i], golden->outputs[i])
        << "interleave/type/channels/pixels " << label << ": (result << 32) | box bytes";
  }
}

// The 128-byte atom swizzles are compute capability 10.0's: an H100 refuses them.
TEST_F(ptx_async_TensorMap, EncodeTiledRefusesAtomSwizzles) {
  Data data;
  for (CUtensorMapSwizzle s : {CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,
                               CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B}) {
    Tiled t;
    t.swizzle = s;
    CUtensorMap m;
    EXPECT_EQ(t.encode(m, data.buffer.ptr()), CUDA_ERROR_INVALID_VALUE) << "swizzle " << int(s);
  }
}

TEST_F(ptx_async_TensorMap, EncodeIm2colBytes) {
  Data data;
  cuuint64_t dims[4] = {16, 10, 10, 2}, strides[3] = {64, 640, 6400};
  cuuint32_t es[4] = {1, 1, 1, 1};
  struct Case {
    unsigned rank;
    int lo[2], hi[2];
    unsigned channels, pixels;
    const char* bytes;
  } cases[] = {
      {3,
       {-1, 0},
       {1, 0},
       16,
       32,
       "a103000004000000280000000000000000000000000000000f000000090000000900000000000000000000000000000fffff01001f0000"
       "00000800000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "00000000000000000000"},
      {4,
       {-3, 2},
       {5, -4},
       8,
       100,
       "b103000004000000280000009001000000000000000000000f0000000900000009000000010000000000000000000007fd0205fc630000"
       "00800c00000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "00000000000000000000"},
  };
  for (const Case& c : cases) {
    CUtensorMap m;
    std::memset(&m, 0, sizeof m);
    ASSERT_EQ(cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c.rank,
                                      reinterpret_cast<void*>(data.buffer.ptr()), dims, strides, c.lo, c.hi, c.channels,
                                      c.pixels, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
              CUDA_SUCCESS);
    std::vector<uint8_t> want = Hex(c.bytes);
    ASSERT_EQ(want.size(), 120u);
    EXPECT_EQ(FirstDiff(reinterpret_cast<const uint8_t*>(&m) + 8, want.data(), 120), "") << "rank " << c.rank;
  }
}

// One tensormap.replace: the field and its operands, the map it edits, the bytes that change (offset, value), and
// the map it then describes (copied from with a 2- or 3-dimensional load at `coords`; no copy when `copy` is false).
struct Replace {
  std::string field, type, operands;
  Tiled start;
  std::vector<std::pair<unsigned, uint8_t>> changes;
  Tiled after;
  bool copy = true;
  uint64_t addressValue = 0;  // global_address: the data buffer plus this
};

std::string ReplaceKernel(const Replace& r, const char* space, unsigned copyRank, const int* coords,
                          unsigned expectBytes) {
  const bool shared = std::string(space) == ".shared::cta";
  const bool generic = std::string(space).empty();
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout, .param .u64 pval)\n{\n"
      "  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[1024];\n  .shared .align 128 .b8 smap[128];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u64 %rd3, [pval];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.eq.u32 %p1, %r1, 0;\n"
      "  mov.u32 %r7, sbox;\n  shl.b32 %r4, %r1, 5;\n  add.u32 %r5, %r7, %r4;\n  mov.b64 %rd10, -1229782938247303442;\n"
      "  st.shared.v2.b64 [%r5], {%rd10, %rd10};\n  st.shared.v2.b64 [%r5+16], {%rd10, %rd10};\n";
  std::string form = "tensormap.replace.tile." + r.field + space + ".b1024." + r.type;
  if (shared) {
    s += "  mul.wide.u32 %rd4, %r1, 4;\n  add.s64 %rd5, %rd1, %rd4;\n  ld.global.b32 %r2, [%rd5];\n"
         "  mov.u32 %r3, smap;\n  shl.b32 %r4, %r1, 2;\n  add.u32 %r5, %r3, %r4;\n  st.shared.b32 [%r5], %r2;\n"
         "  bar.warp.sync -1;\n  @%p1 " +
         form + " [%r3], " + r.operands +
         ";\n  bar.warp.sync -1;\n"
         "  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r3], "
         "128;\n";
  } else {
    s += "  @%p1 " + form + (generic ? " [%rd1], " : " [%rd1], ") + r.operands +
         ";\n  fence.proxy.tensormap::generic.release.gpu;\n";
  }
  s += "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n  bar.sync 0;\n  @!%p1 bra DONE;\n";
  for (int i = 0; i < 16; ++i)
    s += "  ld.global.b64 %rd6, [%rd1+" + std::to_string(8 * i) + "];\n  st.global.b64 [%rd2+" + std::to_string(8 * i) +
         "], %rd6;\n";
  if (copyRank) {
    s += "  mov.u32 %r6, sbar;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n  fence.proxy.async.shared::cta;\n"
         "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], " +
         std::to_string(expectBytes) + ";\n";
    std::string list = "{";
    for (unsigned i = 0; i < copyRank; ++i) {
      s += "  mov.b32 %r" + std::to_string(10 + i) + ", " + std::to_string(coords[i]) + ";\n";
      list += (i ? ", %r" : "%r") + std::to_string(10 + i);
    }
    s += "  cp.async.bulk.tensor." + std::to_string(copyRank) +
         "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r7], [%rd1, " + list +
         "}], [%r6];\n"
         "  mov.u32 %r8, 0;\nWAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n  @%p2 bra OK;\n"
         "  add.u32 %r8, %r8, 1;\n  setp.lt.u32 %p3, %r8, 200000;\n  @%p3 bra WAIT;\nOK:\n"
         "  st.global.u32 [%rd2+128], %r8;\n";
    for (int i = 0; i < int(kBoxDump / 8); ++i)
      s += "  ld.shared.b64 %rd9, [%r7+" + std::to_string(8 * i) + "];\n  st.global.b64 [%rd2+" +
           std::to_string(256 + 8 * i) + "], %rd9;\n";
  }
  s += "DONE:\n  ret;\n}\n";
  return s;
}

void RunReplace(const Replace& r, const std::vector<const char*>& spaces = {".global", ".shared::cta"}) {
  Data data;
  const unsigned copyRank = r.copy ? r.after.rank : 0;
  const int coords[3] = {16, 2, 0};
  size_t elements = 1;
  for (unsigned i = 1; i < r.after.rank; ++i) elements *= (r.after.box[i] + r.after.es[i] - 1) / r.after.es[i];
  elements *= r.after.box[0];
  const unsigned expectBytes = unsigned(elements * r.after.elementBytes());
  for (const char* space : spaces) {
    SCOPED_TRACE(std::string("state space ") + (*space ? space : "generic"));
    CUtensorMap m;
    ASSERT_EQ(r.start.encode(m, data.buffer.ptr()), CUDA_SUCCESS);
    std::vector<uint8_t> wantMap(128);
    std::memcpy(wantMap.data(), &m, 128);
    for (auto [offset, value] : r.changes) wantMap[offset] = value;
    if (r.addressValue) {
      uint64_t a = data.buffer.ptr() + r.addressValue;
      std::memcpy(wantMap.data(), &a, 8);
    }
    const std::string ptx = ReplaceKernel(r, space, copyRank, coords, expectBytes);
    char log[8192] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
    CUmodule mod = nullptr;
    ASSERT_EQ(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals), CUDA_SUCCESS) << log;
    CUfunction f = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&f, mod, "k"), CUDA_SUCCESS);
    conf::DeviceBuffer map(128), out(256 + kBoxDump);
    ASSERT_EQ(cuMemcpyHtoD(map.ptr(), &m, 128), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD8(out.ptr(), 0xcc, 256 + kBoxDump), CUDA_SUCCESS);
    CUdeviceptr pmap = map.ptr(), pout = out.ptr();
    uint64_t value = data.buffer.ptr() + r.addressValue;
    void* params[] = {&pmap, &pout, &value};
    ASSERT_EQ(conf::Launch1D(f, 1, 32, params), CUDA_SUCCESS);
    std::vector<uint8_t> got(256 + kBoxDump);
    ASSERT_EQ(cuMemcpyDtoH(got.data(), out.ptr(), got.size()), CUDA_SUCCESS);
    EXPECT_EQ(FirstDiff(got.data(), wantMap.data(), 128), "") << "map after the replace";
    if (copyRank) {
      uint32_t waits;
      std::memcpy(&waits, &got[128], 4);
      EXPECT_LT(waits, 200000u) << "the copy's transaction bytes did not complete the mbarrier";
      std::vector<uint8_t> want = ExpectedBox(r.after, coords);
      EXPECT_EQ(FirstDiff(got.data() + 256, want.data(), kBoxDump), "") << "box";
    }
    cuModuleUnload(mod);
  }
}

Tiled Rank3() {
  Tiled t;
  t.rank = 3;
  return t;
}

TEST_F(ptx_async_TensorMap, ReplaceGlobalAddress) {
  Replace r{"global_address", "b64", "%rd3", {}, {}, {}};
  r.addressValue = 2048;
  r.after.offset = 2048;
  RunReplace(r);
}

TEST_F(ptx_async_TensorMap, ReplaceRank) {
  Replace r{"rank", "b32", "1", Rank3(), {{8, 0x90}}, {}};  // the value is the rank minus one
  RunReplace(r);
}

TEST_F(ptx_async_TensorMap, ReplaceBoxDim) {
  Replace r{"box_dim", "b32", "0, 4", {}, {{55, 0x03}}, {}};
  r.after.box[0] = 4;
  RunReplace(r);
  Replace r1{"box_dim", "b32", "1, 3", {}, {{56, 0x02}}, {}};
  r1.after.box[1] = 3;
  RunReplace(r1);
}

TEST_F(ptx_async_TensorMap, ReplaceGlobalDim) {
  Replace r{"global_dim", "b32", "0, 20", {}, {{32, 0x13}}, {}};
  r.after.dims[0] = 20;
  RunReplace(r);
  Replace r1{"global_dim", "b32", "1, 5", {}, {{36, 0x04}}, {}};
  r1.after.dims[1] = 5;
  RunReplace(r1);
}

TEST_F(ptx_async_TensorMap, ReplaceGlobalStride) {
  Replace r{"global_stride", "b64", "0, 2048", {}, {{12, 0x80}}, {}};
  r.after.strides[0] = 2048;
  RunReplace(r);
  Replace r1{"global_stride", "b64", "1, 65536", Rank3(), {{17, 0x10}}, Rank3()};
  r1.after.strides[1] = 65536;
  RunReplace(r1);
}

TEST_F(ptx_async_TensorMap, ReplaceElementStride) {
  Replace r{"element_stride", "b32", "1, 2", {}, {{52, 0x08}}, {}};
  r.after.es[1] = 2;
  RunReplace(r);
}

TEST_F(ptx_async_TensorMap, ReplaceElemtype) {
  Replace u16{"elemtype", "b32", "1", {}, {{9, 0x00}}, {}};
  u16.after.type = CU_TENSOR_MAP_DATA_TYPE_UINT16;
  RunReplace(u16);
  Replace f32ftz{"elemtype", "b32", "8", {}, {{8, 0x10}, {9, 0x04}}, {}};
  RunReplace(f32ftz);
  Replace f64{"elemtype", "b32", "9", {}, {{9, 0x04}}, {}};
  f64.after.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  RunReplace(f64);
  Replace bf16{"elemtype", "b32", "10", {}, {{8, 0x10}, {9, 0x05}}, {}};
  bf16.after.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  RunReplace(bf16);
  Replace tf32ftz{"elemtype", "b32", "12", {}, {{8, 0x10}, {9, 0x04}, {10, 0x01}}, {}};
  tf32ftz.copy = false;
  RunReplace(tf32ftz);
}

TEST_F(ptx_async_TensorMap, ReplaceInterleaveLayout) {
  Replace r{"interleave_layout", "b32", "1", Rank3(), {{9, 0x0b}}, Rank3()};
  r.copy = false;
  RunReplace(r);
  Replace r2{"interleave_layout", "b32", "2", Rank3(), {{9, 0x13}}, Rank3()};
  r2.copy = false;
  RunReplace(r2);
}

TEST_F(ptx_async_TensorMap, ReplaceSwizzleMode) {
  for (unsigned s = 1; s <= 3; ++s) {
    SCOPED_TRACE("swizzle mode " + std::to_string(s));
    Replace r{"swizzle_mode", "b32", std::to_string(s), {}, {{9, uint8_t(0x03 | s << 5)}}, {}};
    r.after.swizzle = CUtensorMapSwizzle(s);
    RunReplace(r);
  }
  Tiled from128;
  from128.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  Replace r{"swizzle_mode", "b32", "0", from128, {{9, 0x03}}, {}};
  RunReplace(r);
}

TEST_F(ptx_async_TensorMap, ReplaceFillMode) {
  Tiled narrow;
  narrow.dims[0] = 20;
  Replace r{"fill_mode", "b32", "1", narrow, {{9, 0x83}}, narrow};
  r.after.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  RunReplace(r);
  Tiled nan = narrow;
  nan.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  Replace r0{"fill_mode", "b32", "0", nan, {{9, 0x03}}, narrow};
  RunReplace(r0);
}

// Without a state space the address is generic.
TEST_F(ptx_async_TensorMap, ReplaceGenericAddress) {
  Replace r{"box_dim", "b32", "0, 4", {}, {{55, 0x03}}, {}};
  r.after.box[0] = 4;
  RunReplace(r, {""});
}

// Loads of maps encoded by the driver: a swizzled box whose rows are shorter than the swizzle span, and the NaN of
// out-of-bounds f16 and f64 elements.
TEST_F(ptx_async_TensorMap, SwizzledShortRowsAndNanFill) {
  Replace none{"rank", "b32", "1", {}, {}, {}};  // the rank it has
  for (CUtensorMapSwizzle s : {CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B}) {
    SCOPED_TRACE("swizzle " + std::to_string(int(s)));
    Replace r = none;
    r.start.swizzle = r.after.swizzle = s;
    RunReplace(r, {".global"});
    r.start.box[0] = r.after.box[0] = 4;
    RunReplace(r, {".global"});
  }
  for (CUtensorMapDataType t : {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT64}) {
    SCOPED_TRACE("type " + std::to_string(int(t)));
    Replace r = none;
    r.start.type = r.after.type = t;
    r.start.dims[0] = r.after.dims[0] = 20;
    r.start.oob = r.after.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    RunReplace(r, {".global"});
  }
}

// numba-cuda's test of sm_90a: tensormap.replace on a 4-byte shared array (the map runs past the block's end into
// its 128-byte allocation unit) does not fault.
TEST_F(ptx_async_TensorMap, ReplaceInSmallSharedArray) {
  const std::string ptx =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pout)\n{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
      "  .shared .align 4 .b8 s[4];\n  ld.param.u64 %rd1, [pout];\n  mov.u32 %r1, s;\n"
      "  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r1], 2;\n  st.shared.u32 [%r1], 2;\n  bar.sync 0;\n"
      "  ld.shared.u32 %r2, [%r1];\n  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  CUmodule mod = nullptr;
  ASSERT_EQ(cuModuleLoadData(&mod, ptx.c_str()), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&f, mod, "k"), CUDA_SUCCESS);
  conf::DeviceBuffer out(4);
  CUdeviceptr pout = out.ptr();
  void* params[] = {&pout};
  ASSERT_EQ(conf::Launch1D(f, 1, 1, params), CUDA_SUCCESS);
  uint32_t got = 0;
  ASSERT_EQ(cuMemcpyDtoH(&got, out.ptr(), 4), CUDA_SUCCESS);
  EXPECT_EQ(got, 2u);
  cuModuleUnload(mod);
}

}  // namespace
