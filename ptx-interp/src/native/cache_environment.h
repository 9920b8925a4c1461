// The native tier's on-disk cache as the environment sets it (docs/native-tier.md, "Cache"): read by the compiler
// (jit/compiler.cpp), which keeps code there, and by the tier's background compiler (tier.cpp), which hands code
// over through it or, where it is off, through a folder of its own.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ptx::exec::native {

constexpr uint64_t kDefaultCacheBytes = uint64_t(256) << 20;

// The cache's files: a compiled kernel, `<key>.o`, and the prepared handler bitcode, `<key>.prepared`.
constexpr const char* kKernelFileExtension = ".o";
constexpr const char* kPreparedFileExtension = ".prepared";
// held by a process while it compiles the kernel of that key (tier.cpp: CompileLock)
constexpr const char* kLockFileExtension = ".lock";

// A file's identity in a cache key: path, size and modification time (a rebuilt library or interpreter is another
// identity).
inline std::string fileIdentity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ":?";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// A kernel's file in the cache, `<key>.o`: this header, then the object code (an ELF relocatable object). Written by
// the compiler (jit/compiler.cpp), read by it and by the interpreter's loader (tier.cpp, object_loader.h).
// `objectHash` (objectHashOf) is the object code's: a file whose bytes changed on disk is found damaged before any
// part of it is used (its unwind tables, registered with the C++ runtime, are parsed only when an exception is thrown,
// anywhere in the process).
struct CacheHeader {
  char magic[8] = {'c', 'u', 'e', 'm', 'u', 'n', 't', '4'};
  uint32_t opsInlined = 0, opsCalled = 0, opsOverBudget = 0, reserved = 0;
  uint64_t objectHash = 0;
};

// FNV-1a, 64 bits: it detects damage (bits changed, a file cut or extended), not forgery; whoever can write the cache
// folder can put code there anyway.
inline uint64_t objectHashOf(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// The header of a cache file's bytes, where it is whole: its magic and the object's hash match; else false.
inline bool wholeCacheFile(const char* data, size_t bytes, CacheHeader& header) {
  if (bytes <= sizeof header || std::memcmp(data, header.magic, sizeof header.magic) != 0) return false;
  std::memcpy(&header, data, sizeof header);
  return objectHashOf(data + sizeof header, bytes - sizeof header) == header.objectHash;
}

struct CacheEnvironment {
  std::string dir;        // empty: the cache is off
  uint64_t maxBytes = 0;  // the folder's size limit
};

// CUEMU_NATIVE_CACHE_DISABLE, CUEMU_NATIVE_CACHE_MAXSIZE (0: off) and CUEMU_NATIVE_CACHE_PATH, else
// $XDG_CACHE_HOME/cuemu/native, else ~/.cache/cuemu/native.
inline CacheEnvironment cacheEnvironment() {
  CacheEnvironment c;
  const char* off = std::getenv("CUEMU_NATIVE_CACHE_DISABLE");
  if (off && std::strcmp(off, "0") != 0) return c;
  uint64_t maxBytes = kDefaultCacheBytes;
  if (const char* v = std::getenv("CUEMU_NATIVE_CACHE_MAXSIZE")) maxBytes = std::strtoull(v, nullptr, 10);
  if (maxBytes == 0) return c;
  if (const char* v = std::getenv("CUEMU_NATIVE_CACHE_PATH"); v && *v)
    c.dir = v;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    c.dir = std::string(x) + "/cuemu/native";
  else if (const char* h = std::getenv("HOME"); h && *h)
    c.dir = std::string(h) + "/.cache/cuemu/native";
  else
    return c;
  c.maxBytes = maxBytes;
  return c;
}

}  // namespace ptx::exec::native
