// cuemu's libnvJitLink.so.13: the nvJitLink 13 ABI over cuemu's own linker (cuLink* of libcuda.so.1).
//
// Why it exists: numba-cuda, cuda.core and other clients link device code through nvJitLink when it can be
// loaded, and NVIDIA's nvJitLink turns PTX into SASS for the device's architecture, which cuemu cannot run.
// Installed beside cuemu's libcuda.so.1, this library is the nvJitLink that the loader finds first; it links
// PTX, fatbinaries, relocatable objects and libraries that carry PTX, and the "cubin" it returns is the linked
// PTX text, which cuemu's cuModuleLoadData/cuLibraryLoadData accept (as NVIDIA's driver accepts PTX there too).
// LTO-IR (NVVM bitcode) needs NVIDIA's optimiser: the LTO-IR inputs of a link go to NVIDIA's libnvJitLink.so.13
// (CUEMU_NVJITLINK_LIBRARY, else the toolkit's), run by the helper program cuemu-nvjitlink-lto beside this library
// (lto_helper.cpp) and asked for PTX (`-lto -ptx`), and that PTX joins the other inputs in cuemu's link; what the
// other inputs call in the LTO-IR is kept there (keptSymbols). Without NVIDIA's library such input fails with
// NVJITLINK_ERROR_UNRECOGNIZED_INPUT and the error log says why.
//
// `nvJitLinkVersion` answers 13.0, exported as NVIDIA's library exports it (default version libnvJitLink.so.13),
// or fails where no NVIDIA nvJitLink is found (the end of this file): clients that probe for it (numba-cuda,
// cuda.core through cuda.bindings) then link through this library, LTO-IR included; numba-cuda turns LTO on by
// default and cuda.compute's operators written in Python (LTO-IR from numba) link. It was hidden while the LTO
// step dropped functions that only a PTX input called (keptSymbols).
//
// ABI facts (names, enum values, the versioned symbol names) are those of CUDA 13's nvJitLink.h.
#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <lz4.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

extern char** environ;

namespace {

enum Result : int {
  kSuccess = 0,
  kErrorUnrecognizedOption = 1,
  kErrorMissingArch = 2,
  kErrorInvalidInput = 3,
  kErrorPtxCompile = 4,
  kErrorInternal = 6,
  kErrorUnrecognizedInput = 8,
  kErrorFinalize = 9,
  kErrorNullInput = 10,
  kErrorIncompatibleOptions = 11,
  kErrorUnrecognizedArch = 16,
};

enum InputType : int {
  kInputNone = 0,
  kInputCubin = 1,
  kInputPtx = 2,
  kInputLtoir = 3,
  kInputFatbin = 4,
  kInputObject = 5,
  kInputLibrary = 6,
  kInputIndex = 7,
  kInputAny = 10,
};

constexpr uint32_t kFatbinMagic = 0xBA55ED50;  // a fatbinary's header
constexpr uint32_t kElfMagic = 0x464C457F;     // "\x7fELF": a cubin or a host object
constexpr char kArchiveMagic[] = "!<arch>\n";

struct Linker {
  CUlinkState state = nullptr;
  std::string arch;
  std::vector<std::pair<std::string, std::string>> ltoInputs;  // name, bitcode: linked at completion
  std::vector<std::string> optimiserOptions;                   // passed on to NVIDIA's nvJitLink for them
  // What the other inputs need from the LTO-IR (keptSymbols, below): the names their PTX declares .extern.
  std::set<std::string> externalReferences;
  std::string linked;  // the linked PTX, once complete
  std::string errorLog, infoLog;
  bool complete = false;
  bool wantsPtx = false;
  bool lto = false;
  char cuError[16384] = {};  // cuLink's log buffers, appended to the logs above after each call
  char cuInfo[16384] = {};
  // The options cuLinkCreate was given. They live as long as the link state: the driver keeps the address of
  // each output option (the log sizes it writes back) and writes there on every later cuLink call.
  std::vector<CUjit_option> cuOptionKeys;
  std::vector<void*> cuOptionValues;
};

bool validHandle(const Linker* linker) { return linker != nullptr; }

std::string ownDirectory();

// The driver functions this library calls, resolved at its first use of them, not at load: `cuemu run` preloads
// this library into every process it starts, and loading the driver into processes that never use CUDA (a shell,
// a compiler) would cost each one the driver's start and, with a checker on, its report.
#define CUEMU_NVJITLINK_NAME2(x) #x
#define CUEMU_NVJITLINK_NAME(x) CUEMU_NVJITLINK_NAME2(x)  // cuda.h's macros: cuLinkCreate -> "cuLinkCreate_v2"
struct Driver {
  decltype(&cuInit) init = nullptr;
  decltype(&cuGetErrorName) errorName = nullptr;
  decltype(&cuLinkCreate) linkCreate = nullptr;
  decltype(&cuLinkAddData) linkAddData = nullptr;
  decltype(&cuLinkComplete) linkComplete = nullptr;
  decltype(&cuLinkDestroy) linkDestroy = nullptr;
  bool complete() const { return init && errorName && linkCreate && linkAddData && linkComplete && linkDestroy; }
};
const Driver& driver() {
  static const Driver d = [] {
    Driver found;
    // cuemu's libcuda.so.1 beside this library, else the one the loader finds
    void* lib = dlopen((ownDirectory() + "/libcuda.so.1").c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) return found;
    auto resolve = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
    };
    resolve(found.init, CUEMU_NVJITLINK_NAME(cuInit));
    resolve(found.errorName, CUEMU_NVJITLINK_NAME(cuGetErrorName));
    resolve(found.linkCreate, CUEMU_NVJITLINK_NAME(cuLinkCreate));
    resolve(found.linkAddData, CUEMU_NVJITLINK_NAME(cuLinkAddData));
    resolve(found.linkComplete, CUEMU_NVJITLINK_NAME(cuLinkComplete));
    resolve(found.linkDestroy, CUEMU_NVJITLINK_NAME(cuLinkDestroy));
    return found;
  }();
  return d;
}

