// Op handlers. Each handler executes one op for the executing lanes of a warp and returns the next op
// (nullptr stops the warp: barrier, yield, exit of the last lanes, fault).
//
// Lane loops compute all 32 lanes into a local temporary (so the compiler vectorises without alias checks) and
// then store either all lanes (full mask: the common case) or only the executing lanes.
#pragma once

#include "exec/control.h"
#include "exec/engine.h"
#include "exec/numerics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ptx::exec::h {

using num::Round;

// Handlers whose lane loops profit from wider vectors are compiled twice (x86-64 baseline and x86-64-v3: AVX2, FMA,
// BMI) and picked at load time by the dynamic loader (ifunc). The clone is named by ISA level, not by CPU: an
// "arch=haswell" clone is chosen only on Intel Haswell-family CPUs (the resolver tests the CPU model), so AMD
// CPUs ran the baseline code.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define PTX_LANES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PTX_LANES
#endif

template <class T> PTX_HOT T* R(Warp& w, uint32_t off) { return w.reg<T>(off); }

// dst[i] = tmp[i] for the lanes in m, written as a branch-free blend of the lanes' bits (the conditional form
// became a loop of byte stores and branches in divergent loops).
template <class T> PTX_HOT void blendLanes(T* dst, const T* tmp, uint32_t m) {
  if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    using U = std::conditional_t<sizeof(T) == 1, uint8_t,
              std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
    alignas(64) U cur[32], next[32];
    // copyVec, not memcpy: memcpy became 16-byte moves, and the loop's 32-byte reads of them waited for the stores
    copyVec<sizeof cur>(cur, dst);
    copyVec<sizeof next>(next, tmp);
    for (int i = 0; i < 32; ++i) {
      U sel = U(U(0) - U((m >> i) & 1));
      cur[i] = U((next[i] & sel) | (cur[i] & U(~sel)));
    }
    copyVec<sizeof cur>(dst, cur);
  } else {
    for (int i = 0; i < 32; ++i)
      if ((m >> i) & 1) dst[i] = tmp[i];
  }
}

// Stores f(i) to the executing lanes of register d. f must be lane-wise: f(i) reads lane i of its operand
// registers only (a cross-lane op reads a copy made before), since with every lane executing the results go
// straight into d, which may be one of the operands. Writing through a temporary cost every op's consumer a
// second store-to-load hop on its dependency chain (a chain of add.s32 went from 6.5 to about 4 ns per op).
template <class T, class F> PTX_HOT void store(Warp& w, uint32_t d, F f) {
  if (w.exec == kFullMask) {
    T* dst = R<T>(w, d);
#pragma GCC ivdep
    for (int i = 0; i < 32; ++i) dst[i] = f(i);
    return;
  }
  alignas(64) T tmp[32];
  for (int i = 0; i < 32; ++i) tmp[i] = f(i);
  blendLanes(R<T>(w, d), tmp, w.exec);
}

// Stores the 32 lanes of an array computed before (tmp) to the executing lanes of register d. store<> with a
// lambda that only copies would become a memcpy in 16-byte moves, which the next op's 32-byte loads cannot be
// forwarded from (see copyVec).
template <class T> PTX_HOT void storeLanes(Warp& w, uint32_t d, const T* tmp) {
  T* dst = R<T>(w, d);
  if (w.exec == kFullMask) copyVec<32 * sizeof(T)>(dst, tmp);
  else blendLanes(dst, tmp, w.exec);
}

template <class F> PTX_HOT void forActive(uint32_t m, F f) {
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    f(i);
  }
}

template <class T> using Signed = std::make_signed_t<T>;
template <class T> using Unsigned = std::make_unsigned_t<T>;

// ---- generic unary / binary / ternary ops on one type --------------------------------------------------------

