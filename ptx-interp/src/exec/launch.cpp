// compile(), launch(): the CTA scheduler, the worker pool and the per-thread CTA contexts.
#include "ptx/exec.h"

#include "exec/async.h"
#include "exec/control.h"
#include "exec/engine.h"
#include "exec/handlers.h"
#include "exec/lower.h"
#include "native/tier.h"
#include "ptx/native.h"
#include "ptx/check.h"
#include "ptx/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <optional>
#include <random>
#include <thread>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xmmintrin.h>

namespace ptx::exec {

// ---- module-level API ------------------------------------------------------------------------------------------

const std::vector<GlobalInfo>& globals(const Program& program) { return program.globalInfo; }

int findKernel(const Program& program, std::string_view name) {
  for (size_t k = 0; k < program.kernelInfo.size(); ++k)
    if (program.kernelInfo[k].name == name) return int(k);
  return -1;
}

const char* faultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::None: return "no fault";
    case FaultKind::IllegalAddress: return "illegal address";
    case FaultKind::MisalignedAddress: return "misaligned address";
    case FaultKind::InvalidAddressSpace: return "invalid address space";
    case FaultKind::IllegalInstruction: return "illegal instruction";
    case FaultKind::Assert: return "device-side assert";
    case FaultKind::StackOverflow: return "stack overflow";
    case FaultKind::Deadlock: return "barrier deadlock";
    case FaultKind::Trap: return "trap";
    case FaultKind::LaunchInvalid: return "invalid launch";
    case FaultKind::Timeout: return "launch timeout";
    case FaultKind::ClusterAddress: return "shared::cluster address outside the cluster";
  }
  return "fault";
}

bool MemoryValidator::checkSlow(uint64_t, uint64_t, bool) const { return false; }

bool HostServices::devicePrintf(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return true;
}

uint64_t HostServices::deviceMalloc(uint64_t) { return 0; }
void HostServices::deviceFree(uint64_t) {}
void HostServices::deterministicStall(std::string_view, unsigned) {}
bool HostServices::setGraphConditional(uint64_t, uint32_t) { return true; }

uint64_t HostServices::globalTimerNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

HostServices& defaultHost() {
  static HostServices* h = new HostServices();  // leaked on purpose: used by worker threads until exit
  return *h;
}

std::atomic<uint64_t> gLaunchCounter{1};

// Parked CTAs per host thread (runJob), launches that are not cooperative.
constexpr size_t kWaitingCtas = 4096;
constexpr size_t kPreemptedCtas = 16;

// ---- CTA contexts (reused per host thread) ----------------------------------------------------------------------

struct AlignedBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t align = 64;
  size_t mapped = 0;  // bytes mapped for a large alignment (0: from aligned_alloc)
  ~AlignedBuffer() { release(); }
  // Grows to at least n bytes, starting at a multiple of `alignment` (a power of two); returns true when it was
  // (re)allocated (contents zeroed).
  // (the test inline, the growth out of line: every CTA's set-up asks three times)
  bool reserve(size_t n, size_t alignment = 64) {
    alignment = std::max<size_t>(alignment, 64);
    if (n <= size && data && alignment <= align) [[likely]]
      return false;
    return grow(n, alignment);
  }
  [[gnu::noinline]] bool grow(size_t n, size_t alignment) {
    release();
    align = std::max(align, alignment);
    size = std::max<size_t>(alignUp64(n), 64);
    if (align <= kPage) {
      data = static_cast<uint8_t*>(std::aligned_alloc(align, (size + align - 1) & ~(align - 1)));
      if (!data) throw std::bad_alloc();
      std::memset(data, 0, size);
      return true;
    }
    // Shared blocks start at a multiple of 2^24 (kSharedBlockAlign): malloc would hand out, or split off, that much
    // per block. Map the alignment's worth more, then give back what lies before and after the aligned bytes
    // (anonymous memory is zero).
    const size_t span = (size + kPage - 1) & ~(kPage - 1);
    void* p = mmap(nullptr, span + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(p), base = (start + align - 1) & ~uintptr_t(align - 1);
    if (base > start) munmap(p, base - start);
    if (const size_t after = start + span + align - (base + span)) munmap(reinterpret_cast<void*>(base + span), after);
    data = reinterpret_cast<uint8_t*>(base);
    mapped = span;
    return true;
  }
  void release() {
    if (mapped)
      munmap(data, mapped);
    else
      std::free(data);
    data = nullptr;
    mapped = 0;
  }
  static size_t alignUp64(size_t n) { return (n + 63) & ~size_t(63); }
  static constexpr size_t kPage = 4096;
};

// One CTA's storage; the context that starts a cluster (rank 0) also holds the cluster and its other CTAs.
struct CtaContext {
  Cta cta;
  AlignedBuffer rf, shared, local;
  uint64_t constLaunch = 0;  // launch whose constants are in rf
  uint32_t constWarps = 0;
  uint64_t constWindow = 0;  // the shared window (cluster rank) they were written for
  Cluster cluster;
  std::vector<std::unique_ptr<CtaContext>> peers;  // ranks 1.. of the cluster (kept for reuse)
};

thread_local std::vector<std::unique_ptr<CtaContext>> tlFree;

std::unique_ptr<CtaContext> takeContext() {
  if (!tlFree.empty()) {
    auto c = std::move(tlFree.back());
    tlFree.pop_back();
    return c;
  }
  return std::make_unique<CtaContext>();
}
void giveContext(std::unique_ptr<CtaContext> c) {
  if (tlFree.size() < 64) tlFree.push_back(std::move(c));
}

// (every CTA's set-up asks, twice with the cluster's: 1-D grids divide by nothing, the others in 32 bits where the
// index fits; six 64-bit divisions were 4% of a small CTA's time)
[[gnu::noinline]] Dim3 ctaCoordsOfGrid(const Dim3& grid, uint64_t linear) {
  Dim3 id;
  if (linear <= UINT32_MAX) {
    const uint32_t l = uint32_t(linear), rows = l / grid.x;
    id.x = l - rows * grid.x;
    id.y = rows % grid.y;
    id.z = rows / grid.y;
    return id;
  }
  id.x = uint32_t(linear % grid.x);
  id.y = uint32_t((linear / grid.x) % grid.y);
  id.z = uint32_t(linear / (uint64_t(grid.x) * grid.y));
  return id;
}
[[gnu::always_inline]] inline Dim3 ctaCoords(const Dim3& grid, uint64_t linear) {
  if (grid.y == 1 && grid.z == 1) return Dim3{uint32_t(linear), 0, 0};
  return ctaCoordsOfGrid(grid, linear);
}

