// Comparison and selection (OpClass Compare): setp, set, selp, slct, on every type including f16/bf16 pairs.
#include "exec/lowerer.h"
#include "exec/vector_ops.h"

namespace ptx::exec {

namespace h {

// set: d (integer or f32) = 0xffffffff/1.0f or 0
template <class T, Cmp C, class D> const Op* setValue(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const CompareOperands v = CompareOperands::of(*op);
  const uint8_t* c = R<uint8_t>(w, v.predicate);
  store<D>(w, op->d, [&](int i) -> D {
    bool x = v.combined(compare<T, C>(a[i], b[i]), c, i);
    if constexpr (std::is_same_v<D, float>)
      return x ? 1.0f : 0.0f;
    else
      return x ? D(~D(0)) : D(0);
  });
  return op + 1;
}
// set/setp on .f16/.bf16 and their .x2 pairs: each half compares in f32 (exact), with the CompareOperands of
// setValue/setp (halfFtz: .ftz flushes subnormal f16 inputs to signed zero). set writes op->imm's bits for true
// (1.0 in the destination format, or all ones; per half for pairs), 0 for false.
template <bool BF> PTX_HOT float halfOperand(uint16_t x, bool ftz) {
  if constexpr (BF) {
    return std::bit_cast<float>(uint32_t(x) << 16);
  } else {
    if (ftz && (x & 0x7c00u) == 0) x &= 0x8000u;
    return num::halfToFloat(x);
  }
}
template <Cmp C, bool BF> PTX_HOT bool halfCompareRaw(uint16_t a, uint16_t b, const CompareOperands& v) {
  return compare<float, C>(halfOperand<BF>(a, v.halfFtz), halfOperand<BF>(b, v.halfFtz));
}
template <Cmp C, bool BF>
PTX_HOT bool halfCompare(uint16_t a, uint16_t b, const CompareOperands& v, const uint8_t* c, int i) {
  return v.combined(halfCompareRaw<C, BF>(a, b, v), c, i);
}
template <class D, Cmp C, bool BF, bool PAIR> const Op* setHalf(Warp& w, const Op* op) {
  const CompareOperands aux = CompareOperands::of(*op);
  const uint8_t* c = R<uint8_t>(w, aux.predicate);
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
  const CompareOperands aux = CompareOperands::of(*op);
  const uint8_t* c = R<uint8_t>(w, aux.predicate);
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
      p[i] = aux.combined(x, c, i);
      q[i] = aux.combined(!x, c, i);
    }
  }
  storeLanes<uint8_t>(w, op->d, p);
  if (aux.complement) storeLanes<uint8_t>(w, aux.complement, q);
  return op + 1;
}
template <class T> PTX_LANES const Op* selp(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const uint8_t* c = R<uint8_t>(w, op->c);
  // both read in every lane: `c[i] ? a[i] : b[i]` reads only one, which GCC vectorised as two masked loads
  // (vpmaskmovq) per vector of lanes
  store<T>(w, op->d, [&](int i) {
    const T x = a[i], y = b[i];
    return c[i] ? x : y;
  });
  return op + 1;
}
// masked-compares: setp.{eq,ne} d, (x & mask), value as one op, the and's result never written (nothing else reads
// it: rewrites.cpp, findFoldedIntegerPairs). The value register is in f, so that c, e and aux keep their meaning for
// CompareOperands: setp-branch marks a branch right after this op as a plain setp's (thenBranch).
struct MaskedCompare {
  uint32_t x = 0, mask = 0, value = 0;
  static MaskedCompare of(const Op& op) { return {op.a, op.b, op.f}; }
  void into(Op& op) const {
    op.a = x;
    op.b = mask;
    op.f = value;
  }
};
template <class T, Cmp C> PTX_LANES const Op* setpMasked(Warp& w, const Op* op) {
  const MaskedCompare v = MaskedCompare::of(*op);
  const T* x = R<T>(w, v.x);
  const T* mask = R<T>(w, v.mask);
  const T* value = R<T>(w, v.value);
  return setPredicate(w, op, CompareOperands::of(*op),
                      [&](int i) { return uint8_t(compare<T, C>(T(x[i] & mask[i]), value[i])); });
}
#if defined(__x86_64__)
// setp on 64-bit integers with AVX2 (setpHandler picks it at lowering when the CPU has AVX2). The 32 comparisons,
// 0 or -1 in each 64-bit lane, narrow to the predicate's bytes by saturating packs, which keep 0 and -1 and take two
// inputs per instruction, and one fix of the lane order that packing within 16-byte halves leaves. GCC narrowed the
// lane loop's results one vector at a time with masks and shuffles: about 40 instructions against 12 here, and the
// loop's setp.ne.s64 with its branch was the divergent Collatz loop's costliest op.
__attribute__((target("avx2"))) inline __m256i predicateBytesOfWide(const __m256i* c) {
  const __m256i low = _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
  const __m256i high = _mm256_packs_epi16(_mm256_packs_epi32(c[4], c[5]), _mm256_packs_epi32(c[6], c[7]));
  // each 16-byte half now holds lane pairs 0, 2, 4, ..., 14 (low half) and 1, 3, ..., 15 (high half), as qwords
  // [0 2 4 6][8 10 12 14] | [1 3 5 7][9 11 13 15]: qwords to [0 2 4 6][1 3 5 7] | [8 10 12 14][9 11 13 15], then
  // the pairs within each half into order
  const __m256i pairs = _mm256_permute4x64_epi64(_mm256_packs_epi16(low, high), 0xd8);
  const __m256i order = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15, 0, 1, 8, 9, 2, 3, 10, 11,
                                         4, 5, 12, 13, 6, 7, 14, 15);
  return _mm256_shuffle_epi8(pairs, order);
}
// lane i's comparison of x and y for C on the 64-bit integer type T: -1 or 0 in each lane, then `inverted` tells
// whether the predicate is its complement (AVX2 compares 64-bit lanes for equality and signed greater only)
template <class T, Cmp C> struct WideCompare {
  static constexpr bool kUnsigned =
      C == LO || C == LS || C == HI || C == HS || (std::is_unsigned_v<T> && C != EQ && C != NE);
  static constexpr bool inverted = C == NE || C == GE || C == LE || C == HS || C == LS;
  __attribute__((target("avx2"))) static __m256i of(__m256i x, __m256i y) {
    if constexpr (C == EQ || C == NE) {
      return _mm256_cmpeq_epi64(x, y);
    } else {
      if constexpr (kUnsigned) {
        const __m256i sign = _mm256_set1_epi64x(int64_t(uint64_t(1) << 63));
        x = _mm256_xor_si256(x, sign);
        y = _mm256_xor_si256(y, sign);
      }
      // LT/GE, LO/HS: y > x; GT/LE, HI/LS: x > y
      if constexpr (C == LT || C == GE || C == LO || C == HS)
        return _mm256_cmpgt_epi64(y, x);
      else
        return _mm256_cmpgt_epi64(x, y);
    }
  }
};
// The bytes (0 or 1) of 32 wide comparisons to the executing lanes of setp op's predicate register d, then where
// the setp goes on (a whole warp's fused branch or exit gets the lanes where d holds: CompareOperands::afterOn).
template <bool Inverted> __attribute__((target("avx2"))) inline const Op* storeWideComparisons(Warp& w, const Op* op,
                                                                                               const CompareOperands& v,
                                                                                               const __m256i* c) {
  const __m256i bytes = predicateBytesOfWide(c), one = _mm256_set1_epi8(1);
  const __m256i p = Inverted ? _mm256_andnot_si256(bytes, one) : _mm256_and_si256(bytes, one);
  if (w.exec == kFullMask) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(R<uint8_t>(w, op->d)), p);
    return v.afterOn(w, op, uint32_t(_mm256_movemask_epi8(_mm256_slli_epi16(p, 7))));
  }
  alignas(32) uint8_t r[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(r), p);
  blendLanes(R<uint8_t>(w, op->d), r, w.exec);
  return v.after(w, op);
}
template <class T, Cmp C> __attribute__((target("avx2"))) const Op* setpWide(Warp& w, const Op* op) {
  const CompareOperands v = CompareOperands::of(*op);
  if (!v.plain()) return setp<T, C>(w, op);
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  __m256i c[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k)
    c[k] = WideCompare<T, C>::of(_mm256_load_si256(reinterpret_cast<const __m256i*>(a + 4 * k)),
                                 _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 4 * k)));
  return storeWideComparisons<WideCompare<T, C>::inverted>(w, op, v, c);
}
// masked-compares on 64-bit registers, the same way
template <Cmp C> __attribute__((target("avx2"))) const Op* setpMaskedWide(Warp& w, const Op* op) {
  const MaskedCompare v = MaskedCompare::of(*op);
  const uint64_t* x = R<uint64_t>(w, v.x);
  const uint64_t* mask = R<uint64_t>(w, v.mask);
  const uint64_t* value = R<uint64_t>(w, v.value);
  __m256i c[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    const __m256i xk = _mm256_load_si256(reinterpret_cast<const __m256i*>(x + 4 * k));
    const __m256i mk = _mm256_load_si256(reinterpret_cast<const __m256i*>(mask + 4 * k));
    const __m256i vk = _mm256_load_si256(reinterpret_cast<const __m256i*>(value + 4 * k));
    c[k] = WideCompare<uint64_t, C>::of(_mm256_and_si256(xk, mk), vk);
  }
  return storeWideComparisons<WideCompare<uint64_t, C>::inverted>(w, op, CompareOperands::of(*op), c);
}
#endif
// setp's handler for T and C: on 64-bit integers the AVX2 form when this CPU has it.
template <class T, Cmp C> Handler setpHandler() {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 8 && std::is_integral_v<T> && C <= HS) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return &setpWide<T, C>;
  }
