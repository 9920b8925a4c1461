// A shared tile loaded in a loop with a barrier after the loads but none before the next iteration's loads.
#include "common.h"
__global__ void tiles(const float* in, float* out, int tilesCount) {
  __shared__ float tile[64];
  float sum = 0;
  for (int t = 0; t < tilesCount; ++t) {
    tile[threadIdx.x] = in[t * 64 + threadIdx.x];
    __syncthreads();
    sum += tile[63 - threadIdx.x];
  }
  out[threadIdx.x] = sum;
}
int main() {
  float *in, *out;
  STEP(cudaMalloc(&in, 4 * 64 * sizeof(float)));
  STEP(cudaMalloc(&out, 64 * sizeof(float)));
  STEP(cudaMemset(in, 0, 4 * 64 * sizeof(float)));
  tiles<<<1, 64>>>(in, out, 4);
  return finish();
}
