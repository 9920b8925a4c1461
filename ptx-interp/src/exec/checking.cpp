#include "exec/checking.h"

#include "exec/control.h"

#include "exec/memory.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

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
  if (w.index < cta.checkEpochs.size() && cta.checkLaunch == job.launchId && cta.checkCta == cta.linearId) {
    s.barriers = cta.checkEpochs[w.index];
    s.warpSyncs = cta.checkWarpSyncs[w.index];
  }
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

// A read of a cell by lane `tag` of warp v.me at `line`, recorded: its reader becomes the lane, or "several lanes"
// when lanes of the warp read it at this instruction (`severalLanes`: others besides this one), so that any lane's
// later write is after another lane's read.
inline void recordRead(Cell& c, const SharedView& v, uint16_t tag, uint32_t line, bool severalLanes) {
  const uint16_t several = threadTag(v.me, kSeveralLanes);
  if (warpOf(c.reader) != v.me || c.readWarpSync != v.warpSync || c.readLine != line) {
    c.reader = severalLanes ? several : tag;
    c.readEpoch = v.epoch;
    c.readWarpSync = v.warpSync;
    c.readLine = line;
  } else if (severalLanes || c.reader != tag) {
    c.reader = several;  // lanes of the warp read it at this instruction before
  }
}

// One access's visit of one cell (a word's, or a byte's): checks it against the cell's last write and read and
// records itself. Between warps a hazard needs no barrier between the two accesses; between lanes of one warp, no
// barrier and no __syncwarp (a store and a store of one instruction are not a hazard: no order is implied within
// it). Most visits find nothing to report and their cells already as they would leave them (a thread re-reading
// what it read), so those cost a comparison per cell. `report(kind, earlierLine, withinWarp)` is called once at
// most per access: `reported` says whether it was. A read records itself as recordRead does.
template <bool Write, class Report>
__attribute__((always_inline)) inline void visitCell(Cell& c, const SharedView& v, uint16_t tag, uint32_t line,
                                                     bool& reported, Report&& report, bool severalLanes = false) {
  if (!reported) [[likely]] {
    const HazardKind afterWrite = Write ? HazardKind::WriteAfterWrite : HazardKind::ReadAfterWrite;
    if (c.writer && warpOf(c.writer) != v.me) {
      if (c.writeEpoch == v.epoch) [[unlikely]] {
        report(afterWrite, c.writeLine, false);
        reported = true;
      }
    } else if (c.writer && c.writer != tag && c.writeWarpSync == v.warpSync && !(Write && c.writeLine == line))
        [[unlikely]] {
      report(afterWrite, c.writeLine, true);
      reported = true;
    }
    if (Write && !reported && c.reader) {
      if (warpOf(c.reader) != v.me) {
        if (c.readEpoch == v.epoch) [[unlikely]] {
          report(HazardKind::WriteAfterRead, c.readLine, false);
          reported = true;
        }
      } else if (c.reader != tag && c.readWarpSync == v.warpSync) [[unlikely]] {
        report(HazardKind::WriteAfterRead, c.readLine, true);
        reported = true;
      }
    }
  }
  if (Write) {
    c.writer = tag;
    c.writeEpoch = v.epoch;
    c.writeWarpSync = v.warpSync;
    c.writeLine = line;
  } else {
    recordRead(c, v, tag, line, severalLanes);
  }
}

