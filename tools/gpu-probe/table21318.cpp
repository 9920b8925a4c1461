// What driver 580's export table 21318c60-9714-3248-8ca6-41ff7324c8f2 holds (cudart 13.4+ asks for it): the first
// qword, then each slot with the symbol and library dladdr names for it (libcuda exports its cu* entry points).
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

int main() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  const unsigned char raw[16] = {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
                                 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2};
  CUuuid id;
  std::memcpy(id.bytes, raw, 16);
  const void* table = nullptr;
  CUresult r = cuGetExportTable(&table, &id);
  std::printf("result %d table %p\n", static_cast<int>(r), table);
  if (r != CUDA_SUCCESS || !table) return 0;
  const uint64_t* slots = static_cast<const uint64_t*>(table);
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&cuInit), &self);
  for (int i = 0; i < 96; ++i) {
    Dl_info info{};
    uint64_t v = slots[i];
    bool known = v > 4096 && dladdr(reinterpret_cast<void*>(v), &info) && info.dli_fname;
    std::printf("slot %2d: 0x%016llx", i, static_cast<unsigned long long>(v));
    if (known)
      std::printf(" %s+0x%llx sym %s", std::strrchr(info.dli_fname, '/') ? std::strrchr(info.dli_fname, '/') + 1 : info.dli_fname,
                  static_cast<unsigned long long>(v - reinterpret_cast<uint64_t>(info.dli_fbase)),
                  info.dli_sname ? info.dli_sname : "-");
    std::printf("\n");
  }
  return 0;
}
