// Texture and surface object kernels for api.texture cases.
extern "C" __global__ void tex_fetch_linear(cudaTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

extern "C" __global__ void tex_2d_point(cudaTextureObject_t t, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

extern "C" __global__ void tex_2d_normalized_wrap(cudaTextureObject_t t, float* out, int w, int h) {
  int x = threadIdx.x;
  // Coordinates one full width to the right wrap around to the same texel.
  if (x < w) out[x] = tex2D<float>(t, (x + 0.5f) / w + 1.0f, 0.5f / h);
}

extern "C" __global__ void surf_write_2d(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(static_cast<float>(x * 100 + y), s, x * 4, y);
}
