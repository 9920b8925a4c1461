// ptx.cluster: thread-block clusters (sm_90): the cluster special registers, distributed shared memory (mapa,
// getctarank, ld/st/atom/red .shared::cluster, generic addresses of other CTAs' shared memory), barrier.cluster,
// bulk copies into another CTA's shared memory (one CTA's and multicast), .blocksareclusters. api.launch.Clusters:
// which cluster shapes driver 580 launches. Values as an H100 gives them (tools/gpu-probe/clusters18.cpp). Raw
// shared-window addresses are not compared: cuemu's shared::cta addresses do not carry the rank an H100 puts in
// them (ptx-interp/README.md), only what is done with them.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

const char* kClusterPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.func sregs_body(.param .u64 out)
{
  .reg .u32 %r<40>;
  .reg .u64 %rd<8>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  or.b32 %r1, %r1, %r2;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ctaid.y;
  mov.u32 %r5, %ctaid.z;
  mov.u32 %r6, %nctaid.x;
  mov.u32 %r7, %nctaid.y;
  mad.lo.u32 %r8, %r5, %r7, %r4;
  mad.lo.u32 %r8, %r8, %r6, %r3;
  mul.wide.u32 %rd2, %r8, 64;
  add.u64 %rd1, %rd1, %rd2;
  mov.u32 %r10, %clusterid.x;
  mov.u32 %r11, %clusterid.y;
  mov.u32 %r12, %clusterid.z;
  mov.u32 %r13, %nclusterid.x;
  st.global.v4.u32 [%rd1], {%r10, %r11, %r12, %r13};
  mov.u32 %r14, %nclusterid.y;
  mov.u32 %r15, %nclusterid.z;
  mov.u32 %r16, %cluster_ctaid.x;
  mov.u32 %r17, %cluster_ctaid.y;
  st.global.v4.u32 [%rd1+16], {%r14, %r15, %r16, %r17};
  mov.u32 %r18, %cluster_ctaid.z;
  mov.u32 %r19, %cluster_nctaid.x;
  mov.u32 %r20, %cluster_nctaid.y;
  mov.u32 %r21, %cluster_nctaid.z;
  st.global.v4.u32 [%rd1+32], {%r18, %r19, %r20, %r21};
  mov.u32 %r22, %cluster_ctarank;
  mov.u32 %r23, %cluster_nctarank;
  mov.pred %p2, %is_explicit_cluster;
  selp.u32 %r24, 1, 0, %p2;
  mov.u32 %r25, 0xabcd;
  st.global.v4.u32 [%rd1+48], {%r22, %r23, %r24, %r25};
DONE:
  ret;
}

.visible .entry sregs(.param .u64 out)
{
  .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .u64 a; st.param.u64 [a], %rd1; call sregs_body, (a); }
  ret;
}

.visible .entry sregs_req(.param .u64 out)
.reqnctapercluster 2, 1, 1
{
  .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .u64 a; st.param.u64 [a], %rd1; call sregs_body, (a); }
  ret;
}

.visible .entry sregs_explicit(.param .u64 out)
.explicitcluster
{
  .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .u64 a; st.param.u64 [a], %rd1; call sregs_body, (a); }
  ret;
}

.visible .entry sregs_maxrank(.param .u64 out)
.maxclusterrank 2
{
  .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .u64 a; st.param.u64 [a], %rd1; call sregs_body, (a); }
  ret;
}

