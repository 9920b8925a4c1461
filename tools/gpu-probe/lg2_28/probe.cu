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

#include "../mufu27/unary_probe.cuh"

OP(lg2ftz, "lg2.approx.ftz.f32 %0, %1;")
OP(lg2, "lg2.approx.f32 %0, %1;")

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
