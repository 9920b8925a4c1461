// What every instruction class's handlers share: the lane loops and register access, the generic unary/binary/
// ternary handlers, float min/max, comparisons and setp (also used by calls), predicate logic, moves, width
// changes and packing. A handler specific to one class lives in that class's file (isa/<class>.cpp).
//
// Each handler executes one op for the executing lanes of a warp and returns the next op
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

template <class T> PTX_HOT T* R(Warp& w, uint32_t off) { return w.reg<T>(off); }

// dst[i] = tmp[i] for the lanes in m, written as a branch-free blend of the lanes' bits (the conditional form
// became a loop of byte stores and branches in divergent loops).
template <class T> PTX_HOT void blendLanes(T* dst, const T* tmp, uint32_t m) {
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    // A 32-byte vector of lanes at a time, blended in registers (the copies of dst and tmp through the stack, and
    // their loops, cost about as much as the blend itself). Each element selects by its own bit of m: m in every
    // element, and-ed with a constant that has the element's bit, is nonzero (two instructions per vector after one
    // broadcast; shifting m by each element's index cost five). 16-bit elements take m's half for their vector.
    using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    constexpr int kPerVector = int(32 / sizeof(U));
    typedef U V __attribute__((vector_size(32)));
#pragma GCC unroll 8
    for (int k = 0; k < 32 / kPerVector; ++k) {
      V cur, next, bit;
      for (int i = 0; i < kPerVector; ++i) bit[i] = U(U(1) << (sizeof(U) == 2 ? i : k * kPerVector + i));
      std::memcpy(&cur, dst + k * kPerVector, sizeof cur);
      std::memcpy(&next, tmp + k * kPerVector, sizeof next);
      const V mask = V{} + U(sizeof(U) == 2 ? m >> (16 * k) : m);
      cur = (mask & bit) != U(0) ? next : cur;
      std::memcpy(dst + k * kPerVector, &cur, sizeof cur);
    }
  } else if constexpr (sizeof(T) == 1) {
    // Bytes: m in every 32-bit element, byte j of the vector takes the byte of m that holds bit j (a shuffle within
    // each 16-byte half, which holds m four times), and-ed with bit j % 8. The lane loop this replaces selected
    // byte by byte.
    typedef uint8_t V __attribute__((vector_size(32)));
    typedef uint32_t W __attribute__((vector_size(32)));
    const V copies = reinterpret_cast<V>(W{} + m);
    const V spread = __builtin_shufflevector(copies, copies, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 18, 18, 18,
                                             18, 18, 18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 19);
    const V bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128,
                   1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    V cur, next;
    std::memcpy(&cur, dst, sizeof cur);
    std::memcpy(&next, tmp, sizeof next);
    cur = (spread & bit) != V{} ? next : cur;
    std::memcpy(dst, &cur, sizeof cur);
  } else {
    for (int i = 0; i < 32; ++i)
      if ((m >> i) & 1) dst[i] = tmp[i];
  }
}

// Stores f(i) to the executing lanes of register d. f must be lane-wise: f(i) reads lane i of its operand
// registers only (a cross-lane op reads a copy made before), since with every lane executing the results go
// straight into d, which may be one of the operands. Writing through a temporary cost every op's consumer a
// second store-to-load hop on its dependency chain (a chain of add.s32 went from 6.5 to about 4 ns per op).
// The direct write has no off switch (ptx/rewrites.def): comparing exec with a per-warp switch instead of the
// constant cost the FMA loop 12%, and with every lane executing a blend stores the same 32 values.
template <class T, class F> PTX_HOT void store(Warp& w, uint32_t d, F f) {
  if (w.exec == kFullMask) {
    T* dst = R<T>(w, d);
#if defined(__clang__)  // the native tier's bitcode (native/jit): clang's spelling of ivdep
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
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
  if (w.exec == kFullMask)
    copyVec<32 * sizeof(T)>(dst, tmp);
  else
    blendLanes(dst, tmp, w.exec);
}

template <class F> PTX_HOT void forActive(uint32_t m, F f) {
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    f(i);
  }
}

