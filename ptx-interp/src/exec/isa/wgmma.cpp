// Warpgroup matrix instructions (OpClass Matrix, sm_90a): wgmma.mma_async (dense and .sp), wgmma.fence,
// wgmma.commit_group, wgmma.wait_group.
//
// A wgmma.mma_async is one m64nNkK product of the four warps of a warpgroup (warps 4i..4i+3 of the CTA), each
// holding 16 rows of D (and of A when A comes from registers). Row block r of D depends only on row block r of A
// and on all of B, so each warp computes its own m16nNkK share when it reaches the instruction, reading B (and its
// A rows, from a descriptor) from shared memory itself. The ISA makes the accumulators undefined until
// wgmma.wait_group and requires wgmma.fence before their first use, so computing the result at issue is one of the
// behaviours it allows, and the fence and commit_group have nothing to do. wait_group does: on a GPU the product
// is one operation of the warpgroup, which starts once all four warps issued it, so a wait that returns in one warp
// means every warp's share has read its operands. A program may then reuse the shared memory (CUTLASS releases a
// pipeline stage after one thread's wait), so a warp's wait lasts until every live warp of its warpgroup has issued
// as many wgmma.mma_async as it has (until 2026-11-28 it returned at once, and the warps that had not issued yet read
// the next stage: CUTLASS's examples 50 and 63 failed their checks).
//
// Shared-memory operands (PTX ISA "Matrix Descriptor Format", "Shared Memory Matrix Layout"): a 64-bit
// descriptor holds the start address (bits 0-13, in 16-byte units), the leading and stride byte offsets (bits
// 16-29 and 32-45, in 16-byte units), the base offset (bits 49-51) and the swizzle mode (bits 62-63: none,
// 128-byte, 64-byte, 32-byte). The operand is made of core matrices of 8 rows of 16 bytes. K-major (the default;
// imm-trans 0): unswizzled, core matrices along K are LBO apart and groups of 8 rows (M or N) SBO apart; swizzled
// with width W, a row's 32 bytes of K lie in one W-byte line, 8 lines form an atom, atoms of 8 rows are SBO
// apart. MN-major (imm-trans 1, 16-bit types): unswizzled, 16-byte chunks along M/N are SBO apart and groups of 8
// K rows LBO apart; swizzled, W bytes along M/N per line, one line per K row, 8 lines per atom, atoms along M/N
// LBO apart, atoms along K SBO apart. The swizzle XORs address bits 4.. (log2(W/16) of them) with bits 7..,
// on the whole shared address (so a start inside an atom, as a K loop advances it, keeps the pattern).
// Recorded on an H100: the ptx.matrix.wgmma.* golden cases (the probe_* forms read image elements that hold their
// own index).
#include "exec/isa/matrix.h"

#include "exec/lowerer.h"

namespace ptx::exec {

using namespace matrix;

namespace {

using h::R;

// WgmmaSite::flags
constexpr uint8_t kWgmmaARegs = 1;    // A in registers (else a descriptor)
constexpr uint8_t kWgmmaTransA = 2;   // imm-trans-a: A is M-major
constexpr uint8_t kWgmmaTransB = 4;   // imm-trans-b: B is N-major
constexpr uint8_t kWgmmaNegA = 8;     // imm-scale-a -1
constexpr uint8_t kWgmmaNegB = 16;    // imm-scale-b -1
constexpr uint8_t kWgmmaSparse = 32;  // wgmma.mma_async.sp

struct Descriptor {
  uint32_t start, lbo, sbo, swizzle, base;  // bytes; swizzle: the line width (0: none); base: the base offset
  explicit Descriptor(uint64_t d)
      : start(uint32_t(d & 0x3fff) << 4),
        lbo(uint32_t((d >> 16) & 0x3fff) << 4),
        sbo(uint32_t((d >> 32) & 0x3fff) << 4),
        swizzle(std::array<uint32_t, 4>{0, 128, 64, 32}[d >> 62]),
        base(uint32_t(d >> 49) & 7) {}

