// Internal executable form of a PTX module and the state of running warps/CTAs.
//
// Op stream: each function is a flat array of fixed-size Ops. An Op holds the handler specialised for its
// instruction and type, register-file byte offsets of its operands, and an immediate. Immediates and addresses
// of variables are not special cases: lowering puts them into "constant registers" (a region at the start of
// every warp's register file, filled once per launch), so every handler reads only registers.
//
// Registers are struct-of-arrays: a register of N bytes occupies 32*N bytes (one element per lane) at a
// 64-byte aligned offset of the warp's register file, so the lane loops of handlers vectorise.
// Predicates are one byte per lane (0 or 1).
//
// Control flow: a warp has an active mask and a reconvergence stack (immediate post-dominator scheme). Divergent
// branches push a Join entry {rpc, mask} and possibly a Pending entry {rpc, other path}; a Reconv op at the start
// of every reconvergence block pops them. Calls push a Call entry. Warps are explicit state machines (pc + masks +
// stack), so a warp stops at any op boundary (barrier, yield, fault) and resumes later: no native stacks.
#pragma once

#include "ptx/exec.h"
#include "ptx/ir.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ptx::exec {

struct Warp;
struct Op;
struct LazyKernels;
struct NativeSlot;
using Handler = const Op* (*)(Warp&, const Op*);

struct Op {
  Handler fn = nullptr;
  uint32_t d = 0, a = 0, b = 0, c = 0, e = 0, f = 0;  // register offsets (or small integers, per handler)
  int64_t imm = 0;                                    // immediate: address offset, count, ...
  const Op* target = nullptr;                         // branch target / call entry (patched after lowering)
  const Op* rpc = nullptr;                            // reconvergence op for divergent branches
  uint32_t line = 0;                                  // PTX source line (faults)
  uint32_t aux = 0;                                   // handler specific (flags, function index, ...)
};

constexpr uint32_t kFullMask = 0xffffffffu;
constexpr uint32_t kFirstRegister = 256;  // register-file offset of the first register (a zero register before it)
// Scheduling of warps that loop (control.cpp: backEdge): back edges between checks for a spinning warp, and back
// edges before a running warp lets the others run in any case.
constexpr uint32_t kSpinCheckInterval = 64;
constexpr uint32_t kWarpBudget = 4096;
constexpr uint32_t kMaxCallDepth = 256;
// Per-warp slots for the layouts of shared-memory base registers (mem::sharedLayout; chains of accesses in
// lower.cpp: findSharedLayoutChains).
// Slots [0, kChainLayoutSlots) belong to the chains of one block; the others to base registers that are thread
// constants (rewrite thread-constants), whose layouts the kernel's prologue computes once per warp.
constexpr uint32_t kSharedLayoutSlots = 8;
constexpr uint32_t kChainLayoutSlots = 4;
struct SharedLayoutSlot {
  int32_t shapes = -1;   // mem::warpLayout's result for the base register; -1: no fast path
  uint64_t maxBase = 0;  // the largest of its 32 values
};

// Per-function layout of the per-thread local frame (bytes) and call information.
struct FunctionCode {
  std::string name;
  bool isEntry = false;
  uint32_t firstOp = 0;                // index of the function's first op in Program::ops
  uint32_t frameBytes = 0;             // local variables + params of this function (one frame)
  uint32_t paramOffset = 0;            // frame offset of the formal parameters
  uint32_t retOffset = 0;              // frame offset of the return values
  uint32_t regBase = 0, regBytes = 0;  // register-file region of this function (saved for recursive calls)
  bool recursive = false;
};

// Kinds of constant-register slots that depend on the launch.
// ParamValue: bytes of the kernel parameter buffer at `value`; LaunchDim: value 0-2 = %ntid.xyz, 3-5 = %nctaid.xyz.
// ThreadIndex (%tid, value = component) differs per lane and warp and CtaIndex (%ctaid) per CTA: their slots are
// written when a CTA is set up (launch.cpp), not from the launch's broadcast image. CtaAffine (rewrite cta-indices):
// a declared u32 register, %ctaid.c * multiplier (* %ntid.n) + addend + the lanes of register laneAddend (a thread
// constant or %tid; 0: the zero register), written when a CTA is set up after the kernel's prologue (value: c in
// bits 0-1, bit 2 whether %ntid multiplies, n in bits 3-4). SharedAddress: the shared address of offset `value` in
// the CTA's own block, Cta::sharedWindow | value (the rank bits of a cluster's CTA), written with the broadcast image.
enum class ConstKind : uint8_t {
  Literal,
  GlobalAddress,
  ParamValue,
  LaunchDim,
  ThreadIndex,
  CtaIndex,
  CtaAffine,
  SharedAddress
};

