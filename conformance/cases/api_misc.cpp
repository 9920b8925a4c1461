// More entry points: array copies, batch copies, mipmapped arrays, memory pools by location, capture info, legacy
// launch and texture-reference calls, tensor maps, export tables, logs, coredump attributes.
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

#include <cudaProfiler.h>

#include "harness.h"

namespace {

using conf::ContextTest;

CUarray Array1D(size_t width, CUarray_format format = CU_AD_FORMAT_UNSIGNED_INT32) {
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = width;
  d.Height = 0;
  d.Format = format;
  d.NumChannels = 1;
  CUarray a = nullptr;
  EXPECT_EQ(cuArrayCreate(&a, &d), CUDA_SUCCESS);
  return a;
}

// ---- array copies --------------------------------------------------------------------------------------------------

using api_memory_ArrayCopy = ContextTest;

TEST_F(api_memory_ArrayCopy, DeviceToArrayToDevice) {
  std::vector<unsigned> in(128), out(128, 0);
  std::iota(in.begin(), in.end(), 7u);
  conf::DeviceBuffer a(512), b(512);
  CU_ASSERT_OK(cuMemcpyHtoD(a.ptr(), in.data(), 512));
  CUarray arr = Array1D(128);
  ASSERT_NE(arr, nullptr);
  CU_ASSERT_OK(cuMemcpyDtoA(arr, 0, a.ptr(), 512));
  CU_ASSERT_OK(cuMemcpyAtoD(b.ptr(), arr, 0, 512));
  CU_ASSERT_OK(cuMemcpyDtoH(out.data(), b.ptr(), 512));
  EXPECT_EQ(in, out);
  CU_EXPECT_OK(cuArrayDestroy(arr));
}

TEST_F(api_memory_ArrayCopy, ArrayToArrayWithOffsets) {
  std::vector<unsigned> in(64), out(64, 0);
  std::iota(in.begin(), in.end(), 100u);
  CUarray x = Array1D(64), y = Array1D(64);
  ASSERT_TRUE(x && y);
  CU_ASSERT_OK(cuMemcpyHtoA(x, 0, in.data(), 256));
  CU_ASSERT_OK(cuMemcpyHtoA(y, 0, out.data(), 256));
  CU_ASSERT_OK(cuMemcpyAtoA(y, 16, x, 32, 64));  // 16 words from word 8 of x to word 4 of y
  CU_ASSERT_OK(cuMemcpyAtoH(out.data(), y, 0, 256));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], (i >= 4 && i < 20) ? in[i + 4] : 0u) << i;
  CU_EXPECT_OK(cuArrayDestroy(x));
  CU_EXPECT_OK(cuArrayDestroy(y));
}

TEST_F(api_memory_ArrayCopy, AsyncHostArray) {
  CUarray arr = Array1D(256);
  ASSERT_NE(arr, nullptr);
  void* pinned;
  CU_ASSERT_OK(cuMemAllocHost(&pinned, 1024));
  auto* w = static_cast<unsigned*>(pinned);
  for (int i = 0; i < 256; ++i) w[i] = static_cast<unsigned>(i * 3);
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, 0));
  CU_ASSERT_OK(cuMemcpyHtoAAsync(arr, 0, pinned, 1024, s));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  std::memset(pinned, 0, 1024);
  CU_ASSERT_OK(cuMemcpyAtoHAsync(pinned, arr, 0, 1024, s));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  EXPECT_EQ(w[255], 765u);
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFreeHost(pinned));
  CU_EXPECT_OK(cuArrayDestroy(arr));
}

