// What the asynchronous copies (isa/async_copy.cpp) and the mbarrier instructions (isa/sync.cpp) share: the
// address operands of their ops and the mbarrier object.
//
// Copies run at issue, in full: the ISA lets a copy complete at any time before the wait that observes it, so
// copying at once is one of its legal schedules, and the commit/wait instructions have nothing left to wait for.
// A copy that completes an mbarrier's transaction count does so right after it copied.
#pragma once

#include "exec/handlers.h"

#include <cstring>

namespace ptx::exec::async {

// ---- address operands --------------------------------------------------------------------------------------------
// An op has up to three address operands, "slots" (AddressSlot): 0 = register a + imm, 1 = register b + int32 e,
// 2 = register d + int32 f, and three bits of aux per slot (bit 0: 64-bit register; bits 1-2: Where). The bits of
// aux from kOpBits on belong to the op's own view (isa/async_copy.cpp, isa/sync.cpp), which packs its slots with
// AddressSlot::into and reads them with AddressSlot::of.
enum Where : uint32_t { kShared = 0, kGeneric = 1, kGlobal = 2 };
constexpr uint32_t kSlotBits = 3;
constexpr uint32_t kOpBits = 9;

struct AddressSlot {
  uint32_t base = 0;  // address register
  bool wide = false;  // 64-bit register
  Where where = kShared;
  int64_t offset = 0;  // slots 1 and 2: an int32

