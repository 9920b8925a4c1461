#include "native/tier.h"

#include "exec/control.h"
#include "exec/memory.h"
#include "exec/vector_ops.h"
#include "native/abi.h"
#include "native/cache_environment.h"
#include "native/cache_key.h"
#include "native/object_loader.h"
#include "ptx/native.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ptx::exec {

namespace {

// Programs with more ops than this are interpreted: compile time grows with the op count (docs/native-tier.md).
constexpr size_t kDefaultMaxOps = 20000;

int envSwitch() {
  const char* v = std::getenv("CUEMU_NATIVE");
  if (!v) return 0;
  return std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0 ? 1 : 0;
}

// -1: not yet read from the environment
std::atomic<int> gNativeTier{-1};

struct Library {
  const CuemuNativeApi* api = nullptr;
  std::string path;         // the file loaded
  std::string unavailable;  // why api is null
};

// Where the library may be, in the order tried: $CUEMU_NATIVE_LIBRARY, beside the interpreter's object, the build tree.
std::vector<std::string> libraryCandidates() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("CUEMU_NATIVE_LIBRARY")) candidates.push_back(path);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&native::codeFor), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    candidates.push_back((slash == std::string::npos ? std::string(".") : self.substr(0, slash)) +
                         "/libcuemu-native.so");
  }
#ifdef CUEMU_NATIVE_BUILD_DIR
  candidates.push_back(CUEMU_NATIVE_BUILD_DIR "/libcuemu-native.so");
#endif
  return candidates;
}

// The library a compile would load, without loading it: the first candidate that exists. Cache keys name it
// (cache_key.h); a compile by another one (this one failed to load) writes nothing to the cache.
const std::string& libraryPathForKeys() {
  static const std::string* path = [] {
    for (const std::string& candidate : libraryCandidates())
      if (::access(candidate.c_str(), R_OK) == 0) return new std::string(candidate);
    return new std::string();
  }();
  return *path;
}

std::atomic<bool> gLibraryLoaded{false};  // NativeTierStats::compilerLoaded

// Loaded once, on first use; kept until exit (the compiled code lives in it).
const Library& library() {
  static const Library* lib = [] {
    auto* l = new Library();
    const std::vector<std::string> candidates = libraryCandidates();
    std::string tried;
    for (const std::string& path : candidates) {
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* err = dlerror();
        tried += fmt::format("{}{}", tried.empty() ? "" : "; ", err ? err : path);
        continue;
      }
      auto get = reinterpret_cast<const CuemuNativeApi* (*)()>(dlsym(h, "cuemuNativeApi"));
      const CuemuNativeApi* api = get ? get() : nullptr;
      if (!api || api->version != kCuemuNativeAbiVersion) {
        tried += fmt::format("{}{}: not this version's native tier", tried.empty() ? "" : "; ", path);
        continue;
      }
      l->api = api;
      l->path = path;
      gLibraryLoaded.store(true);
      return l;
    }
    l->unavailable = candidates.empty() ? "libcuemu-native.so was not built (it needs LLVM 14: llvm-14-dev)"
                                        : "libcuemu-native.so did not load (" + tried +
                                              "); it is built where LLVM 14 is installed (llvm-14-dev)";
    return l;
  }();
  return *lib;
}

std::mutex gMutex;  // the programs' native slots, the statistics and the policy
NativeTierStats& stats() {
  static auto* s = new NativeTierStats();  // no static constructor; lives until exit
  return *s;
}

size_t maxOps() {
  static const size_t n = [] {
    const char* v = std::getenv("CUEMU_NATIVE_MAX_OPS");
    return v ? size_t(std::strtoull(v, nullptr, 10)) : kDefaultMaxOps;
  }();
  return n;
}

// A kernel stays interpreted. A compile that failed is said once per process on stderr: the user asked for the
// tier, and a failure that holds for every kernel (a stripped interpreter without its symbol table, say) would
// otherwise only show as slowness. Kernels left out by the policy (CUEMU_NATIVE_MAX_OPS) are not.
void refuse(std::string why, bool compileFailed = false) {
  ++stats().kernelsRefused;
  static std::atomic<bool> shown{false};
  if (compileFailed && !shown.exchange(true)) {
    std::fprintf(stderr, "cuemu: the native tier could not compile a kernel: %s. It is interpreted (said once).\n",
                 why.c_str());
  }
  stats().lastRefusal = std::move(why);
}

}  // namespace

void setNativeTier(bool on) { gNativeTier.store(on ? 1 : 0, std::memory_order_relaxed); }

namespace {
static_assert(kNativeInlineAll == kCuemuNativeInlineAll);

// CUEMU_NATIVE_INLINE_BUDGET: the IR instructions of handler code a kernel inlines, the other ops calling the
// interpreter's handlers (CuemuNativeOptions::inlineBudget; docs/native-tier.md, "Inlining budget"); `all`: every
// handler inlined (the form before the budget), 0: none.
constexpr uint32_t kDefaultInlineBudget = 60000;
uint32_t budgetFromEnvironment() {
  const char* v = std::getenv("CUEMU_NATIVE_INLINE_BUDGET");
  if (!v || !*v) return kDefaultInlineBudget;
  if (std::strcmp(v, "all") == 0) return kNativeInlineAll;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != 0) return kDefaultInlineBudget;
  return uint32_t(std::min<unsigned long long>(n, kNativeInlineAll - 1));
}
std::atomic<uint32_t>& budgetStore() {
  static std::atomic<uint32_t> budget{budgetFromEnvironment()};
  return budget;
}