TEST_F(api_memory_ArrayCopy, Copy2DUnaligned) {
  conf::DeviceBuffer d(1000);
  std::vector<unsigned char> src(300), back(300);
  for (int i = 0; i < 300; ++i) src[i] = static_cast<unsigned char>(i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = src.data();
  c.srcPitch = 30;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d.ptr() + 3;
  c.dstPitch = 37;
  c.WidthInBytes = 30;
  c.Height = 10;
  CU_ASSERT_OK(cuMemcpy2DUnaligned(&c));
  CUDA_MEMCPY2D r{};
  r.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  r.srcDevice = d.ptr() + 3;
  r.srcPitch = 37;
  r.dstMemoryType = CU_MEMORYTYPE_HOST;
  r.dstHost = back.data();
  r.dstPitch = 30;
  r.WidthInBytes = 30;
  r.Height = 10;
  CU_ASSERT_OK(cuMemcpy2DUnaligned(&r));
  EXPECT_EQ(src, back);
}

TEST_F(api_memory_ArrayCopy, Copy3DAsyncAndPeer) {
  const size_t w = 8, h = 4, depth = 2;
  std::vector<unsigned char> src(w * h * depth), back(w * h * depth);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 5);
  conf::DeviceBuffer a(src.size()), b(src.size());
  CU_ASSERT_OK(cuMemcpyHtoD(a.ptr(), src.data(), src.size()));
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = a.ptr();
  c.srcPitch = w;
  c.srcHeight = h;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = back.data();
  c.dstPitch = w;
  c.dstHeight = h;
  c.WidthInBytes = w;
  c.Height = h;
  c.Depth = depth;
  CU_ASSERT_OK(cuMemcpy3DAsync(&c, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  EXPECT_EQ(src, back);
  CUDA_MEMCPY3D_PEER p{};
  p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  p.srcDevice = a.ptr();
  p.srcContext = ctx;
  p.srcPitch = w;
  p.srcHeight = h;
  p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  p.dstDevice = b.ptr();
  p.dstContext = ctx;
  p.dstPitch = w;
  p.dstHeight = h;
  p.WidthInBytes = w;
  p.Height = h;
  p.Depth = depth;
  CU_ASSERT_OK(cuMemcpy3DPeer(&p));
  std::fill(back.begin(), back.end(), 0);
  CU_ASSERT_OK(cuMemcpyDtoH(back.data(), b.ptr(), back.size()));
  EXPECT_EQ(src, back);
}

TEST_F(api_memory_ArrayCopy, BatchCopy) {
  conf::DeviceBuffer a(1024), b(1024), c(1024);
  CU_ASSERT_OK(cuMemsetD32(a.ptr(), 0x11111111, 256));
  CU_ASSERT_OK(cuMemsetD32(b.ptr(), 0x22222222, 256));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr dsts[] = {c.ptr(), c.ptr() + 512};
  CUdeviceptr srcs[] = {a.ptr(), b.ptr()};
  size_t sizes[] = {512, 512};
  CUmemcpyAttributes attr{};
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t attrIdx = 0;
  CU_EXPECT_OK(cuMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &attrIdx, 1, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  unsigned v[2] = {};
  CU_EXPECT_OK(cuMemcpyDtoH(&v[0], c.ptr() + 508, 4));
  CU_EXPECT_OK(cuMemcpyDtoH(&v[1], c.ptr() + 512, 4));
  EXPECT_EQ(v[0], 0x11111111u);
  EXPECT_EQ(v[1], 0x22222222u);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_memory_ArrayCopy, Set2DAsync) {
  conf::DeviceBuffer d(64 * 8);
  CU_ASSERT_OK(cuMemsetD8(d.ptr(), 0, 64 * 8));
  CU_ASSERT_OK(cuMemsetD2D32Async(d.ptr(), 64, 0xabcdabcd, 4, 8, nullptr));
  CU_ASSERT_OK(cuMemsetD2D16Async(d.ptr() + 32, 64, 0x7777, 2, 8, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<unsigned char> v(64 * 8);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), d.ptr(), v.size()));
  for (int row = 0; row < 8; ++row) {
    EXPECT_EQ(v[row * 64 + 15], 0xab);
    EXPECT_EQ(v[row * 64 + 16], 0);
    EXPECT_EQ(v[row * 64 + 35], 0x77);
    EXPECT_EQ(v[row * 64 + 36], 0);
  }
}

TEST_F(api_memory_ArrayCopy, MipmappedArrayLevels) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 64;
  d.Height = 32;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUmipmappedArray m;
  CU_ASSERT_OK(cuMipmappedArrayCreate(&m, &d, 4));
  for (unsigned level = 0; level < 4; ++level) {
    CUarray a = nullptr;
    CU_EXPECT_OK(cuMipmappedArrayGetLevel(&a, m, level));
    CUDA_ARRAY3D_DESCRIPTOR got{};
    CU_EXPECT_OK(cuArray3DGetDescriptor(&got, a));
    EXPECT_EQ(got.Width, 64u >> level);
    EXPECT_EQ(got.Height, 32u >> level);
  }
  CUarray none;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMipmappedArrayGetLevel(&none, m, 9));
  CU_EXPECT_OK(cuMipmappedArrayDestroy(m));
}