std::string cuErrorText(CUresult code) {
  const char* name = nullptr;
  if (driver().errorName) driver().errorName(code, &name);
  return name ? name : std::to_string(int(code));
}

// The driver's error log ends without a newline; each log here is one message a line.
void collectJitLogs(Linker& linker) {
  for (auto [from, to] : {std::pair{linker.cuError, &linker.errorLog}, std::pair{linker.cuInfo, &linker.infoLog}}) {
    if (!from[0]) continue;
    *to += from;
    if (to->back() != '\n') *to += '\n';
    from[0] = '\0';
  }
}

// The kind of an ANY input, from its first bytes (as NVIDIA's nvJitLink guesses it).
InputType guessType(const void* data, size_t size) {
  uint32_t magic = 0;
  if (size >= 4) std::memcpy(&magic, data, 4);
  if (magic == kFatbinMagic) return kInputFatbin;
  if (magic == kElfMagic) return kInputCubin;
  if (size >= 8 && std::memcmp(data, kArchiveMagic, 8) == 0) return kInputLibrary;
  // NVVM bitcode starts with "BC" (0x42 0x43 0xC0 0xDE) or its wrapper magic 0x0B17C0DE; NVRTC's and nvcc's
  // LTO-IR (-dlto) with 0xED 0x43 0x4E 0x7F.
  if (magic == 0xDEC04342 || magic == 0x0B17C0DE || magic == 0x7F4E43ED) return kInputLtoir;
  return kInputPtx;
}

std::string realPathOf(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) ? std::string(resolved) : std::string();
}

// This library's file, or empty.
std::string ownPath() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&realPathOf), &self) || !self.dli_fname) return {};
  return realPathOf(self.dli_fname);
}

// This library's folder, where the helper program is installed too.
std::string ownDirectory() {
  std::string path = ownPath();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The folders of the NVIDIA libraries this process has loaded that produce LTO-IR or link it (NVRTC, NVVM, nvJitLink),
// other than cuemu's own: a client's NVRTC from PyPI (cuda-pathfinder loads nvidia/cu13/lib/libnvrtc.so.13 by its
// path) writes LTO-IR that only an nvJitLink of at least its version reads, and its wheel puts that one beside it.
std::vector<std::string> foldersOfLoadedNvidiaCompilers(const std::string& own) {
  struct Scan {
    std::string own;
    std::vector<std::string> folders;
  } scan{own, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* scan = static_cast<Scan*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        std::string path = realPathOf(info->dlpi_name);
        size_t slash = path.rfind('/');
        if (path.empty() || path == scan->own || slash == std::string::npos) return 0;
        std::string_view file = std::string_view(path).substr(slash + 1);
        for (std::string_view name : {"libnvJitLink.so.13", "libnvrtc.so.13", "libnvvm.so"})
          if (file.substr(0, name.size()) == name) scan->folders.push_back(path.substr(0, slash));
        return 0;
      },
      &scan);
  return scan.folders;
}

// Where NVIDIA's libnvJitLink.so.13 is now, or empty: CUEMU_NVJITLINK_LIBRARY; else one the process has loaded, or
// one beside the NVIDIA NVRTC or NVVM it has loaded (the client's toolkit, so that its LTO-IR is read by an
// nvJitLink as new); else the toolkit's.
std::string findNvidiaNvJitLink() {
  std::string own = ownPath();
  std::vector<std::string> candidates;
  if (const char* named = getenv("CUEMU_NVJITLINK_LIBRARY"); named && *named) {
    candidates.emplace_back(named);
  } else {
    for (const std::string& folder : foldersOfLoadedNvidiaCompilers(own))
      candidates.push_back(folder + "/libnvJitLink.so.13");
    for (const char* root : {static_cast<const char*>(getenv("CUDA_HOME")),
                             static_cast<const char*>(getenv("CUDA_PATH")), "/usr/local/cuda"})
      if (root && *root) candidates.push_back(std::string(root) + "/lib64/libnvJitLink.so.13");
  }
  for (const std::string& path : candidates) {
    std::string resolved = realPathOf(path.c_str());
    if (!resolved.empty() && resolved != own) return resolved;  // not cuemu's own, found by its SONAME
  }
  return std::string();
}

