// Issue 18 (clusters): what an H100 gives for thread-block clusters, for cuemu to match. (1) Address windows: the
// shared::cta address of a variable, mapa (shared::cluster and generic) to every rank, getctarank of the results,
// isspacep and cvta between the windows. (2) The cluster special registers for a 3-D cluster shape, for kernels with
// .reqnctapercluster / .explicitcluster / .blocksareclusters launched with and without a cluster attribute.
// (3) The launch results of cluster shapes the driver may refuse. (4) Last (it poisons the context): mapa to a rank
// outside the cluster. Run with `PROBE=clusters18 tools/gpu-probe/run.sh OUTDIR`.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static const char* name(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

static const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry addr(.param .u64 out)
{
  .reg .u32 %r<40>;
  .reg .u64 %rd<40>;
  .reg .pred %p<8>;
  .shared .align 16 .b32 pad[3];
  .shared .align 16 .b32 s[64];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, %ctaid.x;
  mul.wide.u32 %rd2, %r2, 128;
  add.u64 %rd1, %rd1, %rd2;
  mov.u32 %r3, s;
  st.global.u32 [%rd1], %r3;
  mov.u32 %r4, pad;
  st.global.u32 [%rd1+4], %r4;
  mapa.shared::cluster.u32 %r5, %r3, 0;
  st.global.u32 [%rd1+8], %r5;
  mapa.shared::cluster.u32 %r6, %r3, 1;
  st.global.u32 [%rd1+12], %r6;
  mapa.shared::cluster.u32 %r7, %r3, 2;
  st.global.u32 [%rd1+16], %r7;
  mapa.shared::cluster.u32 %r8, %r3, 3;
  st.global.u32 [%rd1+20], %r8;
  cvt.u64.u32 %rd30, %r3;
  cvta.shared.u64 %rd3, %rd30;
  st.global.u64 [%rd1+24], %rd3;
  mapa.u64 %rd4, %rd3, 0;
  st.global.u64 [%rd1+32], %rd4;
  mapa.u64 %rd5, %rd3, 1;
  st.global.u64 [%rd1+40], %rd5;
  mapa.u64 %rd6, %rd3, 2;
  st.global.u64 [%rd1+48], %rd6;
  mapa.u64 %rd7, %rd3, 3;
  st.global.u64 [%rd1+56], %rd7;
  getctarank.shared::cluster.u32 %r9, %r5;
  st.global.u32 [%rd1+64], %r9;
  getctarank.shared::cluster.u32 %r9, %r6;
  st.global.u32 [%rd1+68], %r9;
  getctarank.shared::cluster.u32 %r9, %r8;
  st.global.u32 [%rd1+72], %r9;
  getctarank.shared::cluster.u32 %r9, %r3;
  st.global.u32 [%rd1+76], %r9;
  getctarank.u64 %r9, %rd5;
  st.global.u32 [%rd1+80], %r9;
  getctarank.u64 %r9, %rd3;
  st.global.u32 [%rd1+84], %r9;
  mov.u32 %r10, %cluster_ctarank;
  add.u32 %r10, %r10, 1;
  rem.u32 %r10, %r10, 4;
  mapa.u64 %rd8, %rd3, %r10;
  isspacep.shared::cta %p2, %rd8;
  selp.u32 %r11, 1, 0, %p2;
  st.global.u32 [%rd1+88], %r11;
  isspacep.shared::cluster %p3, %rd8;
  selp.u32 %r11, 1, 0, %p3;
  st.global.u32 [%rd1+92], %r11;
  isspacep.shared::cta %p4, %rd3;
  selp.u32 %r11, 1, 0, %p4;
  st.global.u32 [%rd1+96], %r11;
  cvta.to.shared::cluster.u64 %rd12, %rd8;
  cvt.u32.u64 %r12, %rd12;
  st.global.u32 [%rd1+100], %r12;
  mapa.shared::cluster.u32 %r13, %r3, %r10;
  cvt.u64.u32 %rd31, %r13;
  cvta.shared::cluster.u64 %rd9, %rd31;
  st.global.u64 [%rd1+104], %rd9;
  isspacep.shared::cluster %p5, %rd3;
  selp.u32 %r11, 1, 0, %p5;
  st.global.u32 [%rd1+112], %r11;
  mov.pred %p6, %is_explicit_cluster;
  selp.u32 %r11, 1, 0, %p6;
  st.global.u32 [%rd1+116], %r11;
  cvta.to.shared.u64 %rd14, %rd8;
  cvt.u32.u64 %r14, %rd14;
  st.global.u32 [%rd1+120], %r14;
  cvta.to.shared.u64 %rd14, %rd3;
  cvt.u32.u64 %r14, %rd14;
  st.global.u32 [%rd1+124], %r14;
DONE:
  ret;
}

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
  mul.wide.u32 %rd2, %r8, 96;
  add.u64 %rd1, %rd1, %rd2;
  st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
  mov.u32 %r9, %nctaid.z;
  mov.u32 %r10, %clusterid.x;
  mov.u32 %r11, %clusterid.y;
  st.global.v4.u32 [%rd1+16], {%r7, %r9, %r10, %r11};
  mov.u32 %r12, %clusterid.z;
  mov.u32 %r13, %nclusterid.x;
  mov.u32 %r14, %nclusterid.y;
  mov.u32 %r15, %nclusterid.z;
  st.global.v4.u32 [%rd1+32], {%r12, %r13, %r14, %r15};
  mov.u32 %r16, %cluster_ctaid.x;
  mov.u32 %r17, %cluster_ctaid.y;
  mov.u32 %r18, %cluster_ctaid.z;
  mov.u32 %r19, %cluster_nctaid.x;
  st.global.v4.u32 [%rd1+48], {%r16, %r17, %r18, %r19};
  mov.u32 %r20, %cluster_nctaid.y;
  mov.u32 %r21, %cluster_nctaid.z;
  mov.u32 %r22, %cluster_ctarank;
  mov.u32 %r23, %cluster_nctarank;
  st.global.v4.u32 [%rd1+64], {%r20, %r21, %r22, %r23};
  mov.pred %p2, %is_explicit_cluster;
  selp.u32 %r24, 1, 0, %p2;
  mov.u32 %r25, %ntid.x;
  mov.u32 %r26, %ntid.y;
  mov.u32 %r27, 0xabcd;
  st.global.v4.u32 [%rd1+80], {%r24, %r25, %r26, %r27};
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

