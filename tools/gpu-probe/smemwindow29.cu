// Where shared memory sits in the generic address space, and where a kernel's dynamic shared memory starts in the
// shared window, on the machine's GPU. CUTLASS's CuTe swizzles generic pointers to shared memory (its cp.async
// copies XOR bits 4-9 of the generic address), so the generic address of a shared byte must agree with its shared
// address in those bits. Build and run: nvcc -arch=sm_90a smemwindow29.cu -o p && ./p
#include <cooperative_groups.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

namespace cg = cooperative_groups;

struct Record {
  unsigned long long generic;  // generic address of the first dynamic shared byte
  unsigned long long staticGeneric;
  unsigned long long peerGeneric;  // cluster kernels: the first dynamic byte of rank ^ 1, mapped (generic)
  uint32_t shared;                 // its shared-window address (cvta.to.shared)
  uint32_t staticShared;
  uint32_t peerCluster;  // mapa.shared::cluster of the first dynamic byte on rank ^ 1
  uint32_t reservedBegin, reservedEnd, reservedCap, totalSmem, aggrSmem, dynamicSmem, smid, rank;
};

__device__ uint32_t sharedAddress(const void* p) {
  uint32_t r;
  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}
#define SREG(name, var) asm volatile("mov.u32 %0, %%" name ";" : "=r"(var))

extern __shared__ __align__(16) unsigned char dynamicBytes[];

__device__ void fill(Record& r) {
  r.generic = reinterpret_cast<uintptr_t>(dynamicBytes);
  r.shared = sharedAddress(dynamicBytes);
  SREG("reserved_smem_offset_begin", r.reservedBegin);
  SREG("reserved_smem_offset_end", r.reservedEnd);
  SREG("reserved_smem_offset_cap", r.reservedCap);
  SREG("total_smem_size", r.totalSmem);
  SREG("aggr_smem_size", r.aggrSmem);
  SREG("dynamic_smem_size", r.dynamicSmem);
  SREG("smid", r.smid);
}

__global__ void dynamicOnly(Record* out) {
  if (threadIdx.x) return;
  Record r{};
  fill(r);
  out[blockIdx.x] = r;
}

template <int StaticBytes> __global__ void staticBytesAndDynamic(Record* out) {
  __shared__ __align__(4) unsigned char staticBytes[StaticBytes];
  staticBytes[threadIdx.x % StaticBytes] = 1;
  __syncthreads();
  if (threadIdx.x) return;
  Record r{};
  fill(r);
  r.staticGeneric = reinterpret_cast<uintptr_t>(staticBytes);
  r.staticShared = sharedAddress(staticBytes);
  out[blockIdx.x] = r;
}

__global__ void __cluster_dims__(2, 1, 1) clustered(Record* out) {
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  if (threadIdx.x == 0) {
    Record r{};
    fill(r);
    r.rank = cluster.block_rank();
    r.peerGeneric = reinterpret_cast<uintptr_t>(cluster.map_shared_rank(dynamicBytes, r.rank ^ 1));
    uint32_t peer;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer) : "r"(r.shared), "r"(r.rank ^ 1));
    r.peerCluster = peer;
    out[blockIdx.x] = r;
  }
  cluster.sync();
}

static int trailingZeros(unsigned long long v) { return v ? __builtin_ctzll(v) : 64; }

template <class Kernel> static void report(const char* name, Kernel kernel, int blocks, size_t dynamicBytes) {
  Record* d = nullptr;
  cudaMalloc(&d, blocks * sizeof(Record));
  cudaMemset(d, 0, blocks * sizeof(Record));
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamicBytes));
  kernel<<<blocks, 256, dynamicBytes>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<Record> h(blocks);
  cudaMemcpy(h.data(), d, blocks * sizeof(Record), cudaMemcpyDeviceToHost);
  cudaFree(d);
  std::printf("== %s: %d blocks, %zu dynamic bytes: %s\n", name, blocks, dynamicBytes, cudaGetErrorString(e));
  for (int b = 0; b < 3 && b < blocks; ++b) {
    const Record& r = h[b];
    std::printf("block %d sm %u rank %u: generic 0x%llx shared 0x%x | static generic 0x%llx shared 0x%x | reserved "
                "begin %u end %u cap %u | total_smem %u aggr_smem %u dynamic_smem %u | peer generic 0x%llx peer cluster "
                "0x%x\n",
                b, r.smid, r.rank, r.generic, r.shared, r.staticGeneric, r.staticShared, r.reservedBegin,
                r.reservedEnd, r.reservedCap, r.totalSmem, r.aggrSmem, r.dynamicSmem, r.peerGeneric, r.peerCluster);
  }
  std::set<unsigned long long> windows;
  int minZeros = 64;
  bool lowBitsAgree = true;
  for (const Record& r : h) {
    unsigned long long window = r.generic - r.shared;
    windows.insert(window);
    minZeros = std::min(minZeros, trailingZeros(window));
    if ((r.generic & 0xffffffffull) != r.shared) lowBitsAgree = false;
  }
  std::printf("window bases (generic - shared): %zu distinct, first 0x%llx, least trailing zeros %d; low 32 bits of "
              "generic == shared in every block: %s\n",
              windows.size(), *windows.begin(), minZeros, lowBitsAgree ? "yes" : "no");
}

int main() {
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  std::printf("device %s, cc %d.%d, %d SMs, reserved smem per block %zu\n", p.name, p.major, p.minor,
              p.multiProcessorCount, p.reservedSharedMemPerBlock);
  int blocks = 2 * p.multiProcessorCount;
  report("dynamic only", dynamicOnly, blocks, 4096);
  report("dynamic only, 200 KB", dynamicOnly, blocks, 200 * 1024);
  report("static 200 B and dynamic", staticBytesAndDynamic<200>, blocks, 4096);
  report("static 100 B and dynamic 100 B", staticBytesAndDynamic<100>, 4, 100);
  report("static 100 B and dynamic 0 B", staticBytesAndDynamic<100>, 4, 0);
  report("static 300 B and dynamic 4 B", staticBytesAndDynamic<300>, 4, 4);
  report("static 1000 B and dynamic 40 B", staticBytesAndDynamic<1000>, 4, 40);
  report("cluster of 2, dynamic", clustered, blocks, 4096);
  return 0;
}
