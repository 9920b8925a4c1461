// Asynchronous copies and stores into the CTAs of a cluster, and tensor reductions, recorded on a GPU into the golden
// file (conformance/golden/, README "Golden numerics") and compared bit for bit:
//   ptx.cluster.TensorMulticast.*  cp.async.bulk.tensor loads with .multicast::cluster and 16-bit CTA masks (several
//                                  CTAs, the issuing CTA left out, the own CTA only, swizzled boxes; masks naming ranks
//                                  the cluster does not have, and an empty mask, in *_Faults): the box in every CTA and
//                                  the transaction bytes each CTA's mbarrier received;
//   ptx.cluster.AsyncStore.*       st.async (.b32/.b64/.v2/.v4 and the typed aliases) and red.async (every op and type
//                                  of sm_90) into another CTA's shared memory: the values and the bytes the target's
//                                  mbarrier received (into the own CTA in *_Faults);
//   ptx.async_TensorReduce.*       cp.reduce.async.bulk.tensor through 32/64/128-byte swizzled and interleaved maps,
//                                  each operation on the element types it takes (the forms the GPU refuses with an
//                                  illegal instruction, in *_Faults);
//   ptx.async_FloatReduce.*        NaNs, infinities and subnormals in cp.reduce.async.bulk .add.f32/.f64 and in
//                                  red/atom .add.f32/.f64 on global, generic and shared addresses.
// Recorded on an H200 (driver 580.159.04): the forms of the first three groups in five runs in two leases, the float
// reductions in two, the same bits each time (the GPU's forms that faulted had to run in *_Faults: a fault ends the
// context of every case after it in the process).
// The transaction bytes an mbarrier received are measured without reading its opaque word: it is initialized with two
// arrivals and one arrive.expect_tx of kExpect bytes; after the asynchronous operations had time to land (200 us of
// %globaltimer) the last arrival comes, then complete_tx of 4 bytes at a time until the phase completes: after k steps,
// kExpect - 4k bytes had arrived.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr unsigned kExpect = 8192;
constexpr unsigned kMaxSteps = kExpect / 4 + 16;
constexpr size_t kTensorBytes = 1 << 20;
constexpr uint64_t kTensorOffset = 4096;

// Thread 0's measurement (the mbarrier's shared::cta address in %r6): the number of 4-byte complete_tx steps the
// phase needed, in %r40 (kMaxSteps: it did not complete).
std::string MeasureTx() {
  return "  mov.u64 %rd20, %globaltimer;\nSPIN:\n  mov.u64 %rd21, %globaltimer;\n  sub.u64 %rd22, %rd21, %rd20;\n"
         "  setp.lt.u64 %p5, %rd22, 200000;\n  @%p5 bra SPIN;\n"
         "  mbarrier.arrive.shared::cta.b64 %rd23, [%r6];\n  mov.u32 %r40, 0;\n"
         "MEASURE:\n  mbarrier.test_wait.parity.shared::cta.b64 %p5, [%r6], 0;\n  @%p5 bra MEASURED;\n"
         "  setp.ge.u32 %p6, %r40, " +
         std::to_string(kMaxSteps) +
         ";\n  @%p6 bra MEASURED;\n"
         "  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r6], 4;\n  add.u32 %r40, %r40, 1;\n  bra MEASURE;\n"
         "MEASURED:\n";
}

// Bytes an mbarrier received from k measured steps (negative: more than kExpect, or none of the phase completed).
int64_t ReceivedBytes(uint32_t steps) { return steps >= kMaxSteps ? -1 : int64_t(kExpect) - 4 * int64_t(steps); }