TEST_F(api_memory_ArrayCopy, MemoryRequirements) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 64;
  d.Height = 64;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING;
  CUarray a;
  CU_ASSERT_OK(cuArray3DCreate(&a, &d));
  CUDA_ARRAY_MEMORY_REQUIREMENTS req{};
  CU_EXPECT_OK(cuArrayGetMemoryRequirements(&req, a, dev));
  EXPECT_GE(req.size, 64u * 64u * 4u);
  EXPECT_GT(req.alignment, 0u);
  CU_EXPECT_OK(cuArrayDestroy(a));
}

// ---- memory pools by location ----------------------------------------------------------------------------------

using api_memory_PoolLocation = ContextTest;

TEST_F(api_memory_PoolLocation, DefaultPoolMatchesDevicePool) {
  CUmemLocation loc{};
  loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = dev;
  CUmemoryPool a = nullptr, b = nullptr, cur = nullptr;
  CU_ASSERT_OK(cuMemGetDefaultMemPool(&a, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
  CU_ASSERT_OK(cuDeviceGetDefaultMemPool(&b, dev));
  EXPECT_EQ(a, b);
  CU_EXPECT_OK(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
  EXPECT_EQ(cur, a);
  CU_EXPECT_OK(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, a));
}

TEST_F(api_memory_PoolLocation, PoolSetAccessOwnDevice) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUmemAccessDesc desc{};
  desc.location = props.location;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_EXPECT_OK(cuMemPoolSetAccess(pool, &desc, 1));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_PoolLocation, ExportPoolAsFileDescriptor) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  int fd = -1;
  CU_EXPECT_OK(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

TEST_F(api_memory_PoolLocation, RangeGetAttributes) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 1) CONF_NOT_SUPPORTED("no managed memory");
  CUdeviceptr p;
  CU_ASSERT_OK(cuMemAllocManaged(&p, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  int readMostly = -1, preferred = -2;
  void* data[] = {&readMostly, &preferred};
  size_t sizes[] = {4, 4};
  CUmem_range_attribute attrs[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION};
  CU_EXPECT_OK(cuMemRangeGetAttributes(data, sizes, attrs, 2, p, 1 << 20));
  EXPECT_EQ(readMostly, 0);
  EXPECT_EQ(preferred, CU_DEVICE_INVALID) << "no preferred location set";
  CU_EXPECT_OK(cuMemFree(p));
}

TEST_F(api_memory_PoolLocation, WaitValue64) {
  conf::DeviceBuffer d(16);
  unsigned long long v = 0x100000000ull;
  CU_ASSERT_OK(cuMemcpyHtoD(d.ptr(), &v, 8));
  CU_EXPECT_OK(cuStreamWaitValue64(nullptr, d.ptr(), 0x100000000ull, CU_STREAM_WAIT_VALUE_EQ));
  CU_EXPECT_OK(cuCtxSynchronize());
}

// ---- capture info and capture modes ----------------------------------------------------------------------------

using api_stream_Capture = ContextTest;

TEST_F(api_stream_Capture, CaptureInfo) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph g = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 99;
  CU_EXPECT_OK(cuStreamGetCaptureInfo(s, &status, &id, &g, &deps, &edges, &n));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_NE(g, nullptr);
  EXPECT_EQ(n, 0u) << "nothing captured yet";
  CUgraph out = nullptr;
  CU_EXPECT_OK(cuStreamEndCapture(s, &out));
  EXPECT_EQ(out, g);
  if (out) cuGraphDestroy(out);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_stream_Capture, ExchangeCaptureMode) {
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  CU_EXPECT_OK(cuThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, CU_STREAM_CAPTURE_MODE_GLOBAL) << "the previous mode is returned; global by default";
  CU_EXPECT_OK(cuThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, CU_STREAM_CAPTURE_MODE_RELAXED);
}

TEST_F(api_stream_Capture, LegacyStreamCannotCapture) {
  CU_EXPECT(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

// ---- legacy launch and references ------------------------------------------------------------------------------

class api_launch_Legacy : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(conf::LoadModule(&mod, "vector.ptx"));
  }
  CUmodule mod = nullptr;
};

TEST_F(api_launch_Legacy, LaunchSingleBlock) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "count_threads"));
  CU_EXPECT_OK(cuFuncSetBlockShape(f, 32, 1, 1));
  CU_EXPECT_OK(cuParamSetSize(f, 0));
  CU_EXPECT_OK(cuLaunch(f));
  CU_EXPECT_OK(cuLaunchGridAsync(f, 2, 1, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  CUdeviceptr g;
  CU_ASSERT_OK(cuModuleGetGlobal(&g, nullptr, mod, "g_counter"));
  int v = 0;
  CU_EXPECT_OK(cuMemcpyDtoH(&v, g, 4));
  EXPECT_EQ(v, 32 + 64);
}

TEST_F(api_launch_Legacy, ParamSetfAndSharedSize) {
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "reverse_dynamic_shared"));
  CU_EXPECT_OK(cuFuncSetSharedSize(f, 1024));
  CU_EXPECT_OK(cuParamSetf(f, 0, 1.5f));
}

