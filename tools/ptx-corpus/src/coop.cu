// Corpus source: cooperative groups.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/memcpy_async.h>

namespace cg = cooperative_groups;

__global__ void grid_sync_kernel(int* data, int n) {
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] += 1;
    grid.sync();
    if (grid.thread_rank() == 0) data[0] = data[n - 1];
}

__global__ void tiles_kernel(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> tile8 = cg::tiled_partition<8>(warp);
    int v = in[block.thread_rank()];
    int sum = cg::reduce(warp, v, cg::plus<int>());
    int mx = cg::reduce(tile8, v, cg::greater<int>());
    int scanned = cg::inclusive_scan(warp, v);
    int ex = cg::exclusive_scan(tile8, v, cg::bit_xor<int>());
    int shuffled = warp.shfl_down(v, 1) + tile8.shfl_xor(v, 2);
    bool anyv = warp.any(v > 5);
    unsigned bal = warp.ballot(v & 1);
    cg::coalesced_group active = cg::coalesced_threads();
    int rank = active.thread_rank();
    if (v & 1) {
        cg::coalesced_group odd = cg::coalesced_threads();
        rank += cg::reduce(odd, v, cg::plus<int>());
    }
    auto labeled = cg::labeled_partition(warp, v & 3);
    rank += labeled.thread_rank();
    block.sync();
    out[block.thread_rank()] = sum + mx + scanned + ex + shuffled + anyv + bal + rank;
}

__global__ void memcpy_async_kernel(const float* in, float* out, int n) {
    extern __shared__ float sm[];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, sm, in + blockIdx.x * n, sizeof(float) * n);
    cg::wait(block);
    out[blockIdx.x * n + threadIdx.x] = sm[n - 1 - threadIdx.x];
}
