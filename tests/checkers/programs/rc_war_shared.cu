// Write-after-read hazard: warp 1 overwrites what warp 0 reads, with a barrier only before the reads.
#include "common.h"
__global__ void shift(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int v = s[(threadIdx.x + 32) % 64];
  s[threadIdx.x] = v + 1;
  out[threadIdx.x] = v;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  shift<<<1, 64>>>(out);
  return finish();
}