// The NVIDIA nvJitLink that links LTO-IR: chosen at the first LTO-IR link.
const std::string& nvidiaNvJitLinkPath() {
  static const std::string found = findNvidiaNvJitLink();
  return found;
}

// The architecture NVIDIA's nvJitLink is to optimise for: sm_NN[a|f] whichever way the link named it.
std::string realArch(const std::string& arch) {
  for (const char* prefix : {"compute_", "lto_", "sm_"})
    if (arch.rfind(prefix, 0) == 0) return "sm_" + arch.substr(std::strlen(prefix));
  return arch;
}

// The names a PTX text declares `.extern` (functions, kernels and variables that another input must define),
// added to `names`. A light scan, not a parse: comments and strings are skipped, and only top-level statements
// that start with `.extern` are read (header directives end at their line); a name too many is harmless (keptSymbols).
// `.extern .shared` is a block's dynamic shared memory, not a reference.
void addExternalReferences(std::string_view ptx, std::set<std::string>& names) {
  ptx = ptx.substr(0, ptx.find('\0'));
  auto isWordChar = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '%' || c == '.';
  };
  std::vector<std::string_view> statement;  // the words and punctuation of the top-level statement being read
  int depth = 0;
  auto finish = [&] {
    if (statement.size() < 3 || statement[0] != ".extern") return;
    size_t at = 1;
    while (at < statement.size() && (statement[at] == ".weak" || statement[at] == ".visible")) ++at;
    if (at >= statement.size()) return;
    std::string_view kind = statement[at];
    if (kind == ".func" || kind == ".entry") {
      // .func [(return parameter)] name (parameters)
      ++at;
      if (at < statement.size() && statement[at] == "(")
        while (at < statement.size() && statement[at] != ")") ++at;
      if (at < statement.size() && statement[at] == ")") ++at;
      if (at < statement.size() && statement[at] != "(") names.emplace(statement[at]);
    } else if (kind == ".global" || kind == ".const") {
      // .global [.align N] [.vN] .type name[[size]] [= ...]: the last word before '[', '=' or the end
      std::string_view last;
      for (++at; at < statement.size() && statement[at] != "[" && statement[at] != "=" && statement[at] != "<"; ++at)
        if (statement[at][0] != '.' && !(statement[at][0] >= '0' && statement[at][0] <= '9')) last = statement[at];
      if (!last.empty()) names.emplace(last);
    }
  };
  for (size_t i = 0; i < ptx.size();) {
    char c = ptx[i];
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '/') {
      i = ptx.find('\n', i);
      if (i == std::string_view::npos) break;
    } else if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '*') {
      i = ptx.find("*/", i + 2);
      if (i == std::string_view::npos) break;
      i += 2;
    } else if (c == '"') {
      i = ptx.find('"', i + 1);
      if (i == std::string_view::npos) break;
      ++i;
    } else if (c == '{') {
      ++depth;  // a function body: the statement before it is a definition, not a reference
      statement.clear();
      ++i;
    } else if (c == '}') {
      if (depth > 0) --depth;
      statement.clear();
      ++i;
    } else if (depth > 0) {
      ++i;
    } else if (c == ';') {
      finish();
      statement.clear();
      ++i;
    } else if (c == '\n') {
      // Header directives end at the line, without ';'.
      if (!statement.empty() && (statement[0] == ".version" || statement[0] == ".target" ||
                                 statement[0] == ".address_size" || statement[0] == ".file"))
        statement.clear();
      ++i;
    } else if (isWordChar(c)) {
      size_t start = i;
      while (i < ptx.size() && isWordChar(ptx[i])) ++i;
      statement.push_back(ptx.substr(start, i - start));
    } else {
      if (c == '(' || c == ')' || c == '[' || c == '=' || c == '<') statement.push_back(ptx.substr(i, 1));
      ++i;
    }
  }
}

