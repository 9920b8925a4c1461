// The PTX interpreter's interface to the driver: compile a PTX module into an executable program, then
// launch its kernels on host threads.
//
// Model (see ptx-interp/README.md, section "Interpreter"):
//  * compile() parses and checks a module once (and lowers it, when eager); kernels of a lazily lowered Program are
//    lowered on first use, once, under the program's lock; otherwise the Program is immutable and may be shared by
//    any number of threads and concurrent launches.
//  * Device pointers ARE host virtual addresses. The driver maps device memory wherever it likes and tells the
//    interpreter, per launch, which addresses are valid through a MemoryValidator (fast inline range + table of
//    valid bytes per page, virtual slow path). Every global/const/generic access is checked, so a bad pointer
//    becomes a Fault, never a host crash.
//  * Storage for the module's .global/.const variables is allocated by the driver (per context) from
//    Program::globals(); their addresses are passed to every launch in the same order.
//  * launch() blocks until the grid is finished (or faulted) and is safe to call from many threads at once.
#pragma once

#include <array>
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptx::exec {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  uint32_t component(uint32_t c) const { return c == 0 ? x : c == 1 ? y : z; }  // 0 x, 1 y, 2 z
};

// The shared window of a CTA, as an H200 lays it out (tools/gpu-probe/smemwindow29.cu): its first
// kReservedSharedBytes belong to the driver (%reserved_smem_offset_cap; %reserved_smem_offset_end says it uses
// kReservedSharedUsed of them), the kernel's .shared variables start after them, its dynamic shared memory after
// those. The device attribute CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK is the same number.
constexpr uint32_t kReservedSharedBytes = 1024;
constexpr uint32_t kReservedSharedUsed = 288;
// A block's shared memory is allocated in units of this many bytes (an H200's %total_smem_size counts them, and its
// occupancy calculator fits blocks by them: tools/gpu-probe/occupancy29.py).
constexpr uint64_t kSharedAllocationUnit = 128;
constexpr uint64_t sharedAllocationBytes(uint64_t bytes) {
  return (bytes + kSharedAllocationUnit - 1) / kSharedAllocationUnit * kSharedAllocationUnit;
}

// ---- What compile() reports about a module -----------------------------------------------------------------

struct ParamLayout {
  uint32_t offset = 0;  // byte offset in the kernel's parameter buffer
  uint32_t size = 0;
  uint32_t align = 1;
};

struct KernelInfo {
  std::string name;
  std::vector<ParamLayout> params;
  uint32_t paramBytes = 0;         // total size of the parameter buffer (last offset + size, no tail padding)
  uint32_t staticSharedBytes = 0;  // .shared variables of the kernel and of functions it may call (no reserved bytes)
  uint32_t localBytesPerThread = 0;
  uint32_t registerCount = 0;  // 32-bit register equivalents (informational)
  Dim3 reqntid{0, 0, 0};       // 0 = not specified
  Dim3 maxntid{0, 0, 0};
  uint32_t minnctapersm = 0;
  uint32_t maxThreadsPerBlock = 1024;  // derived from reqntid/maxntid
  // The most threads a block may have where .reqntid is not enforced: a grid a kernel launches runs with any
  // block up to .maxntid's product (measured on an H100, driver 580: a .reqntid 64 child runs with 32, 128 or 32x2
  // threads, a .maxntid 64 child with 128 is refused); the driver enforces .reqntid on host launches.
  uint32_t maxThreadsOfAnyShape() const {
    return maxntid.x ? uint32_t(std::min<uint64_t>(1024, maxntid.count())) : 1024;
  }
  Dim3 reqnctapercluster{0, 0, 0};  // .reqnctapercluster: the cluster shape every launch must use; 0 = none
  uint32_t maxclusterrank = 0;      // .maxclusterrank; 0 = none
  bool explicitcluster = false;     // .explicitcluster: launches must give cluster dimensions
  // .blocksareclusters: a launch's grid and block count clusters of .reqnctapercluster CTAs of .reqntid threads
  // (the driver turns them into CTAs; launch() takes CTAs)
  bool blocksareclusters = false;
  // Non-empty when the kernel (or a function it calls) has an instruction the interpreter cannot run: the
  // message its launches fail with (IllegalInstruction), naming the first such instruction and its PTX line.
  std::string unsupported;
  // The kernel (or a function it calls) loops and reads memory that other threads, grids or the host may write
  // while it runs (volatile, relaxed or acquire loads, atomics, mbarrier waits, nanosleep) or a clock: it may wait
  // for work outside its grid, or for time to pass. Without both, every grid of it finishes on its own, soon (the
  // driver may run it on the launching thread). Complete only when lowered, as `unsupported`.
  bool mayWaitForOtherWork = true;
};

