// Issue 18 (im2col tensor copies through interleaved tensor maps): which cuTensorMapEncodeIm2col calls with
// CU_TENSOR_MAP_INTERLEAVE_16B/32B the driver accepts (a host-only matrix), what a cp.async.bulk.tensor .im2col load
// through such a map moves into shared memory and completes on its mbarrier, for forms that vary one parameter at a
// time (coordinates, im2col offsets, corners, channels, pixels, element strides, dimensions, swizzles, element types,
// ranks 3..5, both interleaves), and what stores and reductions through interleaved maps (im2col_no_offs and tile)
// do. Each form runs in a child process (a copy the unit rejects faults the context). The tensor is a 1 MiB buffer
// whose 32-bit word i holds 0x10000 + i, the tensor starting at byte 4096, so each copied word names the tensor
// byte offset it came from. Global strides are not multiples of twice the interleave, so that strides of different
// dimensions cannot be mistaken for one another.
// Usage: im2colil28 [matrix|forms|extra] (default: the matrix, then the forms; extra: a second round of forms).
// Output:
//   enc <type> il <i> rank <r> ch <c> sw <s> <rc of cuTensorMapEncodeIm2col, as a hex digit per variation> ...
//   form <name> <op> rank <r> type <t> il <i> sw <s> dims <..> strides <..> lo <..> hi <..> ch <c> px <p> box <..>
//        es <..> coords <..> offs <..>
//   encode rc <rc> | map <the 16 words after the address, hex> boxbytes <n>
//   load: rc <launch result> done <0/1> tx <expect_tx values 0..4096 (step 16) whose phase completed, as ranges>
//         data <shared memory up to its last byte that is not 0xee, per 16-byte chunk: tensor byte offset of the
//               first word when the chunk is 4 consecutive words ("o+"), else its words (f=fill 0xeeeeeeee)>
//   store/reduce: rc <launch result> changed <tensor byte offset:shared byte offset (shared word i holds
//                 0xa0000000 + i; a reduction's delta) xN for N consecutive words>
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

enum class Op { load, store, reduce };

struct Form {
  std::string name;
  Op op = Op::load;
  bool im2col = true;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  unsigned rank = 4;
  cuuint64_t dims[5] = {8, 6, 5, 3, 1};
  cuuint64_t strides[4] = {48, 496, 3008, 9024};
  int lo[3] = {}, hi[3] = {};
  unsigned ch = 8, px = 16;
  cuuint32_t box[5] = {8, 4, 3, 1, 1};  // tile forms
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_16B;
  CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  int coords[5] = {};
  int offs[3] = {};
};

