// cuCheckpointProcess* against a second process (checkpoint_target.cpp), with the answers driver 580 gives on an H100
// (tools/gpu-probe/results/clients17c-h100-2026-11-26.txt, part ckpt).
#include <cuda.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

// A target process and its stdin/stdout.
class Target {
 public:
  explicit Target(std::vector<std::string> arguments = {}) {
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv = {const_cast<char*>(CHECKPOINT_TARGET)};
    for (std::string& a : arguments) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, CHECKPOINT_TARGET, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    toChild_ = in[1];
    fromChild_ = out[0];
  }
  ~Target() {
    if (pid_ <= 0) return;
    send("exit");
    close(toChild_);
    int status = 0;
    waitpid(pid_, &status, 0);
    close(fromChild_);
  }
  int pid() const { return pid_; }
  void send(const std::string& command) {
    std::string line = command + "\n";
    (void)!write(toChild_, line.data(), line.size());
  }
  // The next line the target prints; empty if none comes within `ms` (or the target ended).
  std::string line(int ms = 30000) {
    while (true) {
      size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        std::string l = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return l;
      }
      pollfd p{fromChild_, POLLIN, 0};
      if (poll(&p, 1, ms) <= 0) return "";
      char chunk[256];
      ssize_t n = read(fromChild_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer_.append(chunk, size_t(n));
    }
  }

 private:
  pid_t pid_ = -1;
  int toChild_ = -1, fromChild_ = -1;
  std::string buffer_;
};

class Checkpoint : public testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);  // a target that has ended gets no "exit"
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  }
  static CUprocessState state(int pid) {
    CUprocessState s = CUprocessState(99);
    EXPECT_EQ(cuCheckpointProcessGetState(pid, &s), CUDA_SUCCESS);
    return s;
  }
};