.visible .entry sregs_explicit_req(.param .u64 out)
.explicitcluster .reqnctapercluster 2, 1, 1
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

.visible .entry bad_rank(.param .u64 out, .param .u32 rank)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<8>;
  .shared .align 4 .b32 s[4];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [rank];
  mov.u32 %r2, s;
  mapa.shared::cluster.u32 %r3, %r2, %r1;
  st.global.u32 [%rd1], %r3;
  mov.u32 %r4, 7;
  st.shared::cluster.u32 [%r3], %r4;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";

static const char* kBlocksPtx = R"(
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

static CUdeviceptr gOut;
static std::vector<uint32_t> gHost(4096);

static CUresult launchEx(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         const unsigned* cluster, int policy = -1, bool cooperative = false) {
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
  cfg.blockDimZ = bz;
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  void* args[] = {&gOut};
  cuMemsetD32(gOut, 0, gHost.size());
  CUresult r = cuLaunchKernelEx(&cfg, f, args, nullptr);
  CUresult s = cuCtxSynchronize();
  cuMemcpyDtoH(gHost.data(), gOut, gHost.size() * 4);
  return r != CUDA_SUCCESS ? r : s;
}

static void sregsDump(const char* label, unsigned ctas) {
  for (unsigned c = 0; c < ctas; ++c) {
    const uint32_t* v = &gHost[c * 24];
    if (v[23] != 0xabcd) continue;
    std::printf(
        "%s cta %u: ctaid %u %u %u nctaid %u %u %u clusterid %u %u %u nclusterid %u %u %u cluster_ctaid %u %u %u "
        "cluster_nctaid %u %u %u ctarank %u nctarank %u explicit %u ntid %u %u\n",
        label, c, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15],
        v[16], v[17], v[18], v[19], v[20], v[21], v[22]);
  }
}

