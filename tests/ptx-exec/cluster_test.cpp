// Thread-block clusters (issue 18): the CTAs of a cluster run together, so cluster barriers, distributed shared
// memory and a CTA waiting for another of its cluster work in every schedule (one host thread, two, deterministic,
// seeded shuffles). Kernels: nvcc-built (kernels/cluster.cu, cooperative groups) and hand-written PTX for the
// address instructions. What an H100 gives for them is checked by the conformance cases ptx.cluster.*.
#include "harness.h"
#include "ptx/tensor_map.h"

#include <gtest/gtest.h>

#include <cstring>
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

const Program& clusterProgram() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/cluster.ptx"));
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

struct Schedule {
  const char* name;
  ExecConfig config;
};
const Schedule kSchedules[] = {
    {"1 thread", ExecConfig{1, false, 0, 0}},           {"2 threads", ExecConfig{2, false, 0, 0}},
    {"deterministic", ExecConfig{1, true, 0, 0}},       {"shuffled (seed 5)", ExecConfig{1, true, 5, 0}},
    {"shuffled (seed 12)", ExecConfig{1, true, 12, 0}},
};

LaunchResult run(const Program& prog, const char* name, Dim3 grid, Dim3 block, const Params& p,
                 const ExecConfig& config, Dim3 cluster = {0, 0, 0}) {
  const int k = findKernel(prog, name);
  EXPECT_GE(k, 0) << name;
  EXPECT_EQ(kernels(prog)[size_t(k)].unsupported, "");
  LaunchParams lp = ptxtest::launchParams(grid, block, p, arena());
  lp.config = config;
  lp.cluster = cluster;
  return launch(prog, k, lp);
}

const KernelInfo& info(const Program& prog, const char* name) { return kernels(prog)[size_t(findKernel(prog, name))]; }

// __cluster_dims__(4,1,1): each CTA reads the shared array of the next CTA of its cluster after cluster.sync().
TEST(PtxCluster, SharedMemoryOfTheNextCta) {
  const Program& prog = clusterProgram();
  const unsigned blocks = 12, threads = 128;
  int* out = arena().alloc<int>(blocks * threads);
  for (const Schedule& s : kSchedules) {
    std::fill(out, out + blocks * threads, -1);
    Params p(info(prog, "cluster_ring"));
    p.arg(out);
    LaunchResult r = run(prog, "cluster_ring", Dim3{blocks}, Dim3{threads}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t)
        ASSERT_EQ(out[b * threads + t], int(((b % 4 + 1) % 4) * 1000 + (t + 1) % threads))
            << s.name << " block " << b << " thread " << t;
  }
}

// Atomic adds into rank 0's shared memory from every thread of the cluster; the cluster shape from the launch.
TEST(PtxCluster, AtomicsOnAnotherCtasSharedMemory) {
  const Program& prog = clusterProgram();
  for (unsigned size : {1u, 2u, 3u, 8u, 16u}) {
    const unsigned blocks = size * 3, threads = 96;
    std::vector<int> in(blocks * threads);
    for (size_t i = 0; i < in.size(); ++i) in[i] = int(i * 37 % 101) - 50;
    int* din = arena().upload(in);
    int* out = arena().alloc<int>(blocks);
    for (const Schedule& s : kSchedules) {
      Params p(info(prog, "cluster_sum"));
      p.arg(din).arg(out);
      LaunchResult r = run(prog, "cluster_sum", Dim3{blocks}, Dim3{threads}, p, s.config, Dim3{size, 1, 1});
      ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
      for (unsigned c = 0; c < blocks / size; ++c) {
        int want = 0;
        for (unsigned i = c * size * threads; i < (c + 1) * size * threads; ++i) want += in[i];
        ASSERT_EQ(out[c], want) << s.name << " cluster size " << size << " cluster " << c;
      }
    }
  }
}

