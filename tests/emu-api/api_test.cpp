// Tests of the exported surface against facts recorded on NVIDIA's driver 580 (emu/api/recorded/).
// The library is loaded with dlopen, as the CUDA runtime does.
#include "api/cuda_internal.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

void* library() {
  static void* handle = dlopen(CUEMU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

template <typename Fn> Fn fn(const char* name) {
  void* p = dlsym(library(), name);
  if (!p) ADD_FAILURE() << "missing export " << name;
  return reinterpret_cast<Fn>(p);
}

using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using NoArgs = CUresult (*)();

std::vector<std::string> lines(const std::string& file) {
  std::ifstream in(std::string(CUEMU_RECORDED_DIR) + "/" + file);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#') out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, sep);) out.push_back(f);
  return out;
}

// The entries of entries.def with their status.
std::map<std::string, bool> apiTable() {
  std::ifstream in(std::string(CUEMU_RECORDED_DIR) + "/../generated/entries.def");
  std::map<std::string, bool> out;
  std::regex row(R"(^CUEMU_ENTRY\((IMPL|STUB|PT), "[^"]*", (\w+),)");
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, row)) out[m[2]] = m[1] != "STUB";
  }
  return out;
}

// Runs this test binary again with one test selected and the given environment; returns its exit status.
int runChild(const std::string& filter, std::vector<std::string> env) {
  std::string self = "/proc/self/exe", arg = "--gtest_filter=" + filter;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.emplace_back("CUEMU_API_TEST_CHILD=1");
  std::vector<char*> envp, argv{self.data(), arg.data(), nullptr};
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool isChild() { return std::getenv("CUEMU_API_TEST_CHILD") != nullptr; }

void initDriver() { ASSERT_EQ(fn<CUresult (*)(unsigned)>("cuInit")(0), CUDA_SUCCESS); }

}  // namespace

TEST(Api, LibraryLoads) { ASSERT_NE(library(), nullptr) << dlerror(); }

// Every (symbol, version, flags) request answers as NVIDIA's driver did, for every version 0..14000.
TEST(Api, GetProcAddressMatchesDriver580) {
  auto gpa = fn<GetProcV2>("cuGetProcAddress_v2");
  ASSERT_NE(gpa, nullptr);
  struct Step {
    int version;
    int result, status;
    std::string symbol;
  };
  std::map<std::pair<std::string, int>, std::vector<Step>> steps;
  std::vector<std::tuple<std::string, unsigned long long, int, Step>> singles;
  for (auto& l : lines("procaddress.tsv")) {
    auto f = split(l, '\t');
    if (f.size() < 6) f.insert(f.begin(), "");  // the "" probe has an empty symbol
    Step s{std::stoi(f[2]), std::stoi(f[3]), std::stoi(f[4]), f[5]};
    unsigned long long flags = std::stoull(f[1]);
    if (flags <= 2 && s.version <= 13001)
      steps[{f[0], int(flags)}].push_back(s);
    else
      singles.emplace_back(f[0], flags, s.version, s);
  }
  ASSERT_GT(steps.size(), 2000u);
  auto check = [&](const std::string& name, unsigned long long flags, int version, const Step& want) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = gpa(name.c_str(), &p, version, flags, &st);
    void* wantPtr = want.symbol == "-" ? nullptr : dlsym(library(), want.symbol.c_str());
    if (r != want.result || (r == CUDA_SUCCESS && st != want.status) || p != wantPtr) {
      ADD_FAILURE() << name << " v" << version << " flags " << flags << ": got " << r << "/" << st << " " << p
                    << ", driver 580 answers " << want.result << "/" << want.status << " " << want.symbol;
      return false;
    }
    return true;
  };
  int failures = 0;
  for (auto& [key, list] : steps) {
    for (std::size_t i = 0; i < list.size() && failures < 20; ++i) {
      int end = i + 1 < list.size() ? list[i + 1].version : 14001;
      for (int v = list[i].version; v < end && failures < 20; ++v)
        if (!check(key.first, key.second, v, list[i])) ++failures;
    }
  }
  for (auto& [name, flags, version, want] : singles)
    if (!check(name, flags, version, want)) ++failures;
}

