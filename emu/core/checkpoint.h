// Process checkpointing (cuCheckpointProcess*): one process (the coordinator, e.g. cuda-checkpoint or CRIU) locks,
// checkpoints, restores and unlocks another process's CUDA state through the driver. cuemu's device memory is the
// process's own host memory, so a checkpoint keeps it where it is; what remains is the state machine as driver 580
// runs it (measured on an H100: tools/gpu-probe/results/clients17c-h100-2026-11-26.txt, part ckpt):
//   RUNNING --lock--> LOCKED --checkpoint--> CHECKPOINTED --restore--> LOCKED --unlock--> RUNNING
// Any other transition is CUDA_ERROR_ILLEGAL_STATE. A lock blocks the target's further driver calls and waits for
// its submitted work (CUDA_ERROR_NOT_READY when that outlasts the lock's timeout; the process stays RUNNING).
// Each initialised process serves requests on a thread of its own (its "restore thread") listening on the
// abstract Unix socket cuemu-checkpoint-<pid>; only processes of the same user may connect.
#pragma once

#include "api/cuda_internal.h"

#include <atomic>
#include <cstdint>

namespace cuemu::checkpoint {

enum class Request : uint32_t { State, RestoreThread, Lock, Checkpoint, Restore, Unlock };

// Target side. Starts the service thread (cuInit; once per process).
void startService();
// Every driver call but the checkpoint entry points passes here: it waits while a coordinator holds the process
// locked (one relaxed load otherwise).
extern std::atomic<bool> g_locked;
void waitWhileLockedSlow();
inline void waitWhileLocked() {
  if (g_locked.load(std::memory_order_relaxed)) [[unlikely]]
    waitWhileLockedSlow();
}

// Coordinator side: sends `request` to process `pid` and returns its answer (`value`: the state or thread id).
// No such process (or pid <= 0): CUDA_ERROR_OPERATING_SYSTEM; a process without an initialised driver:
// CUDA_ERROR_NOT_INITIALIZED (both as driver 580 answers).
CUresult send(int pid, Request request, uint32_t timeoutMs, int* value);

}  // namespace cuemu::checkpoint
