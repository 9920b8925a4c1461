// Events: markers recorded into a stream. An event completes when its stream reaches it; the time is taken
// then, from the host's monotonic clock.
#pragma once

#include "api/cuda_internal.h"
#include "core/handle.h"
#include "core/stream.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace cuemu {

class IpcEventState;  // core/ipc_event.h

class Event {
 public:
  static constexpr HandleKind kKind = HandleKind::Event;

  Event(Context& context, unsigned flags) : context_(context), flags_(flags) {}
  ~Event();

  Context& context() const { return context_; }
  unsigned flags() const { return flags_; }
  uint64_t handle() const { return handle_; }
  void setHandle(uint64_t handle) { handle_ = handle; }
  bool timingDisabled() const { return flags_ & CU_EVENT_DISABLE_TIMING; }

  // Records the event at the current end of `stream` (with the implicit legacy-stream dependencies).
  void record(Stream& stream);
  // The position of the latest record, if any (for cuStreamWaitEvent).
  bool position(StreamPosition& out) const;
  // CUDA_SUCCESS when complete or never recorded, CUDA_ERROR_NOT_READY otherwise.
  CUresult query() const;
  void synchronize() const;
  // Nanoseconds on the monotonic clock at completion; 0 while pending or never recorded.
  int64_t timestamp() const;
  bool everRecorded() const;

  // Stream capture (core/graph.h), guarded by captureMutex(): an event last recorded in a capturing stream
  // names that capture and the nodes the record followed; a wait on it joins the capture.
  std::weak_ptr<CaptureSession> captureSession;
  std::vector<GraphNode*> captureNodes;
  bool recordedInCapture() const;

  // Interprocess events (CU_EVENT_INTERPROCESS, or opened from another process's handle): their state is
  // shared with other processes, so queries and waits follow records made in any of them.
  void attachIpc(std::shared_ptr<IpcEventState> state) { ipc_ = std::move(state); }
  const std::shared_ptr<IpcEventState>& ipc() const { return ipc_; }

 private:
  struct Record {
    StreamPosition position;
    std::atomic<int64_t> completedAt{0};
    uint32_t ipcTicket = 0;
  };
  std::shared_ptr<Record> current() const;

  Context& context_;
  const unsigned flags_;
  uint64_t handle_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<Record> record_;
  std::shared_ptr<IpcEventState> ipc_;
  mutable std::shared_ptr<Stream> ipcWaiter_;  // runs waits for records made in other processes
};

int64_t monotonicNanoseconds();

}  // namespace cuemu
