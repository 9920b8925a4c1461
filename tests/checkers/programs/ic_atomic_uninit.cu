// Threads add to a counter nobody set (atomicAdd on never-written memory), then one thread reads it.
#include "common.h"
__global__ void count(int* counter, int* out) {
  atomicAdd(counter, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = *counter;
}
int main() {
  int *counter, *out;
  STEP(cudaMalloc(&counter, sizeof(int)));
  STEP(cudaMalloc(&out, sizeof(int)));
  count<<<1, 32>>>(counter, out);
  return finish();
}