std::string kernelPtx(const Form& f) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout, .param .u32 pexpect, .param .u32 pc0, .param .u32 pc1,"
      " .param .u32 pc2, .param .u32 pc3, .param .u32 pc4, .param .u32 po0, .param .u32 po1, .param .u32 po2)\n{\n"
      "  .reg .b16 %rs<8>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[" +
      std::to_string(kSharedBytes) +
      "];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u32 %r30, [pexpect];\n"
      "  ld.param.u32 %r10, [pc0];\n  ld.param.u32 %r11, [pc1];\n  ld.param.u32 %r12, [pc2];\n"
      "  ld.param.u32 %r13, [pc3];\n  ld.param.u32 %r14, [pc4];\n"
      "  ld.param.u16 %rs1, [po0];\n  ld.param.u16 %rs2, [po1];\n  ld.param.u16 %rs3, [po2];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n";
  // loads: 0xee bytes; stores: word i holds 0xa0000000 + i
  s += f.op == Op::load
           ? "  st.shared.u32 [%r21], -286331154;\n"
           : "  shr.u32 %r22, %r20, 2;\n  or.b32 %r22, %r22, -1610612736;\n  st.shared.u32 [%r21], %r22;\n";
  s += "  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, " + std::to_string(kSharedBytes) +
       ";\n  @%p2 bra FILL;\n"
       "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n  fence.proxy.async.shared::cta;\n";
  std::string list = "{";
  for (unsigned i = 0; i < f.rank; ++i) list += (i ? ", %r" : "%r") + std::to_string(10 + i);
  list += "}";
  const std::string r = std::to_string(f.rank);
  if (f.op != Op::load) {
    const std::string mode = f.im2col ? "im2col_no_offs" : "tile";
    if (f.op == Op::store)
      s +=
          "  cp.async.bulk.tensor." + r + "d.global.shared::cta." + mode + ".bulk_group [%rd1, " + list + "], [%r7];\n";
    else
      s += "  cp.reduce.async.bulk.tensor." + r + "d.global.shared::cta.add." + mode + ".bulk_group [%rd1, " + list +
           "], [%r7];\n";
    s += "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\nDONE:\n  ret;\n}\n";
    return s;
  }
  std::string offs;
  if (f.im2col) {
    offs = ", {";
    for (unsigned i = 0; i + 2 < f.rank; ++i) offs += (i ? ", %rs" : "%rs") + std::to_string(1 + i);
    offs += "}";
  }
  s += "  mov.u32 %r6, sbar;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n  fence.proxy.async.shared::cta;\n"
       "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], %r30;\n"
       "  cp.async.bulk.tensor." +
       r + "d.shared::cluster.global." + (f.im2col ? "im2col" : "tile") +
       ".mbarrier::complete_tx::bytes [%r7], [%rd1, " + list + "], [%r6]" + offs +
       ";\n"
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

