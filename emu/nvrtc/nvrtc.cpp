// cuemu's libnvrtc.so.13: NVIDIA's NVRTC, with cubins turned into PTX.
//
// Why it exists: programs that compile kernels at run time with NVRTC (NVIDIA's own samples, cuda.core users,
// JIT libraries) usually ask for a cubin of the device's architecture (`-arch=sm_90`) and hand it to
// cuModuleLoadData. A cubin is SASS, which cuemu cannot run. Installed beside cuemu's libcuda.so.1, this library
// is the libnvrtc.so.13 the loader finds first. It forwards every call to NVIDIA's NVRTC, which it loads from the
// toolkit, except that a program compiled for a real architecture (`sm_XX`) is compiled for the matching virtual
// one (`compute_XX`) instead, and `nvrtcGetCUBINSize`/`nvrtcGetCUBIN` then answer the PTX text: cuemu's
// cuModuleLoadData accepts PTX there, as NVIDIA's driver does. Everything else (PTX, LTO-IR, logs, lowered names)
// is NVIDIA's NVRTC unchanged.
//
// Switches: CUEMU_CUBIN_AS_PTX=0 forwards without rewriting (the cubin is SASS again); CUEMU_NVRTC_LIBRARY names
// NVIDIA's library when it is not in a standard place. ABI facts (names, the version node, nvrtcResult values)
// are those of CUDA 13's nvrtc.h. The undocumented export __nvrtcCPEx is not forwarded (no header declares it).
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

extern "C" {
typedef struct _nvrtcProgram* nvrtcProgram;
typedef int nvrtcResult;
}

namespace {

constexpr nvrtcResult kSuccess = 0;
constexpr nvrtcResult kInternalError = 11;

// Every forwarded entry: name, parameter list, argument list. The four that the cubin rewrite changes
// (nvrtcCompileProgram, nvrtcGetCUBINSize, nvrtcGetCUBIN, nvrtcDestroyProgram) are written out below.
#define CUEMU_NVRTC_FORWARDED(X)                                                                         \
  X(nvrtcVersion, (int* major, int* minor), (major, minor))                                              \
  X(nvrtcGetNumSupportedArchs, (int* count), (count))                                                    \
  X(nvrtcGetSupportedArchs, (int* archs), (archs))                                                       \
  X(nvrtcCreateProgram,                                                                                  \
    (nvrtcProgram * prog, const char* src, const char* name, int numHeaders, const char* const* headers, \
     const char* const* includeNames),                                                                   \
    (prog, src, name, numHeaders, headers, includeNames))                                                \
  X(nvrtcGetPTXSize, (nvrtcProgram prog, size_t * size), (prog, size))                                   \
  X(nvrtcGetPTX, (nvrtcProgram prog, char* ptx), (prog, ptx))                                            \
  X(nvrtcGetLTOIRSize, (nvrtcProgram prog, size_t * size), (prog, size))                                 \
  X(nvrtcGetLTOIR, (nvrtcProgram prog, char* ltoir), (prog, ltoir))                                      \
  X(nvrtcGetOptiXIRSize, (nvrtcProgram prog, size_t * size), (prog, size))                               \
  X(nvrtcGetOptiXIR, (nvrtcProgram prog, char* optixir), (prog, optixir))                                \
  X(nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t * size), (prog, size))                            \
  X(nvrtcGetProgramLog, (nvrtcProgram prog, char* log), (prog, log))                                     \
  X(nvrtcAddNameExpression, (nvrtcProgram prog, const char* const expression), (prog, expression))       \
  X(nvrtcGetLoweredName, (nvrtcProgram prog, const char* const expression, const char** lowered),        \
    (prog, expression, lowered))                                                                         \
  X(nvrtcGetPCHHeapSize, (size_t * size), (size))                                                        \
  X(nvrtcSetPCHHeapSize, (size_t size), (size))                                                          \
  X(nvrtcGetPCHCreateStatus, (nvrtcProgram prog), (prog))                                                \
  X(nvrtcGetPCHHeapSizeRequired, (nvrtcProgram prog, size_t * size), (prog, size))                       \
  X(nvrtcSetFlowCallback, (nvrtcProgram prog, int (*callback)(void*, void*), void* payload), (prog, callback, payload))

