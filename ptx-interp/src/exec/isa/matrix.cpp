// Warp matrix instructions (OpClass Matrix): mma.sync (dense and sparse), wmma.load/store/mma, ldmatrix, stmatrix,
// movmatrix.
//
// A matrix instruction works on the fragments of all 32 lanes at once: the handler gathers every lane's fragment
// registers into whole matrices, multiplies, and scatters the result back. Where each lane's registers sit in the
// matrices is the ISA's fragment layout for mma/ldmatrix/stmatrix/movmatrix, and what an H100 does for wmma (the ISA
// leaves it unspecified; recorded with the ptx.matrix.wmma_layout_* conformance cases).
//
// Numerics (recorded on an H100, conformance/golden/, ptx.matrix.* cases): integer and b1 forms are exact (wrapping,
// or clamped with .satfinite); f64 is an IEEE fma chain; the 16-bit, tf32 and fp8 forms sum the way the tensor core
// does (TensorSum below), which is not a chain of IEEE fmas.
#include "exec/isa/matrix.h"

#include "exec/lowerer.h"

namespace ptx::exec {

using namespace matrix;

namespace {

using h::R;

// 8-bit floats (OCP FP8) as doubles, exact.
double fp8Value(uint32_t bits, bool e5m2) {
  const int mbits = e5m2 ? 2 : 3, ebits = e5m2 ? 5 : 4, bias = e5m2 ? 15 : 7;
  const uint32_t sign = (bits >> 7) & 1, exp = (bits >> mbits) & ((1u << ebits) - 1), man = bits & ((1u << mbits) - 1);
  double v;
  if (e5m2 && exp == 31)
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (!e5m2 && exp == 15 && man == 7)
    v = std::numeric_limits<double>::quiet_NaN();
  else if (exp == 0)
    v = std::ldexp(double(man), 1 - bias - mbits);
  else
    v = std::ldexp(double(man | (1u << mbits)), int(exp) - bias - mbits);
  return sign ? -v : v;
}

// The 4- and 6-bit floats of the sm_120 .kind forms (OCP MX: no infinity, no NaN) and the unsigned scale-factor
// types, as doubles, exact. An e2m1 in a byte sits in bits 5:2, an e2m3 or e3m2 in bits 5:0: the placement CUTLASS
// gives the registers of its sm_120 mma (ldmatrix's .b6x16_p32 result feeds the mma as it is, the .b4x16_p64 one,
// which puts the e2m1 in bits 3:0, shifted left by two).
using num::miniFloatValue;
double scaleValue(Elem e, uint32_t bits) {
  if (e == Elem::UE8M0)
    return bits == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(bits) - 127);
  // ue4m3: e4m3 without its sign bit (bit 7 is not read); 0x7f is the NaN
  bits &= 0x7f;
  if (bits == 0x7f) return std::numeric_limits<double>::quiet_NaN();
  return miniFloatValue(bits, 4, 3);
}

inline double floatValue(Elem e, uint64_t bits) {
  switch (e) {
    case Elem::E2M1: return miniFloatValue(uint32_t(bits) & 0xf, 2, 1);
    case Elem::E2M1x8: return miniFloatValue((uint32_t(bits) >> 2) & 0xf, 2, 1);
    case Elem::E2M3x8: return miniFloatValue(uint32_t(bits) & 0x3f, 2, 3);
    case Elem::E3M2x8: return miniFloatValue(uint32_t(bits) & 0x3f, 3, 2);
    case Elem::UE8M0:
    case Elem::UE4M3: return scaleValue(e, uint32_t(bits));
    case Elem::F16: return num::halfToFloat(uint16_t(bits));
    case Elem::BF16: return std::bit_cast<float>(uint32_t(bits) << 16);
    // the tensor core reads the 19 high bits of a tf32 operand (sign, 8 exponent, 10 mantissa)
    case Elem::TF32: return std::bit_cast<float>(uint32_t(bits) & 0xffffe000u);
    case Elem::F32: return std::bit_cast<float>(uint32_t(bits));
    case Elem::F64: return std::bit_cast<double>(bits);
    case Elem::E4M3: return fp8Value(uint32_t(bits), false);
    case Elem::E5M2: return fp8Value(uint32_t(bits), true);
    default: return 0;
  }
}

int64_t intValue(Elem e, uint64_t bits) {
  switch (e) {
    case Elem::S8: return int8_t(bits);
    case Elem::S4: return int64_t(bits << 60) >> 60;
    case Elem::S32: return int32_t(bits);
    default: return int64_t(bits);
  }
}

// ---- fragment layouts: (row, column) of element e of lane l's fragment -------------------------------------------

// mma (PTX ISA "Matrix fragments for mma.m16n8k*" and m8n8k*): p elements per 32-bit register (per 64-bit one for
// f64). A and C/D: matrix.h (mmaA, mmaC). B: K rows p*t..p*t+p-1 per register in groups of 4p, column g.
Pos mmaB(unsigned l, unsigned e, unsigned p) {
  unsigned g = l >> 2, t = l & 3, r = e / p, i = e % p;
  return {p * t + 4 * p * r + i, g};
}
}  // namespace

namespace {

// wmma as an H100 lays it out (recorded by the ptx.matrix.wmma_layout_* cases): the tiles are made of mma fragments.
// A (M x K): M/16 blocks of m16 fragments, stacked down (an 8-row matrix: one m8 fragment); B (K x N): N/8 blocks of
// one mma B fragment each; C (M x N): blocks of 16x8 (8x8 for M = 8) mma accumulators, along N first. m8n32k16 is
// m32n8k16 transposed: its A is the transpose of m32n8k16's B, its B of m32n8k16's A, its C of m32n8k16's C.
// Fragments of .f16 multiplicands hold more elements than the tile has per lane (8 registers for a 16x16 A, the
// Volta layout's size): element e repeats element e mod (elements per lane).
Pos wmmaA(unsigned l, unsigned e, unsigned p, unsigned m, unsigned k) {
  unsigned rowsPerBlock = m == 8 ? 8 : 16, perBlock = rowsPerBlock * k / 32, blk = e / perBlock;
  Pos q = mmaA(l, e % perBlock, p, rowsPerBlock);
  return {q.row + rowsPerBlock * blk, q.col};
}
Pos wmmaB(unsigned l, unsigned e, unsigned p, unsigned k) {
  unsigned perBlock = k * 8 / 32, blk = e / perBlock;
  Pos q = mmaB(l, e % perBlock, p);
  return {q.row, q.col + 8 * blk};
}
Pos wmmaC(unsigned l, unsigned e, unsigned m, unsigned n) {
  unsigned rowsPerBlock = m == 8 ? 8 : 16, perBlock = rowsPerBlock * 8 / 32, blk = e / perBlock;
  unsigned colBlocks = n / 8;
  Pos q = mmaC(l, e % perBlock);
  return {q.row + rowsPerBlock * (blk / colBlocks), q.col + 8 * (blk % colBlocks)};
}
unsigned regBits(Elem e) { return e == Elem::F64 ? 64 : 32; }
unsigned perReg(Elem e) { return regBits(e) / elemBits(e); }

// Rows x columns of a fragment role.
Pos roleShape(const MatrixSite& s, Role r) {
  switch (r) {
    case A: return {s.m, s.k};
    case B: return {s.k, s.n};
    default: return {s.m, s.n};
  }
}

Pos wmmaPos(Role role, unsigned l, unsigned e, unsigned p, unsigned m, unsigned n, unsigned k) {
  if (m == 8 && n == 32) {
    Pos q = wmmaPos(role == A ? B : role == B ? A : role, l, e, p, 32, 8, k);
    return {q.col, q.row};
  }
  switch (role) {
    case A: return wmmaA(l, e, p, m, k);
    case B: return wmmaB(l, e, p, k);
    default: return wmmaC(l, e, m, n);
  }
}

Pos elemPos(const MatrixSite& s, Role role, unsigned lane, unsigned e) {
  Elem el = Elem(s.elem[role]);
  unsigned p = perReg(el);
  if (s.flags & kFlagWmma) {
    Pos shape = roleShape(s, role);
    return wmmaPos(role, lane, e % (shape.row * shape.col / 32), p, s.m, s.n, s.k);
  }
  switch (role) {
    case A: return mmaA(lane, e, p, s.m);
    case B: return mmaB(lane, e, p);
    default: return mmaC(lane, e);
  }
}

// The layout table of fragment slot `slot` (MatrixSite::index), whose registers follow role `layout`'s layout.
std::vector<uint16_t> layoutTable(const MatrixSite& s, unsigned slot, Role layout) {
  const unsigned p = perReg(Elem(s.elem[layout])), cols = roleShape(s, layout).col;
  std::vector<uint16_t> t(size_t(s.count[slot]) * 32 * p);
  for (unsigned r = 0; r < s.count[slot]; ++r)
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < p; ++i) {
        Pos q = elemPos(s, layout, l, r * p + i);
        t[(r * 32 + l) * p + i] = uint16_t(q.row * cols + q.col);
      }
  return t;
}

// Gathers fragment slot `slot` of the 32 lanes into a row-major matrix of bit patterns.
void gather(Warp& w, const MatrixSite& s, unsigned slot, uint64_t* out) {
  const Elem el = Elem(s.elem[slot]);
  const unsigned bits = elemBits(el), p = perReg(el);
  const uint16_t* index = s.index[slot].data();
  for (unsigned r = 0; r < s.count[slot]; ++r) {
    if (regBits(el) == 64) {
      const uint64_t* v = R<uint64_t>(w, s.regs[slot][r]);
      for (unsigned l = 0; l < 32; ++l) out[index[r * 32 + l]] = v[l];
      continue;
    }
    const uint32_t* v = R<uint32_t>(w, s.regs[slot][r]);
    const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < p; ++i) out[index[(r * 32 + l) * p + i]] = (v[l] >> (i * bits)) & mask;
  }
}

// Writes a row-major matrix of bit patterns into fragment slot `slot` of the executing lanes.
void scatter(Warp& w, const MatrixSite& s, unsigned slot, const uint64_t* in) {
  const Elem el = Elem(s.elem[slot]);
  const unsigned bits = elemBits(el), p = perReg(el);
  const uint16_t* index = s.index[slot].data();
  for (unsigned r = 0; r < s.count[slot]; ++r) {
    if (regBits(el) == 64) {
      alignas(64) uint64_t v[32];
      for (unsigned l = 0; l < 32; ++l) v[l] = in[index[r * 32 + l]];
      h::store<uint64_t>(w, s.regs[slot][r], [&](int l) { return v[l]; });
      continue;
    }
    const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t word = 0;
      for (unsigned i = 0; i < p; ++i) word |= (uint32_t(in[index[(r * 32 + l) * p + i]]) & mask) << (i * bits);
      v[l] = word;
    }
    h::store<uint32_t>(w, s.regs[slot][r], [&](int l) { return v[l]; });
  }
}

// gather and scatter for fragments of 16- or 32-bit elements (Bits), as 32-bit bit patterns: the element loops
// unrolled, for the narrow path's operands.
// Where a wmma fragment repeats its elements (.f16 A and B: 8 registers for 4 registers' worth), the later copy of
// an element is the one gather() leaves in the matrix; only those registers are read here, for the same result.
template <unsigned Bits> void gatherBits(Warp& w, const MatrixSite& s, unsigned slot, uint32_t* out) {
  constexpr unsigned p = 32 / Bits;
  constexpr uint32_t mask = Bits == 32 ? ~0u : (1u << Bits) - 1;
  const Pos shape = roleShape(s, Role(slot));
  const unsigned count = s.count[slot], distinct = std::min(count, shape.row * shape.col / (32 * p));
  const uint16_t* index = s.index[slot].data() + size_t(count - distinct) * 32 * p;
  for (unsigned r = count - distinct; r < count; ++r, index += 32 * p) {
    const uint32_t* v = R<uint32_t>(w, s.regs[slot][r]);
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < p; ++i) out[index[l * p + i]] = (v[l] >> (i * Bits)) & mask;
  }
}
template <unsigned Bits> void scatterBits(Warp& w, const MatrixSite& s, unsigned slot, const uint32_t* in) {
  constexpr unsigned p = 32 / Bits;
  const uint16_t* index = s.index[slot].data();
  for (unsigned r = 0; r < s.count[slot]; ++r, index += 32 * p) {
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t word = 0;
      for (unsigned i = 0; i < p; ++i) word |= in[index[l * p + i]] << (i * Bits);
      v[l] = word;
    }
    h::storeLanes<uint32_t>(w, s.regs[slot][r], v);
  }
}

// ---- the tensor core's sum -------------------------------------------------------------------------------------

