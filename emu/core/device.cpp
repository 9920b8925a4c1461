#include "core/device.h"

#include "core/context.h"

namespace cuemu {

Device::Device(int ordinal, DeviceProfile profile) : ordinal_(ordinal), profile_(std::move(profile)) {
  // Stable per device and recognisably cuemu's: "cuemu" followed by the ordinal.
  const char tag[] = "cuemu-vdev";
  for (std::size_t i = 0; i < sizeof(tag) - 1; ++i) uuid_.bytes[i] = tag[i];
  uuid_.bytes[15] = static_cast<char>(ordinal);
}

CUresult Device::attribute(CUdevice_attribute, int&) const { return CUDA_ERROR_INVALID_VALUE; }

std::shared_ptr<Context> Device::primaryContext() {
  std::lock_guard lock(primaryMutex_);
  if (!primary_) {
    primary_ = std::make_shared<Context>(*this, 0, /*primary=*/true);
    primary_->registerHandle();
  }
  return primary_;
}

std::vector<Device*>& devices() {
  static auto* list = new std::vector<Device*>;
  return *list;
}

Device* deviceByOrdinal(CUdevice ordinal) {
  auto& list = devices();
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= list.size()) return nullptr;
  return list[ordinal];
}

Expected<bool> createDevices() {
  auto& list = devices();
  if (list.empty()) list.push_back(new Device(0, DeviceProfile{}));
  return true;
}

}  // namespace cuemu
