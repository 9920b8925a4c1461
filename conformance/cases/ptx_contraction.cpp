// ptx.contraction.*: a `mul` feeding an `add`/`sub`, neither with a rounding modifier, which the PTX ISA lets the
// code generator fuse into one fused multiply-add (and ptxas, the driver's JIT, does where its rules allow: one
// rounding instead of two). Each form is a small pattern (the product used once, twice, stored too, compared, in
// another block, negated, with .ftz/.sat/.rn on either side, both operands products, ...) in f32, f64 and f16, run
// on inputs chosen so that a fused result differs from a twice-rounded one (a product that cancels the addend) and on
// seeded random ones; the outputs are recorded on a GPU into the golden file and compared bit for bit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr unsigned kThreads = 64;

struct ContractionForm {
  std::string name;  // pattern_type
  std::string type;  // f32, f64, f16
  std::string body;  // R1..R4 inputs, R10.. temporaries, O0/O1 outputs, T the type, B its bit width
};

unsigned Bytes(const std::string& type) { return type == "f64" ? 8 : type == "f32" ? 4 : 2; }

std::string KernelFor(const ContractionForm& f) {
  const unsigned bytes = Bytes(f.type);
  const std::string bits = std::to_string(8 * bytes), reg = f.type == "f16" ? "b16" : f.type;
  std::string body = f.body;
  body = std::regex_replace(body, std::regex("\\bR(\\d+)"), "%v$1");
  body = std::regex_replace(body, std::regex("\\bO(\\d)"), "%o$1");
  body = std::regex_replace(body, std::regex("\\.T\\b"), "." + f.type);
  body = std::regex_replace(body, std::regex("\\.bB\\b"), ".b" + bits);
  std::string s =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)\n{\n"
      "  .reg ." +
      reg + " %v<40>;\n  .reg ." + reg +
      " %o<2>;\n  .reg .b64 %rd<8>;\n  .reg .b32 %r<8>;\n  .reg .pred %p<4>;\n"
      "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u32 %r1, [n];\n"
      "  mov.u32 %r3, %tid.x;\n  mul.wide.u32 %rd3, %r3, " +
      std::to_string(4 * bytes) + ";\n  add.s64 %rd4, %rd1, %rd3;\n";
  for (unsigned i = 0; i < 4; ++i)
    s += "  ld.global." + reg + " %v" + std::to_string(i + 1) + ", [%rd4+" + std::to_string(i * bytes) + "];\n";
  s += "  mov.b" + bits + " %o0, 0;\n  mov.b" + bits + " %o1, 0;\n";
  s += body;
  s += "  mul.wide.u32 %rd5, %r3, " + std::to_string(2 * bytes) + ";\n  add.s64 %rd6, %rd2, %rd5;\n";
  s += "  st.global." + reg + " [%rd6], %o0;\n  st.global." + reg + " [%rd6+" + std::to_string(bytes) +
       "], %o1;\n  ret;\n}\n";
  return s;
}

