// Converting the CUstream an entry point receives into a Stream: a stream handle names its own context; the
// special values (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) name a stream of the current context.
#pragma once

#include "core/context.h"
#include "core/stream.h"

namespace cuemu {

// `perThreadDefault` is set by the _ptsz/_ptds entry points: there NULL means the per-thread stream.
Expected<std::shared_ptr<Stream>> lookupStream(CUstream stream, bool perThreadDefault = false);

}  // namespace cuemu
