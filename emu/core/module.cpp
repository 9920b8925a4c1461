#include "core/module.h"

#include "core/address_space.h"
#include "core/context.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/fatbin.h"
#include "core/log.h"
#include "core/memory.h"

#include <fmt/format.h>
#include <ptx/link.h>

#include <malloc.h>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cuemu {

CUmoduleLoadingMode moduleLoadingMode() {
  const char* value = std::getenv("CUDA_MODULE_LOADING");
  if (value && std::strcmp(value, "EAGER") == 0) return CU_MODULE_EAGER_LOADING;
  return CU_MODULE_LAZY_LOADING;
}

// The interpreter's lowering rewrites this process may use: CUEMU_REWRITES ("none", "all", or names with '-'/'+',
// see ptx-interp/include/ptx/rewrites.def); read once. A malformed value is reported and all rewrites stay on.
uint32_t rewritesFromEnvironment() {
  static const uint32_t mask = [] {
    uint32_t m = ptx::exec::kAllRewrites;
    const char* value = std::getenv("CUEMU_REWRITES");
    if (!value || !*value) return m;
    std::string error;
    if (!ptx::exec::parseRewrites(value, m, error)) {
      CUEMU_ERROR("CUEMU_REWRITES: {}; keeping all rewrites on", error);
      return ptx::exec::kAllRewrites;
    }
    return m;
  }();
  return mask;
}

// ---- JIT options ---------------------------------------------------------------------------------------------

Expected<JitOptions> parseJitOptions(unsigned count, const CUjit_option* options, void** values) {
  JitOptions out;
  if (count == 0) return out;
  if (!options || !values) return makeError(CUDA_ERROR_INVALID_VALUE, "JIT options without values");
  for (unsigned i = 0; i < count; ++i) {
    void* value = values[i];
    auto asSize = [&] { return static_cast<size_t>(reinterpret_cast<uintptr_t>(value)); };
    switch (options[i]) {
      case CU_JIT_ERROR_LOG_BUFFER: out.errorLog = static_cast<char*>(value); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out.errorLogSize = asSize();
        out.errorLogSizeSlot = &values[i];
        break;
      case CU_JIT_INFO_LOG_BUFFER: out.infoLog = static_cast<char*>(value); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out.infoLogSize = asSize();
        out.infoLogSizeSlot = &values[i];
        break;
      case CU_JIT_WALL_TIME: out.wallTimeSlot = &values[i]; break;
      case CU_JIT_LOG_VERBOSE: out.verbose = asSize() != 0; break;
      case CU_JIT_MAX_REGISTERS: out.maxRegisters = static_cast<int>(static_cast<unsigned>(asSize())); break;
      case CU_JIT_MAX_THREADS_PER_BLOCK:
        out.maxThreadsPerBlock = static_cast<int>(static_cast<unsigned>(asSize()));
        break;
      case CU_JIT_CACHE_MODE: out.cacheModeCa = static_cast<unsigned>(asSize()) == CU_JIT_CACHE_OPTION_CA; break;
      case CU_JIT_OPTIMIZATION_LEVEL: out.optimizationLevel = static_cast<unsigned>(asSize()); break;
      default:
        // Targets, debug info, block size hints (CU_JIT_THREADS_PER_BLOCK is in/out: the
        // interpreter runs any block size, so the request stands as what was targeted) ...: meaningful for a
        // GPU's code generator only; accepted. Values beyond the known options are rejected.
        if (options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS)
          return makeError(CUDA_ERROR_INVALID_VALUE, "unknown JIT option");
        break;
    }
  }
  return out;
}