enum class VarSpace : uint8_t { Global, Const };
enum class Linkage : uint8_t { Internal, Visible, Extern, Weak, Common };

// Function addresses (for indirect calls) are opaque handles: this base | the function's index in the module.
inline constexpr uint64_t kFunctionAddressBase = 0xF000000000000000ull;

// A pointer stored inside a variable's initializer: at `offset`, write address(symbol) + addend (size bytes).
struct Relocation {
  uint64_t offset = 0;
  uint32_t symbol = 0;  // index into Program::globals() or, when isFunction, a function: its address is
                        // kFunctionAddressBase | symbol (what kernels see for `mov.u64 %rd, f` too)
  int64_t addend = 0;
  uint8_t size = 8;
  bool isFunction = false;
};

struct GlobalInfo {
  std::string name;
  VarSpace space = VarSpace::Global;
  Linkage linkage = Linkage::Internal;
  uint64_t size = 0;
  uint32_t align = 1;
  bool managed = false;       // .attribute(.managed): a __managed__ variable
  std::vector<uint8_t> init;  // empty = zero-initialised
  std::vector<Relocation> relocations;
};

class Program;
class Checker;  // ptx/checker.h

struct CompileResult {
  std::shared_ptr<const Program> program;  // null on error
  std::string error;                       // diagnostics ("file:line:col: error: ...") on error
  std::string log;                         // all diagnostics (warnings included)
};

// The interpreter's fast paths, lowering rewrites and runtime fast paths, one bit each; the table with what each
// does: ptx/rewrites.def.
enum class Rewrite : uint8_t {
#define PTX_REWRITE(e, name, what) e,
#include "ptx/rewrites.def"
#undef PTX_REWRITE
  count_
};
constexpr uint32_t kAllRewrites = (1u << unsigned(Rewrite::count_)) - 1;
constexpr uint32_t rewriteBit(Rewrite r) { return 1u << unsigned(r); }
constexpr uint32_t kRuntimeFastPaths = 0
#define PTX_REWRITE(e, name, what)
#define PTX_RUNTIME_FAST_PATH(e, name, what) | rewriteBit(Rewrite::e)
#include "ptx/rewrites.def"
#undef PTX_RUNTIME_FAST_PATH
#undef PTX_REWRITE
    ;
constexpr uint32_t kLoweringRewrites = kAllRewrites & ~kRuntimeFastPaths;
std::string_view rewriteName(Rewrite r);
// Parses "all", "none", or a comma-separated list of rewrite names, each optionally prefixed with '-' (off) or '+'
// (on), applied in order to all-on ("-shared-fma-chains" = every rewrite but that one; "none,+setp-branch" = only
// that one); the group names "lowering" and "runtime" stand for all rewrites of that kind ("-runtime": every
// runtime fast path off). On an unknown name: false and `error` names it and lists the known ones.
bool parseRewrites(std::string_view spec, uint32_t& mask, std::string& error);
// The rewrites every compile may use (default: all); CompileOptions::rewrites is intersected with it. For the driver
// (CUEMU_REWRITES) and the tests, set once before compiling.
void setDefaultRewrites(uint32_t mask);
uint32_t defaultRewrites();

// When kernels are lowered (CUDA_MODULE_LOADING's meaning on a GPU): Lazy lowers a kernel the first time it is
// launched or its complete description is asked for (kernelInfo, kernels); Eager lowers every kernel in compile().
// Default: the CUDA_MODULE_LOADING environment variable, EAGER or LAZY (unset: LAZY, as driver 580).
enum class Lowering : uint8_t { Default, Eager, Lazy };
Lowering defaultLowering();

