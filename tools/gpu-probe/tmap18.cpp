// Issue 18 (tensor maps): the 128 bytes driver 580 writes for cuTensorMapEncodeTiled/Im2col, one parameter varied
// at a time from a baseline, and what each tensormap.replace form does to those bytes and to a cp.async.bulk.tensor
// that uses the replaced map. Each experiment runs in a child process, so that a fault (a map the copy unit rejects)
// cannot spoil the others. Output lines:
//   enc <label> rc <CUresult> <256 hex digits>
//   rep <label> rc <launch/sync CUresult> waits <n> bar <16 hex> map <256 hex> box <hex of the box bytes>
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

CUdeviceptr gData;
constexpr size_t kDataBytes = 1 << 20;

std::string hex(const void* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const uint8_t*>(p)[i]);
    s += b;
  }
  return s;
}

bool setup() {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return false;
  if (cuMemAlloc(&gData, kDataBytes)) return false;
  std::vector<uint32_t> words(kDataBytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(i);
  // from 512 KiB on, normal floats with varied significands (every 8th a subnormal, every 16th negative), to see
  // how loads of the tf32 and ftz types convert
  for (size_t j = 0; j < words.size() / 2; ++j) {
    uint32_t bits = 0x3f800000u + ((uint32_t(j) * 2654435761u) >> 9);
    if (j % 8 == 3) bits = 0x00012345u + uint32_t(j);
    if (j % 16 == 5) bits |= 0x80000000u;
    words[words.size() / 2 + j] = bits;
  }
  return cuMemcpyHtoD(gData, words.data(), kDataBytes) == CUDA_SUCCESS;
}

struct Tiled {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  unsigned rank = 2;
  uint64_t offset = 0;
  cuuint64_t dims[5] = {64, 32, 4, 3, 2};
  cuuint64_t strides[4] = {1024, 32768, 131072, 393216};
  cuuint32_t box[5] = {8, 8, 1, 1, 1};
  cuuint32_t es[5] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  CUresult encode(CUtensorMap& m) const {
    std::memset(&m, 0, sizeof m);
    return cuTensorMapEncodeTiled(&m, type, rank, reinterpret_cast<void*>(gData + offset), dims, strides, box, es,
                                  interleave, swizzle, l2, oob);
  }
};

void printEncoding(const std::string& label, const Tiled& t) {
  CUtensorMap m;
  CUresult rc = t.encode(m);
  std::printf("enc %s rc %d %s\n", label.c_str(), int(rc), hex(&m, sizeof m).c_str());
}

void encodings() {
  Tiled base;
  printEncoding("base", base);
  for (uint64_t off : {16u, 32u, 256u, 4096u, 65536u}) {
    Tiled t = base;
    t.offset = off;
    printEncoding("offset=" + std::to_string(off), t);
  }
  for (int ty = 0; ty <= 12; ++ty) {
    Tiled t = base;
    t.type = CUtensorMapDataType(ty);
    t.box[0] = 16;
    printEncoding("type=" + std::to_string(ty) + ",box0=16", t);
  }
  {
    Tiled t = base;
    t.box[0] = 16;
    printEncoding("box0=16", t);
  }
  for (unsigned r = 1; r <= 5; ++r) {
    Tiled t = base;
    t.rank = r;
    printEncoding("rank=" + std::to_string(r), t);
  }
  for (uint64_t d : {1ull, 2ull, 3ull, 65ull, 1000ull, 65536ull, 65537ull, 1ull << 31, 1ull << 32}) {
    Tiled t = base;
    t.dims[0] = d;
    printEncoding("dim0=" + std::to_string(d), t);
  }
  for (uint64_t d : {1ull, 2ull, 33ull, 1ull << 32}) {
    Tiled t = base;
    t.dims[1] = d;
    printEncoding("dim1=" + std::to_string(d), t);
  }
  for (uint64_t s : {16ull, 32ull, 48ull, 2048ull, 1ull << 20, (1ull << 39) + 16, (1ull << 40) - 16}) {
    Tiled t = base;
    t.strides[0] = s;
    printEncoding("stride0=" + std::to_string(s), t);
  }
  for (unsigned b : {4u, 12u, 16u, 64u, 256u}) {
    Tiled t = base;
    t.box[0] = b;
    printEncoding("box0=" + std::to_string(b), t);
  }
  for (unsigned b : {1u, 2u, 3u, 255u, 256u}) {
    Tiled t = base;
    t.box[1] = b;
    printEncoding("box1=" + std::to_string(b), t);
  }
  for (unsigned e = 2; e <= 8; ++e) {
    Tiled t = base;
    t.es[0] = e;
    printEncoding("es0=" + std::to_string(e), t);
  }
  for (unsigned e : {2u, 3u, 8u}) {
    Tiled t = base;
    t.es[1] = e;
    printEncoding("es1=" + std::to_string(e), t);
  }
  Tiled r3 = base;
  r3.rank = 3;
  for (unsigned e : {2u, 5u}) {
    Tiled t = r3;
    t.es[2] = e;
    printEncoding("rank=3,es2=" + std::to_string(e), t);
  }
  {
    Tiled t = r3;
    t.box[2] = 3;
    printEncoding("rank=3,box2=3", t);
    t = r3;
    t.dims[2] = 7;
    printEncoding("rank=3,dim2=7", t);
    t = r3;
    t.strides[1] = 65536;
    printEncoding("rank=3,stride1=65536", t);
  }
  {
    Tiled t = r3;
    t.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    t.box[0] = 4;
    printEncoding("rank=3,interleave=16B,box0=4", t);
    t.box[0] = 8;
    printEncoding("rank=3,interleave=16B", t);
    t.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    t.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    printEncoding("rank=3,interleave=32B,swizzle=32B", t);
    t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    printEncoding("rank=3,interleave=32B,swizzle=128B", t);
  }
  for (int s = 1; s <= 6; ++s) {
    Tiled t = base;
    t.swizzle = CUtensorMapSwizzle(s);
    printEncoding("swizzle=" + std::to_string(s), t);
  }
  for (int l = 1; l <= 4; ++l) {
    Tiled t = base;
    t.l2 = CUtensorMapL2promotion(l);
    printEncoding("l2=" + std::to_string(l), t);
  }
  {
    Tiled t = base;
    t.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    printEncoding("oob=1", t);
    t.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    t.box[0] = 16;
    printEncoding("oob=1,type=6,box0=16", t);
  }
  // the high bits of every stride
  for (unsigned r = 3; r <= 5; ++r) {
    Tiled t = base;
    t.rank = r;
    t.strides[r - 2] = (1ull << 39) + 80;
    printEncoding("rank=" + std::to_string(r) + ",stride" + std::to_string(r - 2) + "=2^39+80", t);
    t.strides[r - 2] = (1ull << 40) - 16;
    printEncoding("rank=" + std::to_string(r) + ",stride" + std::to_string(r - 2) + "=2^40-16", t);
  }
  // im2col, for reference
  {
    cuuint64_t dims[5] = {16, 10, 10, 10, 2}, strides[4] = {64, 640, 6400, 64000};
    cuuint32_t es[5] = {1, 1, 1, 1, 1};
    int lo[3] = {-3, 2, -1}, hi[3] = {5, -4, 1};
    for (unsigned pixels : {100u, 1024u}) {
      CUtensorMap m;
      std::memset(&m, 0, sizeof m);
      CUresult rc =
          cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 5, reinterpret_cast<void*>(gData), dims, strides,
                                  lo, hi, 8, pixels, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      std::printf("enc im2col,rank=5,lo=-3/2/-1,hi=5/-4/1,c=8,p=%u rc %d %s\n", pixels, rc, hex(&m, sizeof m).c_str());
    }
  }
  {
    cuuint64_t dims[4] = {16, 10, 10, 2}, strides[3] = {64, 640, 6400};
    cuuint32_t es[4] = {1, 1, 1, 1};
    int lo[2] = {-1, -1}, hi[2] = {1, 1};
    for (unsigned rank : {3u, 4u}) {
      CUtensorMap m;
      std::memset(&m, 0, sizeof m);
      CUresult rc = cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, reinterpret_cast<void*>(gData),
                                            dims, strides, lo, hi, 16, 32, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      std::printf("enc im2col,rank=%u,lo=-1,hi=1,c=16,p=32 rc %d %s\n", rank, int(rc), hex(&m, sizeof m).c_str());
    }
    int lo2[2] = {-3, 2}, hi2[2] = {5, -4};
    CUtensorMap m;
    std::memset(&m, 0, sizeof m);
    CUresult rc =
        cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, reinterpret_cast<void*>(gData), dims, strides,
                                lo2, hi2, 8, 100, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::printf("enc im2col,rank=4,lo=-3/2,hi=5/-4,c=8,p=100 rc %d %s\n", rc, hex(&m, sizeof m).c_str());
  }
}

// One tensormap.replace experiment: the field, its operand text (ordinal and value, or "%rd3" for a value passed
// in), the map it starts from, and the tensor copy made with the result.
struct Replace {
  std::string label, field, type, operands;
  Tiled start;
  unsigned copyRank = 2;
  int coords[3] = {16, 2, 0};
  unsigned expectBytes = 256;  // 8x8 f32
  uint64_t value = 0;          // %rd3
};

std::string kernelText(const Replace& r, bool shared) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout, .param .u64 pval)\n{\n"
      "  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[2048];\n  .shared .align 128 .b8 smap[128];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u64 %rd3, [pval];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.eq.u32 %p1, %r1, 0;\n";
  std::string form = "tensormap.replace.tile." + r.field + (shared ? ".shared::cta" : ".global") + ".b1024." + r.type;
  if (shared) {
    s += "  mul.wide.u32 %rd4, %r1, 4;\n  add.s64 %rd5, %rd1, %rd4;\n  ld.global.b32 %r2, [%rd5];\n"
         "  mov.u32 %r3, smap;\n  shl.b32 %r4, %r1, 2;\n  add.u32 %r5, %r3, %r4;\n  st.shared.b32 [%r5], %r2;\n"
         "  bar.warp.sync -1;\n";
    s += "  @%p1 " + form + " [%r3], " + r.operands + ";\n";
    s += "  bar.warp.sync -1;\n"
         "  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r3], "
         "128;\n";
  } else {
    s += "  @%p1 " + form + " [%rd1], " + r.operands + ";\n";
    s += "  fence.proxy.tensormap::generic.release.gpu;\n";
  }
  s += "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n  @!%p1 bra DONE;\n";
  for (int i = 0; i < 16; ++i)
    s += "  ld.global.b64 %rd6, [%rd1+" + std::to_string(8 * i) + "];\n  st.global.b64 [%rd2+" + std::to_string(8 * i) +
         "], %rd6;\n";
  s += "  mov.u32 %r6, sbar;\n  mov.u32 %r7, sbox;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n"
       "  fence.proxy.async.shared::cta;\n"
       "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], " +
       std::to_string(r.expectBytes) + ";\n";
  std::string coords = "{";
  for (unsigned i = 0; i < r.copyRank; ++i) {
    s += "  mov.b32 %r" + std::to_string(10 + i) + ", " + std::to_string(r.coords[i]) + ";\n";
    coords += (i ? ", %r" : "%r") + std::to_string(10 + i);
  }
  coords += "}";
  s += "  cp.async.bulk.tensor." + std::to_string(r.copyRank) +
       "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r7], [%rd1, " + coords + "], [%r6];\n";
  s += "  mov.u32 %r8, 0;\nWAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n  @%p2 bra OK;\n"
       "  add.u32 %r8, %r8, 1;\n  setp.lt.u32 %p3, %r8, 200000;\n  @%p3 bra WAIT;\nOK:\n"
       "  st.global.u32 [%rd2+128], %r8;\n  ld.shared.b64 %rd8, [%r6];\n  st.global.b64 [%rd2+136], %rd8;\n";
  for (int i = 0; i < 256; ++i)
    s += "  ld.shared.b64 %rd9, [%r7+" + std::to_string(8 * i) + "];\n  st.global.b64 [%rd2+" +
         std::to_string(256 + 8 * i) + "], %rd9;\n";
  s += "DONE:\n  ret;\n}\n";
  return s;
}

