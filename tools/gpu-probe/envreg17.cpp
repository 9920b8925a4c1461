// Issue 17 (CuPy's cupyx.jit test_cg_sync): what does driver 580 hand a kernel in %envreg0..31, in a launch that
// is not cooperative (cuLaunchKernel) and in a cooperative one? Cooperative groups' grid sync takes its workspace
// address from %envreg1 (high) and %envreg2 (low) and traps where it is 0; CuPy launches a kernel that calls
// cg::sync(this_grid()) through cuLaunchKernel, and the test passes on an H100. Thread 0 of block 0 writes the 32
// registers and the two words at the workspace address (if any); printed per launch.
// Run: PROBE=envreg17 tools/gpu-probe/run.sh OUTDIR
#include <cuda.h>

#include <cstdio>

static const char* kPtx = R"PTX(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .pred %p<3>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r32, %tid.x;
	mov.u32 %r33, %ctaid.x;
	or.b32 %r34, %r32, %r33;
	setp.ne.u32 %p1, %r34, 0;
	@%p1 bra DONE;
	mov.u32 %r0, %envreg0;
	st.global.u32 [%rd1+0], %r0;
	mov.u32 %r1, %envreg1;
	st.global.u32 [%rd1+4], %r1;
	mov.u32 %r2, %envreg2;
	st.global.u32 [%rd1+8], %r2;
	mov.u32 %r3, %envreg3;
	st.global.u32 [%rd1+12], %r3;
	mov.u32 %r4, %envreg4;
	st.global.u32 [%rd1+16], %r4;
	mov.u32 %r5, %envreg5;
	st.global.u32 [%rd1+20], %r5;
	mov.u32 %r6, %envreg6;
	st.global.u32 [%rd1+24], %r6;
	mov.u32 %r7, %envreg7;
	st.global.u32 [%rd1+28], %r7;
	mov.u32 %r8, %envreg8;
	st.global.u32 [%rd1+32], %r8;
	mov.u32 %r9, %envreg9;
	st.global.u32 [%rd1+36], %r9;
	mov.u32 %r10, %envreg10;
	st.global.u32 [%rd1+40], %r10;
	mov.u32 %r11, %envreg11;
	st.global.u32 [%rd1+44], %r11;
	mov.u32 %r12, %envreg12;
	st.global.u32 [%rd1+48], %r12;
	mov.u32 %r13, %envreg13;
	st.global.u32 [%rd1+52], %r13;
	mov.u32 %r14, %envreg14;
	st.global.u32 [%rd1+56], %r14;
	mov.u32 %r15, %envreg15;
	st.global.u32 [%rd1+60], %r15;
	mov.u32 %r16, %envreg16;
	st.global.u32 [%rd1+64], %r16;
	mov.u32 %r17, %envreg17;
	st.global.u32 [%rd1+68], %r17;
	mov.u32 %r18, %envreg18;
	st.global.u32 [%rd1+72], %r18;
	mov.u32 %r19, %envreg19;
	st.global.u32 [%rd1+76], %r19;
	mov.u32 %r20, %envreg20;
	st.global.u32 [%rd1+80], %r20;
	mov.u32 %r21, %envreg21;
	st.global.u32 [%rd1+84], %r21;
	mov.u32 %r22, %envreg22;
	st.global.u32 [%rd1+88], %r22;
	mov.u32 %r23, %envreg23;
	st.global.u32 [%rd1+92], %r23;
	mov.u32 %r24, %envreg24;
	st.global.u32 [%rd1+96], %r24;
	mov.u32 %r25, %envreg25;
	st.global.u32 [%rd1+100], %r25;
	mov.u32 %r26, %envreg26;
	st.global.u32 [%rd1+104], %r26;
	mov.u32 %r27, %envreg27;
	st.global.u32 [%rd1+108], %r27;
	mov.u32 %r28, %envreg28;
	st.global.u32 [%rd1+112], %r28;
	mov.u32 %r29, %envreg29;
	st.global.u32 [%rd1+116], %r29;
	mov.u32 %r30, %envreg30;
	st.global.u32 [%rd1+120], %r30;
	mov.u32 %r31, %envreg31;
	st.global.u32 [%rd1+124], %r31;
	cvt.u64.u32 %rd2, %r1;
	shl.b64 %rd2, %rd2, 32;
	cvt.u64.u32 %rd3, %r2;
	or.b64 %rd4, %rd2, %rd3;
	setp.eq.u64 %p2, %rd4, 0;
	@%p2 bra DONE;
	ld.global.u32 %r35, [%rd4];
	ld.global.u32 %r36, [%rd4+4];
	st.global.u32 [%rd1+128], %r35;
	st.global.u32 [%rd1+132], %r36;
DONE:
	ret;
}
)PTX";

#define CK(x)                                            \
  do {                                                   \
    CUresult r_ = (x);                                   \
    if (r_ != CUDA_SUCCESS) {                            \
      const char* s_ = nullptr;                          \
      cuGetErrorName(r_, &s_);                           \
      std::printf("%s failed: %s\n", #x, s_ ? s_ : "?"); \
      return 1;                                          \
    }                                                    \
  } while (0)

int main() {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoadData(&mod, kPtx));
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, "k"));
  CUdeviceptr out;
  CK(cuMemAlloc(&out, 256));
  const char* names[] = {"cuLaunchKernel", "cuLaunchCooperativeKernel", "cuLaunchKernel again"};
  for (int i = 0; i < 3; ++i) {
    CK(cuMemsetD8(out, 0, 256));
    void* args[] = {&out};
    if (i == 1)
      CK(cuLaunchCooperativeKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, args));
    else
      CK(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
    CK(cuCtxSynchronize());
    unsigned v[64];
    CK(cuMemcpyDtoH(v, out, 256));
    std::printf("%s:", names[i]);
    for (int r = 0; r < 32; ++r)
      if (v[r]) std::printf(" envreg%d=0x%x", r, v[r]);
    std::printf(" | workspace words %u %u\n", v[32], v[33]);
  }
  return 0;
}
