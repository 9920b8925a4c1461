/* Stand-in for libvdpau's <vdpau/vdpau.h> where libvdpau-dev is not installed (found after the
 * system headers, so the real one wins): only the names cudaVDPAU.h needs, so that NVIDIA's and our
 * cudaVDPAU.h can both be compiled by the ABI test. */
#ifndef CUEMU_VDPAU_STANDIN
#define CUEMU_VDPAU_STANDIN
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, uint32_t function_id, void** function_pointer);
#endif
