// cuemu-nvjitlink-lto: runs NVIDIA's nvJitLink over LTO-IR for cuemu's libnvJitLink.so.13, in a process of its own.
//
//   cuemu-nvjitlink-lto NVIDIA_LIBNVJITLINK
//
// cuemu's library (nvjitlink.cpp) starts it with posix_spawn beside itself, writes the request to its standard
// input and reads the answer from its standard output. Why a program and not a fork: the client is often a
// multithreaded process (Python, a runtime's worker threads), and a forked child of one may only call
// async-signal-safe functions until it execs, while NVIDIA's library allocates, loads and locks; a program of its
// own also keeps NVIDIA's library out of the client (loaded beside cuemu's library of the same name, it aborts in
// its exit handler).
//
// Request (every number little-endian, as on the host): u32 option count, then per option u64 length and bytes;
// u32 input count, then per input u64 name length, name, u64 size, LTO-IR bytes. Answer: i32 nvJitLink result,
// u64 PTX length, PTX, u64 error log length, error log. The options are NVIDIA's (-arch=sm_NN -lto -ptx ...).
// Exit status 0 when an answer was written, 2 on a malformed request or a failed write.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kInputLtoir = 3;       // NVJITLINK_INPUT_LTOIR
constexpr int kErrorInternal = 6;    // NVJITLINK_ERROR_INTERNAL
constexpr int kErrorNullInput = 10;  // NVJITLINK_ERROR_NULL_INPUT

struct NvJitLink {
  using Handle = void*;
  int (*create)(Handle*, uint32_t, const char**) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*addData)(Handle, int, const void*, size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*ptxSize)(Handle, size_t*) = nullptr;
  int (*ptx)(Handle, char*) = nullptr;
  int (*errorLogSize)(Handle, size_t*) = nullptr;
  int (*errorLog)(Handle, char*) = nullptr;
};

bool load(const char* path, NvJitLink& n, std::string& why) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    why = error ? error : "dlopen failed";
    return false;
  }
  auto symbol = [handle](const char* name) { return dlsym(handle, name); };
  n.create = reinterpret_cast<decltype(n.create)>(symbol("__nvJitLinkCreate_13_0"));
  n.destroy = reinterpret_cast<decltype(n.destroy)>(symbol("__nvJitLinkDestroy_13_0"));
  n.addData = reinterpret_cast<decltype(n.addData)>(symbol("__nvJitLinkAddData_13_0"));
  n.complete = reinterpret_cast<decltype(n.complete)>(symbol("__nvJitLinkComplete_13_0"));
  n.ptxSize = reinterpret_cast<decltype(n.ptxSize)>(symbol("__nvJitLinkGetLinkedPtxSize_13_0"));
  n.ptx = reinterpret_cast<decltype(n.ptx)>(symbol("__nvJitLinkGetLinkedPtx_13_0"));
  n.errorLogSize = reinterpret_cast<decltype(n.errorLogSize)>(symbol("__nvJitLinkGetErrorLogSize_13_0"));
  n.errorLog = reinterpret_cast<decltype(n.errorLog)>(symbol("__nvJitLinkGetErrorLog_13_0"));
  if (n.create && n.destroy && n.addData && n.complete && n.ptxSize && n.ptx && n.errorLogSize && n.errorLog)
    return true;
  why = "missing entry points";
  return false;
}

// The request, read whole from `fd`, taken apart front to back.
class Request {
 public:
  explicit Request(int fd) {
    char buffer[65536];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) bytes_.append(buffer, size_t(n));
  }
  template <typename T> bool take(T& value) {
    if (bytes_.size() - at_ < sizeof value) return false;
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return true;
  }
  bool takeString(std::string& out) {
    uint64_t length = 0;
    if (!take(length) || bytes_.size() - at_ < length) return false;
    out.assign(bytes_, at_, length);
    at_ += length;
    return true;
  }

 private:
  std::string bytes_;
  size_t at_ = 0;
};

bool writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes) {
    ssize_t n = write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  Request request(0);
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, LTO-IR
  uint32_t count = 0;
  if (!request.take(count)) return 2;
  options.resize(count);
  for (std::string& option : options)
    if (!request.takeString(option)) return 2;
  if (!request.take(count)) return 2;
  inputs.resize(count);
  for (auto& [name, bitcode] : inputs)
    if (!request.takeString(name) || !request.takeString(bitcode)) return 2;

  int result = kErrorInternal;
  std::string ptx, log;
  NvJitLink nvidia;
  std::string why;
  if (inputs.empty()) {
    result = kErrorNullInput;
  } else if (!load(argv[1], nvidia, why)) {
    log = std::string("ERROR: cannot load ") + argv[1] + ": " + why + "\n";
  } else {
    std::vector<const char*> optionText;
    for (const std::string& o : options) optionText.push_back(o.c_str());
    NvJitLink::Handle handle = nullptr;
    result = nvidia.create(&handle, uint32_t(optionText.size()), optionText.data());
    if (result == 0) {
      for (const auto& [name, bitcode] : inputs)
        if ((result = nvidia.addData(handle, kInputLtoir, bitcode.data(), bitcode.size(), name.c_str())) != 0) break;
      if (result == 0) result = nvidia.complete(handle);
      size_t size = 0;
      if (result == 0 && (result = nvidia.ptxSize(handle, &size)) == 0) {
        ptx.assign(size, '\0');
        result = nvidia.ptx(handle, ptx.data());
        if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
      }
      size_t logSize = 0;
      if (result != 0 && nvidia.errorLogSize(handle, &logSize) == 0 && logSize > 1) {
        log.assign(logSize, '\0');
        nvidia.errorLog(handle, log.data());
        log.resize(logSize - 1);
      }
      nvidia.destroy(&handle);
    }
  }
  uint64_t ptxBytes = ptx.size(), logBytes = log.size();
  bool written = writeAll(1, &result, sizeof result) && writeAll(1, &ptxBytes, sizeof ptxBytes) &&
                 writeAll(1, ptx.data(), ptx.size()) && writeAll(1, &logBytes, sizeof logBytes) &&
                 writeAll(1, log.data(), log.size());
  // NVIDIA's library is done; its exit handlers are not needed (see the top).
  _exit(written ? 0 : 2);
}
