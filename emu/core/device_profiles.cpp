// The built-in device profiles (`cuemu devices`) and the checks of a profile: the facts of each virtual GPU, kept
// apart from the devices themselves so that code that only needs the facts (the fatbinary rules' advice, the fuzz
// build of the image parsers) does not bring in the driver.
#include "core/device.h"
#include "core/limits.h"

#include <fmt/format.h>

#include <cctype>

namespace cuemu {
namespace {

DeviceProfile h200Profile() {
  DeviceProfile p;
  p.profileName = "h200";
  p.name = "cuemu virtual H200";
  p.genericCompression = false;
  p.memoryClockRateKHz = 3201000;
  p.memoryBusWidthBits = 6016;
  p.l2CacheBytes = 60 * 1024 * 1024;
  p.pciDeviceId = 0x2335;
  p.pciSubsystemId = 0x18bf;
  return p;
}

// Compute capability 12.x (Blackwell workstation/desktop SM). The per-SM limits are the CUDA C++ Programming
// Guide's "Technical Specifications per Compute Capability" values for 12.x, which differ from Hopper's: 1536
// resident threads (48 warps) per SM, a 128 KB unified data cache of which shared memory takes at most 100 KB,
// 99 KB of it for one block after the opt-in, 1 KB reserved per block; 64 K registers per SM and per block,
// 32 resident blocks per SM. The GeForce/workstation parts run FP64 at 1/64 of FP32 (Blackwell tuning guide).
DeviceProfile computeCapability12Profile() {
  DeviceProfile p;
  p.ccMajor = 12;
  p.genericCompression = false;  // not measured on a compute capability 12 part
  p.maxThreadsPerSm = 1536;
  p.maxBlocksPerSm = 32;
  p.sharedMemPerSm = 100 * 1024;
  p.sharedMemPerBlockOptin = 99 * 1024;
  p.singleToDoublePerfRatio = 64;
  p.asyncEngineCount = 2;  // the copy engines GeForce/RTX Blackwell boards report (deviceQuery: 2 copy engines)
  p.gpcSms.clear();        // not measured on a compute capability 12 part: the uniform layout
  return p;
}

// RTX PRO 6000 Blackwell (Workstation Edition, GB202, compute capability 12.0). NVIDIA's product page and
// datasheet: 188 SMs (24,064 CUDA cores at 128 per SM), boost clock 2617 MHz, 96 GB GDDR7 on a 512-bit bus at
// 28 Gbps (1792 GB/s; the driver reports GDDR7's clock as half the data rate, 14 GHz), 128 MB of L2, PCI Express 5.0
// x16. PCI device id 0x2bb1 from the PCI ID database (its subsystem id is the board vendor's: 0 here, as no board is
// modelled).
DeviceProfile rtxPro6000Profile() {
  DeviceProfile p = computeCapability12Profile();
  p.profileName = "rtx-pro-6000";
  p.name = "cuemu virtual RTX PRO 6000 Blackwell";
  p.ccMinor = 0;
  p.smCount = 188;
  p.clockRateKHz = 2617000;
  p.memoryClockRateKHz = 14001000;
  p.memoryBusWidthBits = 512;
  p.l2CacheBytes = 128 * 1024 * 1024;
  p.pciDeviceId = 0x2bb1;
  p.pciSubsystemId = 0;
  return p;
}

// GB10 (the GPU of DGX Spark, compute capability 12.1). NVIDIA's DGX Spark specifications: a Blackwell GPU with
// 6,144 CUDA cores (48 SMs at 128 per SM) sharing 128 GB of LPDDR5x with the Grace CPU over a 256-bit interface
// at 8533 MT/s (273 GB/s; the driver reports half the data rate as the memory clock); 24 MB of L2 and a boost
// clock of 2418 MHz (TechPowerUp's GB10 entry; NVIDIA publishes no figure). The real part is integrated with
// coherent host memory; the virtual one keeps cuemu's discrete memory model (INTEGRATED = 0), which every
// program written for a discrete GPU also handles. PCI device id 0x2e12 (PCI ID database).
DeviceProfile gb10Profile() {
  DeviceProfile p = computeCapability12Profile();
  p.profileName = "gb10";
  p.name = "cuemu virtual GB10";
  p.ccMinor = 1;
  p.smCount = 48;
  p.clockRateKHz = 2418000;
  p.memoryClockRateKHz = 4266000;
  p.memoryBusWidthBits = 256;
  p.l2CacheBytes = 24 * 1024 * 1024;
  p.pciDeviceId = 0x2e12;
  p.pciSubsystemId = 0;
  // Its GPU reaches the CPU over NVLink-C2C; what NVML reports for a PCIe link there is not documented or
  // measured, so the virtual part has none (NVML answers NOT_SUPPORTED).
  p.pcieGeneration = 0;
  p.pcieWidth = 0;
  return p;
}

// L4 (AD104, compute capability 8.9: Ada), the data-centre GPU of many cloud CI machines. Per-SM limits from the CUDA
// C++ Programming Guide's table for 8.9: 1536 resident threads and 24 blocks per SM, 64K registers, 100 KB of shared
// memory per SM of which 99 KB for one block after the opt-in, 1 KB reserved per block; FP64 at 1/64 of FP32. NVIDIA's
// L4 datasheet: 7,424 CUDA cores (58 SMs at 128 per SM), 24 GB GDDR6 on a 192-bit bus at 300 GB/s (12.5 Gbps; the
// driver reports half the data rate as the memory clock), boost clock 2040 MHz, PCI Express 4.0 x16; 48 MB of L2
// (AD104's). PCI device id 0x27b8 (PCI ID database). No clusters or tensor maps (compute capability 9 features: the
// attribute table answers 0 for them), two copy engines.
DeviceProfile l4Profile() {
  DeviceProfile p;
  p.profileName = "l4";
  p.name = "cuemu virtual L4";
  p.ccMajor = 8;
  p.ccMinor = 9;
  p.smCount = 58;
  p.clockRateKHz = 2040000;
  p.memoryClockRateKHz = 6251000;
  p.memoryBusWidthBits = 192;
  p.l2CacheBytes = 48 * 1024 * 1024;
  p.maxThreadsPerSm = 1536;
  p.maxBlocksPerSm = 24;
  p.sharedMemPerSm = 100 * 1024;
  p.sharedMemPerBlockOptin = 99 * 1024;
  p.singleToDoublePerfRatio = 64;
  p.asyncEngineCount = 2;
  p.memSyncDomainCount = 1;  // memory synchronization domains are a compute capability 9 feature
  p.gpcSms.clear();
  p.genericCompression = false;
  p.pcieGeneration = 4;
  p.pciDeviceId = 0x27b8;
  p.pciSubsystemId = 0;
  return p;
}

}  // namespace

std::vector<int> DeviceProfile::gpcLayout() const {
  int sum = 0;
  for (int s : gpcSms) sum += s;
  if (!gpcSms.empty() && sum == smCount) return gpcSms;
  std::vector<int> uniform(size_t(smCount / limits::kSmsPerGpc), limits::kSmsPerGpc);
  if (smCount % limits::kSmsPerGpc) uniform.push_back(smCount % limits::kSmsPerGpc);
  return uniform;
}

Expected<bool> DeviceProfile::validate() const {
  auto fail = [](std::string message) -> Expected<bool> {
    return makeError(CUDA_ERROR_INVALID_VALUE, std::move(message));
  };
  if (name.empty()) return fail("the device name is empty");
  if (ccMajor < 1 || ccMinor < 0 || ccMinor > 9) return fail(fmt::format("compute capability {}.{}", ccMajor, ccMinor));
  if (smCount < 1) return fail(fmt::format("SM count {} (must be at least 1)", smCount));
  if (warpSize != 32) return fail("warp size must be 32");
  if (maxThreadsPerBlock < warpSize || maxThreadsPerBlock > maxThreadsPerSm)
    return fail("threads per block must lie between the warp size and the threads per SM");
  if (int64_t(maxBlockDim[0]) * maxBlockDim[1] * maxBlockDim[2] < maxThreadsPerBlock)
    return fail("block dimensions cannot hold the maximum threads per block");
  if (sharedMemPerBlock > sharedMemPerBlockOptin)
    return fail("static shared memory per block exceeds the opt-in limit");
  if (sharedMemPerBlockOptin + reservedSharedMemPerBlock > sharedMemPerSm)
    return fail("opt-in shared memory per block plus the reserved part exceeds the shared memory per SM");
  if (registersPerBlock > registersPerSm) return fail("registers per block exceed registers per SM");
  if (totalMemory == 0) return fail("total memory is 0");
  return true;
}

std::vector<std::string> builtinProfileNames() { return {"h100", "h200", "rtx-pro-6000", "gb10", "l4"}; }

Expected<DeviceProfile> builtinProfile(std::string_view name) {
  std::string key(name);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "h100") return DeviceProfile{};
  if (key == "h200") return h200Profile();
  // Each compute-capability-12 profile also answers to its SM name, the spelling a user porting a build
  // (-arch=sm_120) thinks of first.
  if (key == "rtx-pro-6000" || key == "sm_120" || key == "sm120") return rtxPro6000Profile();
  if (key == "gb10" || key == "sm_121" || key == "sm121") return gb10Profile();
  if (key == "l4" || key == "sm_89" || key == "sm89") return l4Profile();
  std::string known;
  for (const auto& n : builtinProfileNames()) known += (known.empty() ? "" : ", ") + n;
  return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("unknown profile '{}' (known: {})", name, known));
}

}  // namespace cuemu
