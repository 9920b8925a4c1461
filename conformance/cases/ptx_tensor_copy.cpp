// ptx.async_TensorCopy.*: tensor copies (cp.async.bulk.tensor) of the modes whose exact data movement the PTX ISA
// describes only in prose and figures: im2col (convolution patches from NWC/NHWC/NDHWC tensors: bounding box, traversal
// strides, im2col offsets, channel ranges, out-of-bounds fill) and tiled maps with interleaved layouts (NC/8HWC8-like,
// 16- and 32-byte interleave, with swizzles; tile loads and stores, im2col loads and a store), and a tensormap.replace
// of the last global stride. What each copy leaves in shared memory is recorded on a GPU into the golden file
// (conformance/golden/, README "Golden numerics") and compared bit for bit. The tensor is a 1 MiB buffer whose 32-bit
// word i holds 0x10000 + i, so every copied f32 element tells where it came from, and none is zero.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr size_t kDataBytes = 1 << 20;
constexpr uint64_t kTensorOffset = 4096;  // the tensor's start in the buffer
constexpr unsigned kSharedBytes = 8192;   // the shared array a copy lands in (0xee before the copy)

// One copy: a tensor map (im2col or tiled) and the coordinates (and im2col offsets) of one load.
struct CopyForm {
  std::string name;
  bool im2col = true;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  unsigned rank = 4;
  cuuint64_t dims[5] = {1, 1, 1, 1, 1};
  cuuint64_t strides[4] = {};  // bytes; computed densely from dims when strides[0] is 0
  cuuint32_t box[5] = {1, 1, 1, 1, 1};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  int lo[3] = {}, hi[3] = {};
  unsigned channels = 1, pixels = 1;
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  int coords[5] = {};
  int offsets[3] = {};
  std::string replace;  // a tensormap.replace of the map in global memory before the copy: "<field>.b32 <operands>"
  bool copy = true;     // false: the replace alone (the map is written out)
  bool store = false;   // a store (.im2col_no_offs / .tile) of a numbered box from shared memory instead of a load

  unsigned elementBytes() const { return conf::TensorMapElementBytes(type); }

  CUresult encode(CUtensorMap& m, CUdeviceptr data) const {
    cuuint64_t st[4];
    uint64_t pitch = dims[0] * elementBytes();
    for (unsigned i = 0; i + 1 < rank; ++i) {
      // dense rows padded to 32 bytes (what an interleave of 32 bytes needs)
      if (strides[0] == 0) pitch = (pitch + 31) / 32 * 32;
      st[i] = strides[0] ? strides[i] : pitch;
      pitch = st[i] * dims[i + 1];
    }
    void* address = reinterpret_cast<void*>(data + kTensorOffset);
    std::memset(&m, 0, sizeof m);
    if (im2col)
      return cuTensorMapEncodeIm2col(&m, type, rank, address, dims, st, lo, hi, channels, pixels, es, interleave,
                                     swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, oob);
    return cuTensorMapEncodeTiled(&m, type, rank, address, dims, st, box, es, interleave, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, oob);
  }
};

