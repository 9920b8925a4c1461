// Device-side graph launch: a kernel of an outer graph launches an executable graph instantiated with
// cudaGraphInstantiateFlagDeviceLaunch (and uploaded) into cudaStreamGraphTailLaunch, ...FireAndForget and
// ...FireAndForgetAsSibling. A tail-launched graph runs after the launching grid; every launch of the outer graph
// launches the inner one again. Passes on an H100 (driver 580, 2026-11-26). A graph instantiated without the
// device-launch flag makes the launching grid fault: cdp_graph_launch_unflagged.cu.
#include "check.h"

struct Counters {
  int increments;
  int parentThreads;
  int seenByTail;  // parent threads the tail graph's kernel saw
  int errors[4];
};

__global__ void increment(Counters* c) {
  atomicAdd(&c->increments, 1);
  c->seenByTail = atomicAdd(&c->parentThreads, 0);
}

__global__ void launcher(cudaGraphExec_t graph, Counters* c, int mode) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    cudaStream_t stream = mode == 0   ? cudaStreamGraphTailLaunch
                          : mode == 1 ? cudaStreamGraphFireAndForget
                                      : cudaStreamGraphFireAndForgetAsSibling;
    cudaError_t e = cudaGraphLaunch(graph, stream);
    if (e != cudaSuccess) c->errors[mode] = int(e);
  }
  for (int i = 0; i < 100; ++i) __threadfence();
  atomicAdd(&c->parentThreads, 1);
}

int main() {
  CORPUS_PROGRAM("cdp_graph_launch");
  Counters* c;
  CHECK_CUDA(cudaMalloc(&c, sizeof(Counters)));
  CHECK_CUDA(cudaMemset(c, 0, sizeof(Counters)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));

  // The inner graph: one kernel node, captured.
  cudaGraph_t inner;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  increment<<<1, 1, 0, stream>>>(c);
  CHECK_CUDA(cudaStreamEndCapture(stream, &inner));
  cudaGraphExec_t innerExec, plainExec;
  CHECK_CUDA(cudaGraphInstantiate(&innerExec, inner, cudaGraphInstantiateFlagDeviceLaunch));
  CHECK_CUDA(cudaGraphUpload(innerExec, stream));
  CHECK_CUDA(cudaGraphInstantiate(&plainExec, inner, 0));

  // Device graphs are launched from kernels that run in a graph: an outer graph per launch mode.
  auto outerGraph = [&](unsigned blocks, unsigned threads, int mode) {
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    launcher<<<blocks, threads, 0, stream>>>(innerExec, c, mode);
    CHECK_CUDA(cudaStreamEndCapture(stream, &g));
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
    CHECK_CUDA(cudaGraphDestroy(g));
    return exec;
  };
  Counters h;
  // Tail launch: the graph runs after all 128 threads of the launcher.
  cudaGraphExec_t tailExec = outerGraph(2, 64, 0);
  CHECK_CUDA(cudaGraphLaunch(tailExec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(h.errors[0], 0);
  EXPECT_EQ_INT(h.increments, 1);
  EXPECT_EQ_INT(h.seenByTail, 128);

  // The two fire-and-forget streams.
  cudaGraphExec_t fireExec = outerGraph(1, 32, 1), siblingExec = outerGraph(1, 32, 2);
  CHECK_CUDA(cudaGraphLaunch(fireExec, stream));
  CHECK_CUDA(cudaGraphLaunch(siblingExec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(h.errors[1], 0);
  EXPECT_EQ_INT(h.errors[2], 0);
  EXPECT_EQ_INT(h.increments, 3);

  // Every launch of the outer graph launches the inner one again.
  for (int k = 0; k < 5; ++k) CHECK_CUDA(cudaGraphLaunch(tailExec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(h.increments, 8);

  for (cudaGraphExec_t e : {tailExec, fireExec, siblingExec, innerExec, plainExec})
    CHECK_CUDA(cudaGraphExecDestroy(e));
  CHECK_CUDA(cudaGraphDestroy(inner));
  CHECK_CUDA(cudaFree(c));
  return corpus::pass();
}