// Every CTA: s[0] = rank, s[1] = 0; after a cluster barrier each thread reads the next CTA's s[0] through a
// shared::cluster address, adds 1 (atom) and 2 (red) to its s[1], stores 10 + its rank into s[2 + tid] there.
.visible .entry dsmem(.param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<16>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 s[80];
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
  shl.b32 %r9, %r1, 2;
  add.u32 %r10, %r6, %r9;
  add.u32 %r11, %r2, 10;
  st.shared::cluster.u32 [%r10+8], %r11;
  getctarank.shared::cluster.u32 %r12, %r6;
  getctarank.shared::cluster.u32 %r13, %r5;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  add.u32 %r14, %r5, %r9;
  ld.shared.u32 %r15, [%r14+8];
  ld.shared.u32 %r16, [s+4];
  mov.u32 %r17, %ctaid.x;
  mov.u32 %r18, %ntid.x;
  mad.lo.u32 %r19, %r17, %r18, %r1;
  mul.wide.u32 %rd2, %r19, 24;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  st.global.u32 [%rd3+4], %r12;
  st.global.u32 [%rd3+8], %r13;
  st.global.u32 [%rd3+12], %r15;
  st.global.u32 [%rd3+16], %r16;
  st.global.u32 [%rd3+20], %r8;
  ret;
}

// Generic addresses: mapa.u64 to the next CTA, a load through it, getctarank, isspacep of both windows, cvta to
// the shared::cluster window and back (compared, not stored: the values are addresses).
.visible .entry generic(.param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<16>;
  .reg .pred %p<8>;
  .shared .align 4 .b32 s[4];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIPINIT;
  add.u32 %r20, %r2, 100;
  st.shared.u32 [s], %r20;
SKIPINIT:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  add.u32 %r4, %r2, 1;
  rem.u32 %r4, %r4, %r3;
  cvta.shared.u64 %rd2, s;
  mapa.u64 %rd3, %rd2, %r4;
  ld.u32 %r5, [%rd3];
  getctarank.u64 %r6, %rd3;
  getctarank.u64 %r7, %rd2;
  isspacep.shared::cta %p2, %rd3;
  selp.u32 %r8, 1, 0, %p2;
  isspacep.shared::cluster %p3, %rd3;
  selp.u32 %r9, 1, 0, %p3;
  isspacep.shared::cta %p4, %rd2;
  selp.u32 %r10, 1, 0, %p4;
  isspacep.global %p5, %rd3;
  selp.u32 %r11, 1, 0, %p5;
  mov.u32 %r12, s;
  mapa.shared::cluster.u32 %r13, %r12, %r4;
  cvta.to.shared::cluster.u64 %rd4, %rd3;
  cvt.u32.u64 %r14, %rd4;
  setp.eq.u32 %p6, %r14, %r13;
  selp.u32 %r15, 1, 0, %p6;
  cvt.u64.u32 %rd5, %r13;
  cvta.shared::cluster.u64 %rd6, %rd5;
  setp.eq.u64 %p7, %rd6, %rd3;
  selp.u32 %r16, 1, 0, %p7;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  @%p1 bra DONE;
  mov.u32 %r17, %ctaid.x;
  mul.wide.u32 %rd7, %r17, 32;
  add.u64 %rd1, %rd1, %rd7;
  st.global.v4.u32 [%rd1], {%r5, %r6, %r7, %r8};
  st.global.v4.u32 [%rd1+16], {%r9, %r10, %r11, %r15};
  st.global.u32 [%rd1+28], %r16;
DONE:
  ret;
}

// Rounds of a split barrier: each round every thread adds the partner CTA's value of the previous round to its
// own, with work between arrive and wait; two buffers so no value is overwritten while the partner may read it.
.visible .entry rounds(.param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 4 .b32 v[128];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  xor.b32 %r3, %r2, 1;
  shl.b32 %r4, %r1, 2;
  mov.u32 %r5, v;
  add.u32 %r6, %r5, %r4;
  mad.lo.u32 %r7, %r2, 1000, %r1;
  st.shared.u32 [%r6], %r7;
  mapa.shared::cluster.u32 %r8, %r6, %r3;
  mov.u32 %r9, 0;
LOOP:
  barrier.cluster.arrive.release;
  and.b32 %r10, %r9, 1;
  mul.lo.u32 %r11, %r10, 256;
  xor.b32 %r12, %r11, 256;
  barrier.cluster.wait.acquire;
  add.u32 %r13, %r8, %r11;
  ld.shared::cluster.u32 %r14, [%r13];
  add.u32 %r15, %r6, %r11;
  ld.shared.u32 %r16, [%r15];
  add.u32 %r16, %r16, %r14;
  add.u32 %r17, %r6, %r12;
  st.shared.u32 [%r17], %r16;
  mov.u32 %r7, %r16;
  add.u32 %r9, %r9, 1;
  setp.lt.u32 %p1, %r9, 5;
  @%p1 bra LOOP;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  mov.u32 %r18, %ctaid.x;
  mov.u32 %r19, %ntid.x;
  mad.lo.u32 %r20, %r18, %r19, %r1;
  mul.wide.u32 %rd2, %r20, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}

