// libFuzzer target: fatbinary containers (emu/core/fatbin.h): the header and entry walk, LZ4/ZSTD decompression
// of entries, and the choice of PTX for a device, on an exact-size copy so that any read past the end is caught.
#include "core/fatbin.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A runtime wrapper record holds raw pointers (to the container): fuzzing it would fuzz addresses.
  if (size >= 4 && data[0] == 0xb1 && data[1] == 0x43 && data[2] == 0x62 && data[3] == 0x46) return 0;
  std::vector<uint8_t> image(data, data + size);
  if (auto container = cuemu::fatbin::parseContainer(image.data(), image.size())) {
    for (const auto& entry : container->entries) {
      auto payload = cuemu::fatbin::entryPayload(*container, entry);
      if (payload && payload->size() > cuemu::fatbin::kMaxEntryBytes) std::abort();
    }
  }
  // Which error each malformed image gets is the conformance suite's business (the GPU's codes); here only that
  // none crashes, reads past the copy or allocates without bound.
  for (int cc : {75, 90, 120}) static_cast<void>(cuemu::extractPtx(image.data(), cc / 10, cc % 10, image.size()));
  return 0;
}