// The patterns (tools/gpu-probe/fma27/gen.py has the same ones, whose SASS shows what ptxas fuses).
std::vector<ContractionForm> Forms() {
  const std::vector<std::pair<std::string, std::string>> patterns = {
      {"add_mul_first", "mul.T R10, R1, R2;\nadd.T O0, R10, R3;\n"},
      {"add_mul_second", "mul.T R10, R1, R2;\nadd.T O0, R3, R10;\n"},
      {"sub_mul_first", "mul.T R10, R1, R2;\nsub.T O0, R10, R3;\n"},
      {"sub_mul_second", "mul.T R10, R1, R2;\nsub.T O0, R3, R10;\n"},
      {"mul_also_stored", "mul.T R10, R1, R2;\nadd.T O0, R10, R3;\nmov.bB O1, R10;\n"},
      {"mul_two_adds", "mul.T R10, R1, R2;\nadd.T O0, R10, R3;\nadd.T O1, R10, R4;\n"},
      {"mul_rn", "mul.rn.T R10, R1, R2;\nadd.T O0, R10, R3;\n"},
      {"add_rn", "mul.T R10, R1, R2;\nadd.rn.T O0, R10, R3;\n"},
      {"both_muls", "mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nadd.T O0, R10, R12;\n"},
      {"both_muls_second_first", "mul.T R12, R3, R4;\nmul.T R10, R1, R2;\nadd.T O0, R10, R12;\n"},
      {"both_muls_sub", "mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nsub.T O0, R10, R12;\n"},
      {"chain", "mul.T R10, R1, R2;\nmul.T R12, R3, R4;\nadd.T R11, R10, R12;\nadd.T O0, R11, R1;\n"},
      {"other_block", "mul.T R10, R1, R2;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra L1;\nadd.T O0, R10, R3;\nL1:\n"},
      {"predicated_add", "mul.T R10, R1, R2;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 add.T O0, R10, R3;\n"},
      {"loop",
       "mul.T R10, R1, R2;\nmov.bB O0, R3;\nmov.u32 %r2, 0;\nLOOP:\nadd.T O0, O0, R10;\nadd.u32 %r2, %r2, 1;\n"
       "setp.lt.u32 %p1, %r2, %r1;\n@%p1 bra LOOP;\n"},
      {"mul_then_mul_add", "mul.T R10, R1, R2;\nmul.T R12, R10, R3;\nadd.T O0, R12, R4;\n"},
      {"add_then_used_twice", "mul.T R10, R1, R2;\nadd.T R11, R10, R3;\nadd.T O0, R11, R11;\n"},
      {"mul_add_same_operand", "mul.T R10, R1, R2;\nadd.T O0, R10, R10;\n"},
      {"mul_redefined_input", "mul.T R10, R1, R2;\nmov.bB R1, R4;\nadd.T O0, R10, R1;\n"},
      {"add_sat", "mul.T R10, R1, R2;\nadd.sat.T O0, R10, R3;\n"},
      {"ftz_both", "mul.ftz.T R10, R1, R2;\nadd.ftz.T O0, R10, R3;\n"},
      {"ftz_mul_only", "mul.ftz.T R10, R1, R2;\nadd.T O0, R10, R3;\n"},
      {"ftz_add_only", "mul.T R10, R1, R2;\nadd.ftz.T O0, R10, R3;\n"},
      {"neg_between", "mul.T R10, R1, R2;\nneg.T R12, R10;\nadd.T O0, R12, R3;\n"},
      {"neg_between_sub", "mul.T R10, R1, R2;\nneg.T R12, R10;\nsub.T O0, R3, R12;\n"},
      {"mul_used_by_setp",
       "mul.T R10, R1, R2;\nadd.T O0, R10, R3;\nsetp.gt.T %p1, R10, R4;\nselp.bB O1, R3, R4, %p1;\n"},
  };
  std::vector<ContractionForm> v;
  for (const char* type : {"f32", "f64", "f16"})
    for (const auto& [name, body] : patterns) {
      const std::string t = type;
      if (t == "f64" && (name.find("sat") != std::string::npos || name.find("ftz") != std::string::npos)) continue;
      if (t == "f16" && (name.find("neg_between") == 0 || name == "mul_used_by_setp")) continue;
      v.push_back({name + "_" + t, t, body});
    }
  return v;
}

// Inputs: thread 0 and 1 the products that round to 1 and cancel the addend -1 (or the addend +1 with a negated
// product), the others seeded random values where the addend is close to minus the product.
std::vector<uint8_t> Inputs(const ContractionForm& f) {
  const unsigned bytes = Bytes(f.type);
  std::vector<uint8_t> in(kThreads * 4 * bytes);
  uint64_t state = conf::Fnv(f.name.data(), f.name.size());
  auto rnd = [&] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (unsigned t = 0; t < kThreads; ++t) {
    double v[4];
    if (t < 2) {
      const double eps = f.type == "f64" ? 0x1p-27 : f.type == "f32" ? 0x1p-13 : 0x1p-6;
      v[0] = 1 + eps, v[1] = 1 - eps, v[2] = t == 0 ? -1.0 : 1.0, v[3] = -v[2];
    } else {
      const int range = f.type == "f16" ? 6 : 20;
      for (double& x : v)
        x = std::ldexp(1.0 + double(rnd() % 4096) / 4096.0, int(rnd() % (2 * range)) - range) * ((rnd() & 1) ? -1 : 1);
      v[2] = -(v[0] * v[1]) * (1 + std::ldexp(double(int(rnd() % 64) - 32), f.type == "f64" ? -50 : -20));
      v[3] = -(v[2] * v[0]) * (1 + std::ldexp(double(int(rnd() % 64) - 32), f.type == "f64" ? -50 : -20));
    }
    for (unsigned i = 0; i < 4; ++i) {
      uint8_t* p = &in[(t * 4 + i) * bytes];
      if (f.type == "f64") {
        std::memcpy(p, &v[i], 8);
      } else if (f.type == "f32") {
        const float x = float(v[i]);
        std::memcpy(p, &x, 4);
      } else {
        const uint16_t h = std::bit_cast<uint16_t>(static_cast<_Float16>(v[i]));
        std::memcpy(p, &h, 2);
      }
    }
  }
  return in;
}

