#include <cstdio>
__device__ int shared_counter;
static __device__ int scale = 3;
__device__ int helper(int x) { printf("helper %d\n", x); return x * scale; }
