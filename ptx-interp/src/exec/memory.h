// Memory handlers: ld / st / atom / red for every state space, with address validation.
//
// State-space addresses: global and generic addresses are host virtual addresses (validated through the
// driver's MemoryValidator); shared addresses are byte offsets into the CTA's shared block; local addresses are
// byte offsets into the thread's local memory; kernel param addresses are offsets into the parameter buffer.
// Generic addresses of shared/local/param data are the host addresses of those blocks.
#pragma once

#include "exec/handlers.h"
#include "exec/memory_ops.h"

#include <atomic>
#include <limits>
#include <mutex>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ptx::exec::mem {

using h::R;

using B128 = h::B128;

// Faults of shared addresses. A shared::cta access (or a plain .shared one) reaches the CTA's own block only: an
// H200 stops the kernel with an illegal-instruction error when the address has another CTA's rank bits, a plain
// offset in a CTA of rank 1 or more included (tools/gpu-probe/results/rankbits30-h200-2026-11-28.txt).
// ld/st/atom/red.shared::cluster through a register go through the generic window (clusterAccessToGeneric,
// isa/move.cpp), which names a rank outside the cluster with kOutsideCluster.
inline const char* const kOutsideCluster = "shared::cluster address of a CTA rank outside the cluster";
inline const char* const kOtherCtasRankBits = "shared::cta address with the rank bits of another CTA";

// Translates lane i's state-space address to a host pointer; nullptr (and what is wrong in `why`) when the access
// is out of range. No alignment check, no fault: xlate below adds both.
template <Space S>
PTX_HOT uint8_t* resolve(Warp& w, int lane, uint64_t addr, uint32_t size, bool write, const char*& why) {
  Cta& cta = *w.cta;
  if constexpr (S == Global) {
    if (cta.job->lp.memory->check(addr, size, write)) [[likely]]
      return reinterpret_cast<uint8_t*>(addr);
    why = "out-of-range global address";
    return nullptr;
  } else if constexpr (S == Shared) {
    const uint64_t offset = addr - cta.sharedWindow;  // the own block's, when the rank bits are the CTA's
    if (offset + size <= cta.sharedBytes && offset + size >= offset) [[likely]]
      return cta.shared + offset;
    why = (addr >> kClusterRankShift) != cta.clusterRank ? kOtherCtasRankBits : "out-of-range shared address";
    return nullptr;
  } else if constexpr (S == Local || S == Frame) {
    uint64_t a = S == Frame ? addr + w.frame : addr;
    if (a + size <= w.localStride && a + size >= a) [[likely]]
      return w.local + uint64_t(lane) * w.localStride + a;
    why = "out-of-range local address";
    return nullptr;
  } else if constexpr (S == Param) {
    if (write) {
      why = "store to kernel parameter space";
      return nullptr;
    }
    auto& pb = cta.job->paramBuffer;
    if (addr + size <= pb.size()) return pb.data() + addr;
    why = "out-of-range kernel parameter address";
    return nullptr;
  } else {
    uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
    if (addr - sh < cta.sharedBytes) {
      if (addr + size - sh <= cta.sharedBytes) return reinterpret_cast<uint8_t*>(addr);
      why = "out-of-range shared address";
      return nullptr;
    }
    uint64_t lo = reinterpret_cast<uint64_t>(w.local) + uint64_t(lane) * w.localStride;
    if (addr - lo < w.localStride) {
      if (addr + size - lo <= w.localStride) return reinterpret_cast<uint8_t*>(addr);
      why = "out-of-range local address";
      return nullptr;
    }
    if (cta.job->lp.memory->check(addr, size, write)) [[likely]]
      return reinterpret_cast<uint8_t*>(addr);
    uint64_t pb = reinterpret_cast<uint64_t>(cta.job->paramBuffer.data());
    if (!write && addr - pb < cta.job->paramBuffer.size() && addr + size - pb <= cta.job->paramBuffer.size())
      return reinterpret_cast<uint8_t*>(addr);
    if (const Cta* peer = clusterSharedOwner(cta, addr)) {  // another CTA's shared memory (mapa)
      if (addr + size - reinterpret_cast<uint64_t>(peer->shared) <= peer->sharedBytes)
        return reinterpret_cast<uint8_t*>(addr);
      why = "out-of-range shared address";
      return nullptr;
    }
    why = "invalid generic address";
    return nullptr;
  }
}

// The access a fault report names: the state space as the program sees it (a generic address by the window it
// falls in), the direction and the size.
template <Space S> __attribute__((noinline, cold)) FaultAccess faultAccess(Warp& w, int lane, uint64_t addr,
                                                                           uint32_t size, bool write, bool atomic) {
  using K = FaultAccess::Kind;
  using FS = FaultAccess::Space;
  FaultAccess a;
  a.kind = atomic ? K::Atomic : write ? K::Write : K::Read;
  a.bytes = size;
  if constexpr (S == Shared) {
    a.space = FS::Shared;
  } else if constexpr (S == Local || S == Frame) {
    a.space = FS::Local;
  } else if constexpr (S == Generic) {
    uint64_t sh = reinterpret_cast<uint64_t>(w.cta->shared);
    uint64_t lo = reinterpret_cast<uint64_t>(w.local) + uint64_t(lane) * w.localStride;
    a.space = addr - sh < w.cta->sharedBytes ? FS::Shared : addr - lo < w.localStride ? FS::Local : FS::Global;
  } else {
    a.space = FS::Global;
  }
  return a;
}

// Translates lane i's state-space address to a host pointer; nullptr after raising a fault.
template <Space S>
PTX_HOT uint8_t* xlate(Warp& w, const Op* op, int lane, uint64_t addr, uint32_t size, bool write, bool atomic = false) {
  if ((addr & (size - 1)) != 0) {
    raiseFault(w, op, lane, FaultKind::MisalignedAddress, addr, "misaligned address",
               faultAccess<S>(w, lane, addr, size, write, atomic));
    return nullptr;
  }
  const char* why = "";
  if (uint8_t* p = resolve<S>(w, lane, addr, size, write, why)) [[likely]]
    return p;
  const FaultKind kind = why == kOutsideCluster      ? FaultKind::ClusterAddress
                         : why == kOtherCtasRankBits ? FaultKind::IllegalInstruction
                                                     : FaultKind::IllegalAddress;
  raiseFault(w, op, lane, kind, addr, why, faultAccess<S>(w, lane, addr, size, write, atomic));
  return nullptr;
}

// Register + offset. A 32-bit address register forms a 32-bit address, so the sum wraps modulo 2^32 as on the GPU:
// cuBLAS's transpose kernels store to [%r+8320] with %r 520 bytes below their shared array, which starts at 0.
template <class A> PTX_HOT uint64_t laneAddr(const A* base, int i, int64_t imm) {
  if constexpr (sizeof(A) == 4)
    return uint32_t(base[i] + uint32_t(imm));
  else
    return uint64_t(base[i]) + uint64_t(imm);
}

// ld: M memory type, D register type (D wider than M: sign/zero extension by M's signedness), N vector count.
// Operands: memory_ops.h, Access.
// This is the per-lane path: every executing lane's address is translated and checked on its own, and the first
// bad one raises the fault. The full-warp fast paths below fall back to it whenever they cannot prove all 32
// addresses valid with one check, so faults are always raised here, for the right lane.
// The address comes from register addrReg (+ offset): the Access's own, except for the fused forms below, whose
// per-lane path reads it from their sum register.
// One lane's whole access (the N elements of a vector ld/st) in one host memory operation where it is 8 or 16
// bytes: one thread's vector access is a single transaction on the GPU, and CUB's decoupled look-back relies on
// it (a tile's {status, value} descriptor stored with st.v2.u64 and polled with ld.v2.u64 from other CTAs).
// Copied element by element, a CTA on another host thread could read a tile's new status with its old value:
// Thrust's reduce_by_key then counted wrong (issue 24). Aligned 8-byte moves, and aligned 16-byte MOVDQA/VMOVDQA
// on CPUs with AVX, are single-copy atomic on x86-64 (Intel SDM vol. 3A 9.1.1; AMD alike). C++ promises neither:
// 8 bytes go through __atomic, and 16 bytes through one instruction written out (moveWhole16), since a plain
// 16-byte access (_mm_load_si128 is one) is the compiler's to split, merge or re-encode.
#if defined(__x86_64__) && defined(__SSE2__)
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_read16(void*);
extern "C" void __tsan_write16(void*);
#endif
struct alignas(16) Whole16 {
  unsigned char bytes[16];
};
// *dst = *src, both 16-byte aligned, each side one aligned 16-byte move.
PTX_HOT void moveWhole16(void* dst, const void* src) {
  __m128i v;
#if defined(__AVX__)
  asm volatile("vmovdqa %1, %0" : "=x"(v) : "m"(*static_cast<const Whole16*>(src)));
  asm volatile("vmovdqa %1, %0" : "=m"(*static_cast<Whole16*>(dst)) : "x"(v));
#else
  asm volatile("movdqa %1, %0" : "=x"(v) : "m"(*static_cast<const Whole16*>(src)));
  asm volatile("movdqa %1, %0" : "=m"(*static_cast<Whole16*>(dst)) : "x"(v));
#endif
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer does not see into assembly: tell it about both accesses.
  __tsan_read16(const_cast<void*>(src));
  __tsan_write16(dst);
#endif
}
#endif
template <size_t Bytes> PTX_HOT void copyWhole(void* dst, const void* src) {
  if constexpr (Bytes == 8) {
    uint64_t v = __atomic_load_n(static_cast<const uint64_t*>(src), __ATOMIC_RELAXED);
    __atomic_store_n(static_cast<uint64_t*>(dst), v, __ATOMIC_RELAXED);
#if defined(__x86_64__) && defined(__SSE2__)
  } else if constexpr (Bytes == 16) {
    if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0) [[likely]] {
      moveWhole16(dst, src);
      return;
    }
    std::memcpy(dst, src, Bytes);
#endif
  } else {
    std::memcpy(dst, src, Bytes);
  }
}

