// A 512x512 shared-memory tiled matrix product, 20 times (the classic sample's loop).
#include <cmath>
#include <vector>

#include "check.h"

constexpr int kTile = 16;

__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < n; t += kTile) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

int main() {
  const int n = 512, iterations = 20;
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n);
  for (int i = 0; i < n * n; ++i) a[i] = float((i * 7) % 13) / 13, b[i] = float((i * 5) % 11) / 11;
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, a.size() * 4));
  CHECK(cudaMalloc(&db, b.size() * 4));
  CHECK(cudaMalloc(&dc, a.size() * 4));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  dim3 block(kTile, kTile), grid(n / kTile, n / kTile);
  for (int i = 0; i < iterations; ++i) matmul<<<grid, block>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  std::vector<float> c(a.size());
  CHECK(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int r = 0; r < n; r += 37)
    for (int col = 0; col < n; col += 41) {
      double want = 0;
      for (int k = 0; k < n; ++k) want += double(a[size_t(r) * n + k]) * b[size_t(k) * n + col];
      if (std::fabs(want - c[size_t(r) * n + col]) > 1e-3 * std::fabs(want) + 1e-3) ok = false;
    }
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  return verdict(ok, "matmul_tiled");
}
