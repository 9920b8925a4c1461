// ptx.matrix: warp matrix instructions (tensor cores) against outputs recorded on a GPU (conformance/golden/).
//
// Every form runs in generated kernels, one warp per trial: mma.sync reads its fragment registers from memory
// (register r of lane l at [trial][r][l]) and writes D the same way, so the golden outputs pin down both the
// fragment layouts and the arithmetic. The inputs are adversarial for the tensor core's summation: exponents spread
// far apart (alignment and truncation), random signs at one magnitude (cancellation), subnormals, infinities and
// NaNs, integer extremes for .satfinite. wmma cases load, multiply and store tiles; the wmma_layout cases load
// tiles whose elements encode their own index (in bit planes for narrow types) and dump the registers, which
// records the fragment layout the ISA leaves unspecified. ldmatrix, stmatrix and movmatrix move coded data.
// With CUEMU_CONF_GOLDEN_RECORD set (run-on-gpu.sh) each case records its outputs; otherwise it compares them bit
// for bit with CUEMU_CONF_GOLDEN.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using u64 = uint64_t;
using u32 = uint32_t;

struct Rng {
  u64 state;
  u64 operator()() {
    u64 z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  u32 below(u32 n) { return static_cast<u32>((*this)() % n); }
};

enum class El { F16, BF16, TF32, F32, F64, S8, U8, S4, U4, B1, E4M3, E5M2, S32 };

unsigned Bits(El e) {
  switch (e) {
    case El::F16:
    case El::BF16: return 16;
    case El::F64: return 64;
    case El::S8:
    case El::U8:
    case El::E4M3:
    case El::E5M2: return 8;
    case El::S4:
    case El::U4: return 4;
    case El::B1: return 1;
    default: return 32;
  }
}

const char* PtxType(El e) {
  switch (e) {
    case El::F16: return ".f16";
    case El::BF16: return ".bf16";
    case El::TF32: return ".tf32";
    case El::F32: return ".f32";
    case El::F64: return ".f64";
    case El::S8: return ".s8";
    case El::U8: return ".u8";
    case El::S4: return ".s4";
    case El::U4: return ".u4";
    case El::B1: return ".b1";
    case El::E4M3: return ".e4m3";
    case El::E5M2: return ".e5m2";
    default: return ".s32";
  }
}

// Trial modes: 0 values near 1, 1 exponents far apart, 2 subnormals and tiny values, 3 one magnitude with random
// signs (cancellation) and a large accumulator, 4 like 0 with infinities, NaNs and zeros sprinkled in.
constexpr int kModes = 5;

// A float with `ebits` exponent bits (bias 2^(ebits-1)-1) and `mbits` mantissa bits, as bits.
u64 FloatBits(Rng& r, int mode, int ebits, int mbits, bool hasInf) {
  const u64 sign = r() & 1, emax = (u64{1} << ebits) - 1, bias = emax / 2;
  u64 man = r() & ((u64{1} << mbits) - 1), exp;
  switch (mode) {
    case 1: exp = 1 + r() % (emax - 1); break;
    case 2: exp = r() % 3; break;
    case 3:
      exp = bias;
      man &= ~((u64{1} << mbits) - 1) | 0x7;
      break;
    default: exp = bias - 2 + r() % 5; break;
  }
  if (mode == 4) {
    u32 k = static_cast<u32>(r() % 24);
    if (k == 0)
      exp = emax, man = hasInf ? 0 : man | 1;  // infinity (NaN where there is none)
    else if (k == 1)
      exp = emax, man = man | 1;  // NaN
    else if (k == 2)
      exp = 0, man = 0;  // zero
  }
  if (!hasInf && exp == emax && mode != 4) exp = emax - 1;
  return sign << (ebits + mbits) | exp << mbits | man;
}

u64 RandomElement(El e, Rng& r, int mode, bool accumulator) {
  switch (e) {
    case El::F16: return FloatBits(r, mode, 5, 10, true);
    case El::BF16: return FloatBits(r, mode, 8, 7, true);
    case El::TF32: return FloatBits(r, mode, 8, 23, true);  // with the 13 bits below tf32's mantissa set too
    case El::F32: {
      if (accumulator && mode == 3) return FloatBits(r, 0, 8, 23, true) + (u64{12} << 23);  // ~2^12 larger
      return FloatBits(r, mode, 8, 23, true);
    }
    case El::F64: return FloatBits(r, mode, 11, 52, true);
    case El::E4M3: return mode == 1 ? r() & 0xff : FloatBits(r, mode, 4, 3, false);
    case El::E5M2: return mode == 1 ? r() & 0xff : FloatBits(r, mode, 5, 2, true);
    case El::S32: {
      if (mode == 1) return r() & 0xffffffffu;
      if (mode == 3) return (r() & 1) ? 0x7fffff00u + (r() & 0xff) : 0x80000000u + (r() & 0xff);
      return static_cast<u32>(static_cast<int32_t>(r() % 2001) - 1000);
    }
    default: {
      unsigned bits = Bits(e);
      u64 mask = (u64{1} << bits) - 1;
      if (mode == 3) return (r() & 1) ? mask >> 1 : (mask >> 1) + 1;  // the extremes: saturate the sums
      return r() & mask;
    }
  }
}

// Packs random elements into 32-bit (or 64-bit) register words.
u64 RandomWord(El e, Rng& r, int mode, bool accumulator) {
  unsigned bits = Bits(e), width = bits == 64 ? 64 : 32;
  u64 w = 0;
  for (unsigned i = 0; i < width / bits; ++i) w |= RandomElement(e, r, mode, accumulator) << (i * bits);
  return w;
}

struct Buffers {
  std::vector<unsigned char> in;
  size_t outBytes = 0;
};

// Runs kernel `entry` of `ptx` with (in, out) on `grid` warps of one block each; out as 32-bit or 64-bit words.
bool RunMatrixKernel(const std::string& ptx, unsigned grid, unsigned block, const std::vector<unsigned char>& in,
                     size_t outBytes, unsigned outWord, std::vector<u64>* out) {
  if (const char* dir = std::getenv("CUEMU_CONF_DUMP_PTX")) {
    static int serial = 0;
    const std::string base = std::string(dir) + "/matrix" + std::to_string(serial++);
    std::ofstream(base + ".ptx") << ptx;
    std::ofstream(base + ".in", std::ios::binary).write(reinterpret_cast<const char*>(in.data()), in.size());
  }
  bool ok = false;
  [&] {
    CU_ASSERT_OK(cuInit(0));
    CUdevice dev;
    CU_ASSERT_OK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CU_ASSERT_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
    struct Guard {
      CUcontext c;
      ~Guard() { cuCtxDestroy(c); }
    } guard{ctx};
    CUmodule mod = nullptr;
    char log[8192] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
    CU_ASSERT_OK(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals)) << log << "\n" << ptx;
    CUfunction f;
    CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "k"));
    CUdeviceptr din, dout;
    CU_ASSERT_OK(cuMemAlloc(&din, in.size()));
    CU_ASSERT_OK(cuMemcpyHtoD(din, in.data(), in.size()));
    CU_ASSERT_OK(cuMemAlloc(&dout, outBytes));
    CU_ASSERT_OK(cuMemsetD8(dout, 0xcd, outBytes));
    void* params[] = {&din, &dout};
    CU_ASSERT_OK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr));
    CU_ASSERT_OK(cuCtxSynchronize());
    std::vector<unsigned char> bytes(outBytes);
    CU_ASSERT_OK(cuMemcpyDtoH(bytes.data(), dout, outBytes));
    out->assign(outBytes / outWord, 0);
    for (size_t i = 0; i < out->size(); ++i) std::memcpy(&(*out)[i], bytes.data() + i * outWord, outWord);
    ok = true;
  }();
  return ok;
}