// addExternalReferences for the PTX inside a fatbinary, a host object or a library of objects: the fatbinary
// containers in its bytes (found by their magic, wherever an object or archive member puts them; the layout of
// emu/core/fatbin.h) and their PTX entries, decompressed. Anything that does not check out is skipped: a name
// missed here makes the final link report it undefined, as it did before.
void addExternalReferencesOfBinary(std::string_view bytes, std::set<std::string>& names) {
  constexpr std::string_view kMagic("\x50\xED\x55\xBA", 4);          // kFatbinMagic, little-endian
  constexpr uint64_t kLz4 = 0x2000, kZstd = 0x8000;                  // an entry's compression flags
  constexpr size_t kEntryHeader = 0x40, kMaxText = size_t(1) << 30;  // as cuemu's driver bounds a PTX entry
  auto read = [&](size_t at, auto& value) {
    if (at > bytes.size() || bytes.size() - at < sizeof value) return false;
    std::memcpy(&value, bytes.data() + at, sizeof value);
    return true;
  };
  for (size_t at = bytes.find(kMagic); at != std::string_view::npos; at = bytes.find(kMagic, at + 1)) {
    uint16_t version = 0, headerSize = 0;
    uint64_t dataSize = 0;
    if (!read(at + 4, version) || !read(at + 6, headerSize) || !read(at + 8, dataSize) || version != 1 ||
        headerSize < 16 || headerSize > bytes.size() - at || dataSize > bytes.size() - at - headerSize)
      continue;
    const size_t end = at + headerSize + dataSize;
    for (size_t entry = at + headerSize; entry < end && end - entry >= kEntryHeader;) {
      uint16_t kind = 0;
      uint32_t entryHeader = 0, compressed = 0;
      uint64_t payload = 0, flags = 0, uncompressed = 0;
      read(entry, kind), read(entry + 0x04, entryHeader), read(entry + 0x08, payload);
      read(entry + 0x10, compressed), read(entry + 0x28, flags), read(entry + 0x38, uncompressed);
      if (entryHeader < kEntryHeader || entryHeader > end - entry || payload > end - entry - entryHeader) break;
      const char* data = bytes.data() + entry + entryHeader;
      if (kind == 1 && !(flags & (kLz4 | kZstd))) {
        addExternalReferences(std::string_view(data, payload), names);
      } else if (kind == 1 && compressed != 0 && compressed <= payload && uncompressed != 0 &&
                 uncompressed <= kMaxText && uncompressed <= uint64_t(compressed) * 255 + 64) {
        std::string text(uncompressed, '\0');
        if (flags & kLz4) {
          int n = LZ4_decompress_safe(data, text.data(), int(compressed), int(uncompressed));
          if (n > 0) addExternalReferences(std::string_view(text.data(), size_t(n)), names);
        } else {
          size_t n = ZSTD_decompress(text.data(), text.size(), data, compressed);
          if (!ZSTD_isError(n)) addExternalReferences(std::string_view(text.data(), n), names);
        }
      }
      entry += entryHeader + payload;
    }
  }
}

// The options that keep in NVIDIA's link of the LTO-IR what the other inputs of the link use.
//
// NVIDIA's nvJitLink, given every input, sees which LTO-IR functions the PTX and the binaries call. Here it sees
// the LTO-IR alone (with `-ptx` it takes LTO-IR only: "-ptx requires that all inputs have LTOIR"), and its
// optimiser internalises every non-kernel function and drops those the LTO-IR itself does not call: a function
// only a separate PTX input calls vanished and the final link failed ("Undefined reference", numba-cuda's NRT
// functions called from a linked PTX file). Variables are kept (it keeps them unless -optimize-unused-variables).
// Measured with nvJitLink 13.0 (the toolkit's) and 13.5 (a wheel's), each link in a process of its own,
// 2026-11-28:
//  - `-kernels-used=NAME` does not keep a device function, and removes the kernels it does not name; -O0 drops
//    the function too;
//  - the optimiser's internalisation reads LLVM's list of names to keep, reachable through NVVM's `-Xopt`:
//    `-Xnvvm=-Xopt -Xnvvm=-internalize-public-api-list=a,b` keeps a and b (external, with their bodies), and a
//    name the LTO-IR does not define is ignored. Patterns (`*`, `h*`) keep nothing. The list is a global option
//    of NVIDIA's library that grows with every link of a process: each LTO link here runs in a helper process of
//    its own (lto_helper.cpp), so it holds this link's names only.
// So the list is the names the other inputs' PTX declares `.extern` (addExternalReferences), and without other
// inputs nothing is added: NVIDIA's link is as it was.
std::vector<std::string> keptSymbols(const Linker& linker) {
  if (linker.externalReferences.empty()) return {};
  std::string list;
  for (const std::string& name : linker.externalReferences) list += (list.empty() ? "" : ",") + name;
  return {"-Xnvvm=-Xopt", "-Xnvvm=-internalize-public-api-list=" + list};
}

// The request for the helper program (lto_helper.cpp describes the layout).
std::string ltoRequest(const Linker& linker) {
  std::string request;
  auto putNumber = [&](auto value) { request.append(reinterpret_cast<const char*>(&value), sizeof value); };
  auto putString = [&](const std::string& text) {
    putNumber(uint64_t(text.size()));
    request += text;
  };
  std::vector<std::string> options = {"-arch=" + realArch(linker.arch), "-lto", "-ptx"};
  options.insert(options.end(), linker.optimiserOptions.begin(), linker.optimiserOptions.end());
  for (std::string& option : keptSymbols(linker)) options.push_back(std::move(option));
  putNumber(uint32_t(options.size()));
  for (const std::string& option : options) putString(option);
  putNumber(uint32_t(linker.ltoInputs.size()));
  for (const auto& [name, bitcode] : linker.ltoInputs) {
    putString(name);
    putString(bitcode);
  }
  return request;
}