struct CompileOptions {
  unsigned targetSm = 0;                // SM the module runs on (checker gating); 0 = the module's .target
  bool acceptNewerIsa = false;          // see CheckOptions::acceptNewerIsa
  std::string_view fileName = "<ptx>";  // for diagnostics
  uint32_t rewrites = kAllRewrites;     // lowering rewrites this compile may use (with defaultRewrites())
  Lowering lowering = Lowering::Default;
  // A mul and the add/sub using it, neither with a rounding modifier, run as one fused multiply-add where ptxas fuses
  // them (the PTX ISA allows it; the GPU's results depend on it): exec/contraction.cpp. Off: each rounds on its own.
  bool contractMulAdd = true;
};

// Parse + check (+ lower, when eager). Malformed PTX fails here, in both modes. Instructions the interpreter cannot
// execute (textures, tensor cores, bulk async copies) do not fail the load: launching a kernel that contains one
// fails with FaultKind::IllegalInstruction and a message naming the instruction and its PTX line. With lazy
// lowering, what only lowering finds (an interpreter limit, e.g. more than 16 MiB of local memory per thread) fails
// the kernel's launches the same way instead of the load.
// The same text compiled again with the same options while its program lives gives that program (lowered once).
CompileResult compile(std::string_view ptxText, const CompileOptions& options = {});

// A summary of a compiled program for tests and tools: its op count and a digest of the op stream (handlers,
// operands, immediates), which any change of the lowering (a rewrite switched off) changes.
struct ProgramStats {
  size_t ops = 0;
  uint64_t digest = 0;
  size_t loopWatches = 0;     // loops whose spin check compares only the registers they write (loop-watches)
  size_t loopWatchBytes = 0;  // the register-file bytes those checks compare, all loops together
};
ProgramStats programStats(const Program& program);

// Every kernel's complete description; a lazily lowered program lowers all its kernels first.
const std::vector<KernelInfo>& kernels(const Program& program);
// The kernels as declared, without lowering any: name, params, paramBytes, launch bounds, cluster shape and
// staticSharedBytes are complete; localBytesPerThread, registerCount and unsupported are only when lowered eagerly.
const std::vector<KernelInfo>& declaredKernels(const Program& program);
// One kernel's complete description (lowers it if it was not). Thread-safe.
const KernelInfo& kernelInfo(const Program& program, int kernel);
bool lowersLazily(const Program& program);
size_t loweredKernelCount(const Program& program);  // kernels lowered so far
const std::vector<GlobalInfo>& globals(const Program& program);
int findKernel(const Program& program, std::string_view name);  // -1 if absent

// ---- What the driver provides at launch --------------------------------------------------------------------

// Validity of global addresses. The inline fast path covers the driver's reserved device VA range [base, end),
// split into pages of 2^pageShift bytes: validBytes[page] is the number of bytes, counted from the start of that
// page, that are valid device memory without a gap (0: the page start is not valid; the count may run past the
// page into the following ones, saturating at UINT32_MAX). An access [addr, addr+size) is valid when the entry of
// the page holding addr covers it. Anything else goes to checkSlow (host-registered memory, ranges of more than
// 4 GiB, adjacent mappings...). The table may change while kernels run (other threads allocate/free), hence
// atomics. This is the layout of the driver's address-space table, so the driver passes its table as is.
class MemoryValidator {
 public:
  uint64_t base = 0, end = 0;
  uint32_t pageShift = 16;
  const std::atomic<uint32_t>* validBytes = nullptr;

  virtual ~MemoryValidator() = default;
  virtual bool checkSlow(uint64_t addr, uint64_t size, bool write) const;  // default: false

  // Valid bytes from addr on according to the fast path (0: ask check()/checkSlow).
  // (always inlined: the interpreter's full-warp access paths call it for every warp)
  __attribute__((always_inline)) uint64_t validFrom(uint64_t addr) const {
    uint64_t offset = addr - base;
    if (offset >= end - base || !validBytes) return 0;
    uint64_t available = validBytes[offset >> pageShift].load(std::memory_order_acquire);
    uint64_t inPage = offset & ((uint64_t(1) << pageShift) - 1);
    return available > inPage ? available - inPage : 0;
  }
  bool check(uint64_t addr, uint64_t size, bool write) const {
    if (size <= validFrom(addr)) return true;
    return checkSlow(addr, size, write);
  }
};

