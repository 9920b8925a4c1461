// CUB: an inclusive scan of 4 Mi integers (10 times) and a radix sort of 1 Mi key-value pairs.
#include <cub/cub.cuh>
#include <vector>

#include "check.h"

int main() {
  const int n = 1 << 22, m = 1 << 20;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = int((i * 2654435761u) >> 28);
  int *in, *out;
  CHECK(cudaMalloc(&in, size_t(n) * 4));
  CHECK(cudaMalloc(&out, size_t(n) * 4));
  CHECK(cudaMemcpy(in, h.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
  size_t bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n));
  void* temp;
  CHECK(cudaMalloc(&temp, bytes));
  for (int i = 0; i < 10; ++i) CHECK(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n));
  std::vector<int> scan(n);
  CHECK(cudaMemcpy(scan.data(), out, size_t(n) * 4, cudaMemcpyDeviceToHost));
  bool ok = true;
  long long run = 0;
  for (int i = 0; i < n; ++i) {
    run += h[i];
    if (scan[i] != int(run)) {
      ok = false;
      break;
    }
  }
  std::vector<unsigned> keys(m), values(m);
  for (int i = 0; i < m; ++i) keys[i] = i * 2654435761u, values[i] = unsigned(i);
  unsigned *kin, *kout, *vin, *vout;
  CHECK(cudaMalloc(&kin, m * 4));
  CHECK(cudaMalloc(&kout, m * 4));
  CHECK(cudaMalloc(&vin, m * 4));
  CHECK(cudaMalloc(&vout, m * 4));
  CHECK(cudaMemcpy(kin, keys.data(), m * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(vin, values.data(), m * 4, cudaMemcpyHostToDevice));
  size_t sortBytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, kin, kout, vin, vout, m));
  void* sortTemp;
  CHECK(cudaMalloc(&sortTemp, sortBytes));
  CHECK(cub::DeviceRadixSort::SortPairs(sortTemp, sortBytes, kin, kout, vin, vout, m));
  std::vector<unsigned> sk(m), sv(m);
  CHECK(cudaMemcpy(sk.data(), kout, m * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sv.data(), vout, m * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < m && ok; ++i)
    if ((i && sk[i - 1] > sk[i]) || keys[sv[i]] != sk[i]) ok = false;
  for (void* p : {(void*)in, (void*)out, temp, (void*)kin, (void*)kout, (void*)vin, (void*)vout, sortTemp})
    CHECK(cudaFree(p));
  return verdict(ok, "cub_scan_sort");
}
