// CUDA dynamic parallelism: grids nest at most 24 levels below the host's launch; a launch deeper than that
// fails with cudaErrorLaunchMaxDepthExceeded.
#include "check.h"

struct Deepest {
  int depth;      // the deepest grid that ran
  int failedAt;   // depth of the grid whose launch failed
  int error;
};

__global__ void descend(Deepest* d, int depth) {
  d->depth = depth;
  descend<<<1, 1>>>(d, depth + 1);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    d->failedAt = depth;
    d->error = int(e);
  }
}

int main() {
  CORPUS_PROGRAM("cdp_nesting_depth");
  Deepest* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(Deepest)));
  CHECK_CUDA(cudaMemset(d, 0xff, sizeof(Deepest)));
  descend<<<1, 1>>>(d, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Deepest h;
  CHECK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("deepest grid at depth %d; the launch from depth %d failed with %d\n", h.depth, h.failedAt, h.error);
  EXPECT_EQ_INT(h.error, cudaErrorLaunchMaxDepthExceeded);
  EXPECT_EQ_INT(h.depth, 24);
  EXPECT_EQ_INT(h.failedAt, 24);
  CHECK_CUDA(cudaFree(d));
  return corpus::pass();
}
