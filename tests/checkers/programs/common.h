// Shared by the checker corpus: every program prints the result of each step, so that the output on a GPU under
// compute-sanitizer and on cuemu can be compared line by line besides the checker's reports.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

#define STEP(call) std::printf("%s: %s\n", #call, cudaGetErrorName(call))
inline int finish() {
  std::printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
