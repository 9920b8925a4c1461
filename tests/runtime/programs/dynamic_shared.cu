// Dynamic shared memory: a block reduction sized at launch, and an opt-in above 48 KiB.
#include "check.h"

#include <vector>

__global__ void blockSum(const int* in, long long* out, int n) {
  extern __shared__ long long partial[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// Uses all of a large dynamic allocation: each thread writes a stripe, then reads another thread's.
__global__ void bigShared(int* out, int words) {
  extern __shared__ int big[];
  for (int w = threadIdx.x; w < words; w += blockDim.x) big[w] = w * 3;
  __syncthreads();
  long long sum = 0;
  for (int w = (threadIdx.x + 1) % blockDim.x; w < words; w += blockDim.x) sum += big[w];
  atomicAdd(out, static_cast<int>(sum));
}

int main() {
  CORPUS_PROGRAM("dynamic_shared");
  const int n = 1 << 18;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i % 1000;
  int* in;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  for (int threads : {64, 256, 1024}) {
    int blocks = (n + threads - 1) / threads;
    long long* out;
    CHECK_CUDA(cudaMalloc(&out, blocks * sizeof(long long)));
    blockSum<<<blocks, threads, threads * sizeof(long long)>>>(in, out, n);
    CHECK_CUDA(cudaGetLastError());
    std::vector<long long> sums(blocks);
    CHECK_CUDA(cudaMemcpy(sums.data(), out, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
    long long total = 0, expected = 0;
    for (long long s : sums) total += s;
    for (int v : host) expected += v;
    EXPECT_TRUE(total == expected);
    CHECK_CUDA(cudaFree(out));
  }

  int maxOptin = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&maxOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const int bytes = 96 * 1024;
  if (maxOptin >= bytes) {
    // Without the opt-in, more than 48 KiB is refused at launch.
    int* out;
    CHECK_CUDA(cudaMalloc(&out, sizeof(int)));
    CHECK_CUDA(cudaMemset(out, 0, sizeof(int)));
    bigShared<<<1, 256, bytes>>>(out, bytes / 4);
    EXPECT_TRUE(cudaGetLastError() != cudaSuccess);
    CHECK_CUDA(cudaFuncSetAttribute(bigShared, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    bigShared<<<1, 256, bytes>>>(out, bytes / 4);
    CHECK_CUDA(cudaGetLastError());
    int got = 0;
    CHECK_CUDA(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    long long expected = 0;
    for (int w = 0; w < bytes / 4; ++w) expected += w * 3;
    // Thread t reads the words w with w % 256 == (t + 1) % 256: every word exactly once.
    EXPECT_TRUE(got == static_cast<int>(expected));
    CHECK_CUDA(cudaFree(out));
  }
  CHECK_CUDA(cudaFree(in));
  return corpus::pass();
}
