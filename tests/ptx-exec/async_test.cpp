// Asynchronous copies and mbarrier objects (issue 18): nvcc-built programs (kernels/async.cu, PTX for sm_80 and
// sm_90) give the host's results in every schedule; bad operands fault with the right kind instead of touching
// memory. What the instructions compute is checked against an H100 by the conformance cases ptx.async.*.
#include "harness.h"
#include "ptx/tensor_map.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena(size_t(64) << 20);
  return *a;
}

const Program& program(const std::string& file) {
  static std::map<std::string, std::shared_ptr<const Program>> cache;
  auto& p = cache[file];
  if (!p) {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + file));
    if (!r.program) throw std::runtime_error(r.error);
    p = r.program;
  }
  return *p;
}

struct Schedule {
  const char* name;
  ExecConfig config;
};
const Schedule kSchedules[] = {
    {"1 thread", ExecConfig{1, false, 0, 0}},
    {"2 threads", ExecConfig{2, false, 0, 0}},
    {"deterministic", ExecConfig{1, true, 0, 0}},
    {"shuffled (seed 5)", ExecConfig{1, true, 5, 0}},
};

// The sm_80 build (cp.async, mbarrier test_wait loops) and the sm_90 one (bulk copies, expect_tx, try_wait).
class PtxAsync : public testing::TestWithParam<const char*> {
 protected:
  const Program& prog() { return program(GetParam()); }
  const KernelInfo& info(const char* name) { return kernels(prog())[size_t(findKernel(prog(), name))]; }
  LaunchResult run(const char* name, Dim3 grid, Dim3 block, const Params& p, const ExecConfig& config) {
    EXPECT_EQ(info(name).unsupported, "");
    LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
    lp.config = config;
    std::vector<uint64_t> globals = ptxtest::allocateGlobals(prog(), arena());  // -G builds have some
    lp.globalAddresses = globals.data();
    return launch(prog(), findKernel(prog(), name), lp);
  }
};

std::vector<float> gemm(const std::vector<float>& a, const std::vector<float>& b, int n, int validColumns) {
  std::vector<float> c(size_t(n) * n);
  for (int r = 0; r < n; ++r)
    for (int col = 0; col < n; ++col) {
      float s = 0;
      for (int k = 0; k < validColumns; ++k) s += a[size_t(r) * n + k] * b[size_t(k) * n + col];
      c[size_t(r) * n + col] = s;
    }
  return c;
}

TEST_P(PtxAsync, DoubleBufferedGemm) {
  const int n = 64;
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[size_t(i)] = float((i * 7) % 9) - 4;
    b[size_t(i)] = float((i * 5) % 7) - 3;
  }
  std::vector<float> want = gemm(a, b, n, n);
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  float* dc = arena().alloc<float>(n * n);
  for (const Schedule& s : kSchedules) {
    std::fill(dc, dc + n * n, -1.0f);
    Params p(info("gemm_pipeline"));
    p.arg(da).arg(db).arg(dc).arg(n);
    LaunchResult r = run("gemm_pipeline", Dim3{n / 16, n / 16}, Dim3{16, 16}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < n * n; ++i) ASSERT_EQ(dc[i], want[size_t(i)]) << s.name << " at " << i;
  }
}

// 16-byte copies whose source size cuts A's rows at column `valid`: the rest of each copy is zeros.
TEST_P(PtxAsync, DoubleBufferedGemmWithZeroFill) {
  const int n = 64, valid = 50;
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[size_t(i)] = float((i * 3) % 11) - 5;
    b[size_t(i)] = float((i * 13) % 5) - 2;
  }
  std::vector<float> want = gemm(a, b, n, valid);
  float* da = arena().upload(a);
  float* db = arena().upload(b);
  float* dc = arena().alloc<float>(n * n);
  for (const Schedule& s : kSchedules) {
    Params p(info("gemm_pipeline_zfill"));
    p.arg(da).arg(db).arg(dc).arg(n).arg(valid);
    LaunchResult r = run("gemm_pipeline_zfill", Dim3{n / 16, n / 16}, Dim3{16, 16}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < n * n; ++i) ASSERT_EQ(dc[i], want[size_t(i)]) << s.name << " at " << i;
  }
}

