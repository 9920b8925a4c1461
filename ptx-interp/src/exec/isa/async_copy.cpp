// Asynchronous copies (OpClass AsyncCopy): cp.async (commit and wait groups, the mbarrier arrive it triggers),
// cp.async.bulk between global and shared memory, cp.reduce.async.bulk, the bulk prefetch, and the tile and im2col
// modes of the tensor copies (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor) through cuemu's tensor maps. Every
// copy runs at issue (see exec/async.h); completion mechanisms that an mbarrier observes update it right after the
// copy.
#include "exec/async.h"
#include "exec/lowerer.h"
#include "ptx/tensor_map.h"

namespace ptx::exec {

namespace {

using h::R;
namespace mbar = async::mbar;

// Typed operand views of the asynchronous copies (control_ops.h explains the idea); their addresses are slots
// (exec/async.h: AddressSlot), their own aux bits start at async::kOpBits.

// cp.async: `bytes` (4, 8 or 16) from global (source) to shared memory (destination). Of them, the first
// `srcSize` bytes (a u32 register; 0: all) come from the source and the rest are zeros; with the ignore-src
// predicate register (0: none) true, possibly negated, all are zeros and the source is not read.
struct CpAsyncOperands {
  static constexpr uint32_t kSrcSize = 1u << async::kOpBits, kIgnoreSrc = kSrcSize << 1, kIgnoreNegated = kSrcSize << 2,
                            kBytesShift = async::kOpBits + 3;
  async::AddressSlot destination, source;
  uint32_t bytes = 16;
  uint32_t srcSize = 0;
  uint32_t ignoreSrc = 0;
  bool ignoreNegated = false;

  static CpAsyncOperands of(const Op& op) {
    return {async::AddressSlot::of(op, 0),  async::AddressSlot::of(op, 1),    op.aux >> kBytesShift,
            (op.aux & kSrcSize) ? op.c : 0, (op.aux & kIgnoreSrc) ? op.d : 0, (op.aux & kIgnoreNegated) != 0};
  }
  void into(Op& op) const {
    op.aux = bytes << kBytesShift | (srcSize ? kSrcSize : 0) | (ignoreSrc ? kIgnoreSrc : 0) |
             (ignoreNegated ? kIgnoreNegated : 0);
    op.c = srcSize;
    destination.into(op, 0);
    source.into(op, 1);
    op.d = ignoreSrc;  // not a slot-2 address: cp.async has two
  }
};

const Op* cpAsync(Warp& w, const Op* op) {
  const CpAsyncOperands v = CpAsyncOperands::of(*op);
  const uint32_t cpSize = v.bytes;
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint32_t n = cpSize;
    if (v.srcSize) n = std::min(n, R<uint32_t>(w, v.srcSize)[i]);
    if (v.ignoreSrc && (R<uint8_t>(w, v.ignoreSrc)[i] != 0) != v.ignoreNegated) n = 0;
    uint8_t* dst = async::lanePointer(w, op, v.destination, i, cpSize, cpSize, true);
    if (!dst) return nullptr;
    if (n) {
      uint8_t* src = async::lanePointer(w, op, v.source, i, n, cpSize, false);
      if (!src) return nullptr;
      std::memcpy(dst, src, n);
    }
    std::memset(dst + n, 0, cpSize - n);
  }
  return op + 1;
}

// cp.async.mbarrier.arrive: the arrival happens when the thread's earlier cp.async completed, which they have.
// Without .noinc the pending count is raised by one first, so the pair changes nothing; the address is still checked.
struct CpAsyncArriveOperands {
  static constexpr uint32_t kNoInc = 1u << async::kOpBits;
  async::AddressSlot mbarrier;
  bool noinc = false;

  static CpAsyncArriveOperands of(const Op& op) { return {async::AddressSlot::of(op, 0), (op.aux & kNoInc) != 0}; }
  void into(Op& op) const {
    op.aux = noinc ? kNoInc : 0;
    mbarrier.into(op, 0);
  }
};
const Op* cpAsyncMbarrierArrive(Warp& w, const Op* op) {
  const CpAsyncArriveOperands v = CpAsyncArriveOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* bar = async::lanePointer(w, op, v.mbarrier, i, 8, 8, true);
    if (!bar) return nullptr;
    if (v.noinc) mbar::arrive(bar, 1, 0, false);
  }
  return op + 1;
}

// Element-wise reduction of `bytes` bytes at src into global memory at dst: each element's update is a relaxed
// atomic of the GPU scope, as other CTAs may update the same elements. (The shared::cluster destinations fault:
// bulkSharedToOwnCta.)
using Reducer = void (*)(uint8_t* dst, const uint8_t* src, uint64_t bytes);
template <class T, mem::AOp O> void reduceSpan(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  for (uint64_t k = 0; k + sizeof(T) <= bytes; k += sizeof(T)) {
    T b;
    std::memcpy(&b, src + k, sizeof(T));
    mem::atomicRmw<T, O>(dst + k, b, b);
  }
}

// The float additions of the asynchronous reductions (bulk and tensor): subnormals kept, NaNs as red.global.add.f64
// passes them (mem::atomicAddF32, mem::atomicAddF64).
uint32_t asyncAddF32(uint32_t old, uint32_t b) {
  return std::bit_cast<uint32_t>(mem::atomicAddF32<false>(std::bit_cast<float>(old), std::bit_cast<float>(b)));
}
uint64_t asyncAddF64(uint64_t old, uint64_t b) {
  return std::bit_cast<uint64_t>(mem::atomicAddF64<false>(std::bit_cast<double>(old), std::bit_cast<double>(b)));
}
template <class Bits, Bits (*Add)(Bits, Bits)> void reduceFloatAdd(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  for (uint64_t k = 0; k + sizeof(Bits) <= bytes; k += sizeof(Bits)) {
    Bits b;
    std::memcpy(&b, src + k, sizeof(Bits));
    auto* p = reinterpret_cast<Bits*>(dst + k);
    Bits old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, Add(old, b), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  }
}
// The reducers an op can name (BulkCopyOperands::reducer indexes it); 0: a plain copy.
constexpr Reducer kReducers[] = {
    nullptr,
    reduceSpan<uint32_t, mem::AAdd>,
    reduceSpan<uint32_t, mem::AMin>,
    reduceSpan<uint32_t, mem::AMax>,
    reduceSpan<uint32_t, mem::AInc>,
    reduceSpan<uint32_t, mem::ADec>,
    reduceSpan<uint32_t, mem::AAnd>,
    reduceSpan<uint32_t, mem::AOr>,
    reduceSpan<uint32_t, mem::AXor>,
    reduceSpan<int32_t, mem::AMin>,
    reduceSpan<int32_t, mem::AMax>,
    reduceSpan<uint64_t, mem::AAdd>,
    reduceSpan<uint64_t, mem::AMin>,
    reduceSpan<uint64_t, mem::AMax>,
    reduceSpan<uint64_t, mem::AAnd>,
    reduceSpan<uint64_t, mem::AOr>,
    reduceSpan<uint64_t, mem::AXor>,
    reduceSpan<int64_t, mem::AMin>,
    reduceSpan<int64_t, mem::AMax>,
    reduceSpan<int64_t, mem::AAdd>,
    reduceFloatAdd<uint32_t, asyncAddF32>,
    reduceFloatAdd<uint64_t, asyncAddF64>,
    reduceSpan<uint16_t, mem::AAddF16>,
    reduceSpan<uint16_t, mem::AMinF16>,
    reduceSpan<uint16_t, mem::AMaxF16>,
    reduceSpan<uint16_t, mem::AAddBF16>,
    reduceSpan<uint16_t, mem::AMinBF16>,
    reduceSpan<uint16_t, mem::AMaxBF16>,
};

