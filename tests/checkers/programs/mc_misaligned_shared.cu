// An 8-byte shared-memory load at an address that is 4 modulo 8.
#include "common.h"
__global__ void load_misaligned_shared(double* out, int offset) {
  __shared__ double s[32];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = *reinterpret_cast<double*>(reinterpret_cast<char*>(s) + offset);
}
int main() {
  double* out;
  STEP(cudaMalloc(&out, sizeof(double)));
  load_misaligned_shared<<<1, 32>>>(out, 4);
  return finish();
}
