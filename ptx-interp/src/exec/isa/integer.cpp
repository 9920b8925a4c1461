// Integer arithmetic, logic and bit manipulation (OpClass Arith and Logic on integer types, and prmt), including
// the SIMD .u16x2/.s16x2 forms.
#include "exec/lowerer.h"
#include "exec/vector_ops.h"

namespace ptx::exec {

// Typed operand views of the integer ops that carry more than d = f(a, b, c): what the extra fields mean, named;
// the one place that packs them at lowering (into) and reads them in the handler (of).
namespace intops {

// popc / clz: d = the count over a.
struct BitCount {
  enum Kind : uint8_t { Popc = 0, Clz = 1 };
  Kind kind = Popc;
  static BitCount of(const Op& op) { return {Kind(op.aux)}; }
  void into(Op& op) const { op.aux = kind; }
};

// bfi d, a (source), b (base), c (position), length: the fourth source register.
struct BitFieldInsert {
  uint32_t length = 0;  // u32 register
  static BitFieldInsert of(const Op& op) { return {op.e}; }
  void into(Op& op) const { op.e = length; }
};

// add/min/max on .u16x2/.s16x2: .relu (negative halves become 0).
struct PackedHalves {
  bool relu = false;
  static PackedHalves of(const Op& op) { return {(op.aux & 1) != 0}; }
  void into(Op& op) const { op.aux = relu ? 1 : 0; }
};

// prmt d, a, b, c: the byte-selection mode (Generic: c holds four 4-bit selectors).
struct Permute {
  enum Mode : uint8_t { Generic = 0, F4e = 1, B4e = 2, Rc8 = 3, Ecl = 4, Ecr = 5, Rc16 = 6 };
  Mode mode = Generic;
  static Permute of(const Op& op) { return {Mode(op.aux)}; }
  void into(Op& op) const { op.aux = mode; }
};

// lop3 d, a, b, c, lut: the 8-bit truth table.
struct LogicTable {
  uint8_t lut = 0;
  static LogicTable of(const Op& op) { return {uint8_t(op.imm)}; }
  void into(Op& op) const { op.imm = lut; }
};

// dp4a / dp2a d, a, b, c: the signedness of a and b; dp2a.hi takes the upper two bytes of b.
struct DotProduct {
  bool aSigned = false, bSigned = false, high = false;
  static DotProduct of(const Op& op) { return {(op.aux & 1) != 0, (op.aux & 2) != 0, (op.aux & 4) != 0}; }
  void into(Op& op) const { op.aux = (aSigned ? 1 : 0) | (bSigned ? 2 : 0) | (high ? 4 : 0); }
};

// bmsk (wrap) and szext (signed, wrap): positions and lengths wrap modulo 32 instead of clamping at 32.
struct BitRange {
  bool isSigned = false, wrap = false;
  static BitRange of(const Op& op) { return {(op.aux & 1) != 0, (op.aux & 2) != 0}; }
  void into(Op& op) const { op.aux = (isSigned ? 1 : 0) | (wrap ? 2 : 0); }
};

}  // namespace intops

namespace h {

// ---- functors --------------------------------------------------------------------------------------------------

template <class U> PTX_HOT U brev(U x) {
  U r = 0;
  for (unsigned i = 0; i < sizeof(U) * 8; ++i) r |= U((x >> i) & 1) << (sizeof(U) * 8 - 1 - i);
  return r;
}

#define PTX_BIN(Name, expr)                                          \
  struct Name {                                                      \
    template <class T> static PTX_HOT T f(T a, T b) { return expr; } \
  };
#define PTX_UN(Name, expr)                                      \
  struct Name {                                                 \
    template <class T> static PTX_HOT T f(T a) { return expr; } \
  };
#define PTX_TER(Name, expr)                                               \
  struct Name {                                                           \
    template <class T> static PTX_HOT T f(T a, T b, T c) { return expr; } \
  };

// Wrapping, as the hardware: through the unsigned type (signed overflow would be undefined in C++).
PTX_BIN(AddF, T(Unsigned<T>(a) + Unsigned<T>(b)))
PTX_BIN(SubF, T(Unsigned<T>(a) - Unsigned<T>(b)))
PTX_BIN(MulLoF, T(Unsigned<T>(a) * Unsigned<T>(b)))
PTX_BIN(AndF, T(a& b))
PTX_BIN(OrF, T(a | b))
PTX_BIN(XorF, T(a ^ b))
PTX_BIN(MinF, a < b ? a : b)
PTX_BIN(MaxF, a > b ? a : b)
PTX_UN(NotF, T(~a))
PTX_UN(CnotF, T(a == 0 ? 1 : 0))
PTX_UN(NegIF, T(Unsigned<T>(0) - Unsigned<T>(a)))
PTX_UN(AbsIF, T(a < 0 ? T(Unsigned<T>(0) - Unsigned<T>(a)) : a))
PTX_UN(PopcF, T(std::popcount(Unsigned<T>(a))))
PTX_UN(ClzF, T(std::countl_zero(Unsigned<T>(a))))
PTX_UN(BrevF, T(brev(Unsigned<T>(a))))
PTX_UN(MovF, a)
PTX_TER(MadLoF, T(Unsigned<T>(a) * Unsigned<T>(b) + Unsigned<T>(c)))

struct MulHiF {
  template <class T> static PTX_HOT T f(T a, T b) {
    if constexpr (sizeof(T) == 8) {
      using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
      return T((W(a) * W(b)) >> 64);
    } else {
      using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      return T((W(a) * W(b)) >> (8 * sizeof(T)));
    }
  }
};
struct MadHiF {
  template <class T> static PTX_HOT T f(T a, T b, T c) { return T(Unsigned<T>(MulHiF::f(a, b)) + Unsigned<T>(c)); }
};
// mad.hi.sat.s32: the high half of the product plus c, clamped to the s32 range instead of wrapping
struct MadHiSatF {
  static PTX_HOT int32_t f(int32_t a, int32_t b, int32_t c) {
    const int64_t sum = ((int64_t(a) * int64_t(b)) >> 32) + int64_t(c);
    return int32_t(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
  }
};
struct DivIF {
  template <class T> static PTX_HOT T f(T a, T b) {
    if (b == 0) return T(~T(0));  // GPU: all ones
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(Unsigned<T>(0) - Unsigned<T>(a));
    }
    return T(a / b);
  }
};
struct RemIF {
  template <class T> static PTX_HOT T f(T a, T b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return 0;
    }
    return T(a % b);
  }
};
// Shifts: amount is an unsigned 32-bit register, clamped to the width.
template <class T, bool Left> PTX_LANES const Op* shift(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  constexpr uint32_t bits = sizeof(T) * 8;
  store<T>(w, op->d, [&](int i) -> T {
    // a read in every lane: read only where the amount is below the width, it became masked loads (vpmaskmovq)
    const T x = a[i];
    uint32_t s = b[i] > bits - 1 ? bits - 1 : b[i];
    if constexpr (Left) {
      return b[i] >= bits ? T(0) : T(Unsigned<T>(x) << s);
    } else if constexpr (std::is_signed_v<T>) {
      return T(x >> s);
    } else {
      return b[i] >= bits ? T(0) : T(x >> s);
    }
  });
  return op + 1;
}

// A shift by an immediate amount (`x >> 1`, `i << 2`), the op's imm: the same amount in every lane, so the lane loop
// is one vector shift by a scalar count, where the register form clamps each lane's own amount first and, on 64-bit
// lanes, widens the 32-bit amounts (about three times the instructions per vector). The same results as shift.
// What a shift by `amount` of T lanes shifts by: -1 where every lane's result is 0 (a left or unsigned shift by the
// width or more), else the amount clamped to the width less one (a signed right shift fills with the sign).
template <class T, bool Left> PTX_HOT int shiftImmediateAmount(uint32_t amount) {
  constexpr uint32_t bits = sizeof(T) * 8;
  if (amount >= bits && (Left || !std::is_signed_v<T>)) return -1;
  return int(amount > bits - 1 ? bits - 1 : amount);
}
template <class T, bool Left> PTX_HOT T shiftLane(T a, uint32_t s) {
  if constexpr (Left)
    return T(Unsigned<T>(a) << s);
  else
    return T(a >> s);
}
template <class T, bool Left> PTX_LANES const Op* shiftByImmediate(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const int s = shiftImmediateAmount<T, Left>(uint32_t(op->imm));
  if (s < 0) {
    store<T>(w, op->d, [](int) { return T(0); });
    return op + 1;
  }
  store<T>(w, op->d, [&](int i) { return shiftLane<T, Left>(a[i], uint32_t(s)); });
  return op + 1;
}

// mul.lo / mad.lo on 64-bit lanes by an immediate factor below 2^32 (`3 * x + 1`, `i * 12`), the op's imm: two 32 x 32
// -> 64-bit products per lane (the factor's high half is zero), where a 64 x 64-bit product of two registers takes
// three and their shifts (AVX2 has no 64-bit multiply). Add: plus register c, else the product alone. The AVX2 form
// (mulByImmediateHandler picks it) says so with vpmuludq; GCC vectorised the portable loop as two full 64 x 64-bit
// products, slower than the register form.
template <bool Add> PTX_LANES const Op* mulByImmediate(Warp& w, const Op* op) {
  const uint64_t* a = R<uint64_t>(w, op->a);
  const uint64_t* c = R<uint64_t>(w, Add ? op->c : op->a);
  const uint32_t k = uint32_t(op->imm);
  store<uint64_t>(w, op->d, [&](int i) {
    const uint64_t x = a[i];
    const uint64_t product = uint64_t(uint32_t(x)) * k + ((uint64_t(uint32_t(x >> 32)) * k) << 32);
    return Add ? product + c[i] : product;
  });
  return op + 1;
}
#if defined(__x86_64__)
template <bool Add> __attribute__((target("avx2"))) const Op* mulByImmediateAvx2(Warp& w, const Op* op) {
  const uint64_t* a = R<uint64_t>(w, op->a);
  const uint64_t* c = R<uint64_t>(w, Add ? op->c : op->a);
  const __m256i k = _mm256_set1_epi64x(int64_t(uint32_t(op->imm)));
  alignas(32) uint64_t r[32];
  const bool full = w.exec == kFullMask;
  uint64_t* out = full ? R<uint64_t>(w, op->d) : r;
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(a + 4 * j));
    const __m256i high = _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), k), 32);
    __m256i product = _mm256_add_epi64(_mm256_mul_epu32(x, k), high);
    if constexpr (Add)
      product = _mm256_add_epi64(product, _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 4 * j)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + 4 * j), product);
  }
  if (!full) blendLanes(R<uint64_t>(w, op->d), r, w.exec);
  return op + 1;
}
#endif
template <bool Add> Handler mulByImmediateHandler() {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return &mulByImmediateAvx2<Add>;
#endif
  return &mulByImmediate<Add>;
}

