// Records the H100's results of the special-function instructions (ex2/lg2/rcp/rsqrt/sin/cos/tanh .approx) over
// dense input ranges and random inputs, as raw little-endian uint32 files: <op>_<set>.in and <op>_<set>.out.
//   nvcc -O2 -arch=sm_90 probe.cu -o probe && ./probe DIR
// analyse.py (on the same machine) turns them into compact files of differences from the correctly rounded result.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "unary_probe.cuh"

OP(ex2ftz, "ex2.approx.ftz.f32 %0, %1;")
OP(ex2, "ex2.approx.f32 %0, %1;")
OP(lg2ftz, "lg2.approx.ftz.f32 %0, %1;")
OP(lg2, "lg2.approx.f32 %0, %1;")
OP(rcpftz, "rcp.approx.ftz.f32 %0, %1;")
OP(rcp, "rcp.approx.f32 %0, %1;")
OP(rsqrtftz, "rsqrt.approx.ftz.f32 %0, %1;")
OP(rsqrt, "rsqrt.approx.f32 %0, %1;")
OP(sinftz, "sin.approx.ftz.f32 %0, %1;")
OP(cosftz, "cos.approx.ftz.f32 %0, %1;")
OP(tanh_, "tanh.approx.f32 %0, %1;")
OP(sqrtapprox, "sqrt.approx.ftz.f32 %0, %1;")

// every float in [lo, hi) (bit patterns, same sign), or `count` evenly spaced ones
static std::vector<uint32_t> range(float lo, float hi, size_t count = 0) {
  uint32_t a, b;
  memcpy(&a, &lo, 4);
  memcpy(&b, &hi, 4);
  if (a > b) std::swap(a, b);
  std::vector<uint32_t> v;
  size_t span = b - a;
  if (count == 0 || count >= span) {
    for (uint32_t x = a; x < b; ++x) v.push_back(x);
  } else {
    for (size_t i = 0; i < count; ++i) v.push_back(uint32_t(a + i * span / count));
  }
  return v;
}

static std::vector<uint32_t> randomBits(size_t n, uint32_t seed) {
  std::mt19937 r(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = r();
  return v;
}

static std::vector<uint32_t> randomIn(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 r(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint32_t> v(n);
  for (auto& x : v) {
    float f = d(r);
    memcpy(&x, &f, 4);
  }
  return v;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  const size_t R = 1 << 18;
  // reciprocal and reciprocal square root: every significand, then random bits
  runSet(dir, "rcpftz", rcpftz, "m1", range(1.0f, 2.0f));
  runSet(dir, "rcpftz", rcpftz, "rand", randomBits(R, 1));
  runSet(dir, "rcp", rcp, "rand", randomBits(R, 2));
  runSet(dir, "rcp", rcp, "sub", range(0.0f, 1.1754944e-38f, R));
  runSet(dir, "rsqrtftz", rsqrtftz, "m14", range(1.0f, 4.0f));
  runSet(dir, "rsqrtftz", rsqrtftz, "rand", randomBits(R, 3));
  runSet(dir, "rsqrt", rsqrt, "rand", randomBits(R, 4));
  runSet(dir, "rsqrt", rsqrt, "sub", range(0.0f, 1.1754944e-38f, R));
  // ex2: dense ranges around 0 (how the fraction is taken), larger integer parts, random
  runSet(dir, "ex2ftz", ex2ftz, "p1", range(1.0f, 2.0f));
  runSet(dir, "ex2ftz", ex2ftz, "p05", range(0.5f, 1.0f));
  runSet(dir, "ex2ftz", ex2ftz, "n05", range(-0.5f, -1.0f));
  runSet(dir, "ex2ftz", ex2ftz, "n1", range(-1.0f, -2.0f));
  std::vector<uint32_t> small;
  for (int k = 2; k <= 40; ++k) {
    float lo = ldexpf(1.0f, -k), hi = ldexpf(1.0f, -k + 1);
    for (uint32_t x : range(lo, hi, 1 << 15)) small.push_back(x);
    for (uint32_t x : range(-lo, -hi, 1 << 15)) small.push_back(x);
  }
  runSet(dir, "ex2ftz", ex2ftz, "small", small);
  std::vector<uint32_t> big;
  for (int k = 1; k <= 7; ++k) {
    float lo = ldexpf(1.0f, k), hi = ldexpf(1.0f, k + 1);
    for (uint32_t x : range(lo, hi, 1 << 17)) big.push_back(x);
    for (uint32_t x : range(-lo, -hi, 1 << 17)) big.push_back(x);
  }
  runSet(dir, "ex2ftz", ex2ftz, "big", big);
  runSet(dir, "ex2ftz", ex2ftz, "rand", randomIn(R, -140.0f, 140.0f, 5));
  runSet(dir, "ex2ftz", ex2ftz, "bits", randomBits(R, 6));
  runSet(dir, "ex2", ex2, "rand", randomIn(R, -160.0f, 140.0f, 7));
  runSet(dir, "ex2", ex2, "bits", randomBits(R, 8));
  // lg2: two binades dense, random
  runSet(dir, "lg2ftz", lg2ftz, "m1", range(1.0f, 2.0f));
  runSet(dir, "lg2ftz", lg2ftz, "m2", range(2.0f, 4.0f, 1 << 20));
  runSet(dir, "lg2ftz", lg2ftz, "m05", range(0.5f, 1.0f, 1 << 20));
  runSet(dir, "lg2ftz", lg2ftz, "bits", randomBits(R, 9));
  runSet(dir, "lg2", lg2, "bits", randomBits(R, 10));
  runSet(dir, "lg2", lg2, "sub", range(0.0f, 1.1754944e-38f, R));
  // the rest: random, for later models
  runSet(dir, "sinftz", sinftz, "rand", randomIn(R, -8.0f, 8.0f, 11));
  runSet(dir, "cosftz", cosftz, "rand", randomIn(R, -8.0f, 8.0f, 12));
  runSet(dir, "tanh", tanh_, "rand", randomIn(R, -10.0f, 10.0f, 13));
  runSet(dir, "tanh", tanh_, "bits", randomBits(R, 14));
  runSet(dir, "sqrtapprox", sqrtapprox, "bits", randomBits(R, 15));
  printf("done\n");
  return 0;
}