TEST_P(PtxAsync, CudaBarrierMemcpyAsync) {
  const int blocks = 8;
  std::vector<int> in(blocks * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int(i * 31 % 1000) - 500;
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(2 * blocks * 256);
  for (const Schedule& s : kSchedules) {
    Params p(info("barrier_memcpy"));
    p.arg(din).arg(dout);
    LaunchResult r = run("barrier_memcpy", Dim3{blocks}, Dim3{256}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < blocks * 256; ++i) ASSERT_EQ(dout[i], 2 * in[size_t(i)] + i / 256) << s.name << " at " << i;
    for (int i = 0; i < blocks * 256; ++i)
      ASSERT_EQ(dout[blocks * 256 + i], ((i % 256 + 1) % 256) * 3) << s.name << " second phase at " << i;
  }
}

TEST_P(PtxAsync, CudaPipelineBlockScope) {
  const int chunks = 7;
  std::vector<int> in(chunks * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int(i * 17 % 301);
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(chunks * 256);
  for (const Schedule& s : kSchedules) {
    Params p(info("pipeline_stream"));
    p.arg(din).arg(dout).arg(chunks);
    LaunchResult r = run("pipeline_stream", Dim3{1}, Dim3{256}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < chunks * 256; ++i) ASSERT_EQ(dout[i], in[size_t(i)] + 1) << s.name << " at " << i;
  }
}

TEST_P(PtxAsync, CudaPipelineThreadScope) {
  const int blocks = 4, n = 2 * blocks * 128 * 4;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[size_t(i)] = i * 3 - 700;
  int* din = arena().upload(in);
  int* dout = arena().alloc<int>(n);
  for (const Schedule& s : kSchedules) {
    Params p(info("pipeline_thread"));
    p.arg(din).arg(dout);
    LaunchResult r = run("pipeline_thread", Dim3{blocks}, Dim3{128}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < n; ++i) ASSERT_EQ(dout[i], in[size_t(i)] * 5) << s.name << " at " << i;
  }
}

TEST_P(PtxAsync, CooperativeGroupsMemcpyAsync) {
  const int blocks = 3;
  std::vector<unsigned> in(blocks * 512);
  for (size_t i = 0; i < in.size(); ++i) in[i] = unsigned(i * 2654435761u);
  unsigned* din = arena().upload(in);
  unsigned* dout = arena().alloc<unsigned>(blocks * 512);
  for (const Schedule& s : kSchedules) {
    Params p(info("cg_memcpy"));
    p.arg(din).arg(dout);
    LaunchResult r = run("cg_memcpy", Dim3{blocks}, Dim3{256}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (int i = 0; i < blocks * 512; ++i) ASSERT_EQ(dout[i], in[size_t(i)] ^ 0x5a5au) << s.name << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, PtxAsync, testing::Values("async_sm80.ptx", "async_sm90.ptx"),
                         [](const testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param).substr(6, 4);
                         });

// ---- bad operands -------------------------------------------------------------------------------------------

// One-thread-per-lane kernel k(in, out) around `body`; %r1 = %tid.x, %rd1 = in, %rd2 = out, shared `sbuf` (256
// bytes) at %r3, an mbarrier `bar` at %r10.
LaunchResult runBody(const std::string& body, uint32_t threads, void* in, void* out, Fault* unsupported = nullptr) {
  std::string text =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
      "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<4>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<32>;\n"
      "\t.shared .align 16 .b8 sbuf[256];\n\t.shared .align 8 .b64 bar;\n"
      "\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n\tmov.u32 %r1, %tid.x;\n"
      "\tmov.u32 %r3, sbuf;\n\tmov.u32 %r10, bar;\n" +
      body + "\n\tret;\n}\n";
  auto c = compile(text);
  if (!c.program) {
    ADD_FAILURE() << c.error << "\n" << text;
    return {};
  }
  const KernelInfo& k = kernels(*c.program)[0];
  if (unsupported) unsupported->message = k.unsupported;
  Params p(k);
  p.arg(in).arg(out);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{threads}, p, arena());
  lp.config = ExecConfig{1, false, 0, 0};
  return launch(*c.program, 0, lp);
}

TEST(PtxAsyncFaults, CpAsyncMisalignedSharedDestination) {
  auto* in = arena().alloc<uint8_t>(4096);
  LaunchResult r = runBody(
      "\tshl.b32 %r4, %r1, 4;\n\tadd.u32 %r4, %r4, %r3;\n\tadd.u32 %r4, %r4, 8;\n"
      "\tcp.async.cg.shared.global [%r4], [%rd1], 16;\n\tcp.async.wait_all;",
      8, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 0u);
}

TEST(PtxAsyncFaults, CpAsyncSourceOutsideDeviceMemory) {
  auto* in = arena().alloc<uint8_t>(4096);
  // lane 2 reads right after the end of a one-page allocation; lanes 0 and 1 read inside it
  LaunchResult r = runBody(
      "\tshl.b32 %r4, %r1, 4;\n\tadd.u32 %r5, %r4, %r3;\n\tmul.wide.u32 %rd3, %r1, 2048;\n"
      "\tadd.u64 %rd3, %rd3, %rd1;\n\tcp.async.ca.shared.global [%r5], [%rd3], 16;\n"
      "\tcp.async.commit_group;\n\tcp.async.wait_group 0;",
      4, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 2u);
}

TEST(PtxAsyncFaults, CpAsyncWithZeroSourceSizeReadsNothing) {
  auto* out = arena().alloc<uint32_t>(64);
  // the source is a null pointer, but src-size 0 (and ignore-src true) copy only zeros
  LaunchResult r = runBody(
      "\tmov.u64 %rd3, 0;\n\tsetp.eq.u32 %p1, %r1, %r1;\n\tshl.b32 %r4, %r1, 4;\n"
      "\tadd.u32 %r5, %r4, %r3;\n\tst.shared.v4.u32 [%r5], {%r1, %r1, %r1, %r1};\n"
      "\tcp.async.cg.shared.global [%r5], [%rd3], 16, 0;\n"
      "\tcp.async.ca.shared.global [%r5], [%rd3], 8, %p1;\n\tcp.async.wait_all;\n"
      "\tld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r5];\n\tor.b32 %r6, %r6, %r7;\n"
      "\tor.b32 %r6, %r6, %r8;\n\tor.b32 %r6, %r6, %r9;\n\tmul.wide.u32 %rd4, %r1, 4;\n"
      "\tadd.u64 %rd4, %rd4, %rd2;\n\tadd.u32 %r6, %r6, 7;\n\tst.global.u32 [%rd4], %r6;",
      16, out, out);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 7u) << i;
}

TEST(PtxAsyncFaults, MbarrierOutsideSharedMemory) {
  auto* buf = arena().alloc<uint64_t>(8);
  // a generic address of global memory is no mbarrier object
  LaunchResult r = runBody("\tmbarrier.init.b64 [%rd1], 1;", 1, buf, buf);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  LaunchResult m = runBody("\tadd.u32 %r4, %r10, 4;\n\tmbarrier.arrive.shared.b64 %rd3, [%r4];", 1, buf, buf);
  EXPECT_EQ(m.fault.kind, FaultKind::MisalignedAddress) << m.fault.message;
}

TEST(PtxAsyncFaults, BulkCopyOfPartialBlock) {
  auto* in = arena().alloc<uint8_t>(4096);
  LaunchResult r = runBody(
      "\tmbarrier.init.shared.b64 [%r10], 1;\n"
      "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 24, [%r10];",
      1, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress) << r.fault.message;
  LaunchResult o = runBody(
      "\tmbarrier.init.shared.b64 [%r10], 1;\n"
      "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 512, [%r10];",
      1, in, in);
  EXPECT_EQ(o.fault.kind, FaultKind::IllegalAddress) << o.fault.message;  // past the 256 bytes of shared memory
}

// A warp that try_waits on a phase other warps complete stops instead of spinning: with the other warps of the CTA
// behind it in a one-thread schedule, the wait still ends, and the waiting warp sees the data written before the
// arrivals.
TEST(PtxAsyncFaults, TryWaitLetsTheArrivingWarpsRun) {
  auto* out = arena().alloc<uint32_t>(128);
  LaunchResult r = runBody(
      "\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra INIT_DONE;\n\tmbarrier.init.shared.b64 [%r10], 64;\n"
      "INIT_DONE:\n\tbar.sync 0;\n\tsetp.lt.u32 %p2, %r1, 32;\n\t@%p2 bra WAIT;\n"
      "\tsub.u32 %r4, %r1, 32;\n\tshl.b32 %r5, %r4, 2;\n\tadd.u32 %r5, %r5, %r3;\n"
      "\tmul.lo.u32 %r6, %r4, 9;\n\tst.shared.u32 [%r5], %r6;\n"
      "\tmbarrier.arrive.release.cta.shared::cta.b64 %rd3, [%r10];\n\tbra.uni DONE;\n"
      "WAIT:\n\tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p3, [%r10], 0;\n"
      "\t@!%p3 bra WAIT;\n\tshl.b32 %r5, %r1, 3;\n\tadd.u32 %r5, %r5, %r3;\n"
      "\tld.shared.u32 %r6, [%r5];\n\tmul.wide.u32 %rd4, %r1, 4;\n\tadd.u64 %rd4, %rd4, %rd2;\n"
      "\tst.global.u32 [%rd4], %r6;\nDONE:",
      96, out, out);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], 2 * i * 9) << i;
}

// The im2col::w and gather/scatter modes (compute capability 10) are not modelled: the kernel names the form.
// (Multicast tensor copies are: cluster_test.cpp; the im2col mode: conformance ptx.async_TensorCopy.*.)
TEST(PtxAsyncFaults, WideIm2colTensorCopiesAreReportedUnsupported) {
  auto* buf = arena().alloc<uint8_t>(4096);
  Fault why;
  LaunchResult r = runBody(
      "\tmov.u16 %rs1, 1;\n"
      "\tcp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes"
      " [%r3], [%rd1, {%r1, %r1, %r1}], [%r10], {%rs1, %rs1};",
      1, buf, buf, &why);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(why.message.find("cp.async.bulk.tensor"), std::string::npos) << why.message;
  EXPECT_NE(why.message.find("tile and im2col modes"), std::string::npos) << why.message;
}

// ---- tensor copies (tile mode) ----------------------------------------------------------------------------------
// Not recorded on a GPU: the layout rules are the PTX ISA's (dense boxes, dimension 0 innermost, elementStrides
// traversal, zero fill outside the tensor, the 16-byte-chunk swizzle patterns) and the interpreter reads the tensor
// map the driver encodes (ptx/tensor_map.h).
namespace tensor {

const char* kKernel = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .align 64 .b8 mapA[128], .param .align 64 .b8 mapB[128], .param .u64 pout,
                  .param .s32 x0, .param .s32 y0, .param .s32 x1, .param .s32 y1, .param .u32 mode, .param .u32 bytes)
{
	.reg .pred %p<8>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<16>;
	.shared .align 1024 .b8 sbuf[4096];
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd2, [pout];
	ld.param.u32 %r2, [x0];
	ld.param.u32 %r3, [y0];
	ld.param.u32 %r4, [x1];
	ld.param.u32 %r5, [y1];
	ld.param.u32 %r6, [mode];
	ld.param.u32 %r7, [bytes];
	mov.u64 %rd1, mapA;
	mov.u64 %rd4, mapB;
	cvta.param.u64 %rd4, %rd4;
	mov.u32 %r10, bar;
	mov.u32 %r11, sbuf;
	mbarrier.init.shared::cta.b64 [%r10], 1;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r10], %r7;
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r11], [%rd1, {%r2, %r3}], [%r10];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r10], 0;
	@!%p1 bra WAIT;
	mov.u32 %r12, 0;