  // The shared address of the byte `kByte` bytes along K of row `row` (M or N) of a K-major operand.
  uint32_t kMajor(unsigned row, unsigned kByte) const {
    uint32_t off = (row / 8) * sbo;
    if (swizzle)  // K beyond one line (64 bytes of .sp B in 32-byte lines): the next atom, LBO on (not measured)
      off += (kByte / swizzle) * lbo + (row % 8) * swizzle + kByte % swizzle;
    else
      off += (kByte / 16) * lbo + (row % 8) * 16 + kByte % 16;
    return swizzled(start + off);
  }
  // The shared address of the byte `mnByte` bytes along M/N of K row `k` of an MN-major operand.
  uint32_t mnMajor(unsigned mnByte, unsigned k) const {
    uint32_t off;
    if (swizzle)
      off = (mnByte / swizzle) * lbo + (k / 8) * sbo + (k % 8) * swizzle + mnByte % swizzle;
    else
      off = (mnByte / 16) * sbo + (k / 8) * lbo + (k % 8) * 16 + mnByte % 16;
    return swizzled(start + off);
  }
  uint32_t swizzled(uint32_t addr) const {
    if (!swizzle) return addr;
    // the pattern's row is counted from the base offset (measured: a start on row 3 with base offset 3 reads as
    // a start on row 0 of the pattern; with base offset 0 the pattern follows the address)
    const uint32_t row = (addr >> 7) - base;
    return addr ^ ((row & (swizzle / 16 - 1)) << 4);
  }
};

uint64_t signBit(Elem e) {
  switch (e) {
    case Elem::F16:
    case Elem::BF16: return 0x8000;
    case Elem::TF32:
    case Elem::F32: return 0x80000000u;
    case Elem::E4M3:
    case Elem::E5M2: return 0x80;
    default: return 0;
  }
}

int firstLane(const Warp& w) { return std::countr_zero(w.exec | 0x80000000u); }

// Reads `rows` x `cols` elements of `bits` bits of a shared-memory operand into a row-major matrix (rows: M or N;
// cols: K), row by row of the operand: element (r, k) of A, or (n, k) of B stored at out[k * rows + n] when
// `transposeOut` (B as K x N). Returns false after a fault.
// By 16-byte chunks: the layouts (and the swizzle, which moves 16-byte units) keep the 16 bytes of a core-matrix
// row together, K-major along K and MN-major along M/N. False, having read nothing that counts, where a chunk is
// not inside the CTA's shared memory: the per-element path below then faults at the element it always did.
template <unsigned Bytes, class U> bool readOperandChunks(Warp& w, const Descriptor& desc, bool mnMajor,
                                                          unsigned rowBase, unsigned rows, unsigned cols,
                                                          bool transposeOut, uint64_t flip, U* out) {
  constexpr unsigned bytes = Bytes, perChunk = 16 / Bytes;
  using E = std::conditional_t<Bytes == 1, uint8_t, std::conditional_t<Bytes == 2, uint16_t, uint32_t>>;
  const uint8_t* shared = w.cta->shared;
  const uint32_t limit = w.cta->sharedBytes;
  auto element = [&](const uint8_t* p) {
    E v;
    std::memcpy(&v, p, Bytes);
    return U(v ^ flip);
  };
  if (!mnMajor) {
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned k0 = 0; k0 < cols; k0 += perChunk) {
        const uint32_t addr = desc.kMajor(rowBase + r, k0 * bytes);
        if (addr + 16 > limit) return false;
        const uint8_t* p = shared + addr;
        for (unsigned i = 0; i < perChunk; ++i)
          (transposeOut ? out[(k0 + i) * rows + r] : out[r * cols + k0 + i]) = element(p + i * bytes);
      }
  } else {
    for (unsigned r0 = 0; r0 < rows; r0 += perChunk)
      for (unsigned k = 0; k < cols; ++k) {
        const uint32_t addr = desc.mnMajor((rowBase + r0) * bytes, k);
        if (addr + 16 > limit) return false;
        const uint8_t* p = shared + addr;
        for (unsigned i = 0; i < perChunk; ++i)
          (transposeOut ? out[k * rows + r0 + i] : out[(r0 + i) * cols + k]) = element(p + i * bytes);
      }
  }
  return true;
}

// Whether readOperandChunks may read the operand (matrix-tile-lines is on, and whole chunks make up its rows).
bool byChunks(const Warp& w, bool mnMajor, unsigned rowBase, unsigned rows, unsigned cols, unsigned bits) {
  return bits >= 8 && bits <= 32 && fullWarpFastPath(w, Rewrite::MatrixTileLines) &&
         (mnMajor ? rows * bits % 128 == 0 && rowBase * bits % 128 == 0 : cols * bits % 128 == 0);
}

bool readOperand(Warp& w, const Op* op, int lane, const Descriptor& desc, bool mnMajor, unsigned rowBase, unsigned rows,
                 unsigned cols, unsigned bits, bool transposeOut, uint64_t flip, uint64_t* out) {
  const unsigned bytes = std::max(1u, bits / 8);
  if (byChunks(w, mnMajor, rowBase, rows, cols, bits)) {
    auto chunks = bits == 8    ? &readOperandChunks<1, uint64_t>
                  : bits == 16 ? &readOperandChunks<2, uint64_t>
                               : &readOperandChunks<4, uint64_t>;
    if (chunks(w, desc, mnMajor, rowBase, rows, cols, transposeOut, flip, out)) return true;
  }
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned k = 0; k < cols; ++k) {
      const unsigned row = rowBase + r;
      const uint32_t addr = mnMajor ? desc.mnMajor(row * bytes, k) : desc.kMajor(row, k * bits / 8);
      // inside the CTA's own shared memory (the common case) without the general translation
      // (a descriptor's address has no rank bits: it is the own CTA's, which the fault names with them)
      uint8_t* p = addr + bytes <= w.cta->sharedBytes
                       ? w.cta->shared + addr
                       : mem::xlate<mem::Shared>(w, op, lane, w.cta->sharedWindow + addr, bytes, false);
      if (!p) return false;
      uint64_t v = 0;
      std::memcpy(&v, p, bytes);
      if (bits < 8) v = (v >> (k * bits % 8)) & ((1u << bits) - 1);
      (transposeOut ? out[k * rows + r] : out[r * cols + k]) = v ^ flip;
    }
  return true;
}