// The register at `offset` of each of `warps` register files (`stride` bytes apart from `rf`) set to v in all 32
// lanes, in 32-byte stores where the CPU has them: the warps' first ops read these registers with 32-byte loads,
// which 16-byte stores cannot forward to. (All warps in one call: a call per warp was 1% of a vector add's time.)
PTX_LANES void broadcastLanes(uint8_t* rf, size_t stride, uint32_t warps, uint32_t offset, uint32_t v) {
  for (uint32_t w = 0; w < warps; ++w) {
    uint32_t* lanes = reinterpret_cast<uint32_t*>(rf + w * stride + offset);
    for (int i = 0; i < 32; ++i) lanes[i] = v;
  }
}

// A constant slot's 32 lanes set to the low s.size bytes of v (slots of 1 to 8 bytes a lane).
void broadcastSlot(uint8_t* lanes, const ConstSlot& s, uint64_t v) {
  for (int i = 0; i < 32; ++i) std::memcpy(lanes + i * s.size, &v, s.size);
}

// A cta-indices register's 32 lanes: the CTA's part plus each lane's term (a thread constant, %tid, or zeros), in
// 32-byte vectors (a loop the compiler left scalar made 4-byte stores that the first op's 32-byte loads of the
// register waited on: 15% of a reduction's time).
// (each of `warps` register files `stride` bytes apart: the register at `offset` from the one at `laneTerms`)
PTX_LANES void affineLanes(uint8_t* rf, size_t stride, uint32_t warps, uint32_t offset, uint32_t laneTerms,
                           uint32_t cta) {
  typedef uint32_t V __attribute__((vector_size(32)));
  for (uint32_t w = 0; w < warps; ++w) {
    uint8_t* base = rf + w * stride;
    for (int k = 0; k < 4; ++k) {
      V v;
      std::memcpy(&v, base + laneTerms + 32 * k, sizeof v);
      v += cta;
      std::memcpy(base + offset + 32 * k, &v, sizeof v);
    }
  }
}

// A warp's scheduling fields as a CTA's set-up leaves them: Ready at `entry` with its lanes, nothing on its stacks.
// `placed`: its place in the context (registers, local memory, index, CTA) and its barrier fields are as the CTA before
// it in the context left them (setupCta).
// (inline, in setupCta's one loop over its warps: a call per warp in a second loop made an empty kernel's compiled grid
// 8.4-8.6 ns a warp against 7.2, session 33)
[[gnu::always_inline]] inline void setUpWarpForRun(Cta& cta, uint32_t w, const Op* entry, bool placed,
                                                   bool usesBarriers, bool runtimeErrors) {
  Warp& wp = cta.warps[w];
  uint32_t lanes = std::min<uint32_t>(32, cta.nthreads - w * 32);
  uint32_t mask = lanes == 32 ? kFullMask : ((1u << lanes) - 1);
  wp.active = wp.exec = wp.alive = mask;
  wp.state = WarpState::Ready;
  wp.pc = entry;
  wp.frame = 0;
  wp.budget = wp.checkInterval = wp.probeInterval = kSpinCheckInterval;
  wp.backEdges = 0;
  wp.readTime = false;
  if (!placed || usesBarriers) {
    wp.barrierDst = 0;
    wp.barrierReleasePhase = wp.barrierCreditsTaken = 0;
    wp.exitsAtRelease = false;
    wp.barrierArrival = nullptr;
  }
  wp.stack.clear();
  wp.setAside.clear();
  wp.spill.clear();
  std::memset(wp.carry, 0, sizeof wp.carry);
  if (runtimeErrors) std::memset(wp.runtimeError, 0, sizeof wp.runtimeError);
  wp.clusterArrived = false;
  wp.wgmmaIssued = 0;
}

void setupCta(Job& job, CtaContext& ctx, uint64_t linear) {
  Cta& cta = ctx.cta;
  const KernelCode& code = *job.code;
  cta.job = &job;
  cta.linearId = uint32_t(linear);
  cta.id = ctaCoords(job.lp.grid, linear);
  cta.nthreads = uint32_t(job.lp.block.count());
  cta.nwarps = (cta.nthreads + 31) / 32;
  cta.liveThreads = cta.nthreads;
  cta.liveWarps = cta.nwarps;
  size_t rfBytes = code.regFileBytes;
  bool fresh = ctx.rf.reserve(rfBytes * cta.nwarps);
  // (the shared-address slots depend on the cluster rank; a context runs one rank throughout a launch, so the
  // window comparison only guards that rule)
  const bool newConstants =
      fresh || ctx.constLaunch != job.launchId || ctx.constWarps < cta.nwarps || ctx.constWindow != cta.sharedWindow;
  if (newConstants) {
    size_t n = job.constImage.size();
    for (uint32_t w = 0; w < cta.nwarps; ++w) {
      uint8_t* base = ctx.rf.data + w * rfBytes;
      std::memset(base, 0, 256);  // zero register
      if (n) std::memcpy(base + code.constStart, job.constImage.data(), n);
      for (const ConstSlot& s : code.indexConsts) {
        if (s.kind == ConstKind::ThreadIndex) {
          threadIndexLanes(job.lp.block, w, uint32_t(s.value), reinterpret_cast<uint32_t*>(base + s.offset));
        } else if (s.kind == ConstKind::SharedAddress) {
          broadcastSlot(base + s.offset, s, cta.sharedWindow | s.value);
        }
      }
    }
    ctx.constLaunch = job.launchId;
    ctx.constWarps = cta.nwarps;
    ctx.constWindow = cta.sharedWindow;
  }
  for (const ConstSlot& s : code.indexConsts) {
    if (s.kind != ConstKind::CtaIndex) continue;
    broadcastLanes(ctx.rf.data, rfBytes, cta.nwarps, s.offset, cta.id.component(uint32_t(s.value)));
  }
  // a whole 128-byte allocation unit, which tensormap.replace may edit past a smaller block (isa/async_copy.cpp)
  ctx.shared.reserve(sharedAllocationBytes(job.sharedBytes) + 16,
                     std::max<size_t>(code.sharedAlign, kSharedBlockAlign));
  cta.shared = ctx.shared.data;
  cta.sharedBytes = job.sharedBytes;
  cta.localStride = code.localBytes;
  const bool newLocal = ctx.local.reserve(size_t(code.localBytes) * 32 * cta.nwarps + 16, code.localAlign);
  cta.localMem = ctx.local.data;
  cta.warps.resize(cta.nwarps);
  const Op* entry = &job.program->ops[job.entry->firstOp];
  // only device runtime calls read and write a thread's last error (a program without any never looks at it)
  const bool runtimeErrors = !job.program->runtimeSites.empty();
  // Where the context ran a CTA of this launch before, each warp's place (its registers, local memory, index, CTA)
  // and the kernel's fast paths are as that CTA left them, and a kernel without barriers left their fields as set
  // up here (only barrier ops write them): the warps' set-up was a third of an empty kernel's grid.
  const bool placed = !newConstants && !newLocal;
  // The native tier's CTA entry runs the warps of a CTA of full warps first, where their places are set
  // (runCompiledCta): their scheduling fields are set up only for a warp that code does not finish.
  // (the interpreter's test first: it is all an interpreted launch pays)
  cta.warpsDeferred =
      placed && job.native.load(std::memory_order_relaxed) && !job.noCtaEntry.load(std::memory_order_relaxed) &&
      !runtimeErrors && cta.nthreads % 32 == 0 && !code.usesBarriers && job.clusterSize == 1 &&
      (code.fastPaths & rewriteBit(Rewrite::CompiledCtas)) && (code.fastPaths & rewriteBit(Rewrite::FreshCtaPass)) &&
      !job.lp.checker && !(job.lp.config.deterministic && job.lp.config.scheduleSeed);
  if (!cta.warpsDeferred)
    for (uint32_t w = 0; w < cta.nwarps; ++w) {
      Warp& wp = cta.warps[w];
      if (!placed) {
        wp.rf = ctx.rf.data + w * rfBytes;
        setFastPaths(wp, code.fastPaths);
        wp.index = w;
        wp.cta = &cta;
        wp.localStride = code.localBytes;
        wp.local = cta.localMem + size_t(w) * 32 * code.localBytes;
      }
      if (newConstants)
        for (Warp::CreditMemo& m : wp.creditMemos) m = {};
      setUpWarpForRun(cta, w, entry, placed, code.usesBarriers, runtimeErrors);
    }
  if (newConstants && code.prologueOp != kNoIndex) {
    // thread-constants: the registers every CTA of the launch computes alike, once per warp of this context
    const Op* prologue = &job.program->ops[code.prologueOp];
    for (Warp& wp : cta.warps)
      for (const Op* op = prologue; op;) op = op->fn(wp, op);
  }
  for (const ConstSlot& s : code.indexConsts) {
    if (s.kind != ConstKind::CtaAffine) continue;
    const uint32_t ntid = (s.value & 4) ? job.lp.block.component(uint32_t(s.value >> 3) & 3) : 1;
    const uint32_t v = cta.id.component(uint32_t(s.value & 3)) * s.multiplier * ntid + uint32_t(s.addend);
    affineLanes(ctx.rf.data, rfBytes, cta.nwarps, s.offset, s.laneAddend, v);
  }
  cta.fresh = true;
  if (code.usesBarriers) {
    // the checkers write a barrier's counts before its bar.sync, which may then fault without marking it used
    const uint32_t stale = job.lp.checker ? 0xffffu : cta.usedBarriers;
    for (uint32_t m = stale; m; m &= m - 1) cta.barriers[std::countr_zero(m)].reset();
    cta.usedBarriers = 0;
  }
}

