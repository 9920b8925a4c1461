// Drop-in check: driver-API code that mixes our cuda.h with the toolkit's other headers (which
// include <cuda.h> themselves and rely on its guards, e.g. CU_UUID_HAS_BEEN_DEFINED) must compile
// unchanged with our include/ first on the path. Compiled, not run.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfiler.h>
#include <cuda_runtime.h>
#if __has_include(<cupti.h>)
#include <cupti.h>
#endif

#include <cstdio>

namespace {

#define CHECK(call)                                               \
  do {                                                            \
    CUresult status_ = (call);                                    \
    if (status_ != CUDA_SUCCESS) {                                \
      const char* name_ = nullptr;                                \
      cuGetErrorName(status_, &name_);                            \
      std::printf("%s failed: %s\n", #call, name_ ? name_ : "?"); \
      return 1;                                                   \
    }                                                             \
  } while (0)

}  // namespace

int cuemu_dropin_sample() {
  CHECK(cuInit(0));
  CUdevice device;
  CHECK(cuDeviceGet(&device, 0));
  CUuuid uuid;
  CHECK(cuDeviceGetUuid(&uuid, device));
  CUcontext context;
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxPushCurrent(context));
  CUdeviceptr buffer;
  CHECK(cuMemAlloc(&buffer, 256));
  CHECK(cuMemsetD32(buffer, 7, 64));
  unsigned host[64];
  CHECK(cuMemcpyDtoH(host, buffer, sizeof host));
  CUstream stream;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CHECK(cuMemcpyHtoDAsync(buffer, host, sizeof host, stream));
  CHECK(cuStreamSynchronize(stream));
  PFN_cuMemAlloc_v3020 alloc = nullptr;
  CUdriverProcAddressQueryResult found;
  CHECK(cuGetProcAddress("cuMemAlloc", reinterpret_cast<void**>(&alloc), 3020, CU_GET_PROC_ADDRESS_DEFAULT, &found));
  CHECK(cuProfilerStart());
  CHECK(cuStreamDestroy(stream));
  CHECK(cuMemFree(buffer));
  CHECK(cuCtxPopCurrent(&context));
  CHECK(cuDevicePrimaryCtxRelease(device));
  cudaDeviceProp properties;
  return cudaGetDeviceProperties(&properties, 0) == cudaSuccess ? 0 : 1;
}