// (row, column) in D of accumulator register r's element in lane 0 (in lane l: g = l / 4 rows and 2(l % 4) columns
// on). mmaC: register e of an m16n8 block holds row g + 8 (e / 2), column 2t + e % 2; with f16 outputs, register e
// holds both columns of row g + 8e.
Pos accumulatorPos(bool half, unsigned r) {
  const unsigned perBlock = half ? 2 : 4, e = r % perBlock, col = 8 * (r / perBlock);
  return half ? Pos{8 * e, col} : Pos{8 * (e >> 1), col + (e & 1)};
}

// A held in the warp's four registers: element i of register r in lane l, `bits` wide, goes to its place in mma's A
// fragment layout (16 rows of `rowStride`), its sign flipped by `flip`.
template <class T>
void unpackRegisterA(Warp& w, const WgmmaSite& s, unsigned bits, unsigned rowStride, T flip, T* out) {
  const unsigned p = 32 / bits;
  const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
  for (unsigned r = 0; r < 4; ++r) {
    const uint32_t* v = R<uint32_t>(w, s.a[r]);
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned i = 0; i < p; ++i) {
        Pos q = mmaA(l, r * p + i, p, 16);
        out[q.row * rowStride + q.col] = T((v[l] >> (i * bits)) & mask) ^ flip;
      }
  }
}