// Sets up the CTAs of the cluster with linear index `linear` (x fastest over %nclusterid): ctx runs rank 0 and
// holds the others. Ranks are linear in %cluster_ctaid, x fastest, as on an H100.
void setupCluster(Job& job, CtaContext& ctx, uint64_t linear) {
  const Dim3& shape = job.clusterShape;
  const Dim3& grid = job.lp.grid;
  Cluster& cluster = ctx.cluster;
  while (ctx.peers.size() + 1 < job.clusterSize) ctx.peers.push_back(std::make_unique<CtaContext>());
  cluster.ctas.resize(job.clusterSize);
  // (a cluster of one CTA: its index is the cluster's, without the divisions)
  const Dim3 first =
      job.clusterSize == 1 ? Dim3{} : ctaCoords(Dim3{grid.x / shape.x, grid.y / shape.y, grid.z / shape.z}, linear);
  for (uint32_t rank = 0; rank < job.clusterSize; ++rank) {
    CtaContext& c = rank ? *ctx.peers[rank - 1] : ctx;
    uint64_t index = linear;
    if (job.clusterSize > 1) {
      const Dim3 local = ctaCoords(shape, rank);
      const uint64_t x = uint64_t(first.x) * shape.x + local.x, y = uint64_t(first.y) * shape.y + local.y,
                     z = uint64_t(first.z) * shape.z + local.z;
      index = x + grid.x * (y + grid.y * z);
    }
    c.cta.clusterRank = rank;
    c.cta.sharedWindow = uint64_t(rank) << kClusterRankShift;
    setupCta(job, c, index);
    c.cta.cluster = &cluster;
    cluster.ctas[rank] = &c.cta;
  }
  cluster.barrierArrived = 0;
  cluster.barrierPhase = 0;
  cluster.progress = 0;
  cluster.doneMask = 0;
}

// Preempted: a warp used its budget of back edges (long loop); Waiting: every warp that can run waits for memory
// written elsewhere (spin loop, nanosleep) or for such a warp at a barrier.
enum class CtaStatus { Done, Preempted, Waiting, Faulted };

CtaStatus runCta(Cta& cta, const std::vector<uint32_t>* warpOrder, bool& progressed);

// After a pass over a CTA's warps: where some yielded (a long loop: `preempted`) or wait for memory and none is Ready,
// the CTA stops (Preempted or Waiting), else nothing and the passes go on.
std::optional<CtaStatus> stopAfterPass(const Cta& cta, bool yielded, bool preempted) {
  if (!yielded) return std::nullopt;
  for (const Warp& w : cta.warps)
    if (w.state == WarpState::Ready) return std::nullopt;
  return preempted ? CtaStatus::Preempted : CtaStatus::Waiting;
}

// The first pass over a CTA just set up, in index order, when nothing can hand the host thread from one warp to
// another (no barrier) and no seeded order applies: what runCta's first pass does then, less its per-warp
// bookkeeping (a vector add's grid spent a quarter of its time in runCta). Each warp is Ready with a fresh budget
// (setupCta), so its run starts as beginRun would start it, and any run of a fresh warp makes progress. Where a warp
// did not finish, the CTA stops or goes on as runCta decides after its first pass.
CtaStatus runFreshCta(Cta& cta, bool& progressed, uint32_t firstWarp = 0) {
  Job& job = *cta.job;
  const Handler native = job.native.load(std::memory_order_relaxed);
  progressed = true;
  cta.handoff = cta.handedOff = false;  // (a barrier hands off; the kernel has none)
  bool finished = true, yielded = false, preempted = false;
  for (uint32_t k = firstWarp; k < cta.nwarps; ++k) {
    Warp& w = cta.warps[k];
    cta.current = &w;
    const Op* op = w.pc;
    if (native) {
      while (op) op = native(w, op);
    } else {
      while (op) op = op->fn(w, op);
    }
    if (job.faulted.load(std::memory_order_relaxed)) return CtaStatus::Faulted;
    finished &= w.state == WarpState::Done;
    yielded |= w.state == WarpState::Yielded || w.state == WarpState::Waiting;
    preempted |= w.state == WarpState::Yielded;
  }
  if (finished) return CtaStatus::Done;
  if (const std::optional<CtaStatus> stop = stopAfterPass(cta, yielded, preempted)) return *stop;
  bool more = false;
  return runCta(cta, nullptr, more);
}

