// Issue 24 item: a device-side (CDP) launch whose block shape contradicts the child's .reqntid, or exceeds its
// .maxntid. What does the parent's launch return (cudaGetLastError right after it), does the child run, and what
// do the host's synchronisation and a later launch answer? One case per process (a sticky error would spill).
//   nvcc -arch=sm_90 -rdc=true cdp24.cu -lcudadevrt -o cdp24 && for c in 0 1 2 3 4 5; do ./cdp24 $c; done
// Cases: 0 .reqntid 64 child with 32 threads, 1 with 64, 2 .maxntid 64 child with 128, 3 with 64, 4 .reqntid 64
// child with 128 threads, 5 .reqntid 64 child with a 32x2 block.
#include <cstdio>
#include <cstdlib>

__global__ void __block_size__((64, 1, 1)) requiredShape(int* p) { atomicAdd(p, 1); }
__global__ void __launch_bounds__(64) boundedShape(int* p) { atomicAdd(p, 1); }

__global__ void parent(int* p, int which, int block, int blockY) {
  if (which == 0)
    requiredShape<<<1, dim3(block, blockY)>>>(p);
  else
    boundedShape<<<1, dim3(block, blockY)>>>(p);
  p[1] = int(cudaGetLastError());
  p[2] = int(cudaPeekAtLastError());
}

__global__ void plain(int* p) { p[3] = 7; }

int main(int argc, char** argv) {
  int c = argc > 1 ? std::atoi(argv[1]) : 0;
  int which = c < 4 ? c / 2 : 0, block = (c % 2) ? 64 : (which == 0 ? 32 : 128), blockY = 1;
  if (c == 4) block = 128;
  if (c == 5) block = 32, blockY = 2;
  int* p = nullptr;
  cudaMalloc(&p, 16);
  cudaMemset(p, 0, 16);
  parent<<<1, 1>>>(p, which, block, blockY);
  cudaError_t launched = cudaGetLastError();
  cudaError_t synced = cudaDeviceSynchronize();
  int h[4] = {-1, -1, -1, -1};
  cudaError_t copied = cudaMemcpy(h, p, 16, cudaMemcpyDeviceToHost);
  plain<<<1, 1>>>(p);
  cudaError_t later = cudaDeviceSynchronize();
  int h3 = -1;
  cudaMemcpy(&h3, p + 3, 4, cudaMemcpyDeviceToHost);
  std::printf("case %d: %s child, block %dx%d: host launch %d, sync %d (%s), copy %d; child ran %d times; in parent "
              "cudaGetLastError %d (%s), cudaPeekAtLastError %d; later launch sync %d, wrote %d\n",
              c, which == 0 ? ".reqntid 64" : ".maxntid 64", block, blockY, int(launched), int(synced),
              cudaGetErrorName(synced), int(copied), h[0], h[1], cudaGetErrorName(cudaError_t(h[1])), h[2],
              int(later), h3);
  return 0;
}