// Loads `ptx` (kernel "k"); on a JIT error the load's result, which the case records as its outputs.
CUresult LoadKernel(const std::string& ptx, CUmodule* mod, CUfunction* fn, std::string* log) {
  char buf[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {buf, reinterpret_cast<void*>(sizeof(buf))};
  CUresult r = cuModuleLoadDataEx(mod, ptx.c_str(), 2, opts, vals);
  *log = buf;
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(fn, *mod, "k");
  return r;
}

// Launches fn over `ctas` CTAs of 32 threads in clusters of `cluster` (x) and synchronizes.
CUresult LaunchClusters(CUfunction fn, unsigned ctas, unsigned cluster, void** params) {
  CUlaunchAttribute attr = {};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = cluster;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = ctas;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CUresult r = cuLaunchKernelEx(&cfg, fn, params, nullptr);
  if (r != CUDA_SUCCESS) return r;
  return cuCtxSynchronize();
}

// A failed load or launch: the whole output is {0xdead, stage, result}.
std::vector<uint64_t> Failed(unsigned stage, CUresult r) { return {0xdeadull, stage, uint64_t(r)}; }

// Records the outputs on the GPU, else compares them with the golden entry word by word.
void CompareGolden(const std::string& name, uint64_t hash, const std::vector<uint64_t>& outputs, const char* layout) {
  if (conf::GoldenRecord(name, hash, outputs)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor(name, hash);
  if (!golden) return;
  const std::vector<uint64_t>& want = golden->outputs;
  if (want.size() == 3 && want[0] == 0xdeadull) {
    EXPECT_EQ(outputs, want) << "the GPU's " << (want[1] == 1 ? "load" : "launch") << " failed with "
                             << conf::ResultName(CUresult(want[2]));
    return;
  }
  if (outputs.size() == 3 && outputs[0] == 0xdeadull) {
    ADD_FAILURE() << "the " << (outputs[1] == 1 ? "load" : "launch") << " failed with "
                  << conf::ResultName(CUresult(outputs[2])) << "; the GPU ran it";
    return;
  }
  EXPECT_EQ(outputs.size(), want.size()) << layout;
  int shown = 0;
  for (size_t i = 0; i < outputs.size() && i < want.size(); ++i)
    if (outputs[i] != want[i] && shown++ < 12)
      ADD_FAILURE() << "output " << i << " (" << layout << "): got 0x" << std::hex << outputs[i] << ", the GPU gave 0x"
                    << want[i];
}

// A deterministic 32-bit mix of i and a seed.
uint32_t Mix(uint32_t i, uint32_t seed) {
  uint32_t h = i * 0x9e3779b1u ^ seed * 0x85ebca77u;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  return h ^ (h >> 15);
}

// ---- tensor multicast ----------------------------------------------------------------------------------------------
// Two clusters of `cluster` CTAs; in each, rank `issuer` loads one box of a 2D f32 tensor (word i of the buffer holds
// 0x10000 + i) with .multicast::cluster and `mask`. Every CTA writes the steps its mbarrier needed and its 2 KiB
// shared array (0xee before the copy).
struct MulticastForm {
  std::string name;
  unsigned cluster = 4;
  unsigned issuer = 0;
  uint32_t mask = 0xf;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint32_t box[2] = {8, 8};
  cuuint64_t dims[2] = {64, 16};
  int coords[2] = {0, 0};
  bool bulk = false;  // cp.async.bulk (256 bytes from the tensor's start) instead of a tensor copy
};

constexpr unsigned kMulticastShared = 2048;

std::string MulticastKernel(const MulticastForm& f) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout)\n{\n"
      "  .reg .b16 %rs<4>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .pred %p<8>;\n"
      "  .shared .align 1024 .b8 sbox[" +
      std::to_string(kMulticastShared) +
      "];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n"
      "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %cluster_ctarank;\n  mov.u32 %r3, %ctaid.x;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r6, sbar;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra READY;\n"
      "  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n  st.shared.u32 [%r21], -286331154;\n"
      "  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, " +
      std::to_string(kMulticastShared) +
      ";\n  @%p2 bra FILL;\n"
      "  mbarrier.init.shared::cta.b64 [%r6], 2;\n"
      "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], " +
      std::to_string(kExpect) +
      ";\n  fence.mbarrier_init.release.cluster;\n  fence.proxy.async.shared::cta;\nREADY:\n"
      "  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n  @%p1 bra ISSUED;\n"
      "  setp.ne.u32 %p2, %r2, " +
      std::to_string(f.issuer) + ";\n  @%p2 bra ISSUED;\n" +
      (f.bulk ? "  mov.b16 %rs1, " + std::to_string(f.mask) +
                    ";\n  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                    "[%r7], [%rd1], 256, [%r6], %rs1;\n"
              : "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n  mov.b16 %rs1, " + std::to_string(f.mask) +
                    ";\n  mov.b32 %r10, " + std::to_string(f.coords[0]) + ";\n  mov.b32 %r11, " +
                    std::to_string(f.coords[1]) +
                    ";\n"
                    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::"
                    "cluster [%r7], [%rd1, {%r10, %r11}], [%r6], %rs1;\n") +
      // every CTA measures after the issuer issued (a cluster barrier) and 200 us more (MeasureTx), not after the
      // 200 us alone: CTAs that share a host thread may not run in the meantime
      "ISSUED:\n  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n  @%p1 bra DONE;\n" + MeasureTx() +
      "  mul.wide.u32 %rd8, %r3, " + std::to_string(16 + kMulticastShared) +
      ";\n  add.u64 %rd9, %rd2, %rd8;\n  st.global.u32 [%rd9], %r40;\n"
      "  mov.u32 %r20, 0;\nDUMP:\n  add.u32 %r21, %r7, %r20;\n  ld.shared.b64 %rd10, [%r21];\n"
      "  cvt.u64.u32 %rd11, %r20;\n  add.u64 %rd12, %rd9, %rd11;\n  st.global.b64 [%rd12+16], %rd10;\n"
      "  add.u32 %r20, %r20, 8;\n  setp.lt.u32 %p2, %r20, " +
      std::to_string(kMulticastShared) +
      ";\n  @%p2 bra DUMP;\n"
      "DONE:\n  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n  ret;\n}\n";
  return s;
}

// Outputs: per CTA, the bytes its mbarrier received, the bytes of its shared array up to the last one not 0xee, and
// those bytes as 64-bit words.
void RunMulticast(const MulticastForm& f) {
  std::vector<uint32_t> words(kTensorBytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(0x10000 + i);
  conf::DeviceBuffer data(kTensorBytes);
  ASSERT_EQ(cuMemcpyHtoD(data.ptr(), words.data(), kTensorBytes), CUDA_SUCCESS);
  CUtensorMap m;
  std::memset(&m, 0, sizeof m);
  const cuuint64_t strides[1] = {f.dims[0] * 4};
  const cuuint32_t es[2] = {1, 1};
  CU_ASSERT_OK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                      reinterpret_cast<void*>(data.ptr() + kTensorOffset), f.dims, strides, f.box, es,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, f.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  const std::string ptx = MulticastKernel(f);
  const std::string key = ptx + " dims " + std::to_string(f.dims[0]) + "," + std::to_string(f.dims[1]) + " box " +
                          std::to_string(f.box[0]) + "," + std::to_string(f.box[1]) + " swizzle " +
                          std::to_string(int(f.swizzle)) + " cluster " + std::to_string(f.cluster);
  const uint64_t hash = conf::Fnv(key.data(), key.size());
  const std::string name = "cluster_multicast_" + f.name;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  std::string log;
  CUresult rc = LoadKernel(ptx, &mod, &fn, &log);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(1, rc), "load");
  const unsigned ctas = 2 * f.cluster;
  const size_t stride = 16 + kMulticastShared, outBytes = ctas * stride;
  conf::DeviceBuffer map(128), out(outBytes);
  ASSERT_EQ(cuMemcpyHtoD(map.ptr(), &m, 128), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(out.ptr(), 0xcc, outBytes), CUDA_SUCCESS);
  CUdeviceptr pmap = f.bulk ? data.ptr() + kTensorOffset : map.ptr(), pout = out.ptr();
  void* params[] = {&pmap, &pout};
  rc = LaunchClusters(fn, ctas, f.cluster, params);
  std::vector<uint8_t> got(outBytes);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoH(got.data(), out.ptr(), outBytes);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(2, rc), "launch");
  cuModuleUnload(mod);
  std::vector<uint64_t> outputs;
  for (unsigned c = 0; c < ctas; ++c) {
    const uint8_t* o = got.data() + c * stride;
    uint32_t steps;
    std::memcpy(&steps, o, 4);
    size_t used = kMulticastShared;
    while (used > 0 && o[16 + used - 1] == 0xee) --used;
    outputs.push_back(uint64_t(ReceivedBytes(steps)));
    outputs.push_back(used);
    for (size_t i = 0; i < (used + 7) / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, o + 16 + 8 * i, 8);
      outputs.push_back(w);
    }
  }
  CompareGolden(name, hash, outputs, "per CTA: mbarrier bytes received, shared bytes written, the shared words");
}