// How the tensor core adds products of 16-bit, tf32 and fp8 operands to an f32 accumulator, as measured on an H100
// (the ptx.matrix.mma golden outputs: every finite one of the f16, bf16 and tf32 forms; the structured inputs of
// tools/gpu-probe/matrix18.cpp, results/matrix18-h100-2026-11-26.txt): the products are exact. Each product's
// exponent is the sum of its factors' exponents (its significand, a product of two in [1, 2), lies in [1, 4)); the
// largest of those and the accumulator's exponent (a subnormal counting with its format's smallest normal exponent),
// e, sets the grid 2^(e - 25) to which the products and the
// accumulator are truncated toward zero; the truncated terms are summed exactly and the sum is rounded to f32 toward
// zero. All K products take part in one such step, except in wmma.m16n16k8 .tf32, which takes two steps of four,
// rounding in between. Subnormals are kept; a zero sum is +0; a sum from 2^128 on overflows to infinity.
// fp8 forms (mma m16n8k32/m16n8k16, mma.sp m16n8k64, wgmma k32) sum in two such steps and add C last (fp8Sum).
struct TensorSum {
  unsigned group = 16;
  int fracBits = 25;
  bool truncate = true;
};

constexpr TensorSum kTensorSum{16, 25, true};
constexpr TensorSum kTensorSumFp8{32, 25, false};
constexpr TensorSum kTensorSumWgmmaFp8{32, 13, true};

// A sum at or beyond 2^128 overflows to infinity in either rounding (the H100's bf16/tf32 outputs).
// A sum that rounds to zero is +0 (the H100 sums in fixed point).
float toF32(double x, bool truncate) {
  float f = float(x);
  // rounded away from zero: the next float toward zero (f is not zero here, and not an infinity)
  if (truncate && !std::isinf(f) && std::fabs(double(f)) > std::fabs(x))
    f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) - 1);
  return f == 0 ? 0.0f : f;
}

// The operands here (f32 accumulators, products of 8- to 19-bit floats) are normal doubles or zero: their exponent
// is the double's exponent field, and scaling by powers of two is exact.
inline int exponentOf(double x) { return int((std::bit_cast<uint64_t>(x) >> 52) & 0x7ff) - 1023; }
inline double pow2(int e) { return std::bit_cast<double>(uint64_t(e + 1023) << 52); }

uint16_t plusZero(uint16_t half) { return (half & 0x7fff) == 0 ? 0 : half; }

// The exponent a value counts with in the alignment: a subnormal's is its format's smallest normal exponent.
inline int alignExponent(Elem e, double x) {
  int emin = e == Elem::F16 || e == Elem::E5M2 ? -14 : e == Elem::E4M3 ? -6 : -126;
  return std::max(exponentOf(x), emin);
}

// prods: the exact products; pexp: each one's alignment exponent (the sum of its factors' exponents; ignored
// where the product is zero). Returns the last group's exact sum (the caller rounds it to the destination type:
// f32 as the model says, f16 to nearest, as an H100 does, without an f32 step); NaN for an invalid sum.
double tensorSum(const double* prods, const int* pexp, unsigned n, float c, int cexp, const TensorSum& m) {
  double acc = c;
  for (unsigned first = 0; first < n; first += m.group) {
    if (first) acc = toF32(acc, m.truncate);
    const unsigned cnt = std::min(m.group, n - first);
    const double* p = prods + first;
    const int* pe = pexp + first;
    // specials: NaN anywhere, or infinities of both signs, give NaN; an infinity otherwise wins
    bool special = exponentOf(acc) == 1024;
    int emax = acc == 0 ? INT32_MIN : first ? exponentOf(acc) : cexp;
    for (unsigned k = 0; k < cnt; ++k) {
      special |= exponentOf(p[k]) == 1024;
      if (p[k] != 0) emax = std::max(emax, pe[k]);
    }
    if (special) {
      bool nan = acc != acc, pos = acc == INFINITY, neg = acc == -INFINITY;
      for (unsigned k = 0; k < cnt; ++k) {
        nan |= p[k] != p[k];
        pos |= p[k] == INFINITY;
        neg |= p[k] == -INFINITY;
      }
      if (nan || (pos && neg)) return std::numeric_limits<double>::quiet_NaN();
      acc = pos ? INFINITY : -INFINITY;
      continue;
    }
    if (emax == INT32_MIN) {  // all terms zero: +0 (the sum is an integer sum)
      acc = 0;
      continue;
    }
    const int scale = emax - m.fracBits;
    const double down = pow2(-scale);
    // each term to a multiple of 2^scale, toward zero (the conversion truncates); |term| < 2^(fracBits+2)
    int64_t sum = int64_t(acc * down);
    for (unsigned k = 0; k < cnt; ++k) sum += int64_t(p[k] * down);
    acc = double(sum) * pow2(scale);
  }
  return acc;
}

// The fp8 sum, as fitted to the H100's golden outputs of every finite f32-output fp8 mma (7289 of them, 0 differ):
// the products with k mod 4 < 2 form one fixed-point sum (grid 2^(e-25), as above) truncated to f32; that value
// and the other products form a second one, truncated to f32 again; C is added to it last, rounded to nearest by
// the caller. With .f16 outputs the two steps round to f16 (to nearest) instead, and each step settles its own
// infinities and NaNs (below); all 1600 m16n8k32_f16_e5m2 golden words match. With f32 outputs an infinity or NaN
// among the terms follows tensorSum's rules.
double fp8Sum(const double* prods, const int* pexp, unsigned n, float c, int cexp, const TensorSum& m, bool halfOut) {
  bool special = exponentOf(double(c)) == 1024;
  for (unsigned k = 0; k < n; ++k) special |= exponentOf(prods[k]) == 1024;
  if (special && !halfOut) return tensorSum(prods, pexp, n, c, cexp, m);
  auto fixedSum = [&](double first, bool second) -> double {
    int emax = first != 0 ? std::max(exponentOf(first), halfOut ? -14 : -126) : INT32_MIN;
    for (unsigned k = 0; k < n; ++k)
      if ((k % 4 >= 2) == second && prods[k] != 0) emax = std::max(emax, pexp[k]);
    if (emax == INT32_MIN) return 0.0;
    const int scale = emax - m.fracBits;
    const double down = pow2(-scale);
    int64_t sum = int64_t(first * down);
    for (unsigned k = 0; k < n; ++k)
      if ((k % 4 >= 2) == second) sum += int64_t(prods[k] * down);
    const double exact = double(sum) * pow2(scale);
    return halfOut ? double(num::halfToFloat(num::doubleToHalf(exact, num::RN))) : double(toF32(exact, true));
  };
  // With .f16 outputs each step is a term of the next, and an infinity or NaN among a step's terms decides it as in
  // tensorSum; so a first step that overflowed f16 meets an opposite infinity of the second as a NaN (measured: the
  // ptx.matrix.mma golden outputs of m16n8k32_f16_e5m2).
  auto step = [&](double first, bool second) -> double {
    bool nan = first != first, pos = first == INFINITY, neg = first == -INFINITY;
    for (unsigned k = 0; k < n; ++k)
      if ((k % 4 >= 2) == second) {
        nan |= prods[k] != prods[k];
        pos |= prods[k] == INFINITY;
        neg |= prods[k] == -INFINITY;
      }
    if (nan || (pos && neg)) return std::numeric_limits<double>::quiet_NaN();
    if (pos || neg) return pos ? INFINITY : -INFINITY;
    return fixedSum(first, second);
  };
  const double low = step(0, false);
  const double both = step(low, true);
  return both + double(c);
}

// Exponent stand-ins: a zero never sets the grid; an infinity or NaN sends its output to tensorSum.
// (A zero times an infinity still counts as special: 2^24 - 2^22 is past the threshold 2^23.)
constexpr int kZeroExponent = -(1 << 22), kSpecialExponent = 1 << 24;

inline int fixedPointExponent(Elem e, double x) {
  return x == 0 ? kZeroExponent : exponentOf(x) == 1024 ? kSpecialExponent : alignExponent(e, x);
}

// Values and fixed-point exponents of n elements of type E (the switch on the type hoisted out of the loop).
template <Elem E> void decodeFloats(const uint64_t* bits, unsigned n, double* v, int* e) {
  for (unsigned q = 0; q < n; ++q) {
    v[q] = floatValue(E, bits[q]);
    e[q] = fixedPointExponent(E, v[q]);
  }
}
void decodeFloats(Elem el, const uint64_t* bits, unsigned n, double* v, int* e) {
  switch (el) {
    case Elem::F16: return decodeFloats<Elem::F16>(bits, n, v, e);
    case Elem::BF16: return decodeFloats<Elem::BF16>(bits, n, v, e);
    case Elem::TF32: return decodeFloats<Elem::TF32>(bits, n, v, e);
    case Elem::E4M3: return decodeFloats<Elem::E4M3>(bits, n, v, e);
    default: return decodeFloats<Elem::E5M2>(bits, n, v, e);
  }
}

// tensorSum for one row of outputs whose K products form one group (the common case), in a form the compiler
// vectorises over the columns: av/ae the row of A (values, exponents), bv/be B (K x n), cv/ce C's row. Writes the
// exact sums to r; returns the columns with an infinity or NaN among their terms (left to tensorSum).
template <unsigned N> PTX_LANES uint32_t fixedPointRow(const double* __restrict av, const int* __restrict ae,
                                                       const double* __restrict bv, const int* __restrict be,
                                                       const double* __restrict cv, const int* __restrict ce,
                                                       unsigned k, int fracBits, double* __restrict r) {
  alignas(64) int emax[N];
  alignas(64) double down[N], sum[N];
  for (unsigned j = 0; j < N; ++j) emax[j] = ce[j];
  // rows of B through a pointer: a 32-bit index q * N + j (which may wrap) keeps the loops from vectorizing
  for (unsigned q = 0; q < k; ++q) {
    const int* beRow = be + size_t(q) * N;
    for (unsigned j = 0; j < N; ++j) emax[j] = std::max(emax[j], ae[q] + beRow[j]);
  }
  uint32_t special = 0;
  for (unsigned j = 0; j < N; ++j) {
    special |= uint32_t(emax[j] >= kSpecialExponent / 2) << j;
    // all terms zero: the grid does not matter (the sum is +0)
    int e = emax[j] < kZeroExponent / 2 ? 0 : std::min(emax[j], 1000);
    down[j] = pow2(fracBits - e);
    emax[j] = e;
    sum[j] = std::trunc(cv[j] * down[j]);
  }
  for (unsigned q = 0; q < k; ++q) {
    const double x = av[q];
    const double* bvRow = bv + size_t(q) * N;
    for (unsigned j = 0; j < N; ++j) sum[j] += std::trunc((x * bvRow[j]) * down[j]);
  }
  for (unsigned j = 0; j < N; ++j) r[j] = sum[j] * pow2(emax[j] - fracBits) + 0.0;
  return special;
}

uint32_t fixedPointRow(const double* av, const int* ae, const double* bv, const int* be, const double* cv,
                       const int* ce, unsigned k, unsigned n, int fracBits, double* r) {
  switch (n) {
    case 8: return fixedPointRow<8>(av, ae, bv, be, cv, ce, k, fracBits, r);
    case 16: return fixedPointRow<16>(av, ae, bv, be, cv, ce, k, fracBits, r);
    default: return fixedPointRow<32>(av, ae, bv, be, cv, ce, k, fracBits, r);
  }
}

// ---- the same sum in float lanes: f16, bf16 and tf32 products, K <= 16 ------------------------------------------
//
// fixedPointRow's sum with twice the lanes per vector (int32 sums, float products), giving identical bits by
// construction. It is the runtime fast path narrow-tensor-sums (ptx/rewrites.def): the double path stays the
// reference, for every operand outside these conditions and with the switch off, and Rewrites.SameMatrixResults
// and the ptx.matrix.* golden forms under conformance-no-runtime-fast-paths compare the two. Why the bits agree:
// - a product of two of these values has at most 22 significant bits (11 x 11), so a*b is exact in float as long
//   as it is a normal float: every nonzero finite factor lies in [2^-50, 2^63) (f16 always; bf16 and tf32 are
//   checked per instruction, decodeNarrow), so |a*b| lies in [2^-100, 2^126);
// - the column's grid exponent e is at least the product's alignment exponent, so (a*b) * 2^(25-e) is below 2^27:
//   exact where it is a normal float, and below 2^-126, where float rounding would start, it truncates to 0 either
//   way; the conversion to int32 then truncates as trunc does. The scale's exponent is clamped to e in
//   [-100, 127] (a column with e below -100 has only zero products; one with e above 127 has an infinity or NaN in
//   C and goes to tensorSum);
// - K <= 16 truncated products below 2^27 sum to less than 2^31 in int32; C's term is added in double, exactly.
// Infinities and NaNs among A and B send the whole instruction to the double path.

