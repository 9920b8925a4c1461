// Kernels in which CTAs wait for each other: they terminate only if the interpreter suspends CTAs that spin and
// runs the others (as a GPU runs co-resident CTAs side by side).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Single-pass prefix sum with decoupled look-back, the algorithm of CUB's DeviceScan: every CTA scans its tile,
// publishes its aggregate, then looks back at its predecessors' published values (spinning while one has
// published nothing yet) until it finds an inclusive prefix. Status words: 0 = nothing yet, 1 = aggregate only,
// 2 = inclusive prefix; value in the low 32 bits. The look-back is done by warp 0, 32 predecessors at a time.
constexpr int kScanThreads = 128;
constexpr int kItemsPerThread = 4;
constexpr int kTile = kScanThreads * kItemsPerThread;

__device__ unsigned long long loadStatus(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ void storeStatus(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

extern "C" __global__ void lookbackScan(const int* in, int* out, unsigned long long* status, int n, int sleepy) {
  __shared__ int warpSums[kScanThreads / 32];
  __shared__ int exclusivePrefix;
  int tile = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
  int base = tile * kTile + t * kItemsPerThread;
  int items[kItemsPerThread], sum = 0;
  for (int k = 0; k < kItemsPerThread; ++k) {
    items[k] = base + k < n ? in[base + k] : 0;
    sum += items[k];
  }
  // block-wide inclusive scan of the per-thread sums
  int x = sum;
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warpSums[warp] = x;
  __syncthreads();
  int warpOffset = 0, aggregate = 0;
  for (int w = 0; w < kScanThreads / 32; ++w) {
    if (w < warp) warpOffset += warpSums[w];
    aggregate += warpSums[w];
  }
  int threadExclusive = warpOffset + x - sum;

  if (warp == 0) {
    int prefix = 0;
    if (tile == 0) {
      if (lane == 0) storeStatus(&status[0], (2ull << 32) | unsigned(aggregate));
    } else {
      if (lane == 0) storeStatus(&status[tile], (1ull << 32) | unsigned(aggregate));
      int window = tile - 1;  // the predecessor lane 0 looks at
      for (;;) {
        int pred = window - lane;
        unsigned long long s = pred >= 0 ? loadStatus(&status[pred]) : (2ull << 32);
        while (__any_sync(0xffffffffu, (s >> 32) == 0)) {
          if (sleepy) __nanosleep(32);
          s = pred >= 0 ? loadStatus(&status[pred]) : (2ull << 32);
        }
        unsigned inclusiveLanes = __ballot_sync(0xffffffffu, (s >> 32) == 2);
        int stop = inclusiveLanes ? __ffs(inclusiveLanes) - 1 : 32;  // nearest inclusive prefix
        int v = lane <= stop && pred >= 0 ? int(unsigned(s)) : 0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        prefix += v;
        if (inclusiveLanes) break;
        window -= 32;
      }
      if (lane == 0) storeStatus(&status[tile], (2ull << 32) | unsigned(prefix + aggregate));
    }
    if (lane == 0) exclusivePrefix = prefix;
  }
  __syncthreads();
  int running = exclusivePrefix + threadExclusive;
  for (int k = 0; k < kItemsPerThread; ++k) {
    running += items[k];
    if (base + k < n) out[base + k] = running;
  }
}

// Relaxation with a grid-wide barrier between the steps: every step reads what other CTAs wrote in the step
// before. Needs a cooperative launch (the grid-sync workspace address in %envreg1/%envreg2).
extern "C" __global__ void gridRelax(int* a, int* b, int n, int steps) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    for (int i = grid.thread_rank(); i < n; i += grid.size())
      b[i] = a[i] + (i > 0 ? a[i - 1] : 0) + (i + 1 < n ? a[i + 1] : 0);
    grid.sync();
    int* t = a;
    a = b;
    b = t;
  }
}

// Level barriers as cuSPARSE's triangular solve (spsm_v2_kernel) waits between levels, in a launch that is not
// cooperative: at each level every CTA computes its value from the level before, then its thread 0 counts it in
// that level's arrival counter and every thread spins until the whole grid has arrived. The spin adds 1 to
// `spins` per thread and iteration with a red (no register changes, so the iteration still repeats the warp's
// state): the count says how long the warps spun before the interpreter parked them.
__device__ unsigned loadVolatile(const unsigned* p) {
  unsigned v;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

extern "C" __global__ void levelBarriers(int* values, unsigned* arrived, unsigned* spins, int levels) {
  const int g = gridDim.x, c = blockIdx.x;
  for (int level = 1; level < levels; ++level) {
    if (threadIdx.x == 0) values[level * g + c] = values[(level - 1) * g + (c + 1) % g] + c;
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(&arrived[level], 1u);
    }
    while (loadVolatile(&arrived[level]) != unsigned(g))
      asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(spins) : "memory");
  }
}
