// An atomicAdd one element past a counter array.
#include "common.h"
__global__ void count(unsigned* counters, int n) {
  if (threadIdx.x == 0) atomicAdd(&counters[n], 1u);
}
int main() {
  unsigned* c;
  STEP(cudaMalloc(&c, 8 * sizeof(unsigned)));
  count<<<1, 32>>>(c, 8);
  return finish();
}
