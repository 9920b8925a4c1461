// api.texture: texture and surface objects over linear memory and arrays, read and written by kernels.
#include <vector>

#include "harness.h"

namespace {

class api_texture : public conf::ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "textures.ptx"));
  }
  CUfunction Fn(const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, mod, name), CUDA_SUCCESS) << name;
    return f;
  }
  CUarray FloatArray(size_t w, size_t h, unsigned flags = 0) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = w;
    d.Height = h;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    d.Flags = flags;
    CUarray a = nullptr;
    EXPECT_EQ(cuArray3DCreate(&a, &d), CUDA_SUCCESS);
    return a;
  }
  CUmodule mod = nullptr;
};

TEST_F(api_texture, LinearFetch) {
  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.25f * i;
  conf::DeviceBuffer src(n * 4), out(n * 4);
  CU_ASSERT_OK(cuMemcpyHtoD(src.ptr(), host.data(), n * 4));
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = src.ptr();
  res.res.linear.format = CU_AD_FORMAT_FLOAT;
  res.res.linear.numChannels = 1;
  res.res.linear.sizeInBytes = n * 4;
  CUDA_TEXTURE_DESC tex{};
  tex.filterMode = CU_TR_FILTER_MODE_POINT;
  CUtexObject t = 0;
  CU_ASSERT_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  CUdeviceptr po = out.ptr();
  int nn = n;
  void* params[] = {&t, &po, &nn};
  CU_ASSERT_OK(conf::Launch1D(Fn("tex_fetch_linear"), (n + 127) / 128, 128, params));
  std::vector<float> got(n);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, n * 4));
  EXPECT_EQ(got, host);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
}

TEST_F(api_texture, Array2DPoint) {
  const int w = 40, h = 12;
  CUarray a = FloatArray(w, h);
  ASSERT_NE(a, nullptr);
  std::vector<float> host(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = static_cast<float>(i) - 3.5f;
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = w * 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * 4;
  c.Height = h;
  CU_ASSERT_OK(cuMemcpy2D(&c));
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUDA_TEXTURE_DESC tex{};
  tex.addressMode[0] = tex.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  tex.filterMode = CU_TR_FILTER_MODE_POINT;
  CUtexObject t = 0;
  CU_ASSERT_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  conf::DeviceBuffer out(w * h * 4);
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h;
  void* params[] = {&t, &po, &ww, &hh};
  CU_ASSERT_OK(cuLaunchKernel(Fn("tex_2d_point"), 1, h, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> got(w * h);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * 4));
  EXPECT_EQ(got, host);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_texture, NormalizedWrap) {
  const int w = 16, h = 2;
  CUarray a = FloatArray(w, h);
  ASSERT_NE(a, nullptr);
  std::vector<float> host(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = static_cast<float>(i * i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = w * 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * 4;
  c.Height = h;
  CU_ASSERT_OK(cuMemcpy2D(&c));
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUDA_TEXTURE_DESC tex{};
  tex.addressMode[0] = tex.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
  tex.filterMode = CU_TR_FILTER_MODE_POINT;
  tex.flags = CU_TRSF_NORMALIZED_COORDINATES;
  CUtexObject t = 0;
  CU_ASSERT_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  conf::DeviceBuffer out(w * 4);
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h;
  void* params[] = {&t, &po, &ww, &hh};
  CU_ASSERT_OK(conf::Launch1D(Fn("tex_2d_normalized_wrap"), 1, 32, params));
  std::vector<float> got(w);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, w * 4));
  for (int x = 0; x < w; ++x) EXPECT_EQ(got[x], host[x]) << x;
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_texture, DescriptorsRoundTrip) {
  conf::DeviceBuffer src(4096);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = src.ptr();
  res.res.linear.format = CU_AD_FORMAT_SIGNED_INT32;
  res.res.linear.numChannels = 2;
  res.res.linear.sizeInBytes = 4096;
  CUDA_TEXTURE_DESC tex{};
  tex.filterMode = CU_TR_FILTER_MODE_POINT;
  tex.flags = CU_TRSF_READ_AS_INTEGER;
  CUtexObject t = 0;
  CU_ASSERT_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  CUDA_RESOURCE_DESC gotRes{};
  CU_EXPECT_OK(cuTexObjectGetResourceDesc(&gotRes, t));
  EXPECT_EQ(gotRes.resType, CU_RESOURCE_TYPE_LINEAR);
  EXPECT_EQ(gotRes.res.linear.devPtr, src.ptr());
  EXPECT_EQ(gotRes.res.linear.numChannels, 2u);
  CUDA_TEXTURE_DESC gotTex{};
  CU_EXPECT_OK(cuTexObjectGetTextureDesc(&gotTex, t));
  EXPECT_EQ(gotTex.filterMode, CU_TR_FILTER_MODE_POINT);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
}

TEST_F(api_texture, CreateNullResource) {
  CUDA_TEXTURE_DESC tex{};
  CUtexObject t;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, nullptr, &tex, nullptr));
}

TEST_F(api_texture, SurfaceWrite2D) {
  const int w = 24, h = 6;
  CUarray a = FloatArray(w, h, CUDA_ARRAY3D_SURFACE_LDST);
  ASSERT_NE(a, nullptr);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUsurfObject s = 0;
  CU_ASSERT_OK(cuSurfObjectCreate(&s, &res));
  int ww = w, hh = h;
  void* params[] = {&s, &ww, &hh};
  CU_ASSERT_OK(cuLaunchKernel(Fn("surf_write_2d"), 1, h, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> got(w * h);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c.srcArray = a;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = got.data();
  c.dstPitch = w * 4;
  c.WidthInBytes = w * 4;
  c.Height = h;
  CU_ASSERT_OK(cuMemcpy2D(&c));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) ASSERT_EQ(got[y * w + x], static_cast<float>(x * 100 + y)) << x << "," << y;
  CUDA_RESOURCE_DESC back{};
  CU_EXPECT_OK(cuSurfObjectGetResourceDesc(&back, s));
  EXPECT_EQ(back.res.array.hArray, a);
  CU_EXPECT_OK(cuSurfObjectDestroy(s));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// The documentation asks for CUDA_ARRAY3D_SURFACE_LDST, but driver 580 creates the surface object of an array
// without it (measured on an H200).
TEST_F(api_texture, SurfaceNeedsLoadStoreFlag) {
  CUarray a = FloatArray(8, 8);
  ASSERT_NE(a, nullptr);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUsurfObject s;
  CU_EXPECT_OK(cuSurfObjectCreate(&s, &res));
  CU_EXPECT_OK(cuSurfObjectDestroy(s));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

}  // namespace
