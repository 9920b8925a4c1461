// __syncwarp with a full mask executed by half of the warp.
#include "common.h"
__global__ void half_warp(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x < 16) {
    __syncwarp(0xffffffffu);
    v += 1;
  }
  out[threadIdx.x] = v;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  half_warp<<<1, 32>>>(out);
  return finish();
}
