#include "core/checkpoint.h"

#include "core/context.h"
#include "core/log.h"
#include "core/stream.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace cuemu::checkpoint {

std::atomic<bool> g_locked{false};

namespace {

struct Message {
  Request request;
  uint32_t timeoutMs;
};
struct Answer {
  int32_t result;
  int32_t value;
};

std::mutex g_gateMutex;
std::condition_variable g_unlocked;

// The abstract socket name of process `pid` (no file: it goes with the process).
socklen_t socketAddress(int pid, sockaddr_un& address) {
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  std::string name = fmt::format("cuemu-checkpoint-{}", pid);
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

bool submittedWorkDone() {
  bool idle = true;
  handleTable<Context>().forEach([&](const std::shared_ptr<Context>& context) {
    for (const auto& stream : context->streams().allStreams())
      if (!stream->isIdle()) idle = false;
  });
  return idle;
}

void setLocked(bool locked) {
  std::lock_guard lock(g_gateMutex);
  g_locked.store(locked, std::memory_order_relaxed);
  if (!locked) g_unlocked.notify_all();
}

// The target's state machine; only the service thread changes it.
class Service {
 public:
  Answer handle(const Message& m) {
    switch (m.request) {
      case Request::State: return {CUDA_SUCCESS, int32_t(state_.load())};
      case Request::RestoreThread: return {CUDA_SUCCESS, tid_};
      case Request::Lock: return {lock(m.timeoutMs), 0};
      case Request::Checkpoint: return {move(CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED), 0};
      case Request::Restore: return {move(CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED), 0};
      case Request::Unlock: {
        CUresult r = move(CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING);
        if (r == CUDA_SUCCESS) setLocked(false);
        return {r, 0};
      }
    }
    return {CUDA_ERROR_INVALID_VALUE, 0};
  }
  void setThread(int tid) { tid_ = tid; }

 private:
  CUresult move(CUprocessState from, CUprocessState to) {
    if (state_.load() != from) return CUDA_ERROR_ILLEGAL_STATE;
    state_.store(to);
    return CUDA_SUCCESS;
  }
  // New calls wait from now on; the work already submitted must finish within the timeout (0: none).
  CUresult lock(uint32_t timeoutMs) {
    if (state_.load() != CU_PROCESS_STATE_RUNNING) return CUDA_ERROR_ILLEGAL_STATE;
    setLocked(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (!submittedWorkDone()) {
      if (timeoutMs && std::chrono::steady_clock::now() >= deadline) {
        setLocked(false);
        return CUDA_ERROR_NOT_READY;  // driver 580's answer to a lock that timed out
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    state_.store(CU_PROCESS_STATE_LOCKED);
    return CUDA_SUCCESS;
  }
  std::atomic<int> state_{CU_PROCESS_STATE_RUNNING};
  int tid_ = 0;
};

bool sameUser(int fd) {
  ucred peer{};
  socklen_t length = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) return false;
  return peer.uid == getuid() || peer.uid == 0;
}

void serve(int listener, Service* service) {
  service->setThread(int(syscall(SYS_gettid)));
  while (true) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      CUEMU_WARN("checkpoint service stopped: accept: {}", std::strerror(errno));
      return;
    }
    Message m{};
    if (sameUser(fd) && recv(fd, &m, sizeof m, 0) == ssize_t(sizeof m)) {
      Answer a = service->handle(m);
      (void)::send(fd, &a, sizeof a, MSG_NOSIGNAL);
    }
    close(fd);
  }
}

}  // namespace

void waitWhileLockedSlow() {
  std::unique_lock lock(g_gateMutex);
  g_unlocked.wait(lock, [] { return !g_locked.load(std::memory_order_relaxed); });
}

void startService() {
  static std::once_flag once;
  std::call_once(once, [] {
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listener < 0) return;
    sockaddr_un address;
    socklen_t length = socketAddress(int(getpid()), address);
    if (bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(listener, 4) != 0) {
      CUEMU_WARN("process checkpointing is unavailable: {}", std::strerror(errno));
      close(listener);
      return;
    }
    // Blocks every signal, so that the application's handlers run on its own threads.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread(serve, listener, new Service).detach();  // lives as long as the process
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  });
}

CUresult send(int pid, Request request, uint32_t timeoutMs, int* value) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) return CUDA_ERROR_OPERATING_SYSTEM;
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  sockaddr_un address;
  socklen_t length = socketAddress(pid, address);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    close(fd);
    return CUDA_ERROR_NOT_INITIALIZED;  // the process runs no initialised driver
  }
  Message m{request, timeoutMs};
  Answer a{CUDA_ERROR_OPERATING_SYSTEM, 0};
  if (::send(fd, &m, sizeof m, MSG_NOSIGNAL) != ssize_t(sizeof m) || recv(fd, &a, sizeof a, 0) != ssize_t(sizeof a))
    a.result = CUDA_ERROR_OPERATING_SYSTEM;  // the process ended meanwhile
  close(fd);
  if (a.result == CUDA_SUCCESS && value) *value = a.value;
  return CUresult(a.result);
}

}  // namespace cuemu::checkpoint
