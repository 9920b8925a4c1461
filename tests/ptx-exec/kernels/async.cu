// Asynchronous copies as CUDA programs write them (issue 18): the pipeline primitives, cuda::memcpy_async with
// cuda::barrier, cuda::pipeline, cooperative groups' memcpy_async, and (sm_90) tensor copies through tensor maps. Built for sm_80 (cp.async, mbarrier) and sm_90
// (bulk copies with transaction counts) by regen.sh; tests/ptx-exec/async_test.cpp checks the results.
#include <cuda.h>  // CUtensorMap
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

namespace cg = cooperative_groups;

// A __shared__ barrier or pipeline state is initialised by a thread at run time (init, make_pipeline), as the
// libcu++ documentation's examples do.
#pragma nv_diag_suppress static_var_with_dynamic_init

constexpr int kTile = 16;

// C = A * B (n x n, n a multiple of 16), one 16 x 16 tile of C per block: the tiles of A and B go to shared memory
// with __pipeline_memcpy_async, double-buffered: the copy of step k + 1 is in flight while step k multiplies.
extern "C" __global__ void gemm_pipeline(const float* a, const float* b, float* c, int n) {
  __shared__ float as[2][kTile][kTile], bs[2][kTile][kTile];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  int steps = n / kTile;
  auto load = [&](int step, int buf) {
    __pipeline_memcpy_async(&as[buf][ty][tx], &a[row * n + step * kTile + tx], sizeof(float));
    __pipeline_memcpy_async(&bs[buf][ty][tx], &b[(step * kTile + ty) * n + col], sizeof(float));
    __pipeline_commit();
  };
  load(0, 0);
  float sum = 0;
  for (int k = 0; k < steps; ++k) {
    if (k + 1 < steps) {
      load(k + 1, (k + 1) & 1);
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int i = 0; i < kTile; ++i) sum += as[k & 1][ty][i] * bs[k & 1][i][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

// The same GEMM with 16-byte copies (four floats per copying thread) and zero-filled tails: a[] rows are copied
// with __pipeline_memcpy_async's src-size form, so elements past `valid` columns of A read as 0.
extern "C" __global__ void gemm_pipeline_zfill(const float* a, const float* b, float* c, int n, int valid) {
  __shared__ __align__(16) float as[2][kTile][kTile];
  __shared__ __align__(16) float bs[2][kTile][kTile];
  int tx = threadIdx.x, ty = threadIdx.y, t = ty * kTile + tx;
  int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  int steps = n / kTile;
  auto load = [&](int step, int buf) {
    if (t < 64) {  // 64 threads copy A's tile, 4 floats each
      int r = t / 4, q = (t % 4) * 4, gc = step * kTile + q;
      int left = valid - gc;
      size_t bytes = left >= 4 ? 16 : left > 0 ? size_t(left) * 4 : 0;
      __pipeline_memcpy_async(&as[buf][r][q], &a[(blockIdx.y * kTile + r) * n + gc], 16, 16 - bytes);
    } else if (t < 128) {  // the next 64 copy B's
      int u = t - 64, r = u / 4, q = (u % 4) * 4;
      __pipeline_memcpy_async(&bs[buf][r][q], &b[(step * kTile + r) * n + blockIdx.x * kTile + q], 16);
    }
    __pipeline_commit();
  };
  load(0, 0);
  float sum = 0;
  for (int k = 0; k < steps; ++k) {
    if (k + 1 < steps) {
      load(k + 1, (k + 1) & 1);
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int i = 0; i < kTile; ++i) sum += as[k & 1][ty][i] * bs[k & 1][i][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

// out[i] = 2 * in[i] + blockIdx.x: each block copies its 256-int chunk to shared memory with cuda::memcpy_async
// completing on a block-scope cuda::barrier, then every thread doubles one element.
extern "C" __global__ void barrier_memcpy(const int* in, int* out) {
  __shared__ __align__(16) int buf[256];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, buf, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof(buf)), bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 256 + threadIdx.x] = 2 * buf[threadIdx.x] + int(blockIdx.x);
  // a second phase on the same barrier: every thread writes, all wait, then read a neighbour's value
  buf[threadIdx.x] = int(threadIdx.x) * 3;
  bar.arrive_and_wait();
  out[gridDim.x * 256 + blockIdx.x * 256 + threadIdx.x] = buf[(threadIdx.x + 1) % 256];
}

// A block-scope cuda::pipeline of 2 stages streaming `chunks` chunks of 256 ints through shared memory: the
// producer and consumer roles are every thread's, acquire/commit and wait/release per stage; out[i] = in[i] + 1.
extern "C" __global__ void pipeline_stream(const int* in, int* out, int chunks) {
  constexpr int kStages = 2;
  __shared__ __align__(16) int buf[kStages][256];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  for (int fetch = 0, consume = 0; consume < chunks; ++consume) {
    for (; fetch < chunks && fetch < consume + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % kStages], in + fetch * 256, cuda::aligned_size_t<16>(256 * sizeof(int)),
                         pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    out[consume * 256 + threadIdx.x] = buf[consume % kStages][threadIdx.x] + 1;
    block.sync();
    pipe.consumer_release();
  }
}

// A per-thread cuda::pipeline (thread scope): each thread copies its own 4 ints in two stages and waits with
// cuda::pipeline_consumer_wait_prior; out[i] = in[i] * 5.
extern "C" __global__ void pipeline_thread(const int4* in, int4* out) {
  __shared__ int4 buf[2][128];
  auto pipe = cuda::make_pipeline();
  int i = blockIdx.x * 128 + threadIdx.x;
  pipe.producer_acquire();
  cuda::memcpy_async(&buf[0][threadIdx.x], &in[i], sizeof(int4), pipe);
  pipe.producer_commit();
  pipe.producer_acquire();
  cuda::memcpy_async(&buf[1][threadIdx.x], &in[gridDim.x * 128 + i], sizeof(int4), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<1>(pipe);
  int4 v = buf[0][threadIdx.x];
  out[i] = make_int4(v.x * 5, v.y * 5, v.z * 5, v.w * 5);
  pipe.consumer_release();
  pipe.consumer_wait();
  v = buf[1][threadIdx.x];
  out[gridDim.x * 128 + i] = make_int4(v.x * 5, v.y * 5, v.z * 5, v.w * 5);
  pipe.consumer_release();
}

// cooperative_groups::memcpy_async of a whole block's chunk and of one warp's part, then cg::wait;
// out[i] = in[i] ^ 0x5a5a.
extern "C" __global__ void cg_memcpy(const unsigned* in, unsigned* out) {
  __shared__ __align__(16) unsigned buf[512];
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  const unsigned* src = in + blockIdx.x * 512;
  cg::memcpy_async(block, buf, src, sizeof(unsigned) * 256);
  cg::memcpy_async(warp, buf + 256 + warp.meta_group_rank() * 32, src + 256 + warp.meta_group_rank() * 32,
                   sizeof(unsigned) * 32);
  cg::wait(block);
  for (int k = threadIdx.x; k < 512; k += blockDim.x) out[blockIdx.x * 512 + k] = buf[k] ^ 0x5a5au;
}

// sm_90: a 16 x 8 tile of a float tensor at (x, y) comes in through the tensor map `in` (a tensor copy completing a
// cuda::barrier's transaction count), every thread doubles one element, and the tile goes out through `out`, as the
// CUDA programming guide's tensor-memory-access example does.
namespace cde = cuda::device::experimental;
extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                                    int x, int y) {
#if __CUDA_ARCH__ >= 900
  __shared__ alignas(128) float tile[8][16];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  cuda::barrier<cuda::thread_scope_block>::arrival_token token;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &in, x, y, bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
  } else {
    token = bar.arrive();
  }
  bar.wait(std::move(token));
  tile[threadIdx.x / 16][threadIdx.x % 16] *= 2;
  cde::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_shared_to_global(&out, x, y, &tile);
    cde::cp_async_bulk_commit_group();
    cde::cp_async_bulk_wait_group_read<0>();
  }
#endif
}
