// CUDA dynamic parallelism: a tail launch runs after its parent grid and all the parent's other work; a grid
// that tail-launches itself again and again forms a chain.
#include "check.h"

struct Counters {
  int parentThreads;
  int childThreads;
  int seenByTail[2];  // what the tail grid saw: parent threads, child threads
  int tailRuns;
  int chainLinks;
  int chainError;
  int order[3];  // the tail grids of one parent, in the order they ran
  int orderNext;
  int multiErrors;
};

__global__ void child(Counters* c) { atomicAdd(&c->childThreads, 1); }

__global__ void tail(Counters* c) {
  if (threadIdx.x == 0) {
    c->seenByTail[0] = atomicAdd(&c->parentThreads, 0);
    c->seenByTail[1] = atomicAdd(&c->childThreads, 0);
    atomicAdd(&c->tailRuns, 1);
  }
}

__global__ void parent(Counters* c) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    tail<<<1, 32, 0, cudaStreamTailLaunch>>>(c);
    child<<<2, 32>>>(c);
  }
  // Every thread works a while so that the tail grid, launched first, would see incomplete counts if it ran early.
  for (int i = 0; i < 100; ++i) __threadfence();
  atomicAdd(&c->parentThreads, 1);
}

__global__ void chain(Counters* c, int remaining) {
  c->chainLinks++;
  if (remaining > 0) {
    chain<<<1, 1, 0, cudaStreamTailLaunch>>>(c, remaining - 1);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && c->chainError == 0) c->chainError = int(e);
  }
}

__global__ void ordered(Counters* c, int index) { c->order[atomicAdd(&c->orderNext, 1)] = index; }

__global__ void threeTails(Counters* c) {
  for (int k = 0; k < 3; ++k) {
    ordered<<<1, 1, 0, cudaStreamTailLaunch>>>(c, k);
    if (cudaGetLastError() != cudaSuccess) c->multiErrors++;
  }
}

int main() {
  CORPUS_PROGRAM("cdp_tail_launch");
  Counters* c;
  CHECK_CUDA(cudaMalloc(&c, sizeof(Counters)));
  CHECK_CUDA(cudaMemset(c, 0, sizeof(Counters)));
  parent<<<4, 64>>>(c);
  CHECK_CUDA(cudaGetLastError());
  chain<<<1, 1>>>(c, 39);
  CHECK_CUDA(cudaGetLastError());
  threeTails<<<1, 1>>>(c);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Counters h;
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("tail saw %d parent threads and %d child threads; chain of %d links, error %d\n", h.seenByTail[0],
              h.seenByTail[1], h.chainLinks, h.chainError);
  std::printf("three tail launches: %d errors, ran as %d %d %d\n", h.multiErrors, h.order[0], h.order[1], h.order[2]);
  EXPECT_EQ_INT(h.tailRuns, 1);
  EXPECT_EQ_INT(h.multiErrors, 0);
  EXPECT_EQ_INT(h.orderNext, 3);
  for (int k = 0; k < 3; ++k) EXPECT_EQ_INT(h.order[k], k);
  EXPECT_EQ_INT(h.parentThreads, 256);
  EXPECT_EQ_INT(h.childThreads, 64);
  EXPECT_EQ_INT(h.seenByTail[0], 256);
  EXPECT_EQ_INT(h.seenByTail[1], 64);
  EXPECT_EQ_INT(h.chainLinks, 40);
  EXPECT_EQ_INT(h.chainError, 0);
  CHECK_CUDA(cudaFree(c));
  return corpus::pass();
}