void RunForm(const ContractionForm& f) {
  const std::string ptx = KernelFor(f);
  const std::vector<uint8_t> in = Inputs(f);
  const unsigned bytes = Bytes(f.type);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CUmodule mod = nullptr;
  ASSERT_EQ(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals), CUDA_SUCCESS) << log << "\n" << ptx;
  CUfunction fn = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&fn, mod, "k"), CUDA_SUCCESS);
  conf::DeviceBuffer din(in.size()), dout(kThreads * 2 * bytes);
  ASSERT_EQ(cuMemcpyHtoD(din.ptr(), in.data(), in.size()), CUDA_SUCCESS);
  CUdeviceptr pin = din.ptr(), pout = dout.ptr();
  unsigned n = 5;
  void* params[] = {&pin, &pout, &n};
  ASSERT_EQ(conf::Launch1D(fn, 1, kThreads, params), CUDA_SUCCESS);
  std::vector<uint8_t> out(kThreads * 2 * bytes);
  ASSERT_EQ(cuMemcpyDtoH(out.data(), dout.ptr(), out.size()), CUDA_SUCCESS);
  cuModuleUnload(mod);
  std::vector<uint64_t> got(kThreads * 2, 0);
  for (size_t i = 0; i < got.size(); ++i) std::memcpy(&got[i], &out[i * bytes], bytes);
  uint64_t hash = conf::Fnv(ptx.data(), ptx.size());
  hash = conf::Fnv(in.data(), in.size(), hash);
  const std::string name = "contraction_" + f.name;
  if (conf::GoldenRecord(name, hash, got)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor(name, hash);
  if (!golden) return;
  ASSERT_EQ(golden->outputs.size(), got.size());
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != golden->outputs[i] && shown++ < 8)
      ADD_FAILURE() << std::hex << "thread " << std::dec << i / 2 << " output " << i % 2 << std::hex << ": got 0x"
                    << got[i] << ", the GPU gave 0x" << golden->outputs[i];
}

// The JIT's optimisation level: at 0 the driver does not fuse (measured on an H100:
// tools/gpu-probe/results/fma27/olevel.txt), at 1 to 4 it does; loading without the option is level 4.
class ptx_contraction_Jit : public conf::ContextTest {};
TEST_F(ptx_contraction_Jit, OptimizationLevel) {
  const ContractionForm f{"add_mul_first_f32", "f32", "mul.T R10, R1, R2;\nadd.T O0, R10, R3;\n"};
  const std::string ptx = KernelFor(f);
  const std::vector<uint8_t> in = Inputs(f);  // thread 0: (1 + 2^-13) * (1 - 2^-13) - 1
  for (int level = -1; level <= 4; ++level) {
    CUjit_option opt[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void* val[] = {reinterpret_cast<void*>(uintptr_t(level < 0 ? 0 : level))};
    CUmodule mod = nullptr;
    ASSERT_EQ(level < 0 ? cuModuleLoadData(&mod, ptx.c_str()) : cuModuleLoadDataEx(&mod, ptx.c_str(), 1, opt, val),
              CUDA_SUCCESS);
    CUfunction fn = nullptr;
    ASSERT_EQ(cuModuleGetFunction(&fn, mod, "k"), CUDA_SUCCESS);
    conf::DeviceBuffer din(in.size()), dout(kThreads * 8);
    ASSERT_EQ(cuMemcpyHtoD(din.ptr(), in.data(), in.size()), CUDA_SUCCESS);
    CUdeviceptr pin = din.ptr(), pout = dout.ptr();
    unsigned n = 5;
    void* params[] = {&pin, &pout, &n};
    ASSERT_EQ(conf::Launch1D(fn, 1, kThreads, params), CUDA_SUCCESS);
    float got = 1;
    ASSERT_EQ(cuMemcpyDtoH(&got, dout.ptr(), 4), CUDA_SUCCESS);
    cuModuleUnload(mod);
    EXPECT_EQ(got, level == 0 ? 0.0f : -0x1p-26f) << "optimization level " << level << " (-1: the option not given)";
  }
}

std::string FormName(const testing::TestParamInfo<ContractionForm>& i) { return i.param.name; }

class ptx_contraction : public conf::ContextTest, public testing::WithParamInterface<ContractionForm> {};
TEST_P(ptx_contraction, Golden) { RunForm(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_contraction, testing::ValuesIn(Forms()), FormName);

}  // namespace
