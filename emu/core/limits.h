// The driver's own limits: numbers that bound what the API accepts or how cuemu lays things out, and that are not
// device attributes (those are per profile in core/device_attributes.def). One definition each; where a number was
// measured on NVIDIA's driver, the comment says where. The PTX front end (ptx-interp, which does not depend on
// emu/) checks kernel parameter space itself with the same numbers (src/front/checker.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuemu::limits {

// Virtual devices (CUEMU_DEVICE_COUNT, CUEMU_DEVICE_MEMORY, CUEMU_SM_COUNT accept values in these ranges).
inline constexpr int kMaxDevices = 64;
inline constexpr uint64_t kMinDeviceMemory = 64ull << 20;
inline constexpr uint64_t kMaxDeviceMemory = 1ull << 48;  // what a 48-bit device address space can hold
inline constexpr int kMaxSmCount = 1024;

// cuMemAllocPitch rounds each row up to this many bytes (driver 580, both API versions).
inline constexpr size_t kPitchAlignment = 512;

// Kernel parameter space, in bytes, of the legacy cuParamSet* calls (PTX 8.1 and later on sm_70+).
inline constexpr size_t kMaxKernelParamBytes = 32764;

// Clusters: blocks of a cluster run on distinct SMs of one GPC. A profile lists its GPCs (DeviceProfile::gpcSms);
// one without such a list (or with a configured SM count) has GPCs of this many SMs and one of the rest.
inline constexpr int kSmsPerGpc = 16;
inline constexpr int kPortableClusterSize = 8;
// Blocks of clusters one SM holds at once: an H200 counts no more active clusters with 16 blocks per SM than with 8
// (tools/gpu-probe/results/occupancy29-h200-2026-11-28.txt).
inline constexpr int kMaxClusterBlocksPerSm = 8;
inline constexpr int kNonPortableClusterSize = 16;

// What cuCtxSetLimit does with out-of-range values on an H100, driver 580
// (tools/gpu-probe/results/reliability24-h100-2026-11-26.txt): the stack size is rounded up to 16 bytes and refused
// (CUDA_ERROR_INVALID_VALUE, the limit unchanged) from 512 KiB on (64 KiB is accepted; the exact bound between is
// not measured); the heap and the printf FIFO are clamped silently, the heap to a share of the device's memory
// (17,681,179,680 bytes of an 85,017,493,504-byte H100) and to at least 4 MiB, the FIFO to 512 KiB .. 2 GiB.
inline constexpr size_t kStackGranularity = 16;
inline constexpr size_t kMaxStackSize = 512 * 1024;
inline constexpr size_t kMinMallocHeapSize = 4 * 1024 * 1024;
inline constexpr double kMaxMallocHeapShare = 17681179680.0 / 85017493504.0;
inline constexpr size_t kMinPrintfFifoSize = 512 * 1024;
inline constexpr size_t kMaxPrintfFifoSize = size_t(2) << 30;

}  // namespace cuemu::limits
