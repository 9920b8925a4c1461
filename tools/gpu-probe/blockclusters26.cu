// What a kernel with __block_size__((64,1,1),(2,1,1)) (PTX `.blocksareclusters`, `.reqntid 64`,
// `.reqnctapercluster 2`) sees for different launch configurations on the GPU: the launch result, %nctaid.x,
// %nclusterid.x, %cluster_nctarank, blockDim.x, and how many CTAs ran. nvcc -arch=sm_90 blockclusters26.cu.
#include <cstdio>

__global__ void __block_size__((64, 1, 1), (2, 1, 1)) probe(unsigned* out) {
  unsigned nctaid, nclusterid, nctarank, ctarank;
  asm("mov.u32 %0, %%nctaid.x;" : "=r"(nctaid));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(nclusterid));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(nctarank));
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(ctarank));
  if (threadIdx.x == 0) atomicAdd(&out[0], 1u);  // CTAs that ran
  atomicAdd(&out[1], 1u);                        // threads that ran
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    out[2] = nctaid;
    out[3] = nclusterid;
    out[4] = nctarank;
    out[5] = blockDim.x;
    out[6] = gridDim.x;
  }
  if (threadIdx.x == 0 && blockIdx.x == 1) out[7] = ctarank;
}

int main() {
  unsigned* out;
  cudaMalloc(&out, 8 * sizeof(unsigned));
  const unsigned configs[][2] = {{1, 64}, {4, 64}, {4, 128}, {4, 32}, {3, 64}, {4, 1}, {2, 2}};
  for (const auto& c : configs) {
    cudaMemset(out, 0, 8 * sizeof(unsigned));
    probe<<<c[0], c[1]>>>(out);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    unsigned h[8] = {};
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("<<<%u, %u>>> launch=%d sync=%d ctas=%u threads=%u nctaid=%u nclusterid=%u nctarank=%u blockDim=%u "
                "gridDim=%u ctarank_of_block1=%u\n",
                c[0], c[1], int(launch), int(sync), h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
  }
  return 0;
}
