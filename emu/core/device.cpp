#include "core/device.h"

#include "core/address_space.h"
#include "core/config.h"
#include "core/context.h"
#include "core/log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace cuemu {
namespace {

constexpr uint32_t kNvidiaPciVendorId = 0x10de;
// Elements of a 1D texture bound to linear memory (the same for every element size on Hopper).
constexpr int kTexture1DLinearMaxElements = 1 << 28;

// The table's attribute numbers in table order: consecutive from 1 to CU_DEVICE_ATTRIBUTE_MAX - 1 means
// every attribute is answered exactly once.
constexpr int kTableAttributes[] = {
#define CUEMU_DEVICE_ATTRIBUTE(name, expression) CU_DEVICE_ATTRIBUTE_##name,
#include "core/device_attributes.def"
#undef CUEMU_DEVICE_ATTRIBUTE
};
constexpr bool tableIsConsecutive() {
  for (std::size_t i = 0; i < std::size(kTableAttributes); ++i)
    if (kTableAttributes[i] != static_cast<int>(i) + 1) return false;
  return true;
}
static_assert(tableIsConsecutive(), "device_attributes.def must list every attribute once, in numeric order");
static_assert(std::size(kTableAttributes) == CU_DEVICE_ATTRIBUTE_MAX - 1,
              "device_attributes.def must end with the last attribute before CU_DEVICE_ATTRIBUTE_MAX");

using AttributeFn = int (*)(const DeviceProfile& p, const Device& d);
constexpr AttributeFn kAttributeFns[] = {
#define CUEMU_DEVICE_ATTRIBUTE(name, expression)       \
  [](const DeviceProfile& p, const Device& d) -> int { \
    (void)p;                                           \
    (void)d;                                           \
    return static_cast<int>(expression);               \
  },
#include "core/device_attributes.def"
#undef CUEMU_DEVICE_ATTRIBUTE
};

std::vector<Device*>& deviceList() {
  static auto* list = new std::vector<Device*>;  // never destroyed: used during process exit
  return *list;
}

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
  p.reservedSharedMemPerBlock = 1024;
  p.singleToDoublePerfRatio = 64;
  p.asyncEngineCount = 2;  // the copy engines GeForce/RTX Blackwell boards report (deviceQuery: 2 copy engines)
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

}  // namespace

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

std::vector<std::string> builtinProfileNames() { return {"h100", "h200", "rtx-pro-6000", "gb10"}; }

Expected<DeviceProfile> builtinProfile(std::string_view name) {
  std::string key(name);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "h100") return DeviceProfile{};
  if (key == "h200") return h200Profile();
  // Each compute-capability-12 profile also answers to its SM name, the spelling a user porting a build
  // (-arch=sm_120) thinks of first.
  if (key == "rtx-pro-6000" || key == "sm_120" || key == "sm120") return rtxPro6000Profile();
  if (key == "gb10" || key == "sm_121" || key == "sm121") return gb10Profile();
  std::string known;
  for (const auto& n : builtinProfileNames()) known += (known.empty() ? "" : ", ") + n;
  return makeError(CUDA_ERROR_INVALID_VALUE, fmt::format("unknown profile '{}' (known: {})", name, known));
}

bool validContextFlags(unsigned flags) {
  if (flags & ~unsigned(CU_CTX_FLAGS_MASK)) return false;
  unsigned sched = flags & CU_CTX_SCHED_MASK;
  return sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
         sched == CU_CTX_SCHED_BLOCKING_SYNC;
}

Device::Device(int ordinal, DeviceProfile profile) : ordinal_(ordinal), profile_(std::move(profile)) {
  // Stable per device and recognisably cuemu's: "cuemu-vdev", then the ordinal.
  const char tag[] = "cuemu-vdev";
  for (std::size_t i = 0; i < sizeof(tag) - 1; ++i) uuid_.bytes[i] = tag[i];
  uuid_.bytes[14] = static_cast<char>(ordinal >> 8);
  uuid_.bytes[15] = static_cast<char>(ordinal);
}

