// libFuzzer entry point for module image recognition and PTX extraction (build: clang, -DCUEMU_FUZZ=ON;
// run: build/tests/emu-fatbin/cuemu-fatbin-fuzz tests/emu-fatbin/data).
#include "core/fatbin.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy, so that any read past the end is caught by the sanitizer.
  std::vector<uint8_t> image(data, data + size);
  auto result = cuemu::extractPtx(image.data(), 9, 0, image.size());
  if (!result) {
    CUresult code = result.error().code;
    if (code != CUDA_ERROR_INVALID_IMAGE && code != CUDA_ERROR_NO_BINARY_FOR_GPU && code != CUDA_ERROR_INVALID_VALUE)
      std::abort();
  }
  return 0;
}
