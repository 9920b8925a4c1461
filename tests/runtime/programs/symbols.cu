// __device__ and __constant__ variables: cudaMemcpyToSymbol/FromSymbol, cudaGetSymbolAddress/Size, and kernels
// reading and writing them.
#include "check.h"

__device__ int counter;
__device__ float table[64];
__constant__ float coefficients[16];
__constant__ int scale = 3;  // initialised in the image

__global__ void useSymbols(float* out) {
  int i = threadIdx.x;
  out[i] = table[i] * coefficients[i % 16] * scale;
  atomicAdd(&counter, 1);
}

int main() {
  CORPUS_PROGRAM("symbols");
  float hostTable[64], hostCoefficients[16];
  for (int i = 0; i < 64; ++i) hostTable[i] = static_cast<float>(i);
  for (int i = 0; i < 16; ++i) hostCoefficients[i] = static_cast<float>(i + 1);
  int zero = 0;
  CHECK_CUDA(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
  CHECK_CUDA(cudaMemcpyToSymbol(table, hostTable, sizeof hostTable));
  CHECK_CUDA(cudaMemcpyToSymbol(coefficients, hostCoefficients, sizeof hostCoefficients));
  int hostScale = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&hostScale, scale, sizeof hostScale));
  EXPECT_EQ_INT(hostScale, 3);

  size_t size = 0;
  CHECK_CUDA(cudaGetSymbolSize(&size, table));
  EXPECT_EQ_INT(size, sizeof hostTable);
  float* tableAddress = nullptr;
  CHECK_CUDA(cudaGetSymbolAddress(reinterpret_cast<void**>(&tableAddress), table));
  EXPECT_TRUE(tableAddress != nullptr);

  float* out;
  CHECK_CUDA(cudaMalloc(&out, 64 * sizeof(float)));
  useSymbols<<<1, 64>>>(out);
  CHECK_CUDA(cudaGetLastError());
  useSymbols<<<1, 64>>>(out);
  float result[64];
  CHECK_CUDA(cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i)
    if (result[i] != hostTable[i] * hostCoefficients[i % 16] * 3) corpus::fail("wrong product", __FILE__, __LINE__);
  int hostCounter = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&hostCounter, counter, sizeof hostCounter));
  EXPECT_EQ_INT(hostCounter, 128);

  // Writing through the symbol's address is the same memory.
  float seven = 7.0f;
  CHECK_CUDA(cudaMemcpy(tableAddress + 5, &seven, sizeof seven, cudaMemcpyHostToDevice));
  float back = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&back, table, sizeof back, 5 * sizeof(float)));
  EXPECT_TRUE(back == 7.0f);
  CHECK_CUDA(cudaFree(out));
  return corpus::pass();
}