// Ranks, indexes in the cluster and %clusterid for a 2x2x1 cluster shape on a 4x4x2 grid: the rank is linear in the
// CTA's index in its cluster, x fastest (as an H100 numbers them: tools/gpu-probe/results/clusters18-*.txt).
TEST(PtxCluster, RanksAndIndexes) {
  const Program& prog = clusterProgram();
  const Dim3 grid{4, 4, 2}, shape{2, 2, 1};
  unsigned* out = arena().alloc<unsigned>(32 * 12);
  for (const Schedule& s : kSchedules) {
    Params p(info(prog, "cluster_info"));
    p.arg(out);
    LaunchResult r = run(prog, "cluster_info", grid, Dim3{64}, p, s.config, shape);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned z = 0; z < 2; ++z)
      for (unsigned y = 0; y < 4; ++y)
        for (unsigned x = 0; x < 4; ++x) {
          const unsigned* o = out + (x + 4 * (y + 4 * z)) * 12;
          const std::vector<unsigned> got(o, o + 12);
          const std::vector<unsigned> want{(x % 2) + 2 * (y % 2), 4, x % 2, y % 2, 0, 2, 2, 1, x / 2, y / 2, 2, 1};
          ASSERT_EQ(got, want) << s.name << " block " << x << "," << y << "," << z;
        }
  }
  // without a cluster shape: clusters of one CTA, not explicit
  Params p(info(prog, "cluster_info"));
  p.arg(out);
  ASSERT_TRUE(run(prog, "cluster_info", Dim3{3}, Dim3{32}, p, kSchedules[0].config).ok());
  for (unsigned b = 0; b < 3; ++b) {
    const std::vector<unsigned> got(out + b * 12, out + b * 12 + 12);
    EXPECT_EQ(got, (std::vector<unsigned>{0, 1, 0, 0, 0, 1, 1, 1, b, 0, 3, 0})) << b;
  }
}

// Rank 1 spins on a flag in its own shared memory that rank 0 sets through distributed shared memory: both CTAs must
// run at once, also on one host thread.
TEST(PtxCluster, CtaWaitsForAnotherCtaOfItsCluster) {
  const Program& prog = clusterProgram();
  const unsigned clusters = 5;
  int* out = arena().alloc<int>(clusters);
  for (const Schedule& s : kSchedules) {
    Params p(info(prog, "cluster_flag"));
    p.arg(out);
    LaunchResult r = run(prog, "cluster_flag", Dim3{2 * clusters}, Dim3{64}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned c = 0; c < clusters; ++c) ASSERT_EQ(out[c], int(42 + 2 * c)) << s.name << " cluster " << c;
  }
}

// cp.async.bulk from rank 0's shared memory into rank 1's completes rank 1's mbarrier.
TEST(PtxCluster, BulkCopyIntoAnotherCtaCompletesItsMbarrier) {
  const Program& prog = clusterProgram();
  const unsigned clusters = 3;
  int* out = arena().alloc<int>(clusters * 16);
  for (const Schedule& s : kSchedules) {
    std::fill(out, out + clusters * 16, 0);
    Params p(info(prog, "cluster_bulk"));
    p.arg(out);
    LaunchResult r = run(prog, "cluster_bulk", Dim3{2 * clusters}, Dim3{32}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned i = 0; i < clusters * 16; ++i) ASSERT_EQ(out[i], int(i % 16)) << s.name << " at " << i;
  }
}

// A __block_size__ kernel (.blocksareclusters) launched in CTAs (the driver's translation of <<<G, 64>>>): its
// clusters are its .reqnctapercluster.
TEST(PtxCluster, BlocksAreClustersKernelRunsInPairs) {
  const Program& prog = clusterProgram();
  const KernelInfo& k = info(prog, "blocks_are_clusters");
  EXPECT_TRUE(k.blocksareclusters);
  EXPECT_EQ(k.reqnctapercluster.x, 2u);
  EXPECT_EQ(k.reqntid.x, 64u);
  unsigned* out = arena().alloc<unsigned>(6 * 64);
  for (const Schedule& s : kSchedules) {
    Params p(k);
    p.arg(out);
    LaunchResult r = run(prog, "blocks_are_clusters", Dim3{6}, Dim3{64}, p, s.config);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < 6; ++b)
      for (unsigned t = 0; t < 64; ++t)
        ASSERT_EQ(out[b * 64 + t], ((b ^ 1) * 64 + t) + (6u << 24) + (64u << 16)) << s.name << " " << b << " " << t;
  }
}