// Runs the helper program cuemu-nvjitlink-lto beside this library on `request` (one socket as its standard input
// and output: a helper that dies early cannot raise SIGPIPE in the client); returns its answer, or empty with
// `why` set. posix_spawn is safe in a multithreaded client, where a forked child may not run NVIDIA's library.
std::string runLtoHelper(const std::string& request, std::string& why) {
  std::string helper = ownDirectory() + "/cuemu-nvjitlink-lto";
  if (access(helper.c_str(), X_OK) != 0) {
    why = "the helper program " + helper + " is missing";
    return {};
  }
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    why = std::string("socketpair: ") + std::strerror(errno);
    return {};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 1);
  std::string library = nvidiaNvJitLinkPath();
  char* arguments[] = {helper.data(), library.data(), nullptr};
  pid_t child = -1;
  int spawned = posix_spawn(&child, helper.c_str(), &actions, nullptr, arguments, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(sockets[1]);
  std::string reply;
  if (spawned != 0) {
    why = "cannot start " + helper + ": " + std::strerror(spawned);
    close(sockets[0]);
    return {};
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(sockets[0], request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += size_t(n);
  }
  shutdown(sockets[0], SHUT_WR);
  char buffer[65536];
  ssize_t n;
  while ((n = recv(sockets[0], buffer, sizeof buffer, 0)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) reply.append(buffer, size_t(n));
  close(sockets[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (reply.empty()) why = "the helper program " + helper + " ended without an answer";
  return reply;
}

// Links the LTO-IR inputs with NVIDIA's nvJitLink (in the helper program) into PTX and adds that to cuemu's link.
Result linkLtoInputs(Linker& linker) {
  std::string why;
  std::string reply = runLtoHelper(ltoRequest(linker), why);
  int r = kErrorInternal;
  uint64_t ptxBytes = 0, logBytes = 0;
  size_t at = 0;
  auto take = [&](void* out, size_t bytes) {
    if (reply.size() - at < bytes) return false;
    std::memcpy(out, reply.data() + at, bytes);
    at += bytes;
    return true;
  };
  std::string ptx;
  bool complete = take(&r, sizeof r) && take(&ptxBytes, sizeof ptxBytes) && reply.size() - at >= ptxBytes;
  if (complete) {
    ptx = reply.substr(at, ptxBytes);
    at += ptxBytes;
    if (take(&logBytes, sizeof logBytes) && reply.size() - at >= logBytes)
      linker.errorLog += reply.substr(at, logBytes);
  } else {
    r = kErrorInternal;
    linker.errorLog += "ERROR: NVIDIA's nvJitLink gave no answer: " + (why.empty() ? "a short answer" : why) + "\n";
  }
  if (r != kSuccess) {
    linker.errorLog += "ERROR: NVIDIA's nvJitLink could not link the LTO-IR (" + std::to_string(r) + ")\n";
    return Result(r);
  }
  CUresult added =
      driver().linkAddData(linker.state, CU_JIT_INPUT_PTX, ptx.data(), ptx.size(), "lto.ptx", 0, nullptr, nullptr);
  collectJitLogs(linker);
  if (added != CUDA_SUCCESS) {
    linker.errorLog += "ERROR: the PTX of the LTO-IR: " + cuErrorText(added) + "\n";
    return kErrorPtxCompile;
  }
  return kSuccess;
}

Result addInput(Linker* linker, int type, const void* data, size_t size, const char* name) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!data) return kErrorNullInput;
  if (linker->complete) return kErrorInvalidInput;
  std::string label = name ? name : "input";
  if (type == kInputAny) type = guessType(data, size);
  CUjitInputType cuType;
  switch (type) {
    case kInputPtx: cuType = CU_JIT_INPUT_PTX; break;
    case kInputCubin: cuType = CU_JIT_INPUT_CUBIN; break;
    case kInputFatbin: cuType = CU_JIT_INPUT_FATBINARY; break;
    case kInputObject: cuType = CU_JIT_INPUT_OBJECT; break;
    case kInputLibrary: cuType = CU_JIT_INPUT_LIBRARY; break;
    case kInputLtoir:
      if (nvidiaNvJitLinkPath().empty()) {
        linker->errorLog += "ERROR: " + label + ": LTO-IR needs NVIDIA's libnvJitLink.so.13, which was not found " +
                            "(set CUEMU_NVJITLINK_LIBRARY to its path)\n";
        return kErrorUnrecognizedInput;
      }
      linker->ltoInputs.emplace_back(label, std::string(static_cast<const char*>(data), size));
      return kSuccess;
    default:
      linker->errorLog += "ERROR: " + label + ": unrecognized input type " + std::to_string(type) + "\n";
      return kErrorUnrecognizedInput;
  }
  // A PTX input may lack its terminating NUL; cuLinkAddData reads at most `size` bytes anyway.
  CUresult r =
      driver().linkAddData(linker->state, cuType, const_cast<void*>(data), size, label.c_str(), 0, nullptr, nullptr);
  collectJitLogs(*linker);
  if (r != CUDA_SUCCESS) {
    linker->errorLog += "ERROR: " + label + ": " + cuErrorText(r) + "\n";
    return type == kInputPtx ? kErrorPtxCompile : kErrorInvalidInput;
  }
  std::string_view bytes(static_cast<const char*>(data), size);
  if (type == kInputPtx)
    addExternalReferences(bytes, linker->externalReferences);
  else
    addExternalReferencesOfBinary(bytes, linker->externalReferences);
  return kSuccess;
}

Result parseOptions(Linker& linker, uint32_t count, const char** options, std::vector<CUjit_option>& keys,
                    std::vector<void*>& values) {
  for (uint32_t i = 0; i < count; ++i) {
    if (!options || !options[i]) return kErrorNullInput;
    std::string_view option = options[i];
    auto valueOf = [&](std::string_view prefix) { return option.substr(prefix.size()); };
    if (option.rfind("-arch=", 0) == 0) {
      std::string_view arch = valueOf("-arch=");
      // sm_NN, sm_NNa/f, compute_NN (PTX output), lto_NN.
      if (arch.rfind("sm_", 0) != 0 && arch.rfind("compute_", 0) != 0 && arch.rfind("lto_", 0) != 0) {
        linker.errorLog += "ERROR: unrecognized -arch value '" + std::string(arch) + "'\n";
        return kErrorUnrecognizedArch;
      }
      linker.arch = arch;
    } else if (option.rfind("-maxrregcount=", 0) == 0) {
      unsigned long n = std::strtoul(std::string(valueOf("-maxrregcount=")).c_str(), nullptr, 10);
      keys.push_back(CU_JIT_MAX_REGISTERS);
      values.push_back(reinterpret_cast<void*>(uintptr_t(n)));
    } else if (option == "-ptx") {
      linker.wantsPtx = true;
    } else if (option == "-lto") {
      linker.lto = true;
    } else if (option == "-lineinfo") {
      keys.push_back(CU_JIT_GENERATE_LINE_INFO);
      values.push_back(reinterpret_cast<void*>(uintptr_t(1)));
    } else if (option == "-g") {
      keys.push_back(CU_JIT_GENERATE_DEBUG_INFO);
      values.push_back(reinterpret_cast<void*>(uintptr_t(1)));
    } else if (option.rfind("-O", 0) == 0 || option.rfind("-ftz=", 0) == 0 || option.rfind("-prec-div=", 0) == 0 ||
               option.rfind("-prec-sqrt=", 0) == 0 || option.rfind("-fma=", 0) == 0) {
      // Numerics of the code NVIDIA's optimiser makes of LTO-IR; nothing to do for PTX.
      linker.optimiserOptions.emplace_back(option);
    } else if (option == "-verbose" || option == "-warningsaserror" || option.rfind("-split-compile", 0) == 0 ||
               option.rfind("-jump-table-density", 0) == 0 || option == "-no-cache" ||
               option.rfind("-kernels-used=", 0) == 0 || option.rfind("-variables-used=", 0) == 0 ||
               option == "-optimize-unused-variables" || option.rfind("-Xptxas", 0) == 0 ||
               option.rfind("-Xnvvm", 0) == 0 || option.rfind("-time", 0) == 0) {
      // Code-generation and optimisation options: meaningful for SASS, nothing to do for interpreted PTX.
    } else {
      linker.errorLog += "ERROR: unrecognized option '" + std::string(option) + "'\n";
      return kErrorUnrecognizedOption;
    }
  }
  if (linker.arch.empty()) {
    linker.errorLog += "ERROR: -arch=sm_NN is required\n";
    return kErrorMissingArch;
  }
  return kSuccess;
}

Result create(Linker** out, uint32_t count, const char** options) {
  if (!out) return kErrorNullInput;
  *out = nullptr;
  auto* linker = new (std::nothrow) Linker;
  if (!linker) return kErrorInternal;
  std::vector<CUjit_option>& keys = linker->cuOptionKeys;
  std::vector<void*>& values = linker->cuOptionValues;
  Result parsed = parseOptions(*linker, count, options, keys, values);
  if (parsed != kSuccess) {
    delete linker;
    return parsed;
  }
  keys.insert(keys.end(), {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES});
  values.insert(values.end(), {linker->cuError, reinterpret_cast<void*>(sizeof linker->cuError), linker->cuInfo,
                               reinterpret_cast<void*>(sizeof linker->cuInfo)});
  // nvJitLink needs no context; cuemu's linker only needs the driver initialised (idempotent).
  CUresult r = driver().complete() ? driver().init(0) : CUDA_ERROR_NOT_FOUND;
  if (r == CUDA_SUCCESS) r = driver().linkCreate(unsigned(keys.size()), keys.data(), values.data(), &linker->state);
  if (r != CUDA_SUCCESS) {
    delete linker;
    return kErrorInternal;
  }
  *out = linker;
  return kSuccess;
}

Result completeLink(Linker* linker) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (linker->complete) return kSuccess;
  if (!linker->ltoInputs.empty()) {
    if (Result r = linkLtoInputs(*linker); r != kSuccess) return r == kErrorPtxCompile ? r : kErrorFinalize;
    linker->ltoInputs.clear();
  }
  void* image = nullptr;
  size_t size = 0;
  CUresult r = driver().linkComplete(linker->state, &image, &size);
  collectJitLogs(*linker);
  if (r != CUDA_SUCCESS) {
    linker->errorLog += "ERROR: link failed: " + cuErrorText(r) + "\n";
    return kErrorFinalize;
  }
  // cuemu's linked image is PTX text; size counts its terminating NUL.
  linker->linked.assign(static_cast<const char*>(image), size ? size - 1 : 0);
  linker->complete = true;
  return kSuccess;
}

Result copyOut(const Linker* linker, const std::string& text, char* out) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!out) return kErrorNullInput;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