// Rank 0 copies 64 bytes of its shared memory into rank 1's with cp.async.bulk, completing rank 1's mbarrier;
// every CTA then writes what its destination holds.
.visible .entry bulk_peer(.param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 src[16];
  .shared .align 16 .b32 dst[16];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, src;
  add.u32 %r5, %r4, %r3;
  mad.lo.u32 %r6, %r2, 100, %r1;
  st.shared.u32 [%r5], %r6;
  mov.u32 %r7, dst;
  add.u32 %r8, %r7, %r3;
  st.shared.u32 [%r8], -1;
  mov.u32 %r9, bar;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r9], 1;
  setp.eq.u32 %p2, %r2, 1;
  and.pred %p3, %p1, %p2;
  @%p3 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r9], 64;
  fence.proxy.async.shared::cta;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  setp.eq.u32 %p2, %r2, 0;
  and.pred %p3, %p1, %p2;
  @!%p3 bra WAIT;
  mapa.shared::cluster.u32 %r10, %r7, 1;
  mapa.shared::cluster.u32 %r11, %r9, 1;
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r10], [%r4], 64, [%r11];
WAIT:
  setp.ne.u32 %p2, %r2, 1;
  @%p2 bra DONE;
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r9], 0;
  @!%p3 bra SPIN;
DONE:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ld.shared.u32 %r12, [%r8];
  mov.u32 %r13, %ctaid.x;
  mad.lo.u32 %r14, %r13, 16, %r1;
  mul.wide.u32 %rd2, %r14, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r12;
  ret;
}

// Multicast: every CTA expects 64 bytes on its mbarrier; rank 0 copies 64 bytes of global memory to ranks 0, 1
// and 3 at once (ctaMask 0b1011), rank 2 copies another 64 bytes to itself.
.visible .entry bulk_multicast(.param .u64 in, .param .u64 out)
{
  .reg .u32 %r<32>;
  .reg .u64 %rd<8>;
  .reg .b16 %rs<2>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 dst[16];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd4, [in];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r7, dst;
  add.u32 %r8, %r7, %r3;
  st.shared.u32 [%r8], -1;
  mov.u32 %r9, bar;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r9], 1;
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r9], 64;
  fence.proxy.async.shared::cta;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  setp.eq.u32 %p2, %r2, 0;
  and.pred %p3, %p1, %p2;
  mov.b16 %rs1, 11;
  @%p3 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r7], [%rd4], 64, [%r9], %rs1;
  setp.eq.u32 %p2, %r2, 2;
  and.pred %p3, %p1, %p2;
  add.u64 %rd5, %rd4, 64;
  @%p3 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd5], 64, [%r9];
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r9], 0;
  @!%p3 bra SPIN;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ld.shared.u32 %r12, [%r8];
  mov.u32 %r13, %ctaid.x;
  mad.lo.u32 %r14, %r13, 16, %r1;
  mul.wide.u32 %rd2, %r14, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r12;
  ret;
}
)";

const char* kBlocksAreClustersPtx = R"(
.version 9.0
.target sm_90
.address_size 64

