// Kernels for the ptx.* groups that are easiest to express in CUDA C: atomics, warp collectives, barriers,
// control flow and memory spaces. Every kernel's expected result is computed on the host by the case.
#include <cstdint>

// ---- atomics --------------------------------------------------------------------------------------------------
extern "C" __global__ void atomic_add_u32(unsigned* counter, unsigned perThread) {
  for (unsigned i = 0; i < perThread; ++i) atomicAdd(counter, 1u);
}
extern "C" __global__ void atomic_add_u64(unsigned long long* counter, unsigned long long value) {
  atomicAdd(counter, value);
}
extern "C" __global__ void atomic_add_f32(float* sum) { atomicAdd(sum, 0.5f); }
extern "C" __global__ void atomic_add_f64(double* sum) { atomicAdd(sum, 0.25); }
extern "C" __global__ void atomic_minmax_s32(int* minOut, int* maxOut) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (id * 7919) % 1000 - 500;
  atomicMin(minOut, v);
  atomicMax(maxOut, v);
}
extern "C" __global__ void atomic_minmax_u32(unsigned* minOut, unsigned* maxOut) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = (id * 2654435761u) ^ 0x5bd1e995u;
  atomicMin(minOut, v);
  atomicMax(maxOut, v);
}
extern "C" __global__ void atomic_bitwise(unsigned* andOut, unsigned* orOut, unsigned* xorOut) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAnd(andOut, ~(1u << (id % 32)) | 0x80000000u);
  atomicOr(orOut, 1u << (id % 31));
  atomicXor(xorOut, id);
}
extern "C" __global__ void atomic_exch_unique(unsigned* slot, unsigned* seen) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned old = atomicExch(slot, id + 1);
  atomicAdd(&seen[old], 1u);  // every previous value is handed out exactly once
}
extern "C" __global__ void atomic_cas_ticket(unsigned* next, unsigned* order) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned mine;
  for (;;) {
    unsigned cur = *(volatile unsigned*)next;
    if (atomicCAS(next, cur, cur + 1) == cur) {
      mine = cur;
      break;
    }
  }
  order[mine] = id + 1;
}
extern "C" __global__ void atomic_inc_dec(unsigned* inc, unsigned* dec, unsigned limit) {
  atomicInc(inc, limit);
  atomicDec(dec, limit);
}
extern "C" __global__ void atomic_shared_histogram(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned bins[16];
  if (threadIdx.x < 16) bins[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&bins[in[i] % 16], 1u);
  __syncthreads();
  if (threadIdx.x < 16) out[threadIdx.x] = bins[threadIdx.x];
}

// ---- warp collectives -----------------------------------------------------------------------------------------
extern "C" __global__ void warp_shfl(const int* in, int* idx, int* up, int* down, int* bfly, int srcLane, int delta) {
  int t = threadIdx.x;
  int v = in[t];
  idx[t] = __shfl_sync(0xffffffffu, v, srcLane);
  up[t] = __shfl_up_sync(0xffffffffu, v, delta);
  down[t] = __shfl_down_sync(0xffffffffu, v, delta);
  bfly[t] = __shfl_xor_sync(0xffffffffu, v, delta);
}
extern "C" __global__ void warp_shfl_width(const int* in, int* out, int width) {
  int t = threadIdx.x;
  out[t] = __shfl_down_sync(0xffffffffu, in[t], 1, width);
}
extern "C" __global__ void warp_vote(const int* in, unsigned* ballot, int* any, int* all, unsigned* active) {
  int t = threadIdx.x;
  int p = in[t] != 0;
  unsigned b = __ballot_sync(0xffffffffu, p);
  int a = __any_sync(0xffffffffu, p);
  int l = __all_sync(0xffffffffu, p);
  if (t % 32 == 0) {
    ballot[t / 32] = b;
    any[t / 32] = a;
    all[t / 32] = l;
  }
  if (t % 3 == 0) {
    unsigned m = __activemask();
    active[t] = m;
  }
}
extern "C" __global__ void warp_match_any(const int* in, unsigned* out) {
  int t = threadIdx.x;
  out[t] = __match_any_sync(0xffffffffu, in[t]);
}
extern "C" __global__ void warp_reduce_sum(const int* in, int* out) {
  int v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
extern "C" __global__ void warp_divergent_ballot(unsigned* out) {
  int t = threadIdx.x;
  if (t % 2 == 0) {
    unsigned m = __activemask();
    out[t] = __ballot_sync(m, t % 4 == 0);
  } else {
    out[t] = __activemask();
  }
}

// ---- barriers -------------------------------------------------------------------------------------------------
extern "C" __global__ void barrier_block_sum(const int* in, int* out) {
  __shared__ int s[1024];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void barrier_count_and_or(const int* in, int* count, int* all, int* any) {
  int p = in[threadIdx.x];
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  if (threadIdx.x == 0) {
    *count = c;
    *all = a;
    *any = o;
  }
}
extern "C" __global__ void barrier_shared_rotate(int* out, int rounds) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    int v = s[(t + 1) % blockDim.x];
    __syncthreads();
    s[t] = v;
    __syncthreads();
  }
  out[t] = s[t];
}
extern "C" __global__ void barrier_warp_sync(int* out) {
  __shared__ int s[32];
  int t = threadIdx.x;
  s[t] = t * 3;
  __syncwarp();
  out[t] = s[31 - t];
}