// Texture and surface instructions name a 64-bit object the driver owns; the interpreter asks the host to read
// (or write) through it, one lane at a time.
enum class TexGeometry : uint8_t { D1, D2, D3, A1D, A2D, Cube, ACube };
enum class TexResult : uint8_t { F32, S32, U32 };

struct TextureRequest {
  uint64_t handle = 0;
  TexGeometry geometry = TexGeometry::D1;
  bool floatCoords = true;  // .f32 coordinates (filtered, maybe normalised); else .s32 (texel indices)
  float coords[3] = {};     // x, y, z for float coordinates
  int32_t icoords[3] = {};  // x, y, z for integer coordinates
  int32_t layer = 0;        // array layer (a1d, a2d, acube)
  TexResult result = TexResult::F32;
  int gather = -1;  // tld4: the component gathered (0-3); -1 for tex
};

// A warp's tex/tld4: lane i (bit i of `lanes`) fetches through handles[i] at its coordinates; `shape` holds what
// all lanes share (geometry, coordinate and result types, gather). Registers are read and written in place.
struct TextureWarpRequest {
  uint32_t lanes = 0;
  const uint64_t* handles = nullptr;  // per lane
  TextureRequest shape;               // handle, coordinates and layer unused
  const uint32_t* coords[3] = {};     // per lane, the bits of each coordinate (float or s32); null past the count
  const int32_t* layers = nullptr;    // per lane, for layered geometries
  uint32_t* values[4] = {};           // per lane, the results' registers; null past the instruction's count

  TextureRequest lane(int i) const {
    TextureRequest r = shape;
    r.handle = handles[i];
    for (unsigned d = 0; d < 3; ++d)
      if (coords[d]) {
        std::memcpy(&r.coords[d], &coords[d][i], 4);
        r.icoords[d] = int32_t(coords[d][i]);
      }
    r.layer = layers ? layers[i] : 0;
    return r;
  }
  void store(int i, const uint32_t out[4]) const {
    for (unsigned k = 0; k < 4; ++k)
      if (values[k]) values[k][i] = out[k];
  }
};

enum class SurfClamp : uint8_t { Trap, Clamp, Zero };

struct SurfaceRequest {
  uint64_t handle = 0;
  TexGeometry geometry = TexGeometry::D1;
  int32_t x = 0;         // in bytes, as the PTX instruction gives it
  int32_t y = 0, z = 0;  // rows and slices (z is the layer for a1d/a2d)
  uint32_t bytes = 0;    // bytes accessed (element size times vector length)
  bool store = false;
  SurfClamp clamp = SurfClamp::Trap;
};

// A grid launched from a kernel (CUDA dynamic parallelism).
struct DeviceLaunchConfig {
  int kernel = -1;  // index into kernels() of the launching program; -1: not known (cudaGetParameterBuffer)
  Dim3 grid, block;
  uint32_t sharedBytes = 0;
};
// The thread that calls the device runtime: its block (CTA index) and its linear index in the block.
struct DeviceCaller {
  Dim3 block{0, 0, 0};
  uint32_t thread = 0;
};

