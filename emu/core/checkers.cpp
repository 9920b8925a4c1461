#include "core/checkers.h"

#include "api/impl.h"
#include "core/address_space.h"
#include "core/fault.h"
#include "ptx/checker.h"
#include "ptx/exec.h"

#include <cxxabi.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cuemu::checkers {
namespace {

Tool g_tool = Tool::None;
bool g_leakCheck = false;
bool g_globalRaces = false;  // racecheck also checks global memory (CUEMU_RACECHECK_GLOBAL)
int g_errorExitCode = 0;     // 0: the program's own exit status
std::atomic<uint64_t> g_errors{0};
std::atomic<uint64_t> g_hazards{0};
std::atomic<uint64_t> g_hazardWarnings{0};  // racecheck: hazards within a warp

// Reports go straight to the standard output's descriptor, as compute-sanitizer's do: the program's own buffered
// output does not hold them back.
std::mutex g_outputMutex;
void print(const std::string& text) {
  std::lock_guard lock(g_outputMutex);
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(1, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += size_t(n);
  }
}

constexpr const char* kPrefix = "========= ";

// 1,048,576: compute-sanitizer's way of writing byte counts in reports.
std::string withCommas(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string demangled(std::string_view mangled) {
  std::string name(mangled);
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !text) return name;
  std::string out = text;
  std::free(text);
  return out;
}

// "kernel(int*, int) in file.cu:5 (PTX line 42)": compute-sanitizer gives a SASS offset where we have a PTX line.
std::string location(std::string_view kernel, const ptx::exec::Program* program, uint32_t ptxLine) {
  ptx::exec::SourceLocation source;
  if (program) source = ptx::exec::sourceLocation(*program, ptxLine);
  if (source.line)
    return fmt::format("{} in {}:{} (PTX line {})", demangled(kernel), source.file, source.line, ptxLine);
  return fmt::format("{} at PTX line {}", demangled(kernel), ptxLine);
}

std::string deviceFrame(std::string_view kernel, const ptx::exec::Program* program, uint32_t ptxLine) {
  if (!program) return {};
  ptx::exec::SourceLocation source = ptx::exec::sourceLocation(*program, ptxLine);
  if (source.callerFile.empty()) return {};
  return fmt::format("{}        Device Frame: {} in {}:{}\n", kPrefix, demangled(kernel), source.callerFile,
                     source.callerLine);
}

std::string dim(const ptx::exec::Dim3& d) { return fmt::format("({},{},{})", d.x, d.y, d.z); }

// ---- allocations: the leak check, and the allocations initcheck tracks -----------------------------------------

struct Allocation {
  uint64_t bytes = 0;
  uint64_t sequence = 0;
  std::vector<uint64_t> written;  // initcheck: one bit per byte
};

// Never destroyed: the report at exit (an atexit handler registered at load time) still uses it.
struct Allocations {
  std::shared_mutex mutex;
  std::map<uint64_t, Allocation> live;  // by start
  uint64_t sequence = 0;
  std::map<uint64_t, uint64_t> freed;  // recently freed: start -> bytes, to say so when a kernel touches one
  std::mutex heapMutex;
  std::map<uint64_t, uint64_t> heapBlocks;  // device heap: start -> bytes
};
Allocations& allocations() {
  static Allocations* state = new Allocations;
  return *state;
}

// The tools that follow allocations: memcheck (the leak check, use after free) and initcheck (written bytes).
bool tracksAllocations() { return g_tool == Tool::Memcheck || g_tool == Tool::Initcheck; }

// `initialised`: contents initcheck does not follow (managed memory the host writes directly).
void trackAllocation(uint64_t start, uint64_t bytes, bool initialised) {
  Allocations& s = allocations();
  std::unique_lock lock(s.mutex);
  Allocation& a = s.live[start];
  a = Allocation{};
  a.bytes = bytes;
  a.sequence = s.sequence++;
  if (g_tool == Tool::Initcheck && !initialised) a.written.assign((bytes + 63) / 64, 0);
  auto freed = s.freed.lower_bound(start);
  while (freed != s.freed.end() && freed->first < start + bytes) freed = s.freed.erase(freed);
}

void untrackAllocation(uint64_t start) {
  Allocations& s = allocations();
  std::unique_lock lock(s.mutex);
  auto it = s.live.find(start);
  if (it == s.live.end()) return;
  if (s.freed.size() > 4096) s.freed.erase(s.freed.begin());
  s.freed[start] = it->second.bytes;
  s.live.erase(it);
}

// The tracked allocation holding `address` and the offset in it, or null. Bytes outside the tracked allocations
// count as written: their contents come from elsewhere (module variables, pools).
Allocation* holding(Allocations& s, uint64_t address, uint64_t& offset) {
  auto it = s.live.upper_bound(address);
  if (it == s.live.begin()) return nullptr;
  --it;
  offset = address - it->first;
  return offset < it->second.bytes && !it->second.written.empty() ? &it->second : nullptr;
}

// Calls `f(word, mask)` for the bits of bytes [offset, offset + bytes) of `a`, a word at a time.
template <class F> bool forBits(Allocation& a, uint64_t offset, uint64_t bytes, F f) {
  for (uint64_t b = offset, end = std::min(a.bytes, offset + bytes); b < end;) {
    uint64_t n = std::min<uint64_t>(end - b, 64 - (b & 63));
    uint64_t mask = (n == 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1)) << (b & 63);
    if (!f(a.written[b >> 6], mask)) return false;
    b += n;
  }
  return true;
}

