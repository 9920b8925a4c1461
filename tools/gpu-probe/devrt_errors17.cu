// Issue 17: what the device runtime's cudaGetErrorName / cudaGetErrorString answer in a kernel, for every code
// from -2 to 1100 and a few beyond, next to the host runtime's answers (cuemu's device runtime records the
// device's). Output: code TAB device name TAB device string TAB same-as-host (1/0).
//   nvcc -arch=sm_90 -rdc=true devrt_errors17.cu -lcudadevrt -o devrt_errors17 && ./devrt_errors17
#include <cstdio>
#include <cstring>
#include <vector>

constexpr int kFirst = -2, kLast = 1100, kExtra[] = {10000, 100000, 0x7fffffff};
constexpr int kSlot = 256;

__device__ void copyText(char* dst, const char* src) {
  int i = 0;
  if (!src) {
    const char* null = "(null)";
    for (; null[i]; ++i) dst[i] = null[i];
  } else {
    for (; src[i] && i < kSlot - 1; ++i) dst[i] = src[i];
  }
  dst[i] = 0;
}

__global__ void record(const int* codes, int n, char* names, char* texts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  copyText(names + size_t(i) * kSlot, cudaGetErrorName(cudaError_t(codes[i])));
  copyText(texts + size_t(i) * kSlot, cudaGetErrorString(cudaError_t(codes[i])));
}

int main() {
  std::vector<int> codes;
  for (int c = kFirst; c <= kLast; ++c) codes.push_back(c);
  for (int c : kExtra) codes.push_back(c);
  int n = int(codes.size());
  int* dCodes;
  char *dNames, *dTexts;
  cudaMalloc(&dCodes, n * sizeof(int));
  cudaMalloc(&dNames, size_t(n) * kSlot);
  cudaMalloc(&dTexts, size_t(n) * kSlot);
  cudaMemcpy(dCodes, codes.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  record<<<(n + 127) / 128, 128>>>(dCodes, n, dNames, dTexts);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("kernel: %s\n", cudaGetErrorName(e));
    return 1;
  }
  std::vector<char> names(size_t(n) * kSlot), texts(size_t(n) * kSlot);
  cudaMemcpy(names.data(), dNames, names.size(), cudaMemcpyDeviceToHost);
  cudaMemcpy(texts.data(), dTexts, texts.size(), cudaMemcpyDeviceToHost);
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    const char* dn = &names[size_t(i) * kSlot];
    const char* dt = &texts[size_t(i) * kSlot];
    bool same = !std::strcmp(dn, cudaGetErrorName(cudaError_t(codes[i]))) &&
                !std::strcmp(dt, cudaGetErrorString(cudaError_t(codes[i])));
    differ += !same;
    std::printf("%d\t%s\t%s\t%d\n", codes[i], dn, dt, int(same));
  }
  std::printf("# %d codes, %d differ from the host runtime\n", n, differ);
  return 0;
}
