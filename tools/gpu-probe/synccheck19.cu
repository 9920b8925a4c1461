// What an H100 does with named barriers whose thread counts differ between warps, and what warp-synchronous
// operations return when their masks leave out the executing lane or overlap (tools/gpu-probe, issue 19).
// Run natively and under `compute-sanitizer --tool synccheck`: ./synccheck19 VARIANT
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void counts(int* out, int variant) {
  unsigned warp = threadIdx.x / 32;
  if (variant == 1) {  // 128 threads: warp 0 says 64, warps 1-3 say 128
    if (warp == 0) asm volatile("bar.sync 1, 64;"); else asm volatile("bar.sync 1, 128;");
  } else if (variant == 2) {  // 64 threads: both warps say 96 (more than the block has)
    asm volatile("bar.sync 1, 96;");
  } else if (variant == 3) {  // 64 threads: warp 0 says 96, warp 1 says 64
    if (warp == 0) asm volatile("bar.sync 1, 96;"); else asm volatile("bar.sync 1, 64;");
  } else if (variant == 4) {  // 128 threads: warps 0-1 say 64, warps 2-3 say 128
    if (warp < 2) asm volatile("bar.sync 1, 64;"); else asm volatile("bar.sync 1, 128;");
  }
  out[threadIdx.x] = threadIdx.x;
}

__global__ void masks(int* out, int variant) {
  int lane = threadIdx.x % 32, v = 100 + lane, r = 0;
  if (variant == 5) r = __shfl_sync(0x0000ffffu, v, 20);                         // source outside the mask
  if (variant == 6) r = __shfl_sync(0x0000ffffu, v, 3);                          // lanes 16-31 not in their mask
  if (variant == 7) r = __shfl_sync(lane < 16 ? 0xffffffffu : 0xffff0000u, v, 20);  // overlapping masks
  if (variant == 8) r = __ballot_sync(0x0000ffffu, lane % 3 == 0);               // lanes 16-31 not in their mask
  if (variant == 9) r = __reduce_add_sync(lane < 16 ? 0xffffffffu : 0xffff0000u, v);
  if (variant == 10) r = __match_any_sync(lane < 16 ? 0xffffffffu : 0xffff0000u, lane / 8);
  if (variant == 11) { if (lane < 8) return; r = __shfl_sync(0xffffffffu, v, 2); }  // source exited
  if (variant == 12) { if (lane < 8) return; r = __all_sync(0xffffffffu, lane >= 0); }
  out[threadIdx.x] = r;
}

int main(int argc, char** argv) {
  int variant = argc > 1 ? std::atoi(argv[1]) : 1;
  int* out;
  cudaMalloc(&out, 128 * sizeof(int));
  cudaMemset(out, 0xff, 128 * sizeof(int));
  if (variant <= 4)
    counts<<<1, variant == 2 || variant == 3 ? 64 : 128>>>(out, variant);
  else
    masks<<<1, 32>>>(out, variant);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("variant %d: sync %s\n", variant, cudaGetErrorName(e));
  if (e == cudaSuccess && variant >= 5) {
    int host[32];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 32; ++i) std::printf("%s%x", i ? " " : "  ", host[i]);
    std::printf("\n");
  }
  return 0;
}
