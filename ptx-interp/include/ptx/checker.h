// What the interpreter offers a correctness checker (the driver's racecheck, initcheck and synccheck): checking
// ops that the lowering puts before memory accesses and barriers, only in code compiled while checking is on, so
// code compiled without it runs exactly as before and pays nothing. The interpreter keeps what belongs to a CTA
// (a shadow of its shared memory for hazards, each warp's barrier count); the checker, given per launch
// (LaunchParams::checker), decides what is an error and reports it.
#pragma once

#include "ptx/exec.h"

#include <cstdint>
#include <string_view>

namespace ptx::exec {

// What code compiled from now on checks (bits; 0 = nothing, the default). Set once, before compiling.
enum CheckedAccess : uint32_t {
  kCheckSharedHazards = 1,   // shared-memory accesses and barriers: read/write hazards between warps (racecheck)
  kCheckGlobalAccesses = 2,  // global loads and stores (initcheck)
  kCheckBarriers = 4,        // barriers reached by part of a warp (synccheck)
  kCheckFences = 8,          // gpu- and system-scope fences (racecheck's global-memory races)
  kCheckWarpMasks = 16,      // masks of warp collectives and named-barrier counts beyond compute-sanitizer (synccheck)
};
void setCheckedAccesses(uint32_t kinds);
uint32_t checkedAccesses();

// The thread an event belongs to.
struct CheckSite {
  std::string_view kernel;  // mangled name
  const Program* program = nullptr;
  uint32_t ptxLine = 0;
  Dim3 block{0, 0, 0}, thread{0, 0, 0};
  // With kCheckSharedHazards: the warp's count of barriers, and of barriers and __syncwarps, at the event.
  uint32_t barriers = 0, warpSyncs = 0;
};

enum class HazardKind : uint8_t { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };
// How a global access uses memory: an atomic reads the old value and writes the new one, lane after lane. Strong
// loads and stores (.volatile, .relaxed, .acquire, .release) are, like atomics, no data race with each other.
enum class GlobalAccess : uint8_t { Load, Store, Atomic, StrongLoad, StrongStore };
inline bool readsMemory(GlobalAccess a) { return a != GlobalAccess::Store && a != GlobalAccess::StrongStore; }
inline bool writesMemory(GlobalAccess a) { return a != GlobalAccess::Load && a != GlobalAccess::StrongLoad; }
inline bool isStrong(GlobalAccess a) { return a != GlobalAccess::Load && a != GlobalAccess::Store; }

// What is wrong with the membermasks of a warp collective (bar.warp.sync, vote, shfl, match, redux, elect).
enum class WarpMaskIssue : uint8_t {
  OutsideOwnMask,     // a thread executes it with a mask that leaves the thread out
  ExitedLanes,        // a mask names lanes that have exited
  NotExecutingLanes,  // a mask names lanes that are alive but elsewhere (not converged)
  DifferentMasks,     // a mask names lanes that execute it with another mask
};
enum class WarpCollective : uint8_t { WarpSync, Vote, Shuffle, Match, Redux, Elect };

class Checker {
 public:
  virtual ~Checker() = default;
  // The global loads, stores or atomics of one instruction of warp `warp`: lane i (bit i of `lanes`) accessed
  // `bytes` bytes at addresses[i] (site: the first of them), atomics in lane order. Called from many host threads
  // at once.
  virtual void globalAccesses(const CheckSite& site, uint32_t warp, uint32_t lanes, const uint64_t* addresses,
                              uint32_t bytes, GlobalAccess access) = 0;
  // Two threads of one CTA accessed the same shared byte with no barrier between them, one of them writing:
  // `earlierLine` is the PTX line of the earlier access, site.ptxLine the later one's. `withinWarp`: both threads
  // are lanes of one warp with no __syncwarp between (compute-sanitizer reports those as warnings).
  virtual void sharedHazard(const CheckSite& site, HazardKind kind, uint32_t earlierLine, uint64_t offset,
                            bool withinWarp) = 0;
  // A barrier reached by lanes `arrived` of a warp whose lanes `alive` have not exited (site: the first lane).
  // Returns true to stop the launch (it then fails with FaultKind::Deadlock).
  virtual bool divergentBarrier(const CheckSite& site, uint32_t warp, uint32_t arrived, uint32_t alive) = 0;
  // A warp collective whose masks are wrong: `lanes` are the lanes concerned (for OutsideOwnMask every executing
  // lane, as compute-sanitizer reports them; else the lanes the masks name wrongly), `mask` the first offending
  // lane's membermask. Returns true to stop the launch (it then fails with FaultKind::Deadlock).
  virtual bool warpMask(const CheckSite& site, uint32_t warp, WarpCollective op, WarpMaskIssue issue, uint32_t lanes,
                        uint32_t mask) {
    (void)site, (void)warp, (void)op, (void)issue, (void)lanes, (void)mask;
    return false;
  }
  // Named barrier `id` reached with a thread count other than the one of the warps waiting at it: called for each
  // waiting warp (site: its barrier, its first lane; `lanes`: its lanes there). Returns true to stop the launch.
  virtual bool barrierCountMismatch(const CheckSite& site, uint32_t warp, uint32_t lanes, uint32_t id) {
    (void)site, (void)warp, (void)lanes, (void)id;
    return false;
  }
  // Named barrier `id` with thread count `count` has been reached by `threads` threads of distinct warps of a CTA,
  // more than the count: its warps meet in separate groups (kCheckWarpMasks).
  virtual void barrierCountExceeded(const CheckSite& site, uint32_t id, uint32_t count, uint32_t threads) {
    (void)site, (void)id, (void)count, (void)threads;
  }
  // Lanes `lanes` of warp `warp` executed a gpu- or system-scope fence (membar.gl, fence.sc.gpu, ...).
  virtual void fence(const CheckSite& site, uint32_t warp, uint32_t lanes) { (void)site, (void)warp, (void)lanes; }
};

}  // namespace ptx::exec
