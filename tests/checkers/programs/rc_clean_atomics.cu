// Shared-memory atomics from every thread on one counter: atomics do not race.
#include "common.h"
__global__ void count(int* out) {
  __shared__ int counter;
  if (threadIdx.x == 0) counter = 0;
  __syncthreads();
  atomicAdd(&counter, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = counter;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 2 * sizeof(int)));
  count<<<2, 128>>>(out);
  return finish();
}
