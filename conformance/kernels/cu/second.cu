// A second module with a symbol of the same name as in vector.cu, to check that modules are separate namespaces.
__device__ int g_counter = 100;

extern "C" __global__ void vadd_f32(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + 1000.0f;
}

extern "C" __global__ void read_counter(int* out) { *out = g_counter; }
