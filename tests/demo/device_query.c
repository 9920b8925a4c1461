/* cuemu's device query: lists the devices the driver reports, through the CUDA driver API only.
 * Build: see tests/demo/CMakeLists.txt (target cuemu_device_query). Run against cuemu's libcuda.so.1 and change
 * the machine with the environment, e.g.
 *   CUEMU_DEVICE_COUNT=2 CUEMU_DEVICE1_PROFILE=h200 CUEMU_DEVICE_MEMORY=16G ./cuemu_device_query */
#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    CUresult status_ = (call);                                                       \
    if (status_ != CUDA_SUCCESS) {                                                   \
      const char* name_ = NULL;                                                      \
      cuGetErrorName(status_, &name_);                                               \
      fprintf(stderr, "%s failed: %s (%d)\n", #call, name_ ? name_ : "?", status_); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  CHECK(cuDeviceGetAttribute(&value, which, device));
  return value;
}

int main(void) {
  int version = 0, count = 0;
  CHECK(cuDriverGetVersion(&version));
  CHECK(cuInit(0));
  CHECK(cuDeviceGetCount(&count));
  printf("CUDA driver version %d.%d, %d device(s)\n", version / 1000, (version % 1000) / 10, count);

  for (int i = 0; i < count; ++i) {
    CUdevice device;
    char name[256], pci[32];
    size_t memory = 0;
    int major = 0, minor = 0;
    CUuuid uuid;
    CHECK(cuDeviceGet(&device, i));
    CHECK(cuDeviceGetName(name, sizeof name, device));
    CHECK(cuDeviceTotalMem(&memory, device));
    major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    CHECK(cuDeviceGetUuid(&uuid, device));
    CHECK(cuDeviceGetPCIBusId(pci, sizeof pci, device));

    printf("\nDevice %d: %s\n", i, name);
    printf("  compute capability           %d.%d\n", major, minor);
    printf("  multiprocessors              %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    printf("  global memory                %zu MiB\n", memory >> 20);
    printf("  clock rate                   %d MHz\n", attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000);
    printf("  L2 cache                     %d KiB\n", attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) >> 10);
    printf("  warp size                    %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
    printf("  max threads per block        %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    printf("  max block                    %d x %d x %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
           attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y), attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
    printf("  max grid                     %d x %d x %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
           attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y), attribute(device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z));
    printf("  shared memory per block      %d KiB (opt-in %d KiB)\n",
           attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) >> 10,
           attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) >> 10);
    printf("  registers per block          %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
    printf("  PCI bus id                   %s\n", pci);
    printf("  UUID                         GPU-");
    for (int b = 0; b < 16; ++b) {
      printf("%02x", (unsigned char)uuid.bytes[b]);
      if (b == 3 || b == 5 || b == 7 || b == 9) printf("-");
    }
    printf("\n");
    for (int peer = 0; peer < count; ++peer) {
      int can = 0;
      if (peer == i) continue;
      CHECK(cuDeviceCanAccessPeer(&can, device, peer));
      printf("  peer access to device %d      %s\n", peer, can ? "yes" : "no");
    }

    /* A context on the device: the limits a new context starts with. */
    CUcontext context;
    size_t stack = 0, heap = 0;
    int least = 0, greatest = 0;
    unsigned api = 0;
    CHECK(cuCtxCreate(&context, NULL, 0, device));
    CHECK(cuCtxGetApiVersion(context, &api));
    CHECK(cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
    CHECK(cuCtxGetLimit(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
    CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
    printf("  context: API %u, stack %zu B, malloc heap %zu MiB, stream priorities %d..%d\n", api, stack, heap >> 20,
           least, greatest);
    CHECK(cuCtxDestroy(context));
  }
  return 0;
}