namespace {
void writeLog(char* buffer, size_t size, void** sizeSlot, std::string_view text) {
  if (!buffer || size == 0) return;
  size_t n = std::min(text.size(), size - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = 0;
  if (sizeSlot) *sizeSlot = reinterpret_cast<void*>(static_cast<uintptr_t>(n + 1));
}
}  // namespace

void reportJit(const JitOptions& options, std::string_view errorMessage, std::string_view infoMessage, float wallMs) {
  writeLog(options.errorLog, options.errorLogSize, options.errorLogSizeSlot, errorMessage);
  writeLog(options.infoLog, options.infoLogSize, options.infoLogSizeSlot, infoMessage);
  if (options.wallTimeSlot) std::memcpy(options.wallTimeSlot, &wallMs, sizeof(float));
}

// ---- Compiling images ----------------------------------------------------------------------------------------

namespace {

// The newest PTX ISA the driver compiles (CUDA 13.0: ISA 9.0; 13.Y, as CUEMU_DRIVER_VERSION may report: 9.Y); newer
// PTX is CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
int newestPtxIsa() { return 90 + reportedDriverVersion() % 1000 / 10; }

// ".version 9.0" -> 90 and ".target sm_75" -> 75, for function attributes.
void readVersionAndTarget(std::string_view text, int& version, int& target) {
  auto pos = text.find(".version");
  if (pos != std::string_view::npos) {
    int major = 0, minor = 0;
    std::sscanf(std::string(text.substr(pos + 8, 16)).c_str(), "%d.%d", &major, &minor);
    version = major * 10 + minor;
  }
  pos = text.find(".target");
  if (pos != std::string_view::npos) {
    auto sm = text.find("sm_", pos);
    if (sm != std::string_view::npos && sm - pos < 32) target = std::atoi(std::string(text.substr(sm + 3, 4)).c_str());
  }
}

// CUEMU_DUMP_PTX=DIR (`cuemu run --dump-ptx DIR`): every PTX module the driver compiles, as it compiles it (taken
// out of its fatbinary, decompressed and linked), is written to DIR/<pid>-<n>-<image name>.ptx, so that a user
// debugging a library's kernel can read the code cuemu runs. Read at each load: loads are rare and a test may
// switch it on in a running process.
void dumpPtx(std::string_view text, const std::string& imageName) {
  const char* dir = std::getenv("CUEMU_DUMP_PTX");
  if (!dir || !*dir) return;
  static std::atomic<unsigned> counter{0};
  std::string base = imageName.substr(imageName.find_last_of('/') + 1);
  for (char& c : base)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (base.size() > 64) base.resize(64);
  std::string path = fmt::format("{}/{}-{}-{}.ptx", dir, getpid(), counter.fetch_add(1), base);
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool written = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f && std::fclose(f) != 0) written = false;
  if (written)
    CUEMU_INFO("CUEMU_DUMP_PTX: wrote {} ({} bytes)", path, text.size());
  else
    CUEMU_ERROR("CUEMU_DUMP_PTX: cannot write '{}': {}", path, std::strerror(errno));
}

}  // namespace

bool newerPtxIsaAccepted(int version) {
  if (version <= newestPtxIsa()) return true;
  const char* mode = std::getenv("CUEMU_PTX_ISA");
  if (!mode || !*mode || std::strcmp(mode, "driver") == 0) return false;
  if (std::strcmp(mode, "newest") != 0) {
    static std::once_flag warned;
    std::call_once(warned,
                   [&] { CUEMU_ERROR("CUEMU_PTX_ISA='{}' is neither 'driver' nor 'newest': using 'driver'", mode); });
    return false;
  }
  return version / 10 == newestPtxIsa() / 10;
}

int ptxIsaVersion(std::string_view text) {
  int version = 0, target = 0;
  readVersionAndTarget(text, version, target);
  return version;
}

constexpr size_t kTrimAfterBytes = size_t(1) << 20;

