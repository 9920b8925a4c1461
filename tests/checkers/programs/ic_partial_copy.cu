// A host copy fills 8 of 10 elements; thread 0 reads element 9.
#include "common.h"
__global__ void read_last(const float* a, float* out) {
  if (threadIdx.x == 0) out[0] = a[9];
}
int main() {
  float host[10] = {};
  float *a, *out;
  STEP(cudaMalloc(&a, 10 * sizeof(float)));
  STEP(cudaMalloc(&out, sizeof(float)));
  STEP(cudaMemcpy(a, host, 8 * sizeof(float), cudaMemcpyHostToDevice));
  read_last<<<1, 32>>>(a, out);
  return finish();
}
