// CUDA dynamic parallelism: cudaGetErrorName / cudaGetErrorString called in a kernel give the same text as the
// host runtime's, and a failed device-side launch can be reported with printf("%s", ...) as NVIDIA's
// cdpAdvancedQuicksort sample does.
#include "check.h"

constexpr int kCodes[] = {0, 1, 2, 9, 98, 200, 209, 400, 700, 719, 801, 999};
constexpr int kCount = sizeof kCodes / sizeof kCodes[0];
constexpr int kSlot = 128;

__device__ void copyText(char* dst, const char* src) {
  int i = 0;
  for (; src && src[i] && i < kSlot - 1; ++i) dst[i] = src[i];
  dst[i] = 0;
}

__global__ void child() {}

__global__ void texts(const int* codes, char* names, char* strings, int* launchError) {
  int i = threadIdx.x;
  copyText(names + i * kSlot, cudaGetErrorName(cudaError_t(codes[i])));
  copyText(strings + i * kSlot, cudaGetErrorString(cudaError_t(codes[i])));
  if (i == 0) {
    child<<<1, 2048>>>();  // more threads than a block may have
    cudaError_t e = cudaGetLastError();
    *launchError = int(e);
    printf("device launch failed: %s (%s)\n", cudaGetErrorString(e), cudaGetErrorName(e));
  }
}

int main() {
  CORPUS_PROGRAM("cdp_error_string");
  int *codes, *launchError;
  char *names, *strings;
  CHECK_CUDA(cudaMalloc(&codes, sizeof kCodes));
  CHECK_CUDA(cudaMalloc(&launchError, sizeof(int)));
  CHECK_CUDA(cudaMalloc(&names, kCount * kSlot));
  CHECK_CUDA(cudaMalloc(&strings, kCount * kSlot));
  CHECK_CUDA(cudaMemcpy(codes, kCodes, sizeof kCodes, cudaMemcpyHostToDevice));
  texts<<<1, kCount>>>(codes, names, strings, launchError);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::fflush(stdout);
  static char hostNames[kCount][kSlot], hostStrings[kCount][kSlot];
  int e = -1;
  CHECK_CUDA(cudaMemcpy(hostNames, names, sizeof hostNames, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hostStrings, strings, sizeof hostStrings, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&e, launchError, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(e, cudaErrorInvalidConfiguration);
  for (int i = 0; i < kCount; ++i) {
    const char* name = cudaGetErrorName(cudaError_t(kCodes[i]));
    const char* text = cudaGetErrorString(cudaError_t(kCodes[i]));
    if (std::strcmp(hostNames[i], name) || std::strcmp(hostStrings[i], text)) {
      std::printf("code %d: device '%s' / '%s', host '%s' / '%s'\n", kCodes[i], hostNames[i], hostStrings[i], name,
                  text);
      EXPECT_TRUE(!"device and host texts differ");
    }
  }
  CHECK_CUDA(cudaFree(codes));
  CHECK_CUDA(cudaFree(launchError));
  CHECK_CUDA(cudaFree(names));
  CHECK_CUDA(cudaFree(strings));
  return corpus::pass();
}