COPY:
	add.u32 %r13, %r11, %r12;
	ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r13];
	cvt.u64.u32 %rd5, %r12;
	add.u64 %rd6, %rd2, %rd5;
	st.global.v4.u32 [%rd6], {%r20, %r21, %r22, %r23};
	add.u32 %r12, %r12, 16;
	setp.lt.u32 %p2, %r12, 4096;
	@%p2 bra COPY;
	fence.proxy.async.shared::cta;
	setp.eq.u32 %p3, %r6, 1;
	@%p3 cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd4, {%r4, %r5}], [%r11];
	setp.eq.u32 %p4, %r6, 2;
	@%p4 cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd4, {%r4, %r5}], [%r11];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	ret;
}
)";

struct Map {
  alignas(64) uint8_t bytes[128] = {};
};

// A width x height tensor of 4-byte elements (f32 when isFloat, else u32) at data.
Map encode(const void* data, uint32_t width, uint32_t height, uint32_t pitchBytes, uint16_t boxW, uint16_t boxH,
           uint8_t strideX = 1, uint8_t swizzle = 0, uint8_t oobFill = 0) {
  ptx::TensorMap e;
  e.dataType = ptx::TensorMapType::f32;
  e.rank = 2;
  e.swizzle = swizzle;
  e.oobFill = oobFill;
  e.address = reinterpret_cast<uint64_t>(data);
  e.dims[0] = width;
  e.dims[1] = height;
  e.strides[0] = pitchBytes;
  e.box[0] = boxW;
  e.box[1] = boxH;
  e.elementStrides[0] = strideX;
  e.elementStrides[1] = 1;
  Map m;
  ptx::encodeTensorMap(e, m.bytes);
  return m;
}

struct Run {
  LaunchResult result;
  std::vector<uint32_t> shared;  // the 4096 bytes of shared memory after the load
};

// sm120: the kernel built for sm_120a (PTX 8.7), whose tensor copies take the packed 4/6-bit types.
Run run(const Map& a, const Map& b, int x0, int y0, int x1, int y1, uint32_t mode, uint32_t bytes, bool sm120 = false) {
  static std::shared_ptr<const Program> progs[2] = {nullptr, nullptr};
  std::shared_ptr<const Program>& prog = progs[sm120];
  if (!prog) {
    std::string text = kKernel;
    const std::string sm90 = ".version 8.0\n.target sm_90\n";
    if (sm120) text.replace(text.find(sm90), sm90.size(), ".version 8.7\n.target sm_120a\n");
    auto r = compile(text);
    if (!r.program) throw std::runtime_error(r.error);
    prog = r.program;
  }
  const KernelInfo& k = kernels(*prog)[0];
  EXPECT_EQ(k.unsupported, "");
  auto* out = arena().alloc<uint32_t>(1024);
  Params p(k);
  p.arg(a).arg(b).arg(out).arg(x0).arg(y0).arg(x1).arg(y1).arg(mode).arg(bytes);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{1}, p, arena());
  lp.config = ExecConfig{1, false, 0, 0};
  Run r;
  r.result = launch(*prog, 0, lp);
  r.shared.assign(out, out + 1024);
  return r;
}

float value(uint32_t x, uint32_t y) { return float(y * 1000 + x); }

}  // namespace tensor

// The packed types of sm_100/sm_120 (cuda.h's 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B; not measured on a GPU):
// dimension 0 counts 4- or 6-bit elements, a box row is units of 16 of them, packed in global memory (8 or 12 bytes)
// and in shared memory packed (ALIGN8B) or each unit padded to 16 bytes with zeros (ALIGN16B, the layout ldmatrix's
// .b4x16_p64/.b6x16_p32 read); units past the tensor load as zeros; the mbarrier gets the units' data bytes; a store
// writes the units' data bytes back, not the padding. Code for sm_90 (an H100) takes no such map.
TEST(PtxAsyncTensor, PackedTypesMoveUnitsOf16Elements) {
  struct Form {
    ptx::TensorMapType type;
    uint32_t width, pitch, boxW;  // elements, bytes, elements
    int x0;
    unsigned globalUnit, sharedUnit;
  };
  const Form forms[] = {
      {ptx::TensorMapType::u4x16, 96, 64, 64, 48, 8, 8},             // units 3..6 of a 6-unit row: 2 past the end
      {ptx::TensorMapType::u4x16Padded, 256, 128, 128, 128, 8, 16},  // units 8..15 of a 16-unit row
      {ptx::TensorMapType::u6x16Padded, 128, 96, 128, 0, 12, 16},    // a whole row
  };
  for (const Form& f : forms) {
    SCOPED_TRACE(int(f.type));
    const uint32_t height = 4, units = f.boxW / 16, rowBytes = units * f.sharedUnit;
    std::vector<uint8_t> t(f.pitch * height);
    for (size_t i = 0; i < t.size(); ++i) t[i] = uint8_t(i * 7 + 3);
    uint8_t* data = arena().upload(t);
    uint8_t* copy = arena().alloc<uint8_t>(t.size());
    std::memset(copy, 0xee, t.size());
    auto encode = [&](const void* address) {
      ptx::TensorMap e;
      e.dataType = f.type;
      e.rank = 2;
      e.address = reinterpret_cast<uint64_t>(address);
      e.dims[0] = f.width;
      e.dims[1] = height;
      e.strides[0] = f.pitch;
      e.box[0] = uint16_t(f.boxW);
      e.box[1] = 2;
      tensor::Map m;
      ptx::encodeTensorMap(e, m.bytes);
      return m;
    };
    const tensor::Map a = encode(data), b = encode(copy);
    // the transaction: the units' data bytes (what CUTLASS's sm_120 kernels expect), not the padded ones
    tensor::Run r = tensor::run(a, b, f.x0, 1, f.x0, 1, 1, 2 * units * f.globalUnit, true);
    ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
    const auto* shared = reinterpret_cast<const uint8_t*>(r.shared.data());
    for (unsigned row = 0; row < 2; ++row)
      for (unsigned u = 0; u < units; ++u)
        for (unsigned k = 0; k < f.sharedUnit; ++k) {
          const unsigned unit = unsigned(f.x0) / 16 + u;
          const bool inside = unit * 16 < f.width && k < f.globalUnit;
          const uint8_t want = inside ? t[(1 + row) * f.pitch + unit * f.globalUnit + k] : 0;
          EXPECT_EQ(shared[row * rowBytes + u * f.sharedUnit + k], want)
              << "row " << row << " unit " << u << " byte " << k;
        }
    // the store: the units inside the tensor, data bytes only; everything else keeps 0xee
    for (size_t i = 0; i < t.size(); ++i) {
      const size_t row = i / f.pitch, unit = i % f.pitch / f.globalUnit;
      const bool written = (row == 1 || row == 2) && unit * 16 < f.width && unit >= unsigned(f.x0) / 16 &&
                           unit < unsigned(f.x0) / 16 + units && i % f.pitch < f.width * (f.globalUnit / 2) / 8;
      EXPECT_EQ(copy[i], written ? t[i] : 0xee) << "byte " << i;
    }
  }
  // sm_90 code: the type is no tensor map's
  std::vector<uint8_t> t(256);
  ptx::TensorMap e;
  e.dataType = ptx::TensorMapType::u4x16;
  e.rank = 2;
  e.address = reinterpret_cast<uint64_t>(arena().upload(t));
  e.dims[0] = 64;
  e.dims[1] = 4;
  e.strides[0] = 64;
  e.box[0] = 64;
  e.box[1] = 1;
  tensor::Map m;
  ptx::encodeTensorMap(e, m.bytes);
  tensor::Run r = tensor::run(m, m, 0, 0, 0, 0, 0, 32);
  EXPECT_EQ(r.result.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.result.fault.message.find("not a tensor map"), std::string::npos) << r.result.fault.message;
}