Expected<CompiledImage> compileImage(const void* image, int ccMajor, int ccMinor, std::string name, size_t size,
                                     uint64_t maxSharedPerBlock, bool contractMulAdd) {
  if (!image) return makeError(CUDA_ERROR_INVALID_VALUE, "NULL image");
  auto ptx = extractPtx(image, ccMajor, ccMinor, size);
  if (!ptx) {
    Error refused = ptx.takeError();
    // A client that compiles its kernels at run time may give a driver older than its toolkit SASS and a newer
    // one PTX (NVIDIA Warp: README.md, real clients), or have nvcc write a cubin, which cuemu-nvcc makes PTX.
    if (refusedChosenSass(refused) && reportedDriverVersion() == kDriverVersion)
      refused.message +=
          "; a client that compiles its kernels itself may hand a driver older than its CUDA toolkit "
          "SASS: `cuemu run --driver-version 13.Y` reports its version (NVIDIA Warp: the toolkit "
          "version wp.init() prints); one built by `nvcc --cubin` (PyCUDA) runs under `cuemu run`, whose nvcc "
          "writes the kernel's PTX (cuemu-nvcc)";
    return refused;
  }
  for (const PtxText& unit : ptx->units)
    if (!unit.companion.empty()) CUEMU_INFO("{}", unit.companion);
  CompiledImage out;
  out.name = std::move(name);
  // An image handed over without a file name but lying in a loaded binary (a library's registered fatbinary) is
  // named by that binary, so that a kernel fault names the library the kernel came from.
  if (out.name == "image")
    if (std::string binary = binaryContaining(image); !binary.empty()) out.name = binary;
  std::string linked;
  if (ptx->units.empty()) {
    // nvcc's device-link stub of a program without relocatable device code: nothing to run.
    linked = ".version 6.0\n.target sm_52\n.address_size 64\n";
  } else if (ptx->needsLinking && ptx->units.size() > 1) {
    std::vector<ptx::link::Input> inputs;
    for (auto& unit : ptx->units) inputs.push_back({unit.sourceName.empty() ? out.name : unit.sourceName, unit.text});
    auto result = ptx::link::linkModules(inputs);
    if (!result.ok)
      return makeError(CUDA_ERROR_INVALID_IMAGE, out.name + ": linking relocatable device code failed:\n" + result.log);
    linked = std::move(result.ptx);
  } else {
    linked = std::move(ptx->units.front().text);
  }
  std::string_view text = linked;
  dumpPtx(text, out.name);
  readVersionAndTarget(text, out.ptxVersion, out.targetArch);
  bool standsInForCubins =
      !ptx->units.empty() &&
      std::all_of(ptx->units.begin(), ptx->units.end(), [](const PtxText& unit) { return unit.standsInForCubin; });
  const bool newerAccepted = standsInForCubins || newerPtxIsaAccepted(out.ptxVersion);
  const int newestIsa = newestPtxIsa();
  if (out.ptxVersion > newestIsa && !newerAccepted)
    return makeError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                     fmt::format("{}: PTX ISA {}.{} is newer than the {}.{} this driver supports{}", out.name,
                                 out.ptxVersion / 10, out.ptxVersion % 10, newestIsa / 10, newestIsa % 10,
                                 out.ptxVersion / 10 == newestIsa / 10
                                     ? " (CUEMU_PTX_ISA=newest, as `cuemu run` sets it, compiles it: a newer "
                                       "toolkit's PTX, which a GPU gets as a cubin)"
                                     : ""));
  ptx::exec::CompileOptions options;
  options.targetSm = unsigned(ccMajor * 10 + ccMinor);
  options.acceptNewerIsa = newerAccepted;
  options.fileName = out.name;
  options.rewrites = rewritesFromEnvironment();
  options.contractMulAdd = contractMulAdd;
  options.lowering =
      moduleLoadingMode() == CU_MODULE_LAZY_LOADING ? ptx::exec::Lowering::Lazy : ptx::exec::Lowering::Eager;
  auto compiled = ptx::exec::compile(text, options);
  // Parsing builds a tree several times the text's size that is gone once the module is lowered; glibc keeps
  // such freed memory resident. Give it back after a module from 1 MiB on (200 MB of PTX: 1.6 GB resident after the
  // load instead of 0.6 GB; 14 MB: 4.4x the text instead of 3.3x, the load's CPU time unchanged); for smaller ones
  // trimming costs more than it returns.
  if (text.size() >= kTrimAfterBytes) malloc_trim(0);
  if (!compiled.program) return makeError(CUDA_ERROR_INVALID_PTX, compiled.error);
  // ptxas compares a kernel's static shared size as a signed 32-bit number (driver 580 on an H100): 300,000 bytes
  // fail the load, while 4e9 bytes wrap to a negative size that loads (SHARED_SIZE_BYTES is then negative and
  // every launch fails), which the launch check already does.
  for (const auto& kernel : ptx::exec::declaredKernels(*compiled.program)) {
    auto wrapped = static_cast<int32_t>(static_cast<uint32_t>(kernel.staticSharedBytes));
    if (maxSharedPerBlock && wrapped > 0 && uint64_t(wrapped) > maxSharedPerBlock)
      return makeError(CUDA_ERROR_INVALID_PTX,
                       fmt::format("{}: entry function '{}' uses too much shared data ({:#x} bytes, {:#x} max)",
                                   out.name, kernel.name, wrapped, maxSharedPerBlock));
  }
  out.program = std::move(compiled.program);
  return out;
}

