// Theme: launches with bad configurations or arguments. The context must stay usable after each refusal.
#include "cases.h"

#include <cstdint>
#include <string>
#include <utility>

using namespace reliability;

namespace {

// A launch that stores 7 through device memory, synchronised: the context still works.
void contextStillWorks(CUmodule module) {
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 4), CUDA_SUCCESS, "cuMemAlloc after the refused launch");
  unsigned value = 7;
  void* args[] = {&p, &value};
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "a valid launch after the refused one");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the refused launch");
  unsigned out = 0;
  expectResult(cuMemcpyDtoH(&out, p, 4), CUDA_SUCCESS, "cuMemcpyDtoH");
  if (out != 7) wrong("the valid launch after the refused one stored " + std::to_string(out));
  cuMemFree(p);
}

struct Fixture {
  CUcontext context = setUp();
  CUmodule module = loadKernels();
  CUdeviceptr p = 0;
  unsigned value = 1;
  void* args[2] = {&p, &value};
  Fixture() { expectResult(cuMemAlloc(&p, 4), CUDA_SUCCESS, "cuMemAlloc"); }
};

}  // namespace

RELIABILITY_CASE("launches", launches_zero_dimensions, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 0, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE, "grid 0");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 0, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE, "block y 0");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_dimensions_too_large, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 2048, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "2048 threads per block");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 65, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "block z 65");
  expectResult(cuLaunchKernel(k, 1, 65536, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "grid y 65536");
  expectResult(cuLaunchKernel(k, 0x80000000u, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), CUDA_ERROR_INVALID_VALUE,
               "grid x 2^31");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_too_much_shared_memory, 20, nullptr) {
  Fixture f;
  expectResult(cuLaunchKernel(kernel(f.module, "store"), 1, 1, 1, 1, 1, 1, 1u << 20, nullptr, f.args, nullptr),
               CUDA_ERROR_INVALID_VALUE, "1 MiB of dynamic shared memory");
  expectResult(cuLaunchKernel(kernel(f.module, "store"), 1, 1, 1, 1, 1, 1, 0xFFFFFFFFu, nullptr, f.args, nullptr),
               CUDA_ERROR_INVALID_VALUE, "4 GiB of dynamic shared memory");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_missing_or_conflicting_parameters, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE,
               "no parameters for a kernel that has two");
  struct {
    CUdeviceptr p;
    unsigned v;
  } buffer{f.p, 3};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, extra), CUDA_ERROR_INVALID_VALUE,
               "kernelParams and extra both");
  size_t small = 4;
  void* shortExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                        CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, shortExtra), CUDA_ERROR_INVALID_VALUE,
               "extra with a buffer too small");
  void* garbageExtra[] = {reinterpret_cast<void*>(0x77), &buffer, CU_LAUNCH_PARAM_END};
  expectResult(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, garbageExtra), CUDA_ERROR_INVALID_VALUE,
               "extra with an unknown key");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_block_contradicts_reqntid, 20, "") {
  Fixture f;
  CUfunction k = kernel(f.module, "fixedShape");
  expectError(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "32 threads for .reqntid 64");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the refused launch");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_null_and_stale_function, 20, nullptr) {
  Fixture f;
  expectError(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), "a null function");
  expectError(
      cuLaunchKernel(reinterpret_cast<CUfunction>(uintptr_t(0x1234)), 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr),
      "a garbage function");
  CUmodule other = loadKernels();
  CUfunction stale = kernel(other, "store");
  expectResult(cuModuleUnload(other), CUDA_SUCCESS, "cuModuleUnload");
  expectError(cuLaunchKernel(stale, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), "a function of an unloaded module");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_function_of_another_context, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  CUcontext second = setUp();  // current now
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, nullptr, f.args, nullptr), "a function of another context");
  cuCtxDestroy(second);
  expectResult(cuCtxSetCurrent(f.context), CUDA_SUCCESS, "cuCtxSetCurrent");
  contextStillWorks(f.module);
}