NativeTierPolicy& policyStore() {
  static auto* p = [] {
    auto* made = new NativeTierPolicy();  // lives until exit
    if (const char* v = std::getenv("CUEMU_NATIVE_HOT_LAUNCHES"))
      made->hotLaunches = uint32_t(std::strtoul(v, nullptr, 10));
    if (const char* v = std::getenv("CUEMU_NATIVE_HOT_THREADS")) made->hotThreads = std::strtoull(v, nullptr, 10);
    if (const char* v = std::getenv("CUEMU_NATIVE_HOT_MS"))
      made->hotInterpretedMs = uint32_t(std::min<unsigned long long>(std::strtoull(v, nullptr, 10), 0xffffffffu));
    if (const char* v = std::getenv("CUEMU_NATIVE_BACKGROUND")) made->background = std::strcmp(v, "0") != 0;
    return made;
  }();
  return *p;
}
}  // namespace

void setNativeTierPolicy(const NativeTierPolicy& policy) {
  std::lock_guard<std::mutex> lock(gMutex);
  policyStore() = policy;
}

NativeTierPolicy nativeTierPolicy() {
  std::lock_guard<std::mutex> lock(gMutex);
  return policyStore();
}

void setNativeInlineBudget(uint32_t instructions) { budgetStore().store(instructions, std::memory_order_relaxed); }
uint32_t nativeInlineBudget() { return budgetStore().load(std::memory_order_relaxed); }

namespace {
// CUEMU_NATIVE_STATS=<file>: at exit, the process appends one line of its nativeTierStats() to the file (tests of
// whole programs check with it that the tier ran compiled code: tests/runtime/run-native.cmake). Written with one
// write() on a file opened for appending, so that lines of processes that exit together do not mix.
void writeStatsAtExit() {
  const char* path = std::getenv("CUEMU_NATIVE_STATS");
  if (!path || !*path) return;
  const NativeTierStats s = nativeTierStats();
  const std::string line = fmt::format(
      "pid={} kernels_compiled={} kernels_refused={} launches_compiled={} launches_interpreted={} "
      "background_compiles={} cache_loads={} cache_writes={} ops_inlined={} ops_called={} ops_over_budget={} "
      "compile_ms={:.1f} prepare_ms={:.1f} prepared_loads={} prepared_writes={} finishing_after_exit={} "
      "cache_loads_without_compiler={} compiler_loaded={} upgrades_during_launch={}\n",
      getpid(), s.kernelsCompiled, s.kernelsRefused, s.launchesCompiled, s.launchesInterpreted, s.backgroundCompiles,
      s.cacheLoads, s.cacheWrites, s.opsInlined, s.opsCalled, s.opsOverBudget, double(s.compileNs) / 1e6,
      double(s.prepareNs) / 1e6, s.preparedLoads, s.preparedWrites, s.compilesFinishingAfterExit,
      s.cacheLoadsWithoutCompiler, s.compilerLoaded ? 1 : 0, s.upgradesDuringLaunch);
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
}
}  // namespace

bool nativeTier() {
  int v = gNativeTier.load(std::memory_order_relaxed);
  if (v < 0) {
    v = envSwitch();
    int expected = -1;
    if (!gNativeTier.compare_exchange_strong(expected, v)) {
      v = expected;
    } else if (v && std::getenv("CUEMU_NATIVE_STATS")) {
      std::atexit(writeStatsAtExit);
    }
  }
  return v != 0;
}

namespace {
// The tier's library, loaded when the first kernel gets hot: loading it (and LLVM with it) costs 10-15 ms, which a
// program whose kernels all stay interpreted should not pay. Says once on stderr why it is absent, when it is.
const Library& libraryForCompiles() {
  const Library& lib = library();
  static std::once_flag said;
  if (!lib.api)
    std::call_once(said, [&] {
      std::fprintf(stderr, "cuemu: CUEMU_NATIVE=1, but the native tier is absent: %s. Kernels are interpreted.\n",
                   lib.unavailable.c_str());
    });
  return lib;
}
}  // namespace

std::string nativeTierUnavailable() { return library().unavailable; }

NativeCacheInfo nativeCacheInfo() {
  const native::CacheEnvironment e = native::cacheEnvironment();
  NativeCacheInfo info;
  info.dir = e.dir;
  info.maxBytes = e.maxBytes;
  if (DIR* d = e.dir.empty() ? nullptr : opendir(e.dir.c_str())) {
    while (const dirent* entry = readdir(d)) {
      const std::string_view name = entry->d_name;
      auto endsWith = [&](std::string_view suffix) {
        return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
      };
      const bool kernel = endsWith(native::kKernelFileExtension);
      const bool prepared = endsWith(native::kPreparedFileExtension);
      struct stat st {};
      if ((!kernel && !prepared) || ::stat((e.dir + "/" + std::string(name)).c_str(), &st) != 0) continue;
      info.kernels += kernel;
      info.bytes += uint64_t(st.st_size);
    }
    closedir(d);
  }
  return info;
}

NativeTierStats nativeTierStats() {
  std::lock_guard<std::mutex> lock(gMutex);
  NativeTierStats s = stats();
  s.compilerLoaded = gLibraryLoaded.load();
  return s;
}

NativeSlot::~NativeSlot() {
  for (auto& [function, code] : kernels)
    if (code.handle) library().api->release(code.handle);  // (code.object releases itself)
}

