// The parts of the warp matrix instructions (isa/matrix.cpp) that the warpgroup ones (isa/wgmma.cpp) share: element
// types, fragment roles and flags, the ISA's mma fragment layouts and the tensor core's arithmetic.
#pragma once

#include <cstdint>

#include "exec/engine.h"

namespace ptx::exec::matrix {

// Element types of fragments.
// The sm_120 .kind forms add FP4 (E2M1: packed, or E2M1x8 in bits 5:2 of a byte), FP6 in bits 5:0 of a byte
// (E2M3x8, E3M2x8) and the scale-factor types (UE8M0, UE4M3).
enum class Elem : uint8_t {
  F16,
  BF16,
  TF32,
  F32,
  F64,
  S8,
  U8,
  S4,
  U4,
  B1,
  E4M3,
  E5M2,
  S32,
  E2M1,
  E2M1x8,
  E2M3x8,
  E3M2x8,
  UE8M0,
  UE4M3
};

constexpr unsigned elemBits(Elem e) {
  switch (e) {
    case Elem::F16:
    case Elem::BF16: return 16;
    case Elem::F64: return 64;
    case Elem::S8:
    case Elem::U8:
    case Elem::E4M3:
    case Elem::E5M2:
    case Elem::E2M1x8:
    case Elem::E2M3x8:
    case Elem::E3M2x8:
    case Elem::UE8M0:
    case Elem::UE4M3: return 8;
    case Elem::S4:
    case Elem::U4:
    case Elem::E2M1: return 4;
    case Elem::B1: return 1;
    default: return 32;
  }
}
constexpr bool isFloatElem(Elem e) {
  return e == Elem::F16 || e == Elem::BF16 || e == Elem::TF32 || e == Elem::F32 || e == Elem::F64 || e == Elem::E4M3 ||
         e == Elem::E5M2;
}

// MatrixSite::flags
constexpr uint8_t kFlagSatfinite = 1;  // integer mma: clamp to s32
constexpr uint8_t kFlagXor = 2;        // b1: .xor.popc (else .and.popc)
constexpr uint8_t kFlagWmma = 4;       // wmma fragment layouts (else mma's)
constexpr uint8_t kFlagRowMajor = 8;   // wmma.load/.store: the tile is row-major
constexpr uint8_t kFlagColA = 16;      // mma.m8n8k4 .f16: A is .col (else .row)
constexpr uint8_t kFlagTrans = 32;     // ldmatrix/stmatrix .trans
constexpr uint8_t kFlagWgmma = 64;     // wgmma: fp8 products sum in the H100's reduced precision (matrix.cpp)
constexpr uint8_t kFlagRowB = 128;     // mma.m8n8k4 .f16: B is .row (else .col)

// Fragment roles (MatrixSite::regs index).
enum Role : unsigned { D = 0, A = 1, B = 2, C = 3 };

// Typed operand views of the matrix ops (control_ops.h explains the idea): an op names its site, which holds the
// fragments' registers and layouts (engine.h: MatrixSite, WgmmaSite); wmma.load also the fragment it loads.
struct MatrixOperands {
  uint32_t site = 0;  // Program::matrixSites
  Role role = D;      // wmma.load: the fragment the tile fills (its registers are the site's D)

  static MatrixOperands of(const Op& op) { return {op.aux, Role(op.imm)}; }
  void into(Op& op) const {
    op.aux = site;
    op.imm = role;
  }
};
struct WgmmaOperands {
  uint32_t site = 0;  // Program::wgmmaSites

  static WgmmaOperands of(const Op& op) { return {op.aux}; }
  void into(Op& op) const { op.aux = site; }
};

struct Pos {
  unsigned row, col;
};

// Row and column of element e of lane l in the mma fragments of A (p elements per register, m rows) and of C/D
// (PTX ISA "Matrix fragments for mma.m16n8k*"): A's rows g and g+8 alternate by register, then columns by groups of
// 4p; C/D hold two adjacent columns per lane, rows g then g+8. Inline: wgmma calls them for every element.
inline Pos mmaA(unsigned l, unsigned e, unsigned p, unsigned m) {
  unsigned g = l >> 2, t = l & 3, r = e / p, i = e % p, blocks = m / 8;
  return {g + 8 * (r % blocks), p * t + 4 * p * (r / blocks) + i};
}
inline Pos mmaC(unsigned l, unsigned e) {
  unsigned g = l >> 2, t = l & 3;
  return {g + 8 * (e >> 1), 2 * t + (e & 1)};
}

Elem elemOf(Type t);

// Sparse A (mma.sp): the K position (of s.k) of element q of row `row` (0-15) of the compressed A, from the 32
// lanes' metadata registers and s.selector.
unsigned sparsePosition(const MatrixSite& s, const uint32_t* meta, unsigned row, unsigned q);

// D = A B + C for row-major matrices of bit patterns (A: M x K, B: K x N, C and D: M x N) with the numerics of the
// site's element types (MatrixSite::elem, by Role) and flags. narrowAllowed: the runtime fast path narrow-tensor-sums
// may run (fullWarpFastPath).
void multiply(const MatrixSite& s, unsigned M, unsigned N, unsigned K, const uint64_t* a, const uint64_t* b,
              const uint64_t* c, uint64_t* d, bool narrowAllowed);

// The runtime fast path narrow-tensor-sums (isa/matrix.cpp explains why its bits are the reference's): whether a
// product of these types with this K takes it; the decoding of its multiplicands from 32-bit patterns (false where
// a value needs the reference path); D = A B + C from decoded A (M x K) and B (K x N, rows ldb apart), C and D as
// M x N 32-bit patterns of f32 or f16 (halfC, halfD), rows ldc apart. K 4, 8 or 16, N 8, 16 or 32, M x N at most
// 1024.
bool narrowProduct(Elem a, Elem b, Elem c, Elem d, unsigned k);
bool decodeNarrowBits(Elem e, const uint32_t* bits, unsigned n, float* v, int* ex);
void narrowSums(unsigned M, unsigned N, unsigned K, bool halfC, bool halfD, const float* av, const int* ae,
                const float* bv, const int* be, unsigned ldb, const uint32_t* cbits, uint32_t* dbits, unsigned ldc);

}  // namespace ptx::exec::matrix
