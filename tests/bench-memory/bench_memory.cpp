// Large copies: host<->device and device<->device through the driver, and the host's memcpy between two
// ordinary buffers of the same size as the baseline. Compare bytes_per_second of BM_HostMemcpy with the others
// (the target: >= 80%). The BM_Small* cases measure the fixed cost of a synchronous call (4 bytes): the
// time per iteration is the latency an application sees.
#include "api/cuda_internal.h"
#include "core/context.h"
#include "core/device.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

std::shared_ptr<cuemu::Context> g_context;

void ensureContext() {
  if (g_context) return;
  if (cuInit(0) != CUDA_SUCCESS) std::abort();
  g_context = std::make_shared<cuemu::Context>(*cuemu::deviceByOrdinal(0), 0, false);
  g_context->registerHandle();
  cuemu::pushCurrentContext(g_context);
}

struct HostBuffer {
  explicit HostBuffer(size_t n) : bytes(n) {
    ptr = static_cast<uint8_t*>(std::aligned_alloc(4096, n));
    std::memset(ptr, 1, n);  // touched, like the device side after its first copy
  }
  ~HostBuffer() { std::free(ptr); }
  size_t bytes;
  uint8_t* ptr;
};

struct DeviceBuffer {
  explicit DeviceBuffer(size_t n) {
    if (cuMemAlloc_v2(&ptr, n) != CUDA_SUCCESS) std::abort();
    cuMemsetD8_v2(ptr, 1, n);
  }
  ~DeviceBuffer() { cuMemFree_v2(ptr); }
  CUdeviceptr ptr = 0;
};

void BM_HostMemcpy(benchmark::State& state) {
  size_t n = size_t(state.range(0));
  HostBuffer a(n), b(n);
  for (auto _ : state) {
    std::memcpy(b.ptr, a.ptr, n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

void BM_HtoD(benchmark::State& state) {
  ensureContext();
  size_t n = size_t(state.range(0));
  HostBuffer host(n);
  DeviceBuffer device(n);
  for (auto _ : state)
    if (cuMemcpyHtoD_v2(device.ptr, host.ptr, n) != CUDA_SUCCESS) state.SkipWithError("copy failed");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

void BM_DtoH(benchmark::State& state) {
  ensureContext();
  size_t n = size_t(state.range(0));
  HostBuffer host(n);
  DeviceBuffer device(n);
  for (auto _ : state)
    if (cuMemcpyDtoH_v2(host.ptr, device.ptr, n) != CUDA_SUCCESS) state.SkipWithError("copy failed");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

void BM_DtoD(benchmark::State& state) {
  ensureContext();
  size_t n = size_t(state.range(0));
  DeviceBuffer a(n), b(n);
  for (auto _ : state)
    if (cuMemcpyDtoD_v2(b.ptr, a.ptr, n) != CUDA_SUCCESS) state.SkipWithError("copy failed");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

void BM_HtoDAsyncPinned(benchmark::State& state) {
  ensureContext();
  size_t n = size_t(state.range(0));
  void* pinned = nullptr;
  if (cuMemAllocHost_v2(&pinned, n) != CUDA_SUCCESS) {
    state.SkipWithError("cuMemAllocHost unavailable");
    return;
  }
  std::memset(pinned, 1, n);
  DeviceBuffer device(n);
  // Each iteration waits for its copy: the rate is the copy's, not the queue's.
  for (auto _ : state)
    if (cuMemcpyHtoDAsync_v2(device.ptr, pinned, n, nullptr) != CUDA_SUCCESS ||
        cuStreamSynchronize(nullptr) != CUDA_SUCCESS)
      state.SkipWithError("copy failed");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
  cuMemFreeHost(pinned);
}

void BM_SmallHtoD(benchmark::State& state) {
  ensureContext();
  DeviceBuffer device(4096);
  unsigned value = 7;
  for (auto _ : state)
    if (cuMemcpyHtoD_v2(device.ptr, &value, sizeof value) != CUDA_SUCCESS) state.SkipWithError("copy failed");
}

void BM_SmallDtoH(benchmark::State& state) {
  ensureContext();
  DeviceBuffer device(4096);
  unsigned value = 0;
  for (auto _ : state) {
    if (cuMemcpyDtoH_v2(&value, device.ptr, sizeof value) != CUDA_SUCCESS) state.SkipWithError("copy failed");
    benchmark::DoNotOptimize(value);
  }
}

void BM_SmallMemsetD32(benchmark::State& state) {
  ensureContext();
  DeviceBuffer device(4096);
  for (auto _ : state)
    if (cuMemsetD32_v2(device.ptr, 5, 1) != CUDA_SUCCESS) state.SkipWithError("memset failed");
}

// A synchronous copy on a stream that is still busy goes through the stream's worker: the slow path.
void BM_SmallHtoDAfterAsync(benchmark::State& state) {
  ensureContext();
  DeviceBuffer device(4096);
  unsigned value = 7;
  for (auto _ : state) {
    if (cuMemsetD32Async(device.ptr, 5, 1, nullptr) != CUDA_SUCCESS ||
        cuMemcpyHtoD_v2(device.ptr, &value, sizeof value) != CUDA_SUCCESS)
      state.SkipWithError("copy failed");
  }
}

BENCHMARK(BM_SmallHtoD)->UseRealTime();
BENCHMARK(BM_SmallDtoH)->UseRealTime();
BENCHMARK(BM_SmallMemsetD32)->UseRealTime();
BENCHMARK(BM_SmallHtoDAfterAsync)->UseRealTime();

// 64 KiB (cache resident), 4 MiB, 64 MiB, 256 MiB (memory bound).
#define CUEMU_SIZES ->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20)->Arg(256 << 20)->UseRealTime()
BENCHMARK(BM_HostMemcpy) CUEMU_SIZES;
BENCHMARK(BM_HtoD) CUEMU_SIZES;
BENCHMARK(BM_DtoH) CUEMU_SIZES;
BENCHMARK(BM_DtoD) CUEMU_SIZES;
BENCHMARK(BM_HtoDAsyncPinned) CUEMU_SIZES;

}  // namespace

BENCHMARK_MAIN();