TEST_F(api_launch_Legacy, TexRefOfModuleWithoutTextures) {
  CUtexref t;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuModuleGetTexRef(&t, mod, "no_texture"));
  CUsurfref s;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuModuleGetSurfRef(&s, mod, "no_surface"));
}

TEST_F(api_launch_Legacy, KernelCacheConfig) {
  CUlibrary lib;
  CU_ASSERT_OK(cuLibraryLoadData(&lib, conf::GetImage("vector.ptx").ptr(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k;
  CU_ASSERT_OK(cuLibraryGetKernel(&k, lib, "vadd_f32"));
  CU_EXPECT_OK(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, dev));
  CUdeviceptr p;
  size_t size;
  CU_EXPECT(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&p, &size, lib, "g_counter")) << "not a __managed__ variable";
  CU_EXPECT_OK(cuLibraryUnload(lib));
}

TEST_F(api_launch_Legacy, LinkAddFile) {
  char path[] = "/tmp/cuemu-conf-link-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  auto img = conf::GetImage("hand_add_one.ptx");
  ASSERT_EQ(write(fd, img.data, img.size), static_cast<ssize_t>(img.size));
  close(fd);
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  CUresult r = cuLinkAddFile(link, CU_JIT_INPUT_PTX, path, 0, nullptr, nullptr);
  unlink(path);
  CU_EXPECT_OK(r);
  void* cubin = nullptr;
  size_t size = 0;
  CU_EXPECT_OK(cuLinkComplete(link, &cubin, &size));
  CU_EXPECT_OK(cuLinkDestroy(link));
}

TEST_F(api_launch_Legacy, LinkAddMissingFile) {
  CUlinkState link;
  CU_ASSERT_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  CU_EXPECT(CUDA_ERROR_FILE_NOT_FOUND,
            cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, nullptr, nullptr));
  CU_EXPECT_OK(cuLinkDestroy(link));
}

TEST_F(api_launch_Legacy, ClusterOccupancy) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 1) CONF_NOT_SUPPORTED("no cluster launch");
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "vadd_f32"));
  CUlaunchConfig cfg{};
  cfg.gridDimX = 16;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  int size = 0;
  CU_EXPECT_OK(cuOccupancyMaxPotentialClusterSize(&size, f, &cfg));
  EXPECT_GE(size, 1);
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CU_EXPECT_OK(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
  EXPECT_GE(clusters, 1);
}

TEST_F(api_launch_Legacy, SharedMemConfigSet) {
  CU_EXPECT_OK(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE));
}

// ---- host-side descriptors and process-wide queries -------------------------------------------------------------

using api_misc = ContextTest;