.visible .entry bac(.param .u64 out)
.blocksareclusters
.reqntid 64, 1, 1
.reqnctapercluster 2, 1, 1
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %nctaid.x;
  mov.u32 %r4, %nclusterid.x;
  mov.u32 %r5, %cluster_ctarank;
  mul.wide.u32 %rd2, %r2, 16;
  add.u64 %rd1, %rd1, %rd2;
  mov.u32 %r6, %ntid.x;
  st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
DONE:
  ret;
}
)";

// Fixture: the module of the cases, an output buffer, and launches with an optional cluster shape.
class ClusterTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) GTEST_SKIP() << "not-supported: no clusters";
    char log[8192] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
    ASSERT_EQ(cuModuleLoadDataEx(&mod, kClusterPtx, 2, opts, vals), CUDA_SUCCESS) << log;
    ASSERT_EQ(cuMemAlloc(&out, kOutWords * 4), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc(&in, 256), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (out) cuMemFree(out);
    if (in) cuMemFree(in);
    if (mod) cuModuleUnload(mod);
    ContextTest::TearDown();
  }
  CUfunction Fn(const char* name, CUmodule m = nullptr) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, m ? m : mod, name), CUDA_SUCCESS) << name;
    return f;
  }
  // Launches f (params: out, or in and out) and synchronizes; the launch's error, else the synchronization's.
  CUresult Run(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, const unsigned* cluster,
               int policy = -1, bool cooperative = false, bool withInput = false) {
    CUlaunchAttribute attrs[3] = {};
    unsigned n = 0;
    if (cluster) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[n].value.clusterDim.x = cluster[0];
      attrs[n].value.clusterDim.y = cluster[1];
      attrs[n].value.clusterDim.z = cluster[2];
      ++n;
    }
    if (policy >= 0) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
      attrs[n].value.clusterSchedulingPolicyPreference = CUclusterSchedulingPolicy(policy);
      ++n;
    }
    if (cooperative) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attrs[n].value.cooperative = 1;
      ++n;
    }
    CUlaunchConfig cfg = {};
    cfg.gridDimX = gx;
    cfg.gridDimY = gy;
    cfg.gridDimZ = gz;
    cfg.blockDimX = bx;
    cfg.blockDimY = by;
    cfg.blockDimZ = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = n;
    void* outOnly[] = {&out};
    void* inOut[] = {&in, &out};
    EXPECT_EQ(cuMemsetD32(out, 0, kOutWords), CUDA_SUCCESS);
    CUresult r = cuLaunchKernelEx(&cfg, f, withInput ? inOut : outOnly, nullptr);
    CUresult s = cuCtxSynchronize();
    host.assign(kOutWords, 0);
    const CUresult copied = cuMemcpyDtoH(host.data(), out, kOutWords * 4);
    if (r == CUDA_SUCCESS && s == CUDA_SUCCESS) {  // a fault sticks to the context
      EXPECT_EQ(copied, CUDA_SUCCESS);
    }
    return r != CUDA_SUCCESS ? r : s;
  }
  // sregs_body's 16 words of CTA `linear`: clusterid xyz, nclusterid xyz, cluster_ctaid xyz, cluster_nctaid xyz,
  // ctarank, nctarank, is_explicit_cluster, marker
  std::vector<uint32_t> Sregs(unsigned linear) const {
    return std::vector<uint32_t>(host.begin() + linear * 16, host.begin() + linear * 16 + 16);
  }
  static constexpr size_t kOutWords = 4096;
  CUmodule mod = nullptr;
  CUdeviceptr out = 0, in = 0;
  std::vector<uint32_t> host;
};

using ptx_cluster = ClusterTest;

