// Read-after-write hazard: each thread writes its slot and, without a barrier, reads a slot another warp writes.
#include "common.h"
__global__ void rotate(int* out) {
  __shared__ int s[128];
  s[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = s[(threadIdx.x + 64) % 128];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 128 * sizeof(int)));
  rotate<<<1, 128>>>(out);
  return finish();
}
