// Several devices: per-device contexts through cudaSetDevice, allocations and kernels on each, peer copies.
#include "check.h"

#include <vector>

__global__ void fill(int* p, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value + i;
}

// Runs on one device and reads another's memory directly (peer access).
__global__ void addPeer(int* mine, const int* peer, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mine[i] += peer[i];
}

int main() {
  CORPUS_PROGRAM("multi_device");
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  if (count < 2) corpus::skip("fewer than two devices");
  const int n = 1 << 16;
  std::vector<int*> buffers(count);
  for (int d = 0; d < count; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    int current = -1;
    CHECK_CUDA(cudaGetDevice(&current));
    EXPECT_EQ_INT(current, d);
    CHECK_CUDA(cudaMalloc(&buffers[d], n * sizeof(int)));
    fill<<<n / 256, 256>>>(buffers[d], n, 1000 * (d + 1));
    CHECK_CUDA(cudaGetLastError());
    cudaPointerAttributes attributes;
    CHECK_CUDA(cudaPointerGetAttributes(&attributes, buffers[d]));
    EXPECT_EQ_INT(attributes.device, d);
  }
  for (int d = 0; d < count; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::vector<int> host(n);
  for (int d = 0; d < count; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaMemcpy(host.data(), buffers[d], n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
      if (host[i] != 1000 * (d + 1) + i) corpus::fail("per-device data", __FILE__, __LINE__);
  }
  // Peer copy from device 1 to device 0, whether or not peer access is enabled.
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaMemcpyPeer(buffers[0], 0, buffers[1], 1, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(host.data(), buffers[0], n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (host[i] != 2000 + i) corpus::fail("peer copy", __FILE__, __LINE__);
  int canAccess = -1;
  CHECK_CUDA(cudaDeviceCanAccessPeer(&canAccess, 0, 1));
  EXPECT_TRUE(canAccess == 0 || canAccess == 1);
  if (canAccess) {
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0));
    EXPECT_TRUE(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    (void)cudaGetLastError();
    addPeer<<<n / 256, 256>>>(buffers[0], buffers[1], n);  // device 1 still holds 2000 + i
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(host.data(), buffers[0], n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
      if (host[i] != 2 * (2000 + i)) corpus::fail("kernel reading peer memory", __FILE__, __LINE__);
    CHECK_CUDA(cudaDeviceDisablePeerAccess(1));
    EXPECT_TRUE(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
    (void)cudaGetLastError();
  }
  // With unified addressing a plain cudaMemcpy infers both devices.
  CHECK_CUDA(cudaMemcpy(buffers[1], buffers[0], n * sizeof(int), cudaMemcpyDefault));
  // A device-to-device cudaMemcpy does not wait on the host; with per-thread default streams the next copy runs on
  // another stream, so wait for this one first.
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMemcpy(host.data(), buffers[1], n * sizeof(int), cudaMemcpyDeviceToHost));
  if (host[n - 1] != (canAccess ? 2 : 1) * (2000 + n - 1)) corpus::fail("copy between devices", __FILE__, __LINE__);
  for (int d = 0; d < count; ++d) {
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaFree(buffers[d]));
    CHECK_CUDA(cudaDeviceReset());
  }
  return corpus::pass();
}