CUresult encode(const Form& f, CUtensorMap& m, CUdeviceptr data) {
  std::memset(&m, 0, sizeof m);
  void* address = reinterpret_cast<void*>(data + kTensorOffset);
  if (f.im2col)
    return cuTensorMapEncodeIm2col(&m, f.type, f.rank, address, f.dims, f.strides, f.lo, f.hi, f.ch, f.px, f.es, f.il,
                                   f.sw, CU_TENSOR_MAP_L2_PROMOTION_NONE, f.oob);
  return cuTensorMapEncodeTiled(&m, f.type, f.rank, address, f.dims, f.strides, f.box, f.es, f.il, f.sw,
                                CU_TENSOR_MAP_L2_PROMOTION_NONE, f.oob);
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
  std::printf(
      "form %s %s rank %u type %d il %d sw %d dims %s strides %s lo %s hi %s ch %u px %u box %s es %s "
      "coords %s offs %s\n",
      f.name.c_str(),
      f.op == Op::load    ? "load"
      : f.op == Op::store ? "store"
                          : "reduce",
      f.rank, int(f.type), int(f.il), int(f.sw), list(f.dims, f.rank).c_str(), list(f.strides, f.rank - 1).c_str(),
      list(f.lo, f.rank - 2).c_str(), list(f.hi, f.rank - 2).c_str(), f.ch, f.px, list(f.box, f.rank).c_str(),
      list(f.es, f.rank).c_str(), list(f.coords, f.rank).c_str(), list(f.offs, f.rank - 2).c_str());
  CUtensorMap m;
  CUresult rc = encode(f, m, data);
  if (rc) {
    std::printf("encode rc %d\n", int(rc));
    return;
  }
  uint32_t boxBytes;
  std::memcpy(&boxBytes, reinterpret_cast<const uint8_t*>(&m) + 64, 4);
  std::string mapWords;
  for (int i = 1; i < 16; ++i) {
    uint64_t w;
    std::memcpy(&w, reinterpret_cast<const uint8_t*>(&m) + 8 * i, 8);
    char b[24];
    std::snprintf(b, sizeof b, "%s%llx", i > 1 ? "," : "", (unsigned long long)w);
    mapWords += b;
  }
  std::printf("map %s boxbytes %u\n", mapWords.c_str(), boxBytes);
  const std::string ptx = kernelPtx(f);
  CUmodule mod;
  CUfunction fn;
  char log[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  if (cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals) || cuModuleGetFunction(&fn, mod, "k")) {
    std::printf("module load failed: %s\n", log);
    return;
  }
  cuMemAlloc(&map, 128);
  cuMemcpyHtoD(map, &m, 128);
  const size_t outBytes = 16 + kSharedBytes;
  cuMemAlloc(&out, outBytes);
  auto launch = [&](uint32_t expect, std::vector<uint8_t>* dump) -> CUresult {
    cuMemsetD8(out, 0xcc, outBytes);
    uint32_t c[5], o[3];
    for (int i = 0; i < 5; ++i) c[i] = uint32_t(f.coords[i]);
    for (int i = 0; i < 3; ++i) o[i] = uint32_t(f.offs[i]);
    void* params[] = {&map, &out, &expect, &c[0], &c[1], &c[2], &c[3], &c[4], &o[0], &o[1], &o[2]};
    CUresult r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    if (!r) r = cuCtxSynchronize();
    std::vector<uint8_t> got(outBytes);
    if (!r) r = cuMemcpyDtoH(got.data(), out, outBytes);
    if (dump) *dump = got;
    return r;
  };
  if (f.op != Op::load) {
    rc = launch(0, nullptr);
    std::vector<uint32_t> after(words.size());
    if (!rc) rc = cuMemcpyDtoH(after.data(), data, kDataBytes);
    std::printf("rc %d\n", int(rc));
    if (rc) return;
    std::string d;
    long long runT = -1, runS = 0, runN = 0;
    auto flush = [&] {
      if (runN) {
        char b[64];
        std::snprintf(b, sizeof b, " %lld:%lld", runT, runS);
        d += b;
        if (runN > 1) d += "x" + std::to_string(runN);
      }
      runN = 0;
    };
    for (size_t i = 0; i < words.size(); ++i) {
      if (after[i] == words[i]) continue;
      const uint32_t v = after[i] - (f.op == Op::reduce ? words[i] : 0u) - 0xa0000000u;
      const long long t = (long long)i * 4 - (long long)kTensorOffset, s = (long long)v * 4;
      if (runN && t == runT + 4 * runN && s == runS + 4 * runN) {
        ++runN;
        continue;
      }
      flush();
      runT = t, runS = s, runN = 1;
    }
    flush();
    std::printf("changed%s\n", d.c_str());
    return;
  }
  std::vector<uint8_t> got;
  rc = launch(boxBytes, &got);
  uint32_t polls = 0;
  std::memcpy(&polls, got.data(), 4);
  std::printf("rc %d done %d", int(rc), rc == 0 && polls < 3000);
  if (rc) {
    std::printf("\n");
    return;
  }
  std::string tx;
  int runStart = -1;
  for (uint32_t e = 0; e <= 4096 + 16; e += 16) {
    std::vector<uint8_t> g;
    bool ok = false;
    if (e <= 4096) {
      CUresult r = launch(e, &g);
      if (r) {
        std::printf(" tx-launch %u rc %d\n", e, int(r));
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
  std::printf(" tx%s\n", tx.c_str());
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

// cuTensorMapEncodeIm2col's result for a grid of parameters (host only): per element type, interleave, rank,
// channels and swizzle, one hex digit per pixels-per-column value in {1, 16, 256, 1024}, then for strides
// not multiples of 32 and elementStrides[0] = 2, then lower corner -1 / upper corner 0 and dims[0] = 1 and 3.
void encodeMatrix() {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return;
  CUdeviceptr data;
  cuMemAlloc(&data, kDataBytes);
  const CUtensorMapDataType types[] = {CU_TENSOR_MAP_DATA_TYPE_UINT8, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                       CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT64};
  for (auto type : types)
    for (auto il : {CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B})
      for (unsigned rank : {3u, 4u, 5u})
        for (unsigned ch : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u, 256u})
          for (auto sw : {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                          CU_TENSOR_MAP_SWIZZLE_128B}) {
            Form f;
            f.type = type, f.il = il, f.rank = rank, f.ch = ch, f.sw = sw;
            f.dims[0] = 64, f.dims[1] = 6, f.dims[2] = 5, f.dims[3] = 3, f.dims[4] = 2;
            f.strides[0] = 1024, f.strides[1] = 8192, f.strides[2] = 65536, f.strides[3] = 262144;
            std::string r;
            CUtensorMap m;
            for (unsigned px : {1u, 16u, 256u, 1024u}) {
              f.px = px;
              r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(f, m, data)))];
            }
            f.px = 16;
            r += ' ';
            Form g = f;
            g.strides[0] = 1040;  // a multiple of 16, not 32
            r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(g, m, data)))];
            g = f;
            g.es[0] = 2;
            r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(g, m, data)))];
            g = f;
            g.lo[0] = -1;
            r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(g, m, data)))];
            g = f;
            g.dims[0] = 1;
            r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(g, m, data)))];
            g = f;
            g.dims[0] = 3;
            r += "0123456789abcdefghijklmnopqrstuvwxyz"[std::min(35, int(encode(g, m, data)))];
            uint32_t bb = 0;
            if (!encode(f, m, data)) std::memcpy(&bb, reinterpret_cast<const uint8_t*>(&m) + 64, 4);
            std::printf("enc %d il %d rank %u ch %u sw %d %s bb %u\n", int(type), int(il), rank, ch, int(sw), r.c_str(),
                        bb);
          }
}