template <Space S, class A, class M, class D, int N>
const Op* ldLanes(Warp& w, const Op* op, uint32_t addrReg, int64_t offset, const uint32_t* dsts) {
  const A* base = R<A>(w, addrReg);
  D* out[N];
  for (int k = 0; k < N; ++k) out[k] = R<D>(w, dsts[k]);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = xlate<S>(w, op, i, laneAddr(base, i, offset), uint32_t(sizeof(M) * N), false);
    if (!p) [[unlikely]]
      return nullptr;
    alignas(16) M v[N];
    copyWhole<sizeof v>(v, p);
    for (int k = 0; k < N; ++k) out[k][i] = D(v[k]);
  }
  return op + 1;
}
template <Space S, class A, class M, class D, int N>
const Op* stLanes(Warp& w, const Op* op, uint32_t addrReg, int64_t offset, const uint32_t* srcs) {
  const A* base = R<A>(w, addrReg);
  const D* in[N];
  for (int k = 0; k < N; ++k) in[k] = R<D>(w, srcs[k]);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* p = xlate<S>(w, op, i, laneAddr(base, i, offset), uint32_t(sizeof(M) * N), true);
    if (!p) [[unlikely]]
      return nullptr;
    alignas(16) M v[N];
    for (int k = 0; k < N; ++k) v[k] = M(in[k][i]);
    copyWhole<sizeof v>(p, v);
  }
  return op + 1;
}
// A load after `.pragma "used_bytes_mask"` (MaskedLoad; bit j set = byte j of the N elements of M is used): the
// bytes in use must be valid and fault like any load; the others (NVRTC widens loads past the end of buffers)
// never fault and read what is there, or 0 where nothing is mapped. Alignment is the whole access's, as on the GPU.
template <Space S, class A, class M, int N> const Op* ldMasked(Warp& w, const Op* op) {
  const MaskedLoad v = MaskedLoad::of(*op);
  const A* base = R<A>(w, v.address);
  const uint32_t* dsts = v.values;
  constexpr uint32_t kBytes = uint32_t(sizeof(M) * N);
  const uint64_t used = v.usedBytes;
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint64_t addr = laneAddr(base, i, v.offset);
    if ((addr & (kBytes - 1)) != 0) {
      raiseFault(w, op, i, FaultKind::MisalignedAddress, addr, "misaligned address");
      return nullptr;
    }
    uint8_t bytes[kBytes];
    for (uint32_t j = 0; j < kBytes; ++j) {
      const char* why = "";
      const uint8_t* p = resolve<S>(w, i, addr + j, 1, false, why);
      if (!p && (j >= 32 || ((used >> j) & 1))) {
        raiseFault(w, op, i, FaultKind::IllegalAddress, addr + j, why);
        return nullptr;
      }
      bytes[j] = p ? *p : 0;
    }
    for (int k = 0; k < N; ++k) std::memcpy(&R<M>(w, dsts[k])[i], bytes + k * sizeof(M), sizeof(M));
  }
  return op + 1;
}

template <Space S, class A, class M, class D, int N> const Op* ld(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  return ldLanes<S, A, M, D, N>(w, op, v.address, v.offset, v.values);
}
template <Space S, class A, class M, class D, int N> const Op* st(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  return stLanes<S, A, M, D, N>(w, op, v.address, v.offset, v.values);
}

// ---- full-warp fast paths for scalar ld/st (all 32 lanes executing) ---------------------------------------------
//
// Once one check proved every lane's access valid, the copy goes by the layout of each half-warp's 16 addresses:
// a 16-wide thread block puts two rows in one warp, whose lanes read one element per row (broadcast: lanes of a
// row share an address, e.g. A[ty][k] of a tiled matmul) or a row each (consecutive elements). Copying such a
// half as one element or one block instead of 16 lane copies is what makes shared-memory tiles fast.
//
// The check itself runs on 32-byte vectors (GCC vector extensions: AVX2 in the x86-64-v3 clones of the handlers,
// SSE pairs in the baseline ones): written as scalar loops with early exits, the compiler unrolled it into ~300
// scalar instructions, 70% of a tiled matmul's time.

enum class HalfShape : uint8_t { Scattered, Uniform, Consecutive };

// One lane's vector (.v2/.v4 of M), aligned as the access must be: the element of the vector fast paths' layouts.
template <class M, int N> struct LaneVector { alignas(sizeof(M) * N) M e[N]; };

template <class T> struct SimdOf { typedef T V __attribute__((vector_size(32))); };
template <class T> using Simd = typename SimdOf<T>::V;

// Lane values (or 0/-1 comparison results) of one vector OR-ed into one scalar.
template <class V> PTX_HOT uint64_t orLanes(const V& x) {
  uint64_t q[4];
  static_assert(sizeof(V) == sizeof q);
  std::memcpy(q, &x, sizeof q);
  return q[0] | q[1] | q[2] | q[3];
}

// Layout of 32 lane values (addresses or offsets) of an access of Size bytes: -1 when a value is above maxValue or
// not a multiple of Size, else the shape of each half-warp (low | high << 2). With MaxOut, *maxOut receives the
// largest value. Every condition becomes one flag bit per vector element, so there is one horizontal reduction.
template <size_t Size, class T, bool MaxOut = false>
PTX_HOT int warpLayout(const T* values, T maxValue, T* maxOut = nullptr) {
  using V = Simd<T>;
  constexpr int kPerVector = 32 / sizeof(T), kPerHalf = 16 / kPerVector;
  V step;
  for (int i = 0; i < kPerVector; ++i) step[i] = T(T(i) * T(Size));
  V flags = {}, largest = {};
  for (int h = 0; h < 2; ++h) {
    const T first = values[16 * h];
    V notUniform = {}, notConsecutive = {};
    for (int k = 0; k < kPerHalf; ++k) {
      V x;
      std::memcpy(&x, values + 16 * h + k * kPerVector, sizeof x);
      if constexpr (MaxOut)
        largest = x > largest ? x : largest;
      else
        flags |= reinterpret_cast<V>(x > maxValue) & T(1);
      flags |= reinterpret_cast<V>((x & T(Size - 1)) != T(0)) & T(1);
      notUniform |= x ^ first;
      notConsecutive |= x ^ (step + T(first + T(k * kPerVector) * T(Size)));
    }
    flags |= reinterpret_cast<V>(notUniform != T(0)) & T(2 << (2 * h));
    flags |= reinterpret_cast<V>(notConsecutive != T(0)) & T(4 << (2 * h));
  }
  uint64_t f = orLanes(flags);
  if constexpr (sizeof(T) == 4) f |= f >> 32;
  if (f & 1) return -1;
  if constexpr (MaxOut) {
    T m = largest[0];
    for (int i = 1; i < kPerVector; ++i) m = largest[i] > m ? largest[i] : m;
    *maxOut = m;
  }
  auto shape = [&](int h) {
    uint64_t g = f >> (1 + 2 * h);
    return int((g & 2) == 0 ? HalfShape::Consecutive : (g & 1) == 0 ? HalfShape::Uniform : HalfShape::Scattered);
  };
  return shape(0) | shape(1) << 2;
}
inline HalfShape lowHalf(int shapes) { return HalfShape(shapes & 3); }
inline HalfShape highHalf(int shapes) { return HalfShape((shapes >> 2) & 3); }
// Both halves consecutive and the second right after the first: one block of 32 elements.
template <size_t Size, class T> PTX_HOT bool wholeBlock(int shapes, const T* values) {
  return (shapes & 0xf) == (int(HalfShape::Consecutive) | int(HalfShape::Consecutive) << 2) &&
         values[16] == T(values[0] + T(16 * Size));
}

// 16 lanes' loads from host addresses base + addr[i], all checked already, laid out as shape says.
template <class M, class D, class T> PTX_HOT void loadHalf(HalfShape shape, uintptr_t base, const T* addr, D* out) {
  auto at = [&](int i) { return reinterpret_cast<const uint8_t*>(base + uintptr_t(addr[i])); };
  switch (shape) {
    case HalfShape::Uniform: {
      M v;
      std::memcpy(&v, at(0), sizeof(M));
      D x = D(v);
      for (int i = 0; i < 16; ++i) out[i] = x;
      return;
    }
    case HalfShape::Consecutive:
      if constexpr (sizeof(D) == sizeof(M)) {
        copyVec<16 * sizeof(M)>(out, at(0));
        return;
      }
      [[fallthrough]];
    case HalfShape::Scattered:
      for (int i = 0; i < 16; ++i) {
        M v;
        std::memcpy(&v, at(i), sizeof(M));
        out[i] = D(v);
      }
      return;
  }
}

// 16 lanes' stores, with the result of storing in lane order: where addresses repeat, the highest lane wins.
template <class M, class D, class T>
PTX_HOT void storeHalf(HalfShape shape, uintptr_t base, const T* addr, const D* in) {
  auto at = [&](int i) { return reinterpret_cast<uint8_t*>(base + uintptr_t(addr[i])); };
  switch (shape) {
    case HalfShape::Uniform: {
      M v = M(in[15]);
      std::memcpy(at(0), &v, sizeof(M));
      return;
    }
    case HalfShape::Consecutive:
      if constexpr (sizeof(D) == sizeof(M)) {
        copyVec<16 * sizeof(M)>(at(0), in);
        return;
      }
      [[fallthrough]];
    case HalfShape::Scattered:
      for (int i = 0; i < 16; ++i) {
        M v = M(in[i]);
        std::memcpy(at(i), &v, sizeof(M));
      }
      return;
  }
}

// 32 lanes' loads / stores of a warp whose layout was checked.
template <class M, class D, class T> PTX_HOT void loadWarp(int shapes, uintptr_t base, const T* addr, D* out) {
  if constexpr (sizeof(D) == sizeof(M)) {
    if (wholeBlock<sizeof(M)>(shapes, addr))
      return copyVec<32 * sizeof(M)>(out, reinterpret_cast<const void*>(base + uintptr_t(addr[0])));
  }
  loadHalf<M>(lowHalf(shapes), base, addr, out);
  loadHalf<M>(highHalf(shapes), base, addr + 16, out + 16);
}
template <class M, class D, class T> PTX_HOT void storeWarp(int shapes, uintptr_t base, const T* addr, const D* in) {
  if constexpr (sizeof(D) == sizeof(M)) {
    if (wholeBlock<sizeof(M)>(shapes, addr))
      return copyVec<32 * sizeof(M)>(reinterpret_cast<void*>(base + uintptr_t(addr[0])), in);
  }
  storeHalf<M>(lowHalf(shapes), base, addr, in);
  storeHalf<M>(highHalf(shapes), base, addr + 16, in + 16);
}