// A one-thread kernel: fills the shared array with 0xee, optionally edits the map, loads the box with an mbarrier
// expecting `expectBytes`, waits (at most 200,000 polls) and writes out the map, the polls, the mbarrier and the
// shared array.
std::string CopyKernel(const CopyForm& f, unsigned expectBytes) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout)\n{\n"
      "  .reg .b16 %rs<4>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[" +
      std::to_string(kSharedBytes) +
      "];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n"
      "  st.shared.u32 [%r21], -286331154;\n  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, " +
      std::to_string(kSharedBytes) + ";\n  @%p2 bra FILL;\n";
  if (!f.replace.empty()) {
    const size_t dot = f.replace.find('.');
    const size_t space = f.replace.find(' ');
    s += "  tensormap.replace.tile." + f.replace.substr(0, dot) + ".global.b1024" + f.replace.substr(dot, space - dot) +
         " [%rd1], " + f.replace.substr(space + 1) + ";\n  fence.proxy.tensormap::generic.release.gpu;\n";
  }
  s += "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n";
  for (int i = 0; i < 16; ++i)
    s += "  ld.global.b64 %rd6, [%rd1+" + std::to_string(8 * i) + "];\n  st.global.b64 [%rd2+" + std::to_string(8 * i) +
         "], %rd6;\n";
  if (!f.copy) return s + "DONE:\n  ret;\n}\n";
  std::string list = "{";
  for (unsigned i = 0; i < f.rank; ++i) {
    s += "  mov.b32 %r" + std::to_string(10 + i) + ", " + std::to_string(f.coords[i]) + ";\n";
    list += (i ? ", %r" : "%r") + std::to_string(10 + i);
  }
  list += "}";
  if (f.store) {  // shared word i holds 0xa0000000 + i
    s += "  mov.u32 %r20, 0;\nNUMBER:\n  add.u32 %r21, %r7, %r20;\n  shr.u32 %r22, %r20, 2;\n"
         "  or.b32 %r22, %r22, -1610612736;\n  st.shared.u32 [%r21], %r22;\n  add.u32 %r20, %r20, 4;\n"
         "  setp.lt.u32 %p2, %r20, " +
         std::to_string(kSharedBytes) + ";\n  @%p2 bra NUMBER;\n  fence.proxy.async.shared::cta;\n";
    s += "  cp.async.bulk.tensor." + std::to_string(f.rank) + "d.global.shared::cta." +
         (f.im2col ? "im2col_no_offs" : "tile") + ".bulk_group [%rd1, " + list +
         "], [%r7];\n  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\nDONE:\n  ret;\n}\n";
    return s;
  }
  s += "  mov.u32 %r6, sbar;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n  fence.proxy.async.shared::cta;\n"
       "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], " +
       std::to_string(expectBytes) + ";\n";
  std::string offsets;
  if (f.im2col) {
    offsets = ", {";
    for (unsigned i = 0; i + 2 < f.rank; ++i) {
      s += "  mov.b16 %rs" + std::to_string(1 + i) + ", " + std::to_string(f.offsets[i]) + ";\n";
      offsets += (i ? ", %rs" : "%rs") + std::to_string(1 + i);
    }
    offsets += "}";
  }
  s += "  cp.async.bulk.tensor." + std::to_string(f.rank) + "d.shared::cluster.global." +
       (f.im2col ? "im2col" : "tile") + ".mbarrier::complete_tx::bytes [%r7], [%rd1, " + list + "], [%r6]" + offsets +
       ";\n"
       "  mov.u32 %r8, 0;\nWAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n  @%p2 bra OK;\n"
       "  add.u32 %r8, %r8, 1;\n  setp.lt.u32 %p3, %r8, 200000;\n  @%p3 bra WAIT;\nOK:\n"
       "  st.global.u32 [%rd2+128], %r8;\n  ld.shared.b64 %rd8, [%r6];\n  st.global.b64 [%rd2+136], %rd8;\n"
       "  mov.u32 %r20, 0;\nDUMP:\n  add.u32 %r21, %r7, %r20;\n  ld.shared.b64 %rd9, [%r21];\n"
       "  cvt.u64.u32 %rd10, %r20;\n  add.s64 %rd11, %rd2, %rd10;\n  st.global.b64 [%rd11+144], %rd9;\n"
       "  add.u32 %r20, %r20, 8;\n  setp.lt.u32 %p2, %r20, " +
       std::to_string(kSharedBytes) + ";\n  @%p2 bra DUMP;\nDONE:\n  ret;\n}\n";
  return s;
}

