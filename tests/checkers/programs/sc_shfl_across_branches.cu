// Both sides of a branch call __shfl_sync with the full mask, reading a lane of the other side. From Volta on the
// lanes wait for each other at any shfl.sync with the same mask (PTX ISA), so this is valid on sm_70 and later.
#include "common.h"
__global__ void across(int* out) {
  int v = int(threadIdx.x) * 10, got;
  if (threadIdx.x < 16)
    got = __shfl_sync(0xffffffffu, v, 20);
  else
    got = __shfl_sync(0xffffffffu, v, 3);
  out[threadIdx.x] = got;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  across<<<1, 32>>>(out);
  int host[32] = {};
  STEP(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("lane 0 read %d, lane 31 read %d\n", host[0], host[31]);
  return finish();
}
