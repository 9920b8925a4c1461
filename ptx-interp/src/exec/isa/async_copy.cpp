// Asynchronous copies (OpClass AsyncCopy): cp.async (commit and wait groups, the mbarrier arrive it triggers),
// cp.async.bulk between global and shared memory, cp.reduce.async.bulk, the bulk prefetch. Every copy runs at
// issue (see exec/async.h); completion mechanisms that an mbarrier observes update it right after the copy.
#include "exec/async.h"
#include "exec/lowerer.h"

namespace ptx::exec {

namespace {

using h::R;
namespace mbar = async::mbar;

// cp.async: 4, 8 or 16 bytes from global (slot 1) to shared memory (slot 0). Of them, the first `src-size` bytes
// (register c) come from the source and the rest are zeros; with the ignore-src predicate (register d) true, all
// are zeros and the source is not read.
constexpr uint32_t kSrcSize = 1u << async::kOpBits, kIgnoreSrc = kSrcSize << 1, kIgnoreNegated = kSrcSize << 2;
constexpr uint32_t kCpSizeShift = async::kOpBits + 3;

const Op* cpAsync(Warp& w, const Op* op) {
  const uint32_t cpSize = op->aux >> kCpSizeShift;
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint32_t n = cpSize;
    if (op->aux & kSrcSize) n = std::min(n, R<uint32_t>(w, op->c)[i]);
    if ((op->aux & kIgnoreSrc) && (R<uint8_t>(w, op->d)[i] != 0) != bool(op->aux & kIgnoreNegated)) n = 0;
    uint8_t* dst = async::lanePointer(w, op, 0, i, cpSize, cpSize, true);
    if (!dst) return nullptr;
    if (n) {
      uint8_t* src = async::lanePointer(w, op, 1, i, n, cpSize, false);
      if (!src) return nullptr;
      std::memcpy(dst, src, n);
    }
    std::memset(dst + n, 0, cpSize - n);
  }
  return op + 1;
}

// cp.async.mbarrier.arrive: the arrival happens when the thread's earlier cp.async completed, which they have.
// Without .noinc the pending count is raised by one first, so the pair changes nothing; the address is still checked.
constexpr uint32_t kNoInc = 1u << async::kOpBits;
const Op* cpAsyncMbarrierArrive(Warp& w, const Op* op) {
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* bar = async::lanePointer(w, op, 0, i, 8, 8, true);
    if (!bar) return nullptr;
    if (op->aux & kNoInc) mbar::arrive(bar, 1, 0, false);
  }
  return op + 1;
}

// Element-wise reduction of `bytes` bytes at src into dst: atomically per element in global memory (each element's
// update is a relaxed atomic of the GPU scope), plainly in the CTA's own shared memory.
using Reducer = void (*)(uint8_t* dst, const uint8_t* src, uint32_t bytes, bool atomic);
template <class T, mem::AOp O> void reduceSpan(uint8_t* dst, const uint8_t* src, uint32_t bytes, bool atomic) {
  for (uint32_t k = 0; k + sizeof(T) <= bytes; k += sizeof(T)) {
    T b;
    std::memcpy(&b, src + k, sizeof(T));
    if (atomic) mem::atomicRmw<T, O>(dst + k, b, b);
    else mem::plainRmw<T, O>(dst + k, b, b);
  }
}
// The reducers an op can name (aux >> kReducerShift indexes it); 0: a plain copy.
constexpr Reducer kReducers[] = {
    nullptr,
    reduceSpan<uint32_t, mem::AAdd>, reduceSpan<uint32_t, mem::AMin>, reduceSpan<uint32_t, mem::AMax>,
    reduceSpan<uint32_t, mem::AInc>, reduceSpan<uint32_t, mem::ADec>, reduceSpan<uint32_t, mem::AAnd>,
    reduceSpan<uint32_t, mem::AOr>, reduceSpan<uint32_t, mem::AXor>,
    reduceSpan<int32_t, mem::AMin>, reduceSpan<int32_t, mem::AMax>,
    reduceSpan<uint64_t, mem::AAdd>, reduceSpan<uint64_t, mem::AMin>, reduceSpan<uint64_t, mem::AMax>,
    reduceSpan<uint64_t, mem::AAnd>, reduceSpan<uint64_t, mem::AOr>, reduceSpan<uint64_t, mem::AXor>,
    reduceSpan<int64_t, mem::AMin>, reduceSpan<int64_t, mem::AMax>, reduceSpan<int64_t, mem::AAdd>,
    reduceSpan<float, mem::AAdd>, reduceSpan<double, mem::AAdd>,
    reduceSpan<uint16_t, mem::AAddF16>, reduceSpan<uint16_t, mem::AMinF16>, reduceSpan<uint16_t, mem::AMaxF16>,
    reduceSpan<uint16_t, mem::AAddBF16>, reduceSpan<uint16_t, mem::AMinBF16>, reduceSpan<uint16_t, mem::AMaxBF16>,
};
constexpr uint32_t kReducerShift = 16;
constexpr uint32_t kCompleteTx = 1u << async::kOpBits;

