// Device management entry points against the configured machine (device 0: h100 profile, device 1: h200).
#include "test_util.h"

// Deprecated entry points are tested too: programs still call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <cstring>
#include <set>
#include <string>

namespace {

using cuemu::test::initDriver;

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { initDriver(); }
};

int attribute(CUdevice_attribute which, CUdevice device = 0) {
  int value = -12345;
  EXPECT_CU(CUDA_SUCCESS, cuDeviceGetAttribute(&value, which, device));
  return value;
}

TEST_F(DeviceTest, CountAndOrdinals) {
  int count = 0;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetCount(&count));
  EXPECT_EQ(count, 2);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetCount(nullptr));
  CUdevice device = -1;
  EXPECT_CU(CUDA_SUCCESS, cuDeviceGet(&device, 1));
  EXPECT_EQ(device, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&device, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&device, -1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGet(nullptr, 0));
}

TEST_F(DeviceTest, NamesFollowProfilesAndTruncate) {
  char name[256];
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetName(name, sizeof name, 0));
  EXPECT_STREQ(name, "cuemu virtual H100");
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetName(name, sizeof name, 1));
  EXPECT_STREQ(name, "cuemu virtual H200");
  char small[6];
  std::memset(small, 'x', sizeof small);
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetName(small, sizeof small, 0));
  EXPECT_STREQ(small, "cuemu");
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetName(nullptr, 10, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetName(name, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof name, 7));
}

TEST_F(DeviceTest, H100ProfileAttributes) {
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), 9);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 132);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 48 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), 227 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK), 65536);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), 50 * 1024 * 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1), 60 * 1024 * 1024);
  // Hopper facts recorded on NVIDIA's driver.
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR), 233472);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK), 1024);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 1), 39321600);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, 1), 590680286);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_NUMA_ID), -1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), 1);
}

TEST_F(DeviceTest, EveryAttributeAnswersAndOthersAreInvalid) {
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int value = -12345;
    EXPECT_CU(CUDA_SUCCESS, cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(a), 0)) << "attribute " << a;
  }
  int value = 0;
  for (int a : {-1, 0, int(CU_DEVICE_ATTRIBUTE_MAX), 299, 100000})
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(a), 0)) << a;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 2));
}

TEST_F(DeviceTest, PropertiesAndCapabilityAgreeWithAttributes) {
  CUdevprop prop{};
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetProperties(&prop, 0));
  EXPECT_EQ(prop.maxThreadsPerBlock, attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  EXPECT_EQ(prop.maxThreadsDim[2], attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
  EXPECT_EQ(prop.maxGridSize[0], attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  EXPECT_EQ(prop.sharedMemPerBlock, 49152);
  EXPECT_EQ(prop.SIMDWidth, 32);
  EXPECT_EQ(prop.clockRate, attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  EXPECT_EQ(prop.textureAlign, 512);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetProperties(nullptr, 0));
  int major = 0, minor = -1;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceComputeCapability(&major, &minor, 1));
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceComputeCapability(nullptr, &minor, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceComputeCapability(&major, &minor, 5));
}

TEST_F(DeviceTest, UuidsAreStableAndDistinct) {
  CUuuid a{}, again{}, b{};
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetUuid(&a, 0));
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetUuid(&again, 0));
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetUuid(&b, 1));
  EXPECT_EQ(std::memcmp(a.bytes, again.bytes, 16), 0);
  EXPECT_NE(std::memcmp(a.bytes, b.bytes, 16), 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetUuid(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid(&a, 3));
}

TEST_F(DeviceTest, TotalMemoryIsConfiguredAndPositive) {
  size_t bytes = 0;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceTotalMem(&bytes, 0));
  EXPECT_GE(bytes, size_t(64) << 20);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceTotalMem(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceTotalMem(&bytes, 2));
}