// mul.wide / mad.wide: D is twice the width of S.
template <class S, class D> PTX_HOT D mulWideLane(S a, S b) { return D(D(a) * D(b)); }
template <class S, class D> PTX_LANES const Op* mulWide(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  const S* b = R<S>(w, op->b);
  store<D>(w, op->d, [&](int i) { return mulWideLane<S, D>(a[i], b[i]); });
  return op + 1;
}
template <class S, class D> PTX_LANES const Op* madWide(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  const S* b = R<S>(w, op->b);
  const D* c = R<D>(w, op->c);
  store<D>(w, op->d, [&](int i) {
    using U = std::make_unsigned_t<D>;
    return D(U(D(a[i]) * D(b[i])) + U(c[i]));
  });
  return op + 1;
}
template <class T> const Op* mul24lo(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  store<T>(w, op->d, [&](int i) {
    int64_t x = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(a[i]) << 8) >> 8) : int64_t(uint32_t(a[i]) & 0xffffff);
    int64_t y = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(b[i]) << 8) >> 8) : int64_t(uint32_t(b[i]) & 0xffffff);
    return T(uint32_t(uint64_t(x * y)));
  });
  return op + 1;
}
// mul24.hi: bits 16..47 of the 48-bit product of the low 24 bits.
template <class T> const Op* mul24hi(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  store<T>(w, op->d, [&](int i) {
    int64_t x = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(a[i]) << 8) >> 8) : int64_t(uint32_t(a[i]) & 0xffffff);
    int64_t y = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(b[i]) << 8) >> 8) : int64_t(uint32_t(b[i]) & 0xffffff);
    return T(uint32_t(uint64_t(x * y) >> 16));
  });
  return op + 1;
}
template <class T> const Op* mad24lo(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  store<T>(w, op->d, [&](int i) {
    int64_t x = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(a[i]) << 8) >> 8) : int64_t(uint32_t(a[i]) & 0xffffff);
    int64_t y = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(b[i]) << 8) >> 8) : int64_t(uint32_t(b[i]) & 0xffffff);
    return T(uint32_t(uint64_t(x * y)) + uint32_t(c[i]));
  });
  return op + 1;
}
// mad24.hi: bits 16..47 of the 48-bit product of the low 24 bits, plus c; .sat (s32 only) clamps the sum to the
// s32 range instead of wrapping
template <class T, bool Sat> const Op* mad24hi(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  store<T>(w, op->d, [&](int i) {
    int64_t x = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(a[i]) << 8) >> 8) : int64_t(uint32_t(a[i]) & 0xffffff);
    int64_t y = std::is_signed_v<T> ? int64_t(int32_t(uint32_t(b[i]) << 8) >> 8) : int64_t(uint32_t(b[i]) & 0xffffff);
    const uint32_t high = uint32_t(uint64_t(x * y) >> 16);
    if constexpr (Sat) {
      const int64_t sum = int64_t(int32_t(high)) + int64_t(int32_t(c[i]));
      return T(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
    }
    return T(high + uint32_t(c[i]));
  });
  return op + 1;
}
template <class T> const Op* sad(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  store<T>(w, op->d, [&](int i) {
    T diff = a[i] < b[i] ? T(b[i] - a[i]) : T(a[i] - b[i]);
    return T(Unsigned<T>(c[i]) + Unsigned<T>(diff));
  });
  return op + 1;
}