// Shared memory: when all 32 lanes execute and every address (base register + imm) is aligned and inside the CTA's
// shared block, the layout of the base register's 32 values; -1: the per-lane path decides (and faults). M is the
// accessed element: a scalar type, or a lane's whole vector (LaneVector) for .v2/.v4 accesses.
// base + imm <= limit is tested as base <= limit - imm, so no sum can wrap around; the layout of the base register
// is that of the addresses, which differ from it by the same imm.
// Accesses of one block through the same base register (the loads of a tile, A[ty][k] for every k) share the
// work: the Access's layoutTag kLayoutCompute | slot stores the register's layout and largest value in the warp's slot,
// kLayoutReuse | slot only compares that largest value with this access's limit (lower.cpp guarantees that the
// register is unchanged in between and that the computing access ran first).
constexpr uint32_t kLayoutCompute = 0x10, kLayoutReuse = 0x20, kLayoutSlotMask = kSharedLayoutSlots - 1;
static_assert((kSharedLayoutSlots & kLayoutSlotMask) == 0, "slot count is a power of two");

template <class A, class M> PTX_HOT int sharedLayout(Warp& w, uint32_t baseReg, int64_t offset, uint32_t tag) {
  const Cta& cta = *w.cta;
  SharedLayoutSlot& slot = w.sharedLayouts[tag & kLayoutSlotMask];
  if (tag & kLayoutCompute) slot.shapes = -1;  // until proven below
  // (a CTA of cluster rank 1 or more: its addresses carry rank bits, which the per-lane path checks)
  if (!fullWarpFastPath(w, Rewrite::SharedWarpLayouts) || cta.sharedBytes < sizeof(M) || cta.sharedWindow) return -1;
  uint64_t limit = cta.sharedBytes - sizeof(M), imm = uint64_t(offset);
  if (imm > limit || (imm & (sizeof(M) - 1)) != 0) return -1;  // negative, misaligned or past the block
  const uint64_t maxBase = limit - imm;
  if (tag & kLayoutReuse) return slot.maxBase <= maxBase ? slot.shapes : -1;
  const A* base = R<A>(w, baseReg);
  if (tag & kLayoutCompute) {
    A largest = 0;
    int shapes = warpLayout<sizeof(M), A, true>(base, A(0), &largest);
    slot.shapes = shapes;
    slot.maxBase = largest;
    return largest <= maxBase ? shapes : -1;
  }
  return warpLayout<sizeof(M)>(base, A(maxBase));
}
// The prologue's computation of a thread-constant base register's layout (rewrite thread-constants with
// shared-layouts): base register in a, slot in aux; the accesses through it reuse the slot (kLayoutReuse).
template <class A, size_t Size> PTX_LANES const Op* computeSharedLayout(Warp& w, const Op* op) {
  SharedLayoutSlot& slot = w.sharedLayouts[op->aux & kLayoutSlotMask];
  A largest = 0;
  slot.shapes = warpLayout<Size, A, true>(R<A>(w, op->a), A(0), &largest);
  slot.maxBase = largest;
  return op + 1;
}
// When the layout of base register baseReg, computed for all 32 lanes and reused (tag: kLayoutReuse, its values
// unchanged since), is one aligned block of 32 elements of Size bytes that lies, offset bytes on, inside the CTA's
// shared block: the block's host address; else nullptr. No lane can fault on it then, executing or not.
template <class A, size_t Size>
PTX_HOT uint8_t* reusedSharedBlock(Warp& w, uint32_t baseReg, int64_t offset, uint32_t tag) {
  if (!(tag & kLayoutReuse)) return nullptr;
  const Cta& cta = *w.cta;
  const SharedLayoutSlot& slot = w.sharedLayouts[tag & kLayoutSlotMask];
  if (slot.shapes < 0 || cta.sharedBytes < Size || cta.sharedWindow) return nullptr;
  const uint64_t limit = cta.sharedBytes - Size, imm = uint64_t(offset);
  if (imm > limit || (imm & (Size - 1)) != 0 || slot.maxBase > limit - imm) return nullptr;
  const A* base = R<A>(w, baseReg);
  if (!wholeBlock<Size>(slot.shapes, base)) return nullptr;
  return cta.shared + imm + uint64_t(base[0]);
}
// Partial warps (runtime fast path shared-partial-blocks): the block of reusedSharedBlock, which the access moves
// whole, masking the lanes that do not execute: a load blends into the destination, a store blends into the block
// (its lanes' addresses are distinct, and only the host thread running the CTA touches its shared block).
template <class A, class M, class D>
PTX_HOT uint8_t* partialSharedBlock(Warp& w, uint32_t baseReg, int64_t offset, uint32_t tag) {
  if constexpr (sizeof(D) != sizeof(M)) {
    return nullptr;
  } else {
    if (w.exec == kFullMask || !(w.fastPaths & rewriteBit(Rewrite::SharedPartialBlocks))) return nullptr;
    return reusedSharedBlock<A, sizeof(M)>(w, baseReg, offset, tag);
  }
}
// shared-add-steps: the four ops of `s[t] += s[t + k]` at once when the base register's prologue layout is one
// aligned block of 32 elements inside the CTA's shared block for both offsets: both blocks loaded, added as add.f32
// (rounded to nearest, NaN canonical) or add.u32 does, the executing lanes' sums stored and x, y and the sum written
// to their registers under the executing lanes (partial warps with shared-partial-blocks only). Else op + 1: the four
// ops run and fault as they do.
template <class A, class T> PTX_LANES const Op* sharedAddStep(Warp& w, const Op* op) {
  const SharedAddStep s = SharedAddStep::of(*op);
  if (w.exec != kFullMask && !(w.fastPaths & rewriteBit(Rewrite::SharedPartialBlocks))) return op + 1;
  uint8_t* first = reusedSharedBlock<A, 4>(w, s.base, s.first, s.layoutTag);
  const uint8_t* second = first ? reusedSharedBlock<A, 4>(w, s.base, s.second, s.layoutTag) : nullptr;
  if (!second) return op + 1;
  // 8 lanes at a time in host vectors, straight between the block and the registers (no stack copies); a partial
  // warp blends each vector under its executing lanes and skips the vectors without any (the reduction's last
  // steps run 16 lanes and fewer). Both blocks are loaded whole first: they may overlap (s[t + 8] += s[t]), and
  // every lane's loads come before the store.
  typedef T V __attribute__((vector_size(32)));
  typedef int32_t M __attribute__((vector_size(32)));
  const uint32_t exec = w.exec;
  T* rx = R<T>(w, s.x);
  T* ry = R<T>(w, s.y);
  T* rs = R<T>(w, s.sum);
  // (in 32-byte loads, unrolled: the copy the compiler made of whole arrays went through the stack in 16-byte
  // moves, and each 32-byte load of it waited for the two stores it spans)
  V xs[4], ys[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    std::memcpy(&xs[k], first + 32 * k, sizeof(V));
    std::memcpy(&ys[k], second + 32 * k, sizeof(V));
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const uint32_t bits = (exec >> (8 * k)) & 0xffu;
    if (bits == 0) continue;
    V x = xs[k], y = ys[k];
    V r = x + y;
    if constexpr (std::is_same_v<T, float>) {
      const M number = r == r;  // NaN results become the canonical NaN, as num::canon makes them
      r = number ? r : V{} + std::bit_cast<float>(num::kCanonicalNaN32);
    }
    if (bits != 0xffu) {
      const M laneBit = {1, 2, 4, 8, 16, 32, 64, 128};
      const M executes = ((M{} + int32_t(bits)) & laneBit) != 0;
      V oldX, oldY, oldSum;
      std::memcpy(&oldX, rx + 8 * k, sizeof oldX);
      std::memcpy(&oldY, ry + 8 * k, sizeof oldY);
      std::memcpy(&oldSum, rs + 8 * k, sizeof oldSum);
      r = executes ? r : x;  // the block keeps what the other lanes hold
      const V sum = executes ? r : oldSum;
      std::memcpy(rs + 8 * k, &sum, sizeof sum);
      x = executes ? x : oldX;
      y = executes ? y : oldY;
    } else {
      std::memcpy(rs + 8 * k, &r, sizeof r);
    }
    std::memcpy(rx + 8 * k, &x, sizeof x);
    std::memcpy(ry + 8 * k, &y, sizeof y);
    std::memcpy(first + 32 * k, &r, sizeof r);
  }
  return op->target;
}
inline Handler sharedAddStepHandler(unsigned baseSize, bool isFloat) {
  if (baseSize == 4) return isFloat ? &sharedAddStep<uint32_t, float> : &sharedAddStep<uint32_t, uint32_t>;
  return isFloat ? &sharedAddStep<uint64_t, float> : &sharedAddStep<uint64_t, uint32_t>;
}

template <class A, class M, class D> PTX_LANES const Op* ldSharedScalar(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  int shapes = sharedLayout<A, M>(w, v.address, v.offset, v.layoutTag);
  if (shapes < 0) {
    if (const uint8_t* block = partialSharedBlock<A, M, D>(w, v.address, v.offset, v.layoutTag)) {
      alignas(64) D lanes[32];
      copyVec<32 * sizeof(D)>(lanes, block);
      h::blendLanes(R<D>(w, v.values[0]), lanes, w.exec);
      return op + 1;
    }
    return ldLanes<Shared, A, M, D, 1>(w, op, v.address, v.offset, v.values);
  }
  loadWarp<M>(shapes, reinterpret_cast<uintptr_t>(w.cta->shared) + uintptr_t(v.offset), R<A>(w, v.address),
              R<D>(w, v.values[0]));
  return op + 1;
}
template <class A, class M, class D> PTX_LANES const Op* stSharedScalar(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  int shapes = sharedLayout<A, M>(w, v.address, v.offset, v.layoutTag);
  if (shapes < 0) {
    if (uint8_t* block = partialSharedBlock<A, M, D>(w, v.address, v.offset, v.layoutTag)) {
      alignas(64) D lanes[32];
      copyVec<32 * sizeof(D)>(lanes, block);
      h::blendLanes(lanes, R<D>(w, v.values[0]), w.exec);
      copyVec<32 * sizeof(D)>(block, lanes);
      return op + 1;
    }
    return stLanes<Shared, A, M, D, 1>(w, op, v.address, v.offset, v.values);
  }
  storeWarp<M>(shapes, reinterpret_cast<uintptr_t>(w.cta->shared) + uintptr_t(v.offset), R<A>(w, v.address),
               R<D>(w, v.values[0]));
  return op + 1;
}

