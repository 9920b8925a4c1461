// A buffer fully written by a host copy, then read by a kernel.
#include "common.h"
__global__ void twice(const float* a, float* b) { b[threadIdx.x] = 2 * a[threadIdx.x]; }
int main() {
  float host[128];
  for (int i = 0; i < 128; ++i) host[i] = float(i);
  float *a, *b;
  STEP(cudaMalloc(&a, sizeof host));
  STEP(cudaMalloc(&b, sizeof host));
  STEP(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
  twice<<<1, 128>>>(a, b);
  STEP(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost));
  return finish();
}