// Hand-written PTX: mapa/getctarank in both windows, ld/st/atom/red .shared::cluster through 32-bit cluster
// addresses, isspacep and cvta between the windows, and a barrier.cluster that threads which exited do not block.
const char* kAddressPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry windows(.param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<16>;
  .reg .pred %p<4>;
  .shared .align 4 .b32 s[4];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIPINIT;
  st.shared.u32 [s], %r2;
  st.shared.u32 [s+4], 0;
SKIPINIT:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  add.u32 %r4, %r2, 1;
  rem.u32 %r4, %r4, %r3;
  mov.u32 %r5, s;
  mapa.shared::cluster.u32 %r6, %r5, %r4;
  ld.shared::cluster.u32 %r7, [%r6];
  atom.shared::cluster.add.u32 %r8, [%r6+4], 1;
  red.shared::cluster.add.u32 [%r6+4], 2;
  getctarank.shared::cluster.u32 %r9, %r6;
  getctarank.shared::cluster.u32 %r10, %r5;
  cvta.shared.u64 %rd2, s;
  mapa.u64 %rd3, %rd2, %r4;
  ld.u32 %r11, [%rd3];
  getctarank.u64 %r12, %rd3;
  isspacep.shared::cta %p2, %rd3;
  selp.u32 %r13, 1, 0, %p2;
  isspacep.shared::cluster %p3, %rd3;
  selp.u32 %r14, 1, 0, %p3;
  cvta.to.shared::cluster.u64 %rd4, %rd3;
  cvt.u32.u64 %r15, %rd4;
  setp.eq.u32 %p2, %r15, %r6;
  selp.u32 %r16, 1, 0, %p2;
  cvt.u64.u32 %rd5, %r6;
  cvta.shared::cluster.u64 %rd6, %rd5;
  setp.eq.u64 %p2, %rd6, %rd3;
  selp.u32 %r17, 1, 0, %p2;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ld.shared.u32 %r18, [s+4];
  @%p1 bra DONE;
  mov.u32 %r20, %ctaid.x;
  mul.wide.u32 %rd7, %r20, 48;
  add.u64 %rd1, %rd1, %rd7;
  st.global.v4.u32 [%rd1], {%r7, %r9, %r10, %r11};
  st.global.v4.u32 [%rd1+16], {%r12, %r13, %r14, %r16};
  st.global.v2.u32 [%rd1+32], {%r17, %r18};
DONE:
  ret;
}

.visible .entry early_exit(.param .u64 out)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .reg .pred %p<2>;
  .shared .align 4 .b32 s[1];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  setp.ge.u32 %p1, %r1, 32;
  @%p1 exit;
  st.shared.u32 [s], %r2;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  xor.b32 %r3, %r2, 1;
  mov.u32 %r4, s;
  mapa.shared::cluster.u32 %r5, %r4, %r3;
  ld.shared::cluster.u32 %r6, [%r5];
  barrier.cluster.arrive;
  barrier.cluster.wait;
  mov.u32 %r7, %ctaid.x;
  mul.wide.u32 %rd2, %r7, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}

.visible .entry outside(.param .u64 out, .param .u32 rank)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .shared .align 4 .b32 s[1];
  ld.param.u32 %r1, [rank];
  mov.u32 %r2, s;
  mapa.shared::cluster.u32 %r3, %r2, %r1;
  st.shared::cluster.u32 [%r3], 7;
  ret;
}
)";