// The first pass over a CTA whose warps' scheduling fields setupCta left for the native tier's CTA entry
// (Cta::warpsDeferred): the kernel's code called at the op one past the program's last runs the CTA's warps in index
// order, each from the kernel's entry, as far as its vector prefix takes it (native/jit/vector_prefix.h). It returns
// nullptr where it finished them all, else the op at which warp Cta::warpsFinishedByCode stopped (its registers in its
// register file; the entry where the job faulted before it started), or that op one past the last where the code
// has no CTA entry (then no CTA of the launch defers its warps again). Where the code finished every warp, their
// fields stay as they are (nothing reads a finished CTA's warps; the context's next CTA sets them up). Otherwise the
// finished warps end as kernelEnd ends a warp, the others are set up as setupCta would have, the stopped one at its
// op, and the pass goes on from it as runFreshCta's.
CtaStatus runCompiledCta(Cta& cta, bool& progressed) {
  Job& job = *cta.job;
  cta.warpsDeferred = false;
  const Op* const entry = &job.program->ops[job.entry->firstOp];
  const Op* const ctaEntry = job.program->ops.data() + job.program->ops.size();
  cta.warpsFinishedByCode = 0;
  const Op* stopped = job.native.load(std::memory_order_relaxed)(cta.warps[0], ctaEntry);
  if (stopped == ctaEntry) {
    job.noCtaEntry.store(true, std::memory_order_relaxed);
    for (uint32_t w = 0; w < cta.nwarps; ++w) setUpWarpForRun(cta, w, entry, true, false, false);
    return runFreshCta(cta, progressed);
  }
  progressed = true;
  const uint32_t finished = stopped ? cta.warpsFinishedByCode : cta.nwarps;
  cta.codeRunWarps += finished;
  cta.liveThreads -= 32 * finished;
  cta.liveWarps -= finished;
  if (!stopped) return CtaStatus::Done;
  for (uint32_t w = 0; w < finished; ++w) {
    Warp& wp = cta.warps[w];
    wp.active = wp.exec = wp.alive = 0;
    wp.state = WarpState::Done;
    wp.pc = nullptr;
  }
  for (uint32_t w = finished; w < cta.nwarps; ++w) setUpWarpForRun(cta, w, entry, true, false, false);
  cta.warps[finished].pc = stopped;
  if (job.faulted.load(std::memory_order_relaxed)) return CtaStatus::Faulted;
  return runFreshCta(cta, progressed, finished);
}

// `progressed` is set when the turn did more than find its waits unchanged: a warp that ran was not waiting for
// memory, stopped otherwise or elsewhere, or took more back edges than the one spin check of a warp that finds its
// wait as it left it (a warp that leaves its wait and comes back to the same loop takes another loop's back edge).
CtaStatus runCta(Cta& cta, const std::vector<uint32_t>* warpOrder, bool& progressed) {
  Job& job = *cta.job;
  cta.handoff = warpOrder == nullptr && (job.code->fastPaths & rewriteBit(Rewrite::BarrierHandoff));
  cta.barrierCredits = (job.code->fastPaths & rewriteBit(Rewrite::BarrierCredits)) != 0;
  // Without a warp order, passes go round the warps in index order from `cursor`, which a barrier handoff moves to
  // the warp after the one its run stopped at: the order of warps is the same with and without handoffs.
  uint32_t cursor = 0;
  if (cta.fresh) {
    cta.fresh = false;
    if (cta.warpsDeferred) return runCompiledCta(cta, progressed);  // (setupCta checked fresh-cta-pass's conditions)
    if (warpOrder == nullptr && !job.code->usesBarriers && job.clusterSize == 1 &&
        (job.code->fastPaths & rewriteBit(Rewrite::FreshCtaPass)))
      return runFreshCta(cta, progressed);
  }
  for (;;) {
    bool ran = false, yielded = false, preempted = false, pending = false;
    // Without a warp order the pass sees every warp once, so it also tells whether any is left: a warp it skipped
    // or ran is Done for good only as it was seen (one skipped at a barrier is released, not finished, by a later
    // warp). A seeded order may visit some warps twice and others not at all: then a second look. A pass that
    // handed off may have skipped warps: then a second look too.
    for (uint32_t k = 0; k < cta.nwarps; ++k) {
      uint32_t index = cursor;
      if (warpOrder)
        index = (*warpOrder)[k % warpOrder->size()] % cta.nwarps;
      else if (++cursor == cta.nwarps)
        cursor = 0;
      Warp& w = cta.warps[index];
      if (w.state != WarpState::Ready && w.state != WarpState::Yielded && w.state != WarpState::Waiting) {
        pending |= w.state != WarpState::Done;
        continue;
      }
      const bool waited = w.state == WarpState::Waiting;
      const uint32_t interval = beginRun(w, waited);
      const Op* const start = w.pc;
      const Op* op = start;
      // the warp that stopped: w, or the last one a barrier handed the thread to
      Warp* stopped = &w;
      cta.handedOff = false;  // whatever a run of another kernel in this context left
      cta.current = &w;
      if (const Handler native = job.native.load(std::memory_order_relaxed)) {
        // (the compiled code returns after each op that may hand the thread to another warp: ctl::mayHandOff)
        while (op) op = native(*cta.current, op);
      } else {
        while (op) op = op->fn(*cta.current, op);
      }
      stopped = cta.current;
      if (cta.handedOff) cursor = stopped->index + 1 == cta.nwarps ? 0 : stopped->index + 1;
      ran = true;
      progressed |= !waited || w.state != WarpState::Waiting || w.pc != start || w.backEdges > interval;
      pending |= cta.handedOff;  // warps this pass saw already may have run since
      if (job.faulted.load(std::memory_order_relaxed)) return CtaStatus::Faulted;
      if (stopped->state == WarpState::Yielded) yielded = preempted = true;
      if (stopped->state == WarpState::Waiting) yielded = true;
      pending |= w.state != WarpState::Done || stopped->state != WarpState::Done;
    }
    if (warpOrder)
      for (const Warp& w : cta.warps) pending |= w.state != WarpState::Done;
    if (!pending) return CtaStatus::Done;
    if (!ran) {
      // every remaining warp waits at a barrier that cannot complete
      Fault f;
      f.kind = FaultKind::Deadlock;
      f.kernel = job.info->name;
      f.block = cta.id;
      for (const Warp& w : cta.warps)
        if (w.state == WarpState::AtBarrier) {
          f.thread = Dim3{(w.index * 32) % job.lp.block.x, 0, 0};
          const Op* at = ctl::barrierWaitedAt(w);
          f.ptxLine = at ? at->line : 0;
          break;
        }
      f.message = fmt::format(
          "barrier deadlock in kernel '{}' block ({},{},{}) at PTX line {}: the threads of the block "
          "wait at barriers that can never complete",
          f.kernel, cta.id.x, cta.id.y, cta.id.z, f.ptxLine);
      job.raise(std::move(f));
      return CtaStatus::Faulted;
    }
    if (const std::optional<CtaStatus> stop = stopAfterPass(cta, yielded, preempted)) return *stop;
  }
}

