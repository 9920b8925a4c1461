// A hazard within one warp: lanes write shared memory and, without __syncwarp, read what the next lane wrote.
#include "common.h"
__global__ void shift(int* out) {
  __shared__ volatile int s[32];
  s[threadIdx.x] = threadIdx.x * 3;
  out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  shift<<<1, 32>>>(out);
  return finish();
}
