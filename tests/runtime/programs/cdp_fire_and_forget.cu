// CUDA dynamic parallelism: fire-and-forget grids; the host's synchronisation waits for them too.
#include "check.h"

__global__ void fill(int* out, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void launcher(int* out, int n, int* errors) {
  int slice = n / gridDim.x;
  if (threadIdx.x == 0) {
    fill<<<(slice + 63) / 64, 64, 0, cudaStreamFireAndForget>>>(out + blockIdx.x * slice, 1000 + blockIdx.x, slice);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
  }
}

int main() {
  CORPUS_PROGRAM("cdp_fire_and_forget");
  const int blocks = 8, n = blocks * 100;
  int *out, *errors;
  CHECK_CUDA(cudaMalloc(&out, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&errors, sizeof(int)));
  CHECK_CUDA(cudaMemset(out, 0, n * sizeof(int)));
  CHECK_CUDA(cudaMemset(errors, 0, sizeof(int)));
  launcher<<<blocks, 32>>>(out, n, errors);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  int h[n], e = 0;
  CHECK_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(e, 0);
  for (int i = 0; i < n; ++i) EXPECT_EQ_INT(h[i], 1000 + i / 100);
  return corpus::pass();
}