std::vector<MulticastForm> MulticastForms() {
  std::vector<MulticastForm> v;
  auto add = [&](MulticastForm f) { v.push_back(std::move(f)); };
  {
    MulticastForm f;
    f.name = "all_four";
    add(f);
    f.name = "without_the_issuer";
    f.mask = 0b0110;
    f.coords[0] = 8, f.coords[1] = 4;
    add(f);
    f.name = "own_cta_only";
    f.issuer = 2, f.mask = 0b0100;
    add(f);
    f.name = "issuer_3_to_0_and_3";
    f.issuer = 3, f.mask = 0b1001;
    f.coords[0] = 60, f.coords[1] = 12;  // partly outside the tensor: zero fill
    add(f);
  }
  {
    MulticastForm f;
    f.name = "swizzle_128B";
    f.issuer = 1, f.mask = 0b1010;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    f.box[0] = 32, f.box[1] = 8;
    f.coords[0] = 16, f.coords[1] = 3;
    add(f);
    f.name = "swizzle_64B";
    f.issuer = 0, f.mask = 0b0111;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    f.box[0] = 16, f.box[1] = 8;
    add(f);
    f.name = "swizzle_32B_short_rows";
    f.mask = 0b1100;
    f.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    f.box[0] = 4, f.box[1] = 6;
    add(f);
  }
  {
    MulticastForm f;
    f.name = "cluster_8";
    f.cluster = 8, f.issuer = 5, f.mask = 0b10110001;
    add(f);
    f.name = "cluster_2";
    f.cluster = 2, f.issuer = 1, f.mask = 0b11;
    add(f);
  }
  {
    MulticastForm f;
    f.name = "bulk_without_the_issuer";
    f.bulk = true;
    f.issuer = 1, f.mask = 0b1101;
    add(f);
  }
  return v;
}

// Masks naming ranks the cluster does not have, and none at all (each in a process of its own: a fault ends the
// context).
std::vector<MulticastForm> MulticastFaultForms() {
  std::vector<MulticastForm> v;
  MulticastForm f;
  f.name = "mask_past_the_cluster";
  f.cluster = 2, f.issuer = 0, f.mask = 0xffff;
  v.push_back(f);
  f.name = "mask_ranks_4_and_5_of_4";
  f.cluster = 4, f.issuer = 1, f.mask = 0b110010;
  v.push_back(f);
  f.name = "mask_only_outside";
  f.cluster = 2, f.issuer = 0, f.mask = 0b100;
  v.push_back(f);
  f.name = "mask_empty";
  f.mask = 0;
  v.push_back(f);
  f.name = "bulk_mask_past_the_cluster";  // cp.async.bulk's multicast
  f.bulk = true;
  f.cluster = 2, f.issuer = 0, f.mask = 0xffff;
  v.push_back(f);
  f.name = "bulk_mask_ranks_4_and_5_of_4";
  f.cluster = 4, f.issuer = 1, f.mask = 0b110010;
  v.push_back(f);
  return v;
}

// ---- st.async and red.async ---------------------------------------------------------------------------------------
// Two clusters of two CTAs; each CTA's 32 threads store or reduce into the partner's (or with `self`, their own CTA's)
// 512-byte shared array, lane t at t * stride (all at byte 0 with `same`), completing the target's mbarrier. The array
// starts as bytes 0..511 of the input, lane t's operand is at input byte 512 + 16t. Every CTA writes the steps its
// mbarrier needed and its array.
struct AsyncForm {
  std::string name;
  std::string instruction;  // e.g. "st.async...v2.b32" (without operands)
  std::string operand;      // "%r20", "{%r20, %r21}", "%rd24", ...
  unsigned stride = 4;
  bool same = false;
  bool self = false;
  bool wide = false;       // 64-bit operands: the input tables hold u64
  bool address64 = false;  // the addresses in 64-bit registers
};

std::string AsyncKernel(const AsyncForm& f) {
  return std::string(".version 8.3\n.target sm_90\n.address_size 64\n") +
         ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
         "  .reg .b32 %r<64>;\n  .reg .b64 %rd<32>;\n  .reg .pred %p<8>;\n"
         "  .shared .align 16 .b8 s[512];\n  .shared .align 8 .b64 sbar;\n"
         "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n"
         "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %cluster_ctarank;\n  mov.u32 %r3, %ctaid.x;\n"
         "  mov.u32 %r7, s;\n  mov.u32 %r6, sbar;\n"
         "  mul.wide.u32 %rd3, %r1, 16;\n  add.u64 %rd4, %rd1, %rd3;\n"
         "  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4];\n"
         "  shl.b32 %r8, %r1, 4;\n  add.u32 %r9, %r7, %r8;\n  st.shared.v4.u32 [%r9], {%r10, %r11, %r12, %r13};\n"
         "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra READY;\n"
         "  mbarrier.init.shared::cta.b64 [%r6], 2;\n"
         "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd5, [%r6], " +
         std::to_string(kExpect) +
         ";\n  fence.mbarrier_init.release.cluster;\nREADY:\n"
         "  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n" +
         (f.self ? "  mov.u32 %r14, %r2;\n" : "  xor.b32 %r14, %r2, 1;\n") +
         "  mapa.shared::cluster.u32 %r15, %r7, %r14;\n  mapa.shared::cluster.u32 %r16, %r6, %r14;\n"
         "  mul.lo.u32 %r17, %r1, " +
         std::to_string(f.same ? 0 : f.stride) +
         ";\n  add.u32 %r18, %r15, %r17;\n"
         "  ld.global.v4.u32 {%r20, %r21, %r22, %r23}, [%rd4+512];\n"
         "  ld.global.v2.u64 {%rd24, %rd25}, [%rd4+512];\n  " +
         (f.address64 ? "cvt.u64.u32 %rd26, %r18;\n  cvt.u64.u32 %rd27, %r16;\n  " + f.instruction + " [%rd26], " +
                            f.operand + ", [%rd27];\n"
                      : f.instruction + " [%r18], " + f.operand + ", [%r16];\n") +
         "  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n  @%p1 bra MEASURED;\n" + MeasureTx() +
         "  mul.wide.u32 %rd8, %r3, 528;\n  add.u64 %rd9, %rd2, %rd8;\n  @!%p1 st.global.u32 [%rd9], %r40;\n"
         "  bar.sync 0;\n"
         "  mul.wide.u32 %rd8, %r3, 528;\n  add.u64 %rd9, %rd2, %rd8;\n  add.u64 %rd10, %rd9, %rd3;\n"
         "  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r9];\n"
         "  st.global.v4.u32 [%rd10+16], {%r10, %r11, %r12, %r13};\n"
         "  barrier.cluster.arrive.release;\n  barrier.cluster.wait.acquire;\n  ret;\n}\n";
}

