// Thread-block clusters (issue 18): cooperative groups' this_cluster(), cluster.sync(), map_shared_rank (distributed
// shared memory), atomics on another CTA's shared memory, a CTA waiting for a flag another CTA of its cluster sets,
// a bulk copy into another CTA's shared memory completing that CTA's mbarrier, and __block_size__ (PTX
// .blocksareclusters). nvcc -ptx -arch=sm_90 (regen.sh).
#include <cooperative_groups.h>

#include <cstdint>

namespace cg = cooperative_groups;

// Each CTA fills its shared array, then every thread reads the array of the next CTA in the cluster (rank + 1).
extern "C" __global__ void __cluster_dims__(4, 1, 1) cluster_ring(int* out) {
  __shared__ int s[128];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  s[threadIdx.x] = int(rank * 1000 + threadIdx.x);
  cluster.sync();
  const int* next = cluster.map_shared_rank(s, (rank + 1) % cluster.num_blocks());
  out[blockIdx.x * blockDim.x + threadIdx.x] = next[(threadIdx.x + 1) % blockDim.x];
  cluster.sync();  // no CTA leaves while another may still read its shared memory
}

// Every thread of the cluster adds its value to a counter in rank 0's shared memory; rank 0 writes the sum. The
// cluster shape comes from the launch.
extern "C" __global__ void cluster_sum(const int* in, int* out) {
  __shared__ int total;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) total = 0;
  cluster.sync();
  int* target = cluster.map_shared_rank(&total, 0);
  atomicAdd(target, in[blockIdx.x * blockDim.x + threadIdx.x]);
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    const dim3 id = cluster.block_index();
    (void)id;
    out[blockIdx.x / cluster.num_blocks()] = total;
  }
  cluster.sync();
}

// What cooperative groups report per CTA: rank, CTAs per cluster, the CTA's index in its cluster, the cluster's
// shape, and %clusterid / %nclusterid / %is_explicit_cluster.
extern "C" __global__ void cluster_info(unsigned* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x != 0) return;
  const unsigned linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned* o = out + linear * 12;
  o[0] = cluster.block_rank();
  o[1] = cluster.num_blocks();
  const dim3 index = cluster.block_index(), shape = cluster.dim_blocks();
  o[2] = index.x;
  o[3] = index.y;
  o[4] = index.z;
  o[5] = shape.x;
  o[6] = shape.y;
  o[7] = shape.z;
  unsigned cx, cy, ncx, expl;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(cy));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(ncx));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(expl));
  o[8] = cx;
  o[9] = cy;
  o[10] = ncx;
  o[11] = expl;
}

// Rank 1 waits (spinning, without a cluster barrier) for a flag that rank 0 stores into rank 1's shared memory,
// then reads the value rank 0 put beside it. Needs both CTAs of the cluster to run at once.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_flag(int* out) {
  __shared__ volatile int flag;
  __shared__ int value;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) flag = 0;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    int* v = cluster.map_shared_rank(&value, 1);
    volatile int* f = cluster.map_shared_rank(const_cast<int*>(&flag), 1);
    *v = 42 + int(blockIdx.x);
    __threadfence_block();
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
    *f = 1;
  }
  if (cluster.block_rank() == 1 && threadIdx.x == 0) {
    while (flag == 0) {
    }
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
    out[blockIdx.x / 2] = value;
  }
  cluster.sync();
}

// Rank 0 copies 64 bytes of its shared memory into rank 1's with cp.async.bulk, completing rank 1's mbarrier;
// rank 1 waits on the mbarrier and writes what arrived.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_bulk(int* out) {
  __shared__ alignas(16) int src[16];
  __shared__ alignas(16) int dst[16];
  __shared__ alignas(8) uint64_t bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x < 16) {
    src[threadIdx.x] = int(rank * 100 + threadIdx.x);
    dst[threadIdx.x] = -1;
  }
  const unsigned barAddr = unsigned(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barAddr));
    if (rank == 1) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 64;" ::"r"(barAddr));
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  cluster.sync();
  if (rank == 0 && threadIdx.x == 0) {
    unsigned remoteDst, remoteBar;
    const unsigned localDst = unsigned(__cvta_generic_to_shared(dst));
    asm("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(remoteDst) : "r"(localDst));
    asm("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(remoteBar) : "r"(barAddr));
    const unsigned localSrc = unsigned(__cvta_generic_to_shared(src));
    asm volatile(
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 64, [%2];" ::"r"(
            remoteDst),
        "r"(localSrc), "r"(remoteBar)
        : "memory");
  }
  if (rank == 1) {
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(barAddr)
          : "memory");
    if (threadIdx.x < 16) out[(blockIdx.x / 2) * 16 + threadIdx.x] = dst[threadIdx.x];
  }
  cluster.sync();
}

// __block_size__((64, 1, 1), (2, 1, 1)): launched <<<G, 64>>> (or <<<G, 1>>>), G clusters of two 64-thread CTAs.
extern "C" __global__ void __block_size__((64, 1, 1), (2, 1, 1)) blocks_are_clusters(unsigned* out) {
  __shared__ unsigned s[64];
  cg::cluster_group cluster = cg::this_cluster();
  s[threadIdx.x] = blockIdx.x * 64 + threadIdx.x;
  cluster.sync();
  const unsigned* other = cluster.map_shared_rank(s, cluster.block_rank() ^ 1);
  out[blockIdx.x * 64 + threadIdx.x] = other[threadIdx.x] + (gridDim.x << 24) + (blockDim.x << 16);
  cluster.sync();
}
