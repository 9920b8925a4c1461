// Two warps reach named barrier 1 with different thread counts (64 and 96).
#include "common.h"
__global__ void varying(int* out) {
  if (threadIdx.x < 32)
    asm volatile("bar.sync 1, 64;");
  else
    asm volatile("bar.sync 1, 96;");
  out[threadIdx.x] = threadIdx.x;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  varying<<<1, 64>>>(out);
  return finish();
}
