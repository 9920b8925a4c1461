// Device management: enumeration, names, ids, attributes, peer capabilities of the virtual devices.
#include "api/impl.h"

#include "core/device.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

namespace cuemu::impl {
namespace {

// Copies `text` into a caller's buffer of `length` bytes, truncating, always NUL-terminated.
void copyString(const std::string& text, char* out, int length) {
  std::size_t n = std::min(text.size(), static_cast<std::size_t>(length) - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Parses "domain:bus:device.function", "domain:bus:device" or "bus:device.function" (hexadecimal).
bool parsePciBusId(const char* text, unsigned& domain, unsigned& bus, unsigned& device) {
  unsigned function = 0;
  int consumed = 0;
  std::size_t length = std::strlen(text);
  auto whole = [&](int count, int expected) {
    return count == expected && static_cast<std::size_t>(consumed) == length;
  };
  consumed = 0;
  if (whole(std::sscanf(text, "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &consumed), 4)) return true;
  consumed = 0;
  if (whole(std::sscanf(text, "%x:%x:%x%n", &domain, &bus, &device, &consumed), 3)) return true;
  consumed = 0;
  domain = 0;
  return whole(std::sscanf(text, "%x:%x.%x%n", &bus, &device, &function, &consumed), 3);
}

// Atomic operations between peers (virtual devices share the host's memory, so every operation is native).
unsigned peerAtomicCapabilities(CUatomicOperation operation) {
  constexpr unsigned kScalar = CU_ATOMIC_CAPABILITY_SCALAR_32 | CU_ATOMIC_CAPABILITY_SCALAR_64;
  switch (operation) {
    case CU_ATOMIC_OPERATION_INTEGER_ADD:
    case CU_ATOMIC_OPERATION_INTEGER_MIN:
    case CU_ATOMIC_OPERATION_INTEGER_MAX:
      return CU_ATOMIC_CAPABILITY_SIGNED | CU_ATOMIC_CAPABILITY_UNSIGNED | CU_ATOMIC_CAPABILITY_REDUCTION | kScalar;
    case CU_ATOMIC_OPERATION_INTEGER_INCREMENT:
    case CU_ATOMIC_OPERATION_INTEGER_DECREMENT:
      return CU_ATOMIC_CAPABILITY_UNSIGNED | CU_ATOMIC_CAPABILITY_REDUCTION | CU_ATOMIC_CAPABILITY_SCALAR_32;
    case CU_ATOMIC_OPERATION_AND:
    case CU_ATOMIC_OPERATION_OR:
    case CU_ATOMIC_OPERATION_XOR:
      return CU_ATOMIC_CAPABILITY_SIGNED | CU_ATOMIC_CAPABILITY_UNSIGNED | CU_ATOMIC_CAPABILITY_REDUCTION | kScalar;
    case CU_ATOMIC_OPERATION_EXCHANGE:
    case CU_ATOMIC_OPERATION_CAS: return kScalar | CU_ATOMIC_CAPABILITY_SCALAR_128;
    case CU_ATOMIC_OPERATION_FLOAT_ADD:
      return CU_ATOMIC_CAPABILITY_REDUCTION | kScalar | CU_ATOMIC_CAPABILITY_VECTOR_32x4;
    case CU_ATOMIC_OPERATION_FLOAT_MIN:
    case CU_ATOMIC_OPERATION_FLOAT_MAX: return CU_ATOMIC_CAPABILITY_REDUCTION | kScalar;
    default: return 0;
  }
}

bool validAtomicOperation(CUatomicOperation operation) {
  return static_cast<unsigned>(operation) <= CU_ATOMIC_OPERATION_FLOAT_MAX;
}

bool peersConnected(const Device& a, const Device& b) { return a.profile().peerAccess && b.profile().peerAccess; }

}  // namespace

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  auto found = requireDevice(ordinal);
  if (!found) return found.error().code;
  *device = (*found)->handle();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(devices().size());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  copyString((*device)->name(), name, len);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  *uuid = (*device)->uuid();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) { return impl::cuDeviceGetUuid(uuid, dev); }

// A LUID identifies an adapter to Windows graphics APIs; there is none on Linux.
CUresult cuDeviceGetLuid(char* luid, unsigned int* deviceNodeMask, CUdevice dev) {
  if (!luid || !deviceNodeMask) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  *bytes = static_cast<size_t>((*device)->totalMemory());
  return CUDA_SUCCESS;
}

// The original 32-bit form cannot express more than 4 GiB: it reports the most it can.
CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  *bytes = static_cast<unsigned int>(std::min<uint64_t>((*device)->totalMemory(), UINT_MAX));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  return (*device)->attribute(attrib, *pi);
}

CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  *major = (*device)->profile().ccMajor;
  *minor = (*device)->profile().ccMinor;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  const Device& d = **device;
  auto get = [&](CUdevice_attribute attribute) {
    int value = 0;
    d.attribute(attribute, value);
    return value;
  };
  CUdevprop p{};
  p.maxThreadsPerBlock = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.maxThreadsDim[0] = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  p.maxThreadsDim[1] = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  p.maxThreadsDim[2] = get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  p.maxGridSize[0] = get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  p.maxGridSize[1] = get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  p.maxGridSize[2] = get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  p.sharedMemPerBlock = get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  p.totalConstantMemory = get(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  p.SIMDWidth = get(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.memPitch = get(CU_DEVICE_ATTRIBUTE_MAX_PITCH);
  p.regsPerBlock = get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p.clockRate = get(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  p.textureAlign = get(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
  *prop = p;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  copyString((*device)->pciBusIdString(), pciBusId, len);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
  unsigned domain = 0, bus = 0, device = 0;
  if (!parsePciBusId(pciBusId, domain, bus, device)) return CUDA_ERROR_INVALID_VALUE;
  for (const Device* d : devices()) {
    if (unsigned(d->pciDomainId()) == domain && unsigned(d->pciBusId()) == bus &&
        unsigned(d->pciDeviceId()) == device) {
      *dev = d->handle();
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  auto peer = requireDevice(peerDev);
  if (!peer) return peer.error().code;
  *canAccessPeer = (*device != *peer && peersConnected(**device, **peer)) ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  auto src = requireDevice(srcDevice);
  if (!src) return src.error().code;
  auto dst = requireDevice(dstDevice);
  if (!dst) return dst.error().code;
  if (*src == *dst) return CUDA_ERROR_INVALID_DEVICE;
  bool connected = peersConnected(**src, **dst);
  switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = connected ? 1 : 0; return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDeviceGetHostAtomicCapabilities(unsigned int* capabilities, const CUatomicOperation* operations,
                                           unsigned int count, CUdevice dev) {
  if (count > 0 && (!capabilities || !operations)) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  for (unsigned i = 0; i < count; ++i)
    if (!validAtomicOperation(operations[i])) return CUDA_ERROR_INVALID_VALUE;
  // The modelled part has no native atomics with the host (CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 0).
  for (unsigned i = 0; i < count; ++i) capabilities[i] = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities, const CUatomicOperation* operations,
                                          unsigned int count, CUdevice srcDevice, CUdevice dstDevice) {
  if (count > 0 && (!capabilities || !operations)) return CUDA_ERROR_INVALID_VALUE;
  auto src = requireDevice(srcDevice);
  if (!src) return src.error().code;
  auto dst = requireDevice(dstDevice);
  if (!dst) return dst.error().code;
  if (*src == *dst) return CUDA_ERROR_INVALID_DEVICE;
  for (unsigned i = 0; i < count; ++i)
    if (!validAtomicOperation(operations[i])) return CUDA_ERROR_INVALID_VALUE;
  bool connected = peersConnected(**src, **dst);
  for (unsigned i = 0; i < count; ++i) capabilities[i] = connected ? peerAtomicCapabilities(operations[i]) : 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements, CUarray_format format, unsigned numChannels,
                                            CUdevice dev) {
  if (!maxWidthInElements) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  if (numChannels != 1 && numChannels != 2 && numChannels != 4) return CUDA_ERROR_INVALID_VALUE;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_FLOAT: break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  int width = 0;
  (*device)->attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, width);
  *maxWidthInElements = static_cast<size_t>(width);
  return CUDA_SUCCESS;
}

// Contexts with a limited share of SMs exist only under MPS on NVIDIA's driver; without MPS the answer is 0.
// Driver 580 answers an unknown type with success too (measured), so does cuemu: nothing is supported.
CUresult cuDeviceGetExecAffinitySupport(int* pi, CUexecAffinityType type, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  auto device = requireDevice(dev);
  if (!device) return device.error().code;
  (void)type;
  *pi = 0;
  return CUDA_SUCCESS;
}

}  // namespace cuemu::impl
