// The machine configuration (core/config.h) and the internal context parts other areas rely on.
#include "core/config.h"
#include "core/context.h"
#include "core/device.h"

#include <gtest/gtest.h>

namespace cuemu {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

Expected<MachineConfig> build(ConfigSettings settings) { return buildMachineConfig(settings, 4 * kGiB); }

std::string errorOf(ConfigSettings settings) {
  auto config = build(std::move(settings));
  EXPECT_FALSE(config);
  return config ? std::string() : config.error().message;
}

TEST(ConfigTest, DefaultIsOneH100WithTheDefaultMemory) {
  auto config = build({});
  ASSERT_TRUE(config);
  ASSERT_EQ(config->devices.size(), 1u);
  const DeviceProfile& d = config->devices[0];
  EXPECT_EQ(d.name, "cuemu virtual H100");
  EXPECT_EQ(d.ccMajor, 9);
  EXPECT_EQ(d.smCount, 132);
  EXPECT_EQ(d.totalMemory, 4 * kGiB);
}

TEST(ConfigTest, PerDeviceSettingsOverrideTheCommonOnes) {
  auto config = build({{"device_count", "3"},
                       {"device_memory", "8G"},
                       {"device1_memory", "512MiB"},
                       {"device_profile", "H200"},
                       {"device2_profile", "h100"},
                       {"device2_sm_count", "4"},
                       {"device0_name", "first"}});
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->devices.size(), 3u);
  EXPECT_EQ(config->devices[0].name, "first");
  EXPECT_EQ(config->devices[0].l2CacheBytes, 60 << 20);
  EXPECT_EQ(config->devices[0].totalMemory, 8 * kGiB);
  EXPECT_EQ(config->devices[1].totalMemory, 512ull << 20);
  EXPECT_EQ(config->devices[1].name, "cuemu virtual H200");
  EXPECT_EQ(config->devices[2].name, "cuemu virtual H100");
  EXPECT_EQ(config->devices[2].smCount, 4);
}

TEST(ConfigTest, InvalidSettingsNameTheProblem) {
  EXPECT_NE(errorOf({{"device_count", "two"}}).find("CUEMU_DEVICE_COUNT: 'two' is not a whole number"),
            std::string::npos);
  EXPECT_NE(errorOf({{"device_count", "65"}}).find("outside 0..64"), std::string::npos);
  EXPECT_NE(errorOf({{"device_count", "-1"}}).find("outside"), std::string::npos);
  EXPECT_NE(errorOf({{"device_cuont", "2"}}).find("unknown setting CUEMU_DEVICE_CUONT"), std::string::npos);
  EXPECT_NE(errorOf({{"devices", "2"}}).find("unknown setting CUEMU_DEVICES"), std::string::npos);
  EXPECT_NE(errorOf({{"device3_memory", "1G"}}).find("CUEMU_DEVICE3_MEMORY configures device 3, but there are only 1"),
            std::string::npos);
  EXPECT_NE(errorOf({{"device_profile", "rtx9090"}})
                .find("unknown profile 'rtx9090' (known: h100, h200, rtx-pro-6000, gb10, l4)"),
            std::string::npos);
  EXPECT_NE(errorOf({{"device_memory", "1M"}}).find("outside 64 MiB"), std::string::npos);
  EXPECT_NE(errorOf({{"device_memory", "12 parsecs"}}).find("unknown unit"), std::string::npos);
  EXPECT_NE(errorOf({{"device_sm_count", "0"}}).find("CUEMU_DEVICE_SM_COUNT"), std::string::npos);
  EXPECT_NE(errorOf({{"device_name", ""}}).find("CUEMU_DEVICE_NAME"), std::string::npos);
  EXPECT_EQ(errorOf({{"device_count", "x"}}).rfind("invalid cuemu configuration: ", 0), 0u);
}

TEST(ConfigTest, ZeroDevicesIsAValidMachine) {
  auto config = build({{"device_count", "0"}});
  ASSERT_TRUE(config);
  EXPECT_TRUE(config->devices.empty());
}

TEST(ConfigTest, ByteSizes) {
  EXPECT_EQ(*parseByteSize("1024"), 1024u);
  EXPECT_EQ(*parseByteSize("2k"), 2048u);
  EXPECT_EQ(*parseByteSize("3 MiB"), 3ull << 20);
  EXPECT_EQ(*parseByteSize("16GB"), 16 * kGiB);
  EXPECT_EQ(*parseByteSize("1T"), 1ull << 40);
  EXPECT_FALSE(parseByteSize("G"));
  EXPECT_FALSE(parseByteSize("99999999999999999999"));
  EXPECT_FALSE(parseByteSize("17179869184T"));
}

TEST(ConfigTest, KernelTimeout) {
  EXPECT_EQ(*parseKernelTimeout("10"), 10000u);
  EXPECT_EQ(*parseKernelTimeout("0.25"), 250u);
  EXPECT_EQ(*parseKernelTimeout(" 2 "), 2000u);
  EXPECT_EQ(*parseKernelTimeout("0"), 0u);       // no limit
  EXPECT_EQ(*parseKernelTimeout("0.0001"), 1u);  // a limit, however small, is never "none"
  EXPECT_FALSE(parseKernelTimeout(""));
  EXPECT_FALSE(parseKernelTimeout("-1"));
  EXPECT_FALSE(parseKernelTimeout("10s"));
  EXPECT_FALSE(parseKernelTimeout("nan"));
  EXPECT_FALSE(parseKernelTimeout("1e9"));
  auto bad = parseKernelTimeout("soon");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("CUEMU_KERNEL_TIMEOUT"), std::string::npos);
}