namespace native {

namespace {

// What one compile needs, taken under gMutex: the kernel's ops are copied, so that a background compile reads no
// program that may be released meanwhile (the code refers to the program's own ops, `original`, and is dropped when
// the program went first).
struct CompileJob {
  std::weak_ptr<NativeSlot> slot;
  uint32_t function = 0;
  std::string name;  // the kernel's, for CUEMU_NATIVE_PERFMAP
  std::vector<Op> ops;
  const Op* original = nullptr;
  std::vector<uint8_t> compileOp;
  std::vector<uint8_t> leaveOp;  // CuemuNativeOptions::leaveOp
  uint32_t entryOp = 0;          // CuemuNativeOptions::entryOp
  std::string key;               // in the cache (cache_key.h); "": not cacheable
  std::string keyLibrary;        // the compiler library the key names
};

// CUEMU_NATIVE_FALLBACKS=inline: fused ops' fallbacks are compiled into kernels too (prepareJob)
bool inlineFallbacks() {
  static const bool on = [] {
    const char* v = std::getenv("CUEMU_NATIVE_FALLBACKS");
    return v && std::strcmp(v, "inline") == 0;
  }();
  return on;
}

// The ops the compiler's vector prefix knows (exec/vector_ops.h), listed once per process.
const std::vector<CuemuVectorOp>& vectorOpTable() {
  static const std::vector<CuemuVectorOp> table = [] {
    std::vector<CuemuVectorOp> rows;
    addFloatVectorOps(rows);
    addIntegerVectorOps(rows);
    addCompareVectorOps(rows);
    addMemoryVectorOps(rows);
    ctl::addControlVectorOps(rows);
    return rows;
  }();
  return table;
}

// (without the cache key: keyedOptions)
CuemuNativeOptions jobOptions(const CompileJob& job, const char* cacheDir) {
  CuemuNativeOptions options;
  static const unsigned optLevel = [] {
    const char* v = std::getenv("CUEMU_NATIVE_OPT");
    return v && v[0] >= '1' && v[0] <= '3' ? unsigned(v[0] - '0') : 1u;
  }();
  options.optLevel = optLevel;
  options.inlineBudget = nativeInlineBudget();
  options.compileOp = job.compileOp.data();
  options.original = job.original;
  options.cacheDir = cacheDir;
  options.leaveOp = job.leaveOp.data();
  options.entryOp = job.entryOp;
  options.vectorOps = vectorOpTable().data();
  options.vectorOpCount = uint32_t(vectorOpTable().size());
  return options;
}

// jobOptions with the job's cache key, where the library that compiles is the one the key names
CuemuNativeOptions keyedOptions(const CompileJob& job, const char* cacheDir, const Library& lib) {
  CuemuNativeOptions options = jobOptions(job, cacheDir);
  if (!job.key.empty() && job.keyLibrary == lib.path) options.cacheKey = job.key.c_str();
  return options;
}

// Fills `job` for the kernel with entry function `function` of p; false (and why) when it is not compiled.
bool prepareJob(const Program& p, uint32_t function, CompileJob& job, std::string& why) {
  job.name = p.functions[function].name;
  // the kernel's entry function and every callee-able function; functions occupy consecutive op ranges
  job.compileOp.assign(p.ops.size(), 0);
  size_t compiled = 0;
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const FunctionCode& fc = p.functions[f];
    if (fc.isEntry && f != function) continue;
    size_t end = p.ops.size();
    for (const FunctionCode& other : p.functions)
      if (other.firstOp > fc.firstOp) end = std::min<size_t>(end, other.firstOp);
    for (size_t i = fc.firstOp; i < end; ++i) compiled += job.compileOp[i] == 0, job.compileOp[i] = 1;
  }
  if (compiled > maxOps()) {
    why = fmt::format("{} ops, more than CUEMU_NATIVE_MAX_OPS ({})", compiled, maxOps());
    return false;
  }
  job.slot = p.native;
  job.function = function;
  job.entryOp = p.functions[function].firstOp;
  job.leaveOp.resize(p.ops.size());
  const Op* end = p.ops.data() + p.ops.size();
  for (size_t i = 0; i < p.ops.size(); ++i) job.leaveOp[i] = ctl::mayHandOff(&p.ops[i], end) ? 1 : 0;
  // A fused op's fallback (the ops its fast path skips, which run only where it does not apply) calls the
  // interpreter's handlers: inlined, the shared loads and stores of the reduction's fused steps and of the matmul's
  // fused inner products were most of those kernels' code (docs/native-tier.md, Measurements, session 30).
  // CUEMU_NATIVE_FALLBACKS=inline compiles them too.
  if (!inlineFallbacks())
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (!job.compileOp[i] || !op.target || op.target <= &op || op.target > end || !mem::isFusedWithFallback(op.fn))
        continue;
      for (size_t k = i + 1; k < size_t(op.target - p.ops.data()); ++k) job.compileOp[k] = 0;
    }
  job.ops = p.ops;
  job.original = p.ops.data();
  job.keyLibrary = libraryPathForKeys();
  job.key = cacheKey(job.ops.data(), job.original, job.ops.size(), jobOptions(job, nullptr), job.keyLibrary);
  return true;
}

// Held around every compile in this process and around the fork of a background compile: the child must not
// start with the compiler's locks held by a thread it does not have.
std::mutex gCompileMutex;

// CUEMU_NATIVE_PERFMAP=1: each compiled kernel's code is named in /tmp/perf-<pid>.map, the file Linux perf reads for
// code it finds in no object, so that `perf report` shows time in a kernel's code as `cuemu kernel <name>` instead of
// unknown addresses. The size is the kernel's object code, which holds its function and little else.
void writePerfMap(const void* entry, uint32_t bytes, const std::string& name) {
  static const bool on = [] {
    const char* v = std::getenv("CUEMU_NATIVE_PERFMAP");
    return v && std::strcmp(v, "1") == 0;
  }();
  if (!on || !entry) return;
  const std::string path = fmt::format("/tmp/perf-{}.map", getpid());
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%lx %x cuemu kernel %s\n", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(entry)),
                 bytes ? bytes : 1u, name.c_str());
    std::fclose(f);
  }
}