// cp.async.bulk / cp.reduce.async.bulk: `size` bytes (a u32 register, a multiple of 16) from source to destination,
// both 16-byte aligned, reduced with kReducers[reducer] (0: copied); with completeTx the copy then completes that
// many bytes of the mbarrier. multicast: `size` is a u64 register of {size, ctaMask}, and the copy goes to the same
// offsets (destination and mbarrier) in each CTA of the mask. toOtherCta: from shared::cta memory to
// shared::cluster memory, which must be another CTA's.
struct BulkCopyOperands {
  static constexpr uint32_t kCompleteTx = 1u << async::kOpBits, kMulticast = kCompleteTx << 1,
                            kToOtherCta = kCompleteTx << 2, kReducerShift = 16;
  async::AddressSlot destination, source, mbarrier;
  uint32_t size = 0;
  uint32_t reducer = 0;
  bool completeTx = false;
  bool multicast = false;
  bool toOtherCta = false;

  static BulkCopyOperands of(const Op& op) {
    return {async::AddressSlot::of(op, 0), async::AddressSlot::of(op, 1),
            async::AddressSlot::of(op, 2), op.c,
            op.aux >> kReducerShift,       (op.aux & kCompleteTx) != 0,
            (op.aux & kMulticast) != 0,    (op.aux & kToOtherCta) != 0};
  }
  void into(Op& op) const {
    op.aux = reducer << kReducerShift | (completeTx ? kCompleteTx : 0) | (multicast ? kMulticast : 0) |
             (toOtherCta ? kToOtherCta : 0);
    op.c = size;
    destination.into(op, 0);
    source.into(op, 1);
    if (completeTx) mbarrier.into(op, 2);
  }
};

