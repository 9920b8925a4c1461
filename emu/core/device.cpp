#include "core/device.h"

#include "core/address_space.h"
#include "core/config.h"
#include "core/context.h"
#include "core/log.h"

#include <fmt/format.h>

#include <algorithm>

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

}  // namespace

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
