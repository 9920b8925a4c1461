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

extern "C" __global__ void tex_2d_linear_shift(cudaTextureObject_t t, float* out, int w, int h, float dx) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f + dx, y + 0.5f);
}

extern "C" __global__ void tex_2d_float4(cudaTextureObject_t t, float4* out, int w, int h, float offset) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float4>(t, x + 0.5f + offset, y + 0.5f + offset);
}

extern "C" __global__ void tex_1d_layered(cudaTextureObject_t t, float* out, int w, int layers) {
  int x = threadIdx.x, layer = blockIdx.x;
  if (x < w && layer < layers) out[layer * w + x] = tex1DLayered<float>(t, x + 0.5f, layer);
}

extern "C" __global__ void tex_2d_gather(cudaTextureObject_t t, float4* out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2Dgather<float4>(t, x + 1.0f, y + 1.0f, 0);
}

extern "C" __global__ void surf_read_2d_modes(cudaSurfaceObject_t s, float* clamped, float* zeroed, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) {
    // One element to the left of each texel: the first column is outside the surface.
    clamped[y * w + x] = surf2Dread<float>(s, (x - 1) * 4, y, cudaBoundaryModeClamp);
    zeroed[y * w + x] = surf2Dread<float>(s, (x - 1) * 4, y, cudaBoundaryModeZero);
  }
}

extern "C" __global__ void tex_2d_layered(cudaTextureObject_t t, float* out, int w, int h, int layers) {
  int x = threadIdx.x, y = blockIdx.x, layer = blockIdx.y;
  if (x < w && y < h && layer < layers) out[(layer * h + y) * w + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, layer);
}

// One direction per thread: (x, y, z, layer).
extern "C" __global__ void tex_cubemap(cudaTextureObject_t t, const float4* dirs, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float>(t, dirs[i].x, dirs[i].y, dirs[i].z);
}

extern "C" __global__ void tex_cubemap_layered(cudaTextureObject_t t, const float4* dirs, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemapLayered<float>(t, dirs[i].x, dirs[i].y, dirs[i].z, static_cast<int>(dirs[i].w));
}
