// The GPU's rcp.approx.ftz.f64 table (see rcp64h_table.inc): decoded on first use.
#include "exec/embedded_table.h"
#include "exec/numerics.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ptx::exec::num {
namespace {
#include "exec/rcp64h_table.inc"

const std::vector<uint8_t>& corrections() {
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> bits = decodeEmbeddedTable(kRcp64hCorrections, kRcp64hBitmapBytes);
    // a build whose table does not decode falls back to the exact reciprocal's bits (all corrections zero)
    if (bits.size() != kRcp64hBitmapBytes) bits.assign(kRcp64hBitmapBytes, 0);
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
