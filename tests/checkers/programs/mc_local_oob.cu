// A thread indexes its local array far out of range.
#include "common.h"
__global__ void local_past_end(int* out, int index) {
  volatile int local[16];
  for (int i = 0; i < 16; ++i) local[i] = i * threadIdx.x;
  if (threadIdx.x == 2) local[index] = 3;
  out[threadIdx.x] = local[threadIdx.x & 15];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  local_past_end<<<1, 32>>>(out, 1 << 26);
  return finish();
}