struct ConstSlot {
  uint32_t offset = 0;  // register file offset
  uint8_t size = 4;     // lane size in bytes
  ConstKind kind = ConstKind::Literal;
  uint64_t value = 0;  // literal bits, or global index
  int64_t addend = 0;
  uint32_t multiplier = 1, laneAddend = 0;  // CtaAffine
};

struct KernelCode {
  uint32_t function = 0;      // index into Program::functions
  uint32_t regFileBytes = 0;  // whole register file of a warp (constants + all reachable functions)
  uint32_t constStart = 0;    // constants (and temporaries) occupy [constStart, regFileBytes)
  std::vector<ConstSlot> consts;
  std::vector<ConstSlot> indexConsts;  // ThreadIndex, CtaIndex, CtaAffine and SharedAddress slots
  uint32_t localBytes = 0;             // per-thread local memory (deepest call chain; recursion adds kRecursionStack)
  // Largest .align of the kernel's .local/.shared data (at least 16): the CTA's local and shared blocks start at
  // a multiple of it, so a variable's generic address is as aligned as its declaration says (the GPU gives
  // `.local .align 256` arrays 256).
  uint32_t localAlign = 16;
  uint32_t sharedAlign = 16;
  uint32_t dynamicSharedBase = 0;  // offset of the dynamic shared memory (extern .shared) in the CTA's block
  bool usesBarriers = false;
  // thread-constants: the first op of the prologue each warp runs when its register file gets the launch's
  // constants (launch.cpp: setupCta), which ends with ctl::endPrologue; kNoIndex: none
  uint32_t prologueOp = 0xffffffffu;
  uint32_t fastPaths = kRuntimeFastPaths;  // the runtime fast paths (ptx/rewrites.def) its compile allowed
  uint32_t irFunction = 0;  // the entry's index in the module (what `mov.u64 %rd, kernel` gives, less the base)
  std::string unsupported;  // non-empty: the kernel contains an instruction the interpreter cannot run
};

// Per-call-site information (Program::calls).
struct CallArg {
  enum Kind : uint8_t { FrameToFrame, RegToFrame };
  Kind kind = FrameToFrame;
  uint32_t src = 0;  // caller frame offset or register offset
  uint32_t dst = 0;  // callee frame offset (relative to the callee frame)
  uint32_t size = 0;
};
struct CallSite {
  uint32_t callee = 0;            // function index
  uint32_t callerFrameBytes = 0;  // the callee frame starts this far after the caller's
  std::vector<CallArg> args;      // into the callee frame
  std::vector<CallArg> rets;      // src: callee frame offset, dst: caller frame offset
};

// A call of the device runtime (CUDA dynamic parallelism, exec/device_runtime.cpp; Program::runtimeSites): the
// arguments are gathered per lane into one buffer (CallArg::dst: offset in it), the result goes to the caller's
// frame at resultOffset when the call names a return variable.
enum class RuntimeCall : uint8_t;
struct RuntimeSite {
  RuntimeCall call{};
  std::vector<CallArg> args;
  uint32_t resultOffset = 0;
  uint8_t resultSize = 0;  // 0: no result stored
};

// Operands of a tex/tld4/suld/sust instruction (Program::texSites): too many for an Op's fields.
struct TextureSite {
  TexGeometry geometry = TexGeometry::D1;
  uint32_t handle = 0;      // u64 register: the texture/surface object
  uint32_t coords[4] = {};  // coordinate registers (32-bit); for arrays the layer comes first
  uint32_t coordCount = 0;
  bool floatCoords = true;
  bool layered = false;     // coords[0] is the layer
  uint32_t values[4] = {};  // destinations (tex, suld) or sources (sust)
  uint32_t valueCount = 0;
  uint32_t valueBytes = 4;  // size of one value (suld/sust .b8/.b16/.b32/.b64)
  TexResult result = TexResult::F32;
  int gather = -1;
  SurfClamp clamp = SurfClamp::Trap;
};

// Operands of a warp matrix instruction (Program::matrixSites; isa/matrix.cpp decodes the fields): fragments of up
// to 8 registers each, more than an Op holds.
struct MatrixSite {
  uint32_t regs[4][8] = {};  // register offsets of the D, A, B, C fragments (load/store forms: [0] only)
  // per fragment: the row-major matrix index of element i of register r in lane l, at (r * 32 + l) * n + i (n:
  // elements per register); the fragment layouts, computed once at lowering
  std::vector<uint16_t> index[4];
  // wmma.load/.store of 16-bit elements whose two halves of every register are adjacent in one tile line (a row of
  // a row-major tile, a column of a column-major one): line << 8 | element of the low half, per register and lane
  // (isa/matrix.cpp); else empty
  std::vector<uint16_t> lineWords;
  uint8_t count[4] = {};  // registers per fragment
  uint16_t m = 0, n = 0, k = 0;
  uint8_t elem[4] = {};   // element type per fragment (matrix.cpp: Elem)
  uint8_t flags = 0;      // matrix.cpp: kFlag*
  uint8_t space = 0;      // memory forms: mem::Space of the address
  uint8_t addrSize = 8;   // bytes of the address register
  uint32_t addr = 0;      // address register
  uint32_t stride = 0;    // wmma stride register (elements); 0: the fragment's own leading dimension
  int64_t offset = 0;     // address immediate
  uint32_t metadata = 0;  // mma.sp: the metadata register
  uint8_t selector = 0;   // mma.sp: the sparsity selector
  // mma with a .kind and .block_scale (isa/matrix.cpp: mmaKind): the scale-factor registers of A and B (0: no
  // scaling), their {byte-id, thread-id} registers (constants become constant registers), the scale type
  // (matrix.cpp: Elem) and the scale factors per row of A and column of B (1, 2, 4)
  uint32_t scale[2] = {};
  uint32_t scaleSelector[2][2] = {};
  uint8_t scaleElem = 0, scaleVec = 0;
};

