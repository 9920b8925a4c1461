// api.device: device enumeration, names, attributes, UUID, PCI ids, memory size, properties, peers.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "harness.h"

namespace {

using conf::DeviceTest;
using api_device = DeviceTest;

TEST_F(api_device, GetCountAtLeastOne) {
  int n = 0;
  CU_ASSERT_OK(cuDeviceGetCount(&n));
  EXPECT_GE(n, 1);
}

TEST_F(api_device, GetCountNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetCount(nullptr)); }

TEST_F(api_device, GetEveryOrdinal) {
  int n = conf::DeviceCount();
  for (int i = 0; i < n; ++i) {
    CUdevice d = -1;
    CU_EXPECT_OK(cuDeviceGet(&d, i));
    EXPECT_EQ(d, i) << "device handles are ordinals on Linux";
  }
}

TEST_F(api_device, GetOrdinalPastCount) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, conf::DeviceCount()));
}

TEST_F(api_device, GetNegativeOrdinal) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, -1));
}

TEST_F(api_device, GetNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGet(nullptr, 0)); }

TEST_F(api_device, NameIsPrintable) {
  char name[256];
  std::memset(name, 'x', sizeof(name));
  CU_ASSERT_OK(cuDeviceGetName(name, sizeof(name), dev));
  size_t len = strnlen(name, sizeof(name));
  ASSERT_LT(len, sizeof(name)) << "name is NUL-terminated";
  EXPECT_GT(len, 0u);
  for (size_t i = 0; i < len; ++i) EXPECT_TRUE(std::isprint(static_cast<unsigned char>(name[i])));
}

TEST_F(api_device, NameTruncatedToBuffer) {
  char full[256] = {};
  CU_ASSERT_OK(cuDeviceGetName(full, sizeof(full), dev));
  char small[8];
  std::memset(small, 'x', sizeof(small));
  CU_ASSERT_OK(cuDeviceGetName(small, 4, dev));
  EXPECT_EQ(small[4], 'x') << "nothing written past len";
  EXPECT_EQ(std::strncmp(small, full, 3), 0);
  EXPECT_EQ(small[3], '\0') << "expectation from docs; GPU run will confirm";
}

TEST_F(api_device, NameNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetName(nullptr, 64, dev)); }

TEST_F(api_device, NameBadDevice) {
  char name[64];
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof(name), conf::DeviceCount()));
}

// ---- attributes: one case per attribute --------------------------------------------------------------------------

struct AttributeInfo {
  CUdevice_attribute attr;
  const char* name;
};

void PrintTo(const AttributeInfo& c, std::ostream* os) { *os << c.name; }

const AttributeInfo kAttributes[] = {
#define X(name) {name, #name},
#include "device_attributes.def"
#undef X
};

// Ranges that hold on every CUDA device of compute capability 7.5 or newer.
std::pair<long long, long long> RangeOf(CUdevice_attribute a) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return {32, 32};
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return {512, 1024};
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return {512, 1024};
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return {64, 64};
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return {2147483647LL, 2147483647LL};
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return {65535, 65535};
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return {49152, 49152};
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return {65536, 65536};
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return {65536, 65536};
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return {1, 1024};
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return {7, 20};
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return {0, 9};
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return {1, 1};
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return {49152, 1 << 20};
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return {65536, 1 << 20};
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return {1024, 4096};
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return {16, 64};
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return {0, 3};
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return {1, 4096};
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return {0, 255};
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return {0, 31};
    case CU_DEVICE_ATTRIBUTE_NUMA_ID:
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return {-1, 1 << 20};
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return {1 << 20, 1LL << 30};
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return {32, 1 << 16};
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return {1, 64};
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return {1, 1};
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return {0, 1};
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return {1 << 20, 2147483647LL};
    default: return {0, 2147483647LL};
  }
}

class api_device_Attribute : public testing::TestWithParam<AttributeInfo> {};

TEST_P(api_device_Attribute, QueryInRange) {
  CU_ASSERT_OK(cuInit(0));
  CUdevice dev;
  CU_ASSERT_OK(cuDeviceGet(&dev, 0));
  int v = -12345;
  CU_ASSERT_OK(cuDeviceGetAttribute(&v, GetParam().attr, dev));
  auto [lo, hi] = RangeOf(GetParam().attr);
  EXPECT_GE(v, lo) << GetParam().name;
  EXPECT_LE(v, hi) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(All, api_device_Attribute, testing::ValuesIn(kAttributes),
                         [](const testing::TestParamInfo<AttributeInfo>& i) {
                           return std::string(i.param.name).substr(std::strlen("CU_DEVICE_ATTRIBUTE_"));
                         });

TEST_F(api_device, AttributeMaxIsInvalid) {
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, dev));
}

TEST_F(api_device, AttributeZeroIsInvalid) {
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(0), dev));
}

TEST_F(api_device, AttributeHugeIsInvalid) {
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(100000), dev));
}

TEST_F(api_device, AttributeNull) {
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
}