// The input: the arrays' start (512 bytes) and the lanes' operands (16 bytes each): edge values for the first lanes
// (inc/dec wrap-arounds, signed limits, carries), mixed values after.
std::vector<uint8_t> AsyncInput(const AsyncForm& f, uint32_t seed) {
  static const uint32_t kStart32[16] = {0,           1,           5,           5,   5, 0, 0xffffffffu, 0xffffffffu,
                                        0x7fffffffu, 0x80000000u, 0x80000000u, 100, 3, 3, 0,           0xfffffffeu};
  static const uint32_t kOperand32[16] = {0, 0,           5,           4,  6, 7, 0xffffffffu, 0,
                                          1, 0x7fffffffu, 0xffffffffu, 99, 0, 2, 0xffffffffu, 0xffffffffu};
  static const uint64_t kStart64[8] = {0, 0xffffffffull,         0xffffffffffffffffull, 0x7fffffffffffffffull, 1,
                                       5, 0x123456789abcdef0ull, 0x8000000000000000ull};
  static const uint64_t kOperand64[8] = {
      0, 1, 1, 1, 0xffffffffffffffffull, 0x100000000ull, 0xfedcba9876543210ull, 0x8000000000000000ull};
  std::vector<uint8_t> in(1024);
  for (unsigned i = 0; i < 256; ++i) {
    uint32_t w = Mix(i, seed);
    if (i % 3 == 1) w &= 31;  // small values, where inc and dec wrap
    std::memcpy(&in[4 * i], &w, 4);
  }
  for (unsigned t = 0; t < 32; ++t) {
    if (f.wide) {
      if (t < 8) {
        std::memcpy(&in[8 * t], &kStart64[t], 8);
        std::memcpy(&in[512 + 16 * t], &kOperand64[t], 8);
      }
    } else if (t < 16) {
      std::memcpy(&in[4 * t], &kStart32[t], 4);
      std::memcpy(&in[512 + 16 * t], &kOperand32[t], 4);
    }
  }
  if (f.same) {  // lane 5's operand for every lane
    uint8_t operand[16];
    std::memcpy(operand, &in[512 + 16 * 5], 16);
    for (unsigned t = 0; t < 32; ++t) std::memcpy(&in[512 + 16 * t], operand, 16);
  }
  return in;
}

// Outputs: per CTA, the bytes its mbarrier received and its 512-byte array as 64 words.
void RunAsync(const AsyncForm& f) {
  const std::string ptx = AsyncKernel(f);
  const std::vector<uint8_t> input = AsyncInput(f, uint32_t(conf::Fnv(f.name.data(), f.name.size())));
  const uint64_t hash = conf::Fnv(input.data(), input.size(), conf::Fnv(ptx.data(), ptx.size()));
  const std::string name = "cluster_async_" + f.name;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  std::string log;
  CUresult rc = LoadKernel(ptx, &mod, &fn, &log);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(1, rc), "load");
  constexpr unsigned kCtas = 4;
  conf::DeviceBuffer in(input.size()), out(kCtas * 528);
  ASSERT_EQ(cuMemcpyHtoD(in.ptr(), input.data(), input.size()), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(out.ptr(), 0xcc, kCtas * 528), CUDA_SUCCESS);
  CUdeviceptr pin = in.ptr(), pout = out.ptr();
  void* params[] = {&pin, &pout};
  rc = LaunchClusters(fn, kCtas, 2, params);
  std::vector<uint8_t> got(kCtas * 528);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoH(got.data(), out.ptr(), got.size());
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(2, rc), "launch");
  cuModuleUnload(mod);
  std::vector<uint64_t> outputs;
  for (unsigned c = 0; c < kCtas; ++c) {
    uint32_t steps;
    std::memcpy(&steps, &got[c * 528], 4);
    outputs.push_back(uint64_t(ReceivedBytes(steps)));
    for (unsigned i = 0; i < 64; ++i) {
      uint64_t w;
      std::memcpy(&w, &got[c * 528 + 16 + 8 * i], 8);
      outputs.push_back(w);
    }
  }
  CompareGolden(name, hash, outputs, "per CTA: mbarrier bytes received, then the 64 words of its array");
}

std::vector<AsyncForm> AsyncForms() {
  std::vector<AsyncForm> v;
  const std::string st = "st.async.shared::cluster.mbarrier::complete_tx::bytes";
  auto store = [&](std::string name, std::string vecType, std::string operand, unsigned bytes) {
    AsyncForm f;
    f.name = std::move(name);
    f.instruction = st + vecType;
    f.operand = std::move(operand);
    f.stride = bytes;
    v.push_back(f);
  };
  store("st_b32", ".b32", "%r20", 4);
  store("st_u32", ".u32", "%r20", 4);
  store("st_s32", ".s32", "%r20", 4);
  store("st_f32", ".f32", "%r20", 4);
  store("st_b64", ".b64", "%rd24", 8);
  store("st_u64", ".u64", "%rd24", 8);
  store("st_s64", ".s64", "%rd24", 8);
  store("st_f64", ".f64", "%rd24", 8);
  store("st_v2_b32", ".v2.b32", "{%r20, %r21}", 8);
  store("st_v2_f32", ".v2.f32", "{%r20, %r21}", 8);
  store("st_v2_b64", ".v2.b64", "{%rd24, %rd25}", 16);
  store("st_v2_s64", ".v2.s64", "{%rd24, %rd25}", 16);
  store("st_v4_b32", ".v4.b32", "{%r20, %r21, %r22, %r23}", 16);
  store("st_v4_s32", ".v4.s32", "{%r20, %r21, %r22, %r23}", 16);
  store("st_v4_f32", ".v4.f32", "{%r20, %r21, %r22, %r23}", 16);
  const std::string red = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes";
  auto reduce = [&](std::string op, std::string type) {
    AsyncForm f;
    f.name = "red_" + op + "_" + type;
    f.instruction = red + "." + op + "." + type;
    f.wide = type == "u64";
    f.operand = f.wide ? "%rd24" : "%r20";
    f.stride = f.wide ? 8 : 4;
    v.push_back(f);
    f.name += "_one_word";
    f.same = true;
    v.push_back(f);
  };
  for (const char* op : {"inc", "dec"}) reduce(op, "u32");
  for (const char* op : {"min", "max"}) {
    reduce(op, "u32");
    reduce(op, "s32");
  }
  for (const char* op : {"and", "or", "xor"}) reduce(op, "b32");
  reduce("add", "u32");
  reduce("add", "s32");
  reduce("add", "u64");
  // shared::cluster addresses in 64-bit registers
  for (const char* base : {"st_v4_b32", "red_add_u32"})
    for (const AsyncForm& r : std::vector<AsyncForm>(v))
      if (r.name == base) {
        AsyncForm a = r;
        a.name += "_address_64";
        a.address64 = true;
        v.push_back(a);
      }
  return v;
}

