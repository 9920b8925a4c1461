// compile(): the whole path from PTX text to a Program (the front end's parseAndCheck, the map_f64_to_f32 demotion,
// lowering with the enabled rewrites), and the rewrite switches.
#include "exec/engine.h"
#include "exec/lower.h"
#include "ptx/check.h"
#include "ptx/checker.h"

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

namespace ptx::exec {

namespace {

constexpr std::string_view kRewriteNames[] = {
#define PTX_REWRITE(e, name, what) name,
#include "ptx/rewrites.def"
#undef PTX_REWRITE
};
static_assert(std::size(kRewriteNames) == size_t(Rewrite::count_));

// Constant-initialised: no static constructor.
std::atomic<uint32_t> g_defaultRewrites{kAllRewrites};

}  // namespace

std::string_view rewriteName(Rewrite r) {
  return unsigned(r) < std::size(kRewriteNames) ? kRewriteNames[unsigned(r)] : "?";
}

bool parseRewrites(std::string_view spec, uint32_t& mask, std::string& error) {
  uint32_t m = kAllRewrites;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    if (item == "all") {
      m = kAllRewrites;
      continue;
    }
    if (item == "none") {
      m = 0;
      continue;
    }
    bool on = true;
    if (item.front() == '-' || item.front() == '+') {
      on = item.front() == '+';
      item.remove_prefix(1);
    }
    if (item == "lowering" || item == "runtime") {
      uint32_t group = item == "runtime" ? kRuntimeFastPaths : kLoweringRewrites;
      m = on ? m | group : m & ~group;
      continue;
    }
    bool found = false;
    for (unsigned k = 0; k < std::size(kRewriteNames); ++k) {
      if (kRewriteNames[k] != item) continue;
      m = on ? m | (1u << k) : m & ~(1u << k);
      found = true;
    }
    if (!found) {
      std::string known;
      for (std::string_view n : kRewriteNames) known += fmt::format("{}{}", known.empty() ? "" : ", ", n);
      error = fmt::format("unknown rewrite '{}' (known: all, none, lowering, runtime, {})", item, known);
      return false;
    }
  }
  mask = m;
  return true;
}

void setDefaultRewrites(uint32_t mask) { g_defaultRewrites.store(mask & kAllRewrites, std::memory_order_relaxed); }
uint32_t defaultRewrites() { return g_defaultRewrites.load(std::memory_order_relaxed); }

ProgramStats programStats(const Program& program) {
  ProgramStats st;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the fields that make an op what it is
  auto mix = [&](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  auto add = [&](const Program& code) {
    st.ops += code.ops.size();
    for (const Op& op : code.ops) {
      mix(reinterpret_cast<uintptr_t>(op.fn));
      mix(uint64_t(op.d) | uint64_t(op.a) << 32);
      mix(uint64_t(op.b) | uint64_t(op.c) << 32);
      mix(uint64_t(op.e) | uint64_t(op.f) << 32);
      mix(uint64_t(op.imm));
      mix(op.aux);
    }
    for (const LoopWatch& watch : code.loopWatches) {
      ++st.loopWatches;
      mix(uint64_t(watch.headerOp) | uint64_t(watch.rangeCount) << 32);
      for (uint32_t k = 0; k < watch.rangeCount; ++k) {
        const RegisterRange& range = code.loopWatchRanges[watch.firstRange + k];
        mix(uint64_t(range.offset) | uint64_t(range.bytes) << 32);
        st.loopWatchBytes += range.bytes;
      }
    }
  };
  if (!program.lazy) {
    add(program);
  } else {
    for (size_t k = 0; k < program.kernelInfo.size(); ++k) {
      int codeKernel = 0;
      add(loweredKernel(program, int(k), codeKernel));
    }
  }
  st.digest = h;
  return st;
}

Lowering defaultLowering() {
  static const Lowering mode = [] {
    const char* value = std::getenv("CUDA_MODULE_LOADING");
    return value && std::strcmp(value, "EAGER") == 0 ? Lowering::Eager : Lowering::Lazy;
  }();
  return mode;
}

namespace {

// A 128-bit hash of the text in one pass, 8 bytes a step (the cache must not cost a noticeable part of a load; a
// collision of both halves would hand out another module's program).
void textHash(std::string_view text, uint64_t out[2]) {
  constexpr uint64_t kMul1 = 0x9e3779b97f4a7c15ull, kMul2 = 0xc2b2ae3d27d4eb4full;
  uint64_t h1 = 0x243f6a8885a308d3ull ^ text.size(), h2 = 0x13198a2e03707344ull;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, 8);
    h1 = (h1 ^ w) * kMul1;
    h2 = (std::rotl(h2, 29) + w) * kMul2;
  }
  uint64_t last = 0;
  std::memcpy(&last, text.data() + i, text.size() - i);
  h1 = (h1 ^ last) * kMul1;
  h2 = (std::rotl(h2, 29) + last) * kMul2;
  out[0] = h1 ^ (h1 >> 31) ^ (h2 >> 17);
  out[1] = h2 ^ (h2 >> 29) ^ (h1 << 7);
}