// Dense wgmma with f16, bf16 or tf32 multiplicands, while narrow-tensor-sums and matrix-tile-lines are on: the
// operands as 32-bit patterns, B read and decoded once for all its column chunks, matrix::narrowSums on each. False
// where it does not apply or an operand is not inside the CTA's shared memory or needs the reference sums: the
// general path then computes the product (and raises the fault) as before.
bool wgmmaNarrow(Warp& w, const WgmmaSite& s) {
  const MatrixSite& ar = s.arith;
  const unsigned N = ar.n, K = ar.k, rowBase = 16 * (w.index % 4);
  const Elem ea = Elem(ar.elem[A]), eb = Elem(ar.elem[B]), ed = Elem(ar.elem[D]);
  const unsigned bits = elemBits(ea);
  const bool aRegs = s.flags & kWgmmaARegs, transA = s.flags & kWgmmaTransA, transB = s.flags & kWgmmaTransB;
  if ((s.flags & kWgmmaSparse) || N % 8 || !narrowProduct(ea, eb, ed, ed, K) ||
      !fullWarpFastPath(w, Rewrite::NarrowTensorSums) || (!aRegs && !byChunks(w, transA, rowBase, 16, K, bits)) ||
      !byChunks(w, transB, 0, N, K, bits))
    return false;
  const uint32_t flipA = (s.flags & kWgmmaNegA) ? uint32_t(signBit(ea)) : 0;
  const uint32_t flipB = (s.flags & kWgmmaNegB) ? uint32_t(signBit(eb)) : 0;
  const int lane0 = firstLane(w);
  constexpr unsigned kMaxB = 16 * 256;  // K x N
  static thread_local uint32_t bbitsT[kMaxB], cbitsT[16 * 256], dbitsT[16 * 256];
  static thread_local float bvT[kMaxB];
  static thread_local int beT[kMaxB];
  // their addresses once (a thread_local named in a loop is looked up again in every iteration)
  uint32_t *const bbits = bbitsT, *const cbits = cbitsT, *const dbits = dbitsT;
  float* const bv = bvT;
  int* const be = beT;
  alignas(64) uint32_t abits[16 * 16];
  alignas(64) float av[16 * 16];
  alignas(64) int ae[16 * 16];
  auto chunks = bits == 16 ? &readOperandChunks<2, uint32_t> : &readOperandChunks<4, uint32_t>;
  if (aRegs) {
    unpackRegisterA<uint32_t>(w, s, bits, K, flipA, abits);
  } else if (!chunks(w, Descriptor(R<uint64_t>(w, s.a[0])[lane0]), transA, rowBase, 16, K, false, flipA, abits)) {
    return false;
  }
  if (!chunks(w, Descriptor(R<uint64_t>(w, s.b)[lane0]), transB, 0, N, K, true, flipB, bbits) ||
      !decodeNarrowBits(ea, abits, 16 * K, av, ae) || !decodeNarrowBits(eb, bbits, K * N, bv, be))
    return false;
  const bool half = ed == Elem::F16;
  if (R<uint8_t>(w, s.scaleD)[lane0]) {
    for (unsigned r = 0; r < s.d.size(); ++r) {
      const uint32_t* v = R<uint32_t>(w, s.d[r]);
      const Pos at = accumulatorPos(half, r);
      uint32_t* base = cbits + at.row * N + at.col;
      if (half)
        for (unsigned l = 0; l < 32; ++l) {
          uint32_t* p = base + (l >> 2) * N + 2 * (l & 3);
          p[0] = v[l] & 0xffff;
          p[1] = v[l] >> 16;
        }
      else
        for (unsigned l = 0; l < 32; ++l) base[(l >> 2) * N + 2 * (l & 3)] = v[l];
    }
  } else {
    std::fill(cbits, cbits + 16 * N, 0u);
  }
  const unsigned chunk = N % 32 == 0 ? 32 : N % 16 == 0 ? 16 : 8;
  for (unsigned j0 = 0; j0 < N; j0 += chunk)
    narrowSums(16, chunk, K, half, half, av, ae, bv + j0, be + j0, N, cbits + j0, dbits + j0, N);
  for (unsigned r = 0; r < s.d.size(); ++r) {
    alignas(64) uint32_t v[32];
    const Pos at = accumulatorPos(half, r);
    const uint32_t* base = dbits + at.row * N + at.col;
    if (half)
      for (unsigned l = 0; l < 32; ++l) {
        const uint32_t* p = base + (l >> 2) * N + 2 * (l & 3);
        v[l] = p[0] | p[1] << 16;
      }
    else
      for (unsigned l = 0; l < 32; ++l) v[l] = base[(l >> 2) * N + 2 * (l & 3)];
    h::storeLanes<uint32_t>(w, s.d[r], v);
  }
  return true;
}

