// Shared by the special-function probes (mufu27, lg2_28): a kernel per unary .f32 instruction (OP) and runSet,
// which runs one over a set of inputs and writes DIR/<op>_<set>.in and .out (raw little-endian uint32).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define OP(name, asmtext)                                                                 \
  __global__ void name(const uint32_t* in, uint32_t* out, size_t n) {                     \
    size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;                             \
    if (i >= n) return;                                                                   \
    float x = __uint_as_float(in[i]), y;                                                  \
    asm volatile(asmtext : "=f"(y) : "f"(x));                                             \
    out[i] = __float_as_uint(y);                                                          \
  }
typedef void (*Kernel)(const uint32_t*, uint32_t*, size_t);

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static void runSet(const char* dir, const char* opname, Kernel k, const std::string& set,
                   const std::vector<uint32_t>& in) {
  uint32_t *din, *dout;
  size_t n = in.size();
  check(cudaMalloc(&din, n * 4), "malloc");
  check(cudaMalloc(&dout, n * 4), "malloc");
  check(cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice), "copy");
  k<<<unsigned((n + 255) / 256), 256>>>(din, dout, n);
  check(cudaDeviceSynchronize(), opname);
  std::vector<uint32_t> out(n);
  check(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost), "copy back");
  cudaFree(din);
  cudaFree(dout);
  std::string base = std::string(dir) + "/" + opname + "_" + set;
  FILE* f = fopen((base + ".in").c_str(), "wb");
  fwrite(in.data(), 4, n, f);
  fclose(f);
  f = fopen((base + ".out").c_str(), "wb");
  fwrite(out.data(), 4, n, f);
  fclose(f);
}
