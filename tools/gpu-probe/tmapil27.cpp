// Issue 18 (tensor copies through interleaved tensor maps): what a cp.async.bulk.tensor tile load through a map
// encoded with CU_TENSOR_MAP_INTERLEAVE_16B/32B moves into shared memory, and how many bytes it completes on the
// mbarrier, for forms that vary one parameter at a time (box, coordinates, element strides, dimensions, global
// strides that are not twice the interleave, rank 3..5, element types). Each form runs in a child process (a copy the
// unit rejects faults the context). The tensor is a 1 MiB buffer whose 32-bit word i holds 0x10000 + i, the tensor
// starting at byte 4096, so each copied word names the tensor byte offset it came from.
// Output, per form:
//   form <name> rank <r> type <t> il <i> sw <s> dims <..> strides <..> box <..> es <..> coords <..>
//   boxbytes <driver's byte count> rc <launch result> done <0/1>
//   tx <the expect_tx values in 0..8192 (step 16) whose phase completed, as ranges>
//   data <shared memory up to its last byte that is not 0xee, per 16-byte chunk: tensor byte offset of the first
//        word when the chunk is 4 consecutive words ("o+"), else its words (f=fill 0xeeeeeeee, raw hex otherwise)>
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kDataBytes = 1 << 20;
constexpr uint64_t kTensorOffset = 4096;
constexpr unsigned kSharedBytes = 16384;

struct Form {
  std::string name;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  unsigned rank = 3;
  cuuint64_t dims[5] = {8, 10, 6, 1, 1};
  cuuint64_t strides[4] = {48, 496, 3008, 9024};  // bytes; not multiples of twice the interleave
  cuuint32_t box[5] = {8, 4, 3, 1, 1};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_16B;
  CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  int coords[5] = {};
};

std::string kernelPtx(unsigned rank) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout, .param .u32 pexpect, .param .u32 pc0, .param .u32 pc1,"
      " .param .u32 pc2, .param .u32 pc3, .param .u32 pc4)\n{\n"
      "  .reg .b32 %r<40>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[" +
      std::to_string(kSharedBytes) +
      "];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u32 %r30, [pexpect];\n"
      "  ld.param.u32 %r10, [pc0];\n  ld.param.u32 %r11, [pc1];\n  ld.param.u32 %r12, [pc2];\n"
      "  ld.param.u32 %r13, [pc3];\n  ld.param.u32 %r14, [pc4];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n"
      "  st.shared.u32 [%r21], -286331154;\n  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, " +
      std::to_string(kSharedBytes) +
      ";\n  @%p2 bra FILL;\n"
      "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n"
      "  mov.u32 %r6, sbar;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n  fence.proxy.async.shared::cta;\n"
      "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], %r30;\n";
  std::string list = "{";
  for (unsigned i = 0; i < rank; ++i) list += (i ? ", %r" : "%r") + std::to_string(10 + i);
  list += "}";
  s += "  cp.async.bulk.tensor." + std::to_string(rank) +
       "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r7], [%rd1, " + list +
       "], [%r6];\n"
       "  mov.u32 %r8, 0;\nWAIT:\n  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n  @%p2 bra OK;\n"
       "  nanosleep.u32 200;\n  add.u32 %r8, %r8, 1;\n  setp.lt.u32 %p3, %r8, 3000;\n  @%p3 bra WAIT;\nOK:\n"
       "  st.global.u32 [%rd2], %r8;\n"
       "  mov.u32 %r20, 0;\nDUMP:\n  add.u32 %r21, %r7, %r20;\n  ld.shared.b32 %r22, [%r21];\n"
       "  cvt.u64.u32 %rd10, %r20;\n  add.s64 %rd11, %rd2, %rd10;\n  st.global.b32 [%rd11+16], %r22;\n"
       "  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, " +
       std::to_string(kSharedBytes) + ";\n  @%p2 bra DUMP;\nDONE:\n  ret;\n}\n";
  return s;
}

