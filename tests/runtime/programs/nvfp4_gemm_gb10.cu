// An NVFP4 GEMM as DGX Spark (GB10, compute capability 12.1) code writes it: packed e2m1 operands with ue4m3 scale
// factors per 16 elements of K, multiplied by the block-scaled warp mma (.kind::mxf4nvf4, scale_vec::4X) through
// inline assembly in CUTLASS's register conventions (the byte-id and thread-id selectors in 16-bit registers), built
// as compute_121a PTX. Runs on cuemu's gb10 profile (corpus test environment); any other device skips.
#include "check.h"

#include <cmath>
#include <cstdint>
#include <vector>

constexpr int M = 32, N = 16, K = 256;

__device__ uint32_t load4(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// A: M x K row-major, B: N x K row-major (each row one column of the product), two e2m1 per byte along K (the lower
// nibble first); SFA: M x K/16 and SFB: N x K/16 ue4m3 bytes. One warp per 16 x 8 tile of D.
__global__ void nvfp4Gemm(const uint8_t* A, const uint8_t* B, const uint8_t* sfA, const uint8_t* sfB, float* D) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  const uint16_t selector = 0;
  for (int k0 = 0; k0 < K; k0 += 64) {
    uint32_t a[4], b[2];
    for (int r = 0; r < 4; ++r)  // row g (+8 for odd r), K 8t..8t+7 (+32 for r >= 2)
      a[r] = load4(A + ((m0 + g + 8 * (r % 2)) * K + k0 + 8 * t + 32 * (r / 2)) / 2);
    for (int r = 0; r < 2; ++r)  // column g, K 8t..8t+7 (+32 for r = 1)
      b[r] = load4(B + ((n0 + g) * K + k0 + 8 * t + 32 * r) / 2);
    // lanes 4g and 4g + 2 hold row g's four factors, 4g + 1 and 4g + 3 row g + 8's; every lane of quad g column g's
    const uint32_t sfa = load4(sfA + (m0 + g + 8 * (t % 2)) * (K / 16) + k0 / 16);
    const uint32_t sfb = load4(sfB + (n0 + g) * (K / 16) + k0 / 16);
    asm volatile(
        "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, {%10}, {%11,%11}, {%12}, {%11,%11};\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(sfa), "h"(selector), "r"(sfb));
  }
  const float d[4] = {d0, d1, d2, d3};
  for (int i = 0; i < 4; ++i) D[(m0 + g + 8 * (i / 2)) * N + n0 + 2 * t + i % 2] = d[i];
}

double e2m1(unsigned code) {
  static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8) ? -v[code & 7] : v[code & 7];
}

int main() {
  CORPUS_PROGRAM("nvfp4_gemm_gb10");
  int major = 0, minor = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 12 || minor != 1) corpus::skip("needs a compute capability 12.1 device (compute_121a PTX)");
  std::vector<uint8_t> a(M * K / 2), b(N * K / 2), sfA(M * K / 16), sfB(N * K / 16);
  std::vector<unsigned> ac(M * K), bc(N * K);
  for (int i = 0; i < M * K; ++i) ac[i] = (i * 7 + i / K) % 16;
  for (int i = 0; i < N * K; ++i) bc[i] = (i * 5 + 3 * (i / K) + 1) % 16;
  for (int i = 0; i < M * K; i += 2) a[i / 2] = uint8_t(ac[i] | ac[i + 1] << 4);
  for (int i = 0; i < N * K; i += 2) b[i / 2] = uint8_t(bc[i] | bc[i + 1] << 4);
  static const uint8_t kUe4m3[4] = {0x38, 0x40, 0x30, 0x3c};  // 1, 2, 0.5, 1.5
  static const double kValue[4] = {1, 2, 0.5, 1.5};
  for (size_t i = 0; i < sfA.size(); ++i) sfA[i] = kUe4m3[i % 4];
  for (size_t i = 0; i < sfB.size(); ++i) sfB[i] = kUe4m3[(i * 3 + 1) % 4];
  uint8_t *dA, *dB, *dSfA, *dSfB;
  float* dD;
  CHECK_CUDA(cudaMalloc(&dA, a.size()));
  CHECK_CUDA(cudaMalloc(&dB, b.size()));
  CHECK_CUDA(cudaMalloc(&dSfA, sfA.size()));
  CHECK_CUDA(cudaMalloc(&dSfB, sfB.size()));
  CHECK_CUDA(cudaMalloc(&dD, M * N * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dA, a.data(), a.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, b.data(), b.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dSfA, sfA.data(), sfA.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dSfB, sfB.data(), sfB.size(), cudaMemcpyHostToDevice));
  nvfp4Gemm<<<dim3(N / 8, M / 16), 32>>>(dA, dB, dSfA, dSfB, dD);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> d(M * N);
  CHECK_CUDA(cudaMemcpy(d.data(), dD, d.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += e2m1(ac[i * K + k]) * kValue[(i * (K / 16) + k / 16) % 4] * e2m1(bc[j * K + k]) *
                kValue[((j * (K / 16) + k / 16) * 3 + 1) % 4];
      EXPECT_TRUE(d[i * N + j] == float(want));
    }
  std::printf("D[0][0] = %g, D[31][15] = %g\n", d[0], d[M * N - 1]);
  return corpus::pass();
}