// The index in kReducers of a cp.reduce.async.bulk operation on type t; 0 when there is none.
uint32_t reducerIndex(ptx::RedOp r, Type t) {
  using ptx::RedOp;
  switch (t) {
    case Type::u32:
    case Type::b32:
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
    case Type::s32: return r == RedOp::add ? 1 : r == RedOp::min ? 9 : r == RedOp::max ? 10 : 0;
    case Type::u64:
    case Type::b64:
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

// A multicast's 16-bit CTA mask may name only ranks the cluster has: measured on an H200, a mask with a bit at or past
// the cluster's size (0xffff in a cluster of 2, ranks 4 and 5 in one of 4, rank 2 alone in one of 2) ends the grid
// with CUDA_ERROR_LAUNCH_FAILED, for cp.async.bulk and cp.async.bulk.tensor alike (conformance
// ptx.cluster.TensorMulticast_Faults.*); an empty mask copies nothing. Returns false after raising the fault.
bool checkMulticastMask(Warp& w, const Op* op, int lane, uint32_t ctaMask) {
  const size_t ranks = w.cta->cluster->ctas.size();
  if (ranks >= 16 || (ctaMask >> ranks) == 0) return true;
  raiseFault(w, op, lane, FaultKind::ClusterAddress, ctaMask,
             fmt::format("multicast CTA mask 0x{:x} names a rank outside the cluster of {}", ctaMask, ranks));
  return false;
}

// The multicast form of a bulk copy into shared memory: the same offsets of destination and mbarrier in every CTA
// of ctaMask (checkMulticastMask).
const Op* bulkMulticast(Warp& w, const Op* op, const BulkCopyOperands& v, int lane, const uint8_t* src, uint32_t size,
                        uint32_t ctaMask) {
  constexpr uint64_t kOffset = (uint64_t(1) << kClusterRankShift) - 1;
  if (!checkMulticastMask(w, op, lane, ctaMask)) return nullptr;
  const uint64_t dstOffset = async::laneAddress(w, v.destination, lane) & kOffset;
  const uint64_t barOffset = async::laneAddress(w, v.mbarrier, lane) & kOffset;
  const std::vector<Cta*>& ctas = w.cta->cluster->ctas;
  for (uint32_t rank = 0; rank < ctas.size(); ++rank) {
    if (!((ctaMask >> rank) & 1)) continue;
    Cta& target = *ctas[rank];
    if (dstOffset + size > target.sharedBytes || (v.completeTx && barOffset + 8 > target.sharedBytes))
      return raiseFault(w, op, lane, FaultKind::IllegalAddress, dstOffset, "out-of-range shared address (multicast)");
    std::memmove(target.shared + dstOffset, src, size);
    if (v.completeTx) mbar::completeTx(target.shared + barOffset, size);
  }
  return op + 1;
}

// cp.async.bulk / cp.reduce.async.bulk (BulkCopyOperands).
const Op* bulkCopy(Warp& w, const Op* op) {
  const BulkCopyOperands v = BulkCopyOperands::of(*op);
  const Reducer reduce = kReducers[v.reducer];
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    const uint64_t sizeAndMask = v.multicast ? R<uint64_t>(w, v.size)[i] : R<uint32_t>(w, v.size)[i];
    const uint32_t size = uint32_t(sizeAndMask);
    if (size % 16)
      return raiseFault(w, op, i, FaultKind::MisalignedAddress, size, "bulk copy size is not a multiple of 16");
    if (v.toOtherCta) {
      // An H100 raises an illegal-instruction error for a copy from shared::cta memory into the issuing CTA's own
      // shared memory (driver 580: conformance ptx.async.BulkSharedToShared and ptx.async_BulkReduceShared.*)
      const uint64_t rankField = async::laneAddress(w, v.destination, i) >> kClusterRankShift;
      if (rankField == w.cta->clusterRank)
        return raiseFault(w, op, i, FaultKind::IllegalInstruction, 0,
                          "bulk copy from shared::cta memory into the issuing CTA's own shared memory");
    }
    if (v.multicast) {
      const uint8_t* src = async::lanePointer(w, op, v.source, i, size, 16, false);
      if (!src || ((async::laneAddress(w, v.destination, i) & 15) != 0))
        return src ? raiseFault(w, op, i, FaultKind::MisalignedAddress, 0, "misaligned address") : nullptr;
      if (!bulkMulticast(w, op, v, i, src, size, uint32_t(sizeAndMask >> 32) & 0xffffu)) return nullptr;
      continue;
    }
    uint8_t* dst = async::lanePointer(w, op, v.destination, i, size, 16, true);
    if (!dst) return nullptr;
    uint8_t* src = async::lanePointer(w, op, v.source, i, size, 16, false);
    if (!src) return nullptr;
    uint8_t* bar = nullptr;
    if (v.completeTx && !(bar = async::lanePointer(w, op, v.mbarrier, i, 8, 8, true))) return nullptr;
    if (reduce)
      reduce(dst, src, size);
    else
      std::memmove(dst, src, size);
    if (bar) mbar::completeTx(bar, size);
  }
  return op + 1;
}

// ---- tensor copies (tile and im2col modes) -------------------------------------------------------------------------
// The coordinates of a tensor copy (up to five s32 registers) and the im2col offsets (up to three u16 registers) are
// gathered first into one block per lane (packCoordinate), which the copy op reads: coordinates at 0..4, offsets at
// kOffsetSlot..kOffsetSlot + 2.
constexpr uint32_t kMaxTensorRank = 5;
constexpr uint32_t kOffsetSlot = kMaxTensorRank, kCoordinateBlock = kOffsetSlot + 3;
struct CoordinateOperands {
  static constexpr uint32_t kHalfWord = 1;
  uint32_t block = 0;       // the lanes' blocks of kCoordinateBlock s32
  uint32_t coordinate = 0;  // s32 register (an im2col offset: u16)
  uint32_t slot = 0;
  bool halfWord = false;

  static CoordinateOperands of(const Op& op) { return {op.d, op.a, uint32_t(op.imm), (op.aux & kHalfWord) != 0}; }
  void into(Op& op) const {
    op.d = block;
    op.a = coordinate;
    op.imm = slot;
    op.aux = halfWord ? kHalfWord : 0;
  }
};
const Op* packCoordinate(Warp& w, const Op* op) {
  const CoordinateOperands v = CoordinateOperands::of(*op);
  int32_t* block = R<int32_t>(w, v.block);
  if (v.halfWord) {
    const uint16_t* x = R<uint16_t>(w, v.coordinate);
    h::forActive(w.exec, [&](int i) { block[i * kCoordinateBlock + v.slot] = x[i]; });
  } else {
    const int32_t* x = R<int32_t>(w, v.coordinate);
    h::forActive(w.exec, [&](int i) { block[i * kCoordinateBlock + v.slot] = x[i]; });
  }
  return op + 1;
}

// cp.async.bulk.tensor / cp.reduce.async.bulk.tensor, tile or im2col mode: the box in shared memory, the tensor
// map's address (u64 register), the coordinates' block (packCoordinate), the mbarrier of a load; multicast loads go to
// the CTAs of ctaMask (a u32 register of a 16-bit mask).
enum TensorKind : uint32_t { kTensorLoad = 0, kTensorStore = 1, kTensorReduce = 2 };
struct TensorCopyOperands {
  static constexpr uint32_t kKindShift = async::kOpBits, kRankShift = async::kOpBits + 2,
                            kMulticast = 1u << (async::kOpBits + 5), kIm2col = 1u << (async::kOpBits + 6),
                            kPackedTypes = 1u << (async::kOpBits + 7), kRedOpShift = async::kOpBits + 8;
  async::AddressSlot shared, mbarrier;
  uint32_t map = 0;
  uint32_t coordinates = 0;
  uint32_t ctaMask = 0;
  TensorKind kind = kTensorLoad;
  uint32_t rank = 0;
  ptx::RedOp redOp{};
  bool multicast = false;
  bool im2col = false;       // .im2col (loads, with offsets) or .im2col_no_offs (stores and reductions)
  bool packedTypes = false;  // the module targets sm_100 or later: maps of the packed 4/6-bit types are valid

  static TensorCopyOperands of(const Op& op) {
    return {async::AddressSlot::of(op, 0),
            async::AddressSlot::of(op, 2),
            op.b,
            op.c,
            op.e,
            TensorKind((op.aux >> kKindShift) & 3),
            (op.aux >> kRankShift) & 7,
            ptx::RedOp(op.aux >> kRedOpShift),
            (op.aux & kMulticast) != 0,
            (op.aux & kIm2col) != 0,
            (op.aux & kPackedTypes) != 0};
  }
  void into(Op& op) const {
    op.aux = uint32_t(kind) << kKindShift | rank << kRankShift | uint32_t(redOp) << kRedOpShift |
             (multicast ? kMulticast : 0) | (im2col ? kIm2col : 0) | (packedTypes ? kPackedTypes : 0);
    op.b = map;
    op.c = coordinates;
    op.e = ctaMask;
    shared.into(op, 0);
    if (kind == kTensorLoad) mbarrier.into(op, 2);
  }
};

// The tensor map a lane names: a generic address (of a kernel parameter, global or constant memory) or, as
// `mov %rd, param` gives it in a kernel, an offset in the kernel's parameters.
// packedTypes: element types 13-15 (the packed 4/6-bit ones) are valid, as in code for sm_100 and later; code for
// earlier targets runs on an H100 or H200, whose maps have none.
bool readTensorMap(Warp& w, const Op* op, int lane, uint64_t addr, ptx::TensorMap& map, bool packedTypes) {
  const char* why = "";
  uint8_t bytes[128];
  const uint8_t* p = mem::resolve<mem::Generic>(w, lane, addr, sizeof bytes, false, why);
  const auto& params = w.cta->job->paramBuffer;
  if (!p && addr + sizeof bytes <= params.size()) p = params.data() + addr;
  if (!p) {
    raiseFault(w, op, lane, FaultKind::IllegalAddress, addr, "tensor map address is not readable");
    return false;
  }
  std::memcpy(bytes, p, sizeof bytes);
  map = ptx::decodeTensorMap(bytes);
  if (ptx::tensor_map_layout::elemtype(bytes) > (packedTypes ? 15u : 12u) || map.interleave > 2) {
    raiseFault(w, op, lane, FaultKind::IllegalInstruction, addr, "operand is not a tensor map");
    return false;
  }
  return true;
}

// Reduction of a tensor copy: the operation (RedOp) on the tensor map's element type; 0 where an H200 raises an
// illegal instruction (conformance ptx.async_TensorReduce.* and ptx.async_TensorReduce_Faults.*, driver 580): add on
// u32, s32, u64, f32, f64, f16, bf16; min and max on u32, s32, u64, s64, f16, bf16; inc and dec on u32; and, or, xor on
// u32, s32, u64. (Not s64 add or bitwise operations, f32 min, s32 inc, u64 dec, f16 or 8-bit bitwise operations.)
uint32_t tensorReducer(ptx::RedOp r, ptx::TensorMapType dataType) {
  using T = ptx::TensorMapType;
  switch (dataType) {
    case T::u32: return reducerIndex(r, Type::u32);
    case T::s32:  // and/or/xor as on u32 (an H200 runs them; inc/dec fault)
      return r == ptx::RedOp::and_ || r == ptx::RedOp::or_ || r == ptx::RedOp::xor_ ? reducerIndex(r, Type::b32)
                                                                                    : reducerIndex(r, Type::s32);
    case T::u64: return reducerIndex(r, Type::u64);
    case T::s64:  // min and max only: add, and, or, xor fault on an H200
      return r == ptx::RedOp::min || r == ptx::RedOp::max ? reducerIndex(r, Type::s64) : 0;
    case T::f16: return reducerIndex(r, Type::f16);
    case T::bf16: return reducerIndex(r, Type::bf16);
    case T::f32:
    case T::f32ftz: return reducerIndex(r, Type::f32);
    case T::f64: return reducerIndex(r, Type::f64);
    default: return 0;
  }
}

// The filler of out-of-bounds elements: zeros, or where the map asks for NaN the H100's, one 16-bit pattern that is
// a NaN at every float size.
uint64_t oobFill(const ptx::TensorMap& map) {
  if (map.oobFill != ptx::kTensorMapOobNan) return 0;
  return uint64_t(ptx::kTensorMapNanHalf) * 0x0001000100010001ull;
}

// Tile loads through an interleaved map (measured on an H100 with tools/gpu-probe/tmapil27.cpp, results in
// tools/gpu-probe/results/tmapil27-h100-2026-11-27.txt, and conformance ptx.async_TensorCopy.Golden.interleave*):
// dimension 0 counts chunks of the interleave's bytes (16 or 32) whatever the element type, so a row is
// ceil(box[0] / elementStride[0]) chunks, chunk k at k * chunk bytes from the row's start and inside the tensor while
// k < dims[0]; dimension rank - 2 contributes one row at its coordinate (its box size and element stride are
// ignored, its bound is checked); the other dimensions are a tiled map's. The copy moves (and completes on the
// mbarrier) the chunks' bytes, more than the map's box bytes (which count elements): the GPU completes them in 16-byte
// pieces in an order of its own, so an expect_tx of the box bytes completes the phase in some runs and not in others.
// Stores and reductions through an interleaved map (measured on an H200: tools/gpu-probe/im2colil28.cpp) write the
// chunks a load of the box would read, clipped, in the same order (a later row over an earlier one where they overlap).
unsigned interleaveChunkBytes(const ptx::TensorMap& map) { return map.interleave == 2 ? 32 : 16; }

// Completes a tensor load's bytes on its mbarrier; an interleaved map's in 16-byte pieces, in order, so that a phase
// expecting fewer bytes (the map's box bytes) completes once those have arrived, as it may on the GPU.
void completeTensorTx(uint8_t* bar, const ptx::TensorMap& map, uint64_t bytes) {
  if (!map.interleave) return mbar::completeTx(bar, int64_t(bytes));
  for (uint64_t piece = 0; piece < bytes; piece += 16) mbar::completeTx(bar, 16);
}

// im2col copies through an interleaved map (measured on an H200 with tools/gpu-probe/im2colil28.cpp, results in
// tools/gpu-probe/results/im2colil28-h200-2026-11-28.txt, and conformance ptx.async_TensorCopy.Golden.
// im2col_interleave*): each "pixel" is one chunk of the interleave's bytes, and dimension 0 (counting chunks, as in
// tile mode) is traversed like a spatial dimension: the pixels run from the coordinates through dimensions
// 0..rank-3, corner and im2col offset k belonging to dimension k, each wrapping within its bounding box (lower corner
// to size - 1 + upper corner) and carrying into the next, the last into N (dimension rank - 1, which does not wrap);
// dimension rank - 2 stays at its coordinate (bound checked), as in tile mode. pixelsPerColumn counts chunks, packed
// densely in shared memory (swizzled in 16-byte pieces); channelsPerPixel only sizes the map's box bytes. So such a
// copy moves pixelsPerColumn chunks, which the mbarrier completes in 16-byte pieces as for tile loads. Stores
// (.im2col_no_offs, no offsets) and reductions through such a map are legal and write the same chunks in traversal
// order (a later chunk over an earlier one; reductions apply each), unlike those through non-interleaved maps.

// The rows of a box (dimension 0 innermost, the elements of a row contiguous in shared memory), as coordinates of
// dimensions 1..rank-1 of the row read or written, visited in shared-memory order (interleaved im2col: dimensions
// 0..rank-1, each row a single chunk).
// Tile mode: the box's rows in row-major order; element k of dimension i at start[i] + k * elementStride[i].
// im2col mode (measured on an H100: conformance ptx.async_TensorCopy.Golden.im2col_*): a row is a pixel of an
// N(D)(H)WC tensor. The first is at the coordinates; each next one moves the traversal stride (the element stride)
// along W, wrapping within the bounding box of each spatial dimension (W, H, D: lower corner to size - 1 + upper
// corner) back to the lower corner and carrying into the next dimension, the last into N, which does not wrap. The
// pixel read is the traversal position plus the im2col offsets of the spatial dimensions.
struct BoxRows {
  unsigned rank = 1;
  unsigned lowest = 1;  // the first dimension the rows move in (0: interleaved im2col)
  uint64_t rows = 1;
  int64_t position[kMaxTensorRank] = {};  // of the current row
  int64_t first[kMaxTensorRank] = {}, last[kMaxTensorRank] = {}, step[kMaxTensorRank] = {};
  int64_t offset[kMaxTensorRank] = {};
  bool wraps[kMaxTensorRank] = {};
  bool fixed[kMaxTensorRank] = {};  // stays at its coordinate (interleaved im2col: dimension rank - 2)

  // The row's coordinate in dimension i (1..rank-1).
  int64_t coordinate(unsigned i) const { return position[i] + offset[i]; }
  void next() {
    for (unsigned i = lowest; i < rank; ++i) {
      if (fixed[i]) continue;
      position[i] += step[i];
      if (!wraps[i] || position[i] <= last[i]) return;
      position[i] = first[i];
    }
  }
};

// The shared memory of a piece of a box (at most 16 bytes, within one 16-byte chunk) at `offset` in `owner`'s block,
// swizzled as tensorBox (below) describes (swizzleBits: the tensor map's mode, 0 none). Null after a fault (past the
// end of the block).
uint8_t* boxPiece(Warp& w, const Op* op, int lane, Cta& owner, uint64_t offset, unsigned swizzleBits, unsigned n) {
  if (swizzleBits) offset ^= ((offset >> 7) & ((1u << swizzleBits) - 1)) << 4;
  if (offset + n > owner.sharedBytes) {
    raiseFault(w, op, lane, FaultKind::IllegalAddress, offset, "swizzled tensor box past the end of shared memory");
    return nullptr;
  }
  return owner.shared + offset;
}

// One unit of a packed tiled map (16 elements of 4 or 6 bits; ptx/tensor_map.h), unit `unit` of the row at
// `rowAddress`, at `offset` in `owner`'s shared memory (swizzled as 16-byte pieces are: a unit never straddles one).
// Loads fill elements outside the tensor and the padding of an ALIGN16B unit with zeros (the types take no NaN
// fill); stores write the unit's elements inside the tensor (dimension 0 of a 16U4_ALIGN8B map is even, so whole
// bytes). Not measured on a GPU (none of compute capability 10 or 12 here). False after a fault.
bool packedUnit(Warp& w, const Op* op, int lane, const ptx::TensorMap& map, TensorKind kind, bool rowInside,
                uint64_t rowAddress, uint64_t unit, uint64_t offset, Cta& owner) {
  const unsigned sharedBytes = map.packedSharedBytes(), globalBytes = map.packedGlobalBytes();
  const unsigned bits = map.dataType == ptx::TensorMapType::u6x16Padded ? 6 : 4;
  const uint64_t first = unit * ptx::TensorMap::kPackedUnitElements;
  const uint64_t elements = !rowInside || first >= map.dims[0]
                                ? 0
                                : std::min<uint64_t>(ptx::TensorMap::kPackedUnitElements, map.dims[0] - first);
  const unsigned bytes = unsigned(elements * bits / 8);
  const uint64_t global = rowAddress + unit * globalBytes;
  uint8_t* s = boxPiece(w, op, lane, owner, offset, map.swizzle, sharedBytes);
  if (!s) return false;
  if (bytes && !w.cta->job->lp.memory->check(global, bytes, kind != kTensorLoad)) {
    raiseFault(w, op, lane, FaultKind::IllegalAddress, global, "tensor element outside device memory");
    return false;
  }
  if (kind == kTensorLoad) {
    std::memset(s, 0, sharedBytes);
    if (bytes) std::memcpy(s, reinterpret_cast<const uint8_t*>(global), bytes);
  } else if (bytes) {
    std::memcpy(reinterpret_cast<uint8_t*>(global), s, bytes);
  }
  return true;
}

// Copies the box at coordinates `start` (im2col: and `offsets`) between the tensor (global memory) and the dense box
// in shared memory: rows of ceil(box[0] / elementStride[0]) elements (im2col: channelsPerPixel), dimension 0's stride
// taken as 1 as an H100 does (BoxRows gives the rows). Loads fill elements outside the tensor; stores and reductions
// skip them. Swizzled boxes move each 16-byte chunk within its 128-byte row: chunk bits [4, 4 + b) of the shared
// address are XOR-ed with bits [7, 7 + b) (b = 1, 2, 3 for the 32, 64, 128-byte modes), so the pattern repeats every
// 256, 512 or 1024 bytes; a swizzled box whose rows are shorter than the swizzle span (32, 64 or 128 bytes) places each
// row at the span, as an H100 does. The shared memory is the CTA's that the address names (another CTA's of the
// cluster through a shared::cluster address), or with `multicastTo` that CTA's at the address's offset. Returns the
// box's bytes, 0 after a fault.
uint64_t tensorBox(Warp& w, const Op* op, const TensorCopyOperands& v, int lane, const ptx::TensorMap& map,
                   const int32_t* start, Cta* multicastTo = nullptr) {
  const TensorKind kind = v.kind;
  const unsigned rank = map.rank;
  // An interleaved map's dimension-0 unit is a whole chunk of the interleave's bytes (see above).
  // A packed map's unit is 16 elements (ptx/tensor_map.h), eb bytes in shared memory (packedUnit moves them).
  const unsigned eb = map.interleave ? interleaveChunkBytes(map) : map.elementBytes();
  const unsigned unitElements = map.packed() ? ptx::TensorMap::kPackedUnitElements : 1;
  if (map.packed() && (v.im2col || map.interleave || start[0] % int32_t(unitElements))) {
    // cuemu's own limits (no GPU of compute capability 10 or 12 measured here): tiled copies of whole units
    raiseFault(
        w, op, lane, FaultKind::IllegalInstruction, 0,
        v.im2col || map.interleave
            ? "an im2col or interleaved copy of a packed 4/6-bit tensor map (not supported by cuemu)"
            : fmt::format("a packed 4/6-bit tensor copy at dimension-0 coordinate {}, not a multiple of 16", start[0]));
    return 0;
  }
  BoxRows rows;
  rows.rank = rank;
  uint32_t rowElements = 0, step0 = 1;
  if (map.interleave && rank < 3) {  // cuTensorMapEncodeTiled refuses them; a map edited in place may be one
    raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, "an interleaved tensor map of rank below 3");
    return 0;
  }
  if (v.im2col && kind != kTensorLoad && !map.interleave) {
    // measured: an H100 stops a .im2col_no_offs store through a non-interleaved map with an illegal instruction
    // (conformance ptx.async_TensorCopy_Faults.Golden.store_im2col_no_offs_nhwc); through an interleaved map it runs
    // (store_im2col_no_offs_interleave16)
    raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0, "im2col tensor stores and reductions (sm_100 and later)");
    return 0;
  }
  if (v.im2col) {
    // interleaved: one chunk a row, dimension 0 traversed, rank - 2 fixed (see above)
    const unsigned lowest = map.interleave ? 0 : 1;
    rowElements = map.interleave ? 1 : map.channels;
    rows.rows = map.pixels;
    rows.lowest = lowest;
    for (unsigned i = lowest; i < rank; ++i) {
      const bool spatial = i + 2 < rank + lowest;
      rows.position[i] = start[i];
      rows.step[i] = map.elementStrides[i];
      rows.wraps[i] = spatial;
      rows.fixed[i] = map.interleave && i + 2 == rank;
      if (!spatial) continue;
      const unsigned k = i - lowest;  // the corner and offset of dimension i
      rows.first[i] = map.lowerCorner[k];
      rows.last[i] = int64_t(map.dims[i]) - 1 + map.upperCorner[k];
      // stores and reductions (.im2col_no_offs) have none
      rows.offset[i] = kind == kTensorLoad ? uint16_t(start[kOffsetSlot + k]) : 0;
      if (start[i] < rows.first[i] || start[i] > rows.last[i]) {
        // measured: an H100 stops such a copy with an illegal instruction
        raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0,
                   fmt::format("im2col tensor copy starting at {} in dimension {}, outside the bounding box {}..{}",
                               start[i], i, rows.first[i], rows.last[i]));
        return 0;
      }
    }
  } else {
    for (unsigned i = 0; i < rank; ++i) {
      // measured on an H100: dimension 0's element stride moves nothing (the box row is contiguous), except in an
      // interleaved map, whose rows step over chunks
      const uint32_t step = i == 0 && !map.interleave ? 1 : map.elementStrides[i];
      const bool single = map.interleave && i + 2 == rank;  // interleaved: one row of dimension rank - 2
      const uint32_t count = single                   ? 1
                             : i == 0 && map.packed() ? map.box[0] / unitElements
                                                      : (map.box[i] + step - 1) / step;
      if (i == 0) {
        rowElements = count;
        step0 = step;
        continue;
      }
      rows.rows *= count;
      rows.position[i] = rows.first[i] = start[i];
      rows.step[i] = step;
      rows.last[i] = int64_t(start[i]) + int64_t(count - 1) * step;
      rows.wraps[i] = true;
    }
  }
  // measured: loads of the tf32 types round each f32 to tf32 (10 fraction bits, to nearest; no subnormal flush)
  const bool toTf32 =
      kind == kTensorLoad && (map.dataType == ptx::TensorMapType::tf32 || map.dataType == ptx::TensorMapType::tf32ftz);
  // (a packed type completes its units' packed bytes: CUTLASS's sm_120 kernels expect the elements' bits / 8 of a
  // 16U6_ALIGN16B box, not the padded bytes shared memory receives)
  const uint64_t bytes = rows.rows * rowElements * (map.packed() ? map.packedGlobalBytes() : eb);
  const unsigned swizzleBits = map.swizzle;  // 0 none, 1 32B, 2 64B, 3 128B
  const uint64_t rowBytes = uint64_t(rowElements) * eb;
  // interleaved im2col: the chunks packed densely, whatever the swizzle
  const bool dense = v.im2col && map.interleave;
  const uint64_t pitch = swizzleBits && !dense ? std::max<uint64_t>(rowBytes, 16u << swizzleBits) : rowBytes;
  const uint64_t footprint = rows.rows * pitch;
  uint64_t smem = async::laneAddress(w, v.shared, lane);
  if (smem % 128) {
    raiseFault(w, op, lane, FaultKind::MisalignedAddress, smem, "tensor copy shared address not 128-byte aligned");
    return 0;
  }
  Cta* owner = multicastTo;
  uint64_t sharedBase = smem & ((uint64_t(1) << kClusterRankShift) - 1);
  if (!owner) {
    uint8_t* shared = async::lanePointer(w, op, v.shared, lane, footprint, 128, kind == kTensorLoad);
    if (!shared) return 0;
    const bool generic = v.shared.where == async::kGeneric;
    owner = generic ? clusterSharedOwner(*w.cta, smem) : clusterSharedTarget(*w.cta, smem).cta;
    sharedBase = reinterpret_cast<uint64_t>(shared) - reinterpret_cast<uint64_t>(owner->shared);
  }
  const Reducer reduce = kind == kTensorReduce ? kReducers[tensorReducer(v.redOp, map.dataType)] : nullptr;
  if (kind == kTensorReduce && !reduce) {
    raiseFault(w, op, lane, FaultKind::IllegalInstruction, 0,
               "reduction not defined for the tensor map's element type");
    return 0;
  }
  const uint64_t fill = oobFill(map);
  const MemoryValidator& memory = *w.cta->job->lp.memory;
  for (uint64_t r = 0; r < rows.rows; ++r, rows.next()) {
    bool rowInside = true;
    uint64_t rowAddress = map.address;
    for (unsigned i = rows.lowest; i < rank; ++i) {
      const int64_t x = rows.coordinate(i);
      if (x < 0 || uint64_t(x) >= map.dims[i]) rowInside = false;
      rowAddress += uint64_t(x) * (i ? map.strides[i - 1] : eb);
    }
    for (uint32_t j = 0; j < rowElements; ++j) {
      if (map.packed()) {
        if (!packedUnit(w, op, lane, map, kind, rowInside, rowAddress, uint64_t(start[0]) / unitElements + j,
                        sharedBase + r * pitch + uint64_t(j) * eb, *owner))
          return 0;
        continue;
      }
      // dimension 0 within the row, unless the rows move in it
      const int64_t x0 = rows.lowest ? int64_t(start[0]) + int64_t(j) * step0 : 0;
      const bool inside = rowInside && x0 >= 0 && uint64_t(x0) < map.dims[0];
      const uint64_t global = rowAddress + uint64_t(x0) * eb;
      if (inside && !memory.check(global, eb, kind != kTensorLoad)) {
        raiseFault(w, op, lane, FaultKind::IllegalAddress, global, "tensor element outside device memory");
        return 0;
      }
      // an element, or an interleave chunk in 16-byte pieces (each swizzled on its own)
      for (unsigned done = 0; done < eb; done += 16) {
        const unsigned n = std::min(eb - done, 16u);
        uint8_t* s = boxPiece(w, op, lane, *owner, sharedBase + r * pitch + uint64_t(j) * eb + done, swizzleBits, n);
        if (!s) return 0;
        uint8_t* g = reinterpret_cast<uint8_t*>(global + done);
        if (kind == kTensorLoad) {
          if (!inside) {
            for (unsigned k = 0; k < n; k += std::min(n, 8u)) std::memcpy(s + k, &fill, std::min(n, 8u));
          } else if (toTf32) {
            for (unsigned k = 0; k < n; k += 4) {
              uint32_t f;
              std::memcpy(&f, g + k, 4);
              if ((f & 0x7f800000u) != 0x7f800000u) f = (f + 0x1000u) & ~0x1fffu;  // ties away from zero
              std::memcpy(s + k, &f, 4);
            }
          } else {
            std::memcpy(s, g, n);
          }
        } else if (inside) {
          if (reduce)
            reduce(g, s, n);
          else
            std::memcpy(g, s, n);
        }
      }
    }
  }
  return bytes;
}

