// ex2.approx, rcp.approx and rsqrt.approx on .f32 as an H100 computes them (mufu.h).
//
// Measured with tools/gpu-probe/mufu27 on every significand of the binades below and on random operands of all
// classes (2026-11-27, H100, driver 580.159.04; every recorded result reproduced):
// - rcp: 1/x's significand depends only on x's (one table of 2^23 results for [1, 2)); the exponent scales it.
//   Subnormal operands are normalised first (.ftz: read as zero); a subnormal result is the table's significand
//   shifted right and rounded to nearest even (.ftz: zero). 1/+-0 = +-inf, 1/+-inf = +-0, NaN gives the
//   canonical NaN.
// - rsqrt: a table of 2^24 results for [1, 4) (an even and an odd exponent); negative operands give NaN,
//   rsqrt(+-0) = +-inf, rsqrt(+inf) = +0.
// - ex2: the operand's magnitude is cut to 23 fraction bits (truncated), and positive and negative operands read
//   two different tables (2^(1 + f) and 2^-(1 + f) for the 2^23 fractions f): ex2(-x) is not 1/ex2(x) here. The
//   integer part scales the result. Without .ftz, an operand below -126 gives ex2(x/2) squared and rounded once
//   (how the GPU reaches subnormal results); with .ftz such results are zero.
// Each table stores, per segment of its index, a quadratic in integers and a correction of -1, 0 or +1 per entry
// (make_tables.py): the GPU's values come from an interpolation whose rounding no smooth function reproduces.
#include "exec/mufu.h"

#include "exec/embedded_table.h"
#include "exec/numerics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ptx::exec::num {
namespace {
#include "exec/mufu_tables.inc"

// The GPU's result bits for index k of one table: a binade's worth of results of one exponent (k = 0, a power of
// two, may be of another). The quadratic's value Q(k) (32 fraction bits) rounded to nearest is the GPU's result
// except for 1-3% of the indices (the exceptions: the GPU's result is then one unit to the other side of Q), all of
// them where Q's fraction is within 0.16-0.23 of one half (the zone: 33-45% of the indices).
// Kernels with random operands wait on memory for whatever a lookup reads, and on the machines measured only about
// 1 MB of cache answers fast (random reads of a 1 MB table: 12 ns each, of 8 MB: 220 ns). So a lookup reads as little
// as it can: nothing outside the zone; then one bit per block of 8 indices (128-256 KB a table: does the block hold
// an exception?); and only for the 8-22% of blocks that do, the block's own 8 exception bits, stored for those
// blocks alone (one byte each, found by the blocks' rank: 90-240 KB). A bitmap of every index (1-2 MB a table) made
// BlackScholes 3x slower than libm's exp2 did.
class MeasuredTable {
 public:
  explicit MeasuredTable(const char* text) {
    const std::vector<uint8_t> bytes = decodeEmbeddedTable(text);
    uint32_t header[4];
    if (bytes.size() < sizeof header) return;
    std::memcpy(header, bytes.data(), sizeof header);
    indexBits_ = header[0];
    segmentBits_ = header[1];
    exponent_ = header[2];
    first_ = header[3];
    const size_t segments = size_t(1) << segmentBits_, entries = size_t(1) << indexBits_;
    const size_t coefficientBytes = segments * 3 * sizeof(int64_t);
    if (indexBits_ < 9 || indexBits_ > 24 || segmentBits_ > indexBits_ ||
        bytes.size() != sizeof header + coefficientBytes + entries / 4)
      return;
    std::vector<int64_t> coefficients(segments * 3);
    std::memcpy(coefficients.data(), bytes.data() + sizeof header, coefficientBytes);
    constant_.resize(segments);
    linear_.resize(segments);
    square_.resize(segments);
    for (size_t i = 0; i < segments; ++i) {
      constant_[i] = coefficients[i * 3];
      linear_[i] = coefficients[i * 3 + 1];
      square_[i] = coefficients[i * 3 + 2];
    }
    const uint8_t* codes = bytes.data() + sizeof header + coefficientBytes;  // 2 bits each: correction + 1
    std::vector<uint64_t> blockHasException(entries / 8 / 64, 0);
    std::vector<uint32_t> blocksBefore(entries / 8 / 64, 0);
    std::vector<uint8_t> blockExceptions;
    uint32_t zone = 0;
    for (uint32_t k = 1; k < entries; ++k) {
      const int64_t correction = int64_t((codes[k >> 2] >> ((k & 3) * 2)) & 3) - 1;
      if (correction == 0) continue;
      const int32_t fromHalf = fractionLessHalf(quadratic(k));
      if (correction != (fromHalf < 0 ? 1 : -1)) return;  // not one unit to the other side of Q
      uint64_t& word = blockHasException[k >> 9];
      const uint64_t blockBit = uint64_t(1) << ((k >> 3) & 63);
      if (!(word & blockBit)) blockExceptions.push_back(0);  // indices ascend: blocks come in rank order
      word |= blockBit;
      blockExceptions.back() |= uint8_t(1u << (k & 7));
      zone = std::max(zone, distanceFromHalf(fromHalf));
    }
    uint32_t rank = 0;
    for (size_t w = 0; w < blockHasException.size(); ++w) {
      blocksBefore[w] = rank;
      rank += uint32_t(std::popcount(blockHasException[w]));
    }
    zone_ = zone;
    blockHasException_ = std::move(blockHasException);
    blocksBefore_ = std::move(blocksBefore);
    blockExceptions_ = std::move(blockExceptions);
  }

