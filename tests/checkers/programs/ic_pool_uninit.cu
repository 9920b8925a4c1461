// A kernel reads memory from a stream-ordered pool (cudaMallocAsync) that nothing has written.
#include "common.h"
__global__ void sum(const int* a, int* out, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += a[i];
  out[0] = total;
}
int main() {
  int *a, *out;
  cudaStream_t stream;
  STEP(cudaStreamCreate(&stream));
  STEP(cudaMallocAsync(&a, 16 * sizeof(int), stream));
  STEP(cudaMalloc(&out, sizeof(int)));
  sum<<<1, 1, 0, stream>>>(a, out, 16);
  STEP(cudaFreeAsync(a, stream));
  STEP(cudaStreamSynchronize(stream));
  return finish();
}
