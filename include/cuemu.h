/*
 * cuemu.h: cuemu's own extensions to the CUDA driver API.
 *
 * cuemu's libcuda.so.1 exports these functions in addition to the driver API; NVIDIA's driver does not.
 * A program that must also run on a real GPU looks them up at run time instead of linking them:
 *
 *     #include <dlfcn.h>
 *     #include <cuemu.h>
 *     PFN_cuemuSetDeterministic set =
 *         (PFN_cuemuSetDeterministic)dlsym(RTLD_DEFAULT, "cuemuSetDeterministic");
 *     if (set) set(1);   // running on cuemu: make every run reproducible
 *
 * Finding "cuemuSetDeterministic" is also how a program tells that it runs on cuemu.
 * Every function works before cuInit and returns CUresult codes of the driver API.
 * The header compiles on its own as C (C99) and C++.
 */
#ifndef CUEMU_H
#define CUEMU_H

#include "cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Deterministic mode: all stream work runs on the thread that submits it, in program order, and every grid
 * runs its CTAs and warps in one fixed order, so that results, float atomics included, are identical from run
 * to run (CUEMU_SCHEDULE_SEED picks another reproducible order). The environment variable
 * CUEMU_DETERMINISTIC=1 turns it on for the whole process; these calls read and change it at run time.
 *
 * cuemuSetDeterministic(enabled): enabled is 1 (on) or 0 (off); any other value is CUDA_ERROR_INVALID_VALUE.
 * The mode is process-wide. Switching is safe while work is in flight: the call first waits for all work
 * already submitted to every stream of every context (as cuCtxSynchronize would, but it does not report a
 * kernel fault: that stays with the context), then switches; work submitted afterwards runs in the new mode.
 * Work that another thread submits while the call waits still runs after the earlier work of its stream.
 * Like any driver call, it must not be made from a stream callback or a host node (it would wait for itself).
 * Returns CUDA_SUCCESS.
 *
 * cuemuGetDeterministic(enabled): stores 1 or 0 in *enabled (the environment variable's setting until
 * cuemuSetDeterministic is called). CUDA_ERROR_INVALID_VALUE for a NULL pointer.
 */
CUresult CUDAAPI cuemuSetDeterministic(int enabled);
CUresult CUDAAPI cuemuGetDeterministic(int *enabled);

typedef CUresult(CUDAAPI *PFN_cuemuSetDeterministic)(int enabled);
typedef CUresult(CUDAAPI *PFN_cuemuGetDeterministic)(int *enabled);

/*
 * cuemuGetVersion(major, minor, patch): cuemu's own version (the CUDA driver version it emulates is what
 * cuDriverGetVersion answers). Each pointer may be NULL; CUDA_SUCCESS.
 */
CUresult CUDAAPI cuemuGetVersion(int* major, int* minor, int* patch);

typedef CUresult(CUDAAPI* PFN_cuemuGetVersion)(int* major, int* minor, int* patch);

/*
 * cuemuDeviceGetMemoryInfo(free, total, dev): device memory of device dev as cuMemGetInfo reports it for a context
 * on that device (total: the device's capacity; free: what this process has not allocated of it), without needing
 * a context. Each pointer may be NULL. CUDA_ERROR_NOT_INITIALIZED before cuInit, CUDA_ERROR_INVALID_DEVICE for an
 * ordinal that is not a device. cuemu's NVML (libnvidia-ml.so.1) answers nvmlDeviceGetMemoryInfo with it.
 */
CUresult CUDAAPI cuemuDeviceGetMemoryInfo(size_t* free, size_t* total, CUdevice dev);

/*
 * cuemuDeviceGetPcieLink(generation, width, dev): the PCI Express link the device's profile describes (for an H100
 * SXM5, generation 5 and 16 lanes). CUDA_ERROR_NOT_SUPPORTED for a profile without a PCIe link (an integrated part
 * such as GB10); errors otherwise as cuemuDeviceGetMemoryInfo's.
 */
CUresult CUDAAPI cuemuDeviceGetPcieLink(int* generation, int* width, CUdevice dev);

typedef CUresult(CUDAAPI* PFN_cuemuDeviceGetMemoryInfo)(size_t* free, size_t* total, CUdevice dev);
typedef CUresult(CUDAAPI* PFN_cuemuDeviceGetPcieLink)(int* generation, int* width, CUdevice dev);

#ifdef __cplusplus
}
#endif

#endif /* CUEMU_H */
