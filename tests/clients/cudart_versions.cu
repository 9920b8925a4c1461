// One program built once (PTX for compute_90, shared cudart), run against every CUDA 13 runtime PyPI has
// (tests/clients/run.sh downloads each nvidia-cuda-runtime 13.x wheel): each cudart starts on cuemu's driver, runs a
// kernel on a stream, copies back, and captures and launches a graph. New runtimes call into the driver's private
// export tables in new ways (cudart 13.2 calls slot 12 of the runtime interface table at its first call).
#include <cstdio>
__global__ void k(int* p) { p[threadIdx.x] = threadIdx.x * 3; }
int main() {
  int n = -1, v = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  cudaRuntimeGetVersion(&v);
  if (e != cudaSuccess) { printf("runtime %d: cudaGetDeviceCount: %s\n", v, cudaGetErrorString(e)); return 1; }
  int* d; cudaMalloc(&d, 128);
  cudaStream_t s; cudaStreamCreate(&s);
  k<<<1, 32, 0, s>>>(d);
  int h[32]; cudaMemcpyAsync(h, d, 128, cudaMemcpyDeviceToHost, s);
  e = cudaStreamSynchronize(s);
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); k<<<1, 32, 0, s>>>(d); cudaStreamEndCapture(s, &g);
  cudaError_t ge1 = cudaGraphInstantiate(&ge, g, 0); cudaError_t ge2 = cudaGraphLaunch(ge, s); cudaStreamSynchronize(s);
  printf("runtime %d: devices %d, kernel %s, h[31]=%d, graph %s/%s\n", v, n, cudaGetErrorString(e), h[31], cudaGetErrorString(ge1), cudaGetErrorString(ge2));
  return h[31] == 93 && ge1 == cudaSuccess && ge2 == cudaSuccess ? 0 : 1;
}
