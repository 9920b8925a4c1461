// Compiled as strict C++20 in each configuration: our headers must need nothing beyond them.
#include <cuemu.h>  // first: cuemu's extension header must stand on its own
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h>
#include <cudaVDPAUTypedefs.h>
#if defined(__has_include)
#if __has_include(<GL/gl.h>)
#include <cudaGLTypedefs.h>
#endif
#if __has_include(<EGL/eglext.h>)
#include <cudaEGLTypedefs.h>
#endif
#endif

#include <cstddef>

extern "C" std::size_t HEADER_COMPILE_ENTRY(void);

extern "C" std::size_t HEADER_COMPILE_ENTRY(void) {
  PFN_cuInit_v2000 init = &cuInit;
  CUDA_MEMCPY2D copy{};
  static_assert(alignof(CUtensorMap) == 128, "C++ sees the tensor map's alignment");
  return sizeof(CUtensorMap) + sizeof(copy) + (init != nullptr) + std::size_t{CU_MEMHOSTALLOC_DEVICEMAP} +
         sizeof(PFN_cuemuSetDeterministic);
}