// Marks the bytes of one warp's stores written, or returns the lanes whose loads read a byte never written; an
// atomic does both, lane after lane (the first lane reads what nothing wrote, the next ones what it wrote).
// Under the shared lock (kernels' threads mark and test at once; bits are set atomically): only tracking and
// untracking allocations take it exclusively. One lookup serves the lanes that fall in the same allocation.
uint32_t markOrFindUnwritten(uint32_t lanes, const uint64_t* addresses, uint32_t bytes,
                             ptx::exec::GlobalAccess access) {
  using ptx::exec::GlobalAccess;
  Allocations& s = allocations();
  std::shared_lock lock(s.mutex);
  uint64_t start = 0, end = 0;
  Allocation* a = nullptr;
  uint32_t unwritten = 0;
  for (uint32_t m = lanes; m; m &= m - 1) {
    int lane = std::countr_zero(m);
    uint64_t address = addresses[lane];
    if (address - start >= end - start) {
      uint64_t offset = 0;
      a = holding(s, address, offset);
      start = a ? address - offset : 0;
      end = a ? start + a->bytes : 0;
      if (!a) continue;
    }
    if (readsMemory(access) && !forBits(*a, address - start, bytes, [](uint64_t& word, uint64_t mask) {
          return (std::atomic_ref<uint64_t>(word).load(std::memory_order_relaxed) & mask) == mask;
        }))
      unwritten |= 1u << lane;
    if (writesMemory(access))
      forBits(*a, address - start, bytes, [](uint64_t& word, uint64_t mask) {
        if ((std::atomic_ref<uint64_t>(word).load(std::memory_order_relaxed) & mask) != mask)
          std::atomic_ref<uint64_t>(word).fetch_or(mask, std::memory_order_relaxed);
        return true;
      });
  }
  return unwritten;
}

void markWritten(uint64_t address, uint64_t bytes) {
  Allocations& s = allocations();
  std::shared_lock lock(s.mutex);
  uint64_t offset = 0;
  if (Allocation* a = holding(s, address, offset))
    forBits(*a, offset, bytes, [](uint64_t& word, uint64_t mask) {
      std::atomic_ref<uint64_t>(word).fetch_or(mask, std::memory_order_relaxed);
      return true;
    });
}

// ---- memcheck: a kernel's invalid access -------------------------------------------------------------------------

const char* spaceName(ptx::exec::FaultAccess::Space space) {
  using S = ptx::exec::FaultAccess::Space;
  switch (space) {
    case S::Shared: return "__shared__";
    case S::Local: return "__local__";
    default: return "__global__";
  }
}

const char* accessName(ptx::exec::FaultAccess::Kind kind) {
  using K = ptx::exec::FaultAccess::Kind;
  switch (kind) {
    case K::Write: return "write";
    case K::Atomic: return "atomic";
    default: return "read";
  }
}

std::string nearestAllocation(uint64_t address) {
  RegionPtr region = AddressSpace::instance().nearest(address);
  std::string out;
  if (region) {
    if (address >= region->start && address < region->end())
      out = fmt::format("{}    and is inside the nearest allocation at 0x{:x} of size {} bytes\n", kPrefix,
                        region->start, withCommas(region->size));
    else if (address >= region->end())
      out = fmt::format("{}    and is {} bytes after the nearest allocation at 0x{:x} of size {} bytes\n", kPrefix,
                        withCommas(address - region->end() + 1), region->start, withCommas(region->size));
    else
      out = fmt::format("{}    and is {} bytes before the nearest allocation at 0x{:x} of size {} bytes\n", kPrefix,
                        withCommas(region->start - address), region->start, withCommas(region->size));
  }
  Allocations& s = allocations();
  std::shared_lock lock(s.mutex);
  auto freed = s.freed.upper_bound(address);
  if (freed != s.freed.begin() && address - std::prev(freed)->first < std::prev(freed)->second)
    out += fmt::format("{}    and is inside an allocation of {} bytes at 0x{:x} that the program freed\n", kPrefix,
                       withCommas(std::prev(freed)->second), std::prev(freed)->first);
  return out;
}

