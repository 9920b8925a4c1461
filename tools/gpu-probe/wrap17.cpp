// Issue 17: a 32-bit address register plus an immediate offset (`st.shared.u32 [%r+1048580]` with %r 1 MiB below
// a shared array): does the address wrap modulo 2^32 on an H100 (driver 580)? cuBLAS's transpose kernels rely on
// it. The kernel is tests/ptx-exec/compat_test.cpp's ThirtyTwoBitAddressPlusOffsetWraps; it prints the four words
// (expected 7 107 9 11 when the address wraps) and the launch's result.
// Run: PROBE=wrap17 tools/gpu-probe/run.sh OUTDIR
#include <cuda.h>

#include <cstdio>

static const char* kPtx = R"PTX(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.shared .align 8 .b8 cs[64];
	.reg .b32 %r<12>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, cs;
	sub.u32 %r2, %r1, 1048576;
	mov.u32 %r3, 7;
	st.shared.u32 [%r2+1048580], %r3;
	mov.u32 %r4, 9;
	mov.u32 %r5, 11;
	st.shared.v2.u32 [%r2+1048584], {%r4, %r5};
	atom.shared.add.u32 %r6, [%r2+1048580], 100;
	ld.shared.u32 %r7, [%r1+4];
	ld.shared.v2.u32 {%r8, %r9}, [%r2+1048584];
	st.global.u32 [%rd1], %r6;
	st.global.u32 [%rd1+4], %r7;
	st.global.u32 [%rd1+8], %r8;
	st.global.u32 [%rd1+12], %r9;
	mov.u32 %r10, cs;
	st.global.u32 [%rd1+16], %r10;
	ret;
}
)PTX";

int main() {
  cuInit(0);
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuCtxCreate(&ctx, nullptr, 0, dev);
  CUmodule m;
  CUresult r = cuModuleLoadData(&m, kPtx);
  std::printf("load %d\n", int(r));
  CUfunction f;
  cuModuleGetFunction(&f, m, "k");
  CUdeviceptr out;
  cuMemAlloc(&out, 64);
  cuMemsetD8(out, 0xff, 64);
  void* args[] = {&out};
  r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  std::printf("launch %d\n", int(r));
  r = cuCtxSynchronize();
  std::printf("sync %d\n", int(r));
  unsigned w[5] = {};
  cuMemcpyDtoH(w, out, sizeof w);
  std::printf("words %u %u %u %u (shared array at 0x%x)\n", w[0], w[1], w[2], w[3], w[4]);
  return 0;
}