// Runs the CTAs of one cluster, each in turn, until all are done or none makes progress (a cluster barrier phase
// or a CTA finishing) in a whole round: then the cluster stops as a CTA does, Waiting, or Preempted when one of its
// CTAs was preempted. Its CTAs wait for each other at cluster barriers and through distributed shared memory, so
// they always run together, on one host thread; in deterministic mode with a seed, in a permuted order.
CtaStatus runCluster(Cluster& cluster, const std::vector<uint32_t>* warpOrder, const std::vector<uint32_t>& order,
                     bool& progressed) {
  const size_t n = cluster.ctas.size();
  if (n == 1) return runCta(*cluster.ctas[0], warpOrder, progressed);
  const uint32_t all = uint32_t((1ull << n) - 1);
  for (;;) {
    const uint64_t before = cluster.progress;
    bool preempted = false;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t rank = order.empty() ? uint32_t(k) : order[k];
      if ((cluster.doneMask >> rank) & 1) continue;
      CtaStatus st = runCta(*cluster.ctas[rank], warpOrder, progressed);
      if (st == CtaStatus::Faulted) return st;
      if (st == CtaStatus::Done) {
        cluster.doneMask |= 1u << rank;
        ++cluster.progress;
      }
      preempted |= st == CtaStatus::Preempted;
    }
    if (cluster.doneMask == all) return CtaStatus::Done;
    if (cluster.progress == before) return preempted ? CtaStatus::Preempted : CtaStatus::Waiting;
  }
}

// The host threads that run one grid together (launch(): the pool's helpers and the launching thread). A thread
// whose parked CTAs all found their waits unchanged in two whole rounds, while no thread made progress, with no
// CTA left to start, sleeps until another thread's CTA makes progress or that thread leaves the grid: on a machine
// busier than its cores, a thread that cycled through CTAs waiting for one that sits with a descheduled thread kept
// a core that thread needed (conjugateGradientPrecond's triangular solves: a grid-wide barrier per level). The
// last thread awake never sleeps, and a sleep lasts at most kIdleSleep, for waits that only the host or another
// grid ends.
struct IdleThreads {
  std::atomic<uint32_t> progress{0};  // bumped by every turn that made progress (runCta's `progressed`)
  std::atomic<int> awake{0};          // threads in runJob and not asleep
  std::atomic<int> sleeping{0};
  void madeProgress() {
    progress.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping.load(std::memory_order_seq_cst)) wakeAll();
  }
  void wakeAll() { syscall(SYS_futex, &progress, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0); }
  // Sleeps while `progress` still reads `seen` and another thread is awake; false when it did not sleep.
  bool sleepUnless(uint32_t seen) {
    sleeping.fetch_add(1, std::memory_order_seq_cst);
    bool slept = false;
    if (awake.fetch_sub(1, std::memory_order_seq_cst) > 1 && progress.load(std::memory_order_seq_cst) == seen) {
      const timespec limit{0, kIdleSleepNs};
      syscall(SYS_futex, &progress, FUTEX_WAIT_PRIVATE, seen, &limit, nullptr, 0);
      slept = true;
    }
    awake.fetch_add(1, std::memory_order_seq_cst);
    sleeping.fetch_sub(1, std::memory_order_seq_cst);
    return slept;
  }
  static constexpr long kIdleSleepNs = 1'000'000;
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word");

// Runs CTAs of the job on this thread until none are left. A CTA whose warps all stopped (spinning on a flag
// another CTA writes, nanosleep, grid sync, or a long loop) is parked and the thread runs others: a newly started
// CTA, then one parked CTA's turn (round-robin), alternately while some wait. A waiting CTA may wait for one not
// started yet, so new CTAs start while any are left (cooperative launches: all must be co-resident anyway), up to
// kWaitingCtas per thread; most wait for an earlier one (a decoupled look-back scan waits for its predecessor's tile
// status), which the turn between two starts lets finish, so few stay parked (each holds its registers and shared
// memory: a CUB scan of 4 Mi items and a sort of 1 Mi pairs kept 1 GB without the turns, 155 MB with them). CTAs
// preempted in long loops are resumed before new ones start once kPreemptedCtas are parked, so a long-running kernel
// does not start its whole grid at once. When every parked CTA had a turn since the last CTA of the job finished,
// another one starts in any case, so no schedule can hang a grid whose CTAs wait for later ones. The unit started,
// parked and resumed is a cluster (runCluster): one CTA where the launch has no clusters.
// The clusters a thread running a grid has claimed and not started (Job::claimBatch): [next, end).
struct ClaimedClusters {
  const Job* job = nullptr;
  uint64_t next = 0, end = 0;
};
thread_local ClaimedClusters* tClaimed = nullptr;

}  // namespace

bool async::cancelUnstartedCluster(Job& job, uint64_t& linear) {
  uint64_t index = 0;
  if (tClaimed && tClaimed->job == &job && tClaimed->next < tClaimed->end) {
    index = tClaimed->next++;
  } else {
    index = job.nextCluster.load(std::memory_order_relaxed);
    while (index < job.totalClusters &&
           !job.nextCluster.compare_exchange_weak(index, index + 1, std::memory_order_relaxed)) {}
    if (index >= job.totalClusters) return false;
  }
  linear = job.clusterOrder ? (*job.clusterOrder)[index] : index;
  if (job.lp.ctasFinished) job.lp.ctasFinished->fetch_add(job.clusterSize, std::memory_order_relaxed);
  return true;
}

