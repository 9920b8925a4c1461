// The original 32-bit memory entry points (exported without the _v2 suffix, reached by name since cuda.h maps
// the names onto _v2), and the memory entry points of features a device may lack (dma-buf, decompression,
// planar and sparse arrays, budget notifications): each answers as the device's attributes say.
// The legacy forms were measured on an H200 (driver 580): they serve only a context made by the original
// cuCtxCreate (API version 3010) and answer CUDA_ERROR_INVALID_CONTEXT in any other.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

// The 32-bit ABI's types (NVIDIA's cuda.h declares them only for the driver's own build).
using CUdeviceptr_v1 = unsigned int;
struct CUDA_MEMCPY2D_v1 {
  unsigned int srcXInBytes, srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr_v1 srcDevice;
  CUarray srcArray;
  unsigned int srcPitch;
  unsigned int dstXInBytes, dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr_v1 dstDevice;
  CUarray dstArray;
  unsigned int dstPitch;
  unsigned int WidthInBytes, Height;
};
struct CUDA_ARRAY_DESCRIPTOR_v1 {
  unsigned int Width, Height;
  CUarray_format Format;
  unsigned int NumChannels;
};
struct CUDA_ARRAY3D_DESCRIPTOR_v1 {
  unsigned int Width, Height, Depth;
  CUarray_format Format;
  unsigned int NumChannels, Flags;
};

using MemAllocV1 = CUresult (*)(CUdeviceptr_v1*, unsigned);
using MemAllocPitchV1 = CUresult (*)(CUdeviceptr_v1*, unsigned*, unsigned, unsigned, unsigned);
using MemFreeV1 = CUresult (*)(CUdeviceptr_v1);
using MemGetInfoV1 = CUresult (*)(unsigned*, unsigned*);
using MemGetAddressRangeV1 = CUresult (*)(CUdeviceptr_v1*, unsigned*, CUdeviceptr_v1);
using MemcpyHtoDV1 = CUresult (*)(CUdeviceptr_v1, const void*, unsigned);
using MemcpyDtoHV1 = CUresult (*)(void*, CUdeviceptr_v1, unsigned);
using MemcpyDtoDV1 = CUresult (*)(CUdeviceptr_v1, CUdeviceptr_v1, unsigned);
using MemsetD32V1 = CUresult (*)(CUdeviceptr_v1, unsigned, unsigned);
using MemsetD2D8V1 = CUresult (*)(CUdeviceptr_v1, unsigned, unsigned char, unsigned, unsigned);
using Memcpy2DV1 = CUresult (*)(const CUDA_MEMCPY2D_v1*);
using ArrayCreateV1 = CUresult (*)(CUarray*, const CUDA_ARRAY_DESCRIPTOR_v1*);
using ArrayGetDescriptorV1 = CUresult (*)(CUDA_ARRAY_DESCRIPTOR_v1*, CUarray);
using Array3DCreateV1 = CUresult (*)(CUarray*, const CUDA_ARRAY3D_DESCRIPTOR_v1*);
using Array3DGetDescriptorV1 = CUresult (*)(CUDA_ARRAY3D_DESCRIPTOR_v1*, CUarray);
using MemcpyHtoAV1 = CUresult (*)(CUarray, unsigned, const void*, unsigned);
using MemcpyAtoHV1 = CUresult (*)(void*, CUarray, unsigned, unsigned);

using CtxCreateV1 = CUresult (*)(CUcontext*, unsigned, CUdevice);

// Runs each case in a context made by the original cuCtxCreate, the only kind the 32-bit entry points serve.
class api_memory_Legacy : public conf::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (HasFatalFailure()) return;
    auto create = Get<CtxCreateV1>("cuCtxCreate");
    ASSERT_TRUE(create);
    CU_ASSERT_OK(create(&ctx, 0, dev));
    unsigned version = 0;
    CU_EXPECT_OK(cuCtxGetApiVersion(ctx, &version));
    EXPECT_EQ(version, 3010u);
  }
  void TearDown() override {
    if (ctx) {
      CU_EXPECT_OK(cuCtxDestroy(ctx));
    }
  }
  template <class F> F Get(const char* name) {
    F f = conf::Symbol<F>(name);
    if (!f) ADD_FAILURE() << name << " is not exported";
    return f;
  }
  CUcontext ctx = nullptr;
};