void runReplace(const Replace& r, bool shared) {
  std::string label = r.label + (shared ? ",shared" : ",global");
  CUtensorMap m;
  CUresult rc = r.start.encode(m);
  if (rc) {
    std::printf("rep %s encode rc %d\n", label.c_str(), rc);
    return;
  }
  std::string text = kernelText(r, shared);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log))};
  CUmodule mod;
  CUfunction f;
  if ((rc = cuModuleLoadDataEx(&mod, text.c_str(), 2, opts, vals)) || (rc = cuModuleGetFunction(&f, mod, "k"))) {
    std::printf("rep %s load rc %d %s\n", label.c_str(), rc, log);
    return;
  }
  CUdeviceptr map, out;
  std::vector<uint8_t> host(256 + 2048, 0xee);
  cuMemAlloc(&map, 128);
  cuMemAlloc(&out, host.size());
  cuMemcpyHtoD(map, &m, 128);
  cuMemcpyHtoD(out, host.data(), host.size());
  uint64_t value = r.value ? gData + r.value : 0;
  void* args[] = {&map, &out, &value};
  rc = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
  if (!rc) rc = cuCtxSynchronize();
  if (!rc) rc = cuMemcpyDtoH(host.data(), out, host.size());
  uint32_t waits;
  std::memcpy(&waits, &host[128], 4);
  std::printf("rep %s rc %d waits %u bar %s map %s box %s\n", label.c_str(), int(rc), waits, hex(&host[136], 8).c_str(),
              hex(host.data(), 128).c_str(), hex(&host[256], r.expectBytes).c_str());
}