bool reportInvalidAccess(const ptx::exec::Fault& fault, const ptx::exec::Program& program) {
  using ptx::exec::FaultKind;
  if ((fault.kind != FaultKind::IllegalAddress && fault.kind != FaultKind::MisalignedAddress) ||
      fault.access.kind == ptx::exec::FaultAccess::Kind::None)
    return false;
  std::string text = fmt::format("{}Invalid {} {} of size {} bytes\n", kPrefix, spaceName(fault.access.space),
                                 accessName(fault.access.kind), fault.access.bytes);
  text += fmt::format("{}    at {}\n", kPrefix, location(fault.kernel, &program, fault.ptxLine));
  text += fmt::format("{}    by thread {} in block {}\n", kPrefix, dim(fault.thread), dim(fault.block));
  text += fmt::format("{}    Access to 0x{:x} is {}\n", kPrefix, fault.address,
                      fault.kind == FaultKind::MisalignedAddress ? "misaligned" : "out of bounds");
  if (fault.access.space == ptx::exec::FaultAccess::Space::Global) text += nearestAllocation(fault.address);
  text += deviceFrame(fault.kernel, &program, fault.ptxLine);
  text += fmt::format("{}\n", kPrefix);
  print(text);
  g_errors.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// ---- the checkers the interpreter calls during a launch ----------------------------------------------------------

// One pair of instructions: a hazard between them is one report whichever ran first (a read-after-write one way
// is a write-after-read the other), as compute-sanitizer reports a pair once with its count.
struct HazardKey {
  std::string kernel;
  bool global;      // in global memory (CUEMU_RACECHECK_GLOBAL), not shared
  bool withinWarp;  // between lanes of one warp: compute-sanitizer's warning, not error
  bool firstWrites, secondWrites;
  uint32_t first, second;  // PTX lines, first <= second
  auto operator<=>(const HazardKey&) const = default;
};
struct HazardCount {
  bool earlierWrites, laterWrites;  // the order in which the pair was first seen
  uint32_t earlier, later;
  uint64_t count = 0;
};

// ---- racecheck's global-memory races within a grid (CUEMU_RACECHECK_GLOBAL) -------------------------------------

// One global word's last write and last read in the grid: the thread (CTA + 1, 0 = none; thread index in its CTA),
// its warp's barrier and barrier-or-__syncwarp counts then, its count of gpu-scope fences then, the PTX line.
struct GlobalAccessRecord {
  uint32_t cta = 0;
  uint16_t thread = 0;
  bool strong = false;  // an atomic, or a .volatile/.relaxed/.acquire/.release load or store
  uint32_t barriers = 0, warpSyncs = 0, fences = 0;
  uint32_t line = 0;
};
static_assert(sizeof(GlobalAccessRecord) == 24);
struct GlobalCell {
  GlobalAccessRecord write, read;
};

// Two accesses of one grid to the same global word, one of them writing and not both strong (atomics, volatile or
// scoped loads and stores), race when nothing orders them: between warps of a CTA, no barrier between them; between
// lanes of a warp, no barrier or __syncwarp (a warning, as for shared memory); between CTAs, the grid has no barrier,
// so they race unless the earlier thread's write or read was released (a gpu-scope fence after it by its thread, or by
// a thread of its CTA after a later barrier) and the later thread acquired (an atomic or a fence of its own before, or
// of a thread of its CTA before a barrier it passed): the message-passing of __threadfence() and an atomic flag or
// ticket, as in a last-block reduction. Cooperative grid-wide barriers are not followed (accesses they order are
// reported).
class GlobalRaces {
 public:
  GlobalRaces(ptx::exec::Dim3 grid, ptx::exec::Dim3 block)
      : grid_(grid),
        blockThreads_(block.x * block.y * block.z),
        ctas_(uint64_t(grid.x) * grid.y * grid.z),
        threadFences_(ctas_ * blockThreads_),
        threadAcquired_(ctas_ * blockThreads_),
        ctaFencedAt_(ctas_),
        ctaAcquiredFrom_(ctas_, ~uint32_t(0)) {}

  struct Found {
    ptx::exec::HazardKind kind;
    uint32_t earlierLine;
    bool withinWarp;
  };

  // The accesses of one warp instruction; `found` is called for each lane whose access races with an earlier one
  // (once a lane).
  template <class F> void accesses(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes,
                                   const uint64_t* addresses, uint32_t bytes, ptx::exec::GlobalAccess access, F found) {
    using ptx::exec::GlobalAccess;
    const uint32_t cta = ctaOf(site.block);
    Page* page = nullptr;  // the lanes' words are mostly in one page: its lock is held across them
    uint64_t pageNumber = 0;
    for (uint32_t m = lanes; m; m &= m - 1) {
      const int lane = std::countr_zero(m);
      const uint32_t thread = warp * 32 + uint32_t(lane);
      const uint64_t global = uint64_t(cta) * blockThreads_ + thread;
      if (global >= threadFences_.size()) continue;
      GlobalAccessRecord me{cta + 1,          uint16_t(thread),
                            isStrong(access), site.barriers,
                            site.warpSyncs,   std::atomic_ref(threadFences_[global]).load(std::memory_order_relaxed),
                            site.ptxLine};
      const bool acquired = std::atomic_ref(threadAcquired_[global]).load(std::memory_order_relaxed) ||
                            std::atomic_ref(ctaAcquiredFrom_[cta]).load(std::memory_order_relaxed) <= site.barriers;
      const bool writes = writesMemory(access);  // an atomic's record is its write
      bool reported = false;
      for (uint64_t word = addresses[lane] / 4; word <= (addresses[lane] + bytes - 1) / 4; ++word) {
        if (!page || word / kPageWords != pageNumber) {
          if (page) page->mutex.unlock();
          pageNumber = word / kPageWords;
          page = &pageOf(pageNumber);
          page->mutex.lock();
        }
        GlobalCell& c = page->cells[word % kPageWords];
        if (!reported && c.write.cta && racing(c.write, me, acquired, writes && c.write.line == me.line)) {
          found(Found{writes ? ptx::exec::HazardKind::WriteAfterWrite : ptx::exec::HazardKind::ReadAfterWrite,
                      c.write.line, sameWarp(c.write, me)});
          reported = true;
        }
        if (!reported && writes && c.read.cta && racing(c.read, me, acquired, false)) {
          found(Found{ptx::exec::HazardKind::WriteAfterRead, c.read.line, sameWarp(c.read, me)});
          reported = true;
        }
        if (writes) c.write = me;
        if (!writes) c.read = me;
      }
      // strong accesses synchronise as the fences around them would: an atomic or strong load acquires, an
      // atomic or strong store releases what the thread did before it
      if (access == GlobalAccess::Atomic || access == GlobalAccess::StrongLoad) acquire(global, cta, site.barriers);
      if (access == GlobalAccess::Atomic || access == GlobalAccess::StrongStore) release(global, cta, site.barriers);
    }
    if (page) page->mutex.unlock();
  }

  void fence(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes) {
    const uint32_t cta = ctaOf(site.block);
    for (uint32_t m = lanes; m; m &= m - 1) {
      const uint64_t global = uint64_t(cta) * blockThreads_ + warp * 32 + uint32_t(std::countr_zero(m));
      if (global >= threadFences_.size()) continue;
      release(global, cta, site.barriers);
      acquire(global, cta, site.barriers);
    }
  }

 private:
  // The shadow: pages of 1024 words, made at first touch.
  static constexpr uint64_t kPageWords = 1024;
  struct Page {
    std::mutex mutex;
    GlobalCell cells[kPageWords];
  };
  Page& pageOf(uint64_t number) {
    {
      std::shared_lock lock(pagesMutex_);
      if (auto it = pages_.find(number); it != pages_.end()) return *it->second;
    }
    std::unique_lock lock(pagesMutex_);
    auto& page = pages_[number];
    if (!page) page = std::make_unique<Page>();
    return *page;
  }

  uint32_t ctaOf(const ptx::exec::Dim3& b) const { return b.x + grid_.x * (b.y + grid_.y * b.z); }
  static bool sameWarp(const GlobalAccessRecord& a, const GlobalAccessRecord& b) {
    return a.cta == b.cta && a.thread / 32 == b.thread / 32;
  }

  // Whether `earlier` and `later` (by the same word; one of them writes) race. `oneStore`: two stores of one
  // instruction, which imply no order within it and are no hazard.
  bool racing(const GlobalAccessRecord& earlier, const GlobalAccessRecord& later, bool laterAcquired, bool oneStore) {
    if (earlier.strong && later.strong) return false;
    if (earlier.cta == later.cta) {
      if (earlier.thread == later.thread) return false;
      if (earlier.thread / 32 != later.thread / 32) return earlier.barriers == later.barriers;
      return earlier.warpSyncs == later.warpSyncs && !oneStore;
    }
    const uint64_t global = uint64_t(earlier.cta - 1) * blockThreads_ + earlier.thread;
    const bool released =
        std::atomic_ref(threadFences_[global]).load(std::memory_order_relaxed) > earlier.fences ||
        std::atomic_ref(ctaFencedAt_[earlier.cta - 1]).load(std::memory_order_relaxed) > earlier.barriers + 1;
    return !(released && laterAcquired);
  }

  // A fence (or a strong store) at barrier count b releases what its thread did before, and what every thread of the
  // CTA did before barrier b.
  void release(uint64_t global, uint32_t cta, uint32_t barriers) {
    std::atomic_ref(threadFences_[global]).fetch_add(1, std::memory_order_relaxed);
    uint32_t fencedAt = std::atomic_ref(ctaFencedAt_[cta]).load(std::memory_order_relaxed);
    while (fencedAt < barriers + 1 &&
           !std::atomic_ref(ctaFencedAt_[cta]).compare_exchange_weak(fencedAt, barriers + 1)) {}
  }

  void acquire(uint64_t global, uint32_t cta, uint32_t barriers) {
    std::atomic_ref(threadAcquired_[global]).store(1, std::memory_order_relaxed);
    // the CTA's other threads acquire at their next barrier
    uint32_t from = std::atomic_ref(ctaAcquiredFrom_[cta]).load(std::memory_order_relaxed);
    while (from > barriers + 1 && !std::atomic_ref(ctaAcquiredFrom_[cta]).compare_exchange_weak(from, barriers + 1)) {}
  }

  ptx::exec::Dim3 grid_;
  uint64_t blockThreads_, ctas_;
  std::vector<uint32_t> threadFences_;     // gpu-scope fences each thread of the grid executed
  std::vector<uint8_t> threadAcquired_;    // each thread executed an atomic or a fence
  std::vector<uint32_t> ctaFencedAt_;      // a CTA's latest barrier count + 1 at which one of its threads fenced
  std::vector<uint32_t> ctaAcquiredFrom_;  // a CTA's barrier count from which all its threads acquired
  std::shared_mutex pagesMutex_;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

class Watch final : public LaunchWatch, public ptx::exec::Checker {
 public:
  explicit Watch(std::string_view kernel) : kernel_(kernel) {}

  void globalAccesses(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes, const uint64_t* addresses,
                      uint32_t bytes, ptx::exec::GlobalAccess access) override {
    if (globalRaces_) {
      globalRaces_->accesses(site, warp, lanes, addresses, bytes, access, [&](const GlobalRaces::Found& f) {
        recordHazard(site, f.kind, f.earlierLine, f.withinWarp, true);
      });
      return;
    }
    uint32_t unwritten = markOrFindUnwritten(lanes, addresses, bytes, access);
    if (!unwritten) [[likely]]
      return;
    std::string text;
    for (uint32_t m = unwritten; m; m &= m - 1) {
      int lane = std::countr_zero(m);
      uint32_t t = warp * 32 + uint32_t(lane);
      ptx::exec::Dim3 thread{t % block_.x, (t / block_.x) % block_.y, t / (block_.x * block_.y)};
      text += fmt::format("{}Uninitialized __global__ memory read of size {} bytes\n", kPrefix, bytes);
      text += fmt::format("{}    at {}\n", kPrefix, location(site.kernel, site.program, site.ptxLine));
      text += fmt::format("{}    by thread {} in block {}\n", kPrefix, dim(thread), dim(site.block));
      text += fmt::format("{}    Address 0x{:x}\n", kPrefix, addresses[lane]);
      text += deviceFrame(site.kernel, site.program, site.ptxLine);
      text += fmt::format("{}\n", kPrefix);
      g_errors.fetch_add(1, std::memory_order_relaxed);
    }
    print(text);
  }

  void sharedHazard(const ptx::exec::CheckSite& site, ptx::exec::HazardKind kind, uint32_t earlierLine, uint64_t,
                    bool withinWarp) override {
    recordHazard(site, kind, earlierLine, withinWarp, false);
  }

  void fence(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes) override {
    if (globalRaces_) globalRaces_->fence(site, warp, lanes);
  }

  void recordHazard(const ptx::exec::CheckSite& site, ptx::exec::HazardKind kind, uint32_t earlierLine, bool withinWarp,
                    bool global) {
    using H = ptx::exec::HazardKind;
    bool earlierWrites = kind != H::WriteAfterRead, laterWrites = kind != H::ReadAfterWrite;
    std::pair<uint32_t, bool> a{earlierLine, earlierWrites}, b{site.ptxLine, laterWrites};
    if (b < a) std::swap(a, b);
    std::lock_guard lock(mutex_);
    program_ = site.program;
    HazardCount& h =
        hazards_[HazardKey{std::string(site.kernel), global, withinWarp, a.second, b.second, a.first, b.first}];
    if (h.count++ == 0) h = HazardCount{earlierWrites, laterWrites, earlierLine, site.ptxLine, 1};
  }

  bool divergentBarrier(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t arrived, uint32_t) override {
    reportBarrierError(site, warp, arrived, "Divergent thread(s) in warp");
    return false;  // the other warps report theirs too, as on the GPU; the launch fails at its end
  }

  bool barrierCountMismatch(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes, uint32_t) override {
    reportBarrierError(site, warp, lanes, "Divergent thread(s) in block");
    return true;  // an H100 stops the grid here (an illegal instruction without the tool)
  }

  bool warpMask(const ptx::exec::CheckSite& site, uint32_t warp, ptx::exec::WarpCollective op,
                ptx::exec::WarpMaskIssue issue, uint32_t lanes, uint32_t mask) override {
    using ptx::exec::WarpMaskIssue;
    if (issue == WarpMaskIssue::OutsideOwnMask &&
        (op == ptx::exec::WarpCollective::WarpSync || op == ptx::exec::WarpCollective::Vote)) {
      reportBarrierError(site, warp, lanes, "Invalid arguments");  // compute-sanitizer's own check
      return false;
    }
    std::string_view what;
    switch (issue) {
      case WarpMaskIssue::OutsideOwnMask: what = "names its lanes without the thread that executes it"; break;
      case WarpMaskIssue::ExitedLanes: what = "names lanes that have exited or do not exist"; break;
      case WarpMaskIssue::NotExecutingLanes:
        what = "names lanes that do not execute it with the thread (not converged)";
        break;
      case WarpMaskIssue::DifferentMasks: what = "names lanes that execute it with another mask"; break;
    }
    reportStrict(site, fmt::format("Warp collective error detected. The mask of a {} {}.", collectiveName(op), what),
                 fmt::format("mask 0x{:08x}, lanes 0x{:08x} of warp {}", mask, lanes, warp), uint8_t(issue));
    return false;  // a GPU runs on: only reported
  }

  void barrierCountExceeded(const ptx::exec::CheckSite& site, uint32_t id, uint32_t count, uint32_t threads) override {
    reportStrict(site, "Barrier error detected. More threads reach a named barrier than its thread count.",
                 fmt::format("barrier {}, thread count {}, reached by {} threads of the block", id, count, threads),
                 uint8_t(0x80));
  }

  static std::string_view collectiveName(ptx::exec::WarpCollective op) {
    switch (op) {
      case ptx::exec::WarpCollective::WarpSync: return "__syncwarp (bar.warp.sync)";
      case ptx::exec::WarpCollective::Vote: return "vote.sync";
      case ptx::exec::WarpCollective::Shuffle: return "shfl.sync";
      case ptx::exec::WarpCollective::Match: return "match.sync";
      case ptx::exec::WarpCollective::Redux: return "redux.sync";
      case ptx::exec::WarpCollective::Elect: return "elect.sync";
    }
    return "warp collective";
  }

  // compute-sanitizer's barrier report, once per thread of `lanes`; the launch then fails.
  void reportBarrierError(const ptx::exec::CheckSite& site, uint32_t warp, uint32_t lanes, std::string_view what) {
    std::string text;
    for (uint32_t m = lanes; m;) {
      int lane = std::countr_zero(m);
      m &= m - 1;
      uint32_t t = warp * 32 + uint32_t(lane);
      ptx::exec::Dim3 thread{t % block_.x, (t / block_.x) % block_.y, t / (block_.x * block_.y)};
      text += fmt::format("{}Barrier error detected. {}.\n", kPrefix, what);
      text += fmt::format("{}    at {}\n", kPrefix, location(site.kernel, site.program, site.ptxLine));
      text += fmt::format("{}    by thread {} in block {}\n", kPrefix, dim(thread), dim(site.block));
      text += deviceFrame(site.kernel, site.program, site.ptxLine);
      text += fmt::format("{}\n", kPrefix);
      g_errors.fetch_add(1, std::memory_order_relaxed);
    }
    print(text);
    divergent_.store(true, std::memory_order_relaxed);
  }

  // The strict checks (--synccheck-strict): one report, and one error, per kernel, PTX line and kind of finding;
  // the first thread that met it is named, with the masks.
  void reportStrict(const ptx::exec::CheckSite& site, std::string_view headline, std::string detail, uint8_t kind) {
    {
      std::lock_guard lock(mutex_);
      if (!strictSeen_.insert({std::string(site.kernel), site.ptxLine, kind}).second) return;
    }
    std::string text = fmt::format("{}{}\n", kPrefix, headline);
    text += fmt::format("{}    at {}\n", kPrefix, location(site.kernel, site.program, site.ptxLine));
    text += fmt::format("{}    by thread {} in block {}\n", kPrefix, dim(site.thread), dim(site.block));
    text += fmt::format("{}    {}\n", kPrefix, detail);
    text += deviceFrame(site.kernel, site.program, site.ptxLine);
    text += fmt::format("{}\n", kPrefix);
    g_errors.fetch_add(1, std::memory_order_relaxed);
    print(text);
  }

  CUresult finish(const ptx::exec::LaunchResult& result, const ptx::exec::Program& program, CUresult code,
                  bool& reported) override {
    stopProgress();
    reported = false;
    if (!hazards_.empty()) reportHazards();
    if (g_tool == Tool::Memcheck && !result.ok() && reportInvalidAccess(result.fault, program)) {
      reported = true;
      return CUDA_ERROR_LAUNCH_FAILED;
    }
    if (divergent_.load(std::memory_order_relaxed)) {
      reported = true;  // the barrier reports said it (a partial barrier may also have stopped the grid)
      return CUDA_ERROR_LAUNCH_FAILED;
    }
    return code;
  }

  void startProgress(ptx::exec::LaunchParams& params) {
    params.ctasFinished = &ctasFinished_;
    total_ = uint64_t(params.grid.x) * params.grid.y * params.grid.z;
    progress_ = std::thread([this] { showProgress(); });
  }

  ptx::exec::Dim3 block_{1, 1, 1};
  std::unique_ptr<GlobalRaces> globalRaces_;  // racecheck with CUEMU_RACECHECK_GLOBAL

 private:
  void reportHazards() {
    std::string text;
    for (const auto& [key, h] : hazards_) {
      text +=
          fmt::format("{}{}: Race reported between {} access at {}\n", kPrefix, key.withinWarp ? "Warning" : "Error",
                      h.earlierWrites ? "Write" : "Read", location(key.kernel, program_, h.earlier));
      text += fmt::format("{}    and {} access at {} [{} hazard{}]\n", kPrefix, h.laterWrites ? "Write" : "Read",
                          location(key.kernel, program_, h.later), h.count, h.count == 1 ? "" : "s");
      if (key.global) text += fmt::format("{}    in __global__ memory\n", kPrefix);
      text += fmt::format("{}\n", kPrefix);
      (key.withinWarp ? g_hazardWarnings : g_hazards).fetch_add(1, std::memory_order_relaxed);
    }
    print(text);
  }

  // The live line: "[cuemu] kernel: 1234/4096 CTAs" on stderr, at most 4 times a second, for grids that run
  // longer than half a second; erased when the grid ends.
  void showProgress() {
    using namespace std::chrono;
    auto started = steady_clock::now();
    std::unique_lock lock(progressMutex_);
    bool shown = false;
    std::string name = demangled(kernel_);
    if (size_t paren = name.find('('); paren != std::string::npos) name.erase(paren);
    while (!progressDone_) {
      progressWake_.wait_for(lock, shown ? milliseconds(250) : milliseconds(500));
      if (progressDone_) break;
      if (steady_clock::now() - started < milliseconds(500)) continue;
      uint64_t done = ctasFinished_.load(std::memory_order_relaxed);
      std::string line =
          fmt::format("\r[cuemu] {}: {}/{} CTAs ({}%)", name, done, total_, total_ ? done * 100 / total_ : 100);
      (void)!::write(2, line.data(), line.size());
      shown = true;
    }
    if (shown) {
      std::string clear = "\r\033[K";
      (void)!::write(2, clear.data(), clear.size());
    }
  }

  void stopProgress() {
    if (!progress_.joinable()) return;
    {
      std::lock_guard lock(progressMutex_);
      progressDone_ = true;
    }
    progressWake_.notify_all();
    progress_.join();
  }

  std::string kernel_;
  std::mutex mutex_;
  const ptx::exec::Program* program_ = nullptr;
  std::map<HazardKey, HazardCount> hazards_;
  std::atomic<bool> divergent_{false};
  std::set<std::tuple<std::string, uint32_t, uint8_t>> strictSeen_;  // synccheck's strict findings reported
  std::atomic<uint64_t> ctasFinished_{0};
  uint64_t total_ = 0;
  std::thread progress_;
  std::mutex progressMutex_;
  std::condition_variable progressWake_;
  bool progressDone_ = false;

 public:
  ~Watch() override { stopProgress(); }
};

// ---- the end of the run -------------------------------------------------------------------------------------------

void reportLeaks() {
  std::string text;
  uint64_t bytes = 0, count = 0;
  std::vector<std::pair<uint64_t, uint64_t>> leaked;  // by sequence: start, bytes
  Allocations& s = allocations();
  {
    std::shared_lock lock(s.mutex);
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> bySequence;
    // Memory a context's destruction released counts too: compute-sanitizer reports it when the context goes.
    for (const auto& [start, a] : s.live) bySequence[a.sequence] = {start, a.bytes};
    for (const auto& [sequence, entry] : bySequence) leaked.push_back(entry);
  }
  for (const auto& [start, size] : leaked) {
    text += fmt::format("{}Leaked {} bytes at 0x{:x}\n{}\n", kPrefix, withCommas(size), start, kPrefix);
    bytes += size;
    ++count;
  }
  {
    std::lock_guard lock(s.heapMutex);
    for (const auto& [start, size] : s.heapBlocks) {
      text += fmt::format("{}Leaked {} bytes at 0x{:x} on the device heap\n{}\n", kPrefix, withCommas(size), start,
                          kPrefix);
      bytes += size;
      ++count;
    }
  }
  g_errors.fetch_add(count, std::memory_order_relaxed);
  text += fmt::format("{}LEAK SUMMARY: {} bytes leaked in {} allocations\n", kPrefix, bytes, count);
  print(text);
}

void finishRun() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_tool == Tool::Memcheck && g_leakCheck) reportLeaks();
  uint64_t errors = g_errors.load();
  if (g_tool == Tool::Racecheck) {
    // --error-exitcode counts warnings too, as compute-sanitizer's does
    uint64_t hazards = g_hazards.load(), warnings = g_hazardWarnings.load(), shown = hazards + warnings;
    print(fmt::format("{}RACECHECK SUMMARY: {} hazard{} displayed ({} error{}, {} warning{})\n", kPrefix, shown,
                      shown == 1 ? "" : "s", hazards, hazards == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s"));
    errors += shown;
  } else {
    print(fmt::format("{}ERROR SUMMARY: {} error{}\n", kPrefix, errors, errors == 1 ? "" : "s"));
  }
  if (errors && g_errorExitCode) ::_exit(g_errorExitCode);
}

bool readTool() {
  const char* text = std::getenv("CUEMU_TOOL");
  if (!parseTool(text ? text : "", g_tool)) {
    print(fmt::format("cuemu: unknown CUEMU_TOOL '{}' (memcheck, racecheck, initcheck, synccheck): no checks\n", text));
    g_tool = Tool::None;
  }
  if (g_tool == Tool::None) return false;
  const char* leaks = std::getenv("CUEMU_LEAK_CHECK");
  g_leakCheck = leaks && std::strcmp(leaks, "full") == 0;
  if (const char* code = std::getenv("CUEMU_ERROR_EXITCODE")) g_errorExitCode = std::atoi(code);
  switch (g_tool) {
    case Tool::Memcheck:
      // byte-exact bounds: every allocation ends where the program asked (no granules, no shared slabs)
      AddressSpace::instance().setBoundsMode(BoundsMode::Exact);
      break;
    case Tool::Racecheck: {
      const char* global = std::getenv("CUEMU_RACECHECK_GLOBAL");
      g_globalRaces = global && (std::strcmp(global, "yes") == 0 || std::strcmp(global, "1") == 0);
      ptx::exec::setCheckedAccesses(ptx::exec::kCheckSharedHazards |
                                    (g_globalRaces ? ptx::exec::kCheckGlobalAccesses | ptx::exec::kCheckFences : 0));
      break;
    }
    case Tool::Initcheck: ptx::exec::setCheckedAccesses(ptx::exec::kCheckGlobalAccesses); break;
    case Tool::Synccheck: {
      const char* strict = std::getenv("CUEMU_SYNCCHECK_STRICT");
      bool beyond = strict && (std::strcmp(strict, "yes") == 0 || std::strcmp(strict, "1") == 0);
      ptx::exec::setCheckedAccesses(ptx::exec::kCheckBarriers | (beyond ? uint32_t(ptx::exec::kCheckWarpMasks) : 0u));
      break;
    }
    case Tool::None: break;
  }
  print(fmt::format("{}COMPUTE-SANITIZER (cuemu {})\n", kPrefix, kToolNames[size_t(g_tool)]));
  std::atexit(finishRun);
  return true;
}

EnvSwitch g_progress([] {
  const char* text = std::getenv("CUEMU_PROGRESS");
  return text && *text && std::strcmp(text, "0") != 0;
});

// The tool is chosen before anything is compiled or allocated: at load time.
__attribute__((constructor)) void startTool() { (void)g_active.on(); }

}  // namespace

EnvSwitch g_active(readTool);

Tool tool() { return on() ? g_tool : Tool::None; }

bool progressOn() { return g_progress.on(); }

void hostWrote(uint64_t address, uint64_t bytes) {
  if (g_tool == Tool::Initcheck && bytes) markWritten(address, bytes);
}

void allocatedAsync(uint64_t address, uint64_t bytes) {
  if (address && tracksAllocations()) trackAllocation(address, bytes, false);
}

void freedInStreamOrder(uint64_t address) {
  if (address && tracksAllocations()) untrackAllocation(address);
}

void heapAllocated(uint64_t address, uint64_t bytes) {
  if (g_tool != Tool::Memcheck || !address) return;
  Allocations& s = allocations();
  std::lock_guard lock(s.heapMutex);
  s.heapBlocks[address] = bytes;
}

void heapFreed(uint64_t address) {
  if (g_tool != Tool::Memcheck) return;
  Allocations& s = allocations();
  std::lock_guard lock(s.heapMutex);
  s.heapBlocks.erase(address);
}

// Calls whose failures are part of how the CUDA runtime starts or probes the driver, not the program's errors
// (compute-sanitizer reports the runtime's calls, which never fail there).
bool isProbe(ApiId id) {
  std::string_view name = apiInfo(id).name;
  return name.starts_with("cuGetExportTable") || name.starts_with("cuGetProcAddress") ||
         name.starts_with("cuModuleGetGlobal") || name.starts_with("cuLibraryGet") ||
         name.starts_with("cuDevicePrimaryCtxGetState") || name.starts_with("cuCtxGetCurrent") ||
         name.starts_with("cuModuleGetFunction") || name.starts_with("cuStreamQuery") ||
         name.starts_with("cuEventQuery") || name.starts_with("cuGetErrorName") ||
         name.starts_with("cuGetErrorString") || name.starts_with("cuPointerGetAttribute") ||
         name.starts_with("cuFuncGetAttribute");
}

void apiCall(ApiId id, CUresult result, uint64_t allocation, uint64_t bytes) {
  if (allocation && tracksAllocations()) trackAllocation(allocation, bytes, id == ApiId::cuMemAllocManaged);
  if (result == CUDA_SUCCESS || g_tool != Tool::Memcheck || isProbe(id)) return;
  // A kernel's fault fails every later call with the same code: compute-sanitizer sees the program's one check of
  // it, and at driver level the runtime's own calls at exit would repeat it.
  static std::atomic<int> stickyReported{CUDA_SUCCESS};
  if (result == processFault()) {
    int expected = CUDA_SUCCESS;
    if (!stickyReported.compare_exchange_strong(expected, int(result))) return;
  }
  const char* name = nullptr;
  const char* description = nullptr;
  impl::cuGetErrorName(result, &name);
  impl::cuGetErrorString(result, &description);
  print(fmt::format("{}Program hit {} (error {}) due to \"{}\" on CUDA API call to {}.\n{}\n", kPrefix,
                    name ? name : "CUDA_ERROR_UNKNOWN", int(result), description ? description : "unknown error",
                    apiInfo(id).name, kPrefix));
  g_errors.fetch_add(1, std::memory_order_relaxed);
}

void apiFreed(ApiId id, CUresult result, uint64_t address) {
  if (result == CUDA_SUCCESS && address) untrackAllocation(address);
  apiCall(id, result, 0, 0);
}

std::unique_ptr<LaunchWatch> LaunchWatch::start(std::string_view kernel, ptx::exec::LaunchParams& params) {
  bool progress = progressOn();
  if (!on() && !progress) return nullptr;
  auto watch = std::make_unique<Watch>(kernel);
  watch->block_ = params.block;
  if (on() && g_tool == Tool::Racecheck && g_globalRaces)
    watch->globalRaces_ = std::make_unique<GlobalRaces>(params.grid, params.block);
  if (on() && ptx::exec::checkedAccesses()) params.checker = watch.get();
  if (progress) watch->startProgress(params);
  return watch;
}

}  // namespace cuemu::checkers