// Programs compiled in this process by their text and options: loading the same image again (another module,
// another context) while its program lives gives that program, lowered once.
struct ProgramCache {
  struct Key {
    uint64_t hash[2];
    size_t size;
    unsigned targetSm;
    bool acceptNewerIsa;
    uint32_t rewrites;
    bool contractMulAdd;
    Lowering lowering;
    uint32_t checks;  // checkedAccesses(): code compiled under a checker carries checking ops
    std::string fileName;
    bool operator<(const Key& o) const {
      return std::tie(hash[0], hash[1], size, targetSm, acceptNewerIsa, rewrites, contractMulAdd, lowering, checks,
                      fileName) < std::tie(o.hash[0], o.hash[1], o.size, o.targetSm, o.acceptNewerIsa, o.rewrites,
                                           o.contractMulAdd, o.lowering, o.checks, o.fileName);
    }
  };
  struct Entry {
    std::weak_ptr<const Program> program;
    std::string log;
  };
  std::mutex mutex;
  std::map<Key, Entry> entries;

  static ProgramCache& instance() {
    static auto* cache = new ProgramCache;  // never destroyed: programs may be compiled during exit
    return *cache;
  }
  bool find(const Key& key, CompileResult& out) {
    std::lock_guard lock(mutex);
    auto it = entries.find(key);
    if (it == entries.end()) return false;
    out.program = it->second.program.lock();
    if (!out.program) {
      entries.erase(it);
      return false;
    }
    out.log = it->second.log;
    return true;
  }
  void insert(const Key& key, const CompileResult& r) {
    std::lock_guard lock(mutex);
    std::erase_if(entries, [](const auto& e) { return e.second.program.expired(); });
    entries[key] = Entry{r.program, r.log};
  }
};

}  // namespace

CompileResult compile(std::string_view ptxText, const CompileOptions& options) {
  CompileResult r;
  Lowering lowering = options.lowering == Lowering::Default ? defaultLowering() : options.lowering;
  uint32_t rewrites = options.rewrites & defaultRewrites();
  ProgramCache::Key key{{},
                        ptxText.size(),
                        options.targetSm,
                        options.acceptNewerIsa,
                        rewrites,
                        options.contractMulAdd,
                        lowering,
                        checkedAccesses(),
                        std::string(options.fileName)};
  textHash(ptxText, key.hash);
  if (ProgramCache::instance().find(key, r)) return r;
  ptx::CheckOptions co;
  co.targetSm = options.targetSm;
  co.acceptNewerIsa = options.acceptNewerIsa;
  // Lazily lowered, a kernel's body stays text until its first use (a checked tree is about 6 times its text).
  KeptKernelBodies kept;
  ptx::FrontEndResult front =
      lowering == Lowering::Lazy
          ? ptx::parseAndCheck(
                ptxText, options.fileName, co,
                [&](const ptx::Module& m, uint32_t function) { return kept.keep(m, function); }, kept.bodies)
          : ptx::parseAndCheck(ptxText, options.fileName, co);
  r.log = std::move(front.log);
  if (!front.ok) {
    r.error = r.log.empty() ? std::string("PTX parse error") : r.log;
    return r;
  }
  demoteF64ToF32(*front.module);
  std::string err;
  std::unique_ptr<Program> prog =
      lowering == Lowering::Lazy
          ? describeForLazyLowering(std::move(front.module), err, rewrites, std::move(kept), options.contractMulAdd)
          : lowerModule(*front.module, err, rewrites, options.contractMulAdd);
  if (!prog) {
    r.error = std::move(err);
    return r;
  }
  r.program = std::shared_ptr<const Program>(std::move(prog));
  ProgramCache::instance().insert(key, r);
  return r;
}

}  // namespace ptx::exec
