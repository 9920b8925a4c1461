// expect: 0 errors 0 warnings
// A last-block reduction: each CTA writes its partial sum, fences and takes a ticket with an atomic; the CTA that
// takes the last ticket reads every partial sum. The fence and the atomic order the accesses: no race.
#include "../programs/common.h"
__device__ unsigned int tickets;
__global__ void sum(const int* in, int* partial, int* total, int blocks) {
  __shared__ int s[128];
  __shared__ bool last;
  s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  for (int stride = 64; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicInc(&tickets, blocks) == unsigned(blocks - 1);
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    int t = 0;
    for (int b = 0; b < blocks; ++b) t += partial[b];
    *total = t;
  }
}
int main() {
  const int blocks = 8;
  int *in, *partial, *total, host[blocks * 128];
  for (int i = 0; i < blocks * 128; ++i) host[i] = i % 7;
  STEP(cudaMalloc(&in, sizeof host));
  STEP(cudaMalloc(&partial, blocks * sizeof(int)));
  STEP(cudaMalloc(&total, sizeof(int)));
  STEP(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice));
  sum<<<blocks, 128>>>(in, partial, total, blocks);
  int result = 0;
  STEP(cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost));
  int expected = 0;
  for (int i = 0; i < blocks * 128; ++i) expected += host[i];
  std::printf("total %d (expected %d)\n", result, expected);
  return finish();
}
