#include "harness.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "embedded.h"

extern char** environ;

namespace conf {

namespace {

struct ResultEntry {
  CUresult value;
  const char* name;
};

const std::vector<ResultEntry>& ResultTable() {
  static const std::vector<ResultEntry> table = {
#define X(name) {name, #name},
#include "../cases/cuda_results.def"
#undef X
  };
  return table;
}

std::map<std::string, FreshBody>& FreshBodies() {
  static std::map<std::string, FreshBody> bodies;
  return bodies;
}

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  buf[n] = 0;
  return buf;
}

}  // namespace

std::string ResultName(CUresult r) {
  for (const auto& e : ResultTable())
    if (e.value == r) return e.name;
  return "CUresult(" + std::to_string(static_cast<int>(r)) + ")";
}

const std::vector<CUresult>& AllResults() {
  static const std::vector<CUresult> all = [] {
    std::vector<CUresult> v;
    for (const auto& e : ResultTable()) v.push_back(e.value);
    return v;
  }();
  return all;
}

std::string Describe(CUresult r) { return ResultName(r) + " (" + std::to_string(static_cast<int>(r)) + ")"; }

testing::AssertionResult ResultIs(const char* expectedExpr, const char* callExpr, CUresult expected, CUresult actual) {
  if (expected == actual) return testing::AssertionSuccess();
  (void)expectedExpr;
  return testing::AssertionFailure() << callExpr << " returned " << Describe(actual) << ", expected "
                                     << Describe(expected);
}

Image GetImage(std::string_view name) {
  for (size_t i = 0; i < kEmbeddedImageCount; ++i)
    if (name == kEmbeddedImages[i].name) return {kEmbeddedImages[i].data, kEmbeddedImages[i].size};
  ADD_FAILURE() << "no embedded kernel image named " << name;
  return {};
}

std::vector<std::string> ImageNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < kEmbeddedImageCount; ++i) names.emplace_back(kEmbeddedImages[i].name);
  return names;
}

FreshRegistration::FreshRegistration(const char* name, FreshBody body) { FreshBodies()[name] = body; }

int RunFreshBodyInThisProcess(const std::string& name, const std::string& arg) {
  auto it = FreshBodies().find(name);
  if (it == FreshBodies().end()) {
    std::fprintf(stderr, "unknown fresh-process body %s\n", name.c_str());
    return 3;
  }
  int r = it->second(arg);
  std::printf("RESULT %d\n", r);
  std::fflush(stdout);
  return 0;
}

FreshResult RunFresh(const std::string& name, const std::string& arg, int timeoutSeconds) {
  FreshResult out;
  std::string exe = SelfExe();
  int fds[2];
  if (exe.empty() || pipe2(fds, O_CLOEXEC) != 0) return out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<std::string> args = {exe, "--fresh", name, arg};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return out;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  char buf[4096];
  bool killed = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  out.exitStatus = status;
  if (killed) return out;
  auto pos = out.output.rfind("RESULT ");
  if (pos != std::string::npos && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    out.ran = true;
    out.result = std::atoi(out.output.c_str() + pos + 7);
  }
  return out;
}

void ContextTest::SetUp() {
  CU_ASSERT_OK(cuInit(0));
  CU_ASSERT_OK(cuDeviceGet(&dev, 0));
  CU_ASSERT_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
}

void ContextTest::TearDown() {
  DrainContextStack();
  if (ctx) {
    CU_EXPECT_OK(cuCtxDestroy(ctx));
  }
  ctx = nullptr;
}

void DeviceTest::SetUp() {
  CU_ASSERT_OK(cuInit(0));
  CU_ASSERT_OK(cuDeviceGet(&dev, 0));
  // Every case starts with an empty context stack, whatever an earlier case left on it.
  DrainContextStack();
}

int DeviceCount() {
  int n = 0;
  if (cuDeviceGetCount(&n) != CUDA_SUCCESS) return 0;
  return n;
}

int Attribute(CUdevice dev, CUdevice_attribute attr) {
  int v = -1;
  if (cuDeviceGetAttribute(&v, attr, dev) != CUDA_SUCCESS) return -1;
  return v;
}

CUresult LoadModule(CUmodule* mod, std::string_view imageName) {
  Image img = GetImage(imageName);
  if (!img.data) return CUDA_ERROR_FILE_NOT_FOUND;
  return cuModuleLoadData(mod, img.ptr());
}

CUresult Launch1D(CUfunction f, unsigned grid, unsigned block, void** params, unsigned sharedBytes, CUstream stream) {
  CUresult r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, sharedBytes, stream, params, nullptr);
  if (r != CUDA_SUCCESS) return r;
  return cuCtxSynchronize();
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) { status_ = cuMemAlloc(&ptr_, bytes); }

DeviceBuffer::~DeviceBuffer() {
  if (status_ == CUDA_SUCCESS && ptr_) cuMemFree(ptr_);
}

void* SymbolAddress(const char* name) { return dlsym(RTLD_DEFAULT, name); }

void DrainContextStack() {
  for (int i = 0; i < 64; ++i) {
    CUcontext cur = nullptr;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur == nullptr) return;
    CUcontext popped = nullptr;
    if (cuCtxPopCurrent(&popped) != CUDA_SUCCESS) return;
  }
}

unsigned TensorMapElementBytes(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 4;
  }
}

uint64_t Fnv(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

const std::map<std::string, GoldenEntry>& GoldenData(std::string* source) {
  static std::string path;
  static const std::map<std::string, GoldenEntry> data = [] {
    std::map<std::string, GoldenEntry> m;
    const char* p = std::getenv("CUEMU_CONF_GOLDEN");
    if (!p) return m;
    path = p;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string name, hash, values;
      size_t count = 0;
      ls >> name >> hash >> count >> values;
      GoldenEntry e;
      e.hash = std::strtoull(hash.c_str(), nullptr, 16);
      size_t pos = 0;
      while (pos < values.size()) {
        size_t comma = values.find(',', pos);
        if (comma == std::string::npos) comma = values.size();
        e.outputs.push_back(std::strtoull(values.substr(pos, comma - pos).c_str(), nullptr, 16));
        pos = comma + 1;
      }
      if (e.outputs.size() == count) m[name] = std::move(e);
    }
    return m;
  }();
  *source = path;
  return data;
}

bool GoldenRecord(const std::string& name, uint64_t hash, const std::vector<uint64_t>& outputs) {
  const char* record = std::getenv("CUEMU_CONF_GOLDEN_RECORD");
  if (!record) return false;
  std::ostringstream line;
  line << name << ' ' << std::hex << hash << std::dec << ' ' << outputs.size() << ' ';
  for (size_t i = 0; i < outputs.size(); ++i) line << (i ? "," : "") << std::hex << outputs[i];
  line << '\n';
  std::string text = line.str();
  FILE* f = std::fopen(record, "a");
  EXPECT_NE(f, nullptr) << "cannot append to " << record;
  if (!f) return true;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return true;
}

const GoldenEntry* GoldenFor(const std::string& name, uint64_t hash) {
  std::string source;
  const auto& golden = GoldenData(&source);
  auto it = golden.find(name);
  if (it == golden.end()) {
    ADD_FAILURE() << "no golden outputs for " << name
                  << (source.empty() ? " (CUEMU_CONF_GOLDEN is not set)" : " in " + source);
    return nullptr;
  }
  if (it->second.hash != hash) {
    ADD_FAILURE() << "the golden outputs of " << name
                  << " were recorded for other inputs or another kernel; record again";
    return nullptr;
  }
  return &it->second;
}

}  // namespace conf
