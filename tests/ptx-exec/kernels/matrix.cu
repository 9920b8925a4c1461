// Tensor-core kernels for the interpreter's tests and benchmarks (tests/ptx-exec/isa_test.cpp, tests/bench).
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// iters x mma.sync.m16n8k16 (f16 x f16 + f32) per warp, each step feeding its result back as the accumulator.
extern "C" __global__ void mmaloop(const unsigned* a, const unsigned* b, float* out, int iters) {
  const unsigned lane = threadIdx.x & 31, warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  unsigned a0 = a[lane * 4], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
  unsigned b0 = b[lane * 2], b1 = b[lane * 2 + 1];
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (int i = 0; i < iters; ++i) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float* o = out + (warp * 32 + lane) * 4;
  o[0] = c0;
  o[1] = c1;
  o[2] = c2;
  o[3] = c3;
}

// C = A x B for n x n matrices (n a multiple of 64): A row-major half, B column-major half, C row-major float.
// A block of 4 warps computes a 32x32 tile; each warp one 16x16 tile with wmma.
extern "C" __global__ void wmmagemm(const half* A, const half* B, float* C, int n) {
  const int warp = threadIdx.x / 32;
  const int row = blockIdx.y * 32 + (warp / 2) * 16, col = blockIdx.x * 32 + (warp % 2) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(a, A + row * n + k, n);
    wmma::load_matrix_sync(b, B + col * n + k, n);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + row * n + col, c, n, wmma::mem_row_major);
}

// ldmatrix.x4 from shared memory, then mma with the loaded fragment as A (the usual pairing), out per lane.
extern "C" __global__ void ldmatrixmma(const half* tile, const unsigned* b, float* out) {
  __shared__ __align__(16) half s[16 * 16];
  for (int i = threadIdx.x; i < 256; i += 32) s[i] = tile[i];
  __syncthreads();
  const unsigned lane = threadIdx.x;
  // lanes 0-15 address rows 0-15 at column 0, lanes 16-31 rows 0-15 at column 8
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(&s[(lane % 16) * 16 + (lane / 16) * 8]));
  unsigned a0, a1, a2, a3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
               : "r"(addr));
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[lane * 2]), "r"(b[lane * 2 + 1]));
  out[lane * 4] = c0;
  out[lane * 4 + 1] = c1;
  out[lane * 4 + 2] = c2;
  out[lane * 4 + 3] = c3;
}

// ldmatrix from an address the caller passes (a bad one must fault, not crash).
extern "C" __global__ void ldmatrixat(unsigned offset, unsigned* out) {
  __shared__ __align__(16) unsigned short s[64];
  for (int i = threadIdx.x; i < 64; i += 32) s[i] = static_cast<unsigned short>(i);
  __syncthreads();
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(s)) + offset + (threadIdx.x % 8) * 16;
  unsigned v;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(v) : "r"(addr));
  out[threadIdx.x] = v;
}