Result sizeOf(const Linker* linker, const std::string& text, size_t* size) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!size) return kErrorNullInput;
  *size = text.size() + 1;
  return kSuccess;
}

Result linkedOutput(const Linker* linker, const std::string** text) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!linker->complete) return kErrorInvalidInput;
  *text = &linker->linked;
  return kSuccess;
}

}  // namespace

extern "C" {

using nvJitLinkHandle = Linker*;

__attribute__((visibility("default"))) int __nvJitLinkCreate_13_0(nvJitLinkHandle* handle, uint32_t numOptions,
                                                                  const char** options) {
  return create(handle, numOptions, options);
}

__attribute__((visibility("default"))) int __nvJitLinkDestroy_13_0(nvJitLinkHandle* handle) {
  if (!handle) return kErrorNullInput;
  if (!*handle) return kErrorInvalidInput;
  if ((*handle)->state) driver().linkDestroy((*handle)->state);
  delete *handle;
  *handle = nullptr;
  return kSuccess;
}

__attribute__((visibility("default"))) int __nvJitLinkAddData_13_0(nvJitLinkHandle handle, int inputType,
                                                                   const void* data, size_t size, const char* name) {
  return addInput(handle, inputType, data, size, name);
}

__attribute__((visibility("default"))) int __nvJitLinkAddFile_13_0(nvJitLinkHandle handle, int inputType,
                                                                   const char* fileName) {
  if (!validHandle(handle)) return kErrorInvalidInput;
  if (!fileName) return kErrorNullInput;
  FILE* file = std::fopen(fileName, "rb");
  if (!file) {
    handle->errorLog += std::string("ERROR: cannot open ") + fileName + "\n";
    return kErrorInvalidInput;
  }
  std::string bytes;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.append(buffer, n);
  std::fclose(file);
  return addInput(handle, inputType, bytes.data(), bytes.size(), fileName);
}

__attribute__((visibility("default"))) int __nvJitLinkComplete_13_0(nvJitLinkHandle handle) {
  return completeLink(handle);
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedCubinSize_13_0(nvJitLinkHandle handle, size_t* size) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? sizeOf(handle, *text, size) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedCubin_13_0(nvJitLinkHandle handle, void* cubin) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? copyOut(handle, *text, static_cast<char*>(cubin)) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedPtxSize_13_0(nvJitLinkHandle handle, size_t* size) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? sizeOf(handle, *text, size) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedPtx_13_0(nvJitLinkHandle handle, char* ptx) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? copyOut(handle, *text, ptx) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetErrorLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return validHandle(handle) ? sizeOf(handle, handle->errorLog, size) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetErrorLog_13_0(nvJitLinkHandle handle, char* log) {
  return validHandle(handle) ? copyOut(handle, handle->errorLog, log) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetInfoLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return validHandle(handle) ? sizeOf(handle, handle->infoLog, size) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetInfoLog_13_0(nvJitLinkHandle handle, char* log) {
  return validHandle(handle) ? copyOut(handle, handle->infoLog, log) : kErrorInvalidInput;
}

// The unversioned names NVIDIA's library also exports (its header maps them to the versioned ones).
__attribute__((visibility("default"), alias("__nvJitLinkCreate_13_0"))) int nvJitLinkCreate(nvJitLinkHandle*, uint32_t,
                                                                                            const char**);
__attribute__((visibility("default"), alias("__nvJitLinkDestroy_13_0"))) int nvJitLinkDestroy(nvJitLinkHandle*);
__attribute__((visibility("default"), alias("__nvJitLinkAddData_13_0"))) int nvJitLinkAddData(nvJitLinkHandle, int,
                                                                                              const void*, size_t,
                                                                                              const char*);
__attribute__((visibility("default"), alias("__nvJitLinkAddFile_13_0"))) int nvJitLinkAddFile(nvJitLinkHandle, int,
                                                                                              const char*);
__attribute__((visibility("default"), alias("__nvJitLinkComplete_13_0"))) int nvJitLinkComplete(nvJitLinkHandle);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedCubinSize_13_0"))) int nvJitLinkGetLinkedCubinSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedCubin_13_0"))) int nvJitLinkGetLinkedCubin(
    nvJitLinkHandle, void*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedPtxSize_13_0"))) int nvJitLinkGetLinkedPtxSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedPtx_13_0"))) int nvJitLinkGetLinkedPtx(nvJitLinkHandle,
                                                                                                        char*);
