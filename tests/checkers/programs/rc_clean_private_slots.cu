// Every thread uses only its own shared slot: no hazard without barriers.
#include "common.h"
__global__ void private_slots(int* out) {
  __shared__ int s[128];
  s[threadIdx.x] = threadIdx.x;
  s[threadIdx.x] += 1;
  out[threadIdx.x] = s[threadIdx.x];
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 128 * sizeof(int)));
  private_slots<<<2, 128>>>(out);
  return finish();
}