// Into the issuing CTA's own shared memory through its shared::cluster address.
std::vector<AsyncForm> AsyncFaultForms() {
  std::vector<AsyncForm> v;
  AsyncForm f;
  f.name = "st_b32_into_own_cta";
  f.instruction = "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32";
  f.operand = "%r20";
  f.self = true;
  v.push_back(f);
  f.name = "red_add_u32_into_own_cta";
  f.instruction = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32";
  v.push_back(f);
  return v;
}

// ---- tensor reductions ---------------------------------------------------------------------------------------------
// One thread copies 8 KiB of input into shared memory and reduces the box at the coordinates into the tensor (1 MiB,
// of mixed values of the map's type) with cp.reduce.async.bulk.tensor; the outputs are the tensor's 32-bit words that
// changed, (index << 32) | value.
struct ReduceForm {
  std::string name;
  std::string op;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT32;
  unsigned rank = 2;
  cuuint64_t dims[3] = {1, 1, 1};
  cuuint64_t strides[2] = {};  // bytes; dense rows padded to 32 bytes when strides[0] is 0
  cuuint32_t box[3] = {1, 1, 1};
  int coords[3] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
};

constexpr unsigned kReduceShared = 8192;

std::string ReduceKernel(const ReduceForm& f) {
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pin)\n{\n"
      "  .reg .b32 %r<32>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[" +
      std::to_string(kReduceShared) +
      "];\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pin];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n"
      "  cvt.u64.u32 %rd3, %r20;\n  add.u64 %rd4, %rd2, %rd3;\n  ld.global.b64 %rd5, [%rd4];\n"
      "  st.shared.b64 [%r21], %rd5;\n  add.u32 %r20, %r20, 8;\n  setp.lt.u32 %p2, %r20, " +
      std::to_string(kReduceShared) +
      ";\n  @%p2 bra FILL;\n  fence.proxy.async.shared::cta;\n"
      "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n";
  std::string list = "{";
  for (unsigned i = 0; i < f.rank; ++i) {
    s += "  mov.b32 %r" + std::to_string(10 + i) + ", " + std::to_string(f.coords[i]) + ";\n";
    list += (i ? ", %r" : "%r") + std::to_string(10 + i);
  }
  s += "  cp.reduce.async.bulk.tensor." + std::to_string(f.rank) + "d.global.shared::cta." + f.op +
       ".tile.bulk_group [%rd1, " + list +
       "}], [%r7];\n  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\nDONE:\n  ret;\n}\n";
  return s;
}

// Mixed values of the element type in 32-bit words: integers small (where inc/dec wrap and min/max tie) or anything;
// floats finite of moderate size with some zeros of both signs, infinities and NaNs at fixed places.
std::vector<uint32_t> ReduceValues(CUtensorMapDataType type, size_t words, uint32_t seed) {
  std::vector<uint32_t> v(words);
  for (size_t i = 0; i < words; ++i) {
    const uint32_t h = Mix(uint32_t(i), seed), g = Mix(uint32_t(i), seed + 1);
    uint32_t w = h;
    switch (type) {
      case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: {
        const float x = float(int32_t(h % 4001) - 2000) / (g % 3 == 0 ? 8.0f : 1.0f / 3.0f + float(g % 7));
        std::memcpy(&w, &x, 4);
        if (i % 37 == 5) w = 0x80000000u;
        if (i % 53 == 7) w = 0x7f800000u;
        if (i % 61 == 9) w = 0x7fc00001u;
        break;
      }
      case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
      case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: {
        const bool half = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        uint32_t lohi[2];
        for (int k = 0; k < 2; ++k) {
          const uint32_t r = k ? g : h;
          uint32_t e = half ? (r >> 16) % 20 + 6 : (r >> 16) % 40 + 107;  // exponents well inside the range
          lohi[k] = (r & 0x8000u) | (e << (half ? 10 : 7)) | (r & (half ? 0x3ffu : 0x7fu));
        }
        if (i % 41 == 3) lohi[0] = 0x8000u;
        if (i % 43 == 4) lohi[1] = half ? 0x7c00u : 0x7f80u;
        if (i % 47 == 6) lohi[0] = half ? 0x7e01u : 0x7fc1u;
        w = lohi[0] | lohi[1] << 16;
        break;
      }
      default:
        if (g % 3 == 0) w = h & 15;
        if (g % 5 == 1) w = (h & 7) | 0x80000000u;
        break;
    }
    v[i] = w;
  }
  return v;
}

