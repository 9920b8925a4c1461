// Pinned, mapped and managed memory; memset; 2D copies; device-to-device copies; cudaMemGetInfo.
#include "check.h"

__global__ void increment(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

int main() {
  CORPUS_PROGRAM("memory_kinds");
  const int n = 1 << 16;

  // Managed memory: written by the host, incremented by a kernel, read by the host after synchronising.
  int* managed;
  CHECK_CUDA(cudaMallocManaged(&managed, n * sizeof(int)));
  for (int i = 0; i < n; ++i) managed[i] = i;
  increment<<<n / 256, 256>>>(managed, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i)
    if (managed[i] != i + 1) corpus::fail("managed memory", __FILE__, __LINE__);
  cudaPointerAttributes attributes;
  CHECK_CUDA(cudaPointerGetAttributes(&attributes, managed));
  EXPECT_TRUE(attributes.type == cudaMemoryTypeManaged);
  CHECK_CUDA(cudaFree(managed));

  // Mapped pinned memory: the kernel works on host memory through its device pointer.
  int* mapped;
  CHECK_CUDA(cudaHostAlloc(&mapped, n * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < n; ++i) mapped[i] = 2 * i;
  int* mappedDevice = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer(&mappedDevice, mapped, 0));
  increment<<<n / 256, 256>>>(mappedDevice, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i)
    if (mapped[i] != 2 * i + 1) corpus::fail("mapped memory", __FILE__, __LINE__);
  CHECK_CUDA(cudaPointerGetAttributes(&attributes, mapped));
  EXPECT_TRUE(attributes.type == cudaMemoryTypeHost);
  CHECK_CUDA(cudaFreeHost(mapped));

  // Pinned staging, memset, device-to-device copy.
  int *pinned, *a, *b;
  CHECK_CUDA(cudaMallocHost(&pinned, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(int)));
  CHECK_CUDA(cudaMemset(a, 0x01, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(b, a, n * sizeof(int), cudaMemcpyDeviceToDevice));
  increment<<<n / 256, 256>>>(b, n);
  CHECK_CUDA(cudaMemcpy(pinned, b, n * sizeof(int), cudaMemcpyDefault));
  for (int i = 0; i < n; ++i)
    if (pinned[i] != 0x01010101 + 1) corpus::fail("memset/copy", __FILE__, __LINE__);

  // A 2D copy of a 100x37 sub-rectangle through a pitched allocation.
  const int width = 100, height = 37;
  int* pitched;
  size_t pitch = 0;
  CHECK_CUDA(cudaMallocPitch(&pitched, &pitch, width * sizeof(int), height));
  EXPECT_TRUE(pitch >= width * sizeof(int));
  for (int i = 0; i < width * height; ++i) pinned[i] = i * 7;
  CHECK_CUDA(cudaMemcpy2D(pitched, pitch, pinned, width * sizeof(int), width * sizeof(int), height,
                          cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset2D(pitched, pitch, 0, 4 * sizeof(int), 2));  // zero a 4x2 corner
  for (int i = 0; i < width * height; ++i) pinned[i] = -1;
  CHECK_CUDA(cudaMemcpy2D(pinned, width * sizeof(int), pitched, pitch, width * sizeof(int), height,
                          cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      int expected = (y < 2 && x < 4) ? 0 : (y * width + x) * 7;
      if (pinned[y * width + x] != expected) corpus::fail("2D copy", __FILE__, __LINE__);
    }

  size_t freeBytes = 0, totalBytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  EXPECT_TRUE(totalBytes > 0 && freeBytes <= totalBytes);

  CHECK_CUDA(cudaFree(pitched));
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFreeHost(pinned));
  return corpus::pass();
}
