// Theme: memory freed or unmapped while a kernel on another stream still uses it (issue 24). An H100 with driver
// 580 (tools/gpu-probe/results/clients17c-h100-2026-11-26.txt, part unmap): cuMemFree of cuMemAlloc memory,
// cuMemFreeHost and cuMemHostUnregister wait for the kernel; cuMemFree of pool memory, cuMemUnmap and
// cuMemAddressFree return at once and the kernel's next access faults with CUDA_ERROR_ILLEGAL_ADDRESS. The host
// process must never crash: a kernel that already checked an address may still be touching it.
#include "cases.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

using namespace reliability;

namespace {

// touch(buf, started): every thread increments its word of buf until *started is 2 (mapped pinned memory), which
// thread 0 of block 0 first sets to 1. A case that never sets 2 ends it only by a fault.
const char* kTouchPtx = R"PTX(
.version 7.0
.target sm_70
.address_size 64
.visible .entry touch(.param .u64 buf, .param .u64 started)
{
  .reg .u64 %rd<6>;
  .reg .u32 %r<7>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [started];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.u64 %rd4, %rd1, %rd3;
  or.b32 %r5, %r1, %r2;
  setp.ne.u32 %p1, %r5, 0;
  @%p1 bra $L_loop;
  mov.u32 %r5, 1;
  st.volatile.global.u32 [%rd2], %r5;
$L_loop:
  ld.volatile.global.u32 %r5, [%rd4];
  add.u32 %r5, %r5, 1;
  st.volatile.global.u32 [%rd4], %r5;
  ld.volatile.global.u32 %r6, [%rd2];
  setp.ne.u32 %p2, %r6, 2;
  @%p2 bra.uni $L_loop;
  ret;
}
)PTX";

constexpr unsigned kGrid = 8, kBlock = 128;
constexpr size_t kBytes = size_t(2) << 20;

struct Running {
  CUstream stream = nullptr;
  volatile unsigned* started = nullptr;
};

// Launches touch on buf on a stream of its own and returns once it runs.
Running startToucher(CUdeviceptr buf) {
  CUmodule module = nullptr;
  expectResult(cuModuleLoadData(&module, kTouchPtx), CUDA_SUCCESS, "cuModuleLoadData");
  Running r;
  void* host = nullptr;
  expectResult(cuMemHostAlloc(&host, 4, CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS, "cuMemHostAlloc");
  r.started = static_cast<volatile unsigned*>(host);
  *r.started = 0;
  CUdeviceptr startedDevice = 0;
  expectResult(cuMemHostGetDevicePointer(&startedDevice, host, 0), CUDA_SUCCESS, "cuMemHostGetDevicePointer");
  expectResult(cuStreamCreate(&r.stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
  void* args[] = {&buf, &startedDevice};
  expectResult(launch(kernel(module, "touch"), kGrid, kBlock, args, r.stream), CUDA_SUCCESS, "touch");
  while (*r.started == 0) std::this_thread::yield();
  // Let every block reach its loop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  expectResult(cuStreamQuery(r.stream), CUDA_ERROR_NOT_READY, "cuStreamQuery while the kernel runs");
  return r;
}

CUdeviceptr mapVmm(CUmemGenericAllocationHandle* handle) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  expectResult(cuMemCreate(handle, kBytes, &prop, 0), CUDA_SUCCESS, "cuMemCreate");
  CUdeviceptr va = 0;
  expectResult(cuMemAddressReserve(&va, kBytes, 0, 0, 0), CUDA_SUCCESS, "cuMemAddressReserve");
  expectResult(cuMemMap(va, kBytes, 0, *handle, 0), CUDA_SUCCESS, "cuMemMap");
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  expectResult(cuMemSetAccess(va, kBytes, &access, 1), CUDA_SUCCESS, "cuMemSetAccess");
  expectResult(cuMemsetD8(va, 0, kBytes), CUDA_SUCCESS, "cuMemsetD8");
  return va;
}

}  // namespace

// cuMemFree of pool memory does not wait for the kernel (it would wait for ever here): the kernel faults.
RELIABILITY_CASE("memory", memory_pool_free_under_running_kernel, 30, nullptr) {
  setUp();
  CUdeviceptr buf = 0;
  expectResult(cuMemAllocAsync(&buf, kBytes, nullptr), CUDA_SUCCESS, "cuMemAllocAsync");
  expectResult(cuMemsetD8(buf, 0, kBytes), CUDA_SUCCESS, "cuMemsetD8");
  Running r = startToucher(buf);
  expectResult(cuMemFree(buf), CUDA_SUCCESS, "cuMemFree of pool memory in use");
  expectResult(cuStreamSynchronize(r.stream), CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize");
}

// cuMemFreeAsync of cuMemAlloc memory into the NULL stream returns at once, and the kernel on another stream goes on
// using the memory until it ends, without a fault (memfree_async_other on the H100).
RELIABILITY_CASE("memory", memory_free_async_under_running_kernel, 30, nullptr) {
  setUp();
  CUdeviceptr buf = 0;
  expectResult(cuMemAlloc(&buf, kBytes), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemsetD8(buf, 0, kBytes), CUDA_SUCCESS, "cuMemsetD8");
  Running r = startToucher(buf);
  expectResult(cuMemFreeAsync(buf, nullptr), CUDA_SUCCESS, "cuMemFreeAsync of memory in use");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  expectResult(cuStreamQuery(r.stream), CUDA_ERROR_NOT_READY, "cuStreamQuery after the free");
  *r.started = 2;
  expectResult(cuStreamSynchronize(r.stream), CUDA_SUCCESS, "cuStreamSynchronize");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
}

// cuMemUnmap returns at once; the kernel's next access faults, the process lives.
RELIABILITY_CASE("memory", memory_vmm_unmap_under_running_kernel, 30, nullptr) {
  setUp();
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr va = mapVmm(&handle);
  Running r = startToucher(va);
  expectResult(cuMemUnmap(va, kBytes), CUDA_SUCCESS, "cuMemUnmap of memory in use");
  expectResult(cuMemRelease(handle), CUDA_SUCCESS, "cuMemRelease");
  expectResult(cuStreamSynchronize(r.stream), CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize");
}

// Unmapping and freeing the addresses: they may be reserved again at once without the old kernel touching them.
RELIABILITY_CASE("memory", memory_vmm_address_free_under_running_kernel, 30, nullptr) {
  setUp();
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr va = mapVmm(&handle);
  Running r = startToucher(va);
  expectResult(cuMemUnmap(va, kBytes), CUDA_SUCCESS, "cuMemUnmap of memory in use");
  expectResult(cuMemAddressFree(va, kBytes), CUDA_SUCCESS, "cuMemAddressFree");
  expectResult(cuStreamSynchronize(r.stream), CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize");
}