// Shared bytes [offset, offset + bytes) accessed by a lane of warp w at op: one hazard report at most per access.
template <bool Write> void sharedAccess(Warp& w, const Op* op, int lane, const SharedView& v, uint64_t offset,
                                        uint32_t bytes, Checker& checker) {
  if (offset + bytes > v.sharedBytes) return;  // the access faults next
  const uint16_t tag = threadTag(v.me, lane);
  const uint32_t line = op->line;
  bool reported = false;
  uint64_t at = 0;
  auto report = [&](HazardKind kind, uint32_t earlierLine, bool withinWarp) {
    checker.sharedHazard(siteOf(w, op, lane), kind, earlierLine, at, withinWarp);
  };
  Cell* words = v.shadow.words;
  Cell* byteCells = v.shadow.bytes;
  if ((offset & 3) == 0 && (bytes & 3) == 0) {
    for (at = offset; at < offset + bytes; at += 4) {
      Cell& word = words[at / 4];
      if (word.writer != kSplitWord) [[likely]] {
        visitCell<Write>(word, v, tag, line, reported, report);
      } else {
        const uint64_t wordAt = at;
        for (at = wordAt; at < wordAt + 4; ++at) visitCell<Write>(byteCells[at], v, tag, line, reported, report);
        at = wordAt;
      }
    }
    return;
  }
  for (at = offset; at < offset + bytes; ++at) {
    Cell& word = words[at / 4];
    if (word.writer != kSplitWord) {
      for (uint64_t k = at & ~uint64_t(3); k < (at & ~uint64_t(3)) + 4; ++k) byteCells[k] = word;
      word.writer = kSplitWord;
    }
    visitCell<Write>(byteCells[at], v, tag, line, reported, report);
  }
}

// How the executing lanes of a warp group by the shared address in a register: which lanes read first at each
// distinct address, in lane order, and which later lanes read the same one. It depends only on the register's 32
// values and the exec mask, so an access through an unchanged base register (a tile read at several offsets: nvcc
// emits `ld.shared [%r+64]`, `[%r+128]`, ...) reuses it: GroupingCache keeps the last few, checked by value.
struct LaneGrouping {
  struct First {
    uint64_t base;    // the register's value in this lane
    uint32_t sameAs;  // later lanes reading the same address, not counting the lanes right after it
    uint8_t lane;
  };
  uint8_t raw[32 * sizeof(uint64_t)];  // the register's values, all 32 lanes, as it holds them
  uint32_t exec = 0;
  bool addr32 = false, valid = false;
  bool aligned = false;  // every first's base is a multiple of 4
  uint64_t lowest = 0, highest = 0;
  uint32_t count = 0;
  First firsts[32];
};

void groupLanes(LaneGrouping& g, uint32_t exec) {
  g.exec = exec;
  g.count = 0;
  g.aligned = true;
  g.lowest = ~uint64_t(0);
  g.highest = 0;
  uint64_t previous = ~uint64_t(0);
  for (uint32_t m = exec; m;) {
    const int i = std::countr_zero(m);
    m &= m - 1;
    uint64_t base;
    if (g.addr32) {
      uint32_t value;
      std::memcpy(&value, g.raw + i * sizeof value, sizeof value);
      base = value;
    } else {
      std::memcpy(&base, g.raw + i * sizeof base, sizeof base);
    }
    // lanes of one warp reading what the lane before read (a broadcast) change nothing a second time
    if (base == previous) continue;
    previous = base;
    if (g.count && base <= g.highest) {  // lanes in increasing order (the common case) need no search
      uint32_t k = 0;
      while (k < g.count && g.firsts[k].base != base) ++k;
      if (k < g.count) {
        g.firsts[k].sameAs |= 1u << i;
        continue;
      }
    }
    g.firsts[g.count++] = LaneGrouping::First{base, 0, uint8_t(i)};
    g.aligned &= (base & 3) == 0;
    g.lowest = std::min(g.lowest, base);
    g.highest = std::max(g.highest, base);
  }
  g.valid = true;
}

struct GroupingCache {
  LaneGrouping entries[4];
  uint32_t registers[4];  // the base register of each entry (+ 1; 0 = none)
  uint32_t next;          // the entry a new register replaces
};
static_assert(std::is_trivially_copyable_v<GroupingCache> && sizeof(GroupingCache) % sizeof(uint64_t) == 0);

