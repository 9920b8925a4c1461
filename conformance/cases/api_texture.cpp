// api.texture: texture and surface objects over linear memory and arrays, read and written by kernels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
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
  // An array of w x h (x layers) texels of `channels` x `format`, filled from `host` (tightly packed rows).
  CUarray FilledArray(size_t w, size_t h, size_t depth, CUarray_format format, unsigned channels, const void* host,
                      size_t texelBytes, unsigned flags = 0) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = w;
    d.Height = h;
    d.Depth = depth;
    d.Format = format;
    d.NumChannels = channels;
    d.Flags = flags;
    CUarray a = nullptr;
    EXPECT_EQ(cuArray3DCreate(&a, &d), CUDA_SUCCESS);
    if (!a) return nullptr;
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = w * texelBytes;
    c.srcHeight = h ? h : 1;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = w * texelBytes;
    c.Height = h ? h : 1;
    c.Depth = depth ? depth : 1;
    EXPECT_EQ(cuMemcpy3D(&c), CUDA_SUCCESS);
    return a;
  }
  CUtexObject ArrayTexture(CUarray a, CUfilter_mode filter, CUaddress_mode mode, unsigned flags = 0,
                           const float* border = nullptr) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    CUDA_TEXTURE_DESC tex{};
    tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = mode;
    tex.filterMode = filter;
    tex.flags = flags;
    if (border)
      for (int i = 0; i < 4; ++i) tex.borderColor[i] = border[i];
    CUtexObject t = 0;
    EXPECT_EQ(cuTexObjectCreate(&t, &res, &tex, nullptr), CUDA_SUCCESS);
    return t;
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

// Texture objects over linear memory with the filter mode and flags a program may leave at any value: linear
// filtering (NVIDIA's convolutionFFT2D sample asks for it), normalised coordinates, integer reads. Recorded on the
// GPU: each creation's result and, where it succeeds, what tex1Dfetch reads inside and past the resource.
TEST_F(api_texture, LinearResourceFilterModes) {
  struct Form {
    CUarray_format format;
    unsigned elementBytes;
    CUfilter_mode filter;
    unsigned flags;
  };
  const Form forms[] = {
      {CU_AD_FORMAT_FLOAT, 4, CU_TR_FILTER_MODE_LINEAR, 0},
      {CU_AD_FORMAT_FLOAT, 4, CU_TR_FILTER_MODE_LINEAR, CU_TRSF_NORMALIZED_COORDINATES},
      {CU_AD_FORMAT_FLOAT, 4, CU_TR_FILTER_MODE_POINT, CU_TRSF_NORMALIZED_COORDINATES},
      {CU_AD_FORMAT_HALF, 2, CU_TR_FILTER_MODE_LINEAR, 0},
      {CU_AD_FORMAT_UNSIGNED_INT8, 1, CU_TR_FILTER_MODE_LINEAR, 0},
      {CU_AD_FORMAT_UNSIGNED_INT8, 1, CU_TR_FILTER_MODE_LINEAR, CU_TRSF_READ_AS_INTEGER},
      {CU_AD_FORMAT_SIGNED_INT32, 4, CU_TR_FILTER_MODE_LINEAR, 0},
      {CU_AD_FORMAT_SIGNED_INT32, 4, CU_TR_FILTER_MODE_LINEAR, CU_TRSF_READ_AS_INTEGER},
  };
  const int elements = 8, fetched = 12;  // the last four fetches are past the resource
  std::vector<uint8_t> bytes(16 * 4);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(0x3c + 37 * i);
  conf::DeviceBuffer src(bytes.size()), out(fetched * 4);
  CU_ASSERT_OK(cuMemcpyHtoD(src.ptr(), bytes.data(), bytes.size()));
  std::vector<uint64_t> outputs;
  for (const Form& f : forms) {
    CUDA_RESOURCE_DESC res{};
    res.resType = CU_RESOURCE_TYPE_LINEAR;
    res.res.linear.devPtr = src.ptr();
    res.res.linear.format = f.format;
    res.res.linear.numChannels = 1;
    res.res.linear.sizeInBytes = elements * f.elementBytes;
    CUDA_TEXTURE_DESC tex{};
    tex.filterMode = f.filter;
    tex.flags = f.flags;
    CUtexObject t = 0;
    CUresult created = cuTexObjectCreate(&t, &res, &tex, nullptr);
    outputs.push_back(created);
    if (created != CUDA_SUCCESS) continue;
    CU_ASSERT_OK(cuMemsetD8(out.ptr(), 0xee, fetched * 4));
    CUdeviceptr po = out.ptr();
    int n = fetched;
    void* params[] = {&t, &po, &n};
    CU_ASSERT_OK(conf::Launch1D(Fn("tex_fetch_linear"), 1, 32, params));
    std::vector<uint32_t> got(fetched);
    CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, fetched * 4));
    outputs.insert(outputs.end(), got.begin(), got.end());
    CU_EXPECT_OK(cuTexObjectDestroy(t));
  }
  const uint64_t hash = conf::Fnv(bytes.data(), bytes.size(), conf::Fnv(forms, sizeof forms));
  if (conf::GoldenRecord("texture_linear_resource_filter_modes", hash, outputs)) return;
  const conf::GoldenEntry* golden = conf::GoldenFor("texture_linear_resource_filter_modes", hash);
  if (!golden) return;
  EXPECT_EQ(outputs, golden->outputs) << "per form: cuTexObjectCreate's result, then the 12 words fetched";
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

