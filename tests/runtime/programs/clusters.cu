// Thread-block clusters through the runtime API: a __cluster_dims__ kernel launched with <<<>>>, the same kind of
// kernel launched with cudaLaunchKernelEx and a cluster attribute, cooperative groups' this_cluster(),
// cluster.sync() and map_shared_rank (distributed shared memory), and a __block_size__ kernel (<<<G, 64>>> and
// <<<G, 1>>> run G clusters of two 64-thread blocks; <<<G, 32>>> is refused). Needs sm_90.
#include "check.h"

#include <cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

// Every block reverses the values of the block at the other end of its cluster.
__global__ void __cluster_dims__(4, 1, 1) mirror(const int* in, int* out) {
  __shared__ int s[256];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = in[i];
  cluster.sync();
  const int* other = cluster.map_shared_rank(s, cluster.num_blocks() - 1 - cluster.block_rank());
  out[i] = other[blockDim.x - 1 - threadIdx.x];
  cluster.sync();
}

// Sum of the cluster's inputs, accumulated in rank 0's shared memory; the cluster shape comes from the launch.
__global__ void clusterSum(const int* in, int* sums) {
  __shared__ int total;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) total = 0;
  cluster.sync();
  atomicAdd(cluster.map_shared_rank(&total, 0), in[blockIdx.x * blockDim.x + threadIdx.x]);
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) sums[blockIdx.x / cluster.num_blocks()] = total;
}

__global__ void __block_size__((64, 1, 1), (2, 1, 1)) pairs(unsigned* out) {
  __shared__ unsigned s[64];
  cg::cluster_group cluster = cg::this_cluster();
  s[threadIdx.x] = blockIdx.x;
  cluster.sync();
  const unsigned partner = *cluster.map_shared_rank(&s[threadIdx.x], cluster.block_rank() ^ 1);
  if (threadIdx.x == 0) out[blockIdx.x] = partner | (gridDim.x << 8) | (blockDim.x << 16);
  cluster.sync();
}

int main() {
  CORPUS_PROGRAM("clusters");
  int device = 0, clusterLaunch = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&clusterLaunch, cudaDevAttrClusterLaunch, device));
  if (!clusterLaunch) corpus::skip("the device has no cluster launch");

  const int blocks = 16, threads = 256, n = blocks * threads;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1009 - 500;
  int *din, *dout;
  CHECK_CUDA(cudaMalloc(&din, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dout, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  mirror<<<blocks, threads>>>(din, dout);
  CHECK_CUDA(cudaGetLastError());
  std::vector<int> out(n);
  CHECK_CUDA(cudaMemcpy(out.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      const int partner = b / 4 * 4 + (3 - b % 4);
      EXPECT_EQ_INT(out[b * threads + t], in[partner * threads + (threads - 1 - t)]);
    }

  for (unsigned size : {2u, 8u}) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = size;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CHECK_CUDA(cudaMemset(dout, 0, n * sizeof(int)));
    CHECK_CUDA(cudaLaunchKernelEx(&config, clusterSum, static_cast<const int*>(din), dout));
    CHECK_CUDA(cudaMemcpy(out.data(), dout, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    for (unsigned c = 0; c < blocks / size; ++c) {
      long long want = 0;
      for (unsigned i = c * size * threads; i < (c + 1) * size * threads; ++i) want += in[i];
      EXPECT_EQ_INT(out[c], want);
    }
    // a shape that does not tile the grid
    attribute.val.clusterDim.x = 3;
    EXPECT_EQ_INT(cudaLaunchKernelEx(&config, clusterSum, static_cast<const int*>(din), dout),
                  cudaErrorInvalidClusterSize);
    (void)cudaGetLastError();
  }

  unsigned* dpairs;
  CHECK_CUDA(cudaMalloc(&dpairs, 16 * sizeof(unsigned)));
  for (unsigned block : {64u, 1u}) {
    CHECK_CUDA(cudaMemset(dpairs, 0xff, 16 * sizeof(unsigned)));
    pairs<<<3, block>>>(dpairs);
    CHECK_CUDA(cudaGetLastError());
    unsigned got[6];
    CHECK_CUDA(cudaMemcpy(got, dpairs, sizeof got, cudaMemcpyDeviceToHost));
    for (unsigned b = 0; b < 6; ++b) EXPECT_EQ_INT(got[b], (b ^ 1) | (6u << 8) | (64u << 16));
  }
  pairs<<<3, 32>>>(dpairs);
  EXPECT_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);
  CHECK_CUDA(cudaDeviceSynchronize());
  return corpus::pass();
}