const Program& addressProgram() {
  static std::shared_ptr<const Program> p = [] {
    auto r = compile(kAddressPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  return *p;
}

TEST(PtxCluster, AddressWindows) {
  const Program& prog = addressProgram();
  const unsigned size = 4, clusters = 2;
  unsigned* out = arena().alloc<unsigned>(size * clusters * 12);
  for (const Schedule& s : kSchedules) {
    std::fill(out, out + size * clusters * 12, 0xdeadu);
    Params p(info(prog, "windows"));
    p.arg(out);
    LaunchResult r = run(prog, "windows", Dim3{size * clusters}, Dim3{64}, p, s.config, Dim3{size, 1, 1});
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < size * clusters; ++b) {
      const unsigned rank = b % size, next = (rank + 1) % size;
      const std::vector<unsigned> got(out + b * 12, out + b * 12 + 10);
      // ld through mapa (both windows) reads the next CTA's rank; getctarank of the cluster address, of the own
      // shared::cta address and of the generic address; the other CTA's generic address is not shared::cta but
      // shared::cluster; cvta between the windows round-trips; 64 threads x (1 + 2) added by the previous CTA
      const std::vector<unsigned> want{next, next, rank, next, next, 0, 1, 1, 1, 192};
      ASSERT_EQ(got, want) << s.name << " block " << b;
    }
  }
}

// Threads 32..63 exit before the cluster barriers: the barrier completes with the threads that are left.
TEST(PtxCluster, ExitedThreadsDoNotBlockTheClusterBarrier) {
  const Program& prog = addressProgram();
  unsigned* out = arena().alloc<unsigned>(8);
  for (const Schedule& s : kSchedules) {
    Params p(info(prog, "early_exit"));
    p.arg(out);
    LaunchResult r = run(prog, "early_exit", Dim3{8}, Dim3{64}, p, s.config, Dim3{2, 1, 1});
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < 8; ++b) ASSERT_EQ(out[b], (b % 2) ^ 1) << s.name << " block " << b;
  }
}

// A shared::cluster address of a rank the cluster does not have fails the launch (an H100 gives
// CUDA_ERROR_LAUNCH_FAILED), instead of touching memory.
TEST(PtxCluster, RankOutsideTheClusterFaults) {
  const Program& prog = addressProgram();
  for (unsigned rank : {2u, 5u, 200u}) {
    Params p(info(prog, "outside"));
    p.arg(static_cast<unsigned*>(nullptr)).arg(rank);
    LaunchResult r = run(prog, "outside", Dim3{2}, Dim3{32}, p, kSchedules[0].config, Dim3{2, 1, 1});
    EXPECT_EQ(r.fault.kind, FaultKind::ClusterAddress) << rank << ": " << r.fault.message;
  }
  Params p(info(prog, "outside"));
  p.arg(static_cast<unsigned*>(nullptr)).arg(1u);
  EXPECT_TRUE(run(prog, "outside", Dim3{2}, Dim3{32}, p, kSchedules[0].config, Dim3{2, 1, 1}).ok());
}

// The rank bits of shared addresses, as an H100/H200 gives them
// (tools/gpu-probe/results/clusters18-h100-2026-11-26.txt, rankbits30-h200-2026-11-28.txt): a CTA of rank r reads its
// variable's address as r << 24 | 0x400 (32 and 64 bits), mapa gives k << 24 | 0x400 for rank k (the last rank here),
// cvta round-trips, getctarank of a plain offset is 0 and a plain offset through shared::cluster reads rank 0's memory;
// accesses through the variable (as a memory operand, through a register, through a thread-constant base plus %tid)
// reach the CTA's own block in every rank.
const char* kRankBitsPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry bits(.param .u64 out)
{
  .reg .u32 %r<40>;
  .reg .u64 %rd<16>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 s[64];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, s;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r3, %r4;
  mad.lo.u32 %r6, %r2, 1000, %r1;
  st.shared.u32 [%r5], %r6;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r7, %ctaid.x;
  mul.wide.u32 %rd2, %r7, 64;
  add.u64 %rd1, %rd1, %rd2;
  mov.u64 %rd3, s;
  cvt.u32.u64 %r8, %rd3;
  mapa.shared::cluster.u32 %r9, %r3, 0;
  mov.u32 %r19, %cluster_nctarank;
  sub.u32 %r19, %r19, 1;
  mapa.shared::cluster.u32 %r10, %r3, %r19;
  cvta.shared.u64 %rd4, %rd3;
  cvta.to.shared.u64 %rd5, %rd4;
  cvt.u32.u64 %r11, %rd5;
  and.b32 %r12, %r3, 0xffffff;
  getctarank.shared::cluster.u32 %r13, %r12;
  ld.shared::cluster.u32 %r14, [%r12+8];
  ld.shared.u32 %r15, [s+12];
  ld.shared.u32 %r16, [%r3+16];
  ld.shared::cta.u32 %r17, [%r5+20];
  ld.shared::cluster.u32 %r18, [%r10+4];
  st.global.v4.u32 [%rd1], {%r3, %r8, %r9, %r10};
  st.global.v4.u32 [%rd1+16], {%r11, %r13, %r14, %r15};
  st.global.v4.u32 [%rd1+32], {%r16, %r17, %r18, %r2};
DONE:
  ret;
}
)";