// A tensor copy whose coordinate is a CTA index times a constant that nothing else reads: cta-indices makes such a
// register one the CTA set-up writes, and must see that the copy reads it although it stands in a vector inside the
// brackets of `[map, {x, y}]` (it did not: the set-up skipped it and every CTA loaded the box of CTA 0; CUTLASS's
// warp-specialised Hopper GEMM, example 49, failed its check). Each of 4 CTAs loads the 8 x 2 box at x = 8 %ctaid.x.
TEST(PtxAsyncTensor, CtaIndexCoordinates) {
  const char* ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .align 64 .b8 map[128], .param .u64 pout)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .shared .align 128 .b8 sbuf[64];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd2, [pout];
  mov.u64 %rd1, map;
  mov.u32 %r10, bar;
  mov.u32 %r11, sbuf;
  mov.u32 %r1, %ctaid.x;
  shl.b32 %r2, %r1, 3;
  mov.u32 %r3, 0;
  mbarrier.init.shared::cta.b64 [%r10], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r10], 64;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r11], [%rd1, {%r2, %r3}], [%r10];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r10], 0;
  @!%p1 bra WAIT;
  mov.u32 %r4, %ctaid.x;
  mul.wide.u32 %rd4, %r4, 64;
  add.s64 %rd5, %rd2, %rd4;
  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r11];
  st.global.v4.u32 [%rd5], {%r5, %r6, %r7, %r8};
  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r11+16];
  st.global.v4.u32 [%rd5+16], {%r5, %r6, %r7, %r8};
  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r11+32];
  st.global.v4.u32 [%rd5+32], {%r5, %r6, %r7, %r8};
  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r11+48];
  st.global.v4.u32 [%rd5+48], {%r5, %r6, %r7, %r8};
  ret;
}
)";
  CompileResult cr = compile(ptx);
  ASSERT_TRUE(cr.program) << cr.error;
  std::vector<float> t(32 * 2);
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 32; ++x) t[y * 32 + x] = tensor::value(x, y);
  float* data = arena().upload(t);
  tensor::Map map = tensor::encode(data, 32, 2, 32 * 4, 8, 2);
  auto* out = arena().alloc<float>(4 * 16);
  Params p(kernels(*cr.program)[0]);
  p.arg(map).arg(out);
  LaunchResult r = launch(*cr.program, 0, ptxtest::launchParams(Dim3{4}, Dim3{1}, p, arena()));
  ASSERT_TRUE(r.ok()) << r.fault.message;
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t y = 0; y < 2; ++y)
      for (uint32_t x = 0; x < 8; ++x)
        EXPECT_EQ(out[c * 16 + y * 8 + x], tensor::value(8 * c + x, y)) << "CTA " << c << " at " << x << "," << y;
}

// A 16 x 8 box at (-4, 25) of a 40 x 30 tensor (rows padded to 48 elements): the elements outside are zeros.
TEST(PtxAsyncTensor, LoadFillsOutsideWithZeros) {
  std::vector<float> t(48 * 30, -1.0f);
  for (uint32_t y = 0; y < 30; ++y)
    for (uint32_t x = 0; x < 40; ++x) t[y * 48 + x] = tensor::value(x, y);
  float* data = arena().upload(t);
  tensor::Map a = tensor::encode(data, 40, 30, 48 * 4, 16, 8);
  tensor::Run r = tensor::run(a, a, -4, 25, 0, 0, 0, 16 * 8 * 4);
  ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
  for (int by = 0; by < 8; ++by)
    for (int bx = 0; bx < 16; ++bx) {
      int x = bx - 4, y = 25 + by;
      float want = x >= 0 && x < 40 && y < 30 ? tensor::value(uint32_t(x), uint32_t(y)) : 0.0f;
      EXPECT_EQ(std::bit_cast<float>(r.shared[size_t(by * 16 + bx)]), want) << bx << "," << by;
    }
}

// NaN fill on request (the H100's NaN, 0x7ff7 repeated), and a traversal stride of 2 in x, which an H100 ignores in
// dimension 0 (tools/gpu-probe/results/tmap18-h100-2026-11-27.txt): a 16 x 4 box of contiguous elements.
TEST(PtxAsyncTensor, ElementStridesAndNanFill) {
  std::vector<float> t(64 * 8);
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 64; ++x) t[y * 64 + x] = tensor::value(x, y);
  float* data = arena().upload(t);
  tensor::Map a = tensor::encode(data, 64, 8, 64 * 4, 16, 4, 2, 0, ptx::kTensorMapOobNan);
  tensor::Run r = tensor::run(a, a, 54, 6, 0, 0, 0, 16 * 4 * 4);
  ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
  for (int by = 0; by < 4; ++by)
    for (int bx = 0; bx < 16; ++bx) {
      int x = 54 + bx, y = 6 + by;
      uint32_t got = r.shared[size_t(by * 16 + bx)];
      if (x < 64 && y < 8)
        EXPECT_EQ(std::bit_cast<float>(got), tensor::value(uint32_t(x), uint32_t(y))) << bx << "," << by;
      else
        EXPECT_EQ(got, 0x7ff77ff7u) << bx << "," << by;
    }
}

// Loads of a tf32 map round each f32 to tf32 (to nearest, subnormals kept), as an H100 does; f32 maps copy the bits.
TEST(PtxAsyncTensor, Tf32LoadsRound) {
  const uint32_t in[8] = {0x3fa9357e, 0x3fc76cf8, 0x00012558, 0xbfb4c02e, 0x3f83dbeb, 0x7f800000, 0x3f801000, 0};
  const uint32_t tf32[8] = {0x3fa94000, 0x3fc76000, 0x00012000, 0xbfb4c000, 0x3f83e000, 0x7f800000, 0x3f802000, 0};
  std::vector<uint32_t> t(8 * 4, 0);
  for (uint32_t y = 0; y < 4; ++y)
    for (uint32_t x = 0; x < 8; ++x) t[y * 8 + x] = in[x];
  uint32_t* data = arena().upload(t);
  for (bool round : {false, true}) {
    tensor::Map a = tensor::encode(data, 8, 4, 8 * 4, 8, 4);
    if (round) ptx::tensor_map_layout::setElemtype(a.bytes, 11);  // .tf32
    tensor::Run r = tensor::run(a, a, 0, 0, 0, 0, 0, 8 * 4 * 4);
    ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
    for (unsigned y = 0; y < 4; ++y)
      for (unsigned x = 0; x < 8; ++x) EXPECT_EQ(r.shared[y * 8 + x], round ? tf32[x] : in[x]) << x << "," << y;
  }
}

// im2col maps of rank 5 pack each corner's three offsets in 5 bits (the bytes an H100 wrote, tmap18 results).
TEST(PtxAsyncTensor, Im2colCornersOfRankFive) {
  ptx::TensorMap m;
  m.im2col = true;
  m.dataType = ptx::TensorMapType::f32;
  m.rank = 5;
  const uint64_t dims[5] = {16, 10, 10, 10, 2}, strides[4] = {64, 640, 6400, 64000};
  for (unsigned i = 0; i < 5; ++i) m.dims[i] = dims[i];
  for (unsigned i = 0; i < 4; ++i) m.strides[i] = strides[i];
  const int16_t lo[3] = {-3, 2, -1}, hi[3] = {5, -4, 1};
  for (unsigned i = 0; i < 3; ++i) m.lowerCorner[i] = lo[i], m.upperCorner[i] = hi[i];
  m.channels = 8;
  m.pixels = 1024;
  uint8_t bytes[128];
  ptx::encodeTensorMap(m, bytes);
  const uint8_t want[][2] = {{8, 0xc1},  {56, 0x5d}, {57, 0x7c}, {58, 0x85}, {59, 0x07}, {60, 0xff},
                             {61, 0x03}, {64, 0x00}, {65, 0x80}, {44, 0x09}, {48, 0x01}};
  for (auto [offset, value] : want) EXPECT_EQ(bytes[offset], value) << "byte " << int(offset);
  // the copies read the corners back, sign-extended from 16, 8 or 5 bits for ranks 3, 4 and 5
  for (uint8_t rank : {3, 4, 5}) {
    m.rank = rank;
    const int16_t extreme[3][2] = {{-32768, 32767}, {-128, 127}, {-16, 15}};
    for (unsigned i = 0; i + 2 < rank; ++i) {
      m.lowerCorner[i] = extreme[rank - 3][i % 2];
      m.upperCorner[i] = extreme[rank - 3][(i + 1) % 2];
    }
    ptx::encodeTensorMap(m, bytes);
    const ptx::TensorMap back = ptx::decodeTensorMap(bytes);
    for (unsigned i = 0; i + 2 < rank; ++i) {
      EXPECT_EQ(back.lowerCorner[i], m.lowerCorner[i]) << "rank " << int(rank) << " lower corner " << i;
      EXPECT_EQ(back.upperCorner[i], m.upperCorner[i]) << "rank " << int(rank) << " upper corner " << i;
    }
    EXPECT_EQ(back.channels, 8);
    EXPECT_EQ(back.pixels, 1024);
  }
}