// The bytes a tile load through an interleaved map moves, as measured on an H100 (tools/gpu-probe/tmapil27.cpp):
// ceil(box[0] / elementStride[0]) chunks of the interleave's bytes per row, and one row of dimension rank - 2. Where
// that differs from the map's box bytes (which the kernel expects on its mbarrier), the GPU's phase completes when a
// prefix of the 16-byte pieces it completes in its own order adds up to them: in some runs and not in others, so the
// case compares the phase only where the two agree.
uint64_t InterleavedTileBytes(const CopyForm& f) {
  uint64_t bytes = f.interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  for (unsigned i = 0; i < f.rank; ++i)
    if (i + 2 != f.rank) bytes *= (f.box[i] + f.es[i] - 1) / f.es[i];
  return bytes;
}

// The copy's outputs: the launch's result, whether the mbarrier's phase completed, the map after the kernel, the
// mbarrier word, and the shared array up to its last byte that is not 0xee.
void RunCopy(const CopyForm& f) {
  std::vector<uint32_t> words(kDataBytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(0x10000 + i);
  conf::DeviceBuffer data(kDataBytes);
  ASSERT_EQ(cuMemcpyHtoD(data.ptr(), words.data(), kDataBytes), CUDA_SUCCESS);
  CUtensorMap m;
  CU_ASSERT_OK(f.encode(m, data.ptr()));
  uint32_t boxBytes;  // what the driver derived the copy moves (the map's word at byte 64)
  std::memcpy(&boxBytes, reinterpret_cast<const uint8_t*>(&m) + 64, 4);
  const std::string ptx = CopyKernel(f, boxBytes);
  if (const char* dir = std::getenv("CUEMU_CONF_DUMP_PTX"))
    std::ofstream(std::string(dir) + "/" + f.name + ".ptx") << ptx;
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CUmodule mod = nullptr;
  ASSERT_EQ(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals), CUDA_SUCCESS) << log;
  CUfunction fn = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&fn, mod, "k"), CUDA_SUCCESS);
  const size_t outBytes = 144 + kSharedBytes;
  conf::DeviceBuffer map(128), out(outBytes);
  ASSERT_EQ(cuMemcpyHtoD(map.ptr(), &m, 128), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(out.ptr(), 0xcc, outBytes), CUDA_SUCCESS);
  CUdeviceptr pmap = map.ptr(), pout = out.ptr();
  void* params[] = {&pmap, &pout};
  // A copy the GPU refuses faults the launch: the code is then the whole output (and the context is lost).
  CUresult rc = conf::Launch1D(fn, 1, 32, params);
  std::vector<uint8_t> got(outBytes);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoH(got.data(), out.ptr(), outBytes);
  std::vector<uint64_t> outputs;
  std::vector<uint32_t> after(words.size());
  if (rc == CUDA_SUCCESS && f.store) rc = cuMemcpyDtoH(after.data(), data.ptr(), kDataBytes);
  if (rc != CUDA_SUCCESS) {
    outputs = {0xdeadull, uint64_t(rc)};
  } else if (f.store) {  // each tensor word the store changed: (index << 32) | value
    outputs = {boxBytes};
    for (size_t i = 0; i < words.size(); ++i)
      if (after[i] != words[i]) outputs.push_back(uint64_t(i) << 32 | after[i]);
  } else {
    cuModuleUnload(mod);
    uint32_t polls;
    std::memcpy(&polls, &got[128], 4);
    size_t used = f.copy ? kSharedBytes : 0;
    while (used > 0 && got[144 + used - 1] == 0xee) --used;
    outputs = {boxBytes, polls < 200000 ? 1u : 0u};
    // the map, with the buffer's address taken out (it differs from run to run)
    uint64_t address;
    std::memcpy(&address, got.data(), 8);
    outputs.push_back(address - data.ptr());
    for (unsigned i = 1; i < 16; ++i) {
      uint64_t w;
      std::memcpy(&w, &got[8 * i], 8);
      outputs.push_back(w);
    }
    uint64_t bar;
    std::memcpy(&bar, &got[136], 8);
    outputs.push_back(bar);
    for (size_t i = 0; i < (used + 7) / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, &got[144 + 8 * i], 8);
      outputs.push_back(w);
    }
  }
  const uint64_t hash = conf::Fnv(ptx.data(), ptx.size());
  const std::string name = "tensor_copy_" + f.name;
  if (conf::GoldenRecord(name, hash, outputs)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor(name, hash);
  if (!golden) return;
  const std::vector<uint64_t>& want = golden->outputs;
  if (want.size() == 2 && want[0] == 0xdeadull) {
    EXPECT_EQ(outputs, want) << "the GPU's launch failed with " << conf::ResultName(CUresult(want[1]));
    return;
  }
  ASSERT_NE(outputs[0], 0xdeadull) << "the launch failed with " << conf::ResultName(CUresult(outputs[1]));
  if (f.store) {
    EXPECT_EQ(outputs, want) << "the tensor words the store changed ((index << 32) | value)";
    return;
  }
  EXPECT_EQ(outputs[0], want[0]) << "box bytes in the map";
  if (f.interleave == CU_TENSOR_MAP_INTERLEAVE_NONE || f.im2col || InterleavedTileBytes(f) == want[0]) {
    EXPECT_EQ(outputs[1], want[1]) << "the mbarrier's phase completed";
  }
  for (size_t i = 2; i < 18 && i < want.size(); ++i) EXPECT_EQ(outputs[i], want[i]) << "map word " << i - 2;
  EXPECT_EQ(outputs.size(), want.size()) << "shared bytes written (the last one not 0xee)";
  int shown = 0;
  for (size_t i = 19; i < outputs.size() && i < want.size(); ++i)
    if (outputs[i] != want[i] && shown++ < 8)
      ADD_FAILURE() << std::hex << "shared bytes " << std::dec << 8 * (i - 19) << std::hex << "..+7: got 0x"
                    << outputs[i] << ", the GPU gave 0x" << want[i];
}