// A compile's times, into the statistics (with gMutex).
void addCompileTimes(const CuemuNativeResult& result) {
  stats().compileNs += result.compileNs;
  stats().lastCompileNs = result.compileNs;
  stats().prepareNs += result.prepareNs;
  stats().preparedLoads += result.preparedFromCache;
  stats().preparedWrites += result.preparedWritten;
}

// Compiles (without gMutex) and records the result (with it). The code is kept only while its program lives.
// cacheDir: where a background compile left the code (nullptr: the environment's cache).
// cacheOnly: only a cache hit counts; otherwise nothing is recorded and the result is false (the caller queues a
// background compile).
bool runJob(CompileJob& job, const char* cacheDir, bool cacheOnly = false) {
  const Library& lib = library();
  CuemuNativeOptions options = keyedOptions(job, cacheDir, lib);
  options.cacheOnly = cacheOnly ? 1 : 0;
  CuemuNativeResult result;
  bool ok;
  {
    std::lock_guard<std::mutex> compiling(gCompileMutex);
    ok = lib.api->compile(job.ops.data(), job.ops.size(), &options, &result);
  }
  std::lock_guard<std::mutex> lock(gMutex);
  if (cacheOnly && (!ok || !result.entry)) return false;
  addCompileTimes(result);
  std::shared_ptr<NativeSlot> slot = job.slot.lock();
  if (!ok || !result.entry) {
    refuse(result.message, true);
    if (slot) slot->kernels[job.function].state = NativeSlot::Code::Done;
    return false;
  }
  if (!slot) {  // the program was released while its kernel compiled
    lib.api->release(result.handle);
    return false;
  }
  ++stats().kernelsCompiled;
  stats().cacheLoads += result.fromCache;
  stats().cacheWrites += result.cacheWritten;
  stats().opsInlined += result.opsInlined;
  stats().opsCalled += result.opsCalled;
  stats().opsOverBudget += result.opsOverBudget;
  stats().vectorPrefixOps += result.vectorPrefixOps;
  stats().lastInstructions = result.instructions;
  stats().codeBytes += result.codeBytes;
  NativeSlot::Code& code = slot->kernels[job.function];
  code.entry = result.entry;
  code.handle = result.handle;
  code.state = NativeSlot::Code::Done;
  writePerfMap(reinterpret_cast<const void*>(result.entry), result.codeBytes, job.name);
  return true;
}

// Loads the kernel's code from `dir` without the compiler's library (object_loader.h) and records it as runJob
// records a compile. Absent: no such file; Refused: a file this loader does not load (damaged, or a relocation or name
// it does not know: the compiler's library loads it, or compiles the kernel anew).
// CUEMU_NATIVE_LOADER=compiler: cached code loads through the compiler's library, as before the loader (the off
// switch).
enum class CachedLoad { Loaded, Absent, Refused };
CachedLoad loadFromCache(CompileJob& job, const std::string& dir) {
  static const bool throughCompiler = [] {
    const char* v = std::getenv("CUEMU_NATIVE_LOADER");
    return v && std::strcmp(v, "compiler") == 0;
  }();
  if (job.key.empty() || dir.empty()) return CachedLoad::Absent;
  const std::string path = dir + "/" + job.key + native::kKernelFileExtension;
  if (throughCompiler) return ::access(path.c_str(), R_OK) == 0 ? CachedLoad::Refused : CachedLoad::Absent;
  const auto start = std::chrono::steady_clock::now();
  std::string bytes;
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CachedLoad::Absent;
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      bytes.resize(size_t(st.st_size));
      size_t got = 0;
      while (got < bytes.size()) {
        const ssize_t k = ::read(fd, bytes.data() + got, bytes.size() - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += size_t(k);
      }
      bytes.resize(got);
    }
    ::close(fd);
  }
  // a damaged file (cut short, bytes changed) is removed, and the kernel compiled again: it never reaches LLVM, whose
  // object reader is not meant for hostile input
  auto damaged = [&](const char* why) {
    if (std::getenv("CUEMU_NATIVE_TIMING"))  // (the compiler's diagnostics switch)
      std::fprintf(stderr, "cuemu-native: %s: %s is damaged (%s): removed\n", job.name.c_str(), path.c_str(), why);
    ::unlink(path.c_str());
    return CachedLoad::Absent;
  };
  native::CacheHeader header;
  if (!native::wholeCacheFile(bytes.data(), bytes.size(), header)) return damaged("header or hash");
  const uint64_t bias = native::interpreterObject().bias;
  const Op* const ops = job.original;
  // the names compiled code uses (jit/compiler.cpp): the interpreter's code and data by offset, the kernel's op
  // array, and the C++ runtime's functions
  auto resolve = [&](std::string_view name) -> uint64_t {
    constexpr std::string_view kAt = "__cuemu_at_";
    if (name == "__cuemu_ops") return reinterpret_cast<uint64_t>(ops);
    const std::string text(name);
    if (name.substr(0, kAt.size()) == kAt) {
      char* end = nullptr;
      const uint64_t offset = std::strtoull(text.c_str() + kAt.size(), &end, 16);
      return end && *end == 0 && name.size() > kAt.size() ? bias + offset : 0;
    }
    return reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, text.c_str()));
  };
  std::string why;
  native::LoadRefusal refusal = native::LoadRefusal::None;
  std::shared_ptr<native::LoadedObject> object =
      native::loadObject(std::string_view(bytes).substr(sizeof header), resolve, why, &refusal);
  const void* entry = object ? object->symbol("cuemu_kernel") : nullptr;
  if (refusal == native::LoadRefusal::Damaged || (object && !entry))
    return damaged(object ? "no kernel function" : why.c_str());
  if (!entry) {
    if (std::getenv("CUEMU_NATIVE_TIMING"))  // (the compiler's diagnostics switch)
      std::fprintf(stderr, "cuemu-native: %s: the loader refused %s (%s); the compiler's library loads it\n",
                   job.name.c_str(), path.c_str(), why.c_str());
    return CachedLoad::Refused;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used: the last to go when the cache is full
  const uint64_t took =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  std::lock_guard<std::mutex> lock(gMutex);
  std::shared_ptr<NativeSlot> slot = job.slot.lock();
  if (!slot) return CachedLoad::Loaded;  // the program was released meanwhile: nothing to run it for
  ++stats().kernelsCompiled;
  ++stats().cacheLoads;
  ++stats().cacheLoadsWithoutCompiler;
  stats().compileNs += took;
  stats().lastCompileNs = took;
  stats().opsInlined += header.opsInlined;
  stats().opsCalled += header.opsCalled;
  stats().opsOverBudget += header.opsOverBudget;
  stats().lastInstructions = 0;
  stats().codeBytes += object->codeBytes();
  NativeSlot::Code& code = slot->kernels[job.function];
  code.entry = reinterpret_cast<Handler>(const_cast<void*>(entry));
  code.object = std::move(object);
  code.state = NativeSlot::Code::Done;
  writePerfMap(entry, uint32_t(code.object->codeBytes()), job.name);
  return CachedLoad::Loaded;
}

