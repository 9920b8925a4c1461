// The cross-process half of an interprocess event (CU_EVENT_INTERPROCESS). Its state is a slot in a small
// memfd shared between the exporting process and every process that opened the handle: a record takes a
// ticket, the stream marker completes it, and any process can query, wait for (a futex on the shared word)
// or record the event. The slot names the latest record of whichever process made it.
#pragma once

#include "api/cuda_internal.h"
#include "core/result.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace cuemu {

class IpcEventState {
 public:
  // A fresh slot in this process's shared event file (cuEventCreate with CU_EVENT_INTERPROCESS).
  static Expected<std::shared_ptr<IpcEventState>> create();
  // The slot another process exported (cuIpcOpenEventHandle). CUDA_ERROR_INVALID_VALUE for a malformed handle
  // or an exporter that is gone.
  static Expected<std::shared_ptr<IpcEventState>> open(const CUipcEventHandle& handle);

  ~IpcEventState();
  IpcEventState(const IpcEventState&) = delete;
  IpcEventState& operator=(const IpcEventState&) = delete;

  void exportHandle(CUipcEventHandle& out) const;

  // A new record: returns its ticket, which becomes the event's latest record.
  uint32_t beginRecord();
  // The record `ticket` reached its place in the stream.
  void complete(uint32_t ticket);
  // The latest record's ticket (0: never recorded).
  uint32_t latest() const { return slot_->recorded.load(std::memory_order_acquire); }
  bool isComplete(uint32_t ticket) const {
    return static_cast<int32_t>(slot_->completed.load(std::memory_order_acquire) - ticket) >= 0;
  }
  // Blocks (without spinning) until `ticket` completed, in whichever process records it.
  void wait(uint32_t ticket) const;

  struct Slot {
    std::atomic<uint32_t> recorded;
    std::atomic<uint32_t> completed;  // the highest completed ticket (a futex word)
    std::atomic<uint32_t> generation;
    std::atomic<uint32_t> inUse;
  };

 private:
  IpcEventState(Slot* slot, uint32_t index, bool owner) : slot_(slot), index_(index), owner_(owner) {}

  Slot* slot_;
  uint32_t index_;
  bool owner_;  // the exporting process's own slot: freed with the event
};

}  // namespace cuemu
