// Records the H100's lg2.approx.f32 (with and without .ftz) on whole binades and samples of every binade, to model
// it bit for bit (ptx-interp/src/exec/mufu.cpp). Writes, per input set, the GPU's result as a signed difference of
// bit patterns from the correctly rounded log2 (computed here in double, rounded to float), in DIR/lg2.npz via
// pack.py.   nvcc -O2 -arch=sm_90 probe.cu -o probe && ./probe RAWDIR
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

__global__ void lg2ftz(const uint32_t* in, uint32_t* out, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float y;
  asm volatile("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(__uint_as_float(in[i])));
  out[i] = __float_as_uint(y);
}
__global__ void lg2(const uint32_t* in, uint32_t* out, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float y;
  asm volatile("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(__uint_as_float(in[i])));
  out[i] = __float_as_uint(y);
}
typedef void (*Kernel)(const uint32_t*, uint32_t*, size_t);

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static void runSet(const char* dir, const char* op, Kernel k, const std::string& set, const std::vector<uint32_t>& in) {
  uint32_t *din, *dout;
  size_t n = in.size();
  check(cudaMalloc(&din, n * 4), "malloc");
  check(cudaMalloc(&dout, n * 4), "malloc");
  check(cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice), "copy");
  k<<<unsigned((n + 255) / 256), 256>>>(din, dout, n);
  check(cudaDeviceSynchronize(), op);
  std::vector<uint32_t> out(n);
  check(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost), "copy back");
  cudaFree(din);
  cudaFree(dout);
  std::string base = std::string(dir) + "/" + op + "_" + set;
  FILE* f = fopen((base + ".in").c_str(), "wb");
  fwrite(in.data(), 4, n, f);
  fclose(f);
  f = fopen((base + ".out").c_str(), "wb");
  fwrite(out.data(), 4, n, f);
  fclose(f);
}

// every bit pattern in [a, b)
static std::vector<uint32_t> patterns(uint32_t a, uint32_t b, uint32_t step = 1) {
  std::vector<uint32_t> v;
  for (uint64_t x = a; x < b; x += step) v.push_back(uint32_t(x));
  return v;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  // whole binades: [1, 2), [2, 4), [0.5, 1), [0.25, 0.5)
  runSet(dir, "lg2ftz", lg2ftz, "e0", patterns(0x3f800000u, 0x40000000u));
  runSet(dir, "lg2ftz", lg2ftz, "e1", patterns(0x40000000u, 0x40800000u));
  runSet(dir, "lg2ftz", lg2ftz, "em1", patterns(0x3f000000u, 0x3f800000u));
  runSet(dir, "lg2ftz", lg2ftz, "em2", patterns(0x3e800000u, 0x3f000000u));
  // every binade of positive normal numbers, every 97th significand (odd stride: all low-bit patterns)
  runSet(dir, "lg2ftz", lg2ftz, "all", patterns(0x00800000u, 0x7f800000u, 97 * 64));
  // subnormals (without .ftz), special values and random bits of both forms
  runSet(dir, "lg2", lg2, "sub", patterns(0x00000000u, 0x00800000u, 7));
  std::vector<uint32_t> bits(1 << 18);
  std::mt19937 r(28);
  for (auto& x : bits) x = r();
  for (uint32_t s : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00000001u, 0x80000001u, 0x3f800000u})
    bits.push_back(s);
  runSet(dir, "lg2ftz", lg2ftz, "bits", bits);
  runSet(dir, "lg2", lg2, "bits", bits);
  printf("done\n");
  return 0;
}
