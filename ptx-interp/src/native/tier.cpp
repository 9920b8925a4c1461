#include "native/tier.h"

#include "native/abi.h"
#include "ptx/native.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
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
  std::string unavailable;  // why api is null
};

// Loaded once, on first use; kept until exit (the compiled code lives in it).
const Library& library() {
  static const Library* lib = [] {
    auto* l = new Library();
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

void refuse(std::string why) {
  ++stats().kernelsRefused;
  stats().lastRefusal = std::move(why);
}

}  // namespace

void setNativeTier(bool on) { gNativeTier.store(on ? 1 : 0, std::memory_order_relaxed); }

namespace {
NativeTierPolicy& policyStore() {
  static auto* p = [] {
    auto* made = new NativeTierPolicy();  // lives until exit
    if (const char* v = std::getenv("CUEMU_NATIVE_HOT_LAUNCHES"))
      made->hotLaunches = uint32_t(std::strtoul(v, nullptr, 10));
    if (const char* v = std::getenv("CUEMU_NATIVE_HOT_THREADS")) made->hotThreads = std::strtoull(v, nullptr, 10);
    if (const char* v = std::getenv("CUEMU_NATIVE_BACKGROUND")) made->background = std::strcmp(v, "1") == 0;
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

bool nativeTier() {
  int v = gNativeTier.load(std::memory_order_relaxed);
  if (v < 0) {
    v = envSwitch();
    int expected = -1;
    if (!gNativeTier.compare_exchange_strong(expected, v)) v = expected;
    if (v && !library().api)
      std::fprintf(stderr, "cuemu: CUEMU_NATIVE=1, but the native tier is absent: %s. Kernels are interpreted.\n",
                   library().unavailable.c_str());
  }
  return v != 0;
}

std::string nativeTierUnavailable() { return library().unavailable; }

NativeTierStats nativeTierStats() {
  std::lock_guard<std::mutex> lock(gMutex);
  return stats();
}

NativeSlot::~NativeSlot() {
  for (auto& [function, code] : kernels)
    if (code.handle) library().api->release(code.handle);
}

namespace native {

namespace {

// What one compile needs, taken under gMutex: the kernel's ops are copied, so that a background compile reads no
// program that may be released meanwhile (the code refers to the program's own ops, `original`, and is dropped when
// the program went first).
struct CompileJob {
  std::weak_ptr<NativeSlot> slot;
  uint32_t function = 0;
  std::vector<Op> ops;
  const Op* original = nullptr;
  std::vector<uint8_t> compileOp;
};

// Fills `job` for the kernel with entry function `function` of p; false (and why) when it is not compiled.
bool prepareJob(const Program& p, uint32_t function, CompileJob& job, std::string& why) {
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
  job.ops = p.ops;
  job.original = p.ops.data();
  return true;
}

// Compiles (without gMutex) and records the result (with it). The code is kept only while its program lives.
void runJob(CompileJob& job, bool background) {
  const Library& lib = library();
  CuemuNativeOptions options;
  static const unsigned optLevel = [] {
    const char* v = std::getenv("CUEMU_NATIVE_OPT");
    return v && v[0] >= '1' && v[0] <= '3' ? unsigned(v[0] - '0') : 1u;
  }();
  options.optLevel = optLevel;
  options.compileOp = job.compileOp.data();
  options.original = job.original;
  CuemuNativeResult result;
  const bool ok = lib.api->compile(job.ops.data(), job.ops.size(), &options, &result);
  std::lock_guard<std::mutex> lock(gMutex);
  stats().compileNs += result.compileNs;
  stats().lastCompileNs = result.compileNs;
  stats().prepareNs += result.prepareNs;
  std::shared_ptr<NativeSlot> slot = job.slot.lock();
  if (!ok || !result.entry) {
    refuse(result.message);
    if (slot) slot->kernels[job.function].state = NativeSlot::Code::Done;
    return;
  }
  if (!slot) {  // the program was released while its kernel compiled
    lib.api->release(result.handle);
    return;
  }
  ++stats().kernelsCompiled;
  stats().backgroundCompiles += background;
  stats().cacheLoads += result.fromCache;
  stats().cacheWrites += result.cacheWritten;
  stats().opsInlined += result.opsInlined;
  stats().opsCalled += result.opsCalled;
  stats().codeBytes += result.codeBytes;
  NativeSlot::Code& code = slot->kernels[job.function];
  code.entry = result.entry;
  code.handle = result.handle;
  code.state = NativeSlot::Code::Done;
}

// The background compiler: one thread, started on first use, compiling queued kernels in order. At exit it
// finishes the compile in progress (LLVM's static objects must outlive it) and drops the rest.
class Compiler {
 public:
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

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      CompileJob job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      runJob(job, true);
      lock.lock();
      ++done_;
      idle_.notify_all();
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      wake_.notify_all();
      idle_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<CompileJob> jobs_;
  uint64_t queued_ = 0, done_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

Handler codeFor(const Program& p, const FunctionCode& entry, uint64_t threads) {
  if (!nativeTier()) return nullptr;
  const Library& lib = library();
  if (!lib.api) return nullptr;
  const NativeTierPolicy policy = nativeTierPolicy();
  CompileJob job;
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
    if (code.state != NativeSlot::Code::Cold || p.ops.empty()) return nullptr;
    ++code.launches;
    code.threads += threads;
    if (code.launches < policy.hotLaunches && code.threads < policy.hotThreads) return nullptr;
    std::string why;
    if (!prepareJob(p, function, job, why)) {
      code.state = NativeSlot::Code::Done;
      refuse(std::move(why));
      return nullptr;
    }
    code.state = NativeSlot::Code::Queued;
    if (policy.background) {
      Compiler::instance().queue(std::move(job));
      return nullptr;
    }
  }
  // at this launch, on this thread: the launch runs the code
  runJob(job, false);
  std::lock_guard<std::mutex> lock(gMutex);
  Handler h = p.native->kernels[job.function].entry;
  if (h) --stats().launchesInterpreted, ++stats().launchesCompiled;
  return h;
}

}  // namespace native

void waitForNativeCompiles() {
  if (library().api) native::Compiler::instance().wait();
}

}  // namespace ptx::exec
