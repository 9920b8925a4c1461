extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void fmaloop(float* out, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = i * 0.001f, y = 1.0001f, z = 0.5f;
  for (int k = 0; k < iters; ++k) { x = fmaf(x, y, z); z = fmaf(z, y, x); }
  out[i] = x + z;
}
extern "C" __global__ void reduce(const float* in, float* out) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[16][16], Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0;
  for (int t = 0; t < n / 16; ++t) {
    As[ty][tx] = A[row * n + t * 16 + tx];
    Bs[ty][tx] = B[(t * 16 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
extern "C" __global__ void collatz(const unsigned* in, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long x = in[i]; unsigned s = 0;
  while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; ++s; }
  steps[i] = s;
}
extern "C" __global__ void histogram(const unsigned char* in, unsigned* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (; i < n; i += stride) atomicAdd(&bins[in[i]], 1u);
}
// Every thread bumps counters that all lanes of a warp share (warp-aggregated atomics) and keeps what its
// atomicAdd returned; the last warp of the grid is partial. count[1..2]: two addresses per warp, not aggregated.
extern "C" __global__ void counters(unsigned* count, int* extremes, unsigned* bits, unsigned* seen, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  seen[i] = atomicAdd(count, unsigned(i % 7 + 1));
  atomicMax(extremes, (i * 37) % 101 - 50);
  atomicMin(extremes + 1, (i * 37) % 101 - 50);
  seen[n + i] = atomicOr(bits, 1u << (i % 32));
  atomicXor(bits + 1, unsigned(i));
  atomicAnd(bits + 2, ~(1u << (i % 32)));
  atomicAdd(count + 1 + (i & 1), 1u);
}
// float4 and float2 arrays read and written by thread index (whole-warp vector runs: global-vector-runs), and a float2
// array read in reverse order (no run: the per-lane path).
extern "C" __global__ void vectors(const float4* in4, float4* out4, const float2* in2, float2* out2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 a = in4[i];
  out4[i] = make_float4(a.w, a.x + 1.0f, a.y * 2.0f, a.z);
  float2 b = in2[n - 1 - i];
  out2[i] = make_float2(b.y, b.x);
}
// Black-Scholes call prices with the fast intrinsics option-pricing code uses: every option costs three ex2, four
// rcp (div.approx), one rsqrt and one lg2 on the special-function unit (BM_SpecialFunctions).
__device__ float normalCdf(float d) {
  float k = __fdividef(1.0f, 1.0f + 0.2316419f * fabsf(d));
  float poly = k * (0.31938153f + k * (-0.356563782f + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f))));
  float tail = 0.39894228f * __expf(-0.5f * d * d) * poly;
  return d > 0 ? 1.0f - tail : tail;
}
extern "C" __global__ void optionprices(const float* spot, const float* strike, const float* years, float* call,
                                        float rate, float vol, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = spot[i], x = strike[i], t = years[i];
  float rootT = __fdividef(1.0f, rsqrtf(t));
  float d1 = __fdividef(__logf(__fdividef(s, x)) + (rate + 0.5f * vol * vol) * t, vol * rootT);
  float d2 = d1 - vol * rootT;
  call[i] = s * normalCdf(d1) - x * __expf(-rate * t) * normalCdf(d2);
}