// ---- Functions and modules -----------------------------------------------------------------------------------

Function::Function(std::shared_ptr<Module> module, int kernelIndex)
    : module_(std::move(module)), kernelIndex_(kernelIndex) {
  // The declaration's shape: getting a function does not lower it (lazy loading lowers at the first launch or query).
  const auto& cluster = ptx::exec::declaredKernels(module_->program())[size_t(kernelIndex_)].reqnctapercluster;
  compiledClusterDims = cluster.x != 0;
  requiredClusterWidth = int(cluster.x);
  requiredClusterHeight = int(cluster.y);
  requiredClusterDepth = int(cluster.z);
}

const ptx::exec::KernelInfo& Function::info() const { return ptx::exec::kernelInfo(module_->program(), kernelIndex_); }

int Function::reportedRegisters() const {
  int regs = int(info().registerCount);
  int limit = module_->image().maxRegisters;
  if (limit > 0) regs = std::min(regs, limit);
  int regsPerSm = 0;
  if (module_->context().device().attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, regsPerSm) !=
      CUDA_SUCCESS)
    regsPerSm = 65536;
  int blockThreads = (int(maxThreadsPerBlock()) + 31) / 32 * 32;
  int fitting = regsPerSm / std::max(32, blockThreads) / 8 * 8;  // allocation granularity of 8 per thread
  return std::max(1, std::min(regs, std::max(8, fitting)));
}

uint32_t Function::maxThreadsPerBlock() const {
  int limit = module_->image().maxThreadsPerBlock;
  return limit > 0 ? std::min(info().maxThreadsPerBlock, uint32_t(limit)) : info().maxThreadsPerBlock;
}

const ptx::exec::KernelInfo& Kernel::info() const {
  return ptx::exec::kernelInfo(*library_->image().program, kernelIndex_);
}

Module::Module(Context& context, CompiledImage image) : context_(context), image_(std::move(image)) {}

Module::~Module() {
  for (auto& region : storage_) (void)releaseRegion(region->start, {MemoryKind::Device});
}