RELIABILITY_CASE("launches", launches_invalid_stream, 20, nullptr) {
  Fixture f;
  CUfunction k = kernel(f.module, "store");
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, reinterpret_cast<CUstream>(uintptr_t(0xdead0)), f.args, nullptr),
              "a garbage stream");
  CUstream s = nullptr;
  expectResult(cuStreamCreate(&s, 0), CUDA_SUCCESS, "cuStreamCreate");
  expectResult(cuStreamDestroy(s), CUDA_SUCCESS, "cuStreamDestroy");
  expectError(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, f.args, nullptr), "a destroyed stream");
  contextStillWorks(f.module);
}

namespace {

// tools/gpu-probe/cdp24.cu as nvcc 13.0 compiles it (-arch=sm_90 -rdc=true), without the `.blocksareclusters` and
// `.reqnctapercluster 1, 1, 1` that `__block_size__` adds: requiredShape has .reqntid 64, boundedShape .maxntid 64,
// parent(p, which, block) launches one of them (which 0: requiredShape) from the device with `block` threads and
// stores cudaGetLastError and cudaPeekAtLastError after it in p[1] and p[2]; each child adds 1 to p[0] per thread.
const char* kDeviceLaunches = R"(
.version 9.0
.target sm_90
.address_size 64
.extern .func  (.param .b32 func_retval0) __cudaCDP2GetLastError
()
;
.extern .func  (.param .b32 func_retval0) __cudaCDP2PeekAtLastError
()
;
.extern .func  (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(
	.param .b64 __cudaCDP2GetParameterBufferV2_param_0,
	.param .align 4 .b8 __cudaCDP2GetParameterBufferV2_param_1[12],
	.param .align 4 .b8 __cudaCDP2GetParameterBufferV2_param_2[12],
	.param .b32 __cudaCDP2GetParameterBufferV2_param_3
)
;
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0,
	.param .b64 __cudaCDP2LaunchDeviceV2_param_1
)
;
.visible .entry _Z13requiredShapePi(
	.param .u64 _Z13requiredShapePi_param_0
)
.reqntid 64, 1, 1
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [_Z13requiredShapePi_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	atom.global.add.u32 	%r1, [%rd2], 1;
	ret;
}
.visible .entry _Z12boundedShapePi(
	.param .u64 _Z12boundedShapePi_param_0
)
.maxntid 64, 1, 1
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [_Z12boundedShapePi_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	atom.global.add.u32 	%r1, [%rd2], 1;
	ret;
}
.visible .entry _Z6parentPiii(
	.param .u64 _Z6parentPiii_param_0,
	.param .u32 _Z6parentPiii_param_1,
	.param .u32 _Z6parentPiii_param_2
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<7>;
	ld.param.u64 	%rd3, [_Z6parentPiii_param_0];
	ld.param.u32 	%r4, [_Z6parentPiii_param_1];
	mov.u32 	%r2, 1;
	ld.param.u32 	%r1, [_Z6parentPiii_param_2];
	setp.eq.s32 	%p1, %r4, 0;
	@%p1 bra 	$L__BB2_3;
	mov.u64 	%rd4, _Z12boundedShapePi;
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd4;
	.param .align 4 .b8 param1[12];
	st.param.b32 	[param1+0], 1;
	st.param.b32 	[param1+4], 1;
	st.param.b32 	[param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 	[param2+0], %r1;
	st.param.b32 	[param2+4], %r2;
	st.param.b32 	[param2+8], %r2;
	.param .b32 param3;
	st.param.b32 	[param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0), 
	__cudaCDP2GetParameterBufferV2, 
	(
	param0, 
	param1, 
	param2, 
	param3
	);
	ld.param.b64 	%rd1, [retval0+0];
	} // callseq 0
	setp.eq.s64 	%p2, %rd1, 0;
	@%p2 bra 	$L__BB2_5;
	st.u64 	[%rd1], %rd3;
	{ // callseq 1, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2LaunchDeviceV2, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r5, [retval0+0];
	} // callseq 1
	bra.uni 	$L__BB2_5;
$L__BB2_3:
	mov.u64 	%rd5, _Z13requiredShapePi;
	{ // callseq 2, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd5;
	.param .align 4 .b8 param1[12];
	st.param.b32 	[param1+0], 1;
	st.param.b32 	[param1+4], 1;
	st.param.b32 	[param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 	[param2+0], %r1;
	st.param.b32 	[param2+4], %r2;
	st.param.b32 	[param2+8], %r2;
	.param .b32 param3;
	st.param.b32 	[param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0), 
	__cudaCDP2GetParameterBufferV2, 
	(
	param0, 
	param1, 
	param2, 
	param3
	);
	ld.param.b64 	%rd2, [retval0+0];
	} // callseq 2
	setp.eq.s64 	%p3, %rd2, 0;
	@%p3 bra 	$L__BB2_5;
	st.u64 	[%rd2], %rd3;
	{ // callseq 3, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2LaunchDeviceV2, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r6, [retval0+0];
	} // callseq 3
$L__BB2_5:
	{ // callseq 4, 0
	.reg .b32 temp_param_reg;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2GetLastError, 
	(
	);
	ld.param.b32 	%r7, [retval0+0];
	} // callseq 4
	cvta.to.global.u64 	%rd6, %rd3;
	st.global.u32 	[%rd6+4], %r7;
	{ // callseq 5, 0
	.reg .b32 temp_param_reg;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2PeekAtLastError, 
	(
	);
	ld.param.b32 	%r8, [retval0+0];
	} // callseq 5
	st.global.u32 	[%rd6+8], %r8;
	ret;
}
.visible .entry _Z5plainPi(
	.param .u64 _Z5plainPi_param_0
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [_Z5plainPi_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, 7;
	st.global.u32 	[%rd2+12], %r1;
	ret;
}
)";

// A device-side launch of `which` (0: the .reqntid 64 child, 1: the .maxntid 64 one) with `block` threads. Returns
// {threads the child ran, the parent's cudaGetLastError}; the host's synchronisation must succeed either way.
std::pair<int, int> launchFromDevice(int which, int block) {
  setUp();
  CUmodule module = nullptr;
  expectResult(cuModuleLoadData(&module, kDeviceLaunches), CUDA_SUCCESS, "cuModuleLoadData of the CDP kernels");
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 16), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD8(p, 0, 16), CUDA_SUCCESS, "cuMemsetD8");
  void* args[] = {&p, &which, &block};
  expectResult(launch(kernel(module, "_Z6parentPiii"), 1, 1, args), CUDA_SUCCESS, "the parent's launch");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the device-side launch");
  int out[4] = {};
  expectResult(cuMemcpyDtoH(out, p, sizeof out), CUDA_SUCCESS, "cuMemcpyDtoH");
  if (out[2] != 0) wrong("cudaPeekAtLastError after cudaGetLastError gave " + std::to_string(out[2]) + ", expected 0");
  void* plainArgs[] = {&p};
  expectResult(launch(kernel(module, "_Z5plainPi"), 1, 1, plainArgs), CUDA_SUCCESS, "a launch afterwards");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize afterwards");
  return {out[0], out[1]};
}

}  // namespace

