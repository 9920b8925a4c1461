// A shared-memory tree reduction (__syncthreads in its loop) of 16 Mi integers, 10 times, then the block sums.
#include <vector>

#include "check.h"

__global__ void reduce(const int* in, long long* out, int n) {
  __shared__ long long s[256];
  long long v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

int main() {
  const int n = 1 << 24, blocks = 1024, iterations = 10;
  std::vector<int> h(n);
  long long want = 0;
  for (int i = 0; i < n; ++i) want += h[i] = (i * 2654435761u) >> 24;
  int* d;
  long long* partial;
  CHECK(cudaMalloc(&d, size_t(n) * 4));
  CHECK(cudaMalloc(&partial, blocks * 8));
  CHECK(cudaMemcpy(d, h.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
  for (int i = 0; i < iterations; ++i) reduce<<<blocks, 256>>>(d, partial, n);
  CHECK(cudaGetLastError());
  std::vector<long long> p(blocks);
  CHECK(cudaMemcpy(p.data(), partial, blocks * 8, cudaMemcpyDeviceToHost));
  long long got = 0;
  for (long long x : p) got += x;
  CHECK(cudaFree(d));
  CHECK(cudaFree(partial));
  return verdict(got == want, "reduction");
}