Expected<bool> Module::instantiateGlobals() {
  const auto& globals = ptx::exec::globals(program());
  globalAddresses_.assign(globals.size(), 0);
  for (const auto& g : globals)
    if (g.linkage == ptx::exec::Linkage::Extern)
      return makeError(CUDA_ERROR_NOT_FOUND, "unresolved external variable '" + g.name + "' (link it with cuLink*)");
  // The variables share one allocation, the module's data segment, as on a GPU: an allocation each costs two host
  // mappings, and modules that include CCCL's headers declare over a thousand variables, so a process loading a few
  // dozen of them reached the kernel's limit on mappings and every later allocation failed. With byte-exact bounds
  // (CUEMU_BOUNDS=exact) each variable keeps an allocation of its own, so that overrunning one faults.
  bool exact = AddressSpace::instance().boundsMode() == BoundsMode::Exact;
  std::vector<uint64_t> offsets(globals.size(), 0);
  uint64_t segment = 0;
  for (std::size_t i = 0; i < globals.size() && !exact; ++i) {
    uint64_t align = std::max<uint64_t>(globals[i].align, 16);
    segment = (segment + align - 1) / align * align;
    offsets[i] = segment;
    segment += std::max<uint64_t>(globals[i].size, 1);
  }
  if (!exact && !globals.empty()) {
    auto region = context_.memory().allocateDevice(segment);
    if (!region) return region.takeError();
    storage_.push_back(*region);
    for (std::size_t i = 0; i < globals.size(); ++i) globalAddresses_[i] = (*region)->start + offsets[i];
  }
  for (std::size_t i = 0; i < globals.size(); ++i) {
    const auto& g = globals[i];
    if (exact) {
      auto region = context_.memory().allocateDevice(std::max<uint64_t>(g.size, 1));
      if (!region) return region.takeError();
      storage_.push_back(*region);
      globalAddresses_[i] = (*region)->start;
    }
    auto* bytes = reinterpret_cast<uint8_t*>(globalAddresses_[i]);
    if (!g.init.empty()) std::memcpy(bytes, g.init.data(), std::min<uint64_t>(g.init.size(), g.size));
    if (g.space == ptx::exec::VarSpace::Const) constBytes_ += g.size;
  }
  for (std::size_t i = 0; i < globals.size(); ++i) {
    for (const auto& r : globals[i].relocations) {
      uint64_t target = r.isFunction ? (ptx::exec::kFunctionAddressBase | r.symbol) : globalAddresses_.at(r.symbol);
      uint64_t value = target + r.addend;
      if (r.offset + r.size > globals[i].size) continue;
      std::memcpy(reinterpret_cast<uint8_t*>(globalAddresses_[i] + r.offset), &value, r.size);
    }
  }
  return true;
}

bool Module::findGlobal(std::string_view name, uint64_t& address, uint64_t& size, bool* managed) const {
  const auto& globals = ptx::exec::globals(program());
  for (std::size_t i = 0; i < globals.size(); ++i)
    if (globals[i].name == name) {
      address = globalAddresses_[i];
      size = globals[i].size;
      if (managed) *managed = globals[i].managed;
      return true;
    }
  return false;
}

std::shared_ptr<Function> Module::functionByIndex(int index) {
  std::lock_guard lock(functionsMutex_);
  auto& f = functions_[index];
  if (!f) {
    f = std::make_shared<Function>(shared_from_this(), index);
    f->setHandle(handleTable<Function>().insert(f));
  }
  return f;
}

std::shared_ptr<Function> Module::function(std::string_view name) {
  int index = ptx::exec::findKernel(program(), name);
  return index < 0 ? nullptr : functionByIndex(index);
}

std::vector<std::shared_ptr<Function>> Module::allFunctions() {
  std::vector<std::shared_ptr<Function>> out;
  for (int i = 0, n = int(ptx::exec::declaredKernels(program()).size()); i < n; ++i) out.push_back(functionByIndex(i));
  return out;
}

void Module::unregister() {
  handleTable<Module>().erase(handle_);
  std::lock_guard lock(functionsMutex_);
  for (auto& [index, f] : functions_) handleTable<Function>().erase(f->handle());
  // Functions hold the module; dropping them here breaks the cycle (launches in flight keep their own refs).
  functions_.clear();
}

ContextModules::~ContextModules() { teardown(); }

