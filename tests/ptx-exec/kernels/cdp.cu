// Kernels for the device runtime tests (CUDA dynamic parallelism): launches and runtime calls from a kernel.
// Needs relocatable device code: regen.sh compiles this file with -rdc=true.
#include <cstdint>

extern "C" __global__ void cdpChild(int* out, int a, double b) {
  if (threadIdx.x == 0) out[a] = int(b * 2);
}

// Every thread launches cdpChild with a configuration of its own; odd threads into the tail-launch stream.
extern "C" __global__ void cdpParent(int* out, int* errors) {
  int t = threadIdx.x;
  cudaStream_t stream = (t & 1) ? cudaStreamTailLaunch : 0;
  cdpChild<<<dim3(t + 1, 2, 3), dim3(4, 5, 1), 16 * t, stream>>>(out, t, 2.5 * t);
  errors[t * 3] = cudaPeekAtLastError();
  errors[t * 3 + 1] = cudaGetLastError();
  errors[t * 3 + 2] = cudaGetLastError();
}

extern "C" __global__ void cdpQueries(int* out, unsigned long long* handles) {
  cudaGetDevice(&out[0]);
  cudaDeviceGetAttribute(&out[1], cudaDevAttrMultiProcessorCount, out[0]);
  cudaStream_t s;
  out[2] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  handles[0] = reinterpret_cast<uintptr_t>(s);
  out[3] = cudaStreamDestroy(s);
  int* p = nullptr;
  out[4] = cudaMalloc(reinterpret_cast<void**>(&p), 64);
  handles[1] = reinterpret_cast<uintptr_t>(p);
  out[5] = cudaFree(p);
}
