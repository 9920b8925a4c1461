// Built with -gencode arch=compute_90,code=sm_90: the fatbinary has SASS only. On a GPU of compute capability
// 9.0 it runs; on cuemu (which runs PTX) the launch fails through the runtime's normal error path with
// cudaErrorNoKernelImageForDevice, and cuemu prints one line naming the binary and the nvcc flag to add.
#include "check.h"

__global__ void touch(int* p) { *p = 42; }

int main() {
  CORPUS_PROGRAM("sass_only");
  int* p;
  CHECK_CUDA(cudaMalloc(&p, sizeof(int)));
  touch<<<1, 1>>>(p);
  cudaError_t launch = cudaGetLastError();
  if (launch == cudaSuccess) {
    // A device that runs sm_90 SASS.
    int value = 0;
    CHECK_CUDA(cudaMemcpy(&value, p, sizeof value, cudaMemcpyDeviceToHost));
    EXPECT_EQ_INT(value, 42);
    int major = 0, minor = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    EXPECT_TRUE(major == 9 && minor == 0);
    std::printf("sass_only: ran the SASS on a compute capability 9.0 device\n");
    return corpus::pass();
  }
  EXPECT_EQ_INT(launch, cudaErrorNoKernelImageForDevice);
  std::printf("sass_only: launch refused with %s\n", cudaGetErrorName(launch));
  return corpus::pass();
}
