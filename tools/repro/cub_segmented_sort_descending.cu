// Fixed 2026-11-28 (commit "Front end: an inner block's plainly declared register hides the outer range's register"):
// the kernels' inline `{ .reg .pred %p1; ... bar.red.and.pred ...; }` blocks (__syncthreads_and) wrote the outer %p1.
// Kept as a check against the GPU; what follows is how it was found.
// An open cuemu bug, found by ggml's test-backend-ops (TOP_K, 2026-11-28): cub::DeviceSegmentedSort::SortPairsDescending
// of segments longer than about 4,000 keys (CUB 3.0's DeviceSegmentedSortFallbackKernel and ...KernelLarge, the
// descending instantiations) gives wrong orders on cuemu, on every profile and with `--rewrites none`; the same
// program is right on an H200 (SASS and PTX JIT), and on cuemu ascending sorts, shorter segments,
// cub::DeviceRadixSort::SortPairsDescending and cub::BlockRadixSort::SortDescending are right. `cuemu run --tool
// initcheck` reports 453 reads of uninitialised global memory in the descending fallback kernel (none ascending);
// memcheck, racecheck and synccheck report nothing.
//   nvcc -gencode arch=compute_90,code=compute_90 -o segsort tools/repro/cub_segmented_sort_descending.cu
//   build/emu/cuemu run -- ./segsort 8203 2 1      # NCOLS NROWS DESCENDING: "0 wrong" on the H200
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <random>
int main(int argc, char** argv) {
  int ncols = argc > 1 ? atoi(argv[1]) : 8203, nrows = argc > 2 ? atoi(argv[2]) : 2, desc = argc > 3 ? atoi(argv[3]) : 1;
  int n = ncols * nrows;
  std::vector<float> keys(n); std::vector<int> idx(n), offs(nrows + 1);
  std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < n; ++i) { keys[i] = u(rng); idx[i] = i % ncols; }
  for (int r = 0; r <= nrows; ++r) offs[r] = r * ncols;
  float *dk, *dko; int *dv, *dvo, *doff;
  cudaMalloc(&dk, n * 4); cudaMalloc(&dko, n * 4); cudaMalloc(&dv, n * 4); cudaMalloc(&dvo, n * 4); cudaMalloc(&doff, (nrows + 1) * 4);
  cudaMemcpy(dk, keys.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(dv, idx.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(doff, offs.data(), (nrows + 1) * 4, cudaMemcpyHostToDevice);
  size_t tb = 0; void* tmp = nullptr;
  if (desc) cub::DeviceSegmentedSort::SortPairsDescending(tmp, tb, dk, dko, dv, dvo, n, nrows, doff, doff + 1);
  else cub::DeviceSegmentedSort::SortPairs(tmp, tb, dk, dko, dv, dvo, n, nrows, doff, doff + 1);
  cudaMalloc(&tmp, tb);
  cudaError_t e = desc ? cub::DeviceSegmentedSort::SortPairsDescending(tmp, tb, dk, dko, dv, dvo, n, nrows, doff, doff + 1)
                       : cub::DeviceSegmentedSort::SortPairs(tmp, tb, dk, dko, dv, dvo, n, nrows, doff, doff + 1);
  cudaDeviceSynchronize();
  std::vector<float> ko(n); std::vector<int> vo(n);
  cudaMemcpy(ko.data(), dko, n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(vo.data(), dvo, n * 4, cudaMemcpyDeviceToHost);
  int bad = 0, firstBad = -1;
  for (int r = 0; r < nrows; ++r) {
    std::vector<float> ref(keys.begin() + r * ncols, keys.begin() + (r + 1) * ncols);
    if (desc) std::sort(ref.begin(), ref.end(), std::greater<float>()); else std::sort(ref.begin(), ref.end());
    for (int i = 0; i < ncols; ++i) {
      bool ok = ko[r * ncols + i] == ref[i] && keys[r * ncols + vo[r * ncols + i]] == ko[r * ncols + i];
      if (!ok) { if (firstBad < 0) firstBad = r * ncols + i; ++bad; }
    }
  }
  printf("err=%d ncols=%d nrows=%d desc=%d: %d wrong (first at %d)\n", (int)e, ncols, nrows, desc, bad, firstBad);
  return bad != 0;
}