#define CUEMU_NVRTC_REWRITTEN(X)                                                                                       \
  X(nvrtcCompileProgram, (nvrtcProgram prog, int numOptions, const char* const* options), (prog, numOptions, options)) \
  X(nvrtcGetCUBINSize, (nvrtcProgram prog, size_t * size), (prog, size))                                               \
  X(nvrtcGetCUBIN, (nvrtcProgram prog, char* cubin), (prog, cubin))                                                    \
  X(nvrtcDestroyProgram, (nvrtcProgram * prog), (prog))

// NVIDIA's entry points, resolved once.
struct RealNvrtc {
  void* handle = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult) = nullptr;
#define CUEMU_NVRTC_POINTER(name, params, args) nvrtcResult(*name) params = nullptr;
  CUEMU_NVRTC_FORWARDED(CUEMU_NVRTC_POINTER)
  CUEMU_NVRTC_REWRITTEN(CUEMU_NVRTC_POINTER)
#undef CUEMU_NVRTC_POINTER
};

std::string realPathOf(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

// This library's own file, so that the search below never loads it a second time.
std::string ownPath() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&realPathOf), &info) || !info.dli_fname) return {};
  return realPathOf(info.dli_fname);
}

std::vector<std::string> candidateDirectories() {
  std::vector<std::string> dirs;
  auto addList = [&](const char* list) {
    if (!list) return;
    std::string_view rest(list);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  };
  addList(getenv("LD_LIBRARY_PATH"));
  for (const char* root : {getenv("CUDA_HOME"), getenv("CUDA_PATH")}) {
    if (root && *root) {
      dirs.push_back(std::string(root) + "/lib64");
      dirs.push_back(std::string(root) + "/lib");
    }
  }
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/x86_64-linux/lib",
                          "/usr/local/cuda/targets/sbsa-linux/lib", "/usr/lib/x86_64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/lib", "/usr/lib"})
    dirs.emplace_back(dir);
  return dirs;
}

// Loads NVIDIA's libnvrtc.so.13 under its own symbols (RTLD_DEEPBIND: its calls to its own entry points must not
// land in this library, which exports the same names).
void* openReal(const std::string& path, const std::string& self) {
  std::string resolved = realPathOf(path);
  if (resolved.empty() || resolved == self) return nullptr;
  void* handle = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!handle) return nullptr;
  void* compile = dlsym(handle, "nvrtcCompileProgram");
  Dl_info info{};
  if (!compile || !dladdr(compile, &info) || !info.dli_fname || realPathOf(info.dli_fname) == self) {
    dlclose(handle);
    return nullptr;
  }
  return handle;
}

const RealNvrtc& real() {
  static const RealNvrtc loaded = [] {
    RealNvrtc r;
    std::string self = ownPath();
    std::vector<std::string> tried;
    if (const char* named = getenv("CUEMU_NVRTC_LIBRARY"); named && *named) {
      tried.emplace_back(named);
      r.handle = openReal(named, self);
    } else {
      for (const std::string& dir : candidateDirectories()) {
        std::string path = dir + "/libnvrtc.so.13";
        tried.push_back(path);
        if ((r.handle = openReal(path, self))) break;
      }
    }
    if (!r.handle) {
      std::fprintf(stderr,
                   "cuemu: NVIDIA's libnvrtc.so.13 was not found (cuemu's libnvrtc.so.13 forwards to it); set "
                   "CUEMU_NVRTC_LIBRARY to its path. Looked in:");
      for (const std::string& path : tried) std::fprintf(stderr, " %s", path.c_str());
      std::fprintf(stderr, "\n");
      return r;
    }
    r.nvrtcGetErrorString = reinterpret_cast<const char* (*)(nvrtcResult)>(dlsym(r.handle, "nvrtcGetErrorString"));
#define CUEMU_NVRTC_RESOLVE(name, params, args) \
  r.name = reinterpret_cast<nvrtcResult(*) params>(dlsym(r.handle, #name));
    CUEMU_NVRTC_FORWARDED(CUEMU_NVRTC_RESOLVE)
    CUEMU_NVRTC_REWRITTEN(CUEMU_NVRTC_RESOLVE)
#undef CUEMU_NVRTC_RESOLVE
    return r;
  }();
  return loaded;
}

bool cubinAsPtx() {
  const char* value = getenv("CUEMU_CUBIN_AS_PTX");
  return !(value && std::strcmp(value, "0") == 0);
}

// Programs compiled for a real architecture whose "cubin" is their PTX.
std::mutex rewrittenMutex;
std::unordered_set<nvrtcProgram>& rewrittenPrograms() {
  static std::unordered_set<nvrtcProgram> programs;
  return programs;
}

bool isRewritten(nvrtcProgram prog) {
  std::lock_guard lock(rewrittenMutex);
  return rewrittenPrograms().count(prog) != 0;
}

// "sm_90" -> "compute_90", "sm_90a" -> "compute_90a"; anything else (compute_XX, native, lists) unchanged.
bool virtualArchitecture(std::string_view arch, std::string& out) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_" || arch[3] < '0' || arch[3] > '9') return false;
  out = "compute_" + std::string(arch.substr(3));
  return true;
}

}  // namespace

