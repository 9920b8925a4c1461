// Only the first half of the buffer is set; thread i reads element i of all 64.
#include "common.h"
__global__ void copy(const int* a, int* out) { out[threadIdx.x] = a[threadIdx.x]; }
int main() {
  int *a, *out;
  STEP(cudaMalloc(&a, 64 * sizeof(int)));
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  STEP(cudaMemset(a, 0, 32 * sizeof(int)));
  copy<<<1, 64>>>(a, out);
  return finish();
}
