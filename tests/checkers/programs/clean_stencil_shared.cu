// A 1-D stencil through a shared tile with halo, barrier between loads and reads, full bounds checks.
#include "common.h"
__global__ void stencil(const float* in, float* out, int n) {
  __shared__ float tile[128 + 2];
  int i = blockIdx.x * 128 + threadIdx.x;
  tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.0f;
  if (threadIdx.x == 127) tile[129] = i + 1 < n ? in[i + 1] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2];
}
int main() {
  const int n = 1000;
  float *in, *out;
  STEP(cudaMalloc(&in, n * sizeof(float)));
  STEP(cudaMalloc(&out, n * sizeof(float)));
  STEP(cudaMemset(in, 0, n * sizeof(float)));
  stencil<<<(n + 127) / 128, 128>>>(in, out, n);
  STEP(cudaFree(in));
  STEP(cudaFree(out));
  return finish();
}