template <class T, class F> PTX_LANES const Op* unary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  store<T>(w, op->d, [&](int i) { return F::f(a[i]); });
  return op + 1;
}
template <class T, class F> PTX_LANES const Op* binary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  store<T>(w, op->d, [&](int i) { return F::f(a[i], b[i]); });
  return op + 1;
}
template <class T, class F> PTX_LANES const Op* ternary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  store<T>(w, op->d, [&](int i) { return F::f(a[i], b[i], c[i]); });
  return op + 1;
}
struct FDiv;
// NaN results: f32 canonical, f64 from the operands (see num::nan64); div.f64 prefers its first operand.
template <class F, class T> PTX_HOT T nanResult(T r, T x, T y) {
  if constexpr (std::is_same_v<T, double>) {
    if constexpr (std::is_same_v<F, FDiv>) return num::nan64(r, y, x);
    else return num::nan64(r, x, y);
  } else {
    return num::canon(r);
  }
}
template <class T> PTX_HOT T nanResult(T r, T x, T y, T z) {
  if constexpr (std::is_same_v<T, double>) return num::nan64(r, x, y, z);
  else return num::canon(r);
}
template <class T> PTX_HOT T nanResult(T r, T x) {
  if constexpr (std::is_same_v<T, double>) return num::nan64(r, x);
  else return num::canon(r);
}

// Floating point with rounding mode / ftz / sat: the MXCSR is set around the lane loop for non-default modes.
template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* fbinary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  auto body = [&](int i) {
    T x = a[i], y = b[i];
    if constexpr (FTZ) { x = num::flush(x); y = num::flush(y); }
    T r = F::f(x, y);
    if constexpr (FTZ) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    return nanResult<F>(r, x, y);
  };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}
struct FFma;

// fma: in the x86-64-v3 clone std::fma is the FMA instruction and the lane loop vectorises; the baseline clone
// (CPUs without AVX2/FMA) calls the library's fma per lane.

template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* fternary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const T* c = R<T>(w, op->c);
  auto body = [&](int i) {
    T x = a[i], y = b[i], z = c[i];
    if constexpr (FTZ) { x = num::flush(x); y = num::flush(y); z = num::flush(z); }
    T r = F::f(x, y, z);
    if constexpr (FTZ) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    return nanResult(r, x, y, z);
  };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}
template <class T, class F, Round RM, bool FTZ, bool SAT> PTX_LANES const Op* funary(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  auto body = [&](int i) {
    T x = a[i];
    if constexpr (FTZ) x = num::flush(x);
    T r = F::f(x);
    if constexpr (FTZ) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    return r;
  };
  if constexpr (RM == num::RN && !FTZ) {
    store<T>(w, op->d, body);
  } else {
    num::FpMode mode(RM, false);
    store<T>(w, op->d, body);
  }
  return op + 1;
}

// ---- functors --------------------------------------------------------------------------------------------------

template <class U> PTX_HOT U brev(U x) {
  U r = 0;
  for (unsigned i = 0; i < sizeof(U) * 8; ++i) r |= U((x >> i) & 1) << (sizeof(U) * 8 - 1 - i);
  return r;
}

#define PTX_BIN(Name, expr) \
  struct Name {             \
    template <class T> static PTX_HOT T f(T a, T b) { return expr; } \
  };
#define PTX_UN(Name, expr) \
  struct Name {            \
    template <class T> static PTX_HOT T f(T a) { return expr; } \
  };
#define PTX_TER(Name, expr) \
  struct Name {             \
    template <class T> static PTX_HOT T f(T a, T b, T c) { return expr; } \
  };

PTX_BIN(AddF, T(a + b))
PTX_BIN(SubF, T(a - b))
PTX_BIN(MulLoF, T(Unsigned<T>(a) * Unsigned<T>(b)))
PTX_BIN(AndF, T(a & b))
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
    uint32_t s = b[i] > bits - 1 ? bits - 1 : b[i];
    if constexpr (Left) {
      return b[i] >= bits ? T(0) : T(Unsigned<T>(a[i]) << s);
    } else if constexpr (std::is_signed_v<T>) {
      return T(a[i] >> s);
    } else {
      return b[i] >= bits ? T(0) : T(a[i] >> s);
    }
  });
  return op + 1;
}