// Profiler control with no profiler attached (measured on an H200, driver 580).
TEST_F(api_misc, ProfilerStartStop) {
  CU_EXPECT_OK(cuProfilerStart());
  CU_EXPECT_OK(cuProfilerStart()) << "starting twice is fine";
  CU_EXPECT_OK(cuProfilerStop());
  CU_EXPECT_OK(cuProfilerStop());
  auto initialize = conf::Symbol<CUresult (*)(const char*, const char*, int)>("cuProfilerInitialize");
  ASSERT_TRUE(initialize);
  CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, initialize("/tmp/cfg", "/tmp/out.csv", 1)) << "the deprecated initializer";
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuProfilerStart()) << "no current context";
  CU_EXPECT(CUDA_ERROR_INVALID_CONTEXT, cuProfilerStop());
  CU_EXPECT_OK(cuCtxPushCurrent(ctx));
}

TEST_F(api_misc, TensorMapEncodeTiled) {
  conf::DeviceBuffer d(64 * 64 * 4);
  CUtensorMap map;
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * 4};
  cuuint32_t box[2] = {16, 16};
  cuuint32_t elem[2] = {1, 1};
  CU_EXPECT_OK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(d.ptr()), dims,
                                      strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

TEST_F(api_misc, TensorMapMisalignedAddress) {
  conf::DeviceBuffer d(64 * 64 * 4);
  CUtensorMap map;
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * 4};
  cuuint32_t box[2] = {16, 16};
  cuuint32_t elem[2] = {1, 1};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE,
            cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(d.ptr() + 4), dims,
                                   strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
      << "the global address must be 16-byte aligned";
}

TEST_F(api_misc, TensorMapRequirements) {
  conf::DeviceBuffer d(64 * 64 * 4);
  alignas(128) CUtensorMap map;
  void* base = reinterpret_cast<void*>(d.ptr());
  cuuint64_t dims[2] = {64, 64};
  cuuint64_t strides[1] = {64 * 4};
  cuuint32_t box[2] = {16, 16};
  cuuint32_t elem[2] = {1, 1};
  auto encode = [&](CUtensorMapDataType type, cuuint32_t rank, const cuuint64_t* s, const cuuint32_t* b,
                    const cuuint32_t* e, CUtensorMapSwizzle swizzle, CUtensorMapFloatOOBfill fill) {
    return cuTensorMapEncodeTiled(&map, type, rank, base, dims, s, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, fill);
  };
  const auto f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const auto none = CU_TENSOR_MAP_SWIZZLE_NONE;
  const auto zero = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  CU_EXPECT_OK(encode(f32, 2, strides, box, elem, none, zero));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 0, strides, box, elem, none, zero)) << "rank 0";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 6, strides, box, elem, none, zero)) << "rank 6";
  cuuint64_t oddStride[1] = {100};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 2, oddStride, box, elem, none, zero))
      << "stride not a multiple of 16";
  cuuint32_t bigBox[2] = {16, 257};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 2, strides, bigBox, elem, none, zero)) << "box over 256";
  cuuint32_t narrowBox[2] = {2, 16};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 2, strides, narrowBox, elem, none, zero))
      << "inner box of 8 bytes, not a multiple of 16";
  cuuint32_t bigElem[2] = {1, 9};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 2, strides, box, bigElem, none, zero)) << "element stride over 8";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(f32, 2, strides, box, elem, CU_TENSOR_MAP_SWIZZLE_32B, zero))
      << "a 64-byte inner box does not fit the 32-byte swizzle";
  CU_EXPECT_OK(encode(f32, 2, strides, box, elem, CU_TENSOR_MAP_SWIZZLE_64B, zero));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encode(CU_TENSOR_MAP_DATA_TYPE_INT32, 2, strides, box, elem, none,
                                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA))
      << "the NaN fill needs a floating-point type";
  CU_EXPECT_OK(encode(f32, 2, strides, box, elem, none, zero));
  CU_EXPECT_OK(cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(d.ptr() + 256)));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuTensorMapReplaceAddress(&map, reinterpret_cast<void*>(d.ptr() + 8)));
}

