// Thread (0,0,0) reads 8 bytes before a buffer of 1024 doubles.
#include "common.h"
__global__ void read_before(const double* a, double* out) {
  if (threadIdx.x == 0) out[0] = a[-1];
}
int main() {
  double *a, *out;
  STEP(cudaMalloc(&a, 1024 * sizeof(double)));
  STEP(cudaMalloc(&out, sizeof(double)));
  read_before<<<1, 1>>>(a, out);
  return finish();
}
