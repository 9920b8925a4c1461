// Issue 18 (the im2col::w tensor modes): what cuTensorMapEncodeIm2colWide answers on this GPU. The encode is a host
// call; on a compute-capability-9 device the wide im2col copies do not exist (they are sm_100a forms), so the
// question is whether the driver still encodes such maps and which arguments it checks.
// Output: one line per call, "<label> rc <CUresult>" and, where it succeeded, the map's 16 64-bit words.
#include <cuda.h>

#include <cstdint>
#include <cstdio>

namespace {

void show(const char* label, CUresult rc, const CUtensorMap& m) {
  std::printf("%s rc %d", label, int(rc));
  if (rc == CUDA_SUCCESS) {
    const uint64_t* w = reinterpret_cast<const uint64_t*>(&m);
    std::printf(" map");
    for (int i = 0; i < 16; ++i) std::printf(" %016llx", static_cast<unsigned long long>(w[i]));
  }
  std::printf("\n");
}

}  // namespace

int main() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 1 << 22);
  void* base = reinterpret_cast<void*>(d);
  alignas(128) CUtensorMap map{};
  cuuint64_t dims[5] = {64, 16, 16, 8, 2};  // channels, width, height, depth/batch, batch
  cuuint64_t strides[4] = {128, 128 * 16, 128 * 16 * 16, 128 * 16 * 16 * 8};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  const auto none = CU_TENSOR_MAP_INTERLEAVE_NONE;
  const auto l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  const auto fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  const auto W = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, W128 = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128;
  auto enc = [&](const char* label, CUtensorMapDataType t, unsigned rank, void* g, int lo, int hi, unsigned ch,
                 unsigned px, CUtensorMapInterleave il, CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle sw) {
    map = CUtensorMap{};
    CUresult rc =
        cuTensorMapEncodeIm2colWide(&map, t, rank, g, dims, strides, lo, hi, ch, px, es, il, mode, sw, l2, fill);
    show(label, rc, map);
  };
  const auto f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const auto sw128 = CU_TENSOR_MAP_SWIZZLE_128B, sw64 = CU_TENSOR_MAP_SWIZZLE_64B, sw32 = CU_TENSOR_MAP_SWIZZLE_32B;
  const auto swNone = CU_TENSOR_MAP_SWIZZLE_NONE;
  enc("base_r4_w_sw128", f16, 4, base, -1, 1, 64, 32, none, W, sw128);
  enc("r3_w_sw128", f16, 3, base, -1, 1, 64, 32, none, W, sw128);
  enc("r5_w_sw128", f16, 5, base, -1, 1, 64, 32, none, W, sw128);
  enc("r4_w128_sw128", f16, 4, base, -1, 1, 64, 32, none, W128, sw128);
  enc("r4_w_sw64", f16, 4, base, -1, 1, 32, 32, none, W, sw64);
  enc("r4_w_sw32", f16, 4, base, -1, 1, 16, 32, none, W, sw32);
  enc("r4_w_swnone", f16, 4, base, -1, 1, 64, 32, none, W, swNone);
  enc("r4_w128_sw64", f16, 4, base, -1, 1, 32, 32, none, W128, sw64);
  enc("r2", f16, 2, base, -1, 1, 64, 32, none, W, sw128);
  enc("r6", f16, 6, base, -1, 1, 64, 32, none, W, sw128);
  enc("il16", f16, 4, base, -1, 1, 64, 32, CU_TENSOR_MAP_INTERLEAVE_16B, W, sw128);
  enc("lo_m32768", f16, 4, base, -32768, 1, 64, 32, none, W, sw128);
  enc("lo_m32769", f16, 4, base, -32769, 1, 64, 32, none, W, sw128);
  enc("hi_32767", f16, 4, base, -1, 32767, 64, 32, none, W, sw128);
  enc("lo_m129", f16, 4, base, -129, 1, 64, 32, none, W, sw128);
  enc("ch0", f16, 4, base, -1, 1, 0, 32, none, W, sw128);
  enc("ch256", f16, 4, base, -1, 1, 256, 32, none, W, sw128);
  enc("ch257", f16, 4, base, -1, 1, 257, 32, none, W, sw128);
  enc("px0", f16, 4, base, -1, 1, 64, 0, none, W, sw128);
  enc("px1024", f16, 4, base, -1, 1, 64, 1024, none, W, sw128);
  enc("px1025", f16, 4, base, -1, 1, 64, 1025, none, W, sw128);
  enc("mode2", f16, 4, base, -1, 1, 64, 32, none, CUtensorMapIm2ColWideMode(2), sw128);
  enc("misaligned", f16, 4, reinterpret_cast<char*>(base) + 8, -1, 1, 64, 32, none, W, sw128);
  enc("null_addr", f16, 4, nullptr, -1, 1, 64, 32, none, W, sw128);
  enc("f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, base, -1, 1, 32, 32, none, W, sw128);
  enc("u8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, base, -1, 1, 128, 32, none, W, sw128);
  enc("sw128_atom32", f16, 4, base, -1, 1, 64, 32, none, W, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B);
  CUresult rc =
      cuTensorMapEncodeIm2colWide(nullptr, f16, 4, base, dims, strides, -1, 1, 64, 32, es, none, W, sw128, l2, fill);
  std::printf("null_map rc %d\n", int(rc));
  // a tiled and a plain im2col map of the same tensor, for comparison of the words
  cuuint32_t box[4] = {64, 8, 1, 1};
  show("tiled_ref", cuTensorMapEncodeTiled(&map, f16, 4, base, dims, strides, box, es, none, sw128, l2, fill), map);
  int lo2[2] = {-1, -1}, hi2[2] = {1, 1};
  show("im2col_ref",
       cuTensorMapEncodeIm2col(&map, f16, 4, base, dims, strides, lo2, hi2, 64, 32, es, none, sw128, l2, fill), map);
  return 0;
}