// ---- control flow ---------------------------------------------------------------------------------------------
__device__ __noinline__ int collatz_steps(unsigned long long n) {
  int steps = 0;
  while (n != 1) {
    n = (n % 2) ? 3 * n + 1 : n / 2;
    ++steps;
  }
  return steps;
}
extern "C" __global__ void control_collatz(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = collatz_steps(i + 1);
}
__device__ __noinline__ unsigned fib_recursive(unsigned n) { return n < 2 ? n : fib_recursive(n - 1) + fib_recursive(n - 2); }
extern "C" __global__ void control_recursion(unsigned* out) { out[threadIdx.x] = fib_recursive(threadIdx.x % 16); }
extern "C" __global__ void control_switch(const int* in, int* out) {
  int t = threadIdx.x;
  int r;
  switch (in[t] & 7) {
    case 0: r = 10; break;
    case 1: r = in[t] * 3; break;
    case 2: r = -in[t]; break;
    case 3: r = in[t] ^ 0x55; break;
    case 5: r = in[t] << 2; break;
    default: r = 7;
  }
  out[t] = r;
}
extern "C" __global__ void control_early_exit(int* out) {
  int t = threadIdx.x;
  out[t] = -1;
  if (t % 5 == 0) return;
  out[t] = t;
}
extern "C" __global__ void control_nested_divergence(int* out) {
  int t = threadIdx.x;
  int v = 0;
  for (int i = 0; i < (t % 7); ++i) {
    if ((t + i) % 3 == 0) continue;
    if (i == 5 && t % 2) break;
    v += i * t;
  }
  out[t] = v;
}

// ---- memory spaces --------------------------------------------------------------------------------------------
__constant__ float c_coeffs[4] = {0.5f, -1.25f, 2.0f, 3.5f};
__device__ unsigned long long g_state[4] = {1, 2, 3, 4};
extern "C" __global__ void memory_constant_poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = ((c_coeffs[3] * x[i] + c_coeffs[2]) * x[i] + c_coeffs[1]) * x[i] + c_coeffs[0];
}
extern "C" __global__ void memory_local_array(int* out, int k) {
  int local[64];
  for (int i = 0; i < 64; ++i) local[i] = i * threadIdx.x;
  out[threadIdx.x] = local[(threadIdx.x + k) % 64];
}
extern "C" __global__ void memory_vector_copy(const float4* in, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = in[i];
    out[i] = make_float4(v.w, v.z, v.y, v.x);
  }
}
extern "C" __global__ void memory_byte_access(const unsigned char* in, unsigned char* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[n - 1 - i] = in[i] + 1;
}
extern "C" __global__ void memory_global_state(unsigned long long* out) {
  int t = threadIdx.x;
  if (t < 4) out[t] = g_state[t] * 10;
}
extern "C" __global__ void memory_generic_pointers(int* global, int which, int* out) {
  __shared__ int sh[32];
  int local[4] = {7, 8, 9, 10};
  sh[threadIdx.x] = 100 + threadIdx.x;
  __syncthreads();
  int* p = which == 0 ? global + threadIdx.x : which == 1 ? &sh[threadIdx.x] : &local[threadIdx.x % 4];
  out[threadIdx.x] = *p;
}
