// The main demo: an ordinary driver-API CUDA program. It lists the devices, loads PTX compiled by nvcc, runs
// three kernels (a grid-stride SAXPY, a shared-memory reduction with atomics, a histogram) and checks every
// result against the host. Run it on cuemu: LD_LIBRARY_PATH=build/emu build/tests/demo/cuemu-demo
#include <cuda.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char* name_ = "?";                                                 \
      cuGetErrorName(r_, &name_);                                              \
      std::printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name_); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int main(int argc, char** argv) {
  const char* ptxPath = argc > 1 ? argv[1] : CUEMU_DEMO_PTX;
  CHECK(cuInit(0));
  int driver = 0, count = 0;
  CHECK(cuDriverGetVersion(&driver));
  CHECK(cuDeviceGetCount(&count));
  std::printf("CUDA driver %d.%d, %d device(s)\n", driver / 1000, driver % 1000 / 10, count);
  for (int d = 0; d < count; ++d) {
    CUdevice dev;
    char name[128];
    size_t memory = 0;
    int major = 0, minor = 0, sms = 0;
    CHECK(cuDeviceGet(&dev, d));
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(cuDeviceTotalMem(&memory, dev));
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    std::printf("  device %d: %s, compute capability %d.%d, %d SMs, %zu MiB\n", d, name, major, minor, sms,
                memory >> 20);
  }

  CUdevice dev;
  CUcontext ctx;
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmodule module;
  CHECK(cuModuleLoad(&module, ptxPath));
  CUfunction saxpy, sumOfSquares, histogram;
  CHECK(cuModuleGetFunction(&saxpy, module, "saxpy"));
  CHECK(cuModuleGetFunction(&sumOfSquares, module, "sumOfSquares"));
  CHECK(cuModuleGetFunction(&histogram, module, "histogram"));

  int n = 1 << 22;
  std::vector<float> x(n), y(n);
  std::vector<unsigned char> bytes(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i % 1000) * 0.001f;
    y[i] = float(i % 7);
    bytes[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
  }
  CUdeviceptr dx, dy, dsum, dbytes, dbins;
  CHECK(cuMemAlloc(&dx, n * sizeof(float)));
  CHECK(cuMemAlloc(&dy, n * sizeof(float)));
  CHECK(cuMemAlloc(&dsum, sizeof(double)));
  CHECK(cuMemAlloc(&dbytes, n));
  CHECK(cuMemAlloc(&dbins, 256 * sizeof(unsigned)));
  CHECK(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  CHECK(cuMemcpyHtoD(dy, y.data(), n * sizeof(float)));
  CHECK(cuMemcpyHtoD(dbytes, bytes.data(), n));
  CHECK(cuMemsetD32(dsum, 0, 2));
  CHECK(cuMemsetD32(dbins, 0, 256));

  CUstream stream;
  CUevent start, stop;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CHECK(cuEventCreate(&start, 0));
  CHECK(cuEventCreate(&stop, 0));
  float a = 2.5f;
  void* saxpyArgs[] = {&n, &a, &dx, &dy};
  void* sumArgs[] = {&n, &dx, &dsum};
  void* histArgs[] = {&n, &dbytes, &dbins};
  auto wall = std::chrono::steady_clock::now();
  CHECK(cuEventRecord(start, stream));
  CHECK(cuLaunchKernel(saxpy, 1024, 1, 1, 256, 1, 1, 0, stream, saxpyArgs, nullptr));
  CHECK(cuLaunchKernel(sumOfSquares, 512, 1, 1, 256, 1, 1, 0, stream, sumArgs, nullptr));
  CHECK(cuLaunchKernel(histogram, 256, 1, 1, 256, 1, 1, 0, stream, histArgs, nullptr));
  CHECK(cuEventRecord(stop, stream));
  CHECK(cuEventSynchronize(stop));
  float kernelMs = 0;
  CHECK(cuEventElapsedTime(&kernelMs, start, stop));
  double wallMs = millisecondsSince(wall);

  std::vector<float> yOut(n);
  double sum = 0;
  std::vector<unsigned> bins(256);
  CHECK(cuMemcpyDtoH(yOut.data(), dy, n * sizeof(float)));
  CHECK(cuMemcpyDtoH(&sum, dsum, sizeof sum));
  CHECK(cuMemcpyDtoH(bins.data(), dbins, sizeof(unsigned) * 256));

  int bad = 0;
  double expectSum = 0;
  std::vector<unsigned> expectBins(256);
  for (int i = 0; i < n; ++i) {
    if (yOut[i] != std::fma(a, x[i], y[i])) ++bad;  // nvcc contracts a*x+y into one fused multiply-add
    expectSum += double(x[i]) * x[i];
    ++expectBins[bytes[i]];
  }
  bool sumOk = std::fabs(sum - expectSum) <= 1e-9 * expectSum;
  bool binsOk = bins == expectBins;
  std::printf("saxpy over %d floats: %s (%d wrong)\n", n, bad ? "FAIL" : "ok", bad);
  std::printf("sum of squares: %.6f (host %.6f): %s\n", sum, expectSum, sumOk ? "ok" : "FAIL");
  std::printf("histogram of %d bytes: %s\n", n, binsOk ? "ok" : "FAIL");
  std::printf("3 kernels: %.1f ms between events, %.1f ms wall\n", kernelMs, wallMs);

  CHECK(cuEventDestroy(start));
  CHECK(cuEventDestroy(stop));
  CHECK(cuStreamDestroy(stream));
  CHECK(cuMemFree(dx));
  CHECK(cuMemFree(dy));
  CHECK(cuMemFree(dsum));
  CHECK(cuMemFree(dbytes));
  CHECK(cuMemFree(dbins));
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  bool pass = !bad && sumOk && binsOk;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
