// Modules, functions, libraries and kernels: how code gets into a context.
//
// A compiled PTX program (ptx::exec::Program) is immutable and shared: a library compiles its image once
// and instantiates a Module in each context that uses it; a Module owns the context's storage for the
// program's .global/.const variables. A Function is one kernel of a Module; a Kernel (CUkernel) is one kernel
// of a Library and resolves to the current context's Function wherever a CUfunction is accepted.
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/result.h"

#include <ptx/exec.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cuemu {

class Context;
class Module;
class Library;
struct MemoryRegion;

// A compiled image: the program plus what the driver reports about it.
struct CompiledImage {
  std::shared_ptr<const ptx::exec::Program> program;
  int ptxVersion = 0;  // major * 10 + minor, from .version
  int targetArch = 0;  // e.g. 75 for .target sm_75
  std::string name;    // for messages: file name or "image"
  // JIT options of the load that shape what cuFuncGetAttribute reports.
  int maxRegisters = 0;        // CU_JIT_MAX_REGISTERS; 0 = no limit
  int maxThreadsPerBlock = 0;  // CU_JIT_MAX_THREADS_PER_BLOCK; 0 = no limit
  bool cacheModeCa = false;    // CU_JIT_CACHE_MODE = CU_JIT_CACHE_OPTION_CA
};

// Options of cuModuleLoadDataEx / cuLinkCreate / cuLibraryLoadData that the driver honours.
struct JitOptions {
  char* errorLog = nullptr;
  size_t errorLogSize = 0;
  char* infoLog = nullptr;
  size_t infoLogSize = 0;
  bool verbose = false;
  int maxRegisters = 0;
  int maxThreadsPerBlock = 0;
  bool cacheModeCa = false;
  // CU_JIT_OPTIMIZATION_LEVEL: at 0 the driver's JIT does not fuse a mul and an add into a fused multiply-add
  // (measured on an H100: tools/gpu-probe/results/fma27/olevel.txt), at 1..4 (4, the default) it does.
  unsigned optimizationLevel = 4;
  bool contractMulAdd() const { return optimizationLevel != 0; }
  // Where to write back sizes and wall time (the option value slots).
  void** errorLogSizeSlot = nullptr;
  void** infoLogSizeSlot = nullptr;
  void** wallTimeSlot = nullptr;

  // Applies the options that shape a compiled image (register limit, cache mode).
  void applyTo(CompiledImage& image) const {
    image.maxRegisters = maxRegisters;
    image.maxThreadsPerBlock = maxThreadsPerBlock;
    image.cacheModeCa = cacheModeCa;
  }
};
Expected<JitOptions> parseJitOptions(unsigned count, const CUjit_option* options, void** values);
// Writes `message` into the error log (truncated, NUL-terminated) and the used size back.
void reportJit(const JitOptions& options, std::string_view errorMessage, std::string_view infoMessage, float wallMs);

// CUEMU_PTX_ISA=newest (`cuemu run` sets it): PTX of any ISA 9.x is compiled, not only up to 9.0. Toolkits newer
// than the driver (NVRTC and NVVM 13.1 and later, which PyPI's cuda-toolkit packages bring) write such PTX; a client
// gives a GPU the cubin it compiles from it, which driver 580 runs, and gives cuemu, which runs PTX only, the PTX
// (CuPy with CUPY_COMPILE_WITH_PTX=1, cuemu's nvJitLink for LTO-IR), which driver 580 itself would refuse.
// `driver` (the default): as driver 580, or up to 9.Y where CUEMU_DRIVER_VERSION reports 13.Y. Read at each use, as
// loads are rare and a test may switch it.
// `version`: major * 10 + minor, as ptxIsaVersion(".version 9.5 ...") = 95 (0 without a .version).
bool newerPtxIsaAccepted(int version);
int ptxIsaVersion(std::string_view text);

// Turns an image given to the driver (PTX text, a fatbinary, the runtime's wrapper) into a compiled program
// for `device`; errors carry the driver's code and a message for the log.
// `size` bounds every read when the caller knows it (files, cuLinkAddData); fatbin.h's kUnknownImageSize otherwise.
// `maxSharedPerBlock` (the device's opt-in maximum; 0: unchecked): a kernel whose static shared memory is larger
// fails as ptxas fails it (CUDA_ERROR_INVALID_PTX).
Expected<CompiledImage> compileImage(const void* image, int ccMajor, int ccMinor, std::string name = "image",
                                     size_t size = SIZE_MAX, uint64_t maxSharedPerBlock = 0,
                                     bool contractMulAdd = true);

class Function {
 public:
  static constexpr HandleKind kKind = HandleKind::Function;
  Function(std::shared_ptr<Module> module, int kernelIndex);