// Services the kernel asks of the host. Called from worker threads, possibly concurrently.
class HostServices {
 public:
  virtual ~HostServices() = default;
  // Formatted output of one device printf call (already formatted; the driver buffers it until synchronisation
  // and applies the FIFO size limit). Return false when the FIFO is full (the call then returns -1 to the kernel).
  virtual bool devicePrintf(std::string_view text);
  // %globaltimer in nanoseconds; default: CLOCK_REALTIME.
  virtual uint64_t globalTimerNs();
  // tex/tld4: four 32-bit results in the requested type. An error message (unknown handle, unsupported
  // configuration) makes the launch fault with IllegalAddress. Default: no textures.
  virtual bool textureFetch(const TextureRequest& request, uint32_t out[4], std::string& error);
  // The same for the lanes of a warp at once (what the interpreter calls): false with the failing lane and a message.
  // Default: textureFetch lane by lane.
  virtual bool textureFetchWarp(const TextureWarpRequest& request, int& faultLane, std::string& error);
  // suld/sust: `data` holds `request.bytes` bytes to store, or receives the bytes loaded. An out-of-range access
  // with SurfClamp::Trap, or an unknown handle, fails with a message. Default: no surfaces.
  virtual bool surfaceAccess(const SurfaceRequest& request, void* data, std::string& error);
  // Device-side `malloc`/`free` (extern functions of PTX): memory from the context's device heap (the driver
  // sizes it by CU_LIMIT_MALLOC_HEAP_SIZE), valid device memory for every kernel until freed. Called from many
  // host threads at once. deviceMalloc returns 0 when the heap is exhausted; the default has no heap.
  virtual uint64_t deviceMalloc(uint64_t size);
  virtual void deviceFree(uint64_t address);
  // Deterministic mode only: every CTA of the running grid that can still run has waited for memory for
  // `seconds` (ExecConfig::stallNoticeMs, rounded down) without any CTA finishing. Nothing else runs meanwhile, so
  // unless another host thread writes the memory the grid waits for, it never finishes (typically it waits for work
  // queued later on another stream). Called once per launch; the default says nothing.
  virtual void deterministicStall(std::string_view kernel, unsigned seconds);

  // ---- CUDA graph conditional nodes (issue 17) ----
  // cudaGraphSetConditional(handle, value), an extern function of PTX that libcudadevrt provides on a GPU: sets the
  // value of a conditional node's handle. Called by every active lane that calls it. False: the calling kernel may
  // not set that handle (on a GPU a handle is memory of the executable graph it was instantiated in: a kernel of
  // another graph, or one launched into a stream, faults), and the lane faults with an illegal address. Default:
  // ignored (true).
  virtual bool setGraphConditional(uint64_t handle, uint32_t value);

  // ---- CUDA dynamic parallelism: the device runtime (cudadevrt) that kernels call ------------------------------
  // The interpreter implements the device runtime's entry points (exec/device_runtime.cpp) and asks the driver
  // for what only it knows. Results are cudaError_t values (0 = success); the interpreter keeps each thread's
  // last error. Called from worker threads, concurrently, one lane at a time in lane order. The defaults support
  // nothing (cudaErrorNotSupported).
  //
  // A parameter buffer for a child grid of `kernel` (an index into kernels() of the launching program; -1 for
  // cudaGetParameterBuffer, which names no kernel) of `bytes` bytes: valid device memory until the child starts.
  // 0 with `error` set when none can be had (the pending launch limit, no memory).
  virtual uint64_t deviceParameterBuffer(const DeviceLaunchConfig& config, uint32_t bytes, uint32_t align,
                                         int32_t& error);
  // Launches the grid whose parameters are in `parameterBuffer` into `stream` (a device stream handle, 0 for the
  // calling block's NULL stream, or cudaStreamTailLaunch / cudaStreamFireAndForget). `config` is null for V2
  // launches (the buffer's config applies) and the explicit configuration for cudaLaunchDevice.
  virtual int32_t deviceLaunch(uint64_t parameterBuffer, uint64_t stream, const DeviceLaunchConfig* config,
                               const DeviceCaller& caller);
  virtual int32_t deviceStreamCreate(uint32_t flags, uint64_t& stream);
  virtual int32_t deviceStreamDestroy(uint64_t stream);
  virtual int32_t deviceEventCreate(uint32_t flags, uint64_t& event);
  virtual int32_t deviceEventRecord(uint64_t event, uint64_t stream, uint32_t flags);
  virtual int32_t deviceStreamWaitEvent(uint64_t stream, uint64_t event, uint32_t flags);
  virtual int32_t deviceEventDestroy(uint64_t event);
  // cudaMemcpyAsync / cudaMemsetAsync from a kernel: stream-ordered with the grids launched into `stream`.
  virtual int32_t deviceMemcpyAsync(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t kind, uint64_t stream,
                                    const DeviceCaller& caller);
  virtual int32_t deviceMemsetAsync(uint64_t dst, uint32_t value, uint64_t bytes, uint64_t stream,
                                    const DeviceCaller& caller);
  // cudaGraphLaunch from a kernel: launches an executable graph (instantiated for device launch) into one of the
  // graph launch streams (cudaStreamGraphTailLaunch, ...FireAndForget, ...FireAndForgetAsSibling).
  virtual int32_t deviceGraphLaunch(uint64_t graphExec, uint64_t stream, const DeviceCaller& caller);
  // The device the kernel runs on (cudaGetDevice), how many there are, a cudaDeviceAttr's value, a cudaLimit's
  // value and the runtime version.
  virtual int32_t deviceOrdinal(int32_t& device);
  virtual int32_t deviceCount(int32_t& count);
  virtual int32_t deviceAttribute(int32_t attribute, int32_t device, int32_t& value);
  virtual int32_t deviceLimit(int32_t limit, uint64_t& value);
  virtual int32_t runtimeVersion(int32_t& version);
  // cudaGetErrorName (`name`) or cudaGetErrorString from a kernel: the device address of the NUL-terminated text
  // for `error`, or 0 when the driver has none to give.
  virtual uint64_t deviceErrorText(int32_t error, bool name);
};

