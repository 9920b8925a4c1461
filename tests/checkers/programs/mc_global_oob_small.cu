// A 40-byte buffer written 24 bytes past its end: a GPU does not fault there (the granule is mapped), memcheck
// reports it.
#include "common.h"
__global__ void write_small(char* p) {
  if (threadIdx.x == 0) p[64] = 1;
}
int main() {
  char* p;
  STEP(cudaMalloc(&p, 40));
  write_small<<<1, 32>>>(p);
  return finish();
}
