// Whole module loads (emu/core/module.h compileImage: extraction, decompression, linking, PTX front end and
// lowering) of real nvcc fatbinaries and cubins with random damage: the answer is a load error code the driver
// documents for bad images, or a module that compiled; never a crash or an exception.
#include "core/module.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace cuemu {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes readImage(const std::string& name) {
  std::ifstream in(std::string(CUEMU_FATBIN_CHECKED_IN_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << name;
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool isLoadError(CUresult code) {
  return code == CUDA_ERROR_INVALID_IMAGE || code == CUDA_ERROR_NO_BINARY_FOR_GPU || code == CUDA_ERROR_INVALID_PTX ||
         code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

TEST(ImageFuzz, DamagedImagesLoadOrFailCleanly) {
  std::mt19937 rng(20261122);
  int loaded = 0, refused = 0;
  for (const char* name : {"nocompress.fatbin", "default.fatbin", "speed.fatbin", "rdc.fatbin", "sm90.cubin"}) {
    const Bytes good = readImage(name);
    ASSERT_GT(good.size(), 64u);
    for (int iteration = 0; iteration < 1000; ++iteration) {
      Bytes b = good;
      int changes = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < changes; ++k) {
        size_t at = rng() % 3 == 0 ? rng() % std::min<size_t>(b.size(), 256) : rng() % b.size();
        switch (rng() % 3) {
          case 0: b[at] = static_cast<uint8_t>(rng()); break;               // any byte
          case 1: b[at] = "{};.%,[]()\n \"0x"[rng() % 16]; break;           // PTX punctuation
          case 2: b[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;  // one bit
        }
      }
      // Sized, as cuModuleLoad and cuLibraryLoadFromFile load files: an unsized image whose header lies about its
      // size is read where it says, by NVIDIA's driver too.
      auto compiled = compileImage(b.data(), 9, 0, name, b.size());
      if (compiled) {
        ++loaded;
        EXPECT_TRUE(compiled->program);
      } else {
        ++refused;
        ASSERT_TRUE(isLoadError(compiled.error().code)) << name << " iteration " << iteration << ": code "
                                                        << compiled.error().code << " " << compiled.error().message;
        ASSERT_FALSE(compiled.error().message.empty());
      }
    }
  }
  EXPECT_GT(refused, 0);
  RecordProperty("loaded", loaded);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace cuemu
