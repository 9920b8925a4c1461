// Converting the CUstream an entry point receives into a Stream: a stream handle names its own context; the
// special values (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) name a stream of the current context.
#pragma once

#include "core/context.h"
#include "core/stream.h"

namespace cuemu {

// The default stream of the entry point running on this thread: the per-thread-default-stream forms (_ptsz,
// _ptds; status PT in generated/entries.def) run their plain form's implementation inside a scope that makes NULL,
// and the implicit stream of a synchronous call, the calling thread's per-thread stream. Every other entry point
// runs inside a scope that makes them the legacy stream, so nothing leaks from one call into a nested one.
class DefaultStreamScope {
 public:
  explicit DefaultStreamScope(bool perThread) noexcept;
  ~DefaultStreamScope();
  DefaultStreamScope(const DefaultStreamScope&) = delete;
  DefaultStreamScope& operator=(const DefaultStreamScope&) = delete;

 private:
  bool previous_;
};

// True while this thread runs a _ptsz/_ptds entry point.
bool defaultStreamIsPerThread() noexcept;

// True when `stream` names the legacy default stream in the running entry point (NULL outside a _ptsz/_ptds form,
// or CU_STREAM_LEGACY).
bool namesLegacyStream(CUstream stream) noexcept;

Expected<std::shared_ptr<Stream>> lookupStream(CUstream stream);

}  // namespace cuemu
