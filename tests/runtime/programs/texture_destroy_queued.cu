// Texture and surface objects destroyed while a launch that uses them is still queued: the launch reads and
// writes them as they were when it was made (NVIDIA's NV12toBGRandResize sample destroys its objects right after
// launching). The kernel waits behind one that spins until the host has destroyed both objects.
#include "check.h"

constexpr int kWidth = 16, kHeight = 8;

__global__ void gate(volatile int* open, int* timedOut) {
  for (long long i = 0; !*open; ++i)
    if (i > (1ll << 34)) {
      *timedOut = 1;
      return;
    }
}

__global__ void copyThrough(cudaTextureObject_t tex, cudaSurfaceObject_t surf) {
  int x = threadIdx.x, y = blockIdx.x;
  float v = tex2D<float>(tex, x + 0.5f, y + 0.5f);
  surf2Dwrite(v * 2.0f, surf, x * int(sizeof(float)), y);
}

int main() {
  CORPUS_PROGRAM("texture_destroy_queued");
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t source, target;
  CHECK_CUDA(cudaMallocArray(&source, &format, kWidth, kHeight));
  CHECK_CUDA(cudaMallocArray(&target, &format, kWidth, kHeight, cudaArraySurfaceLoadStore));
  static float values[kHeight][kWidth], result[kHeight][kWidth];
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) values[y][x] = float(y * kWidth + x);
  CHECK_CUDA(cudaMemcpy2DToArray(source, 0, 0, values, sizeof values[0], sizeof values[0], kHeight,
                                 cudaMemcpyHostToDevice));

  cudaResourceDesc resource = {};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = source;
  cudaTextureDesc sampling = {};
  sampling.addressMode[0] = sampling.addressMode[1] = cudaAddressModeClamp;
  sampling.filterMode = cudaFilterModePoint;
  sampling.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  CHECK_CUDA(cudaCreateTextureObject(&tex, &resource, &sampling, nullptr));
  resource.res.array.array = target;
  cudaSurfaceObject_t surf;
  CHECK_CUDA(cudaCreateSurfaceObject(&surf, &resource));

  int* open;
  CHECK_CUDA(cudaHostAlloc(&open, 2 * sizeof(int), cudaHostAllocMapped));
  open[0] = open[1] = 0;
  int* openOnDevice;
  CHECK_CUDA(cudaHostGetDevicePointer(&openOnDevice, open, 0));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gate<<<1, 1, 0, stream>>>(openOnDevice, openOnDevice + 1);
  copyThrough<<<kHeight, kWidth, 0, stream>>>(tex, surf);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDestroyTextureObject(tex));
  CHECK_CUDA(cudaDestroySurfaceObject(surf));
  EXPECT_EQ_INT(cudaStreamQuery(stream), cudaErrorNotReady);
  __atomic_store_n(&open[0], 1, __ATOMIC_SEQ_CST);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ_INT(open[1], 0);
  CHECK_CUDA(cudaMemcpy2DFromArray(result, sizeof result[0], target, 0, 0, sizeof result[0], kHeight,
                                   cudaMemcpyDeviceToHost));
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      if (result[y][x] != 2.0f * values[y][x]) {
        std::printf("texel (%d, %d): %g, expected %g\n", x, y, result[y][x], 2.0f * values[y][x]);
        EXPECT_TRUE(!"the queued kernel did not see the destroyed objects");
      }
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFreeHost(open));
  CHECK_CUDA(cudaFreeArray(source));
  CHECK_CUDA(cudaFreeArray(target));
  return corpus::pass();
}
