#include "exec/checking.h"

#include "exec/memory.h"

#include <atomic>
#include <cstring>

namespace ptx::exec {
namespace {

std::atomic<uint32_t> g_checked{0};

}  // namespace

void setCheckedAccesses(uint32_t kinds) { g_checked.store(kinds, std::memory_order_relaxed); }
uint32_t checkedAccesses() { return g_checked.load(std::memory_order_relaxed); }

namespace checking {
namespace {

CheckSite siteOf(const Warp& w, const Op* op, int lane) {
  const Cta& cta = *w.cta;
  const Job& job = *cta.job;
  CheckSite s;
  s.kernel = job.info->name;
  s.program = job.program;
  s.ptxLine = op->line;
  s.block = cta.id;
  uint32_t t = w.index * 32 + uint32_t(lane);
  const Dim3 b = job.lp.block;
  s.thread = Dim3{t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
  return s;
}

// One shared byte's last write and last read: the thread (warp + 1 in the low byte, 0 = none; its lane in the high
// byte, or kSeveralLanes), the warp's barrier count then and its count of barriers and __syncwarps then, the PTX line.
struct Cell {
  uint16_t writer, writeEpoch, reader, readEpoch;
  uint32_t writeLine, readLine;
  uint32_t writeWarpSync, readWarpSync;
};
static_assert(sizeof(Cell) == 3 * sizeof(uint64_t));

uint16_t threadTag(uint16_t warpPlusOne, int lane) { return uint16_t(warpPlusOne | (lane << 8)); }
constexpr int kSeveralLanes = 32;  // the reader "lane" of a byte that lanes of one warp read at one instruction
uint16_t warpOf(uint16_t tag) { return tag & 0xff; }

// The shadow of a CTA's shared memory is kept per 4-byte word while every access to the word covered it whole (its
// 4 bytes then have one history), and per byte once an access covered part of it: the word's cell then says
// kSplitWord and its bytes' cells hold their histories (copies of the word's at the split). The results are those
// of a shadow per byte; whole-word accesses, nearly all of them, visit one cell instead of four.
constexpr uint16_t kSplitWord = 0x8000;  // a word cell's writer: see the byte cells

struct Shadow {
  Cell* words;
  Cell* bytes;
};

// The CTA's checking state, started afresh for each CTA a Cta object runs. Byte cells need no clearing: a split
// copies the word's cell into them first.
Shadow shadowOf(Cta& cta) {
  const Job& job = *cta.job;
  constexpr size_t kCellWords = sizeof(Cell) / sizeof(uint64_t);
  if (cta.checkLaunch != job.launchId || cta.checkCta != cta.linearId) {
    cta.checkLaunch = job.launchId;
    cta.checkCta = cta.linearId;
    cta.checkEpochs.assign(cta.nwarps, 0);
    cta.checkWarpSyncs.assign(cta.nwarps, 0);
    const size_t words = (size_t(cta.sharedBytes) + 3) / 4;
    cta.checkShadow.assign(words * kCellWords, 0);
    if (cta.checkShadowBytes.size() < words * 4 * kCellWords) cta.checkShadowBytes.resize(words * 4 * kCellWords);
  }
  return Shadow{reinterpret_cast<Cell*>(cta.checkShadow.data()), reinterpret_cast<Cell*>(cta.checkShadowBytes.data())};
}

// What a warp's shared accesses are checked against: its CTA's shadow, the warp (+ 1), its barrier count and its
// count of barriers and __syncwarps.
struct SharedView {
  Shadow shadow;
  uint32_t sharedBytes;
  uint16_t me, epoch;
  uint32_t warpSync;
};

// Shared bytes [offset, offset + bytes) accessed by a lane of warp w at op: one hazard report at most per access.
// Between warps a hazard needs no barrier between the two accesses; between lanes of one warp, no barrier and no
// __syncwarp (a store and a store of one instruction are not a hazard: no order is implied within it). Most
// accesses find nothing to report and their cells already as they would leave them (a thread re-reading what it
// read), so those cost a comparison per cell.
void sharedAccess(Warp& w, const Op* op, int lane, const SharedView& v, uint64_t offset, uint32_t bytes, bool write,
                  Checker& checker) {
  if (offset + bytes > v.sharedBytes) return;  // the access faults next
  const uint16_t tag = threadTag(v.me, lane);
  bool reported = false;
  auto visit = [&](Cell & c, uint64_t at) __attribute__((always_inline)) {
    if (!reported) [[likely]] {
      auto report = [&](HazardKind kind, uint32_t earlierLine, bool withinWarp) {
        checker.sharedHazard(siteOf(w, op, lane), kind, earlierLine, at, withinWarp);
        reported = true;
      };
      const HazardKind afterWrite = write ? HazardKind::WriteAfterWrite : HazardKind::ReadAfterWrite;
      if (c.writer && warpOf(c.writer) != v.me) {
        if (c.writeEpoch == v.epoch) [[unlikely]]
          report(afterWrite, c.writeLine, false);
      } else if (c.writer && c.writer != tag && c.writeWarpSync == v.warpSync && !(write && c.writeLine == op->line))
          [[unlikely]] {
        report(afterWrite, c.writeLine, true);
      }
      if (!reported && write && c.reader) {
        if (warpOf(c.reader) != v.me) {
          if (c.readEpoch == v.epoch) [[unlikely]]
            report(HazardKind::WriteAfterRead, c.readLine, false);
        } else if (c.reader != tag && c.readWarpSync == v.warpSync) [[unlikely]] {
          report(HazardKind::WriteAfterRead, c.readLine, true);
        }
      }
    }
    if (write) {
      c.writer = tag;
      c.writeEpoch = v.epoch;
      c.writeWarpSync = v.warpSync;
      c.writeLine = op->line;
    } else if (warpOf(c.reader) != v.me || c.readWarpSync != v.warpSync || c.readLine != op->line) {
      c.reader = tag;
      c.readEpoch = v.epoch;
      c.readWarpSync = v.warpSync;
      c.readLine = op->line;
    } else if (c.reader != tag && c.reader != threadTag(v.me, kSeveralLanes)) {
      // a second lane of the warp read it at this instruction: any lane's write is then after another's read
      c.reader = threadTag(v.me, kSeveralLanes);
    }
  };
  Cell* words = v.shadow.words;
  Cell* byteCells = v.shadow.bytes;
  if ((offset & 3) == 0 && (bytes & 3) == 0) {
    for (uint64_t at = offset; at < offset + bytes; at += 4) {
      Cell& word = words[at / 4];
      if (word.writer != kSplitWord) [[likely]] {
        visit(word, at);
      } else {
        for (uint64_t b = at; b < at + 4; ++b) visit(byteCells[b], b);
      }
    }
    return;
  }
  for (uint64_t b = offset; b < offset + bytes; ++b) {
    Cell& word = words[b / 4];
    if (word.writer != kSplitWord) {
      for (uint64_t k = b & ~uint64_t(3); k < (b & ~uint64_t(3)) + 4; ++k) byteCells[k] = word;
      word.writer = kSplitWord;
    }
    visit(byteCells[b], b);
  }
}

}  // namespace

uint32_t rewritesAllowed() {
  if (!(checkedAccesses() & (kCheckSharedHazards | kCheckGlobalAccesses))) return kAllRewrites;
  // shared-layouts stays: it only lets an access reuse the layout of an unchanged base register
  return kAllRewrites & ~(rewriteBit(Rewrite::AddressAdds) | rewriteBit(Rewrite::ScaledIndices) |
                          rewriteBit(Rewrite::SharedFmaChains));
}

const Op* access(Warp& w, const Op* op) {
  Checker* checker = w.cta->job->lp.checker;
  if (!checker) return op + 1;
  const CheckedAccess v = CheckedAccess::of(*op);
  const mem::Space space = v.space;
  const bool write = v.kind != CheckedAccess::Read;
  const bool atomic = v.kind == CheckedAccess::Atomic;
  const uint32_t checks = checkedAccesses();
  Cta& cta = *w.cta;
  SharedView view{};
  if (checks & kCheckSharedHazards)
    view = SharedView{shadowOf(cta), cta.sharedBytes, uint16_t(w.index + 1), uint16_t(cta.checkEpochs[w.index]),
                      cta.checkWarpSyncs[w.index]};
  uint64_t previous = ~uint64_t(0);
  uint64_t globalAddresses[32];
  uint32_t globalLanes = 0;
  for (uint32_t m = w.exec; m;) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint64_t addr = v.address32 ? uint64_t(h::R<uint32_t>(w, v.address)[i]) : h::R<uint64_t>(w, v.address)[i];
    addr += uint64_t(v.offset);
    bool shared = space == mem::Shared;
    bool global = space == mem::Global;
    if (space == mem::Generic) {
      uint64_t sh = reinterpret_cast<uint64_t>(cta.shared);
      uint64_t lo = reinterpret_cast<uint64_t>(w.local) + uint64_t(i) * w.localStride;
      if (addr - sh < cta.sharedBytes) {
        shared = true;
        addr -= sh;
      } else {
        global = !(addr - lo < w.localStride);
      }
    }
    if (shared && !write) {
      // lanes of one warp reading what the lane before read (a broadcast) change nothing a second time
      if (addr == previous) continue;
      previous = addr;
    }
    if (shared && !atomic && (checks & kCheckSharedHazards))
      sharedAccess(w, op, i, view, addr, v.bytes, write, *checker);
    if (global) {
      globalAddresses[i] = addr;
      globalLanes |= 1u << i;
    }
  }
  if (globalLanes && (checks & kCheckGlobalAccesses))
    checker->globalAccesses(siteOf(w, op, std::countr_zero(globalLanes)), w.index, globalLanes, globalAddresses,
                            v.bytes,
                            atomic  ? GlobalAccess::Atomic
                            : write ? GlobalAccess::Store
                                    : GlobalAccess::Load);
  return op + 1;
}

const Op* barrier(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  Checker* checker = cta.job->lp.checker;
  if (!checker) return op + 1;
  const uint32_t checks = CheckedBarrier::of(*op).checks;
  if ((checks & kCheckBarriers) && w.exec != w.alive) {
    int lane = std::countr_zero(w.exec);
    if (checker->divergentBarrier(siteOf(w, op, lane), w.index, w.exec, w.alive))
      return raiseFault(w, op, lane, FaultKind::Deadlock, 0, "barrier reached by part of a warp (synccheck)");
  }
  if (checks & kCheckSharedHazards) {
    shadowOf(cta);
    ++cta.checkEpochs[w.index];
    ++cta.checkWarpSyncs[w.index];
  }
  return op + 1;
}

const Op* warpSync(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  if (!cta.job->lp.checker) return op + 1;
  shadowOf(cta);
  ++cta.checkWarpSyncs[w.index];
  return op + 1;
}

}  // namespace checking
}  // namespace ptx::exec