// A compile's process that the program leaves running at its exit (Compiler::stop): told by SIGUSR1, it stops dying
// with its parent, puts /dev/null in place of its standard streams, limits itself to kChildLimitSeconds and says so
// on its acknowledgement pipe. Only async-signal-safe calls.
constexpr unsigned kChildLimitSeconds = 300;
int gDetachAckFd = -1;
extern "C" void detachFromParent(int) {
  prctl(PR_SET_PDEATHSIG, 0);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0), dup2(null, 1), dup2(null, 2);
    close(null);
  }
  alarm(kChildLimitSeconds);
  const char ack = 'd';
  [[maybe_unused]] const ssize_t written = write(gDetachAckFd, &ack, 1);
}

// Closes every descriptor above the standard streams' but `keep` (close_range between them; where it is missing,
// Linux before 5.9, those /proc/self/fd lists).
void closeDescriptorsBut(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  bool closed = true;
  unsigned first = 3;
  for (int fd : keep) {
    if (fd < int(first)) continue;
    if (unsigned(fd) > first && syscall(SYS_close_range, first, unsigned(fd) - 1, 0) != 0) closed = false;
    first = unsigned(fd) + 1;
  }
  if (syscall(SYS_close_range, first, ~0u, 0) != 0) closed = false;
  if (closed) return;
  std::vector<int> open;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') open.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  for (int fd : open)
    if (fd > 2 && std::find(keep.begin(), keep.end(), fd) == keep.end()) close(fd);
}

// Closes every descriptor the child inherited but its standard streams and its two pipes to the parent, which it
// first moves above the standard streams' numbers (a program may have closed those, and detachFromParent puts
// /dev/null there): a file or pipe of the program that the compile's process held open would stay open after the
// program's exit when the compile finishes there (a harness that waits for the end of the program's output would
// wait for it).
void closeInheritedDescriptors(int& result, int& acknowledgement) {
  for (int* fd : {&result, &acknowledgement})
    if (*fd < 3) *fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  closeDescriptorsBut({result, acknowledgement});
}