TEST(PtxCluster, SharedAddressesCarryTheRankBits) {
  auto compiled = compile(kRankBitsPtx);
  ASSERT_TRUE(compiled.program) << compiled.error;
  const Program& prog = *compiled.program;
  const unsigned size = 4, clusters = 2;
  unsigned* out = arena().alloc<unsigned>(size * clusters * 16);
  for (const Schedule& s : kSchedules) {
    std::fill(out, out + size * clusters * 16, 0xdeadu);
    Params p(info(prog, "bits"));
    p.arg(out);
    LaunchResult r = run(prog, "bits", Dim3{size * clusters}, Dim3{64}, p, s.config, Dim3{size, 1, 1});
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < size * clusters; ++b) {
      const unsigned rank = b % size, own = rank << 24 | 0x400;
      const std::vector<unsigned> got(out + b * 16, out + b * 16 + 12);
      const std::vector<unsigned> want{own,      own, 0x400,           3u << 24 | 0x400, own,
                                       0,        2,   rank * 1000 + 3, rank * 1000 + 4,  rank * 1000 + 5,
                                       3000 + 1, rank};
      ASSERT_EQ(got, want) << s.name << " block " << b;
    }
  }
  // outside a cluster every CTA is rank 0: plain offsets
  Params p(info(prog, "bits"));
  p.arg(out);
  ASSERT_TRUE(run(prog, "bits", Dim3{2}, Dim3{64}, p, kSchedules[0].config).ok());
  const std::vector<unsigned> got(out + 16, out + 16 + 12);
  const std::vector<unsigned> want{0x400, 0x400, 0x400, 0x400, 0x400, 0, 2, 3, 4, 5, 1, 0};
  EXPECT_EQ(got, want);
}

// A tensor copy with .multicast::cluster: rank 0 loads one 16 x 8 box into ranks 1 and 2 (ctaMask 0b0110), completing
// their mbarriers; ranks 0 and 3 receive nothing.
const char* kTensorMulticastPtx = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry tmc(.param .align 64 .b8 map[128], .param .u64 pout)
{
  .reg .pred %p<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
  .reg .b16 %rs<2>;
  .shared .align 1024 .b8 sbuf[512];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd2, [pout];
  mov.u64 %rd1, map;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r10, bar;
  mov.u32 %r11, sbuf;
  mbarrier.init.shared::cta.b64 [%r10], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r10], 512;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  setp.eq.u32 %p1, %r1, 0;
  mov.b16 %rs1, 6;
  mov.u32 %r2, 0;
  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r11], [%rd1, {%r2, %r2}], [%r10], %rs1;
  setp.eq.u32 %p2, %r1, 1;
  setp.eq.u32 %p3, %r1, 2;
  or.pred %p4, %p2, %p3;
  @!%p4 bra DONE;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r10], 0;
  @!%p5 bra WAIT;
  mov.u32 %r12, 0;
  mov.u32 %r3, %ctaid.x;
  mul.wide.u32 %rd4, %r3, 512;
  add.u64 %rd2, %rd2, %rd4;
