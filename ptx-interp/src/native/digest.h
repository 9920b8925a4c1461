// SHA-256 (FIPS 180-4): the native tier's cache keys (cache_key.cpp). A key names compiled code that a later process
// runs without compiling it, so two different kernels must never share one: a cryptographic digest, not a
// checksum. Written from the standard; no library on the dependency list provides one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptx::exec::native {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  void update(std::string_view s) { update(s.data(), s.size()); }
  template <class T> void value(const T& v) { update(&v, sizeof v); }  // a plain value's bytes
  // the digest as 64 lowercase hex digits; the object is spent afterwards
  std::string hex();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> state_;
  uint8_t pending_[64];
  size_t pendingBytes_ = 0;
  uint64_t totalBytes_ = 0;
};

}  // namespace ptx::exec::native