// Values and fixed-point exponents (as fixedPointExponent gives them) of n elements of type E as floats; false
// where an element is an infinity or NaN or lies outside [2^-50, 2^63). Written with vector types: GCC 12 does not
// vectorize a loop that reinterprets integers as floats.
using V8u = uint32_t __attribute__((vector_size(32)));
using V8i = int32_t __attribute__((vector_size(32)));
using V8f = float __attribute__((vector_size(32)));
template <Elem E>
PTX_LANES bool decodeNarrow8(const uint32_t* __restrict bits, unsigned n, float* __restrict v, int* __restrict e) {
  constexpr int emin = E == Elem::F16 ? -14 : -126;
  // the range of the biased exponents of the nonzero elements
  V8i lo = V8i{} + 255, hi = V8i{};
  for (unsigned q = 0; q < n; q += 8) {
    V8u b;
    std::memcpy(&b, bits + q, sizeof b);
    V8u xb;
    if constexpr (E == Elem::F16) {
      // the f16 fields moved into a float's, times 2^(127-15): exact, subnormals included
      const V8u em = b & 0x7fff;
      xb = V8u(V8f(em << 13) * 0x1p112f) | (b & 0x8000) << 16;
      const V8i top = V8i(em >> 10);  // 31: an infinity or NaN
      hi = hi > top ? hi : top;
    } else {
      xb = E == Elem::BF16 ? b << 16 : b & 0xffffe000u;  // tf32: the 19 bits the tensor core reads (floatValue)
    }
    const V8i biased = V8i((xb >> 23) & 0xff);
    const V8i zero = V8i((xb & 0x7fffffffu) == 0);
    if constexpr (E != Elem::F16) {
      const V8i nz = zero ? 255 : biased;
      lo = lo < nz ? lo : nz;
      hi = hi > biased ? hi : biased;
    }
    std::memcpy(v + q, &xb, sizeof xb);
    const V8i x = biased - 127;
    const V8i ex = zero ? kZeroExponent : (x > emin ? x : emin);
    std::memcpy(e + q, &ex, sizeof ex);
  }
  int l = 255, h = 0;
  for (unsigned i = 0; i < 8; ++i) {
    l = std::min(l, lo[i]);
    h = std::max(h, hi[i]);
  }
  if constexpr (E == Elem::F16) return h < 31;
  return l >= 127 - 50 && h <= 127 + 62;
}
// n elements from 32- or 64-bit patterns: whole groups of 8, then the rest padded with zeros.
template <class U> bool decodeNarrow(Elem el, const U* bits, unsigned n, float* v, int* e) {
  auto decode = [&](const uint32_t* b, unsigned cnt, float* vv, int* ee) {
    switch (el) {
      case Elem::F16: return decodeNarrow8<Elem::F16>(b, cnt, vv, ee);
      case Elem::BF16: return decodeNarrow8<Elem::BF16>(b, cnt, vv, ee);
      default: return decodeNarrow8<Elem::TF32>(b, cnt, vv, ee);
    }
  };
  const unsigned whole = n & ~7u;
  bool ok = true;
  if constexpr (std::is_same_v<U, uint32_t>) {
    ok = decode(bits, whole, v, e);
  } else {
    alignas(32) uint32_t b32[256];
    for (unsigned first = 0; first < whole; first += 256) {
      const unsigned cnt = std::min(256u, whole - first);
      for (unsigned q = 0; q < cnt; ++q) b32[q] = uint32_t(bits[first + q]);
      ok = decode(b32, cnt, v + first, e + first) && ok;
    }
  }
  if (whole < n) {
    alignas(32) uint32_t b8[8] = {};
    alignas(32) float v8[8];
    alignas(32) int e8[8];
    for (unsigned q = whole; q < n; ++q) b8[q - whole] = uint32_t(bits[q]);
    ok = decode(b8, 8, v8, e8) && ok;
    std::copy(v8, v8 + (n - whole), v + whole);
    std::copy(e8, e8 + (n - whole), e + whole);
  }
  return ok;
}
// f32 or f16 accumulators (E) as floats, with their fixed-point exponents (infinities and NaNs kSpecialExponent);
// n a multiple of 8.
template <Elem E>
PTX_LANES void decodeAccumulators(const uint32_t* __restrict bits, unsigned n, float* __restrict v, int* __restrict e) {
  constexpr int emin = E == Elem::F16 ? -14 : -126;
  for (unsigned q = 0; q < n; q += 8) {
    V8u b;
    std::memcpy(&b, bits + q, sizeof b);
    V8u xb = b;
    if constexpr (E == Elem::F16) {
      const V8u em = b & 0x7fff;
      const V8u sign = (b & 0x8000) << 16;
      xb = (em >= 0x7c00 ? 0x7f800000u | (em & 0x3ff) << 13 : V8u(V8f(em << 13) * 0x1p112f)) | sign;
    }
    const V8i biased = V8i((xb >> 23) & 0xff), x = biased - 127;
    const V8i ex = (xb & 0x7fffffffu) == 0 ? kZeroExponent : biased == 255 ? kSpecialExponent : (x > emin ? x : emin);
    std::memcpy(v + q, &xb, sizeof xb);
    std::memcpy(e + q, &ex, sizeof ex);
  }
}

constexpr bool isNarrowFloat(Elem e) { return e == Elem::F16 || e == Elem::BF16 || e == Elem::TF32; }

