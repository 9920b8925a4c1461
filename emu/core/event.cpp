#include "core/event.h"

#include "core/context.h"
#include "core/graph.h"

#include <chrono>

namespace cuemu {

HandleTable<Event>& eventTable() {
  static auto* table = new HandleTable<Event>;
  return *table;
}

int64_t monotonicNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Event::record(Stream& stream) {
  auto record = std::make_shared<Record>();
  {
    std::lock_guard lock(mutex_);
    record_ = record;
  }
  // The marker only touches its own record, so re-recording the event later is independent of it.
  record->position = stream.context().streams().submit(stream, [record] {
    record->completedAt.store(monotonicNanoseconds(), std::memory_order_release);
    return CUDA_SUCCESS;
  });
}

std::shared_ptr<Event::Record> Event::current() const {
  std::lock_guard lock(mutex_);
  return record_;
}

bool Event::position(StreamPosition& out) const {
  auto record = current();
  if (!record) return false;
  out = record->position;
  return true;
}

CUresult Event::query() const {
  auto record = current();
  if (!record || record->completedAt.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  return CUDA_ERROR_NOT_READY;
}

void Event::synchronize() const {
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
