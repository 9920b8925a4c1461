// Issue 18 (tensor cores): how an H100 sums mma.sync products, with structured inputs (the ptx.matrix golden cases
// hold random ones). Each experiment sets row 0 of A, column 0 of B and C[0][0] of one m16n8kK mma and prints
// D[0][0]: where a small addend stops counting next to a large one (alignment bits), which products are summed
// before rounding (group size), the final rounding, subnormal results, the f16 output's rounding.
#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum T { F16, BF16, TF32, E4M3 };
const char* kName[] = {"f16", "bf16", "tf32", "e4m3"};
const unsigned kK[] = {16, 16, 8, 32};
const unsigned kPer[] = {2, 2, 1, 4};  // elements per 32-bit register

uint32_t enc(T t, double v) {
  if (v == 0) return 0;
  int e;
  double m = std::frexp(std::fabs(v), &e);  // v = m 2^e, m in [0.5, 1)
  uint32_t s = v < 0;
  auto pack = [&](int ebits, int mbits) {
    int bias = (1 << (ebits - 1)) - 1, E = e - 1 + bias;
    uint32_t man = uint32_t(std::ldexp(m * 2 - 1, mbits));
    if (E <= 0) {  // subnormal
      man = uint32_t(std::ldexp(std::fabs(v), mbits + bias - 1));
      E = 0;
    }
    return s << (ebits + mbits) | uint32_t(E) << mbits | man;
  };
  switch (t) {
    case F16: return pack(5, 10);
    case BF16: return pack(8, 7);
    case TF32: return pack(8, 23);
    default: return pack(4, 3);
  }
}

std::string kernel(T t, bool f16acc) {
  const char* ty[] = {".f16", ".bf16", ".tf32", ".e4m3"};
  const char* shape[] = {"m16n8k16", "m16n8k16", "m16n8k8", "m16n8k32"};
  unsigned nd = f16acc ? 2 : 4, nc = nd;
  std::string acc = f16acc ? ".f16" : ".f32";
  std::string s =
      ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
      "  .reg .b32 %t<2>;\n  .reg .b64 %p<6>;\n  .reg .b32 %a<4>, %b<2>, %c<4>, %d<4>;\n"
      "  mov.u32 %t0, %tid.x;\n  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
      "  mul.wide.u32 %p2, %t0, 4;\n  add.s64 %p3, %p0, %p2;\n  add.s64 %p4, %p1, %p2;\n";
  unsigned na = t == TF32 || t == E4M3 ? 4 : 4, nb = 2, k = 0;
  auto vec = [](const char* p, unsigned n) {
    std::string v = "{";
    for (unsigned i = 0; i < n; ++i) v += (i ? ", " : "") + std::string(p) + std::to_string(i);
    return v + "}";
  };
  for (unsigned i = 0; i < na; ++i, ++k)
    s += "  ld.global.b32 %a" + std::to_string(i) + ", [%p3+" + std::to_string(k * 128) + "];\n";
  for (unsigned i = 0; i < nb; ++i, ++k)
    s += "  ld.global.b32 %b" + std::to_string(i) + ", [%p3+" + std::to_string(k * 128) + "];\n";
  for (unsigned i = 0; i < nc; ++i, ++k)
    s += "  ld.global.b32 %c" + std::to_string(i) + ", [%p3+" + std::to_string(k * 128) + "];\n";
  s += std::string("  mma.sync.aligned.") + shape[t] + ".row.col" + acc + ty[t] + ty[t] + acc + " " + vec("%d", nd) +
       ", " + vec("%a", na) + ", " + vec("%b", nb) + ", " + vec("%c", nc) + ";\n";
  for (unsigned i = 0; i < nd; ++i)
    s += "  st.global.b32 [%p4+" + std::to_string(i * 128) + "], %d" + std::to_string(i) + ";\n";
  return s + "  ret;\n}\n";
}