// Vector (.v2/.v4) shared accesses of a full warp (runtime fast path shared-warp-layouts, as the scalar ones): the
// layout is that of the lanes' whole vectors (LaneVector: a misaligned vector takes the per-lane path, which faults
// for it), and a half-warp reads one vector for all its lanes (the B operand of cuBLAS's SIMT GEMM), a block of 16
// consecutive vectors split into the N element registers (the A operand), or lane by lane. Elements move by host
// vector instructions, not each lane's vector in one host operation as ldLanes moves it: that rule is for memory
// other host threads may access at the same time, and a CTA's shared block (its cluster's peers included, which
// run together: launch.cpp, runCluster) is only ever touched by the host thread that runs the CTA.
//
// A consecutive half's 16 vectors are split into (and stores joined from) the N registers with two-input shuffles
// of 32-byte host vectors: the compiler left the element loops scalar, and they were 30% of the load's time in
// cuBLAS's SGEMM. Splitting by 2 twice splits by 4 (and joining is the inverse).
template <class M> constexpr bool kShuffledVectorHalves = sizeof(M) >= 4;
template <class V, size_t... I>
PTX_HOT void splitPairs(const V& a, const V& b, V& even, V& odd, std::index_sequence<I...>) {
  even = __builtin_shufflevector(a, b, (2 * I)...);
  odd = __builtin_shufflevector(a, b, (2 * I + 1)...);
}
template <class V, size_t... I>
PTX_HOT void joinPairs(const V& even, const V& odd, V& a, V& b, std::index_sequence<I...>) {
  constexpr size_t K = sizeof...(I);
  a = __builtin_shufflevector(even, odd, (I % 2 ? K + I / 2 : I / 2)...);
  b = __builtin_shufflevector(even, odd, (I % 2 ? K + K / 2 + I / 2 : K / 2 + I / 2)...);
}
// src: 16 lanes' vectors of N elements, in memory order; out[k]: 16 lanes of element k.
template <class M, int N> PTX_HOT void splitVectors(const uint8_t* src, M* const* out) {
  using V = Simd<M>;
  constexpr size_t K = sizeof(V) / sizeof(M);
  constexpr auto lanes = std::make_index_sequence<K>();
  V e[N], part[N];
  for (size_t j = 0; j < 16 / K; ++j) {  // K lanes at a time
    for (int q = 0; q < N; ++q) std::memcpy(&e[q], src + (j * N + q) * sizeof(V), sizeof(V));
    if constexpr (N == 2) {
      splitPairs(e[0], e[1], part[0], part[1], lanes);
    } else {
      V t[4];
      splitPairs(e[0], e[1], t[0], t[1], lanes);
      splitPairs(e[2], e[3], t[2], t[3], lanes);
      splitPairs(t[0], t[2], part[0], part[2], lanes);
      splitPairs(t[1], t[3], part[1], part[3], lanes);
    }
    for (int k = 0; k < N; ++k) std::memcpy(out[k] + j * K, &part[k], sizeof(V));
  }
}
template <class M, int N> PTX_HOT void joinVectors(const M* const* in, uint8_t* dst) {
  using V = Simd<M>;
  constexpr size_t K = sizeof(V) / sizeof(M);
  constexpr auto lanes = std::make_index_sequence<K>();
  V e[N], part[N];
  for (size_t j = 0; j < 16 / K; ++j) {
    for (int k = 0; k < N; ++k) std::memcpy(&part[k], in[k] + j * K, sizeof(V));
    if constexpr (N == 2) {
      joinPairs(part[0], part[1], e[0], e[1], lanes);
    } else {
      V t[4];
      joinPairs(part[0], part[2], t[0], t[2], lanes);
      joinPairs(part[1], part[3], t[1], t[3], lanes);
      joinPairs(t[0], t[1], e[0], e[1], lanes);
      joinPairs(t[2], t[3], e[2], e[3], lanes);
    }
    for (int q = 0; q < N; ++q) std::memcpy(dst + (j * N + q) * sizeof(V), &e[q], sizeof(V));
  }
}
template <class M, int N, class T>
PTX_HOT void loadVectorHalf(HalfShape shape, uintptr_t base, const T* addr, M* const* out) {
  using E = LaneVector<M, N>;
  auto at = [&](int i) { return reinterpret_cast<const uint8_t*>(base + uintptr_t(addr[i])); };
  switch (shape) {
    case HalfShape::Uniform: {
      E e;
      std::memcpy(&e, at(0), sizeof e);
      for (int k = 0; k < N; ++k)
        for (int i = 0; i < 16; ++i) out[k][i] = e.e[k];
      return;
    }
    case HalfShape::Consecutive: {
      if constexpr (kShuffledVectorHalves<M>) {
        splitVectors<M, N>(at(0), out);
      } else {
        alignas(64) M e[16 * N];
        copyVec<sizeof e>(e, at(0));
        for (int k = 0; k < N; ++k)
          for (int i = 0; i < 16; ++i) out[k][i] = e[i * N + k];
      }
      return;
    }
    case HalfShape::Scattered:
      for (int i = 0; i < 16; ++i) {
        E e;
        std::memcpy(&e, at(i), sizeof e);
        for (int k = 0; k < N; ++k) out[k][i] = e.e[k];
      }
      return;
  }
}
// With the result of storing in lane order: where vectors repeat, the highest lane's is stored.
template <class M, int N, class T>
PTX_HOT void storeVectorHalf(HalfShape shape, uintptr_t base, const T* addr, const M* const* in) {
  using E = LaneVector<M, N>;
  auto at = [&](int i) { return reinterpret_cast<uint8_t*>(base + uintptr_t(addr[i])); };
  switch (shape) {
    case HalfShape::Uniform: {
      E e;
      for (int k = 0; k < N; ++k) e.e[k] = in[k][15];
      std::memcpy(at(0), &e, sizeof e);
      return;
    }
    case HalfShape::Consecutive: {
      if constexpr (kShuffledVectorHalves<M>) {
        joinVectors<M, N>(in, at(0));
      } else {
        alignas(64) M e[16 * N];
        for (int k = 0; k < N; ++k)
          for (int i = 0; i < 16; ++i) e[i * N + k] = in[k][i];
        copyVec<sizeof e>(at(0), e);
      }
      return;
    }
    case HalfShape::Scattered:
      for (int i = 0; i < 16; ++i) {
        E e;
        for (int k = 0; k < N; ++k) e.e[k] = in[k][i];
        std::memcpy(at(i), &e, sizeof e);
      }
      return;
  }
}
template <class A, class M, int N> PTX_LANES const Op* ldSharedVector(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  const int shapes = sharedLayout<A, LaneVector<M, N>>(w, v.address, v.offset, v.layoutTag);
  if (shapes < 0) return ldLanes<Shared, A, M, M, N>(w, op, v.address, v.offset, v.values);
  const uintptr_t base = reinterpret_cast<uintptr_t>(w.cta->shared) + uintptr_t(v.offset);
  const A* addr = R<A>(w, v.address);
  M* lo[N];
  M* hi[N];
  for (int k = 0; k < N; ++k) {
    lo[k] = R<M>(w, v.values[k]);
    hi[k] = lo[k] + 16;
  }
  loadVectorHalf<M, N>(lowHalf(shapes), base, addr, lo);
  loadVectorHalf<M, N>(highHalf(shapes), base, addr + 16, hi);
  return op + 1;
}
template <class A, class M, int N> PTX_LANES const Op* stSharedVector(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  const int shapes = sharedLayout<A, LaneVector<M, N>>(w, v.address, v.offset, v.layoutTag);
  if (shapes < 0) return stLanes<Shared, A, M, M, N>(w, op, v.address, v.offset, v.values);
  const uintptr_t base = reinterpret_cast<uintptr_t>(w.cta->shared) + uintptr_t(v.offset);
  const A* addr = R<A>(w, v.address);
  const M* lo[N];
  const M* hi[N];
  for (int k = 0; k < N; ++k) {
    lo[k] = R<M>(w, v.values[k]);
    hi[k] = lo[k] + 16;
  }
  storeVectorHalf<M, N>(lowHalf(shapes), base, addr, lo);
  storeVectorHalf<M, N>(highHalf(shapes), base, addr + 16, hi);
  return op + 1;
}

// The fused inner-product steps of shared-memory tiles (lower.cpp: findSharedFmaTriples): each step is
// `ld.shared.f32 x, [..]; ld.shared.f32 y, [..]; fma.rn.f32 acc', x, y, acc`, and the steps of a chain (an unrolled
// inner product) accumulate into the previous result, which nothing else reads, as x and y are read by nothing
// else (SharedFmaChain). Every load's layout is checked first,
// so either the whole chain runs here, with the sum in host registers and neither loaded values nor intermediate
// sums written, or none of it does and the original ops that follow run instead (op + 1; the fast path continues
// at op->target, after them). The result is the same: every step is one fma, the product of two f32 is the same
// in either order, and NaNs propagate through fma, so canonicalising the final sum gives what canonicalising
// every step gives.
template <class A> PTX_HOT bool fmaChainLayouts(Warp& w, const SharedFmaStep* steps, uint32_t n, uint8_t* shapes) {
  for (uint32_t k = 0; k < n; ++k) {
    int sx = sharedLayout<A, uint32_t>(w, steps[k].xBase, steps[k].xOffset, steps[k].xTag);
    int sy = sharedLayout<A, uint32_t>(w, steps[k].yBase, steps[k].yOffset, steps[k].yTag);
    if ((sx | sy) < 0) return false;
    shapes[2 * k] = uint8_t(sx);
    shapes[2 * k + 1] = uint8_t(sy);
  }
  return true;
}

template <class A> const Op* fmaSharedChain(Warp& w, const Op* op) {
  const SharedFmaChain chain = SharedFmaChain::of(*op);
  const SharedFmaStep* steps = w.cta->job->program->fmaSteps.data() + chain.firstStep;
  uint8_t shapes[2 * kMaxSharedFmaChain];
  if (!fmaChainLayouts<A>(w, steps, chain.steps, shapes)) return op + 1;
  const uintptr_t shared = reinterpret_cast<uintptr_t>(w.cta->shared);
  alignas(64) float acc[32], x[32], y[32];
  copyVec<sizeof acc>(acc, R<float>(w, chain.accumulator));
  for (uint32_t k = 0; k < chain.steps; ++k) {
    loadWarp<uint32_t>(shapes[2 * k], shared + steps[k].xOffset, R<A>(w, steps[k].xBase),
                       reinterpret_cast<uint32_t*>(x));
    loadWarp<uint32_t>(shapes[2 * k + 1], shared + steps[k].yOffset, R<A>(w, steps[k].yBase),
                       reinterpret_cast<uint32_t*>(y));
    for (int i = 0; i < 32; ++i) acc[i] = std::fma(x[i], y[i], acc[i]);
  }
  h::store<float>(w, chain.result, [&](int i) { return num::canon(acc[i]); });
  return op->target;
}