// cp.async.bulk.tensor / cp.reduce.async.bulk.tensor, tile mode (TensorCopyOperands).
const Op* tensorCopy(Warp& w, const Op* op) {
  const TensorCopyOperands v = TensorCopyOperands::of(*op);
  const TensorKind kind = v.kind;
  const unsigned rank = v.rank;
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    ptx::TensorMap map;
    if (!readTensorMap(w, op, i, R<uint64_t>(w, v.map)[i], map, v.packedTypes)) return nullptr;
    if (map.rank != rank)
      return raiseFault(w, op, i, FaultKind::IllegalInstruction, 0,
                        fmt::format("a {}-dimensional tensor copy of a tensor map of rank {}", rank, map.rank));
    if (map.im2col != v.im2col)
      return raiseFault(w, op, i, FaultKind::IllegalInstruction, 0,
                        fmt::format("a {} tensor copy of {} tensor map", v.im2col ? "im2col" : "tile",
                                    map.im2col ? "an im2col" : "a tiled"));
    if (v.multicast) {
      // the same offsets of box and mbarrier in every CTA of the 16-bit mask
      const uint64_t barOffset = async::laneAddress(w, v.mbarrier, i) & ((uint64_t(1) << kClusterRankShift) - 1);
      const uint32_t mask = R<uint32_t>(w, v.ctaMask)[i] & 0xffffu;
      if (!checkMulticastMask(w, op, i, mask)) return nullptr;
      const std::vector<Cta*>& ctas = w.cta->cluster->ctas;
      for (uint32_t r = 0; r < ctas.size(); ++r) {
        if (!((mask >> r) & 1)) continue;
        if (barOffset + 8 > ctas[r]->sharedBytes || (barOffset & 7))
          return raiseFault(w, op, i, FaultKind::IllegalAddress, barOffset,
                            "mbarrier outside shared memory (multicast)");
        const uint64_t bytes =
            tensorBox(w, op, v, i, map, R<int32_t>(w, v.coordinates) + i * kCoordinateBlock, ctas[r]);
        if (!bytes) return nullptr;
        completeTensorTx(ctas[r]->shared + barOffset, map, bytes);
      }
      continue;
    }
    uint8_t* bar = nullptr;
    if (kind == kTensorLoad && !(bar = async::lanePointer(w, op, v.mbarrier, i, 8, 8, true))) return nullptr;
    uint64_t bytes = tensorBox(w, op, v, i, map, R<int32_t>(w, v.coordinates) + i * kCoordinateBlock);
    if (!bytes) return nullptr;
    if (bar) completeTensorTx(bar, map, bytes);
  }
  return op + 1;
}