// mul.wide / mad.wide: D is twice the width of S.
template <class S, class D> PTX_LANES const Op* mulWide(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  const S* b = R<S>(w, op->b);
  store<D>(w, op->d, [&](int i) { return D(D(a[i]) * D(b[i])); });
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
template <class T> const Op* popcClz(Warp& w, const Op* op) {  // aux: 0 popc, 1 clz
  const T* a = R<T>(w, op->a);
  if (op->aux == 0)
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
template <class T> const Op* bfi(Warp& w, const Op* op) {  // d = bfi(a=src, b=base, c=pos, e=len)
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  const uint32_t* e = R<uint32_t>(w, op->e);
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
const Op* prmt(Warp& w, const Op* op);  // aux = mode
const Op* lop3(Warp& w, const Op* op);  // imm = lut
template <bool Left, bool Clamp> const Op* shf(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  const uint32_t* c = R<uint32_t>(w, op->c);
  store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
    uint32_t n = Clamp ? (c[i] > 32 ? 32 : c[i]) : (c[i] & 31);
    uint64_t v = (uint64_t(b[i]) << 32) | a[i];
    if constexpr (Left) return uint32_t((v << n) >> 32);
    else return uint32_t(v >> n);
  });
  return op + 1;
}
template <class T> const Op* shfSigned(Warp& w, const Op* op);

// ---- floating point functors ----------------------------------------------------------------------------------

struct FAdd { template <class T> static PTX_HOT T f(T a, T b) { return a + b; } };
struct FSub { template <class T> static PTX_HOT T f(T a, T b) { return a - b; } };
struct FMul { template <class T> static PTX_HOT T f(T a, T b) { return a * b; } };
struct FDiv { template <class T> static PTX_HOT T f(T a, T b) { return a / b; } };
struct FFma {
  template <class T> static PTX_HOT T f(T a, T b, T c) {
    if constexpr (std::is_same_v<T, float>) return __builtin_fmaf(a, b, c);
    else return __builtin_fma(a, b, c);
  }
};
// mad.f32 without rounding modifier is a multiply then add (two roundings) per the ISA.
struct FMadNoFuse { template <class T> static PTX_HOT T f(T a, T b, T c) { return a * b + c; } };
struct FMin {
  template <class T> static PTX_HOT T f(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? a : b;  // -0 < +0
    return a < b ? a : b;
  }
};
struct FMax {
  template <class T> static PTX_HOT T f(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  }
};
struct FSqrt { template <class T> static PTX_HOT T f(T a) { return nanResult(std::sqrt(a), a); } };
struct FRcp { template <class T> static PTX_HOT T f(T a) { return nanResult(T(1) / a, a); } };
// div.approx.f32 is a * rcp.approx(b); the reciprocal of |b| > 2^126 is subnormal and flushed to zero.
struct FDivApprox {
  template <class T> static PTX_HOT T f(T a, T b) {
    if (std::fabs(b) > T(0x1p126)) return a * std::copysign(T(0), b);
    return a / b;
  }
};
// rcp.approx.ftz.f64 reads only the upper 32 bits of its operand and computes only the upper 32 bits of the result
// (low word zero). Measured on an H200 for all 2^20 upper significands: the result's significand is the GPU's
// single-precision reciprocal approximation of the same 20 bits, cut to 20 bits, which is the exact reciprocal's or
// one unit more (num::rcp64hUpperWord's table); the exponent only scales it, and the low word of the operand is
// ignored. Subnormal operands and results are flushed to zero.
struct FRcpApproxF64 {
  template <class T> static PTX_HOT T f(T a) {
    uint64_t bits = std::bit_cast<uint64_t>(double(a));
    uint64_t sign = bits & 0x8000000000000000ull;
    int exponent = int((bits >> 52) & 0x7ff);
    uint32_t significand = uint32_t(bits >> 32) & 0xfffff;
    if (exponent == 0x7ff) {
      if (significand) return T(std::bit_cast<double>(0x7fffffff00000000ull));  // NaN (the upper word's bits only)
      return T(std::bit_cast<double>(sign));                                     // 1/inf = 0
    }
    if (exponent == 0) return T(std::bit_cast<double>(sign | 0x7ff0000000000000ull));  // ftz: 1/0 = inf
    uint32_t upper = num::rcp64hUpperWord(significand);  // for an operand in [1, 2): exponent field 0x3ff or 0x3fe
    int resultExponent = int(upper >> 20) + 1023 - exponent;
    if (resultExponent <= 0) return T(std::bit_cast<double>(sign));  // ftz
    uint64_t rb = (uint64_t(uint32_t(resultExponent) << 20 | (upper & 0xfffff)) << 32);
    return T(std::bit_cast<double>(rb | sign));
  }
};
// rsqrt.approx.f64 on the GPU is correctly rounded (measured on an H200): one Newton step in binary128 from the
// double estimate, then a single rounding. f32: within the ISA's bound.
PTX_HOT double rsqrtF64(double a) {
  double y = 1.0 / std::sqrt(a);
  if (!(a > 0) || !std::isfinite(a) || y == 0 || !std::isfinite(y)) return num::nan64(y, a);
  __float128 q = y, x = a;
  q = q + q * (__float128(0.5) - __float128(0.5) * x * q * q);
  return double(q);
}
struct FRsqrt {
  template <class T> static PTX_HOT T f(T a) {
    if constexpr (std::is_same_v<T, double>) return rsqrtF64(a);
    else return num::canon(T(1) / std::sqrt(a));
  }
};
struct FAbs {
  template <class T> static PTX_HOT T f(T a) { return std::fabs(a); }
};
struct FNeg {
  template <class T> static PTX_HOT T f(T a) { return -a; }
};
// sin/cos.approx: the GPU reduces the argument to revolutions first, x * f32(1/2pi) rounded toward zero to f32,
// and evaluates the function on that value's fraction (measured on an H200: huge arguments give +-0 for sin).
PTX_HOT double revolutionsFraction(float x) {
  double p = double(std::fabs(x)) * double(0.159154936671257019f);  // exact product
  float t = float(p);
  if (double(t) > p) t = std::nextafter(t, 0.0f);
  return double(t) - std::floor(double(t));
}
struct FSin {
  template <class T> static PTX_HOT T f(T a) {
    if (!std::isfinite(a)) return std::bit_cast<float>(num::kCanonicalNaN32);
    double r = std::sin(6.283185307179586476925286766559 * revolutionsFraction(a));
    return T(std::signbit(a) ? -r : r);
  }
};
struct FCos {
  template <class T> static PTX_HOT T f(T a) {
    if (!std::isfinite(a)) return std::bit_cast<float>(num::kCanonicalNaN32);
    return T(std::cos(6.283185307179586476925286766559 * revolutionsFraction(a)));
  }
};
struct FLg2 { template <class T> static PTX_HOT T f(T a) { return num::canon(T(std::log2(double(a)))); } };
struct FEx2 { template <class T> static PTX_HOT T f(T a) { return num::canon(T(std::exp2(double(a)))); } };
struct FTanh { template <class T> static PTX_HOT T f(T a) { return num::canon(T(std::tanh(double(a)))); } };

// abs/neg keep NaN payloads (sign-bit operations), so they bypass canonicalisation: use unary<> with bit ops.
// On a NaN operand the GPU returns the canonical NaN (f32) or the operand quieted with its sign unchanged (f64).
template <class U> PTX_HOT U nanOfSignOp(U x) {
  if constexpr (sizeof(U) == 4) return U(num::kCanonicalNaN32);
  else return U(x | (U(1) << 51));
}
template <class T> const Op* fabsBits(Warp& w, const Op* op) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U* a = R<U>(w, op->a);
  constexpr U m = ~(U(1) << (sizeof(U) * 8 - 1));
  constexpr U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  bool ftz = op->aux;
  store<U>(w, op->d, [&](int i) {
    U x = U(a[i] & m);
    if (x > inf) return nanOfSignOp<U>(a[i]);
    if (sizeof(T) == 4 && ftz && (x & 0x7f800000u) == 0) x = 0;
    return x;
  });
  return op + 1;
}
template <class T> const Op* fnegBits(Warp& w, const Op* op) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U* a = R<U>(w, op->a);
  constexpr U s = U(1) << (sizeof(U) * 8 - 1);
  constexpr U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  bool ftz = op->aux;
  store<U>(w, op->d, [&](int i) {
    if (U(a[i] & ~s) > inf) return nanOfSignOp<U>(a[i]);
    U x = U(a[i] ^ s);
    if (sizeof(T) == 4 && ftz && (x & 0x7f800000u) == 0) x &= s;
    return x;
  });
  return op + 1;
}