// fixedPointRow for all M rows of a product of decodeNarrow's operands (fracBits 25) with the accumulators as floats
// (decodeAccumulators), K and N fixed: the exact sums in r (M x N), each row's columns that need tensorSum in
// special[row], and, with F32Out, the sums rounded as toF32(r, true) does as bit patterns in out (float() rounds to
// nearest, then one step toward zero where that went away from zero, not from an infinity; a zero is +0; NaN the
// canonical NaN).
template <unsigned N, unsigned K, bool F32Out>
PTX_LANES void narrowRows(const float* __restrict av, const int* __restrict ae, const float* __restrict bv,
                          const int* __restrict be, unsigned ldb, const float* __restrict cf, const int* __restrict ce,
                          unsigned m, double* __restrict r, uint32_t* __restrict special, uint32_t* __restrict out,
                          unsigned ldo) {
  constexpr int fracBits = 25;
  for (unsigned i = 0; i < m; ++i, av += K, ae += K, cf += N, ce += N, r += N, out += ldo) {
    alignas(64) int emax[N];
    alignas(64) int32_t sum[N];
    // by 8 columns, K innermost: the grid exponent and the sum stay in vector registers
    for (unsigned v = 0; v < N; v += 8) {
      V8i top;
      std::memcpy(&top, ce + v, sizeof top);
      for (unsigned q = 0; q < K; ++q) {
        V8i b;
        std::memcpy(&b, be + q * ldb + v, sizeof b);
        const V8i t = b + ae[q];
        top = top > t ? top : t;
      }
      std::memcpy(emax + v, &top, sizeof top);
      const V8i e = top < kZeroExponent / 2 ? 0 : (top < 1000 ? top : 1000);
      const V8i scale = e < -100 ? -100 : (e > 127 ? 127 : e);
      const V8f down = V8f((127 + fracBits - scale) << 23);
      V8i acc = {};
      for (unsigned q = 0; q < K; ++q) {
        V8f b;
        std::memcpy(&b, bv + q * ldb + v, sizeof b);
        acc += __builtin_convertvector((av[q] * b) * down, V8i);
      }
      std::memcpy(sum + v, &acc, sizeof acc);
    }
    uint32_t sp = 0;
    for (unsigned j = 0; j < N; ++j) {
      sp |= uint32_t(emax[j] >= kSpecialExponent / 2) << j;
      emax[j] = emax[j] < kZeroExponent / 2 ? 0 : std::min(emax[j], 1000);
    }
    special[i] = sp;
    for (unsigned j = 0; j < N; ++j) {
      const double c = double(cf[j]);
      r[j] = (double(sum[j]) + std::trunc(c * pow2(fracBits - emax[j]))) * pow2(emax[j] - fracBits) + 0.0;
    }
    if constexpr (F32Out)
      for (unsigned j = 0; j < N; ++j) {
        const float f = float(r[j]);
        uint32_t b = std::bit_cast<uint32_t>(f);
        b -= uint32_t(std::fabs(double(f)) > std::fabs(r[j]) && (b & 0x7fffffffu) != 0x7f800000u);
        b = (b & 0x7fffffffu) == 0 ? 0 : b;
        out[j] = r[j] != r[j] ? num::kCanonicalNaN32 : b;
      }
  }
}
template <unsigned N, unsigned K>
void narrowRows(bool f32Out, const float* av, const int* ae, const float* bv, const int* be, unsigned ldb,
                const float* cf, const int* ce, unsigned m, double* r, uint32_t* special, uint32_t* out, unsigned ldo) {
  if (f32Out)
    narrowRows<N, K, true>(av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
  else
    narrowRows<N, K, false>(av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
}
template <unsigned N> void narrowRows(unsigned k, bool f32Out, const float* av, const int* ae, const float* bv,
                                      const int* be, unsigned ldb, const float* cf, const int* ce, unsigned m,
                                      double* r, uint32_t* special, uint32_t* out, unsigned ldo) {
  switch (k) {
    case 4: return narrowRows<N, 4>(f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
    case 8: return narrowRows<N, 8>(f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
    default: return narrowRows<N, 16>(f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
  }
}
// k: 4, 8 or 16; n: 8, 16 or 32; ldb, ldo: the distance between the rows of B and of out.
void narrowRows(unsigned k, unsigned n, bool f32Out, const float* av, const int* ae, const float* bv, const int* be,
                unsigned ldb, const float* cf, const int* ce, unsigned m, double* r, uint32_t* special, uint32_t* out,
                unsigned ldo) {
  switch (n) {
    case 8: return narrowRows<8>(k, f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
    case 16: return narrowRows<16>(k, f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
    default: return narrowRows<32>(k, f32Out, av, ae, bv, be, ldb, cf, ce, m, r, special, out, ldo);
  }
}

}  // namespace

void matrix::narrowSums(unsigned M, unsigned N, unsigned K, bool halfC, bool halfD, const float* av, const int* ae,
                        const float* bv, const int* be, unsigned ldb, const uint32_t* cbits, uint32_t* dbits,
                        unsigned ldc) {
  constexpr unsigned kMax = 1024;
  alignas(64) float cf[kMax];
  alignas(64) int ce[kMax];
  alignas(64) double r[kMax];
  alignas(64) uint32_t special[64];
  // dense C in one call
  const unsigned rows = ldc == N ? 1 : M, each = ldc == N ? M * N : N;
  for (unsigned i = 0; i < rows; ++i)
    if (halfC)
      decodeAccumulators<Elem::F16>(cbits + i * ldc, each, cf + i * N, ce + i * N);
    else
      decodeAccumulators<Elem::F32>(cbits + i * ldc, each, cf + i * N, ce + i * N);
  narrowRows(K, N, !halfD, av, ae, bv, be, ldb, cf, ce, M, r, special, dbits, ldc);
  for (unsigned i = 0; i < M; ++i) {
    for (uint32_t slow = special[i]; slow; slow &= slow - 1) {
      const unsigned j = unsigned(std::countr_zero(slow));
      double prods[16];
      int pexp[16];
      for (unsigned q = 0; q < K; ++q) {
        prods[q] = double(av[i * K + q]) * double(bv[q * ldb + j]);
        pexp[q] = ae[i * K + q] + be[q * ldb + j];
      }
      const double x = tensorSum(prods, pexp, K, cf[i * N + j], ce[i * N + j], kTensorSum);
      r[i * N + j] = x;
      if (!halfD) dbits[i * ldc + j] = x != x ? num::kCanonicalNaN32 : std::bit_cast<uint32_t>(toF32(x, true));
    }
    if (halfD)
      for (unsigned j = 0; j < N; ++j) {
        const double x = r[i * N + j];
        dbits[i * ldc + j] = x != x ? num::kCanonicalNaN16 : plusZero(num::doubleToHalf(x, num::RN));
      }
  }
}

bool matrix::decodeNarrowBits(Elem e, const uint32_t* bits, unsigned n, float* v, int* ex) {
  return decodeNarrow(e, bits, n, v, ex);
}

bool matrix::narrowProduct(Elem a, Elem b, Elem c, Elem d, unsigned k) {
  return isNarrowFloat(a) && isNarrowFloat(b) && elemBits(a) == elemBits(b) && (k == 4 || k == 8 || k == 16) &&
         (c == Elem::F32 || c == Elem::F16) && (d == Elem::F32 || d == Elem::F16);
}

namespace {

// ---- mma / wmma.mma --------------------------------------------------------------------------------------------

constexpr unsigned kMaxElems = 16 * 256;  // the largest fragment: A of m16n8k256 .b1

const MatrixSite& siteOf(Warp& w, const Op* op) {
  return w.cta->job->program->matrixSites[MatrixOperands::of(*op).site];
}

}  // namespace

// D = A B + C for row-major matrices of bit patterns (A: M x K, B: K x N, C and D: M x N) with the numerics of the
// site's element types and flags.
void matrix::multiply(const MatrixSite& s, unsigned M, unsigned N, unsigned K, const uint64_t* a, const uint64_t* b,
                      const uint64_t* c, uint64_t* d, bool narrowAllowed) {
  const Elem ea = Elem(s.elem[A]), eb = Elem(s.elem[B]), ec = Elem(s.elem[C]), ed = Elem(s.elem[D]);
  if (ea == Elem::F64) {
    // an IEEE fma per product in k order; an fma with a NaN result gives, as on an H100, B's NaN (quieted), else
    // the accumulator's, else A's (quieted), else the default NaN: so the last B NaN wins, an invalid operation
    // (0 x inf, inf - inf) before any NaN operand gives the default NaN for good
    auto nanOf = [](uint64_t x) { return (x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; };
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        double acc = std::bit_cast<double>(c[i * N + j]);
        for (unsigned q = 0; q < K; ++q) {
          const uint64_t x = a[i * K + q], y = b[q * N + j];
          const double r = std::fma(std::bit_cast<double>(x), std::bit_cast<double>(y), acc);
          if (r == r)
            acc = r;
          else if (nanOf(y))
            acc = num::quiet(std::bit_cast<double>(y));
          else if (acc != acc)
            acc = num::quiet(acc);
          else
            acc = num::quiet(std::bit_cast<double>(nanOf(x) ? x : num::kDefaultNaN64));
        }
        d[i * N + j] = std::bit_cast<uint64_t>(acc);
      }
  } else if (isFloatElem(ea)) {
    // decoded once: values and exponents of A's rows and B's columns
    static thread_local double av[kMaxElems], bv[kMaxElems / 2];
    static thread_local float af[kMaxElems], bf[kMaxElems / 2];
    static thread_local int ae[kMaxElems], be[kMaxElems / 2];
    double prods[256];
    int pexp[256];
    // wgmma's fp8 products: one fixed-point sum with C, as the 16-bit types' but on a grid 2^(e-13), and the result
    // keeps 13 fraction bits, truncated (fitted to the ptx.matrix.wgmma fp8 golden outputs: 0 of the 6669 finite
    // f32 outputs of m64n32k32_f32_e5m2_e4m3 differ)
    const bool reduced = (ea == Elem::E4M3 || ea == Elem::E5M2) && (s.flags & kFlagWgmma);
    const bool fp8 = (ea == Elem::E4M3 || ea == Elem::E5M2) && !reduced;
    // wmma's tf32 m16n16k8 sums in two steps of four products
    TensorSum model = fp8 ? kTensorSumFp8 : reduced ? kTensorSumWgmmaFp8 : kTensorSum;
    model.group = (s.flags & kFlagWmma) && ea == Elem::TF32 ? 4 : K;
    // the float-lane sums (narrowSums, narrow-tensor-sums) where they apply, else the double ones below
    const bool narrow = narrowAllowed && narrowProduct(ea, eb, ec, ed, K) && model.group >= K &&
                        (N == 8 || N == 16 || N == 32) && M * N <= 1024 && M <= 64 &&
                        decodeNarrow(ea, a, M * K, af, ae) && decodeNarrow(eb, b, K * N, bf, be);
    if (narrow) {
      alignas(64) uint32_t cbits[1024], dbits[1024];
      for (unsigned q = 0; q < M * N; ++q) cbits[q] = uint32_t(c[q]);
      narrowSums(M, N, K, ec == Elem::F16, ed == Elem::F16, af, ae, bf, be, N, cbits, dbits, N);
      for (unsigned q = 0; q < M * N; ++q) d[q] = dbits[q];
      return;
    }
    decodeFloats(ea, a, M * K, av, ae);
    decodeFloats(eb, b, K * N, bv, be);
    for (unsigned i = 0; i < M; ++i) {
      // one row of D at a time: the fixed-point sum of every output, then the outputs with an infinity or NaN
      // among their terms (and the grouped sums) again through tensorSum
      alignas(64) double cv[32], r[32];
      alignas(64) int ce[32];
      uint32_t slow = 0;
      for (unsigned j = 0; j < N; ++j) {
        cv[j] = double(float(floatValue(ec, c[i * N + j])));
        ce[j] = fixedPointExponent(ec, cv[j]);
      }
      if (fp8)
        slow = (N >= 32 ? 0 : 1u << N) - 1;
      else if (model.group >= K)
        slow = fixedPointRow(av + i * K, ae + i * K, bv, be, cv, ce, K, N, model.fracBits, r);
      else
        slow = (N >= 32 ? 0 : 1u << N) - 1;
      for (unsigned j = 0; j < N; ++j) {
        if ((slow >> j) & 1) {
          for (unsigned q = 0; q < K; ++q) {
            prods[q] = av[i * K + q] * bv[q * N + j];
            pexp[q] = ae[i * K + q] + be[q * N + j];
          }
          r[j] = fp8 ? fp8Sum(prods, pexp, K, float(cv[j]), ce[j], model, ed == Elem::F16)
                     : tensorSum(prods, pexp, K, float(cv[j]), ce[j], model);
        }
        uint64_t& out = d[i * N + j];
        if (r[j] != r[j])
          out = ed == Elem::F16 ? num::kCanonicalNaN16 : num::kCanonicalNaN32;
        else if (ed == Elem::F16)
          out = plusZero(num::doubleToHalf(r[j], num::RN));
        else if (reduced)
          out = std::bit_cast<uint32_t>(toF32(r[j], true)) & ~uint32_t{0x3ff};
        else
          out = std::bit_cast<uint32_t>(toF32(r[j], model.truncate));
      }
    }
  } else {
    const bool b1 = ea == Elem::B1, isXor = s.flags & kFlagXor;
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        int64_t acc = intValue(ec, c[i * N + j]);
        for (unsigned q = 0; q < K; ++q) {
          if (b1)
            acc += isXor ? (a[i * K + q] ^ b[q * N + j]) : (a[i * K + q] & b[q * N + j]);
          else
            acc += intValue(ea, a[i * K + q]) * intValue(eb, b[q * N + j]);
        }
        if (s.flags & kFlagSatfinite) acc = std::clamp<int64_t>(acc, INT32_MIN, INT32_MAX);
        d[i * N + j] = uint32_t(acc);
      }
  }
}

Elem matrix::elemOf(Type t) {
  switch (t) {
    case Type::f16: return Elem::F16;
    case Type::bf16: return Elem::BF16;
    case Type::tf32: return Elem::TF32;
    case Type::f32: return Elem::F32;
    case Type::f64: return Elem::F64;
    case Type::s8: return Elem::S8;
    case Type::u8: return Elem::U8;
    case Type::s4: return Elem::S4;
    case Type::u4: return Elem::U4;
    case Type::b1: return Elem::B1;
    case Type::e4m3: return Elem::E4M3;
    case Type::e5m2: return Elem::E5M2;
    case Type::s32: return Elem::S32;
    default: return Elem::S32;
  }
}

namespace {

// mma and wmma.mma whose products the float-lane sum takes (narrowRows: f16, bf16 or tf32 multiplicands in one
// group, K <= 16) with f32 or f16 accumulators: straight from the fragments' registers, without matrix::multiply's
// 64-bit matrices. The same bits as multiply by construction (the same steps on 32-bit patterns); false, having
// written nothing, where an operand needs the double path.
bool narrowForm(const MatrixSite& s) {
  const Elem ea = Elem(s.elem[A]);
  return narrowProduct(ea, Elem(s.elem[B]), Elem(s.elem[C]), Elem(s.elem[D]), s.k) &&
         !((s.flags & kFlagWmma) && ea == Elem::TF32) && (s.n == 8 || s.n == 16 || s.n == 32) && s.m <= 32;
}

template <unsigned BitsA> bool mmaNarrow(Warp& w, const MatrixSite& s) {
  constexpr unsigned kMax = 512;  // the largest of M x K, K x N (m32n8k16, m8n32k16), M x N
  const unsigned M = s.m, N = s.n, K = s.k;
  alignas(64) uint32_t bits[kMax], dbits[kMax];
  alignas(64) float av[kMax], bv[kMax];
  alignas(64) int ae[kMax], be[kMax];
  gatherBits<BitsA>(w, s, A, bits);
  if (!decodeNarrow(Elem(s.elem[A]), bits, M * K, av, ae)) return false;
  gatherBits<BitsA>(w, s, B, bits);
  if (!decodeNarrow(Elem(s.elem[B]), bits, K * N, bv, be)) return false;
  const bool halfC = Elem(s.elem[C]) == Elem::F16, halfD = Elem(s.elem[D]) == Elem::F16;
  if (halfC)
    gatherBits<16>(w, s, C, bits);
  else
    gatherBits<32>(w, s, C, bits);
  narrowSums(M, N, K, halfC, halfD, av, ae, bv, be, N, bits, dbits, N);
  if (halfD)
    scatterBits<16>(w, s, D, dbits);
  else
    scatterBits<32>(w, s, D, dbits);
  return true;
}

const Op* mmaSync(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const bool fast = fullWarpFastPath(w, Rewrite::NarrowTensorSums);
  if (fast && narrowForm(s) && (elemBits(Elem(s.elem[A])) == 16 ? mmaNarrow<16>(w, s) : mmaNarrow<32>(w, s)))
    return op + 1;
  static thread_local uint64_t a[kMaxElems], b[kMaxElems / 2];
  uint64_t c[32 * 8], d[32 * 8];
  gather(w, s, A, a);
  gather(w, s, B, b);
  gather(w, s, C, c);
  multiply(s, s.m, s.n, s.k, a, b, c, d, fast);
  scatter(w, s, D, d);
  return op + 1;
}

// The values of an 8-bit (or narrower) element type's 256 bit patterns, made at first use.
const double* elementValues(Elem e) {
  static const auto tables = [] {
    auto* t = new std::array<std::array<double, 256>, 32>();  // lives until exit; indexed by Elem
    for (unsigned el = 0; el < 32; ++el)
      for (unsigned bits = 0; bits < 256; ++bits) (*t)[el][bits] = floatValue(Elem(el), bits);
    return t;
  }();
  return (*tables)[unsigned(e) & 31].data();
}

// ---- mma with a .kind (sm_120a/f) -------------------------------------------------------------------------------

// .kind::f8f6f4 (m16n8k32, any pair of e4m3/e5m2/e3m2/e2m3/e2m1 in bytes), and with .block_scale .kind::mxf8f6f4
// (the same, one ue8m0 scale factor per row of A and column of B), .kind::mxf4 (m16n8k64, packed e2m1, two ue8m0
// factors: one per 32 of K) and .kind::mxf4nvf4 (two ue8m0 or four ue4m3 factors: one per 16 of K). D = (A x scale_A)
// (B x scale_B) + C (PTX ISA "Block scaling for mma.sync"). Fragments: the ISA's layouts of the 8-bit types (m16n8k32)
// and of the 4-bit ones (m16n8k64). Scale factors, as CUTLASS's sm_120 traits place them for {byte-id, thread-id} =
// {0, 0} (SFALayout, SFBLayout), with the selectors' other values read as the ISA's ranges suggest: row g (and
// g + 8) of A takes the factors of lane 4g + 2 thread-id (lane 4g + 2 thread-id + 1), column g of B those of lane
// 4g + thread-id; factor j of a row or column is byte byte-id + j of that lane's register.
// Arithmetic: NOT RECORDED ON A GPU (no compute-capability-12 GPU was available to this project). Every product is
// exact; they are summed with C in 64-bit-mantissa precision and rounded once to the accumulator type (to nearest),
// so results are exact whenever the true sum is representable, which holds for the small-integer and power-of-two
// data of quantised models within f32's precision; where the tensor core's own intermediate rounding would show
// (sums needing more than 24 bits), results may differ from a GPU's in the last bits. NaN results are the canonical
// NaN.
// The sparse forms (mma.sp::ordered_metadata, m16n8k64 and m16n8k128) select A's elements by their metadata as the
// other sparse forms do (sparsePosition) and are then the dense product with zeros in the slots left out.
// D = (A x scale_A)(B x scale_B) + C of row-major bit patterns a (M x K), b (K x N), c; null after a fault.
PTX_LANES const Op* kindProduct(Warp& w, const Op* op, const MatrixSite& s, const uint64_t* a, const uint64_t* b,
                                const uint64_t* c, uint64_t* d) {
  const unsigned M = s.m, N = s.n, K = s.k;
  const unsigned vec = s.scaleVec ? s.scaleVec : 1, span = K / vec;
  double scaleA[16][4], scaleB[8][4];
  for (auto& row : scaleA) std::fill(std::begin(row), std::end(row), 1.0);
  for (auto& col : scaleB) std::fill(std::begin(col), std::end(col), 1.0);
  if (s.scale[0]) {
    const int first = w.active ? std::countr_zero(w.active) : 0;  // the selectors are the same in every lane
    for (unsigned m = 0; m < 2; ++m) {
      const uint32_t byteId = R<uint32_t>(w, s.scaleSelector[m][0])[first];
      const uint32_t threadId = R<uint32_t>(w, s.scaleSelector[m][1])[first];
      const bool byteOk = vec == 1 ? byteId <= 3 : vec == 2 ? byteId == 0 || byteId == 2 : byteId == 0;
      if (!byteOk || threadId > (m == 0 ? 1u : 3u))
        return raiseFault(w, op, first, FaultKind::IllegalInstruction, 0,
                          fmt::format("block-scaled mma: {{byte-id, thread-id}} of {} is {{{}, {}}}, out of range",
                                      m == 0 ? "A" : "B", byteId, threadId));
      const uint32_t* factors = R<uint32_t>(w, s.scale[m]);
      const unsigned lines = m == 0 ? M : N;
      for (unsigned i = 0; i < lines; ++i) {
        const unsigned lane = m == 0 ? 4 * (i % 8) + 2 * threadId + i / 8 : 4 * i + threadId;
        for (unsigned j = 0; j < vec; ++j) {
          const double f = elementValues(Elem(s.scaleElem))[(factors[lane] >> (8 * (byteId + j))) & 0xff];
          (m == 0 ? scaleA[i][j] : scaleB[i][j]) = f;
        }
      }
    }
  }
  const Elem ea = Elem(s.elem[A]), eb = Elem(s.elem[B]), ec = Elem(s.elem[C]), ed = Elem(s.elem[D]);
  // the scaled operands, decoded once (exact in double: at most 8 significant bits, exponents within +-150), the
  // elements through a table of their 256 bit patterns
  double av[16 * 128], bv[128 * 8];
  const double* ta = elementValues(ea);
  const double* tb = elementValues(eb);
  for (unsigned i = 0; i < M; ++i)
    for (unsigned v = 0; v < vec; ++v)
      for (unsigned q = v * span; q < (v + 1) * span; ++q) av[i * K + q] = ta[a[i * K + q] & 0xff] * scaleA[i][v];
  for (unsigned v = 0; v < vec; ++v)
    for (unsigned q = v * span; q < (v + 1) * span; ++q)
      for (unsigned j = 0; j < N; ++j) bv[q * N + j] = tb[b[q * N + j] & 0xff] * scaleB[j][v];
  double cv[16 * 8];
  for (unsigned q = 0; q < M * N; ++q) cv[q] = floatValue(ec, c[q]);
  // exact-scaled-sums: every product has at most 16 significant bits and C 24; when all of them lie within 2^44 of
  // one another (the largest value's exponent less the smallest nonzero one's lowest bit), the sum of C and up to 128
  // products (below 2^8 times the largest) is exact in double's 53 bits at every step, so the double sum, in the
  // general path's order, is the exact sum that path computes, signed zeros included; NaNs and infinities go there.
  // The biased exponents of the values (no subnormal double arises here: 0 is a zero, 0x7ff an infinity or NaN).
  struct Range {
    int hi = 0, lo = 0x7ff;  // biased; lo over the nonzero values; hi 0x7ff: an infinity or NaN among them
  };
  auto range = [](const double* values, unsigned n) {
    Range r;
    for (unsigned q = 0; q < n; ++q) {
      const int e = int(std::bit_cast<uint64_t>(values[q]) >> 52 & 0x7ff);
      r.hi = std::max(r.hi, e);
      r.lo = std::min(r.lo, e ? e : 0x7ff);
    }
    return r;
  };
  const Range ra = range(av, M * K), rb = range(bv, K * N), rc = range(cv, M * N);
  auto exactInDouble = [&] {
    if (ra.hi == 0x7ff || rb.hi == 0x7ff || rc.hi == 0x7ff) return false;
    int hi = INT_MIN, lo = INT_MAX;
    if (ra.hi && rb.hi) hi = ra.hi + rb.hi - 2046 + 1, lo = ra.lo + rb.lo - 2046 - 16;
    if (rc.hi) hi = std::max(hi, rc.hi - 1023), lo = std::min(lo, rc.lo - 1023 - 24);
    return hi == INT_MIN || hi - lo <= 44;
  };
  if (fullWarpFastPath(w, Rewrite::ExactScaledSums) && exactInDouble()) {
    // four rows of D at a time, each row's eight sums in two vectors of four: eight independent chains in host
    // registers, every output's products still added in k order
    using V4 = double __attribute__((vector_size(32)));
    static_assert(sizeof(V4) == 4 * sizeof(double));
    for (unsigned i = 0; i < M; i += 4) {
      V4 sum[4][2];
      std::memcpy(sum, cv + i * N, sizeof sum);  // rows i..i+3 of C (N = 8)
      for (unsigned q = 0; q < K; ++q) {
        V4 y0, y1;  // loaded straight into registers (a two-vector array went through the stack)
        std::memcpy(&y0, bv + q * N, sizeof y0);
        std::memcpy(&y1, bv + q * N + 4, sizeof y1);
        for (unsigned r = 0; r < 4; ++r) {
          const double x = av[(i + r) * K + q];
          sum[r][0] += x * y0;
          sum[r][1] += x * y1;
        }
      }
      double row[4][8];
      std::memcpy(row, sum, sizeof row);
      for (unsigned r = 0; r < 4; ++r)
        for (unsigned j = 0; j < N; ++j)
          d[(i + r) * N + j] = ed == Elem::F16 ? plusZero(num::doubleToHalf(row[r][j], num::RN))
                                               : std::bit_cast<uint32_t>(float(row[r][j]));
    }
    return op + 1;
  }
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      long double sum = cv[i * N + j];
      for (unsigned q = 0; q < K; ++q) sum += static_cast<long double>(av[i * K + q]) * bv[q * N + j];
      uint64_t& out = d[i * N + j];
      if (sum != sum)
        out = ed == Elem::F16 ? num::kCanonicalNaN16 : num::kCanonicalNaN32;
      else if (ed == Elem::F16)
        out = plusZero(num::doubleToHalf(double(sum), num::RN));  // the f16 case: no scale factors, exact in double
      else
        out = std::bit_cast<uint32_t>(float(sum));
    }
  return op + 1;
}

const Op* mmaKind(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  static thread_local uint64_t a[16 * 64], b[64 * 8];
  uint64_t c[16 * 8], d[16 * 8];
  gather(w, s, A, a);
  gather(w, s, B, b);
  gather(w, s, C, c);
  if (!kindProduct(w, op, s, a, b, c, d)) return nullptr;
  scatter(w, s, D, d);
  return op + 1;
}

const Op* mmaKindSparse(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  static thread_local uint64_t packed[16 * 64], a[16 * 128], b[128 * 8];
  uint64_t c[16 * 8], d[16 * 8];
  gather(w, s, A, packed);
  gather(w, s, B, b);
  gather(w, s, C, c);
  const uint32_t* meta = R<uint32_t>(w, s.metadata);
  const unsigned M = s.m, K = s.k, half = K / 2;
  std::fill(a, a + M * K, 0);  // every element type here reads 0 as +0
  for (unsigned i = 0; i < M; ++i)
    for (unsigned q = 0; q < half; ++q) a[i * K + sparsePosition(s, meta, i, q)] = packed[i * half + q];
  if (!kindProduct(w, op, s, a, b, c, d)) return nullptr;
  scatter(w, s, D, d);
  return op + 1;
}

// ---- mma.sp, mma.sp::ordered_metadata ----------------------------------------------------------------------------

// Sparse A (PTX ISA "Sparse matrix storage"): each row of A is cut into groups of four slots along K, two of which
// hold values; the fragment holds those two per group (an M x K/2 matrix laid out as the dense A of half the K),
// and a 4-bit metadata nibble per group names their two slots (low two bits the first). A slot is one element of
// 8 or 16 bits, two 4-bit elements, or half a .tf32 element (a .tf32 group is two elements, one of them kept).
// The nibbles come from the metadata registers of T = (groups per row) / 4 lanes of each quad g (rows g and g + 8),
// those numbered selector*T ... selector*T + T-1. With groups of 64 bits (16-bit elements, .tf32) the t-th of them
// holds groups 4t..4t+3 of row g in bits 0-15 and of row g + 8 in bits 16-31; with groups of 32 bits (8- and 4-bit
// elements) lane 2u holds groups 8u..8u+7 of row g, lane 2u+1 those of row g + 8 (recorded on an H100: the
// ptx.matrix.mma sp_* cases).
// The products of the slots left out are not formed at all (an infinity of B there does not reach D).
unsigned sparseSlotElems(Elem e) { return e == Elem::S4 || e == Elem::U4 || e == Elem::E2M1 ? 2 : 1; }

}  // namespace

unsigned matrix::sparsePosition(const MatrixSite& s, const uint32_t* meta, unsigned row, unsigned q) {
  const Elem e = Elem(s.elem[A]);
  const bool tf32 = e == Elem::TF32;
  const unsigned slot = sparseSlotElems(e);
  const unsigned groupElems = tf32 ? 2 : 4 * slot, keptPerGroup = tf32 ? 1 : 2 * slot;
  const unsigned groups = s.k / groupElems, lanesPerQuad = std::max(1u, groups / 4);
  const unsigned group = q / keptPerGroup, within = q % keptPerGroup;
  // groups of 32 bits (8- and 4-bit elements): a lane holds eight groups of one row; of 64 bits (16-bit, .tf32):
  // four groups of each of its two rows
  const unsigned hi = row >= 8, quad = 4 * (row % 8) + s.selector * lanesPerQuad;
  const bool narrow = elemBits(e) <= 8;
  const unsigned lane = narrow ? quad + (group / 8) * 2 + hi : quad + group / 4;
  const unsigned shift = narrow ? 4 * (group % 8) : 16 * hi + 4 * (group % 4);
  const unsigned nibble = (meta[lane] >> shift) & 0xf;
  if (tf32) return group * 2 + (nibble & 3) / 2;
  const unsigned index = within / slot ? (nibble >> 2) & 3 : nibble & 3;
  return group * groupElems + index * slot + within % slot;
}

namespace {

const Op* mmaSparse(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  constexpr unsigned kMaxK = 128, kMaxN = 8, kMaxM = 16;
  uint64_t packed[kMaxM * kMaxK / 2], b[kMaxK * kMaxN], picked[kMaxK / 2 * kMaxN], c[kMaxM * kMaxN], d[kMaxM * kMaxN];
  gather(w, s, A, packed);
  gather(w, s, B, b);
  gather(w, s, C, c);
  const uint32_t* meta = R<uint32_t>(w, s.metadata);
  const unsigned M = s.m, N = s.n, half = s.k / 2;
  // each row multiplies its own K/2 rows of B
  for (unsigned i = 0; i < M; ++i) {
    for (unsigned q = 0; q < half; ++q)
      std::memcpy(picked + q * N, b + sparsePosition(s, meta, i, q) * N, N * sizeof *b);
    multiply(s, 1, N, half, packed + i * half, picked, c + i * N, d + i * N,
             fullWarpFastPath(w, Rewrite::NarrowTensorSums));
  }
  scatter(w, s, D, d);
  return op + 1;
}

// The last step of mma884 toward an .f16 result: the sum and C are aligned to 24 bits below the larger one's leading
// bit (the smaller one truncated toward zero) and added exactly; the caller rounds to f16. Fitted to the 12,800 outputs
// of the four f16 golden forms: one or two bits fewer leave 3 and 5 that differ; one bit more, or an exact sum, leaves
// one (`m8n8k4_f16_f16_row_row` trial 17, where the truncation makes a tie that rounds to even).
double alignedSum(float sum, float c) {
  if (!std::isfinite(sum) || !std::isfinite(c) || sum == 0 || c == 0) return double(sum) + double(c);
  int es = 0, ec = 0;
  std::frexp(sum, &es);
  std::frexp(c, &ec);
  const int grid = std::max(es, ec) - 24;
  auto cut = [grid](float v) { return std::ldexp(std::trunc(std::ldexp(double(v), -grid)), grid); };
  return cut(sum) + cut(c);
}

// mma.m8n8k4 with .f16 multiplicands (the Volta form): each quad-pair (lanes 4q..4q+3 and 4q+16..4q+19) multiplies its
// own 8x4 A by its own 4x8 B. The quad-pair's lane j (0-7: the low four, then the high four) holds row j of a .row A
// and column j of a .col B; with .col A it holds rows 4(j >> 2)..+3 of column j & 3, with .row B columns 4(j >> 2)..+3
// of row j & 3 (recorded: the _row_row, _col_col and _col_row golden forms). Accumulators (recorded on an H100:
// ptx.matrix.mma m8n8k4_f32_f16 / _f16_f16): with .f32, element e of lane 4q + i (+16: hi) is row (i & 1) + 2((e >> 1)
// & 1) + 4 hi, column (e & 1) + 2(i >> 1) + 4(e >> 2); with .f16, lane j holds row j, element e column e. Arithmetic,
// fitted to every finite golden output (0 differ): the four products (exact) are added in k order in f32, each step
// rounded to nearest (a chain of fmas from the first product), and C is added last: exactly and rounded to nearest for
// f32 results, through alignedSum for f16 ones.
const Op* mma884(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const Elem ec = Elem(s.elem[C]), ed = Elem(s.elem[D]);
  auto frag = [&](Role role, unsigned lane, unsigned e) -> uint64_t {
    unsigned p = perReg(Elem(s.elem[role]));
    uint32_t v = R<uint32_t>(w, s.regs[role][e / p])[lane];
    return p == 1 ? v : (v >> (16 * (e % p))) & 0xffff;
  };
  // row and column of element e of quad-pair lane j's accumulator of type t
  auto place = [](Elem t, unsigned j, unsigned e) -> Pos {
    if (t == Elem::F16) return {j, e};
    const unsigned i = j & 3, hi = j >> 2;
    return {(i & 1) + 2 * ((e >> 1) & 1) + 4 * hi, (e & 1) + 2 * (i >> 1) + 4 * (e >> 2)};
  };
  const bool colA = s.flags & kFlagColA, rowB = s.flags & kFlagRowB;
  uint64_t out[32][8];
  for (unsigned q = 0; q < 4; ++q) {
    auto laneOf = [q](unsigned j) { return j < 4 ? 4 * q + j : 4 * q + 12 + j; };
    double av[8][4], bv[8][4];  // av[row][k], bv[column][k]
    float cm[8][8];
    for (unsigned j = 0; j < 8; ++j) {
      for (unsigned e = 0; e < 4; ++e) {
        const double a = floatValue(Elem::F16, frag(A, laneOf(j), e));
        const double b = floatValue(Elem::F16, frag(B, laneOf(j), e));
        if (colA)
          av[e + 4 * (j >> 2)][j & 3] = a;
        else
          av[j][e] = a;
        if (rowB)
          bv[e + 4 * (j >> 2)][j & 3] = b;
        else
          bv[j][e] = b;
      }
      for (unsigned e = 0; e < 8; ++e) {
        Pos c = place(ec, j, e);
        cm[c.row][c.col] = float(floatValue(ec, frag(C, laneOf(j), e)));
      }
    }
    for (unsigned j = 0; j < 8; ++j)
      for (unsigned e = 0; e < 8; ++e) {
        const Pos at = place(ed, j, e);
        float sum = float(av[at.row][0] * bv[at.col][0]);
        for (unsigned k = 1; k < 4; ++k) sum = float(std::fma(av[at.row][k], bv[at.col][k], double(sum)));
        const double r =
            ed == Elem::F16 ? alignedSum(sum, cm[at.row][at.col]) : double(sum) + double(cm[at.row][at.col]);
        uint64_t& o = out[laneOf(j)][e];
        if (r != r)
          o = ed == Elem::F16 ? num::kCanonicalNaN16 : num::kCanonicalNaN32;
        else if (ed == Elem::F16)
          o = plusZero(num::doubleToHalf(r, num::RN));
        else
          o = std::bit_cast<uint32_t>(float(r));
      }
  }
  const unsigned p = perReg(ed);
  for (unsigned r = 0; r < s.count[D]; ++r) {
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l)
      v[l] = p == 1 ? uint32_t(out[l][r]) : uint32_t(out[l][2 * r]) | uint32_t(out[l][2 * r + 1]) << 16;
    h::store<uint32_t>(w, s.regs[D][r], [&](int l) { return v[l]; });
  }
  return op + 1;
}

// ---- memory forms ----------------------------------------------------------------------------------------------

uint8_t* laneMemory(Warp& w, const Op* op, mem::Space space, int lane, uint64_t addr, uint32_t size, bool write) {
  switch (space) {
    case mem::Shared: return mem::xlate<mem::Shared>(w, op, lane, addr, size, write);
    case mem::Global: return mem::xlate<mem::Global>(w, op, lane, addr, size, write);
    case mem::Local: return mem::xlate<mem::Local>(w, op, lane, addr, size, write);
    case mem::Frame: return mem::xlate<mem::Frame>(w, op, lane, addr, size, write);
    default: return mem::xlate<mem::Generic>(w, op, lane, addr, size, write);
  }
}

uint64_t laneAddress(Warp& w, const MatrixSite& s, int lane) {
  if (s.addrSize == 4) return uint32_t(R<uint32_t>(w, s.addr)[lane] + uint32_t(s.offset));  // 32-bit addresses wrap
  return R<uint64_t>(w, s.addr)[lane] + uint64_t(s.offset);
}

// The 16-byte rows an ldmatrix reads: row i of matrix j from the address of lane 8j + i; false after a fault.
bool loadMatrixRows(Warp& w, const Op* op, const MatrixSite& s, uint8_t (&rows)[4][8][16]) {
  const unsigned count = s.count[0];
  const uint32_t lanes = (8u * count == 32) ? kFullMask : ((1u << (8 * count)) - 1);
  for (unsigned l = 0; l < 32; ++l) {
    if (!((lanes >> l) & 1)) continue;
    uint8_t* p = laneMemory(w, op, mem::Space(s.space), int(l), laneAddress(w, s, int(l)), 16, false);
    if (!p) return false;
    std::memcpy(rows[l / 8][l % 8], p, 16);
  }
  return true;
}

// The 16-byte rows a stmatrix writes: row i of matrix j to the address of lane 8j + i; false after a fault.
bool storeMatrixRows(Warp& w, const Op* op, const MatrixSite& s, const uint8_t (&rows)[4][8][16]) {
  const unsigned count = s.count[0];
  const uint32_t lanes = (8u * count == 32) ? kFullMask : ((1u << (8 * count)) - 1);
  for (unsigned l = 0; l < 32; ++l) {
    if (!((lanes >> l) & 1)) continue;
    uint8_t* p = laneMemory(w, op, mem::Space(s.space), int(l), laneAddress(w, s, int(l)), 16, true);
    if (!p) return false;
    std::memcpy(p, rows[l / 8][l % 8], 16);
  }
  return true;
}

// ldmatrix / stmatrix .m8n8 .b16: matrix j's row i is addressed by lane 8j+i; lane l's register j holds row l/4,
// columns 2(l%4) and 2(l%4)+1 of matrix j (.trans: rows 2(l%4) and 2(l%4)+1 of column l/4).
const Op* ldmatrix(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const unsigned count = s.count[0];
  uint8_t rows[4][8][16];
  if (!loadMatrixRows(w, op, s, rows)) return nullptr;
  uint16_t mats[4][8][8];
  std::memcpy(mats, rows, sizeof mats);
  const bool trans = s.flags & kFlagTrans;
  for (unsigned j = 0; j < count; ++j) {
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l) {
      unsigned g = l >> 2, t = l & 3;
      uint16_t lo = trans ? mats[j][2 * t][g] : mats[j][g][2 * t];
      uint16_t hi = trans ? mats[j][2 * t + 1][g] : mats[j][g][2 * t + 1];
      v[l] = uint32_t(lo) | uint32_t(hi) << 16;
    }
    h::store<uint32_t>(w, s.regs[0][j], [&](int l) { return v[l]; });
  }
  return op + 1;
}

// ldmatrix's .b4x16_p64 and .b6x16_p32 sources (sm_100a/f, sm_120a/f): a 16-byte row's first 8 (4-bit elements) or
// 12 (6-bit ones) bytes hold its 16 elements packed, least significant bits first (the packing of the tensor maps'
// 16U4/16U6 types); each becomes a byte with the element in its low bits (CUTLASS shifts a 4-bit result left by two
// before an e2m1 mma). bits: 4 or 6; 0 leaves the rows as they are (.b8).
void unpackRows(uint8_t (&rows)[4][8][16], unsigned matrices8, unsigned bits) {
  if (bits == 0) return;
  for (unsigned j = 0; j < matrices8; ++j)
    for (auto& row : rows[j]) {
      unsigned __int128 packed = 0;
      for (unsigned q = 0; q < 12; ++q) packed |= static_cast<unsigned __int128>(row[q]) << (8 * q);
      for (unsigned c = 0; c < 16; ++c) row[c] = uint8_t(packed >> (bits * c)) & ((1u << bits) - 1);
    }
}

// ldmatrix .m8n16 .b8x16 with .b4x16_p64 or .b6x16_p32: matrix j's row i is addressed by lane 8j + i; lane l's
// register j gets row l/4, columns 4(l%4)..4(l%4)+3 (PTX ISA: "each thread loads 4 consecutive columns"). Not
// recorded on a GPU.
const Op* ldmatrixUnpack(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const unsigned count = s.count[0];
  uint8_t mats[4][8][16];
  if (!loadMatrixRows(w, op, s, mats)) return nullptr;
  unpackRows(mats, count, s.k);
  for (unsigned j = 0; j < count; ++j) {
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l) std::memcpy(&v[l], &mats[j][l / 4][4 * (l % 4)], 4);
    h::store<uint32_t>(w, s.regs[0][j], [&](int l) { return v[l]; });
  }
  return op + 1;
}

// ldmatrix .m16n16 .trans with .b8, or .b8x16 from .b4x16_p64/.b6x16_p32 (sm_100a/f, sm_120a/f): matrix j (of one
// or two) is 16 rows of 16 bytes, row i addressed by lane 16j + i, and comes out transposed in registers 2j and
// 2j + 1: lane l's register 2j + h holds, byte b, row 4(l%4) + b of column 8h + l/4, the layout of an 8-bit mma
// fragment whose K runs down the stored rows. Derived from CUTLASS's SM100_U8x8_LDSM_T, whose traits give the
// layout after a byte shuffle the copy applies to this instruction's registers; not recorded on a GPU (no
// compute-capability 10 or 12 device here).
const Op* ldmatrixTransposedBytes(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const unsigned count = s.count[0];  // two registers per matrix
  uint8_t rows[4][8][16];
  if (!loadMatrixRows(w, op, s, rows)) return nullptr;
  unpackRows(rows, count, s.k);
  const auto at = [&](unsigned row, unsigned col) { return rows[row / 8][row % 8][col]; };
  for (unsigned r = 0; r < count; ++r) {
    const unsigned base = 16 * (r / 2), column = 8 * (r % 2);
    alignas(64) uint32_t v[32];
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t word = 0;
      for (unsigned b = 0; b < 4; ++b) word |= uint32_t(at(base + 4 * (l % 4) + b, column + l / 4)) << (8 * b);
      v[l] = word;
    }
    h::store<uint32_t>(w, s.regs[0][r], [&](int l) { return v[l]; });
  }
  return op + 1;
}

// stmatrix .m16n8 .trans .b8 (sm_100a/f, sm_120a/f): register j of every lane holds a 16x8 byte matrix in the
// layout of an 8-bit mma accumulator (lane l, bytes 0-1: row l/4, columns 2(l%4) and 2(l%4)+1; bytes 2-3: the same
// of row l/4 + 8), stored transposed as 8 rows of 16 bytes, row i at the address of lane 8j + i. From CUTLASS's
// SM100_U8x4_STSM_T traits; not recorded on a GPU.
const Op* stmatrixTransposedBytes(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const unsigned count = s.count[0];
  uint8_t rows[4][8][16];
  for (unsigned j = 0; j < count; ++j) {
    const uint32_t* v = R<uint32_t>(w, s.regs[0][j]);
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned b = 0; b < 4; ++b) rows[j][2 * (l % 4) + (b & 1)][l / 4 + 8 * (b >> 1)] = uint8_t(v[l] >> (8 * b));
  }
  return storeMatrixRows(w, op, s, rows) ? op + 1 : nullptr;
}

