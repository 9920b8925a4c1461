// Corpus source: tensor cores (wmma), async copies, pipelines, barriers; architecture-dependent parts.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>

using namespace nvcuda;
namespace cg = cooperative_groups;

__global__ void wmma_gemm(const half* a, const half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

__global__ void wmma_int8(const signed char* a, const signed char* b, int* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
    wmma::fill_fragment(fc, 0);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
__global__ void wmma_tf32_bf16(const float* a, const float* b, float* c, const __nv_bfloat16* x, float* y) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> ba;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> bb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> bc;
    wmma::fill_fragment(bc, 0.0f);
    wmma::load_matrix_sync(ba, x, 16);
    wmma::load_matrix_sync(bb, x + 256, 16);
    wmma::mma_sync(bc, ba, bb, bc);
    wmma::store_matrix_sync(y, bc, 16, wmma::mem_row_major);
}

__global__ void pipeline_copy(const int* in, int* out, int n) {
    __shared__ int buf[2][256];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    for (int stage = 0; stage < 2; ++stage) {
        pipe.producer_acquire();
        cuda::memcpy_async(&buf[stage][threadIdx.x], in + stage * n + threadIdx.x, sizeof(int), pipe);
        pipe.producer_commit();
    }
    for (int stage = 0; stage < 2; ++stage) {
        cuda::pipeline_consumer_wait_prior<1>(pipe);
        out[stage * n + threadIdx.x] = buf[stage][threadIdx.x];
        pipe.consumer_release();
    }
}

__global__ void block_barrier(int* data) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    data[threadIdx.x] += 1;
    auto token = bar.arrive();
    bar.wait(std::move(token));
    data[threadIdx.x] += data[(threadIdx.x + 1) % blockDim.x];
    bar.arrive_and_wait();
}

__global__ void warp_reduce_sm80(const unsigned* in, unsigned* out) {
    unsigned v = in[threadIdx.x];
    out[threadIdx.x] = __reduce_add_sync(0xffffffffu, v) + __reduce_min_sync(0xffffffffu, v) +
                       __reduce_max_sync(0xffffffffu, (int)v) + __reduce_and_sync(0xffffffffu, v) +
                       __reduce_or_sync(0xffffffffu, v) + __reduce_xor_sync(0xffffffffu, v);
}
#endif

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(int* out) {
    __shared__ int smem[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    smem[threadIdx.x] = rank * 100 + threadIdx.x;
    cluster.sync();
    int* remote = cluster.map_shared_rank(smem, (rank + 1) % cluster.num_blocks());
    out[blockIdx.x * 64 + threadIdx.x] = remote[threadIdx.x];
    cluster.sync();
}

__global__ void tma_like_bulk(const int4* in, int4* out) {
    __shared__ alignas(16) int4 buf[64];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) cuda::memcpy_async(buf, in, cuda::aligned_size_t<16>(sizeof(buf)), bar);
    bar.arrive_and_wait();
    out[threadIdx.x] = buf[threadIdx.x];
}
#endif
