// One kernel writes a buffer, the next reads it, and the host copies it back: all initialised.
#include "common.h"
__global__ void produce(int* a) { a[threadIdx.x] = threadIdx.x; }
__global__ void consume(const int* a, int* b) { b[threadIdx.x] = a[threadIdx.x] * 2; }
int main() {
  int *a, *b, host[64];
  STEP(cudaMalloc(&a, 64 * sizeof(int)));
  STEP(cudaMalloc(&b, 64 * sizeof(int)));
  produce<<<1, 64>>>(a);
  consume<<<1, 64>>>(a, b);
  STEP(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost));
  return finish();
}
