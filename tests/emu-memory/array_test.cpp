// CUDA arrays: creation, descriptors, copies in and out.
#include "fixture.h"

#include "core/texture.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

TEST_F(MemoryTest, Array2DCopies) {
  CUDA_ARRAY_DESCRIPTOR desc{};
  desc.Width = 16;
  desc.Height = 4;
  desc.Format = CU_AD_FORMAT_FLOAT;
  desc.NumChannels = 2;
  CUarray array = nullptr;
  ASSERT_EQ(cuArrayCreate_v2(&array, &desc), CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR back{};
  ASSERT_EQ(cuArray3DGetDescriptor_v2(&back, array), CUDA_SUCCESS);
  EXPECT_EQ(back.Width, 16u);
  EXPECT_EQ(back.Height, 4u);
  EXPECT_EQ(back.Depth, 0u);
  EXPECT_EQ(back.NumChannels, 2u);

  const size_t rowBytes = 16 * 8;
  std::vector<float> in(16 * 2 * 4), out(in.size(), -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = in.data();
  c.srcPitch = rowBytes;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = array;
  c.WidthInBytes = rowBytes;
  c.Height = 4;
  ASSERT_EQ(cuMemcpy2D_v2(&c), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyAtoH_v2(out.data(), array, 0, in.size() * sizeof(float)), CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  // A sub-rectangle out of the array into device memory, and a copy leaving the array.
  CUdeviceptr d = 0;
  ASSERT_EQ(cuMemAlloc_v2(&d, 64), CUDA_SUCCESS);
  CUDA_MEMCPY2D sub{};
  sub.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  sub.srcArray = array;
  sub.srcXInBytes = 8;
  sub.srcY = 2;
  sub.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  sub.dstDevice = d;
  sub.dstPitch = 16;
  sub.WidthInBytes = 16;
  sub.Height = 2;
  ASSERT_EQ(cuMemcpy2D_v2(&sub), CUDA_SUCCESS);
  float first = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&first, d, 4), CUDA_SUCCESS);
  EXPECT_EQ(first, in[2 * 32 + 2]);
  sub.srcY = 3;
  EXPECT_EQ(cuMemcpy2D_v2(&sub), CUDA_ERROR_INVALID_VALUE);
  sub.srcY = 0;
  sub.srcXInBytes = 3;  // not a whole element
  EXPECT_EQ(cuMemcpy2D_v2(&sub), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoA_v2(array, rowBytes * 4 - 4, in.data(), 8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(MemoryTest, ArrayValidation) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  CUarray array = nullptr;
  d.Width = 8;
  d.Height = 8;
  d.Depth = 6;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.NumChannels = 3;
  EXPECT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_ERROR_INVALID_VALUE);  // 3 channels
  d.NumChannels = 4;
  d.Flags = CUDA_ARRAY3D_CUBEMAP;
  ASSERT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  d.Height = 4;  // cubemap faces must be square
  EXPECT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_ERROR_INVALID_VALUE);
  d.Width = 0;
  d.Flags = 0;
  EXPECT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(MemoryTest, MipmappedArrayLevels) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 64;
  d.Height = 16;
  d.Format = CU_AD_FORMAT_HALF;
  d.NumChannels = 1;
  CUmipmappedArray mip = nullptr;
  ASSERT_EQ(cuMipmappedArrayCreate(&mip, &d, 7), CUDA_SUCCESS);
  CUarray level = nullptr;
  ASSERT_EQ(cuMipmappedArrayGetLevel(&level, mip, 3), CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR back{};
  ASSERT_EQ(cuArray3DGetDescriptor_v2(&back, level), CUDA_SUCCESS);
  EXPECT_EQ(back.Width, 8u);
  EXPECT_EQ(back.Height, 2u);
  ASSERT_EQ(cuMipmappedArrayGetLevel(&level, mip, 6), CUDA_SUCCESS);
  ASSERT_EQ(cuArray3DGetDescriptor_v2(&back, level), CUDA_SUCCESS);
  EXPECT_EQ(back.Width, 1u);
  EXPECT_EQ(back.Height, 1u);
  EXPECT_EQ(cuMipmappedArrayGetLevel(&level, mip, 7), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuArrayDestroy(level), CUDA_ERROR_INVALID_VALUE);  // levels belong to the mipmapped array
  EXPECT_EQ(cuMipmappedArrayDestroy(mip), CUDA_SUCCESS);
  EXPECT_EQ(cuArray3DGetDescriptor_v2(&back, level), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuMipmappedArrayCreate(&mip, &d, 8), CUDA_ERROR_INVALID_VALUE);
}

// A launch queued before cuTexObjectDestroy / cuSurfObjectDestroy still reaches the objects through the view it
// holds (as on the GPU, where the queued kernel uses them); host calls, and launches queued after the destroy, see
// a stale handle at once; the objects go when the last view that needs them does.
TEST_F(MemoryTest, DestroyedTextureObjectsStayVisibleToEarlierLaunches) {
  CUDA_ARRAY_DESCRIPTOR desc{};
  desc.Width = 8;
  desc.Height = 2;
  desc.Format = CU_AD_FORMAT_FLOAT;
  desc.NumChannels = 1;
  CUarray array = nullptr;
  ASSERT_EQ(cuArrayCreate_v2(&array, &desc), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC resource{};
  resource.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.res.array.hArray = array;
  CUDA_TEXTURE_DESC sampling{};
  CUtexObject tex = 0;
  ASSERT_EQ(cuTexObjectCreate(&tex, &resource, &sampling, nullptr), CUDA_SUCCESS);
  CUsurfObject surf = 0;
  ASSERT_EQ(cuSurfObjectCreate(&surf, &resource), CUDA_SUCCESS);

  auto queuedBefore = std::make_unique<cuemu::TextureObjectsView>();
  ASSERT_EQ(cuTexObjectDestroy(tex), CUDA_SUCCESS);
  ASSERT_EQ(cuSurfObjectDestroy(surf), CUDA_SUCCESS);
  cuemu::TextureObjectsView queuedAfter;

  CUDA_RESOURCE_DESC back{};
  EXPECT_EQ(cuTexObjectGetResourceDesc(&back, tex), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuSurfObjectGetResourceDesc(&back, surf), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuTexObjectDestroy(tex), CUDA_ERROR_INVALID_VALUE);
  auto texture = queuedBefore->texture(tex);
  ASSERT_NE(texture, nullptr);
  EXPECT_EQ(texture->resource.res.array.hArray, array);
  EXPECT_NE(queuedBefore->surface(surf), nullptr);
  EXPECT_EQ(queuedAfter.texture(tex), nullptr);
  EXPECT_EQ(queuedAfter.surface(surf), nullptr);
  texture.reset();

  queuedBefore.reset();  // the last launch that could use them has run
  cuemu::TextureObjectsView later;
  EXPECT_EQ(later.texture(tex), nullptr);
  EXPECT_EQ(later.surface(surf), nullptr);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
}

// The texture fast path (2D and 2D-layered textures at float coordinates, core/texture.cpp sample2D) against the
// general sampling, bit for bit: float, 8-bit (normalised and read as integers) and 16-bit texels, 1, 2 and 4 channels,
// arrays and pitch-linear memory, point and linear filtering, every address mode, normalised and texel coordinates,
// border colours, layers, and coordinates at texel edges, far outside, huge, infinite and NaN.
TEST_F(MemoryTest, TextureFastPathSamplesAsTheGeneralPath) {
  std::mt19937 rng(1234);
  const unsigned width = 13, height = 7, layers = 3;
  int compared = 0;
  struct Format {
    CUarray_format format;
    unsigned bytes;
  };
  const Format formats[] = {
      {CU_AD_FORMAT_FLOAT, 4}, {CU_AD_FORMAT_UNSIGNED_INT8, 1}, {CU_AD_FORMAT_SIGNED_INT16, 2}, {CU_AD_FORMAT_HALF, 2}};
  for (const Format& f : formats)
    for (unsigned channels : {1u, 2u, 4u})
      for (bool layered : {false, true})
        for (bool pitch : {false, true}) {
          if (layered && pitch) continue;  // layers come from arrays only
          const unsigned rowBytes = width * channels * f.bytes;
          std::vector<uint8_t> texels(size_t(rowBytes) * height * layers);
          for (uint8_t& t : texels) t = uint8_t(rng());  // any bits: NaNs and infinities too
          CUarray array = nullptr;
          CUdeviceptr linear = 0;
          size_t pitchBytes = 0;
          CUDA_RESOURCE_DESC resource{};
          if (pitch) {
            ASSERT_EQ(cuMemAllocPitch_v2(&linear, &pitchBytes, rowBytes, height, 16), CUDA_SUCCESS);
            CUDA_MEMCPY2D copy{};
            copy.srcMemoryType = CU_MEMORYTYPE_HOST;
            copy.srcHost = texels.data();
            copy.srcPitch = rowBytes;
            copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
            copy.dstDevice = linear;
            copy.dstPitch = pitchBytes;
            copy.WidthInBytes = rowBytes;
            copy.Height = height;
            ASSERT_EQ(cuMemcpy2D_v2(&copy), CUDA_SUCCESS);
            resource.resType = CU_RESOURCE_TYPE_PITCH2D;
            resource.res.pitch2D.devPtr = linear;
            resource.res.pitch2D.format = f.format;
            resource.res.pitch2D.numChannels = channels;
            resource.res.pitch2D.width = width;
            resource.res.pitch2D.height = height;
            resource.res.pitch2D.pitchInBytes = pitchBytes;
          } else {
            CUDA_ARRAY3D_DESCRIPTOR desc{};
            desc.Width = width;
            desc.Height = height;
            desc.Depth = layered ? layers : 0;
            desc.Format = f.format;
            desc.NumChannels = channels;
            desc.Flags = layered ? CUDA_ARRAY3D_LAYERED : 0;
            ASSERT_EQ(cuArray3DCreate_v2(&array, &desc), CUDA_SUCCESS);
            CUDA_MEMCPY3D copy{};
            copy.srcMemoryType = CU_MEMORYTYPE_HOST;
            copy.srcHost = texels.data();
            copy.srcPitch = rowBytes;
            copy.srcHeight = height;
            copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
            copy.dstArray = array;
            copy.WidthInBytes = rowBytes;
            copy.Height = height;
            copy.Depth = layered ? layers : 1;
            ASSERT_EQ(cuMemcpy3D_v2(&copy), CUDA_SUCCESS);
            resource.resType = CU_RESOURCE_TYPE_ARRAY;
            resource.res.array.hArray = array;
          }
          for (CUfilter_mode filter : {CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR})
            for (CUaddress_mode mode : {CU_TR_ADDRESS_MODE_WRAP, CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_MIRROR,
                                        CU_TR_ADDRESS_MODE_BORDER})
              for (bool normalized : {false, true})
                for (ptx::exec::TexResult result : {ptx::exec::TexResult::F32, ptx::exec::TexResult::U32}) {
                  CUDA_TEXTURE_DESC sampling{};
                  sampling.addressMode[0] = sampling.addressMode[1] = mode;
                  sampling.filterMode = filter;
                  sampling.flags = normalized ? CU_TRSF_NORMALIZED_COORDINATES : 0;
                  sampling.borderColor[0] = 0.25f;
                  sampling.borderColor[3] = -3.5f;
                  CUtexObject tex = 0;
                  ASSERT_EQ(cuTexObjectCreate(&tex, &resource, &sampling, nullptr), CUDA_SUCCESS);
                  cuemu::TextureObjectsView view;
                  auto object = view.texture(tex);
                  ASSERT_NE(object, nullptr);
                  ptx::exec::TextureRequest request;
                  request.handle = tex;
                  request.geometry = layered ? ptx::exec::TexGeometry::A2D : ptx::exec::TexGeometry::D2;
                  request.result = result;
                  const float special[] = {0.0f,         -0.0f, 0.5f,   1.0f,
                                           12.5f,        13.0f, -1.0f,  -0.5f,
                                           6.999f,       1e20f, -1e20f, std::numeric_limits<float>::infinity(),
                                           std::nanf("")};
                  for (int i = 0; i < 400; ++i) {
                    float x, y;
                    if (i < 169) {
                      x = special[i % 13];
                      y = special[i / 13];
                    } else {
                      x = std::uniform_real_distribution<float>(-3.0f * width, 3.0f * width)(rng);
                      y = std::uniform_real_distribution<float>(-3.0f * height, 3.0f * height)(rng);
                    }
                    if (normalized) {
                      x /= float(width);
                      y /= float(height);
                    }
                    request.coords[0] = x;
                    request.coords[1] = y;
                    request.layer = int32_t(i % 5) - 1;  // below, inside and above the layers
                    uint32_t fast[4] = {}, general[4] = {};
                    std::string error;
                    cuemu::setTextureFastPath(true);
                    ASSERT_TRUE(object->fetch(request, fast, error)) << error;
                    cuemu::setTextureFastPath(false);
                    ASSERT_TRUE(object->fetch(request, general, error)) << error;
                    for (int ch = 0; ch < 4; ++ch)
                      EXPECT_EQ(fast[ch], general[ch])
                          << "format " << f.format << " result " << int(result) << " channels " << channels
                          << (layered ? " layered" : "") << (pitch ? " pitch" : " array") << " filter " << filter
                          << " mode " << mode << (normalized ? " normalized" : "") << " at (" << x << ", " << y
                          << ") layer " << request.layer << " channel " << ch;
                    ++compared;
                  }
                  object.reset();
                  ASSERT_EQ(cuTexObjectDestroy(tex), CUDA_SUCCESS);
                }
          if (array) {
            EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
          }
          if (linear) {
            EXPECT_EQ(cuMemFree_v2(linear), CUDA_SUCCESS);
          }
        }
  cuemu::setTextureFastPath(true);
  // formats x channels x (array, pitch, layered array) x filters x address modes x coordinates x results
  EXPECT_EQ(compared, 4 * 3 * 3 * 2 * 4 * 2 * 2 * 400);
}

}  // namespace