// Carry chain: add.cc / addc / sub.cc / subc / mad.cc / madc (32/64-bit), CC.CF per lane in w.carry.
template <class T, bool Sub, bool UseCarry, bool SetCarry> const Op* addCarry(Warp& w, const Op* op) {
  using U = Unsigned<T>;
  const U* a = R<U>(w, op->a);
  const U* b = R<U>(w, op->b);
  U* d = R<U>(w, op->d);
  forActive(w.exec, [&](int i) {
    U x = a[i], y = b[i];
    unsigned cin = UseCarry ? w.carry[i] : 0;
    U r;
    unsigned cout;
    if constexpr (!Sub) {
      U t = U(x + y);
      unsigned c1 = t < x;
      r = U(t + cin);
      cout = c1 | (r < t);
    } else {
      U t = U(x - y);
      unsigned b1 = x < y;
      r = U(t - cin);
      cout = b1 | (t < cin);
    }
    d[i] = r;
    if constexpr (SetCarry) w.carry[i] = uint8_t(cout);
  });
  return op + 1;
}
template <class T, bool Hi, bool UseCarry, bool SetCarry> const Op* madCarry(Warp& w, const Op* op) {
  using U = Unsigned<T>;
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const U* c = R<U>(w, op->c);
  U* d = R<U>(w, op->d);
  forActive(w.exec, [&](int i) {
    U p = Hi ? U(MulHiF::f(a[i], b[i])) : U(U(a[i]) * U(b[i]));
    U t = U(p + c[i]);
    unsigned c1 = t < p;
    unsigned cin = UseCarry ? w.carry[i] : 0;
    U r = U(t + cin);
    d[i] = r;
    if constexpr (SetCarry) w.carry[i] = uint8_t(c1 | (r < t));
  });
  return op + 1;
}

// bfind: position of the most significant non-sign bit; 0xffffffff if none. shiftamt: 31 - pos.
template <class T, bool ShiftAmt> const Op* bfind(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    Unsigned<T> x = Unsigned<T>(a[i]);
    if constexpr (std::is_signed_v<T>) {
      if (a[i] < 0) x = Unsigned<T>(~x);
    }
    if (x == 0) return 0xffffffffu;
    uint32_t pos = uint32_t(sizeof(T) * 8 - 1 - std::countl_zero(x));
    return ShiftAmt ? uint32_t(sizeof(T) * 8 - 1 - pos) : pos;
  });
  return op + 1;
}
template <class T> const Op* popcClz(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  if (intops::BitCount::of(*op).kind == intops::BitCount::Popc)
    store<uint32_t>(w, op->d, [&](int i) { return uint32_t(std::popcount(Unsigned<T>(a[i]))); });
  else
    store<uint32_t>(w, op->d, [&](int i) { return uint32_t(std::countl_zero(Unsigned<T>(a[i]))); });
  return op + 1;
}
template <class T> const Op* bfe(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  constexpr uint32_t bits = sizeof(T) * 8;
  store<T>(w, op->d, [&](int i) -> T {
    uint32_t pos = b[i] & 0xff, len = c[i] & 0xff;
    using U = Unsigned<T>;
    U x = U(a[i]);
    bool sbit;
    if constexpr (std::is_signed_v<T>) {
      uint32_t msb = (len == 0) ? 0 : (pos + len - 1 >= bits ? bits - 1 : pos + len - 1);
      sbit = len != 0 && ((x >> msb) & 1);
    } else {
      sbit = false;
    }
    U r = 0;
    for (uint32_t k = 0; k < bits; ++k) {
      bool bit = (k < len && pos + k < bits) ? ((x >> (pos + k)) & 1) : sbit;
      r |= U(bit) << k;
    }
    return T(r);
  });
  return op + 1;
}
template <class T> const Op* bfi(Warp& w, const Op* op) {  // d = bfi(a=src, b=base, c=pos, length)
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  const uint32_t* e = R<uint32_t>(w, intops::BitFieldInsert::of(*op).length);
  constexpr uint32_t bits = sizeof(T) * 8;
  store<T>(w, op->d, [&](int i) -> T {
    uint32_t pos = c[i] & 0xff, len = e[i] & 0xff;
    T r = b[i];
    for (uint32_t k = 0; k < len && pos + k < bits; ++k) {
      T bit = T((a[i] >> k) & 1);
      r = T((r & ~(T(1) << (pos + k))) | (bit << (pos + k)));
    }
    return r;
  });
  return op + 1;
}
template <bool Left, bool Clamp> const Op* shf(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t n = Clamp ? (c[i] > 32 ? 32 : c[i]) : (c[i] & 31);
    uint64_t v = (uint64_t(b[i]) << 32) | a[i];
    if constexpr (Left)
      return uint32_t((v << n) >> 32);
    else
      return uint32_t(v >> n);
  });
  return op + 1;
}

