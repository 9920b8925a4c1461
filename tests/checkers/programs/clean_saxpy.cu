// y = a*x + y over 10000 elements: no error under any tool.
#include "common.h"
#include <vector>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  const int n = 10000;
  std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
  float *x, *y;
  STEP(cudaMalloc(&x, n * sizeof(float)));
  STEP(cudaMalloc(&y, n * sizeof(float)));
  STEP(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  STEP(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, x, y);
  STEP(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("y[0] = %g, y[n-1] = %g\n", hy[0], hy[n - 1]);
  STEP(cudaFree(x));
  STEP(cudaFree(y));
  return finish();
}