// add/min/max on .u16x2/.s16x2 (sm_90; __vaddss2/__vmins2 and friends): each 16-bit half on its own, add
// wrapping; aux 1 = .relu (min/max.s16x2: negative halves become 0). Kind: 0 add, 1 min, 2 max.
template <int Kind, bool Signed> const Op* packed16(Warp& w, const Op* op) {
  const uint32_t* a = R<uint32_t>(w, op->a);
  const uint32_t* b = R<uint32_t>(w, op->b);
  bool relu = op->aux & 1;
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

// ---- comparisons ----------------------------------------------------------------------------------------------

enum Cmp : uint8_t { EQ, NE, LT, LE, GT, GE, LO, LS, HI, HS, EQU, NEU, LTU, LEU, GTU, GEU, NUM, NAN_ };
template <class T, Cmp C> PTX_HOT bool compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool un = a != a || b != b;
    switch (C) {
      case EQ: return !un && a == b;
      case NE: return !un && a != b;
      case LT: return !un && a < b;
      case LE: return !un && a <= b;
      case GT: return !un && a > b;
      case GE: return !un && a >= b;
      case EQU: return un || a == b;
      case NEU: return un || a != b;
      case LTU: return un || a < b;
      case LEU: return un || a <= b;
      case GTU: return un || a > b;
      case GEU: return un || a >= b;
      case NUM: return !un;
      case NAN_: return un;
      default: return false;
    }
  } else {
    using U = Unsigned<T>;
    switch (C) {
      case EQ: return a == b;
      case NE: return a != b;
      case LT: return a < b;
      case LE: return a <= b;
      case GT: return a > b;
      case GE: return a >= b;
      case LO: return U(a) < U(b);
      case LS: return U(a) <= U(b);
      case HI: return U(a) > U(b);
      case HS: return U(a) >= U(b);
      default: return false;
    }
  }
}
// setp: d = a CMP b; optional second destination e = !(...) and combination with predicate c (aux: 0 none,
// 1 and, 2 or, 3 xor; bit 4: c is negated).
// aux bit 5 (kSetpThenBranch): the next op is the conditional branch on d; it runs from here, without a trip
// through the dispatch loop (compare-and-branch is the tail of most loops).
constexpr uint32_t kSetpThenBranch = 32;
template <class T, Cmp C> PTX_LANES const Op* setp(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const Op* next = op + 1;
  if ((op->aux & ~kSetpThenBranch) == 0 && op->e == 0) {
    store<uint8_t>(w, op->d, [&](int i) { return uint8_t(compare<T, C>(a[i], b[i])); });
    return (op->aux & kSetpThenBranch) ? ctl::braCond(w, next) : next;
  }
  alignas(64) uint8_t r[32];
  for (int i = 0; i < 32; ++i) r[i] = compare<T, C>(a[i], b[i]);
  const uint8_t* c = R<uint8_t>(w, op->c);
  uint8_t neg = (op->aux >> 4) & 1;
  uint32_t comb = op->aux & 15;
  alignas(64) uint8_t p[32], q[32];
  for (int i = 0; i < 32; ++i) {
    uint8_t cv = uint8_t((c[i] != 0) ^ neg);
    uint8_t x = r[i], nx = uint8_t(!r[i]);
    switch (comb) {
      case 1: x &= cv; nx &= cv; break;
      case 2: x |= cv; nx |= cv; break;
      case 3: x ^= cv; nx ^= cv; break;
      default: break;
    }
    p[i] = x;
    q[i] = nx;
  }
  storeLanes<uint8_t>(w, op->d, p);
  if (op->e) storeLanes<uint8_t>(w, op->e, q);
  return (op->aux & kSetpThenBranch) ? ctl::braCond(w, next) : next;
}
// set: d (integer or f32) = 0xffffffff/1.0f or 0
template <class T, Cmp C, class D> const Op* setValue(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const uint8_t* c = R<uint8_t>(w, op->c);
  uint8_t neg = (op->aux >> 4) & 1;
  uint32_t comb = op->aux & 15;
  store<D>(w, op->d, [&](int i) -> D {
    bool x = compare<T, C>(a[i], b[i]);
    bool cv = (c[i] != 0) ^ neg;
    if (comb == 1) x = x && cv;
    else if (comb == 2) x = x || cv;
    else if (comb == 3) x = x != cv;
    if constexpr (std::is_same_v<D, float>) return x ? 1.0f : 0.0f;
    else return x ? D(~D(0)) : D(0);
  });
  return op + 1;
}
// set/setp on .f16/.bf16 and their .x2 pairs: each half compares in f32 (exact). aux as setValue/setp, plus
// kHalfFtz (.ftz flushes subnormal f16 inputs to signed zero). set writes op->imm's bits for true (1.0 in the
// destination format, or all ones; per half for pairs), 0 for false.
constexpr uint32_t kHalfFtz = 64;
template <bool BF> PTX_HOT float halfOperand(uint16_t x, bool ftz) {
  if constexpr (BF) {
    return std::bit_cast<float>(uint32_t(x) << 16);
  } else {
    if (ftz && (x & 0x7c00u) == 0) x &= 0x8000u;
    return num::halfToFloat(x);
  }
}
template <Cmp C, bool BF> PTX_HOT bool halfCompareRaw(uint16_t a, uint16_t b, uint32_t aux) {
  bool ftz = aux & kHalfFtz;
  return compare<float, C>(halfOperand<BF>(a, ftz), halfOperand<BF>(b, ftz));
}
PTX_HOT bool combinePredicate(bool x, uint32_t aux, const uint8_t* c, int i) {
  bool cv = (c[i] != 0) ^ ((aux >> 4) & 1);
  switch (aux & 15) {
    case 1: return x && cv;
    case 2: return x || cv;
    case 3: return x != cv;
    default: return x;
  }
}
template <Cmp C, bool BF> PTX_HOT bool halfCompare(uint16_t a, uint16_t b, uint32_t aux, const uint8_t* c, int i) {
  return combinePredicate(halfCompareRaw<C, BF>(a, b, aux), aux, c, i);
}
template <class D, Cmp C, bool BF, bool PAIR> const Op* setHalf(Warp& w, const Op* op) {
  const uint8_t* c = R<uint8_t>(w, op->c);
  uint32_t aux = op->aux;
  if constexpr (PAIR) {
    const uint32_t* a = R<uint32_t>(w, op->a);
    const uint32_t* b = R<uint32_t>(w, op->b);
    uint32_t one = uint32_t(op->imm) & 0xffffu;
    store<uint32_t>(w, op->d, [&](int i) -> uint32_t {
      bool lo = halfCompare<C, BF>(uint16_t(a[i]), uint16_t(b[i]), aux, c, i);
      bool hi = halfCompare<C, BF>(uint16_t(a[i] >> 16), uint16_t(b[i] >> 16), aux, c, i);
      return (lo ? one : 0u) | (hi ? one << 16 : 0u);
    });
  } else {
    const uint16_t* a = R<uint16_t>(w, op->a);
    const uint16_t* b = R<uint16_t>(w, op->b);
    D one = D(op->imm);
    store<D>(w, op->d, [&](int i) -> D { return halfCompare<C, BF>(a[i], b[i], aux, c, i) ? one : D(0); });
  }
  return op + 1;
}
// setp: for pairs, `p|q` receive the low and the high half's result; for a single half, q is the complement (as
// setp on other types), each combined with c.
template <Cmp C, bool BF, bool PAIR> const Op* setpHalf(Warp& w, const Op* op) {
  const uint8_t* c = R<uint8_t>(w, op->c);
  uint32_t aux = op->aux;
  alignas(64) uint8_t p[32], q[32];
  if constexpr (PAIR) {
    const uint32_t* a = R<uint32_t>(w, op->a);
    const uint32_t* b = R<uint32_t>(w, op->b);
    for (int i = 0; i < 32; ++i) {
      p[i] = halfCompare<C, BF>(uint16_t(a[i]), uint16_t(b[i]), aux, c, i);
      q[i] = halfCompare<C, BF>(uint16_t(a[i] >> 16), uint16_t(b[i] >> 16), aux, c, i);
    }
  } else {
    const uint16_t* a = R<uint16_t>(w, op->a);
    const uint16_t* b = R<uint16_t>(w, op->b);
    for (int i = 0; i < 32; ++i) {
      bool x = halfCompareRaw<C, BF>(a[i], b[i], aux);
      p[i] = combinePredicate(x, aux, c, i);
      q[i] = combinePredicate(!x, aux, c, i);
    }
  }
  storeLanes<uint8_t>(w, op->d, p);
  if (op->e) storeLanes<uint8_t>(w, op->e, q);
  return op + 1;
}
template <class T> PTX_LANES const Op* selp(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const uint8_t* c = R<uint8_t>(w, op->c);
  store<T>(w, op->d, [&](int i) { return c[i] ? a[i] : b[i]; });
  return op + 1;
}
template <class T, class C> const Op* slct(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const C* c = R<C>(w, op->c);
  store<T>(w, op->d, [&](int i) {
    if constexpr (std::is_floating_point_v<C>) return c[i] >= C(0) ? a[i] : b[i];
    else return c[i] >= 0 ? a[i] : b[i];
  });
  return op + 1;
}
// Predicate logic (bytes 0/1).
template <int Kind> const Op* predLogic(Warp& w, const Op* op) {  // 0 and 1 or 2 xor 3 not 4 mov
  const uint8_t* a = R<uint8_t>(w, op->a);
  const uint8_t* b = R<uint8_t>(w, op->b);
  store<uint8_t>(w, op->d, [&](int i) -> uint8_t {
    switch (Kind) {
      case 0: return a[i] & b[i];
      case 1: return a[i] | b[i];
      case 2: return a[i] ^ b[i];
      case 3: return uint8_t(!a[i]);
      default: return a[i];
    }
  });
  return op + 1;
}