// add/min/max on .u16x2/.s16x2 (sm_90; __vaddss2/__vmins2 and friends): each 16-bit half on its own, add
// wrapping; .relu (min/max.s16x2: negative halves become 0). Kind: 0 add, 1 min, 2 max.
template <int Kind, bool Signed> const Op* packed16(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  bool relu = intops::PackedHalves::of(*op).relu;
  store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t r = 0;
    for (int h = 0; h < 2; ++h) {
      uint16_t x = uint16_t(a[i] >> (16 * h)), y = uint16_t(b[i] >> (16 * h));
      uint16_t v;
      if constexpr (Kind == 0) {
        v = uint16_t(x + y);
      } else if constexpr (Signed) {
        int16_t sx = int16_t(x), sy = int16_t(y);
        int16_t m = Kind == 1 ? std::min(sx, sy) : std::max(sx, sy);
        v = uint16_t(relu && m < 0 ? int16_t(0) : m);
      } else {
        v = Kind == 1 ? std::min(x, y) : std::max(x, y);
      }
      r |= uint32_t(v) << (16 * h);
    }
    return r;
  });
  return op + 1;
}

}  // namespace h

// The vector prefix's ops of this class (exec/vector_ops.h): wrapping add, sub, mul.lo, and, or, xor on 32- and 64-bit
// integers (the parameter is cuemuVectorInt*'s op, with the bytes from bit 8), mul.wide of 32-bit integers
// (parameter 1: signed), and shifts by an immediate (parameter 1: left, 2: signed; the bytes from bit 8).
void addIntegerVectorOps(std::vector<CuemuVectorOp>& rows) {
  const auto ops = [&](auto type) {
    using T = decltype(type);
    const uint32_t bytes = uint32_t(sizeof(T)) << 8;
    const auto row = [&](Handler handler, uint32_t op) {
      rows.push_back({reinterpret_cast<const void*>(handler), kCuemuVectorIntBinary, op | bytes});
    };
    row(&h::binary<T, h::AddF>, 0);
    row(&h::binary<T, h::SubF>, 1);
    row(&h::binary<T, h::MulLoF>, 2);
    row(&h::binary<T, h::AndF>, 3);
    row(&h::binary<T, h::OrF>, 4);
    row(&h::binary<T, h::XorF>, 5);
  };
  ops(int32_t{});
  ops(uint32_t{});
  ops(int64_t{});
  ops(uint64_t{});
  rows.push_back({reinterpret_cast<const void*>(&h::mulWide<int32_t, int64_t>), kCuemuVectorMulWide, 1});
  rows.push_back({reinterpret_cast<const void*>(&h::mulWide<uint32_t, uint64_t>), kCuemuVectorMulWide, 0});
  const auto shifts = [&](auto type) {
    using T = decltype(type);
    const uint32_t how = (std::is_signed_v<T> ? 2u : 0u) | uint32_t(sizeof(T)) << 8;
    rows.push_back({reinterpret_cast<const void*>(&h::shiftByImmediate<T, true>), kCuemuVectorShiftImmediate, how | 1});
    rows.push_back({reinterpret_cast<const void*>(&h::shiftByImmediate<T, false>), kCuemuVectorShiftImmediate, how});
  };
  shifts(int32_t{});
  shifts(uint32_t{});
  shifts(int64_t{});
  shifts(uint64_t{});
}

namespace {

struct SatAddF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) + int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct SatSubF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) - int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct MinReluF {
  template <class T> static PTX_HOT T f(T a, T b) {
    T r = a < b ? a : b;
    return r < 0 ? T(0) : r;
  }
};
struct MaxReluF {
  template <class T> static PTX_HOT T f(T a, T b) {
    T r = a > b ? a : b;
    return r < 0 ? T(0) : r;
  }
};

}  // namespace

namespace {

using h::R;

const Op* prmt(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  using P = intops::Permute;
  const P::Mode mode = P::of(*op).mode;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint64_t x = (uint64_t(b[i]) << 32) | a[i];
    uint8_t bytes[8];
    for (int k = 0; k < 8; ++k) bytes[k] = uint8_t(x >> (8 * k));
    uint32_t s = c[i];
    uint32_t r = 0;
    if (mode == P::Generic) {
      for (int k = 0; k < 4; ++k) {
        uint32_t sel = (s >> (4 * k)) & 15;
        uint8_t v = bytes[sel & 7];
        if (sel & 8) v = (v & 0x80) ? 0xff : 0;
        r |= uint32_t(v) << (8 * k);
      }
      return r;
    }
    uint32_t n = s & 3;
    static const uint8_t f4e[4][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}};
    static const uint8_t b4e[4][4] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}};
    static const uint8_t rc8[4][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
    static const uint8_t ecl[4][4] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}};
    static const uint8_t ecr[4][4] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}};
    static const uint8_t rc16[4][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}};
    const uint8_t(*t)[4] = mode == P::F4e   ? f4e
                           : mode == P::B4e ? b4e
                           : mode == P::Rc8 ? rc8
                           : mode == P::Ecl ? ecl
                           : mode == P::Ecr ? ecr
                                            : rc16;
    for (int k = 0; k < 4; ++k) r |= uint32_t(bytes[t[n][k]]) << (8 * k);
    return r;
  });
  return op + 1;
}

const Op* lop3(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  const uint32_t lut = intops::LogicTable::of(*op).lut;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t x = a[i], y = b[i], z = c[i], r = 0;
    if (lut & 0x01) r |= ~x & ~y & ~z;
    if (lut & 0x02) r |= ~x & ~y & z;
    if (lut & 0x04) r |= ~x & y & ~z;
    if (lut & 0x08) r |= ~x & y & z;
    if (lut & 0x10) r |= x & ~y & ~z;
    if (lut & 0x20) r |= x & ~y & z;
    if (lut & 0x40) r |= x & y & ~z;
    if (lut & 0x80) r |= x & y & z;
    return r;
  });
  return op + 1;
}

