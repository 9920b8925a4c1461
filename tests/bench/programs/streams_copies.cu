// 64 MiB of floats through 4 streams in 16 chunks: pinned host-to-device copy, kernel, device-to-host copy.
#include <vector>

#include "check.h"

__global__ void scale(float* d, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) d[i] = a * d[i] + b;
}

int main() {
  const int chunks = 16, streams = 4, n = 1 << 20;
  float *host, *dev;
  CHECK(cudaMallocHost(&host, size_t(chunks) * n * sizeof(float)));
  CHECK(cudaMalloc(&dev, size_t(chunks) * n * sizeof(float)));
  for (size_t i = 0; i < size_t(chunks) * n; ++i) host[i] = float(i % 1000);
  cudaStream_t s[streams];
  for (auto& st : s) CHECK(cudaStreamCreate(&st));
  for (int c = 0; c < chunks; ++c) {
    cudaStream_t st = s[c % streams];
    float* h = host + size_t(c) * n;
    float* d = dev + size_t(c) * n;
    CHECK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, st));
    scale<<<256, 256, 0, st>>>(d, n, 2.0f, float(c));
    CHECK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, st));
  }
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int c = 0; c < chunks && ok; ++c)
    for (int i = 0; i < n; i += 997) {
      size_t k = size_t(c) * n + i;
      if (host[k] != 2.0f * float(k % 1000) + float(c)) ok = false;
    }
  for (auto& st : s) CHECK(cudaStreamDestroy(st));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(dev));
  return verdict(ok, "streams_copies");
}
