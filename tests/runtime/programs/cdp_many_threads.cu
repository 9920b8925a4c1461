// CUDA dynamic parallelism: every thread of a grid launches a child grid.
#include "check.h"

__global__ void child(int* out, int id) { out[id * 32 + threadIdx.x] = id * 2 + 1; }

__global__ void parent(int* out, int* errors) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  child<<<1, 32>>>(out, id);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
}

int main() {
  CORPUS_PROGRAM("cdp_many_threads");
  const int blocks = 8, threads = 128, launches = blocks * threads;
  int *out, *errors;
  CHECK_CUDA(cudaMalloc(&out, launches * 32 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&errors, sizeof(int)));
  CHECK_CUDA(cudaMemset(out, 0, launches * 32 * sizeof(int)));
  CHECK_CUDA(cudaMemset(errors, 0, sizeof(int)));
  parent<<<blocks, threads>>>(out, errors);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  static int h[launches * 32];
  int e = -1;
  CHECK_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(e, 0);
  for (int i = 0; i < launches * 32; ++i) EXPECT_EQ_INT(h[i], (i / 32) * 2 + 1);
  std::printf("%d child grids ran\n", launches);
  return corpus::pass();
}
