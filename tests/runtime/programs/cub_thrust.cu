// CUB and Thrust on a few million elements: sort, scan, reduce, histogram, checked against the host.
#include "check.h"

#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <numeric>
#include <vector>

int main() {
  CORPUS_PROGRAM("cub_thrust");
  const int n = 2 << 20;
  std::vector<unsigned int> host(n);
  unsigned int seed = 12345;
  for (auto& v : host) {
    seed = seed * 1664525u + 1013904223u;
    v = seed >> 8;
  }

  // Thrust: sort, inclusive scan, reduce.
  thrust::device_vector<unsigned int> d(host.begin(), host.end());
  thrust::sort(d.begin(), d.end());
  std::vector<unsigned int> sorted = host;
  std::sort(sorted.begin(), sorted.end());
  thrust::host_vector<unsigned int> back = d;
  EXPECT_TRUE(std::equal(sorted.begin(), sorted.end(), back.begin()));

  thrust::device_vector<unsigned long long> small(n);
  thrust::transform(d.begin(), d.end(), small.begin(), [] __device__(unsigned int x) { return x & 0xFFull; });
  thrust::inclusive_scan(small.begin(), small.end(), small.begin());
  unsigned long long expectedTotal = 0;
  for (unsigned int v : host) expectedTotal += v & 0xFF;
  unsigned long long lastScan = small.back();
  EXPECT_TRUE(lastScan == expectedTotal);
  unsigned long long reduced = thrust::reduce(d.begin(), d.end(), 0ull, thrust::plus<unsigned long long>());
  EXPECT_TRUE(reduced == std::accumulate(host.begin(), host.end(), 0ull));

  // CUB: device-wide radix sort of pairs, exclusive sum, histogram.
  unsigned int *keysIn, *keysOut, *valuesIn, *valuesOut;
  CHECK_CUDA(cudaMalloc(&keysIn, n * sizeof(unsigned int)));
  CHECK_CUDA(cudaMalloc(&keysOut, n * sizeof(unsigned int)));
  CHECK_CUDA(cudaMalloc(&valuesIn, n * sizeof(unsigned int)));
  CHECK_CUDA(cudaMalloc(&valuesOut, n * sizeof(unsigned int)));
  std::vector<unsigned int> indices(n);
  std::iota(indices.begin(), indices.end(), 0u);
  CHECK_CUDA(cudaMemcpy(keysIn, host.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(valuesIn, indices.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice));
  size_t tempBytes = 0;
  CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, keysIn, keysOut, valuesIn, valuesOut, n));
  void* temp;
  CHECK_CUDA(cudaMalloc(&temp, tempBytes));
  CHECK_CUDA(cub::DeviceRadixSort::SortPairs(temp, tempBytes, keysIn, keysOut, valuesIn, valuesOut, n));
  std::vector<unsigned int> keys(n), values(n);
  CHECK_CUDA(cudaMemcpy(keys.data(), keysOut, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(values.data(), valuesOut, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(keys == sorted);
  for (int i = 0; i < n; ++i)
    if (host[values[i]] != keys[i]) corpus::fail("radix sort pairs: value does not follow its key", __FILE__, __LINE__);
  CHECK_CUDA(cudaFree(temp));

  unsigned int* sums;
  CHECK_CUDA(cudaMalloc(&sums, n * sizeof(unsigned int)));
  tempBytes = 0;
  CHECK_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, valuesIn, sums, n));
  CHECK_CUDA(cudaMalloc(&temp, tempBytes));
  CHECK_CUDA(cub::DeviceScan::ExclusiveSum(temp, tempBytes, valuesIn, sums, n));
  std::vector<unsigned int> scanned(n);
  CHECK_CUDA(cudaMemcpy(scanned.data(), sums, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i += 4099)
    if (scanned[i] != static_cast<unsigned int>(static_cast<unsigned long long>(i) * (i - 1) / 2))
      corpus::fail("exclusive sum", __FILE__, __LINE__);
  CHECK_CUDA(cudaFree(temp));

  const int bins = 64;
  int* histogram;
  CHECK_CUDA(cudaMalloc(&histogram, bins * sizeof(int)));
  tempBytes = 0;
  const unsigned int upper = 1u << 24;  // values are below 2^24
  CHECK_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, tempBytes, keysIn, histogram, bins + 1, 0u, upper, n));
  CHECK_CUDA(cudaMalloc(&temp, tempBytes));
  CHECK_CUDA(cub::DeviceHistogram::HistogramEven(temp, tempBytes, keysIn, histogram, bins + 1, 0u, upper, n));
  std::vector<int> got(bins), expected(bins, 0);
  CHECK_CUDA(cudaMemcpy(got.data(), histogram, bins * sizeof(int), cudaMemcpyDeviceToHost));
  for (unsigned int v : host) expected[v / (upper / bins)]++;
  EXPECT_TRUE(got == expected);

  CHECK_CUDA(cudaFree(temp));
  CHECK_CUDA(cudaFree(histogram));
  CHECK_CUDA(cudaFree(sums));
  CHECK_CUDA(cudaFree(keysIn));
  CHECK_CUDA(cudaFree(keysOut));
  CHECK_CUDA(cudaFree(valuesIn));
  CHECK_CUDA(cudaFree(valuesOut));
  return corpus::pass();
}