TEST_F(api_memory_Legacy, AllocCopySetFree) {
  auto alloc = Get<MemAllocV1>("cuMemAlloc");
  auto free = Get<MemFreeV1>("cuMemFree");
  auto htod = Get<MemcpyHtoDV1>("cuMemcpyHtoD");
  auto dtoh = Get<MemcpyDtoHV1>("cuMemcpyDtoH");
  auto dtod = Get<MemcpyDtoDV1>("cuMemcpyDtoD");
  auto set32 = Get<MemsetD32V1>("cuMemsetD32");
  auto range = Get<MemGetAddressRangeV1>("cuMemGetAddressRange");
  ASSERT_TRUE(alloc && free && htod && dtoh && dtod && set32 && range);
  CUdeviceptr_v1 a = 0, b = 0;
  CU_ASSERT_OK(alloc(&a, 4096));
  CU_ASSERT_OK(alloc(&b, 4096));
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a % 256, 0u) << "allocations are at least 256-byte aligned";
  std::vector<unsigned> host(1024);
  for (unsigned i = 0; i < 1024; ++i) host[i] = i * 3;
  CU_EXPECT_OK(htod(a, host.data(), 4096));
  CU_EXPECT_OK(set32(a + 16, 77, 2));
  CU_EXPECT_OK(dtod(b, a, 4096));
  std::vector<unsigned> back(1024);
  CU_EXPECT_OK(dtoh(back.data(), b, 4096));
  EXPECT_EQ(back[0], 0u);
  EXPECT_EQ(back[4], 77u);
  EXPECT_EQ(back[5], 77u);
  EXPECT_EQ(back[6], 18u);
  EXPECT_EQ(back[1023], 3069u);
  // The 64-bit forms refuse this kind of context; unversioned entry points serve it.
  unsigned word = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuMemcpyDtoH(&word, CUdeviceptr(b) + 4092, 4));
  CUdeviceptr wide = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&wide, 4096));
  CU_EXPECT_OK(cuCtxSynchronize());
  CUdeviceptr_v1 base = 0;
  unsigned size = 0;
  CU_EXPECT_OK(range(&base, &size, a + 100));
  EXPECT_EQ(base, a);
  EXPECT_EQ(size, 4096u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, htod(a + 4000, host.data(), 200)) << "past the end of the allocation";
  CU_EXPECT_OK(free(a));
  CU_EXPECT_OK(free(b));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, free(a)) << "double free";
}

TEST_F(api_memory_Legacy, AllocErrors) {
  auto alloc = Get<MemAllocV1>("cuMemAlloc");
  ASSERT_TRUE(alloc);
  CUdeviceptr_v1 p = 1;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, alloc(&p, 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, alloc(nullptr, 16));
}

TEST_F(api_memory_Legacy, AllocPitchAnd2D) {
  auto pitchAlloc = Get<MemAllocPitchV1>("cuMemAllocPitch");
  auto free = Get<MemFreeV1>("cuMemFree");
  auto set2d = Get<MemsetD2D8V1>("cuMemsetD2D8");
  auto copy2d = Get<Memcpy2DV1>("cuMemcpy2D");
  ASSERT_TRUE(pitchAlloc && free && set2d && copy2d);
  CUdeviceptr_v1 p = 0;
  unsigned pitch = 0;
  CU_ASSERT_OK(pitchAlloc(&p, &pitch, 100, 8, 4));
  EXPECT_GE(pitch, 100u);
  CUdeviceptr_v1 unused = 0;
  unsigned unusedPitch = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, pitchAlloc(&unused, &unusedPitch, 100, 8, 3)) << "element size 4, 8 or 16";
  CU_EXPECT_OK(set2d(p, pitch, 0x5a, 100, 8));
  std::vector<unsigned char> host(50 * 8, 0);
  CUDA_MEMCPY2D_v1 c{};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = p;
  c.srcPitch = pitch;
  c.srcXInBytes = 10;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = host.data();
  c.dstPitch = 50;
  c.WidthInBytes = 50;
  c.Height = 8;
  CU_EXPECT_OK(copy2d(&c));
  EXPECT_EQ(host[0], 0x5a);
  EXPECT_EQ(host[50 * 8 - 1], 0x5a);
  c.WidthInBytes = 100;  // wider than the destination pitch
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, copy2d(&c));
  CU_EXPECT_OK(free(p));
}

TEST_F(api_memory_Legacy, GetInfo) {
  auto info = Get<MemGetInfoV1>("cuMemGetInfo");
  ASSERT_TRUE(info);
  unsigned free = 0, total = 0;
  CU_EXPECT_OK(info(&free, &total));
  EXPECT_GT(total, 0u);
  EXPECT_LE(free, total);
}