// tensormap.replace: one field of the 128-byte tensor map at `object` (global, shared::cta or generic) set from
// `value` (a u32 or u64 register), with `ordinal` naming the dimension of the per-dimension fields. The PTX values
// are what cuTensorMapEncodeTiled takes (sizes, strides in bytes, a rank of rank - 1, the .elemtype codes); the map
// holds them as ptx/tensor_map.h lays them out. Measured on an H100: only the field changes, the derived fields
// (box bytes, shared alignment) keep their values.
enum class TensormapField : uint32_t {
  globalAddress,
  rank,
  boxDim,
  globalDim,
  globalStride,
  elementStride,
  elemtype,
  interleaveLayout,
  swizzleMode,
  fillMode
};

struct TensormapReplaceOperands {
  static constexpr uint32_t kFieldShift = async::kOpBits, kOrdinalShift = kFieldShift + 4;
  async::AddressSlot object;
  uint32_t value = 0;
  TensormapField field{};
  uint32_t ordinal = 0;

  static TensormapReplaceOperands of(const Op& op) {
    return {async::AddressSlot::of(op, 0), op.c, TensormapField((op.aux >> kFieldShift) & 15),
            (op.aux >> kOrdinalShift) & 7};
  }
  void into(Op& op) const {
    op.aux = uint32_t(field) << kFieldShift | ordinal << kOrdinalShift;
    op.c = value;
    object.into(op, 0);
  }
};