// ---- moves and conversions ------------------------------------------------------------------------------------

template <class T> PTX_LANES const Op* mov(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  store<T>(w, op->d, [&](int i) { return a[i]; });
  return op + 1;
}
// Width change between registers of different sizes: zero or sign extension / truncation.
template <class D, class S> PTX_LANES const Op* convertWidth(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  store<D>(w, op->d, [&](int i) { return D(a[i]); });
  return op + 1;
}
// mov.b64 d, {a, b} (pack) and mov.b64 {d, e}, a (unpack); S is the part type.
template <class P, class W, int N> const Op* pack(Warp& w, const Op* op) {
  const uint32_t srcs[4] = {op->a, op->b, op->c, op->e};
  alignas(64) W tmp[32];
  for (int i = 0; i < 32; ++i) tmp[i] = 0;
  for (int k = 0; k < N; ++k) {
    const P* s = R<P>(w, srcs[k]);
    for (int i = 0; i < 32; ++i) tmp[i] |= W(std::make_unsigned_t<W>(s[i]) << (k * 8 * sizeof(P)));
  }
  storeLanes<W>(w, op->d, tmp);
  return op + 1;
}
template <class P, class W, int N> const Op* unpack(Warp& w, const Op* op) {
  const uint32_t dsts[4] = {op->d, op->b, op->c, op->e};
  alignas(64) W src[32];
  std::memcpy(src, R<W>(w, op->a), sizeof src);
  for (int k = 0; k < N; ++k) {
    if (dsts[k] == 0) continue;  // "_" sink
    store<P>(w, dsts[k], [&](int i) { return P(src[i] >> (k * 8 * sizeof(P))); });
  }
  return op + 1;
}