extern "C" {

#define CUEMU_NVRTC_EXPORT __attribute__((visibility("default")))

CUEMU_NVRTC_EXPORT const char* nvrtcGetErrorString(nvrtcResult result) {
  const RealNvrtc& r = real();
  if (!r.nvrtcGetErrorString) return "cuemu: NVIDIA's libnvrtc.so.13 was not found (set CUEMU_NVRTC_LIBRARY)";
  return r.nvrtcGetErrorString(result);
}

#define CUEMU_NVRTC_DEFINE(name, params, args)    \
  CUEMU_NVRTC_EXPORT nvrtcResult name params {    \
    const RealNvrtc& r = real();                  \
    return r.name ? r.name args : kInternalError; \
  }
CUEMU_NVRTC_FORWARDED(CUEMU_NVRTC_DEFINE)
#undef CUEMU_NVRTC_DEFINE

CUEMU_NVRTC_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options) {
  const RealNvrtc& r = real();
  if (!r.nvrtcCompileProgram) return kInternalError;
  if (!cubinAsPtx() || numOptions <= 0 || !options) return r.nvrtcCompileProgram(prog, numOptions, options);
  std::vector<std::string> rewritten;
  rewritten.reserve(size_t(numOptions));
  bool changed = false;
  for (int i = 0; i < numOptions; ++i) {
    if (!options[i]) return r.nvrtcCompileProgram(prog, numOptions, options);  // NVRTC's own error for it
    std::string_view option(options[i]);
    std::string arch;
    if ((option == "-arch" || option == "--gpu-architecture") && i + 1 < numOptions && options[i + 1] &&
        virtualArchitecture(options[i + 1], arch)) {
      rewritten.emplace_back(option);
      rewritten.push_back(arch);
      ++i;
      changed = true;
      continue;
    }
    bool replaced = false;
    for (std::string_view prefix : {std::string_view("-arch="), std::string_view("--gpu-architecture=")}) {
      if (option.substr(0, prefix.size()) == prefix && virtualArchitecture(option.substr(prefix.size()), arch)) {
        rewritten.push_back(std::string(prefix) + arch);
        replaced = changed = true;
        break;
      }
    }
    if (!replaced) rewritten.emplace_back(option);
  }
  if (!changed) return r.nvrtcCompileProgram(prog, numOptions, options);
  std::vector<const char*> pointers;
  pointers.reserve(rewritten.size());
  for (const std::string& option : rewritten) pointers.push_back(option.c_str());
  nvrtcResult result = r.nvrtcCompileProgram(prog, int(pointers.size()), pointers.data());
  // After a failed compile the cubin calls stay NVIDIA's answers for a program without output.
  if (result == kSuccess && prog) {
    std::lock_guard lock(rewrittenMutex);
    rewrittenPrograms().insert(prog);
  }
  return result;
}

CUEMU_NVRTC_EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  const RealNvrtc& r = real();
  if (!r.nvrtcGetCUBINSize || !r.nvrtcGetPTXSize) return kInternalError;
  return isRewritten(prog) ? r.nvrtcGetPTXSize(prog, size) : r.nvrtcGetCUBINSize(prog, size);
}

CUEMU_NVRTC_EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) {
  const RealNvrtc& r = real();
  if (!r.nvrtcGetCUBIN || !r.nvrtcGetPTX) return kInternalError;
  return isRewritten(prog) ? r.nvrtcGetPTX(prog, cubin) : r.nvrtcGetCUBIN(prog, cubin);
}

CUEMU_NVRTC_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  const RealNvrtc& r = real();
  if (!r.nvrtcDestroyProgram) return kInternalError;
  if (prog) {
    std::lock_guard lock(rewrittenMutex);
    rewrittenPrograms().erase(*prog);
  }
  return r.nvrtcDestroyProgram(prog);
}

}  // extern "C"
