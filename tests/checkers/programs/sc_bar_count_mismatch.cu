// A named barrier whose thread count (64) is less than the threads that reach it (128: four warps).
#include "common.h"
__global__ void named(int* out) {
  asm volatile("bar.sync 1, 64;");
  out[threadIdx.x] = threadIdx.x;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 128 * sizeof(int)));
  named<<<1, 128>>>(out);
  return finish();
}