// NHWC f32: 8 channels, W 6, H 5, N 3.
CopyForm Nhwc(std::string name) {
  CopyForm f;
  f.name = std::move(name);
  f.rank = 4;
  f.dims[0] = 8, f.dims[1] = 6, f.dims[2] = 5, f.dims[3] = 3;
  f.channels = 8;
  f.pixels = 16;
  return f;
}

std::vector<CopyForm> Im2colForms() {
  std::vector<CopyForm> v;
  auto add = [&](CopyForm f) { v.push_back(std::move(f)); };
  add(Nhwc("im2col_nhwc_basic"));
  {
    CopyForm f = Nhwc("im2col_nhwc_start_mid_row");
    f.coords[1] = 2, f.coords[2] = 1;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_wraps_into_next_image");
    f.coords[1] = 3, f.coords[2] = 4, f.coords[3] = 1;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_past_last_image");
    f.coords[1] = 1, f.coords[2] = 4, f.coords[3] = 2;
    add(f);
  }
  {  // a 3x3 filter with padding 1: corners -1 and -1 (pad - (filter - 1))
    CopyForm f = Nhwc("im2col_nhwc_padded_offsets_0_0");
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = -1, f.coords[2] = -1;
    f.pixels = 24;
    add(f);
    f.name = "im2col_nhwc_padded_offsets_1_2";
    f.offsets[0] = 1, f.offsets[1] = 2;
    add(f);
    f.name = "im2col_nhwc_padded_offsets_2_0";
    f.offsets[0] = 2, f.offsets[1] = 0;
    add(f);
  }
  {  // asymmetric corners tell which corner belongs to which dimension
    CopyForm f = Nhwc("im2col_nhwc_corners_asymmetric");
    f.lo[0] = -2, f.lo[1] = 1, f.hi[0] = 1, f.hi[1] = -2;
    f.coords[1] = -2, f.coords[2] = 1;
    f.pixels = 32;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_channels_4_from_4");
    f.channels = 4;
    f.coords[0] = 4;
    add(f);
    f.name = "im2col_nhwc_channels_8_from_4";
    f.channels = 8;
    add(f);
    f.name = "im2col_nhwc_channels_from_negative";
    f.coords[0] = -4;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_nan_fill");
    f.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[0] = 4, f.coords[1] = -1, f.coords[2] = -1;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_traversal_strides_2_2");
    f.es[1] = 2, f.es[2] = 2;
    f.pixels = 12;
    add(f);
    f.name = "im2col_nhwc_traversal_strides_3_1_from_1";
    f.es[1] = 3, f.es[2] = 1;
    f.coords[1] = 1;
    add(f);
    f.name = "im2col_nhwc_channel_and_image_strides";
    f.es[0] = 2, f.es[1] = 1, f.es[3] = 2;
    f.coords[1] = 3, f.coords[2] = 4;
    add(f);
  }
  {
    CopyForm f = Nhwc("im2col_nhwc_one_pixel");
    f.pixels = 1;
    f.coords[1] = 5, f.coords[2] = 4, f.coords[3] = 2;
    f.offsets[0] = 3, f.offsets[1] = 1;
    add(f);
  }
  {  // 32 channels of f32: 128-byte rows, swizzled
    CopyForm f = Nhwc("im2col_nhwc_swizzle_128B");
    f.dims[0] = 32;
    f.channels = 32;
    f.pixels = 8;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    add(f);
    f.name = "im2col_nhwc_swizzle_64B_short_rows";
    f.channels = 8;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    add(f);
  }
  {  // NWC: W 20, a wide first corner
    CopyForm f;
    f.name = "im2col_nwc_corners";
    f.rank = 3;
    f.dims[0] = 4, f.dims[1] = 20, f.dims[2] = 2;
    f.lo[0] = -3, f.hi[0] = 2;
    f.channels = 4;
    f.pixels = 40;
    f.coords[1] = -3;
    f.offsets[0] = 1;
    add(f);
  }
  {  // NDHWC: 3x3x3 images of 4 channels
    CopyForm f;
    f.name = "im2col_ndhwc_corners";
    f.rank = 5;
    f.dims[0] = 4, f.dims[1] = 3, f.dims[2] = 3, f.dims[3] = 3, f.dims[4] = 2;
    f.lo[0] = -1, f.lo[1] = 0, f.lo[2] = 1, f.hi[0] = 0, f.hi[1] = -1, f.hi[2] = 1;
    f.channels = 4;
    f.pixels = 40;
    f.coords[1] = -1, f.coords[2] = 0, f.coords[3] = 1;
    f.offsets[0] = 1, f.offsets[1] = 0, f.offsets[2] = 1;
    add(f);
  }
  {  // f16 and u8 elements
    CopyForm f = Nhwc("im2col_nhwc_f16");
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    f.dims[0] = 16;
    f.channels = 16;
    f.lo[0] = -1, f.hi[0] = -1;
    f.coords[1] = -1;
    add(f);
    f.name = "im2col_nhwc_u8";
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    add(f);
  }
  return v;
}

