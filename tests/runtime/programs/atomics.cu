// Atomics on global and shared memory: add (int, unsigned long long, float, double), min/max, CAS loops,
// exchange, and a shared-memory histogram.
#include "check.h"

#include <vector>

struct Results {
  int sum;
  unsigned long long wideSum;
  float floatSum;
  double doubleSum;
  int minimum;
  int maximum;
  unsigned int orBits;
  int casSum;
  int exchanged;
};

__device__ void casAdd(int* address, int value) {
  int old = *address, assumed;
  do {
    assumed = old;
    old = atomicCAS(address, assumed, assumed + value);
  } while (old != assumed);
}

__global__ void hammer(Results* r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&r->sum, 1);
  atomicAdd(&r->wideSum, 1ull << 33);
  atomicAdd(&r->floatSum, 0.5f);
  atomicAdd(&r->doubleSum, 0.25);
  atomicMin(&r->minimum, i - 1000);
  atomicMax(&r->maximum, i * 3);
  atomicOr(&r->orBits, 1u << (i % 32));
  casAdd(&r->casSum, 2);
  atomicExch(&r->exchanged, 12345);
}

__global__ void histogram(const unsigned char* data, int n, unsigned int* bins) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main() {
  CORPUS_PROGRAM("atomics");
  const int n = 100000;
  Results init{0, 0, 0.0f, 0.0, 1 << 30, -1, 0, 0, 0};
  Results* r;
  CHECK_CUDA(cudaMalloc(&r, sizeof(Results)));
  CHECK_CUDA(cudaMemcpy(r, &init, sizeof init, cudaMemcpyHostToDevice));
  hammer<<<(n + 255) / 256, 256>>>(r, n);
  Results out;
  CHECK_CUDA(cudaMemcpy(&out, r, sizeof out, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(out.sum, n);
  EXPECT_TRUE(out.wideSum == (unsigned long long)n << 33);
  EXPECT_TRUE(out.floatSum == 0.5f * n);  // exact: every partial sum is representable
  EXPECT_TRUE(out.doubleSum == 0.25 * n);
  EXPECT_EQ_INT(out.minimum, -1000);
  EXPECT_EQ_INT(out.maximum, (n - 1) * 3);
  EXPECT_TRUE(out.orBits == 0xFFFFFFFFu);
  EXPECT_EQ_INT(out.casSum, 2 * n);
  EXPECT_EQ_INT(out.exchanged, 12345);

  const int bytes = 1 << 20;
  std::vector<unsigned char> data(bytes);
  std::vector<unsigned int> expected(256, 0);
  unsigned int seed = 1;
  for (int i = 0; i < bytes; ++i) {
    seed = seed * 1103515245u + 12345u;
    data[i] = static_cast<unsigned char>(seed >> 24);
    expected[data[i]]++;
  }
  unsigned char* dData;
  unsigned int* bins;
  CHECK_CUDA(cudaMalloc(&dData, bytes));
  CHECK_CUDA(cudaMalloc(&bins, 256 * sizeof(unsigned int)));
  CHECK_CUDA(cudaMemcpy(dData, data.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(bins, 0, 256 * sizeof(unsigned int)));
  histogram<<<64, 256>>>(dData, bytes, bins);
  std::vector<unsigned int> got(256);
  CHECK_CUDA(cudaMemcpy(got.data(), bins, 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < 256; ++b)
    if (got[b] != expected[b]) corpus::fail("histogram bin", __FILE__, __LINE__);
  CHECK_CUDA(cudaFree(r));
  CHECK_CUDA(cudaFree(dData));
  CHECK_CUDA(cudaFree(bins));
  return corpus::pass();
}