// A wgmma.mma_async site (isa/wgmma.cpp). The accumulators are read and written in place.
struct WgmmaSite {
  std::vector<uint32_t> d;  // accumulator registers
  uint32_t a[4] = {};       // A in registers; with A in shared memory, a[0] is its descriptor register
  uint32_t b = 0;           // B's descriptor register
  uint32_t scaleD = 0;      // scale-d (a predicate register or a constant)
  uint32_t metadata = 0;    // .sp: the metadata register
  MatrixSite arith;         // shape, element types, flags and .sp selector for the multiply (isa/matrix.h)
  uint8_t flags = 0;        // wgmma.cpp: kWgmma*
};

// One step of a fused chain of shared-memory inner-product steps (mem::fmaSharedChain): acc = fma(x, y, acc) with
// x from shared [xBase + xOffset], y from [yBase + yOffset]; tags: the loads' layout-cache tags.
struct SharedFmaStep {
  uint32_t xBase = 0, yBase = 0;
  uint32_t xOffset = 0, yOffset = 0;
  uint32_t xTag = 0, yTag = 0;
};
constexpr uint32_t kMaxSharedFmaChain = 32;

// The declared registers a loop can change (rewrite loop-watches, KernelLowerer::recordLoopWatches): a warp that
// went once around the loop and left them as they were waits for memory (ctl::backEdge compares only these). A loop
// with a call, or whose registers make more than kMaxLoopWatchRanges ranges, has none: the probe then compares every
// declared register.
struct RegisterRange {
  uint32_t offset = 0, bytes = 0;  // register-file bytes
};
struct LoopWatch {
  uint32_t headerOp = 0;  // the op the loop's back edges branch to
  uint32_t firstRange = 0, rangeCount = 0;
};
constexpr uint32_t kMaxLoopWatchRanges = 32;

class Program {
 public:
  std::vector<Op> ops;
  std::vector<FunctionCode> functions;
  std::vector<KernelCode> kernelCode;
  std::vector<KernelInfo> kernelInfo;
  std::vector<GlobalInfo> globalInfo;
  std::vector<CallSite> calls;
  std::vector<RuntimeSite> runtimeSites;
  std::vector<TextureSite> texSites;
  std::vector<SharedFmaStep> fmaSteps;
  std::vector<MatrixSite> matrixSites;
  std::vector<WgmmaSite> wgmmaSites;
  std::vector<std::vector<const Op*>> brxTables;
  std::vector<std::vector<uint32_t>> brxTableIndices;  // op indices, patched into brxTables
  std::vector<LoopWatch> loopWatches;                  // sorted by headerOp
  std::vector<RegisterRange> loopWatchRanges;
  // The loop watch of the loop whose back edges branch to `header`, if it has one.
  const LoopWatch* loopWatchAt(const Op* header) const {
    uint32_t index = uint32_t(header - ops.data());
    auto it = std::lower_bound(loopWatches.begin(), loopWatches.end(), index,
                               [](const LoopWatch& w, uint32_t i) { return w.headerOp < i; });
    return it != loopWatches.end() && it->headerOp == index ? &*it : nullptr;
  }
  struct PendingPatch {
    uint32_t op, target;
    bool rpc;
  };
  std::vector<PendingPatch> pendingTargets;  // used while lowering only
  std::vector<std::string> messages;         // texts referenced by ops (unsupported instructions)
  // Module level: the IR index of each kernel's entry (what `mov.u64 %rd, kernel` names), in kernelInfo's order.
  std::vector<uint32_t> kernelEntries;
  // Lazy lowering (CompileOptions::lowering): kernelInfo holds what the declarations give, the ops are empty, and
  // each kernel is lowered into a Program of its own (its kernel 0) on first use (lower.h: loweredKernel).
  std::shared_ptr<LazyKernels> lazy;
  // The CUDA source line of each PTX line that has one (.loc), for sourceLocation(): indices into sourceFiles.
  struct SourceLine {
    uint32_t file = 0, line = 0, callerFile = 0, callerLine = 0;
  };
  std::map<uint32_t, SourceLine> sourceLines;
  std::vector<std::string> sourceFiles;
  // The native tier's code for these ops (native/tier.h), made at the first launch while the tier is on.
  mutable std::shared_ptr<NativeSlot> native;
};