const Op* dp4a(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  const intops::DotProduct dot = intops::DotProduct::of(*op);
  const bool sa = dot.aSigned, sb = dot.bSigned;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    int64_t acc = (sa || sb) ? int64_t(int32_t(c[i])) : int64_t(c[i]);
    for (int k = 0; k < 4; ++k) {
      int32_t x = sa ? int32_t(int8_t(a[i] >> (8 * k))) : int32_t(uint8_t(a[i] >> (8 * k)));
      int32_t y = sb ? int32_t(int8_t(b[i] >> (8 * k))) : int32_t(uint8_t(b[i] >> (8 * k)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  });
  return op + 1;
}

const Op* dp2a(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  const intops::DotProduct dot = intops::DotProduct::of(*op);
  const bool sa = dot.aSigned, sb = dot.bSigned, hi = dot.high;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    int64_t acc = (sa || sb) ? int64_t(int32_t(c[i])) : int64_t(c[i]);
    for (int k = 0; k < 2; ++k) {
      int32_t x = sa ? int32_t(int16_t(a[i] >> (16 * k))) : int32_t(uint16_t(a[i] >> (16 * k)));
      uint32_t bb = b[i] >> (hi ? 16 : 0);
      int32_t y = sb ? int32_t(int8_t(bb >> (8 * k))) : int32_t(uint8_t(bb >> (8 * k)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  });
  return op + 1;
}

const Op* fns(Warp& w, const Op* op) {
  const uint32_t* mask = R<uint32_t>(w, op->a);
  const uint32_t* base = R<uint32_t>(w, op->b);
  const int32_t* off = R<int32_t>(w, op->c);
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t m = mask[i], b = base[i];
    int32_t o = off[i];
    if (b > 31) return 0xffffffffu;
    if (o == 0) return ((m >> b) & 1) ? b : 0xffffffffu;  // offset 0: the base bit itself
    if (o > 0) {
      int n = o;
      for (uint32_t p = b; p < 32; ++p)
        if ((m >> p) & 1 && --n == 0) return p;
    } else {
      int n = -o;
      for (int p = int(b); p >= 0; --p)
        if ((m >> p) & 1 && --n == 0) return uint32_t(p);
    }
    return 0xffffffffu;
  });
  return op + 1;
}

const Op* bmsk(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const bool wrap = intops::BitRange::of(*op).wrap;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t pos = wrap ? a[i] & 31 : std::min(a[i], 32u);
    uint32_t len = wrap ? b[i] & 31 : std::min(b[i], 32u);
    uint64_t m = ((uint64_t(1) << len) - 1) << pos;
    return uint32_t(m);
  });
  return op + 1;
}

const Op* szext(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const intops::BitRange range = intops::BitRange::of(*op);
  const bool sgn = range.isSigned, wrap = range.wrap;
  h::store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t n = wrap ? b[i] & 31 : std::min(b[i], 32u);
    if (n >= 32) return a[i];
    if (n == 0) return 0;
    uint32_t v = a[i] & ((1u << n) - 1);
    if (sgn && ((v >> (n - 1)) & 1)) v |= ~((1u << n) - 1);
    return v;
  });
  return op + 1;
}

// Device-side malloc/free: the driver's heap (HostServices), one call per executing lane in lane order.

}  // namespace