// Host-side execution settings. Thread pools are shared process-wide and created lazily.
struct ExecConfig {
  uint32_t threads = 0;           // host threads for one launch; 0 = all cores
  bool deterministic = false;     // one host thread, fixed CTA and warp order
  uint64_t scheduleSeed = 0;      // deterministic only: != 0 permutes CTA/warp order reproducibly
  uint32_t smCount = 0;           // reported by %nsmid; 0 = number of host threads
  uint32_t stallNoticeMs = 5000;  // deterministic only: when HostServices::deterministicStall is called
  // Watchdog: a grid still running this long after launch() started it is stopped with FaultKind::Timeout
  // (0 = never). Warps return to the scheduler at least every few thousand back edges and at barriers, where
  // the stop is seen, so a grid that loops forever or spins on a flag nobody sets ends within milliseconds.
  uint64_t timeoutMs = 0;
  // A warp that read %clock, %clock64 or %globaltimer in two loop iterations in a row yields at the backward branch,
  // as a long loop does, so the other warps and CTAs of the grid run meanwhile: a loop that waits for time to pass
  // (a GPU's clock-block kernel) then waits in the same wall-clock interval in every CTA instead of one CTA after
  // the other, while a clock read before and after a timed loop changes nothing. Off: such loops run to their end
  // before the next warp runs (the driver's CUEMU_TIME_WAITS_YIELD=0).
  bool timeWaitsYield = true;
  // With several host threads: a thread whose parked CTAs all wait, unchanged for two rounds while no other thread
  // made progress, sleeps until one does (at most 1 ms), instead of keeping a core that the thread its CTAs wait for
  // needs on a busy machine. Off: it keeps resuming them (the driver's CUEMU_IDLE_THREADS_SLEEP=0).
  bool idleThreadsSleep = true;
};

enum class FaultKind : uint8_t {
  None,
  IllegalAddress,       // CUDA_ERROR_ILLEGAL_ADDRESS
  MisalignedAddress,    // CUDA_ERROR_MISALIGNED_ADDRESS
  InvalidAddressSpace,  // CUDA_ERROR_INVALID_ADDRESS_SPACE (bad generic address for the space)
  IllegalInstruction,   // CUDA_ERROR_ILLEGAL_INSTRUCTION (trap, brkpt, unsupported at run time, barrier misuse)
  Assert,               // CUDA_ERROR_ASSERT
  StackOverflow,        // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES-like: call depth / local frames exhausted
  Deadlock,             // barrier can never complete (CUDA would hang; reported as CUDA_ERROR_LAUNCH_FAILED)
  LaunchInvalid,        // bad launch configuration (block too large, too much shared memory, param size mismatch)
  Timeout,              // CUDA_ERROR_LAUNCH_TIMEOUT: stopped by the watchdog (ExecConfig::timeoutMs)
  ClusterAddress,       // CUDA_ERROR_LAUNCH_FAILED: a shared::cluster address of a CTA rank outside the cluster
  Trap,  // CUDA_ERROR_LAUNCH_FAILED: a trap instruction ran (an H100's answer, not an illegal instruction)
};
const char* faultKindName(FaultKind kind);