#if defined(__x86_64__)
// The same with AVX2 and FMA (chosen at lowering when the CPU has them): the loaded halves go straight into
// vector registers (through memory, the next 32-byte read of a half written as a broadcast stalled on store
// forwarding, and the compiler did not vectorise the generic loops over 8-lane vector types).
template <class A> __attribute__((target("avx2,fma"))) inline void loadHalfAvx(HalfShape shape, uintptr_t base,
                                                                               const A* addr, __m256& lo, __m256& hi) {
  auto at = [&](int i) { return reinterpret_cast<const float*>(base + uintptr_t(addr[i])); };
  if (shape == HalfShape::Uniform) {
    lo = hi = _mm256_broadcast_ss(at(0));
  } else if (shape == HalfShape::Consecutive) {
    lo = _mm256_loadu_ps(at(0));
    hi = _mm256_loadu_ps(at(0) + 8);
  } else {
    lo = _mm256_setr_ps(*at(0), *at(1), *at(2), *at(3), *at(4), *at(5), *at(6), *at(7));
    hi = _mm256_setr_ps(*at(8), *at(9), *at(10), *at(11), *at(12), *at(13), *at(14), *at(15));
  }
}
template <class A> __attribute__((target("avx2,fma"))) const Op* fmaSharedChainAvx(Warp& w, const Op* op) {
  const SharedFmaChain chain = SharedFmaChain::of(*op);
  const SharedFmaStep* steps = w.cta->job->program->fmaSteps.data() + chain.firstStep;
  uint8_t shapes[2 * kMaxSharedFmaChain];
  if (!fmaChainLayouts<A>(w, steps, chain.steps, shapes)) return op + 1;
  const uintptr_t shared = reinterpret_cast<uintptr_t>(w.cta->shared);
  const float* c = R<float>(w, chain.accumulator);
  // the loops over the 4 accumulators are unrolled so that they stay in vector registers: left as a loop, GCC kept
  // them on the stack and every step's fma waited for the previous step's store (19% of the tiled matmul's time)
  __m256 acc[4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) acc[j] = _mm256_load_ps(c + 8 * j);
  for (uint32_t k = 0; k < chain.steps; ++k) {
    __m256 x[4], y[4];
    const A* xa = R<A>(w, steps[k].xBase);
    const A* ya = R<A>(w, steps[k].yBase);
    loadHalfAvx(lowHalf(shapes[2 * k]), shared + steps[k].xOffset, xa, x[0], x[1]);
    loadHalfAvx(highHalf(shapes[2 * k]), shared + steps[k].xOffset, xa + 16, x[2], x[3]);
    loadHalfAvx(lowHalf(shapes[2 * k + 1]), shared + steps[k].yOffset, ya, y[0], y[1]);
    loadHalfAvx(highHalf(shapes[2 * k + 1]), shared + steps[k].yOffset, ya + 16, y[2], y[3]);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(x[j], y[j], acc[j]);
  }
  // the fast path ran with every lane executing: all 32 lanes are written, NaNs canonical
  const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32(int(num::kCanonicalNaN32)));
  float* d = R<float>(w, chain.result);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j)
    _mm256_store_ps(d + 8 * j, _mm256_blendv_ps(acc[j], canon, _mm256_cmp_ps(acc[j], acc[j], _CMP_UNORD_Q)));
  return op->target;
}