int main() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  char devName[128];
  cuDeviceGetName(devName, sizeof devName, dev);
  int drv = 0;
  cuDriverGetVersion(&drv);
  std::printf("%s driver %d\n", devName, drv);
  CUcontext ctx;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  CUmodule mod;
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, (void*)(uintptr_t)sizeof log};
  CUresult r = cuModuleLoadDataEx(&mod, kPtx, 2, opts, vals);
  std::printf("load: %s %s\n", name(r), log);
  if (r) return 1;
  cuMemAlloc(&gOut, gHost.size() * 4);
  CUfunction addr, sregs, sregsReq, sregsExplicitReq, sregsExplicit, sregsMaxrank, badRank;
  cuModuleGetFunction(&addr, mod, "addr");
  cuModuleGetFunction(&sregs, mod, "sregs");
  cuModuleGetFunction(&sregsReq, mod, "sregs_req");
  cuModuleGetFunction(&sregsExplicitReq, mod, "sregs_explicit_req");
  cuModuleGetFunction(&sregsExplicit, mod, "sregs_explicit");
  cuModuleGetFunction(&sregsMaxrank, mod, "sregs_maxrank");
  cuModuleGetFunction(&badRank, mod, "bad_rank");

  // (1) address windows
  const unsigned c4[3] = {4, 1, 1};
  r = launchEx(addr, 8, 1, 1, 32, 1, 1, c4);
  std::printf("addr launch: %s\n", name(r));
  for (unsigned c = 0; c < 8; ++c) {
    std::printf("addr cta %u:", c);
    for (unsigned i = 0; i < 32; ++i) std::printf(" %#x", gHost[c * 32 + i]);
    std::printf("\n");
  }

  // (2) special registers
  const unsigned c222[3] = {2, 2, 2}, c2[3] = {2, 1, 1}, c1[3] = {1, 1, 1}, c8[3] = {8, 1, 1};
  r = launchEx(sregs, 4, 2, 2, 4, 2, 1, c222);
  std::printf("sregs cluster 2x2x2 grid 4x2x2: %s\n", name(r));
  sregsDump("c222", 16);
  r = launchEx(sregs, 2, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs no cluster: %s\n", name(r));
  sregsDump("none", 2);
  r = launchEx(sregs, 2, 1, 1, 32, 1, 1, c1);
  std::printf("sregs cluster 1x1x1: %s\n", name(r));
  sregsDump("c111", 2);
  r = launchEx(sregsReq, 4, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs_req no attribute grid 4: %s\n", name(r));
  sregsDump("req", 4);
  r = launchEx(sregsReq, 3, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs_req no attribute grid 3: %s\n", name(r));
  r = launchEx(sregsReq, 4, 1, 1, 32, 1, 1, c2);
  std::printf("sregs_req attribute 2: %s\n", name(r));
  r = launchEx(sregsExplicitReq, 4, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs_explicit_req no attribute: %s\n", name(r));
  sregsDump("explicit_req", 4);
  r = launchEx(sregsExplicit, 4, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs_explicit no attribute: %s\n", name(r));
  sregsDump("explicit", 4);
  r = launchEx(sregsExplicit, 4, 1, 1, 32, 1, 1, c2);
  std::printf("sregs_explicit attribute 2: %s\n", name(r));
  sregsDump("explicit2", 4);
  r = launchEx(sregsMaxrank, 4, 1, 1, 32, 1, 1, c2);
  std::printf("sregs_maxrank(2) attribute 2: %s\n", name(r));
  r = launchEx(sregsMaxrank, 8, 1, 1, 32, 1, 1, c4);
  std::printf("sregs_maxrank(2) attribute 4: %s\n", name(r));
  r = launchEx(sregsMaxrank, 4, 1, 1, 32, 1, 1, nullptr);
  std::printf("sregs_maxrank(2) no attribute: %s\n", name(r));
  sregsDump("maxrank", 4);
  int a = -1;
  cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, sregsExplicit);
  std::printf("explicit MUST_BE_SET %d\n", a);
  cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, sregsReq);
  std::printf("req MUST_BE_SET %d\n", a);
  cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, sregsMaxrank);
  std::printf("maxrank REQUIRED_CLUSTER_WIDTH %d\n", a);

  // (3) shapes
  const unsigned c3[3] = {3, 1, 1}, c16[3] = {16, 1, 1}, c32[3] = {32, 1, 1}, c9[3] = {9, 1, 1}, c442[3] = {4, 4, 2};
  std::printf("cluster 8 grid 8: %s\n", name(launchEx(sregs, 8, 1, 1, 32, 1, 1, c8)));
  std::printf("cluster 8 grid 8 block 1024: %s\n", name(launchEx(sregs, 8, 1, 1, 1024, 1, 1, c8)));
  std::printf("cluster 3 grid 6: %s\n", name(launchEx(sregs, 6, 1, 1, 32, 1, 1, c3)));
  std::printf("cluster 9 grid 9: %s\n", name(launchEx(sregs, 9, 1, 1, 32, 1, 1, c9)));
  std::printf("cluster 16 grid 16: %s\n", name(launchEx(sregs, 16, 1, 1, 32, 1, 1, c16)));
  std::printf("cluster 4x4x2 grid 4x4x2: %s\n", name(launchEx(sregs, 4, 4, 2, 32, 1, 1, c442)));
  std::printf("cluster 2 cooperative grid 4: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, c2, -1, true)));
  std::printf("cluster 2 policy spread: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, c2, 1)));
  std::printf("cluster 2 policy 3: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, c2, 3)));
  std::printf("cluster 2 policy 7: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, c2, 7)));
  CUresult sa = cuFuncSetAttribute(sregs, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  std::printf("set non-portable: %s\n", name(sa));
  std::printf("non-portable cluster 9 grid 9: %s\n", name(launchEx(sregs, 9, 1, 1, 32, 1, 1, c9)));
  std::printf("non-portable cluster 16 grid 16: %s\n", name(launchEx(sregs, 16, 1, 1, 32, 1, 1, c16)));
  std::printf("non-portable cluster 16 block 1024: %s\n", name(launchEx(sregs, 16, 1, 1, 1024, 1, 1, c16)));
  std::printf("non-portable cluster 32 grid 32: %s\n", name(launchEx(sregs, 32, 1, 1, 32, 1, 1, c32)));
  std::printf("non-portable cluster 4x4x2: %s\n", name(launchEx(sregs, 4, 4, 2, 32, 1, 1, c442)));
  for (int w : {1, 2, 3}) {
    CUresult rw = cuFuncSetAttribute(sregs, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, w);
    std::printf("set REQUIRED_CLUSTER_WIDTH %d: %s\n", w, name(rw));
  }
  std::printf("after width 3, no attribute grid 6: %s\n", name(launchEx(sregs, 6, 1, 1, 32, 1, 1, nullptr)));
  sregsDump("width3", 6);
  std::printf("after width 3, no attribute grid 4: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, nullptr)));
  std::printf("after width 3, attribute 2: %s\n", name(launchEx(sregs, 4, 1, 1, 32, 1, 1, c2)));

  // .blocksareclusters through the driver API
  CUmodule bmod;
  r = cuModuleLoadDataEx(&bmod, kBlocksPtx, 2, opts, vals);
  std::printf("blocksareclusters load: %s %s\n", name(r), log);
  if (r == CUDA_SUCCESS) {
    CUfunction bac;
    cuModuleGetFunction(&bac, bmod, "bac");
    for (auto [g, b] : {std::pair{3u, 64u}, {3u, 1u}, {3u, 32u}, {6u, 64u}}) {
      r = launchEx(bac, g, 1, 1, b, 1, 1, nullptr);
      std::printf("bac <<<%u,%u>>>: %s nctaid %u nclusterid %u rank(cta1) %u ntid %u\n", g, b, name(r), gHost[0],
                  gHost[1], gHost[6], gHost[3]);
    }
    r = launchEx(bac, 4, 1, 1, 64, 1, 1, c2);
    std::printf("bac <<<4,64>>> cluster 2: %s nctaid %u nclusterid %u\n", name(r), gHost[0], gHost[1]);
    r = launchEx(bac, 4, 1, 1, 64, 1, 1, c1);
    std::printf("bac <<<4,64>>> cluster 1: %s nctaid %u nclusterid %u\n", name(r), gHost[0], gHost[1]);
    for (auto attr : {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
                      CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}) {
      int v = -1;
      CUresult ra = cuFuncGetAttribute(&v, attr, bac);
      std::printf("bac attribute %d: %s %d\n", int(attr), name(ra), v);
    }
  }

  r = launchEx(addr, 2, 1, 1, 32, 1, 1, nullptr);
  std::printf("addr without cluster: %s\n", name(r));
  for (unsigned c = 0; c < 2; ++c) {
    std::printf("addr nocluster cta %u:", c);
    for (unsigned i = 0; i < 32; ++i) std::printf(" %#x", gHost[c * 32 + i]);
    std::printf("\n");
  }

  // (4) a rank outside the cluster (last: it may poison the context)
  {
    CUlaunchAttribute at = {};
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = 2;
    at.value.clusterDim.y = at.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = 2;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    unsigned rank = 5;
    void* args[] = {&gOut, &rank};
    r = cuLaunchKernelEx(&cfg, badRank, args, nullptr);
    CUresult s = cuCtxSynchronize();
    std::printf("bad rank 5: launch %s sync %s\n", name(r), name(s));
  }
  return 0;
}