TEST_F(ptx_cluster, SpecialRegisters3DCluster) {
  const unsigned shape[3] = {2, 2, 2};
  CU_ASSERT_OK(Run(Fn("sregs"), 4, 2, 2, 4, 2, shape));
  for (unsigned z = 0; z < 2; ++z)
    for (unsigned y = 0; y < 2; ++y)
      for (unsigned x = 0; x < 4; ++x) {
        const std::vector<uint32_t> want{x / 2, 0, 0,     2, 1, 1, x % 2, y, z, 2, 2, 2, x % 2 + 2 * y + 4 * z,
                                         8,     1, 0xabcd};
        EXPECT_EQ(Sregs(x + 4 * (y + 2 * z)), want) << x << "," << y << "," << z;
      }
}

TEST_F(ptx_cluster, SpecialRegistersWithoutCluster) {
  CU_ASSERT_OK(Run(Fn("sregs"), 2, 1, 1, 32, 1, nullptr));
  for (unsigned b = 0; b < 2; ++b)
    EXPECT_EQ(Sregs(b), (std::vector<uint32_t>{b, 0, 0, 2, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0xabcd})) << b;
  const unsigned one[3] = {1, 1, 1};
  CU_ASSERT_OK(Run(Fn("sregs"), 2, 1, 1, 32, 1, one));
  for (unsigned b = 0; b < 2; ++b)
    EXPECT_EQ(Sregs(b), (std::vector<uint32_t>{b, 0, 0, 2, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0xabcd}))
        << "a launch with a cluster shape is explicit, also of one CTA: " << b;
}

TEST_F(ptx_cluster, RequiredShapeWithoutAttribute) {
  CU_ASSERT_OK(Run(Fn("sregs_req"), 4, 1, 1, 32, 1, nullptr));
  for (unsigned b = 0; b < 4; ++b)
    EXPECT_EQ(Sregs(b), (std::vector<uint32_t>{b / 2, 0, 0, 2, 1, 1, b % 2, 0, 0, 2, 1, 1, b % 2, 2, 1, 0xabcd})) << b;
  CU_ASSERT_OK(Run(Fn("sregs_maxrank"), 4, 1, 1, 32, 1, nullptr));
  for (unsigned b = 0; b < 4; ++b)
    EXPECT_EQ(Sregs(b), (std::vector<uint32_t>{b, 0, 0, 4, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0xabcd}))
        << ".maxclusterrank alone gives no cluster: " << b;
}

TEST_F(ptx_cluster, DistributedSharedMemory) {
  const unsigned shape[3] = {4, 1, 1};
  const unsigned threads = 64;
  CU_ASSERT_OK(Run(Fn("dsmem"), 8, 1, 1, threads, 1, shape));
  std::vector<uint32_t> hostCopy = host;
  for (unsigned b = 0; b < 8; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      const unsigned rank = b % 4, next = (rank + 1) % 4, previous = (rank + 3) % 4;
      const uint32_t* o = &hostCopy[(b * threads + t) * 6];
      EXPECT_EQ(o[0], next) << b << " " << t;
      EXPECT_EQ(o[1], next);
      EXPECT_EQ(o[2], rank);
      EXPECT_EQ(o[3], 10 + previous) << "written by the previous CTA";
      EXPECT_EQ(o[4], 3 * threads) << "atom and red of the previous CTA";
      EXPECT_LT(o[5], 3 * threads) << "atom's old value";
    }
}

TEST_F(ptx_cluster, GenericAddressesOfOtherCtas) {
  const unsigned shape[3] = {4, 1, 1};
  CU_ASSERT_OK(Run(Fn("generic"), 8, 1, 1, 32, 1, shape));
  for (unsigned b = 0; b < 8; ++b) {
    const unsigned rank = b % 4, next = (rank + 1) % 4;
    const std::vector<uint32_t> got(host.begin() + b * 8, host.begin() + b * 8 + 8);
    // value, getctarank (other, own), isspacep shared::cta (other), shared::cluster (other), shared::cta (own),
    // global (other), cvta to shared::cluster == mapa, cvta back == mapa.u64
    EXPECT_EQ(got, (std::vector<uint32_t>{100 + next, next, rank, 0, 1, 1, 0, 1})) << b;
  }
}

