extern __device__ int helper(int x);
extern __device__ int shared_counter;
__device__ int table[4] = {1,2,3,4};
__global__ void k(int* out, int n) { int i = threadIdx.x; if (i < n) { out[i] = helper(i) + table[i&3]; printf("i=%d\n", i); atomicAdd(&shared_counter, 1);} }