// Chains whose steps all read x through one base register and y through one (an unrolled `As[ty][k] * Bs[k][tx]`:
// the offsets differ, the registers do not; lower.cpp: emitSharedFma checks that, and that every offset is aligned).
// One layout check per operand, at its largest offset, stands for every step's: a base that passes at an offset
// passes at every smaller one (the limit on the largest lane value only grows), and the layout itself does not
// depend on the offset. The first step's tags do what every step's would (the first computes the slot, the others
// would reuse it). Then each half-warp's 16 addresses are one element (a broadcast) or 16 consecutive ones at every
// step, so the loop over the steps loads straight from four host pointers with the shapes known at compile time:
// what is left per step is the loads and four fmas, whose latency (four independent sums) bounds the chain. The
// per-step layout checks and shape branches of fmaSharedChainAvx were two thirds of its time in the tiled matmul.
template <HalfShape Shape>
__attribute__((target("avx2,fma"))) inline void loadHalfAt(const uint8_t* at, __m256& lo, __m256& hi) {
  const float* f = reinterpret_cast<const float*>(at);
  if constexpr (Shape == HalfShape::Uniform) {
    lo = hi = _mm256_broadcast_ss(f);
  } else {
    lo = _mm256_loadu_ps(f);
    hi = _mm256_loadu_ps(f + 8);
  }
}
// Halves: x low, x high, y low, y high (bit j of Consecutive set: half j is 16 consecutive elements, else one).
// (always inlined: called, it took the accumulators through memory, a quarter of the chain's time)
template <int Consecutive>
__attribute__((target("avx2,fma"), always_inline)) inline void fmaOneBaseSteps(const SharedFmaStep* steps, uint32_t n,
                                                                               const uint8_t* const* half,
                                                                               __m256* acc) {
  constexpr auto shape = [](int j) { return (Consecutive >> j) & 1 ? HalfShape::Consecutive : HalfShape::Uniform; };
  __m256 a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  for (uint32_t k = 0; k < n; ++k) {
    __m256 x[4], y[4];
    loadHalfAt<shape(0)>(half[0] + steps[k].xOffset, x[0], x[1]);
    loadHalfAt<shape(1)>(half[1] + steps[k].xOffset, x[2], x[3]);
    loadHalfAt<shape(2)>(half[2] + steps[k].yOffset, y[0], y[1]);
    loadHalfAt<shape(3)>(half[3] + steps[k].yOffset, y[2], y[3]);
    a0 = _mm256_fmadd_ps(x[0], y[0], a0);
    a1 = _mm256_fmadd_ps(x[1], y[1], a1);
    a2 = _mm256_fmadd_ps(x[2], y[2], a2);
    a3 = _mm256_fmadd_ps(x[3], y[3], a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
// The instance for the halves' shapes (bit j of consecutive as above).
template <int... C> __attribute__((target("avx2,fma"), always_inline)) inline void fmaOneBaseShapes(
    int consecutive, std::integer_sequence<int, C...>, const SharedFmaStep* steps, uint32_t n,
    const uint8_t* const* half, __m256* acc) {
  ((consecutive == C ? fmaOneBaseSteps<C>(steps, n, half, acc) : void()), ...);
}
template <class A> __attribute__((target("avx2,fma"))) const Op* fmaSharedChainOneBaseAvx(Warp& w, const Op* op) {
  const SharedFmaChain chain = SharedFmaChain::of(*op);
  const SharedFmaStep* steps = w.cta->job->program->fmaSteps.data() + chain.firstStep;
  // both checks run, as the first step's two loads would (each may compute its slot)
  const int sx = sharedLayout<A, uint32_t>(w, steps[0].xBase, chain.largestXOffset, steps[0].xTag);
  const int sy = sharedLayout<A, uint32_t>(w, steps[0].yBase, chain.largestYOffset, steps[0].yTag);
  if ((sx | sy) < 0) return op + 1;
  const uint8_t* shared = w.cta->shared;
  const A* xa = R<A>(w, steps[0].xBase);
  const A* ya = R<A>(w, steps[0].yBase);
  const float* c = R<float>(w, chain.accumulator);
  __m256 acc[4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) acc[j] = _mm256_load_ps(c + 8 * j);
  const HalfShape shapes[4] = {lowHalf(sx), highHalf(sx), lowHalf(sy), highHalf(sy)};
  if (std::find(shapes, shapes + 4, HalfShape::Scattered) == shapes + 4) {
    const uint8_t* const half[4] = {shared + uintptr_t(xa[0]), shared + uintptr_t(xa[16]), shared + uintptr_t(ya[0]),
                                    shared + uintptr_t(ya[16])};
    int consecutive = 0;
    for (int j = 0; j < 4; ++j) consecutive |= int(shapes[j] == HalfShape::Consecutive) << j;
    fmaOneBaseShapes(consecutive, std::make_integer_sequence<int, 16>{}, steps, chain.steps, half, acc);
  } else {
    const uintptr_t base = reinterpret_cast<uintptr_t>(shared);
    for (uint32_t k = 0; k < chain.steps; ++k) {
      __m256 x[4], y[4];
      loadHalfAvx(shapes[0], base + steps[k].xOffset, xa, x[0], x[1]);
      loadHalfAvx(shapes[1], base + steps[k].xOffset, xa + 16, x[2], x[3]);
      loadHalfAvx(shapes[2], base + steps[k].yOffset, ya, y[0], y[1]);
      loadHalfAvx(shapes[3], base + steps[k].yOffset, ya + 16, y[2], y[3]);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(x[j], y[j], acc[j]);
    }
  }
  const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32(int(num::kCanonicalNaN32)));
  float* d = R<float>(w, chain.result);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j)
    _mm256_store_ps(d + 8 * j, _mm256_blendv_ps(acc[j], canon, _mm256_cmp_ps(acc[j], acc[j], _CMP_UNORD_Q)));
  return op->target;
}
#endif

// The handler for a chain whose base registers have baseSize bytes: the AVX2/FMA form when this CPU has both;
// oneBase: every step's x through one base register and every y through one (fmaSharedChainOneBaseAvx). Chosen in
// isa/memory.cpp, like the other memory ops' handlers: the native tier compiles only handlers that a unit it has as
// bitcode instantiates, and rewrites.cpp is none (called, the chain made the compiled tiled matmul 5% slower).
Handler fmaSharedChainHandler(unsigned baseSize, bool oneBase);

// Whether h is a fused op that runs the ops after it on its fast path and continues at op->target, or leaves them to
// run (op + 1) where it does not apply: shared-add-steps and shared-fma-chains. The ops between are its fallback; the
// native tier calls their handlers rather than compiling them into the kernel (native/tier.cpp).
bool isFusedWithFallback(Handler h);

// True when every byte of [lo, end) is valid device memory according to the validator's fast path.
PTX_HOT bool spanValid(const MemoryValidator& mv, uint64_t lo, uint64_t end) {
  return end > lo && end - lo <= mv.validFrom(lo);
}

// How a global ld/st forms its address from its operands (the fused forms come from the address-adds and
// scaled-indices rewrites, rewrites.cpp): Plain, an Access's register + offset; Sum base + index, the fused
// `add.s64 %rd, %base, %offset; ld [%rd]`; Scaled base + (index << shift) with a 32-bit index, sign- or
// zero-extended, the fused `mul.wide` of the index as well (base is then a launch constant, the same in every
// lane). Operands of the fused forms: memory_ops.h, FusedAccess.
enum AddrMode : int { kAddrPlain = 0, kAddrSum = 1, kAddrScaledSigned = 2, kAddrScaledUnsigned = 3 };

// An access of either kind as a FusedAccess: a plain one is base + offset, with no index.
template <int Ix> PTX_HOT FusedAccess addressing(const Op& op) {
  if constexpr (Ix == kAddrPlain) {
    const Access v = Access::of(op);
    return FusedAccess{v.address, 0, 0, 0, v.offset, v.values[0]};
  } else {
    return FusedAccess::of(op);
  }
}

// The 32 lanes' addresses without the offset, for the fused forms.
template <int Ix> PTX_HOT void fusedAddresses(Warp& w, const FusedAccess& v, uint64_t* out) {
  const uint64_t* base = R<uint64_t>(w, v.base);
  if constexpr (Ix == kAddrSum) {
    const uint64_t* index = R<uint64_t>(w, v.index);
    for (int i = 0; i < 32; ++i) out[i] = base[i] + index[i];
  } else {
    using I = std::conditional_t<Ix == kAddrScaledSigned, int32_t, uint32_t>;
    const I* index = R<I>(w, v.index);
    for (int i = 0; i < 32; ++i) out[i] = base[i] + (uint64_t(int64_t(index[i])) << v.shift);
  }
}

// Global memory: when all 32 lanes execute, every address is aligned and the span from the lowest to the highest
// is valid device memory (one validator look-up: the lanes of a warp usually touch one allocation), the layout
// of the 32 addresses, which addr receives; -1: the per-lane path decides (and faults).
template <class A, class M, int Ix> PTX_HOT int globalLayout(Warp& w, const FusedAccess& v, uint64_t* addr) {
  if (!fullWarpFastPath(w, Rewrite::GlobalLayouts)) return -1;
  // computed into a local first: a loop writing through addr stays scalar at -O2 (it could alias the registers)
  const uint64_t imm = uint64_t(v.offset);
  alignas(64) uint64_t tmp[32];
  if constexpr (Ix != kAddrPlain) {
    fusedAddresses<Ix>(w, v, tmp);
    for (int i = 0; i < 32; ++i) tmp[i] += imm;
  } else {
    const A* base = R<A>(w, v.base);
    for (int i = 0; i < 32; ++i) tmp[i] = laneAddr(base, i, int64_t(imm));
  }
  copyVec<sizeof tmp>(addr, tmp);
  int shapes = warpLayout<sizeof(M)>(tmp, ~uint64_t(0) - 32 * sizeof(M));
  if (shapes < 0) return -1;
  const MemoryValidator& mv = *w.cta->job->lp.memory;
  if (wholeBlock<sizeof(M)>(shapes, tmp))  // the common case: the span is known without a min/max pass
    return spanValid(mv, tmp[0], tmp[0] + 32 * sizeof(M)) ? shapes : -1;
  using V = Simd<uint64_t>;
  V lo, hi;
  std::memcpy(&lo, tmp, sizeof lo);
  hi = lo;
  for (int k = 1; k < 8; ++k) {
    V x;
    std::memcpy(&x, tmp + 4 * k, sizeof x);
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  uint64_t l = std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
  uint64_t u = std::max(std::max(hi[0], hi[1]), std::max(hi[2], hi[3]));
  return spanValid(mv, l, u + sizeof(M)) ? shapes : -1;
}

// The common cases, tested before globalLayout: all 32 lanes execute and each half-warp's 64-bit addresses are
// consecutive elements (a[i] = a[h] + (i - h) * size for the 16 lanes from h), aligned and inside valid device
// memory; usually the second half follows the first (one block of 32), in 2-D blocks of 16 columns each half is a
// row. Returns the two halves' first addresses, {0, 0} when not (then globalLayout decides; 0 is never valid
// device memory). One pass over the address registers, no address array.
struct HalfStarts {
  uint64_t lo = 0, hi = 0;
};
// `fastPath`: the switch that allows it (global-vector-runs for whole vectors, M then being one lane's vector).
template <class M, int Ix>
PTX_HOT HalfStarts consecutiveGlobal(Warp& w, const FusedAccess& v, Rewrite fastPath = Rewrite::GlobalRuns) {
  if (!fullWarpFastPath(w, fastPath)) return {};
  const uint64_t* base = R<uint64_t>(w, v.base);
  const uint64_t imm = uint64_t(v.offset);
  constexpr uint64_t kSize = sizeof(M);
  HalfStarts h;
  if constexpr (Ix == kAddrScaledSigned || Ix == kAddrScaledUnsigned) {
    // the base is the same in every lane: consecutive elements are consecutive 32-bit indices, which must not
    // wrap within a half
    using I = std::conditional_t<Ix == kAddrScaledSigned, int32_t, uint32_t>;
    using V = Simd<uint32_t>;
    if ((uint64_t(1) << v.shift) != kSize) return {};
    const I* index = R<I>(w, v.index);
    const I i0 = index[0], i16 = index[16];
    if (i0 > std::numeric_limits<I>::max() - 15 || i16 > std::numeric_limits<I>::max() - 15) return {};
    const V iota = V{0, 1, 2, 3, 4, 5, 6, 7};
    V diff = {};
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      V x;
      std::memcpy(&x, index + 8 * k, sizeof x);
      diff |= x ^ (iota + uint32_t(k < 2 ? i0 : i16) + uint32_t(8 * (k & 1)));
    }
    if (orLanes(diff) != 0) return {};
    h.lo = base[0] + (uint64_t(int64_t(i0)) << v.shift) + imm;
    h.hi = base[0] + (uint64_t(int64_t(i16)) << v.shift) + imm;
  } else {
    using V = Simd<uint64_t>;
    constexpr bool kSum = Ix == kAddrSum;
    const uint64_t* index = kSum ? R<uint64_t>(w, v.index) : nullptr;
    const uint64_t x0 = base[0] + (kSum ? index[0] : 0), x16 = base[16] + (kSum ? index[16] : 0);
    const V step = V{0, kSize, 2 * kSize, 3 * kSize};
    V diff = {};
    // unrolled: as a loop, each vector's expected addresses took a select, a broadcast and an add (a fifth of the tiled
    // matmul's tile loads); unrolled they are constants added to two broadcasts
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      V x;
      std::memcpy(&x, base + 4 * k, sizeof x);
      if constexpr (kSum) {
        V y;
        std::memcpy(&y, index + 4 * k, sizeof y);
        x += y;
      }
      diff |= x ^ (step + ((k < 4 ? x0 : x16) + uint64_t(4 * (k & 3)) * kSize));
    }
    if (orLanes(diff) != 0) return {};
    h.lo = x0 + imm;
    h.hi = x16 + imm;
  }
  constexpr uint64_t kLast = ~uint64_t(0) - 32 * kSize;
  if (((h.lo | h.hi) & (kSize - 1)) != 0 || h.lo > kLast || h.hi > kLast) return {};
  const MemoryValidator& mv = *w.cta->job->lp.memory;
  if (h.hi == h.lo + 16 * kSize) return spanValid(mv, h.lo, h.lo + 32 * kSize) ? h : HalfStarts{};
  return spanValid(mv, h.lo, h.lo + 16 * kSize) && spanValid(mv, h.hi, h.hi + 16 * kSize) ? h : HalfStarts{};
}

// Loads or stores 16 consecutive elements of type M to/from 16 register lanes of type D.
template <class M, class D> PTX_HOT void loadRun(const uint8_t* src, D* out) {
  if constexpr (sizeof(D) == sizeof(M)) {
    copyVec<16 * sizeof(M)>(out, src);
  } else {
    for (int i = 0; i < 16; ++i) {
      M v;
      std::memcpy(&v, src + i * sizeof(M), sizeof(M));
      out[i] = D(v);
    }
  }
}
template <class M, class D> PTX_HOT void storeRun(uint8_t* dst, const D* in) {
  if constexpr (sizeof(D) == sizeof(M)) {
    copyVec<16 * sizeof(M)>(dst, in);
  } else {
    alignas(64) M tmp[16];
    for (int i = 0; i < 16; ++i) tmp[i] = M(in[i]);
    std::memcpy(dst, tmp, sizeof tmp);
  }
}

// The per-lane path of a fused access: the address goes to the add's destination register (sum), as the unfused
// add would have written it, and the lanes take their addresses from there.
template <int Ix> PTX_HOT uint32_t materializeIndexed(Warp& w, const FusedAccess& v) {
  alignas(64) uint64_t tmp[32];
  fusedAddresses<Ix>(w, v, tmp);
  copyVec<sizeof tmp>(R<uint64_t>(w, v.sum), tmp);
  return v.sum;
}

