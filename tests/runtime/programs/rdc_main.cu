// Separate compilation (-rdc=true): a kernel here calls a __device__ function and uses a __device__ variable
// defined in rdc_lib.cu; the device linker joins them.
#include "check.h"

extern __device__ int libraryCounter;
extern __device__ float polynomial(float x);

__global__ void evaluate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = polynomial(x[i]);
    atomicAdd(&libraryCounter, 1);
  }
}

void launchFromLibrary(float* y, int n);  // rdc_lib.cu: a kernel there calls back into this TU's function

__device__ float twice(float x) { return 2.0f * x; }

int main() {
  CORPUS_PROGRAM("rdc");
  const int n = 1000;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 10);
  float *x, *y;
  CHECK_CUDA(cudaMalloc(&x, sizeof host));
  CHECK_CUDA(cudaMalloc(&y, sizeof host));
  CHECK_CUDA(cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice));
  int zero = 0;
  CHECK_CUDA(cudaMemcpyToSymbol(libraryCounter, &zero, sizeof zero));
  evaluate<<<(n + 127) / 128, 128>>>(x, y, n);
  CHECK_CUDA(cudaGetLastError());
  float out[n];
  CHECK_CUDA(cudaMemcpy(out, y, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float v = host[i];
    if (out[i] != 3.0f * v * v + 2.0f * v + 1.0f) corpus::fail("polynomial across TUs", __FILE__, __LINE__);
  }
  int counter = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&counter, libraryCounter, sizeof counter));
  EXPECT_EQ_INT(counter, n);
  launchFromLibrary(y, n);
  CHECK_CUDA(cudaMemcpy(out, y, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (out[i] != 2.0f * i) corpus::fail("callback into the main TU", __FILE__, __LINE__);
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  return corpus::pass();
}
