// Probe of rcp.approx.ftz.f64 on a GPU: for every 20-bit significand of the operand's upper word (exponent of 1.0,
// low word zero) records the result's upper word, and rcp.approx.ftz.f32 of the float with the same 20 leading
// significand bits. Also checks that the low word of the operand is ignored, that the result's low word is zero
// and that other exponents only scale the result. Usage: rcp64h OUTDIR (writes rcp64h.bin and rcp32.bin).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

__global__ void probe(uint32_t* hi64, uint32_t* lo64, uint32_t* r32, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  double x = __hiloint2double(int(0x3ff00000u | k), 0);
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  hi64[k] = uint32_t(__double2hiint(r));
  lo64[k] = uint32_t(__double2loint(r));
  float f = __int_as_float(int(0x3f800000u | (k << 3)));
  float rf;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rf) : "f"(f));
  r32[k] = uint32_t(__float_as_int(rf));
}

// Same significands with a nonzero low word and other exponents: the upper word of the result must be the
// table's, shifted by the exponent.
__global__ void variants(const uint32_t* hi64, uint32_t* bad, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const int exps[4] = {1023 - 500, 1023 - 3, 1023 + 7, 1023 + 900};
  for (int e = 0; e < 4; ++e) {
    uint32_t lo = k * 2654435761u;
    double x = __hiloint2double(int((uint32_t(exps[e]) << 20) | k), int(lo));
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    uint32_t want = hi64[k] + uint32_t((1023 - exps[e]) << 20);
    if (uint32_t(__double2hiint(r)) != want || __double2loint(r) != 0) atomicAdd(bad + e, 1u);
  }
}

int main(int argc, char** argv) {
  const uint32_t n = 1u << 20;
  uint32_t *hi, *lo, *r32, *bad;
  cudaMallocManaged(&hi, n * 4);
  cudaMallocManaged(&lo, n * 4);
  cudaMallocManaged(&r32, n * 4);
  cudaMallocManaged(&bad, 16);
  std::memset(bad, 0, 16);
  probe<<<n / 256, 256>>>(hi, lo, r32, n);
  variants<<<n / 256, 256>>>(hi, bad, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("launch failed"); return 1; }
  uint32_t nonzeroLo = 0;
  for (uint32_t k = 0; k < n; ++k) nonzeroLo += lo[k] != 0;
  std::printf("nonzero low words: %u; exponent/low-word variants differing: %u %u %u %u\n", nonzeroLo, bad[0], bad[1],
              bad[2], bad[3]);
  std::string dir = argc > 1 ? argv[1] : ".";
  FILE* f = std::fopen((dir + "/rcp64h.bin").c_str(), "wb");
  std::fwrite(hi, 4, n, f);
  std::fclose(f);
  f = std::fopen((dir + "/rcp32.bin").c_str(), "wb");
  std::fwrite(r32, 4, n, f);
  std::fclose(f);
  return 0;
}