#endif
  return &setp<T, C>;
}
template <class T, Cmp C> Handler setpMaskedHandler() {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 8) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return &setpMaskedWide<C>;
  }
#endif
  return &setpMasked<T, C>;
}
template <class T, class C> const Op* slct(Warp& w, const Op* op) {
  const T* a = R<T>(w, op->a);
  const T* b = R<T>(w, op->b);
  const C* c = R<C>(w, op->c);
  store<T>(w, op->d, [&](int i) {
    if constexpr (std::is_floating_point_v<C>)
      return c[i] >= C(0) ? a[i] : b[i];
    else
      return c[i] >= 0 ? a[i] : b[i];
  });
  return op + 1;
}
// Predicate logic (bytes 0/1).

}  // namespace h

// The vector prefix's ops of this class (exec/vector_ops.h): plain setp on 32- and 64-bit integers (the handlers
// setpHandler picks: on 64-bit lanes the AVX2 form, the same comparisons); the parameter is cuemuVectorCompare*'s
// `cmp`.
void addCompareVectorOps(std::vector<CuemuVectorOp>& rows) {
  const auto both = [&](auto c) {
    constexpr h::Cmp C = decltype(c)::value;
    rows.push_back({reinterpret_cast<const void*>(h::setpHandler<int32_t, C>()), kCuemuVectorCompare32, C | 0x100u});
    rows.push_back({reinterpret_cast<const void*>(h::setpHandler<uint32_t, C>()), kCuemuVectorCompare32, C});
    rows.push_back({reinterpret_cast<const void*>(h::setpHandler<int64_t, C>()), kCuemuVectorCompare64, C | 0x100u});
    rows.push_back({reinterpret_cast<const void*>(h::setpHandler<uint64_t, C>()), kCuemuVectorCompare64, C});
  };
  both(std::integral_constant<h::Cmp, h::EQ>{});
  both(std::integral_constant<h::Cmp, h::NE>{});
  both(std::integral_constant<h::Cmp, h::LT>{});
  both(std::integral_constant<h::Cmp, h::LE>{});
  both(std::integral_constant<h::Cmp, h::GT>{});
  both(std::integral_constant<h::Cmp, h::GE>{});
  both(std::integral_constant<h::Cmp, h::LO>{});
  both(std::integral_constant<h::Cmp, h::LS>{});
  both(std::integral_constant<h::Cmp, h::HI>{});
  both(std::integral_constant<h::Cmp, h::HS>{});
}