TEST_F(api_device, AttributeBadDevice) {
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, conf::DeviceCount()));
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, -1));
}

TEST_F(api_device, AttributesConsistent) {
  int threads = conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  EXPECT_LE(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), threads);
  EXPECT_LE(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y), threads);
  EXPECT_LE(threads, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
  EXPECT_LE(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  EXPECT_LE(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  EXPECT_LE(conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
            conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
}

TEST_F(api_device, ComputeCapabilityMatchesAttributes) {
  int major = -1, minor = -1;
  CU_ASSERT_OK(cuDeviceComputeCapability(&major, &minor, dev));
  EXPECT_EQ(major, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  EXPECT_EQ(minor, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
}

TEST_F(api_device, ComputeCapabilityBadDevice) {
  int major, minor;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceComputeCapability(&major, &minor, conf::DeviceCount()));
}

TEST_F(api_device, PropertiesMatchAttributes) {
  CUdevprop p;
  std::memset(&p, 0xff, sizeof(p));
  CU_ASSERT_OK(cuDeviceGetProperties(&p, dev));
  EXPECT_EQ(p.maxThreadsPerBlock, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  EXPECT_EQ(p.maxThreadsDim[0], conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X));
  EXPECT_EQ(p.maxThreadsDim[2], conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
  EXPECT_EQ(p.maxGridSize[1], conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y));
  EXPECT_EQ(p.sharedMemPerBlock, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  EXPECT_EQ(p.totalConstantMemory, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  EXPECT_EQ(p.SIMDWidth, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  EXPECT_EQ(p.regsPerBlock, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  EXPECT_EQ(p.textureAlign, conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
}

TEST_F(api_device, PropertiesNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetProperties(nullptr, dev)); }

// ---- UUID ---------------------------------------------------------------------------------------------------------

TEST_F(api_device, UuidStableAndNonZero) {
  CUuuid a{}, b{};
  CU_ASSERT_OK(cuDeviceGetUuid(&a, dev));
  CU_ASSERT_OK(cuDeviceGetUuid(&b, dev));
  EXPECT_EQ(std::memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0);
  CUuuid zero{};
  EXPECT_NE(std::memcmp(a.bytes, zero.bytes, sizeof(a.bytes)), 0);
}

TEST_F(api_device, UuidDistinctPerDevice) {
  int n = conf::DeviceCount();
  if (n < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  CUuuid a{}, b{};
  CU_ASSERT_OK(cuDeviceGetUuid(&a, 0));
  CU_ASSERT_OK(cuDeviceGetUuid(&b, 1));
  EXPECT_NE(std::memcmp(a.bytes, b.bytes, sizeof(a.bytes)), 0);
}

TEST_F(api_device, UuidNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetUuid(nullptr, dev)); }

TEST_F(api_device, UuidBadDevice) {
  CUuuid u;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid(&u, conf::DeviceCount()));
}

// ---- PCI bus id ----------------------------------------------------------------------------------------------------

std::string BusId(CUdevice dev) {
  char buf[64] = {};
  if (cuDeviceGetPCIBusId(buf, sizeof(buf), dev) != CUDA_SUCCESS) return {};
  return buf;
}

TEST_F(api_device, PciBusIdFormatMatchesAttributes) {
  std::string id = BusId(dev);
  ASSERT_FALSE(id.empty());
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  ASSERT_EQ(std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function), 4) << id;
  EXPECT_EQ(static_cast<int>(domain), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID));
  EXPECT_EQ(static_cast<int>(bus), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID));
  EXPECT_EQ(static_cast<int>(device), conf::Attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
  EXPECT_EQ(id.size(), 12u) << "dddd:bb:dd.f, got " << id;
}

TEST_F(api_device, PciBusIdRoundTrip) {
  for (int i = 0; i < conf::DeviceCount(); ++i) {
    std::string id = BusId(i);
    CUdevice d = -1;
    CU_EXPECT_OK(cuDeviceGetByPCIBusId(&d, id.c_str())) << id;
    EXPECT_EQ(d, i);
  }
}

TEST_F(api_device, PciBusIdShortForms) {
  std::string id = BusId(dev);
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  ASSERT_EQ(std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function), 4) << id;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%x:%x:%x", domain, bus, device);  // domain:bus:device
  CUdevice d = -1;
  CU_EXPECT_OK(cuDeviceGetByPCIBusId(&d, buf)) << buf;
  EXPECT_EQ(d, dev);
  std::snprintf(buf, sizeof(buf), "%02x:%02x.%x", bus, device, function);  // bus:device.function
  d = -1;
  CU_EXPECT_OK(cuDeviceGetByPCIBusId(&d, buf)) << buf;
  EXPECT_EQ(d, dev);
}

TEST_F(api_device, PciBusIdUpperCase) {
  std::string id = BusId(dev);
  for (auto& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CUdevice d = -1;
  CU_EXPECT_OK(cuDeviceGetByPCIBusId(&d, id.c_str())) << id;
  EXPECT_EQ(d, dev);
}

TEST_F(api_device, ByPciBusIdGarbage) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, "not a bus id"));
}

TEST_F(api_device, ByPciBusIdEmpty) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, ""));
}

