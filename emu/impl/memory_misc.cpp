// Memory entry points for features the emulated device reports as absent or that never fire on it: dma-buf
// export (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0), the decompression engine (MEM_DECOMPRESS_ALGORITHM_MASK
// = 0), planar (YUV) and sparse arrays (refused at creation, so every array is dense and single-plane), and
// over-budget notifications (host memory is the budget; cuemu never sends one). Each validates its arguments
// as the driver does, then answers what a device without the feature answers.
#include "api/impl.h"

#include "core/device.h"
#include "core/memory.h"
#include "core/memory_array.h"
#include "core/stream_lookup.h"
#include "impl/memory_internal.h"

#include <map>
#include <mutex>

namespace cuemu {
namespace {

struct AsyncNotifications {
  std::mutex mutex;
  uint64_t next = 1;
  std::map<uint64_t, CUdevice> byHandle;  // registered callbacks (never invoked: no budget to exceed)
};
AsyncNotifications& notifications() {
  static auto* table = new AsyncNotifications;
  return *table;
}

CUresult decompress(CUmemDecompressParams* paramsArray, size_t count, unsigned flags, size_t* errorIndex,
                    CUstream stream) {
  if (!paramsArray || !count || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto resolved = lookupStream(stream);
  if (!resolved) return resolved.error().code;
  (void)errorIndex;
  return CUDA_ERROR_NOT_SUPPORTED;  // no algorithm in CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK
}

CUresult mapArrays(CUarrayMapInfo* mapInfoList, unsigned count, CUstream stream) {
  // An empty list is an error, not a no-op (measured on an H200, driver 580).
  if (!count || !mapInfoList) return CUDA_ERROR_INVALID_VALUE;
  auto resolved = lookupStream(stream);
  if (!resolved) return resolved.error().code;
  for (unsigned i = 0; i < count; ++i) {
    const CUarrayMapInfo& info = mapInfoList[i];
    if (info.resourceType == CU_RESOURCE_TYPE_ARRAY) {
      if (auto array = lookup<Array>(info.resource.array); !array) return array.error().code;
    } else if (info.resourceType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
      if (auto mipmap = lookup<MipmappedArray>(info.resource.mipmap); !mipmap) return mipmap.error().code;
    } else {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // Only arrays created with CUDA_ARRAY3D_SPARSE take mappings, and cuemu creates none.
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult cuMemGetHandleForAddressRange(void* handle, CUdeviceptr dptr, size_t size, CUmemRangeHandleType handleType,
                                       unsigned long long flags) {
  if (!handle || !size || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~static_cast<unsigned long long>(CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE))
    return CUDA_ERROR_INVALID_VALUE;
  CUEMU_REQUIRE_CONTEXT(context);
  (void)context;
  // The range must be page aligned and lie in one allocation of the device.
  uint64_t page = AddressSpace::pageSize();
  if ((dptr | size) & (page - 1)) return CUDA_ERROR_INVALID_VALUE;
  auto region = deviceRange(dptr, size);
  if (!region) return region.error().code;
  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0: a dma-buf names device pages to another driver (a NIC, a GPU),
  // and the emulated device has none to give.
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc, void* userData,
                                           CUasyncCallbackHandle* callback) {
  (void)userData;
  if (!callbackFunc || !callback) return CUDA_ERROR_INVALID_VALUE;
  auto found = requireDevice(device);
  if (!found) return found.error().code;
  AsyncNotifications& table = notifications();
  std::lock_guard lock(table.mutex);
  uint64_t id = table.next++;
  table.byHandle.emplace(id, device);
  *callback = reinterpret_cast<CUasyncCallbackHandle>(static_cast<uintptr_t>(id << 4));
  return CUDA_SUCCESS;
}

CUresult cuDeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback) {
  auto found = requireDevice(device);
  if (!found) return found.error().code;
  AsyncNotifications& table = notifications();
  std::lock_guard lock(table.mutex);
  auto it = table.byHandle.find(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(callback)) >> 4);
  if (it == table.byHandle.end() || it->second != device) return CUDA_ERROR_INVALID_VALUE;
  table.byHandle.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemBatchDecompressAsync(CUmemDecompressParams* paramsArray, size_t count, unsigned int flags,
                                   size_t* errorIndex, CUstream stream) {
  return decompress(paramsArray, count, flags, errorIndex, stream);
}

CUresult cuArrayGetPlane(CUarray* pPlaneArray, CUarray hArray, unsigned int planeIdx) {
  (void)planeIdx;
  if (!pPlaneArray) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, Array, hArray);
  return CUDA_ERROR_INVALID_VALUE;  // single-plane formats only: no plane to return
}

CUresult cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties, CUarray array) {
  if (!sparseProperties) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, Array, array);
  return CUDA_ERROR_INVALID_VALUE;  // not created with CUDA_ARRAY3D_SPARSE
}

CUresult cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* sparseProperties, CUmipmappedArray mipmap) {
  if (!sparseProperties) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(found, MipmappedArray, mipmap);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemMapArrayAsync(CUarrayMapInfo* mapInfoList, unsigned int count, CUstream hStream) {
  return mapArrays(mapInfoList, count, hStream);
}

}  // namespace impl
}  // namespace cuemu
