// CUDA dynamic parallelism: children print with device printf; the host sees their lines after synchronising.
#include "check.h"

__global__ void child(int parentBlock, int* hits) {
  printf("child of block %d thread %d\n", parentBlock, threadIdx.x);
  atomicAdd(hits, 1);
}

__global__ void parent(int* hits) {
  if (threadIdx.x == 0) {
    printf("parent block %d launches\n", blockIdx.x);
    child<<<1, 4>>>(blockIdx.x, hits);
  }
}

int main() {
  CORPUS_PROGRAM("cdp_printf");
  int* hits;
  CHECK_CUDA(cudaMalloc(&hits, sizeof(int)));
  CHECK_CUDA(cudaMemset(hits, 0, sizeof(int)));
  parent<<<2, 32>>>(hits);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::fflush(stdout);
  int h = 0;
  CHECK_CUDA(cudaMemcpy(&h, hits, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(h, 8);
  CHECK_CUDA(cudaFree(hits));
  return corpus::pass();
}
