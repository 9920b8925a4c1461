// Fixed 2026-11-28 (commit "Front end: an inner block's plainly declared register hides the outer range's register"):
// the kernels' inline `{ .reg .pred %p1; ... bar.red.and.pred ...; }` blocks (__syncthreads_and) wrote the outer %p1.
// Kept as a check against the GPU; what follows is how it was found.
// An open cuemu bug (2026-11-28), the smallest repro so far of what ggml's TOP_K found
// (cub_segmented_sort_descending.cu): CUB's block-level agent AgentSegmentedRadixSort::ProcessIterative (Policy860's
// LargeSegmentPolicy: 256 threads, RADIX_RANK_MEMOIZE) called once for bits 0-5, then inside a loop for the next
// passes (`passes` = 2: the loop body runs once and its back edge is never taken). On cuemu the loop's pass faults:
// a rank read back from the digit counters (ld.shared.u16 + the thread's prefix) is far too large, and the
// exchange's st.shared lands out of range ("out-of-range shared address", PTX line ~11840 of the dumped module),
// deterministically, on every profile, with `--rewrites none`, CUDA_MODULE_LOADING=EAGER and 1 host thread, for
// 3000 to 8203 keys. On an H200 both passes are right. Right on cuemu as well: the same two calls without the loop
// (the second pass's bit position from a parameter or from memory), the loop unrolled, one pass alone.
//   nvcc -gencode arch=compute_90,code=compute_90 -o passes tools/repro/cub_radix_passes_in_a_loop.cu
//   build/emu/cuemu run -- ./passes 4000 6          # N BIT2: "pass1 0 wrong, pass2 0 wrong" on the H200
#include <cub/cub.cuh>
#include <cub/device/dispatch/tuning/tuning_segmented_sort.cuh>
#include <cstdio>
#include <vector>
#include <random>
#include <cstring>
#include <algorithm>
using Hub = cub::detail::segmented_sort::policy_hub<float, int>;
using LP = Hub::Policy860::LargeSegmentPolicy;
__global__ void k(const float* in, const int* vin, float* out, int* vout, float* out2, int* vout2, int n, int b2, int passes) {
  using Agent = cub::detail::radix_sort::AgentSegmentedRadixSort<false, LP, float, int, int>;
  __shared__ typename Agent::TempStorage ts;
  Agent a(n, ts);
  a.ProcessIterative(0, 6, in, vin, out, vout);
  for (int b = 6; b < 6 * passes; b += 6) {
    __syncthreads();
    a.ProcessIterative(b, 6, out, vout, out2, vout2);
  }
}
unsigned ordered(float f) { unsigned u; memcpy(&u, &f, 4); return (u & 0x80000000u) ? ~u : (u | 0x80000000u); }
int main(int argc, char** argv) {
  int n = atoi(argv[1]), b2 = atoi(argv[2]);
  std::vector<float> h(n); std::vector<int> v(n); std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < n; ++i) { h[i] = u(rng); v[i] = i; }
  float *di, *d1, *d2; int *dvi, *dv1, *dv2;
  cudaMalloc(&di, n * 4); cudaMalloc(&d1, n * 4); cudaMalloc(&d2, n * 4); cudaMalloc(&dvi, n * 4); cudaMalloc(&dv1, n * 4); cudaMalloc(&dv2, n * 4);
  cudaMemcpy(di, h.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(dvi, v.data(), n * 4, cudaMemcpyHostToDevice);
  k<<<1, 256>>>(di, dvi, d1, dv1, d2, dv2, n, b2, 2);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<int> o1(n), o2(n); cudaMemcpy(o1.data(), dv1, n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(o2.data(), dv2, n * 4, cudaMemcpyDeviceToHost);
  std::vector<int> r1 = v; std::stable_sort(r1.begin(), r1.end(), [&](int a, int b) { return (ordered(h[a]) & 63) < (ordered(h[b]) & 63); });
  std::vector<int> r2 = r1; std::stable_sort(r2.begin(), r2.end(), [&](int a, int b) { return ((ordered(h[a]) >> b2) & 63) < ((ordered(h[b]) >> b2) & 63); });
  int bad1 = 0, bad2 = 0; for (int i = 0; i < n; ++i) { bad1 += o1[i] != r1[i]; bad2 += o2[i] != r2[i]; }
  printf("err=%d n=%d b2=%d: pass1 %d wrong, pass2 %d wrong\n", (int)e, n, b2, bad1, bad2);
}