// Lowering: records that PTX line `ptxLine` runs the CUDA source line of .loc `debugLoc` of `module` (0: none).
void recordSourceLine(Program& program, const ptx::Module& module, uint32_t ptxLine, uint32_t debugLoc);

// ---- Runtime state -------------------------------------------------------------------------------------------

struct Job;
struct Cta;

struct StackEntry {
  enum Kind : uint8_t { Join, Pending, Call };
  Kind kind;
  uint32_t mask;
  const Op* rpc;             // Join/Pending: reconvergence op that pops this entry
  const Op* pc;              // Pending: where the other path starts; Call: return op
  uint32_t frame;            // Call: caller's frame offset
  uint32_t spill;            // Call: size of w.spill before the call (recursive register save)
  uint32_t callOp;           // Call: call-site index
  uint32_t outer;            // Call: the caller's active mask (a guarded call runs only some of them)
  const Op* from = nullptr;  // Join: the branch that pushed it (ctl::detachWaitingLanes: a spinning loop's own)
};

// Independent thread scheduling (control.cpp: detachWaitingLanes). Since Volta a thread of a warp makes progress
// while others of its warp spin (a lock passed between threads of one warp); a reconvergence stack alone would run
// the spinning path forever while the lock's holder waits at the loop's exit. A warp whose path spins therefore sets
// lanes that wait on its stack aside as groups of their own, each with its path: the group that runs uses the warp's
// fields (pc, active, stack, frame), the others wait here. They join again where all of them must be (a barrier, a
// .sync collective: ctl::gatherLanes); the next one runs when the running one ends or waits.
struct LaneGroup {
  enum Wait : uint8_t {
    OnItsWay,     // set aside where it spun, or split off: runs when it gets the warp
    AtGathering,  // at an op that needs the other groups' lanes (a barrier, a .sync collective), not yet run
  };
  uint32_t active = 0;     // its lanes on their path (alive ones)
  const Op* pc = nullptr;  // where it goes on
  uint32_t frame = 0;      // its function's frame offset
  Wait wait = OnItsWay;
  std::vector<StackEntry> stack;  // its reconvergence stack: the warp's, with the other groups' lanes taken out
};

// Yielded: stopped after its budget of back edges (a long loop); Waiting: stopped because it waits for memory to
// change (a spin loop that repeats the same state, nanosleep). Both resume where they stopped.
enum class WarpState : uint8_t { Ready, AtBarrier, Yielded, Done, Faulted, Waiting };

struct Warp {
  uint8_t* rf = nullptr;     // register file (64-byte aligned)
  uint32_t exec = 0;         // lanes executing the current op (active & guard)
  uint32_t active = 0;       // lanes on the current path
  uint32_t alive = 0;        // lanes that have not exited
  uint32_t wgmmaIssued = 0;  // wgmma.mma_async ops the warp issued (isa/wgmma.cpp: wait_group)
  uint32_t setpLanes = 0;  // where the predicate a setp just wrote holds, for the branch or exit it runs (setp-branch)
  uint32_t fastPaths = kRuntimeFastPaths;  // the kernel's runtime fast paths (KernelCode::fastPaths)
  WarpState state = WarpState::Ready;
  uint32_t index = 0;      // warp index in the CTA
  const Op* pc = nullptr;  // resume point
  Cta* cta = nullptr;
  uint8_t* local = nullptr;  // lane 0's local memory; lane i at local + i*localStride
  uint32_t localStride = 0;
  uint32_t frame = 0;          // current function's frame offset within a thread's local memory
  int32_t budget = 0;          // back edges until the next spin check (control.cpp: backEdge)
  uint32_t checkInterval = 0;  // what budget started from
  uint32_t probeInterval = 0;  // back edges between spin checks while the state changes (quick-spin-probes)
  uint32_t backEdges = 0;      // since the warp was last resumed
  bool readTime = false;       // read a clock since its last backward branch (ExecConfig::timeWaitsYield)
  uint32_t barrierId = 0;      // when AtBarrier
  uint32_t barrierDst = 0;     // bar.red destination register (0 = none)
  uint8_t barrierRedOp = 0;
  // The phase of barrier barrierId whose completion releases the warp (Barrier::phase). barrier-credits
  // (control.cpp: takeBarrierCredits): a later one when the warp arrived in advance at the phases after the one it
  // waits in, barrierCreditsTaken of them, at its arrival at the barrier op barrierArrival; pc is the op after the
  // last of them.
  uint32_t barrierReleasePhase = 0;
  uint8_t barrierCreditsTaken = 0;
  // The warp's credits end at an exit that all its threads take (a guarded exit, `if (t > 0) return;` after the last
  // __syncthreads): the release runs it (ctl::releaseBarrier) instead of setting the warp Ready.
  bool exitsAtRelease = false;
  const Op* barrierArrival = nullptr;
  // The credits found at a barrier op when every branch they depended on tests a thread constant and nothing waited
  // to reconverge: the same for this warp index in every CTA of the launch (cleared when the constants change).
  struct CreditMemo {
    const Op* at = nullptr;  // the bar.sync arrived at
    uint32_t active = 0;
    uint32_t credits = 0;
    const Op* resume = nullptr;
    bool exits = false;
  };
  static constexpr uint32_t kCreditMemos = 16;
  CreditMemo creditMemos[kCreditMemos];
  std::vector<StackEntry> stack;
  std::vector<LaneGroup> setAside;  // lane groups that wait while the warp runs another (LaneGroup)
  std::vector<uint8_t> spill;       // saved register regions of recursive calls
  SharedLayoutSlot sharedLayouts[kSharedLayoutSlots];
  alignas(64) uint8_t carry[32];
  int32_t runtimeError[32];  // each thread's last device runtime error (cudaGetLastError in a kernel)
  // barrier.cluster: whether the warp arrived at the cluster barrier and in which of its phases (isa/sync.cpp)
  bool clusterArrived = false;
  uint32_t clusterPhase = 0;