namespace {

void runJob(Job& job, const std::vector<uint64_t>* clusterOrder, const std::vector<uint32_t>* warpOrder,
            IdleThreads* idle = nullptr) {
  ClaimedClusters claimed{&job};
  struct Publish {  // so that a try_cancel of one of this thread's CTAs can take them (a device launch nests)
    ClaimedClusters* outer;
    explicit Publish(ClaimedClusters* c) : outer(tClaimed) { tClaimed = c; }
    ~Publish() { tClaimed = outer; }
  } publish(&claimed);
  uint64_t& claimedNext = claimed.next;
  uint64_t& claimedEnd = claimed.end;
  unsigned savedCsr = _mm_getcsr();
  _mm_setcsr(0x1f80);  // round to nearest, exceptions masked, no FTZ/DAZ
  struct Parked {
    std::unique_ptr<CtaContext> ctx;
    bool preempted;
  };
  std::vector<Parked> parked;  // round-robin from `next` (no allocation unless a CTA stops)
  size_t next = 0, preempted = 0, mostParked = 0;
  uint64_t creditPhases = 0;  // this thread's, published once (LaunchResult::barrierCreditPhases)
  uint64_t creditExits = 0;   // (LaunchResult::barrierCreditExits)
  uint64_t codeRunWarps = 0;  // (LaunchResult::warpsRunByCtaCode)
  bool startedLast = false;   // the last CTA run was a new one
  const size_t maxParked = job.lp.cooperative ? ~size_t(0) : kWaitingCtas;
  const size_t maxPreempted = job.lp.cooperative ? ~size_t(0) : kPreemptedCtas;
  uint64_t turnsWithoutProgress = 0, lastFinished = 0;
  uint32_t ctasSincePoll = 0;  // (native::upgrade)
  // Deterministic mode: when a whole round of parked CTAs made no progress, since when (to tell the driver once).
  const auto stallNotice = std::chrono::milliseconds(job.lp.config.stallNoticeMs);
  std::chrono::steady_clock::time_point stalledSince{};
  bool stallNoticed = false;
  // turns without progress in a row, while no other thread made any (IdleThreads::progress still read idleSince)
  size_t idleTurns = 0;
  uint32_t idleSince = 0;
  if (idle) {
    idle->awake.fetch_add(1, std::memory_order_seq_cst);
    idleSince = idle->progress.load(std::memory_order_relaxed);
  }
  while (!job.faulted.load(std::memory_order_relaxed)) {
    std::unique_ptr<CtaContext> ctx;
    if (!parked.empty()) {
      uint64_t finished = job.finishedClusters.load(std::memory_order_relaxed);
      if (finished != lastFinished) {
        lastFinished = finished;
        turnsWithoutProgress = 0;
      }
    }
    bool wantNew = (parked.size() < maxParked && preempted < maxPreempted) || turnsWithoutProgress >= parked.size();
    // a parked CTA's turn between two starts, while some wait (for other work; preempted CTAs, in long loops or
    // waits for time, keep waiting while new ones start, up to kPreemptedCtas)
    if (startedLast && parked.size() > preempted) wantNew = false;
    if (wantNew && (claimedNext < claimedEnd || job.nextCluster.load(std::memory_order_relaxed) < job.totalClusters)) {
      if (claimedNext == claimedEnd) {
        claimedNext = std::min(job.nextCluster.fetch_add(job.claimBatch, std::memory_order_relaxed), job.totalClusters);
        claimedEnd = std::min(claimedNext + job.claimBatch, job.totalClusters);
      }
      if (claimedNext < claimedEnd) {
        const uint64_t idx = claimedNext++;
        // A launch that started interpreted asks every kUpgradePoll CTAs this thread starts whether its kernel's code
        // can run now (it got hot by this launch's time, and compiled): the CTAs after that, and its warps as they
        // resume, run it (both tiers give the same results, so where a launch switches changes nothing it computes).
        constexpr uint32_t kUpgradePoll = 64;
        if (job.started != std::chrono::steady_clock::time_point{} && ++ctasSincePoll >= kUpgradePoll &&
            !job.native.load(std::memory_order_relaxed)) {
          ctasSincePoll = 0;
          const auto running = std::chrono::steady_clock::now() - job.started;
          if (const Handler h =
                  native::upgrade(*job.program, *job.entry,
                                  uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(running).count())))
            job.native.store(h, std::memory_order_relaxed);
        }
        ctx = takeContext();
        setupCluster(job, *ctx, clusterOrder ? (*clusterOrder)[idx] : idx);
        turnsWithoutProgress = 0;
        startedLast = true;
      }
    }
    if (!ctx) {
      startedLast = false;
      if (parked.empty()) break;
      if (next >= parked.size()) next = 0;
      ctx = std::move(parked[next].ctx);
      preempted -= parked[next].preempted;
      parked.erase(parked.begin() + std::ptrdiff_t(next));
      ++turnsWithoutProgress;
      if (job.lp.config.deterministic && !stallNoticed) {
        if (turnsWithoutProgress <= parked.size() + 1) {
          stalledSince = {};  // progress within the last round
        } else if (auto now = std::chrono::steady_clock::now(); stalledSince == decltype(now){}) {
          stalledSince = now;
        } else if (now - stalledSince >= stallNotice) {
          stallNoticed = true;
          job.host->deterministicStall(job.info->name, job.lp.config.stallNoticeMs / 1000);
        }
      }
    }
    bool progressed = false;
    CtaStatus st = runCluster(ctx->cluster, warpOrder, job.rankOrder, progressed);
    for (Cta* c : ctx->cluster.ctas) {
      creditPhases += c->creditPhases;
      creditExits += c->creditExits;
      codeRunWarps += c->codeRunWarps;
      c->creditPhases = c->creditExits = c->codeRunWarps = 0;
    }
    // (before any CTA was parked no thread sleeps: a grid that never waits pays no shared atomic per CTA)
    if (idle && (st == CtaStatus::Waiting || job.parking.load(std::memory_order_relaxed))) {
      if (progressed || st != CtaStatus::Waiting) {
        idle->madeProgress();
        idleTurns = 0;
        idleSince = idle->progress.load(std::memory_order_relaxed);
      } else if (const uint32_t now = idle->progress.load(std::memory_order_relaxed); now != idleSince) {
        idleTurns = 0;
        idleSince = now;
      } else if (++idleTurns >= 2 * (parked.size() + 1) && preempted == 0 && claimedNext == claimedEnd &&
                 job.nextCluster.load(std::memory_order_relaxed) >= job.totalClusters) {
        idle->sleepUnless(idleSince);
        idleTurns = 0;
        idleSince = idle->progress.load(std::memory_order_relaxed);
      }
    }
    if (st == CtaStatus::Preempted || st == CtaStatus::Waiting) {
      if (!job.parking.load(std::memory_order_relaxed)) job.parking.store(true, std::memory_order_relaxed);
      bool p = st == CtaStatus::Preempted;
      preempted += p;
      parked.insert(parked.begin() + std::ptrdiff_t(std::min(next++, parked.size())), Parked{std::move(ctx), p});
      mostParked = std::max(mostParked, parked.size());
      continue;
    }
    giveContext(std::move(ctx));
    if (st == CtaStatus::Faulted) break;
    if (job.parking.load(std::memory_order_relaxed)) job.finishedClusters.fetch_add(1, std::memory_order_relaxed);
    if (job.lp.ctasFinished) job.lp.ctasFinished->fetch_add(job.clusterSize, std::memory_order_relaxed);
  }
  for (auto& c : parked) giveContext(std::move(c.ctx));
  if (idle) {  // the threads asleep may hold the grid's last CTAs: one of them is the last awake now
    idle->awake.fetch_sub(1, std::memory_order_seq_cst);
    idle->madeProgress();
  }
  if (creditPhases) job.creditPhases.fetch_add(creditPhases, std::memory_order_relaxed);
  if (creditExits) job.creditExits.fetch_add(creditExits, std::memory_order_relaxed);
  if (codeRunWarps) job.codeRunWarps.fetch_add(codeRunWarps, std::memory_order_relaxed);
  // this thread's most, published once (LaunchResult::maxParkedCtas)
  uint64_t seen = job.maxParked.load(std::memory_order_relaxed);
  while (seen < mostParked && !job.maxParked.compare_exchange_weak(seen, mostParked)) {}
  _mm_setcsr(savedCsr);
}

