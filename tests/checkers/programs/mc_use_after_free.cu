// A kernel reads a buffer freed before the launch.
#include "common.h"
__global__ void read_freed(const float* a, float* out) {
  if (threadIdx.x == 0) out[0] = a[0];
}
int main() {
  float *a, *out;
  STEP(cudaMalloc(&a, 1 << 20));
  STEP(cudaMalloc(&out, sizeof(float)));
  STEP(cudaFree(a));
  read_freed<<<1, 1>>>(a, out);
  return finish();
}
