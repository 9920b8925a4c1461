// What slot 12 of the driver's runtime interface export table (6bd5fb6c...) answers on NVIDIA's driver 580. cudart
// 13.2 (PyTorch 2.15's) calls it with no arguments during its initialisation, unless the environment variable
// CUDA_8b3537d1 is "dc6ffd77", and fails its first call with the result when it is not CUDA_SUCCESS.
//   g++ -O1 rtiface28.cpp -I/usr/local/cuda/include -lcuda -o rtiface28 && ./rtiface28
#include <cuda.h>

#include <cstdio>
#include <cstring>

int main() {
  const unsigned char id[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
  CUuuid uuid;
  std::memcpy(&uuid, id, 16);
  const void* table = nullptr;
  CUresult got = cuGetExportTable(&table, &uuid);
  std::printf("cuGetExportTable before cuInit = %d, table %p\n", int(got), table);
  if (!table) {
    std::printf("cuInit = %d\n", int(cuInit(0)));
    got = cuGetExportTable(&table, &uuid);
    std::printf("cuGetExportTable after cuInit = %d, table %p\n", int(got), table);
    if (!table) return 1;
  }
  const size_t size = *static_cast<const size_t*>(table);
  std::printf("table size field %zu (slots %zu)\n", size, size / sizeof(void*));
  using Slot = CUresult (*)();
  const Slot* slots = static_cast<const Slot*>(table);
  for (int i = 1; i < 14 && size_t(i) * sizeof(void*) < size; ++i)
    std::printf("slot %d: %s\n", i, slots[i] ? "function" : "NULL");
  std::printf("slot 12 (cuInit called only if the table needed it) = %d\n", int(slots[12]()));
  std::printf("cuInit = %d\n", int(cuInit(0)));
  std::printf("slot 12 after cuInit = %d\n", int(slots[12]()));
  std::printf("slot 12 again = %d\n", int(slots[12]()));
  CUcontext ctx = nullptr;
  std::printf("cuDevicePrimaryCtxRetain = %d\n", int(cuDevicePrimaryCtxRetain(&ctx, 0)));
  std::printf("cuCtxSetCurrent = %d\n", int(cuCtxSetCurrent(ctx)));
  std::printf("slot 12 with a current context = %d\n", int(slots[12]()));
  return 0;
}