const Op* stmatrix(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  const unsigned count = s.count[0];
  uint16_t mats[4][8][8];
  const bool trans = s.flags & kFlagTrans;
  for (unsigned j = 0; j < count; ++j) {
    const uint32_t* v = R<uint32_t>(w, s.regs[0][j]);
    for (unsigned l = 0; l < 32; ++l) {
      unsigned g = l >> 2, t = l & 3;
      (trans ? mats[j][2 * t][g] : mats[j][g][2 * t]) = uint16_t(v[l]);
      (trans ? mats[j][2 * t + 1][g] : mats[j][g][2 * t + 1]) = uint16_t(v[l] >> 16);
    }
  }
  uint8_t rows[4][8][16];
  std::memcpy(rows, mats, sizeof rows);
  return storeMatrixRows(w, op, s, rows) ? op + 1 : nullptr;
}

// movmatrix.sync.aligned.m8n8.trans.b16: the transpose of the 8x8 matrix the warp's registers hold (ldmatrix's
// layout).
const Op* movmatrix(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  uint16_t mat[8][8];
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l >> 2, t = l & 3;
    mat[g][2 * t] = uint16_t(a[l]);
    mat[g][2 * t + 1] = uint16_t(a[l] >> 16);
  }
  alignas(64) uint32_t v[32];
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l >> 2, t = l & 3;
    v[l] = uint32_t(mat[2 * t][g]) | uint32_t(mat[2 * t + 1][g]) << 16;
  }
  h::store<uint32_t>(w, op->d, [&](int l) { return v[l]; });
  return op + 1;
}

