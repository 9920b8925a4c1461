// __syncwarp whose mask leaves out lane 0, executed by the whole warp: lane 0 is not in its own mask.
#include "common.h"
__global__ void self_missing(int* out) {
  __syncwarp(0xfffffffeu);
  out[threadIdx.x] = threadIdx.x;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  self_missing<<<1, 32>>>(out);
  return finish();
}
