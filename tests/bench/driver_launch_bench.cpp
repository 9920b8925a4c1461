// Launch latency through the driver (issue 21 item 1): an empty kernel (one warp, one CTA) launched then
// synchronised, and launched asynchronously (a batch of launches, then one synchronise: time per launch).
//   driver_launch_bench [--benchmark_filter=...]
#include <cuda.h>

#include <benchmark/benchmark.h>

#include "driver_bench.h"

#include <cstdio>
#include <cstdlib>

namespace {

const char* kEmpty = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry empty(.param .u64 p)
{
  ret;
}
)";

using driver_bench::check;

CUfunction emptyKernel() {
  static CUfunction f = [] {
    CUfunction function = driver_bench::loadKernel(kEmpty, "empty");
    // The first launch lowers the kernel (lazy loading): not part of what is timed.
    CUdeviceptr p = 0;
    void* args[] = {&p};
    check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    return function;
  }();
  return f;
}

// range(0): 0 the legacy default stream, 1 a user stream (non-blocking).
CUstream benchStream(benchmark::State& state) {
  if (state.range(0) == 0) return nullptr;
  CUstream stream = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return stream;
}

void BM_LaunchSync(benchmark::State& state) {
  CUfunction function = emptyKernel();
  CUstream stream = benchStream(state);
  CUdeviceptr p = 0;
  void* args[] = {&p};
  for (auto _ : state) {
    check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  if (stream) cuStreamDestroy(stream);
}
BENCHMARK(BM_LaunchSync)->ArgName("user_stream")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

// What cudaDeviceSynchronize after each launch costs (the context's every stream is waited for).
void BM_LaunchCtxSync(benchmark::State& state) {
  CUfunction function = emptyKernel();
  CUdeviceptr p = 0;
  void* args[] = {&p};
  for (auto _ : state) {
    check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
  }
}
BENCHMARK(BM_LaunchCtxSync)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Asynchronous launches: the time the launching thread spends per launch, batches of 64 with a synchronise
// between batches (outside the timed part).
void BM_LaunchAsync(benchmark::State& state) {
  CUfunction function = emptyKernel();
  CUstream stream = benchStream(state);
  CUdeviceptr p = 0;
  void* args[] = {&p};
  constexpr int kBatch = 64;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i)
      check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
    state.PauseTiming();
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kBatch);
  if (stream) cuStreamDestroy(stream);
}
BENCHMARK(BM_LaunchAsync)->ArgName("user_stream")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
