// A 256-bin histogram of 64 MiB of bytes: per-block bins in shared memory (atomics), merged with global atomics.
#include <vector>

#include "check.h"

__global__ void histogram(const unsigned char* in, size_t n, unsigned* bins) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    atomicAdd(&local[in[i]], 1u);
  __syncthreads();
  atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

int main() {
  const size_t n = size_t(64) << 20;
  std::vector<unsigned char> h(n);
  std::vector<unsigned> want(256, 0);
  unsigned x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    h[i] = (unsigned char)((x >> 16) % 200);
    ++want[h[i]];
  }
  unsigned char* d;
  unsigned* bins;
  CHECK(cudaMalloc(&d, n));
  CHECK(cudaMalloc(&bins, 256 * 4));
  CHECK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(bins, 0, 256 * 4));
  histogram<<<512, 256>>>(d, n, bins);
  CHECK(cudaGetLastError());
  std::vector<unsigned> got(256);
  CHECK(cudaMemcpy(got.data(), bins, 256 * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  CHECK(cudaFree(bins));
  return verdict(got == want, "histogram");
}
