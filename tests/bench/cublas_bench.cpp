// cublasSgemm 512x512 on cuemu against a native f32 GEMM of the same size in the same run (issue 18 item 4).
// cuBLAS ships PTX for compute_120 only: run with cuemu's libcuda.so.1 first on LD_LIBRARY_PATH, the cuBLAS
// libraries after it, CUEMU_DEVICE_PROFILE=rtx-pro-6000 and CUDA_FORCE_PTX_JIT=1 (tests/libraries/CMakeLists.txt
// says why; the target `run_cublas_bench` sets all of it). Both sides use one host thread (CUEMU_THREADS=1 unless
// set) and are timed in wall time; the first call (module load, lowering) is left out. Built without cuBLAS, the
// binary says so and exits.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#if CUEMU_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace {

constexpr int kN = 512;

#if defined(__x86_64__)
#define NATIVE __attribute__((noinline, target_clones("arch=x86-64-v3", "default")))
#else
#define NATIVE __attribute__((noinline))
#endif

// C = A B (column-major, as cuBLAS): the inner loop runs along a column of C and of A, which the compiler vectorises
// with FMA (the size is a constant: at -O2 GCC vectorises only loops whose trip count it knows).
NATIVE void nativeSgemm(const float* __restrict a, const float* __restrict b, float* __restrict c) {
  constexpr int n = kN;
  for (int j = 0; j < n; ++j) {
    float* cj = c + size_t(j) * n;
    std::fill(cj, cj + n, 0.0f);
    for (int k = 0; k < n; ++k) {
      const float bkj = b[size_t(j) * n + k];
      const float* ak = a + size_t(k) * n;
      for (int i = 0; i < n; ++i) cj[i] = std::fma(ak[i], bkj, cj[i]);
    }
  }
}

double wallSeconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#if CUEMU_HAVE_CUBLAS
#define CHECK(call)                                                 \
  do {                                                              \
    if (auto result_ = (call); int(result_) != 0) {                 \
      std::fprintf(stderr, "%s failed: %d\n", #call, int(result_)); \
      state.SkipWithError(#call " failed");                         \
      return;                                                       \
    }                                                               \
  } while (0)

void BM_CublasSgemm512(benchmark::State& state) {
  const size_t elems = size_t(kN) * kN;
  std::vector<float> a(elems), b(elems), c(elems), ref(elems);
  for (size_t i = 0; i < elems; ++i) {
    a[i] = float(int(i % 7) - 3) * 0.25f;
    b[i] = float(int(i % 5) - 2) * 0.5f;
  }
  double native = 1e30;
  for (int r = 0; r < 3; ++r)
    native = std::min(native, wallSeconds([&] { nativeSgemm(a.data(), b.data(), ref.data()); }));
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CHECK(cudaMalloc(&da, elems * sizeof(float)));
  CHECK(cudaMalloc(&db, elems * sizeof(float)));
  CHECK(cudaMalloc(&dc, elems * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, da, kN, db, kN, &beta, dc, kN);
  };
  CHECK(gemm());  // loads and lowers the kernel
  CHECK(cudaDeviceSynchronize());
  double best = 1e30;
  for (auto _ : state) {
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    cudaError_t sync = cudaSuccess;
    const double t = wallSeconds([&] {
      status = gemm();
      sync = cudaDeviceSynchronize();
    });
    CHECK(status);
    CHECK(sync);
    best = std::min(best, t);
    state.SetIterationTime(t);
  }
  CHECK(cudaMemcpy(c.data(), dc, elems * sizeof(float), cudaMemcpyDeviceToHost));
  // the products are small multiples of 1/8 and the sums exact in f32: any summation order gives these values
  if (!std::equal(c.begin(), c.end(), ref.begin()))
    state.SkipWithError("cublasSgemm result differs from the native GEMM");
  cublasDestroy(handle);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  state.counters["native_ms"] = native * 1e3;
  state.counters["cuemu_ms"] = best * 1e3;
  state.counters["ratio"] = best / native;
}
BENCHMARK(BM_CublasSgemm512)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
#endif

}  // namespace

int main(int argc, char** argv) {
#if !CUEMU_HAVE_CUBLAS
  (void)argc;
  (void)argv;
  std::printf("SKIP: cuBLAS not installed (cublas_v2.h and libcublas, libcublasLt, libcudart from the CUDA toolkit)\n");
  return 0;
#else
  setenv("CUEMU_THREADS", "1", 0);
  setenv("CUEMU_DEVICE_PROFILE", "rtx-pro-6000", 0);
  setenv("CUDA_FORCE_PTX_JIT", "1", 0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
#endif
}