// The bytes of a tensor map that tensormap.replace or tensormap.cp_fenceproxy names. An H100 allocates a CTA's shared
// memory in 128-byte units, and a map edited in place may run past a smaller block into the rest of its unit (as
// numba-cuda's test of tensormap.replace on a 4-byte shared array does).
constexpr uint64_t kSharedAllocationUnit = 128;
uint8_t* tensorMapObject(Warp& w, const Op* op, const async::AddressSlot& slot, int lane, bool write) {
  const uint64_t addr = async::laneAddress(w, slot, lane);
  Cta& cta = *w.cta;
  Cta* owner = slot.where == async::kShared    ? &cta
               : slot.where == async::kGeneric ? clusterSharedOwner(cta, addr)
                                               : nullptr;
  if (!owner) {
    if (slot.where == async::kGeneric) {  // a generic address outside shared memory is a global one
      if (cta.job->lp.memory->check(addr, 128, write)) return reinterpret_cast<uint8_t*>(addr);
      raiseFault(w, op, lane, FaultKind::IllegalAddress, addr, "tensor map address outside device memory");
      return nullptr;
    }
    return async::lanePointer(w, op, slot, lane, 128, 1, write);
  }
  const uint64_t off =
      slot.where == async::kShared ? addr - cta.sharedWindow : addr - reinterpret_cast<uint64_t>(owner->shared);
  const uint64_t window = (uint64_t(owner->sharedBytes) + kSharedAllocationUnit - 1) & ~(kSharedAllocationUnit - 1);
  if (off <= window && 128 <= window - off) return owner->shared + off;
  raiseFault(w, op, lane, FaultKind::IllegalAddress, addr, "tensor map outside shared memory");
  return nullptr;
}

