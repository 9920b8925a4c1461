// CUDA dynamic parallelism across translation units: a kernel launches a kernel defined in another file
// (`.extern .entry` in its PTX; NVIDIA's cdpAdvancedQuicksort sample launches its bitonic sort this way).
#include "check.h"

__global__ void childElsewhere(int* p, int v);

__global__ void parent(int* p, int* launchError) {
  childElsewhere<<<1, 1>>>(p, 42);
  *launchError = int(cudaGetLastError());
}

int main() {
  CORPUS_PROGRAM("cdp_extern_kernel");
  int *p, *launchError;
  CHECK_CUDA(cudaMalloc(&p, sizeof(int)));
  CHECK_CUDA(cudaMalloc(&launchError, sizeof(int)));
  CHECK_CUDA(cudaMemset(p, 0, sizeof(int)));
  parent<<<1, 1>>>(p, launchError);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  int h = 0, e = -1;
  CHECK_CUDA(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&e, launchError, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(e, cudaSuccess);
  EXPECT_EQ_INT(h, 42);
  CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(launchError));
  return corpus::pass();
}
