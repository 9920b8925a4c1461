// Issue 18 (clusters): what shared::cta accesses do with the rank bits of a shared address. An H100 encodes rank r
// as r << 24 in the shared addresses of both windows (clusters18: a CTA's own variable reads r << 24 | offset); this
// asks what ld/st/atom.shared::cta, plain ld.shared, and the conversions do when the rank bits are another CTA's,
// none, or a rank outside the cluster. Each CTA of a cluster of 4 puts 0x100 * rank + 0x11 in its s[0] and 0 in
// s[1], waits at the cluster barrier, then reads and writes through addresses of the forms below. The
// out-of-cluster access runs last (it may poison the context). Run: `PROBE=rankbits30 tools/gpu-probe/run.sh OUT`.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

static const char* name(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

static const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64

// out[cta * 32 + i]:
//  0 own address (mov s)            1 ld.shared::cta own        2 ld.shared::cta plain offset (no rank bits)
//  3 ld.shared::cta next's bits     4 ld.shared::cluster next   5 ld.shared::cluster plain offset
//  6 ld.shared next's bits          7 ld (generic) of cvta.shared(plain offset)
//  8 cvta.shared(plain offset) lo   9 cvta.shared(plain offset) hi  10 cvta.shared(own) lo  11 hi
// 12 cvta.to.shared(cvta.shared(plain offset))   13 getctarank.shared::cluster(plain offset)
// 14 isspacep.shared::cta(cvta.shared(next's bits))  15 ld.shared::cta of (own | 1 << 23): offset bit 23
// then, after a second cluster barrier: 16 own s[1] (st.shared::cta [next's bits + 4] by the previous rank)
// 17 own s[2] (atom.shared::cta.add [next's bits + 8], 5, by the previous rank)  18 the atom's old value
.visible .entry windows(.param .u64 out, .param .u32 mode)
{
  .reg .u32 %r<40>;
  .reg .u64 %rd<40>;
  .reg .pred %p<8>;
  .shared .align 16 .b32 s[64];
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r30, [mode];
  and.b32 %r31, %r30, 1;
  setp.ne.u32 %p4, %r31, 0;
  and.b32 %r31, %r30, 2;
  setp.ne.u32 %p5, %r31, 0;
  and.b32 %r31, %r30, 4;
  setp.ne.u32 %p6, %r31, 0;
  and.b32 %r31, %r30, 8;
  setp.ne.u32 %p7, %r31, 0;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, s;
  shl.b32 %r4, %r2, 8;
  add.u32 %r4, %r4, 0x11;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.shared.u32 [s], %r4;
  @%p1 st.shared.u32 [s+4], 0;
  @%p1 st.shared.u32 [s+8], 0;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  @!%p1 bra WAIT2;
  mov.u32 %r5, %ctaid.x;
  mul.wide.u32 %rd2, %r5, 128;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r3;
  ld.shared::cta.u32 %r6, [%r3];
  st.global.u32 [%rd1+4], %r6;
  and.b32 %r7, %r3, 0xffffff;
  @%p4 ld.shared::cta.u32 %r6, [%r7];
  @%p4 st.global.u32 [%rd1+8], %r6;
  add.u32 %r8, %r2, 1;
  and.b32 %r8, %r8, 3;
  shl.b32 %r8, %r8, 24;
  or.b32 %r8, %r8, %r7;
  @%p5 ld.shared::cta.u32 %r6, [%r8];
  @%p5 st.global.u32 [%rd1+12], %r6;
  ld.shared::cluster.u32 %r6, [%r8];
  st.global.u32 [%rd1+16], %r6;
  ld.shared::cluster.u32 %r6, [%r7];
  st.global.u32 [%rd1+20], %r6;
  @%p5 ld.shared.u32 %r6, [%r8];
  @%p5 st.global.u32 [%rd1+24], %r6;
  cvt.u64.u32 %rd3, %r7;
  cvta.shared.u64 %rd4, %rd3;
  ld.u32 %r6, [%rd4];
  st.global.u32 [%rd1+28], %r6;
  st.global.u64 [%rd1+32], %rd4;
  cvt.u64.u32 %rd5, %r3;
  cvta.shared.u64 %rd6, %rd5;
  st.global.u64 [%rd1+40], %rd6;
  cvta.to.shared.u64 %rd7, %rd4;
  cvt.u32.u64 %r9, %rd7;
  st.global.u32 [%rd1+48], %r9;
  getctarank.shared::cluster.u32 %r10, %r7;
  st.global.u32 [%rd1+52], %r10;
  cvt.u64.u32 %rd8, %r8;
  cvta.shared.u64 %rd9, %rd8;
  isspacep.shared::cta %p2, %rd9;
  selp.u32 %r11, 1, 0, %p2;
  st.global.u32 [%rd1+56], %r11;
  or.b32 %r12, %r3, 0x800000;
  @%p6 ld.shared::cta.u32 %r6, [%r12];
  @%p6 st.global.u32 [%rd1+60], %r6;
  add.u32 %r13, %r8, 4;
  @%p7 st.shared::cta.u32 [%r13], %r4;
  add.u32 %r14, %r8, 8;
  @%p7 atom.shared::cta.add.u32 %r15, [%r14], 5;
  @%p7 st.global.u32 [%rd1+72], %r15;
WAIT2:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  @!%p1 bra DONE;
  ld.shared.u32 %r16, [s+4];
  st.global.u32 [%rd1+64], %r16;
  ld.shared.u32 %r16, [s+8];
  st.global.u32 [%rd1+68], %r16;
DONE:
  ret;
}

// A rank outside the cluster of 4 (rank bits 9) through ld.shared::cta.
.visible .entry outside(.param .u64 out)
{
  .reg .u32 %r<8>;
  .reg .u64 %rd<4>;
  .shared .align 16 .b32 s[4];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, s;
  st.shared.u32 [s], 77;
  and.b32 %r2, %r1, 0xffffff;
  or.b32 %r2, %r2, 0x9000000;
  ld.shared::cta.u32 %r3, [%r2];
  st.global.u32 [%rd1], %r3;
  ret;
}
)";

