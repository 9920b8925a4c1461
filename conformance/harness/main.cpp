// The suite's entry point. By default it supervises: it lists the cases, runs them in child processes (the same
// binary with --child), survives a child that crashes or hangs (that case fails, the rest go on in a new child),
// writes the JSON results and prints a summary table per group. The supervisor itself never calls the driver, so it
// can fork safely; device facts come from a short --info child.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "json.h"

extern char** environ;

namespace {

// GoogleTest suite names use '_' where the case name has '.'; the group is the longest known prefix.
const char* const kGroups[] = {
    "api_init",    "api_device",  "api_context", "api_primary_context", "api_memory", "api_stream",
    "api_event",   "api_module",  "api_launch",  "api_library",         "api_link",   "api_occupancy",
    "api_pointer", "api_func",    "api_misc",    "api_texture",         "api_graph",  "ptx_integer",
    "ptx_float",   "ptx_convert", "ptx_control", "ptx_memory",          "ptx_atomic", "ptx_warp",
    "ptx_barrier", "ptx_special", "ptx_bits",    "ptx_golden",          "ptx_matrix", "ptx_cluster",
    "runtime",
};

std::string Dotted(std::string_view group) {
  // api_primary_context -> api.primary_context: only the first '_' separates area from group.
  std::string s(group);
  auto p = s.find('_');
  if (p != std::string::npos) s[p] = '.';
  return s;
}

// "Prefix/api_context_Threads.Migrate/3" -> "api.context.Threads.Migrate.3"
std::string CtsName(const std::string& suite, const std::string& test) {
  std::string s = suite;
  if (auto slash = s.find('/'); slash != std::string::npos) s = s.substr(slash + 1);
  std::string head, rest;
  size_t best = 0;
  for (const char* g : kGroups) {
    size_t n = std::strlen(g);
    if (s.compare(0, n, g) == 0 && (s.size() == n || s[n] == '_') && n > best) best = n;
  }
  if (best) {
    head = Dotted(s.substr(0, best));
    rest = best < s.size() ? s.substr(best + 1) : "";
  } else {
    head = Dotted(s);  // an unknown area: its first '_' still separates area and group
  }
  std::string name = head;
  if (!rest.empty()) name += "." + rest;
  std::string t = test;
  std::replace(t.begin(), t.end(), '/', '.');
  return name + "." + t;
}

bool GlobMatch(const char* pat, const char* s) {
  if (*pat == 0) return *s == 0;
  if (*pat == '*') return GlobMatch(pat + 1, s) || (*s && GlobMatch(pat, s + 1));
  if (*s && (*pat == '?' || *pat == *s)) return GlobMatch(pat + 1, s + 1);
  return false;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char e = s[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  buf[n] = 0;
  return buf;
}

// ---------------------------------------------------------------------------------------------------------------
// Child side: a listener that appends one line per case start and end to the progress file (written with write(2)
// so that what was written survives a crash of this process).

class ProgressListener : public testing::EmptyTestEventListener {
 public:
  explicit ProgressListener(int fd) : fd_(fd) {}

  void OnTestStart(const testing::TestInfo& info) override {
    messages_.clear();
    start_ = std::chrono::steady_clock::now();
    Write("S\t" + FullName(info) + "\n");
  }
  void OnTestPartResult(const testing::TestPartResult& r) override {
    std::string m = r.message() ? r.message() : "";
    if (r.file_name()) m = std::string(r.file_name()) + ":" + std::to_string(r.line_number()) + ": " + m;
    if (!messages_.empty()) messages_ += "\n";
    messages_ += m;
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult* r = info.result();
    std::string status = r->Skipped() ? "not-supported" : r->Failed() ? "fail" : "pass";
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
    std::string msg = status == "pass" ? "" : messages_;
    if (msg.size() > 4000) msg = msg.substr(0, 4000) + "...";
    Write("E\t" + FullName(info) + "\t" + status + "\t" + std::to_string(ms) + "\t" + Escape(msg) + "\n");
  }

  static std::string FullName(const testing::TestInfo& info) {
    return std::string(info.test_suite_name()) + "." + info.name();
  }

 private:
  void Write(const std::string& s) {
    const char* p = s.data();
    size_t left = s.size();
    while (left) {
      ssize_t n = write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  int fd_;
  std::string messages_;
  std::chrono::steady_clock::time_point start_;
};

int RunChild(char* argv0, const std::string& listFile, const std::string& progressFile) {
  std::string brief = "--gtest_brief=1";
  char* gargv[] = {argv0, brief.data(), nullptr};
  int gargc = 2;
  testing::InitGoogleTest(&gargc, gargv);
  std::ifstream in(listFile);
  std::string line, filter;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (!filter.empty()) filter += ':';
    filter += line;
  }
  GTEST_FLAG_SET(filter, filter);
  int fd = open(progressFile.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror("progress file");
    return 2;
  }
  testing::UnitTest::GetInstance()->listeners().Append(new ProgressListener(fd));
  int rc = RUN_ALL_TESTS();
  close(fd);
  return rc;
}

// ---------------------------------------------------------------------------------------------------------------
// Info child: device facts for the result file.

int RunInfo() {
  CUresult init = cuInit(0);
  std::printf("init_result=%s\n", conf::ResultName(init).c_str());
  int version = 0;
  cuDriverGetVersion(&version);
  std::printf("driver_version=%d\n", version);
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&cuInit), &dl) && dl.dli_fname) {
    char real[4096];
    std::printf("library=%s\n", realpath(dl.dli_fname, real) ? real : dl.dli_fname);
  }
  int count = 0;
  if (init == CUDA_SUCCESS) cuDeviceGetCount(&count);
  std::printf("device_count=%d\n", count);
  if (count > 0) {
    CUdevice dev = 0;
    cuDeviceGet(&dev, 0);
    char name[256] = {};
    cuDeviceGetName(name, sizeof(name), dev);
    std::printf("device_name=%s\n", name);
    int major = 0, minor = 0;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    std::printf("compute_capability=%d.%d\n", major, minor);
  }
  std::fflush(stdout);
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Supervisor.

struct CaseResult {
  std::string status = "fail";
  long ms = 0;
  std::string message;
};

struct Options {
  std::string results = "conformance-results.json";
  std::vector<std::string> patterns;
  int caseTimeout = 120;
  bool list = false;
  std::string label;
};

pid_t Spawn(const std::vector<std::string>& args, int stdoutFd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdoutFd >= 0) posix_spawn_file_actions_adddup2(&actions, stdoutFd, 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

std::map<std::string, std::string> QueryInfo(const std::string& exe) {
  std::map<std::string, std::string> info;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return info;
  pid_t pid = Spawn({exe, "--info"}, fds[1]);
  close(fds[1]);
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  while (pid > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  for (const auto& line : Split(out, '\n')) {
    auto eq = line.find('=');
    if (eq != std::string::npos) info[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    info["info_error"] = WIFSIGNALED(status) ? "info child killed by signal " + std::to_string(WTERMSIG(status))
                                             : "info child exited with " + std::to_string(WEXITSTATUS(status));
  return info;
}

std::string Describe(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with raw status " + std::to_string(status);
}

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int Supervise(const Options& opt) {
  // Enumerate the cases (no driver call happens here).
  std::vector<std::pair<std::string, std::string>> cases;  // gtest full name, CTS name
  std::set<std::string> seen;
  const testing::UnitTest* ut = testing::UnitTest::GetInstance();
  for (int i = 0; i < ut->total_test_suite_count(); ++i) {
    const testing::TestSuite* ts = ut->GetTestSuite(i);
    for (int j = 0; j < ts->total_test_count(); ++j) {
      const testing::TestInfo* ti = ts->GetTestInfo(j);
      std::string cts = CtsName(ts->name(), ti->name());
      if (!seen.insert(cts).second) {
        std::fprintf(stderr, "duplicate case name %s\n", cts.c_str());
        return 2;
      }
      bool selected = opt.patterns.empty();
      for (const auto& p : opt.patterns) selected = selected || GlobMatch(p.c_str(), cts.c_str());
      if (selected) cases.emplace_back(std::string(ts->name()) + "." + ti->name(), cts);
    }
  }
  if (opt.list) {
    for (const auto& c : cases) std::printf("%s\n", c.second.c_str());
    return 0;
  }

  std::string exe = SelfExe();
  auto info = QueryInfo(exe);
  std::printf("[conformance] driver library: %s\n", info.count("library") ? info["library"].c_str() : "?");
  std::printf("[conformance] driver version %s, %s device(s), device 0: %s (cc %s), cuInit: %s\n",
              info["driver_version"].c_str(), info["device_count"].c_str(), info["device_name"].c_str(),
              info["compute_capability"].c_str(), info["init_result"].c_str());
  std::fflush(stdout);

  std::map<std::string, std::string> ctsOf;
  for (const auto& c : cases) ctsOf[c.first] = c.second;
  std::map<std::string, CaseResult> results;  // by gtest name
  // Cases of suites named *_Faults run one per process: a kernel fault poisons the whole process on NVIDIA's driver.
  std::vector<std::vector<std::string>> batches(1);
  for (const auto& c : cases) {
    std::string suite = c.first.substr(0, c.first.find('.'));
    if (suite.size() >= 7 && suite.compare(suite.size() - 7, 7, "_Faults") == 0)
      batches.push_back({c.first});
    else
      batches[0].push_back(c.first);
  }
  std::vector<std::string> remaining;

  char tmpl[] = "/tmp/cuemu-conformance-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return 2;
  }
  std::string dir = tmpl;
  std::string listFile = dir + "/cases.txt";
  std::string progressFile = dir + "/progress.txt";
  int children = 0;

  for (auto& batch : batches) {
    remaining = batch;
    while (!remaining.empty()) {
      {
        std::ofstream list(listFile, std::ios::trunc);
        for (const auto& n : remaining) list << n << "\n";
      }
      unlink(progressFile.c_str());
      pid_t pid = Spawn({exe, "--child", listFile, progressFile}, -1);
      ++children;
      if (pid <= 0) {
        std::fprintf(stderr, "cannot start child process\n");
        break;
      }
      std::string current;  // started, not ended
      auto currentSince = std::chrono::steady_clock::now();
      std::string pending;
      off_t offset = 0;
      int status = 0;
      bool exited = false, timedOut = false, failed = false;
      std::set<std::string> doneNow;
      auto drain = [&] {
        int fd = open(progressFile.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        char buf[65536];
        for (;;) {
          ssize_t n = pread(fd, buf, sizeof(buf), offset);
          if (n <= 0) break;
          offset += n;
          pending.append(buf, static_cast<size_t>(n));
        }
        close(fd);
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
          std::string line = pending.substr(0, nl);
          pending.erase(0, nl + 1);
          auto f = Split(line, '\t');
          if (failed) break;  // the child is being replaced; what it did after the failure runs again
          if (f.size() >= 2 && f[0] == "S") {
            current = f[1];
            currentSince = std::chrono::steady_clock::now();
          } else if (f.size() >= 5 && f[0] == "E") {
            CaseResult r;
            r.status = f[2];
            r.ms = std::atol(f[3].c_str());
            r.message = Unescape(f[4]);
            results[f[1]] = r;
            doneNow.insert(f[1]);
            if (current == f[1]) current.clear();
            currentSince = std::chrono::steady_clock::now();
            // A failing case may leave the process poisoned (a kernel fault poisons the whole process on NVIDIA's
            // driver, and on cuemu), so the cases after it run in a fresh child.
            if (r.status == "fail") failed = true;
          }
        }
      };
      while (!exited) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
          exited = true;
          break;
        }
        drain();
        if (failed) {
          kill(-pid, SIGKILL);
          waitpid(pid, &status, 0);
          current.clear();
          exited = true;
          break;
        }
        // A case that runs too long fails; a process that hangs between cases or at exit (a driver thread that never
        // finishes, say) is killed too, and the cases it did not start run in a new child.
        if (std::chrono::steady_clock::now() - currentSince > std::chrono::seconds(opt.caseTimeout)) {
          kill(-pid, SIGKILL);
          waitpid(pid, &status, 0);
          timedOut = !current.empty();
          exited = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (!failed) drain();
      if (failed) current.clear();
      kill(-pid, SIGKILL);  // stray grandchildren of a crashed child
      if (!current.empty()) {
        CaseResult r;
        r.status = "fail";
        r.message = timedOut ? "timed out after " + std::to_string(opt.caseTimeout) + " s (child killed)"
                             : "the process " + Describe(status) + " during this case";
        results[current] = r;
        doneNow.insert(current);
        std::printf("[conformance] %s: %s\n", ctsOf[current].c_str(), r.message.c_str());
        std::fflush(stdout);
      }
      std::vector<std::string> next;
      for (const auto& n : remaining)
        if (!results.count(n)) next.push_back(n);
      if (doneNow.empty()) {
        // The child made no progress at all: do not loop; every remaining case fails with the reason.
        for (const auto& n : next) {
          CaseResult r;
          r.message = "the test process " + Describe(status) + " before running this case";
          results[n] = r;
        }
        next.clear();
      }
      remaining.swap(next);
    }
  }
  unlink(listFile.c_str());
  unlink(progressFile.c_str());
  rmdir(dir.c_str());

  // Results file, sorted by case name.
  std::map<std::string, const CaseResult*> byCts;
  for (const auto& [g, r] : results) byCts[ctsOf[g]] = &r;
  std::map<std::string, std::array<int, 3>> groups;
  int pass = 0, fail = 0, ns = 0;
  for (const auto& [name, r] : byCts) {
    auto parts = Split(name, '.');
    std::string group = parts.size() >= 2 ? parts[0] + "." + parts[1] : parts[0];
    auto& g = groups[group];
    if (r->status == "pass")
      ++g[0], ++pass;
    else if (r->status == "not-supported")
      ++g[2], ++ns;
    else
      ++g[1], ++fail;
  }
  std::ostringstream js;
  js << "{\n  \"schema\": 1,\n  \"date\": " << conf::json::Quote(UtcNow()) << ",\n";
  js << "  \"label\": " << conf::json::Quote(opt.label) << ",\n";
  js << "  \"driver_version\": " << conf::json::Quote(info["driver_version"]) << ",\n";
  js << "  \"driver_library\": " << conf::json::Quote(info["library"]) << ",\n";
  js << "  \"device_count\": " << conf::json::Quote(info["device_count"]) << ",\n";
  js << "  \"device_name\": " << conf::json::Quote(info["device_name"]) << ",\n";
  js << "  \"compute_capability\": " << conf::json::Quote(info["compute_capability"]) << ",\n";
  js << "  \"init_result\": " << conf::json::Quote(info["init_result"]) << ",\n";
  js << "  \"summary\": {\"pass\": " << pass << ", \"fail\": " << fail << ", \"not-supported\": " << ns
     << ", \"total\": " << byCts.size() << "},\n";
  js << "  \"cases\": {";
  bool first = true;
  for (const auto& [name, r] : byCts) {
    js << (first ? "\n" : ",\n") << "    " << conf::json::Quote(name)
       << ": {\"status\": " << conf::json::Quote(r->status) << ", \"ms\": " << r->ms;
    if (!r->message.empty()) js << ", \"message\": " << conf::json::Quote(r->message);
    js << "}";
    first = false;
  }
  js << "\n  }\n}\n";
  {
    std::ofstream out(opt.results, std::ios::trunc);
    out << js.str();
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", opt.results.c_str());
      return 2;
    }
  }

  std::printf("\n%-28s %6s %6s %14s %6s\n", "group", "pass", "fail", "not-supported", "total");
  for (const auto& [group, g] : groups)
    std::printf("%-28s %6d %6d %14d %6d\n", group.c_str(), g[0], g[1], g[2], g[0] + g[1] + g[2]);
  std::printf("%-28s %6d %6d %14d %6d\n", "all", pass, fail, ns, pass + fail + ns);
  std::printf("[conformance] %zu cases in %d process(es); results: %s\n", byCts.size(), children, opt.results.c_str());
  return fail == 0 ? 0 : 1;
}

// Cases that exercise the supervisor itself (a crash, a hang, an exit between cases); registered only when
// CUEMU_CONF_SELFTEST is set, by the conformance-supervisor-selftest test.
class SelfTestCase : public testing::Test {
 public:
  explicit SelfTestCase(int kind) : kind_(kind) {}
  void TestBody() override {
    switch (kind_) {
      case 0: break;                                                      // passes
      case 1: std::raise(SIGSEGV); break;                                 // crashes the process
      case 2: std::this_thread::sleep_for(std::chrono::hours(1)); break;  // hangs
      case 3: GTEST_SKIP() << "not-supported: self test"; break;
      case 4: FAIL() << "an ordinary failure"; break;
    }
  }

 private:
  int kind_;
};

void RegisterSelfTests() {
  if (!std::getenv("CUEMU_CONF_SELFTEST")) return;
  const char* names[] = {"A_Pass", "B_Crash", "C_PassAfterCrash", "D_Hang", "E_PassAfterHang", "F_Skip", "G_Fail"};
  const int kinds[] = {0, 1, 0, 2, 0, 3, 4};
  for (int i = 0; i < 7; ++i) {
    int kind = kinds[i];
    testing::RegisterTest("misc_selftest", names[i], nullptr, nullptr, __FILE__, __LINE__,
                          [kind]() -> testing::Test* { return new SelfTestCase(kind); });
  }
}

void Usage() {
  std::printf(
      "cuemu conformance suite\n"
      "  --results FILE        JSON results (default conformance-results.json)\n"
      "  --cases GLOB[,GLOB]   run only cases whose dotted name matches (e.g. 'api.context.*')\n"
      "  --case-timeout SEC    a case running longer fails and its process is killed (default 120)\n"
      "  --label TEXT          stored in the results (e.g. 'cuemu' or 'nvidia-h100')\n"
      "  --list                print the dotted case names\n"
      "  --no-isolate ARGS...  plain GoogleTest run in this process (ARGS go to GoogleTest)\n");
}

}  // namespace

int main(int argc, char** argv) {
  RegisterSelfTests();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "--fresh")
    return conf::RunFreshBodyInThisProcess(args[1], args.size() >= 3 ? args[2] : "");
  if (args.size() >= 1 && args[0] == "--info") return RunInfo();
  if (args.size() >= 3 && args[0] == "--child") {
    return RunChild(argv[0], args[1], args[2]);
  }
  if (!args.empty() && args[0] == "--no-isolate") {
    std::vector<char*> gargv = {argv[0]};
    for (int i = 2; i < argc; ++i) gargv.push_back(argv[i]);
    int gargc = static_cast<int>(gargv.size());
    gargv.push_back(nullptr);
    testing::InitGoogleTest(&gargc, gargv.data());
    return RUN_ALL_TESTS();
  }
  Options opt;
  for (size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "%s needs a value\n", args[i].c_str());
        std::exit(2);
      }
      return args[++i];
    };
    if (args[i] == "--results")
      opt.results = value();
    else if (args[i] == "--cases")
      opt.patterns = Split(value(), ',');
    else if (args[i] == "--case-timeout")
      opt.caseTimeout = std::max(1, std::atoi(value().c_str()));
    else if (args[i] == "--label")
      opt.label = value();
    else if (args[i] == "--list")
      opt.list = true;
    else if (args[i] == "--help" || args[i] == "-h") {
      Usage();
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument %s (see --help)\n", args[i].c_str());
      return 2;
    }
  }
  int gargc = 1;
  testing::InitGoogleTest(&gargc, argv);
  return Supervise(opt);
}
