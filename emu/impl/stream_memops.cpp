// Stream memory operations: waiting for and writing 32/64-bit values in device-accessible memory, in stream
// order. A wait blocks only its stream's worker (with backoff), as a GPU front end would.
#include "api/impl.h"

#include "core/address_space.h"
#include "core/context.h"
#include "core/memory.h"
#include "core/polled_words.h"
#include "core/stream.h"
#include "core/stream_lookup.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace cuemu {
namespace {

constexpr unsigned kWaitConditionMask =
    CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_EQ | CU_STREAM_WAIT_VALUE_AND | CU_STREAM_WAIT_VALUE_NOR;

struct MemOp {
  bool wait;
  bool wide;
  uint64_t address;
  uint64_t value;
  unsigned flags;
};

// Checks `op` and holds the memory it touches until it has run (RegionLease): a free or a context's destruction on
// another thread meanwhile leaves the cell mapped instead of unmapping it under the stream's worker.
CUresult validate(const MemOp& op, std::vector<RegionLease>& leases) {
  unsigned size = op.wide ? 8 : 4;
  if (!op.address || op.address % size) return CUDA_ERROR_INVALID_VALUE;
  AddressSpace& space = AddressSpace::instance();
  if (!space.isAccessible(op.address, size)) return CUDA_ERROR_INVALID_VALUE;
  if (RegionPtr region = space.find(op.address)) {
    // Registered host memory the application has unmapped (or registered read-only, for a write) since.
    if (!registeredHostUsable(*region, op.address, size, !op.wait)) return CUDA_ERROR_INVALID_VALUE;
    RegionLease lease(std::move(region));
    if (!lease.valid()) return CUDA_ERROR_INVALID_VALUE;  // freed since isAccessible
    leases.push_back(std::move(lease));
  }
  if (op.wait && (op.flags & ~unsigned(kWaitConditionMask | CU_STREAM_WAIT_VALUE_FLUSH)))
    return CUDA_ERROR_INVALID_VALUE;
  if (op.wait && (op.flags & kWaitConditionMask) > CU_STREAM_WAIT_VALUE_NOR) return CUDA_ERROR_INVALID_VALUE;
  if (!op.wait && (op.flags & ~unsigned(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER))) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

template <typename T> bool satisfied(T current, T value, unsigned condition) {
  switch (condition) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return static_cast<std::make_signed_t<T>>(current - value) >= 0;  // wraps, as documented
    case CU_STREAM_WAIT_VALUE_EQ: return current == value;
    case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return ~(current | value) != 0;
  }
  return true;
}

template <typename T> void run(const MemOp& op) {
  std::atomic_ref<T> cell(*reinterpret_cast<T*>(op.address));
  if (!op.wait) {
    cell.store(static_cast<T>(op.value), std::memory_order_seq_cst);
    return;
  }
  unsigned condition = op.flags & kWaitConditionMask;
  PolledWord polled(op.address, sizeof(T));  // host copies and fills store this word atomically meanwhile
  for (unsigned spins = 0; !satisfied<T>(cell.load(std::memory_order_acquire), static_cast<T>(op.value), condition);
       ++spins) {
    if (spins < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

CUresult submit(CUstream handle, std::vector<MemOp> ops) {
  std::vector<RegionLease> leases;
  for (const auto& op : ops)
    if (CUresult r = validate(op, leases)) return r;
  auto stream = lookupStream(handle);
  if (!stream) return stream.error().code;
  return enqueueWork(
      **stream,
      [ops = std::move(ops), leases = std::move(leases)] {
        for (const auto& op : ops) op.wide ? run<uint64_t>(op) : run<uint32_t>(op);
        return CUDA_SUCCESS;
      },
      CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
}

CUresult batch(CUstream handle, unsigned count, CUstreamBatchMemOpParams* params, unsigned flags) {
  if (flags != 0 || (count && !params) || count > 256) return CUDA_ERROR_INVALID_VALUE;
  std::vector<MemOp> ops;
  for (unsigned i = 0; i < count; ++i) {
    const auto& p = params[i];
    switch (p.operation) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64: {
        bool wide = p.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
        ops.push_back(
            {true, wide, p.waitValue.address, wide ? p.waitValue.value64 : p.waitValue.value, p.waitValue.flags});
        break;
      }
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      case CU_STREAM_MEM_OP_WRITE_VALUE_64: {
        bool wide = p.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
        ops.push_back(
            {false, wide, p.writeValue.address, wide ? p.writeValue.value64 : p.writeValue.value, p.writeValue.flags});
        break;
      }
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      case CU_STREAM_MEM_OP_BARRIER: break;  // host and device share coherent memory
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return submit(handle, std::move(ops));
}

}  // namespace

namespace impl {

#define CUEMU_MEMOP(name, type, isWait, isWide)                                      \
  CUresult name(CUstream stream, CUdeviceptr addr, type value, unsigned int flags) { \
    return submit(stream, {MemOp{isWait, isWide, addr, uint64_t(value), flags}});    \
  }
CUEMU_MEMOP(cuStreamWaitValue32, cuuint32_t, true, false)
CUEMU_MEMOP(cuStreamWaitValue32_v2, cuuint32_t, true, false)
CUEMU_MEMOP(cuStreamWaitValue64, cuuint64_t, true, true)
CUEMU_MEMOP(cuStreamWaitValue64_v2, cuuint64_t, true, true)
CUEMU_MEMOP(cuStreamWriteValue32, cuuint32_t, false, false)
CUEMU_MEMOP(cuStreamWriteValue32_v2, cuuint32_t, false, false)
CUEMU_MEMOP(cuStreamWriteValue64, cuuint64_t, false, true)
CUEMU_MEMOP(cuStreamWriteValue64_v2, cuuint64_t, false, true)
#undef CUEMU_MEMOP

CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                            unsigned int flags) {
  return batch(stream, count, paramArray, flags);
}
CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams* paramArray,
                               unsigned int flags) {
  return batch(stream, count, paramArray, flags);
}

}  // namespace impl
}  // namespace cuemu