TEST_F(ptx_cluster, SplitBarrierRounds) {
  const unsigned shape[3] = {2, 1, 1};
  const unsigned threads = 64, blocks = 6;
  CU_ASSERT_OK(Run(Fn("rounds"), blocks, 1, 1, threads, 1, shape));
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      uint32_t mine = (b % 2) * 1000 + t, other = ((b % 2) ^ 1) * 1000 + t;
      for (int round = 0; round < 5; ++round) {
        uint32_t a = mine + other, c = other + mine;
        mine = a;
        other = c;
      }
      EXPECT_EQ(host[b * threads + t], mine) << b << " " << t;
    }
}

TEST_F(ptx_cluster, BulkCopyIntoAnotherCta) {
  const unsigned shape[3] = {2, 1, 1};
  CU_ASSERT_OK(Run(Fn("bulk_peer"), 4, 1, 1, 16, 1, shape));
  for (unsigned b = 0; b < 4; ++b)
    for (unsigned t = 0; t < 16; ++t) EXPECT_EQ(host[b * 16 + t], b % 2 == 1 ? t : 0xffffffffu) << b << " " << t;
}

TEST_F(ptx_cluster, BulkCopyMulticast) {
  std::vector<uint32_t> input(32);
  for (unsigned i = 0; i < 32; ++i) input[i] = 7000 + i;
  CU_ASSERT_OK(cuMemcpyHtoD(in, input.data(), 128));
  const unsigned shape[3] = {4, 1, 1};
  CU_ASSERT_OK(Run(Fn("bulk_multicast"), 8, 1, 1, 16, 1, shape, -1, false, true));
  for (unsigned b = 0; b < 8; ++b)
    for (unsigned t = 0; t < 16; ++t) EXPECT_EQ(host[b * 16 + t], b % 4 == 2 ? 7016 + t : 7000 + t) << b << " " << t;
}

// __block_size__ kernels (.blocksareclusters): the grid counts clusters of .reqnctapercluster CTAs of .reqntid
// threads; the block given must be .reqntid or 1.
TEST_F(ptx_cluster, BlocksAreClusters) {
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CUmodule bmod = nullptr;
  ASSERT_EQ(cuModuleLoadDataEx(&bmod, kBlocksAreClustersPtx, 2, opts, vals), CUDA_SUCCESS) << log;
  CUfunction bac = Fn("bac", bmod);
  for (unsigned block : {64u, 1u}) {
    CU_ASSERT_OK(Run(bac, 3, 1, 1, block, 1, nullptr)) << block;
    for (unsigned c = 0; c < 6; ++c)
      EXPECT_EQ(std::vector<uint32_t>(host.begin() + c * 4, host.begin() + c * 4 + 4),
                (std::vector<uint32_t>{6, 3, c % 2, 64}))
          << block << " " << c;
  }
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, Run(bac, 3, 1, 1, 32, 1, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, Run(bac, 3, 1, 1, 2, 1, nullptr));
  const unsigned two[3] = {2, 1, 1}, one[3] = {1, 1, 1};
  CU_EXPECT_OK(Run(bac, 4, 1, 1, 64, 1, two));
  EXPECT_EQ(host[0], 8u);
  EXPECT_EQ(host[1], 4u);
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(bac, 4, 1, 1, 64, 1, one));
  int v = -1;
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, bac));
  EXPECT_EQ(v, 2);
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, bac));
  EXPECT_EQ(v, 0);
  cuModuleUnload(bmod);
}

using ptx_cluster_Faults = ClusterTest;