TEST_F(DeviceTest, PciBusIdsRoundTrip) {
  std::set<std::string> seen;
  for (CUdevice d = 0; d < 2; ++d) {
    char id[32];
    ASSERT_CU(CUDA_SUCCESS, cuDeviceGetPCIBusId(id, sizeof id, d));
    EXPECT_EQ(std::strlen(id), 12u) << id;  // dddd:bb:dd.f
    seen.insert(id);
    CUdevice back = -1;
    ASSERT_CU(CUDA_SUCCESS, cuDeviceGetByPCIBusId(&back, id));
    EXPECT_EQ(back, d);
    // The short form without the domain, and without the function.
    ASSERT_CU(CUDA_SUCCESS, cuDeviceGetByPCIBusId(&back, id + 5));
    EXPECT_EQ(back, d);
    std::string noFunction(id, 10);
    ASSERT_CU(CUDA_SUCCESS, cuDeviceGetByPCIBusId(&back, noFunction.c_str()));
    EXPECT_EQ(back, d);
    int bus = -1;
    ASSERT_CU(CUDA_SUCCESS, cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d));
    EXPECT_EQ(std::stoi(std::string(id + 5, 2), nullptr, 16), bus);
  }
  EXPECT_EQ(seen.size(), 2u);
  CUdevice device;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&device, "0000:7f:00.0"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&device, "not a bus id"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&device, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(nullptr, "0000:01:00.0"));
  char tiny[5];
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetPCIBusId(tiny, sizeof tiny, 0));
  EXPECT_STREQ(tiny, "0000");
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(tiny, 0, 0));
}

TEST_F(DeviceTest, PeersBetweenVirtualDevices) {
  int can = -1;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(can, 1);
  ASSERT_CU(CUDA_SUCCESS, cuDeviceCanAccessPeer(&can, 0, 0));
  EXPECT_EQ(can, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceCanAccessPeer(&can, 0, 9));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceCanAccessPeer(nullptr, 0, 1));
  int value = -1;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 0));
  EXPECT_EQ(value, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetP2PAttribute(&value, static_cast<CUdevice_P2PAttribute>(99), 0, 1));
  CUatomicOperation ops[] = {CU_ATOMIC_OPERATION_INTEGER_ADD, CU_ATOMIC_OPERATION_CAS};
  unsigned caps[2] = {0, 0};
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetP2PAtomicCapabilities(caps, ops, 2, 0, 1));
  EXPECT_TRUE(caps[0] & CU_ATOMIC_CAPABILITY_SCALAR_32);
  EXPECT_TRUE(caps[1] & CU_ATOMIC_CAPABILITY_SCALAR_64);
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetHostAtomicCapabilities(caps, ops, 2, 0));
  EXPECT_EQ(caps[0], 0u);
  CUatomicOperation bad = static_cast<CUatomicOperation>(77);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetHostAtomicCapabilities(caps, &bad, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetHostAtomicCapabilities(nullptr, ops, 1, 0));
}

TEST_F(DeviceTest, TextureWidthLuidAndExecAffinity) {
  size_t width = 0;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 4, 0));
  EXPECT_EQ(width, size_t(1) << 28);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 3, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 1, 4));
  char luid[8];
  unsigned mask = 0;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuDeviceGetLuid(luid, &mask, 0));
  int supported = -1;
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  EXPECT_EQ(supported, 0);
  supported = -1;
  EXPECT_CU(CUDA_SUCCESS, cuDeviceGetExecAffinitySupport(&supported, static_cast<CUexecAffinityType>(5), 0));
  EXPECT_EQ(supported, 0);
}

TEST_F(DeviceTest, GreenContextResources) {
  CUdevResource resource{};
  ASSERT_CU(CUDA_SUCCESS, cuDeviceGetDevResource(0, &resource, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(resource.type, CU_DEV_RESOURCE_TYPE_SM);
  EXPECT_EQ(resource.sm.smCount, 132u);
  CUdevResource groups[4] = {};
  CUdevResource rest{};
  unsigned count = 4;
  ASSERT_CU(CUDA_SUCCESS, cuDevSmResourceSplitByCount(groups, &count, &resource, &rest, 0, 30));
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(groups[3].sm.smCount, 30u);  // 30 is a whole number of co-scheduled pairs
  EXPECT_EQ(rest.sm.smCount, 12u);
  CUdevResourceDesc desc = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuDevResourceGenerateDesc(&desc, groups, 2));
  CUgreenCtx green = nullptr;
  ASSERT_CU(CUDA_SUCCESS, cuGreenCtxCreate(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CUdevResource greenSms{};
  ASSERT_CU(CUDA_SUCCESS, cuGreenCtxGetDevResource(green, &greenSms, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_EQ(greenSms.sm.smCount, 60u);
  ASSERT_CU(CUDA_SUCCESS, cuGreenCtxDestroy(green));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuGreenCtxDestroy(green));  // as driver 580
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDevResource(9, &resource, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDeviceGetDevResource(0, &resource, CU_DEV_RESOURCE_TYPE_INVALID));
  unsigned long long id = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxGetId(reinterpret_cast<CUgreenCtx>(0x1234), &id));
}

}  // namespace