COPY:
  add.u32 %r13, %r11, %r12;
  ld.shared.u32 %r20, [%r13];
  cvt.u64.u32 %rd5, %r12;
  add.u64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r20;
  add.u32 %r12, %r12, 4;
  setp.lt.u32 %p6, %r12, 512;
  @%p6 bra COPY;
DONE:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";

// The tensor the multicast tests copy: 16 x 8 u32 words, word i holding 5000 + i, one box of all of it; its address
// into `address` when given.
struct alignas(64) MulticastMap {
  uint8_t bytes[128] = {};
};
MulticastMap multicastSource(uint64_t* address = nullptr) {
  std::vector<uint32_t> t(16 * 8);
  for (uint32_t i = 0; i < t.size(); ++i) t[i] = 5000 + i;
  uint32_t* data = arena().upload(t);
  ptx::TensorMap e;
  e.dataType = ptx::TensorMapType::u32;
  e.rank = 2;
  e.address = reinterpret_cast<uint64_t>(data);
  e.dims[0] = 16;
  e.dims[1] = 8;
  e.strides[0] = 16 * 4;
  e.box[0] = 16;
  e.box[1] = 8;
  MulticastMap map;
  ptx::encodeTensorMap(e, map.bytes);
  if (address) *address = e.address;
  return map;
}

TEST(PtxCluster, TensorCopyMulticast) {
  static std::shared_ptr<const Program> prog = [] {
    auto r = compile(kTensorMulticastPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  const MulticastMap map = multicastSource();
  uint32_t* out = arena().alloc<uint32_t>(8 * 128);
  for (const Schedule& s : kSchedules) {
    std::fill(out, out + 8 * 128, 0xeeeeeeeeu);
    Params p(info(*prog, "tmc"));
    p.arg(map).arg(out);
    LaunchResult r = run(*prog, "tmc", Dim3{8}, Dim3{1}, p, s.config, Dim3{4, 1, 1});
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < 8; ++b)
      for (unsigned i = 0; i < 128; ++i)
        ASSERT_EQ(out[b * 128 + i], b % 4 == 1 || b % 4 == 2 ? 5000 + i : 0xeeeeeeeeu)
            << s.name << " " << b << " " << i;
  }
}

// A multicast's CTA mask may name only ranks the cluster has: as an H200 does (conformance
// ptx.cluster.TensorMulticast_Faults.*, driver 580), a mask with a bit at or past the cluster's size ends the grid with
// a cluster-address fault (CUDA_ERROR_LAUNCH_FAILED), for tensor and bulk copies alike.
TEST(PtxCluster, MulticastMaskPastTheClusterFaults) {
  uint64_t data = 0;
  const MulticastMap map = multicastSource(&data);
  uint32_t* out = arena().alloc<uint32_t>(8 * 128);
  const std::string maskLine = "mov.b16 %rs1, 6;";
  const std::string tensorCopy =
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r11], "
      "[%rd1, {%r2, %r2}], [%r10], %rs1;";
  const std::string bulkCopy =
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r11], [%rd8], 512, "
      "[%r10], %rs1;";
  const std::string source = "mov.u64 %rd8, " + std::to_string(data) + ";\n  ";
  for (bool bulk : {false, true})
    for (unsigned mask : {0x36u, 0x16u, 0xffffu}) {  // ranks 1 and 2 (which wait for the copy) and 4, 5; or all 16
      std::string text = kTensorMulticastPtx;
      text.replace(text.find(maskLine), maskLine.size(), source + "mov.b16 %rs1, " + std::to_string(mask) + ";");
      if (bulk) text.replace(text.find(tensorCopy), tensorCopy.size(), bulkCopy);
      auto c = compile(text);
      ASSERT_TRUE(c.program) << c.error;
      for (const Schedule& s : kSchedules) {
        std::fill(out, out + 8 * 128, 0xeeeeeeeeu);
        Params p(info(*c.program, "tmc"));
        p.arg(map).arg(out);
        LaunchResult r = run(*c.program, "tmc", Dim3{8}, Dim3{1}, p, s.config, Dim3{4, 1, 1});
        EXPECT_EQ(r.fault.kind, FaultKind::ClusterAddress) << bulk << " " << mask << " " << s.name;
        EXPECT_NE(r.fault.message.find("outside the cluster of 4"), std::string::npos) << r.fault.message;
      }
    }
}