  uint32_t bits(uint32_t k) const {
    if (k == 0 || blockHasException_.empty()) return first_;
    const int64_t q = quadratic(k);
    const int32_t fromHalf = fractionLessHalf(q);
    uint32_t result = uint32_t((q + kHalf) >> 32);
    if (distanceFromHalf(fromHalf) <= zone_ && blockMayHoldException(k) && isException(k))
      result += fromHalf < 0 ? 1u : ~0u;
    return withExponent(result);
  }

  // bits() of the 32 lanes k[i] that `use` selects, into out[i] (other lanes are left as they are). Lane by lane,
  // the memory reads of bits() waited one after the other, behind branches no predictor learns (12 ns a lookup in
  // BM_SpecialFunctions). Here the arithmetic of all lanes comes first, vectorised; then the block bits of the
  // lanes in the zone; then the exception bytes of the lanes whose block holds one: each pass issues independent
  // loads, and the lanes of the next pass are a mask built without branches.
  void bitsOfWarp(const uint32_t* k, uint32_t use, uint32_t* out) const;

  bool blockMayHoldException(uint32_t k) const { return blockHasException_[k >> 9] >> ((k >> 3) & 63) & 1; }
  // (k's block holds an exception)
  bool isException(uint32_t k) const {
    const uint64_t word = blockHasException_[k >> 9], below = (uint64_t(1) << ((k >> 3) & 63)) - 1;
    return blockExceptions_[blocksBefore_[k >> 9] + uint32_t(std::popcount(word & below))] >> (k & 7) & 1;
  }
  uint32_t withExponent(uint32_t result) const { return exponent_ << 23 | (result & 0x7fffff); }

 private:
  static constexpr int64_t kHalf = int64_t(1) << 31;

  // Q(k) with 32 fraction bits
  int64_t quadratic(uint32_t k) const {
    const uint32_t lowBits = indexBits_ - segmentBits_;
    const size_t segment = k >> lowBits;
    const int64_t x = int64_t(k & ((1u << lowBits) - 1));
    return constant_[segment] + linear_[segment] * x + square_[segment] * x * x;
  }
  // Q's fraction (its low 32 bits) less one half: an exception's correction goes up where this is negative, and
  // only fractions within zone_ of one half hold exceptions.
  static int32_t fractionLessHalf(int64_t q) { return int32_t(uint32_t(q) ^ 0x80000000u); }
  static uint32_t distanceFromHalf(int32_t fromHalf) {
    return fromHalf < 0 ? 0u - uint32_t(fromHalf) : uint32_t(fromHalf);
  }

