// Kernels for the interpreter's end-to-end tests. Regenerate the PTX with ./regen.sh (needs nvcc).
#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>

extern "C" __global__ void divergent(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  int r = 0;
  if (v % 3 == 0) {
    r = v * 2;
    if (v % 2 == 0) r += 1;
    else r -= 1;
  } else if (v % 3 == 1) {
    for (int k = 0; k < v % 7; ++k) {
      if (k == 4) break;
      if (k % 2) continue;
      r += k;
    }
  } else {
    switch (v % 5) {
      case 0: r = 10; break;
      case 1: r = 11; break;
      case 2: r = 12; break;
      case 3: r = 13; break;
      default: r = 14; break;
    }
  }
  out[i] = r;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ float scale(float x, float s) { return x < 0 ? -x * s : x * s; }

extern "C" __global__ void calls(const int* in, int* out, float* fout) {
  int i = threadIdx.x;
  out[i] = fib(in[i] % 12);
  fout[i] = scale(float(in[i]) - 8.0f, 0.5f);
}

extern "C" __global__ void warpops(const int* in, int* out) {
  int i = threadIdx.x;
  int v = in[i];
  int s = v;
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
  unsigned b = __ballot_sync(0xffffffff, v & 1);
  int any = __any_sync(0xffffffff, v > 100);
  int all = __all_sync(0xffffffff, v >= 0);
  int up = __shfl_up_sync(0xffffffff, v, 1);
  int down = __shfl_down_sync(0xffffffff, v, 3);
  out[i * 6 + 0] = s;
  out[i * 6 + 1] = int(b);
  out[i * 6 + 2] = any;
  out[i * 6 + 3] = all;
  out[i * 6 + 4] = up;
  out[i * 6 + 5] = down;
}

extern "C" __global__ void dynshared(const float* in, float* out) {
  extern __shared__ float buf[];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = buf[blockDim.x - 1 - t];
}

extern "C" __global__ void oob(int* p, long long off) { p[off] = 1; }

extern "C" __global__ void misaligned(char* p) { *reinterpret_cast<int*>(p + 1) = 1; }

extern "C" __global__ void printer(int x) {
  printf("hello %d from %d, %s %.2f\n", x, threadIdx.x, "str", 1.5);
}

extern "C" __global__ void asserter(int x) { assert(x == 0); }

extern "C" __global__ void trapper() { __trap(); }

__device__ int counter;
__device__ float gtable[4] = {1.5f, 2.5f, 3.5f, 4.5f};

extern "C" __global__ void globals(float* out) {
  atomicAdd(&counter, 1);
  out[threadIdx.x] = gtable[threadIdx.x % 4];
}

extern "C" __global__ void atomics(int* iv, unsigned* uv, float* fv, double* dv, unsigned long long* lv) {
  int t = threadIdx.x;
  atomicAdd(iv, 1);
  atomicMax(iv + 1, t);
  atomicMin(iv + 2, -t);
  atomicInc(uv, 10);
  atomicCAS(uv + 1, 0u, 7u);
  atomicExch(uv + 2, 5u);
  atomicOr(uv + 3, 1u << (t % 32));
  atomicAdd(fv, 0.5f);
  atomicAdd(dv, 0.25);
  atomicAdd(lv, 3ull);
  __shared__ int s;
  if (t == 0) s = 0;
  __syncthreads();
  atomicAdd(&s, 2);
  __syncthreads();
  if (t == 0) iv[3] = s;
}

extern "C" __global__ void conversions(const float* f, const double* d, int* i, unsigned* u, float* fo, unsigned short* h) {
  int t = threadIdx.x;
  i[t] = __float2int_rz(f[t]);
  u[t] = __float2uint_rn(f[t]);
  fo[t * 4 + 0] = __int2float_rn(i[t] * 3 + 1);
  fo[t * 4 + 1] = (float)d[t];
  fo[t * 4 + 2] = __fdiv_rn(f[t], 3.0f);
  fo[t * 4 + 3] = sqrtf(fabsf(f[t]));
  h[t] = __half_as_ushort(__float2half_rn(f[t]));
}

extern "C" __global__ void spin(volatile int* flags, int* out) {
  // block b waits for block b-1: needs CTAs to be suspended when they spin
  int b = blockIdx.x;
  if (threadIdx.x == 0) {
    if (b > 0)
      while (flags[b - 1] == 0) { __nanosleep(100); }
    out[b] = b > 0 ? out[b - 1] + 1 : 1;
    __threadfence();
    flags[b] = 1;
  }
}

// A decoupled look-back in miniature: block b > 0 waits for block b-1 to finish, and block 0 waits until block 1
// has started, so on one host thread every block but the last waits once for a block that started after it.
extern "C" __global__ void lookback(volatile int* flags, int* started, int* out) {
  int b = blockIdx.x;
  if (threadIdx.x == 0) {
    atomicAdd(started, 1);
    if (b == 0)
      while (*(volatile int*)started < 2) { __nanosleep(100); }
    else
      while (flags[b - 1] == 0) { __nanosleep(100); }
    out[b] = b > 0 ? out[b - 1] + 1 : 1;
    __threadfence();
    flags[b] = 1;
  }
}

// SIMD intrinsics that nvcc implements with the video instruction vabsdiff4/vabsdiff2 (with and without .add).
extern "C" __global__ void simd_video(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned* o = out + 7 * i;
  o[0] = __vabsdiffu4(x, y);
  o[1] = __vabsdiffs4(x, y);
  o[2] = __vsadu4(x, y);
  o[3] = __vsads4(x, y);
  o[4] = __vsadu2(x, y);
  o[5] = __vabs4(x);
  o[6] = __vabsss4(x);
}
