// Device-heap allocations (malloc in a kernel) never freed: 4 threads leak 32 bytes each.
#include "common.h"
__global__ void leak(int** out) {
  int* p = static_cast<int*>(malloc(32));
  p[0] = threadIdx.x;
  out[threadIdx.x] = p;
}
int main() {
  int** out;
  STEP(cudaMalloc(&out, 4 * sizeof(int*)));
  leak<<<1, 4>>>(out);
  finish();
  STEP(cudaFree(out));
  return 0;
}