// st.async and red.async into the partner CTA complete the partner's mbarrier with their sizes (16 + 4 bytes).
const char* kStoreAsyncPtx = R"(
.version 8.1
.target sm_90
.address_size 64
.visible .entry stasync(.param .u64 pout)
{
  .reg .pred %p<4>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<8>;
  .shared .align 16 .b32 buf[4];
  .shared .align 4 .b32 counter;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %cluster_ctarank;
  xor.b32 %r2, %r1, 1;
  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  mov.u32 %r5, counter;
  st.shared.u32 [counter], 5;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r3], 20;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  mapa.shared::cluster.u32 %r6, %r4, %r2;
  mapa.shared::cluster.u32 %r7, %r5, %r2;
  mapa.shared::cluster.u32 %r8, %r3, %r2;
  add.u32 %r10, %r1, 1;
  add.u32 %r11, %r1, 2;
  add.u32 %r12, %r1, 3;
  add.u32 %r13, %r1, 4;
  st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.u32 [%r6], {%r10, %r11, %r12, %r13}, [%r8];
  add.u32 %r14, %r1, 10;
  red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r7], %r14, [%r8];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [buf];
  ld.shared.u32 %r24, [counter];
  mov.u32 %r25, %ctaid.x;
  mul.wide.u32 %rd3, %r25, 32;
  add.u64 %rd4, %rd1, %rd3;
  st.global.v4.u32 [%rd4], {%r20, %r21, %r22, %r23};
  st.global.u32 [%rd4+16], %r24;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";

TEST(PtxCluster, StoreAndReduceAsyncCompleteTheTargetsMbarrier) {
  static std::shared_ptr<const Program> prog = [] {
    auto r = compile(kStoreAsyncPtx);
    if (!r.program) throw std::runtime_error(r.error);
    return r.program;
  }();
  uint32_t* out = arena().alloc<uint32_t>(6 * 8);
  for (const Schedule& s : kSchedules) {
    Params p(info(*prog, "stasync"));
    p.arg(out);
    LaunchResult r = run(*prog, "stasync", Dim3{6}, Dim3{1}, p, s.config, Dim3{2, 1, 1});
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.fault.message;
    for (unsigned b = 0; b < 6; ++b) {
      const uint32_t partner = (b % 2) ^ 1;
      const std::vector<uint32_t> got(out + b * 8, out + b * 8 + 5);
      EXPECT_EQ(got, (std::vector<uint32_t>{partner + 1, partner + 2, partner + 3, partner + 4, 5 + 10 + partner}))
          << s.name << " " << b;
    }
  }
}

// Cluster shapes the interpreter refuses: more than 16 CTAs, shapes that do not tile the grid.
TEST(PtxCluster, ShapesThatCannotRun) {
  const Program& prog = clusterProgram();
  int* out = arena().alloc<int>(64);
  int* in = arena().alloc<int>(64 * 32);
  for (auto [grid, shape] : {std::pair{Dim3{32}, Dim3{32, 1, 1}}, {Dim3{6}, Dim3{4, 1, 1}}, {Dim3{4, 3}, Dim3{2, 2}}}) {
    Params p(info(prog, "cluster_sum"));
    p.arg(in).arg(out);
    LaunchResult r = run(prog, "cluster_sum", grid, Dim3{32}, p, kSchedules[0].config, shape);
    EXPECT_EQ(r.fault.kind, FaultKind::LaunchInvalid) << r.fault.message;
  }
}

}  // namespace