// The 128-byte swizzle: a 32 x 8 box of 4-byte elements is eight 128-byte rows, and the 16-byte chunk c of row r
// lands in chunk c ^ (r % 8) of that row; 64-byte: 16 x 8 box, rows of 64 bytes, chunk c of row r in chunk
// c ^ ((r / 2) % 4); 32-byte: 8 x 8 box, chunk c of row r in chunk c ^ ((r / 4) % 2).
TEST(PtxAsyncTensor, SwizzledBoxes) {
  std::vector<float> t(32 * 8);
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 32; ++x) t[y * 32 + x] = tensor::value(x, y);
  float* data = arena().upload(t);
  struct Mode {
    uint8_t swizzle;
    uint16_t width;
  };
  for (Mode m : {Mode{3, 32}, Mode{2, 16}, Mode{1, 8}}) {
    tensor::Map a = tensor::encode(data, 32, 8, 32 * 4, m.width, 8, 1, m.swizzle);
    tensor::Run r = tensor::run(a, a, 0, 0, 0, 0, 0, m.width * 8u * 4u);
    ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
    const unsigned rowBytes = m.width * 4u, chunks = rowBytes / 16, rowsPerStep = 128 / rowBytes;
    for (unsigned y = 0; y < 8; ++y)
      for (unsigned x = 0; x < m.width; ++x) {
        unsigned chunk = (x * 4) / 16, inChunk = (x * 4) % 16;
        unsigned moved = chunk ^ ((y / rowsPerStep) % chunks);
        size_t word = (y * rowBytes + moved * 16 + inChunk) / 4;
        EXPECT_EQ(std::bit_cast<float>(r.shared[word]), tensor::value(x, y))
            << "swizzle " << int(m.swizzle) << " element " << x << "," << y;
      }
  }
}

// Stores write only the elements inside the tensor; reductions add into them.
TEST(PtxAsyncTensor, StoreAndReduceClipToTheTensor) {
  std::vector<float> src(16 * 8), dst(24 * 10, 0.5f);
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 16; ++x) src[y * 16 + x] = tensor::value(x, y);
  float* s = arena().upload(src);
  for (uint32_t mode : {1u, 2u}) {
    float* d = arena().upload(dst);
    tensor::Map a = tensor::encode(s, 16, 8, 16 * 4, 16, 8);
    tensor::Map b = tensor::encode(d, 20, 10, 24 * 4, 16, 8);  // 20 x 10 elements, rows padded to 24
    tensor::Run r = tensor::run(a, b, 0, 0, 8, -3, mode, 16 * 8 * 4);
    ASSERT_TRUE(r.result.ok()) << r.result.fault.message;
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 24; ++x) {
        int bx = x - 8, by = y + 3;
        bool written = x < 20 && bx >= 0 && bx < 16 && by < 8;
        float boxValue = written ? tensor::value(uint32_t(bx), uint32_t(by)) : 0.0f;
        float want = !written ? 0.5f : mode == 1 ? boxValue : 0.5f + boxValue;
        EXPECT_EQ(d[y * 24 + x], want) << "mode " << mode << " at " << x << "," << y;
      }
  }
}

// A descriptor of another rank than the copy's (all zeros: rank 1), one with an element type that does not exist,
// and an interleaved one of rank 2 (which the driver does not encode) fail with an illegal instruction naming the
// reason.
TEST(PtxAsyncTensor, BadTensorMaps) {
  auto* data = arena().alloc<float>(256);
  tensor::Map zeros;
  tensor::Run r = tensor::run(zeros, zeros, 0, 0, 0, 0, 0, 64);
  EXPECT_EQ(r.result.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.result.fault.message.find("tensor map of rank 1"), std::string::npos) << r.result.fault.message;
  tensor::Map badType = tensor::encode(data, 16, 16, 64, 16, 1);
  ptx::tensor_map_layout::setField(badType.bytes, ptx::tensor_map_layout::kElementType, 15);
  r = tensor::run(badType, badType, 0, 0, 0, 0, 0, 64);
  EXPECT_EQ(r.result.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.result.fault.message.find("not a tensor map"), std::string::npos) << r.result.fault.message;
  tensor::Map interleaved = tensor::encode(data, 16, 16, 64, 16, 1);
  ptx::tensor_map_layout::setField(interleaved.bytes, ptx::tensor_map_layout::kInterleave, 1);
  r = tensor::run(interleaved, interleaved, 0, 0, 0, 0, 0, 64);
  EXPECT_EQ(r.result.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(r.result.fault.message.find("interleaved tensor map of rank below 3"), std::string::npos)
      << r.result.fault.message;
}

// The programming guide's tensor-copy pattern built by nvcc (kernels/async.cu: tma_tile, sm_90): the tile at
// (x, y) of a 40 x 20 tensor doubled in place, clipped at the tensor's edge.
TEST(PtxAsyncTensor, NvccTensorCopyKernel) {
  const Program& prog = program("async_sm90.ptx");
  const KernelInfo& k = kernels(prog)[size_t(findKernel(prog, "tma_tile"))];
  ASSERT_EQ(k.unsupported, "");
  std::vector<float> t(40 * 20);
  for (uint32_t y = 0; y < 20; ++y)
    for (uint32_t x = 0; x < 40; ++x) t[y * 40 + x] = tensor::value(x, y);
  float* data = arena().upload(t);
  tensor::Map map = tensor::encode(data, 40, 20, 40 * 4, 16, 8);
  for (const Schedule& s : kSchedules) {
    std::memcpy(data, t.data(), t.size() * 4);
    Params p(k);
    p.arg(map).arg(map).arg(int32_t(30)).arg(int32_t(15));
    LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{128}, p, arena());
    lp.config = s.config;
    LaunchResult r = launch(prog, findKernel(prog, "tma_tile"), lp);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (uint32_t y = 0; y < 20; ++y)
      for (uint32_t x = 0; x < 40; ++x) {
        bool inTile = x >= 30 && y >= 15;
        EXPECT_EQ(data[y * 40 + x], tensor::value(x, y) * (inTile ? 2 : 1)) << s.name << " at " << x << "," << y;
      }
  }
}

}  // namespace

namespace {

// tensormap.replace with register values (the per-dimension fields take them; ptxas wants immediates for the rest):
// each field written as the H100 stores it (ptx/tensor_map.h), in a map in global memory and one in shared memory
// copied back by tensormap.cp_fenceproxy.
const char* kReplaceKernel = R"(
.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pg, .param .u64 pv)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 128 .b8 smap[128];
	ld.param.u64 %rd1, [pg];
	ld.param.u64 %rd2, [pv];
	mov.u32 %r1, 5;
	mov.u32 %r2, 300;
	mov.u32 %r3, 3;
	mov.u64 %rd3, 68719476752;
	tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;
	tensormap.replace.tile.rank.global.b1024.b32 [%rd1], %r3;
	tensormap.replace.tile.box_dim.global.b1024.b32 [%rd1], 4, %r1;
	tensormap.replace.tile.global_dim.global.b1024.b32 [%rd1], 3, %r2;
	tensormap.replace.tile.global_stride.global.b1024.b64 [%rd1], 2, %rd3;
	tensormap.replace.tile.element_stride.global.b1024.b32 [%rd1], 2, %r3;
	tensormap.replace.tile.elemtype.global.b1024.b32 [%rd1], 11;
	tensormap.replace.tile.interleave_layout.global.b1024.b32 [%rd1], 2;
	tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%rd1], 1;
	tensormap.replace.tile.fill_mode.global.b1024.b32 [%rd1], 1;
	mov.u32 %r4, smap;
	mov.u32 %r5, %tid.x;
	shl.b32 %r5, %r5, 2;
	add.u32 %r6, %r4, %r5;
	st.shared.u32 [%r6], 0;
	bar.warp.sync -1;
	tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r4], 0, %r2;
	tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1+128], [%r4], 128;
	ret;
}
)";