  template <class T> T* reg(uint32_t off) const { return static_cast<T*>(__builtin_assume_aligned(rf + off, 64)); }
};

struct Barrier {
  uint32_t arrived = 0;   // threads
  uint32_t expected = 0;  // 0 = all live threads of the CTA
  uint32_t waiting = 0;   // warps waiting
  uint32_t redAnd = 1, redOr = 0, redPopc = 0;
  // Phases completed since the CTA was set up, and which warps each completion releases: the warps waiting at
  // phase p are in releases[p % kReleaseSlots], those holding barrier credits in the slot of the last phase they
  // arrived at in advance. Their threads and number are carried into each phase after the current one until then
  // (carriedThreads, carriedWarps; the slot's `ending*` say what leaves at its phase), so a release touches only
  // the warps it makes Ready (ctl::releaseBarrier).
  static constexpr uint32_t kReleaseSlots = 16;  // a warp takes at most kReleaseSlots - 1 credits
  uint32_t phase = 0;
  uint32_t carriedThreads = 0, carriedWarps = 0;
  uint32_t releases[kReleaseSlots] = {};
  uint16_t endingThreads[kReleaseSlots] = {};
  uint8_t endingWarps[kReleaseSlots] = {};
  // synccheck's strict mode (checking::barrier): the warps that reached it with a thread count, and whether it said
  // that they outnumber the count
  uint32_t countedWarps = 0, countedThreads = 0;
  bool countExceededReported = false;
  // A new phase, after a release: the per-phase fields as a new Barrier has them, in place (a whole new Barrier
  // through the stack cost a store-to-load hop at every release); what strict mode has seen spans phases.
  void startPhase() {
    arrived = expected = waiting = 0;
    redAnd = 1;
    redOr = redPopc = 0;
  }
  // As a new Barrier, in place too (CTA set-up: assigning Barrier{} went through the stack, 9% of set-up)
  void reset() {
    startPhase();
    phase = carriedThreads = carriedWarps = 0;
    std::memset(releases, 0, sizeof releases);
    std::memset(endingThreads, 0, sizeof endingThreads);
    std::memset(endingWarps, 0, sizeof endingWarps);
    countedWarps = countedThreads = 0;
    countExceededReported = false;
  }
};

// A thread-block cluster: its CTAs by rank, all run by one host thread (launch.cpp: runCluster), and the state of
// its barrier (barrier.cluster.arrive/wait, isa/sync.cpp). Every CTA belongs to one, a cluster of one CTA included.
//
// Distributed shared memory: a shared address of the CTA of rank r is (r << 24) | offset, in both windows, as on
// an H100/H200 (tools/gpu-probe/results/clusters18-h100-2026-11-26.txt, rankbits30-h200-2026-11-28.txt): a CTA's
// own variables read r << 24 | 0x400 + offset, mapa gives the same bits of any rank, a plain offset names rank 0
// (shared blocks are at most 16 MiB). Cta::sharedWindow is r << 24; the lowered program reads the addresses of
// shared variables from constant slots set up per context (ConstKind::SharedAddress: a context runs one rank
// throughout a launch), so a kernel outside a cluster (rank 0) sees plain offsets. A generic address of another
// CTA's shared memory is the host address of that CTA's shared block.
constexpr uint32_t kClusterRankShift = 24;
// A shared byte's generic address agrees with its shared address in the bits below the rank (an H200's window base
// is 2^34-aligned: tools/gpu-probe/smemwindow29.cu). CuTe swizzles generic pointers to shared memory (XOR of bits
// 4-9 for its cp.async destinations), so each shared block starts at a multiple of 2^24 of the host's address space.
constexpr size_t kSharedBlockAlign = size_t(1) << kClusterRankShift;
constexpr uint32_t kMaxClusterSize = 16;
struct Cluster {
  std::vector<Cta*> ctas;       // by rank
  uint32_t barrierArrived = 0;  // threads that arrived in the current phase
  uint32_t barrierPhase = 0;
  uint64_t progress = 0;  // barrier phases completed and CTAs finished: runCluster goes round again while it grows
  uint32_t doneMask = 0;  // ranks whose CTA finished
  uint32_t liveThreads() const;
};