// wmma.load / wmma.store: element (row, col) of the tile at base + (row * stride + col) elements (row-major) or
// base + (col * stride + row) (column-major); sub-byte elements count in bits. Every lane passes the same base
// and stride (the ISA requires it); lane 0's are used.
struct TileAccess {
  unsigned rows, cols, stride, bits;
  bool rowMajor;
  uint64_t bitOffset(Pos q) const {
    return (rowMajor ? uint64_t(q.row) * stride + q.col : uint64_t(q.col) * stride + q.row) * bits;
  }
};

TileAccess tileOf(Warp& w, const MatrixSite& s, Role role) {
  Pos shape = roleShape(s, role);
  TileAccess t{shape.row, shape.col, 0, elemBits(Elem(s.elem[role == D ? C : role])), (s.flags & kFlagRowMajor) != 0};
  t.stride = s.stride ? R<uint32_t>(w, s.stride)[0] : (t.rowMajor ? t.cols : t.rows);
  return t;
}

int firstLane(Warp& w) { return std::countr_zero(w.exec | 0x80000000u); }

// The host address of `size` bytes at addr in `space` for lane `lane`, or nullptr, raising no fault, where they are
// not one valid range.
uint8_t* rangeMemory(Warp& w, mem::Space space, int lane, uint64_t addr, uint32_t size, bool write) {
  const char* why = "";
  switch (space) {
    case mem::Shared: return mem::resolve<mem::Shared>(w, lane, addr, size, write, why);
    case mem::Global: return mem::resolve<mem::Global>(w, lane, addr, size, write, why);
    case mem::Local: return mem::resolve<mem::Local>(w, lane, addr, size, write, why);
    case mem::Frame: return mem::resolve<mem::Frame>(w, lane, addr, size, write, why);
    default: return mem::resolve<mem::Generic>(w, lane, addr, size, write, why);
  }
}