TEST(PtxAsyncTensor, TensormapReplaceFieldsFromRegisters) {
  auto r = compile(kReplaceKernel);
  ASSERT_TRUE(r.program) << r.error;
  const KernelInfo& k = kernels(*r.program)[0];
  ASSERT_EQ(k.unsupported, "");
  struct alignas(128) Maps {
    uint8_t bytes[256] = {};
  };
  auto* maps = arena().alloc<Maps>(1);
  *maps = Maps{};
  Params p(k);
  p.arg(maps).arg(uint64_t(0x123456789a0));
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena());
  LaunchResult res = launch(*r.program, 0, lp);
  ASSERT_TRUE(res.ok()) << res.fault.message;
  const ptx::TensorMap m = ptx::decodeTensorMap(maps->bytes);
  EXPECT_EQ(m.address, 0x123456789a0u);
  EXPECT_EQ(m.rank, 4);  // the value is the rank minus one
  EXPECT_EQ(m.box[4], 5);
  EXPECT_EQ(m.dims[3], 300u);
  EXPECT_EQ(m.strides[2], 68719476752u);  // 2^36 + 16: a high bit
  EXPECT_EQ(m.elementStrides[2], 3);
  EXPECT_EQ(m.dataType, ptx::TensorMapType::tf32);
  EXPECT_EQ(m.interleave, 2);
  EXPECT_EQ(m.swizzle, 1);
  EXPECT_EQ(m.oobFill, 1);
  EXPECT_EQ(maps->bytes[8], 0xb0);  // rank 4, elemtype f32 (7) with the tf32 bit at 16
  EXPECT_EQ(maps->bytes[10], 0x01);
  // the shared map: zeros but box[0] - 1 = 299 & 0xff
  for (unsigned i = 128; i < 256; ++i) EXPECT_EQ(maps->bytes[i], i == 128 + 55 ? uint8_t(299) : 0) << i - 128;
}

// Replays every copy of tools/gpu-probe/results/im2colil28-h200-2026-11-28.txt (im2col loads through interleaved maps,
// stores and reductions through interleaved maps, recorded on an H200) through the interpreter: the map is the
// 128 bytes the driver encoded (its address replaced by this tensor's), the kernel does what the probe's did (one
// thread copies with the recorded coordinates and offsets; a load waits on an mbarrier expecting the map's box bytes,
// a store or reduction starts from shared word i = 0xa0000000 + i), and the outcome is printed in the probe's format
// and compared with the GPU's line: the launch's result, the shared bytes a load left (per 16-byte chunk, the tensor
// offset it came from), the tensor words a store changed, and whether the load's phase completed where that does not
// depend on the order the GPU completes the chunks in.
namespace probe {

constexpr size_t kDataWords = (1 << 20) / 4;
constexpr int64_t kTensorOffset = 4096;
constexpr unsigned kShared = 16384;

std::string kernel(unsigned rank, bool im2col, int op) {  // op: 0 load, 1 store, 2 reduction
  std::string coords = "{";
  for (unsigned i = 0; i < rank; ++i) coords += (i ? ", %r" : "%r") + std::to_string(10 + i);
  coords += "}";
  std::string s =
      ".version 8.3\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 pmap, .param .u64 pout, .param .u32 pexpect, .param .u32 pc0,"
      " .param .u32 pc1, .param .u32 pc2, .param .u32 pc3, .param .u32 pc4, .param .u32 po0,"
      " .param .u32 po1, .param .u32 po2)\n{\n"
      "  .reg .b16 %rs<8>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<4>;\n"
      "  .shared .align 1024 .b8 sbox[16384];\n  .shared .align 8 .b64 sbar;\n"
      "  ld.param.u64 %rd1, [pmap];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u32 %r30, [pexpect];\n"
      "  ld.param.u32 %r10, [pc0];\n  ld.param.u32 %r11, [pc1];\n  ld.param.u32 %r12, [pc2];\n"
      "  ld.param.u32 %r13, [pc3];\n  ld.param.u32 %r14, [pc4];\n"
      "  ld.param.u16 %rs1, [po0];\n  ld.param.u16 %rs2, [po1];\n  ld.param.u16 %rs3, [po2];\n"
      "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  mov.u32 %r7, sbox;\n  mov.u32 %r20, 0;\nFILL:\n  add.u32 %r21, %r7, %r20;\n";
  s += op == 0 ? "  st.shared.u32 [%r21], -286331154;\n"
               : "  shr.u32 %r22, %r20, 2;\n  or.b32 %r22, %r22, -1610612736;\n  st.shared.u32 [%r21], %r22;\n";
  s += "  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, 16384;\n  @%p2 bra FILL;\n"
       "  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n  fence.proxy.async.shared::cta;\n";
  const std::string r = std::to_string(rank);
  if (op) {
    const std::string mode = im2col ? "im2col_no_offs" : "tile";
    s += std::string(op == 1 ? "  cp.async.bulk.tensor." : "  cp.reduce.async.bulk.tensor.") + r +
         "d.global.shared::cta." + (op == 2 ? "add." : "") + mode + ".bulk_group [%rd1, " + coords +
         "], [%r7];\n  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\nDONE:\n  ret;\n}\n";
    return s;
  }
  std::string offsets;
  if (im2col) {
    offsets = ", {";
    for (unsigned i = 0; i + 2 < rank; ++i) offsets += (i ? ", %rs" : "%rs") + std::to_string(1 + i);
    offsets += "}";
  }
  s += "  mov.u32 %r6, sbar;\n  mbarrier.init.shared::cta.b64 [%r6], 1;\n  fence.proxy.async.shared::cta;\n"
       "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r6], %r30;\n  cp.async.bulk.tensor." +
       r + "d.shared::cluster.global." + (im2col ? "im2col" : "tile") + ".mbarrier::complete_tx::bytes [%r7], [%rd1, " +
       coords + "], [%r6]" + offsets +
       ";\n  mov.u32 %r8, 0;\nWAIT:\n  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n  @%p2 bra OK;\n"
       "  add.u32 %r8, %r8, 1;\n  setp.lt.u32 %p3, %r8, 3000;\n  @%p3 bra WAIT;\nOK:\n  st.global.u32 [%rd2], %r8;\n"
       "  mov.u32 %r20, 0;\nDUMP:\n  add.u32 %r21, %r7, %r20;\n  ld.shared.b32 %r22, [%r21];\n"
       "  cvt.u64.u32 %rd10, %r20;\n  add.s64 %rd11, %rd2, %rd10;\n  st.global.b32 [%rd11+16], %r22;\n"
       "  add.u32 %r20, %r20, 4;\n  setp.lt.u32 %p2, %r20, 16384;\n  @%p2 bra DUMP;\nDONE:\n  ret;\n}\n";
  return s;
}

std::vector<int64_t> numbers(const std::string& list) {
  std::vector<int64_t> v;
  std::istringstream in(list);
  std::string x;
  while (std::getline(in, x, ',')) v.push_back(std::stoll(x, nullptr, 0));
  return v;
}

// The shared bytes a load left, as the probe prints them.
std::string dataLine(const uint8_t* got) {
  size_t used = kShared;
  while (used > 0 && got[used - 1] == 0xee) --used;
  std::string d = "data";
  for (size_t i = 0; i < used; i += 16) {
    uint32_t w[4];
    std::memcpy(w, got + i, 16);
    bool run = true;
    for (int k = 0; k < 4; ++k)
      if (w[k] < 0x10000 || w[k] - w[0] != uint32_t(k)) run = false;
    if (run) {
      d += " " + std::to_string(int64_t(w[0] - 0x10000) * 4 - kTensorOffset) + "+";
      continue;
    }
    d += " [";
    for (int k = 0; k < 4; ++k) {
      char b[32];
      if (w[k] == 0xeeeeeeeeu)
        std::snprintf(b, sizeof b, "%sf", k ? " " : "");
      else if (w[k] >= 0x10000 && w[k] < 0x10000 + kDataWords)
        std::snprintf(b, sizeof b, "%s@%lld", k ? " " : "", (long long)(int64_t(w[k] - 0x10000) * 4 - 4096));
      else
        std::snprintf(b, sizeof b, "%s%x", k ? " " : "", w[k]);
      d += b;
    }
    d += "]";
  }
  return d;
}

// The tensor words a store or reduction changed, as the probe prints them.
std::string changedLine(const uint32_t* after, bool reduce) {
  std::string d = "changed";
  long long runT = -1, runS = 0, runN = 0;
  auto flush = [&] {
    if (runN)
      d += " " + std::to_string(runT) + ":" + std::to_string(runS) + (runN > 1 ? "x" + std::to_string(runN) : "");
    runN = 0;
  };
  for (size_t i = 0; i < kDataWords; ++i) {
    const uint32_t before = uint32_t(0x10000 + i);
    if (after[i] == before) continue;
    const uint32_t v = after[i] - (reduce ? before : 0u) - 0xa0000000u;
    const long long t = (long long)i * 4 - kTensorOffset, s = (long long)v * 4;
    if (runN && t == runT + 4 * runN && s == runS + 4 * runN) {
      ++runN;
      continue;
    }
    flush();
    runT = t, runS = s, runN = 1;
  }
  flush();
  return d;
}

}  // namespace probe

