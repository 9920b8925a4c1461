// CUDA dynamic parallelism: cudaLimitDevRuntimePendingLaunchCount bounds the launches that are not complete.
// A grid is incomplete while its descendants run, so a chain of nested launches deeper than the limit fails with
// cudaErrorLaunchPendingCountExceeded (and that grid never runs). Children launched one after the other by one
// thread complete meanwhile on a GPU: 3000 of them under a limit of 64 all succeed (measured on an H100).
#include "check.h"

struct Counts {
  int ok;
  int exceeded;
  int other;
  int otherCode;
  int ran;
  int deepest;
  int failedAt;
  int chainError;
};

__global__ void child(Counts* c) { atomicAdd(&c->ran, 1); }

__global__ void siblings(Counts* c, int launches) {
  for (int i = 0; i < launches; ++i) {
    child<<<1, 1>>>(c);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
      c->ok++;
    else if (e == cudaErrorLaunchPendingCountExceeded)
      c->exceeded++;
    else {
      c->other++;
      c->otherCode = int(e);
    }
  }
}

__global__ void chain(Counts* c, int depth) {
  c->deepest = depth;
  chain<<<1, 1>>>(c, depth + 1);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    c->failedAt = depth;
    c->chainError = int(e);
  }
}

int main() {
  CORPUS_PROGRAM("cdp_pending_limit");
  size_t limit = 0;
  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 64));
  CHECK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  Counts* c;
  CHECK_CUDA(cudaMalloc(&c, sizeof(Counts)));
  CHECK_CUDA(cudaMemset(c, 0, sizeof(Counts)));
  const int launches = 3000;
  siblings<<<1, 1>>>(c, launches);
  CHECK_CUDA(cudaGetLastError());
  chain<<<1, 1>>>(c, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Counts h;
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("limit %zu; %d sibling launches: %d ok, %d exceeded, %d other (code %d), %d ran\n", limit, launches, h.ok,
              h.exceeded, h.other, h.otherCode, h.ran);
  std::printf("chain: deepest grid at depth %d; the launch from depth %d failed with %d\n", h.deepest, h.failedAt,
              h.chainError);
  EXPECT_EQ_INT(limit, 64);
  EXPECT_EQ_INT(h.ok, launches);
  EXPECT_EQ_INT(h.ran, launches);
  EXPECT_EQ_INT(h.chainError, cudaErrorLaunchPendingCountExceeded);
  EXPECT_EQ_INT(h.deepest, 64);
  EXPECT_EQ_INT(h.failedAt, 64);
  CHECK_CUDA(cudaFree(c));
  return corpus::pass();
}
