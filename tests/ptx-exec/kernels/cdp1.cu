// The same device-side launch built for CDP1 (CUDA_FORCE_CDP1_IF_SUPPORTED, regen.sh): the device runtime under
// its plain names (cudaGetParameterBufferV2, cudaLaunchDeviceV2, cudaGetLastError).
extern "C" __global__ void cdp1Child(int* out, int a) { out[a] = a; }

extern "C" __global__ void cdp1Parent(int* out, int* errors) {
  int t = threadIdx.x;
  cdp1Child<<<t + 1, 32>>>(out, t);
  errors[t] = cudaGetLastError();
}
