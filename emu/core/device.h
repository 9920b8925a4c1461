// Virtual devices: the emulated GPUs, each described by a profile. Every CU_DEVICE_ATTRIBUTE_* answer comes
// from one table (core/device_attributes.def) evaluated against the profile.
#pragma once

#include "api/cuda_internal.h"
#include "core/result.h"
#include "ptx/exec.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cuemu {

class Context;

// What a virtual GPU reports. The defaults describe an H100 (SXM5): the hardware numbers a Hopper part
// answers on NVIDIA's driver (recorded on an H200, emu/api/recorded/), adjusted to the H100's SM count,
// clocks and L2. Attributes that are the same for every Hopper part are constants in the attribute table.
struct DeviceProfile {
  std::string profileName = "h100";
  std::string name = "cuemu virtual H100";
  int ccMajor = 9;
  int ccMinor = 0;
  int smCount = 132;
  int clockRateKHz = 1980000;
  int memoryClockRateKHz = 2619000;
  int memoryBusWidthBits = 5120;
  int l2CacheBytes = 50 * 1024 * 1024;
  uint64_t totalMemory = 0;  // bytes; 0 = chosen by the configuration (a share of host RAM)

  int maxThreadsPerBlock = 1024;
  int maxBlockDim[3] = {1024, 1024, 64};
  int maxGridDim[3] = {2147483647, 65535, 65535};
  int warpSize = 32;
  int maxThreadsPerSm = 2048;
  int maxBlocksPerSm = 32;
  int registersPerBlock = 65536;
  int registersPerSm = 65536;
  int sharedMemPerBlock = 48 * 1024;        // static limit
  int sharedMemPerBlockOptin = 227 * 1024;  // with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  int sharedMemPerSm = 228 * 1024;
  int reservedSharedMemPerBlock = int(ptx::exec::kReservedSharedBytes);  // the driver's in every block
  int totalConstantMemory = 64 * 1024;
  int asyncEngineCount = 3;
  int singleToDoublePerfRatio = 2;
  int memSyncDomainCount = 4;
  int maxAccessPolicyWindowBytes = 128 * 1024 * 1024;
  // The PCI Express link (NVML reports it; XLA sizes host transfers by it): an H100 SXM5 is a Gen5 x16 device.
  // Generation 0: no PCIe link (an integrated GPU).
  int pcieGeneration = 5;
  int pcieWidth = 16;
  uint16_t pciDeviceId = 0x2330;  // the PCI ids an H100 SXM5 80GB reports
  uint16_t pciSubsystemId = 0x16c1;
  bool peerAccess = true;  // virtual devices share the host's memory: peer access between them always works
  // CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: 1 on the H100 (driver 580), 0 on the H200 the attributes
  // were recorded on. Compressible memory behaves as any other here; cuMemCreate reports what it granted.
  bool genericCompression = true;
  // The SMs of each GPC, as NVIDIA's occupancy calculator counts them for clusters (whose blocks run on distinct
  // SMs of one GPC): the default is what an H200 answers (every one of 104 cluster sizes and blocks-per-SM counts,
  // tools/gpu-probe/results/occupancy29-h200-2026-11-28.txt, fits these 12 groups of 18, 18, 16 x 5, 8 and 2 x 4
  // SMs). The H100 profile shares it: the same die with the same 132 SMs, though which SMs a chip has fused off
  // varies from chip to chip. Empty, or not adding up to smCount (a configured SM count): GPCs of
  // limits::kSmsPerGpc SMs and one of the rest (gpcLayout()).
  std::vector<int> gpcSms = {18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2};

  // The largest L2 set-aside for persisting accesses, and the set-aside a new context starts with (the
  // fractions of L2 that NVIDIA's driver reports on Hopper).
  int maxPersistingL2Bytes() const { return static_cast<int>(int64_t(l2CacheBytes) * 5 / 8); }
  int defaultPersistingL2Bytes() const { return static_cast<int>(int64_t(l2CacheBytes) * 3 / 16); }

  // The GPCs' SM counts cluster occupancy is computed from: gpcSms, or the uniform layout where it does not fit.
  std::vector<int> gpcLayout() const;

  // Checks internal consistency (a hand-made override can break it); the message names the field.
  Expected<bool> validate() const;
};

// Names of the built-in profiles, and the profile for a name (case-insensitive).
std::vector<std::string> builtinProfileNames();
Expected<DeviceProfile> builtinProfile(std::string_view name);

class Device {
 public:
  Device(int ordinal, DeviceProfile profile);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return ordinal_; }
  const DeviceProfile& profile() const { return profile_; }
  const std::string& name() const { return profile_.name; }
  uint64_t totalMemory() const { return profile_.totalMemory; }
  const CUuuid& uuid() const { return uuid_; }
  int pciDomainId() const { return 0; }
  int pciBusId() const { return ordinal_ + 1; }  // distinct per device, stable
  int pciDeviceId() const { return 0; }
  // "dddd:bb:dd.f", the form cuDeviceGetPCIBusId writes.
  std::string pciBusIdString() const;

  // Value of a device attribute, or CUDA_ERROR_INVALID_VALUE for a number the table does not know.
  CUresult attribute(int attribute, int& value) const;

  // The device's primary context. The object and its handle exist from the first request until the process
  // ends ("inactive" while nobody retains it); the CUDA runtime asks for the handle before retaining it.
  std::shared_ptr<Context> primaryContext();
  // cuDevicePrimaryCtxRetain: activates the context on the first retain (creating fresh state after a
  // release to zero or a reset).
  std::shared_ptr<Context> retainPrimary();
  // cuDevicePrimaryCtxRelease: on the last release the context and everything it owns is destroyed (the
  // handle stays). CUDA_ERROR_INVALID_CONTEXT when nothing is retained.
  CUresult releasePrimary();
  // cuDevicePrimaryCtxReset: destroys everything the primary context owns and makes it inactive, whatever
  // its retain count; the count itself is kept (as driver 580 does); flags go back to the default.
  void resetPrimary();
  // cuDevicePrimaryCtxGetState.
  void primaryState(unsigned& flags, bool& active);
  // cuDevicePrimaryCtxSetFlags(_v2): `whileActive` = false gives the legacy answer
  // CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE for an active context.
  CUresult setPrimaryFlags(unsigned flags, bool whileActive);

 private:
  std::shared_ptr<Context> primaryLocked();

  int ordinal_;
  DeviceProfile profile_;
  CUuuid uuid_{};
  std::mutex primaryMutex_;
  std::shared_ptr<Context> primary_;
  unsigned primaryRetains_ = 0;
};

// The configured devices; empty before cuInit.
const std::vector<Device*>& devices();
// The device with this ordinal, or null.
Device* deviceByOrdinal(CUdevice ordinal);
// The device with this ordinal, or CUDA_ERROR_INVALID_DEVICE.
Expected<Device*> requireDevice(CUdevice ordinal);

// Builds the virtual devices from the configuration (core/config.h). Fails with a message on an invalid
// configuration. Devices are created once per process; later calls only report the first outcome.
Expected<bool> createDevices();

// Context flags a caller may pass (cuCtxCreate, primary-context and cuCtxSetFlags): known bits, at most
// one scheduling policy.
bool validContextFlags(unsigned flags);

}  // namespace cuemu