Expected<std::shared_ptr<Module>> ContextModules::load(CompiledImage image, Library* library) {
  auto module = std::make_shared<Module>(context_, std::move(image));
  module->setLibrary(library);
  auto globals = module->instantiateGlobals();
  if (!globals) return globals.takeError();
  module->setHandle(handleTable<Module>().insert(module));
  std::lock_guard lock(mutex_);
  modules_.push_back(module);
  return module;
}

CUresult ContextModules::unload(const std::shared_ptr<Module>& module) {
  {
    std::lock_guard lock(mutex_);
    auto it = std::find(modules_.begin(), modules_.end(), module);
    if (it == modules_.end()) return CUDA_ERROR_INVALID_HANDLE;
    modules_.erase(it);
  }
  module->unregister();
  return CUDA_SUCCESS;
}

void ContextModules::teardown() {
  flushPrintf();
  std::vector<std::shared_ptr<Module>> modules;
  {
    std::lock_guard lock(mutex_);
    modules.swap(modules_);
  }
  for (auto& m : modules) m->unregister();
}

void ContextModules::appendPrintf(std::string_view text) {
  std::lock_guard lock(printfMutex_);
  printfBuffer_ += text;
}

void ContextModules::flushPrintf() {
  std::string out;
  {
    std::lock_guard lock(printfMutex_);
    out.swap(printfBuffer_);
  }
  if (out.empty()) return;
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

// ---- Libraries and kernels -----------------------------------------------------------------------------------

std::size_t Library::kernelCount() const {
  return image_.program ? ptx::exec::declaredKernels(*image_.program).size() : 0;
}

Expected<std::shared_ptr<Module>> Library::moduleIn(Context& context) {
  if (loadError_) return *loadError_;
  std::lock_guard lock(mutex_);
  auto& weak = modules_[context.id()];
  if (auto module = weak.lock()) return module;
  auto loaded = context.modules().load(image_, this);
  if (!loaded) return loaded.takeError();
  weak = *loaded;
  return *loaded;
}

uint64_t Library::kernelHandle(std::string_view name) {
  if (!image_.program) return 0;
  int index = ptx::exec::findKernel(*image_.program, name);
  if (index < 0) return 0;
  std::lock_guard lock(mutex_);
  auto& handle = kernels_[index];
  if (!handle) handle = handleTable<Kernel>().insert(std::make_shared<Kernel>(shared_from_this(), index));
  return handle;
}

std::vector<uint64_t> Library::kernelHandles() {
  std::vector<uint64_t> out;
  if (!image_.program) return out;
  const auto& ks = ptx::exec::declaredKernels(*image_.program);
  for (const auto& k : ks) out.push_back(kernelHandle(k.name));
  return out;
}

void Library::unregister() {
  handleTable<Library>().erase(handle_);
  std::map<int, uint64_t> kernels;
  std::map<unsigned long long, std::weak_ptr<Module>> modules;
  {
    std::lock_guard lock(mutex_);
    kernels.swap(kernels_);
    modules.swap(modules_);
  }
  for (auto& [index, handle] : kernels) handleTable<Kernel>().erase(handle);
  for (auto& [id, weak] : modules)
    if (auto module = weak.lock()) module->context().modules().unload(module);
}

Expected<std::shared_ptr<Function>> resolveFunction(CUfunction handle) {
  uint64_t value = handleValue(handle);
  if (!value) return makeError(CUDA_ERROR_INVALID_HANDLE, "NULL function");
  if (HandleBits::isHandle(value) && HandleBits::kind(value) == HandleKind::Kernel) {
    auto kernel = lookup<Kernel>(value);
    if (!kernel) return kernel.takeError();
    auto context = requireCurrentContext();
    if (!context) return context.takeError();
    auto module = (*kernel)->library().moduleIn(**context);
    if (!module) return module.takeError();
    return (*module)->functionByIndex((*kernel)->kernelIndex());
  }
  return lookup<Function>(value);
}

}  // namespace cuemu