TEST_F(api_device, ByPciBusIdNoSuchDevice) {
  CUdevice d;
  // expectation from docs; GPU run will confirm
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&d, "fffe:fe:1f.7"));
}

TEST_F(api_device, ByPciBusIdNull) {
  CUdevice d;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&d, nullptr));
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(nullptr, BusId(dev).c_str()));
}

TEST_F(api_device, PciBusIdNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(nullptr, 64, dev)); }

TEST_F(api_device, PciBusIdBadDevice) {
  char buf[64];
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetPCIBusId(buf, sizeof(buf), conf::DeviceCount()));
}

// ---- memory size ---------------------------------------------------------------------------------------------------

TEST_F(api_device, TotalMemPositive) {
  size_t bytes = 0;
  CU_ASSERT_OK(cuDeviceTotalMem(&bytes, dev));
  EXPECT_GE(bytes, size_t{1} << 30);
}

TEST_F(api_device, TotalMemMatchesMemGetInfo) {
  size_t total = 0;
  CU_ASSERT_OK(cuDeviceTotalMem(&total, dev));
  CUcontext ctx;
  CU_ASSERT_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
  size_t freeBytes = 0, totalInfo = 0;
  CU_EXPECT_OK(cuMemGetInfo(&freeBytes, &totalInfo));
  EXPECT_EQ(totalInfo, total);
  EXPECT_LE(freeBytes, totalInfo);
  CU_EXPECT_OK(cuCtxDestroy(ctx));
}

TEST_F(api_device, TotalMemNull) { CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceTotalMem(nullptr, dev)); }

TEST_F(api_device, TotalMemBadDevice) {
  size_t b;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceTotalMem(&b, conf::DeviceCount()));
}

// ---- peers ---------------------------------------------------------------------------------------------------------

TEST_F(api_device, CanAccessPeerSelf) {
  int can = -1;
  CU_EXPECT_OK(cuDeviceCanAccessPeer(&can, dev, dev));  // seen on an H200
  EXPECT_EQ(can, 0);
}

TEST_F(api_device, CanAccessPeerBadDevice) {
  int can = -1;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&can, dev, conf::DeviceCount()));
}

TEST_F(api_device, CanAccessPeerNull) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceCanAccessPeer(nullptr, 0, 1));
}

TEST_F(api_device, CanAccessPeerTwoDevices) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  int a = -1, b = -1;
  CU_ASSERT_OK(cuDeviceCanAccessPeer(&a, 0, 1));
  CU_ASSERT_OK(cuDeviceCanAccessPeer(&b, 1, 0));
  EXPECT_TRUE(a == 0 || a == 1);
  EXPECT_EQ(a, b);
}

TEST_F(api_device, P2PAttributeSelf) {
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, dev, dev));
}

TEST_F(api_device, P2PAttributesTwoDevices) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  int access = -1, can = -1;
  CU_ASSERT_OK(cuDeviceGetP2PAttribute(&access, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
  CU_ASSERT_OK(cuDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(access, can);
  int rank = -1, atomics = -1;
  CU_EXPECT_OK(cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1));
  CU_EXPECT_OK(cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 0, 1));
}

TEST_F(api_device, P2PAttributeBadAttribute) {
  if (conf::DeviceCount() < 2) CONF_NOT_SUPPORTED("needs 2 devices");
  int v;
  CU_EXPECT(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(&v, static_cast<CUdevice_P2PAttribute>(999), 0, 1));
}

// ---- misc queries --------------------------------------------------------------------------------------------------

TEST_F(api_device, DefaultMemPool) {
  CUmemoryPool pool = nullptr, current = nullptr;
  CU_ASSERT_OK(cuDeviceGetDefaultMemPool(&pool, dev));
  EXPECT_NE(pool, nullptr);
  CU_ASSERT_OK(cuDeviceGetMemPool(&current, dev));
  EXPECT_EQ(current, pool) << "the current pool starts as the default pool";
}

TEST_F(api_device, DefaultMemPoolBadDevice) {
  CUmemoryPool pool;
  CU_EXPECT(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDefaultMemPool(&pool, conf::DeviceCount()));
}

TEST_F(api_device, Texture1DLinearMaxWidth) {
  size_t w = 0;
  CU_ASSERT_OK(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 4, dev));
  EXPECT_GT(w, 0u);
}

TEST_F(api_device, ExecAffinitySupport) {
  int v = -1;
  CU_ASSERT_OK(cuDeviceGetExecAffinitySupport(&v, CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev));
  EXPECT_TRUE(v == 0 || v == 1);
}

TEST_F(api_device, ExecAffinitySupportBadType) {
  int v;
  CU_EXPECT_OK(cuDeviceGetExecAffinitySupport(&v, static_cast<CUexecAffinityType>(77), dev));  // seen on an H200
}

}  // namespace