void RunReduce(const ReduceForm& f) {
  const unsigned eb = conf::TensorMapElementBytes(f.type);
  std::vector<uint32_t> words = ReduceValues(f.type, kTensorBytes / 4, 7);
  const std::vector<uint32_t> shared = ReduceValues(f.type, kReduceShared / 4, 1234);
  conf::DeviceBuffer data(kTensorBytes), in(kReduceShared);
  ASSERT_EQ(cuMemcpyHtoD(data.ptr(), words.data(), kTensorBytes), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoD(in.ptr(), shared.data(), kReduceShared), CUDA_SUCCESS);
  cuuint64_t st[2];
  uint64_t pitch = f.dims[0] * eb;
  for (unsigned i = 0; i + 1 < f.rank; ++i) {
    if (f.strides[0] == 0) pitch = (pitch + 31) / 32 * 32;
    st[i] = f.strides[0] ? f.strides[i] : pitch;
    pitch = st[i] * f.dims[i + 1];
  }
  const cuuint32_t es[3] = {1, 1, 1};
  CUtensorMap m;
  std::memset(&m, 0, sizeof m);
  CU_ASSERT_OK(cuTensorMapEncodeTiled(&m, f.type, f.rank, reinterpret_cast<void*>(data.ptr() + kTensorOffset), f.dims,
                                      st, f.box, es, f.interleave, f.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  const std::string ptx = ReduceKernel(f);
  std::string key = ptx + " type " + std::to_string(int(f.type)) + " il " + std::to_string(int(f.interleave)) + " sw " +
                    std::to_string(int(f.swizzle));
  for (unsigned i = 0; i < f.rank; ++i)
    key += " " + std::to_string(f.dims[i]) + "/" + std::to_string(f.box[i]) +
           (i + 1 < f.rank ? "/" + std::to_string(st[i]) : "");
  const uint64_t hash = conf::Fnv(key.data(), key.size());
  const std::string name = "tensor_reduce_" + f.name;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  std::string log;
  CUresult rc = LoadKernel(ptx, &mod, &fn, &log);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(1, rc), "load");
  conf::DeviceBuffer map(128);
  ASSERT_EQ(cuMemcpyHtoD(map.ptr(), &m, 128), CUDA_SUCCESS);
  CUdeviceptr pmap = map.ptr(), pin = in.ptr();
  void* params[] = {&pmap, &pin};
  rc = conf::Launch1D(fn, 1, 32, params);
  std::vector<uint32_t> after(words.size());
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoH(after.data(), data.ptr(), kTensorBytes);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(2, rc), "launch");
  cuModuleUnload(mod);
  std::vector<uint64_t> outputs;
  for (size_t i = 0; i < words.size(); ++i)
    if (after[i] != words[i]) outputs.push_back(uint64_t(i) << 32 | after[i]);
  CompareGolden(name, hash, outputs, "the tensor words the reduction changed ((index << 32) | value)");
}

// A 2D map whose rows are the swizzle's span (box[0] elements of `type`), 8 rows, at a corner inside the tensor or
// across its edges.
ReduceForm Swizzled(std::string name, std::string op, CUtensorMapDataType type, CUtensorMapSwizzle sw,
                    bool edge = false) {
  ReduceForm f;
  f.name = std::move(name);
  f.op = std::move(op);
  f.type = type;
  f.swizzle = sw;
  const unsigned span = sw == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : sw == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : 128;
  const unsigned eb = conf::TensorMapElementBytes(type);
  f.box[0] = span / eb, f.box[1] = 8;
  f.dims[0] = 3 * f.box[0], f.dims[1] = 12;
  f.coords[0] = edge ? int(f.dims[0] - f.box[0] / 2) : int(f.box[0] / 2);
  f.coords[1] = edge ? 7 : 2;
  return f;
}

// A rank-3 interleaved map (dimension 0 one chunk of the interleave), global strides of 48/496 (16 B) or 96/992 (32 B)
// bytes; box 4 x 3 rows (dimension 1 x 2).
ReduceForm InterleavedReduce(std::string name, std::string op, CUtensorMapDataType type, CUtensorMapInterleave il,
                             CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE) {
  ReduceForm f;
  f.name = std::move(name);
  f.op = std::move(op);
  f.type = type;
  f.rank = 3;
  f.interleave = il;
  f.swizzle = sw;
  const unsigned chunk = il == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  f.dims[0] = chunk / conf::TensorMapElementBytes(type), f.dims[1] = 10, f.dims[2] = 6;
  f.box[0] = unsigned(f.dims[0]), f.box[1] = 4, f.box[2] = 3;
  f.strides[0] = 3 * chunk, f.strides[1] = 31 * chunk;
  f.coords[1] = 7, f.coords[2] = 2;
  return f;
}

std::vector<ReduceForm> ReduceForms() {
  using T = CUtensorMapDataType;
  const T u32 = CU_TENSOR_MAP_DATA_TYPE_UINT32, s32 = CU_TENSOR_MAP_DATA_TYPE_INT32,
          u64 = CU_TENSOR_MAP_DATA_TYPE_UINT64, s64 = CU_TENSOR_MAP_DATA_TYPE_INT64,
          f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
          bf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const auto s32B = CU_TENSOR_MAP_SWIZZLE_32B, s64B = CU_TENSOR_MAP_SWIZZLE_64B, s128B = CU_TENSOR_MAP_SWIZZLE_128B;
  std::vector<ReduceForm> v;
  // every swizzle, and across the tensor's edges
  v.push_back(Swizzled("swizzle_32B_add_u32", "add", u32, s32B));
  v.push_back(Swizzled("swizzle_64B_add_u32", "add", u32, s64B));
  v.push_back(Swizzled("swizzle_128B_add_u32", "add", u32, s128B));
  v.push_back(Swizzled("swizzle_128B_add_u32_edges", "add", u32, s128B, true));
  v.push_back(Swizzled("swizzle_64B_add_f32_edges", "add", f32, s64B, true));
  // the operations on each element type the ISA lists, through a 128-byte swizzle
  const struct {
    const char* op;
    T type;
    const char* typeName;
  } ops[] = {{"add", s32, "s32"},   {"add", u64, "u64"}, {"add", f32, "f32"},   {"add", f16, "f16"},
             {"add", bf16, "bf16"}, {"min", u32, "u32"}, {"min", s32, "s32"},   {"min", u64, "u64"},
             {"min", s64, "s64"},   {"min", f16, "f16"}, {"min", bf16, "bf16"}, {"max", u32, "u32"},
             {"max", s32, "s32"},   {"max", u64, "u64"}, {"max", s64, "s64"},   {"max", f16, "f16"},
             {"max", bf16, "bf16"}, {"inc", u32, "u32"}, {"dec", u32, "u32"},   {"and", u32, "u32"},
             {"and", s32, "s32"},   {"and", u64, "u64"}, {"or", u32, "u32"},    {"or", s32, "s32"},
             {"or", u64, "u64"},    {"xor", u32, "u32"}, {"xor", s32, "s32"},   {"xor", u64, "u64"}};
  for (const auto& o : ops)
    v.push_back(Swizzled(std::string("swizzle_128B_") + o.op + "_" + o.typeName, o.op, o.type, s128B));
  // interleaved maps
  const auto i16 = CU_TENSOR_MAP_INTERLEAVE_16B, i32 = CU_TENSOR_MAP_INTERLEAVE_32B;
  v.push_back(InterleavedReduce("interleave16_min_s32", "min", s32, i16));
  v.push_back(InterleavedReduce("interleave16_xor_u32", "xor", u32, i16));
  v.push_back(InterleavedReduce("interleave16_max_f16", "max", f16, i16));
  v.push_back(InterleavedReduce("interleave16_add_u64", "add", u64, i16));
  v.push_back(InterleavedReduce("interleave32_inc_u32_swizzle_32B", "inc", u32, i32, s32B));
  v.push_back(InterleavedReduce("interleave32_add_f32_swizzle_32B", "add", f32, i32, s32B));
  v.push_back(InterleavedReduce("interleave32_dec_u32", "dec", u32, i32));
  v.push_back(InterleavedReduce("interleave16_add_bf16_swizzle_64B", "add", bf16, i16, s64B));
  return v;
}

