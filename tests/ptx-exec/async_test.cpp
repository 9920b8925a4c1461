// Asynchronous copies and mbarrier objects (issue 18): nvcc-built programs (kernels/async.cu, PTX for sm_80 and
// sm_90) give the host's results in every schedule; bad operands fault with the right kind instead of touching
// memory. What the instructions compute is checked against an H100 by the conformance cases ptx.async.*.
#include "harness.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
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
  std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n"
                     ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
                     "\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<32>;\n"
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
  LaunchResult r = runBody("\tshl.b32 %r4, %r1, 4;\n\tadd.u32 %r4, %r4, %r3;\n\tadd.u32 %r4, %r4, 8;\n"
                           "\tcp.async.cg.shared.global [%r4], [%rd1], 16;\n\tcp.async.wait_all;",
                           8, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 0u);
}

TEST(PtxAsyncFaults, CpAsyncSourceOutsideDeviceMemory) {
  auto* in = arena().alloc<uint8_t>(4096);
  // lane 2 reads right after the end of a one-page allocation; lanes 0 and 1 read inside it
  LaunchResult r = runBody("\tshl.b32 %r4, %r1, 4;\n\tadd.u32 %r5, %r4, %r3;\n\tmul.wide.u32 %rd3, %r1, 2048;\n"
                           "\tadd.u64 %rd3, %rd3, %rd1;\n\tcp.async.ca.shared.global [%r5], [%rd3], 16;\n"
                           "\tcp.async.commit_group;\n\tcp.async.wait_group 0;",
                           4, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalAddress) << r.fault.message;
  EXPECT_EQ(r.fault.thread.x, 2u);
}

TEST(PtxAsyncFaults, CpAsyncWithZeroSourceSizeReadsNothing) {
  auto* out = arena().alloc<uint32_t>(64);
  // the source is a null pointer, but src-size 0 (and ignore-src true) copy only zeros
  LaunchResult r = runBody("\tmov.u64 %rd3, 0;\n\tsetp.eq.u32 %p1, %r1, %r1;\n\tshl.b32 %r4, %r1, 4;\n"
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
  LaunchResult r = runBody("\tmbarrier.init.shared.b64 [%r10], 1;\n"
                           "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 24, [%r10];",
                           1, in, in);
  EXPECT_EQ(r.fault.kind, FaultKind::MisalignedAddress) << r.fault.message;
  LaunchResult o = runBody("\tmbarrier.init.shared.b64 [%r10], 1;\n"
                           "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 512, [%r10];",
                           1, in, in);
  EXPECT_EQ(o.fault.kind, FaultKind::IllegalAddress) << o.fault.message;  // past the 256 bytes of shared memory
}

// A warp that try_waits on a phase other warps complete stops instead of spinning: with the other warps of the CTA
// behind it in a one-thread schedule, the wait still ends, and the waiting warp sees the data written before the
// arrivals.
TEST(PtxAsyncFaults, TryWaitLetsTheArrivingWarpsRun) {
  auto* out = arena().alloc<uint32_t>(128);
  LaunchResult r = runBody("\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra INIT_DONE;\n\tmbarrier.init.shared.b64 [%r10], 64;\n"
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

TEST(PtxAsyncFaults, TensorCopiesAreReportedUnsupported) {
  auto* buf = arena().alloc<uint8_t>(4096);
  Fault why;
  LaunchResult r = runBody("\tcp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], "
                           "[%rd1, {%r1}], [%r10];",
                           1, buf, buf, &why);
  EXPECT_EQ(r.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(why.message.find("cp.async.bulk.tensor"), std::string::npos) << why.message;
}

}  // namespace