template <class A, class M, class D, int Indexed = kAddrPlain>
PTX_LANES const Op* ldGlobalScalar(Warp& w, const Op* op) {
  const FusedAccess v = addressing<Indexed>(*op);
  if constexpr (std::is_same_v<A, uint64_t>) {
    if (HalfStarts h = consecutiveGlobal<M, Indexed>(w, v); h.lo) {
      D* out = R<D>(w, v.value);
      if (sizeof(D) == sizeof(M) && h.hi == h.lo + 16 * sizeof(M)) {
        copyVec<32 * sizeof(M)>(out, reinterpret_cast<const uint8_t*>(h.lo));
      } else {
        alignas(64) D tmp[32];  // one 32-byte write per vector of the register (see copyVec)
        loadRun<M>(reinterpret_cast<const uint8_t*>(h.lo), tmp);
        loadRun<M>(reinterpret_cast<const uint8_t*>(h.hi), tmp + 16);
        copyVec<sizeof tmp>(out, tmp);
      }
      return op + 1;
    }
  }
  alignas(64) uint64_t addr[32];
  int shapes = globalLayout<A, M, Indexed>(w, v, addr);
  if (shapes < 0) {
    if constexpr (Indexed != kAddrPlain)
      return ldLanes<Global, A, M, D, 1>(w, op, materializeIndexed<Indexed>(w, v), v.offset, &v.value);
    else
      return ld<Global, A, M, D, 1>(w, op);
  }
  loadWarp<M>(shapes, 0, addr, R<D>(w, v.value));
  return op + 1;
}
template <class A, class M, class D, int Indexed = kAddrPlain>
PTX_LANES const Op* stGlobalScalar(Warp& w, const Op* op) {
  const FusedAccess v = addressing<Indexed>(*op);
  if constexpr (std::is_same_v<A, uint64_t>) {
    if (HalfStarts h = consecutiveGlobal<M, Indexed>(w, v); h.lo) {
      const D* in = R<D>(w, v.value);
      if (sizeof(D) == sizeof(M) && h.hi == h.lo + 16 * sizeof(M)) {
        copyVec<32 * sizeof(M)>(reinterpret_cast<uint8_t*>(h.lo), in);
      } else {
        storeRun<M>(reinterpret_cast<uint8_t*>(h.lo), in);
        storeRun<M>(reinterpret_cast<uint8_t*>(h.hi), in + 16);
      }
      return op + 1;
    }
  }
  alignas(64) uint64_t addr[32];
  int shapes = globalLayout<A, M, Indexed>(w, v, addr);
  if (shapes < 0) {
    if constexpr (Indexed != kAddrPlain)
      return stLanes<Global, A, M, D, 1>(w, op, materializeIndexed<Indexed>(w, v), v.offset, &v.value);
    else
      return st<Global, A, M, D, 1>(w, op);
  }
  storeWarp<M>(shapes, 0, addr, R<D>(w, v.value));
  return op + 1;
}

// A vector (.v2/.v4) global access of a full warp whose half-warps each name 16 consecutive vectors in valid
// memory (a float2/float4 array indexed by thread): one span check per half (consecutiveGlobal, a lane's vector as
// its element) replaces 32 translations; each lane's vector is still moved whole, as the per-lane path moves it.
template <class M, int N> PTX_HOT HalfStarts vectorRuns(Warp& w, const Access& v) {
  FusedAccess f;
  f.base = v.address;
  f.offset = v.offset;
  return consecutiveGlobal<LaneVector<M, N>, kAddrPlain>(w, f, Rewrite::GlobalVectorRuns);
}
template <class M, int N> const Op* ldGlobalVector(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  const HalfStarts h = vectorRuns<M, N>(w, v);
  if (!h.lo) return ldLanes<Global, uint64_t, M, M, N>(w, op, v.address, v.offset, v.values);
  M* out[N];
  for (int k = 0; k < N; ++k) out[k] = R<M>(w, v.values[k]);
  for (int i = 0; i < 32; ++i) {
    LaneVector<M, N> e;
    copyWhole<sizeof e>(&e, reinterpret_cast<const uint8_t*>(i < 16 ? h.lo : h.hi) + (i & 15) * sizeof e);
    for (int k = 0; k < N; ++k) out[k][i] = e.e[k];
  }
  return op + 1;
}
template <class M, int N> const Op* stGlobalVector(Warp& w, const Op* op) {
  const Access v = Access::of(*op);
  const HalfStarts h = vectorRuns<M, N>(w, v);
  if (!h.lo) return stLanes<Global, uint64_t, M, M, N>(w, op, v.address, v.offset, v.values);
  const M* in[N];
  for (int k = 0; k < N; ++k) in[k] = R<M>(w, v.values[k]);
  for (int i = 0; i < 32; ++i) {
    LaneVector<M, N> e;
    for (int k = 0; k < N; ++k) e.e[k] = in[k][i];
    copyWhole<sizeof e>(reinterpret_cast<uint8_t*>(i < 16 ? h.lo : h.hi) + (i & 15) * sizeof e, &e);
  }
  return op + 1;
}

// The handler of a vector ld/st: the full-warp fast path for global memory through a 64-bit address, and for
// shared memory.
template <Space S, class A, class M, int N> constexpr Handler ldVector() {
  if constexpr (S == Global && std::is_same_v<A, uint64_t>)
    return &ldGlobalVector<M, N>;
  else if constexpr (S == Shared)
    return &ldSharedVector<A, M, N>;
  else
    return &ld<S, A, M, M, N>;
}
template <Space S, class A, class M, int N> constexpr Handler stVector() {
  if constexpr (S == Global && std::is_same_v<A, uint64_t>)
    return &stGlobalVector<M, N>;
  else if constexpr (S == Shared)
    return &stSharedVector<A, M, N>;
  else
    return &st<S, A, M, M, N>;
}

// The handler of a scalar (non-vector) ld/st: the full-warp fast path where the space has one. Indexed: the fused
// global form with a 64-bit base and index (a + b).
template <Space S, class A, class M, class D, int Indexed = kAddrPlain> constexpr Handler ldScalar() {
  if constexpr (Indexed != kAddrPlain) {
    static_assert(S == Global && std::is_same_v<A, uint64_t>, "indexed accesses are global, 64-bit");
    return &ldGlobalScalar<A, M, D, Indexed>;
  } else if constexpr (S == Shared) {
    return &ldSharedScalar<A, M, D>;
  } else if constexpr (S == Global) {
    return &ldGlobalScalar<A, M, D>;
  } else {
    return &ld<S, A, M, D, 1>;
  }
}
template <Space S, class A, class M, class D, int Indexed = kAddrPlain> constexpr Handler stScalar() {
  if constexpr (Indexed != kAddrPlain) {
    static_assert(S == Global && std::is_same_v<A, uint64_t>, "indexed accesses are global, 64-bit");
    return &stGlobalScalar<A, M, D, Indexed>;
  } else if constexpr (S == Shared) {
    return &stSharedScalar<A, M, D>;
  } else if constexpr (S == Global) {
    return &stGlobalScalar<A, M, D>;
  } else {
    return &st<S, A, M, D, 1>;
  }
}

// Uniform load of a kernel parameter (ld.param [name+off], ParamLoad): one read, broadcast to the executing lanes.
template <class M, class D> const Op* ldParamUniform(Warp& w, const Op* op) {
  const auto& pb = w.cta->job->paramBuffer;
  const ParamLoad load = ParamLoad::of(*op);
  for (uint32_t k = 0; k < load.count; ++k) {
    uint64_t off = uint64_t(load.offset) + k * sizeof(M);
    if (off + sizeof(M) > pb.size())
      return raiseFault(w, op, 0, FaultKind::IllegalAddress, off, "kernel parameter read out of range");
    M v;
    std::memcpy(&v, pb.data() + off, sizeof(M));
    D x = D(v);
    h::store<D>(w, load.values[k], [&](int) { return x; });
  }
  return op + 1;
}

// ---- atomics ---------------------------------------------------------------------------------------------------

enum AOp : uint8_t {
  AAdd,
  AMin,
  AMax,
  AInc,
  ADec,
  AAnd,
  AOr,
  AXor,
  AExch,
  ACas,
  // add on f16/bf16 bit patterns (T = uint16_t) and packed pairs (T = uint32_t), .noftz
  AAddF16,
  AAddBF16,
  AAddF16x2,
  AAddBF16x2,
  // min/max on f16/bf16 bit patterns: the elements of vector atomics (atom.v2.f16.min ...)
  AMinF16,
  AMaxF16,
  AMinBF16,
  AMaxBF16
};

template <bool BF> PTX_HOT uint16_t addHalfBits(uint16_t x, uint16_t y) {
  if constexpr (BF)
    return num::doubleToBf16(double(num::bf16ToFloat(x)) + double(num::bf16ToFloat(y)));
  else
    return num::doubleToHalf(double(num::halfToFloat(x)) + double(num::halfToFloat(y)));
}

// min/max of two half-precision bit patterns: one NaN operand gives the other, two give the canonical NaN, and
// -0 is below +0.
template <bool BF, bool Max> PTX_HOT uint16_t minMaxHalfBits(uint16_t x, uint16_t y) {
  float fx = BF ? num::bf16ToFloat(x) : num::halfToFloat(x), fy = BF ? num::bf16ToFloat(y) : num::halfToFloat(y);
  if (fx != fx && fy != fy) return 0x7fff;
  if (fx != fx) return y;
  if (fy != fy) return x;
  if (fx == fy) return Max ? uint16_t(x & y) : uint16_t(x | y);  // equal values differ at most in the sign of 0
  return (fx < fy) != Max ? x : y;
}

// The float adds of atomics and reductions as an H200 computes them (conformance ptx.async_FloatReduce.*, driver
// 580), all rounded to nearest; a NaN f32 result is the canonical NaN 0x7fffffff whatever the payloads, an invalid
// f64 sum (inf + -inf) is 0xfff8000000000000.
// - f32: atom/red on global memory (generic addresses of it too) flush subnormal operands and results to the zero
//   of their sign; on shared memory, and the asynchronous bulk and tensor reductions, keep them (FlushSubnormals).
// - f64, global memory and the asynchronous reductions: a NaN operand comes through unchanged, signalling or not,
//   the operand's (the bulk source's) before the old value's. Shared memory: the old value's NaN before the
//   operand's, quieted.
template <bool FlushSubnormals> PTX_HOT float atomicAddF32(float old, float b) {
  auto flush = [](float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    return (bits & 0x7f800000u) == 0 ? std::bit_cast<float>(bits & 0x80000000u) : x;
  };
  if constexpr (FlushSubnormals) {
    old = flush(old);
    b = flush(b);
  }
  const float sum = old + b;
  if (sum != sum) return std::bit_cast<float>(0x7fffffffu);
  return FlushSubnormals ? flush(sum) : sum;
}
template <bool Shared> PTX_HOT double atomicAddF64(double old, double b) {
  constexpr uint64_t kQuiet = 0x0008000000000000ull;
  if constexpr (Shared) {
    if (old != old) return std::bit_cast<double>(std::bit_cast<uint64_t>(old) | kQuiet);
    if (b != b) return std::bit_cast<double>(std::bit_cast<uint64_t>(b) | kQuiet);
  } else {
    if (b != b) return b;
    if (old != old) return old;
  }
  const double sum = old + b;
  return sum != sum ? std::bit_cast<double>(0xfff8000000000000ull) : sum;
}

