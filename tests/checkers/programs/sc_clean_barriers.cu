// Barriers reached by every thread, warp shuffles with the mask of the active lanes: nothing to report.
#include "common.h"
__global__ void scan(int* out) {
  __shared__ int s[64];
  int v = threadIdx.x;
  for (int d = 1; d < 32; d <<= 1) {
    int n = __shfl_up_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 >= d) v += n;
  }
  s[threadIdx.x] = v;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x] + (threadIdx.x >= 32 ? s[31] : 0);
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 64 * sizeof(int)));
  scan<<<1, 64>>>(out);
  return finish();
}