// Operations on element types the ISA does not list for them (each in a process of its own).
std::vector<ReduceForm> ReduceFaultForms() {
  using T = CUtensorMapDataType;
  const T s32 = CU_TENSOR_MAP_DATA_TYPE_INT32, u64 = CU_TENSOR_MAP_DATA_TYPE_UINT64,
          s64 = CU_TENSOR_MAP_DATA_TYPE_INT64, f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
          f64 = CU_TENSOR_MAP_DATA_TYPE_FLOAT64, f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const auto s128B = CU_TENSOR_MAP_SWIZZLE_128B;
  std::vector<ReduceForm> v;
  v.push_back(Swizzled("swizzle_128B_add_s64", "add", s64, s128B));
  for (const char* op : {"and", "or", "xor"})
    v.push_back(Swizzled(std::string("swizzle_128B_") + op + "_s64", op, s64, s128B));
  v.push_back(Swizzled("swizzle_128B_add_f64", "add", f64, s128B));
  v.push_back(Swizzled("swizzle_128B_min_f32", "min", f32, s128B));
  v.push_back(Swizzled("swizzle_128B_inc_s32", "inc", s32, s128B));
  v.push_back(Swizzled("swizzle_128B_dec_u64", "dec", u64, s128B));
  v.push_back(Swizzled("swizzle_128B_and_f16", "and", f16, s128B));
  v.push_back(Swizzled("swizzle_128B_and_u8", "and", CU_TENSOR_MAP_DATA_TYPE_UINT8, s128B));
  return v;
}

// ---- NaNs, infinities and subnormals in float reductions ---------------------------------------------------------
// cp.reduce.async.bulk .add.f32/.f64 from shared memory into global memory, and red.global.add.f32/.f64 (one thread
// per element), on 64 bytes of pairs (old value, operand) that name NaN payloads, signalling NaNs, infinities of both
// signs, signed zeros, subnormals and round-to-even ties. The outputs are the 64 bytes afterwards, as 64-bit words.
struct NanForm {
  std::string name;
  bool bulk = true;
  bool f64 = false;
  // the per-thread forms: red or atom (returning the old value), on global or shared memory (the old values copied
  // in and the results copied out), generic addressing of global memory
  std::string instruction = "red.global";
  bool shared = false;
};

std::string NanKernel(const NanForm& f) {
  const std::string type = f.f64 ? "f64" : "f32";
  std::string s =
      ".version 8.3\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
      "  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<4>;\n  .reg .f64 %fd<4>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 128 .b8 src[64];\n"
      "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n  mov.u32 %r1, %tid.x;\n";
  if (f.bulk)
    return s +
           "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n  mov.u32 %r3, src;\n"
           "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1];\n  st.shared.v4.u32 [%r3], {%r4, %r5, %r6, %r7};\n"
           "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+16];\n  st.shared.v4.u32 [%r3+16], {%r4, %r5, %r6, %r7};\n"
           "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+32];\n  st.shared.v4.u32 [%r3+32], {%r4, %r5, %r6, %r7};\n"
           "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+48];\n  st.shared.v4.u32 [%r3+48], {%r4, %r5, %r6, %r7};\n"
           "  fence.proxy.async.shared::cta;\n"
           "  cp.reduce.async.bulk.global.shared::cta.bulk_group.add." +
           type +
           " [%rd2], [%r3], 64;\n  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\nDONE:\n  ret;\n}\n";
  const unsigned bytes = f.f64 ? 8 : 4;
  const std::string value = f.f64 ? "%fd" : "%f", load = "  ld.global." + type + " " + value + "1, [%rd4];\n";
  const bool atom = f.instruction.starts_with("atom");
  // atom's old value goes to register 2 and is stored after the result, 64 bytes on
  const std::string rmw = atom ? "  " + f.instruction + ".add." + type + " " + value + "2, [ADDR], " + value + "1;\n"
                               : "  " + f.instruction + ".add." + type + " [ADDR], " + value + "1;\n";
  auto at = [&](const std::string& address) {
    std::string r = rmw;
    r.replace(r.find("ADDR"), 4, address);
    return r;
  };
  std::string body = "  setp.ge.u32 %p1, %r1, " + std::to_string(64 / bytes) +
                     ";\n  @%p1 bra DONE;\n  mul.wide.u32 %rd3, %r1, " + std::to_string(bytes) +
                     ";\n  add.u64 %rd4, %rd1, %rd3;\n  add.u64 %rd5, %rd2, %rd3;\n" + load;
  if (f.shared) {
    body += "  mov.u32 %r3, src;\n  mul.lo.u32 %r4, %r1, " + std::to_string(bytes) + ";\n  add.u32 %r5, %r3, %r4;\n" +
            "  ld.global." + type + " " + value + "3, [%rd5];\n  st.shared." + type + " [%r5], " + value + "3;\n" +
            at("%r5") + "  ld.shared." + type + " " + value + "3, [%r5];\n  st.global." + type + " [%rd5], " + value +
            "3;\n";
  } else {
    body += at("%rd5");
  }
  if (atom) body += "  st.global." + type + " [%rd5+64], " + value + "2;\n";
  return s + body + "DONE:\n  ret;\n}\n";
}