struct Cta {
  Job* job = nullptr;
  Cluster* cluster = nullptr;
  uint32_t clusterRank = 0;
  uint64_t sharedWindow = 0;  // clusterRank << kClusterRankShift: the rank bits of this CTA's shared addresses
  Dim3 id;
  uint32_t linearId = 0;
  uint32_t nthreads = 0, nwarps = 0;
  uint32_t liveThreads = 0;
  uint32_t liveWarps = 0;  // warps with lanes that have not exited
  uint8_t* shared = nullptr;
  uint32_t sharedBytes = 0;
  uint8_t* localMem = nullptr;
  uint32_t localStride = 0;
  std::vector<Warp> warps;
  Barrier barriers[16];
  uint32_t usedBarriers = 0;  // bit per barrier reached since set-up: the ones set-up resets and exits look at
  // Barrier handoff (runCta): a warp that stops at a barrier that is not complete passes the host thread to the
  // next Ready warp of the CTA (ctl::handOff) instead of returning to runCta; `current` is the warp running,
  // `handedOff` whether a run passed it on. Off (handoff false) for seeded warp orders; the native tier's code returns
  // after the ops that may hand off (ctl::mayHandOff).
  Warp* current = nullptr;
  // Warp phases passed on barrier credits since runJob last collected them (LaunchResult::barrierCreditPhases).
  uint64_t creditPhases = 0;
  uint64_t creditExits = 0;  // LaunchResult::barrierCreditExits
  // Barrier credits (ctl::barSyncPlain) are taken: the kernel allows them.
  bool barrierCredits = false;
  bool handoff = false;
  bool handedOff = false;
  // Set up and not run yet (launch.cpp: runCta's first pass)
  bool fresh = false;
  // Set up without its warps' scheduling fields, for the native tier's CTA entry (launch.cpp: runCompiledCta), and
  // how many of its warps, from the first, that entry finished (it writes this field).
  bool warpsDeferred = false;
  uint32_t warpsFinishedByCode = 0;
  // the warps that entry finished since runJob last collected them (LaunchResult::warpsRunByCtaCode)
  uint64_t codeRunWarps = 0;
  uint64_t constLaunchId = 0;  // constants in register files belong to this launch
  // Checking ops (exec/checking.cpp; code compiled with ptx::exec::checkedAccesses()): each warp's barrier count,
  // its count of barriers and __syncwarps, and the shared-memory shadow, for the CTA of launch checkLaunch with
  // linear index checkCta.
  std::vector<uint32_t> checkEpochs;
  std::vector<uint32_t> checkWarpSyncs;
  std::vector<uint64_t> checkShadow, checkShadowBytes;  // per word, and per byte for words accessed in part
  std::vector<uint64_t> checkGroupings;                 // how lanes group by shared address (checking.cpp)
  uint64_t checkLaunch = ~uint64_t(0);
  uint32_t checkCta = 0;
  // storage
  std::vector<uint8_t, std::allocator<uint8_t>> rfStorage, sharedStorage, localStorage;
};