const Op* wgmmaMma(Warp& w, const Op* op) {
  ++w.wgmmaIssued;
  const WgmmaSite& s = w.cta->job->program->wgmmaSites[WgmmaOperands::of(*op).site];
  if (wgmmaNarrow(w, s)) return op + 1;
  const MatrixSite& ar = s.arith;
  const bool sparse = s.flags & kWgmmaSparse;
  const unsigned N = ar.n, K = ar.k, KA = sparse ? K / 2 : K, rowBase = 16 * (w.index % 4);
  const Elem ea = Elem(ar.elem[A]), eb = Elem(ar.elem[B]), ed = Elem(ar.elem[D]);
  const unsigned bitsA = elemBits(ea), bitsB = elemBits(eb);
  const uint64_t flipA = (s.flags & kWgmmaNegA) ? signBit(ea) : 0, flipB = (s.flags & kWgmmaNegB) ? signBit(eb) : 0;
  const int lane0 = firstLane(w);
  static thread_local std::vector<uint64_t> a, b, c, d, chunkB, chunkC, chunkD;
  // every element of a, b and d is written below, and of c unless scale-d is false
  a.resize(16 * KA);
  b.resize(size_t(K) * N);
  c.resize(16 * N);
  d.resize(16 * N);
  // A: this warp's 16 rows
  if (s.flags & kWgmmaARegs) {
    unpackRegisterA<uint64_t>(w, s, bitsA, KA, flipA, a.data());
  } else if (!readOperand(w, op, lane0, Descriptor(R<uint64_t>(w, s.a[0])[lane0]), s.flags & kWgmmaTransA, rowBase, 16,
                          KA, bitsA, false, flipA, a.data())) {
    return nullptr;
  }
  if (!readOperand(w, op, lane0, Descriptor(R<uint64_t>(w, s.b)[lane0]), s.flags & kWgmmaTransB, 0, N, K, bitsB, true,
                   flipB, b.data()))
    return nullptr;
  // C: the accumulators, m16n8 blocks along N (f16 pairs in one register), unless scale-d is false
  const bool half = ed == Elem::F16;
  auto accumulatorSpot = [&](unsigned r) { return accumulatorPos(half, r); };
  if (R<uint8_t>(w, s.scaleD)[lane0]) {
    for (unsigned r = 0; r < s.d.size(); ++r) {
      const uint32_t* v = R<uint32_t>(w, s.d[r]);
      const Pos at = accumulatorSpot(r);
      uint64_t* base = c.data() + at.row * N + at.col;
      for (unsigned l = 0; l < 32; ++l) {
        uint64_t* p = base + (l >> 2) * N + 2 * (l & 3);
        if (half) {
          p[0] = v[l] & 0xffff;
          p[1] = v[l] >> 16;
        } else {
          p[0] = v[l];
        }
      }
    }
  } else {
    std::fill(c.begin(), c.end(), 0);
  }
  // multiply by column chunks: matrix::multiply's row sums handle up to 2048 elements of B at a time. Sparse: each
  // row multiplies the K/2 rows of B its metadata names (as mma.sp does for its 16 rows)
  const unsigned rows = sparse ? 1 : 16, passes = sparse ? 16 : 1;
  const unsigned chunk = N % 32 == 0 && KA * 32 <= 2048 ? 32 : N % 16 == 0 && KA * 16 <= 2048 ? 16 : 8;
  const uint32_t* meta = sparse ? R<uint32_t>(w, s.metadata) : nullptr;
  chunkB.resize(size_t(KA) * chunk);
  chunkC.resize(16 * chunk);
  chunkD.resize(16 * chunk);
  for (unsigned pass = 0; pass < passes; ++pass)
    for (unsigned j0 = 0; j0 < N; j0 += chunk) {
      for (unsigned q = 0; q < KA; ++q) {
        const unsigned kb = sparse ? sparsePosition(ar, meta, pass, q) : q;
        std::memcpy(&chunkB[q * chunk], &b[kb * N + j0], chunk * sizeof(uint64_t));
      }
      for (unsigned i = 0; i < rows; ++i)
        std::memcpy(&chunkC[i * chunk], &c[(pass + i) * N + j0], chunk * sizeof(uint64_t));
      multiply(ar, rows, chunk, KA, a.data() + pass * KA, chunkB.data(), chunkC.data(), chunkD.data(),
               fullWarpFastPath(w, Rewrite::NarrowTensorSums));
      for (unsigned i = 0; i < rows; ++i)
        std::memcpy(&d[(pass + i) * N + j0], &chunkD[i * chunk], chunk * sizeof(uint64_t));
    }
  for (unsigned r = 0; r < s.d.size(); ++r) {
    alignas(64) uint32_t v[32];
    const Pos at = accumulatorSpot(r);
    const uint64_t* base = d.data() + at.row * N + at.col;
    for (unsigned l = 0; l < 32; ++l) {
      const uint64_t* p = base + (l >> 2) * N + 2 * (l & 3);
      v[l] = half ? uint32_t(p[0]) | uint32_t(p[1]) << 16 : uint32_t(p[0]);
    }
    h::storeLanes<uint32_t>(w, s.d[r], v);
  }
  return op + 1;
}

// wgmma.wait_group: the warp stops (Waiting) until every live warp of its warpgroup has issued as many
// wgmma.mma_async as it has (see the top of the file), then goes on; the products themselves are complete.
const Op* wgmmaWaitGroup(Warp& w, const Op* op) {
  const Cta& cta = *w.cta;
  const uint32_t first = w.index & ~3u, end = std::min(first + 4, cta.nwarps);
  for (uint32_t x = first; x < end; ++x) {
    const Warp& sibling = cta.warps[x];
    if (x != w.index && sibling.alive && sibling.wgmmaIssued < w.wgmmaIssued) {
      w.state = WarpState::Waiting;
      w.pc = op;
      return nullptr;
    }
  }
  return op + 1;
}

}  // namespace