TEST(PtxAsyncTensor, InterleavedCopiesReplayTheH200Probe) {
  std::istringstream results(
      ptxtest::readFile(std::string(CUEMU_GPU_PROBE_RESULTS) + "/im2colil28-h200-2026-11-28.txt"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(results, line);) lines.push_back(line);
  auto* data = arena().alloc<uint32_t>(probe::kDataWords);
  auto* out = arena().alloc<uint8_t>(16 + probe::kShared);
  auto* map = arena().alloc<uint8_t>(128);
  std::map<std::string, std::shared_ptr<const Program>> programs;
  int loads = 0, stores = 0, faults = 0;
  for (size_t n = 0; n + 2 < lines.size(); ++n) {
    if (lines[n].rfind("form ", 0) != 0 || lines[n + 1].rfind("map ", 0) != 0) continue;
    std::istringstream form(lines[n]);
    std::string word, name, kind, coords, offsets;
    form >> word >> name >> kind;
    unsigned rank = 0;
    while (form >> word) {
      if (word == "rank") form >> rank;
      if (word == "coords") form >> coords;
      if (word == "offs") form >> offsets;
    }
    SCOPED_TRACE(lines[n]);
    // the driver's map: its 16 words, the first (the address) this tensor's
    std::istringstream mapLine(lines[n + 1]);
    std::string words;
    uint32_t boxBytes = 0;
    mapLine >> word >> words >> word >> boxBytes;
    std::vector<uint64_t> m = {reinterpret_cast<uint64_t>(data) + probe::kTensorOffset};
    for (const std::string& x : [&] {
           std::vector<std::string> v;
           std::istringstream in(words);
           for (std::string y; std::getline(in, y, ',');) v.push_back(y);
           return v;
         }())
      m.push_back(std::stoull(x, nullptr, 16));
    ASSERT_EQ(m.size(), 16u);
    std::memcpy(map, m.data(), 128);
    const bool im2col = ptx::decodeTensorMap(map).im2col;
    const int op = kind == "load" ? 0 : kind == "store" ? 1 : 2;
    const std::string ptx = probe::kernel(rank, im2col, op);
    auto& prog = programs[ptx];
    if (!prog) {
      auto r = compile(ptx);
      ASSERT_TRUE(r.program) << r.error;
      prog = r.program;
    }
    for (size_t i = 0; i < probe::kDataWords; ++i) data[i] = uint32_t(0x10000 + i);
    std::memset(out, 0xcc, 16 + probe::kShared);
    const std::vector<int64_t> c = probe::numbers(coords), o = probe::numbers(offsets);
    int32_t cv[5] = {}, ov[3] = {};
    for (size_t i = 0; i < c.size(); ++i) cv[i] = int32_t(c[i]);
    for (size_t i = 0; i < o.size(); ++i) ov[i] = int32_t(o[i]);
    const KernelInfo& k = kernels(*prog)[0];
    Params p(k);
    p.arg(reinterpret_cast<uint64_t>(map)).arg(reinterpret_cast<uint64_t>(out)).arg(boxBytes);
    for (int32_t x : cv) p.arg(x);
    for (int32_t x : ov) p.arg(uint32_t(uint16_t(x)));
    LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{32}, p, arena());
    lp.config = ExecConfig{1, false, 0, 0};
    const LaunchResult r = launch(*prog, 0, lp);
    std::istringstream outcome(lines[n + 2]);
    int gpuResult = -1;
    outcome >> word >> gpuResult;
    ASSERT_EQ(word, "rc");
    if (gpuResult == 715) {  // CUDA_ERROR_ILLEGAL_INSTRUCTION
      EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction) << r.fault.message;
      ++faults;
      continue;
    }
    ASSERT_EQ(gpuResult, 0);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    if (op) {
      EXPECT_EQ(probe::changedLine(data, op == 2), lines[n + 3]);
      ++stores;
      continue;
    }
    // the phase: where the box bytes are at least the bytes moved (the last expect_tx that completed), the GPU's
    // outcome does not depend on the order it completes the chunks in
    int done = 0;
    outcome >> word >> done >> word;
    uint32_t moved = 0;
    for (std::string t; outcome >> t;) {  // ranges a-b: the last one's end
      const size_t dash = t.find('-');
      moved = uint32_t(std::stoul(dash == std::string::npos ? t : t.substr(dash + 1)));
    }
    uint32_t polls;
    std::memcpy(&polls, out, 4);
    if (boxBytes >= moved) {
      EXPECT_EQ(polls < 3000 ? 1 : 0, done) << "the mbarrier's phase completed";
    }
    EXPECT_EQ(probe::dataLine(out + 16), lines[n + 3]);
    ++loads;
  }
  // the probe's two rounds: 53 loads, 5 faults, 10 stores and reductions
  EXPECT_EQ(loads, 53);
  EXPECT_EQ(faults, 5);
  EXPECT_EQ(stores, 10);
}

