// One thread (100 of block 0) writes one element past a 100-element buffer.
#include "common.h"
__global__ void write_past_end(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) a[i] = i;
}
int main() {
  int* a;
  STEP(cudaMalloc(&a, 100 * sizeof(int)));
  write_past_end<<<1, 128>>>(a, 100);
  return finish();
}