// The memory access behind an IllegalAddress or MisalignedAddress fault (the checkers' reports name it).
struct FaultAccess {
  enum class Kind : uint8_t { None, Read, Write, Atomic };
  enum class Space : uint8_t { None, Global, Shared, Local };
  Kind kind = Kind::None;  // None: not a memory access, or one of the paths that do not say
  Space space = Space::None;
  uint32_t bytes = 0;
};

struct Fault {
  FaultKind kind = FaultKind::None;
  std::string kernel;
  Dim3 block{0, 0, 0}, thread{0, 0, 0};
  uint32_t ptxLine = 0;
  uint64_t address = 0;
  std::string message;  // complete human-readable description (includes the assert text for Assert)
  FaultAccess access;
};

// Where PTX line `ptxLine` of a program comes from in the CUDA source, from the module's .loc/.file directives
// (nvcc -lineinfo or -G): the file's name without its directory, as compute-sanitizer prints it, and the line;
// for code inlined into another function, the outermost call site too. Line 0: the PTX has no line information.
struct SourceLocation {
  std::string file;
  uint32_t line = 0;
  std::string callerFile;  // inlined code: the outermost call site (empty otherwise)
  uint32_t callerLine = 0;
};
SourceLocation sourceLocation(const Program& program, uint32_t ptxLine);

struct LaunchParams {
  Dim3 grid, block;
  uint32_t dynamicSharedBytes = 0;
  const void* params = nullptr;  // kernel parameter buffer laid out as KernelInfo::params says
  size_t paramBytes = 0;
  const uint64_t* globalAddresses = nullptr;  // one per Program::globals() entry
  const MemoryValidator* memory = nullptr;    // required
  HostServices* host = nullptr;               // null = defaults (printf to stdout)
  Checker* checker = nullptr;  // code compiled with checking on (ptx/checker.h) reports here; null = no checks
  std::atomic<uint64_t>* ctasFinished = nullptr;  // when set: incremented as each CTA finishes (progress displays)
  ExecConfig config;
  bool cooperative = false;  // all CTAs co-resident (grid sync): CTAs may be suspended while they wait
  // Thread-block clusters: the cluster shape in CTAs, which must tile the grid (at most 16 CTAs). {0,0,0}: none
  // given, the kernel's .reqnctapercluster if it has one, else clusters of one CTA. %is_explicit_cluster is true
  // when a shape is given or the kernel has .reqnctapercluster. The CTAs of a cluster run together on one host
  // thread, so cluster barriers and distributed shared memory between them work in every schedule.
  Dim3 cluster{0, 0, 0};
  // %envreg0..31: values the driver hands to every thread of the launch (0 where the driver sets none). The
  // CUDA runtime's cooperative groups read the grid-sync workspace address from %envreg1 (high 32 bits) and
  // %envreg2 (low 32 bits); it is 0 in launches that are not cooperative.
  std::array<uint32_t, 32> envRegs{};
  uint32_t gridId = 1;  // %gridid
};

struct LaunchResult {
  bool ok() const { return fault.kind == FaultKind::None; }
  Fault fault;
  // The most CTAs (clusters) one host thread held parked at once: each keeps its registers and shared memory.
  uint64_t maxParkedCtas = 0;
  // Warp phases that warps passed on barrier credits (runtime fast path barrier-credits): arrivals at a __syncthreads
  // counted in advance instead of run.
  uint64_t barrierCreditPhases = 0;
  // Warps whose threads all exited at a barrier's release, the exit their credits ended at run there.
  uint64_t barrierCreditExits = 0;
  // Warps the native tier's compiled code ran from their start to their end without their scheduling fields (runtime
  // fast path compiled-ctas).
  uint64_t warpsRunByCtaCode = 0;
};

LaunchResult launch(const Program& program, int kernelIndex, const LaunchParams& params);

}  // namespace ptx::exec