  Module& module() const { return *module_; }
  std::shared_ptr<Module> moduleRef() const { return module_; }
  int kernelIndex() const { return kernelIndex_; }
  const ptx::exec::KernelInfo& info() const;
  // The largest block a launch may use: the kernel's (.maxntid/.reqntid) within CU_JIT_MAX_THREADS_PER_BLOCK.
  uint32_t maxThreadsPerBlock() const;
  // Registers per thread as the driver reports them (cuFuncGetAttribute, the occupancy calculator). The
  // interpreter's count is an estimate from the declared registers; a GPU compiler allocates within
  // CU_JIT_MAX_REGISTERS and so that a block of the kernel's largest size fits an SM (it spills otherwise).
  // Reporting more makes the calculator answer zero blocks for kernels that run; CUB sizes grids from it.
  int reportedRegisters() const;
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }

  // cuFuncSetAttribute / cuFuncSetCacheConfig state.
  std::atomic<int> maxDynamicSharedBytes{-1};  // -1 = default (48 KiB minus static)
  std::atomic<int> preferredCarveout{-1};
  std::atomic<int> cacheConfig{CU_FUNC_CACHE_PREFER_NONE};
  std::atomic<int> sharedConfig{CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE};
  std::atomic<int> requiredClusterWidth{0}, requiredClusterHeight{0}, requiredClusterDepth{0};
  bool compiledClusterDims = false;  // .reqnctapercluster: the required cluster shape cannot be changed
  std::atomic<int> nonPortableClusterAllowed{0};
  std::atomic<int> clusterSchedulingPolicy{0};

  // State of the legacy launch API (cuParamSet*, cuFuncSetBlockShape, cuFuncSetSharedSize, cuLaunch*).
  struct LegacyLaunchState {
    std::vector<uint8_t> params;
    int blockX = 1, blockY = 1, blockZ = 1;
    unsigned sharedBytes = 0;
  };
  std::mutex legacyMutex;
  LegacyLaunchState legacy;

 private:
  std::shared_ptr<Module> module_;
  int kernelIndex_;
  uint64_t handle_ = 0;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  static constexpr HandleKind kKind = HandleKind::Module;
  Module(Context& context, CompiledImage image);
  ~Module();

  Context& context() const { return context_; }
  const CompiledImage& image() const { return image_; }
  const ptx::exec::Program& program() const { return *image_.program; }
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }
  Library* library() const { return library_; }
  void setLibrary(Library* library) { library_ = library; }

  // Allocates and initialises the module's variables in the context (relocations applied).
  Expected<bool> instantiateGlobals();
  const std::vector<uint64_t>& globalAddresses() const { return globalAddresses_; }
  // Address and size of a .global/.const variable by name.
  bool findGlobal(std::string_view name, uint64_t& address, uint64_t& size, bool* managed = nullptr) const;
  // The function for a kernel name (created on first request, same handle afterwards), or null.
  std::shared_ptr<Function> function(std::string_view name);
  std::shared_ptr<Function> functionByIndex(int kernelIndex);
  std::vector<std::shared_ptr<Function>> allFunctions();
  uint64_t constBytes() const { return constBytes_; }

  // Drops the handles of the module and its functions; storage goes when the last launch using it ends.
  void unregister();

 private:
  Context& context_;
  CompiledImage image_;
  uint64_t handle_ = 0;
  Library* library_ = nullptr;
  std::vector<std::shared_ptr<MemoryRegion>> storage_;
  std::vector<uint64_t> globalAddresses_;
  uint64_t constBytes_ = 0;
  std::mutex functionsMutex_;
  std::map<int, std::shared_ptr<Function>> functions_;
};

class ContextModules {
 public:
  explicit ContextModules(Context& context) : context_(context) {}
  ~ContextModules();
  Expected<std::shared_ptr<Module>> load(CompiledImage image, Library* library = nullptr);
  CUresult unload(const std::shared_ptr<Module>& module);
  void teardown();

  // Device printf output, buffered until the host synchronises (as the GPU's FIFO is).
  void appendPrintf(std::string_view text);
  void flushPrintf();

 private:
  Context& context_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Module>> modules_;
  std::mutex printfMutex_;
  std::string printfBuffer_;
};

// A library: an image compiled once, loaded into each context that uses it.
class Library : public std::enable_shared_from_this<Library> {
 public:
  static constexpr HandleKind kKind = HandleKind::Library;
  explicit Library(CompiledImage image) : image_(std::move(image)) {}
  // A library whose image turned out bad after the load was accepted (driver 580 accepts ELF-looking bytes and
  // fails each use of the library): every use answers `error`.
  explicit Library(Error error) : loadError_(std::move(error)) {}

  const CompiledImage& image() const { return image_; }
  // CUDA_SUCCESS, or the code every use of a library with a bad image answers.
  CUresult loadError() const { return loadError_ ? loadError_->code : CUDA_SUCCESS; }
  std::size_t kernelCount() const;
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t h) { handle_ = h; }
  // The library's module in `context`, loaded on first use.
  Expected<std::shared_ptr<Module>> moduleIn(Context& context);
  // The CUkernel for a kernel name (same handle every time), or null if there is no such kernel.
  uint64_t kernelHandle(std::string_view name);
  std::vector<uint64_t> kernelHandles();
  void unregister();

 private:
  CompiledImage image_;
  std::optional<Error> loadError_;
  uint64_t handle_ = 0;
  std::mutex mutex_;
  std::map<unsigned long long, std::weak_ptr<Module>> modules_;  // by context id
  std::map<int, uint64_t> kernels_;
};

class Kernel {
 public:
  static constexpr HandleKind kKind = HandleKind::Kernel;
  Kernel(std::shared_ptr<Library> library, int kernelIndex) : library_(std::move(library)), kernelIndex_(kernelIndex) {}
  Library& library() const { return *library_; }
  std::shared_ptr<Library> libraryRef() const { return library_; }
  int kernelIndex() const { return kernelIndex_; }
  const ptx::exec::KernelInfo& info() const;

 private:
  std::shared_ptr<Library> library_;
  int kernelIndex_;
};

// A CUfunction as the API receives it: a Function handle, or a CUkernel resolved in the current context.
Expected<std::shared_ptr<Function>> resolveFunction(CUfunction handle);

// What cuModuleGetLoadingMode answers (CUDA_MODULE_LOADING=EAGER|LAZY; default LAZY like driver 580).
CUmoduleLoadingMode moduleLoadingMode();

}  // namespace cuemu
