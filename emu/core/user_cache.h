// The user's cache folder, where cuemu keeps what it caches in a folder `cuemu/`: `cuemu run`'s toolkit root and
// CuTe DSL folders (cli/launcher.cpp), the driver's companion PTX (core/companion_ptx.cpp). Header-only: the image
// parsers' fuzz build takes companion_ptx.cpp without the rest of the driver. (The interpreter's native-code cache
// finds the same folder itself: ptx-interp/src/native/cache_environment.h, which cannot include the driver's.)
#pragma once

#include <cstdlib>
#include <filesystem>

namespace cuemu {

// $XDG_CACHE_HOME, else ~/.cache; empty when neither is known.
inline std::filesystem::path userCacheFolder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return xdg;
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache";
  return {};
}

}  // namespace cuemu