TEST(ConfigTest, FileSyntax) {
  auto settings = parseConfigText("# a machine\ndevice_count = 2  # two\n\nCUEMU_DEVICE1_PROFILE=h200\n", "test.conf");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->at("device_count"), "2");
  EXPECT_EQ(settings->at("device1_profile"), "h200");
  auto bad = parseConfigText("device_count 2\n", "test.conf");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("test.conf:1: expected 'key = value'"), std::string::npos);
  auto foreign = parseConfigText("\n\ncolor = blue\n", "x.conf");
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("x.conf:3: unknown key 'color'"), std::string::npos);
}

TEST(ConfigTest, BuiltinProfilesAreConsistent) {
  for (const auto& name : builtinProfileNames()) {
    auto profile = builtinProfile(name);
    ASSERT_TRUE(profile);
    profile->totalMemory = kGiB;
    EXPECT_TRUE(profile->validate()) << name;
  }
  DeviceProfile broken;
  broken.totalMemory = kGiB;
  broken.sharedMemPerBlockOptin = 300 * 1024;
  EXPECT_FALSE(broken.validate());
}

// The compute-capability-12 profiles: the Programming Guide's 12.x per-SM limits, each part's own size; both are also
// reachable by their SM name.
TEST(ConfigTest, ComputeCapability12Profiles) {
  auto rtx = builtinProfile("rtx-pro-6000");
  auto gb10 = builtinProfile("GB10");
  ASSERT_TRUE(rtx);
  ASSERT_TRUE(gb10);
  EXPECT_EQ(rtx->ccMajor * 10 + rtx->ccMinor, 120);
  EXPECT_EQ(gb10->ccMajor * 10 + gb10->ccMinor, 121);
  for (const DeviceProfile* p : {&*rtx, &*gb10}) {
    EXPECT_EQ(p->maxThreadsPerSm, 1536);
    EXPECT_EQ(p->sharedMemPerSm, 100 * 1024);
    EXPECT_EQ(p->sharedMemPerBlockOptin, 99 * 1024);
    EXPECT_EQ(p->maxBlocksPerSm, 32);
  }
  EXPECT_EQ(rtx->smCount, 188);
  EXPECT_EQ(gb10->smCount, 48);
  EXPECT_EQ(builtinProfile("sm_120")->profileName, "rtx-pro-6000");
  EXPECT_EQ(builtinProfile("sm_121")->profileName, "gb10");
  auto config = build({{"device_count", "2"}, {"device1_profile", "gb10"}});
  ASSERT_TRUE(config);
  EXPECT_EQ(config->devices[0].ccMajor, 9);  // the default stays the H100
  EXPECT_EQ(config->devices[1].ccMajor, 12);
}

// The Ada profile (L4): the Programming Guide's 8.9 per-SM limits, the part's own size; reachable by its SM name.
TEST(ConfigTest, AdaL4Profile) {
  auto l4 = builtinProfile("sm_89");
  ASSERT_TRUE(l4);
  EXPECT_EQ(l4->profileName, "l4");
  EXPECT_EQ(l4->ccMajor * 10 + l4->ccMinor, 89);
  EXPECT_EQ(l4->smCount, 58);
  EXPECT_EQ(l4->maxThreadsPerSm, 1536);
  EXPECT_EQ(l4->maxBlocksPerSm, 24);
  EXPECT_EQ(l4->sharedMemPerSm, 100 * 1024);
  EXPECT_EQ(l4->sharedMemPerBlockOptin, 99 * 1024);
  EXPECT_EQ(l4->l2CacheBytes, 48 * 1024 * 1024);
}

TEST(ContextInternalsTest, StorageDestructorsRunWhenTheContextIsDestroyed) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext handle = nullptr;
  ASSERT_EQ(cuCtxCreate_v2(&handle, 0, 0), CUDA_SUCCESS);
  auto context = handleTable<Context>().find(handleValue(handle));
  ASSERT_TRUE(context);
  static int destroyed = 0;
  static CUcontext destroyedWith = nullptr;
  int key = 0, value = 7;
  context->storagePut(&key, &value, [](CUcontext ctx, void*, void* v) {
    destroyed += *static_cast<int*>(v);
    destroyedWith = ctx;
  });
  void* found = nullptr;
  EXPECT_TRUE(context->storageGet(&key, found));
  EXPECT_EQ(found, &value);
  ASSERT_EQ(cuCtxDestroy_v2(handle), CUDA_SUCCESS);
  EXPECT_EQ(destroyed, 7);
  EXPECT_EQ(destroyedWith, handle);
  EXPECT_FALSE(context->storageGet(&key, found));
  EXPECT_FALSE(handleTable<Context>().find(handleValue(handle)));
}

TEST(ContextInternalsTest, PrimaryReleaseRunsStorageDestructors) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  Device* device = deviceByOrdinal(0);
  ASSERT_TRUE(device);
  // The handle exists before any retain (the CUDA runtime asks for it first).
  CUcontext early = device->primaryContext()->apiHandle();
  CUcontext handle = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&handle, 0), CUDA_SUCCESS);
  EXPECT_EQ(early, handle);
  static int destroyed = 0;
  int key = 0;
  handleTable<Context>().find(handleValue(handle))->storagePut(&key, nullptr, [](CUcontext, void*, void*) {
    ++destroyed;
  });
  ASSERT_EQ(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  EXPECT_EQ(destroyed, 1);
  EXPECT_TRUE(handleTable<Context>().find(handleValue(handle)));  // the handle stays
}

}  // namespace
}  // namespace cuemu