// Another process compiling the same kernel (the same program run twice at once, a test suite's processes running
// the same kernels) is waited for instead of repeated: a compile's process holds an flock on `<key>.lock` in the
// cache's folder while it compiles, and one that finds it held waits, then finds the code in the cache (the compiler
// looks there first). The lock goes with the process that holds it (a killed compile leaves no stale lock); the file
// is removed when its compile ends (a process that opened it just before waits on a file no longer listed, and at
// worst compiles the kernel once more).
class CompileLock {
 public:
  explicit CompileLock(const CuemuNativeOptions& options) {
    if (!options.cacheKey) return;
    const std::string dir = options.cacheDir ? options.cacheDir : cacheEnvironment().dir;
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    path_ = dir + "/" + options.cacheKey + kLockFileExtension;
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {}
  }
  ~CompileLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
  }
  CompileLock(const CompileLock&) = delete;
  CompileLock& operator=(const CompileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// CUEMU_NATIVE_FINISH_AT_EXIT (default 1): a background compile in flight when the program exits finishes in its
// own process and writes its code to the cache, for the program's next run; 0: it is killed.
bool finishCompilesAtExit() {
  const char* v = std::getenv("CUEMU_NATIVE_FINISH_AT_EXIT");
  return !v || std::strcmp(v, "0") != 0;
}

// The background compiler: one thread, started on first use, taking queued kernels in order. Each compile runs in
// a child process forked for it, which writes the code to the on-disk cache (the environment's, or a private
// folder where that is off) and exits; the kernel's next launch loads it from there, on the launching thread, in
// milliseconds (Code::InCache). So LLVM never runs on a thread of this process while it exits: a compile on a thread
// here used objects that exit had destroyed (the function-local statics LLVM constructs as it first uses them
// register their destructors with atexit then, after any handler that could have waited for the compile: "LLVM
// ERROR: out of memory", or a process growing to 22 GB). At exit the child is killed and the queue dropped.
class Compiler {
 public:
  static constexpr int kBackgroundNice = 10;
  static Compiler& instance() {
    static Compiler* c = [] {
      auto* made = new Compiler();  // lives until exit
      std::atexit([] { instance().stop(); });
      return made;
    }();
    return *c;
  }
  void queue(CompileJob job) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
    ++queued_;
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
    wake_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = queued_;
    idle_.wait(lock, [&] { return done_ >= target || stopping_; });
  }
  // Where the environment's cache is off, background compiles hand their code over in a folder of this process's
  // own (removed at exit); nullptr: the environment's cache.
  const char* handoverDir() {
    std::lock_guard<std::mutex> lock(mutex_);
    return privateDir_.empty() ? nullptr : privateDir_.c_str();
  }

 private:
  // Compiles job in a child process. What the child reports: its CuemuNativeResult through a pipe, and its exit
  // status: 0 the code is in the cache, 1 no code (result.message says why), 2 code that names addresses of this
  // process (not cacheable: the next launch compiles it here).
  void compileInChild(CompileJob& job) {
    const Library& lib = library();
    const char* dir = handoverDir();
    const CuemuNativeOptions options = keyedOptions(job, dir, lib);
    int fds[2], ack[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return finish(job, 2, CuemuNativeResult{});
    if (pipe2(ack, O_CLOEXEC) != 0) {
      close(fds[0]), close(fds[1]);
      return finish(job, 2, CuemuNativeResult{});
    }
    pid_t pid;
    const pid_t parent = getpid();
    {
      std::lock_guard<std::mutex> compiling(gCompileMutex);
      // (with the compiler's lock, so that exit either sees the child or finds none started: a compile forked after
      // stop() was waited for whole)
      std::unique_lock<std::mutex> lock(mutex_);
      if (stopping_) {
        close(fds[0]), close(fds[1]), close(ack[0]), close(ack[1]);
        return;
      }
      // SIGUSR1 (detachFromParent) stays blocked from the fork until the child has its handler: sent in between by
      // an exiting program, it would have killed the child (ctest, at load 2, lost that race)
      sigset_t detachSignal, previous;
      sigemptyset(&detachSignal);
      sigaddset(&detachSignal, SIGUSR1);
      pthread_sigmask(SIG_BLOCK, &detachSignal, &previous);
      pid = fork();
      if (pid != 0) pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      if (pid == 0) {
        // the child: this thread alone. Its code goes to the cache; _exit skips every atexit handler. It dies with the
        // thread that forked it (and leaves at once if that ended before it could say so).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        // below the program's own threads, which run its kernels interpreted meanwhile: at the same priority the
        // compile took a core from them (a 0.2 s program ran 0.33 s with the tier on, docs/native-tier.md, Tiering)
        [[maybe_unused]] const int niced = nice(kBackgroundNice);
        // (a program that exits while this compile runs may leave it to finish: detachFromParent)
        int resultFd = fds[1];
        closeInheritedDescriptors(resultFd, ack[1]);
        gDetachAckFd = ack[1];
        struct sigaction detach {};
        detach.sa_handler = detachFromParent;
        sigaction(SIGUSR1, &detach, nullptr);
        pthread_sigmask(SIG_UNBLOCK, &detachSignal, nullptr);
        signal(SIGPIPE, SIG_IGN);  // the result's pipe has no reader once the program is gone
        CuemuNativeResult result;
        bool ok = false;
        {
          const CompileLock held(options);  // (released before _exit, which runs no destructor)
          ok = lib.api->compile(job.ops.data(), job.ops.size(), &options, &result);
        }
        const int status = !ok || !result.entry ? 1 : (result.cacheWritten || result.fromCache) ? 0 : 2;
        const char* p = reinterpret_cast<const char*>(&result);
        for (size_t n = 0; n < sizeof result;) {
          const ssize_t k = write(resultFd, p + n, sizeof result - n);
          if (k <= 0) break;
          n += size_t(k);
        }
        _exit(status);
      }
      if (pid > 0) {
        child_ = pid;
        childAck_ = ack[0];
      }
    }
    close(fds[1]);
    close(ack[1]);
    if (pid < 0) {
      close(fds[0]), close(ack[0]);
      return finish(job, 2, CuemuNativeResult{});
    }
    // (a child that hangs, say on a lock another thread of this process held at the fork, is killed after
    // kChildLimit: the kernel stays interpreted and the compiles after it go on)
    constexpr auto kChildLimit = std::chrono::minutes(5);
    const auto deadline = std::chrono::steady_clock::now() + kChildLimit;
    CuemuNativeResult result;
    size_t got = 0;
    bool timedOut = false;
    for (char* p = reinterpret_cast<char*>(&result); got < sizeof result;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd readable[2] = {{fds[0], POLLIN, 0}, {wake_fd(), POLLIN, 0}};
      const int ready = left.count() > 0 ? poll(readable, 2, int(std::min<int64_t>(left.count(), 1000))) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (detached_.load()) break;  // the program exits and leaves the compile to finish (stop)
      if (ready > 0 && !(readable[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (ready == 0) {
        if (std::chrono::steady_clock::now() < deadline) continue;
        timedOut = true;
        kill(pid, SIGKILL);
        break;
      }
      const ssize_t k = read(fds[0], p + got, sizeof result - got);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      got += size_t(k);
    }
    close(fds[0]);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      close(childAck_);
      childAck_ = -1;
      if (detached_.load()) {  // not waited for: it outlives this process
        child_ = 0;
        return;
      }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    {
      std::lock_guard<std::mutex> lock(mutex_);
      child_ = 0;
      if (stopping_) return;
    }
    if (got != sizeof result || !WIFEXITED(status)) {
      result = CuemuNativeResult{};
      std::snprintf(result.message, sizeof result.message, "the background compile's process %s",
                    timedOut              ? "ran longer than 5 minutes and was stopped"
                    : WIFSIGNALED(status) ? "was killed by a signal"
                                          : "ended without a result");
      return finish(job, 1, result);
    }
    finish(job, WEXITSTATUS(status), result);
  }

  // Records a background compile's outcome for the kernel's next launch.
  static void finish(CompileJob& job, int status, const CuemuNativeResult& result) {
    std::lock_guard<std::mutex> lock(gMutex);
    addCompileTimes(result);
    std::shared_ptr<NativeSlot> slot = job.slot.lock();
    if (status == 1) {
      refuse(result.message[0] ? result.message : "the background compile failed", true);
      if (slot) slot->kernels[job.function].state = NativeSlot::Code::Done;
      return;
    }
    if (!slot) return;  // the program was released while its kernel compiled
    ++stats().backgroundCompiles;
    stats().cacheWrites += result.cacheWritten;
    slot->kernels[job.function].state = status == 0 ? NativeSlot::Code::InCache : NativeSlot::Code::CompileHere;
  }

  void work() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cacheEnvironment().dir.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cuemu-native-XXXXXX";
        if (mkdtemp(pattern.data())) privateDir_ = pattern;
      }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      CompileJob job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      compileInChild(job);
      lock.lock();
      ++done_;
      idle_.notify_all();
    }
  }
  // The compiles still queued at exit, where their code goes to the environment's cache: one more process compiles
  // them one after the other into the cache and is left running, as the compile in flight is (stop), so that the
  // program's next run has all its hot kernels there, not one more per run. It does not die with the program; its
  // standard streams are /dev/null, it closes every other descriptor it inherited, and it limits itself to
  // kChildLimitSeconds. Returns how many it took.
  static size_t finishQueuedAfterExit(std::deque<CompileJob>& left) {
    const Library& lib = library();
    if (!lib.api || left.empty()) return 0;
    std::lock_guard<std::mutex> compiling(gCompileMutex);  // (no compile of this process holds the compiler's locks)
    const pid_t pid = fork();
    if (pid != 0) return pid > 0 ? left.size() : 0;
    // the child: this thread alone
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, 0), dup2(null, 1), dup2(null, 2);
      if (null > 2) close(null);
    }
    closeDescriptorsBut({});
    [[maybe_unused]] const int niced = nice(kBackgroundNice);
    alarm(kChildLimitSeconds);
    signal(SIGPIPE, SIG_IGN);
    for (CompileJob& job : left) {
      const CuemuNativeOptions options = keyedOptions(job, nullptr, lib);
      if (!options.cacheKey) continue;  // (its code could not go to the cache)
      CuemuNativeResult result;
      const CompileLock held(options);  // (each job's, released at the end of its iteration)
      lib.api->compile(job.ops.data(), job.ops.size(), &options, &result);
    }
    _exit(0);
  }

  // At exit, where the code goes to the environment's cache (finishCompilesAtExit): the compile in flight finishes in
  // its process, whose child acknowledges within kAckLimit that it no longer dies with this process and is not waited
  // for, and the queued ones in one more (finishQueuedAfterExit). Otherwise (a private folder, removed now, or no
  // acknowledgement) the one in flight is killed and the queued ones are dropped.
  void stop() {
    std::deque<CompileJob> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      if (privateDir_.empty() && finishCompilesAtExit() && !cacheEnvironment().dir.empty()) left.swap(jobs_);
      if (child_ > 0 && privateDir_.empty() && childAck_ >= 0 && finishCompilesAtExit() && kill(child_, SIGUSR1) == 0) {
        constexpr int kAckLimitMs = 200;
        pollfd acknowledged{childAck_, POLLIN, 0};
        char byte = 0;
        if (poll(&acknowledged, 1, kAckLimitMs) == 1 && read(childAck_, &byte, 1) == 1 && byte == 'd') detached_ = true;
      }
      if (child_ > 0 && !detached_.load()) kill(child_, SIGKILL);
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t woken = write(wake_fd(), &one, sizeof one);
      wake_.notify_all();
      idle_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    const size_t queued = finishQueuedAfterExit(left);
    if (detached_.load() || queued) {
      std::lock_guard<std::mutex> lock(gMutex);
      stats().compilesFinishingAfterExit += (detached_.load() ? 1 : 0) + queued;
    }
    if (!privateDir_.empty()) {
      if (DIR* d = opendir(privateDir_.c_str())) {
        while (const dirent* e = readdir(d))
          if (e->d_name[0] != '.') unlink((privateDir_ + "/" + e->d_name).c_str());
        closedir(d);
      }
      rmdir(privateDir_.c_str());
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<CompileJob> jobs_;
  uint64_t queued_ = 0, done_ = 0;
  bool stopping_ = false;
  pid_t child_ = 0;
  int childAck_ = -1;                  // the read end of the child's acknowledgement pipe (detachFromParent)
  std::atomic<bool> detached_{false};  // the child in flight was left to finish after exit
  // wakes the compiler thread's wait for its child at exit
  static int wake_fd() {
    static const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd;
  }
  std::string privateDir_;
  std::thread thread_;
};

}  // namespace