__attribute__((visibility("default"), alias("__nvJitLinkGetErrorLogSize_13_0"))) int nvJitLinkGetErrorLogSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetErrorLog_13_0"))) int nvJitLinkGetErrorLog(nvJitLinkHandle,
                                                                                                      char*);
__attribute__((visibility("default"), alias("__nvJitLinkGetInfoLogSize_13_0"))) int nvJitLinkGetInfoLogSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetInfoLog_13_0"))) int nvJitLinkGetInfoLog(nvJitLinkHandle,
                                                                                                    char*);

// The versioned names of later 13.x headers: NVIDIA's nvJitLink.h maps each function to the name of its own minor
// version, so a library built with CUDA 13.3's header needs __nvJitLinkCreate_13_3 (RAPIDS cuVS, which cuML loads:
// with this library preloaded and only the 13_0 names, cuVS failed to load and `import cuml` failed). NVIDIA's
// 13.5 library exports 13_0 to 13_5 of every function, all with the signatures of 13.0; this one answers 13_0 to
// 13_9 alike, so that libraries of the next toolkits still load.
#define CUEMU_NVJITLINK_MINOR(m)                                                                                     \
  __attribute__((visibility("default"), alias("__nvJitLinkCreate_13_0"))) int __nvJitLinkCreate_13_##m(              \
      nvJitLinkHandle*, uint32_t, const char**);                                                                     \
  __attribute__((visibility("default"), alias("__nvJitLinkDestroy_13_0"))) int __nvJitLinkDestroy_13_##m(            \
      nvJitLinkHandle*);                                                                                             \
  __attribute__((visibility("default"), alias("__nvJitLinkAddData_13_0"))) int __nvJitLinkAddData_13_##m(            \
      nvJitLinkHandle, int, const void*, size_t, const char*);                                                       \
  __attribute__((visibility("default"), alias("__nvJitLinkAddFile_13_0"))) int __nvJitLinkAddFile_13_##m(            \
      nvJitLinkHandle, int, const char*);                                                                            \
  __attribute__((visibility("default"), alias("__nvJitLinkComplete_13_0"))) int __nvJitLinkComplete_13_##m(          \
      nvJitLinkHandle);                                                                                              \
  __attribute__((                                                                                                    \
      visibility("default"),                                                                                         \
      alias("__nvJitLinkGetLinkedCubinSize_13_0"))) int __nvJitLinkGetLinkedCubinSize_13_##m(nvJitLinkHandle,        \
                                                                                             size_t*);               \
  __attribute__((visibility("default"),                                                                              \
                 alias("__nvJitLinkGetLinkedCubin_13_0"))) int __nvJitLinkGetLinkedCubin_13_##m(nvJitLinkHandle,     \
                                                                                                void*);              \
  __attribute__((visibility("default"),                                                                              \
                 alias("__nvJitLinkGetLinkedPtxSize_13_0"))) int __nvJitLinkGetLinkedPtxSize_13_##m(nvJitLinkHandle, \
                                                                                                    size_t*);        \
  __attribute__((visibility("default"), alias("__nvJitLinkGetLinkedPtx_13_0"))) int __nvJitLinkGetLinkedPtx_13_##m(  \
      nvJitLinkHandle, char*);                                                                                       \
  __attribute__((visibility("default"),                                                                              \
                 alias("__nvJitLinkGetErrorLogSize_13_0"))) int __nvJitLinkGetErrorLogSize_13_##m(nvJitLinkHandle,   \
                                                                                                  size_t*);          \
  __attribute__((visibility("default"), alias("__nvJitLinkGetErrorLog_13_0"))) int __nvJitLinkGetErrorLog_13_##m(    \
      nvJitLinkHandle, char*);                                                                                       \
  __attribute__((visibility("default"),                                                                              \
                 alias("__nvJitLinkGetInfoLogSize_13_0"))) int __nvJitLinkGetInfoLogSize_13_##m(nvJitLinkHandle,     \
                                                                                                size_t*);            \
  __attribute__((visibility("default"), alias("__nvJitLinkGetInfoLog_13_0"))) int __nvJitLinkGetInfoLog_13_##m(      \
      nvJitLinkHandle, char*);
