// Kernel memory accesses through the driver: the same kernel (each thread loads, adds one, stores one 32-bit
// element) over device memory, pinned host memory (cuMemAllocHost) and registered host memory
// (cuMemHostRegister). Device and pinned memory are checked by the address space's inline table; registered
// memory lies outside it, so its checks show what the registered-memory path costs per access.
// BM_MemAllocFree: cuMemAlloc then cuMemFree of one size (small sizes share slabs); BM_MemAllocSetFree the same
// with the whole allocation set once in between, so its pages are made and given back too (issue 24: device memory
// backed by a shared memory file from allocation on, for IPC).
//   driver_memory_bench [--benchmark_filter=...]     (CUEMU_THREADS=1 for a single-threaded comparison)
#include <cuda.h>

#include <benchmark/benchmark.h>

#include "driver_bench.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

const char* kAddOne = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry addOne(.param .u64 p, .param .u32 n)
{
  .reg .u64 %rd<4>;
  .reg .u32 %r<6>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %q1, %r2, %r1;
  @%q1 bra $L_done;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  add.u32 %r5, %r5, 1;
  st.global.u32 [%rd3], %r5;
$L_done:
  ret;
}
)";

// Each thread copies one 16-byte vector (ld.global.v4.u32, st.global.v4.u32): one host move per lane each way.
const char* kCopyVectors = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry copyVectors(.param .u64 dst, .param .u64 src, .param .u32 n)
{
  .reg .u64 %rd<6>;
  .reg .u32 %r<10>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [dst];
  ld.param.u64 %rd2, [src];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %q1, %r2, %r1;
  @%q1 bra $L_done;
  mul.wide.u32 %rd3, %r2, 16;
  add.u64 %rd4, %rd2, %rd3;
  add.u64 %rd5, %rd1, %rd3;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd4];
  st.global.v4.u32 [%rd5], {%r5, %r6, %r7, %r8};
$L_done:
  ret;
}
)";

using driver_bench::check;

CUfunction addOne() {
  static CUfunction f = [] {
    CUfunction function = driver_bench::loadKernel(kAddOne, "addOne");
    return function;
  }();
  return f;
}

enum Memory { Device, Pinned, Registered };

void BM_AddOne(benchmark::State& state) {
  CUfunction function = addOne();
  unsigned n = unsigned(state.range(1));
  size_t bytes = size_t(n) * 4;
  CUdeviceptr p = 0;
  void* host = nullptr;
  std::vector<uint32_t> registered;
  switch (Memory(state.range(0))) {
    case Device: check(cuMemAlloc(&p, bytes), "cuMemAlloc"); break;
    case Pinned:
      check(cuMemAllocHost(&host, bytes), "cuMemAllocHost");
      check(cuMemHostGetDevicePointer(&p, host, 0), "cuMemHostGetDevicePointer");
      break;
    case Registered:
      registered.resize(n);
      check(cuMemHostRegister(registered.data(), bytes, 0), "cuMemHostRegister");
      check(cuMemHostGetDevicePointer(&p, registered.data(), 0), "cuMemHostGetDevicePointer");
      break;
  }
  void* args[] = {&p, &n};
  for (auto _ : state) {
    check(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
  switch (Memory(state.range(0))) {
    case Device: cuMemFree(p); break;
    case Pinned: cuMemFreeHost(host); break;
    case Registered: cuMemHostUnregister(registered.data()); break;
  }
}
BENCHMARK(BM_AddOne)
    ->ArgNames({"memory", "n"})
    ->ArgsProduct({{Device, Pinned, Registered}, {1 << 10, 1 << 18}})
    ->Args({Device, 1 << 24})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void primaryContext() {
  static const bool made = [] {
    driver_bench::loadKernel(kAddOne, "addOne");
    return true;
  }();
  (void)made;
}

void BM_MemAllocFree(benchmark::State& state) {
  primaryContext();
  size_t bytes = size_t(state.range(0));
  for (auto _ : state) {
    CUdeviceptr p = 0;
    check(cuMemAlloc(&p, bytes), "cuMemAlloc");
    check(cuMemFree(p), "cuMemFree");
  }
}
BENCHMARK(BM_MemAllocFree)->Arg(1)->Arg(4096)->Arg(32 << 10)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

void BM_MemAllocSetFree(benchmark::State& state) {
  primaryContext();
  size_t bytes = size_t(state.range(0));
  for (auto _ : state) {
    CUdeviceptr p = 0;
    check(cuMemAlloc(&p, bytes), "cuMemAlloc");
    check(cuMemsetD8(p, 1, bytes), "cuMemsetD8");
    check(cuMemFree(p), "cuMemFree");
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}
BENCHMARK(BM_MemAllocSetFree)->Arg(4096)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CopyVectors(benchmark::State& state) {
  static CUfunction function = [] {
    primaryContext();
    return driver_bench::loadKernel(kCopyVectors, "copyVectors");
  }();
  unsigned n = unsigned(state.range(0));
  CUdeviceptr src = 0, dst = 0;
  check(cuMemAlloc(&src, size_t(n) * 16), "cuMemAlloc");
  check(cuMemAlloc(&dst, size_t(n) * 16), "cuMemAlloc");
  check(cuMemsetD8(src, 1, size_t(n) * 16), "cuMemsetD8");
  void* args[] = {&dst, &src, &n};
  for (auto _ : state) {
    check(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * n);
  cuMemFree(src);
  cuMemFree(dst);
}
BENCHMARK(BM_CopyVectors)->Arg(1 << 18)->UseRealTime()->Unit(benchmark::kMicrosecond);

// A device-to-device copy between two allocations touched before: the memory's steady state (page size, TLB).
void BM_CopyDtoD(benchmark::State& state) {
  primaryContext();
  size_t bytes = size_t(state.range(0));
  CUdeviceptr a = 0, b = 0;
  check(cuMemAlloc(&a, bytes), "cuMemAlloc");
  check(cuMemAlloc(&b, bytes), "cuMemAlloc");
  check(cuMemsetD8(a, 1, bytes), "cuMemsetD8");
  check(cuMemsetD8(b, 2, bytes), "cuMemsetD8");
  for (auto _ : state) check(cuMemcpyDtoD(b, a, bytes), "cuMemcpyDtoD");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  cuMemFree(a);
  cuMemFree(b);
}
BENCHMARK(BM_CopyDtoD)->Arg(64 << 20)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Many live small allocations, then all freed: the slab search and its bookkeeping (time per allocation and free).
void BM_MemAllocManySmall(benchmark::State& state) {
  primaryContext();
  std::vector<CUdeviceptr> pointers(size_t(state.range(0)));
  for (auto _ : state) {
    for (CUdeviceptr& p : pointers) check(cuMemAlloc(&p, 256), "cuMemAlloc");
    for (CUdeviceptr p : pointers) check(cuMemFree(p), "cuMemFree");
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_MemAllocManySmall)->Arg(10000)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