TEST_F(api_memory_Legacy, ArraysAndDescriptors) {
  auto create = Get<ArrayCreateV1>("cuArrayCreate");
  auto describe = Get<ArrayGetDescriptorV1>("cuArrayGetDescriptor");
  auto create3d = Get<Array3DCreateV1>("cuArray3DCreate");
  auto describe3d = Get<Array3DGetDescriptorV1>("cuArray3DGetDescriptor");
  auto htoa = Get<MemcpyHtoAV1>("cuMemcpyHtoA");
  auto atoh = Get<MemcpyAtoHV1>("cuMemcpyAtoH");
  ASSERT_TRUE(create && describe && create3d && describe3d && htoa && atoh);
  CUDA_ARRAY_DESCRIPTOR_v1 d{64, 0, CU_AD_FORMAT_FLOAT, 1};
  CUarray a;
  CU_ASSERT_OK(create(&a, &d));
  CUDA_ARRAY_DESCRIPTOR_v1 got{};
  CU_EXPECT_OK(describe(&got, a));
  EXPECT_EQ(got.Width, 64u);
  EXPECT_EQ(got.Height, 0u);
  EXPECT_EQ(got.Format, CU_AD_FORMAT_FLOAT);
  EXPECT_EQ(got.NumChannels, 1u);
  std::vector<float> in(64), out(64, 0.f);
  for (int i = 0; i < 64; ++i) in[i] = i * 0.5f;
  CU_EXPECT_OK(htoa(a, 0, in.data(), 256));
  CU_EXPECT_OK(atoh(out.data(), a, 0, 256));
  EXPECT_EQ(out[63], 31.5f);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, htoa(a, 128, in.data(), 256)) << "past the end of the array";
  CU_EXPECT_OK(cuArrayDestroy(a));

  CUDA_ARRAY3D_DESCRIPTOR_v1 d3{16, 8, 4, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0};
  CU_ASSERT_OK(create3d(&a, &d3));
  CUDA_ARRAY3D_DESCRIPTOR_v1 got3{};
  CU_EXPECT_OK(describe3d(&got3, a));
  EXPECT_EQ(got3.Width, 16u);
  EXPECT_EQ(got3.Height, 8u);
  EXPECT_EQ(got3.Depth, 4u);
  EXPECT_EQ(got3.Format, CU_AD_FORMAT_UNSIGNED_INT16);
  EXPECT_EQ(got3.NumChannels, 2u);
  // The 64-bit descriptor query refuses this kind of context.
  CUDA_ARRAY3D_DESCRIPTOR wide{};
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuArray3DGetDescriptor(&wide, a));
  CU_EXPECT_OK(cuArrayDestroy(a));
  d.NumChannels = 3;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, create(&a, &d)) << "1, 2 or 4 channels";
}

// In a context of the current API (cuCtxCreate_v2 and later, primary contexts) the 32-bit entry points answer
// CUDA_ERROR_INVALID_CONTEXT before looking at their arguments; with no context too.
class api_memory_LegacyContexts : public ContextTest {};

TEST_F(api_memory_LegacyContexts, OnlyTheOriginalContextKindIsServed) {
  auto alloc = conf::Symbol<MemAllocV1>("cuMemAlloc");
  auto info = conf::Symbol<MemGetInfoV1>("cuMemGetInfo");
  auto create = conf::Symbol<ArrayCreateV1>("cuArrayCreate");
  ASSERT_TRUE(alloc && info && create);
  CUdeviceptr_v1 p = 0;
  unsigned free = 0, total = 0;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, alloc(&p, 4096)) << "a cuCtxCreate_v4 context";
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, alloc(&p, 0)) << "the context is checked before the size";
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, info(&free, &total));
  CUDA_ARRAY_DESCRIPTOR_v1 d{64, 0, CU_AD_FORMAT_FLOAT, 1};
  CUarray a = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, create(&a, &d));
  CUcontext primary = nullptr;
  CU_ASSERT_OK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_ASSERT_OK(cuCtxPushCurrent(primary));
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, alloc(&p, 4096)) << "the primary context";
  CU_EXPECT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuDevicePrimaryCtxRelease(dev));
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, alloc(&p, 4096)) << "no current context";
  CU_EXPECT_OK(cuCtxPushCurrent(ctx));
}

// ---- features the device may lack ------------------------------------------------------------------------------

using api_memory_Features = ContextTest;