// Interleaved im2col (NC/8HWC8-like) f16 NHWC: 8 channels, W 6, H 5, N 3, global strides that are not twice the
// interleave (48, 496, 3008 bytes), so that the strides of different dimensions cannot be mistaken for one another.
CopyForm InterleavedIm2col(std::string name) {
  CopyForm f = Nhwc(std::move(name));
  f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  f.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
  f.strides[0] = 48, f.strides[1] = 496, f.strides[2] = 3008;
  return f;
}

// Tiled maps with interleaved layouts: rank 3 and 4 (the chunk of channels innermost).
CopyForm Interleaved(std::string name, CUtensorMapInterleave il) {
  CopyForm f;
  f.name = std::move(name);
  f.im2col = false;
  f.rank = 3;
  f.interleave = il;
  f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  f.dims[0] = il == CU_TENSOR_MAP_INTERLEAVE_32B ? 16 : 8, f.dims[1] = 10, f.dims[2] = 6;
  f.box[0] = unsigned(f.dims[0]), f.box[1] = 4, f.box[2] = 3;
  if (il == CU_TENSOR_MAP_INTERLEAVE_32B) f.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  return f;
}

std::vector<CopyForm> InterleavedForms() {
  std::vector<CopyForm> v;
  auto add = [&](CopyForm f) { v.push_back(std::move(f)); };
  const auto i16 = CU_TENSOR_MAP_INTERLEAVE_16B, i32 = CU_TENSOR_MAP_INTERLEAVE_32B;
  add(Interleaved("interleave16_basic", i16));
  {
    CopyForm f = Interleaved("interleave16_offset_and_edge", i16);
    f.coords[1] = 8, f.coords[2] = 4;
    add(f);
  }
  {
    CopyForm f = Interleaved("interleave16_narrow_tensor", i16);
    f.dims[0] = 6;
    add(f);
  }
  {
    CopyForm f = Interleaved("interleave16_element_stride_2", i16);
    f.es[0] = 2;
    add(f);
    f.name = "interleave16_element_strides_1_2_2";
    f.es[0] = 1, f.es[1] = 2, f.es[2] = 2;
    add(f);
  }
  {
    CopyForm f = Interleaved("interleave16_swizzle_32B", i16);
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    add(f);
    f.name = "interleave16_swizzle_64B";
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    add(f);
    f.name = "interleave16_swizzle_128B";
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    f.box[1] = 8;
    add(f);
  }
  add(Interleaved("interleave32_swizzle_32B", i32));
  {
    CopyForm f = Interleaved("interleave32_f32", i32);
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    f.dims[0] = 8, f.box[0] = 8;
    f.coords[1] = -1;
    f.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    add(f);
  }
  {
    CopyForm f = Interleaved("interleave16_rank4", i16);
    f.rank = 4;
    f.dims[3] = 3, f.box[3] = 2;
    f.coords[3] = 1;
    add(f);
  }
  {  // global strides that are not twice the interleave (48 and 496 bytes), so that rows, chunks and the strides
     // of dimensions 1 and 2 cannot be mistaken for one another; coordinates inside and across the edges
    CopyForm f = Interleaved("interleave16_pitch48", i16);
    f.strides[0] = 48, f.strides[1] = 496;
    f.coords[0] = 1, f.coords[1] = 3;
    add(f);
    f.name = "interleave16_pitch48_edges";
    f.dims[0] = 6;
    f.coords[0] = -1, f.coords[1] = 9, f.coords[2] = 4;
    add(f);
    f.name = "interleave16_pitch48_dim1_outside";
    f.dims[0] = 8;
    f.coords[0] = 0, f.coords[1] = 10, f.coords[2] = 0;
    add(f);
    f.name = "interleave16_pitch48_element_stride_3";
    f.coords[1] = 0;
    f.es[0] = 3;
    add(f);
    f.name = "interleave16_pitch48_rank5";
    f.es[0] = 1;
    f.rank = 5;
    f.dims[3] = 3, f.dims[4] = 2;
    f.strides[2] = 3008, f.strides[3] = 9024;
    f.box[3] = 2, f.box[4] = 2;
    f.coords[1] = 1, f.coords[2] = 2, f.coords[3] = 1, f.coords[4] = 1;
    add(f);
    f.name = "interleave16_pitch48_rank4_dim2_outside";
    f.rank = 4;
    f.coords[1] = 0, f.coords[2] = 7, f.coords[3] = 0;
    add(f);
  }
  {
    CopyForm f = Interleaved("interleave32_pitch96_u8", i32);
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    f.dims[0] = 12, f.box[0] = 16;
    f.strides[0] = 96, f.strides[1] = 992;
    f.coords[1] = 2, f.coords[2] = 1;
    add(f);
  }
  {  // interleaved im2col (NC/8HWC8 convolutions)
    CopyForm f = Nhwc("im2col_interleave16");
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    f.interleave = i16;
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = -1, f.coords[2] = -1;
    add(f);
  }
  add(InterleavedIm2col("im2col_interleave16_pitch48"));
  {
    CopyForm f = InterleavedIm2col("im2col_interleave16_padded_offsets");
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = -1;
    f.offsets[0] = 1, f.offsets[1] = 1;
    add(f);
  }
  {
    CopyForm f = InterleavedIm2col("im2col_interleave16_wraps_into_next_image");
    f.coords[1] = 3, f.coords[2] = 4, f.coords[3] = 1;
    add(f);
    f.name = "im2col_interleave16_channel_1";
    f.coords[0] = 1, f.coords[1] = 1, f.coords[2] = 2, f.coords[3] = 0;
    add(f);
  }
  {
    CopyForm f = InterleavedIm2col("im2col_interleave16_traversal_strides_2_2");
    f.es[1] = 2, f.es[2] = 2;
    add(f);
  }
  {
    CopyForm f = InterleavedIm2col("im2col_interleave16_swizzle_32B");
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    f.coords[1] = 1;
    add(f);
  }
  {
    CopyForm f = InterleavedIm2col("im2col_interleave16_u8");
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    f.dims[0] = 16, f.channels = 16;
    add(f);
  }
  {
    CopyForm f = InterleavedIm2col("im2col_interleave32_f16");
    f.interleave = i32;
    f.dims[0] = 16, f.channels = 16;
    f.strides[0] = 96, f.strides[1] = 992, f.strides[2] = 6016;
    f.coords[1] = 2, f.coords[2] = 1;
    add(f);
    f.name = "im2col_interleave32_f32_nan_fill";
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    f.dims[0] = 8, f.channels = 8;
    f.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = -1, f.coords[2] = 0;
    add(f);
  }
  {  // NWC: W 20, a wide first corner
    CopyForm f = InterleavedIm2col("im2col_interleave16_nwc_corners");
    f.rank = 3;
    f.dims[1] = 20, f.dims[2] = 2;
    f.strides[0] = 48, f.strides[1] = 1008;
    f.lo[0] = -3, f.hi[0] = 2;
    f.pixels = 40;
    f.coords[1] = -3;
    f.offsets[0] = 1;
    add(f);
  }
  {  // NDHWC: 3x3x3 images
    CopyForm f = InterleavedIm2col("im2col_interleave16_ndhwc");
    f.rank = 5;
    f.dims[1] = 3, f.dims[2] = 3, f.dims[3] = 3, f.dims[4] = 2;
    f.strides[0] = 48, f.strides[1] = 160, f.strides[2] = 496, f.strides[3] = 1504;
    f.pixels = 32;
    f.coords[1] = 1, f.coords[2] = 2, f.coords[3] = 1;
    f.offsets[0] = 1, f.offsets[2] = 1;
    add(f);
  }
  return v;
}

