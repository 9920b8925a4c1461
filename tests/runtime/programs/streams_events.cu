// Streams, events and host callbacks: ordering within a stream, cross-stream waits, event timing, callbacks
// running after the work before them, queries.
#include "check.h"

#include <atomic>
#include <vector>

__global__ void fill(int* data, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

__global__ void addFrom(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += src[i];
}

struct CallbackState {
  int* host;
  int n;
  std::atomic<int> calls{0};
  std::atomic<bool> sawData{false};
};

void CUDART_CB hostFunction(void* data) {
  auto* state = static_cast<CallbackState*>(data);
  bool ok = true;
  for (int i = 0; i < state->n; ++i) ok &= state->host[i] == 5;
  state->sawData = ok;
  state->calls++;
}

void CUDART_CB streamCallback(cudaStream_t, cudaError_t status, void* data) {
  if (status == cudaSuccess) static_cast<CallbackState*>(data)->calls++;
}

int main() {
  CORPUS_PROGRAM("streams_events");
  const int n = 1 << 16;
  int *a, *b, *host;
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(int)));
  CHECK_CUDA(cudaMallocHost(&host, n * sizeof(int)));
  cudaStream_t s1, s2;
  CHECK_CUDA(cudaStreamCreate(&s1));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t start, stop, ready;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));

  // s1 fills a; s2 fills b then waits for s1 and adds: b = 2 + 3.
  CHECK_CUDA(cudaEventRecord(start, s1));
  fill<<<n / 256, 256, 0, s1>>>(a, n, 3);
  CHECK_CUDA(cudaEventRecord(ready, s1));
  fill<<<n / 256, 256, 0, s2>>>(b, n, 2);
  CHECK_CUDA(cudaStreamWaitEvent(s2, ready, 0));
  addFrom<<<n / 256, 256, 0, s2>>>(b, a, n);
  CHECK_CUDA(cudaMemcpyAsync(host, b, n * sizeof(int), cudaMemcpyDeviceToHost, s2));
  CallbackState state;
  state.host = host;
  state.n = n;
  CHECK_CUDA(cudaLaunchHostFunc(s2, hostFunction, &state));
  CHECK_CUDA(cudaStreamAddCallback(s2, streamCallback, &state, 0));
  CHECK_CUDA(cudaEventRecord(stop, s2));
  CHECK_CUDA(cudaEventSynchronize(stop));
  EXPECT_TRUE(cudaEventQuery(stop) == cudaSuccess);
  CHECK_CUDA(cudaStreamSynchronize(s2));
  EXPECT_EQ_INT(state.calls.load(), 2);
  EXPECT_TRUE(state.sawData.load());
  for (int i = 0; i < n; ++i)
    if (host[i] != 5) corpus::fail("wrong data after cross-stream wait", __FILE__, __LINE__);
  float ms = -1;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  EXPECT_TRUE(ms >= 0.0f);
  EXPECT_TRUE(cudaEventElapsedTime(&ms, start, ready) == cudaErrorInvalidResourceHandle);

  // The legacy default stream orders against the blocking stream s1 (named explicitly: with
  // --default-stream per-thread the implicit default stream is the per-thread one, which does not).
  fill<<<n / 256, 256, 0, s1>>>(a, n, 9);
  fill<<<n / 256, 256, 0, cudaStreamLegacy>>>(b, n, 1);
  addFrom<<<n / 256, 256, 0, cudaStreamLegacy>>>(b, a, n);
  CHECK_CUDA(cudaMemcpy(host, b, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (host[i] != 10) corpus::fail("default stream did not order after s1", __FILE__, __LINE__);
  CHECK_CUDA(cudaStreamQuery(s1));

  int priorityLow = 0, priorityHigh = 0;
  CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&priorityLow, &priorityHigh));
  cudaStream_t prioritized;
  CHECK_CUDA(cudaStreamCreateWithPriority(&prioritized, cudaStreamDefault, priorityHigh));
  int priority = 1234;
  CHECK_CUDA(cudaStreamGetPriority(prioritized, &priority));
  EXPECT_EQ_INT(priority, priorityHigh);
  CHECK_CUDA(cudaStreamDestroy(prioritized));

  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaEventDestroy(ready));
  CHECK_CUDA(cudaStreamDestroy(s1));
  CHECK_CUDA(cudaStreamDestroy(s2));
  CHECK_CUDA(cudaFreeHost(host));
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return corpus::pass();
}
