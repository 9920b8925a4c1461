// Dynamic shared memory of 256 bytes; thread 5 writes far past it.
#include "common.h"
__global__ void shared_past_end(int* out, int index) {
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 5) s[index] = 1;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  shared_past_end<<<1, 64, 256>>>(out, 1 << 20);
  return finish();
}
