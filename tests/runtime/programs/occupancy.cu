// Occupancy and function attributes: answers must be consistent with the device's limits and with each other.
#include "check.h"

__global__ void light(float* p) { p[threadIdx.x] = 1.0f; }

__global__ void __launch_bounds__(128) bounded(float* p) { p[threadIdx.x] *= 2.0f; }

__global__ void sharedHeavy(float* p) {
  __shared__ float buffer[8192];  // 32 KiB static
  buffer[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = buffer[(threadIdx.x + 1) % blockDim.x];
}

int main() {
  CORPUS_PROGRAM("occupancy");
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  EXPECT_TRUE(prop.multiProcessorCount > 0);
  EXPECT_TRUE(prop.maxThreadsPerBlock == 1024);
  EXPECT_TRUE(prop.warpSize == 32);

  cudaFuncAttributes attributes;
  CHECK_CUDA(cudaFuncGetAttributes(&attributes, light));
  EXPECT_TRUE(attributes.maxThreadsPerBlock == 1024);
  EXPECT_TRUE(attributes.numRegs > 0);
  CHECK_CUDA(cudaFuncGetAttributes(&attributes, bounded));
  EXPECT_TRUE(attributes.maxThreadsPerBlock <= 128);
  CHECK_CUDA(cudaFuncGetAttributes(&attributes, sharedHeavy));
  EXPECT_TRUE(attributes.sharedSizeBytes == 8192 * sizeof(float));

  int blocks = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, light, 256, 0));
  EXPECT_TRUE(blocks >= 1 && blocks * 256 <= prop.maxThreadsPerMultiProcessor);
  int heavyBlocks = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&heavyBlocks, sharedHeavy, 256, 0));
  EXPECT_TRUE(heavyBlocks >= 1);
  EXPECT_TRUE(heavyBlocks * 8192 * sizeof(float) <= prop.sharedMemPerMultiprocessor);
  EXPECT_TRUE(heavyBlocks <= blocks);

  int minGrid = 0, blockSize = 0;
  CHECK_CUDA(cudaOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, light, 0, 0));
  EXPECT_TRUE(blockSize > 0 && blockSize <= 1024 && blockSize % 32 == 0);
  EXPECT_TRUE(minGrid >= prop.multiProcessorCount);
  CHECK_CUDA(cudaOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, bounded, 0, 0));
  EXPECT_TRUE(blockSize > 0 && blockSize <= 128);

  size_t dynamicSmem = 0;
  CHECK_CUDA(cudaOccupancyAvailableDynamicSMemPerBlock(&dynamicSmem, light, 1, 256));
  EXPECT_TRUE(dynamicSmem > 0);

  // A launch at the suggested size works.
  float* p;
  CHECK_CUDA(cudaMalloc(&p, 1024 * sizeof(float)));
  light<<<1, blockSize>>>(p);
  CHECK_CUDA(cudaDeviceSynchronize());
  // More threads than the launch bounds allow is refused.
  bounded<<<1, 256>>>(p);
  EXPECT_TRUE(cudaGetLastError() != cudaSuccess);
  CHECK_CUDA(cudaFree(p));
  return corpus::pass();
}
