// expect: 0 errors 0 warnings
// Race-free global memory: each thread its own element, a histogram with atomics from every CTA, a value every
// CTA reads and none writes, and lanes of one warp exchanging through global memory after __syncwarp().
#include "../programs/common.h"
__global__ void clean(const int* in, int* out, int* bins, const int* scale, int* scratch) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] * *scale;
  atomicAdd(&bins[in[i] % 4], 1);
  scratch[i] = i;
  __syncwarp();
  out[i] += scratch[blockIdx.x * blockDim.x + (threadIdx.x ^ 1)];
}
int main() {
  int *in, *out, *bins, *scale, *scratch, host[256], two = 2;
  for (int i = 0; i < 256; ++i) host[i] = i;
  STEP(cudaMalloc(&in, sizeof host));
  STEP(cudaMalloc(&out, sizeof host));
  STEP(cudaMalloc(&scratch, sizeof host));
  STEP(cudaMalloc(&bins, 4 * sizeof(int)));
  STEP(cudaMalloc(&scale, sizeof(int)));
  STEP(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice));
  STEP(cudaMemcpy(scale, &two, sizeof two, cudaMemcpyHostToDevice));
  STEP(cudaMemset(bins, 0, 4 * sizeof(int)));
  clean<<<4, 64>>>(in, out, bins, scale, scratch);
  return finish();
}