// The index in kReducers of a cp.reduce.async.bulk operation on type t; 0 when there is none.
uint32_t reducerIndex(ptx::RedOp r, Type t) {
  using ptx::RedOp;
  switch (t) {
    case Type::u32: case Type::b32:
      switch (r) {
        case RedOp::add: return 1;
        case RedOp::min: return 2;
        case RedOp::max: return 3;
        case RedOp::inc: return 4;
        case RedOp::dec: return 5;
        case RedOp::and_: return 6;
        case RedOp::or_: return 7;
        case RedOp::xor_: return 8;
        default: return 0;
      }
    case Type::s32:
      return r == RedOp::add ? 1 : r == RedOp::min ? 9 : r == RedOp::max ? 10 : 0;
    case Type::u64: case Type::b64:
      switch (r) {
        case RedOp::add: return 11;
        case RedOp::min: return 12;
        case RedOp::max: return 13;
        case RedOp::and_: return 14;
        case RedOp::or_: return 15;
        case RedOp::xor_: return 16;
        default: return 0;
      }
    case Type::s64: return r == RedOp::min ? 17 : r == RedOp::max ? 18 : r == RedOp::add ? 19 : 0;
    case Type::f32: return r == RedOp::add ? 20 : 0;
    case Type::f64: return r == RedOp::add ? 21 : 0;
    case Type::f16: return r == RedOp::add ? 22 : r == RedOp::min ? 23 : r == RedOp::max ? 24 : 0;
    case Type::bf16: return r == RedOp::add ? 25 : r == RedOp::min ? 26 : r == RedOp::max ? 27 : 0;
    default: return 0;
  }
}

// cp.async.bulk / cp.reduce.async.bulk: `size` bytes (register c, a multiple of 16) from slot 1 to slot 0, both
// 16-byte aligned; with kCompleteTx the copy then completes that many bytes of the mbarrier in slot 2.
const Op* bulkCopy(Warp& w, const Op* op) {
  const Reducer reduce = kReducers[op->aux >> kReducerShift];
  const bool dstGlobal = ((op->aux >> 1) & 3) == async::kGlobal;
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint32_t size = R<uint32_t>(w, op->c)[i];
    if (size % 16)
      return raiseFault(w, op, i, FaultKind::MisalignedAddress, size, "bulk copy size is not a multiple of 16");
    uint8_t* dst = async::lanePointer(w, op, 0, i, size, 16, true);
    if (!dst) return nullptr;
    uint8_t* src = async::lanePointer(w, op, 1, i, size, 16, false);
    if (!src) return nullptr;
    uint8_t* bar = nullptr;
    if ((op->aux & kCompleteTx) && !(bar = async::lanePointer(w, op, 2, i, 8, 8, true))) return nullptr;
    if (reduce) reduce(dst, src, size, dstGlobal);
    else std::memmove(dst, src, size);
    if (bar) mbar::completeTx(bar, size);
  }
  return op + 1;
}

// cp.async.bulk and cp.reduce.async.bulk from shared::cta to shared::cluster: the destination can only be this CTA's
// own shared memory (a cluster of one CTA; distributed shared memory is not modelled), and an H100 raises an
// illegal-instruction error for that (driver 580: conformance ptx.async.BulkSharedToShared and
// ptx.async_BulkReduceShared.*, while the same copy from global memory into the own CTA works).
const Op* bulkSharedToOwnCta(Warp& w, const Op* op) {
  return raiseFault(w, op, std::countr_zero(w.exec), FaultKind::IllegalInstruction, 0,
                    "bulk copy from shared::cta memory into the issuing CTA's own shared memory");
}

}  // namespace

