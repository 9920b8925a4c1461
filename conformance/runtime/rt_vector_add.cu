// runtime.programs.rt_vector_add: allocation, copies, a __device__ symbol and a launch through the runtime API.
#include <cstdio>
#include <cstdlib>

__device__ int g_offset;

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + g_offset;
}

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorName(e));                  \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main() {
  const int n = 1 << 20;
  size_t bytes = n * sizeof(float);
  float *ha = (float*)std::malloc(bytes), *hb = (float*)std::malloc(bytes), *hc = (float*)std::malloc(bytes);
  for (int i = 0; i < n; ++i) ha[i] = i, hb[i] = 2.0f * i;
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
  int offset = 7;
  CHECK(cudaMemcpyToSymbol(g_offset, &offset, sizeof(offset)));
  add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (hc[i] != 3.0f * i + 7) ++bad;
  int back = 0;
  CHECK(cudaMemcpyFromSymbol(&back, g_offset, sizeof(back)));
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  std::printf("%s (%d wrong, symbol %d)\n", bad || back != 7 ? "FAIL" : "PASS", bad, back);
  return bad || back != 7;
}