namespace lowering {

void KernelLowerer::lowerWgmma(const Instruction& in) {
  // fence, commit_group: the product is complete at issue (above); wait_group: until the warpgroup issued it
  if (in.opcode == Opcode::WgmmaWaitGroup) {
    emit(&wgmmaWaitGroup);
    return;
  }
  if (in.opcode != Opcode::WgmmaMmaAsync && in.opcode != Opcode::WgmmaMmaAsyncSp) return;
  WgmmaSite site;
  MatrixSite& ar = site.arith;
  unsigned n = 0, k = 0;
  const ptx::Mod* mods = fn_->modsOf(in);
  for (uint32_t i = 0; i < in.modCount; ++i) {
    std::string_view t = ptx::modText(mods[i]);
    if (t.substr(0, 5) != ".m64n") continue;
    const size_t kpos = t.find('k', 5);
    for (char ch : t.substr(5, kpos - 5)) n = n * 10 + unsigned(ch - '0');
    for (char ch : t.substr(kpos + 1)) k = k * 10 + unsigned(ch - '0');
  }
  if (n == 0 || in.numTypes != 3) return unsupported(in, "wgmma shape or types");
  const Type dt = in.types[0], at = in.types[1], bt = in.types[2];
  ar.m = 64, ar.n = uint16_t(n), ar.k = uint16_t(k);
  ar.elem[D] = ar.elem[C] = uint8_t(elemOf(dt));
  ar.elem[A] = uint8_t(elemOf(at));
  ar.elem[B] = uint8_t(elemOf(bt));
  ar.flags = kFlagWgmma;
  if (in.has(ptx::Flag::satfinite)) ar.flags |= kFlagSatfinite;
  const bool integer = dt == Type::s32, transposes = at == Type::f16 || at == Type::bf16;
  const Operand& aOp = opnd(in, 1);
  if (aOp.kind == OperandKind::Vector) {
    site.flags |= kWgmmaARegs;
    for (unsigned q = 0; q < 4; ++q) site.a[q] = src(fn_->elems[aOp.index + q], Type::b32);
  } else {
    site.a[0] = src(aOp, Type::b64);
  }
  site.b = src(opnd(in, 2), Type::b64);
  unsigned next = 3;
  if (in.opcode == Opcode::WgmmaMmaAsyncSp) {
    site.flags |= kWgmmaSparse;
    site.metadata = src(opnd(in, next++), Type::b32);
    const Operand& selector = opnd(in, next++);
    if (selector.kind != OperandKind::Imm) fail(line_, "wgmma.mma_async.sp needs an immediate sparsity selector");
    ar.selector = uint8_t(selector.value);
  }
  bool negated = false;
  site.scaleD = srcPred(opnd(in, next++), negated);
  if (negated) fail(line_, "wgmma scale-d cannot be negated");
  auto imm = [&](unsigned i) { return opnd(in, i).value; };
  if (!integer) {
    if (imm(next++) < 0) site.flags |= kWgmmaNegA;
    if (imm(next++) < 0) site.flags |= kWgmmaNegB;
    if (transposes) {
      if (!(site.flags & kWgmmaARegs) && imm(next++)) site.flags |= kWgmmaTransA;
      if (imm(next++)) site.flags |= kWgmmaTransB;
    }
  }
  const Operand& dOp = opnd(in, 0);
  const Type regType = dt == Type::f32 ? Type::f32 : dt == Type::s32 ? Type::s32 : Type::b32;
  std::vector<Dst> pending;
  for (unsigned q = 0; q < unsigned(dOp.value); ++q) {
    const Operand& e = fn_->elems[dOp.index + q];
    const uint32_t read = src(e, regType);
    Dst dd = dst(e, regType);
    if (dd.off != read) fail(line_, "wgmma accumulators must be registers of the accumulator type");
    site.d.push_back(dd.off);
    pending.push_back(dd);
  }
  WgmmaOperands{uint32_t(prog_.wgmmaSites.size())}.into(emit(&wgmmaMma));
  prog_.wgmmaSites.push_back(std::move(site));
  for (const Dst& dd : pending) finish(dd);
}

}  // namespace lowering

}  // namespace ptx::exec