static CUresult launchCluster(CUfunction f, CUdeviceptr out, unsigned ctas, unsigned mode = 0) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 4;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = ctas;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  void* args[] = {&out, &mode};
  CUresult r = cuLaunchKernelEx(&cfg, f, args, nullptr);
  return r ? r : cuCtxSynchronize();
}

// One mode (the kernel's parts that may fault) in a process of its own: a fault poisons the context.
static void runMode(int mode) {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  CUmodule mod;
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, (void*)(uintptr_t)sizeof log};
  CUresult r = cuModuleLoadDataEx(&mod, kPtx, 2, opts, vals);
  if (r) {
    std::printf("load: %s %s\n", name(r), log);
    return;
  }
  CUfunction windows, outside;
  cuModuleGetFunction(&windows, mod, "windows");
  cuModuleGetFunction(&outside, mod, "outside");
  std::vector<uint32_t> host(8 * 32, 0xdeadbeef);
  CUdeviceptr out;
  cuMemAlloc(&out, host.size() * 4);
  cuMemcpyHtoD(out, host.data(), host.size() * 4);
  if (mode == 0) {
    char devName[128];
    cuDeviceGetName(devName, sizeof devName, dev);
    int drv = 0;
    cuDriverGetVersion(&drv);
    std::printf("%s driver %d\n", devName, drv);
  }
  if (mode < 0) {
    r = launchCluster(outside, out, 4);
    uint32_t v = 0;
    CUresult copy = cuMemcpyDtoH(&v, out, 4);
    std::printf("outside: %s (copy %s) value %#x\n", name(r), name(copy), v);
    return;
  }
  r = launchCluster(windows, out, 8, unsigned(mode));
  std::printf("mode %d windows: %s\n", mode, name(r));
  if (cuMemcpyDtoH(host.data(), out, host.size() * 4)) return;
  for (unsigned c = 0; c < 8; ++c) {
    std::printf("mode %d cta %u:", mode, c);
    for (unsigned i = 0; i < 19; ++i) std::printf(" %#x", host[c * 32 + i]);
    std::printf("\n");
  }
}

int main() {
  // (no driver call here: a child of a process that initialised the driver cannot use it)
  // mode bits: 1 plain offset through ld.shared::cta, 2 the next rank's bits through ld.shared(::cta),
  // 4 offset bit 23, 8 st/atom.shared::cta with the next rank's bits; -1 a rank outside the cluster
  for (int mode : {0, 1, 2, 4, 8, 15, -1}) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      runMode(mode);
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("mode %d exit status %d\n", mode, status);
  }
  return 0;
}