// 128-bit registers (.b128): two 64-bit halves, low first.
struct B128 {
  uint64_t lo, hi;
};
inline const Op* pack128(Warp& w, const Op* op) {
  const uint64_t* lo = R<uint64_t>(w, op->a);
  const uint64_t* hi = R<uint64_t>(w, op->b);
  store<B128>(w, op->d, [&](int i) { return B128{lo[i], hi[i]}; });
  return op + 1;
}
inline const Op* unpack128(Warp& w, const Op* op) {
  alignas(64) B128 src[32];
  std::memcpy(src, R<B128>(w, op->a), sizeof src);
  if (op->d) store<uint64_t>(w, op->d, [&](int i) { return src[i].lo; });
  if (op->b) store<uint64_t>(w, op->b, [&](int i) { return src[i].hi; });
  return op + 1;
}

// cvt between numeric types: D, S are C++ carrier types; kinds give the PTX interpretation (for f16/bf16 which are
// carried as uint16_t).
enum Kind : uint8_t { KInt, KF16, KBF16, KF32, KF64 };
template <class T, Kind K> PTX_HOT double toDouble(T x) {
  if constexpr (K == KF16) return num::halfToFloat(x);
  else if constexpr (K == KBF16) return num::bf16ToFloat(x);
  else return double(x);
}
template <class D, Kind DK, class S, Kind SK, Round RM, bool IntRound, bool SAT, bool FTZ>
PTX_HOT D cvtLane(S x) {
  if constexpr (SK == KInt && DK == KInt) {
    if constexpr (SAT) {
      // saturate to destination range
      if constexpr (std::is_signed_v<S>) {
        int64_t v = int64_t(x);
        int64_t lo = int64_t(std::numeric_limits<D>::min());
        if constexpr (std::is_unsigned_v<D> && sizeof(D) == 8) {
          return v < 0 ? D(0) : D(v);
        } else {
          int64_t hi = std::numeric_limits<D>::max() > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(std::numeric_limits<D>::max());
          return D(v < lo ? lo : (v > hi ? hi : v));
        }
      } else {
        uint64_t v = uint64_t(x);
        uint64_t hi = uint64_t(std::numeric_limits<D>::max());
        return D(v > hi ? hi : v);
      }
    } else {
      return D(x);
    }
  } else if constexpr (DK == KInt) {  // float -> int: IntRound mode, saturating
    using F = std::conditional_t<SK == KF64, double, float>;
    F v;
    if constexpr (SK == KF16 || SK == KBF16) v = F(toDouble<S, SK>(x));
    else v = F(x);
    if constexpr (FTZ) v = num::flush(v);
    // f64 NaN converts to the most negative signed integer (f32 NaN to 0), as measured on an H200
    if constexpr (SK == KF64 && std::is_signed_v<D>)
      if (v != v) return std::numeric_limits<D>::min();
    v = num::roundToInt(v, RM);
    return num::floatToInt<D>(v);
  } else if constexpr (DK == KF32 || DK == KF64) {
    using F = D;
    F r;
    if constexpr (SK == KInt) {
      r = F(x);  // rounding mode from MXCSR (set by the caller for non-RN)
    } else if constexpr (SK == KF16 || SK == KBF16) {
      r = F(toDouble<S, SK>(x));
    } else {
      F v = F(x);
      if constexpr (FTZ && SK == KF32) v = num::flush(F(x));
      r = v;
      if constexpr (FTZ && SK == KF32 && DK == KF64) r = F(num::flush(float(x)));
    }
    if constexpr (IntRound) r = num::roundToInt(r, RM);
    if constexpr (FTZ && DK == KF32) r = num::flush(r);
    if constexpr (SAT) r = num::saturate(r);
    // NaN: f32/f16 -> f32 give the canonical NaN; f64 sources and destinations keep the quieted payload
    // (x86's conversions do the same), bf16 -> f32 keeps the bits (measured on an H200).
    if constexpr ((SK == KF32 || SK == KF16) && DK == KF32) r = num::canon(r);
    if constexpr (SK == KF64 && DK == KF64) r = num::nan64(r, x);
    return r;
  } else if constexpr (DK == KF16) {
    if constexpr (SK == KInt) {
      return num::doubleToHalf(double(x), RM, SAT);  // exact for <= 53-bit ints
    } else if constexpr (SK == KF64) {
      if (x != x) {  // quieted, payload truncated (the GPU's f64 -> f16 NaN; not canonical like f32 -> f16)
        uint64_t b = std::bit_cast<uint64_t>(x);
        return uint16_t(((b >> 48) & 0x8000u) | 0x7e00u | ((b >> 42) & 0x3ffu));
      }
      return num::doubleToHalf(x, RM, SAT);
    } else if constexpr (SK == KF32) {
      return num::floatToHalf(FTZ ? num::flush(x) : x, RM, SAT);
    } else {
      float f = float(toDouble<S, SK>(x));
      if constexpr (IntRound) f = num::roundToInt(f, RM);
      return num::floatToHalf(f, num::RN, SAT);
    }
  } else {  // bf16
    if constexpr (SK == KF32) {
      return num::floatToBf16(FTZ ? num::flush(x) : x, RM, SAT);
    } else if constexpr (SK == KBF16) {
      float f = num::bf16ToFloat(x);
      if constexpr (IntRound) f = num::roundToInt(f, RM);
      return num::floatToBf16(f, num::RN, SAT);
    } else {
      // via float with round-to-odd is not needed for ints <= 24 bits; accept double rounding otherwise
      double v = toDouble<S, SK>(x);
      return num::floatToBf16(float(v), RM, SAT);
    }
  }
}
template <class D, Kind DK, class S, Kind SK, Round RM, bool IntRound, bool SAT, bool FTZ>
PTX_LANES const Op* cvt(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  auto body = [&](int i) { return cvtLane<D, DK, S, SK, RM, IntRound, SAT, FTZ>(a[i]); };
  constexpr bool needMode = !IntRound && RM != num::RN &&
                            ((DK == KF32 || DK == KF64) && (SK == KInt || (SK == KF64 && DK == KF32)));
  if constexpr (needMode) {
    num::FpMode mode(RM, false);
    store<D>(w, op->d, body);
  } else {
    store<D>(w, op->d, body);
  }
  return op + 1;
}

// ---- f16 / bf16 arithmetic (scalar or packed x2), computed in float/double then rounded once ----------------
// aux bit layout: 0-1 rounding, bit 2 ftz, bit 3 sat, bit 4 bf16, bit 5 relu
template <class F, int N, bool Ternary> const Op* halfArith(Warp& w, const Op* op);

const Op* sreg(Warp& w, const Op* op);  // special registers; aux = id, e = component

}  // namespace ptx::exec::h