struct Job {
  const Program* program = nullptr;  // the code: the module's program, or the kernel's own when lowered lazily
  const Program* module = nullptr;   // the module's program: its kernels (device-side launches name them)
  const KernelCode* code = nullptr;
  const KernelInfo* info = nullptr;
  const FunctionCode* entry = nullptr;
  // the native tier's code of `program` (runs a warp until it stops); nullptr: interpret. Set at the launch, or while
  // it runs (native::upgrade: the CTAs started and warps resumed after that run it)
  std::atomic<Handler> native{nullptr};
  // that code has no CTA entry (launch.cpp: runCompiledCta found out at a CTA of this launch)
  std::atomic<bool> noCtaEntry{false};
  std::chrono::steady_clock::time_point started{};  // when an upgradable launch began (native::upgrade); else epoch
  LaunchParams lp;
  std::vector<uint8_t> paramBuffer;
  std::vector<uint8_t> constImage;  // constant register region, broadcast to 32 lanes
  uint64_t launchId = 0;
  // Scheduling units: clusters (of one CTA where the launch has none), started in linear order of %clusterid
  Dim3 clusterShape{1, 1, 1};
  uint32_t clusterSize = 1;
  bool explicitCluster = false;     // %is_explicit_cluster
  std::vector<uint32_t> rankOrder;  // deterministic mode with a seed: the order runCluster runs a cluster's CTAs in
  uint64_t totalClusters = 0;
  std::atomic<uint64_t> nextCluster{0};
  const std::vector<uint64_t>* clusterOrder = nullptr;  // deterministic mode with a seed: the clusters' start order
  // Clusters a thread claims from nextCluster at a time (a locked add per CTA drained the store buffer after every
  // small CTA: 3% of a reduction's time): one alone on its thread takes 64, threads sharing a grid up to 16 while
  // each still gets 32 batches.
  uint64_t claimBatch = 1;
  std::atomic<bool> parking{false};           // some thread parked a CTA: count finished CTAs from now on
  std::atomic<uint64_t> finishedClusters{0};  // progress signal for the schedulers of parked clusters
  std::atomic<uint64_t> maxParked{0};         // LaunchResult::maxParkedCtas
  std::atomic<uint64_t> creditPhases{0};      // LaunchResult::barrierCreditPhases
  std::atomic<uint64_t> creditExits{0};       // LaunchResult::barrierCreditExits
  std::atomic<uint64_t> codeRunWarps{0};      // LaunchResult::warpsRunByCtaCode
  std::atomic<bool> faulted{false};
  std::mutex faultMutex;
  Fault fault;
  HostServices* host = nullptr;
  uint32_t sharedBytes = 0;
  uint32_t smCount = 1;

  void raise(Fault f) {
    std::lock_guard<std::mutex> lock(faultMutex);
    if (fault.kind == FaultKind::None) fault = std::move(f);
    faulted.store(true, std::memory_order_relaxed);
  }
};

inline uint32_t Cluster::liveThreads() const {
  uint32_t n = 0;
  for (const Cta* c : ctas) n += c->liveThreads;
  return n;
}

// Distributed shared memory (the encoding: see Cluster). What a shared::cluster address names: the CTA (nullptr for
// a rank outside the cluster) and the offset in its shared block.
struct ClusterSharedTarget {
  Cta* cta;
  uint64_t offset;
};
inline ClusterSharedTarget clusterSharedTarget(Cta& self, uint64_t addr) {
  const uint64_t rank = addr >> kClusterRankShift;
  const uint64_t offset = addr & ((1u << kClusterRankShift) - 1);
  if (rank == self.clusterRank) return {&self, offset};
  const std::vector<Cta*>& ctas = self.cluster->ctas;
  return {rank < ctas.size() ? ctas[rank] : nullptr, offset};
}
inline uint64_t clusterSharedAddress(uint32_t rank, uint64_t offset) {
  return (uint64_t(rank) << kClusterRankShift) | offset;
}
// The CTA of self's cluster whose shared block holds generic address a; nullptr when none does.
inline Cta* clusterSharedOwner(Cta& self, uint64_t a) {
  if (a - reinterpret_cast<uint64_t>(self.shared) < self.sharedBytes) return &self;
  for (Cta* c : self.cluster->ctas)
    if (a - reinterpret_cast<uint64_t>(c->shared) < c->sharedBytes) return c;
  return nullptr;
}

// Starts a run of warp w (runCta, and a barrier handoff): its scheduling budget. A warp that waited for memory most
// likely waits again or has just been released: either way a spin is found within a few back edges (control.cpp:
// backEdge). One released from a barrier keeps its interval: the warps of a CTA that waits for the grid at each
// level meet at a bar.sync before they spin again. Returns the interval.
inline uint32_t beginRun(Warp& w, bool waited) {
  const uint32_t interval = !(w.fastPaths & rewriteBit(Rewrite::QuickSpinProbes)) ? kSpinCheckInterval
                            : waited                                              ? 1
                                                                                  : w.probeInterval;
  w.state = WarpState::Ready;
  w.budget = int32_t(interval);
  w.checkInterval = w.probeInterval = interval;
  w.backEdges = 0;
  return interval;
}

// Whether runtime fast path r (ptx/rewrites.def) may run for the current op: every lane executes and r is on.
inline bool fullWarpFastPath(const Warp& w, Rewrite r) {
  return w.exec == kFullMask && (w.fastPaths & rewriteBit(r)) != 0;
}
// Sets a warp's runtime fast paths to those of its kernel.
inline void setFastPaths(Warp& w, uint32_t fastPaths) { w.fastPaths = fastPaths; }