// Linear filtering between texels, with the texture unit's 8-bit fractional weights: a shift of 0.3 texels
// weighs the right neighbour 77/256, not 0.3.
TEST_F(api_texture, Linear2DFilteringWeights) {
  const int w = 8, h = 2;
  std::vector<float> host(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = static_cast<float>((i % w) * 10);
  CUarray a = FilledArray(w, h, 0, CU_AD_FORMAT_FLOAT, 1, host.data(), 4);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_LINEAR, CU_TR_ADDRESS_MODE_CLAMP);
  conf::DeviceBuffer out(w * h * 4);
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h;
  float dx = 0.3f;
  void* params[] = {&t, &po, &ww, &hh, &dx};
  CU_ASSERT_OK(cuLaunchKernel(Fn("tex_2d_linear_shift"), h, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> got(w * h);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * 4));
  const float weight = 77.0f / 256.0f;  // round(0.3 * 256) / 256
  for (int x = 0; x < w; ++x) {
    float left = host[x], right = host[std::min(x + 1, w - 1)];
    EXPECT_NEAR(got[x], left + weight * (right - left), 1e-4f) << x;
  }
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// uchar4 texels read as normalised floats, and the border colour outside the texture.
TEST_F(api_texture, Uchar4NormalizedWithBorder) {
  const int w = 4, h = 4;
  std::vector<unsigned char> host(w * h * 4);
  for (int i = 0; i < w * h; ++i)
    for (int c = 0; c < 4; ++c) host[i * 4 + c] = static_cast<unsigned char>(i * 16 + c * 3);
  CUarray a = FilledArray(w, h, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, host.data(), 4);
  ASSERT_NE(a, nullptr);
  const float border[4] = {0.25f, 0.5f, 0.75f, 1.0f};
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_BORDER, 0, border);
  struct F4 {
    float x, y, z, w;
  };
  conf::DeviceBuffer out(w * h * sizeof(F4));
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h;
  for (float offset : {0.0f, 2.0f}) {
    void* params[] = {&t, &po, &ww, &hh, &offset};
    CU_ASSERT_OK(cuLaunchKernel(Fn("tex_2d_float4"), h, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
    CU_ASSERT_OK(cuCtxSynchronize());
    std::vector<F4> got(w * h);
    CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * sizeof(F4)));
    int shift = static_cast<int>(offset);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const F4& g = got[y * w + x];
        int sx = x + shift, sy = y + shift;
        if (sx >= w || sy >= h) {
          // The border colour comes back at the texel format's precision (measured on an H200).
          EXPECT_FLOAT_EQ(g.x, 64.0f / 255.0f) << x << "," << y;
          EXPECT_FLOAT_EQ(g.w, border[3]) << x << "," << y;
        } else {
          const unsigned char* texel = &host[(sy * w + sx) * 4];
          EXPECT_FLOAT_EQ(g.x, texel[0] / 255.0f) << x << "," << y;
          EXPECT_FLOAT_EQ(g.w, texel[3] / 255.0f) << x << "," << y;
        }
      }
    }
  }
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_texture, Layered1D) {
  const int w = 16, layers = 3;
  std::vector<float> host(w * layers);
  for (int i = 0; i < w * layers; ++i) host[i] = static_cast<float>(i) * 1.5f;
  CUarray a = FilledArray(w, 0, layers, CU_AD_FORMAT_FLOAT, 1, host.data(), 4, CUDA_ARRAY3D_LAYERED);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP);
  conf::DeviceBuffer out(w * layers * 4);
  CUdeviceptr po = out.ptr();
  int ww = w, ll = layers;
  void* params[] = {&t, &po, &ww, &ll};
  CU_ASSERT_OK(cuLaunchKernel(Fn("tex_1d_layered"), layers, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> got(w * layers);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * 4));
  EXPECT_EQ(got, host);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// tld4: the red components of the 2x2 footprint, in the order (i, j+1), (i+1, j+1), (i+1, j), (i, j).
