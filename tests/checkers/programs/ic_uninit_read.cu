// A kernel reads a buffer nothing has written.
#include "common.h"
__global__ void sum(const int* a, int* out, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) total += a[i];
  out[0] = total;
}
int main() {
  int *a, *out;
  STEP(cudaMalloc(&a, 16 * sizeof(int)));
  STEP(cudaMalloc(&out, sizeof(int)));
  sum<<<1, 1>>>(a, out, 16);
  return finish();
}