namespace lowering {

// set/setp on .f16/.bf16 and .f16x2/.bf16x2 (cuda_fp16.hpp and cuda_bf16.hpp compare this way). set's true value:
// 1.0 in a floating-point destination's format, all ones in an integer one; pairs get it per half.
// A setp's op with its predicate destination, or both predicates of a `p|q` destination pair.
void KernelLowerer::emitSetp(Handler hnd, uint32_t a, uint32_t b, h::CompareOperands v, const Operand& d0) {
  Op& op = emit(hnd);
  op.a = a;
  op.b = b;
  if (d0.kind == OperandKind::RegPair) {
    op.d = regOf(d0.index);
    v.complement = regOf(uint32_t(d0.value));
  } else {
    op.d = dst(d0, Type::pred).off;
  }
  v.into(op);
}

void KernelLowerer::lowerHalfCompare(const Instruction& in) {
  bool isSet = in.opcode == Opcode::Set;
  Type st = isSet && in.numTypes > 1 ? in.types[1] : in.type();
  Type dt = isSet ? in.types[0] : Type::pred;
  bool bf = st == Type::bf16 || st == Type::bf16x2;
  bool pair = st == Type::f16x2 || st == Type::bf16x2;
  uint32_t a = src(opnd(in, 1), st), b = src(opnd(in, 2), st);
  h::CompareOperands v;
  v.halfFtz = in.has(ptx::Flag::ftz);
  if (in.boolOp != ptx::BoolOp::none) {
    v.predicate = srcPred(opnd(in, 3), v.negated);
    v.combine = h::CompareOperands::Combine(in.boolOp);
  } else {
    v.predicate = literal(0, 1);
  }
  auto pick = [&](auto cc) -> Handler {
    constexpr h::Cmp C = decltype(cc)::value;
    if (!isSet) {
      if (bf) return pair ? &h::setpHalf<C, true, true> : &h::setpHalf<C, true, false>;
      return pair ? &h::setpHalf<C, false, true> : &h::setpHalf<C, false, false>;
    }
    bool wide = pair || sizeOf(dt) == 4;
    if (bf) {
      if (pair) return &h::setHalf<uint32_t, C, true, true>;
      return wide ? &h::setHalf<uint32_t, C, true, false> : &h::setHalf<uint16_t, C, true, false>;
    }
    if (pair) return &h::setHalf<uint32_t, C, false, true>;
    return wide ? &h::setHalf<uint32_t, C, false, false> : &h::setHalf<uint16_t, C, false, false>;
  };
  Handler hnd = byCmp(in.cmp, line_, pick);
  if (!isSet) {
    emitSetp(hnd, a, b, v, opnd(in, 0));
    return;
  }
  uint64_t one;
  switch (dt) {
    case Type::f32: one = 0x3f800000u; break;
    case Type::f16:
    case Type::f16x2: one = 0x3c00u; break;
    case Type::bf16:
    case Type::bf16x2: one = 0x3f80u; break;
    default: one = pair ? 0xffffu : sizeOf(dt) == 2 ? 0xffffu : 0xffffffffu; break;
  }
  Dst d = dst(opnd(in, 0), pair || sizeOf(dt) == 4 ? Type::b32 : Type::b16);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  v.into(op);
  op.imm = int64_t(one);
  finish(d);
}

// `and.bN t, x, mask; setp.{eq,ne}.N p, t, value` (or `value, t`), t read by nothing else: one op. The and's
// operands are read as the and reads them (its type), the value as the setp reads it.
void KernelLowerer::lowerMaskedCompare(const Instruction& setp) {
  const Instruction& bitAnd = fn_->instructions[curInst_ - 1];
  const Type t = setp.type();
  const Operand& product = opnd(bitAnd, 0);
  const Operand& first = opnd(setp, 1);
  const Operand& value = first.kind == OperandKind::Reg && first.index == product.index ? opnd(setp, 2) : first;
  h::MaskedCompare v;
  v.x = src(opnd(bitAnd, 1), bitAnd.type());
  v.mask = src(opnd(bitAnd, 2), bitAnd.type());
  v.value = src(value, t);
  const bool eq = setp.cmp == ptx::CmpOp::eq;
  Handler hnd = nullptr;
  switch (sizeOf(t)) {
    case 2: hnd = eq ? &h::setpMasked<uint16_t, h::EQ> : &h::setpMasked<uint16_t, h::NE>; break;
    case 4: hnd = eq ? &h::setpMasked<uint32_t, h::EQ> : &h::setpMasked<uint32_t, h::NE>; break;
    default: hnd = eq ? h::setpMaskedHandler<uint64_t, h::EQ>() : h::setpMaskedHandler<uint64_t, h::NE>(); break;
  }
  Op& op = emit(hnd);
  op.d = dst(opnd(setp, 0), Type::pred).off;
  v.into(op);
  if (enabled(Rewrite::SetpBranch)) rewrites_[curInst_].setpOp = here() - 1;
}

void KernelLowerer::lowerCompare(const Instruction& in) {
  Type t = in.type();
  switch (in.opcode) {
    case Opcode::Setp: {
      if (previousFoldedIntoThis()) return lowerMaskedCompare(in);
      const Operand& d0 = opnd(in, 0);
      if (t == Type::f16 || t == Type::bf16 || t == Type::f16x2 || t == Type::bf16x2) return lowerHalfCompare(in);
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      Handler hnd;
      if (isFloat(t)) {
        hnd = byFloat(t, line_, [&](auto ft) {
          using F = decltype(ft);
          return byCmp(in.cmp, line_, [&](auto c) -> Handler { return &h::setp<F, decltype(c)::value>; });
        });
      } else {
        hnd = byInt163264(
            t == Type::b8 || t == Type::u8 ? Type::u16 : (t == Type::s8 ? Type::s16 : t), line_, [&](auto it) {
              using I = decltype(it);
              return byCmp(in.cmp, line_, [&](auto c) -> Handler { return h::setpHandler<I, decltype(c)::value>(); });
            });
      }
      h::CompareOperands v;
      if (in.boolOp != ptx::BoolOp::none) {
        v.predicate = srcPred(opnd(in, 3), v.negated);
        v.combine = h::CompareOperands::Combine(in.boolOp);
      }
      emitSetp(hnd, a, b, v, d0);
      if (enabled(Rewrite::SetpBranch)) rewrites_[curInst_].setpOp = here() - 1;
      return;
    }
    case Opcode::Set: {
      Type dt = in.types[0], st = in.numTypes > 1 ? in.types[1] : in.types[0];
      if (st == Type::f16 || st == Type::bf16 || st == Type::f16x2 || st == Type::bf16x2) return lowerHalfCompare(in);
      uint32_t a = src(opnd(in, 1), st), b = src(opnd(in, 2), st);
      h::CompareOperands v;
      if (in.boolOp != ptx::BoolOp::none) {
        v.predicate = srcPred(opnd(in, 3), v.negated);
        v.combine = h::CompareOperands::Combine(in.boolOp);
      } else {
        v.predicate = literal(0, 1);
      }
      auto withD = [&](auto srcTag) -> Handler {
        using S = decltype(srcTag);
        return byCmp(in.cmp, line_, [&](auto cc) -> Handler {
          constexpr h::Cmp C = decltype(cc)::value;
          if (dt == Type::f32) return &h::setValue<S, C, float>;
          return &h::setValue<S, C, uint32_t>;
        });
      };
      Handler hnd = isFloat(st) ? byFloat(st, line_, withD) : byInt163264(st, line_, withD);
      Dst d = dst(opnd(in, 0), dt);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      op.b = b;
      v.into(op);
      finish(d);
      return;
    }
    case Opcode::Selp: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      bool neg;
      uint32_t c = srcPred(opnd(in, 3), neg);
      if (neg) fail(line_, "selp predicate cannot be negated");
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::selp<decltype(x)>; }));
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      finish(d);
      return;
    }
    case Opcode::Slct: {
      Type ct = in.numTypes > 1 ? in.types[1] : Type::s32;
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t), c = src(opnd(in, 3), ct);
      Dst d = dst(opnd(in, 0), t);
      Handler hnd = byBits(sizeOf(t), line_, [&](auto x) -> Handler {
        using T = decltype(x);
        if (ct == Type::f32) return &h::slct<T, float>;
        return &h::slct<T, int32_t>;
      });
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      finish(d);
      return;
    }
    default: unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec

#if defined(PTX_NATIVE_BITCODE)
// A warp of those setps for the native tier's vector prefix (native/jit/vector_prefix.cpp), in bitcode only: d's
// 32 bytes (0 or 1) of compare<T, C>; cmp is the Cmp, with 0x100 for signed operands (unsigned otherwise).
namespace {
// (restrict: the operands never overlap, and the vectoriser emits no run-time test of it)
template <class T, ptx::exec::h::Cmp C, class U>
void compareWarp(const U* __restrict a, const U* __restrict b, uint8_t* __restrict d) {
  for (int i = 0; i < 32; ++i) d[i] = uint8_t(ptx::exec::h::compare<T, C>(T(a[i]), T(b[i])));
}
template <class T, class U>
void compareWarpOf(uint32_t cmp, const U* __restrict a, const U* __restrict b, uint8_t* __restrict d) {
  using namespace ptx::exec::h;
  switch (cmp & 0xff) {
    case EQ: return compareWarp<T, EQ>(a, b, d);
    case NE: return compareWarp<T, NE>(a, b, d);
    case LT: return compareWarp<T, LT>(a, b, d);
    case LE: return compareWarp<T, LE>(a, b, d);
    case GT: return compareWarp<T, GT>(a, b, d);
    case GE: return compareWarp<T, GE>(a, b, d);
    case LO: return compareWarp<T, LO>(a, b, d);
    case LS: return compareWarp<T, LS>(a, b, d);
    case HI: return compareWarp<T, HI>(a, b, d);
    default: return compareWarp<T, HS>(a, b, d);
  }
}
// (lanes of U, compared as the signed S where cmp says so)
template <class S, class U>
void compareWarpSigned(const U* __restrict a, const U* __restrict b, uint8_t* __restrict d, uint32_t cmp) {
  if (cmp & 0x100)
    compareWarpOf<S>(cmp, a, b, d);
  else
    compareWarpOf<U>(cmp, a, b, d);
}
}  // namespace
extern "C" void cuemuVectorCompare32(const uint32_t* __restrict a, const uint32_t* __restrict b, uint8_t* __restrict d,
                                     uint32_t cmp) {
  compareWarpSigned<int32_t>(a, b, d, cmp);
}
extern "C" void cuemuVectorCompare64(const uint64_t* __restrict a, const uint64_t* __restrict b, uint8_t* __restrict d,
                                     uint32_t cmp) {
  compareWarpSigned<int64_t>(a, b, d, cmp);
}
#endif