// wmma.load/.store of 16- or 32-bit elements by whole lines of the tile (its rows when row-major, else its
// columns): the host address of each line, all resolved before anything is copied; false where a line is not one
// valid, aligned range, and the per-element path then faults at the element the GPU names.
constexpr unsigned kMaxTileLines = 32;
bool tileLines(Warp& w, const MatrixSite& s, const TileAccess& t, int lane, uint64_t base, bool write,
               uint8_t** lines) {
  const unsigned unit = t.bits / 8, count = t.rowMajor ? t.rows : t.cols, length = t.rowMajor ? t.cols : t.rows;
  if ((t.bits != 16 && t.bits != 32) || count > kMaxTileLines || !fullWarpFastPath(w, Rewrite::MatrixTileLines))
    return false;
  for (unsigned l = 0; l < count; ++l) {
    const uint64_t addr = base + uint64_t(l) * t.stride * unit;
    if (addr & (unit - 1)) return false;
    lines[l] = rangeMemory(w, mem::Space(s.space), lane, addr, length * unit, write);
    if (!lines[l]) return false;
  }
  return true;
}

// MatrixSite::lineWords of a wmma.load/.store site whose fragment (slot D) follows role `role`'s layout.
std::vector<uint16_t> lineWordTable(const MatrixSite& s, Role role) {
  if (elemBits(Elem(s.elem[D])) != 16) return {};
  const unsigned cols = roleShape(s, role).col;
  const bool rowMajor = s.flags & kFlagRowMajor;
  auto line = [&](unsigned pos) { return rowMajor ? pos / cols : pos % cols; };
  auto along = [&](unsigned pos) { return rowMajor ? pos % cols : pos / cols; };
  std::vector<uint16_t> words(size_t(s.count[D]) * 32);
  for (size_t w = 0; w < words.size(); ++w) {
    const unsigned lo = s.index[D][2 * w], hi = s.index[D][2 * w + 1];
    if (line(hi) != line(lo) || along(hi) != along(lo) + 1 || line(lo) > 255 || along(lo) > 255) return {};
    words[w] = uint16_t(line(lo) << 8 | along(lo));
  }
  return words;
}

// Copies between a tile's lines and a row-major matrix of 32-bit patterns (Bits-bit elements).
template <unsigned Bits> void linesToMatrix(const TileAccess& t, uint8_t* const* lines, uint32_t* m) {
  using E = std::conditional_t<Bits == 16, uint16_t, uint32_t>;
  for (unsigned r = 0; r < t.rows; ++r)
    for (unsigned c = 0; c < t.cols; ++c) {
      E v;
      std::memcpy(&v, lines[t.rowMajor ? r : c] + (t.rowMajor ? c : r) * sizeof(E), sizeof(E));
      m[r * t.cols + c] = v;
    }
}
template <unsigned Bits> void matrixToLines(const TileAccess& t, const uint32_t* m, uint8_t* const* lines) {
  using E = std::conditional_t<Bits == 16, uint16_t, uint32_t>;
  for (unsigned r = 0; r < t.rows; ++r)
    for (unsigned c = 0; c < t.cols; ++c) {
      const E v = E(m[r * t.cols + c]);
      std::memcpy(lines[t.rowMajor ? r : c] + (t.rowMajor ? c : r) * sizeof(E), &v, sizeof(E));
    }
}

const Op* wmmaLoad(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  TileAccess t = tileOf(w, s, MatrixOperands::of(*op).role);
  const int lane0 = firstLane(w);
  const uint64_t base = laneAddress(w, s, lane0);
  if (uint8_t * lines[kMaxTileLines]; tileLines(w, s, t, lane0, base, false, lines)) {
    if (!s.lineWords.empty()) {  // each register's two halves straight from their line
      // a fragment that repeats its elements (.f16 A and B) repeats its registers: copied
      const Pos shape = roleShape(s, MatrixOperands::of(*op).role);
      const unsigned distinct = std::min<unsigned>(s.count[D], shape.row * shape.col / 64);
      for (unsigned r = 0; r < s.count[D]; ++r) {
        alignas(64) uint32_t v[32];
        if (r >= distinct) {
          h::storeLanes<uint32_t>(w, s.regs[D][r], R<uint32_t>(w, s.regs[D][r - distinct]));
          continue;
        }
        const uint16_t* words = s.lineWords.data() + r * 32;
        for (unsigned l = 0; l < 32; ++l) std::memcpy(&v[l], lines[words[l] >> 8] + 2 * (words[l] & 0xff), 4);
        h::storeLanes<uint32_t>(w, s.regs[D][r], v);
      }
      return op + 1;
    }
    alignas(64) uint32_t m32[32 * 32];
    if (t.bits == 16) {
      linesToMatrix<16>(t, lines, m32);
      scatterBits<16>(w, s, D, m32);
    } else {
      linesToMatrix<32>(t, lines, m32);
      scatterBits<32>(w, s, D, m32);
    }
    return op + 1;
  }
  static thread_local uint64_t m[kMaxElems];
  const unsigned unit = std::max(1u, t.bits / 8);
  for (unsigned r = 0; r < t.rows; ++r)
    for (unsigned c = 0; c < t.cols; ++c) {
      uint64_t bit = t.bitOffset({r, c});
      uint8_t* p = laneMemory(w, op, mem::Space(s.space), lane0, base + bit / 8, unit, false);
      if (!p) return nullptr;
      uint64_t v = 0;
      std::memcpy(&v, p, unit);
      if (t.bits < 8) v = (v >> (bit % 8)) & ((1u << t.bits) - 1);
      m[r * t.cols + c] = v;
    }
  scatter(w, s, D, m);
  return op + 1;
}

const Op* wmmaStore(Warp& w, const Op* op) {
  const MatrixSite& s = siteOf(w, op);
  TileAccess t = tileOf(w, s, D);
  t.bits = elemBits(Elem(s.elem[D]));
  const int lane0 = firstLane(w);
  const uint64_t base = laneAddress(w, s, lane0);
  if (uint8_t * lines[kMaxTileLines]; tileLines(w, s, t, lane0, base, true, lines)) {
    if (!s.lineWords.empty()) {
      for (unsigned r = 0; r < s.count[D]; ++r) {
        const uint32_t* v = R<uint32_t>(w, s.regs[D][r]);
        const uint16_t* words = s.lineWords.data() + r * 32;
        for (unsigned l = 0; l < 32; ++l) std::memcpy(lines[words[l] >> 8] + 2 * (words[l] & 0xff), &v[l], 4);
      }
      return op + 1;
    }
    alignas(64) uint32_t m32[32 * 32];
    if (t.bits == 16) {
      gatherBits<16>(w, s, D, m32);
      matrixToLines<16>(t, m32, lines);
    } else {
      gatherBits<32>(w, s, D, m32);
      matrixToLines<32>(t, m32, lines);
    }
    return op + 1;
  }
  static thread_local uint64_t m[32 * 32];
  gather(w, s, D, m);
  const unsigned unit = t.bits / 8;
  for (unsigned r = 0; r < t.rows; ++r)
    for (unsigned c = 0; c < t.cols; ++c) {
      uint8_t* p = laneMemory(w, op, mem::Space(s.space), lane0, base + t.bitOffset({r, c}) / 8, unit, true);
      if (!p) return nullptr;
      std::memcpy(p, &m[r * t.cols + c], unit);
    }
  return op + 1;
}

struct Shape {
  ptx::Mod mod;
  uint16_t m, n, k;
};
constexpr Shape kShapes[] = {
    {ptx::Mod::m8n8k4, 8, 8, 4},       {ptx::Mod::m8n8k16, 8, 8, 16},     {ptx::Mod::m8n8k32, 8, 8, 32},
    {ptx::Mod::m8n8k128, 8, 8, 128},   {ptx::Mod::m16n8k4, 16, 8, 4},     {ptx::Mod::m16n8k8, 16, 8, 8},
    {ptx::Mod::m16n8k16, 16, 8, 16},   {ptx::Mod::m16n8k32, 16, 8, 32},   {ptx::Mod::m16n8k64, 16, 8, 64},
    {ptx::Mod::m16n8k128, 16, 8, 128}, {ptx::Mod::m16n8k256, 16, 8, 256}, {ptx::Mod::m16n16k16, 16, 16, 16},
    {ptx::Mod::m16n16k8, 16, 16, 8},   {ptx::Mod::m32n8k16, 32, 8, 16},   {ptx::Mod::m8n32k16, 8, 32, 16},
};

}  // namespace

