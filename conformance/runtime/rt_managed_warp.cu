// runtime.programs.rt_managed_warp: managed memory, atomics, warp shuffles and dynamic shared memory.
#include <cstdio>

__global__ void reduce(const int* in, int* total, int n) {
  extern __shared__ int warpSums[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warpSums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int w = 0; w < blockDim.x / 32; ++w) s += warpSums[w];
    atomicAdd(total, s);
  }
}

int main() {
  const int n = 100000;
  int *in, *total;
  if (cudaMallocManaged(&in, n * sizeof(int)) != cudaSuccess || cudaMallocManaged(&total, sizeof(int)) != cudaSuccess) {
    std::printf("FAIL managed allocation\n");
    return 1;
  }
  long long want = 0;
  for (int i = 0; i < n; ++i) {
    in[i] = i % 1000 - 300;
    want += in[i];
  }
  *total = 0;
  reduce<<<(n + 255) / 256, 256, 8 * sizeof(int)>>>(in, total, n);
  cudaError_t e = cudaDeviceSynchronize();
  bool ok = e == cudaSuccess && *total == want;
  std::printf("%s (%s, total %d, expected %lld)\n", ok ? "PASS" : "FAIL", cudaGetErrorName(e), *total, want);
  cudaFree(in);
  cudaFree(total);
  return !ok;
}