CUEMU_NVJITLINK_MINOR(1)
CUEMU_NVJITLINK_MINOR(2)
CUEMU_NVJITLINK_MINOR(3)
CUEMU_NVJITLINK_MINOR(4)
CUEMU_NVJITLINK_MINOR(5)
CUEMU_NVJITLINK_MINOR(6)
CUEMU_NVJITLINK_MINOR(7)
CUEMU_NVJITLINK_MINOR(8)
CUEMU_NVJITLINK_MINOR(9)
#undef CUEMU_NVJITLINK_MINOR

// nvJitLinkVersion, of the default version libnvJitLink.so.13 (the map file), as NVIDIA's library exports it:
// programs linked against NVIDIA's library (its jitLto sample calls it first) and clients that probe with dlsym
// (ctypes, cuda.bindings) find it alike. Where no NVIDIA nvJitLink is found it fails (NVJITLINK_ERROR_INTERNAL),
// so that clients compile PTX rather than LTO-IR, which could not be linked: numba-cuda then turns LTO off
// (measured with CUEMU_NVJITLINK_LIBRARY=/nonexistent: its nrt tests pass; cuda.core 1.2.2 still links their PTX
// through this library). Looked up at each call: a process may load a wheel's NVRTC or NVVM later.
__attribute__((visibility("default"))) int nvJitLinkVersion(unsigned* major, unsigned* minor) {
  if (!major || !minor) return kErrorInvalidInput;
  if (findNvidiaNvJitLink().empty()) return kErrorInternal;
  *major = 13;  // the ABI of CUDA 13.0's nvJitLink.h that this library implements
  *minor = 0;
  return kSuccess;
}

}  // extern "C"
