// Process checkpointing: cuCheckpointProcess* (core/checkpoint.h has the state machine and the service).
#include "api/impl.h"

#include "core/checkpoint.h"
#include "core/device.h"

#include <algorithm>
#include <cstring>

namespace cuemu {
namespace {

// Reserved fields must be zero (driver 580 answers CUDA_ERROR_INVALID_VALUE otherwise).
bool allZero(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  return std::all_of(p, p + bytes, [](unsigned char c) { return c == 0; });
}

}  // namespace

namespace impl {

CUresult cuCheckpointProcessGetState(int pid, CUprocessState* state) {
  if (!state) return CUDA_ERROR_INVALID_VALUE;
  int value = 0;
  CUresult r = checkpoint::send(pid, checkpoint::Request::State, 0, &value);
  if (r == CUDA_SUCCESS) *state = CUprocessState(value);
  return r;
}

CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int* tid) {
  if (!tid) return CUDA_ERROR_INVALID_VALUE;
  return checkpoint::send(pid, checkpoint::Request::RestoreThread, 0, tid);
}

CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs* args) {
  if (args && (args->reserved0 || !allZero(args->reserved1, sizeof args->reserved1))) return CUDA_ERROR_INVALID_VALUE;
  return checkpoint::send(pid, checkpoint::Request::Lock, args ? args->timeoutMs : 0, nullptr);
}

CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs* args) {
  if (args && !allZero(args->reserved, sizeof args->reserved)) return CUDA_ERROR_INVALID_VALUE;
  return checkpoint::send(pid, checkpoint::Request::Checkpoint, 0, nullptr);
}

// Restoring onto other GPUs (gpuPairs) maps each device to one of the same kind; the emulated devices restore
// onto themselves only, so a pair must name one device twice.
CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs* args) {
  if (args) {
    if (!allZero(args->reserved, sizeof args->reserved) || args->reserved1) return CUDA_ERROR_INVALID_VALUE;
    if (args->gpuPairsCount && !args->gpuPairs) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < args->gpuPairsCount; ++i)
      if (std::memcmp(&args->gpuPairs[i].oldUuid, &args->gpuPairs[i].newUuid, sizeof(CUuuid)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
  }
  return checkpoint::send(pid, checkpoint::Request::Restore, 0, nullptr);
}

CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs* args) {
  if (args && !allZero(args->reserved, sizeof args->reserved)) return CUDA_ERROR_INVALID_VALUE;
  return checkpoint::send(pid, checkpoint::Request::Unlock, 0, nullptr);
}

}  // namespace impl
}  // namespace cuemu