std::vector<Form> forms() {
  std::vector<Form> v;
  auto add = [&](const Form& f) { v.push_back(f); };
  Form base;
  base.name = "base";
  add(base);
  {  // the conformance case's form, dense pitch
    Form f = base;
    f.name = "conf";
    f.strides[0] = 32, f.strides[1] = 192, f.strides[2] = 960;
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = f.coords[2] = -1;
    add(f);
    f.name = "conf_h0";
    f.coords[2] = 0;
    add(f);
    f.name = "pad_w_m1_h0";
    f.strides[0] = 48, f.strides[1] = 496, f.strides[2] = 3008;
    add(f);
  }
  for (int c : {1, 3, 5}) {
    Form f = base;
    f.name = "w" + std::to_string(c);
    f.coords[1] = c;
    add(f);
  }
  for (int c : {1, 4}) {
    Form f = base;
    f.name = "h" + std::to_string(c);
    f.coords[2] = c;
    add(f);
  }
  for (int c : {1, 2}) {
    Form f = base;
    f.name = "n" + std::to_string(c);
    f.coords[3] = c;
    add(f);
  }
  for (int c : {1, 2, 7, 8, -1}) {
    Form f = base;
    f.name = "c0_" + std::to_string(c);
    f.coords[0] = c;
    add(f);
  }
  for (unsigned ch : {1u, 2u, 4u, 16u, 32u}) {
    Form f = base;
    f.name = "ch" + std::to_string(ch);
    f.ch = ch;
    add(f);
  }
  for (unsigned px : {1u, 4u, 32u, 96u}) {
    Form f = base;
    f.name = "px" + std::to_string(px);
    f.px = px;
    add(f);
  }
  for (unsigned d0 : {4u, 16u, 1u}) {
    Form f = base;
    f.name = "d0_" + std::to_string(d0);
    f.dims[0] = d0;
    add(f);
  }
  {
    Form f = base;
    f.name = "d1_2";
    f.dims[1] = 2;
    add(f);
    f = base;
    f.name = "d2_2";
    f.dims[2] = 2;
    add(f);
  }
  {
    Form f = base;
    f.name = "offs_1_0";
    f.offs[0] = 1;
    add(f);
    f.name = "offs_0_1";
    f.offs[0] = 0, f.offs[1] = 1;
    add(f);
    f.name = "offs_2_2";
    f.offs[0] = 2, f.offs[1] = 2;
    add(f);
  }
  for (unsigned d = 0; d < 4; ++d) {
    Form f = base;
    f.name = "es" + std::to_string(d) + "_2";
    f.es[d] = 2;
    add(f);
  }
  {
    Form f = base;
    f.name = "corners";
    f.lo[0] = -2, f.lo[1] = 1, f.hi[0] = 1, f.hi[1] = -2;
    f.coords[1] = -2, f.coords[2] = 1;
    f.px = 32;
    add(f);
    f.name = "corners_offs";
    f.offs[0] = 1, f.offs[1] = 2;
    add(f);
    f = base;
    f.name = "start_outside_box";
    f.lo[0] = 1;
    add(f);
  }
  for (auto sw : {CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B}) {
    Form f = base;
    f.name = "sw" + std::to_string(int(sw));
    f.sw = sw;
    add(f);
  }
  {
    Form f = base;
    f.name = "u8";
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    f.dims[0] = 16, f.ch = 16;
    add(f);
    f.name = "u8_ch8";
    f.ch = 8;
    add(f);
    f = base;
    f.name = "u16";
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT16;
    add(f);
    f = base;
    f.name = "f32";
    f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    f.dims[0] = 4, f.ch = 4;
    add(f);
    f.name = "f32_ch8";
    f.dims[0] = 8, f.ch = 8;
    add(f);
    f.name = "f32_nan_pad";
    f.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    f.lo[0] = f.lo[1] = -1, f.hi[0] = f.hi[1] = -1;
    f.coords[1] = -1;
    add(f);
  }
  {  // 32-byte interleave: strides multiples of 32, not 64
    Form f = base;
    f.name = "il32";
    f.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    f.dims[0] = 16, f.ch = 16;
    f.strides[0] = 96, f.strides[1] = 992, f.strides[2] = 6016;
    add(f);
    f.name = "il32_ch8";
    f.ch = 8;
    add(f);
    f.name = "il32_w3_h1";
    f.ch = 16, f.coords[1] = 3, f.coords[2] = 1;
    add(f);
    f.name = "il32_sw32";
    f.coords[1] = f.coords[2] = 0;
    f.sw = CU_TENSOR_MAP_SWIZZLE_32B;
    add(f);
    f.name = "il32_sw64";
    f.sw = CU_TENSOR_MAP_SWIZZLE_64B;
    add(f);
    f.name = "il32_f32";
    f.sw = CU_TENSOR_MAP_SWIZZLE_NONE, f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f.dims[0] = 8, f.ch = 8;
    add(f);
  }
  {  // rank 3 (NWC) and 5 (NDHWC)
    Form f = base;
    f.name = "rank3";
    f.rank = 3;
    f.dims[1] = 20, f.dims[2] = 2;
    f.strides[0] = 48, f.strides[1] = 1008;
    f.px = 24;
    add(f);
    f.name = "rank3_corners";
    f.lo[0] = -3, f.hi[0] = 2;
    f.coords[1] = -3;
    f.offs[0] = 1;
    add(f);
    f = base;
    f.name = "rank5";
    f.rank = 5;
    f.dims[1] = 3, f.dims[2] = 3, f.dims[3] = 3, f.dims[4] = 2;
    f.strides[0] = 48, f.strides[1] = 160, f.strides[2] = 496, f.strides[3] = 1504;
    f.px = 32;
    add(f);
    f.name = "rank5_c";
    f.coords[1] = 1, f.coords[2] = 2, f.coords[3] = 1;
    f.offs[0] = 1, f.offs[2] = 1;
    add(f);
  }
  {  // stores and reductions: im2col_no_offs, then tile (the tile probe's base form)
    Form f = base;
    f.name = "store_im2col";
    f.op = Op::store;
    add(f);
    f.name = "reduce_im2col";
    f.op = Op::reduce;
    f.type = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    f.dims[0] = 4, f.ch = 4;
    add(f);
    Form t;
    t.im2col = false;
    t.rank = 3;
    t.dims[0] = 8, t.dims[1] = 10, t.dims[2] = 6;
    t.strides[0] = 48, t.strides[1] = 496;
    t.box[0] = 8, t.box[1] = 4, t.box[2] = 3;
    t.name = "store_tile";
    t.op = Op::store;
    add(t);
    t.name = "store_tile_c";
    t.coords[0] = 2, t.coords[1] = 9, t.coords[2] = 4;
    add(t);
    t.name = "store_tile_es";
    t.coords[0] = t.coords[1] = t.coords[2] = 0;
    t.es[0] = 2, t.es[2] = 2;
    add(t);
    t.name = "store_tile_rank4";
    t.es[0] = t.es[2] = 1;
    t.rank = 4, t.dims[3] = 3, t.box[3] = 2, t.strides[2] = 3008;
    t.coords[3] = 1;
    add(t);
    t.coords[3] = 0;
    t.rank = 3;
    t.name = "reduce_tile_u32";
    t.op = Op::reduce;
    t.type = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    t.dims[0] = 4, t.box[0] = 4;
    add(t);
    t.name = "reduce_tile_u32_il32";
    t.il = CU_TENSOR_MAP_INTERLEAVE_32B;
    t.dims[0] = 8, t.box[0] = 8;
    t.strides[0] = 96, t.strides[1] = 992;
    t.coords[1] = 8;
    add(t);
  }
  return v;
}