// Measured on an H100 with driver 580 (tools/gpu-probe/results/rel24-cdp-ipc-h100-2026-11-26.txt): unlike a host
// launch, a device-side launch whose block contradicts the child's .reqntid is not refused: the child runs with
// the block it was given.
RELIABILITY_CASE("launches", launches_device_side_block_contradicts_reqntid, 20, nullptr) {
  auto [threads, error] = launchFromDevice(0, 32);
  if (error != 0 || threads != 32)
    wrong("the child ran " + std::to_string(threads) + " threads, the launch's error " + std::to_string(error) +
          " (the GPU: 32 threads, error 0)");
}

// ... also with more threads than .reqntid names, or its count in another shape.
RELIABILITY_CASE("launches", launches_device_side_block_over_reqntid, 20, nullptr) {
  auto [threads, error] = launchFromDevice(0, 128);
  if (error != 0 || threads != 128)
    wrong("the child ran " + std::to_string(threads) + " threads, the launch's error " + std::to_string(error) +
          " (the GPU: 128 threads, error 0)");
}

// A device-side launch past the child's .maxntid fails with cudaErrorInvalidConfiguration (9), which the parent's
// cudaGetLastError returns; the child does not run and the context stays usable.
RELIABILITY_CASE("launches", launches_device_side_block_over_maxntid, 20, nullptr) {
  auto [threads, error] = launchFromDevice(1, 128);
  if (error != 9 || threads != 0)
    wrong("the child ran " + std::to_string(threads) + " threads, the launch's error " + std::to_string(error) +
          " (the GPU: 0 threads, error 9 cudaErrorInvalidConfiguration)");
}
