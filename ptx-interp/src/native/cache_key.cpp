#include "native/cache_key.h"

#include "native/cache_environment.h"
#include "native/digest.h"

#include <cpuid.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>

namespace ptx::exec::native {

std::string cpuIdentity() {
  std::string out;
  auto leaf = [&](unsigned l, unsigned sub) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(l, sub, &a, &b, &c, &d) == 0) a = b = c = d = 0;
    if (l == 1) b &= 0xffffu;  // not the core's APIC ID and logical count: the same CPU on whichever core it runs
    for (unsigned v : {a, b, c, d}) out += std::to_string(v) + ",";
  };
  leaf(0, 0);
  leaf(1, 0);
  leaf(7, 0);
  leaf(7, 1);
  leaf(0xd, 1);  // the XSAVE variants
  leaf(0x80000001, 0);
  leaf(0x80000008, 0);  // AMD's extended features
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
    uint32_t lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    out += "xcr0=" + std::to_string(lo) + "," + std::to_string(hi);
  }
  return out;
}

namespace {

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string("=") + v : std::string("unset");
}

int findInterpreter(dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<InterpreterObject*>(data);
  const uint64_t anchor = reinterpret_cast<uint64_t>(&interpreterObject);
  std::vector<std::pair<uint64_t, uint64_t>> segments;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uint64_t begin = info->dlpi_addr + ph.p_vaddr, end = begin + ph.p_memsz;
    segments.push_back({begin, end});
    holds = holds || (anchor >= begin && anchor < end);
  }
  if (!holds) return 0;
  found->bias = info->dlpi_addr;
  found->segments = std::move(segments);
  found->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
  if (found->path.empty()) {  // the main program
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    found->path = n > 0 ? std::string(self, size_t(n)) : "?";
  }
  return 1;
}

}  // namespace

const InterpreterObject& interpreterObject() {
  static const InterpreterObject* object = [] {
    auto* o = new InterpreterObject();  // lives until exit
    dl_iterate_phdr(findInterpreter, o);
    return o;
  }();
  return *object;
}

std::string cacheKey(const Op* ops, const Op* base, size_t count, const CuemuNativeOptions& options,
                     const std::string& libraryPath) {
  const InterpreterObject& interpreter = interpreterObject();
  if (interpreter.segments.empty() || libraryPath.empty()) return "";
  static const std::string identity = [] {
    std::string s = "cuemu-native-cache 3;" + std::to_string(kCuemuNativeAbiVersion) + ";" + cpuIdentity();
    for (const char* name : {"CUEMU_NATIVE_MACHINE_LICM", "CUEMU_NATIVE_MACHINE_CSE", "CUEMU_NATIVE_LLVM_ARGS",
                             "CUEMU_NATIVE_NESTED_HANDLERS", "CUEMU_NATIVE_REGISTERS", "CUEMU_NATIVE_TARGET",
                             "CUEMU_NATIVE_COLD_OPS", "CUEMU_NATIVE_VECTOR", "CUEMU_NATIVE_PREFETCH"})
      s += std::string(";") + name + environment(name);
    return s;
  }();
  Sha256 hash;
  hash.update(identity);
  hash.update(";" + fileIdentity(libraryPath) + ";" + fileIdentity(interpreter.path) + ";");
  hash.value(uint64_t(options.optLevel));
  hash.value(uint64_t(options.inlineBudget));
  hash.value(uint64_t(count));
  hash.value(uint64_t(options.entryOp));
  bool ok = true;
  auto place = [&](const Op* target) -> uint64_t {
    if (!target) return ~uint64_t(0);
    if (target >= base && target <= base + count) return uint64_t(target - base);
    ok = false;
    return 0;
  };
  for (size_t i = 0; i < count; ++i) {
    const Op& op = ops[i];
    const uint64_t fn = reinterpret_cast<uint64_t>(op.fn);
    if (!interpreter.contains(fn)) return "";
    hash.value(fn - interpreter.bias);
    for (uint32_t v : {op.d, op.a, op.b, op.c, op.e, op.f, op.line, op.aux}) hash.value(v);
    hash.value(op.imm);
    hash.value(place(op.target));
    hash.value(place(op.rpc));
    hash.value(uint8_t(options.compileOp ? options.compileOp[i] : 1));
  }
  return ok ? hash.hex() : "";
}

}  // namespace ptx::exec::native