// A second round: swizzled stores, the N dimension's traversal stride, an upper corner past dimension 0, and
// whether the 128 KiB box limit of interleaved maps also holds without interleave (encode only).
std::vector<Form> extraForms() {
  std::vector<Form> v;
  Form base;
  base.name = "x_es3_2_px96";
  base.es[3] = 2;
  base.px = 96;
  v.push_back(base);
  Form f;
  f.name = "x_hi0_2_px32";
  f.hi[0] = 2;
  f.coords[0] = 3;
  f.px = 32;
  v.push_back(f);
  f = Form{};
  f.name = "x_store_im2col_sw32";
  f.op = Op::store;
  f.sw = CU_TENSOR_MAP_SWIZZLE_32B;
  f.coords[0] = 2, f.coords[1] = 1, f.coords[2] = 1;
  v.push_back(f);
  Form t;
  t.im2col = false;
  t.rank = 3;
  t.dims[0] = 8, t.dims[1] = 10, t.dims[2] = 6;
  t.strides[0] = 48, t.strides[1] = 496;
  t.box[0] = 8, t.box[1] = 4, t.box[2] = 3;
  t.name = "x_store_tile_sw32";
  t.op = Op::store;
  t.sw = CU_TENSOR_MAP_SWIZZLE_32B;
  v.push_back(t);
  t.name = "x_store_tile_box0_4_sw64";
  t.box[0] = 4;
  t.dims[0] = 4;
  t.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  v.push_back(t);
  f = Form{};
  f.name = "x_load_sw64_px32_c0_3";
  f.sw = CU_TENSOR_MAP_SWIZZLE_64B;
  f.px = 32;
  f.coords[0] = 3;
  v.push_back(f);
  return v;
}

void encodeNonInterleaved() {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return;
  CUdeviceptr data;
  cuMemAlloc(&data, kDataBytes);
  for (unsigned ch : {64u, 128u, 256u})
    for (unsigned px : {256u, 512u, 1024u}) {
      Form f;
      f.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
      f.il = CU_TENSOR_MAP_INTERLEAVE_NONE;
      f.ch = ch, f.px = px;
      f.dims[0] = 256;
      f.strides[0] = 1024, f.strides[1] = 8192, f.strides[2] = 65536;
      CUtensorMap m;
      std::printf("enc-none f32 ch %u px %u rc %d\n", ch, px, int(encode(f, m, data)));
    }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const bool extra = argc > 1 && !std::strcmp(argv[1], "extra");
  const bool matrix = !extra && (argc < 2 || std::strcmp(argv[1], "forms"));
  const bool runForms = argc < 2 || std::strcmp(argv[1], "matrix");
  if (extra) {
    pid_t pid = fork();
    if (pid == 0) {
      encodeNonInterleaved();
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  if (matrix) {
    pid_t pid = fork();
    if (pid == 0) {
      encodeMatrix();
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  if (!runForms) return 0;
  for (const Form& f : extra ? extraForms() : forms()) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      alarm(60);
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
