// Pool memory (cudaMallocAsync) set before the kernel reads it, then freed and allocated again and written by a
// kernel before the second read: no uninitialised read.
#include "common.h"
__global__ void fill(int* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = i;
}
__global__ void sum(const int* a, int* out, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += a[i];
  out[0] = total;
}
int main() {
  int *a, *out, result = 0;
  cudaStream_t stream;
  STEP(cudaStreamCreate(&stream));
  STEP(cudaMalloc(&out, sizeof(int)));
  STEP(cudaMallocAsync(&a, 16 * sizeof(int), stream));
  STEP(cudaMemsetAsync(a, 0, 16 * sizeof(int), stream));
  sum<<<1, 1, 0, stream>>>(a, out, 16);
  STEP(cudaFreeAsync(a, stream));
  STEP(cudaMallocAsync(&a, 16 * sizeof(int), stream));
  fill<<<1, 1, 0, stream>>>(a, 16);
  sum<<<1, 1, 0, stream>>>(a, out, 16);
  STEP(cudaMemcpyAsync(&result, out, sizeof(int), cudaMemcpyDeviceToHost, stream));
  STEP(cudaFreeAsync(a, stream));
  STEP(cudaStreamSynchronize(stream));
  std::printf("sum %d\n", result);
  return finish();
}