// A warp's grouping cache (its warps run interleaved): checked by value on use, so it outlives CTAs and launches.
GroupingCache& groupingsOf(const Warp& w) {
  Cta& cta = *w.cta;
  constexpr size_t kWords = sizeof(GroupingCache) / sizeof(uint64_t);
  if (cta.checkGroupings.size() < cta.nwarps * kWords) cta.checkGroupings.resize(cta.nwarps * kWords);
  return reinterpret_cast<GroupingCache*>(cta.checkGroupings.data())[w.index];
}

// Reads the base register of a shared access and returns its lane grouping: the cached one when the values and
// lanes are those it was made for.
const LaneGrouping& groupingOf(Warp& w, const CheckedAccess& access) {
  GroupingCache& cache = groupingsOf(w);
  uint32_t e = 0;
  while (e < 4 && cache.registers[e] != access.address + 1) ++e;
  if (e == 4) {
    e = cache.next++ % 4;
    cache.registers[e] = access.address + 1;
    cache.entries[e].valid = false;
  }
  LaneGrouping& g = cache.entries[e];
  const bool addr32 = access.address32;
  const void* raw = addr32 ? static_cast<const void*>(h::R<uint32_t>(w, access.address))
                           : static_cast<const void*>(h::R<uint64_t>(w, access.address));
  const size_t rawBytes = addr32 ? 32 * sizeof(uint32_t) : 32 * sizeof(uint64_t);
  if (g.valid && g.exec == w.exec && g.addr32 == addr32 && std::memcmp(raw, g.raw, rawBytes) == 0) [[likely]]
    return g;
  std::memcpy(g.raw, raw, rawBytes);
  g.addr32 = addr32;
  groupLanes(g, w.exec);
  return g;
}

