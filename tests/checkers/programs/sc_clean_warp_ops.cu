// Warp-synchronous operations used correctly, which no check may report: full-mask reductions, 16-lane tiles,
// __activemask() in divergent code, a vote by the lanes of one side of a branch, __syncwarp between shared-memory
// phases, and a shuffle in a block whose last warp is partial (its mask names only the lanes that exist).
#include <cooperative_groups.h>
#include "common.h"
namespace cg = cooperative_groups;
__global__ void warp_ops(int* out, int n) {
  __shared__ int stage[64];
  unsigned lane = threadIdx.x % 32;
  unsigned exists = __ballot_sync(__activemask(), true);
  int v = int(threadIdx.x);
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(exists, v, d);
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int t = tile.thread_rank();
  for (int d = 8; d > 0; d /= 2) t += tile.shfl_down(t, d);
  int side = 0;
  if (lane % 2 == 0) {
    unsigned evens = __activemask();
    side = __popc(__ballot_sync(evens, lane % 4 == 0));
  }
  stage[threadIdx.x] = v;
  __syncwarp(exists);
  int neighbour = stage[threadIdx.x ^ 1 < blockDim.x ? threadIdx.x ^ 1 : threadIdx.x];
  if (int(threadIdx.x) < n) out[threadIdx.x] = v + t + side + neighbour;
}
int main() {
  int* out;
  STEP(cudaMalloc(&out, 48 * sizeof(int)));
  warp_ops<<<1, 48>>>(out, 48);
  int host[48] = {};
  STEP(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("out[0] %d, out[33] %d, out[47] %d\n", host[0], host[33], host[47]);
  return finish();
}
