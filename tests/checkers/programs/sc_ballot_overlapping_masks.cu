// One __ballot_sync where lanes 0-15 name the whole warp and lanes 16-31 name only themselves: the lanes a mask
// names do not all execute it with that mask.
#include "common.h"
__global__ void overlapping(unsigned* out) {
  unsigned mask = threadIdx.x < 16 ? 0xffffffffu : 0xffff0000u;
  out[threadIdx.x] = __ballot_sync(mask, threadIdx.x % 3 == 0);
}
int main() {
  unsigned* out;
  STEP(cudaMalloc(&out, 32 * sizeof(unsigned)));
  overlapping<<<1, 32>>>(out);
  unsigned host[32] = {};
  STEP(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("ballot: lane 0 %08x, lane 31 %08x\n", host[0], host[31]);
  return finish();
}