namespace {

// Whether a kernel is hot by its interpreted time (NativeTierPolicy::hotInterpretedMs), `ns` of it so far.
bool hotByTime(const NativeTierPolicy& policy, uint64_t ns) {
  return policy.hotInterpretedMs != 0xffffffffu && ns >= uint64_t(policy.hotInterpretedMs) * 1000000;
}

// Takes the kernel (entry function `function` of p, its slot `code`) for compiling or loading, with gMutex held: fills
// `job` and marks it Queued, and returns whether its code comes from the cache where a background compile left it
// (InCache); nullopt where the kernel is not compiled (refused, and then Done).
std::optional<bool> takeJob(const Program& p, uint32_t function, NativeSlot::Code& code, CompileJob& job) {
  std::string why;
  if (!prepareJob(p, function, job, why)) {
    code.state = NativeSlot::Code::Done;
    refuse(std::move(why));
    return std::nullopt;
  }
  const bool fromCache = code.state == NativeSlot::Code::InCache;
  code.state = NativeSlot::Code::Queued;
  return fromCache;
}

// The code of a kernel that got hot (codeFor, upgrade), its job prepared and its state Queued: loaded from the cache
// where it is there, else compiled in the background (nullptr now: a later launch, or a later poll of the launch,
// loads it) or here (background false, or the background compile could not cache it).
Handler obtainCode(const Program& p, CompileJob& job, bool background, bool fromCache, const std::string& cacheDir) {
  // Code in the cache loads here without the compiler's library: a program whose hot kernels are all there never
  // loads LLVM (docs/native-tier.md, Cache). The environment's cache, or where this process's background compile left
  // the code.
  const char* handover = fromCache ? Compiler::instance().handoverDir() : nullptr;
  const CachedLoad cached = loadFromCache(job, handover ? std::string(handover) : cacheDir);
  if (cached != CachedLoad::Loaded) {
    if (!libraryForCompiles().api) {
      std::lock_guard<std::mutex> lock(gMutex);
      p.native->kernels[job.function].state = NativeSlot::Code::Done;
      return nullptr;
    }
    if (background) {
      // a cached file the loader refused loads through the compiler's library, at this launch; otherwise a background
      // compile
      if (cached == CachedLoad::Absent || !runJob(job, nullptr, true)) {
        Compiler::instance().queue(std::move(job));
        return nullptr;
      }
    } else {
      // at this launch, on this thread (the launch runs the code): compiled, or loaded where a background compile put
      // it
      runJob(job, handover);
    }
  }
  std::lock_guard<std::mutex> lock(gMutex);
  return p.native->kernels[job.function].entry;
}

}  // namespace