TEST_F(api_memory_Features, DmaBufFollowsTheAttribute) {
  conf::DeviceBuffer d(2 << 20);
  int fd = -1;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(&fd, d.ptr(), 2 << 20, static_cast<CUmemRangeHandleType>(7), 0));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(nullptr, d.ptr(), 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  CUresult r = cuMemGetHandleForAddressRange(&fd, d.ptr(), 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) == 1) {
    CU_EXPECT_OK(r);
    if (r == CUDA_SUCCESS) close(fd);
  } else {
    CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, r);
  }
}

TEST_F(api_memory_Features, DecompressFollowsTheAttribute) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK) != 0)
    CONF_NOT_SUPPORTED("the device decompresses; this case covers devices that do not");
  conf::DeviceBuffer src(4096), dst(4096);
  CUmemDecompressParams p{};
  p.src = reinterpret_cast<void*>(src.ptr());
  p.dst = reinterpret_cast<void*>(dst.ptr());
  p.srcNumBytes = 4096;
  p.dstNumBytes = 4096;
  p.algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
  size_t errorIndex = 0;
  CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, cuMemBatchDecompressAsync(&p, 1, 0, &errorIndex, nullptr));
}

TEST_F(api_memory_Features, SinglePlaneArrayHasNoPlanes) {
  CUDA_ARRAY_DESCRIPTOR d{64, 64, CU_AD_FORMAT_UNSIGNED_INT8, 4};
  CUarray a;
  CU_ASSERT_OK(cuArrayCreate(&a, &d));
  CUarray plane;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuArrayGetPlane(&plane, a, 0));
  CU_EXPECT_OK(cuArrayDestroy(a));
}

TEST_F(api_memory_Features, DenseArrayHasNoSparseProperties) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 64;
  d.Height = 64;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUarray a;
  CU_ASSERT_OK(cuArray3DCreate(&a, &d));
  CUDA_ARRAY_SPARSE_PROPERTIES props{};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuArrayGetSparseProperties(&props, a));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuArrayGetSparseProperties(nullptr, a));
  CU_EXPECT_OK(cuArrayDestroy(a));
  CUmipmappedArray m;
  CU_ASSERT_OK(cuMipmappedArrayCreate(&m, &d, 3));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMipmappedArrayGetSparseProperties(&props, m));
  CU_EXPECT_OK(cuMipmappedArrayDestroy(m));
}

TEST_F(api_memory_Features, SparseArraysFollowTheAttribute) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 1024;
  d.Height = 1024;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_SPARSE;
  CUarray a;
  CUresult r = cuArray3DCreate(&a, &d);
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED) == 1) {
    CU_ASSERT_OK(r);
    CUDA_ARRAY_SPARSE_PROPERTIES props{};
    CU_EXPECT_OK(cuArrayGetSparseProperties(&props, a));
    EXPECT_GT(props.tileExtent.width, 0u);
    CU_EXPECT_OK(cuArrayDestroy(a));
  } else {
    EXPECT_NE(r, CUDA_SUCCESS);
  }
}

TEST_F(api_memory_Features, MapArrayNeedsASparseArray) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 1024;
  d.Height = 1024;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUarray a;
  CU_ASSERT_OK(cuArray3DCreate(&a, &d));
  CUarrayMapInfo info{};
  info.resourceType = CU_RESOURCE_TYPE_ARRAY;
  info.resource.array = a;
  info.subresourceType = CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL;
  info.subresource.sparseLevel.extentWidth = 128;
  info.subresource.sparseLevel.extentHeight = 128;
  info.subresource.sparseLevel.extentDepth = 1;
  info.memOperationType = CU_MEM_OPERATION_TYPE_UNMAP;
  info.memHandleType = CU_MEM_HANDLE_TYPE_GENERIC;
  info.deviceBitMask = 1;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(&info, 1, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(nullptr, 0, nullptr)) << "an empty list (measured on an H200)";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemMapArrayAsync(&info, 0, nullptr)) << "a count of zero";
  CU_EXPECT_OK(cuArrayDestroy(a));
}

void OnBudget(CUasyncNotificationInfo*, void*, CUasyncCallbackHandle) {}

TEST_F(api_memory_Features, AsyncNotificationRegisterUnregister) {
  CUasyncCallbackHandle h = nullptr;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceRegisterAsyncNotification(dev, nullptr, nullptr, &h));
  CU_ASSERT_OK(cuDeviceRegisterAsyncNotification(dev, OnBudget, nullptr, &h));
  EXPECT_NE(h, nullptr);
  CU_EXPECT_OK(cuDeviceUnregisterAsyncNotification(dev, h));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceRegisterAsyncNotification(9999, OnBudget, nullptr, &h));
}

}  // namespace
