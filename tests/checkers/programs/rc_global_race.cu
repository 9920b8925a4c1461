// Two blocks write and read the same global words without synchronisation (a global-memory race between CTAs).
#include "common.h"
__global__ void clash(int* data, int* out) {
  data[threadIdx.x] = blockIdx.x;
  out[blockIdx.x * 64 + threadIdx.x] = data[63 - threadIdx.x];
}
int main() {
  int *data, *out;
  STEP(cudaMalloc(&data, 64 * sizeof(int)));
  STEP(cudaMalloc(&out, 2 * 64 * sizeof(int)));
  clash<<<2, 64>>>(data, out);
  return finish();
}