// Records or compares one case's outputs (conformance/golden/).
void CheckGolden(const std::string& name, const std::string& ptx, const std::vector<unsigned char>& in,
                 const std::vector<u64>& got, unsigned outWord) {
  u64 hash = conf::Fnv(ptx.data(), ptx.size());
  hash = conf::Fnv(in.data(), in.size(), hash);
  if (conf::GoldenRecord(name, hash, got)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor(name, hash);
  if (!golden) return;
  ASSERT_EQ(golden->outputs.size(), got.size());
  int failures = 0;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (golden->outputs[i] == got[i]) continue;
    ++bad;
    if (failures++ < 8) {
      std::ostringstream msg;
      msg << std::hex << "output word " << std::dec << i << std::hex << ": got 0x" << got[i] << ", the GPU gave 0x"
          << golden->outputs[i];
      ADD_FAILURE() << msg.str();
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << got.size() << " output words (" << outWord * 8 << "-bit)\n" << ptx;
}

std::string Header() { return ".version 8.7\n.target sm_90\n.address_size 64\n"; }

// ---- mma.sync ------------------------------------------------------------------------------------------------

struct MmaForm {
  std::string name;
  std::string shape;
  El d, a, b, c;
  unsigned nd, na, nb, nc;  // registers per fragment
  std::string extra;        // .satfinite, .xor.popc, ...
  unsigned trials = 25;
  bool sparse = false;              // mma.sp::ordered_metadata with a metadata register
  unsigned selector = 0;            // the sparsity selector of a sparse form
  bool unordered = false;           // sparse: plain mma.sp instead of mma.sp::ordered_metadata
  std::string layout = ".row.col";  // only m8n8k4 .f16 takes others
};

std::string MmaKernel(const MmaForm& f) {
  const bool wide = f.a == El::F64;
  const unsigned w = wide ? 8 : 4, nin = f.na + f.nb + f.nc + (f.sparse ? 1 : 0);
  const char* ld = wide ? "ld.global.b64" : "ld.global.b32";
  const char* st = wide ? "st.global.b64" : "st.global.b32";
  const char* reg = wide ? "%x" : "%r";
  std::ostringstream s;
  s << Header() << ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
    << "  .reg .b32 %t<4>;\n  .reg .b64 %p<8>;\n  .reg " << (wide ? ".b64" : ".b32") << " %x<1>, %r<1>;\n"
    << "  .reg " << (wide ? ".b64" : ".b32") << " " << reg << "a<8>, " << reg << "b<8>, " << reg << "c<8>, " << reg
    << "d<8>;\n  .reg .b32 %e;\n"
    << "  mov.u32 %t0, %tid.x;\n  mov.u32 %t1, %ctaid.x;\n"
    << "  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
    << "  mad.lo.u32 %t2, %t1, " << nin * 32 << ", %t0;\n  mul.wide.u32 %p2, %t2, " << w << ";\n"
    << "  add.s64 %p3, %p0, %p2;\n"
    << "  mad.lo.u32 %t3, %t1, " << f.nd * 32 << ", %t0;\n  mul.wide.u32 %p4, %t3, " << w << ";\n"
    << "  add.s64 %p5, %p1, %p4;\n";
  unsigned k = 0;
  auto loads = [&](char frag, unsigned n) {
    for (unsigned r = 0; r < n; ++r, ++k)
      s << "  " << ld << " " << reg << frag << r << ", [%p3+" << k * 32 * w << "];\n";
  };
  loads('a', f.na);
  loads('b', f.nb);
  loads('c', f.nc);
  if (f.sparse) s << "  ld.global.b32 %e, [%p3+" << k * 32 * w << "];\n";
  auto vec = [&](char frag, unsigned n) {
    std::string v = "{";
    for (unsigned r = 0; r < n; ++r) v += (r ? ", " : "") + std::string(reg) + frag + std::to_string(r);
    return v + "}";
  };
  s << "  mma" << (f.sparse ? (f.unordered ? ".sp" : ".sp::ordered_metadata") : "") << ".sync.aligned." << f.shape
    << f.layout << f.extra << PtxType(f.d) << PtxType(f.a) << PtxType(f.b) << PtxType(f.c) << " " << vec('d', f.nd)
    << ", " << vec('a', f.na) << ", " << vec('b', f.nb) << ", " << vec('c', f.nc)
    << (f.sparse ? ", %e, 0x" + std::to_string(f.selector) : "") << ";\n";
  for (unsigned r = 0; r < f.nd; ++r) s << "  " << st << " [%p5+" << r * 32 * w << "], " << reg << "d" << r << ";\n";
  s << "  ret;\n}\n";
  return s.str();
}

void RunMma(const MmaForm& f) {
  const bool wide = f.a == El::F64;
  const unsigned w = wide ? 8 : 4;
  std::string ptx = MmaKernel(f);
  Rng r{conf::Fnv(f.name.data(), f.name.size())};
  std::vector<unsigned char> in;
  for (unsigned t = 0; t < f.trials; ++t) {
    int mode = static_cast<int>(t % kModes);
    auto words = [&](El e, unsigned n, bool acc) {
      for (unsigned q = 0; q < n * 32; ++q) {
        u64 v = RandomWord(e, r, mode, acc);
        in.insert(in.end(), reinterpret_cast<unsigned char*>(&v), reinterpret_cast<unsigned char*>(&v) + w);
      }
    };
    words(f.a, f.na, false);
    words(f.b, f.nb, false);
    words(f.c, f.nc, true);
    if (f.sparse) {
      // 2:4 metadata: per group of four, the two nonzero positions in increasing order (lo | hi << 2); .tf32
      // keeps one element of two: 0x4 the first, 0xe the second
      static const u32 kPairs[] = {0x4, 0x8, 0xc, 0x9, 0xd, 0xe};
      static const u32 kTf32Pairs[] = {0x4, 0xe};
      for (unsigned q = 0; q < 32; ++q) {
        u32 m = 0;
        for (unsigned i = 0; i < 8; ++i)
          m |= (f.a == El::TF32 ? kTf32Pairs[r.below(2)] : kPairs[r.below(6)]) << (4 * i);
        in.insert(in.end(), reinterpret_cast<unsigned char*>(&m), reinterpret_cast<unsigned char*>(&m) + 4);
      }
    }
  }
  std::vector<u64> got;
  if (!RunMatrixKernel(ptx, f.trials, 32, in, size_t(f.trials) * f.nd * 32 * w, w, &got)) return;
  CheckGolden("mma_" + f.name, ptx, in, got, w);
}

std::vector<MmaForm> MmaForms() {
  using E = El;
  return {
      {"m16n8k16_f32_f16", "m16n8k16", E::F32, E::F16, E::F16, E::F32, 4, 4, 2, 4, ""},
      {"m16n8k16_f16_f16", "m16n8k16", E::F16, E::F16, E::F16, E::F16, 2, 4, 2, 2, ""},
      {"m16n8k16_f32_bf16", "m16n8k16", E::F32, E::BF16, E::BF16, E::F32, 4, 4, 2, 4, ""},
      {"m16n8k8_f32_bf16", "m16n8k8", E::F32, E::BF16, E::BF16, E::F32, 4, 2, 1, 4, ""},
      {"m16n8k8_f32_f16", "m16n8k8", E::F32, E::F16, E::F16, E::F32, 4, 2, 1, 4, ""},
      {"m16n8k8_f16_f16", "m16n8k8", E::F16, E::F16, E::F16, E::F16, 2, 2, 1, 2, ""},
      {"m16n8k8_f32_tf32", "m16n8k8", E::F32, E::TF32, E::TF32, E::F32, 4, 4, 2, 4, ""},
      {"m16n8k4_f32_tf32", "m16n8k4", E::F32, E::TF32, E::TF32, E::F32, 4, 2, 1, 4, ""},
      {"m8n8k4_f64", "m8n8k4", E::F64, E::F64, E::F64, E::F64, 2, 1, 1, 2, ""},
      {"m16n8k4_f64", "m16n8k4", E::F64, E::F64, E::F64, E::F64, 4, 2, 1, 4, ""},
      {"m16n8k8_f64", "m16n8k8", E::F64, E::F64, E::F64, E::F64, 4, 4, 2, 4, ""},
      {"m16n8k16_f64", "m16n8k16", E::F64, E::F64, E::F64, E::F64, 4, 8, 4, 4, ""},
      {"m16n8k32_s8", "m16n8k32", E::S32, E::S8, E::S8, E::S32, 4, 4, 2, 4, "", 10},
      {"m16n8k32_u8_s8_satfinite", "m16n8k32", E::S32, E::U8, E::S8, E::S32, 4, 4, 2, 4, ".satfinite", 10},
      {"m16n8k32_s8_satfinite", "m16n8k32", E::S32, E::S8, E::S8, E::S32, 4, 4, 2, 4, ".satfinite", 10},
      {"m16n8k16_s8_u8", "m16n8k16", E::S32, E::S8, E::U8, E::S32, 4, 2, 1, 4, "", 10},
      {"m8n8k16_u8", "m8n8k16", E::S32, E::U8, E::U8, E::S32, 2, 1, 1, 2, "", 10},
      {"m16n8k64_s4", "m16n8k64", E::S32, E::S4, E::S4, E::S32, 4, 4, 2, 4, "", 10},
      {"m16n8k32_u4_s4_satfinite", "m16n8k32", E::S32, E::U4, E::S4, E::S32, 4, 2, 1, 4, ".satfinite", 10},
      {"m8n8k32_s4", "m8n8k32", E::S32, E::S4, E::S4, E::S32, 2, 1, 1, 2, "", 10},
      {"m16n8k32_f32_e4m3", "m16n8k32", E::F32, E::E4M3, E::E4M3, E::F32, 4, 4, 2, 4, ""},
      {"m16n8k32_f32_e5m2_e4m3", "m16n8k32", E::F32, E::E5M2, E::E4M3, E::F32, 4, 4, 2, 4, ""},
      {"m16n8k32_f16_e5m2", "m16n8k32", E::F16, E::E5M2, E::E5M2, E::F16, 2, 4, 2, 2, ""},
      {"m16n8k16_f32_e4m3", "m16n8k16", E::F32, E::E4M3, E::E4M3, E::F32, 4, 2, 1, 4, ""},
      {"m8n8k128_b1_xor", "m8n8k128", E::S32, E::B1, E::B1, E::S32, 2, 1, 1, 2, ".xor.popc", 10},
      {"m16n8k256_b1_and", "m16n8k256", E::S32, E::B1, E::B1, E::S32, 4, 4, 2, 4, ".and.popc", 10},
      {"m16n8k128_b1_xor", "m16n8k128", E::S32, E::B1, E::B1, E::S32, 4, 2, 1, 4, ".xor.popc", 10},
      {"m8n8k4_f32_f16", "m8n8k4", E::F32, E::F16, E::F16, E::F32, 8, 2, 2, 8, ""},
      {"m8n8k4_f16_f16", "m8n8k4", E::F16, E::F16, E::F16, E::F16, 4, 2, 2, 4, ""},
      // the Volta form's other layouts, and f32 results from f16 accumulators
      {"m8n8k4_f32_f16_row_row", "m8n8k4", E::F32, E::F16, E::F16, E::F32, 8, 2, 2, 8, "", 25, false, 0, false,
       ".row.row"},
      {"m8n8k4_f32_f16_col_col", "m8n8k4", E::F32, E::F16, E::F16, E::F32, 8, 2, 2, 8, "", 25, false, 0, false,
       ".col.col"},
      {"m8n8k4_f32_f16_col_row", "m8n8k4", E::F32, E::F16, E::F16, E::F32, 8, 2, 2, 8, "", 25, false, 0, false,
       ".col.row"},
      {"m8n8k4_f16_f16_row_row", "m8n8k4", E::F16, E::F16, E::F16, E::F16, 4, 2, 2, 4, "", 25, false, 0, false,
       ".row.row"},
      {"m8n8k4_f16_f16_col_col", "m8n8k4", E::F16, E::F16, E::F16, E::F16, 4, 2, 2, 4, "", 25, false, 0, false,
       ".col.col"},
      {"m8n8k4_f16_f16_col_row", "m8n8k4", E::F16, E::F16, E::F16, E::F16, 4, 2, 2, 4, "", 25, false, 0, false,
       ".col.row"},
      {"m8n8k4_f32_f16_f16acc", "m8n8k4", E::F32, E::F16, E::F16, E::F16, 8, 2, 2, 4, ""},
      {"m8n8k4_f32_f16_f16acc_col_row", "m8n8k4", E::F32, E::F16, E::F16, E::F16, 8, 2, 2, 4, "", 25, false, 0, false,
       ".col.row"},
      {"sp_m16n8k32_f32_f16", "m16n8k32", E::F32, E::F16, E::F16, E::F32, 4, 4, 4, 4, "", 15, true},
      {"sp_m16n8k16_f32_bf16", "m16n8k16", E::F32, E::BF16, E::BF16, E::F32, 4, 2, 2, 4, "", 15, true},
      {"sp_m16n8k16_f16_f16", "m16n8k16", E::F16, E::F16, E::F16, E::F16, 2, 2, 2, 2, "", 15, true},
      {"sp_m16n8k64_s8_satfinite", "m16n8k64", E::S32, E::S8, E::S8, E::S32, 4, 4, 4, 4, ".satfinite", 10, true},
      {"sp_m16n8k64_f32_e4m3", "m16n8k64", E::F32, E::E4M3, E::E4M3, E::F32, 4, 4, 4, 4, "", 15, true},
      // the other shapes and types, other selectors, and plain mma.sp
      {"sp_m16n8k16_f32_f16_sel3", "m16n8k16", E::F32, E::F16, E::F16, E::F32, 4, 2, 2, 4, "", 10, true, 3},
      {"sp_m16n8k32_f16_f16_sel1", "m16n8k32", E::F16, E::F16, E::F16, E::F16, 2, 4, 4, 2, "", 10, true, 1},
      {"sp_m16n8k32_f32_bf16", "m16n8k32", E::F32, E::BF16, E::BF16, E::F32, 4, 4, 4, 4, "", 10, true},
      {"sp_m16n8k8_f32_tf32_sel2", "m16n8k8", E::F32, E::TF32, E::TF32, E::F32, 4, 2, 2, 4, "", 10, true, 2},
      {"sp_m16n8k16_f32_tf32", "m16n8k16", E::F32, E::TF32, E::TF32, E::F32, 4, 4, 4, 4, "", 10, true},
      {"sp_m16n8k16_f32_tf32_sel1", "m16n8k16", E::F32, E::TF32, E::TF32, E::F32, 4, 4, 4, 4, "", 10, true, 1},
      {"sp_m16n8k32_s8_u8_sel1", "m16n8k32", E::S32, E::S8, E::U8, E::S32, 4, 2, 2, 4, "", 10, true, 1},
      {"sp_m16n8k32_s8", "m16n8k32", E::S32, E::S8, E::S8, E::S32, 4, 2, 2, 4, "", 10, true},
      {"sp_m16n8k64_u4_s4_sel1", "m16n8k64", E::S32, E::U4, E::S4, E::S32, 4, 2, 2, 4, "", 10, true, 1},
      {"sp_m16n8k128_s4_satfinite", "m16n8k128", E::S32, E::S4, E::S4, E::S32, 4, 4, 4, 4, ".satfinite", 10, true},
      {"sp_plain_m16n8k32_f32_f16", "m16n8k32", E::F32, E::F16, E::F16, E::F32, 4, 4, 4, 4, "", 10, true, 0, true},
      {"sp_plain_m16n8k64_s8", "m16n8k64", E::S32, E::S8, E::S8, E::S32, 4, 4, 4, 4, "", 10, true, 0, true},
  };
}

std::string MmaName(const testing::TestParamInfo<MmaForm>& i) { return i.param.name; }

class ptx_matrix_mma : public testing::TestWithParam<MmaForm> {};
TEST_P(ptx_matrix_mma, Golden) { RunMma(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_matrix_mma, testing::ValuesIn(MmaForms()), MmaName);

// ---- wmma ----------------------------------------------------------------------------------------------------

struct WmmaShape {
  const char* name;
  unsigned m, n, k;
};

struct WmmaForm {
  std::string name;
  WmmaShape shape;
  El d, a, b, c;
  unsigned nd, na, nb, nc;
  bool aRow, bRow;
  std::string extra;
  unsigned trials = 5;
};

std::string RegDecl(El e) { return e == El::F64 ? ".b64" : ".b32"; }

// Load A, B and C (C row-major), multiply, store D row-major; strides are 8 elements (128 bits for sub-byte types)
// wider than the tile.
std::string WmmaKernel(const WmmaForm& f, unsigned strideA, unsigned strideB, unsigned strideC, size_t offA,
                       size_t offB, size_t offC, size_t trialIn, size_t trialOut) {
  std::ostringstream s;
  s << Header() << ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
    << "  .reg .b32 %t<4>;\n  .reg .b64 %p<8>;\n"
    << "  .reg " << RegDecl(f.a) << " %a<8>;\n  .reg " << RegDecl(f.b) << " %b<8>;\n"
    << "  .reg " << RegDecl(f.c) << " %c<8>;\n  .reg " << RegDecl(f.d) << " %d<8>;\n"
    << "  mov.u32 %t1, %ctaid.x;\n  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
    << "  mul.wide.u32 %p2, %t1, " << trialIn << ";\n  add.s64 %p3, %p0, %p2;\n"
    << "  mul.wide.u32 %p4, %t1, " << trialOut << ";\n  add.s64 %p5, %p1, %p4;\n";
  auto vec = [](const char* p, unsigned n) {
    std::string v = "{";
    for (unsigned r = 0; r < n; ++r) v += (r ? ", " : "") + std::string(p) + std::to_string(r);
    return v + "}";
  };
  s << "  add.s64 %p6, %p3, " << offA << ";\n";
  s << "  wmma.load.a.sync.aligned" << (f.aRow ? ".row" : ".col") << "." << f.shape.name << ".global" << PtxType(f.a)
    << " " << vec("%a", f.na) << ", [%p6], " << strideA << ";\n";
  s << "  add.s64 %p6, %p3, " << offB << ";\n";
  s << "  wmma.load.b.sync.aligned" << (f.bRow ? ".row" : ".col") << "." << f.shape.name << ".global" << PtxType(f.b)
    << " " << vec("%b", f.nb) << ", [%p6], " << strideB << ";\n";
  s << "  add.s64 %p6, %p3, " << offC << ";\n";
  s << "  wmma.load.c.sync.aligned.row." << f.shape.name << ".global" << PtxType(f.c) << " " << vec("%c", f.nc)
    << ", [%p6], " << strideC << ";\n";
  const bool satfinite = f.extra == ".satfinite";
  s << "  wmma.mma" << (satfinite ? "" : f.extra) << ".sync.aligned" << (f.aRow ? ".row" : ".col")
    << (f.bRow ? ".row" : ".col") << "." << f.shape.name;
  if (f.a == El::F16)
    s << PtxType(f.d) << PtxType(f.c);
  else
    s << PtxType(f.d) << PtxType(f.a) << PtxType(f.b) << PtxType(f.c);
  if (satfinite) s << f.extra;
  s << " " << vec("%d", f.nd) << ", " << vec("%a", f.na) << ", " << vec("%b", f.nb) << ", " << vec("%c", f.nc) << ";\n";
  s << "  wmma.store.d.sync.aligned.row." << f.shape.name << ".global" << PtxType(f.d) << " [%p5], " << vec("%d", f.nd)
    << ", " << strideC << ";\n";
  s << "  ret;\n}\n";
  return s.str();
}

void RunWmma(const WmmaForm& f) {
  const unsigned bitsA = Bits(f.a), bitsB = Bits(f.b), bitsC = Bits(f.c), bitsD = Bits(f.d);
  auto pad = [](unsigned bits) { return bits < 8 ? 128 / bits : 8; };
  const unsigned strideA = (f.aRow ? f.shape.k : f.shape.m) + pad(bitsA);
  const unsigned strideB = (f.bRow ? f.shape.n : f.shape.k) + pad(bitsB);
  const unsigned strideC = f.shape.n + pad(bitsC);
  auto tileBytes = [](unsigned lines, unsigned stride, unsigned bits) {
    return (size_t(lines) * stride * bits + 7) / 8;
  };
  const size_t bytesA = tileBytes(f.aRow ? f.shape.m : f.shape.k, strideA, bitsA);
  const size_t bytesB = tileBytes(f.bRow ? f.shape.k : f.shape.n, strideB, bitsB);
  const size_t bytesC = tileBytes(f.shape.m, strideC, bitsC);
  auto up = [](size_t x) { return (x + 255) / 256 * 256; };
  const size_t offA = 0, offB = up(bytesA), offC = offB + up(bytesB), trialIn = offC + up(bytesC);
  const size_t trialOut = up(tileBytes(f.shape.m, strideC, bitsD));
  std::string ptx = WmmaKernel(f, strideA, strideB, strideC, offA, offB, offC, trialIn, trialOut);
  Rng r{conf::Fnv(f.name.data(), f.name.size())};
  std::vector<unsigned char> in(trialIn * f.trials);
  for (unsigned t = 0; t < f.trials; ++t) {
    int mode = static_cast<int>(t % kModes);
    auto fill = [&](size_t off, size_t bytes, El e, bool acc) {
      const unsigned w = Bits(e) == 64 ? 8 : 4;
      for (size_t q = 0; q < bytes; q += w) {
        u64 v = RandomWord(e, r, mode, acc);
        std::memcpy(&in[t * trialIn + off + q], &v, w);
      }
    };
    fill(offA, up(bytesA), f.a, false);
    fill(offB, up(bytesB), f.b, false);
    fill(offC, up(bytesC), f.c, true);
  }
  const unsigned w = bitsD == 64 ? 8 : 4;
  std::vector<u64> got;
  if (!RunMatrixKernel(ptx, f.trials, 32, in, trialOut * f.trials, w, &got)) return;
  CheckGolden("wmma_" + f.name, ptx, in, got, w);
}

std::vector<WmmaForm> WmmaForms() {
  using E = El;
  const WmmaShape m16n16k16{"m16n16k16", 16, 16, 16}, m32n8k16{"m32n8k16", 32, 8, 16}, m8n32k16{"m8n32k16", 8, 32, 16},
      m16n16k8{"m16n16k8", 16, 16, 8}, m8n8k4{"m8n8k4", 8, 8, 4}, m8n8k32{"m8n8k32", 8, 8, 32},
      m8n8k128{"m8n8k128", 8, 8, 128};
  return {
      {"m16n16k16_f32_f16_row_col", m16n16k16, E::F32, E::F16, E::F16, E::F32, 8, 8, 8, 8, true, false, ""},
      {"m16n16k16_f32_f16_col_row", m16n16k16, E::F32, E::F16, E::F16, E::F32, 8, 8, 8, 8, false, true, ""},
      {"m16n16k16_f16_f16_row_row", m16n16k16, E::F16, E::F16, E::F16, E::F16, 4, 8, 8, 4, true, true, ""},
      {"m32n8k16_f32_f16_row_col", m32n8k16, E::F32, E::F16, E::F16, E::F32, 8, 8, 8, 8, true, false, ""},
      {"m8n32k16_f32_f16_col_col", m8n32k16, E::F32, E::F16, E::F16, E::F32, 8, 8, 8, 8, false, false, ""},
      {"m16n16k16_f32_bf16_row_col", m16n16k16, E::F32, E::BF16, E::BF16, E::F32, 8, 4, 4, 8, true, false, ""},
      {"m32n8k16_f32_bf16_col_row", m32n8k16, E::F32, E::BF16, E::BF16, E::F32, 8, 8, 2, 8, false, true, ""},
      {"m8n32k16_f32_bf16_row_row", m8n32k16, E::F32, E::BF16, E::BF16, E::F32, 8, 2, 8, 8, true, true, ""},
      {"m16n16k8_f32_tf32_row_col", m16n16k8, E::F32, E::TF32, E::TF32, E::F32, 8, 4, 4, 8, true, false, ""},
      {"m16n16k8_f32_tf32_col_row", m16n16k8, E::F32, E::TF32, E::TF32, E::F32, 8, 4, 4, 8, false, true, ""},
      {"m8n8k4_f64_row_col", m8n8k4, E::F64, E::F64, E::F64, E::F64, 2, 1, 1, 2, true, false, ""},
      {"m8n8k4_f64_col_row", m8n8k4, E::F64, E::F64, E::F64, E::F64, 2, 1, 1, 2, false, true, ""},
      {"m16n16k16_s8_row_col", m16n16k16, E::S32, E::S8, E::S8, E::S32, 8, 2, 2, 8, true, false, ""},
      {"m16n16k16_u8_col_row_satfinite", m16n16k16, E::S32, E::U8, E::U8, E::S32, 8, 2, 2, 8, false, true,
       ".satfinite"},
      {"m32n8k16_s8_row_col", m32n8k16, E::S32, E::S8, E::S8, E::S32, 8, 4, 1, 8, true, false, ""},
      {"m8n32k16_u8_row_col", m8n32k16, E::S32, E::U8, E::U8, E::S32, 8, 1, 4, 8, true, false, ""},
      {"m8n8k32_s4_row_col", m8n8k32, E::S32, E::S4, E::S4, E::S32, 2, 1, 1, 2, true, false, ""},
      {"m8n8k32_u4_row_col_satfinite", m8n8k32, E::S32, E::U4, E::U4, E::S32, 2, 1, 1, 2, true, false, ".satfinite"},
      {"m8n8k128_b1_xor_row_col", m8n8k128, E::S32, E::B1, E::B1, E::S32, 2, 1, 1, 2, true, false, ".xor.popc"},
  };
}

std::string WmmaName(const testing::TestParamInfo<WmmaForm>& i) { return i.param.name; }

class ptx_matrix_wmma : public testing::TestWithParam<WmmaForm> {};
TEST_P(ptx_matrix_wmma, Golden) { RunWmma(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_matrix_wmma, testing::ValuesIn(WmmaForms()), WmmaName);

// ---- wmma fragment layouts ---------------------------------------------------------------------------------------

// wmma.load of a tile whose element i holds bits [j*b, (j+1)*b) of i in plane j (b = the element width, at most
// 16): the registers dumped per lane give, plane by plane, the index of the element each register bit holds.
// wmma.store of registers whose element e of lane l holds e*32+l (masked to the element width, in planes for
// narrow types alike) gives the inverse for D.
struct LayoutForm {
  std::string name;
  WmmaShape shape;
  char frag;  // a, b, c (load) or d (store)
  El type;
  unsigned regs;
  bool row;
};

void RunLayout(const LayoutForm& f) {
  const unsigned bits = Bits(f.type), ebits = std::min(bits, 16u);
  const unsigned rows = f.frag == 'a' ? f.shape.m : f.frag == 'b' ? f.shape.k : f.shape.m;
  const unsigned cols = f.frag == 'a' ? f.shape.k : f.frag == 'b' ? f.shape.n : f.shape.n;
  const unsigned count = rows * cols;
  unsigned planes = 1;
  while ((1u << (ebits * planes)) < count) ++planes;
  const size_t tileBytes = (size_t(count) * bits + 7) / 8, tileSlot = (tileBytes + 255) / 256 * 256;
  const bool wide = bits == 64;
  const unsigned w = wide ? 8 : 4;
  const unsigned lead = f.row ? cols : rows;  // default stride
  std::ostringstream s;
  s << Header() << ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
    << "  .reg .b32 %t<4>;\n  .reg .b64 %p<8>;\n  .reg " << RegDecl(f.type) << " %v<8>;\n"
    << "  mov.u32 %t0, %tid.x;\n  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
    << "  mul.wide.u32 %p2, %t0, " << w << ";\n  add.s64 %p3, %p1, %p2;\n";
  std::string vec = "{";
  for (unsigned r = 0; r < f.regs; ++r) vec += (r ? ", %v" : "%v") + std::to_string(r);
  vec += "}";
  std::vector<unsigned char> in;
  size_t outBytes;
  const char* st = wide ? "st.global.b64" : "st.global.b32";
  const char* ld = wide ? "ld.global.b64" : "ld.global.b32";
  auto put = [&](std::vector<unsigned char>& buf, size_t bitPos, u64 v) {
    for (unsigned b = 0; b < bits; ++b)
      if ((v >> b) & 1) buf[(bitPos + b) / 8] |= static_cast<unsigned char>(1u << ((bitPos + b) % 8));
  };
  if (f.frag != 'd') {
    in.assign(tileSlot * planes, 0);
    for (unsigned p = 0; p < planes; ++p)
      for (unsigned i = 0; i < count; ++i) {
        unsigned r = i / cols, c = i % cols;
        size_t pos = f.row ? size_t(r) * cols + c : size_t(c) * rows + r;
        put(in, p * tileSlot * 8 + pos * bits, (i >> (p * ebits)) & ((1u << ebits) - 1));
      }
    for (unsigned p = 0; p < planes; ++p) {
      s << "  add.s64 %p4, %p0, " << p * tileSlot << ";\n";
      s << "  wmma.load." << f.frag << ".sync.aligned" << (f.row ? ".row." : ".col.") << f.shape.name << ".global"
        << PtxType(f.type) << " " << vec << ", [%p4], " << lead << ";\n";
      for (unsigned r = 0; r < f.regs; ++r)
        s << "  " << st << " [%p3+" << (p * f.regs + r) * 32 * w << "], %v" << r << ";\n";
    }
    outBytes = size_t(planes) * f.regs * 32 * w;
  } else {
    // registers from memory: element e of lane l = e*32+l, plane by plane
    const unsigned per = (wide ? 64 : 32) / bits;
    in.assign(size_t(planes) * f.regs * 32 * w, 0);
    for (unsigned p = 0; p < planes; ++p)
      for (unsigned r = 0; r < f.regs; ++r)
        for (unsigned l = 0; l < 32; ++l)
          for (unsigned i = 0; i < per; ++i) {
            unsigned code = ((r * per + i) * 32 + l) >> (p * ebits) & ((1u << ebits) - 1);
            put(in, ((size_t(p) * f.regs + r) * 32 + l) * w * 8 + i * bits, code);
          }
    s << "  mul.wide.u32 %p5, %t0, " << w << ";\n  add.s64 %p6, %p0, %p5;\n";
    for (unsigned p = 0; p < planes; ++p) {
      for (unsigned r = 0; r < f.regs; ++r)
        s << "  " << ld << " %v" << r << ", [%p6+" << (p * f.regs + r) * 32 * w << "];\n";
      s << "  add.s64 %p4, %p1, " << p * tileSlot << ";\n";
      s << "  wmma.store.d.sync.aligned" << (f.row ? ".row." : ".col.") << f.shape.name << ".global" << PtxType(f.type)
        << " [%p4], " << vec << ", " << lead << ";\n";
    }
    outBytes = tileSlot * planes;
  }
  s << "  ret;\n}\n";
  std::string ptx = s.str();
  std::vector<u64> got;
  if (!RunMatrixKernel(ptx, 1, 32, in, outBytes, w, &got)) return;
  CheckGolden("wmma_layout_" + f.name, ptx, in, got, w);
}

std::vector<LayoutForm> LayoutForms() {
  using E = El;
  const WmmaShape m16n16k16{"m16n16k16", 16, 16, 16}, m32n8k16{"m32n8k16", 32, 8, 16}, m8n32k16{"m8n32k16", 8, 32, 16},
      m16n16k8{"m16n16k8", 16, 16, 8}, m8n8k4{"m8n8k4", 8, 8, 4}, m8n8k32{"m8n8k32", 8, 8, 32},
      m8n8k128{"m8n8k128", 8, 8, 128};
  std::vector<LayoutForm> v;
  struct Frags {
    const char* tag;
    WmmaShape shape;
    E a, b, c;
    unsigned na, nb, nc, nc16;
  };
  const Frags all[] = {
      {"m16n16k16_f16", m16n16k16, E::F16, E::F16, E::F32, 8, 8, 8, 4},
      {"m32n8k16_f16", m32n8k16, E::F16, E::F16, E::F32, 8, 8, 8, 4},
      {"m8n32k16_f16", m8n32k16, E::F16, E::F16, E::F32, 8, 8, 8, 4},
      {"m16n16k16_bf16", m16n16k16, E::BF16, E::BF16, E::F32, 4, 4, 0, 0},
      {"m32n8k16_bf16", m32n8k16, E::BF16, E::BF16, E::F32, 8, 2, 0, 0},
      {"m8n32k16_bf16", m8n32k16, E::BF16, E::BF16, E::F32, 2, 8, 0, 0},
      {"m16n16k8_tf32", m16n16k8, E::TF32, E::TF32, E::F32, 4, 4, 8, 0},
      {"m8n8k4_f64", m8n8k4, E::F64, E::F64, E::F64, 1, 1, 2, 0},
      {"m16n16k16_s8", m16n16k16, E::S8, E::S8, E::S32, 2, 2, 8, 0},
      {"m32n8k16_s8", m32n8k16, E::S8, E::S8, E::S32, 4, 1, 8, 0},
      {"m8n32k16_u8", m8n32k16, E::U8, E::U8, E::S32, 1, 4, 8, 0},
      {"m8n8k32_s4", m8n8k32, E::S4, E::S4, E::S32, 1, 1, 2, 0},
      {"m8n8k128_b1", m8n8k128, E::B1, E::B1, E::S32, 1, 1, 2, 0},
  };
  for (const Frags& f : all) {
    const bool subByte = Bits(f.a) < 8;
    for (bool row : {true, false}) {
      const std::string lay = row ? "_row" : "_col";
      if (!subByte || row) v.push_back({std::string(f.tag) + "_a" + lay, f.shape, 'a', f.a, f.na, row});
      if (!subByte || !row) v.push_back({std::string(f.tag) + "_b" + lay, f.shape, 'b', f.b, f.nb, row});
      if (f.nc) {
        std::string ct = PtxType(f.c) + 1;
        v.push_back({std::string(f.tag) + "_c_" + ct + lay, f.shape, 'c', f.c, f.nc, row});
        v.push_back({std::string(f.tag) + "_d_" + ct + lay, f.shape, 'd', f.c, f.nc, row});
      }
      if (f.nc16) {
        v.push_back({std::string(f.tag) + "_c_f16" + lay, f.shape, 'c', E::F16, f.nc16, row});
        v.push_back({std::string(f.tag) + "_d_f16" + lay, f.shape, 'd', E::F16, f.nc16, row});
      }
    }
  }
  return v;
}

std::string LayoutName(const testing::TestParamInfo<LayoutForm>& i) { return i.param.name; }

class ptx_matrix_wmma_layout : public testing::TestWithParam<LayoutForm> {};
TEST_P(ptx_matrix_wmma_layout, Golden) { RunLayout(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_matrix_wmma_layout, testing::ValuesIn(LayoutForms()), LayoutName);

// ---- ldmatrix, stmatrix, movmatrix -------------------------------------------------------------------------------

// Shared memory holds 64 rows of 8 b16 elements, element i = i; lane l addresses row (l * 5) % 64 (rows out of
// order) for ldmatrix, and stmatrix writes what ldmatrix read into a second area, read back row by row.
struct MoveForm {
  std::string name;
  std::string op;  // ldmatrix, stmatrix, movmatrix
  unsigned count;  // .x1/.x2/.x4
  bool trans;
};

void RunMove(const MoveForm& f) {
  std::ostringstream s;
  s << Header() << ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
    << "  .reg .b32 %t<8>;\n  .reg .b64 %p<8>;\n  .reg .pred %q<1>;\n  .reg .b32 %v<4>, %w<4>;\n"
    << "  .shared .align 16 .b8 tile[2048];\n  .shared .align 16 .b8 back[1024];\n"
    << "  mov.u32 %t0, %tid.x;\n  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
    // copy 2048 bytes of input to shared: 16 words per lane
    << "  mov.u32 %t1, 0;\n"
    << "LOOP:\n  mad.lo.u32 %t2, %t1, 32, %t0;\n  mul.wide.u32 %p2, %t2, 4;\n  add.s64 %p3, %p0, %p2;\n"
    << "  ld.global.b32 %t3, [%p3];\n  mov.u32 %t4, tile;\n  mad.lo.u32 %t4, %t2, 4, %t4;\n"
    << "  st.shared.b32 [%t4], %t3;\n  add.u32 %t1, %t1, 1;\n  setp.lt.u32 %q0, %t1, 16;\n"
    << "  @%q0 bra LOOP;\n  bar.sync 0;\n";
  std::ostringstream& t = s;
  std::string vec = "{";
  for (unsigned r = 0; r < f.count; ++r) vec += (r ? ", %v" : "%v") + std::to_string(r);
  vec += "}";
  const std::string x = ".x" + std::to_string(f.count);
  // row address of lane l: tile + ((l * 5) % 64) * 16
  t << "  mul.lo.u32 %t6, %t0, 5;\n  rem.u32 %t6, %t6, 64;\n  mov.u32 %t7, tile;\n  mad.lo.u32 %t7, %t6, 16, %t7;\n";
  unsigned outWords;
  if (f.op == "movmatrix") {
    t << "  mul.wide.u32 %p2, %t0, 4;\n  add.s64 %p3, %p0, %p2;\n  ld.global.b32 %v0, [%p3];\n"
      << "  movmatrix.sync.aligned.m8n8.trans.b16 %w0, %v0;\n"
      << "  add.s64 %p4, %p1, %p2;\n  st.global.b32 [%p4], %w0;\n";
    outWords = 32;
  } else {
    t << "  ldmatrix.sync.aligned.m8n8" << x << (f.trans && f.op == "ldmatrix" ? ".trans" : "") << ".shared.b16 " << vec
      << ", [%t7];\n";
    for (unsigned r = 0; r < f.count; ++r)
      t << "  mad.lo.u32 %t2, " << r << ", 32, %t0;\n  mul.wide.u32 %p2, %t2, 4;\n  add.s64 %p3, %p1, %p2;\n"
        << "  st.global.b32 [%p3], %v" << r << ";\n";
    outWords = 32 * f.count;
    if (f.op == "stmatrix") {
      // lane l stores row l of `back` (rows in order)
      t << "  mov.u32 %t7, back;\n  mad.lo.u32 %t7, %t0, 16, %t7;\n"
        << "  stmatrix.sync.aligned.m8n8" << x << (f.trans ? ".trans" : "") << ".shared.b16 [%t7], " << vec << ";\n"
        << "  bar.sync 0;\n";
      // copy `back` (count * 128 bytes) out after the registers
      for (unsigned q = 0; q < f.count; ++q)
        t << "  mov.u32 %t7, back;\n  mad.lo.u32 %t2, " << q << ", 32, %t0;\n  mad.lo.u32 %t7, %t2, 4, %t7;\n"
          << "  ld.shared.b32 %w0, [%t7];\n  mad.lo.u32 %t2, " << f.count + q << ", 32, %t0;\n"
          << "  mul.wide.u32 %p2, %t2, 4;\n  add.s64 %p3, %p1, %p2;\n  st.global.b32 [%p3], %w0;\n";
      outWords += 32 * f.count;
    }
  }
  t << "  ret;\n}\n";
  std::string ptx = t.str();
  std::vector<unsigned char> in(2048);
  for (unsigned i = 0; i < 1024; ++i) {
    uint16_t v = static_cast<uint16_t>(i * 0x9e37u + 1);
    std::memcpy(&in[2 * i], &v, 2);
  }
  std::vector<u64> got;
  if (!RunMatrixKernel(ptx, 1, 32, in, size_t(outWords) * 4, 4, &got)) return;
  CheckGolden("move_" + f.name, ptx, in, got, 4);
}

std::vector<MoveForm> MoveForms() {
  return {
      {"ldmatrix_x1", "ldmatrix", 1, false},      {"ldmatrix_x2", "ldmatrix", 2, false},
      {"ldmatrix_x4", "ldmatrix", 4, false},      {"ldmatrix_x1_trans", "ldmatrix", 1, true},
      {"ldmatrix_x2_trans", "ldmatrix", 2, true}, {"ldmatrix_x4_trans", "ldmatrix", 4, true},
      {"stmatrix_x1", "stmatrix", 1, false},      {"stmatrix_x2_trans", "stmatrix", 2, true},
      {"stmatrix_x4", "stmatrix", 4, false},      {"stmatrix_x4_trans", "stmatrix", 4, true},
      {"movmatrix_trans", "movmatrix", 1, true},
  };
}

std::string MoveName(const testing::TestParamInfo<MoveForm>& i) { return i.param.name; }

class ptx_matrix_move : public testing::TestWithParam<MoveForm> {};
TEST_P(ptx_matrix_move, Golden) { RunMove(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_matrix_move, testing::ValuesIn(MoveForms()), MoveName);

// ---- wgmma (warpgroup matrix multiply, sm_90a) -------------------------------------------------------------------

// One warpgroup (128 threads) per trial. Shared memory is loaded with an image of random elements (or, in the
// probe forms, f16 elements holding their own index), A and B are read through matrix descriptors built from
// the image's address and the form's layout fields (A from registers in the .rs forms), C comes from memory into
// the accumulators (register r of thread x at [r][x]) and D goes out the same way. So the golden outputs pin down
// the descriptor's layouts and swizzles, the register fragments and the arithmetic together.
struct WgmmaOperand {
  unsigned swizzle = 128;  // bytes: 0 (none), 32, 64, 128
  bool mnMajor = false;    // the transposed (M- or N-major) layout, .f16/.bf16 only
  unsigned lbo = 0, sbo = 0;
  unsigned start = 0;       // byte offset of the matrix from the image (which is 1024-aligned)
  unsigned baseOffset = 0;  // the descriptor's base-offset field
};

struct WgmmaForm {
  std::string name;
  unsigned n;
  El d, a, b;
  bool aRegs;  // A from registers (else a descriptor)
  WgmmaOperand la, lb;
  int scaleA = 1, scaleB = 1;
  std::string extra;  // .satfinite, .and.popc
  unsigned trials = 4;
  unsigned ksteps = 1;    // wgmmas in the group, the descriptors advanced by one K step each
  bool probe = false;     // image element i = i (f16), A one-hot in column t of trial t, C = 0
  bool sparse = false;    // wgmma.mma_async.sp: A holds two of every four K elements; metadata register
  unsigned selector = 0;  // .sp: the sparsity selector
};

unsigned WgmmaK(El a) { return a == El::TF32 ? 8 : a == El::F16 || a == El::BF16 ? 16 : a == El::B1 ? 256 : 32; }

// Byte offset of element (row, kByte) of a K-major operand, or (mnByte, k) of an MN-major one, in the canonical
// layouts (before the swizzle); only used to size the image, so it is generous where it could be wrong.
unsigned WgmmaSpan(const WgmmaOperand& o, unsigned rows, unsigned kBytes, unsigned ebytes) {
  const unsigned l = std::max(o.lbo, o.sbo), w = std::max(o.swizzle, 16u);
  unsigned span;
  if (!o.mnMajor)
    span = ((rows + 7) / 8) * l + 8 * w + (kBytes / 16 + 1) * l + kBytes;
  else
    span = ((rows * ebytes + w - 1) / w + 1) * l + 8 * w + ((kBytes / ebytes + 7) / 8 + 1) * l;
  return o.start + span + 1024;
}

// The descriptor's fields other than the start address.
u64 WgmmaDescHigh(const WgmmaOperand& o) {
  const u64 mode = o.swizzle == 128 ? 1 : o.swizzle == 64 ? 2 : o.swizzle == 32 ? 3 : 0;
  return u64(o.lbo >> 4 & 0x3fff) << 16 | u64(o.sbo >> 4 & 0x3fff) << 32 | u64(o.baseOffset & 7) << 49 | mode << 62;
}

// The descriptor advance of one K step (32 bytes of K).
unsigned WgmmaKStep(const WgmmaOperand& o, unsigned ebytes) {
  if (!o.mnMajor) return o.swizzle ? 32 : 2 * o.lbo;
  const unsigned kRows = 32 / ebytes;  // K elements per step
  return (kRows / 8) * (o.swizzle ? o.sbo : o.lbo);
}

std::string WgmmaKernel(const WgmmaForm& f, unsigned image, unsigned startA, unsigned startB, size_t trialIn,
                        size_t trialOut, unsigned nd) {
  const unsigned K = WgmmaK(f.a) * (f.sparse ? 2 : 1);
  const bool f16ab = f.a == El::F16 || f.a == El::BF16, integer = f.d == El::S32;
  const unsigned ebytes = std::max(1u, Bits(f.a) / 8);
  const char* dreg = f.d == El::F32 ? ".f32" : f.d == El::S32 ? ".s32" : ".b32";
  std::ostringstream s;
  s << ".version 8.7\n.target sm_90a\n.address_size 64\n"
    << ".visible .entry k(.param .u64 pin, .param .u64 pout) {\n"
    << "  .reg .b32 %t<8>;\n  .reg .b64 %p<8>;\n  .reg .pred %q<2>;\n  .reg .b64 %da, %db;\n  .reg .b32 %a<4>, %e;\n"
    << "  .reg " << dreg << " %d<" << nd << ">;\n"
    << "  .shared .align 1024 .b8 smem[" << image << "];\n"
    << "  mov.u32 %t0, %tid.x;\n  mov.u32 %t1, %ctaid.x;\n  ld.param.u64 %p0, [pin];\n  ld.param.u64 %p1, [pout];\n"
    << "  mul.wide.u32 %p2, %t1, " << trialIn << ";\n  add.s64 %p3, %p0, %p2;\n"
    << "  mul.wide.u32 %p2, %t1, " << trialOut << ";\n  add.s64 %p4, %p1, %p2;\n"
    << "  mov.u32 %t2, %t0;\n"
    << "COPY:\n  mul.wide.u32 %p5, %t2, 4;\n  add.s64 %p6, %p3, %p5;\n  ld.global.b32 %t3, [%p6];\n"
    << "  mov.u32 %t4, smem;\n  mad.lo.u32 %t4, %t2, 4, %t4;\n  st.shared.b32 [%t4], %t3;\n"
    << "  add.u32 %t2, %t2, 128;\n  setp.lt.u32 %q1, %t2, " << image / 4 << ";\n  @%q1 bra COPY;\n"
    << "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
    << "  mul.wide.u32 %p5, %t0, 4;\n  add.s64 %p6, %p3, %p5;\n  add.s64 %p7, %p4, %p5;\n";
  for (unsigned r = 0; r < nd; ++r) s << "  ld.global.b32 %d" << r << ", [%p6+" << image + r * 512 << "];\n";
  if (f.aRegs)
    for (unsigned r = 0; r < 4; ++r) s << "  ld.global.b32 %a" << r << ", [%p6+" << image + (nd + r) * 512 << "];\n";
  s << "  ld.global.b32 %t5, [%p3+" << image + (nd + 4) * 512 << "];\n  setp.ne.u32 %q0, %t5, 0;\n"
    << "  setp.eq.u32 %q1, %t0, %t0;\n";
  if (f.sparse) s << "  ld.global.b32 %e, [%p6+" << image + (nd + 5) * 512 << "];\n";
  auto desc = [&](const char* reg, unsigned start, const WgmmaOperand& o) {
    s << "  mov.u32 %t6, smem;\n  add.u32 %t6, %t6, " << start << ";\n  cvt.u64.u32 " << reg << ", %t6;\n"
      << "  shr.u64 " << reg << ", " << reg << ", 4;\n  and.b64 " << reg << ", " << reg << ", 16383;\n"
      << "  or.b64 " << reg << ", " << reg << ", " << WgmmaDescHigh(o) << ";\n";
  };
  if (!f.aRegs) desc("%da", startA, f.la);
  desc("%db", startB, f.lb);
  std::string dv = "{";
  for (unsigned r = 0; r < nd; ++r) dv += (r ? ", %d" : "%d") + std::to_string(r);
  dv += "}";
  s << "  wgmma.fence.sync.aligned;\n";
  for (unsigned step = 0; step < f.ksteps; ++step) {
    if (step) {
      if (!f.aRegs) s << "  add.s64 %da, %da, " << WgmmaKStep(f.la, ebytes) / 16 << ";\n";
      s << "  add.s64 %db, %db, " << WgmmaKStep(f.lb, ebytes) / 16 << ";\n";
    }
    s << "  wgmma.mma_async" << (f.sparse ? ".sp" : "") << ".sync.aligned.m64n" << f.n << "k" << K << PtxType(f.d)
      << PtxType(f.a) << PtxType(f.b) << f.extra << " " << dv << ", " << (f.aRegs ? "{%a0, %a1, %a2, %a3}" : "%da")
      << ", %db, " << (f.sparse ? "%e, " + std::to_string(f.selector) + ", " : "") << (step ? "%q1" : "%q0");
    if (!integer) s << ", " << f.scaleA << ", " << f.scaleB;
    if (f16ab) {
      if (!f.aRegs) s << ", " << (f.la.mnMajor ? 1 : 0);
      s << ", " << (f.lb.mnMajor ? 1 : 0);
    }
    s << ";\n";
  }
  s << "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
  for (unsigned r = 0; r < nd; ++r) s << "  st.global.b32 [%p7+" << r * 512 << "], %d" << r << ";\n";
  s << "  ret;\n}\n";
  return s.str();
}

void RunWgmma(const WgmmaForm& f) {
  const unsigned K = WgmmaK(f.a), ebytes = std::max(1u, Bits(f.a) / 8), kBytes = 32 * f.ksteps;
  const unsigned nd = f.d == El::F16 ? f.n / 4 : f.n / 2;
  const unsigned spanA = f.aRegs ? 0 : (WgmmaSpan(f.la, 64, kBytes, ebytes) + 1023) / 1024 * 1024;
  const unsigned spanB = (WgmmaSpan(f.lb, f.n, kBytes * (f.sparse ? 2 : 1), ebytes) + 1023) / 1024 * 1024;
  const unsigned image = spanA + spanB, startA = f.la.start, startB = spanA + f.lb.start;
  const size_t trialIn = image + (nd + 6) * 512, trialOut = size_t(nd) * 512;
  std::string ptx = WgmmaKernel(f, image, startA, startB, trialIn, trialOut, nd);
  Rng r{conf::Fnv(f.name.data(), f.name.size())};
  std::vector<unsigned char> in(trialIn * f.trials);
  for (unsigned t = 0; t < f.trials; ++t) {
    const int mode = static_cast<int>(t % kModes);
    unsigned char* p = &in[t * trialIn];
    auto word = [&](size_t off, El e, bool acc) {
      u32 v = static_cast<u32>(RandomWord(e, r, mode, acc));
      std::memcpy(p + off, &v, 4);
    };
    if (f.probe) {
      for (unsigned i = 0; i < image / 2; ++i) {
        float x = static_cast<float>(i % 2048);
        u32 b;
        std::memcpy(&b, &x, 4);
        uint16_t h = static_cast<uint16_t>(((b >> 23) - 112) << 10 | (b >> 13 & 0x3ff));
        if (x == 0) h = 0;
        std::memcpy(p + 2 * i, &h, 2);
      }
      // A: 1.0 in column t (the mma m16n8k16 A fragment: lane l, register q, half i holds column 2(l%4) + 8(q/2) + i)
      for (unsigned q = 0; q < 4; ++q)
        for (unsigned x = 0; x < 128; ++x) {
          u32 v = 0;
          for (unsigned i = 0; i < 2; ++i)
            if (2 * (x % 4) + 8 * (q / 2) + i == t % K) v |= 0x3c00u << (16 * i);
          std::memcpy(p + image + (nd + q) * 512 + 4 * x, &v, 4);
        }
      u32 one = 1;
      std::memcpy(p + image + (nd + 4) * 512, &one, 4);
      continue;
    }
    for (unsigned q = 0; q < image; q += 4) word(q, q < spanA ? f.a : f.b, false);
    for (unsigned q = 0; q < nd * 128; ++q) word(image + 4 * q, f.d, true);
    for (unsigned q = 0; q < 4 * 128; ++q) word(image + (nd + q / 128) * 512 + 4 * (q % 128), f.a, false);
    u32 scaleD = t % 3 != 2;
    std::memcpy(p + image + (nd + 4) * 512, &scaleD, 4);
    for (unsigned x = 0; x < 128 && f.sparse; ++x) {
      // 2:4 metadata as for mma.sp (.tf32: one element of two)
      static const u32 kPairs[] = {0x4, 0x8, 0xc, 0x9, 0xd, 0xe};
      static const u32 kTf32Pairs[] = {0x4, 0xe};
      u32 m = 0;
      for (unsigned i = 0; i < 8; ++i) m |= (f.a == El::TF32 ? kTf32Pairs[r.below(2)] : kPairs[r.below(6)]) << (4 * i);
      std::memcpy(p + image + (nd + 5) * 512 + 4 * x, &m, 4);
    }
  }
  std::vector<u64> got;
  if (!RunMatrixKernel(ptx, f.trials, 128, in, trialOut * f.trials, 4, &got)) return;
  CheckGolden("wgmma_" + f.name, ptx, in, got, 4);
}

std::vector<WgmmaForm> WgmmaForms() {
  using E = El;
  // operand layouts: swizzle, MN-major, LBO, SBO, start, base offset
  const WgmmaOperand k128{128, false, 16, 1024}, k64{64, false, 16, 512}, k32{32, false, 16, 256},
      kInter{0, false, 128, 256}, kInterWide{0, false, 1024, 128}, m128{128, true, 5120, 1024},
      m64{64, true, 1024, 512}, m32{32, true, 512, 256}, mInter{0, true, 2048, 128};
  WgmmaOperand k128Mid = k128;  // a start inside a swizzle atom (the K loop of a 128-byte swizzled tile)
  k128Mid.start = 64;
  WgmmaOperand k128Row3 = k128, k128Row3Base = k128;  // a start on row 3 of the pattern, with and without the field
  k128Row3.start = k128Row3Base.start = 384;
  k128Row3Base.baseOffset = 3;
  WgmmaOperand k64Mid = k64;
  k64Mid.start = 32;
  // base offsets: the field on other rows and swizzles, and a field that is not the start's row
  WgmmaOperand k128Row5Base = k128, k128Row3Base1 = k128, k64Row3Base = k64, k32Row1Base = k32;
  k128Row5Base.start = 640, k128Row5Base.baseOffset = 5;
  k128Row3Base1.start = 384, k128Row3Base1.baseOffset = 1;
  k64Row3Base.start = 384, k64Row3Base.baseOffset = 3;
  k32Row1Base.start = 128, k32Row1Base.baseOffset = 1;
  // a sparse 16-bit B has 64 bytes of K per row: longer than a 32-byte swizzle line
  WgmmaOperand k32Lbo = k32;
  k32Lbo.lbo = 4096;
  return {
      {"m64n64k16_f32_f16_ss_sw128", 64, E::F32, E::F16, E::F16, false, k128, k128, 1, 1, "", 5, 2},
      {"m64n64k16_f32_f16_rs_sw128", 64, E::F32, E::F16, E::F16, true, {}, k128, 1, 1, "", 5},
      {"m64n128k16_f32_f16_ss_sw64", 128, E::F32, E::F16, E::F16, false, k64, k64, 1, 1, "", 3, 2},
      {"m64n32k16_f32_f16_ss_sw32", 32, E::F32, E::F16, E::F16, false, k32, k32, 1, 1, "", 5, 2},
      {"m64n16k16_f32_f16_ss_interleave", 16, E::F32, E::F16, E::F16, false, kInter, kInterWide, 1, 1, "", 5, 2},
      {"m64n128k16_f32_f16_ss_sw128_trans", 128, E::F32, E::F16, E::F16, false, m128, m128, 1, 1, "", 5, 2},
      {"m64n64k16_f32_f16_ss_sw64_trans_b", 64, E::F32, E::F16, E::F16, false, k64, m64, 1, 1, "", 5},
      {"m64n32k16_f32_f16_ss_sw32_trans_a", 32, E::F32, E::F16, E::F16, false, m32, k32, 1, 1, "", 5},
      {"m64n32k16_f32_f16_ss_interleave_trans", 32, E::F32, E::F16, E::F16, false, mInter, mInter, 1, 1, "", 5, 2},
      {"m64n64k16_f32_f16_rs_interleave_trans_b", 64, E::F32, E::F16, E::F16, true, {}, mInter, 1, 1, "", 5},
      {"m64n64k16_f32_f16_ss_sw128_start", 64, E::F32, E::F16, E::F16, false, k128Mid, k128Row3, 1, 1, "", 5},
      {"m64n64k16_f32_f16_ss_sw128_base_offset", 64, E::F32, E::F16, E::F16, false, k64Mid, k128Row3Base, 1, 1, "", 5},
      {"m64n8k16_f32_f16_ss_sw128", 8, E::F32, E::F16, E::F16, false, k128, k128, 1, 1, "", 5},
      {"m64n64k16_f16_f16_ss_sw128", 64, E::F16, E::F16, E::F16, false, k128, k128, 1, 1, "", 5, 2},
      {"m64n64k16_f16_f16_rs_sw64_neg", 64, E::F16, E::F16, E::F16, true, {}, k64, -1, 1, "", 5},
      {"m64n64k16_f32_bf16_rs_sw128_neg", 64, E::F32, E::BF16, E::BF16, true, {}, k128, -1, -1, "", 5},
      {"m64n256k16_f32_bf16_ss_sw128", 256, E::F32, E::BF16, E::BF16, false, k128, k128, 1, -1, "", 2},
      {"m64n64k16_f32_bf16_ss_sw128_trans", 64, E::F32, E::BF16, E::BF16, false, m128, k128, 1, 1, "", 5},
      {"m64n64k8_f32_tf32_ss_sw128", 64, E::F32, E::TF32, E::TF32, false, k128, k128, 1, 1, "", 5, 2},
      {"m64n32k8_f32_tf32_rs_sw64", 32, E::F32, E::TF32, E::TF32, true, {}, k64, 1, -1, "", 5},
      {"m64n24k8_f32_tf32_ss_interleave", 24, E::F32, E::TF32, E::TF32, false, kInter, kInterWide, -1, 1, "", 5},
      {"m64n64k32_f32_e4m3_ss_sw128", 64, E::F32, E::E4M3, E::E4M3, false, k128, k128, 1, 1, "", 5, 2},
      {"m64n32k32_f32_e5m2_e4m3_rs_sw32", 32, E::F32, E::E5M2, E::E4M3, true, {}, k32, 1, 1, "", 5},
      {"m64n64k32_f16_e4m3_e5m2_ss_sw64", 64, E::F16, E::E4M3, E::E5M2, false, k64, k64, 1, -1, "", 5},
      {"m64n64k32_s32_s8_ss_sw128", 64, E::S32, E::S8, E::S8, false, k128, k128, 1, 1, "", 5, 2},
      {"m64n32k32_s32_u8_s8_rs_sw64_satfinite", 32, E::S32, E::U8, E::S8, true, {}, k64, 1, 1, ".satfinite", 5},
      {"m64n48k32_s32_s8_u8_ss_interleave_satfinite", 48, E::S32, E::S8, E::U8, false, kInter, kInterWide, 1, 1,
       ".satfinite", 5},
      {"m64n64k256_s32_b1_ss_sw128", 64, E::S32, E::B1, E::B1, false, k128, k128, 1, 1, ".and.popc", 5},
      {"sp_m64n64k32_f32_f16_ss_sw128", 64, E::F32, E::F16, E::F16, false, k128, k128, 1, 1, "", 5, 1, false, true},
      {"sp_m64n32k32_f32_bf16_rs_sw64", 32, E::F32, E::BF16, E::BF16, true, {}, k64, 1, 1, "", 5, 1, false, true},
      {"sp_m64n64k64_s32_s8_ss_sw128", 64, E::S32, E::S8, E::S8, false, k128, k128, 1, 1, "", 5, 1, false, true},
      {"sp_m64n32k64_f32_e4m3_rs_sw128", 32, E::F32, E::E4M3, E::E4M3, true, {}, k128, 1, 1, "", 5, 1, false, true},
      {"sp_m64n32k16_f32_tf32_ss_sw64", 32, E::F32, E::TF32, E::TF32, false, k64, k64, 1, 1, "", 5, 1, false, true},
      {"m64n64k16_f32_f16_ss_base_offset_row5", 64, E::F32, E::F16, E::F16, false, k128, k128Row5Base, 1, 1, "", 3},
      {"m64n64k16_f32_f16_ss_base_offset_other_row", 64, E::F32, E::F16, E::F16, false, k128, k128Row3Base1, 1, 1, "",
       3},
      {"m64n64k16_f32_f16_ss_base_offset_sw64", 64, E::F32, E::F16, E::F16, false, k64Row3Base, k64Row3Base, 1, 1, "",
       3},
      {"m64n32k16_f32_f16_ss_base_offset_sw32", 32, E::F32, E::F16, E::F16, false, k32Row1Base, k32Row1Base, 1, 1, "",
       3},
      {"sp_m64n32k32_f32_f16_ss_sw32_lbo", 32, E::F32, E::F16, E::F16, false, k32, k32Lbo, 1, 1, "", 3, 1, false, true},
      {"sp_m64n32k32_f32_f16_rs_sw128_sel1",
       32,
       E::F32,
       E::F16,
       E::F16,
       true,
       {},
       k128,
       1,
       1,
       "",
       3,
       1,
       false,
       true,
       1},
      {"sp_m64n32k16_f32_tf32_ss_sw64_sel1", 32, E::F32, E::TF32, E::TF32, false, k64, k64, 1, 1, "", 3, 1, false, true,
       1},
      // layout probes: D(m, n) = the index of B(t, n) in the image
      {"probe_m64n64k16_b_sw128", 64, E::F32, E::F16, E::F16, true, {}, k128, 1, 1, "", 16, 1, true},
      {"probe_m64n64k16_b_sw128_trans", 64, E::F32, E::F16, E::F16, true, {}, m128, 1, 1, "", 16, 1, true},
      {"probe_m64n32k16_b_interleave", 32, E::F32, E::F16, E::F16, true, {}, kInter, 1, 1, "", 16, 1, true},
      {"probe_m64n32k16_b_interleave_trans", 32, E::F32, E::F16, E::F16, true, {}, mInter, 1, 1, "", 16, 1, true},
      {"probe_m64n64k16_b_sw32_trans", 64, E::F32, E::F16, E::F16, true, {}, m32, 1, 1, "", 16, 1, true},
  };
}

std::string WgmmaName(const testing::TestParamInfo<WgmmaForm>& i) { return i.param.name; }

class ptx_matrix_wgmma : public testing::TestWithParam<WgmmaForm> {};
TEST_P(ptx_matrix_wgmma, Golden) { RunWgmma(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_matrix_wgmma, testing::ValuesIn(WgmmaForms()), WgmmaName);

}  // namespace