namespace lowering {

KernelLowerer::Addr KernelLowerer::addressIn(const Instruction& in, const Operand& o, ptx::Space space) {
  Instruction copy = in;
  copy.space = space;
  return address(copy, o);
}

void KernelLowerer::setAddressSlot(Op& op, int slot, const Addr& a) {
  async::Where where = async::kShared;
  if (a.space == mem::Generic) where = async::kGeneric;
  else if (a.space == mem::Global) where = async::kGlobal;
  else if (a.space != mem::Shared) fail(line_, "asynchronous copy operand in an unsupported state space");
  if (slot > 0 && a.imm != int64_t(int32_t(a.imm))) fail(line_, "address offset out of range");
  op.aux |= async::slotAux(slot, a.baseSize == 8, where);
  if (slot == 0) {
    op.a = a.base;
    op.imm = a.imm;
  } else if (slot == 1) {
    op.b = a.base;
    op.e = uint32_t(int32_t(a.imm));
  } else {
    op.d = a.base;
    op.f = uint32_t(int32_t(a.imm));
  }
}

void KernelLowerer::lowerAsyncCopy(const Instruction& in) {
  const bool hint = in.has(ptx::Flag::cache_hint);
  switch (in.opcode) {
    case Opcode::CpAsync: {
      const Operand& size = opnd(in, 2);
      if (size.kind != OperandKind::Imm || (size.value != 4 && size.value != 8 && size.value != 16))
        fail(line_, "cp.async size must be 4, 8 or 16");
      Addr dst = address(in, opnd(in, 0)), srcAddr = addressIn(in, opnd(in, 1), in.space2);
      uint32_t aux = uint32_t(size.value) << kCpSizeShift, srcSize = 0, ignore = 0;
      if (in.numOperands - (hint ? 1 : 0) > 3) {
        const Operand& o = opnd(in, 3);
        if (o.kind == OperandKind::Reg && regType(o.index) == Type::pred) {
          bool neg = false;
          ignore = srcPred(o, neg);
          aux |= kIgnoreSrc | (neg ? kIgnoreNegated : 0);
        } else {
          srcSize = src(o, Type::u32);
          aux |= kSrcSize;
        }
      }
      Op& op = emit(&cpAsync);
      op.aux = aux;
      op.c = srcSize;
      setAddressSlot(op, 0, dst);
      setAddressSlot(op, 1, srcAddr);
      op.d = ignore;  // not a slot-2 address: cp.async has two
      return;
    }
    case Opcode::CpAsyncMbarrierArrive: {
      Addr bar = address(in, opnd(in, 0));
      Op& op = emit(&cpAsyncMbarrierArrive);
      op.aux = fn_->hasMod(in, ptx::Mod::noinc) ? kNoInc : 0;
      setAddressSlot(op, 0, bar);
      return;
    }
    case Opcode::CpAsyncBulk: case Opcode::CpReduceAsyncBulk: {
      if (fn_->hasMod(in, ptx::Mod::cp_mask)) return unsupported(in, "byte masks of bulk copies");
      uint32_t reducer = 0;
      if (in.opcode == Opcode::CpReduceAsyncBulk) {
        reducer = reducerIndex(in.redOp, in.type());
        if (!reducer) return unsupported(in);
      }
      const bool sharedSource = in.space2 == ptx::Space::shared || in.space2 == ptx::Space::shared_cta;
      if (sharedSource && in.space == ptx::Space::shared_cluster) {
        emit(&bulkSharedToOwnCta);
        return;
      }
      Addr dst = address(in, opnd(in, 0)), srcAddr = addressIn(in, opnd(in, 1), in.space2);
      uint32_t size = src(opnd(in, 2), Type::u32);
      bool completeTx = fn_->hasMod(in, ptx::Mod::mbarrier_complete_tx_bytes);
      // the mbarrier is in the destination's shared memory; a multicast mask (a cluster of one CTA: this CTA) and a
      // cache policy follow it
      std::optional<Addr> bar;
      if (completeTx) bar = addressIn(in, opnd(in, 3), ptx::Space::shared);
      Op& op = emit(&bulkCopy);
      op.aux = reducer << kReducerShift | (completeTx ? kCompleteTx : 0);
      op.c = size;
      setAddressSlot(op, 0, dst);
      setAddressSlot(op, 1, srcAddr);
      if (bar) setAddressSlot(op, 2, *bar);
      return;
    }
    // Copies are complete when issued: groups and waits have nothing to wait for, and without caches a prefetch
    // does nothing.
    case Opcode::CpAsyncCommitGroup: case Opcode::CpAsyncWaitGroup: case Opcode::CpAsyncWaitAll:
    case Opcode::CpAsyncBulkCommitGroup: case Opcode::CpAsyncBulkWaitGroup: case Opcode::CpAsyncBulkPrefetch:
    case Opcode::CpAsyncBulkPrefetchTensor:
      emit(&ctl::nop);
      return;
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
