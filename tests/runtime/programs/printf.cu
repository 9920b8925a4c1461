// Device printf: the lines appear (checked by the test's output pattern) once the device synchronises.
#include "check.h"

__global__ void greet(int tag) {
  if (threadIdx.x == 0) printf("device says hello from block %d, tag %d, %s, %.2f\n", blockIdx.x, tag, "str", 1.5);
}

int main() {
  CORPUS_PROGRAM("printf");
  greet<<<2, 32>>>(42);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::fflush(stdout);
  return corpus::pass();
}
