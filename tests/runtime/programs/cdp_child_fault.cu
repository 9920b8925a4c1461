// CUDA dynamic parallelism: a child grid that writes through a wild pointer makes the host's synchronisation
// report cudaErrorIllegalAddress, as a fault of the host's own launch would.
#include "check.h"

__global__ void writeThrough(int* p) { p[threadIdx.x] = 1; }

__global__ void parent(int* good, int* wild) {
  writeThrough<<<1, 32>>>(good);
  writeThrough<<<1, 32>>>(wild);
}

int main() {
  CORPUS_PROGRAM("cdp_child_fault");
  int* good;
  CHECK_CUDA(cudaMalloc(&good, 128));
  // Far from any allocation, in the upper half of the address space.
  parent<<<1, 1>>>(good, reinterpret_cast<int*>(0x7ff0deadbeef0000ull));
  CHECK_CUDA(cudaGetLastError());
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT_EQ_INT(e, cudaErrorIllegalAddress);
  int host = 0;
  EXPECT_EQ_INT(cudaMemcpy(&host, good, sizeof host, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
  return corpus::pass();
}
