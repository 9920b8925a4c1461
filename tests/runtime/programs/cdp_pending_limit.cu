// CUDA dynamic parallelism: cudaLimitDevRuntimePendingLaunchCount bounds the launches that have not started;
// past it a launch fails with cudaErrorLaunchPendingCountExceeded and its grid never runs.
#include "check.h"

struct Counts {
  int ok;
  int exceeded;
  int other;
  int otherCode;
  int ran;
};

__global__ void child(Counts* c) { atomicAdd(&c->ran, 1); }

__global__ void parent(Counts* c, int launches) {
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

int main() {
  CORPUS_PROGRAM("cdp_pending_limit");
  size_t defaultLimit = 0, limit = 0;
  CHECK_CUDA(cudaDeviceGetLimit(&defaultLimit, cudaLimitDevRuntimePendingLaunchCount));
  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 64));
  CHECK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  Counts* c;
  CHECK_CUDA(cudaMalloc(&c, sizeof(Counts)));
  CHECK_CUDA(cudaMemset(c, 0, sizeof(Counts)));
  const int launches = 3000;
  parent<<<1, 1>>>(c, launches);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Counts h;
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("default limit %zu, set to %zu; %d launches: %d ok, %d exceeded, %d other (code %d), %d ran\n",
              defaultLimit, limit, launches, h.ok, h.exceeded, h.other, h.otherCode, h.ran);
  EXPECT_EQ_INT(defaultLimit, 2048);
  EXPECT_EQ_INT(h.other, 0);
  EXPECT_EQ_INT(h.ok + h.exceeded, launches);
  EXPECT_TRUE(h.exceeded > 0);
  EXPECT_TRUE(h.ok >= int(limit));
  EXPECT_EQ_INT(h.ran, h.ok);
  CHECK_CUDA(cudaFree(c));
  return corpus::pass();
}