const Op* tensormapReplace(Warp& w, const Op* op) {
  namespace L = ptx::tensor_map_layout;
  const TensormapReplaceOperands v = TensormapReplaceOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* map = tensorMapObject(w, op, v.object, i, true);
    if (!map) return nullptr;
    const uint64_t x = v.field == TensormapField::globalAddress || v.field == TensormapField::globalStride
                           ? R<uint64_t>(w, v.value)[i]
                           : R<uint32_t>(w, v.value)[i];
    const unsigned k = v.ordinal;
    switch (v.field) {
      case TensormapField::globalAddress: L::store<uint64_t>(map, L::kAddress, x); break;
      case TensormapField::rank: L::setField(map, L::kRankMinusOne, uint32_t(x)); break;
      case TensormapField::boxDim: map[L::kBox + k] = uint8_t(x - 1); break;
      case TensormapField::globalDim: L::store<uint32_t>(map, L::kDims + 4 * k, uint32_t(x - 1)); break;
      // ordinal 4 names no stride; an H100 writes it where the formula puts it: the low 32 bits over the word of high
      // bits (kStrides + 16), its high bits at bits 16..19 of that word (conformance
      // ptx.async_TensorCopy.Golden.replace_global_stride_ordinal_4_map)
      case TensormapField::globalStride: L::setGlobalStride(map, k, x); break;
      case TensormapField::elementStride: L::setElementStride(map, k, uint32_t(x)); break;
      case TensormapField::elemtype: L::setElemtype(map, uint32_t(x)); break;
      case TensormapField::interleaveLayout: L::setField(map, L::kInterleave, uint32_t(x)); break;
      case TensormapField::swizzleMode: L::setField(map, L::kSwizzle, uint32_t(x)); break;
      case TensormapField::fillMode: L::setField(map, L::kNanFill, uint32_t(x)); break;
    }
  }
  return op + 1;
}

// tensormap.cp_fenceproxy: the 128-byte map copied from shared to global memory (the copy is the whole effect:
// the interpreter has one proxy).
const Op* tensormapCopy(Warp& w, const Op* op) {
  const BulkCopyOperands v = BulkCopyOperands::of(*op);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint8_t* src = tensorMapObject(w, op, v.source, i, false);
    if (!src) return nullptr;
    uint8_t* dst = async::lanePointer(w, op, v.destination, i, 128, 1, true);
    if (!dst) return nullptr;
    std::memmove(dst, src, 128);
  }
  return op + 1;
}

}  // namespace