std::string Device::pciBusIdString() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.0", pciDomainId(), pciBusId(), pciDeviceId());
}

CUresult Device::attribute(int attribute, int& value) const {
  if (attribute < 1 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  value = kAttributeFns[attribute - 1](profile_, *this);
  return CUDA_SUCCESS;
}

std::shared_ptr<Context> Device::primaryLocked() {
  if (!primary_) {
    primary_ = std::make_shared<Context>(*this, 0, /*primary=*/true);
    primary_->setAlive(false);
    primary_->registerHandle();
  }
  return primary_;
}

std::shared_ptr<Context> Device::primaryContext() {
  std::lock_guard lock(primaryMutex_);
  return primaryLocked();
}

std::shared_ptr<Context> Device::retainPrimary() {
  std::lock_guard lock(primaryMutex_);
  auto context = primaryLocked();
  ++primaryRetains_;
  if (!context->isAlive()) {
    if (context->tornDown()) context->reinitialize();
    context->setAlive(true);
  }
  return context;
}

CUresult Device::releasePrimary() {
  std::lock_guard lock(primaryMutex_);
  if (primaryRetains_ == 0 || !primary_) return CUDA_ERROR_INVALID_CONTEXT;
  if (--primaryRetains_ == 0 && primary_->isAlive()) {
    primary_->setAlive(false);
    primary_->synchronize();
    primary_->teardown();
  }
  return CUDA_SUCCESS;
}

void Device::resetPrimary() {
  std::lock_guard lock(primaryMutex_);
  auto context = primaryLocked();
  if (context->isAlive()) {
    context->setAlive(false);
    context->synchronize();
  }
  context->teardown();
  context->setFlags(0);
  // The retain count survives a reset (measured on driver 580): a later retain makes it active again and it
  // is destroyed only when every reference, from before and after the reset, is released.
}

void Device::primaryState(unsigned& flags, bool& active) {
  std::lock_guard lock(primaryMutex_);
  auto context = primaryLocked();
  flags = context->flags();
  active = context->isAlive();
}

CUresult Device::setPrimaryFlags(unsigned flags, bool whileActive) {
  std::lock_guard lock(primaryMutex_);
  auto context = primaryLocked();
  if (!whileActive && context->isAlive()) return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
  context->setFlags(flags);
  return CUDA_SUCCESS;
}

const std::vector<Device*>& devices() { return deviceList(); }

Device* deviceByOrdinal(CUdevice ordinal) {
  auto& list = deviceList();
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= list.size()) return nullptr;
  return list[ordinal];
}

Expected<Device*> requireDevice(CUdevice ordinal) {
  if (Device* device = deviceByOrdinal(ordinal)) return device;
  return makeError(CUDA_ERROR_INVALID_DEVICE, fmt::format("no device {}", ordinal));
}

Expected<bool> createDevices() {
  auto& list = deviceList();
  if (!list.empty()) return true;  // devices live as long as the process: handles and contexts refer to them
  auto config = loadMachineConfig();
  if (!config) return config.takeError();
  if (config->devices.empty())
    return makeError(CUDA_ERROR_NO_DEVICE, "CUEMU_DEVICE_COUNT=0: the machine has no devices");
  for (std::size_t i = 0; i < config->devices.size(); ++i) {
    list.push_back(new Device(static_cast<int>(i), std::move(config->devices[i])));
    const Device& d = *list.back();
    CUEMU_INFO("device {}: {} ({} profile, compute capability {}.{}, {} SMs, {} MiB, PCI {})", i, d.name(),
               d.profile().profileName, d.profile().ccMajor, d.profile().ccMinor, d.profile().smCount,
               d.totalMemory() >> 20, d.pciBusIdString());
  }
  return true;
}

}  // namespace cuemu
