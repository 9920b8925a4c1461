// Device-side graph launch of a graph instantiated without cudaGraphInstantiateFlagDeviceLaunch: the launching
// grid faults, and the host's next synchronisation answers cudaErrorIllegalAddress, as on an H100 with driver 580
// (tools/gpu-probe/results/cdp-graph-launch-h100-2026-11-26.txt); the graph's kernel does not run.
#include "check.h"

__global__ void increment(int* counter) { atomicAdd(counter, 1); }

__global__ void launcher(cudaGraphExec_t graph) {
  if (threadIdx.x == 0) cudaGraphLaunch(graph, cudaStreamGraphTailLaunch);
}

int main() {
  CORPUS_PROGRAM("cdp_graph_launch_unflagged");
  int* counter;
  CHECK_CUDA(cudaMalloc(&counter, sizeof(int)));
  CHECK_CUDA(cudaMemset(counter, 0, sizeof(int)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cudaGraph_t inner, outer;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  increment<<<1, 1, 0, stream>>>(counter);
  CHECK_CUDA(cudaStreamEndCapture(stream, &inner));
  cudaGraphExec_t plainExec, outerExec;
  CHECK_CUDA(cudaGraphInstantiate(&plainExec, inner, 0));
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  launcher<<<1, 32, 0, stream>>>(plainExec);
  CHECK_CUDA(cudaStreamEndCapture(stream, &outer));
  CHECK_CUDA(cudaGraphInstantiate(&outerExec, outer, 0));
  CHECK_CUDA(cudaGraphLaunch(outerExec, stream));
  EXPECT_EQ_INT(cudaStreamSynchronize(stream), cudaErrorIllegalAddress);
  EXPECT_EQ_INT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  return corpus::pass();
}