// A shared::cluster address of a rank the cluster does not have: the launch fails (an H100 says LAUNCH_FAILED).
TEST_F(ptx_cluster_Faults, RankOutsideTheCluster) {
  const char* ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r<8>;
  .shared .align 4 .b32 s[4];
  mov.u32 %r2, s;
  mapa.shared::cluster.u32 %r3, %r2, 5;
  st.shared::cluster.u32 [%r3], 7;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";
  CUmodule m = nullptr;
  ASSERT_EQ(cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
  const unsigned shape[3] = {2, 1, 1};
  CU_EXPECT(CUDA_ERROR_LAUNCH_FAILED, Run(Fn("k", m), 2, 1, 1, 32, 1, shape));
}

// The rank bits of shared addresses (measured on an H100, tools/gpu-probe/results/clusters18-h100-2026-11-26.txt,
// and an H200, rankbits30-h200-2026-11-28.txt): a CTA of rank r sees its variable at r << 24 | 0x400, in 32 and 64
// bits; mapa to rank k gives k << 24 | 0x400; cvta.shared of a plain offset is rank 0's generic address, and
// cvta.to.shared of the own generic address has the rank bits; getctarank of a plain offset is 0; a plain offset
// through shared::cluster reads rank 0's memory; the variable as a memory operand and through registers reads the
// CTA's own.
TEST_F(ptx_cluster, SharedAddressesCarryTheRank) {
  const char* ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
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
  mapa.shared::cluster.u32 %r9, %r3, 2;
  and.b32 %r10, %r3, 0xffffff;
  cvt.u64.u32 %rd4, %r10;
  cvta.shared.u64 %rd5, %rd4;
  ld.u32 %r11, [%rd5+4];
  cvta.shared.u64 %rd6, %rd3;
  cvta.to.shared.u64 %rd7, %rd6;
  cvt.u32.u64 %r12, %rd7;
  getctarank.shared::cluster.u32 %r13, %r10;
  ld.shared::cluster.u32 %r14, [%r10+8];
  ld.shared.u32 %r15, [s+12];
  ld.shared.u32 %r16, [%r3+16];
  ld.shared::cluster.u32 %r17, [%r9+20];
  st.global.v4.u32 [%rd1], {%r3, %r8, %r9, %r11};
  st.global.v4.u32 [%rd1+16], {%r12, %r13, %r14, %r15};
  st.global.v2.u32 [%rd1+32], {%r16, %r17};
DONE:
  ret;
}
)";
  CUmodule m = nullptr;
  ASSERT_EQ(cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
  const unsigned shape[3] = {4, 1, 1};
  CU_ASSERT_OK(Run(Fn("k", m), 8, 1, 1, 64, 1, shape));
  for (unsigned b = 0; b < 8; ++b) {
    const unsigned rank = b % 4, own = rank << 24 | 0x400;
    const std::vector<uint32_t> got(host.begin() + b * 16, host.begin() + b * 16 + 10);
    EXPECT_EQ(got,
              (std::vector<uint32_t>{own, own, 2u << 24 | 0x400, 1, own, 0, 2, rank * 1000 + 3, rank * 1000 + 4, 2005}))
        << b;
  }
  CU_EXPECT_OK(cuModuleUnload(m));
}

// A shared::cta access through a plain offset in a CTA of rank 1 (rank 0's bits): an H200 stops the kernel with an
// illegal-instruction error (rankbits30), where rank 0's own plain offsets are fine.
TEST_F(ptx_cluster_Faults, SharedCtaAccessWithAnotherCtasBits) {
  const char* ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .shared .align 4 .b32 s[4];
  ld.param.u64 %rd1, [out];
  st.shared.u32 [s], 5;
  mov.u32 %r1, s;
  and.b32 %r2, %r1, 0xffffff;
  ld.shared::cta.u32 %r3, [%r2];
  st.global.u32 [%rd1], %r3;
  ret;
}
)";
  CUmodule m = nullptr;
  ASSERT_EQ(cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
  const unsigned one[3] = {1, 1, 1}, two[3] = {2, 1, 1};
  CU_EXPECT_OK(Run(Fn("k", m), 2, 1, 1, 32, 1, one));
  EXPECT_EQ(host[0], 5u);
  CU_EXPECT(CUDA_ERROR_ILLEGAL_INSTRUCTION, Run(Fn("k", m), 2, 1, 1, 32, 1, two));
}

