// Write-after-write hazard: the first thread of each warp writes the same shared word.
#include "common.h"
__global__ void last_writer(int* out) {
  __shared__ int flag;
  if (threadIdx.x % 32 == 0) flag = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = flag;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, sizeof(int)));
  last_writer<<<1, 128>>>(out);
  return finish();
}
