// runtime.programs.rt_device_errors: device properties, launch configuration errors that do not stick, and a
// kernel fault that does: on driver 580 it poisons the process, so even after cudaDeviceReset the device cannot be
// used again (measured on an H200).
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
  noop<<<1, 2048>>>();  // too many threads: an error at launch (the driver's CUDA_ERROR_INVALID_VALUE), not sticky
  cudaError_t launch = cudaGetLastError();
  ok = ok && launch == cudaErrorInvalidValue;
  ok = ok && cudaGetLastError() == cudaSuccess;
  noop<<<1, 1>>>();
  ok = ok && cudaDeviceSynchronize() == cudaSuccess;
  writeTo<<<1, 1>>>(reinterpret_cast<int*>(16));  // illegal address: sticky
  cudaError_t fault = cudaDeviceSynchronize();
  ok = ok && fault == cudaErrorIllegalAddress;
  void* p = nullptr;
  cudaError_t afterFault = cudaMalloc(&p, 16);
  ok = ok && afterFault == cudaErrorIllegalAddress;
  cudaError_t reset = cudaDeviceReset();  // succeeds: it only drops the primary context
  ok = ok && reset == cudaSuccess;
  cudaError_t afterReset = cudaMalloc(&p, 16);
  ok = ok && afterReset == cudaErrorDevicesUnavailable;  // the runtime cannot retain the poisoned device again
  std::printf("%s (%s, launch %s, fault %s, malloc after fault %s, reset %s, malloc after reset %s)\n",
              ok ? "PASS" : "FAIL", prop.name, cudaGetErrorName(launch), cudaGetErrorName(fault),
              cudaGetErrorName(afterFault), cudaGetErrorName(reset), cudaGetErrorName(afterReset));
  return !ok;
}
