// A 4-byte store at an odd address.
#include "common.h"
__global__ void store_misaligned(char* p) {
  if (threadIdx.x == 0) *reinterpret_cast<int*>(p + 1) = 7;
}
int main() {
  char* p;
  STEP(cudaMalloc(&p, 256));
  store_misaligned<<<1, 1>>>(p);
  return finish();
}
