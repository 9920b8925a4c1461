// runtime.programs.rt_device_errors: device properties, launch configuration errors that do not stick, and a
// kernel fault that does (until cudaDeviceReset).
#include <cstdio>

__global__ void noop() {}
__global__ void writeTo(int* p) { *p = 1; }

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    std::printf("FAIL no device\n");
    return 1;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("FAIL properties\n");
    return 1;
  }
  int attr = 0;
  cudaDeviceGetAttribute(&attr, cudaDevAttrMaxThreadsPerBlock, 0);
  bool ok = attr == prop.maxThreadsPerBlock && prop.warpSize == 32 && prop.major >= 7;
  noop<<<1, 2048>>>();  // too many threads: an error at launch, not sticky
  cudaError_t launch = cudaGetLastError();
  ok = ok && launch == cudaErrorInvalidConfiguration;
  ok = ok && cudaGetLastError() == cudaSuccess;
  noop<<<1, 1>>>();
  ok = ok && cudaDeviceSynchronize() == cudaSuccess;
  writeTo<<<1, 1>>>(reinterpret_cast<int*>(16));  // illegal address: sticky
  cudaError_t fault = cudaDeviceSynchronize();
  ok = ok && fault == cudaErrorIllegalAddress;
  void* p = nullptr;
  ok = ok && cudaMalloc(&p, 16) == cudaErrorIllegalAddress;
  ok = ok && cudaDeviceReset() == cudaSuccess;
  ok = ok && cudaMalloc(&p, 16) == cudaSuccess && cudaFree(p) == cudaSuccess;
  std::printf("%s (%s, launch %s, fault %s)\n", ok ? "PASS" : "FAIL", prop.name, cudaGetErrorName(launch),
              cudaGetErrorName(fault));
  return !ok;
}