TEST_F(api_misc, TensorMapIm2col) {
  conf::DeviceBuffer d(8 * 16 * 16 * 32 * 2);
  alignas(128) CUtensorMap map;
  cuuint64_t dims[4] = {32, 16, 16, 8};  // channels, width, height, batch
  cuuint64_t strides[3] = {32 * 2, 32 * 2 * 16, 32 * 2 * 16 * 16};
  int lower[2] = {-1, -1};
  int upper[2] = {-1, -1};
  cuuint32_t elem[4] = {1, 1, 1, 1};
  CU_EXPECT_OK(cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, reinterpret_cast<void*>(d.ptr()), dims,
                                       strides, lower, upper, 32, 64, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  int tooFar[2] = {-129, 0};
  CU_EXPECT(
      CUDA_ERROR_INVALID_VALUE,
      cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, reinterpret_cast<void*>(d.ptr()), dims, strides,
                              tooFar, upper, 32, 64, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
      << "rank 4 corners lie in [-128, 127]";
  CU_EXPECT(
      CUDA_ERROR_INVALID_VALUE,
      cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, reinterpret_cast<void*>(d.ptr()), dims, strides,
                              lower, upper, 32, 64, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
      << "im2col needs rank 3 to 5";
}

// Wide im2col maps (for compute capability 10's .im2col::w copies) encode on an H200 too: as an im2col map whose only
// nonzero corners are the width's, the same bytes for both modes (tools/gpu-probe/im2colwide30.cpp).
TEST_F(api_misc, TensorMapIm2colWide) {
  conf::DeviceBuffer d(1 << 22);
  void* base = reinterpret_cast<void*>(d.ptr());
  alignas(128) CUtensorMap wide, plain;
  cuuint64_t dims[5] = {64, 16, 16, 8, 2};
  cuuint64_t strides[4] = {128, 128 * 16, 128 * 16 * 16, 128 * 16 * 16 * 8};
  cuuint32_t elem[5] = {1, 1, 1, 1, 1};
  const auto f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const auto none = CU_TENSOR_MAP_INTERLEAVE_NONE;
  const auto l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  const auto fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  auto encodeWide = [&](cuuint32_t rank, void* address, int lo, int hi, cuuint32_t channels, cuuint32_t pixels,
                        CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle) {
    std::memset(&wide, 0, sizeof wide);
    return cuTensorMapEncodeIm2colWide(&wide, f16, rank, address, dims, strides, lo, hi, channels, pixels, elem, none,
                                       mode, swizzle, l2, fill);
  };
  const auto W = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, W128 = CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128;
  const auto sw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  for (cuuint32_t rank : {3u, 4u, 5u}) {
    SCOPED_TRACE(rank);
    for (auto mode : {W, W128}) {
      CU_ASSERT_OK(encodeWide(rank, base, -1, 1, 64, 32, mode, sw128));
      int lower[3] = {-1, 0, 0}, upper[3] = {1, 0, 0};
      std::memset(&plain, 0, sizeof plain);
      CU_ASSERT_OK(cuTensorMapEncodeIm2col(&plain, f16, rank, base, dims, strides, lower, upper, 64, 32, elem, none,
                                           sw128, l2, fill));
      EXPECT_EQ(0, std::memcmp(&wide, &plain, sizeof wide)) << "the im2col map with the width's corners only";
    }
  }
  CU_EXPECT_OK(encodeWide(4, base, -128, 127, 64, 1024, W, sw128)) << "rank 4 corners lie in [-128, 127]";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -129, 1, 64, 32, W, sw128));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 128, 64, 32, W, sw128));
  CU_EXPECT_OK(encodeWide(3, base, -32768, 32767, 64, 32, W, sw128)) << "rank 3: 16-bit corners";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(3, base, -32769, 1, 64, 32, W, sw128));
  CU_EXPECT_OK(encodeWide(5, base, -16, 15, 64, 32, W, sw128)) << "rank 5 corners lie in [-16, 15]";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(5, base, -17, 1, 64, 32, W, sw128));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(2, base, -1, 1, 64, 32, W, sw128)) << "rank 2";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(6, base, -1, 1, 64, 32, W, sw128)) << "rank 6";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 0, 32, W, sw128)) << "no channels";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 128, 32, W, sw128))
      << "256 bytes of channels do not fit the 128-byte swizzle";
  CU_EXPECT_OK(encodeWide(4, base, -1, 1, 256, 32, W, CU_TENSOR_MAP_SWIZZLE_NONE)) << "256 channels, no swizzle";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 264, 32, W, CU_TENSOR_MAP_SWIZZLE_NONE))
      << "more than 256 channels";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 64, 0, W, sw128)) << "no pixels";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 64, 1025, W, sw128)) << "more than 1024 pixels";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 64, 32, CUtensorMapIm2ColWideMode(2), sw128))
      << "mode 2";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, static_cast<char*>(base) + 8, -1, 1, 64, 32, W, sw128))
      << "the global address must be 16-byte aligned";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, encodeWide(4, base, -1, 1, 64, 32, W, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B))
      << "the atom swizzles need compute capability 10";
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuTensorMapEncodeIm2colWide(nullptr, f16, 4, base, dims, strides, -1, 1, 64, 32,
                                                                  elem, none, W, sw128, l2, fill));
}

