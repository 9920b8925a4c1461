// Corpus source: simple kernels of the kind most CUDA programs contain.
#include <cstdio>
#include <cstdint>

__device__ int g_counter;
__device__ unsigned long long g_sum64;
__constant__ float c_coeffs[16] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int* g_ptr = &g_counter;
__device__ const char* g_msg = "corpus";

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

__global__ void saxpy_grid_stride(float alpha, const float* __restrict__ x, float* __restrict__ y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = alpha * x[i] + y[i];
}

__global__ void __launch_bounds__(256, 2) block_reduce_shared(const int* in, int* out, int n) {
    __shared__ int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

__global__ void dynamic_shared(float* out) {
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = threadIdx.x * 2.0f;
    __syncthreads();
    out[threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x];
}

__global__ void atomics_all(int* i32, unsigned* u32, unsigned long long* u64, float* f32, double* f64) {
    atomicAdd(i32, 1);
    atomicSub(i32 + 1, 2);
    atomicExch(i32 + 2, threadIdx.x);
    atomicMin(i32 + 3, (int)threadIdx.x);
    atomicMax(i32 + 4, (int)threadIdx.x);
    atomicInc(u32, 17u);
    atomicDec(u32 + 1, 17u);
    atomicCAS(i32 + 5, 0, 1);
    atomicAnd(i32 + 6, 0xf0);
    atomicOr(i32 + 7, 0x0f);
    atomicXor(i32 + 8, 0xff);
    atomicAdd(u64, 3ull);
    atomicCAS(u64 + 1, 0ull, 5ull);
    atomicMax(u64 + 2, 9ull);
    atomicAdd(f32, 1.5f);
    atomicAdd(f64, 2.5);
    atomicAdd(&g_counter, 1);
    atomicAdd(&g_sum64, 1ull);
    atomicAdd_block(i32 + 9, 1);
    atomicAdd_system(i32 + 10, 1);
    int old = atomicExch(*(&g_ptr), 3);
    if (old == 42) printf("%s %d\n", g_msg, old);
}

__global__ void warp_intrinsics(const int* in, int* out) {
    int v = in[threadIdx.x];
    unsigned m = __activemask();
    v += __shfl_sync(m, v, 0);
    v += __shfl_up_sync(m, v, 1);
    v += __shfl_down_sync(m, v, 2);
    v += __shfl_xor_sync(m, v, 4);
    int any = __any_sync(m, v > 10);
    int all = __all_sync(m, v > 0);
    unsigned ballot = __ballot_sync(m, v & 1);
    unsigned match = __match_any_sync(m, v);
    int pred;
    unsigned matchAll = __match_all_sync(m, v, &pred);
    __syncwarp(m);
    out[threadIdx.x] = v + any + all + __popc(ballot) + __popc(match) + matchAll + pred + __clz(v) + __ffs(v) +
                       __brev(v) + __byte_perm(v, ballot, 0x3210) + __funnelshift_l(v, ballot, 3) +
                       __funnelshift_r(v, ballot, 5);
}

__global__ void printf_kernel(int a, double b, const char* s) {
    printf("thread %d block %d: a=%d b=%f s=%s ll=%lld\n", threadIdx.x, blockIdx.x, a, b, s, (long long)a * 3);
}

__device__ __noinline__ int helper_recursive(int n) { return n <= 1 ? 1 : n * helper_recursive(n - 1); }
__device__ __noinline__ float helper_struct(float4 v, int2 w) { return v.x + v.y * w.x + v.z * w.y + v.w; }

typedef int (*binop)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ binop g_ops[2] = {op_add, op_mul};

__global__ void calls_and_pointers(int* out, int sel, float4 v, int2 w) {
    out[0] = helper_recursive(sel);
    out[1] = (int)helper_struct(v, w);
    out[2] = g_ops[sel & 1](sel, 7);
}

struct Big {
    double d[9];
    int i[7];
    char c[3];
};
__global__ void struct_param(Big b, Big* out) {
    Big local = b;
    local.d[threadIdx.x % 9] += 1;
    local.i[threadIdx.x % 7] ^= 3;
    *out = local;
}

__global__ void local_array(int* out, int n) {
    int buf[64];
    for (int i = 0; i < 64; ++i) buf[i] = i * n;
    out[threadIdx.x] = buf[(threadIdx.x * 7 + n) & 63];
}

__global__ void control_flow(int* data, int n) {
    int x = data[threadIdx.x];
    switch (x & 7) {
        case 0: x += 3; break;
        case 1: x *= 5; break;
        case 2: x -= 11; break;
        case 3: x ^= 0x55; break;
        case 4: x = x << 3; break;
        case 5: x = x >> 2; break;
        case 6: x = ~x; break;
        default: x = -x; break;
    }
    while (x > n) x -= n;
    do { x += 2; } while (x < 0);
    if (x == 99) __trap();
    data[threadIdx.x] = x;
}

__global__ void cache_hints(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = __ldg(in + i) + __ldcg(in + i) + __ldca(in + i) + __ldcs(in + i) + __ldlu(in + i) + __ldcv(in + i);
    __stwb(out + i, v);
    __stcg(out + i, v);
    __stcs(out + i, v);
    __stwt(out + i, v);
}

__global__ void int_math(const long long* a, long long* out, unsigned u) {
    long long x = a[threadIdx.x];
    out[0] = x / 7 + x % 13 + __mul64hi(x, x) + __umul64hi(x, u) + llabs(x) + __popcll(x) + __clzll(x);
    out[1] = __mulhi((int)x, (int)u) + __umulhi((unsigned)x, u) + __sad((int)x, 3, 4u) + __usad(u, 3u, 4u) +
             __hadd((int)x, 5) + __rhadd((int)x, 5) + __uhadd(u, 1u) + __vabsdiffu4(u, (unsigned)x) +
             __vadd2(u, 3u) + __vmaxs4(u, (unsigned)x) + __dp4a((int)x, (int)u, 1) + __dp2a_lo((int)x, (int)u, 2);
    out[2] = __double_as_longlong(__longlong_as_double(x) * 2.0) + (long long)__int_as_float((int)x);
}

__global__ void volatile_and_fences(volatile int* flag, int* data) {
    data[threadIdx.x] = threadIdx.x;
    __threadfence_block();
    __threadfence();
    __threadfence_system();
    if (threadIdx.x == 0) *flag = 1;
    while (*flag == 0) {}
    long long t0 = clock64();
    unsigned t1 = clock();
    unsigned long long gt;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
    __nanosleep(100);
    data[0] = (int)(t0 + t1 + gt);
    unsigned lane, warp, sm;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("mov.u32 %0, %%warpid;" : "=r"(warp));
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    data[1] = lane + warp + sm;
}