TEST_F(Checkpoint, FullCycleKeepsMemory) {
  Target target;
  ASSERT_GT(target.pid(), 0);
  ASSERT_EQ(target.line(), "ready");
  int pid = target.pid();
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_RUNNING);
  int tid = 0;
  EXPECT_EQ(cuCheckpointProcessGetRestoreThreadId(pid, &tid), CUDA_SUCCESS);
  EXPECT_GT(tid, 0);
  EXPECT_NE(tid, pid) << "a thread of its own";
  EXPECT_EQ(cuCheckpointProcessCheckpoint(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuCheckpointProcessRestore(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuCheckpointProcessUnlock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_RUNNING);

  ASSERT_EQ(cuCheckpointProcessLock(pid, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_LOCKED);
  EXPECT_EQ(cuCheckpointProcessLock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuCheckpointProcessRestore(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  ASSERT_EQ(cuCheckpointProcessCheckpoint(pid, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_CHECKPOINTED);
  EXPECT_EQ(cuCheckpointProcessCheckpoint(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuCheckpointProcessUnlock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuCheckpointProcessLock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
  ASSERT_EQ(cuCheckpointProcessRestore(pid, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_LOCKED) << "a restore leaves the process locked";
  ASSERT_EQ(cuCheckpointProcessUnlock(pid, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_RUNNING);
  target.send("check");
  EXPECT_EQ(target.line(), "check 0 1234abcd");
}

TEST_F(Checkpoint, LockedProcessWaitsInItsDriverCalls) {
  Target target;
  ASSERT_EQ(target.line(), "ready");
  ASSERT_EQ(cuCheckpointProcessLock(target.pid(), nullptr), CUDA_SUCCESS);
  target.send("alloc");
  EXPECT_EQ(target.line(300), "") << "cuMemAlloc answered while the process was locked";
  ASSERT_EQ(cuCheckpointProcessUnlock(target.pid(), nullptr), CUDA_SUCCESS);
  EXPECT_EQ(target.line(), "alloc 0");
}

// A lock waits for the work already submitted: with a timeout it gives up (CUDA_ERROR_NOT_READY) and leaves the
// process running; without one it returns once the work is done.
TEST_F(Checkpoint, LockWaitsForSubmittedWork) {
  Target target;
  ASSERT_EQ(target.line(), "ready");
  int pid = target.pid();
  target.send("launch");
  ASSERT_EQ(target.line(), "launch 0");
  CUcheckpointLockArgs args{};
  args.timeoutMs = 100;
  EXPECT_EQ(cuCheckpointProcessLock(pid, &args), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_RUNNING);
  target.send("alloc");
  EXPECT_EQ(target.line(), "alloc 0") << "a lock that timed out blocks nothing";
  target.send("release");
  ASSERT_EQ(target.line(), "released");
  args.timeoutMs = 0;  // no timeout
  EXPECT_EQ(cuCheckpointProcessLock(pid, &args), CUDA_SUCCESS);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_LOCKED);
  EXPECT_EQ(cuCheckpointProcessUnlock(pid, nullptr), CUDA_SUCCESS);
}

TEST_F(Checkpoint, ArgumentsAndProcesses) {
  Target target;
  ASSERT_EQ(target.line(), "ready");
  int pid = target.pid();
  EXPECT_EQ(cuCheckpointProcessGetState(pid, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCheckpointProcessGetRestoreThreadId(pid, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUcheckpointLockArgs lock{};
  lock.reserved0 = 1;
  EXPECT_EQ(cuCheckpointProcessLock(pid, &lock), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(state(pid), CU_PROCESS_STATE_RUNNING);
  ASSERT_EQ(cuCheckpointProcessLock(pid, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCheckpointProcessCheckpoint(pid, nullptr), CUDA_SUCCESS);
  CUcheckpointRestoreArgs restore{};
  restore.reserved1 = 1;
  EXPECT_EQ(cuCheckpointProcessRestore(pid, &restore), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuCheckpointProcessRestore(pid, nullptr), CUDA_SUCCESS);
  CUcheckpointUnlockArgs unlock{};
  unlock.reserved[0] = 1;
  EXPECT_EQ(cuCheckpointProcessUnlock(pid, &unlock), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCheckpointProcessUnlock(pid, nullptr), CUDA_SUCCESS);

  CUprocessState s;
  EXPECT_EQ(cuCheckpointProcessGetState(getpid(), &s), CUDA_SUCCESS) << "this process";
  EXPECT_EQ(s, CU_PROCESS_STATE_RUNNING);
  EXPECT_EQ(cuCheckpointProcessGetState(0, &s), CUDA_ERROR_OPERATING_SYSTEM);
  EXPECT_EQ(cuCheckpointProcessGetState(-1, &s), CUDA_ERROR_OPERATING_SYSTEM);
  EXPECT_EQ(cuCheckpointProcessGetState(0x3ffffff0, &s), CUDA_ERROR_OPERATING_SYSTEM) << "no such process";
  pid_t plain = fork();  // a process without an initialised driver
  if (plain == 0) {
    pause();
    _exit(0);
  }
  EXPECT_EQ(cuCheckpointProcessGetState(plain, &s), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuCheckpointProcessLock(plain, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  kill(plain, SIGKILL);
  waitpid(plain, nullptr, 0);
  EXPECT_EQ(cuCheckpointProcessGetState(plain, &s), CUDA_ERROR_OPERATING_SYSTEM) << "it has ended";
}

// A coordinator needs no cuInit of its own (cuda-checkpoint calls nothing else); asking about itself then answers
// CUDA_ERROR_NOT_INITIALIZED, as for any process without a driver (driver 580).
TEST_F(Checkpoint, CoordinatorWithoutInit) {
  Target target;
  ASSERT_EQ(target.line(), "ready");
  Target coordinator({"query", std::to_string(target.pid())});
  EXPECT_EQ(coordinator.line(), "query 0 0 self 3");
}

}  // namespace
