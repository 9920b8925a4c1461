// Corpus source: texture and surface objects.
__global__ void tex_kernel(cudaTextureObject_t t1, cudaTextureObject_t t2, cudaTextureObject_t t3, float* out) {
    float x = threadIdx.x * 0.5f;
    float4 v = tex2D<float4>(t2, x, x + 1);
    out[threadIdx.x] = tex1D<float>(t1, x) + tex1Dfetch<float>(t1, threadIdx.x) + v.x + v.w +
                       tex3D<float>(t3, x, x, x) + tex2DLod<float>(t2, x, x, 1.0f) +
                       tex2DLayered<float>(t2, x, x, 2) + tex2Dgather<float4>(t2, x, x, 1).y;
}

__global__ void surf_kernel(cudaSurfaceObject_t s, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    float v;
    surf2Dread(&v, s, x * 4, y);
    surf2Dwrite(v * 2, s, x * 4, y);
    uchar4 c;
    surf1Dread(&c, s, x * 4, cudaBoundaryModeClamp);
    surf1Dwrite(c, s, x * 4, cudaBoundaryModeZero);
}