// Raises a fault for lane `lane` of warp w at op; returns nullptr so handlers can `return fault(...)`.
const Op* raiseFault(Warp& w, const Op* op, int lane, FaultKind kind, uint64_t address, std::string message,
                     FaultAccess access = {});

// Resumes the next pending path after the current path has no lanes left; nullptr when the warp is done.
const Op* resumeNext(Warp& w);

// Copies Bytes (a multiple of 16) in 32-byte vector moves (16-byte ones for an odd 16 at the end). Registers are
// read by the next ops' lane loops in 32-byte loads under AVX2; a load that spans two narrower stores cannot take
// its data from the store buffer and waits until they reach the cache, which costs more than a simple op itself.
// memcpy of a register expands to 16-byte moves under the generic tuning, so register writes of whole lanes go
// through this instead. Unrolled by hand: a loop would be turned back into memcpy.
template <size_t Bytes> __attribute__((always_inline)) inline void copyVec(void* dst, const void* src) {
  static_assert(Bytes % 16 == 0, "whole 16-byte blocks only");
  typedef uint8_t V32 __attribute__((vector_size(32), aligned(1), may_alias));
  typedef uint8_t V16 __attribute__((vector_size(16), aligned(1), may_alias));
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  // the lambda is forced inline too: a 256-byte copy left out of line cost a call per op (atomics' address lists)
  [&]<size_t... K>(std::index_sequence<K...>) __attribute__((always_inline)) {
    ((*reinterpret_cast<V32*>(d + 32 * K) = *reinterpret_cast<const V32*>(s + 32 * K)), ...);
  }
  (std::make_index_sequence<Bytes / 32>());
  if constexpr (Bytes % 32 != 0)
    *reinterpret_cast<V16*>(d + Bytes - 16) = *reinterpret_cast<const V16*>(s + Bytes - 16);
}

// Component `comp` (0 x, 1 y, 2 z) of %tid for the 32 lanes of warp `warp` in a block of shape blk.
inline void threadIndexLanes(const Dim3& blk, uint32_t warp, uint32_t comp, uint32_t* out) {
  const uint32_t first = warp * 32;
  if (comp == 0 && blk.y == 1 && blk.z == 1) {
    for (uint32_t i = 0; i < 32; ++i) out[i] = first + i;
    return;
  }
  // walk the lanes' thread coordinates instead of dividing 32 times
  uint32_t x = first % blk.x, y = (first / blk.x) % blk.y, z = first / (blk.x * blk.y);
  for (int i = 0; i < 32; ++i) {
    out[i] = comp == 0 ? x : comp == 1 ? y : z;
    if (++x == blk.x) {
      x = 0;
      if (++y == blk.y) {
        y = 0;
        ++z;
      }
    }
  }
}

// Number of lanes in a mask. std::popcount compiles to a library call for the baseline x86-64 target (no POPCNT),
// which the barrier and exit paths paid on every warp.
inline uint32_t laneCount(uint32_t m) {
  m = m - ((m >> 1) & 0x55555555u);
  m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
  return (((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

// Predicate bytes (0/1) of 32 lanes -> lane mask. One 32-byte load: a predicate is usually read right after an op
// stored it with one 32-byte store, and a 16-byte load of its upper half cannot be forwarded from that store on
// some CPUs (it waits until the store reaches the cache). The bits are then gathered in vector registers: every
// nonzero byte becomes 1 (((b & 0x7f) + 0x7f) | b has its top bit set exactly when b != 0, without carries into
// the next byte), and multiplying a 64-bit group of 0/1 bytes by 0x0102040810204080 puts its 8 bits in the top byte.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// With AVX2 the same is a compare against zero and a byte mask: three instructions instead of a chain of ~25
// (a warp's branch waited on that chain). Inlined into the x86-64-v3 clones of the handlers.
__attribute__((target("arch=x86-64-v3"))) inline uint32_t predMaskAvx2(const uint8_t* p) {
  typedef char V32 __attribute__((vector_size(32), aligned(1)));
  V32 v = *reinterpret_cast<const V32*>(p);
  V32 zero = {};
  return ~uint32_t(__builtin_ia32_pmovmskb256(v == zero));
}
#endif
__attribute__((always_inline)) inline uint32_t predMask(const uint8_t* p) {
#if defined(__x86_64__) && defined(__AVX2__)
  return predMaskAvx2(p);  // (the native tier's bitcode, built for x86-64-v3: no test of the CPU in compiled code)
#else
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2")) return predMaskAvx2(p);
#endif
  typedef uint64_t V4 __attribute__((vector_size(32)));
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  V4 q;
  std::memcpy(&q, p, sizeof q);
  q = ((((q & kLow7) + kLow7) | q) >> 7) & 0x0101010101010101ull;
  q = (q * 0x0102040810204080ull) >> 56;
  return uint32_t(q[0] | q[1] << 8 | q[2] << 16 | q[3] << 24);
#endif
}

}  // namespace ptx::exec