// tensormap.replace of global_stride with ordinal 3 (a rank-5 map has strides 0..3), then a copy; ordinal 4 alone.
std::vector<CopyForm> ReplaceForms() {
  std::vector<CopyForm> v;
  CopyForm f;
  f.name = "replace_global_stride_ordinal_3";
  f.im2col = false;
  f.rank = 5;
  f.dims[0] = 8, f.dims[1] = 4, f.dims[2] = 3, f.dims[3] = 2, f.dims[4] = 2;
  f.box[0] = 8, f.box[1] = 2, f.box[2] = 2, f.box[3] = 2, f.box[4] = 2;
  f.replace = "global_stride.b64 3, 4096";
  v.push_back(f);
  f.name = "replace_global_stride_ordinal_4_map";
  f.replace = "global_stride.b64 4, 4096";
  f.copy = false;
  v.push_back(f);
  return v;
}

// A store of a numbered box (tile mode).
std::vector<CopyForm> StoreForms() {
  std::vector<CopyForm> v;
  CopyForm t;
  t.name = "store_tile_3d";
  t.im2col = false;
  t.store = true;
  t.rank = 3;
  t.dims[0] = 8, t.dims[1] = 6, t.dims[2] = 5;
  t.box[0] = 8, t.box[1] = 4, t.box[2] = 2;
  t.coords[1] = 3, t.coords[2] = 4;
  v.push_back(t);
  // through an interleaved map (the interleaved loads' form, global strides of 48 and 496 bytes)
  CopyForm i = Interleaved("store_tile_interleave16", CU_TENSOR_MAP_INTERLEAVE_16B);
  i.store = true;
  i.strides[0] = 48, i.strides[1] = 496;
  i.coords[1] = 3, i.coords[2] = 1;
  v.push_back(i);
  i.name = "store_tile_interleave16_edges";
  i.dims[0] = 6;
  i.coords[0] = 2, i.coords[1] = 9, i.coords[2] = 4;
  v.push_back(i);
  return v;
}

