// Checker overhead workloads (tools/bench/checker-overhead.sh): a memory-bound vector add, a shared-memory tiled
// matmul with barriers and a shared-memory tree reduction, each timed on the host around 5 launches + synchronise.
// Usage: workloads [vecadd|matmul|reduce]... (default: all three); prints "<name> <milliseconds>".
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

__global__ void vecadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

constexpr int kTile = 16;
__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[kTile][kTile], tb[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < n; t += kTile) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__global__ void reduce(const float* in, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (int stride = 128; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

constexpr int kRepeats = 5;  // launches timed together, so the synchronisation's latency does not dominate
template <class F> void timed(const char* name, F run) {
  run();  // warm up: module load, first-touch of the buffers
  cudaDeviceSynchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) run();
  cudaError_t e = cudaDeviceSynchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s %.1f %s\n", name, ms / kRepeats, cudaGetErrorName(e));
}

int main(int argc, char** argv) {
  auto wanted = [&](const char* name) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (!std::strcmp(argv[i], name)) return true;
    return false;
  };
  const int n = 1 << 22, m = 256, r = 1 << 20;
  std::vector<float> host(n, 1.0f);
  float *a, *b, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  cudaMemcpy(a, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  if (wanted("vecadd")) timed("vecadd", [&] { vecadd<<<n / 256, 256>>>(a, b, c, n); });
  if (wanted("matmul")) timed("matmul", [&] { matmul<<<dim3(m / kTile, m / kTile), dim3(kTile, kTile)>>>(a, b, c, m); });
  if (wanted("reduce")) timed("reduce", [&] { reduce<<<r / 256, 256>>>(a, c); });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
