// A named barrier whose thread count (48, from a kernel argument) is not a multiple of the warp size.
#include "common.h"
__global__ void not_multiple(int* out, int count) {
  asm volatile("bar.sync 1, %0;" ::"r"(count));
  out[threadIdx.x] = threadIdx.x;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  not_multiple<<<1, 64>>>(out, 48);
  return finish();
}
