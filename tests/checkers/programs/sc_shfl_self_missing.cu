// __shfl_sync whose mask names lanes 0-15 only, executed by all 32 lanes: lanes 16-31 are not in their own mask.
#include "common.h"
__global__ void half_mask(int* out) {
  int v = __shfl_sync(0x0000ffffu, int(threadIdx.x) + 100, 0);
  out[threadIdx.x] = v;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  half_mask<<<1, 32>>>(out);
  return finish();
}
