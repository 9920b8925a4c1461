// CUDA dynamic parallelism: named device streams keep their order, an event orders two of them, and the device
// runtime's other calls (device, attributes, limits, memory, copies) answer from a kernel.
#include "check.h"

struct Results {
  int device;
  int smCount;
  int warpSize;
  unsigned long long heapLimit;
  int runtimeVersion;
  int errors[8];
  int stage[4];  // written by children in stream order
  int copied[4];
  int mallocWorked;
  int blockingStreamError;  // cudaStreamCreateWithFlags without cudaStreamNonBlocking
  int timedEventError;      // cudaEventCreateWithFlags without cudaEventDisableTiming
  int tooLargeBlockError;   // a launch of 2048 threads per block
};

__global__ void step(int* stage, int index) {
  // Each step checks that the step before it in the stream has run.
  stage[index] = (index == 0 || stage[index - 1] == index) ? index + 1 : -100;
}

__global__ void useMemory(int* out) {
  int* p = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&p), 4 * sizeof(int)) == cudaSuccess && p) {
    for (int i = 0; i < 4; ++i) p[i] = 7 * i;
    int sum = 0;
    for (int i = 0; i < 4; ++i) sum += p[i];
    *out = sum;
    cudaFree(p);
  }
}

__global__ void parent(Results* r) {
  cudaGetDevice(&r->device);
  cudaDeviceGetAttribute(&r->smCount, cudaDevAttrMultiProcessorCount, r->device);
  cudaDeviceGetAttribute(&r->warpSize, cudaDevAttrWarpSize, r->device);
  size_t heap = 0;
  cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
  r->heapLimit = heap;
  cudaRuntimeGetVersion(&r->runtimeVersion);

  cudaStream_t s1, s2;
  r->errors[0] = cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  r->errors[1] = cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  step<<<1, 1, 0, s1>>>(r->stage, 0);
  step<<<1, 1, 0, s1>>>(r->stage, 1);
  cudaEvent_t e;
  r->errors[2] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  r->errors[3] = cudaEventRecord(e, s1);
  r->errors[4] = cudaStreamWaitEvent(s2, e, 0);
  step<<<1, 1, 0, s2>>>(r->stage, 2);
  step<<<1, 1, 0, s2>>>(r->stage, 3);
  r->errors[5] = cudaGetLastError();
  // Copied after the steps of s2 have run: the stream orders the copy with them.
  r->errors[6] = cudaMemcpyAsync(r->copied, r->stage, sizeof r->copied, cudaMemcpyDeviceToDevice, s2);
  cudaEventDestroy(e);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaStream_t blocking;
  r->blockingStreamError = cudaStreamCreateWithFlags(&blocking, cudaStreamDefault);
  if (r->blockingStreamError == cudaSuccess) cudaStreamDestroy(blocking);
  cudaEvent_t timed;
  r->timedEventError = cudaEventCreateWithFlags(&timed, cudaEventDefault);
  if (r->timedEventError == cudaSuccess) cudaEventDestroy(timed);
  cudaGetLastError();
  step<<<1, 2048>>>(r->stage, 0);
  r->tooLargeBlockError = cudaGetLastError();
  useMemory<<<1, 1>>>(&r->mallocWorked);
  r->errors[7] = cudaGetLastError();
}

int main() {
  CORPUS_PROGRAM("cdp_device_stream");
  Results* r;
  CHECK_CUDA(cudaMalloc(&r, sizeof(Results)));
  CHECK_CUDA(cudaMemset(r, 0, sizeof(Results)));
  parent<<<1, 1>>>(r);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  Results h;
  CHECK_CUDA(cudaMemcpy(&h, r, sizeof h, cudaMemcpyDeviceToHost));
  int device = -1, sms = 0;
  size_t heap = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  std::printf("device %d, %d SMs, warp %d, heap %llu, runtime %d\n", h.device, h.smCount, h.warpSize, h.heapLimit,
              h.runtimeVersion);
  std::printf("stream without cudaStreamNonBlocking: %d; event without cudaEventDisableTiming: %d; 2048-thread "
              "block: %d\n", h.blockingStreamError, h.timedEventError, h.tooLargeBlockError);
  for (int k = 0; k < 8; ++k) EXPECT_EQ_INT(h.errors[k], 0);
  EXPECT_EQ_INT(h.device, device);
  EXPECT_EQ_INT(h.smCount, sms);
  EXPECT_EQ_INT(h.warpSize, 32);
  EXPECT_EQ_INT(h.heapLimit, heap);
  EXPECT_EQ_INT(h.runtimeVersion, 6000);  // the device runtime's own version (H100, CUDA 13.0)
  EXPECT_EQ_INT(h.blockingStreamError, cudaSuccess);
  EXPECT_EQ_INT(h.timedEventError, cudaErrorInvalidValue);
  EXPECT_EQ_INT(h.tooLargeBlockError, cudaErrorInvalidConfiguration);
  for (int k = 0; k < 4; ++k) EXPECT_EQ_INT(h.stage[k], k + 1);
  for (int k = 0; k < 4; ++k) EXPECT_EQ_INT(h.copied[k], k + 1);
  EXPECT_EQ_INT(h.mallocWorked, 42);
  CHECK_CUDA(cudaFree(r));
  return corpus::pass();
}