  uint32_t indexBits_ = 0, segmentBits_ = 0, exponent_ = 0, first_ = 0, zone_ = 0;
  std::vector<int64_t> constant_, linear_, square_;  // per segment: Q's coefficients
  std::vector<uint64_t> blockHasException_;          // a bit per block of 8 indices
  std::vector<uint32_t> blocksBefore_;    // per word of blockHasException_: the blocks with a bit in words before
  std::vector<uint8_t> blockExceptions_;  // per block with an exception, in index order: a bit per index
};

// Each decoded on first use (tens of milliseconds).
const MeasuredTable& rcpTable() {
  static const MeasuredTable t(kRcpTable);
  return t;
}
const MeasuredTable& rsqrtTable() {
  static const MeasuredTable t(kRsqrtTable);
  return t;
}
const MeasuredTable& ex2Table(bool negative) {
  static const MeasuredTable* const tables =
      new MeasuredTable[2]{MeasuredTable(kEx2PositiveTable), MeasuredTable(kEx2NegativeTable)};
  return tables[negative];
}

PTX_LANES void MeasuredTable::bitsOfWarp(const uint32_t* k, uint32_t use, uint32_t* out) const {
  if (blockHasException_.empty()) {  // not decoded
    for (int i = 0; i < 32; ++i)
      if (use >> i & 1) out[i] = first_;
    return;
  }
  const uint32_t lowBits = indexBits_ - segmentBits_, lowMask = (1u << lowBits) - 1;
  const int64_t *c0 = constant_.data(), *c1 = linear_.data(), *c2 = square_.data();
  uint32_t rounded[32], inZone[32];
  int32_t fromHalf[32];
  for (int i = 0; i < 32; ++i) {  // vectorised (gathers of the coefficients)
    const uint32_t segment = k[i] >> lowBits;
    const int64_t x = int64_t(k[i] & lowMask);
    const int64_t q = c0[segment] + c1[segment] * x + c2[segment] * x * x;
    rounded[i] = uint32_t((q + kHalf) >> 32);
    fromHalf[i] = fractionLessHalf(q);
    inZone[i] = uint32_t(distanceFromHalf(fromHalf[i]) <= zone_ && k[i] != 0);
  }
  uint32_t zoneLanes = 0, blockLanes = 0;
  for (int i = 0; i < 32; ++i) zoneLanes |= inZone[i] << i;
  zoneLanes &= use;
  for (uint32_t m = zoneLanes; m; m &= m - 1) {
    const int i = std::countr_zero(m);
    blockLanes |= uint32_t(blockMayHoldException(k[i])) << i;
  }
  for (uint32_t m = blockLanes; m; m &= m - 1) {
    const int i = std::countr_zero(m);
    rounded[i] += isException(k[i]) ? (fromHalf[i] < 0 ? 1u : ~0u) : 0u;
  }
  for (int i = 0; i < 32; ++i) out[i] = !(use >> i & 1) ? out[i] : k[i] == 0 ? first_ : withExponent(rounded[i]);
}

// The lanes left out of `use`: f lane by lane.
template <class F> void eachLaneOutside(uint32_t use, F f) {
  for (uint32_t rest = ~use; rest; rest &= rest - 1) f(std::countr_zero(rest));
}

constexpr uint32_t kInf = 0x7f800000u, kNaN = kCanonicalNaN32, kSign = 0x80000000u;

// CUEMU_SPECIAL_FUNCTIONS=host: the host's correctly rounded functions instead of the GPU's tables (faster for
// random operands, which make the table lookups wait on memory; within the ISA's error bounds, not bit-exact).
bool hostModel() {
  static const bool host = [] {
    const char* v = std::getenv("CUEMU_SPECIAL_FUNCTIONS");
    return v && std::strcmp(v, "host") == 0;
  }();
  return host;
}
uint32_t hostFunction(uint32_t x, bool ftz, double (*f)(double)) {
  const float a = std::bit_cast<float>(x);
  const float r = canon(float(f(double(ftz ? flush(a) : a))));
  return std::bit_cast<uint32_t>(ftz ? flush(r) : r);
}

// A significand with its implicit bit (24 bits) at unbiased exponent e < -126, as a subnormal rounded to nearest
// even.
uint32_t subnormal(uint32_t significand, int e) {
  const int shift = -126 - e;
  if (shift > 25) return 0;
  const uint32_t q = significand >> shift, rest = significand & ((1u << shift) - 1), half = (1u << shift) >> 1;
  return q + (rest > half || (rest == half && (q & 1)));
}

// x's unbiased exponent and 23 fraction bits, subnormals normalised (x finite and not zero).
void normalise(uint32_t x, int& exponent, uint32_t& fraction) {
  const uint32_t e = (x >> 23) & 0xff, m = x & 0x7fffff;
  if (e != 0) {
    exponent = int(e) - 127;
    fraction = m;
    return;
  }
  const int shift = std::countl_zero(m) - 8;
  exponent = -126 - shift;
  fraction = (m << shift) & 0x7fffff;
}

}  // namespace

