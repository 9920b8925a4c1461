// What slot 2 of the driver's export table f8cff951-2146-8b4e-b9e2-fb469e7c0dd9 answers: the static CUDA runtime of
// 13.5 (in libcudf.so) calls it with 0, queries CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, and calls it with 1,
// ignoring the result. Build: g++ probe.cpp -I/usr/local/cuda/include -lcuda -o probe
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

int main() {
  CUresult r = cuInit(0);
  std::printf("cuInit %d\n", r);
  const unsigned char id[16] = {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e,
                                0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9};
  CUuuid uuid;
  std::memcpy(uuid.bytes, id, 16);
  const void* table = nullptr;
  r = cuGetExportTable(&table, &uuid);
  std::printf("cuGetExportTable %d table %p\n", r, table);
  if (r != CUDA_SUCCESS || !table) return 1;
  auto slots = static_cast<void* const*>(table);
  std::printf("size slot %zu\n", reinterpret_cast<size_t>(slots[0]));
  using Fn = CUresult (*)(unsigned long long);
  auto slot2 = reinterpret_cast<Fn>(slots[2]);
  CUdevice dev = 0;
  cuDeviceGet(&dev, 0);
  int sms = 0;
  for (unsigned long long arg : {0ull, 1ull, 0ull, 1ull, 1ull, 2ull}) {
    CUresult s = slot2(arg);
    CUresult a = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    std::printf("slot2(%llu) = %d; then MULTIPROCESSOR_COUNT %d (%d)\n", arg, s, sms, a);
  }
  CUcontext ctx = nullptr;
  r = cuCtxCreate(&ctx, nullptr, 0, dev);
  std::printf("cuCtxCreate %d; slot2(0) with a context = %d, slot2(1) = %d\n", r, slot2(0), slot2(1));
  return 0;
}
