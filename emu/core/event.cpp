#include "core/event.h"

#include "core/context.h"
#include "core/graph.h"
#include "core/ipc_event.h"

#include <chrono>

namespace cuemu {

int64_t monotonicNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Event::~Event() {
  if (ipcWaiter_) ipcWaiter_->retire();
}

void Event::record(Stream& stream) {
  auto record = std::make_shared<Record>();
  if (ipc_) {
    std::lock_guard lock(mutex_);
    record->ipcTicket = ipc_->beginRecord();
  }
  // The marker only touches its own record, so re-recording the event later is independent of it.
  record->position = stream.context().streams().submit(stream, [record, ipc = ipc_] {
    record->completedAt.store(monotonicNanoseconds(), std::memory_order_release);
    if (ipc) ipc->complete(record->ipcTicket);
    return CUDA_SUCCESS;
  });
  // Published once complete: another thread's wait or query of this event (cuStreamWaitEvent, cuEventSynchronize)
  // must never see a record whose position is still being written (it read an empty stream pointer).
  std::lock_guard lock(mutex_);
  record_ = record;
}

std::shared_ptr<Event::Record> Event::current() const {
  std::lock_guard lock(mutex_);
  return record_;
}

bool Event::position(StreamPosition& out) const {
  if (ipc_) {
    uint32_t latest = ipc_->latest();
    std::lock_guard lock(mutex_);
    if (record_ && record_->ipcTicket == latest) {
      out = record_->position;  // our own latest record: an ordinary dependency
      return true;
    }
    if (ipc_->isComplete(latest)) return false;
    // Recorded in another process: a hidden stream of this context waits for it, and the caller's stream
    // depends on that wait.
    if (!ipcWaiter_) ipcWaiter_ = std::make_shared<Stream>(context_, Stream::Kind::User, CU_STREAM_NON_BLOCKING, 0);
    out = ipcWaiter_->submit(
        [ipc = ipc_, latest] {
          ipc->wait(latest);
          return CUDA_SUCCESS;
        },
        {});
    return true;
  }
  auto record = current();
  if (!record) return false;
  out = record->position;
  return true;
}

CUresult Event::query() const {
  if (ipc_) return ipc_->isComplete(ipc_->latest()) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  auto record = current();
  if (!record || record->completedAt.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  return CUDA_ERROR_NOT_READY;
}

void Event::synchronize() const {
  if (ipc_) return ipc_->wait(ipc_->latest());
  if (auto record = current()) record->position.stream->waitFor(record->position.sequence);
}

int64_t Event::timestamp() const {
  auto record = current();
  return record ? record->completedAt.load(std::memory_order_acquire) : 0;
}

bool Event::everRecorded() const { return current() != nullptr; }

bool Event::recordedInCapture() const {
  std::lock_guard lock(captureMutex());
  return !captureSession.expired();
}

}  // namespace cuemu
