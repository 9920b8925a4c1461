// Device-heap allocations freed by the threads that made them: no leak.
#include "common.h"
__global__ void scratch(int* out) {
  int* p = static_cast<int*>(malloc(64));
  for (int i = 0; i < 16; ++i) p[i] = i * threadIdx.x;
  out[threadIdx.x] = p[15];
  free(p);
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 32 * sizeof(int)));
  scratch<<<1, 32>>>(out);
  finish();
  STEP(cudaFree(out));
  return 0;
}