// ---- worker pool -------------------------------------------------------------------------------------------------

struct PoolJob {
  Job* job;
  std::atomic<int> helpersWanted;
  std::atomic<int> helpersActive{0};
  IdleThreads idle{};
};

class Pool {
 public:
  static Pool& instance() {
    static Pool* p = new Pool();  // leaked on purpose: threads live until process exit
    return *p;
  }
  unsigned size() const { return unsigned(threads_.size()); }

  void ensureThreads(unsigned n) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (threads_.size() < n) {
      threads_.emplace_back([this] { workerLoop(); });
      threads_.back().detach();
    }
  }

  void submit(PoolJob* pj) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(pj);
    }
    int n = pj->helpersWanted.load();
    if (n >= int(threads_.size()))
      cv_.notify_all();
    else
      for (int i = 0; i < n; ++i) cv_.notify_one();
  }

  void retire(PoolJob* pj) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), pj);
    if (it != queue_.end()) queue_.erase(it);
  }

 private:
  void workerLoop() {
    for (;;) {
      PoolJob* pj = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        pj = queue_.front();
        if (pj->helpersWanted.fetch_sub(1) <= 1) queue_.pop_front();
        pj->helpersActive.fetch_add(1);
      }
      runJob(*pj->job, nullptr, nullptr, pj->job->lp.config.idleThreadsSleep ? &pj->idle : nullptr);
      if (pj->helpersActive.fetch_sub(1) == 1) pj->helpersActive.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<PoolJob*> queue_;
  std::vector<std::thread> threads_;
};

// The kernel timeout (ExecConfig::timeoutMs): one process-wide thread, started by the first launch that has a
// timeout, sleeps until the earliest deadline and raises FaultKind::Timeout on that job. Raising a fault is how
// a grid is stopped anyway: every warp's return to its CTA loop and every CTA turn test Job::faulted, so the
// watched grid pays nothing per instruction. A job is unregistered (under the same lock) before it is
// destroyed, so the thread never touches a finished one.
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* w = new Watchdog();  // leaked on purpose: its thread lives until process exit
    return *w;
  }
  void watch(Job& job, uint64_t timeoutMs) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(Entry{&job, deadline, timeoutMs});
      if (!started_) {
        started_ = true;
        std::thread([this] { loop(); }).detach();
      }
    }
    cv_.notify_one();
  }
  void unwatch(Job& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(jobs_, [&](const Entry& e) { return e.job == &job; });
  }

 private:
  struct Entry {
    Job* job;
    std::chrono::steady_clock::time_point deadline;
    uint64_t timeoutMs;
  };
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (jobs_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto earliest = std::min_element(jobs_.begin(), jobs_.end(),
                                       [](const Entry& a, const Entry& b) { return a.deadline < b.deadline; });
      if (std::chrono::steady_clock::now() < earliest->deadline) {
        cv_.wait_until(lock, earliest->deadline);
        continue;
      }
      Job& job = *earliest->job;
      uint64_t timeoutMs = earliest->timeoutMs;
      jobs_.erase(earliest);
      Fault f;
      f.kind = FaultKind::Timeout;
      f.kernel = job.info->name;
      f.message = fmt::format(
          "kernel '{}' was stopped after running for {} ms, its time limit (watchdog): it "
          "loops without end or waits for memory that nothing writes",
          f.kernel, timeoutMs);
      job.raise(std::move(f));
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Entry> jobs_;
  bool started_ = false;
};

LaunchResult invalid(const Program& program, int kernelIndex, std::string msg) {
  LaunchResult r;
  r.fault.kind = FaultKind::LaunchInvalid;
  if (kernelIndex >= 0 && size_t(kernelIndex) < program.kernelInfo.size())
    r.fault.kernel = program.kernelInfo[size_t(kernelIndex)].name;
  r.fault.message = std::move(msg);
  return r;
}

}  // namespace