std::string list(const auto* v, unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void runForm(const Form& f) {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return;
  CUdeviceptr data, out, map;
  cuMemAlloc(&data, kDataBytes);
  std::vector<uint32_t> words(kDataBytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(0x10000 + i);
  cuMemcpyHtoD(data, words.data(), kDataBytes);
  CUtensorMap m;
  std::memset(&m, 0, sizeof m);
  CUresult rc = cuTensorMapEncodeTiled(&m, f.type, f.rank, reinterpret_cast<void*>(data + kTensorOffset), f.dims,
                                       f.strides, f.box, f.es, f.il, f.sw, CU_TENSOR_MAP_L2_PROMOTION_NONE, f.oob);
  std::printf("form %s rank %u type %d il %d sw %d dims %s strides %s box %s es %s coords %s\n", f.name.c_str(), f.rank,
              int(f.type), int(f.il), int(f.sw), list(f.dims, f.rank).c_str(), list(f.strides, f.rank - 1).c_str(),
              list(f.box, f.rank).c_str(), list(f.es, f.rank).c_str(), list(f.coords, f.rank).c_str());
  if (rc) {
    std::printf("encode rc %d\n", int(rc));
    return;
  }
  uint32_t boxBytes;
  std::memcpy(&boxBytes, reinterpret_cast<const uint8_t*>(&m) + 64, 4);
  const std::string ptx = kernelPtx(f.rank);
  CUmodule mod;
  CUfunction fn;
  if (cuModuleLoadData(&mod, ptx.c_str()) || cuModuleGetFunction(&fn, mod, "k")) {
    std::printf("module load failed\n");
    return;
  }
  cuMemAlloc(&map, 128);
  cuMemcpyHtoD(map, &m, 128);
  const size_t outBytes = 16 + kSharedBytes;
  cuMemAlloc(&out, outBytes);
  auto launch = [&](uint32_t expect, std::vector<uint8_t>* dump) -> CUresult {
    cuMemsetD8(out, 0xcc, outBytes);
    uint32_t c[5];
    for (int i = 0; i < 5; ++i) c[i] = uint32_t(f.coords[i]);
    void* params[] = {&map, &out, &expect, &c[0], &c[1], &c[2], &c[3], &c[4]};
    CUresult r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    if (!r) r = cuCtxSynchronize();
    std::vector<uint8_t> got(outBytes);
    if (!r) r = cuMemcpyDtoH(got.data(), out, outBytes);
    if (dump) *dump = got;
    return r;
  };
  std::vector<uint8_t> got;
  rc = launch(boxBytes, &got);
  uint32_t polls = 0;
  std::memcpy(&polls, got.data(), 4);
  std::printf("boxbytes %u rc %d done %d\n", boxBytes, int(rc), rc == 0 && polls < 3000);
  if (rc) return;
  std::string tx;
  int runStart = -1;
  for (uint32_t e = 0; e <= 8192 + 16; e += 16) {
    std::vector<uint8_t> g;
    bool ok = false;
    if (e <= 8192) {
      CUresult r = launch(e, &g);
      if (r) {
        std::printf("tx-launch %u rc %d\n", e, int(r));
        return;
      }
      uint32_t p;
      std::memcpy(&p, g.data(), 4);
      ok = p < 3000;
    }
    if (ok && runStart < 0) runStart = int(e);
    if (!ok && runStart >= 0) {
      tx += " " + std::to_string(runStart) + (uint32_t(runStart) + 16 == e ? "" : "-" + std::to_string(e - 16));
      runStart = -1;
    }
  }
  std::printf("tx%s\n", tx.c_str());
  size_t used = kSharedBytes;
  while (used > 0 && got[16 + used - 1] == 0xee) --used;
  std::string d;
  for (size_t i = 0; i < used; i += 16) {
    uint32_t w[4];
    std::memcpy(w, &got[16 + i], 16);
    bool run = true;
    for (int k = 0; k < 4; ++k)
      if (w[k] < 0x10000 || w[k] - w[0] != uint32_t(k)) run = false;
    char b[64];
    if (run) {
      std::snprintf(b, sizeof b, " %lld+", (long long)(int64_t(w[0] - 0x10000) * 4 - int64_t(kTensorOffset)));
      d += b;
      continue;
    }
    d += " [";
    for (int k = 0; k < 4; ++k) {
      if (w[k] == 0xeeeeeeeeu)
        std::snprintf(b, sizeof b, "%sf", k ? " " : "");
      else if (w[k] >= 0x10000 && w[k] < 0x10000 + kDataBytes / 4)
        std::snprintf(b, sizeof b, "%s@%lld", k ? " " : "", (long long)(int64_t(w[k] - 0x10000) * 4 - 4096));
      else
        std::snprintf(b, sizeof b, "%s%x", k ? " " : "", w[k]);
      d += b;
    }
    d += "]";
  }
  std::printf("data%s\n", d.c_str());
}

std::vector<Form> forms() {
  std::vector<Form> v;
  auto add = [&](Form f) { v.push_back(f); };
  Form base;
  base.name = "base";
  add(base);
  // the same as the conformance case's padded pitch (32, 320)
  {
    Form f = base;
    f.name = "pitch32";
    f.strides[0] = 32, f.strides[1] = 320;
    add(f);
  }
  for (unsigned b1 : {1u, 2u, 3u, 8u}) {
    Form f = base;
    f.name = "box1_" + std::to_string(b1);
    f.box[1] = b1;
    add(f);
  }
  for (unsigned b2 : {1u, 2u, 5u}) {
    Form f = base;
    f.name = "box2_" + std::to_string(b2);
    f.box[2] = b2;
    add(f);
  }
  for (unsigned b0 : {4u, 2u, 16u}) {
    Form f = base;
    f.name = "box0_" + std::to_string(b0);
    f.box[0] = b0;
    add(f);
  }
  for (int c0 : {1, 2, 7, 8, -1}) {
    Form f = base;
    f.name = "c0_" + std::to_string(c0);
    f.coords[0] = c0;
    add(f);
  }
  for (int c1 : {3, 8, 9, 10, -1, -3}) {
    Form f = base;
    f.name = "c1_" + std::to_string(c1);
    f.coords[1] = c1;
    add(f);
  }
  for (int c2 : {4, 5, -1, -2}) {
    Form f = base;
    f.name = "c2_" + std::to_string(c2);
    f.coords[2] = c2;
    add(f);
  }
  for (unsigned d0 : {6u, 4u, 16u, 1u}) {
    Form f = base;
    f.name = "d0_" + std::to_string(d0);
    f.dims[0] = d0;
    add(f);
  }
  for (unsigned d1 : {2u, 1u}) {
    Form f = base;
    f.name = "d1_" + std::to_string(d1);
    f.dims[1] = d1;
    add(f);
  }
  {
    Form f = base;
    f.name = "es0_2";
    f.es[0] = 2;
    add(f);
    f.name = "es0_3";
    f.es[0] = 3;
    add(f);
    f = base;
    f.name = "es1_2";
    f.es[1] = 2;
    add(f);
    f = base;
    f.name = "es2_2";
    f.es[2] = 2;
    add(f);
  }
  for (auto sw : {CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B}) {
    Form f = base;
    f.name = "sw" + std::to_string(int(sw));
    f.sw = sw;
    add(f);
  }
  {
    Form f = base;
    f.name = "u8";
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    f.dims[0] = 16, f.box[0] = 16;
    add(f);
    f.name = "f32";
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    f.dims[0] = 4, f.box[0] = 4;
    add(f);
    f.name = "f32_d0_8";
    f.dims[0] = 8;
    add(f);
  }
  {  // 32-byte interleave: strides multiples of 32 but not 64
    Form f = base;
    f.name = "il32";
    f.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    f.dims[0] = 16, f.box[0] = 16;
    f.strides[0] = 96, f.strides[1] = 992, f.strides[2] = 6016, f.strides[3] = 18048;
    add(f);
    f.name = "il32_box0_8";
    f.box[0] = 8;
    add(f);
    f.name = "il32_d0_8";
    f.box[0] = 16, f.dims[0] = 8;
    add(f);
    f.name = "il32_sw32";
    f.dims[0] = 16, f.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    add(f);
    f.name = "il32_f32";
    f.sw = CU_TENSOR_MAP_SWIZZLE_NONE, f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f.dims[0] = 8, f.box[0] = 8;
    add(f);
    f.name = "il32_f32_c1_m1";
    f.coords[1] = -1;
    add(f);
  }
  {  // rank 4 and 5
    Form f = base;
    f.name = "rank4";
    f.rank = 4, f.dims[3] = 3, f.box[3] = 2;
    add(f);
    f.name = "rank4_c";
    f.coords[1] = 2, f.coords[2] = 1, f.coords[3] = 1;
    add(f);
    f.name = "rank4_box2_1";
    f.coords[1] = f.coords[2] = f.coords[3] = 0;
    f.box[2] = 1;
    add(f);
    f.name = "rank4_box1_1";
    f.box[2] = 3, f.box[1] = 1;
    add(f);
    f.name = "rank4_c2_7";
    f.box[1] = 4, f.coords[2] = 7;
    add(f);
    f = base;
    f.name = "rank5";
    f.rank = 5, f.dims[3] = 3, f.dims[4] = 2, f.box[3] = 2, f.box[4] = 2;
    add(f);
    f.name = "rank5_c";
    f.coords[1] = 1, f.coords[2] = 2, f.coords[3] = 1, f.coords[4] = 1;
    add(f);
  }
  return v;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  for (const Form& f : forms()) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      runForm(f);
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) std::printf("child of %s died (status %d)\n", f.name.c_str(), status);
  }
  return 0;
}
