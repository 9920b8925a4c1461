// CUDA arrays: creation, descriptors, copies in and out.
#include "fixture.h"

#include "core/texture.h"

#include <memory>
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

}  // namespace
