// __shfl_sync naming all 32 lanes after half of them have returned.
#include "common.h"
__global__ void shuffle(int* out) {
  if (threadIdx.x >= 16) return;
  int v = __shfl_sync(0xffffffffu, int(threadIdx.x), 0);
  out[threadIdx.x] = v;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  shuffle<<<1, 32>>>(out);
  return finish();
}