namespace lowering {

KernelLowerer::Addr KernelLowerer::addressIn(const Instruction& in, const Operand& o, ptx::Space space) {
  Instruction copy = in;
  copy.space = space;
  return address(copy, o);
}

async::AddressSlot KernelLowerer::asyncSlot(const Addr& a, int slot) {
  async::Where where = async::kShared;
  if (a.space == mem::Generic)
    where = async::kGeneric;
  else if (a.space == mem::Global)
    where = async::kGlobal;
  else if (a.space != mem::Shared)
    fail(line_, "asynchronous copy operand in an unsupported state space");
  if (slot > 0 && a.imm != int64_t(int32_t(a.imm))) fail(line_, "address offset out of range");
  return async::AddressSlot{a.base, a.baseSize == 8, where, a.imm};
}

void KernelLowerer::lowerTensorCopy(const Instruction& in) {
  using ptx::Mod;
  for (Mod m : {Mod::im2col_w, Mod::im2col_w_128, Mod::tile_gather4, Mod::tile_scatter4})
    if (fn_->hasMod(in, m)) return unsupported(in, "the tile and im2col modes of tensor copies only");
  const unsigned rank = fn_->hasMod(in, Mod::d1)   ? 1
                        : fn_->hasMod(in, Mod::d2) ? 2
                        : fn_->hasMod(in, Mod::d3) ? 3
                        : fn_->hasMod(in, Mod::d4) ? 4
                        : fn_->hasMod(in, Mod::d5) ? 5
                                                   : 0;
  const bool load = in.opcode == Opcode::CpAsyncBulkTensor && in.space != ptx::Space::global;
  const bool im2col = fn_->hasMod(in, load ? Mod::im2col : Mod::im2col_no_offs);
  if (fn_->hasMod(in, load ? Mod::im2col_no_offs : Mod::im2col))
    fail(line_, load ? "loads take .im2col, not .im2col_no_offs" : "stores and reductions take .im2col_no_offs");
  if (im2col && rank < 3) fail(line_, "im2col tensor copies are 3d to 5d");
  const Operand& tensor = opnd(in, load ? 1 : 0);
  if (rank == 0 || tensor.kind != OperandKind::Bracket || tensor.value != 2)
    fail(line_, "tensor operand [map, {coordinates}]");
  const Operand& map = fn_->elems[tensor.index];
  const Operand& coords = fn_->elems[tensor.index + 1];
  if (coords.kind != OperandKind::Vector || uint64_t(coords.value) != rank) fail(line_, "tensor coordinates");
  uint32_t mapReg = map.kind == OperandKind::Reg ? src(map, Type::u64) : symbolAddress(map, 8);
  uint32_t block = temp(4 * kCoordinateBlock);
  for (unsigned k = 0; k < rank; ++k) {
    uint32_t x = src(fn_->elems[coords.index + k], Type::s32);
    CoordinateOperands{block, x, k, false}.into(emit(&packCoordinate));
  }
  unsigned nextOperand = load ? 3 : 2;
  if (im2col && load) {  // {offsets}: one u16 per spatial dimension
    const Operand& offsets = opnd(in, nextOperand++);
    if (offsets.kind != OperandKind::Vector || uint64_t(offsets.value) != rank - 2)
      fail(line_, fmt::format("im2col offsets: a vector of {} 16-bit values", rank - 2));
    for (unsigned k = 0; k + 2 < rank; ++k) {
      uint32_t x = src(fn_->elems[offsets.index + k], Type::u16);
      CoordinateOperands{block, x, kOffsetSlot + k, true}.into(emit(&packCoordinate));
    }
  }
  Addr smem = addressIn(in, opnd(in, load ? 0 : 1), load ? in.space : in.space2);
  std::optional<Addr> bar;
  if (load) bar = addressIn(in, opnd(in, 2), ptx::Space::shared);
  TensorKind kind = load ? kTensorLoad : in.opcode == Opcode::CpReduceAsyncBulkTensor ? kTensorReduce : kTensorStore;
  const bool multicast = load && fn_->hasMod(in, Mod::multicast_cluster);
  if (multicast && smem.space != mem::Shared)
    return unsupported(in, "multicast tensor copies other than into shared memory");
  const uint32_t mask = multicast ? src(opnd(in, nextOperand), Type::u32) : 0;  // a 16-bit operand, zero-extended
  TensorCopyOperands v;
  v.shared = asyncSlot(smem, 0);
  if (bar) v.mbarrier = asyncSlot(*bar, 2);
  v.map = mapReg;
  v.coordinates = block;
  v.ctaMask = mask;
  v.kind = kind;
  v.rank = rank;
  v.redOp = in.redOp;
  v.multicast = multicast;
  v.im2col = im2col;
  for (const ptx::Target& t : mod_.targets) v.packedTypes |= t.smVersion >= 100;
  v.into(emit(&tensorCopy));
}

void KernelLowerer::lowerTensormapReplace(const Instruction& in) {
  using ptx::Mod;
  static constexpr std::pair<Mod, TensormapField> kFields[] = {
      {Mod::global_address, TensormapField::globalAddress},
      {Mod::rank, TensormapField::rank},
      {Mod::box_dim, TensormapField::boxDim},
      {Mod::global_dim, TensormapField::globalDim},
      {Mod::global_stride, TensormapField::globalStride},
      {Mod::element_stride, TensormapField::elementStride},
      {Mod::elemtype, TensormapField::elemtype},
      {Mod::interleave_layout, TensormapField::interleaveLayout},
      {Mod::swizzle_mode, TensormapField::swizzleMode},
      {Mod::fill_mode, TensormapField::fillMode}};
  TensormapReplaceOperands v;
  const auto* f =
      std::find_if(std::begin(kFields), std::end(kFields), [&](const auto& p) { return fn_->hasMod(in, p.first); });
  if (f == std::end(kFields)) return unsupported(in, "tensormap.replace of this field (sm_100 and later)");
  v.field = f->second;
  const bool wide = v.field == TensormapField::globalAddress || v.field == TensormapField::globalStride;
  const bool ordinal = v.field == TensormapField::boxDim || v.field == TensormapField::globalDim ||
                       v.field == TensormapField::globalStride || v.field == TensormapField::elementStride;
  if (ordinal) {
    const Operand& o = opnd(in, 1);
    if (o.kind != OperandKind::Imm || o.value < 0 || o.value > 4) fail(line_, "tensormap.replace ordinal 0..4");
    v.ordinal = uint32_t(o.value);
  }
  if (v.field == TensormapField::elemtype) {
    const Operand& o = opnd(in, 1);
    if (o.kind == OperandKind::Imm && (o.value < 0 || o.value > 12))
      return unsupported(in, "tensormap.replace of a sub-byte element type (sm_100 and later)");
  }
  v.object = asyncSlot(address(in, opnd(in, 0)), 0);
  v.value = src(opnd(in, ordinal ? 2 : 1), wide ? Type::u64 : Type::u32);
  v.into(emit(&tensormapReplace));
}

void KernelLowerer::lowerAsyncCopy(const Instruction& in) {
  const bool hint = in.has(ptx::Flag::cache_hint);
  switch (in.opcode) {
    case Opcode::CpAsync: {
      const Operand& size = opnd(in, 2);
      if (size.kind != OperandKind::Imm || (size.value != 4 && size.value != 8 && size.value != 16))
        fail(line_, "cp.async size must be 4, 8 or 16");
      CpAsyncOperands v;
      v.destination = asyncSlot(address(in, opnd(in, 0)), 0);
      v.source = asyncSlot(addressIn(in, opnd(in, 1), in.space2), 1);
      v.bytes = uint32_t(size.value);
      if (in.numOperands - (hint ? 1 : 0) > 3) {
        const Operand& o = opnd(in, 3);
        if (o.kind == OperandKind::Reg && regType(o.index) == Type::pred)
          v.ignoreSrc = srcPred(o, v.ignoreNegated);
        else
          v.srcSize = src(o, Type::u32);
      }
      v.into(emit(&cpAsync));
      return;
    }
    case Opcode::CpAsyncMbarrierArrive: {
      CpAsyncArriveOperands{asyncSlot(address(in, opnd(in, 0)), 0), fn_->hasMod(in, ptx::Mod::noinc)}.into(
          emit(&cpAsyncMbarrierArrive));
      return;
    }
    case Opcode::CpAsyncBulk:
    case Opcode::CpReduceAsyncBulk: {
      if (fn_->hasMod(in, ptx::Mod::cp_mask)) return unsupported(in, "byte masks of bulk copies");
      uint32_t reducer = 0;
      if (in.opcode == Opcode::CpReduceAsyncBulk) {
        reducer = reducerIndex(in.redOp, in.type());
        if (!reducer) return unsupported(in);
      }
      const bool sharedSource = in.space2 == ptx::Space::shared || in.space2 == ptx::Space::shared_cta;
      const bool toOtherCta = sharedSource && in.space == ptx::Space::shared_cluster;
      const bool multicast = fn_->hasMod(in, ptx::Mod::multicast_cluster);
      Addr dst = address(in, opnd(in, 0)), srcAddr = addressIn(in, opnd(in, 1), in.space2);
      uint32_t size = src(opnd(in, 2), Type::u32);
      bool completeTx = fn_->hasMod(in, ptx::Mod::mbarrier_complete_tx_bytes);
      // the mbarrier is in the destination's shared memory; a multicast mask and a cache policy follow it
      std::optional<Addr> bar;
      if (completeTx) bar = addressIn(in, opnd(in, 3), ptx::Space::shared);
      if (multicast) {
        if (dst.space != mem::Shared || !bar)
          return unsupported(in, "multicast bulk copies other than into shared memory");
        uint32_t mask = src(opnd(in, 4), Type::u32);  // a 16-bit operand, zero-extended
        uint32_t packed = temp(8);
        h::VectorParts{packed, {size, mask}}.intoPack(emit(&h::pack<uint32_t, uint64_t, 2>));
        size = packed;
      }
      BulkCopyOperands v;
      v.destination = asyncSlot(dst, 0);
      v.source = asyncSlot(srcAddr, 1);
      if (bar) v.mbarrier = asyncSlot(*bar, 2);
      v.size = size;
      v.reducer = reducer;
      v.completeTx = completeTx;
      v.multicast = multicast;
      v.toOtherCta = toOtherCta;
      v.into(emit(&bulkCopy));
      return;
    }
    case Opcode::CpAsyncBulkTensor:
    case Opcode::CpReduceAsyncBulkTensor: return lowerTensorCopy(in);
    case Opcode::TensormapReplace: return lowerTensormapReplace(in);
    case Opcode::TensormapCpFenceproxy: {
      const Operand& size = opnd(in, 2);
      if (size.kind != OperandKind::Imm || size.value != 128) fail(line_, "tensormap.cp_fenceproxy size must be 128");
      BulkCopyOperands v;
      v.destination = asyncSlot(address(in, opnd(in, 0)), 0);
      v.source = asyncSlot(addressIn(in, opnd(in, 1), in.space2), 1);
      v.into(emit(&tensormapCopy));
      return;
    }
    // Copies are complete when issued: groups and waits have nothing to wait for, and without caches a prefetch
    // does nothing.
    case Opcode::CpAsyncCommitGroup:
    case Opcode::CpAsyncWaitGroup:
    case Opcode::CpAsyncWaitAll:
    case Opcode::CpAsyncBulkCommitGroup:
    case Opcode::CpAsyncBulkWaitGroup:
    case Opcode::CpAsyncBulkPrefetch:
    case Opcode::CpAsyncBulkPrefetchTensor: emit(&ctl::nop); return;
    default: return unsupported(in);
  }
}

}  // namespace lowering

}  // namespace ptx::exec
