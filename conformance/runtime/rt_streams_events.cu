// runtime.programs.rt_streams_events: streams, events, host functions and pinned asynchronous copies.
#include <atomic>
#include <cstdio>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorName(e));                  \
      return 1;                                                               \
    }                                                                         \
  } while (0)

__global__ void scale(float* p, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

static std::atomic<int> g_calls{0};
static void CUDART_CB hostFn(void* user) { g_calls += *static_cast<int*>(user); }

int main() {
  const int n = 1 << 18;
  float* h;
  CHECK(cudaMallocHost(&h, n * sizeof(float)));
  for (int i = 0; i < n; ++i) h[i] = 1.0f;
  cudaStream_t s[2];
  float* d[2];
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d[k], n * sizeof(float)));
  }
  cudaEvent_t start, stop, ready;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  CHECK(cudaEventRecord(start, s[0]));
  CHECK(cudaMemcpyAsync(d[0], h, n * sizeof(float), cudaMemcpyHostToDevice, s[0]));
  scale<<<n / 256, 256, 0, s[0]>>>(d[0], 3.0f, n);
  CHECK(cudaEventRecord(ready, s[0]));
  CHECK(cudaStreamWaitEvent(s[1], ready, 0));
  CHECK(cudaMemcpyAsync(d[1], d[0], n * sizeof(float), cudaMemcpyDeviceToDevice, s[1]));
  scale<<<n / 256, 256, 0, s[1]>>>(d[1], 5.0f, n);
  int add = 4;
  CHECK(cudaLaunchHostFunc(s[1], hostFn, &add));
  CHECK(cudaMemcpyAsync(h, d[1], n * sizeof(float), cudaMemcpyDeviceToHost, s[1]));
  CHECK(cudaEventRecord(stop, s[1]));
  CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (h[i] != 15.0f) ++bad;
  bool ok = bad == 0 && g_calls == 4 && ms >= 0 && cudaStreamQuery(s[1]) == cudaSuccess;
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaStreamDestroy(s[k]));
    CHECK(cudaFree(d[k]));
  }
  CHECK(cudaFreeHost(h));
  std::printf("%s (%d wrong, host fn %d, %.3f ms)\n", ok ? "PASS" : "FAIL", bad, g_calls.load(), ms);
  return !ok;
}
