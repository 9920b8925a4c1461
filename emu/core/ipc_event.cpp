#include "core/ipc_event.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

namespace cuemu {
namespace {

constexpr uint32_t kSlots = 4096;
constexpr size_t kFileBytes = kSlots * sizeof(IpcEventState::Slot);
constexpr uint32_t kMagic = 0x56455543;  // "CUEV"
static_assert(sizeof(IpcEventState::Slot) == 16, "slots are laid out identically in every process");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must not hide a lock");

// What a CUipcEventHandle carries (64 bytes).
struct EventPayload {
  uint32_t magic;
  uint32_t version;
  int32_t pid;
  int32_t fd;
  uint32_t index;
  uint32_t generation;
  uint32_t reserved[10];
};
static_assert(sizeof(EventPayload) == sizeof(CUipcEventHandle), "an IPC event handle is 64 bytes");

// This process's slots: one memfd, mapped once, slots handed out next-fit.
struct LocalFile {
  std::mutex mutex;
  int fd = -1;
  IpcEventState::Slot* slots = nullptr;
  uint32_t rover = 0;
};
LocalFile& localFile() {
  static auto* file = new LocalFile;  // never destroyed: events may die during exit
  return *file;
}

// Other processes' files, mapped once per (pid, fd) and kept: opened events point into them.
struct ForeignFiles {
  std::mutex mutex;
  std::map<std::pair<int32_t, int32_t>, IpcEventState::Slot*> byOwner;
};
ForeignFiles& foreignFiles() {
  static auto* files = new ForeignFiles;
  return *files;
}

IpcEventState::Slot* mapSlots(int fd) {
  void* p = mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<IpcEventState::Slot*>(p);
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared with other processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

Expected<std::shared_ptr<IpcEventState>> IpcEventState::create() {
  LocalFile& file = localFile();
  std::lock_guard lock(file.mutex);
  if (!file.slots) {
    int fd = memfd_create("cuemu-ipc-events", MFD_CLOEXEC);
    if (fd < 0) return makeError(CUDA_ERROR_NOT_SUPPORTED, "memfd_create failed: interprocess events unavailable");
    Slot* slots = ftruncate(fd, off_t(kFileBytes)) == 0 ? mapSlots(fd) : nullptr;
    if (!slots) {
      close(fd);
      return makeError(CUDA_ERROR_OUT_OF_MEMORY, "cannot map the interprocess event file");
    }
    file.fd = fd;
    file.slots = slots;
  }
  for (uint32_t tried = 0; tried < kSlots; ++tried) {
    uint32_t index = (file.rover + tried) % kSlots;
    Slot& slot = file.slots[index];
    if (slot.inUse.load(std::memory_order_relaxed)) continue;
    file.rover = index + 1;
    slot.recorded.store(0, std::memory_order_relaxed);
    slot.completed.store(0, std::memory_order_relaxed);
    slot.generation.fetch_add(1, std::memory_order_relaxed);
    slot.inUse.store(1, std::memory_order_release);
    return std::shared_ptr<IpcEventState>(new IpcEventState(&slot, index, true));
  }
  return makeError(CUDA_ERROR_OUT_OF_MEMORY, fmt::format("more than {} interprocess events", kSlots));
}

Expected<std::shared_ptr<IpcEventState>> IpcEventState::open(const CUipcEventHandle& handle) {
  EventPayload payload;
  std::memcpy(&payload, &handle, sizeof payload);
  if (payload.magic != kMagic || payload.version != 1 || payload.index >= kSlots)
    return makeError(CUDA_ERROR_INVALID_VALUE, "not an interprocess event handle");
  Slot* slots = nullptr;
  if (payload.pid == getpid()) {
    LocalFile& file = localFile();
    std::lock_guard lock(file.mutex);
    if (payload.fd == file.fd) slots = file.slots;
  } else {
    ForeignFiles& files = foreignFiles();
    std::lock_guard lock(files.mutex);
    auto key = std::make_pair(payload.pid, payload.fd);
    if (auto it = files.byOwner.find(key); it != files.byOwner.end()) {
      slots = it->second;
    } else {
      int fd = ::open(fmt::format("/proc/{}/fd/{}", payload.pid, payload.fd).c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        struct stat st {};
        if (fstat(fd, &st) == 0 && uint64_t(st.st_size) >= kFileBytes) slots = mapSlots(fd);
        close(fd);  // the mapping keeps the file
      }
      if (slots) files.byOwner.emplace(key, slots);
    }
  }
  if (!slots) return makeError(CUDA_ERROR_INVALID_VALUE, "the exporting process or its event file is gone");
  Slot& slot = slots[payload.index];
  if (!slot.inUse.load(std::memory_order_acquire) ||
      slot.generation.load(std::memory_order_relaxed) != payload.generation)
    return makeError(CUDA_ERROR_INVALID_VALUE, "the exported event was destroyed");
  return std::shared_ptr<IpcEventState>(new IpcEventState(&slot, payload.index, false));
}

IpcEventState::~IpcEventState() {
  if (owner_) slot_->inUse.store(0, std::memory_order_release);
}

void IpcEventState::exportHandle(CUipcEventHandle& out) const {
  EventPayload payload{};
  payload.magic = kMagic;
  payload.version = 1;
  payload.pid = getpid();
  {
    LocalFile& file = localFile();
    std::lock_guard lock(file.mutex);
    payload.fd = file.fd;
  }
  payload.index = index_;
  payload.generation = slot_->generation.load(std::memory_order_relaxed);
  std::memcpy(&out, &payload, sizeof payload);
}

uint32_t IpcEventState::beginRecord() { return slot_->recorded.fetch_add(1, std::memory_order_acq_rel) + 1; }

void IpcEventState::complete(uint32_t ticket) {
  uint32_t current = slot_->completed.load(std::memory_order_relaxed);
  // Records complete in their streams' order, not globally: keep the highest ticket.
  while (static_cast<int32_t>(ticket - current) > 0 &&
         !slot_->completed.compare_exchange_weak(current, ticket, std::memory_order_acq_rel)) {}
  futex(&slot_->completed, FUTEX_WAKE, INT_MAX, nullptr);
}

void IpcEventState::wait(uint32_t ticket) const {
  for (;;) {
    uint32_t current = slot_->completed.load(std::memory_order_acquire);
    if (static_cast<int32_t>(current - ticket) >= 0) return;
    // Bounded sleeps: a recorder that died without completing must not leave a wake-up we could miss forever.
    timespec timeout{0, 50'000'000};
    futex(&slot_->completed, FUTEX_WAIT, current, &timeout);
  }
}

}  // namespace cuemu