struct Runner {
  CUfunction f[4][2];
  CUdeviceptr in, out;
  bool init() {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return false;
    for (int t = 0; t < 4; ++t)
      for (int h = 0; h < 2; ++h) {
        if (h && t != F16) continue;
        std::string text = kernel(T(t), h);
        CUmodule mod;
        char log[4096] = {};
        CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
        if (cuModuleLoadDataEx(&mod, text.c_str(), 2, opts, vals)) {
          std::printf("load failed %s\n%s\n", log, text.c_str());
          return false;
        }
        cuModuleGetFunction(&f[t][h], mod, "k");
      }
    cuMemAlloc(&in, 32 * 10 * 4);
    cuMemAlloc(&out, 32 * 4 * 4);
    return true;
  }
  // a: row 0 of A (K values), b: column 0 of B, c: C[0][0]; returns D[0][0] bits
  uint32_t run(T t, const std::vector<double>& a, const std::vector<double>& b, double c, bool f16acc = false) {
    unsigned K = kK[t], p = kPer[t], na = 4, nb = 2, nc = f16acc ? 2 : 4;
    std::vector<uint32_t> words(32 * (na + nb + nc), 0);
    unsigned bits = t == E4M3 ? 8 : t == TF32 ? 32 : 16;
    for (unsigned l = 0; l < 32; ++l) {
      unsigned g = l >> 2, tq = l & 3;
      for (unsigned r = 0; r < na; ++r)
        for (unsigned i = 0; i < p; ++i) {
          unsigned row = g + 8 * (r % 2), col = p * tq + 4 * p * (r / 2) + i;
          if (row == 0 && col < K && col < a.size()) words[r * 32 + l] |= enc(t, a[col]) << (i * bits % 32);
        }
      for (unsigned r = 0; r < nb; ++r)
        for (unsigned i = 0; i < p; ++i) {
          unsigned k = p * tq + 4 * p * r + i;
          if (g == 0 && k < K && k < b.size()) words[(na + r) * 32 + l] |= enc(t, b[k]) << (i * bits % 32);
        }
      if (l == 0) {
        if (f16acc)
          words[(na + nb) * 32] = enc(F16, c);
        else {
          float cf = float(c);
          std::memcpy(&words[(na + nb) * 32], &cf, 4);
        }
      }
    }
    cuMemcpyHtoD(in, words.data(), words.size() * 4);
    void* args[] = {&in, &out};
    cuLaunchKernel(f[t][f16acc], 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
    cuCtxSynchronize();
    uint32_t d;
    cuMemcpyDtoH(&d, out, 4);
    return f16acc ? d & 0xffff : d;
  }
};

}  // namespace

