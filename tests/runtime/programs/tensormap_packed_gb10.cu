// Tensor maps of the packed 4- and 6-bit types (CUDA 12.8+, compute capability 10 and 12: CU_TENSOR_MAP_DATA_TYPE_
// 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B) as a GB10 (12.1) program uses them: the driver's requirements for
// them (cuda.h), and tiled TMA loads of each into shared memory, where a 16-element unit lands packed (ALIGN8B) or
// padded to 16 bytes (ALIGN16B: the rows ldmatrix's .b4x16_p64/.b6x16_p32 read, here unpacked by them), the
// mbarrier counting the units' data bytes. Built as compute_121a PTX; runs on cuemu's gb10 profile (corpus test
// environment); any other device skips. (No GPU of compute capability 10 or 12 recorded it.)
#include "check.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <vector>

constexpr int kRows = 8;

// Loads the 128-element-wide box at (x, 0) of `map` (rows kRows) into shared memory, expecting `bytes` on the
// mbarrier, and copies the shared bytes (`sharedBytes`) out; with `unpack` (4 or 6), each lane also reads row
// lane % 8 of the box (its first unit) with ldmatrix .m8n16 .b8x16 from the padded format and writes its 4 bytes.
__global__ void load(const __grid_constant__ CUtensorMap map, int x, unsigned bytes, unsigned sharedBytes, int unpack,
                     uint8_t* out, uint32_t* unpacked) {
  __shared__ alignas(1024) uint8_t box[kRows * 128];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(box));
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];" ::"r"(s),
        "l"(&map), "r"(x), "r"(0), "r"(b)
        : "memory");
    uint32_t done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(b)
          : "memory");
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < sharedBytes; i += blockDim.x) out[i] = box[i];
  if (unpack) {
    const uint32_t row = s + 128 * (threadIdx.x % 8);  // tensor row lane % 8, its first unit
    uint32_t r;
    if (unpack == 4)
      asm volatile("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64 {%0}, [%1];" : "=r"(r) : "r"(row));
    else
      asm volatile("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%0}, [%1];" : "=r"(r) : "r"(row));
    unpacked[threadIdx.x] = r;
  }
}

int main() {
  CORPUS_PROGRAM("tensormap_packed_gb10");
  int major = 0, minor = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 12 || minor != 1) corpus::skip("needs a compute capability 12.1 device (compute_121a PTX)");
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000,
                                              cudaEnableDefault, &found));
  EXPECT_TRUE(found == cudaDriverEntryPointSuccess && encode);

  // A 256-element x kRows tensor of each type, rows padded to 256 bytes; element (x, y) = (x * 3 + y * 5) & mask.
  constexpr int kWidth = 256, kPitch = 256;
  uint8_t* dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, kPitch * kRows + 256));
  uint8_t* out = nullptr;
  uint32_t* unpacked = nullptr;
  CHECK_CUDA(cudaMalloc(&out, kRows * 128));
  CHECK_CUDA(cudaMalloc(&unpacked, 32 * 4));
  struct Form {
    CUtensorMapDataType type;
    unsigned bits, globalUnit, sharedUnit;
  } forms[] = {{CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, 4, 8, 8},
               {CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B, 4, 8, 16},
               {CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B, 6, 12, 16}};
  for (const Form& f : forms) {
    const unsigned mask = (1u << f.bits) - 1;
    std::vector<uint8_t> host(kPitch * kRows, 0);
    for (int y = 0; y < kRows; ++y)
      for (int x = 0; x < kWidth; ++x) {
        const unsigned v = (x * 3 + y * 5) & mask, bit = x * f.bits;
        host[y * kPitch + bit / 8] |= uint8_t(v << (bit % 8));
        if (bit % 8 + f.bits > 8) host[y * kPitch + bit / 8 + 1] |= uint8_t(v >> (8 - bit % 8));
      }
    CHECK_CUDA(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice));
    alignas(64) CUtensorMap map;
    cuuint64_t dims[2] = {kWidth, kRows}, strides[1] = {kPitch};
    cuuint32_t box[2] = {128, kRows}, elementStrides[2] = {1, 1};
    auto tryEncode = [&](void* address, const cuuint64_t* d, const cuuint64_t* s, const cuuint32_t* b,
                         CUtensorMapSwizzle swizzle) {
      return encode(&map, f.type, 2, address, d, s, b, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    };
    const bool padded = f.sharedUnit == 16;
    // cuda.h's requirements for the packed types
    cuuint64_t oddDims[2] = {cuuint64_t(kWidth - (padded ? 64 : 1)), kRows}, stride208[1] = {208};  // a multiple of 16, not of 32
    cuuint32_t box64[2] = {64, kRows};
    EXPECT_EQ_INT(tryEncode(dev, oddDims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ_INT(tryEncode(dev + 16, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE),
                  padded ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    EXPECT_EQ_INT(tryEncode(dev, dims, stride208, box, CU_TENSOR_MAP_SWIZZLE_NONE),
                  padded ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    EXPECT_EQ_INT(tryEncode(dev, dims, strides, box64, CU_TENSOR_MAP_SWIZZLE_NONE),
                  padded ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    EXPECT_EQ_INT(tryEncode(dev, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_64B),
                  padded ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
    EXPECT_EQ_INT(tryEncode(dev, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_SUCCESS);
    // the box at x = 128: 8 units a row
    const unsigned units = 8, sharedBytes = kRows * units * f.sharedUnit;
    CHECK_CUDA(cudaMemset(out, 0xee, kRows * 128));
    load<<<1, 32>>>(map, 128, kRows * units * f.globalUnit, sharedBytes, padded ? int(f.bits) : 0, out, unpacked);
    CHECK_CUDA(cudaGetLastError());
    std::vector<uint8_t> got(sharedBytes);
    std::vector<uint32_t> rows(32);
    CHECK_CUDA(cudaMemcpy(got.data(), out, sharedBytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(rows.data(), unpacked, 32 * 4, cudaMemcpyDeviceToHost));
    for (int y = 0; y < kRows; ++y)
      for (unsigned u = 0; u < units; ++u)
        for (unsigned k = 0; k < f.sharedUnit; ++k) {
          const unsigned want = k < f.globalUnit ? host[y * kPitch + (8 + u) * f.globalUnit + k] : 0;
          EXPECT_EQ_INT(got[(y * units + u) * f.sharedUnit + k], want);
        }
    if (padded)  // lane l: row l / 4 of the box's first unit column, elements 4 (l % 4)..+3, one per byte
      for (unsigned l = 0; l < 32; ++l)
        for (unsigned e = 0; e < 4; ++e)
          EXPECT_EQ_INT((rows[l] >> (8 * e)) & 0xff, ((128 + 4 * (l % 4) + e) * 3 + (l / 4) * 5) & mask);
  }
  return corpus::pass();
}