uint32_t rcpApproxF32(uint32_t x, bool ftz) {
  if (hostModel()) return hostFunction(x, ftz, [](double v) { return 1.0 / v; });
  const uint32_t sign = x & kSign, e = (x >> 23) & 0xff, m = x & 0x7fffff;
  if (e == 255) return m ? kNaN : sign;
  if (e == 0 && (m == 0 || ftz)) return sign | kInf;
  int exponent;
  uint32_t fraction;
  normalise(x, exponent, fraction);
  const uint32_t t = rcpTable().bits(fraction);
  const int r = int((t >> 23) & 0xff) - 127 - exponent;
  if (r >= 128) return sign | kInf;
  if (r < -126) return ftz ? sign : sign | subnormal((t & 0x7fffff) | 0x800000, r);
  return sign | uint32_t(r + 127) << 23 | (t & 0x7fffff);
}

uint32_t rsqrtApproxF32(uint32_t x, bool ftz) {
  if (hostModel()) return hostFunction(x, ftz, [](double v) { return 1.0 / std::sqrt(v); });
  const uint32_t sign = x & kSign, e = (x >> 23) & 0xff, m = x & 0x7fffff;
  if (e == 255) return m || sign ? kNaN : 0;
  if (e == 0 && (m == 0 || ftz)) return sign | kInf;
  if (sign) return kNaN;
  int exponent;
  uint32_t fraction;
  normalise(x, exponent, fraction);
  const uint32_t odd = uint32_t(exponent) & 1;
  const uint32_t t = rsqrtTable().bits(odd << 23 | fraction);
  const int r = int((t >> 23) & 0xff) - 127 - (exponent - int(odd)) / 2;
  return uint32_t(r + 127) << 23 | (t & 0x7fffff);
}

uint32_t ex2ApproxF32(uint32_t x, bool ftz) {
  if (hostModel()) return hostFunction(x, ftz, [](double v) { return std::exp2(v); });
  const uint32_t e = (x >> 23) & 0xff, m = x & 0x7fffff;
  const bool negative = (x & kSign) != 0;
  if (e == 255) return m ? kNaN : negative ? 0 : kInf;
  if (!ftz && x > 0xc2fc0000u) {                        // below -126 (a negative NaN returned above): ex2(x/2)^2
    const float half = std::bit_cast<float>(x) * 0.5f;  // exact
    const double root = double(std::bit_cast<float>(ex2ApproxF32(std::bit_cast<uint32_t>(half), true)));
    return std::bit_cast<uint32_t>(float(root * root));  // the product is exact in double: one rounding
  }
  if (e >= 135) return negative ? 0 : kInf;  // |x| >= 256
  // |x| with 23 fraction bits, truncated (subnormal and small operands give 0)
  const uint32_t significand = m | 0x800000;
  const uint32_t fixed = e >= 127 ? significand << (e - 127) : e >= 103 ? significand >> (127 - e) : 0;
  const uint32_t integer = fixed >> 23;
  const uint32_t t = ex2Table(negative).bits(fixed & 0x7fffff);
  const int biased = int((t >> 23) & 0xff) + (negative ? 1 - int(integer) : int(integer) - 1);
  if (biased >= 255) return kInf;
  if (biased <= 0) return ftz ? 0 : subnormal((t & 0x7fffff) | 0x800000, biased - 127);
  return uint32_t(biased) << 23 | (t & 0x7fffff);
}

namespace {
// CUEMU_SPECIAL_FUNCTIONS=host for the warp forms: every lane through the lane form.
bool hostModelOfWarp(const uint32_t* x, uint32_t* out, bool ftz, uint32_t (*lane)(uint32_t, bool)) {
  if (!hostModel()) return false;
  for (int i = 0; i < 32; ++i) out[i] = lane(x[i], ftz);
  return true;
}
}  // namespace

