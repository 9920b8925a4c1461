// A correct kernel first, then one whose thread 31 of block 0 writes past the end of a second buffer.
#include "common.h"
__global__ void fill(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}
__global__ void copy_overrun(const int* a, int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i + (i == 31 ? n : 0)] = a[i];
}
int main() {
  int *a, *b;
  STEP(cudaMalloc(&a, 256 * sizeof(int)));
  STEP(cudaMalloc(&b, 256 * sizeof(int)));
  fill<<<2, 128>>>(a, 256);
  STEP(cudaDeviceSynchronize());
  copy_overrun<<<2, 128>>>(a, b, 256);
  return finish();
}
