// A failed device assert() ends the kernel; the runtime reports cudaErrorAssert at the next synchronisation,
// and the error sticks to the context.
#include "check.h"

#include <cassert>

__global__ void checkPositive(const int* values) {
  assert(values[threadIdx.x] > 0);
}

int main() {
  CORPUS_PROGRAM("assert");
#ifdef NDEBUG
  corpus::skip("built with NDEBUG");
#endif
  int host[32];
  for (int i = 0; i < 32; ++i) host[i] = i == 17 ? -1 : i + 1;
  int* values;
  CHECK_CUDA(cudaMalloc(&values, sizeof host));
  CHECK_CUDA(cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice));
  checkPositive<<<1, 32>>>(values);
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT_EQ_INT(e, cudaErrorAssert);
  EXPECT_EQ_INT(cudaGetLastError(), cudaErrorAssert);
  EXPECT_EQ_INT(cudaMemcpy(host, values, sizeof host, cudaMemcpyDeviceToHost), cudaErrorAssert);
  return corpus::pass();
}
