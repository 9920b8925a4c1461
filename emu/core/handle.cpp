#include "core/handle.h"

#include "core/log.h"

#include <sys/mman.h>

namespace cuemu {

uint64_t HandleBits::base() {
  // Reserved on first use (no static constructors), never released: handles may be looked at during exit.
  static const uint64_t reserved = [] {
    void* p = mmap(nullptr, kRangeBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      CUEMU_ERROR("cannot reserve {} GiB of address space for handles: every object creation will fail",
                  kRangeBytes >> 30);
      return uint64_t(0);
    }
    return reinterpret_cast<uint64_t>(p);
  }();
  return reserved;
}

const char* handleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::Context: return "ctx";
    case HandleKind::Module: return "module";
    case HandleKind::Function: return "func";
    case HandleKind::Stream: return "stream";
    case HandleKind::Event: return "event";
    case HandleKind::Library: return "library";
    case HandleKind::Kernel: return "kernel";
    case HandleKind::LinkState: return "link";
    case HandleKind::Array: return "array";
    case HandleKind::MipmappedArray: return "mipmap";
    case HandleKind::MemPool: return "mempool";
    case HandleKind::Graph: return "graph";
    case HandleKind::GraphNode: return "graphnode";
    case HandleKind::GraphExec: return "graphexec";
    case HandleKind::TexObject: return "tex";
    case HandleKind::SurfObject: return "surf";
    case HandleKind::UserObject: return "userobj";
    case HandleKind::GreenContext: return "greenctx";
    case HandleKind::ExternalMemory: return "extmem";
    case HandleKind::ExternalSemaphore: return "extsem";
    case HandleKind::GraphicsResource: return "gfxres";
    case HandleKind::MemGenericAllocation: return "memhandle";
    case HandleKind::DevResourceDesc: return "devres";
    case HandleKind::LogsCallback: return "logcb";
    case HandleKind::Count: break;
  }
  return "handle";
}

}  // namespace cuemu