// A null global address encodes (driver 580 on an H200: only its alignment is checked; a kernel's tensormap.replace
// can set the address later), while cuTensorMapReplaceAddress refuses a null one.
TEST_F(api_misc, TensorMapNullAddress) {
  alignas(128) CUtensorMap map;
  cuuint64_t dims[4] = {64, 16, 16, 8};
  cuuint64_t strides[3] = {128, 128 * 16, 128 * 16 * 16};
  cuuint32_t box[4] = {64, 8, 1, 1};
  cuuint32_t elem[4] = {1, 1, 1, 1};
  int lower[2] = {-1, -1}, upper[2] = {1, 1};
  const auto f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CU_EXPECT_OK(cuTensorMapEncodeIm2colWide(&map, f16, 4, nullptr, dims, strides, -1, 1, 64, 32, elem,
                                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
                                           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CU_EXPECT_OK(cuTensorMapEncodeTiled(&map, f16, 4, nullptr, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CU_EXPECT_OK(cuTensorMapEncodeIm2col(&map, f16, 4, nullptr, dims, strides, lower, upper, 64, 32, elem,
                                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuTensorMapReplaceAddress(&map, nullptr)) << "but cannot be put in later";
}

TEST_F(api_misc, LogsDumpAndCallbacks) {
  CUlogIterator it = 0;
  CU_ASSERT_OK(cuLogsCurrent(&it, 0));
  char buffer[512];
  size_t size = sizeof buffer;
  CU_EXPECT_OK(cuLogsDumpToMemory(&it, buffer, &size, 0));
  EXPECT_LT(size, sizeof buffer);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLogsCurrent(nullptr, 0));
  CU_EXPECT_OK(cuLogsCurrent(&it, 1)) << "flags are ignored (measured on driver 580)";
  CUlogsCallbackHandle handle = nullptr;
  CU_ASSERT_OK(cuLogsRegisterCallback([](void*, CUlogLevel, char*, size_t) {}, nullptr, &handle));
  CU_EXPECT_OK(cuLogsUnregisterCallback(handle));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuLogsRegisterCallback(nullptr, nullptr, &handle));
}

TEST_F(api_misc, CoredumpSettingsRoundTrip) {
  bool value = true;
  size_t size = sizeof value;
  CU_ASSERT_OK(cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &value, &size));
  bool back = false;
  size = sizeof back;
  CU_EXPECT_OK(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &back, &size));
  EXPECT_TRUE(back);
  EXPECT_EQ(size, sizeof(bool));
  value = false;
  size = sizeof value;
  CU_EXPECT_OK(cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &value, &size));
  // Measured on driver 580: no file name is set by default and the size is left as given.
  char file[1024] = {'x'};
  size = sizeof file;
  CU_EXPECT_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, file, &size));
  EXPECT_EQ(size, sizeof file);
  EXPECT_STREQ(file, "");
}

TEST_F(api_misc, ExportTableUnknownId) {
  CUuuid id{};
  std::memset(id.bytes, 0x5a, sizeof(id.bytes));
  const void* table = reinterpret_cast<const void*>(1);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&table, &id));
}

TEST_F(api_misc, DeviceLuidNotOnLinux) {
  char luid[8];
  unsigned mask = 0;
  CU_EXPECT(CUDA_ERROR_NOT_SUPPORTED, cuDeviceGetLuid(luid, &mask, dev))
      << "expectation from docs; GPU run will confirm";
}

TEST_F(api_misc, CoredumpGlobalAttribute) {
  bool enabled = true;
  size_t size = sizeof(enabled);
  CU_EXPECT_OK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &enabled, &size));
}

