// Cooperative groups: thread blocks, tiled partitions (static and dynamic), coalesced groups, and a grid-wide
// barrier under a cooperative launch.
#include "check.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__global__ void tiles(const int* in, int* tileSums32, int* tileSums4, int* blockSums, int* oddCounts) {
  cg::thread_block block = cg::this_thread_block();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];

  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int s32 = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) tileSums32[i / 32] = s32;

  cg::thread_block_tile<4> quad = cg::tiled_partition<4>(block);
  int s4 = v;
  for (int offset = quad.size() / 2; offset > 0; offset /= 2) s4 += quad.shfl_down(s4, offset);
  if (quad.thread_rank() == 0) tileSums4[i / 4] = s4;

  __shared__ int blockTotal;
  if (block.thread_rank() == 0) blockTotal = 0;
  block.sync();
  atomicAdd(&blockTotal, v);
  block.sync();
  if (block.thread_rank() == 0) blockSums[blockIdx.x] = blockTotal;

  cg::thread_group dynamicTile = cg::tiled_partition(block, 8);
  if (dynamicTile.size() != 8) in = nullptr;  // would fault below

  if (v & 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    if (odd.thread_rank() == 0) atomicAdd(&oddCounts[blockIdx.x], static_cast<int>(odd.size()));
  }
}

// Phase 1 writes, grid.sync(), phase 2 reads what other blocks wrote.
__global__ void gridExchange(int* data, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] = i * 2;
  grid.sync();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) out[i] = data[n - 1 - i] + 1;
}

int main() {
  CORPUS_PROGRAM("cooperative_groups");
  const int blocks = 8, threads = 128, n = blocks * threads;
  int host[n];
  for (int i = 0; i < n; ++i) host[i] = (i * 37) % 101;
  int *in, *t32, *t4, *bs, *odd;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&t32, n / 32 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&t4, n / 4 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&bs, blocks * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&odd, blocks * sizeof(int)));
  CHECK_CUDA(cudaMemset(odd, 0, blocks * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice));
  tiles<<<blocks, threads>>>(in, t32, t4, bs, odd);
  CHECK_CUDA(cudaGetLastError());
  int h32[n / 32], h4[n / 4], hb[blocks], hodd[blocks];
  CHECK_CUDA(cudaMemcpy(h32, t32, sizeof h32, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(h4, t4, sizeof h4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hb, bs, sizeof hb, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hodd, odd, sizeof hodd, cudaMemcpyDeviceToHost));
  for (int t = 0; t < n / 32; ++t) {
    int s = 0;
    for (int k = 0; k < 32; ++k) s += host[t * 32 + k];
    EXPECT_EQ_INT(h32[t], s);
  }
  for (int t = 0; t < n / 4; ++t) EXPECT_EQ_INT(h4[t], host[4 * t] + host[4 * t + 1] + host[4 * t + 2] + host[4 * t + 3]);
  for (int b = 0; b < blocks; ++b) {
    int s = 0, o = 0;
    for (int k = 0; k < threads; ++k) {
      s += host[b * threads + k];
      o += host[b * threads + k] & 1;
    }
    EXPECT_EQ_INT(hb[b], s);
    EXPECT_EQ_INT(hodd[b], o);
  }

  int cooperative = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0));
  EXPECT_TRUE(cooperative == 1);
  int perSm = 0, sms = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, gridExchange, 256, 0));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  EXPECT_TRUE(perSm >= 1);
  int gridBlocks = sms < 16 ? sms : 16;
  const int m = 100000;
  int *data, *out;
  CHECK_CUDA(cudaMalloc(&data, m * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&out, m * sizeof(int)));
  int count = m;
  void* args[] = {&data, &out, &count};
  CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(gridExchange), dim3(gridBlocks), dim3(256), args, 0,
                                         nullptr));
  CHECK_CUDA(cudaDeviceSynchronize());
  int* result = new int[m];
  CHECK_CUDA(cudaMemcpy(result, out, m * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < m; ++i)
    if (result[i] != (m - 1 - i) * 2 + 1) corpus::fail("grid sync exchange", __FILE__, __LINE__);
  delete[] result;
  // More blocks than can be co-resident is refused.
  EXPECT_EQ_INT(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(gridExchange), dim3(perSm * sms + 1), dim3(256),
                                            args, 0, nullptr),
                cudaErrorCooperativeLaunchTooLarge);
  CHECK_CUDA(cudaFree(data));
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(t32));
  CHECK_CUDA(cudaFree(t4));
  CHECK_CUDA(cudaFree(bs));
  CHECK_CUDA(cudaFree(odd));
  return corpus::pass();
}