Handler codeFor(const Program& p, const FunctionCode& entry, uint64_t threads) {
  if (!nativeTier()) return nullptr;
  const NativeTierPolicy policy = nativeTierPolicy();
  CompileJob job;
  bool fromCache = false, background = false, probe = false;
  const std::string cacheDir = cacheEnvironment().dir;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    if (!p.native) p.native = std::make_shared<NativeSlot>();
    const uint32_t function = uint32_t(&entry - p.functions.data());
    NativeSlot::Code& code = p.native->kernels[function];
    if (code.entry) {
      ++stats().launchesCompiled;
      return code.entry;
    }
    ++stats().launchesInterpreted;
    const bool handedOver = code.state == NativeSlot::Code::InCache || code.state == NativeSlot::Code::CompileHere;
    if ((code.state != NativeSlot::Code::Cold && !handedOver) || p.ops.empty()) return nullptr;
    if (!handedOver) {
      ++code.launches;
      code.threads += threads;
      if (code.launches < policy.hotLaunches && code.threads < policy.hotThreads &&
          !hotByTime(policy, code.interpretedNs)) {
        // not hot yet: its code may be in the cache all the same (an earlier run compiled it), which costs a look
        // there at its first launch (the key's hash and a file that is not there: microseconds) and runs it from that
        // launch on, compiled: a kernel launched once or twice, that ran long, is compiled in the run that found it
        // hot (by time) and its code finishes into the cache at exit (Tiering)
        if (code.cacheProbed || cacheDir.empty()) return nullptr;
        code.cacheProbed = probe = true;
      }
    }
    const std::optional<bool> taken = takeJob(p, function, code, job);
    if (!taken) return nullptr;
    fromCache = *taken;
    background = !handedOver && policy.background;
  }
  if (probe) {
    const bool loaded = loadFromCache(job, cacheDir) == CachedLoad::Loaded;
    std::lock_guard<std::mutex> lock(gMutex);
    NativeSlot::Code& code = p.native->kernels[job.function];
    if (!loaded) {  // (a file the loader refused waits for the hot launch, which hands it to the compiler's library)
      code.state = NativeSlot::Code::Cold;
      return nullptr;
    }
    if (code.entry) --stats().launchesInterpreted, ++stats().launchesCompiled;
    return code.entry;
  }
  const Handler h = obtainCode(p, job, background, fromCache, cacheDir);
  std::lock_guard<std::mutex> lock(gMutex);
  if (h) --stats().launchesInterpreted, ++stats().launchesCompiled;
  return h;
}

Handler upgrade(const Program& p, const FunctionCode& entry, uint64_t runningNs) {
  if (!nativeTier()) return nullptr;
  const NativeTierPolicy policy = nativeTierPolicy();
  CompileJob job;
  bool fromCache = false, background = false;
  const std::string cacheDir = cacheEnvironment().dir;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    if (!p.native || p.ops.empty()) return nullptr;
    const uint32_t function = uint32_t(&entry - p.functions.data());
    NativeSlot::Code& code = p.native->kernels[function];
    if (code.entry) return code.entry;
    if (code.state == NativeSlot::Code::Cold) {
      if (!hotByTime(policy, code.interpretedNs + runningNs)) return nullptr;  // (this launch's time so far counted in)
    } else if (code.state != NativeSlot::Code::InCache) {
      return nullptr;  // queued or compiling, or done without code; (CompileHere: at the next launch)
    }
    const std::optional<bool> taken = takeJob(p, function, code, job);
    if (!taken) return nullptr;
    fromCache = *taken;
    background = !fromCache && policy.background;
  }
  const Handler h = obtainCode(p, job, background, fromCache, cacheDir);
  if (h) {
    std::lock_guard<std::mutex> lock(gMutex);
    ++stats().upgradesDuringLaunch;
  }
  return h;
}

void interpreted(const Program& p, const FunctionCode& entry, uint64_t ns) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!p.native) return;
  auto code = p.native->kernels.find(uint32_t(&entry - p.functions.data()));
  if (code != p.native->kernels.end()) code->second.interpretedNs += ns;
}

}  // namespace native

void waitForNativeCompiles() {
  if (library().api) native::Compiler::instance().wait();
}

}  // namespace ptx::exec