// Membermasks of a warp collective (`masks`: each lane's): the lanes of `lanes` that their own mask leaves out, and
// whether every lane of `lanes` gives the same mask.
// (Whole warps, the common case, take a loop over all 32 lanes that the compiler vectorises: collectives such as
// CUB's ballots run these on every execution.)
inline uint32_t lanesOutsideTheirMask(uint32_t lanes, const uint32_t* masks) {
  uint32_t outside = 0;
  if (lanes == kFullMask) {
    for (int i = 0; i < 32; ++i) outside |= ((~masks[i] >> i) & 1u) << i;
    return outside;
  }
  forActive(lanes, [&](int i) { outside |= uint32_t(((masks[i] >> i) & 1) == 0) << i; });
  return outside;
}
inline bool oneMask(uint32_t lanes, const uint32_t* masks) {
  const uint32_t first = masks[std::countr_zero(lanes | 0x80000000u)];
  if (lanes == kFullMask) {
    uint32_t differ = 0;
    for (int i = 0; i < 32; ++i) differ |= masks[i] ^ first;
    return differ == 0;
  }
  bool same = true;
  forActive(lanes, [&](int i) { same = same && masks[i] == first; });
  return same;
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

// ---- float min/max (also the atomics' min/max on floats) ------------------------------------------------

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
// The typed operand view of setp and set (the f16/bf16 forms in isa/compare.cpp too): d = a CMP b, combined with
// predicate c (negated or not) by and/or/xor; setp's optional second destination gets the complement combined
// likewise; halfFtz flushes subnormal f16 inputs; thenBranch: the next op is the conditional branch on d, which
// runs from here without a trip through the dispatch loop (rewrite setp-branch: compare-and-branch is the tail of
// most loops); thenExit: the next op is the guarded exit on d (`if (i >= n) return;`), which runs from here too. set's
// value for true stays in the op's imm (isa/compare.cpp). The one place that packs these fields (into) and reads them
// (of).
struct CompareOperands {
  enum Combine : uint8_t { None = 0, And = 1, Or = 2, Xor = 3 };  // ptx::BoolOp's values
  Combine combine = None;
  uint32_t predicate = 0;  // c
  bool negated = false;
  uint32_t complement = 0;  // setp's second destination (0: none)
  bool halfFtz = false;
  bool thenBranch = false;
  bool thenExit = false;

  // d = a CMP b and nothing else
  bool plain() const { return combine == None && !negated && !halfFtz && complement == 0; }
  static CompareOperands of(const Op& op) {
    CompareOperands v;
    v.combine = Combine(op.aux & 15);
    v.negated = (op.aux & 16) != 0;
    v.thenBranch = (op.aux & 32) != 0;
    v.halfFtz = (op.aux & 64) != 0;
    v.thenExit = (op.aux & 128) != 0;
    v.predicate = op.c;
    v.complement = op.e;
    return v;
  }
  void into(Op& op) const {
    op.aux = uint32_t(combine) | (negated ? 16 : 0) | (thenBranch ? 32 : 0) | (halfFtz ? 64 : 0) | (thenExit ? 128 : 0);
    op.c = predicate;
    op.e = complement;
  }
  // where setp `op` goes on: the branch or exit after it that it runs, else the next op
  PTX_HOT const Op* after(Warp& w, const Op* op) const {
    if (thenBranch) return ctl::braCond(w, op + 1);
    if (thenExit) return ctl::exitWhere(w, op + 1);
    return op + 1;
  }
  // ... with the lanes where the predicate d holds known (a whole warp's setp has them in host registers)
  PTX_HOT const Op* afterOn(Warp& w, const Op* op, uint32_t holds) const {
    if (!thenBranch && !thenExit) return op + 1;
    w.setpLanes = holds;
    return thenBranch ? ctl::braCondOnSetp(w, op + 1) : ctl::exitWhereOnSetp(w, op + 1);
  }
  // x combined with lane i of the predicate register's bytes c
  PTX_HOT bool combined(bool x, const uint8_t* c, int i) const {
    bool cv = (c[i] != 0) != negated;
    switch (combine) {
      case And: return x && cv;
      case Or: return x || cv;
      case Xor: return x != cv;
      default: return x;
    }
  }
};
// A plain setp's 32 results (bit(i): 0 or 1) to predicate d, then where the setp goes on (CompareOperands::after); a
// whole warp's fused branch or exit gets the lanes where d holds from the bytes computed here.
template <class F> PTX_HOT const Op* setPredicate(Warp& w, const Op* op, const CompareOperands& v, F bit) {
  if ((v.thenBranch || v.thenExit) && w.exec == kFullMask) {
    alignas(32) uint8_t r[32];
    for (int i = 0; i < 32; ++i) r[i] = bit(i);
    copyVec<32>(R<uint8_t>(w, op->d), r);
    return v.afterOn(w, op, predMask(r));
  }
  store<uint8_t>(w, op->d, bit);
  return v.after(w, op);
}
template <class T, Cmp C> PTX_LANES const Op* setp(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const CompareOperands v = CompareOperands::of(*op);
  if (v.plain()) return setPredicate(w, op, v, [&](int i) { return uint8_t(compare<T, C>(a[i], b[i])); });
  alignas(64) uint8_t r[32];
  for (int i = 0; i < 32; ++i) r[i] = compare<T, C>(a[i], b[i]);
  const uint8_t* c = R<uint8_t>(w, v.predicate);
  uint8_t neg = v.negated;
  alignas(64) uint8_t p[32], q[32];
  for (int i = 0; i < 32; ++i) {
    uint8_t cv = uint8_t((c[i] != 0) ^ neg);
    uint8_t x = r[i], nx = uint8_t(!r[i]);
    switch (v.combine) {
      case CompareOperands::And:
        x &= cv;
        nx &= cv;
        break;
      case CompareOperands::Or:
        x |= cv;
        nx |= cv;
        break;
      case CompareOperands::Xor:
        x ^= cv;
        nx ^= cv;
        break;
      default: break;
    }
    p[i] = x;
    q[i] = nx;
  }
  storeLanes<uint8_t>(w, op->d, p);
  if (v.complement) storeLanes<uint8_t>(w, v.complement, q);
  return v.after(w, op);
}
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

// (storeLanes: in 32-byte moves. Through store<>, clang's loop idiom made the native tier's copy a memcpy of 4-,
// 16-, 64-, 16-, 16-, 8- and 4-byte pieces on AVX-512 hosts, which the next op's 32-byte loads could not be
// forwarded from: the FMA loop's chain ran slower compiled than interpreted.)
template <class T> PTX_LANES const Op* mov(Warp& w, const Op* op) {
  storeLanes<T>(w, op->d, R<T>(w, op->a));
  return op + 1;
}
// Width change between registers of different sizes: zero or sign extension / truncation.
template <class D, class S> PTX_LANES const Op* convertWidth(Warp& w, const Op* op) {
  const S* a = R<S>(w, op->a);
  store<D>(w, op->d, [&](int i) { return D(a[i]); });
  return op + 1;
}
// mov.b64 d, {a, b} (pack) and mov.b64 {d, e}, a (unpack): the whole register and its parts, part k in bits
// [k * width, (k + 1) * width); an unpack's part 0 (the zero register) is a sink "_". The typed operand view of both.
struct VectorParts {
  uint32_t whole = 0;
  uint32_t parts[4] = {};

  static VectorParts ofPack(const Op& op) { return {op.d, {op.a, op.b, op.c, op.e}}; }
  void intoPack(Op& op) const {
    op.d = whole;
    op.a = parts[0];
    op.b = parts[1];
    op.c = parts[2];
    op.e = parts[3];
  }
  static VectorParts ofUnpack(const Op& op) { return {op.a, {op.d, op.b, op.c, op.e}}; }
  void intoUnpack(Op& op) const {
    op.a = whole;
    op.d = parts[0];
    op.b = parts[1];
    op.c = parts[2];
    op.e = parts[3];
  }
};

// P is the part type, W the whole's, N the number of parts.
template <class P, class W, int N> const Op* pack(Warp& w, const Op* op) {
  const VectorParts v = VectorParts::ofPack(*op);
  alignas(64) W tmp[32];
  for (int i = 0; i < 32; ++i) tmp[i] = 0;
  for (int k = 0; k < N; ++k) {
    const P* s = R<P>(w, v.parts[k]);
    for (int i = 0; i < 32; ++i) tmp[i] |= W(std::make_unsigned_t<W>(s[i]) << (k * 8 * sizeof(P)));
  }
  storeLanes<W>(w, v.whole, tmp);
  return op + 1;
}
template <class P, class W, int N> const Op* unpack(Warp& w, const Op* op) {
  const VectorParts v = VectorParts::ofUnpack(*op);
  alignas(64) W src[32];
  std::memcpy(src, R<W>(w, v.whole), sizeof src);
  for (int k = 0; k < N; ++k) {
    if (v.parts[k] == 0) continue;  // "_" sink
    store<P>(w, v.parts[k], [&](int i) { return P(src[i] >> (k * 8 * sizeof(P))); });
  }
  return op + 1;
}

// 128-bit registers (.b128): two 64-bit halves, low first.
struct B128 {
  uint64_t lo, hi;
};
inline const Op* pack128(Warp& w, const Op* op) {
  const VectorParts v = VectorParts::ofPack(*op);
  const uint64_t* lo = R<uint64_t>(w, v.parts[0]);
  const uint64_t* hi = R<uint64_t>(w, v.parts[1]);
  store<B128>(w, v.whole, [&](int i) { return B128{lo[i], hi[i]}; });
  return op + 1;
}
inline const Op* unpack128(Warp& w, const Op* op) {
  const VectorParts v = VectorParts::ofUnpack(*op);
  alignas(64) B128 src[32];
  std::memcpy(src, R<B128>(w, v.whole), sizeof src);
  if (v.parts[0]) store<uint64_t>(w, v.parts[0], [&](int i) { return src[i].lo; });
  if (v.parts[1]) store<uint64_t>(w, v.parts[1], [&](int i) { return src[i].hi; });
  return op + 1;
}

}  // namespace ptx::exec::h
