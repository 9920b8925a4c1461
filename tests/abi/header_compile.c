/* Compiled as strict C99 in each configuration: our headers must need nothing beyond them. */
#include <cuemu.h> /* first: cuemu's extension header must stand on its own */
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

#include <stddef.h>

size_t HEADER_COMPILE_ENTRY(void);

/* Uses a few declarations so that the compiler checks more than the syntax. */
size_t HEADER_COMPILE_ENTRY(void)
{
    PFN_cuInit_v2000 init = &cuInit;
    CUDA_MEMCPY2D copy;
    copy.srcXInBytes = 0;
    return sizeof(CUtensorMap) + sizeof(copy) + (init != NULL) + (size_t)CU_MEMHOSTALLOC_DEVICEMAP +
           sizeof(PFN_cuemuSetDeterministic);
}