std::vector<Replace> replaceForms() {
  std::vector<Replace> v;
  Tiled base;
  Tiled r3 = base;
  r3.rank = 3;
  auto add = [&](std::string label, std::string field, std::string type, std::string operands, Tiled start,
                 unsigned copyRank = 2, unsigned expect = 256) {
    Replace r;
    r.label = label;
    r.field = field;
    r.type = type;
    r.operands = operands;
    r.start = start;
    r.copyRank = copyRank;
    r.expectBytes = expect;
    v.push_back(r);
    return &v.back();
  };
  add("none(rank=2)", "rank", "b32", "1", base);
  add("global_address=+2048", "global_address", "b64", "%rd3", base)->value = 2048;
  add("global_address=+16", "global_address", "b64", "%rd3", base)->value = 16;
  add("rank=2(from2)", "rank", "b32", "2", base);
  add("rank=0(from2)", "rank", "b32", "0", base);
  add("rank=1(from3)", "rank", "b32", "1", r3);
  add("rank=2(from3)", "rank", "b32", "2", r3);
  add("rank=2(from3),copy3", "rank", "b32", "2", r3, 3);
  add("box_dim[0]=4", "box_dim", "b32", "0, 4", base, 2, 128);
  add("box_dim[1]=4", "box_dim", "b32", "1, 4", base, 2, 128);
  add("box_dim[1]=3", "box_dim", "b32", "1, 3", base, 2, 96);
  add("global_dim[0]=20", "global_dim", "b32", "0, 20", base);
  add("global_dim[1]=5", "global_dim", "b32", "1, 5", base);
  add("global_dim[2]=9(rank2)", "global_dim", "b32", "2, 9", base);
  add("global_stride[0]=2048", "global_stride", "b64", "0, 2048", base);
  add("global_stride[1]=2048", "global_stride", "b64", "1, 2048", base);
  add("global_stride[1]=65536(rank3)", "global_stride", "b64", "1, 65536", r3, 3);
  add("element_stride[0]=2", "element_stride", "b32", "0, 2", base, 2, 128);
  add("element_stride[1]=2", "element_stride", "b32", "1, 2", base, 2, 128);
  add("elemtype=1(u16)", "elemtype", "b32", "1", base, 2, 128);
  add("elemtype=8", "elemtype", "b32", "8", base, 2, 256);
  add("elemtype=9", "elemtype", "b32", "9", base, 2, 512);
  add("elemtype=10", "elemtype", "b32", "10", base, 2, 128);
  add("elemtype=12", "elemtype", "b32", "12", base, 2, 256);
  add("interleave_layout=1(rank3)", "interleave_layout", "b32", "1", r3, 3);
  add("interleave_layout=2(rank3)", "interleave_layout", "b32", "2", r3, 3);
  add("swizzle_mode=1", "swizzle_mode", "b32", "1", base);
  add("swizzle_mode=2", "swizzle_mode", "b32", "2", base);
  add("swizzle_mode=3", "swizzle_mode", "b32", "3", base);
  Tiled oob = base;
  oob.dims[0] = 20;
  add("fill_mode=1(dim0=20)", "fill_mode", "b32", "1", oob);
  Tiled nan = oob;
  nan.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  add("fill_mode=0(nan,dim0=20)", "fill_mode", "b32", "0", nan);
  Tiled sw = base;
  sw.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  add("swizzle_mode=0(from128B)", "swizzle_mode", "b32", "0", sw);
  // maps as encoded (the replace keeps the rank): element strides that do not divide the box, short swizzled rows
  Tiled t = base;
  t.es[1] = 3;
  add("encoded es1=3,expect64", "rank", "b32", "1", t, 2, 64);
  add("encoded es1=3,expect96", "rank", "b32", "1", t, 2, 96);
  t = base;
  t.es[0] = 2;
  add("encoded es0=2,expect128", "rank", "b32", "1", t, 2, 128);
  add("encoded es0=2,expect256", "rank", "b32", "1", t, 2, 256);
  t = base;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  add("encoded swizzle64B,box0=8", "rank", "b32", "1", t, 2, 256);
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  t.box[0] = 4;
  add("encoded swizzle128B,box0=4", "rank", "b32", "1", t, 2, 128);
  t = base;
  t.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  t.dims[0] = 20;
  t.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  add("encoded f16,nan,dim0=20", "rank", "b32", "1", t, 2, 128);
  for (int ty : {7, 10, 11, 12}) {
    t = base;
    t.offset = kDataBytes / 2;
    t.type = CUtensorMapDataType(ty);
    add("encoded floats,type=" + std::to_string(ty), "rank", "b32", "1", t, 2, 256);
  }
  t = base;
  t.offset = kDataBytes / 2;
  add("floats,elemtype=11", "elemtype", "b32", "11", t, 2, 256);
  add("floats,elemtype=12", "elemtype", "b32", "12", t, 2, 256);
  return v;
}

template <typename F> void inChild(F f) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (!setup())
      std::printf("setup failed\n");
    else
      f();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) std::printf("child died: status %d\n", status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "ptx") {  // the kernels' text, for cuobjdump
    for (const Replace& r : replaceForms())
      for (bool shared : {false, true})
        std::printf("// %s %d\n%s\n", r.label.c_str(), shared, kernelText(r, shared).c_str());
    return 0;
  }
  inChild(encodings);
  for (const Replace& r : replaceForms())
    for (bool shared : {false, true}) inChild([&] { runReplace(r, shared); });
  return 0;
}
