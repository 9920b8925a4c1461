// expect: 0 errors 1 warnings
// Lanes of one warp read what their neighbour wrote to global memory with no __syncwarp() between: a hazard
// between lanes of a warp (a warning, as racecheck reports it for shared memory).
#include "../programs/common.h"
__global__ void neighbours(int* scratch, int* out) {
  scratch[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = scratch[threadIdx.x ^ 1];
}
int main() {
  int *scratch, *out;
  STEP(cudaMalloc(&scratch, 32 * sizeof(int)));
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  neighbours<<<1, 32>>>(scratch, out);
  return finish();
}