TEST_F(api_texture, GatherRed) {
  const int w = 4, h = 4;
  std::vector<float> host(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = static_cast<float>(i);
  CUarray a = FilledArray(w, h, 0, CU_AD_FORMAT_FLOAT, 1, host.data(), 4);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP);
  struct F4 {
    float x, y, z, w;
  };
  conf::DeviceBuffer out(w * h * sizeof(F4));
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h;
  void* params[] = {&t, &po, &ww, &hh};
  CU_ASSERT_OK(cuLaunchKernel(Fn("tex_2d_gather"), h, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<F4> got(w * h);
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * sizeof(F4)));
  auto at = [&](int x, int y) { return host[std::clamp(y, 0, h - 1) * w + std::clamp(x, 0, w - 1)]; };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const F4& g = got[y * w + x];  // sampled at (x + 1, y + 1): footprint i = x, j = y
      EXPECT_EQ(g.x, at(x, y + 1)) << x << "," << y;
      EXPECT_EQ(g.y, at(x + 1, y + 1)) << x << "," << y;
      EXPECT_EQ(g.z, at(x + 1, y)) << x << "," << y;
      EXPECT_EQ(g.w, at(x, y)) << x << "," << y;
    }
  }
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_texture, SurfaceReadClampAndZero) {
  const int w = 8, h = 3;
  std::vector<float> host(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = static_cast<float>(i) + 0.5f;
  CUarray a = FilledArray(w, h, 0, CU_AD_FORMAT_FLOAT, 1, host.data(), 4, CUDA_ARRAY3D_SURFACE_LDST);
  ASSERT_NE(a, nullptr);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUsurfObject s = 0;
  CU_ASSERT_OK(cuSurfObjectCreate(&s, &res));
  conf::DeviceBuffer clamped(w * h * 4), zeroed(w * h * 4);
  CUdeviceptr pc = clamped.ptr(), pz = zeroed.ptr();
  int ww = w, hh = h;
  void* params[] = {&s, &pc, &pz, &ww, &hh};
  CU_ASSERT_OK(cuLaunchKernel(Fn("surf_read_2d_modes"), h, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> gotClamped(w * h), gotZeroed(w * h);
  CU_ASSERT_OK(cuMemcpyDtoH(gotClamped.data(), pc, gotClamped.size() * 4));
  CU_ASSERT_OK(cuMemcpyDtoH(gotZeroed.data(), pz, gotZeroed.size() * 4));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      float inside = host[y * w + std::max(x - 1, 0)];
      EXPECT_EQ(gotClamped[y * w + x], inside) << x << "," << y;
      EXPECT_EQ(gotZeroed[y * w + x], x == 0 ? 0.0f : inside) << x << "," << y;
    }
  }
  CU_EXPECT_OK(cuSurfObjectDestroy(s));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_texture, Layered2D) {
  const int w = 8, h = 4, layers = 3;
  std::vector<float> host(w * h * layers);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) + 0.25f;
  CUarray a = FilledArray(w, h, layers, CU_AD_FORMAT_FLOAT, 1, host.data(), 4, CUDA_ARRAY3D_LAYERED);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP);
  conf::DeviceBuffer out(host.size() * 4);
  CUdeviceptr po = out.ptr();
  int ww = w, hh = h, ll = layers;
  void* params[] = {&t, &po, &ww, &hh, &ll};
  CU_ASSERT_OK(cuLaunchKernel(Fn("tex_2d_layered"), h, layers, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<float> got(host.size());
  CU_ASSERT_OK(cuMemcpyDtoH(got.data(), po, got.size() * 4));
  EXPECT_EQ(got, host);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// ---- cubemaps ----------------------------------------------------------------------------------------------------

// The face and the face coordinates (s, t in [0, 1]) of a direction, as the programming guide's cubemap table
// gives them. Ties between axes are decided for z, then y, then x.
struct CubeLookup {
  int face;
  float s, t;
};
CubeLookup CubeFace(float x, float y, float z) {
  float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  float m, sc, tc;
  int face;
  if (az >= ax && az >= ay) {
    face = z >= 0 ? 4 : 5;
    m = az;
    sc = z >= 0 ? x : -x;
    tc = -y;
  } else if (ay >= ax) {
    face = y >= 0 ? 2 : 3;
    m = ay;
    sc = x;
    tc = y >= 0 ? z : -z;
  } else {
    face = x >= 0 ? 0 : 1;
    m = ax;
    sc = x >= 0 ? -z : z;
    tc = -y;
  }
  return {face, (sc / m + 1) / 2, (tc / m + 1) / 2};
}

// A direction pointing at face coordinates (s, t) of `face` (the inverse of the table).
void CubeDirection(int face, float s, float t, float dir[3]) {
  float sc = 2 * s - 1, tc = 2 * t - 1;
  switch (face) {
    case 0: dir[0] = 1, dir[1] = -tc, dir[2] = -sc; break;
    case 1: dir[0] = -1, dir[1] = -tc, dir[2] = sc; break;
    case 2: dir[0] = sc, dir[1] = 1, dir[2] = tc; break;
    case 3: dir[0] = sc, dir[1] = -1, dir[2] = -tc; break;
    case 4: dir[0] = sc, dir[1] = -tc, dir[2] = 1; break;
    default: dir[0] = -sc, dir[1] = -tc, dir[2] = -1; break;
  }
}

class api_texture_Cubemap : public api_texture {
 protected:
  static constexpr int kSize = 4;
  // Texel (x, y) of face f of layer l holds (l * 6 + f) * 100 + y * 10 + x.
  CUarray CubeArray(int layers) {
    std::vector<float> host(kSize * kSize * 6 * layers);
    for (int f = 0; f < 6 * layers; ++f)
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x) host[(f * kSize + y) * kSize + x] = static_cast<float>(f * 100 + y * 10 + x);
    unsigned flags = CUDA_ARRAY3D_CUBEMAP | (layers > 1 ? CUDA_ARRAY3D_LAYERED : 0);
    return FilledArray(kSize, kSize, 6 * layers, CU_AD_FORMAT_FLOAT, 1, host.data(), 4, flags);
  }
  // Fetches every direction (x, y, z, layer) with `kernel`.
  std::vector<float> Fetch(CUtexObject t, const char* kernel, const std::vector<float>& dirs) {
    int n = static_cast<int>(dirs.size() / 4);
    conf::DeviceBuffer in(dirs.size() * 4), out(n * 4);
    EXPECT_EQ(cuMemcpyHtoD(in.ptr(), dirs.data(), dirs.size() * 4), CUDA_SUCCESS);
    CUdeviceptr pi = in.ptr(), po = out.ptr();
    void* params[] = {&t, &pi, &po, &n};
    EXPECT_EQ(cuLaunchKernel(Fn(kernel), (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    std::vector<float> got(n);
    EXPECT_EQ(cuMemcpyDtoH(got.data(), po, n * 4), CUDA_SUCCESS);
    return got;
  }
  // Lists every direction whose result differs from `expected`.
  static std::string Differences(const std::vector<float>& dirs, const std::vector<float>& got,
                                 const std::vector<float>& expected) {
    std::string out;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != expected[i]) {
        char line[160];
        std::snprintf(line, sizeof line, "(%g,%g,%g,%g): got %g expected %g; ", dirs[4 * i], dirs[4 * i + 1],
                      dirs[4 * i + 2], dirs[4 * i + 3], got[i], expected[i]);
        out += line;
      }
    return out;
  }
};

// Point sampling: every texel of every face from a direction through its centre, directions scaled (only the
// direction counts), and directions on the edges and corners between faces (equal largest components).
TEST_F(api_texture_Cubemap, PointFacesAndTexels) {
  CUarray a = CubeArray(1);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP, CU_TRSF_NORMALIZED_COORDINATES);
  std::vector<float> dirs, expected;
  for (int f = 0; f < 6; ++f)
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x) {
        float d[3];
        CubeDirection(f, (x + 0.5f) / kSize, (y + 0.5f) / kSize, d);
        float scale = 1.0f + static_cast<float>((x + y) % 3);
        dirs.insert(dirs.end(), {d[0] * scale, d[1] * scale, d[2] * scale, 0});
        expected.push_back(static_cast<float>(f * 100 + y * 10 + x));
      }
  const float edges[][3] = {{1, 1, 0},  {1, -1, 0},  {-1, 1, 0},   {-1, -1, 0}, {1, 0, 1}, {-1, 0, 1},
                            {1, 0, -1}, {0, 1, 1},   {0, -1, 1},   {0, 1, -1},  {1, 1, 1}, {-1, -1, -1},
                            {1, -1, 1}, {-1, 1, -1}, {2, 2, 0.5f}, {0.5f, 2, 2}};
  for (const auto& e : edges) {
    dirs.insert(dirs.end(), {e[0], e[1], e[2], 0});
    CubeLookup l = CubeFace(e[0], e[1], e[2]);
    int x = std::min(static_cast<int>(l.s * kSize), kSize - 1), y = std::min(static_cast<int>(l.t * kSize), kSize - 1);
    expected.push_back(static_cast<float>(l.face * 100 + y * 10 + x));
  }
  std::vector<float> got = Fetch(t, "tex_cubemap", dirs);
  EXPECT_EQ(got, expected) << Differences(dirs, got, expected);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// Directions, not texel coordinates: without CU_TRSF_NORMALIZED_COORDINATES a cubemap fetch reads the same texels.
TEST_F(api_texture_Cubemap, PointWithoutNormalizedFlag) {
  CUarray a = CubeArray(1);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP, 0);
  std::vector<float> dirs, expected;
  for (int f = 0; f < 6; ++f)
    for (int k = 0; k < kSize; ++k) {
      int x = (k + 1) % kSize, y = k;
      float d[3];
      CubeDirection(f, (x + 0.5f) / kSize, (y + 0.5f) / kSize, d);
      dirs.insert(dirs.end(), {d[0], d[1], d[2], 0});
      expected.push_back(static_cast<float>(f * 100 + y * 10 + x));
    }
  std::vector<float> got = Fetch(t, "tex_cubemap", dirs);
  EXPECT_EQ(got, expected) << Differences(dirs, got, expected);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// A layered cubemap: layer l's faces are slices 6 l .. 6 l + 5.
TEST_F(api_texture_Cubemap, LayeredPoint) {
  CUarray a = CubeArray(2);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_POINT, CU_TR_ADDRESS_MODE_CLAMP, CU_TRSF_NORMALIZED_COORDINATES);
  std::vector<float> dirs, expected;
  for (int layer = 0; layer < 2; ++layer)
    for (int f = 0; f < 6; ++f)
      for (int k = 0; k < kSize; ++k) {
        int x = k, y = (k + f) % kSize;
        float d[3];
        CubeDirection(f, (x + 0.5f) / kSize, (y + 0.5f) / kSize, d);
        dirs.insert(dirs.end(), {d[0], d[1], d[2], static_cast<float>(layer)});
        expected.push_back(static_cast<float>((layer * 6 + f) * 100 + y * 10 + x));
      }
  std::vector<float> got = Fetch(t, "tex_cubemap_layered", dirs);
  EXPECT_EQ(got, expected) << Differences(dirs, got, expected);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// Linear filtering inside a face (away from its edges): the 2x2 footprint with 8-bit weights.
TEST_F(api_texture_Cubemap, LinearInsideAFace) {
  CUarray a = CubeArray(1);
  ASSERT_NE(a, nullptr);
  CUtexObject t = ArrayTexture(a, CU_TR_FILTER_MODE_LINEAR, CU_TR_ADDRESS_MODE_CLAMP, CU_TRSF_NORMALIZED_COORDINATES);
  std::vector<float> dirs, expected;
  const float offsets[][2] = {{1.25f, 1.5f}, {1.75f, 2.125f}, {2.5f, 1.0f}, {1.0f, 2.75f}};
  for (int f = 0; f < 6; ++f)
    for (const auto& o : offsets) {
      // Texel-space coordinates u, v (texel centres at k + 0.5).
      float u = o[0] + 0.5f, v = o[1] + 0.5f;
      float d[3];
      CubeDirection(f, u / kSize, v / kSize, d);
      dirs.insert(dirs.end(), {d[0], d[1], d[2], 0});
      float fu = u - 0.5f, fv = v - 0.5f;
      int i = static_cast<int>(std::floor(fu)), j = static_cast<int>(std::floor(fv));
      float wu = std::round((fu - i) * 256) / 256, wv = std::round((fv - j) * 256) / 256;
      auto texel = [&](int x, int y) { return static_cast<float>(f * 100 + y * 10 + x); };
      expected.push_back((1 - wu) * (1 - wv) * texel(i, j) + wu * (1 - wv) * texel(i + 1, j) +
                         (1 - wu) * wv * texel(i, j + 1) + wu * wv * texel(i + 1, j + 1));
    }
  std::vector<float> got = Fetch(t, "tex_cubemap", dirs);
  // Within 1/64 of a texel step: the order of the hardware's sums is not known.
  bool close = got.size() == expected.size();
  for (size_t i = 0; close && i < got.size(); ++i) close = std::fabs(got[i] - expected[i]) <= 0.02f;
  EXPECT_TRUE(close) << Differences(dirs, got, expected);
  CU_EXPECT_OK(cuTexObjectDestroy(t));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

}  // namespace
