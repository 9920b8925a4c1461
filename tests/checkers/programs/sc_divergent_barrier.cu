// __syncthreads() reached by only the first 16 threads of each warp.
#include "common.h"
__global__ void divergent(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x % 32 < 16) __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  divergent<<<1, 64>>>(out);
  return finish();
}
