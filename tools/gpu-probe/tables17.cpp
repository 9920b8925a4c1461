// What driver 580's export tables of unknown purpose hold: 21318c60 (cudart 13.4+), f8cff951 (older cudart),
// da9151d3 (NVRTC, nvJitLink) and 6e163fbe (cuFFT, not yet recorded): the first qword (a size where it is one),
// then each slot with the library and symbol dladdr names for it (libcuda exports its cu* entry points).
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

int main() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  for (const char* hex : {"21318c60971432488ca641ff7324c8f2", "f8cff95121468b4eb9e2fb469e7c0dd9",
                          "da9151d33ae6cc41a5c04f26d533e328", "6e163fbeb958444d835ce182aff1991e"}) {
    CUuuid id;
    for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
    const void* table = nullptr;
    CUresult r = cuGetExportTable(&table, &id);
    std::printf("table %s: result %d at %p\n", hex, static_cast<int>(r), table);
    if (r != CUDA_SUCCESS || !table) continue;
    const uint64_t* slots = static_cast<const uint64_t*>(table);
    int count = slots[0] < 0x1000 && slots[0] % 8 == 0 ? static_cast<int>(slots[0] / 8) : 8;
    for (int i = 0; i < count; ++i) {
      Dl_info info{};
      uint64_t v = slots[i];
      bool known = v > 4096 && dladdr(reinterpret_cast<void*>(v), &info) && info.dli_fname;
      std::printf("  slot %2d: 0x%016llx", i, static_cast<unsigned long long>(v));
      if (known) {
        const char* base = std::strrchr(info.dli_fname, '/');
        std::printf(" %s+0x%llx sym %s", base ? base + 1 : info.dli_fname,
                    static_cast<unsigned long long>(v - reinterpret_cast<uint64_t>(info.dli_fbase)),
                    info.dli_sname ? info.dli_sname : "-");
      }
      std::printf("\n");
    }
  }
  return 0;
}
