// runtime.*: unmodified runtime-API programs built by nvcc (conformance/runtime/*.cu), run with the same loader path
// as the suite, so they use the driver under test. Each prints PASS or FAIL and exits 0 on success.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "harness.h"

extern char** environ;

namespace {

std::string ProgramPath(const std::string& name) {
  if (const char* dir = std::getenv("CUEMU_CONF_RUNTIME_DIR")) return std::string(dir) + "/" + name;
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return name;
  buf[n] = 0;
  std::string exe = buf;
  return exe.substr(0, exe.rfind('/')) + "/runtime/" + name;
}

struct Outcome {
  int status = -1;
  bool timedOut = false;
  std::string output;
};

Outcome RunProgram(const std::string& path, int timeoutSeconds) {
  Outcome o;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return o;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::string p = path;
  char* argv[] = {p.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, p.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    o.output = "cannot start " + path;
    return o;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      o.timedOut = true;
      break;
    }
    pollfd pf{fds[0], POLLIN, 0};
    if (poll(&pf, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    o.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  waitpid(pid, &o.status, 0);
  return o;
}

class runtime_programs : public testing::TestWithParam<std::string> {};

TEST_P(runtime_programs, Run) {
  std::string path = ProgramPath(GetParam());
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) CONF_NOT_SUPPORTED("program not built (needs nvcc at build time): " << path);
  Outcome o = RunProgram(path, 120);
  ASSERT_FALSE(o.timedOut) << "timed out\n" << o.output;
  EXPECT_TRUE(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) << "status " << o.status << "\n" << o.output;
  EXPECT_NE(o.output.find("PASS"), std::string::npos) << o.output;
}

INSTANTIATE_TEST_SUITE_P(All, runtime_programs,
                         testing::Values("rt_vector_add", "rt_streams_events", "rt_streams_events_ptds",
                                         "rt_device_errors", "rt_managed_warp"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