using api_launch_Clusters = ClusterTest;

TEST_F(api_launch_Clusters, ShapeLimits) {
  CUfunction f = Fn("sregs");
  const unsigned c8[3] = {8, 1, 1}, c3[3] = {3, 1, 1}, c9[3] = {9, 1, 1}, c16[3] = {16, 1, 1}, c32[3] = {32, 1, 1},
                 c442[3] = {4, 4, 2};
  CU_EXPECT_OK(Run(f, 8, 1, 1, 32, 1, c8));
  CU_EXPECT_OK(Run(f, 8, 1, 1, 1024, 1, c8));
  CU_EXPECT_OK(Run(f, 6, 1, 1, 32, 1, c3));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 9, 1, 1, 32, 1, c9));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 16, 1, 1, 32, 1, c16));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 4, 4, 2, 32, 1, c442));
  CU_ASSERT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
  CU_EXPECT_OK(Run(f, 9, 1, 1, 32, 1, c9));
  CU_EXPECT_OK(Run(f, 16, 1, 1, 32, 1, c16));
  CU_EXPECT_OK(Run(f, 16, 1, 1, 1024, 1, c16));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 32, 1, 1, 32, 1, c32));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 4, 4, 2, 32, 1, c442));
}

TEST_F(api_launch_Clusters, RequiredAndExplicitShapes) {
  const unsigned c2[3] = {2, 1, 1}, c4[3] = {4, 1, 1};
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(Fn("sregs_req"), 3, 1, 1, 32, 1, nullptr))
      << "the grid must be a multiple of .reqnctapercluster";
  CU_EXPECT_OK(Run(Fn("sregs_req"), 4, 1, 1, 32, 1, c2));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(Fn("sregs_explicit"), 4, 1, 1, 32, 1, nullptr))
      << ".explicitcluster needs a cluster shape";
  CU_EXPECT_OK(Run(Fn("sregs_explicit"), 4, 1, 1, 32, 1, c2));
  EXPECT_EQ(Sregs(3), (std::vector<uint32_t>{1, 0, 0, 2, 1, 1, 1, 0, 0, 2, 1, 1, 1, 2, 1, 0xabcd}));
  CU_EXPECT_OK(Run(Fn("sregs_maxrank"), 4, 1, 1, 32, 1, c2));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(Fn("sregs_maxrank"), 8, 1, 1, 32, 1, c4))
      << "larger than .maxclusterrank";
  int v = -1;
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, Fn("sregs_explicit")));
  EXPECT_EQ(v, 1);
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, Fn("sregs_req")));
  EXPECT_EQ(v, 0);
  CU_EXPECT_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, Fn("sregs_maxrank")));
  EXPECT_EQ(v, 0);
}

TEST_F(api_launch_Clusters, RequiredWidthAloneRefusesLaunches) {
  CUfunction f = Fn("sregs");
  const unsigned c2[3] = {2, 1, 1};
  CU_ASSERT_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 3));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 6, 1, 1, 32, 1, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_CLUSTER_SIZE, Run(f, 4, 1, 1, 32, 1, c2));
}

TEST_F(api_launch_Clusters, SchedulingPolicyAndCooperative) {
  CUfunction f = Fn("sregs");
  const unsigned c2[3] = {2, 1, 1};
  CU_EXPECT_OK(Run(f, 4, 1, 1, 32, 1, c2, CU_CLUSTER_SCHEDULING_POLICY_SPREAD));
  CU_EXPECT_OK(Run(f, 4, 1, 1, 32, 1, c2, CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, Run(f, 4, 1, 1, 32, 1, c2, 3));
  CU_EXPECT_OK(Run(f, 4, 1, 1, 32, 1, c2, -1, true));
  EXPECT_EQ(Sregs(1)[12], 1u);
}

}  // namespace