// The warp forms: the lanes whose results are normal numbers from the table's binade go through bitsOfWarp; the
// others (zeros, subnormals, infinities, NaNs, results out of range) lane by lane, as above.
PTX_LANES void rcpApproxF32(const uint32_t* x, uint32_t* out, bool ftz) {
  if (hostModelOfWarp(x, out, ftz, &rcpApproxF32)) return;
  uint32_t k[32], use = 0;
  for (int i = 0; i < 32; ++i) {
    k[i] = x[i] & 0x7fffff;
    use |= uint32_t(((x[i] >> 23) & 0xff) - 1 < 252) << i;  // exponent fields 1-252: a normal reciprocal
  }
  std::fill_n(out, 32, 0u);  // the lanes out of use are written below
  rcpTable().bitsOfWarp(k, use, out);
  for (int i = 0; i < 32; ++i) {
    const uint32_t biased = ((out[i] >> 23) & 0xff) + 127 - ((x[i] >> 23) & 0xff);
    out[i] = (x[i] & kSign) | biased << 23 | (out[i] & 0x7fffff);
  }
  eachLaneOutside(use, [&](int i) { out[i] = rcpApproxF32(x[i], ftz); });
}

PTX_LANES void rsqrtApproxF32(const uint32_t* x, uint32_t* out, bool ftz) {
  if (hostModelOfWarp(x, out, ftz, &rsqrtApproxF32)) return;
  uint32_t k[32], use = 0;
  for (int i = 0; i < 32; ++i) {
    const uint32_t e = (x[i] >> 23) & 0xff;
    k[i] = ((e + 1) & 1) << 23 | (x[i] & 0x7fffff);  // an odd unbiased exponent is an even field
    use |= uint32_t(x[i] < kInf && e != 0) << i;     // positive normal numbers
  }
  std::fill_n(out, 32, 0u);  // the lanes out of use are written below
  rsqrtTable().bitsOfWarp(k, use, out);
  for (int i = 0; i < 32; ++i) {
    // the result's exponent: the table's less half of x's (even) unbiased exponent, rounded down
    const int halfExponent = (int((x[i] >> 23) & 0xff) - 127) >> 1;
    out[i] = uint32_t(int((out[i] >> 23) & 0xff) - halfExponent) << 23 | (out[i] & 0x7fffff);
  }
  eachLaneOutside(use, [&](int i) { out[i] = rsqrtApproxF32(x[i], ftz); });
}

PTX_LANES void ex2ApproxF32(const uint32_t* x, uint32_t* out, bool ftz) {
  if (hostModelOfWarp(x, out, ftz, &ex2ApproxF32)) return;
  uint32_t k[32], integer[32], use = 0, negative = 0;
  for (int i = 0; i < 32; ++i) {
    const uint32_t e = (x[i] >> 23) & 0xff, significand = (x[i] & 0x7fffff) | 0x800000;
    const uint32_t left = significand << ((e - 127) & 31), right = significand >> ((127 - e) & 31);
    const uint32_t fixed = e >= 127 ? left : e >= 103 ? right : 0;  // |x| with 23 fraction bits (|x| < 256)
    k[i] = fixed & 0x7fffff;
    integer[i] = fixed >> 23;
    negative |= (x[i] >> 31) << i;
    use |= uint32_t(e < 135 && (ftz || x[i] <= 0xc2fc0000u)) << i;  // |x| < 256; without .ftz, x >= -126
  }
  std::fill_n(out, 32, 0u);  // the lanes out of use are written below
  if (use & ~negative) ex2Table(false).bitsOfWarp(k, use & ~negative, out);
  if (use & negative) ex2Table(true).bitsOfWarp(k, use & negative, out);
  uint32_t outOfRange = 0;
  for (int i = 0; i < 32; ++i) {
    const int scale = x[i] >> 31 ? 1 - int(integer[i]) : int(integer[i]) - 1;
    const int biased = int((out[i] >> 23) & 0xff) + scale;
    outOfRange |= uint32_t(biased <= 0 || biased >= 255) << i;
    out[i] = uint32_t(biased) << 23 | (out[i] & 0x7fffff);
  }
  eachLaneOutside(use & ~outOfRange, [&](int i) { out[i] = ex2ApproxF32(x[i], ftz); });
}

}  // namespace ptx::exec::num
