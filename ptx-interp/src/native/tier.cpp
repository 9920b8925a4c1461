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
#include <mutex>
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

std::mutex gMutex;  // compiles, and the statistics
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

Handler codeFor(const Program& p, const FunctionCode& entry) {
  if (!nativeTier()) return nullptr;
  const Library& lib = library();
  if (!lib.api) return nullptr;
  std::lock_guard<std::mutex> lock(gMutex);
  if (!p.native) p.native = std::make_shared<NativeSlot>();
  const uint32_t function = uint32_t(&entry - p.functions.data());
  auto [it, inserted] = p.native->kernels.try_emplace(function);
  if (!inserted || p.ops.empty()) return it->second.entry;
  // the kernel's entry function and every callee-able function; functions occupy consecutive op ranges
  std::vector<uint8_t> compileOp(p.ops.size(), 0);
  size_t compiled = 0;
  for (size_t f = 0; f < p.functions.size(); ++f) {
    const FunctionCode& fc = p.functions[f];
    if (fc.isEntry && f != function) continue;
    size_t end = p.ops.size();
    for (const FunctionCode& other : p.functions)
      if (other.firstOp > fc.firstOp) end = std::min<size_t>(end, other.firstOp);
    for (size_t i = fc.firstOp; i < end; ++i) compiled += compileOp[i] == 0, compileOp[i] = 1;
  }
  if (compiled > maxOps()) {
    refuse(fmt::format("{} ops, more than CUEMU_NATIVE_MAX_OPS ({})", compiled, maxOps()));
    return nullptr;
  }
  CuemuNativeOptions options;
  static const unsigned optLevel = [] {
    const char* v = std::getenv("CUEMU_NATIVE_OPT");
    return v && v[0] >= '1' && v[0] <= '3' ? unsigned(v[0] - '0') : 1u;
  }();
  options.optLevel = optLevel;
  options.compileOp = compileOp.data();
  CuemuNativeResult result;
  const bool ok = lib.api->compile(p.ops.data(), p.ops.size(), &options, &result);
  stats().compileNs += result.compileNs;
  stats().lastCompileNs = result.compileNs;
  stats().prepareNs += result.prepareNs;
  if (!ok || !result.entry) {
    refuse(result.message);
    return nullptr;
  }
  ++stats().kernelsCompiled;
  stats().opsInlined += result.opsInlined;
  stats().opsCalled += result.opsCalled;
  stats().codeBytes += result.codeBytes;
  it->second.entry = result.entry;
  it->second.handle = result.handle;
  return result.entry;
}

}  // namespace native
}  // namespace ptx::exec