namespace lowering {

// `mul.lo.N t, a, b; add.N d, t, c` (or `c, t`), t read by nothing else: mad.lo d, a, b, c, which wraps as the two
// do. The mul's factors are read as the mul reads them (its type), the addend as the add reads it.
void KernelLowerer::lowerFoldedMad(const Instruction& add) {
  const Instruction& mul = fn_->instructions[curInst_ - 1];
  const Type t = add.type();
  const Operand& product = opnd(mul, 0);
  const Operand& first = opnd(add, 1);
  const Operand& addend = first.kind == OperandKind::Reg && first.index == product.index ? opnd(add, 2) : first;
  if (const std::optional<uint32_t> k = smallFactor(mul); k && sizeOf(t) == 8)
    return lowerMulByImmediate(opnd(add, 0), opnd(mul, 1), mul.type(), &addend, t, *k);
  const uint32_t a = src(opnd(mul, 1), mul.type()), b = src(opnd(mul, 2), mul.type()), c = src(addend, t);
  Dst d = dst(opnd(add, 0), t);
  Op& op = emit(byInt163264(t, line_, [](auto x) -> Handler { return &h::ternary<decltype(x), h::MadLoF>; }));
  op.d = d.off;
  op.a = a;
  op.b = b;
  op.c = c;
  finish(d);
}

// d = x * k (+ addend, when given) on 64-bit lanes, k the immediate factor smallFactor found (h::mulByImmediate)
void KernelLowerer::lowerMulByImmediate(const Operand& d, const Operand& x, Type xType, const Operand* addend, Type t,
                                        uint32_t k) {
  const uint32_t a = src(x, xType), c = addend ? src(*addend, t) : 0;
  Dst out = dst(d, t);
  Op& op = emit(addend ? h::mulByImmediateHandler<true>() : h::mulByImmediateHandler<false>());
  op.d = out.off;
  op.a = a;
  op.c = c;
  op.imm = k;
  finish(out);
}

// The immediate second factor of a mul.lo/mad.lo on 64-bit lanes when it is below 2^32 (mulByImmediate), else none.
std::optional<uint32_t> KernelLowerer::smallFactor(const Instruction& in) const {
  if (in.numOperands < 3 || ptx::typeSize(in.type()) != 8 || in.mulMode != ptx::MulMode::lo) return std::nullopt;
  const Operand& k = fn_->operands[in.firstOperand + 2];
  if (k.kind != OperandKind::Imm || uint64_t(k.value) > UINT32_MAX) return std::nullopt;
  return uint32_t(k.value);
}

// Integer arithmetic, logic and bit manipulation.
void KernelLowerer::lowerArith(const Instruction& in) {
  Type t = in.type();
  Opcode oc = in.opcode;
  auto bin = [&](Handler hnd, Type at, Type bt, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    finish(d);
  };
  auto un = [&](Handler hnd, Type at, Type dt) {
    uint32_t a = src(opnd(in, 1), at);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
    return &prog_.ops.back();
  };
  auto ter = [&](Handler hnd, Type at, Type bt, Type ct, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt), c = src(opnd(in, 3), ct);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    op.c = c;
    finish(d);
    return &prog_.ops.back();
  };
  auto wideType = [&](Type x) {
    switch (x) {
      case Type::s16: return Type::s32;
      case Type::u16: return Type::u32;
      case Type::s32: return Type::s64;
      case Type::u32: return Type::u64;
      default: fail(line_, ".wide needs a 16 or 32-bit type");
    }
  };
  // a shift by an immediate amount: the amount is the op's (h::shiftByImmediate), as the .u32 the register form reads
  auto shiftBy = [&](Handler hnd) {
    const uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.imm = int64_t(uint32_t(uint64_t(opnd(in, 2).value)));
    finish(d);
  };
  bool sat = in.has(ptx::Flag::sat);
  bool cc = in.has(ptx::Flag::cc);
  if (t == Type::pred) {
    switch (oc) {
      case Opcode::And: return bin(&h::predLogic<0>, t, t, t);
      case Opcode::Or: return bin(&h::predLogic<1>, t, t, t);
      case Opcode::Xor: return bin(&h::predLogic<2>, t, t, t);
      case Opcode::Not: un(&h::predLogic<3>, t, t); return;
      default: return unsupported(in);
    }
  }
  switch (oc) {
    case Opcode::Add:
    case Opcode::Sub: {
      if (oc == Opcode::Add && previousFoldedIntoThis()) return lowerFoldedMad(in);
      bool add = oc == Opcode::Add;
      if (sat) {
        if (t != Type::s32) return unsupported(in);
        return bin(add ? &h::binary<int32_t, SatAddF> : &h::binary<int32_t, SatSubF>, t, t, t);
      }
      return bin(byInt163264(t, line_,
                             [&](auto x) -> Handler {
                               using T = decltype(x);
                               return add ? &h::binary<T, h::AddF> : &h::binary<T, h::SubF>;
                             }),
                 t, t, t);
    }
    case Opcode::AddCC:
    case Opcode::AddC:
    case Opcode::SubCC:
    case Opcode::SubC: {
      bool sub = oc == Opcode::SubCC || oc == Opcode::SubC;
      bool useC = oc == Opcode::AddC || oc == Opcode::SubC;
      bool setC = oc == Opcode::AddCC || oc == Opcode::SubCC || cc;
      unsigned sz = sizeOf(t);
      Handler hnd = nullptr;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (sub) {
          if (useC) return setC ? &h::addCarry<T, true, true, true> : &h::addCarry<T, true, true, false>;
          return &h::addCarry<T, true, false, true>;
        }
        if (useC) return setC ? &h::addCarry<T, false, true, true> : &h::addCarry<T, false, true, false>;
        return &h::addCarry<T, false, false, true>;
      };
      if (sz == 4)
        hnd = pick(uint32_t{});
      else if (sz == 8)
        hnd = pick(uint64_t{});
      else
        return unsupported(in);
      return bin(hnd, t, t, t);
    }
    case Opcode::Mul: {
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::mulWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::mulWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::mulWide<int32_t, int64_t>; break;
          default: hnd = &h::mulWide<uint32_t, uint64_t>; break;
        }
        return bin(hnd, t, t, wt);
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      if (const std::optional<uint32_t> k = smallFactor(in))
        return lowerMulByImmediate(opnd(in, 0), opnd(in, 1), t, nullptr, t, *k);
      return bin(byInt163264(t, line_,
                             [&](auto x) -> Handler {
                               using T = decltype(x);
                               return hi ? &h::binary<T, h::MulHiF> : &h::binary<T, h::MulLoF>;
                             }),
                 t, t, t);
    }
    case Opcode::Mad: {
      if (sat) {  // PTX allows .sat only on mad.hi.s32
        if (in.mulMode != ptx::MulMode::hi || t != Type::s32 || cc) return unsupported(in);
        ter(&h::ternary<int32_t, h::MadHiSatF>, t, t, t, t);
        return;
      }
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::madWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::madWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::madWide<int32_t, int64_t>; break;
          default: hnd = &h::madWide<uint32_t, uint64_t>; break;
        }
        ter(hnd, t, t, wt, wt);
        return;
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      if (cc) {
        Handler hnd = sizeOf(t) == 4 ? (hi ? (isSigned(t) ? &h::madCarry<int32_t, true, false, true>
                                                          : &h::madCarry<uint32_t, true, false, true>)
                                           : &h::madCarry<uint32_t, false, false, true>)
                                     : (hi ? (isSigned(t) ? &h::madCarry<int64_t, true, false, true>
                                                          : &h::madCarry<uint64_t, true, false, true>)
                                           : &h::madCarry<uint64_t, false, false, true>);
        ter(hnd, t, t, t, t);
        return;
      }
      ter(byInt163264(t, line_,
                      [&](auto x) -> Handler {
                        using T = decltype(x);
                        return hi ? &h::ternary<T, h::MadHiF> : &h::ternary<T, h::MadLoF>;
                      }),
          t, t, t, t);
      return;
    }
    case Opcode::MadCC:
    case Opcode::MadC: {
      bool hi = in.mulMode == ptx::MulMode::hi;
      bool useC = oc == Opcode::MadC;
      bool setC = oc == Opcode::MadCC || cc;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (hi)
          return useC ? (setC ? &h::madCarry<T, true, true, true> : &h::madCarry<T, true, true, false>)
                      : &h::madCarry<T, true, false, true>;
        return useC ? (setC ? &h::madCarry<T, false, true, true> : &h::madCarry<T, false, true, false>)
                    : &h::madCarry<T, false, false, true>;
      };
      Handler hnd;
      switch (t) {
        case Type::s32: hnd = pick(int32_t{}); break;
        case Type::u32:
        case Type::b32: hnd = pick(uint32_t{}); break;
        case Type::s64: hnd = pick(int64_t{}); break;
        case Type::u64:
        case Type::b64: hnd = pick(uint64_t{}); break;
        default: return unsupported(in);
      }
      ter(hnd, t, t, t, t);
      return;
    }
    case Opcode::Mul24:
      if (in.mulMode == ptx::MulMode::hi)
        return bin(isSigned(t) ? &h::mul24hi<int32_t> : &h::mul24hi<uint32_t>, t, t, t);
      return bin(isSigned(t) ? &h::mul24lo<int32_t> : &h::mul24lo<uint32_t>, t, t, t);
    case Opcode::Mad24:
      if (in.mulMode == ptx::MulMode::hi) {
        if (sat && t != Type::s32) return unsupported(in);
        ter(sat           ? &h::mad24hi<int32_t, true>
            : isSigned(t) ? &h::mad24hi<int32_t, false>
                          : &h::mad24hi<uint32_t, false>,
            t, t, t, t);
        return;
      }
      if (sat) return unsupported(in);
      ter(isSigned(t) ? &h::mad24lo<int32_t> : &h::mad24lo<uint32_t>, t, t, t, t);
      return;
    case Opcode::Sad:
      ter(byInt163264(t, line_, [](auto x) -> Handler { return &h::sad<decltype(x)>; }), t, t, t, t);
      return;
    case Opcode::Div:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::DivIF>; }), t, t, t);
    case Opcode::Rem:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::RemIF>; }), t, t, t);
    case Opcode::Abs:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::AbsIF>; }), t, t);
      return;
    case Opcode::Neg:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NegIF>; }), t, t);
      return;
    case Opcode::Min:
    case Opcode::Max: {
      if (ptx::typeKind(t) == ptx::TypeKind::Unsigned && in.has(ptx::Flag::relu)) return unsupported(in);
      bool mn = oc == Opcode::Min;
      if (in.has(ptx::Flag::relu)) {
        if (t != Type::s32) return unsupported(in);
        return bin(mn ? &h::binary<int32_t, MinReluF> : &h::binary<int32_t, MaxReluF>, t, t, t);
      }
      return bin(byInt163264(t, line_,
                             [&](auto x) -> Handler {
                               using T = decltype(x);
                               return mn ? &h::binary<T, h::MinF> : &h::binary<T, h::MaxF>;
                             }),
                 t, t, t);
    }
    case Opcode::Popc:
    case Opcode::Clz: {
      Op* op = un(sizeOf(t) == 8 ? &h::popcClz<uint64_t> : &h::popcClz<uint32_t>, t, Type::u32);
      intops::BitCount{oc == Opcode::Clz ? intops::BitCount::Clz : intops::BitCount::Popc}.into(*op);
      return;
    }
    case Opcode::Bfind: {
      bool sh = in.has(ptx::Flag::shiftamt);
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = sh ? &h::bfind<int32_t, true> : &h::bfind<int32_t, false>; break;
        case Type::u32: hnd = sh ? &h::bfind<uint32_t, true> : &h::bfind<uint32_t, false>; break;
        case Type::s64: hnd = sh ? &h::bfind<int64_t, true> : &h::bfind<int64_t, false>; break;
        case Type::u64: hnd = sh ? &h::bfind<uint64_t, true> : &h::bfind<uint64_t, false>; break;
        default: return unsupported(in);
      }
      un(hnd, t, Type::u32);
      return;
    }
    case Opcode::Brev: un(sizeOf(t) == 8 ? &h::unary<uint64_t, h::BrevF> : &h::unary<uint32_t, h::BrevF>, t, t); return;
    case Opcode::Bfe: {
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = &h::bfe<int32_t>; break;
        case Type::u32:
        case Type::b32: hnd = &h::bfe<uint32_t>; break;
        case Type::s64: hnd = &h::bfe<int64_t>; break;
        case Type::u64:
        case Type::b64: hnd = &h::bfe<uint64_t>; break;
        default: return unsupported(in);
      }
      ter(hnd, t, Type::u32, Type::u32, t);
      return;
    }
    case Opcode::Bfi: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t), c = src(opnd(in, 3), Type::u32),
               e = src(opnd(in, 4), Type::u32);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(sizeOf(t) == 8 ? &h::bfi<uint64_t> : &h::bfi<uint32_t>);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      intops::BitFieldInsert{e}.into(op);
      finish(d);
      return;
    }
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor: {
      return bin(byBits(sizeOf(t), line_,
                        [&](auto x) -> Handler {
                          using T = decltype(x);
                          return oc == Opcode::And  ? &h::binary<T, h::AndF>
                                 : oc == Opcode::Or ? &h::binary<T, h::OrF>
                                                    : &h::binary<T, h::XorF>;
                        }),
                 t, t, t);
    }
    case Opcode::Not:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NotF>; }), t, t);
      return;
    case Opcode::Cnot:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::CnotF>; }), t, t);
      return;
    case Opcode::Shl:
      if (opnd(in, 2).kind == OperandKind::Imm)
        return shiftBy(
            byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shiftByImmediate<decltype(x), true>; }));
      return bin(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), true>; }), t, Type::u32,
                 t);
    case Opcode::Shr: {
      if (opnd(in, 2).kind == OperandKind::Imm)
        return shiftBy(
            isSigned(t)
                ? byInt163264(t, line_, [](auto x) -> Handler { return &h::shiftByImmediate<decltype(x), false>; })
                : byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shiftByImmediate<decltype(x), false>; }));
      Handler hnd = isSigned(t)
                        ? byInt163264(t, line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; })
                        : byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; });
      return bin(hnd, t, Type::u32, t);
    }
    case Opcode::Lop3: {
      Op* op = ter(&lop3, Type::b32, Type::b32, Type::b32, Type::b32);
      const Operand& lut = opnd(in, 4);
      if (lut.kind != OperandKind::Imm) fail(line_, "lop3 needs an immediate lookup table");
      intops::LogicTable{uint8_t(lut.value & 0xff)}.into(*op);
      return;
    }
    case Opcode::Shf: {
      bool left = fn_->hasMod(in, ptx::Mod::shf_l);
      bool clamp = in.has(ptx::Flag::clamp);
      Handler hnd = left ? (clamp ? &h::shf<true, true> : &h::shf<true, false>)
                         : (clamp ? &h::shf<false, true> : &h::shf<false, false>);
      ter(hnd, Type::b32, Type::b32, Type::u32, Type::b32);
      return;
    }
    case Opcode::Prmt: {
      Op* op = ter(&prmt, Type::b32, Type::b32, Type::b32, Type::b32);
      using P = intops::Permute;
      P p;
      if (fn_->hasMod(in, ptx::Mod::f4e))
        p.mode = P::F4e;
      else if (fn_->hasMod(in, ptx::Mod::b4e))
        p.mode = P::B4e;
      else if (fn_->hasMod(in, ptx::Mod::rc8))
        p.mode = P::Rc8;
      else if (fn_->hasMod(in, ptx::Mod::ecl))
        p.mode = P::Ecl;
      else if (fn_->hasMod(in, ptx::Mod::ecr))
        p.mode = P::Ecr;
      else if (fn_->hasMod(in, ptx::Mod::rc16))
        p.mode = P::Rc16;
      p.into(*op);
      return;
    }
    case Opcode::Dp4a:
    case Opcode::Dp2a: {
      Type ta = in.types[0], tb = in.numTypes > 1 ? in.types[1] : in.types[0];
      const intops::DotProduct dot{isSigned(ta), isSigned(tb), oc == Opcode::Dp2a && in.mulMode == ptx::MulMode::hi};
      Op* op = ter(oc == Opcode::Dp4a ? &dp4a : &dp2a, Type::b32, Type::b32, Type::b32, Type::b32);
      dot.into(*op);
      return;
    }
    case Opcode::Fns: {
      ter(&fns, Type::b32, Type::u32, Type::s32, Type::b32);
      return;
    }
    case Opcode::Bmsk: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&bmsk);
      op.d = d.off;
      op.a = a;
      op.b = b;
      intops::BitRange{false, in.has(ptx::Flag::wrap)}.into(op);
      finish(d);
      return;
    }
    case Opcode::Szext: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&szext);
      op.d = d.off;
      op.a = a;
      op.b = b;
      intops::BitRange{isSigned(t), in.has(ptx::Flag::wrap)}.into(op);
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

