// A kernel that writes through a wild pointer: cudaDeviceSynchronize reports cudaErrorIllegalAddress, which
// then sticks (every later call that synchronises fails the same way).
#include "check.h"

__global__ void writeThrough(int* p) { p[threadIdx.x] = 1; }

int main() {
  CORPUS_PROGRAM("kernel_fault");
  int* good;
  CHECK_CUDA(cudaMalloc(&good, 128));
  writeThrough<<<1, 32>>>(good);
  CHECK_CUDA(cudaDeviceSynchronize());
  // Far from any allocation, in the upper half of the address space.
  writeThrough<<<1, 32>>>(reinterpret_cast<int*>(0x7ff0deadbeef0000ull));
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT_EQ_INT(e, cudaErrorIllegalAddress);
  EXPECT_EQ_INT(cudaGetLastError(), cudaErrorIllegalAddress);
  // Measured on an H200 (driver 580): reading the last error clears it, although the context stays broken.
  EXPECT_EQ_INT(cudaPeekAtLastError(), cudaSuccess);
  int host = 0;
  EXPECT_EQ_INT(cudaMemcpy(&host, good, sizeof host, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
  return corpus::pass();
}