void RunNan(const NanForm& f) {
  // (old value, operand) pairs
  static const uint32_t kPairs32[16][2] = {
      {0x7fc00001u, 0x3f800000u}, {0x3f800000u, 0x7fc00002u}, {0x7f800000u, 0xff800000u}, {0x7fc00003u, 0xffc00004u},
      {0x7f800001u, 0x3f800000u}, {0xffc00000u, 0x00000000u}, {0x7f800000u, 0x3f800000u}, {0x80000000u, 0x80000000u},
      {0x80000000u, 0x00000000u}, {0x00000001u, 0x00000001u}, {0x00800000u, 0x80000001u}, {0x007fffffu, 0x00000001u},
      {0x7f7fffffu, 0x7f7fffffu}, {0x3f800000u, 0x33800000u}, {0x3f800001u, 0x33800000u}, {0x3f800000u, 0x32ffffffu}};
  static const uint64_t kPairs64[8][2] = {
      {0x7ff8000000000001ull, 0x3ff0000000000000ull}, {0x7ff0000000000000ull, 0xfff0000000000000ull},
      {0x7ff8000000000003ull, 0xfff8000000000004ull}, {0x7ff0000000000001ull, 0x3ff0000000000000ull},
      {0x0000000000000001ull, 0x0000000000000001ull}, {0x8000000000000000ull, 0x8000000000000000ull},
      {0x3ff0000000000000ull, 0x3ca0000000000000ull}, {0x3ff0000000000001ull, 0x3ca0000000000000ull}};
  std::vector<uint8_t> old(64), operand(64);
  for (unsigned i = 0; i < 16; ++i) {
    if (f.f64 && i < 8) {
      std::memcpy(&old[8 * i], &kPairs64[i][0], 8);
      std::memcpy(&operand[8 * i], &kPairs64[i][1], 8);
    } else if (!f.f64) {
      std::memcpy(&old[4 * i], &kPairs32[i][0], 4);
      std::memcpy(&operand[4 * i], &kPairs32[i][1], 4);
    }
  }
  const std::string ptx = NanKernel(f);
  const uint64_t hash = conf::Fnv(old.data(), 64, conf::Fnv(operand.data(), 64, conf::Fnv(ptx.data(), ptx.size())));
  const std::string name = "float_reduce_" + f.name;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  std::string log;
  CUresult rc = LoadKernel(ptx, &mod, &fn, &log);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(1, rc), "load");
  conf::DeviceBuffer in(64), out(128);
  ASSERT_EQ(cuMemcpyHtoD(in.ptr(), operand.data(), 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoD(out.ptr(), old.data(), 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(out.ptr() + 64, 0, 64), CUDA_SUCCESS);
  CUdeviceptr pin = in.ptr(), pout = out.ptr();
  void* params[] = {&pin, &pout};
  rc = conf::Launch1D(fn, 1, 32, params);
  const bool atom = f.instruction.starts_with("atom");
  const size_t bytes = atom ? 128 : 64;
  std::vector<uint8_t> got(bytes);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoH(got.data(), out.ptr(), bytes);
  if (rc != CUDA_SUCCESS) return CompareGolden(name, hash, Failed(2, rc), "launch");
  cuModuleUnload(mod);
  std::vector<uint64_t> outputs(bytes / 8);
  std::memcpy(outputs.data(), got.data(), bytes);
  CompareGolden(name, hash, outputs,
                atom ? "the 64 bytes after the atomics, then the old values they returned, as 64-bit words"
                     : "the 64 bytes after the reduction, as 64-bit words");
}

std::vector<NanForm> NanForms() {
  return {{"bulk_add_f32", true, false},
          {"bulk_add_f64", true, true},
          {"red_global_add_f32", false, false},
          {"red_global_add_f64", false, true},
          {"atom_global_add_f32", false, false, "atom.global"},
          {"atom_global_add_f64", false, true, "atom.global"},
          {"atom_generic_add_f32", false, false, "atom"},
          {"red_shared_add_f32", false, false, "red.shared", true},
          {"red_shared_add_f64", false, true, "red.shared", true},
          {"atom_shared_add_f32", false, false, "atom.shared", true},
          {"atom_shared_add_f64", false, true, "atom.shared", true}};
}

template <class F> std::string FormName(const testing::TestParamInfo<F>& i) { return i.param.name; }

class ptx_cluster_TensorMulticast : public conf::ContextTest, public testing::WithParamInterface<MulticastForm> {};
TEST_P(ptx_cluster_TensorMulticast, Golden) { RunMulticast(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_cluster_TensorMulticast, testing::ValuesIn(MulticastForms()),
                         FormName<MulticastForm>);

class ptx_cluster_TensorMulticast_Faults : public conf::ContextTest,
                                           public testing::WithParamInterface<MulticastForm> {};
TEST_P(ptx_cluster_TensorMulticast_Faults, Golden) { RunMulticast(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_cluster_TensorMulticast_Faults, testing::ValuesIn(MulticastFaultForms()),
                         FormName<MulticastForm>);

class ptx_cluster_AsyncStore : public conf::ContextTest, public testing::WithParamInterface<AsyncForm> {};
TEST_P(ptx_cluster_AsyncStore, Golden) { RunAsync(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_cluster_AsyncStore, testing::ValuesIn(AsyncForms()), FormName<AsyncForm>);

class ptx_cluster_AsyncStore_Faults : public conf::ContextTest, public testing::WithParamInterface<AsyncForm> {};
TEST_P(ptx_cluster_AsyncStore_Faults, Golden) { RunAsync(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_cluster_AsyncStore_Faults, testing::ValuesIn(AsyncFaultForms()), FormName<AsyncForm>);

class ptx_async_TensorReduce : public conf::ContextTest, public testing::WithParamInterface<ReduceForm> {};
TEST_P(ptx_async_TensorReduce, Golden) { RunReduce(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_TensorReduce, testing::ValuesIn(ReduceForms()), FormName<ReduceForm>);

class ptx_async_TensorReduce_Faults : public conf::ContextTest, public testing::WithParamInterface<ReduceForm> {};
TEST_P(ptx_async_TensorReduce_Faults, Golden) { RunReduce(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_TensorReduce_Faults, testing::ValuesIn(ReduceFaultForms()),
                         FormName<ReduceForm>);

class ptx_async_FloatReduce : public conf::ContextTest, public testing::WithParamInterface<NanForm> {};
TEST_P(ptx_async_FloatReduce, Golden) { RunNan(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_FloatReduce, testing::ValuesIn(NanForms()), FormName<NanForm>);

}  // namespace