// A warp's read of shared memory through a .shared address (the bulk of what racecheck sees: tiles read in
// loops). Lanes that read what an earlier lane of the warp read at this instruction (broadcasts, rows of a tile
// read twice) change nothing but the reader "lane" of a word that several lanes read, unless the word was
// written by another lane of the warp since the last __syncwarp: then each of them checks in full, for its own
// report. Accesses that are not whole words, or not all inside the shared window, go lane by lane.
void sharedReads(Warp& w, const Op* op, const CheckedAccess& access, const SharedView& v, Checker& checker) {
  const LaneGrouping& g = groupingOf(w, access);
  const uint32_t bytes = access.bytes;
  // (offsets in the CTA's own block: its rank bits off)
  const uint64_t imm = uint64_t(access.offset) - w.cta->sharedWindow;
  const bool wholeWords = g.aligned && (imm & 3) == 0 && (bytes & 3) == 0;
  const bool inside = g.lowest + imm <= g.highest + imm && g.highest + imm + bytes <= v.sharedBytes;
  auto eachLane = [&](const LaneGrouping::First& f) {
    sharedAccess<false>(w, op, f.lane, v, f.base + imm, bytes, checker);
    for (uint32_t m = f.sameAs; m;) {
      const int i = std::countr_zero(m);
      m &= m - 1;
      sharedAccess<false>(w, op, i, v, f.base + imm, bytes, checker);
    }
  };
  if (!wholeWords || !inside || g.count == 0) [[unlikely]] {
    for (uint32_t k = 0; k < g.count; ++k) eachLane(g.firsts[k]);
    return;
  }
  const uint32_t line = op->line;
  Cell* words = v.shadow.words;
  if (bytes == 4) {
    // one word a lane, the common case: the visit of a read, with no hazard to report, inline
    for (uint32_t k = 0; k < g.count; ++k) {
      const LaneGrouping::First& f = g.firsts[k];
      const uint64_t offset = f.base + imm;
      Cell& c = words[offset / 4];
      const uint16_t tag = threadTag(v.me, f.lane);
      const bool otherWarp = warpOf(c.writer) != v.me;
      const bool writtenThisInterval = otherWarp ? c.writeEpoch == v.epoch : c.writeWarpSync == v.warpSync;
      if (c.writer && (c.writer == kSplitWord || (writtenThisInterval && (otherWarp || f.sameAs || c.writer != tag))))
          [[unlikely]] {
        eachLane(f);
        continue;
      }
      recordRead(c, v, tag, line, f.sameAs != 0);
    }
    return;
  }
  for (uint32_t k = 0; k < g.count; ++k) {
    const LaneGrouping::First& f = g.firsts[k];
    const uint64_t offset = f.base + imm;
    const uint16_t tag = threadTag(v.me, f.lane);
    bool plain = true;  // no split word, and no word written by another lane of the warp since its __syncwarp
    for (uint64_t at = offset; at < offset + bytes; at += 4) {
      const Cell& c = words[at / 4];
      plain &= c.writer != kSplitWord &&
               !(f.sameAs && c.writer && warpOf(c.writer) == v.me && c.writeWarpSync == v.warpSync);
    }
    if (!plain) [[unlikely]] {
      eachLane(f);
      continue;
    }
    bool reported = false;
    uint64_t at = offset;
    auto report = [&](HazardKind kind, uint32_t earlierLine, bool withinWarp) {
      checker.sharedHazard(siteOf(w, op, f.lane), kind, earlierLine, at, withinWarp);
    };
    for (; at < offset + bytes; at += 4) {
      Cell& c = words[at / 4];
      visitCell<false>(c, v, tag, line, reported, report, f.sameAs != 0);
    }
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
  if (space == mem::Shared && !write && !atomic && (checks & kCheckSharedHazards)) {
    sharedReads(w, op, v, view, *checker);
    return op + 1;
  }
  uint64_t previous = ~uint64_t(0);
  uint64_t globalAddresses[32];
  uint32_t globalLanes = 0;
  for (uint32_t m = w.exec; m;) {
    int i = std::countr_zero(m);
    m &= m - 1;
    uint64_t addr = v.address32 ? uint64_t(h::R<uint32_t>(w, v.address)[i]) : h::R<uint64_t>(w, v.address)[i];
    addr += uint64_t(v.offset);
    if (space == mem::Shared) addr -= cta.sharedWindow;  // an offset in the own block (rank bits off)
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
    if (shared && !atomic && (checks & kCheckSharedHazards)) {
      if (write)
        sharedAccess<true>(w, op, i, view, addr, v.bytes, *checker);
      else
        sharedAccess<false>(w, op, i, view, addr, v.bytes, *checker);
    }
    if (global) {
      globalAddresses[i] = addr;
      globalLanes |= 1u << i;
    }
  }
  if (globalLanes && (checks & kCheckGlobalAccesses))
    checker->globalAccesses(siteOf(w, op, std::countr_zero(globalLanes)), w.index, globalLanes, globalAddresses,
                            v.bytes,
                            atomic     ? GlobalAccess::Atomic
                            : v.strong ? (write ? GlobalAccess::StrongStore : GlobalAccess::StrongLoad)
                            : write    ? GlobalAccess::Store
                                       : GlobalAccess::Load);
  return op + 1;
}

// A named barrier's thread count against the warps already waiting at it (kCheckBarriers: an H100 stops the grid,
// and compute-sanitizer names the waiting threads, "Divergent thread(s) in block"), and against the warps of the
// CTA that reach it (kCheckWarpMasks: more of them than the count meet in separate groups).
const Op* checkBarrierCount(Warp& w, const Op* op, const CheckedBarrier& bar, Checker& checker) {
  Cta& cta = *w.cta;
  int lane = std::countr_zero(w.exec | 0x80000000u);
  uint32_t id = h::R<uint32_t>(w, bar.id)[lane];
  uint32_t count = bar.count ? h::R<uint32_t>(w, bar.count)[lane] : 0;
  if (id >= 16) return op + 1;  // the barrier op faults
  Barrier& b = cta.barriers[id];
  if ((bar.checks & kCheckBarriers) && b.waiting && count != b.expected) {
    bool stop = false;
    for (Warp& x : cta.warps)
      if (x.state == WarpState::AtBarrier && x.barrierId == id && x.pc)
        stop |= checker.barrierCountMismatch(siteOf(x, ctl::barrierWaitedAt(x), std::countr_zero(x.exec | 0x80000000u)),
                                             x.index, x.exec, id);
    if (stop)
      return raiseFault(w, op, lane, FaultKind::Deadlock, 0, "named barrier reached with different thread counts");
  }
  if ((bar.checks & kCheckWarpMasks) && count && !b.countExceededReported) {
    const uint32_t bit = 1u << (w.index & 31);
    if (!(b.countedWarps & bit)) {
      b.countedWarps |= bit;
      b.countedThreads += laneCount(w.alive);
    }
    if (b.countedThreads > count) {
      b.countExceededReported = true;
      checker.barrierCountExceeded(siteOf(w, op, lane), id, count, b.countedThreads);
    }
  }
  return op + 1;
}

const Op* barrier(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  Checker* checker = cta.job->lp.checker;
  if (!checker) return op + 1;
  const CheckedBarrier bar = CheckedBarrier::of(*op);
  const uint32_t checks = bar.checks;
  if (checks & (kCheckBarriers | kCheckWarpMasks)) {
    const Op* next = checkBarrierCount(w, op, bar, *checker);
    if (next != op + 1) return next;
  }
  if (bar.arrive) return op + 1;
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

const Op* fence(Warp& w, const Op* op) {
  Checker* checker = w.cta->job->lp.checker;
  if (checker && w.exec) checker->fence(siteOf(w, op, std::countr_zero(w.exec)), w.index, w.exec);
  return op + 1;
}

uint32_t collectiveChecks(WarpCollective c) {
  const uint32_t checks = checkedAccesses();
  uint32_t wanted = checks & kCheckWarpMasks;
  if ((checks & kCheckBarriers) && (c == WarpCollective::WarpSync || c == WarpCollective::Vote))
    wanted |= kCheckBarriers;
  return wanted;
}

const Op* collective(Warp& w, const Op* op) {
  Checker* checker = w.cta->job->lp.checker;
  const uint32_t exec = w.exec;
  if (!checker || !exec) return op + 1;
  const CheckedCollective c = CheckedCollective::of(*op);
  const uint32_t* mm = h::R<uint32_t>(w, c.members);
  const int first = std::countr_zero(exec);
  const uint32_t outside = h::lanesOutsideTheirMask(exec, mm);
  uint32_t named = 0;
  h::forActive(exec, [&](int i) { named |= mm[i]; });
  auto report = [&](WarpMaskIssue issue, uint32_t lanes, uint32_t mask) {
    return checker->warpMask(siteOf(w, op, first), w.index, c.collective, issue, lanes, mask);
  };
  bool stop = false;
  if (outside) {
    // compute-sanitizer names every executing thread of a __syncwarp or vote that leaves one out ("Invalid arguments")
    bool everyThread = (c.checks & kCheckBarriers) != 0;
    if (everyThread || (c.checks & kCheckWarpMasks))
      stop |= report(WarpMaskIssue::OutsideOwnMask, everyThread ? exec : outside, mm[std::countr_zero(outside)]);
  }
  if (c.checks & kCheckWarpMasks) {
    if (uint32_t exited = named & ~w.alive) stop |= report(WarpMaskIssue::ExitedLanes, exited, named);
    if (uint32_t elsewhere = named & w.alive & ~exec)
      stop |= report(WarpMaskIssue::NotExecutingLanes, elsewhere, named);
    if (!h::oneMask(exec, mm)) {
      uint32_t different = 0, mask = 0;
      h::forActive(exec, [&](int i) {
        h::forActive(mm[i] & exec, [&](int j) {
          if (mm[j] != mm[i]) {
            different |= 1u << j;
            if (!mask) mask = mm[i];
          }
        });
      });
      if (different) stop |= report(WarpMaskIssue::DifferentMasks, different, mask);
    }
  }
  if (stop) return raiseFault(w, op, first, FaultKind::Deadlock, 0, "warp collective with an invalid membermask");
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