  static AddressSlot of(const Op& op, int slot) {
    const uint32_t bits = op.aux >> (kSlotBits * slot);
    const uint32_t reg = slot == 0 ? op.a : slot == 1 ? op.b : op.d;
    const int64_t off = slot == 0 ? op.imm : int64_t(int32_t(slot == 1 ? op.e : op.f));
    return {reg, (bits & 1) != 0, Where((bits >> 1) & 3), off};
  }
  // Adds the slot to op (its aux bits OR-ed in: the view sets the op's own bits first).
  void into(Op& op, int slot) const {
    op.aux |= (uint32_t(wide) | uint32_t(where) << 1) << (kSlotBits * slot);
    if (slot == 0) {
      op.a = base;
      op.imm = offset;
    } else if (slot == 1) {
      op.b = base;
      op.e = uint32_t(int32_t(offset));
    } else {
      op.d = base;
      op.f = uint32_t(int32_t(offset));
    }
  }
};

inline uint64_t laneAddress(Warp& w, const AddressSlot& s, int lane) {
  if (!s.wide) return uint32_t(h::R<uint32_t>(w, s.base)[lane] + uint32_t(s.offset));  // 32-bit addresses wrap
  return h::R<uint64_t>(w, s.base)[lane] + uint64_t(s.offset);
}

// Lane `lane`'s address in slot s of op as a host pointer to `size` bytes aligned to `align`; nullptr after raising
// the fault. A generic address must point into shared memory (mbarrier objects live there): the CTA's own or, as a
// shared address of the shared::cluster window, another CTA's of its cluster (engine.h: Cluster).
inline uint8_t* lanePointer(Warp& w, const Op* op, const AddressSlot& s, int lane, uint64_t size, uint32_t align,
                            bool write) {
  uint64_t addr = laneAddress(w, s, lane);
  const Where where = s.where;
  if (addr & (align - 1)) {
    raiseFault(w, op, lane, FaultKind::MisalignedAddress, addr, "misaligned address");
    return nullptr;
  }
  Cta& cta = *w.cta;
  if (where == kGlobal) {
    if (size == 0 || cta.job->lp.memory->check(addr, size, write)) return reinterpret_cast<uint8_t*>(addr);
    raiseFault(w, op, lane, FaultKind::IllegalAddress, addr, "out-of-range global address");
    return nullptr;
  }
  Cta* owner = &cta;
  uint64_t off = addr - cta.sharedWindow;  // the own block's, when the rank bits are the CTA's
  if (where == kGeneric) {
    owner = clusterSharedOwner(cta, addr);
    off = owner ? addr - reinterpret_cast<uint64_t>(owner->shared) : 0;
  } else if (off >= cta.sharedBytes) {
    ClusterSharedTarget t = clusterSharedTarget(cta, addr);
    owner = t.cta;
    off = t.offset;
    if (!owner) {
      raiseFault(w, op, lane, FaultKind::ClusterAddress, addr,
                 "shared::cluster address of a CTA rank outside the cluster");
      return nullptr;
    }
  }
  if (owner && off <= owner->sharedBytes && size <= owner->sharedBytes - off) return owner->shared + off;
  raiseFault(w, op, lane, FaultKind::IllegalAddress, addr,
             where == kGeneric ? "generic address outside shared memory" : "out-of-range shared address");
  return nullptr;
}

// ---- mbarrier objects -----------------------------------------------------------------------------------------
// The ISA leaves the 64-bit layout opaque. Here: pending arrivals in bits 0-20, expected arrivals in bits 21-41,
// the transaction count (signed, bytes still to complete) in bits 42-62, the phase parity in bit 63. A state token
// (what mbarrier.arrive returns) is the object's value before the arrival: its phase bit tells test_wait whether the
// phase it arrived on has completed, its pending count is what mbarrier.pending_count reads.
// clusterlaunchcontrol.try_cancel (isa/sync.cpp): takes a cluster of the grid that has not started, so that it
// never will, and gives its linear index (in the order clusters start; launch.cpp: the calling thread's claimed
// clusters first, then the grid's unclaimed ones); false when every cluster has started or is starting.
bool cancelUnstartedCluster(Job& job, uint64_t& linear);

namespace mbar {
constexpr uint64_t kCountMask = (uint64_t(1) << 21) - 1;
inline uint32_t pending(uint64_t s) { return uint32_t(s & kCountMask); }
inline uint32_t expected(uint64_t s) { return uint32_t((s >> 21) & kCountMask); }
inline int32_t tx(uint64_t s) { return int32_t(uint32_t((s >> 42) & kCountMask) << 11) >> 11; }
inline uint32_t phase(uint64_t s) { return uint32_t(s >> 63); }
inline uint64_t make(uint32_t pend, uint32_t exp, int64_t txCount, uint32_t ph) {
  return (pend & kCountMask) | (exp & kCountMask) << 21 | (uint64_t(txCount) & kCountMask) << 42 |
         uint64_t(ph & 1) << 63;
}

// A phase completes once every expected arrival happened and every expected byte arrived: the next phase starts
// with the (possibly dropped) expected count pending.
inline uint64_t settle(int64_t pend, uint32_t exp, int64_t txCount, uint32_t ph) {
  if (pend <= 0 && txCount == 0) return make(exp, exp, 0, ph ^ 1);
  return make(uint32_t(pend < 0 ? 0 : pend), exp, txCount, ph);
}

// Applies f (old value -> new value) to the object at p; returns the old value. Atomic: a CTA's shared memory is
// only touched by the host thread that runs it, but the object is a word others may poll through generic loads.
template <class F> inline uint64_t update(uint8_t* p, F f) {
  auto* q = reinterpret_cast<uint64_t*>(p);
  uint64_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(q, &old, f(old), true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {}
  return old;
}

inline void init(uint8_t* p, uint32_t count) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(p), make(count, count, 0, 0), __ATOMIC_RELEASE);
}

// arrive (count arrivals; drop: also fewer expected from the next phase on) after adding txBytes expected bytes.
inline uint64_t arrive(uint8_t* p, uint32_t count, int64_t txBytes, bool drop) {
  return update(p, [&](uint64_t s) {
    uint32_t exp = expected(s);
    if (drop) exp = exp > count ? exp - count : 0;
    return settle(int64_t(pending(s)) - count, exp, tx(s) + txBytes, phase(s));
  });
}
inline void expectTx(uint8_t* p, int64_t bytes) {
  update(p, [&](uint64_t s) { return make(pending(s), expected(s), tx(s) + bytes, phase(s)); });
}
inline void completeTx(uint8_t* p, int64_t bytes) {
  update(p, [&](uint64_t s) { return settle(pending(s), expected(s), tx(s) - bytes, phase(s)); });
}
inline uint64_t load(const uint8_t* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}
}  // namespace mbar

}  // namespace ptx::exec::async