TEST(Api, GetProcAddressLegacyFormReportsNotFound) {
  auto gpa = fn<GetProcV1>("cuGetProcAddress");
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(gpa("cuNoSuchFunction", &p, 13000, 0), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(gpa("cuInit", &p, 13000, 0), CUDA_SUCCESS);
  EXPECT_EQ(p, dlsym(library(), "cuInit"));
  // NVIDIA's driver crashes on these; cuemu answers.
  EXPECT_EQ(gpa(nullptr, &p, 13000, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(gpa("cuInit", nullptr, 13000, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST(Api, ErrorNamesAndStringsMatchDriver580) {
  auto name = fn<CUresult (*)(CUresult, const char**)>("cuGetErrorName");
  auto text = fn<CUresult (*)(CUresult, const char**)>("cuGetErrorString");
  int n = 0;
  for (auto& l : lines("errors.tsv")) {
    auto f = split(l, '\t');
    CUresult code = CUresult(std::stoi(f[0]));
    const char *a = nullptr, *b = nullptr;
    ASSERT_EQ(name(code, &a), CUDA_SUCCESS) << f[0];
    ASSERT_EQ(text(code, &b), CUDA_SUCCESS) << f[0];
    EXPECT_STREQ(a, f[2].c_str());
    EXPECT_STREQ(b, f[4].c_str());
    ++n;
  }
  EXPECT_GT(n, 90);
  const char* s = "x";
  EXPECT_EQ(name(CUresult(9999), &s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(name(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(text(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST(Api, DriverVersionIs13000) {
  int v = 0;
  EXPECT_EQ(fn<CUresult (*)(int*)>("cuDriverGetVersion")(&v), CUDA_SUCCESS);
  EXPECT_EQ(v, 13000);
  EXPECT_EQ(fn<CUresult (*)(int*)>("cuDriverGetVersion")(nullptr), CUDA_ERROR_INVALID_VALUE);
}

// CUEMU_DRIVER_VERSION=13.Y (`cuemu run --driver-version`): the driver reports 13.Y, as a newer release's driver
// would, and accepts what that one accepts: cuGetProcAddress requests up to 13.Y (answered from driver 580's table)
// and PTX up to ISA 9.Y without CUEMU_PTX_ISA=newest. Clients such as NVIDIA Warp hand the driver PTX only when it
// reports at least their toolkit's version. A value outside 13.0..13.9 is ignored (13.0, driver 580's).
TEST(Api, DriverVersionReportsTheConfiguredVersion) {
  EXPECT_EQ(runChild("Child.DriverVersion", {"CUEMU_DRIVER_VERSION=13.4", "CUEMU_EXPECT_VERSION=13040"}), 0);
  EXPECT_EQ(runChild("Child.DriverVersion", {"CUEMU_DRIVER_VERSION=13040", "CUEMU_EXPECT_VERSION=13040"}), 0);
  EXPECT_EQ(runChild("Child.DriverVersion", {"CUEMU_DRIVER_VERSION=14.0", "CUEMU_EXPECT_VERSION=13000"}), 0);
  EXPECT_EQ(runChild("Child.DriverVersion", {"CUEMU_DRIVER_VERSION=13.45", "CUEMU_EXPECT_VERSION=13000"}), 0);
}
TEST(Child, DriverVersion) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  const int expected = std::atoi(std::getenv("CUEMU_EXPECT_VERSION"));
  int v = 0;
  ASSERT_EQ(fn<CUresult (*)(int*)>("cuDriverGetVersion")(&v), CUDA_SUCCESS);
  EXPECT_EQ(v, expected);
  auto gpa = fn<GetProcV2>("cuGetProcAddress_v2");
  void* p = nullptr;
  void* at13000 = nullptr;
  CUdriverProcAddressQueryResult st{};
  ASSERT_EQ(gpa("cuMemAlloc", &at13000, 13000, 0, &st), CUDA_SUCCESS);
  EXPECT_EQ(gpa("cuMemAlloc", &p, expected, 0, &st), CUDA_SUCCESS);
  EXPECT_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(p, at13000);
  EXPECT_EQ(gpa("cuMemAlloc", &p, expected + 10, 0, &st), CUDA_ERROR_INVALID_VALUE);
  initDriver();
  CUcontext ctx;
  ASSERT_EQ(fn<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2")(&ctx, 0, 0), CUDA_SUCCESS);
  auto ptx = [](int isa) {
    return ".version " + std::to_string(isa / 10) + "." + std::to_string(isa % 10) +
           "\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
  };
  auto load = fn<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData");
  ::setenv("CUEMU_PTX_ISA", "driver", 1);
  const int newestIsa = 90 + expected % 1000 / 10;
  CUmodule module = nullptr;
  EXPECT_EQ(load(&module, ptx(newestIsa).c_str()), CUDA_SUCCESS);
  EXPECT_EQ(load(&module, ptx(newestIsa + 1).c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  using Create = CUresult (*)(unsigned, CUjit_option*, void**, CUlinkState*);
  using Add = CUresult (*)(CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*, void**);
  for (int isa : {newestIsa, newestIsa + 1}) {
    std::string text = ptx(isa);
    CUlinkState link = nullptr;
    ASSERT_EQ(fn<Create>("cuLinkCreate_v2")(0, nullptr, nullptr, &link), CUDA_SUCCESS);
    EXPECT_EQ(
        fn<Add>("cuLinkAddData_v2")(link, CU_JIT_INPUT_PTX, text.data(), text.size() + 1, "k.ptx", 0, nullptr, nullptr),
        isa == newestIsa ? CUDA_SUCCESS : CUDA_ERROR_INVALID_PTX)
        << "ISA " << isa;
    EXPECT_EQ(fn<CUresult (*)(CUlinkState)>("cuLinkDestroy")(link), CUDA_SUCCESS);
  }
}

TEST(Api, InitRejectsFlags) {
  EXPECT_EQ(fn<CUresult (*)(unsigned)>("cuInit")(1), CUDA_ERROR_INVALID_VALUE);
  initDriver();
}

// In a fresh process every entry point except the few that work before cuInit answers NOT_INITIALIZED.
// The check happens before any argument is touched, so calling each with no arguments is safe.
TEST(Api, EveryEntryNeedsInit) { EXPECT_EQ(runChild("Child.PreInit", {}), 0); }
TEST(Child, PreInit) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  // The checkpoint entry points ask another process (a coordinator need not initialise: driver 580).
  const std::set<std::string> beforeInit = {"cuInit",
                                            "cuDriverGetVersion",
                                            "cuGetErrorName",
                                            "cuGetErrorString",
                                            "cuGetProcAddress",
                                            "cuGetProcAddress_v2",
                                            "cuGetExportTable",
                                            "cuCheckpointProcessGetState",
                                            "cuCheckpointProcessGetRestoreThreadId",
                                            "cuCheckpointProcessLock",
                                            "cuCheckpointProcessCheckpoint",
                                            "cuCheckpointProcessRestore",
                                            "cuCheckpointProcessUnlock"};
  // These reject their NULL handle before looking at cuInit (measured on driver 580: api.init.BeforeInit.*).
  const std::map<std::string, CUresult> nullHandleFirst = {
      {"cuCtxDestroy", CUDA_ERROR_INVALID_VALUE},        {"cuCtxDestroy_v2", CUDA_ERROR_INVALID_VALUE},
      {"cuEventDestroy", CUDA_ERROR_INVALID_HANDLE},     {"cuEventDestroy_v2", CUDA_ERROR_INVALID_HANDLE},
      {"cuEventElapsedTime", CUDA_ERROR_INVALID_HANDLE}, {"cuEventElapsedTime_v2", CUDA_ERROR_INVALID_HANDLE},
      {"cuEventQuery", CUDA_ERROR_INVALID_HANDLE},       {"cuEventSynchronize", CUDA_ERROR_INVALID_HANDLE},
      {"cuFuncGetAttribute", CUDA_ERROR_INVALID_HANDLE}, {"cuLibraryUnload", CUDA_ERROR_INVALID_HANDLE},
      {"cuStreamDestroy", CUDA_ERROR_INVALID_HANDLE},    {"cuStreamDestroy_v2", CUDA_ERROR_INVALID_HANDLE}};
  int checked = 0;
  for (auto& [name, implemented] : apiTable()) {
    if (beforeInit.count(name)) continue;
    // Called without arguments, those see whatever the registers hold: either answer is right for them.
    auto special = nullHandleFirst.find(name);
    CUresult got = fn<NoArgs>(name.c_str())();
    if (special != nullHandleFirst.end() && got == special->second) got = CUDA_ERROR_NOT_INITIALIZED;
    EXPECT_EQ(got, CUDA_ERROR_NOT_INITIALIZED) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 674 - int(beforeInit.size()));
}

// A per-thread-default-stream form (_ptsz, _ptds) is PT, run by its plain form's implementation, exactly when
// that form is implemented; every other row is run by its own implementation (tools/gen-api/gen_api.py's rule).
TEST(Api, PerThreadFormsRunTheirPlainFormsImplementation) {
  std::ifstream in(std::string(CUEMU_RECORDED_DIR) + "/../generated/entries.def");
  std::regex row(R"(^CUEMU_ENTRY\((IMPL|STUB|PT), "[^"]*", (\w+), .*, ([\w |]+), (\w+)\)$)");
  std::map<std::string, std::pair<std::string, std::string>> rows;  // name -> (status, implemented by)
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, row)) rows[m[2]] = {m[1], m[4]};
  }
  ASSERT_EQ(rows.size(), 674u);
  int perThread = 0;
  for (auto& [name, columns] : rows) {
    auto& [status, target] = columns;
    std::smatch m;
    static const std::regex suffix(R"(^(\w+)_(ptsz|ptds)$)");
    auto plain = std::regex_match(name, m, suffix) ? rows.find(m[1]) : rows.end();
    if (plain != rows.end() && plain->second.first == "IMPL") {
      EXPECT_EQ(status, "PT") << name;
      EXPECT_EQ(target, plain->first) << name;
      ++perThread;
    } else {
      EXPECT_NE(status, "PT") << name;
      EXPECT_EQ(target, name) << name;
    }
  }
  EXPECT_EQ(perThread, 93);
}

// After cuInit every entry point still routed to a stub answers NOT_SUPPORTED (its arguments are not read).
TEST(Api, StubsAnswerNotSupported) {
  initDriver();
  int stubs = 0;
  for (auto& [name, implemented] : apiTable()) {
    if (implemented) continue;
    EXPECT_EQ(fn<NoArgs>(name.c_str())(), CUDA_ERROR_NOT_SUPPORTED) << name;
    ++stubs;
  }
  std::cout << stubs << " of 674 entry points are still stubs\n";
}

TEST(Api, TraceLogsCallsWithDecodedArguments) {
  std::string file = testing::TempDir() + "/cuemu-trace-" + std::to_string(getpid()) + ".log";
  std::remove(file.c_str());
  ASSERT_EQ(runChild("Child.Traced", {"CUEMU_TRACE=" + file}), 0);
  std::ifstream in(file);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("] cuInit(Flags=0) = CUDA_SUCCESS"), std::string::npos) << all;
  EXPECT_NE(all.find("cuGetErrorString(error=CUDA_ERROR_INVALID_PTX, pStr="), std::string::npos) << all;
  EXPECT_NE(all.find("cuGetProcAddress_v2(symbol=\"cuMemAlloc\", pfn="), std::string::npos) << all;
  EXPECT_NE(all.find("cuModuleLoad(module=NULL, fname=<unreadable>) = CUDA_ERROR_NOT_INITIALIZED"), std::string::npos)
      << all;
  EXPECT_NE(all.find("tid="), std::string::npos);
  std::remove(file.c_str());
}
TEST(Child, Traced) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  // Before cuInit nothing is dereferenced; the tracer must print a garbage string pointer safely.
  fn<CUresult (*)(CUmodule*, const char*)>("cuModuleLoad")(nullptr, reinterpret_cast<const char*>(8));
  initDriver();
  const char* s;
  fn<CUresult (*)(CUresult, const char**)>("cuGetErrorString")(CUDA_ERROR_INVALID_PTX, &s);
  void* p;
  CUdriverProcAddressQueryResult st;
  fn<GetProcV2>("cuGetProcAddress_v2")("cuMemAlloc", &p, 13000, 0, &st);
}

// Images without code for the device (here SASS only) are what NVIDIA's libraries offer while they probe (cuFFT
// on the gb10 profile, once per kernel): the first refusal of a process is an error line, the others information
// lines, which CUEMU_LOG shows; the driver's error log (cuLogs*) gets the first alone.
TEST(Api, ImagesWithoutCodeForTheDeviceAreAnErrorOnce) {
  std::string file = testing::TempDir() + "/cuemu-refused-" + std::to_string(getpid()) + ".log";
  std::remove(file.c_str());
  ASSERT_EQ(runChild("Child.ImagesWithoutCode", {"CUEMU_LOG=" + file}), 0);
  std::ifstream in(file);
  int errors = 0, infos = 0;
  for (std::string l; std::getline(in, l);) {
    if (l.find("load failed:") == std::string::npos) continue;
    if (l.rfind("cuemu: error: module load failed:", 0) == 0) ++errors;
    if (l.rfind("cuemu: module load failed:", 0) == 0 || l.rfind("cuemu: library load failed:", 0) == 0) ++infos;
  }
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(infos, 2);
  std::remove(file.c_str());
  ASSERT_EQ(runChild("Child.ImagesWithoutCode", {}), 0);  // the default level: what the error log gets
}
TEST(Child, ImagesWithoutCode) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  initDriver();
  CUcontext ctx;
  ASSERT_EQ(fn<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2")(&ctx, 0, 0), CUDA_SUCCESS);
  static int refusals = 0;
  CUlogsCallbackHandle handle = nullptr;
  ASSERT_EQ(fn<CUresult (*)(CUlogsCallback, void*, CUlogsCallbackHandle*)>("cuLogsRegisterCallback")(
                [](void*, CUlogLevel, char* message, size_t length) {
                  refusals += std::string(message, length).find("load failed") != std::string::npos;
                },
                nullptr, &handle),
            CUDA_SUCCESS);
  std::ifstream in(std::string(CUEMU_FATBIN_DATA_DIR) + "/sassonly.fatbin", std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(image.empty());
  CUmodule module;
  auto load = fn<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData");
  EXPECT_EQ(load(&module, image.data()), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(load(&module, image.data()), CUDA_ERROR_NO_BINARY_FOR_GPU);
  CUlibrary library;
  EXPECT_EQ(
      fn<CUresult (*)(CUlibrary*, const void*, CUjit_option*, void**, unsigned, CUlibraryOption*, void**, unsigned)>(
          "cuLibraryLoadData")(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
      CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(refusals, 1);
  EXPECT_EQ(fn<CUresult (*)(CUlogsCallbackHandle)>("cuLogsUnregisterCallback")(handle), CUDA_SUCCESS);
}

// PTX of ISA 9.1-9.x comes from toolkits newer than driver 580 (PyPI's NVRTC 13.5 writes 9.5): driver 580 refuses
// it, and so does cuemu by default (CUEMU_PTX_ISA=driver), naming the switch; CUEMU_PTX_ISA=newest (`cuemu run`'s
// default) compiles and runs it, and still refuses an ISA 10.
TEST(Api, NewerPtxIsaRunsWithPtxIsaNewest) { ASSERT_EQ(runChild("Child.NewerPtxIsa", {}), 0); }
TEST(Child, NewerPtxIsa) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  initDriver();
  CUcontext ctx;
  ASSERT_EQ(fn<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2")(&ctx, 0, 0), CUDA_SUCCESS);
  auto ptx = [](const char* version) {
    return std::string(".version ") + version +
           "\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n  .reg .b64 %a;\n"
           "  .reg .b32 %v;\n  ld.param.u64 %a, [p];\n  mov.u32 %v, 42;\n  st.global.u32 [%a], %v;\n  ret;\n}\n";
  };
  auto load = fn<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData");
  CUmodule module = nullptr;
  ::unsetenv("CUEMU_PTX_ISA");
  EXPECT_EQ(load(&module, ptx("9.5").c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  ::setenv("CUEMU_PTX_ISA", "driver", 1);
  EXPECT_EQ(load(&module, ptx("9.1").c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  EXPECT_EQ(load(&module, ptx("9.0").c_str()), CUDA_SUCCESS);
  ::setenv("CUEMU_PTX_ISA", "newest", 1);
  EXPECT_EQ(load(&module, ptx("10.0").c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  ASSERT_EQ(load(&module, ptx("9.5").c_str()), CUDA_SUCCESS);
  CUfunction kernel = nullptr;
  ASSERT_EQ(fn<CUresult (*)(CUfunction*, CUmodule, const char*)>("cuModuleGetFunction")(&kernel, module, "k"),
            CUDA_SUCCESS);
  CUdeviceptr out = 0;
  ASSERT_EQ(fn<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2")(&out, 4), CUDA_SUCCESS);
  void* args[] = {&out};
  using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);
  ASSERT_EQ(fn<Launch>("cuLaunchKernel")(kernel, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  uint32_t value = 0;
  ASSERT_EQ(fn<CUresult (*)(void*, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2")(&value, out, 4), CUDA_SUCCESS);
  EXPECT_EQ(value, 42u);
  // the linker too (cuemu's nvJitLink links the PTX that NVIDIA's makes of LTO-IR through it)
  using Create = CUresult (*)(unsigned, CUjit_option*, void**, CUlinkState*);
  using Add = CUresult (*)(CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*, void**);
  std::string text = ptx("9.5");
  for (const char* mode : {"newest", "driver"}) {
    ::setenv("CUEMU_PTX_ISA", mode, 1);
    CUlinkState link = nullptr;
    ASSERT_EQ(fn<Create>("cuLinkCreate_v2")(0, nullptr, nullptr, &link), CUDA_SUCCESS);
    const CUresult added =
        fn<Add>("cuLinkAddData_v2")(link, CU_JIT_INPUT_PTX, text.data(), text.size() + 1, "k.ptx", 0, nullptr, nullptr);
    if (std::string(mode) == "newest") {
      EXPECT_EQ(added, CUDA_SUCCESS);
      void* cubin = nullptr;
      size_t size = 0;
      EXPECT_EQ(fn<CUresult (*)(CUlinkState, void**, size_t*)>("cuLinkComplete")(link, &cubin, &size), CUDA_SUCCESS);
    } else {
      EXPECT_EQ(added, CUDA_ERROR_INVALID_PTX);
    }
    EXPECT_EQ(fn<CUresult (*)(CUlinkState)>("cuLinkDestroy")(link), CUDA_SUCCESS);
  }
}

// Device printf output a grid wrote before it faulted reaches stdout: an H100 (driver 580) prints it when the host
// learns of the fault, at cuCtxSynchronize, cuStreamSynchronize, cuStreamQuery or a copy
// (tools/gpu-probe/printftrap28, results/printftrap28-h100-2026-11-28.txt). Warp's zero-step slice check prints its
// message and traps; cuemu lost the message, as every call after the fault answered without flushing.
TEST(Api, PrintfBeforeAFaultReachesStdout) { ASSERT_EQ(runChild("Child.PrintfBeforeFault", {}), 0); }
TEST(Child, PrintfBeforeFault) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  initDriver();
  CUcontext ctx;
  ASSERT_EQ(fn<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2")(&ctx, 0, 0), CUDA_SUCCESS);
  const char* ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);\n"
      ".global .align 1 .b8 msg[13] = {98, 101, 102, 111, 114, 101, 32, 116, 114, 97, 112, 10, 0};\n"
      ".visible .entry k()\n{\n  .reg .b64 %a;\n  .reg .b32 %r;\n  mov.u64 %a, msg;\n  cvta.global.u64 %a, %a;\n"
      "  {\n  .param .b64 p0;\n  st.param.b64 [p0], %a;\n  .param .b64 p1;\n  st.param.b64 [p1], 0;\n"
      "  .param .b32 rv;\n  call.uni (rv), vprintf, (p0, p1);\n  ld.param.b32 %r, [rv];\n  }\n  trap;\n}\n";
  CUmodule module = nullptr;
  ASSERT_EQ(fn<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData")(&module, ptx), CUDA_SUCCESS);
  CUfunction kernel = nullptr;
  ASSERT_EQ(fn<CUresult (*)(CUfunction*, CUmodule, const char*)>("cuModuleGetFunction")(&kernel, module, "k"),
            CUDA_SUCCESS);
  std::fflush(stdout);
  char path[] = "/tmp/cuemu-printf-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  const int savedStdout = dup(1);
  dup2(file, 1);
  using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);
  const CUresult launched = fn<Launch>("cuLaunchKernel")(kernel, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  const CUresult synced = fn<CUresult (*)()>("cuCtxSynchronize")();
  std::fflush(stdout);
  dup2(savedStdout, 1);
  close(savedStdout);
  EXPECT_EQ(launched, CUDA_SUCCESS);
  EXPECT_NE(synced, CUDA_SUCCESS);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  close(file);
  unlink(path);
  EXPECT_EQ(text.str(), "before trap\n");
}

// A rejected module is an error the program can read back through the error log API, and callbacks see it as
// it happens.
TEST(Api, ErrorLogReceivesModuleErrors) { ASSERT_EQ(runChild("Child.ErrorLog", {}), 0); }
TEST(Child, ErrorLog) {
  if (!isChild()) GTEST_SKIP() << "runs in a child process";
  initDriver();
  CUcontext ctx;
  ASSERT_EQ(fn<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2")(&ctx, 0, 0), CUDA_SUCCESS);
  static std::string seen;
  CUlogsCallbackHandle handle = nullptr;
  ASSERT_EQ(fn<CUresult (*)(CUlogsCallback, void*, CUlogsCallbackHandle*)>("cuLogsRegisterCallback")(
                [](void*, CUlogLevel level, char* message, size_t length) {
                  if (level == CU_LOG_LEVEL_ERROR) seen.append(message, length);
                },
                nullptr, &handle),
            CUDA_SUCCESS);
  CUlogIterator it = 0;
  ASSERT_EQ(fn<CUresult (*)(CUlogIterator*, unsigned)>("cuLogsCurrent")(&it, 0), CUDA_SUCCESS);
  CUmodule module;
  const char* bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus.instruction; }\n";
  EXPECT_EQ(fn<CUresult (*)(CUmodule*, const void*)>("cuModuleLoadData")(&module, bad), CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(seen.find("bogus"), std::string::npos) << "the callback got: " << seen;
  char buffer[4096];
  size_t size = sizeof buffer;
  using Dump = CUresult (*)(CUlogIterator*, char*, size_t*, unsigned);
  ASSERT_EQ(fn<Dump>("cuLogsDumpToMemory")(&it, buffer, &size, 0), CUDA_SUCCESS);
  std::string dumped(buffer, size);
  EXPECT_NE(dumped.find("bogus"), std::string::npos) << dumped;
  EXPECT_EQ(dumped.back(), '\n');
  size = sizeof buffer;
  ASSERT_EQ(fn<Dump>("cuLogsDumpToMemory")(&it, buffer, &size, 0), CUDA_SUCCESS);
  EXPECT_EQ(size, 0u) << "the iterator moved past what was read";
  EXPECT_EQ(fn<CUresult (*)(CUlogsCallbackHandle)>("cuLogsUnregisterCallback")(handle), CUDA_SUCCESS);
  EXPECT_EQ(fn<CUresult (*)(CUlogsCallbackHandle)>("cuLogsUnregisterCallback")(handle), CUDA_ERROR_INVALID_VALUE);
}
