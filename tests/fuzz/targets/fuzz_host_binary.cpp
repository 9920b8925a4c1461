// libFuzzer target: ELF recognition and host binaries (emu/core/fatbin.h): classifyImage on cubins and other
// ELF files, and extractPtxFromHostBinary, the path of cuLinkAddData(CU_JIT_INPUT_OBJECT / _LIBRARY): ELF host
// objects and `ar` archives whose .nv_fatbin sections hold the device code.
#include "core/fatbin.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  // Only that nothing crashes, reads past the copy or allocates without bound: the error codes are the
  // conformance suite's business.
  static_cast<void>(cuemu::classifyImage(bytes.data(), bytes.size()));
  static_cast<void>(cuemu::extractPtxFromHostBinary(bytes.data(), bytes.size(), 9, 0, "fuzz.o"));
  return 0;
}