// ---- reductions as an H200 computes them ----------------------------------------------------------------------
namespace reduce {

// One thread reduces the 128 bytes at pin (copied to shared memory) into the 1D tensor of `map` at coordinate 0.
std::string kernel(const std::string& op) {
  return ".version 8.0\n.target sm_90\n.address_size 64\n"
         ".visible .entry r(.param .align 64 .b8 map[128], .param .u64 pin)\n{\n"
         "\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\t.shared .align 128 .b8 sbuf[128];\n"
         "\tmov.u64 %rd1, map;\n\tld.param.u64 %rd2, [pin];\n\tmov.u32 %r1, sbuf;\n\tmov.u32 %r2, 0;\n"
         "COPY:\n\tadd.u32 %r3, %r1, %r2;\n\tcvt.u64.u32 %rd3, %r2;\n\tadd.u64 %rd4, %rd2, %rd3;\n"
         "\tld.global.u32 %r4, [%rd4];\n\tst.shared.u32 [%r3], %r4;\n\tadd.u32 %r2, %r2, 4;\n"
         "\tsetp.lt.u32 %p1, %r2, 128;\n\t@%p1 bra COPY;\n\tfence.proxy.async.shared::cta;\n\tmov.u32 %r5, 0;\n"
         "\tcp.reduce.async.bulk.tensor.1d.global.shared::cta." +
         op +
         ".tile.bulk_group [%rd1, {%r5}], [%r1];\n"
         "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n\tret;\n}\n";
}

// Reduces src into dst (128 bytes each) through a 1D map of `type` with `op`.
LaunchResult run(const std::string& op, ptx::TensorMapType type, void* dst, const void* src) {
  auto c = compile(kernel(op));
  if (!c.program) {
    ADD_FAILURE() << c.error;
    return {};
  }
  const unsigned elementBytes =
      type == ptx::TensorMapType::s64 || type == ptx::TensorMapType::u64 || type == ptx::TensorMapType::f64 ? 8 : 4;
  ptx::TensorMap e;
  e.dataType = type;
  e.rank = 1;
  e.address = reinterpret_cast<uint64_t>(dst);
  e.dims[0] = 128 / elementBytes;
  e.box[0] = 128 / elementBytes;
  struct alignas(64) Map {
    uint8_t bytes[128] = {};
  } map;
  ptx::encodeTensorMap(e, map.bytes);
  const KernelInfo& k = kernels(*c.program)[0];
  EXPECT_EQ(k.unsupported, "");
  Params p(k);
  p.arg(map).arg(src);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{1}, p, arena());
  lp.config = ExecConfig{1, false, 0, 0};
  return launch(*c.program, 0, lp);
}

}  // namespace reduce

// The element types of tensor reductions, as an H200 takes them (conformance ptx.async_TensorReduce.* and
// ptx.async_TensorReduce_Faults.*, driver 580): and, or and xor through an s32 map reduce as on u32; add and the
// bitwise operations through an s64 map raise an illegal instruction (min and max run).
TEST(PtxAsyncTensor, ReductionElementTypesOfTheH200) {
  std::vector<uint32_t> a(32), b(32);
  for (uint32_t i = 0; i < 32; ++i) {
    a[i] = 0x9e3779b9u * (i + 1);
    b[i] = 0x85ebca6bu * (i + 7) ^ (i << 28);
  }
  const uint32_t* src = arena().upload(b);
  for (const char* op : {"and", "or", "xor"}) {
    uint32_t* dst = arena().upload(a);
    LaunchResult r = reduce::run(op, ptx::TensorMapType::s32, dst, src);
    ASSERT_TRUE(r.ok()) << op << ": " << r.fault.message;
    for (uint32_t i = 0; i < 32; ++i) {
      const uint32_t want = op[0] == 'a' ? a[i] & b[i] : op[0] == 'o' ? a[i] | b[i] : a[i] ^ b[i];
      EXPECT_EQ(dst[i], want) << op << " " << i;
    }
  }
  for (const char* op : {"add", "and", "or", "xor"}) {
    uint32_t* dst = arena().upload(a);
    LaunchResult r = reduce::run(op, ptx::TensorMapType::s64, dst, src);
    EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction) << op;
    EXPECT_NE(r.fault.message.find("reduction not defined"), std::string::npos) << op << ": " << r.fault.message;
    EXPECT_EQ(std::vector<uint32_t>(dst, dst + 32), a) << op << ": nothing written";
  }
  uint32_t* dst = arena().upload(a);
  ASSERT_TRUE(reduce::run("min", ptx::TensorMapType::s64, dst, src).ok());
  for (uint32_t i = 0; i < 16; ++i) {
    int64_t x, y, got;
    std::memcpy(&x, &a[2 * i], 8);
    std::memcpy(&y, &b[2 * i], 8);
    std::memcpy(&got, &dst[2 * i], 8);
    EXPECT_EQ(got, std::min(x, y)) << i;
  }
}

// Float additions of the asynchronous reductions, as an H200 computes them (conformance ptx.async_FloatReduce.* and
// ptx.async_TensorReduce.*add_f32*): f32 NaN results are the canonical NaN 0x7fffffff and subnormals are kept; f64 NaN
// operands come through unchanged (the source's first, signalling ones too), inf + -inf is 0xfff8000000000000.
TEST(PtxAsyncTensor, FloatAddReductionsGiveTheH200sBits) {
  const uint32_t pairs32[8][3] = {// old, operand, result
                                  {0x7fc00001u, 0x3f800000u, 0x7fffffffu}, {0x3f800000u, 0x7fc00002u, 0x7fffffffu},
                                  {0x7f800000u, 0xff800000u, 0x7fffffffu}, {0x7fc00003u, 0xffc00004u, 0x7fffffffu},
                                  {0x7f800001u, 0x3f800000u, 0x7fffffffu}, {0x00000001u, 0x00000001u, 0x00000002u},
                                  {0x00800000u, 0x80000001u, 0x007fffffu}, {0x3f800000u, 0x33800000u, 0x3f800000u}};
  const uint64_t pairs64[6][3] = {{0x7ff8000000000001ull, 0x3ff0000000000000ull, 0x7ff8000000000001ull},
                                  {0x7ff0000000000000ull, 0xfff0000000000000ull, 0xfff8000000000000ull},
                                  {0x7ff8000000000003ull, 0xfff8000000000004ull, 0xfff8000000000004ull},
                                  {0x7ff0000000000001ull, 0x3ff0000000000000ull, 0x7ff0000000000001ull},
                                  {0x3ff0000000000000ull, 0x7ff0000000000005ull, 0x7ff0000000000005ull},
                                  {0x0000000000000001ull, 0x0000000000000001ull, 0x0000000000000002ull}};
  // through a tensor map (f32, f64) and a bulk reduction (the same operations)
  for (bool bulk : {false, true}) {
    std::vector<uint32_t> old32(32, 0), op32(32, 0);
    for (int i = 0; i < 8; ++i) old32[i] = pairs32[i][0], op32[i] = pairs32[i][1];
    uint32_t* dst = arena().upload(old32);
    uint32_t* src = arena().upload(op32);
    LaunchResult r;
    if (bulk)
      r = runBody(
          "\tld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1];\n\tst.shared.v4.u32 [%r3], {%r4, %r5, %r6, %r7};\n"
          "\tld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+16];\n\tst.shared.v4.u32 [%r3+16], {%r4, %r5, %r6, %r7};\n"
          "\tfence.proxy.async.shared::cta;\n"
          "\tcp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd2], [%r3], 32;\n"
          "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;",
          1, src, dst);
    else
      r = reduce::run("add", ptx::TensorMapType::f32, dst, src);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (int i = 0; i < 8; ++i) EXPECT_EQ(dst[i], pairs32[i][2]) << "f32 " << (bulk ? "bulk " : "tensor ") << i;
    std::vector<uint64_t> old64(16, 0), op64(16, 0);
    for (int i = 0; i < 6; ++i) old64[i] = pairs64[i][0], op64[i] = pairs64[i][1];
    uint64_t* dst64 = arena().upload(old64);
    uint64_t* src64 = arena().upload(op64);
    if (bulk)
      r = runBody(
          "\tld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1];\n\tst.shared.v4.u32 [%r3], {%r4, %r5, %r6, %r7};\n"
          "\tld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+16];\n\tst.shared.v4.u32 [%r3+16], {%r4, %r5, %r6, %r7};\n"
          "\tld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+32];\n\tst.shared.v4.u32 [%r3+32], {%r4, %r5, %r6, %r7};\n"
          "\tfence.proxy.async.shared::cta;\n"
          "\tcp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%rd2], [%r3], 48;\n"
          "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;",
          1, src64, dst64);
    else
      r = reduce::run("add", ptx::TensorMapType::f64, dst64, src64);
    ASSERT_TRUE(r.ok()) << r.fault.message;
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(dst64[i], pairs64[i][2]) << std::hex << "f64 " << (bulk ? "bulk " : "tensor ") << i << ": " << dst64[i];
  }
}

}  // namespace
