// The GPU's rcp.approx.ftz.f64 table (see rcp64h_table.inc): decoded on first use.
#include "exec/numerics.h"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ptx::exec::num {
namespace {
#include "exec/rcp64h_table.inc"

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

const std::vector<uint8_t>& corrections() {
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> packed = decodeBase64(kRcp64hCorrections);
    std::vector<uint8_t> bits(kRcp64hBitmapBytes, 0);
    size_t n = ZSTD_decompress(bits.data(), bits.size(), packed.data(), packed.size());
    // a build whose table does not decode falls back to the exact reciprocal's bits (all corrections zero)
    if (ZSTD_isError(n) || n != bits.size()) std::fill(bits.begin(), bits.end(), 0);
    return bits;
  }();
  return table;
}
}  // namespace

uint32_t rcp64hUpperWord(uint32_t significand) {
  significand &= 0xfffff;
  const double x = 1.0 + double(significand) * 0x1p-20;
  uint64_t exact;
  const double r = 1.0 / x;
  std::memcpy(&exact, &r, sizeof exact);
  const uint32_t bit = (corrections()[significand >> 3] >> (significand & 7)) & 1;
  return uint32_t(exact >> 32) + bit;
}

}  // namespace ptx::exec::num
