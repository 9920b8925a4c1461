// expect: 2 errors 0 warnings
// Within one CTA, warp 1 reads what warp 0 wrote with no barrier between (a read-after-write race in global
// memory); the same exchange after __syncthreads() is ordered. Two CTAs also write one counter without atomics
// (a write-after-write race between CTAs).
#include "../programs/common.h"
__global__ void exchange(int* data, int* out, int* counter, bool barrier) {
  int* mine = data + blockIdx.x * 64;
  if (threadIdx.x < 32) mine[threadIdx.x] = threadIdx.x;
  if (barrier) __syncthreads();
  if (threadIdx.x >= 32) out[blockIdx.x * 64 + threadIdx.x] = mine[threadIdx.x - 32];
  if (!barrier && threadIdx.x == 0) *counter = blockIdx.x;
}
int main() {
  int *data, *out, *counter;
  STEP(cudaMalloc(&data, 2 * 64 * sizeof(int)));
  STEP(cudaMalloc(&out, 2 * 64 * sizeof(int)));
  STEP(cudaMalloc(&counter, sizeof(int)));
  exchange<<<1, 64>>>(data, out, counter, true);  // ordered: nothing to report
  STEP(cudaDeviceSynchronize());
  exchange<<<2, 64>>>(data, out, counter, false);
  return finish();
}
