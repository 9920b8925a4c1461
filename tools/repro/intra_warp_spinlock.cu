// Threads of ONE warp that take a spin lock in turn, found by Taichi's own tests (its runtime's mutex_lock_i32):
// every thread swaps 1 into a lock word until it reads 0 back, adds to a counter and stores 0 into the lock. Since
// Volta each thread of a warp makes progress on its own (independent thread scheduling: the CUDA programming guide's
// starvation-free algorithms), so the winner leaves the loop and releases the lock while the others spin. Until
// 2026-11-29 cuemu ran a warp's divergent paths one at a time off a reconvergence stack, spinning on the losers'
// path while the winner waited at the loop's exit: the grid never ended. Now the waiting lanes go on as a group of
// their own when the path spins (ptx-interp/README.md, "Independent thread scheduling").
//   nvcc -gencode arch=compute_90,code=compute_90 -o spinlock tools/repro/intra_warp_spinlock.cu
//   ./spinlock 1 32                                   # "counter 32 (expected 32)"
//   (an H200 with driver 580.159.04, 2026-11-28: `1 32`, `8 128` and `64 1` all right; the PTX's loop is
//   atom.global.exch.b32 / setp.eq.s32 / @%p bra, the shape of Taichi's mutex_lock_i32)
//   build/emu/cuemu run --kernel-timeout 10 -- ./spinlock 1 32   # cuemu: the same
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

__device__ int lockWord;
__device__ volatile int counter;

__global__ void takeTheLockInTurn() {
  while (atomicExch(&lockWord, 1) == 1) {
  }
  __threadfence();
  counter = counter + 1;
  __threadfence();
  atomicExch(&lockWord, 0);
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? atoi(argv[1]) : 1, threads = argc > 2 ? atoi(argv[2]) : 32;
  int zero = 0;
  cudaMemcpyToSymbol(lockWord, &zero, sizeof zero);
  cudaMemcpyToSymbol(counter, &zero, sizeof zero);
  takeTheLockInTurn<<<blocks, threads>>>();
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("%s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
  }
  int got = 0;
  cudaMemcpyFromSymbol(&got, counter, sizeof got);
  printf("counter %d (expected %d)\n", got, blocks * threads);
  return got == blocks * threads ? 0 : 1;
}