int main() {
  Runner R;
  if (!R.init()) return 1;
  for (int ti = 0; ti < 4; ++ti) {
    T t = T(ti);
    unsigned K = kK[t];
    const char* n = kName[t];
    // alignment: C = +-2^j next to a product of +-1 (and 1.5, 1.75)
    for (double pv : {1.0, -1.0, 1.5, -1.75})
      for (int j = 1; j <= 40; ++j) {
        std::vector<double> a(K, 0), b(K, 0);
        a[0] = pv, b[0] = 1;
        std::printf("%s align p=%g c=2^%d: %08x\n", n, pv, j, R.run(t, a, b, std::ldexp(1.0, j)));
      }
    // the accumulator as the small addend: product 2^E, C = 1 (and -1.5)
    int E = t == E4M3 ? 16 : 24;
    for (double cv : {1.0, -1.5, 3.0})
      for (int e = 1; e <= E; ++e) {
        std::vector<double> a(K, 0), b(K, 0);
        a[0] = std::ldexp(1.0, e / 2), b[0] = std::ldexp(1.0, e - e / 2);
        std::printf("%s cside p=2^%d c=%g: %08x\n", n, e, cv, R.run(t, a, b, cv));
      }
    // groups: a product 2^E at position q, products 1.5 * 2^(E-24) everywhere else (1.5*2^(E-20) for e4m3)
    for (unsigned q = 0; q < K; ++q) {
      std::vector<double> a(K), b(K);
      int sm = t == E4M3 ? E - 20 : E - 24;
      for (unsigned k = 0; k < K; ++k) {
        if (k == q)
          a[k] = std::ldexp(1.0, E / 2), b[k] = std::ldexp(1.0, E - E / 2);
        else
          a[k] = 1.5 * std::ldexp(1.0, sm / 2), b[k] = std::ldexp(1.0, sm - sm / 2);
      }
      std::printf("%s group big@%u: %08x\n", n, q, R.run(t, a, b, 0.0));
    }
    // small terms only after a big C
    for (unsigned q = 0; q < K; ++q) {
      std::vector<double> a(K, 0), b(K, 0);
      for (unsigned k = 0; k <= q; ++k) a[k] = 0.75, b[k] = 1;
      std::printf("%s cfirst n=%u: %08x\n", n, q + 1, R.run(t, a, b, t == E4M3 ? 65536.0 : 16777216.0));
    }
    // final rounding: 2^E + x for fractions x
    for (double x : {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.5, 3.0, -0.25, -0.5, -1.5, -2.5}) {
      std::vector<double> a(K, 0), b(K, 0);
      a[0] = x, b[0] = 1;
      std::printf("%s round c=2^%d x=%g: %08x\n", n, E, x, R.run(t, a, b, std::ldexp(1.0, E)));
      std::printf("%s round c=2^%d+2 x=%g: %08x\n", n, E, x, R.run(t, a, b, std::ldexp(1.0, E) + 2));
    }
    // subnormal results and inputs
    for (int e : {-120, -126, -127, -130, -140, -149}) {
      std::vector<double> a(K, 0), b(K, 0);
      std::printf("%s subnormal c=2^%d: %08x\n", n, e, R.run(t, a, b, std::ldexp(1.0, e)));
      if (t == BF16 || t == TF32) {
        a[0] = std::ldexp(1.0, e / 2), b[0] = std::ldexp(1.0, e - e / 2);
        std::printf("%s subnormal p=2^%d: %08x\n", n, e, R.run(t, a, b, 0.0));
      }
    }
  }
  // second round: groups with addends below the big term's resolution; fp8's alignment bits
  for (int ti = 0; ti < 4; ++ti) {
    T t = T(ti);
    unsigned K = kK[t];
    int E = t == E4M3 ? 16 : 24;
    for (unsigned q = 0; q < K; ++q) {
      std::vector<double> a(K), b(K);
      for (unsigned k = 0; k < K; ++k) {
        if (k == q)
          a[k] = std::ldexp(1.0, E / 2), b[k] = std::ldexp(1.0, E - E / 2);
        else
          a[k] = t == E4M3 ? 0.375 * std::ldexp(1.0, -4) : 0.375, b[k] = t == E4M3 ? std::ldexp(1.0, -4) : 1;
      }
      std::printf("%s group2 big@%u: %08x\n", kName[t], q, R.run(t, a, b, 0.0));
    }
    for (unsigned q = 0; q < K; ++q) {  // big in C, one small product at position q, the others zero
      std::vector<double> a(K, 0), b(K, 0);
      a[q] = t == E4M3 ? 0.375 * std::ldexp(1.0, -4) : 0.375, b[q] = t == E4M3 ? std::ldexp(1.0, -4) : 1;
      std::printf("%s cbig small@%u: %08x\n", kName[t], q, R.run(t, a, b, std::ldexp(1.0, E)));
    }
    for (int j = 1; j <= 30; ++j) {  // C = 1, product 2^-j (as 2^-j/2 x 2^-(j - j/2)), both signs
      for (double sg : {1.0, -1.0}) {
        std::vector<double> a(K, 0), b(K, 0);
        a[0] = sg * std::ldexp(1.0, -(j / 2)), b[0] = std::ldexp(1.0, -(j - j / 2));
        std::printf("%s tiny p=%g*2^-%d c=1: %08x\n", kName[t], sg, j, R.run(t, a, b, 1.0));
        std::printf("%s tiny p=%g*2^-%d c=-1: %08x\n", kName[t], sg, j, R.run(t, a, b, -1.0));
      }
    }
  }
  // f16 outputs: 1 + x rounded to f16
  for (int j = 9; j <= 14; ++j)
    for (double m : {1.0, 1.5, 3.0, -1.0, -1.5}) {
      std::vector<double> a(16, 0), b(16, 0);
      a[0] = m * std::ldexp(1.0, -j), b[0] = 1;
      std::printf("f16acc 1+%g*2^-%d: %04x\n", m, j, R.run(F16, a, b, 1.0, true));
    }
  return 0;
}