// One atomic operation's new value from the old one and the operand b; Shared: of shared memory (float adds differ).
template <class T, AOp O, bool Shared = false> PTX_HOT T combine(T old, T b) {
  if constexpr (O == AAdd) {
    if constexpr (std::is_same_v<T, float>)
      return atomicAddF32<!Shared>(old, b);
    else if constexpr (std::is_same_v<T, double>)
      return atomicAddF64<Shared>(old, b);
    else
      return T(std::make_unsigned_t<T>(old) + std::make_unsigned_t<T>(b));
  } else if constexpr (O == AMin) {
    if constexpr (std::is_floating_point_v<T>)
      return h::FMin::f(old, b);
    else
      return b < old ? b : old;
  } else if constexpr (O == AMax) {
    if constexpr (std::is_floating_point_v<T>)
      return h::FMax::f(old, b);
    else
      return b > old ? b : old;
  } else if constexpr (O == AInc) {
    return (old >= b) ? T(0) : T(old + 1);
  } else if constexpr (O == ADec) {
    return (old == 0 || old > b) ? b : T(old - 1);
  } else if constexpr (O == AAnd) {
    return T(old & b);
  } else if constexpr (O == AOr) {
    return T(old | b);
  } else if constexpr (O == AXor) {
    return T(old ^ b);
  } else if constexpr (O == AAddF16 || O == AAddBF16) {
    return T(addHalfBits<O == AAddBF16>(uint16_t(old), uint16_t(b)));
  } else if constexpr (O == AMinF16 || O == AMaxF16 || O == AMinBF16 || O == AMaxBF16) {
    return T(minMaxHalfBits < O == AMinBF16 || O == AMaxBF16,
             O == AMaxF16 || O == AMaxBF16 > (uint16_t(old), uint16_t(b)));
  } else if constexpr (O == AAddF16x2 || O == AAddBF16x2) {
    constexpr bool bf = O == AAddBF16x2;
    return T(uint32_t(addHalfBits<bf>(uint16_t(old), uint16_t(b))) |
             uint32_t(addHalfBits<bf>(uint16_t(old >> 16), uint16_t(b >> 16))) << 16);
  } else {
    return b;  // exch
  }
}

template <class T> using Bits =
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

// 128-bit compare-and-swap on host memory (16-byte aligned): cmpxchg16b on x86-64, a striped lock elsewhere.
inline bool cas128(B128* p, B128& expected, B128 desired) {
#if defined(__x86_64__)
  bool ok;
  asm volatile("lock cmpxchg16b %1"
               : "=@ccz"(ok), "+m"(*p), "+a"(expected.lo), "+d"(expected.hi)
               : "b"(desired.lo), "c"(desired.hi)
               : "memory");
  return ok;
#else
  static std::mutex locks[64];
  std::lock_guard<std::mutex> g(locks[(reinterpret_cast<uintptr_t>(p) >> 4) & 63]);
  B128 cur = *p;
  bool ok = cur.lo == expected.lo && cur.hi == expected.hi;
  if (ok) *p = desired;
  expected = cur;
  return ok;
#endif
}

// One atomic read-modify-write on host memory shared with other host threads.
template <class T, AOp O> PTX_HOT T atomicRmw(uint8_t* p, T b, T c) {
  if constexpr (std::is_same_v<T, B128>) {
    B128* q = reinterpret_cast<B128*>(p);
    B128 expected = O == ACas ? b : B128{0, 0};
    if constexpr (O == ACas) {
      cas128(q, expected, c);
      return expected;
    } else {  // exch
      while (!cas128(q, expected, b)) {}
      return expected;
    }
  } else {
    using U = Bits<T>;
    U* up = reinterpret_cast<U*>(p);
    if constexpr (O == AExch) {
      U nb = std::bit_cast<U>(b);
      return std::bit_cast<T>(__atomic_exchange_n(up, nb, __ATOMIC_SEQ_CST));
    } else if constexpr (O == ACas) {
      U expected = std::bit_cast<U>(b);
      __atomic_compare_exchange_n(up, &expected, std::bit_cast<U>(c), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return std::bit_cast<T>(expected);
    } else if constexpr (std::is_integral_v<T> && (O == AAdd || O == AAnd || O == AOr || O == AXor)) {
      U nb = U(b);
      if constexpr (O == AAdd) return T(__atomic_fetch_add(up, nb, __ATOMIC_SEQ_CST));
      if constexpr (O == AAnd) return T(__atomic_fetch_and(up, nb, __ATOMIC_SEQ_CST));
      if constexpr (O == AOr) return T(__atomic_fetch_or(up, nb, __ATOMIC_SEQ_CST));
      if constexpr (O == AXor) return T(__atomic_fetch_xor(up, nb, __ATOMIC_SEQ_CST));
    } else {
      U cur = __atomic_load_n(up, __ATOMIC_RELAXED);
      for (;;) {
        T old = std::bit_cast<T>(cur);
        U next = std::bit_cast<U>(combine<T, O>(old, b));
        if (__atomic_compare_exchange_n(up, &cur, next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return old;
      }
    }
  }
}
// Shared/local memory belongs to one CTA, which runs on one host thread at a time: no atomic instructions needed.
template <class T, AOp O> PTX_HOT T plainRmw(uint8_t* p, T b, T c) {
  T old;
  std::memcpy(&old, p, sizeof(T));
  T next;
  if constexpr (std::is_same_v<T, B128>)
    next = O == ACas ? (old.lo == b.lo && old.hi == b.hi ? c : old) : b;
  else if constexpr (O == ACas)
    next = (std::bit_cast<Bits<T>>(old) == std::bit_cast<Bits<T>>(b)) ? c : old;
  else
    next = combine<T, O, true>(old, b);
  std::memcpy(p, &next, sizeof(T));
  return old;
}

// Operations whose lanes on one address combine exactly into one (runtime fast path warp-aggregated-atomics):
// integer add (wrapping), and, or, xor, min and max are associative, so applying the combined operand once leaves
// what applying the lanes' operands one after the other leaves, and each lane's result is the running combination.
// Float adds are left out (a sum rounds differently from the sequence), as are inc/dec, exch and cas.
template <class T, AOp O> constexpr bool kAggregatable = std::is_integral_v<T> && (O == AAdd || O == AAnd || O == AOr ||
                                                                                   O == AXor || O == AMin || O == AMax);

// Whether the executing lanes m of a 64-bit address register all hold the value of lane `first`.
PTX_HOT bool sameAddress(const uint64_t* base, uint32_t m, int first) {
  const uint64_t v = base[first];
  if (m == kFullMask) {
    using V = Simd<uint64_t>;
    V diff = {};
    for (int k = 0; k < 8; ++k) {
      V x;
      std::memcpy(&x, base + 4 * k, sizeof x);
      diff |= x ^ v;
    }
    return orLanes(diff) == 0;
  }
  for (uint32_t r = m; r; r &= r - 1)
    if (base[std::countr_zero(r)] != v) return false;
  return true;
}

// warp-aggregated-atomics: the executing lanes all name one global address (a counter every lane bumps, a flag).
// The first lane's checks are every lane's; one host atomic applies the lanes' operands combined in lane order and
// each lane gets what it would have seen had the lanes run one after the other, lowest first, as the per-lane path
// runs them. Returns nullptr when the fast path does not apply (done = false) or after a fault (done = true).
template <Space S, class A, class T, AOp O> PTX_HOT const Op* atomOneAddress(Warp& w, const Op* op, bool& done) {
  done = false;
  const AtomicOperands v = AtomicOperands::of(*op);
  const uint32_t m = w.exec;
  const int first = std::countr_zero(m);
  const uint64_t* base = R<uint64_t>(w, v.address);
  if (!sameAddress(base, m, first)) return nullptr;
  const uint64_t addr = base[first] + uint64_t(v.offset);
  if constexpr (S == Generic) {  // a generic address in the CTA's shared or a thread's local window: per lane
    Cta& cta = *w.cta;
    if (addr - reinterpret_cast<uint64_t>(cta.shared) < cta.sharedBytes ||
        addr - reinterpret_cast<uint64_t>(w.local) < uint64_t(w.localStride) * 32)
      return nullptr;
  }
  done = true;
  uint8_t* p = xlate<S>(w, op, first, addr, sizeof(T), true, true);
  if (!p) [[unlikely]]
    return nullptr;
  const T* b = R<T>(w, v.operand);
  T combined = b[first];
  for (uint32_t r = m & (m - 1); r; r &= r - 1) combined = combine<T, O>(combined, b[std::countr_zero(r)]);
  T running = atomicRmw<T, O>(p, combined, T{});
  if (v.result) {
    T* d = R<T>(w, v.result);
    for (uint32_t r = m; r; r &= r - 1) {
      const int i = std::countr_zero(r);
      const T bi = b[i];  // before d[i] is written: d may be b
      d[i] = running;
      running = combine<T, O>(running, bi);
    }
  }
  return op + 1;
}

// atom and red (AtomicOperands).
template <Space S, class A, class T, AOp O> const Op* atom(Warp& w, const Op* op) {
  const AtomicOperands v = AtomicOperands::of(*op);
  const A* base = R<A>(w, v.address);
  const T* b = R<T>(w, v.operand);
  const T* c = R<T>(w, v.compare);
  T* d = v.result ? R<T>(w, v.result) : nullptr;
  Cta& cta = *w.cta;
  uint32_t m = w.exec;
  if constexpr ((S == Global || S == Generic) && std::is_same_v<A, uint64_t> && kAggregatable<T, O>) {
    if (m && (w.fastPaths & rewriteBit(Rewrite::WarpAggregatedAtomics))) {
      bool done;
      const Op* next = atomOneAddress<S, A, T, O>(w, op, done);
      if (done) return next;
    }
  }
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint64_t addr = laneAddr(base, i, v.offset);
    uint8_t* p = xlate<S>(w, op, i, addr, sizeof(T), true, true);
    if (!p) [[unlikely]]
      return nullptr;
    T old;
    bool isShared;
    if constexpr (S == Shared || S == Local || S == Frame) {
      isShared = true;
    } else if constexpr (S == Generic) {
      uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
      uint64_t lo = reinterpret_cast<uint64_t>(w.local);
      isShared = (addr - sh < cta.sharedBytes) || (addr - lo < uint64_t(w.localStride) * 32);
    } else {
      isShared = false;
    }
    if (isShared)
      old = plainRmw<T, O>(p, b[i], c[i]);
    else
      old = atomicRmw<T, O>(p, b[i], c[i]);
    if (d) d[i] = old;
  }
  return op + 1;
}

}  // namespace ptx::exec::mem
