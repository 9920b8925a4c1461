// Thread (3,0,0) of block (1,0,0) reads 4 bytes past a 64-element buffer.
#include "common.h"
__global__ void read_past_end(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i % n] = a[i];
}
int main() {
  int *a, *out;
  STEP(cudaMalloc(&a, 64 * sizeof(int)));
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  STEP(cudaMemset(a, 0, 64 * sizeof(int)));
  read_past_end<<<2, 61>>>(a, out, 64);
  return finish();
}