// Copies an H100 refuses with a fault (each in a process of its own: a fault ends the context).
std::vector<CopyForm> FaultForms() {
  std::vector<CopyForm> v;
  CopyForm f = Nhwc("im2col_nhwc_start_outside_box");
  f.lo[0] = f.lo[1] = 1;
  v.push_back(f);
  f.name = "im2col_nhwc_start_past_box";
  f.lo[0] = f.lo[1] = 0;
  f.hi[0] = -2;
  f.coords[1] = 5;
  v.push_back(f);
  f.name = "im2col_nhwc_start_outside_box_in_h_only";
  f.hi[0] = 0, f.hi[1] = -1;
  f.coords[1] = 0, f.coords[2] = 4;
  v.push_back(f);
  CopyForm store = Nhwc("store_im2col_no_offs_nhwc");  // an H100 has no im2col stores
  store.store = true;
  store.lo[0] = store.lo[1] = -1, store.hi[0] = store.hi[1] = -1;
  store.coords[1] = -1, store.coords[2] = 0;
  v.push_back(store);
  store = InterleavedIm2col("store_im2col_no_offs_interleave16");
  store.store = true;
  v.push_back(store);
  for (const CopyForm& r : ReplaceForms()) {
    if (r.copy) continue;
    CopyForm c = r;
    c.name = "replace_global_stride_ordinal_4_copy";
    c.copy = true;
    v.push_back(c);
  }
  return v;
}

std::string FormName(const testing::TestParamInfo<CopyForm>& i) { return i.param.name; }

class ptx_async_TensorCopy : public conf::ContextTest, public testing::WithParamInterface<CopyForm> {};
TEST_P(ptx_async_TensorCopy, Golden) { RunCopy(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Im2col, ptx_async_TensorCopy, testing::ValuesIn(Im2colForms()), FormName);
INSTANTIATE_TEST_SUITE_P(Interleaved, ptx_async_TensorCopy, testing::ValuesIn(InterleavedForms()), FormName);
INSTANTIATE_TEST_SUITE_P(Replace, ptx_async_TensorCopy, testing::ValuesIn(ReplaceForms()), FormName);
INSTANTIATE_TEST_SUITE_P(Store, ptx_async_TensorCopy, testing::ValuesIn(StoreForms()), FormName);

class ptx_async_TensorCopy_Faults : public conf::ContextTest, public testing::WithParamInterface<CopyForm> {};
TEST_P(ptx_async_TensorCopy_Faults, Golden) { RunCopy(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_TensorCopy_Faults, testing::ValuesIn(FaultForms()), FormName);

}  // namespace