TEST_F(api_misc, LogsCurrent) {
  CUlogIterator it = 0;
  CU_EXPECT_OK(cuLogsCurrent(&it, 0));
}

TEST_F(api_misc, GreenContextIdAndStream) {
  CUdevResource res{};
  CU_ASSERT_OK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResourceDesc desc = nullptr;
  CU_ASSERT_OK(cuDevResourceGenerateDesc(&desc, &res, 1));
  CUgreenCtx green = nullptr;
  CU_ASSERT_OK(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  unsigned long long id = 0;
  CU_EXPECT_OK(cuGreenCtxGetId(green, &id));
  CUdevResource gres{};
  CU_EXPECT_OK(cuGreenCtxGetDevResource(green, &gres, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(gres.sm.smCount, res.sm.smCount);
  CUstream s = nullptr;
  CU_ASSERT_OK(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
  CUgreenCtx owner = nullptr;
  CU_EXPECT_OK(cuStreamGetGreenCtx(s, &owner));
  EXPECT_EQ(owner, green);
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_EXPECT(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxRecordEvent(green, e))
      << "an event of another context (measured on driver 580)";
  CU_EXPECT_OK(cuEventDestroy(e));
  CUcontext greenContext = nullptr;
  CU_ASSERT_OK(cuCtxFromGreenCtx(&greenContext, green));
  CU_ASSERT_OK(cuCtxPushCurrent(greenContext));
  CUevent ge;
  CU_ASSERT_OK(cuEventCreate(&ge, CU_EVENT_DISABLE_TIMING));
  CU_EXPECT_OK(cuGreenCtxRecordEvent(green, ge));
  CU_EXPECT_OK(cuGreenCtxWaitEvent(green, ge));
  CU_EXPECT_OK(cuEventSynchronize(ge));
  CU_EXPECT_OK(cuEventDestroy(ge));
  CU_ASSERT_OK(cuCtxPopCurrent(nullptr));
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuGreenCtxDestroy(green));
}

TEST_F(api_misc, TexObjectResourceViewOfLinear) {
  conf::DeviceBuffer d(4096);
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = d.ptr();
  res.res.linear.format = CU_AD_FORMAT_FLOAT;
  res.res.linear.numChannels = 1;
  res.res.linear.sizeInBytes = 4096;
  CUDA_TEXTURE_DESC tex{};
  CUtexObject t;
  CU_ASSERT_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  CUDA_RESOURCE_VIEW_DESC view{};
  // Driver 580 answers even when no view was given at creation (measured on an H200).
  CU_EXPECT_OK(cuTexObjectGetResourceViewDesc(&view, t));
  CU_EXPECT_OK(cuTexObjectDestroy(t));
}

CONF_FRESH_BODY(IpcOpenEvent) {
  CUipcEventHandle h{};
  for (size_t i = 0; i < sizeof(h.reserved) && 2 * i + 1 < arg.size(); ++i)
    h.reserved[i] = static_cast<char>(std::stoi(arg.substr(2 * i, 2), nullptr, 16));
  CUresult r = cuInit(0);
  CUcontext c;
  if (r == CUDA_SUCCESS) r = cuCtxCreate(&c, nullptr, 0, 0);
  CUevent e = nullptr;
  if (r == CUDA_SUCCESS) r = cuIpcOpenEventHandle(&e, h);
  if (r == CUDA_SUCCESS) r = cuEventSynchronize(e);
  if (r == CUDA_SUCCESS) r = cuEventDestroy(e);
  return -static_cast<int>(r);
}

TEST_F(api_misc, IpcEventInAnotherProcess) {
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CU_ASSERT_OK(cuEventRecord(e, nullptr));
  CUipcEventHandle h{};
  CU_ASSERT_OK(cuIpcGetEventHandle(&h, e));
  std::string hex;
  char buf[4];
  for (char c : h.reserved) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(c));
    hex += buf;
  }
  auto r = conf::RunFresh("IpcOpenEvent", hex, 60);
  ASSERT_TRUE(r.ran) << r.output;
  EXPECT_EQ(r.result, 0) << "-CUresult of the child";
  CU_EXPECT_OK(cuEventDestroy(e));
}

}  // namespace