// add/min/max on .u16x2/.s16x2 (sm_90 SIMD integer forms).
void KernelLowerer::lowerPacked16(const Instruction& in) {
  bool s = in.type() == Type::s16x2;
  Handler hnd = nullptr;
  switch (in.opcode) {
    case Opcode::Add: hnd = s ? &h::packed16<0, true> : &h::packed16<0, false>; break;
    case Opcode::Min: hnd = s ? &h::packed16<1, true> : &h::packed16<1, false>; break;
    case Opcode::Max: hnd = s ? &h::packed16<2, true> : &h::packed16<2, false>; break;
    default: return unsupported(in);
  }
  uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::b32);
  Dst d = dst(opnd(in, 0), Type::b32);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  intops::PackedHalves{in.has(ptx::Flag::relu)}.into(op);
  finish(d);
}

}  // namespace lowering

}  // namespace ptx::exec

#if defined(PTX_NATIVE_BITCODE)
// Warps of those ops for the native tier's vector prefix (native/jit/vector_prefix.cpp), in bitcode only: the lanes
// of binary and mulWide with all 32 executing (op 0 add, 1 sub, 2 mul.lo, 3 and, 4 or, 5 xor; wrapping, so the
// unsigned type's lanes are the signed one's). The operands never overlap (restrict).
namespace {
template <class T> void integerWarp(const T* __restrict a, const T* __restrict b, T* __restrict d, uint32_t op) {
  using namespace ptx::exec::h;
  switch (op) {
    case 0:
      for (int i = 0; i < 32; ++i) d[i] = AddF::f(a[i], b[i]);
      break;
    case 1:
      for (int i = 0; i < 32; ++i) d[i] = SubF::f(a[i], b[i]);
      break;
    case 2:
      for (int i = 0; i < 32; ++i) d[i] = MulLoF::f(a[i], b[i]);
      break;
    case 3:
      for (int i = 0; i < 32; ++i) d[i] = AndF::f(a[i], b[i]);
      break;
    case 4:
      for (int i = 0; i < 32; ++i) d[i] = OrF::f(a[i], b[i]);
      break;
    default:
      for (int i = 0; i < 32; ++i) d[i] = XorF::f(a[i], b[i]);
      break;
  }
}
}  // namespace
extern "C" void cuemuVectorInt32(const uint32_t* __restrict a, const uint32_t* __restrict b, uint32_t* __restrict d,
                                 uint32_t op) {
  integerWarp(a, b, d, op);
}
extern "C" void cuemuVectorInt64(const uint64_t* __restrict a, const uint64_t* __restrict b, uint64_t* __restrict d,
                                 uint32_t op) {
  integerWarp(a, b, d, op);
}
// shiftByImmediate's lanes: how = 1 left | 2 signed, the amount from bit 8
template <class T, bool Left> void shiftWarp(const T* __restrict a, T* __restrict d, uint32_t amount) {
  using namespace ptx::exec::h;
  const int s = shiftImmediateAmount<T, Left>(amount);
  for (int i = 0; i < 32; ++i) d[i] = s < 0 ? T(0) : shiftLane<T, Left>(a[i], uint32_t(s));
}
template <class T> void shiftWarpOf(const T* __restrict a, T* __restrict d, uint32_t how) {
  using S = std::make_signed_t<T>;
  const uint32_t amount = how >> 8;
  if ((how & 3) == 1) return shiftWarp<T, true>(a, d, amount);
  if ((how & 3) == 3) return shiftWarp<S, true>(reinterpret_cast<const S*>(a), reinterpret_cast<S*>(d), amount);
  if ((how & 3) == 0) return shiftWarp<T, false>(a, d, amount);
  shiftWarp<S, false>(reinterpret_cast<const S*>(a), reinterpret_cast<S*>(d), amount);
}
extern "C" void cuemuVectorShift32(const uint32_t* __restrict a, uint32_t* __restrict d, uint32_t how) {
  shiftWarpOf(a, d, how);
}
extern "C" void cuemuVectorShift64(const uint64_t* __restrict a, uint64_t* __restrict d, uint32_t how) {
  shiftWarpOf(a, d, how);
}
extern "C" void cuemuVectorMulWide(const uint32_t* __restrict a, const uint32_t* __restrict b, uint64_t* __restrict d,
                                   uint32_t isSigned) {
  using namespace ptx::exec::h;
  if (isSigned)
    for (int i = 0; i < 32; ++i) d[i] = uint64_t(mulWideLane<int32_t, int64_t>(int32_t(a[i]), int32_t(b[i])));
  else
    for (int i = 0; i < 32; ++i) d[i] = mulWideLane<uint32_t, uint64_t>(a[i], b[i]);
}
#endif
