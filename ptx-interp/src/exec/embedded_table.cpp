// Decoding of embedded measured tables (embedded_table.h).
#include "exec/embedded_table.h"

#include <zstd.h>

namespace ptx::exec::num {
namespace {

std::vector<uint8_t> decodeBase64(const char* text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;  // '=' padding ends the data
  };
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (const char* p = text; *p; ++p) {
    int v = value(*p);
    if (v < 0) break;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(acc >> bits));
    }
  }
  return out;
}

}  // namespace

std::vector<uint8_t> decodeEmbeddedTable(const char* base64, size_t bytesIfUnrecorded) {
  const std::vector<uint8_t> packed = decodeBase64(base64);
  unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) size = bytesIfUnrecorded;
  if (size == ZSTD_CONTENTSIZE_ERROR || size == 0 || size > (1ull << 30)) return {};
  std::vector<uint8_t> bytes(size);
  const size_t n = ZSTD_decompress(bytes.data(), bytes.size(), packed.data(), packed.size());
  if (ZSTD_isError(n) || n != bytes.size()) return {};
  return bytes;
}

}  // namespace ptx::exec::num
