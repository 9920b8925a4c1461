// The same open cuemu bug as cub_segmented_sort_descending.cu, made smaller (2026-11-28): CUB's block-level agent
// AgentSegmentedRadixSort::ProcessIterative (Policy860's LargeSegmentPolicy) called for every 6-bit pass in a loop of
// one kernel, with the double buffer's pointers in a local array indexed by the pass, as DeviceSegmentedSortFallbackKernel
// does. On cuemu the second pass reads memory the first did not write (initcheck) and the order is wrong, or the
// kernel faults on an invalid generic address (ascending, 8203 keys); on an H200 every variant is right. Right on
// cuemu as well: one pass (`NCOLS DESC BIT 6`), two passes called one after the other with their pointers as
// parameters, with the pass width a run-time value, or with the pointers from a local array outside a loop.
// The same loop unrolled (`_Pragma("unroll")` over the one iteration that 2 passes run) is right, so the loop form
// matters, although with 2 passes its back edge is never taken. With 8203 keys the result depends on the warp order
// (`cuemu run --deterministic --seed N` gives other counts); with 4000 keys and 2 passes it is the same wrong result
// in every order (3929 of 4000 misplaced), also with `--rewrites none`. Racecheck and synccheck report nothing.
//   nvcc -gencode arch=compute_90,code=compute_90 -o passes tools/repro/cub_radix_passes_in_a_loop.cu
//   build/emu/cuemu run -- ./passes 4000 0 2 0     # N DESC PASSES 0: "0 wrong" on the H200
#include <cub/cub.cuh>
#include <cub/device/dispatch/tuning/tuning_segmented_sort.cuh>
#include <cstdio>
#include <vector>
#include <random>
#include <cstring>
#include <algorithm>
using Hub = cub::detail::segmented_sort::policy_hub<float, int>;
using LP = Hub::Policy860::LargeSegmentPolicy;
template <bool DESC>
__global__ void k(const float* in, const int* vin, float* out, int* vout, int n, int bit, int bits) {
  using Agent = cub::detail::radix_sort::AgentSegmentedRadixSort<DESC, LP, float, int, int>;
  __shared__ typename Agent::TempStorage ts;
  Agent a(n, ts);
  if (bits > 0) { a.ProcessIterative(bit, bits, in, vin, out, vout); return; }
  // all passes, as DeviceSegmentedSortFallbackKernel runs them: in -> out -> tmp -> out ...
  float* kb[2] = {out, const_cast<float*>(in) + n};
  int* vb[2] = {vout, const_cast<int*>(vin) + n};
  a.ProcessIterative(0, 6, in, vin, kb[0], vb[0]);
  int cur = 0;
  for (int b = 6; b < (bit ? 6 * bit : 32); b += 6) {
    __syncthreads();
    int pb = 32 - b < 6 ? 32 - b : 6;
    a.ProcessIterative(b, pb, kb[cur], vb[cur], kb[cur ^ 1], vb[cur ^ 1]);
    cur ^= 1;
  }
  if (threadIdx.x == 0) vout[n] = cur;
}
unsigned ordered(float f) { unsigned u; memcpy(&u, &f, 4); return (u & 0x80000000u) ? ~u : (u | 0x80000000u); }
int main(int argc, char** argv) {
  int n = atoi(argv[1]), desc = atoi(argv[2]), bit = argc > 3 ? atoi(argv[3]) : 0, bits = argc > 4 ? atoi(argv[4]) : 6;
  std::vector<float> h(n); std::vector<int> v(n); std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < n; ++i) { h[i] = u(rng); v[i] = i; }
  float *di, *dout; int *dvi, *dvo;
  cudaMalloc(&di, 2 * n * 4); cudaMalloc(&dout, 2 * n * 4); cudaMalloc(&dvi, 2 * n * 4); cudaMalloc(&dvo, 2 * n * 4 + 4);
  cudaMemcpy(di, h.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(dvi, v.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(dvo, 0xff, n * 4);
  if (desc) k<true><<<1, 256>>>(di, dvi, dout, dvo, n, bit, bits); else k<false><<<1, 256>>>(di, dvi, dout, dvo, n, bit, bits);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<int> vo(n);
  if (bits > 0) cudaMemcpy(vo.data(), dvo, n * 4, cudaMemcpyDeviceToHost);
  else { int cur; cudaMemcpy(&cur, dvo + n, 4, cudaMemcpyDeviceToHost); cudaMemcpy(vo.data(), cur ? dvi + n : dvo, n * 4, cudaMemcpyDeviceToHost); }
  // host: stable counting sort by digit (descending: digits high to low)
  std::vector<int> ref;
  if (bits > 0) { for (int pass = 0; pass < 64; ++pass) { int d = desc ? 63 - pass : pass;
    for (int i = 0; i < n; ++i) if (((ordered(h[i]) >> bit) & 63) == d) ref.push_back(i); } }
  else { int passes = bit ? bit : 6; unsigned long long m = passes * 6 >= 32 ? 0xffffffffull : ((1ull << (passes * 6)) - 1);
    ref = v; std::stable_sort(ref.begin(), ref.end(), [&](int a, int b) { unsigned x = ordered(h[a]) & m, y = ordered(h[b]) & m; return desc ? x > y : x < y; }); }
  int bad = 0, first = -1; for (int i = 0; i < n; ++i) if (vo[i] != ref[i]) { if (first < 0) first = i; ++bad; }
  if (bits > 0) { std::vector<float> ko(n); cudaMemcpy(ko.data(), dout, n * 4, cudaMemcpyDeviceToHost); int kbad = 0, kfirst = -1;
    for (int i = 0; i < n; ++i) if (memcmp(&ko[i], &h[ref[i]], 4)) { if (kfirst < 0) kfirst = i; ++kbad; }
    printf("keys: %d wrong (first %d)\n", kbad, kfirst); }
  printf("err=%d n=%d desc=%d bit=%d: %d wrong (first %d", (int)e, n, desc, bit, bad, first);
  if (first >= 0) printf(": got %d want %d", vo[first], ref[first]);
  printf(")\n");
}