LaunchResult launch(const Program& program, int kernelIndex, const LaunchParams& lp) {
  if (kernelIndex < 0 || size_t(kernelIndex) >= program.kernelInfo.size())
    return invalid(program, kernelIndex, "invalid kernel index");
  int codeKernel = 0;
  const Program& codeProgram = loweredKernel(program, kernelIndex, codeKernel);
  const KernelInfo& info = codeProgram.kernelInfo[size_t(codeKernel)];
  const KernelCode& code = codeProgram.kernelCode[size_t(codeKernel)];
  if (!lp.memory) return invalid(program, kernelIndex, "no memory validator");
  if (lp.block.x == 0 || lp.block.y == 0 || lp.block.z == 0 || lp.grid.x == 0 || lp.grid.y == 0 || lp.grid.z == 0)
    return invalid(program, kernelIndex, "grid and block dimensions must be non-zero");
  // A block other than .reqntid's runs: the GPU runs such a grid when a kernel launches it (driver 580 on an H100);
  // the driver refuses it where a host launches it.
  if (lp.block.count() > info.maxThreadsOfAnyShape() || lp.block.x > 1024 || lp.block.y > 1024 || lp.block.z > 64)
    return invalid(program, kernelIndex,
                   fmt::format("block of {} threads exceeds the kernel's limit of {}", lp.block.count(),
                               info.maxThreadsOfAnyShape()));
  if (lp.grid.y > 65535 || lp.grid.z > 65535 || lp.grid.x > 0x7fffffffu)
    return invalid(program, kernelIndex, "grid dimensions out of range");
  if (lp.paramBytes < info.paramBytes || (info.paramBytes && !lp.params))
    return invalid(program, kernelIndex,
                   fmt::format("kernel expects {} bytes of parameters, got {}", info.paramBytes, lp.paramBytes));
  if (!program.globalInfo.empty() && !lp.globalAddresses)
    return invalid(program, kernelIndex, "global variable addresses missing");
  if (!code.unsupported.empty()) {
    LaunchResult r;
    r.fault.kind = FaultKind::IllegalInstruction;
    r.fault.kernel = info.name;
    r.fault.message = code.unsupported;
    return r;
  }

  Job job;
  job.program = &codeProgram;
  job.module = &program;
  job.code = &code;
  job.info = &info;
  job.entry = &codeProgram.functions[code.function];
  job.native = native::codeFor(codeProgram, *job.entry,
                               uint64_t(lp.grid.x) * lp.grid.y * lp.grid.z * lp.block.x * lp.block.y * lp.block.z);
  // an interpreted launch's time counts toward the kernel's hotness, while the tier is on (NativeTierPolicy), and it
  // may switch to compiled code while it runs (runJob: native::upgrade)
  const bool timed = !job.native && nativeTier();
  const auto started = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  job.started = started;
  job.lp = lp;
  job.host = lp.host ? lp.host : &defaultHost();
  job.paramBuffer.assign(static_cast<const uint8_t*>(lp.params),
                         static_cast<const uint8_t*>(lp.params) + lp.paramBytes);
  if (job.paramBuffer.empty()) job.paramBuffer.resize(1);  // keep data() distinct and valid
  job.launchId = gLaunchCounter.fetch_add(1);
  const bool shapeGiven = lp.cluster.x || lp.cluster.y || lp.cluster.z;
  job.clusterShape = shapeGiven ? lp.cluster : info.reqnctapercluster.x ? info.reqnctapercluster : Dim3{1, 1, 1};
  job.explicitCluster = shapeGiven || info.reqnctapercluster.x;
  const Dim3& shape = job.clusterShape;
  if (!shape.x || !shape.y || !shape.z || shape.count() > kMaxClusterSize)
    return invalid(program, kernelIndex, fmt::format("a cluster has 1 to {} CTAs", kMaxClusterSize));
  if (lp.grid.x % shape.x || lp.grid.y % shape.y || lp.grid.z % shape.z)
    return invalid(program, kernelIndex,
                   fmt::format("clusters of {}x{}x{} CTAs do not tile the grid of {}x{}x{}", shape.x, shape.y, shape.z,
                               lp.grid.x, lp.grid.y, lp.grid.z));
  job.clusterSize = uint32_t(shape.count());
  job.totalClusters = lp.grid.count() / job.clusterSize;
  job.sharedBytes = code.dynamicSharedBase + lp.dynamicSharedBytes;
  if (job.sharedBytes > (1u << 24)) return invalid(program, kernelIndex, "shared memory size too large");
  // constants
  job.constImage.assign(code.regFileBytes - code.constStart, 0);
  for (const ConstSlot& s : code.consts) {
    uint64_t v = s.value;
    if (s.kind == ConstKind::GlobalAddress) {
      v = lp.globalAddresses[s.value] + uint64_t(s.addend);
    } else if (s.kind == ConstKind::ParamValue) {
      v = 0;
      std::memcpy(&v, job.paramBuffer.data() + s.value, s.size);  // in range: paramBytes checked above
    } else if (s.kind == ConstKind::LaunchDim) {
      const Dim3& d = s.value < 3 ? lp.block : lp.grid;
      v = d.component(uint32_t(s.value % 3));
    }
    broadcastSlot(job.constImage.data() + (s.offset - code.constStart), s, v);
  }

  if (lp.config.timeoutMs) Watchdog::instance().watch(job, lp.config.timeoutMs);
  static const unsigned hw = std::max(1u, std::thread::hardware_concurrency());  // a syscall: ask once
  unsigned threads = lp.config.threads ? lp.config.threads : hw;
  job.smCount = lp.config.smCount ? lp.config.smCount : threads;
  job.claimBatch = lp.config.deterministic || threads <= 1
                       ? 64
                       : std::clamp<uint64_t>(job.totalClusters / (uint64_t(threads) * 32), 1, 16);
  if (lp.config.deterministic) {
    std::vector<uint64_t> clusterOrder;
    std::vector<uint32_t> warpOrder;
    if (lp.config.scheduleSeed) {
      std::mt19937_64 rng(lp.config.scheduleSeed);
      if (job.totalClusters <= (1u << 24)) {
        clusterOrder.resize(job.totalClusters);
        for (uint64_t i = 0; i < job.totalClusters; ++i) clusterOrder[i] = i;
        std::shuffle(clusterOrder.begin(), clusterOrder.end(), rng);
      }
      uint32_t nw = uint32_t((lp.block.count() + 31) / 32);
      warpOrder.resize(nw);
      for (uint32_t i = 0; i < nw; ++i) warpOrder[i] = i;
      std::shuffle(warpOrder.begin(), warpOrder.end(), rng);
      if (job.clusterSize > 1) {
        job.rankOrder.resize(job.clusterSize);
        for (uint32_t i = 0; i < job.clusterSize; ++i) job.rankOrder[i] = i;
        std::shuffle(job.rankOrder.begin(), job.rankOrder.end(), rng);
      }
    }
    job.clusterOrder = clusterOrder.empty() ? nullptr : &clusterOrder;
    runJob(job, job.clusterOrder, warpOrder.empty() ? nullptr : &warpOrder);
    job.clusterOrder = nullptr;
  } else if (threads <= 1 || job.totalClusters == 1) {
    runJob(job, nullptr, nullptr);
  } else {
    Pool& pool = Pool::instance();
    unsigned helpers = unsigned(std::min<uint64_t>(threads - 1, job.totalClusters - 1));
    pool.ensureThreads(helpers);
    PoolJob pj{&job, {int(helpers)}};
    pool.submit(&pj);
    runJob(job, nullptr, nullptr, lp.config.idleThreadsSleep ? &pj.idle : nullptr);
    pool.retire(&pj);
    for (;;) {
      int active = pj.helpersActive.load();
      if (active == 0) break;
      pj.helpersActive.wait(active);
    }
  }
  if (lp.config.timeoutMs) Watchdog::instance().unwatch(job);
  if (timed)
    native::interpreted(
        codeProgram, *job.entry,
        uint64_t(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count()));
  LaunchResult r;
  if (job.faulted.load()) r.fault = job.fault;
  r.maxParkedCtas = job.maxParked.load();
  r.barrierCreditPhases = job.creditPhases.load();
  r.barrierCreditExits = job.creditExits.load();
  r.warpsRunByCtaCode = job.codeRunWarps.load();
  return r;
}

}  // namespace ptx::exec
