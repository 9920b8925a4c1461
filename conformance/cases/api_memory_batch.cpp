// api.memory (batches and the remaining forms): cuMemcpy3DPeerAsync, cuMemcpy3DBatchAsync, the managed-memory
// batch operations (prefetch, discard, both), memory requirements of a deferred-mapping mipmapped array, and a
// pool allocation shared through cuMemPoolExportPointer/cuMemPoolImportPointer between two processes.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;

using api_memory_Batch = ContextTest;

TEST_F(api_memory_Batch, Copy3DPeerAsyncWithinOneContext) {
  constexpr size_t w = 64, h = 4, d = 3;
  conf::DeviceBuffer a(w * h * d), b(w * h * d);
  std::vector<unsigned char> host(w * h * d), back(w * h * d, 0);
  std::iota(host.begin(), host.end(), 1);
  CU_ASSERT_OK(cuMemcpyHtoD(a.ptr(), host.data(), host.size()));
  CU_ASSERT_OK(cuMemsetD8(b.ptr(), 0, host.size()));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
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
  p.Depth = d;
  CU_EXPECT_OK(cuMemcpy3DPeerAsync(&p, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT_OK(cuMemcpyDtoH(back.data(), b.ptr(), back.size()));
  EXPECT_EQ(host, back);
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// Two pointer-to-pointer operations in one batch: a strided 2D block and a plain range.
TEST_F(api_memory_Batch, Copy3DBatchOfPointerOperands) {
  conf::DeviceBuffer src(4096), dst(4096);
  std::vector<unsigned char> host(4096);
  std::iota(host.begin(), host.end(), 0);
  CU_ASSERT_OK(cuMemcpyHtoD(src.ptr(), host.data(), host.size()));
  CU_ASSERT_OK(cuMemsetD8(dst.ptr(), 0, 4096));
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUDA_MEMCPY3D_BATCH_OP ops[2]{};
  for (auto& op : ops) {
    op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  }
  ops[0].src.op.ptr.ptr = src.ptr();
  ops[0].src.op.ptr.rowLength = 64;  // rows of 64 bytes, 16 of them are copied
  ops[0].src.op.ptr.layerHeight = 8;
  ops[0].dst.op.ptr.ptr = dst.ptr();
  ops[0].dst.op.ptr.rowLength = 32;
  ops[0].dst.op.ptr.layerHeight = 8;
  ops[0].extent = {16, 8, 1};
  ops[1].src.op.ptr.ptr = src.ptr() + 2048;
  ops[1].dst.op.ptr.ptr = dst.ptr() + 2048;
  ops[1].extent = {1024, 1, 1};
  CU_EXPECT_OK(cuMemcpy3DBatchAsync(2, ops, 0, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  std::vector<unsigned char> back(4096);
  CU_EXPECT_OK(cuMemcpyDtoH(back.data(), dst.ptr(), back.size()));
  for (size_t row = 0; row < 8; ++row)
    for (size_t x = 0; x < 32; ++x) EXPECT_EQ(back[row * 32 + x], x < 16 ? host[row * 64 + x] : 0) << row << "," << x;
  EXPECT_EQ(back[2048], host[2048]);
  EXPECT_EQ(back[3071], host[3071]);
  EXPECT_EQ(back[3072], 0);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemcpy3DBatchAsync(0, ops, 0, s)) << "no operations";
  CU_EXPECT_OK(cuStreamDestroy(s));
}

TEST_F(api_memory_Batch, ManagedPrefetchAndDiscardBatches) {
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 1)
    CONF_NOT_SUPPORTED("no concurrent managed access");
  CUdeviceptr a, b;
  CU_ASSERT_OK(cuMemAllocManaged(&a, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  CU_ASSERT_OK(cuMemAllocManaged(&b, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  std::memset(reinterpret_cast<void*>(a), 0x5a, 1 << 20);
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr ptrs[] = {a, b};
  size_t sizes[] = {1 << 20, 1 << 20};
  CUmemLocation locations[2]{};
  locations[0].type = CU_MEM_LOCATION_TYPE_DEVICE;
  locations[0].id = dev;
  locations[1].type = CU_MEM_LOCATION_TYPE_HOST;
  size_t locationIndex[] = {0, 1};  // a to the device, b to the host
  CU_EXPECT_OK(cuMemPrefetchBatchAsync(ptrs, sizes, 2, locations, locationIndex, 2, 0, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  EXPECT_EQ(reinterpret_cast<unsigned char*>(a)[(1 << 20) - 1], 0x5a) << "a prefetch keeps the contents";
  CU_EXPECT_OK(cuMemDiscardBatchAsync(&ptrs[1], &sizes[1], 1, 0, s)) << "b's contents may go";
  CU_EXPECT_OK(cuMemDiscardAndPrefetchBatchAsync(&ptrs[1], &sizes[1], 1, locations, locationIndex, 1, 0, s));
  CU_EXPECT_OK(cuStreamSynchronize(s));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(ptrs, sizes, 2, locations, locationIndex, 2, 1, s))
      << "flags must be 0";
  CU_EXPECT_OK(cuStreamDestroy(s));
  CU_EXPECT_OK(cuMemFree(a));
  CU_EXPECT_OK(cuMemFree(b));
}

TEST_F(api_memory_Batch, MipmappedArrayMemoryRequirements) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 256;
  d.Height = 256;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  CUmipmappedArray plain;
  CU_ASSERT_OK(cuMipmappedArrayCreate(&plain, &d, 4));
  CUDA_ARRAY_MEMORY_REQUIREMENTS req{};
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMipmappedArrayGetMemoryRequirements(&req, plain, dev))
      << "only deferred-mapping arrays have requirements";
  CU_EXPECT_OK(cuMipmappedArrayDestroy(plain));
  if (conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED) != 1)
    CONF_NOT_SUPPORTED("no deferred mapping");
  d.Flags = CUDA_ARRAY3D_DEFERRED_MAPPING;
  CUmipmappedArray deferred;
  CU_ASSERT_OK(cuMipmappedArrayCreate(&deferred, &d, 4));
  CU_EXPECT_OK(cuMipmappedArrayGetMemoryRequirements(&req, deferred, dev));
  EXPECT_GE(req.size, 4u * (256 * 256 + 128 * 128 + 64 * 64 + 32 * 32));
  EXPECT_GT(req.alignment, 0u);
  EXPECT_EQ(req.size % req.alignment, 0u);
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMipmappedArrayGetMemoryRequirements(nullptr, deferred, dev));
  CU_EXPECT_OK(cuMipmappedArrayDestroy(deferred));
}

// ---- a pool allocation shared with another process --------------------------------------------------------------

// The child: imports the pool from the file descriptor it inherited from the parent (driver 580 refuses a
// descriptor reopened through /proc) and the allocation from the export data (hex), reads the first word and
// returns it (low 7 bits).
CONF_FRESH_BODY(ImportPoolAllocation) {
  if (cuInit(0) != CUDA_SUCCESS) return 101;
  CUcontext c;
  if (cuCtxCreate(&c, nullptr, 0, 0) != CUDA_SUCCESS) return 102;
  int fd = -1;
  char hex[129] = {};
  if (std::sscanf(arg.c_str(), "%d %128s", &fd, hex) != 2) return 103;
  CUmemoryPool pool;
  CUresult r = cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS) return 105;
  CUmemPoolPtrExportData data{};
  for (int i = 0; i < 64; ++i) std::sscanf(hex + 2 * i, "%2hhx", &data.reserved[i]);
  CUdeviceptr p = 0;
  if (cuMemPoolImportPointer(&p, pool, &data) != CUDA_SUCCESS) return 106;
  unsigned word = 0;
  if (cuMemcpyDtoH(&word, p, 4) != CUDA_SUCCESS) return 107;
  cuMemFree(p);
  cuCtxDestroy(c);
  return static_cast<int>(word & 0x7f);
}

TEST_F(api_memory_Batch, PoolAllocationSharedWithAnotherProcess) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool;
  CU_ASSERT_OK(cuMemPoolCreate(&pool, &props));
  CUdeviceptr p = 0;
  CU_ASSERT_OK(cuMemAllocFromPoolAsync(&p, 4096, pool, nullptr));
  CU_ASSERT_OK(cuMemsetD32(p, 0x2a, 1024));
  CU_ASSERT_OK(cuCtxSynchronize());
  int fd = -1;
  CU_ASSERT_OK(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemPoolPtrExportData data{};
  CU_ASSERT_OK(cuMemPoolExportPointer(&data, p));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuMemPoolExportPointer(nullptr, p));
  std::string hex;
  char byte[3];
  for (unsigned char c : data.reserved) {
    std::snprintf(byte, sizeof byte, "%02x", c);
    hex += byte;
  }
  int inherited = dup(fd);  // without close-on-exec: the child gets the same descriptor number
  ASSERT_GE(inherited, 0);
  auto child = conf::RunFresh("ImportPoolAllocation", std::to_string(inherited) + " " + hex);
  close(inherited);
  ASSERT_TRUE(child.ran) << child.output;
  EXPECT_EQ(child.result, 0x2a) << "the child reads what the parent wrote (codes >100 name the failing step): "
                                << child.output;
  close(fd);
  CU_EXPECT_OK(cuMemFree(p));
  CU_EXPECT_OK(cuMemPoolDestroy(pool));
}

}  // namespace
