// A shared-memory tree reduction with a barrier at every step: no hazard.
#include "common.h"
__global__ void reduce(const int* in, int* out) {
  __shared__ int s[256];
  s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (int stride = 128; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
int main() {
  int *in, *out;
  STEP(cudaMalloc(&in, 4 * 256 * sizeof(int)));
  STEP(cudaMalloc(&out, 4 * sizeof(int)));
  STEP(cudaMemset(in, 0, 4 * 256 * sizeof(int)));
  reduce<<<4, 256>>>(in, out);
  return finish();
}
