// CUDA dynamic parallelism: a chain of nested launches. CDP2 has no nesting limit of its own (measured on an
// H100: no cudaErrorLaunchMaxDepthExceeded), but every grid of the chain stays incomplete while its descendants
// run, so the pending launch limit (default 2048) ends the chain: the launch from depth 2048 fails with
// cudaErrorLaunchPendingCountExceeded.
#include "check.h"

struct Deepest {
  int depth;     // the deepest grid that ran
  int failedAt;  // depth of the grid whose launch failed
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
  size_t limit = 0;
  CHECK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  Deepest* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(Deepest)));
  CHECK_CUDA(cudaMemset(d, 0xff, sizeof(Deepest)));
  descend<<<1, 1>>>(d, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Deepest h;
  CHECK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("pending launch limit %zu: deepest grid at depth %d; the launch from depth %d failed with %d\n", limit,
              h.depth, h.failedAt, h.error);
  EXPECT_EQ_INT(limit, 2048);
  EXPECT_EQ_INT(h.error, cudaErrorLaunchPendingCountExceeded);
  EXPECT_EQ_INT(h.depth, 2048);
  EXPECT_EQ_INT(h.failedAt, 2048);
  CHECK_CUDA(cudaFree(d));
  return corpus::pass();
}
