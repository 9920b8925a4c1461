// CUDA dynamic parallelism: a recursive quicksort. Each grid partitions its range with one thread and launches
// one child grid per half into device streams of its own; below a size or past a depth it sorts in place.
#include "check.h"

#include <algorithm>
#include <random>
#include <vector>

constexpr int kMaxDepth = 12;
constexpr int kSmall = 32;

__device__ void insertionSort(int* a, int lo, int hi) {
  for (int i = lo + 1; i < hi; ++i) {
    int v = a[i], j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
}

__device__ int deepest;

__global__ void quicksort(int* a, int lo, int hi, int depth) {
  atomicMax(&deepest, depth);
  if (hi - lo <= kSmall || depth >= kMaxDepth) {
    insertionSort(a, lo, hi);
    return;
  }
  // Lomuto partition around the middle element.
  int mid = lo + (hi - lo) / 2;
  int pivot = a[mid];
  a[mid] = a[hi - 1];
  a[hi - 1] = pivot;
  int store = lo;
  for (int i = lo; i < hi - 1; ++i) {
    if (a[i] < pivot) {
      int t = a[i];
      a[i] = a[store];
      a[store] = t;
      ++store;
    }
  }
  a[hi - 1] = a[store];
  a[store] = pivot;
  cudaStream_t left, right;
  cudaStreamCreateWithFlags(&left, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&right, cudaStreamNonBlocking);
  if (store - lo > 1) quicksort<<<1, 1, 0, left>>>(a, lo, store, depth + 1);
  if (hi - store - 1 > 1) quicksort<<<1, 1, 0, right>>>(a, store + 1, hi, depth + 1);
  if (cudaGetLastError() != cudaSuccess) a[lo] = -1;  // shows up as unsorted
  cudaStreamDestroy(left);
  cudaStreamDestroy(right);
}

int main() {
  CORPUS_PROGRAM("cdp_quicksort");
  const int n = 5000;
  std::mt19937 rng(17);
  std::vector<int> host(n);
  for (int& v : host) v = int(rng() % 100000);
  int* dev;
  CHECK_CUDA(cudaMalloc(&dev, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dev, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  quicksort<<<1, 1>>>(dev, 0, n, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<int> sorted(n);
  CHECK_CUDA(cudaMemcpy(sorted.data(), dev, n * sizeof(int), cudaMemcpyDeviceToHost));
  int deepest = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&deepest, ::deepest, sizeof deepest));
  std::sort(host.begin(), host.end());
  for (int i = 0; i < n; ++i) EXPECT_EQ_INT(sorted[i], host[i]);
  std::printf("sorted %d values, deepest grid at depth %d\n", n, deepest);
  EXPECT_TRUE(deepest >= 5);
  CHECK_CUDA(cudaFree(dev));
  return corpus::pass();
}