namespace lowering {

void KernelLowerer::lowerMatrix(const Instruction& in) {
  // a register operand alone or in braces (sparse metadata, scale factors: nvcc writes CUTLASS's `{%r}`)
  auto unbraced = [&](const Operand& o) -> const Operand& {
    return o.kind == OperandKind::Vector && o.value == 1 ? fn_->elems[o.index] : o;
  };
  MatrixSite site;
  const Shape* shape = nullptr;
  for (const Shape& sh : kShapes)
    if (fn_->hasMod(in, sh.mod)) shape = &sh;
  auto fragment = [&](Role role, const Operand& o, bool write, Type regType, std::vector<Dst>& pending) {
    if (o.kind != OperandKind::Vector || o.value > 8)
      fail(line_, "matrix fragment must be a vector of up to 8 registers");
    site.count[role] = uint8_t(o.value);
    for (unsigned q = 0; q < unsigned(o.value); ++q) {
      const Operand& e = fn_->elems[o.index + q];
      if (write) {
        Dst d = dst(e, regType);
        site.regs[role][q] = d.off;
        pending.push_back(d);
      } else {
        site.regs[role][q] = src(e, regType);
      }
    }
  };
  auto regTypeOf = [](Elem e) {
    return e == Elem::F64 ? Type::f64 : e == Elem::F32 ? Type::f32 : e == Elem::S32 ? Type::s32 : Type::b32;
  };
  auto setAddress = [&](const Operand& o) {
    Addr a = address(in, o);
    if (a.space == mem::Param) fail(line_, "matrix access to the parameter space");
    site.addr = a.base;
    site.addrSize = uint8_t(a.baseSize);
    site.offset = a.imm;
    site.space = uint8_t(a.space);
  };
  auto emitSite = [&](Handler hnd, std::vector<Dst>& pending, Role role = D) {
    MatrixOperands{uint32_t(prog_.matrixSites.size()), role}.into(emit(hnd));
    prog_.matrixSites.push_back(site);
    for (const Dst& d : pending) finish(d);  // may emit width conversions after the op
  };
  std::vector<Dst> pending;
  // mma with a .kind, dense or sparse (the checker has checked the forms): types d, a, b, c, and the scale type as
  // the fifth type modifier; a sparse form has its metadata and sparsity selector (0) before the scale factors
  auto lowerKind = [&](bool sparse) {
    const bool scaled = fn_->hasMod(in, ptx::Mod::block_scale);
    const bool packed = fn_->hasMod(in, ptx::Mod::kind_mxf4) || fn_->hasMod(in, ptx::Mod::kind_mxf4nvf4);
    auto kindElem = [&](Type t) {
      switch (t) {
        case Type::e4m3: return Elem::E4M3;
        case Type::e5m2: return Elem::E5M2;
        case Type::e3m2: return Elem::E3M2x8;
        case Type::e2m3: return Elem::E2M3x8;
        case Type::e2m1: return packed ? Elem::E2M1 : Elem::E2M1x8;
        default: return elemOf(t);
      }
    };
    site.m = shape->m, site.n = shape->n, site.k = shape->k;
    site.elem[D] = uint8_t(elemOf(in.types[0])), site.elem[A] = uint8_t(kindElem(in.types[1]));
    site.elem[B] = uint8_t(kindElem(in.types[2])), site.elem[C] = uint8_t(elemOf(in.types[3]));
    auto accReg = [&](Type t) { return t == Type::f16 ? Type::b32 : regTypeOf(elemOf(t)); };
    fragment(A, opnd(in, 1), false, Type::b32, pending);
    fragment(B, opnd(in, 2), false, Type::b32, pending);
    fragment(C, opnd(in, 3), false, accReg(in.types[3]), pending);
    fragment(D, opnd(in, 0), true, accReg(in.types[0]), pending);
    if (scaled) {
      const ptx::Mod* mods = fn_->modsOf(in);
      Type scaleType = Type::ue8m0;
      unsigned types = 0;
      for (uint32_t q = 0; q < in.modCount; ++q)
        if (ptx::modCategory(mods[q]) == ptx::ModCat::Type && types++ == 4) scaleType = ptx::modType(mods[q]);
      site.scaleElem = uint8_t(scaleType == Type::ue4m3 ? Elem::UE4M3 : Elem::UE8M0);
      site.scaleVec = fn_->hasMod(in, ptx::Mod::scale_vec_4X)    ? 4
                      : fn_->hasMod(in, ptx::Mod::scale_vec_2X)  ? 2
                      : fn_->hasMod(in, ptx::Mod::scale_vec_1X)  ? 1
                      : fn_->hasMod(in, ptx::Mod::kind_mxf8f6f4) ? 1
                                                                 : 2;
      for (unsigned m = 0; m < 2; ++m) {
        const Operand& reg = opnd(in, (sparse ? 6 : 4) + 2 * m);
        site.scale[m] = src(unbraced(reg), Type::b32);
        const Operand& sel = opnd(in, (sparse ? 7 : 5) + 2 * m);
        if (sel.kind != OperandKind::Vector || sel.value != 2) fail(line_, "mma: {byte-id, thread-id} expected");
        for (unsigned q = 0; q < 2; ++q) site.scaleSelector[m][q] = src(fn_->elems[sel.index + q], Type::u32);
      }
    }
    for (Role r : {D, B, C}) site.index[r] = layoutTable(site, r, r);
    if (!sparse) {
      site.index[A] = layoutTable(site, A, A);
      return emitSite(&mmaKind, pending);
    }
    site.metadata = src(unbraced(opnd(in, 4)), Type::b32);
    MatrixSite half = site;  // the fragment of A is the dense A of half the K
    half.k = uint16_t(site.k / 2);
    site.index[A] = layoutTable(half, A, A);
    emitSite(&mmaKindSparse, pending);
  };
  switch (in.opcode) {
    case Opcode::Mma:
    case Opcode::WmmaMma: {
      if (!shape) return unsupported(in, "matrix shape");
      bool wmma = in.opcode == Opcode::WmmaMma;
      if (fn_->hasMod(in, ptx::Mod::kind_f8f6f4) || fn_->hasMod(in, ptx::Mod::kind_mxf8f6f4) ||
          fn_->hasMod(in, ptx::Mod::kind_mxf4) || fn_->hasMod(in, ptx::Mod::kind_mxf4nvf4) ||
          fn_->hasMod(in, ptx::Mod::block_scale)) {
        return lowerKind(false);
      }
      Type dt, at, bt, ct;
      if (in.numTypes == 2) {
        dt = in.types[0], ct = in.types[1], at = bt = Type::f16;
      } else {
        dt = in.types[0], at = in.types[1], bt = in.types[2], ct = in.types[3];
      }
      const bool quadPairs = !wmma && shape->mod == ptx::Mod::m8n8k4 && at == Type::f16;
      if (quadPairs) {
        const ptx::Mod* mods = fn_->modsOf(in);
        std::vector<ptx::Mod> layouts;
        for (uint32_t q = 0; q < in.modCount; ++q)
          if (mods[q] == ptx::Mod::row || mods[q] == ptx::Mod::col) layouts.push_back(mods[q]);
        if (layouts.size() != 2) return unsupported(in, "mma.m8n8k4 .f16 without two layouts");
        if (layouts[0] == ptx::Mod::col) site.flags |= kFlagColA;
        if (layouts[1] == ptx::Mod::row) site.flags |= kFlagRowB;
      }
      site.m = shape->m, site.n = shape->n, site.k = shape->k;
      site.elem[D] = uint8_t(elemOf(dt)), site.elem[A] = uint8_t(elemOf(at));
      site.elem[B] = uint8_t(elemOf(bt)), site.elem[C] = uint8_t(elemOf(ct));
      if (in.has(ptx::Flag::satfinite)) site.flags |= kFlagSatfinite;
      if (fn_->hasMod(in, ptx::Mod::xor_)) site.flags |= kFlagXor;
      if (wmma) {
        site.flags |= kFlagWmma;
        // wmma.mma's layouts only say how the fragments were loaded: the fragments themselves are layout-free
      }
      // the accumulators of a 16-bit type travel as pairs in 32-bit registers
      auto accReg = [&](Type t) { return t == Type::f16 ? Type::b32 : regTypeOf(elemOf(t)); };
      fragment(A, opnd(in, 1), false, regTypeOf(elemOf(at)) == Type::f64 ? Type::f64 : Type::b32, pending);
      fragment(B, opnd(in, 2), false, regTypeOf(elemOf(bt)) == Type::f64 ? Type::f64 : Type::b32, pending);
      fragment(C, opnd(in, 3), false, accReg(ct), pending);
      fragment(D, opnd(in, 0), true, accReg(dt), pending);
      if (quadPairs) return emitSite(&mma884, pending);
      for (Role r : {D, A, B, C}) site.index[r] = layoutTable(site, r, r);
      emitSite(&mmaSync, pending);
      return;
    }
    case Opcode::MmaSp:
    case Opcode::MmaSpOrdered: {
      if (!shape) return unsupported(in, "matrix shape");
      if (fn_->hasMod(in, ptx::Mod::kind_f8f6f4) || fn_->hasMod(in, ptx::Mod::kind_mxf8f6f4) ||
          fn_->hasMod(in, ptx::Mod::kind_mxf4) || fn_->hasMod(in, ptx::Mod::kind_mxf4nvf4))
        return lowerKind(true);
      if (in.numTypes != 4) return unsupported(in, "mma.sp with these types");
      const Operand& selector = opnd(in, 5);
      if (selector.kind != OperandKind::Imm) fail(line_, "mma.sp needs an immediate sparsity selector");
      const Type dt = in.types[0], at = in.types[1], bt = in.types[2], ct = in.types[3];
      site.m = shape->m, site.n = shape->n, site.k = shape->k;
      site.elem[D] = uint8_t(elemOf(dt)), site.elem[A] = uint8_t(elemOf(at));
      site.elem[B] = uint8_t(elemOf(bt)), site.elem[C] = uint8_t(elemOf(ct));
      if (in.has(ptx::Flag::satfinite)) site.flags |= kFlagSatfinite;
      site.selector = uint8_t(selector.value);
      auto accReg = [&](Type t) { return t == Type::f16 ? Type::b32 : regTypeOf(elemOf(t)); };
      fragment(A, opnd(in, 1), false, Type::b32, pending);
      fragment(B, opnd(in, 2), false, Type::b32, pending);
      fragment(C, opnd(in, 3), false, accReg(ct), pending);
      fragment(D, opnd(in, 0), true, accReg(dt), pending);
      site.metadata = src(unbraced(opnd(in, 4)), Type::b32);
      for (Role r : {D, B, C}) site.index[r] = layoutTable(site, r, r);
      // the fragment of A is the dense A of half the K
      MatrixSite packed = site;
      packed.k = uint16_t(site.k / 2);
      site.index[A] = layoutTable(packed, A, A);
      emitSite(&mmaSparse, pending);
      return;
    }
    case Opcode::WmmaLoad:
    case Opcode::WmmaStore: {
      if (!shape) return unsupported(in, "matrix shape");
      bool load = in.opcode == Opcode::WmmaLoad;
      Role role = load ? (fn_->hasMod(in, ptx::Mod::comp_a) ? A : fn_->hasMod(in, ptx::Mod::comp_b) ? B : C) : D;
      site.m = shape->m, site.n = shape->n, site.k = shape->k;
      site.flags = kFlagWmma | (fn_->hasMod(in, ptx::Mod::row) ? kFlagRowMajor : 0);
      Elem el = elemOf(in.type());
      site.elem[role] = uint8_t(el);
      site.elem[D] = uint8_t(el);
      site.elem[C] = uint8_t(el);
      Type rt = el == Elem::F64 ? Type::f64 : el == Elem::F32 ? Type::f32 : el == Elem::S32 ? Type::s32 : Type::b32;
      setAddress(opnd(in, load ? 1 : 0));
      if (in.numOperands > 2) site.stride = src(opnd(in, 2), Type::u32);
      fragment(D, opnd(in, load ? 0 : 1), load, rt, pending);
      site.index[D] = layoutTable(site, D, role);
      site.lineWords = lineWordTable(site, role);
      emitSite(load ? &wmmaLoad : &wmmaStore, pending, role);
      return;
    }
    case Opcode::Ldmatrix:
    case Opcode::Stmatrix: {
      bool load = in.opcode == Opcode::Ldmatrix;
      // the checker admitted the shape, the types and the register count
      const bool unpack = in.numTypes == 2 && (in.types[1] == Type::b4x16_p64 || in.types[1] == Type::b6x16_p32);
      if (unpack) site.k = in.types[1] == Type::b4x16_p64 ? 4 : 6;
      const bool bytes16x16 = fn_->hasMod(in, ptx::Mod::m16n16), bytes16x8 = fn_->hasMod(in, ptx::Mod::m16n8);
      if (in.has(ptx::Flag::trans)) site.flags |= kFlagTrans;
      setAddress(opnd(in, load ? 1 : 0));
      const Operand& v = opnd(in, load ? 0 : 1);
      if (v.kind == OperandKind::Vector) {
        fragment(D, v, load, Type::b32, pending);
      } else {
        site.count[D] = 1;
        if (load) {
          Dst d = dst(v, Type::b32);
          site.regs[D][0] = d.off;
          pending.push_back(d);
        } else {
          site.regs[D][0] = src(v, Type::b32);
        }
      }
      emitSite(bytes16x16  ? &ldmatrixTransposedBytes
               : bytes16x8 ? &stmatrixTransposedBytes
               : unpack    ? &ldmatrixUnpack
               : load      ? &ldmatrix
                           : &stmatrix,
               pending);
      return;
    }
    case Opcode::Movmatrix: {
      uint32_t a = src(opnd(in, 1), Type::b32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&movmatrix);
      op.a = a;
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::WgmmaFence:
    case Opcode::WgmmaCommitGroup:
    case Opcode::WgmmaWaitGroup:
    case Opcode::WgmmaMmaAsync:
    case Opcode::WgmmaMmaAsyncSp: return lowerWgmma(in);
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
