// The interpreter's device runtime (CUDA dynamic parallelism): what a kernel's launches and runtime calls hand
// to HostServices, and each thread's last error. kernels/cdp.cu -> cdp.ptx.
#include "harness.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

constexpr int32_t kPendingCountExceeded = 69;  // cudaErrorLaunchPendingCountExceeded

struct Launch {
  DeviceLaunchConfig config;
  uint64_t stream = 0;
  DeviceCaller caller;
  std::vector<uint8_t> params;
};

// Hands out parameter buffers from the arena and records the launches; threads 2 and 3 get no buffer.
class RecordingHost : public HostServices {
 public:
  explicit RecordingHost(Arena& arena) : arena_(arena) {}
  uint64_t deviceParameterBuffer(const DeviceLaunchConfig& config, uint32_t bytes, uint32_t, int32_t& error) override {
    std::lock_guard lock(m);
    if (config.grid.x == 3 || config.grid.x == 4) {
      error = kPendingCountExceeded;
      return 0;
    }
    auto address = reinterpret_cast<uint64_t>(arena_.alloc<uint8_t>(bytes));
    buffers[address] = {config, bytes};
    return address;
  }
  int32_t deviceLaunch(uint64_t buffer, uint64_t stream, const DeviceLaunchConfig*,
                       const DeviceCaller& caller) override {
    std::lock_guard lock(m);
    auto it = buffers.find(buffer);
    if (it == buffers.end()) return 1;
    auto* p = reinterpret_cast<const uint8_t*>(buffer);
    launches.push_back({it->second.first, stream, caller, std::vector<uint8_t>(p, p + it->second.second)});
    return 0;
  }
  int32_t deviceOrdinal(int32_t& device) override {
    device = 3;
    return 0;
  }
  int32_t deviceAttribute(int32_t attribute, int32_t device, int32_t& value) override {
    value = attribute * 1000 + device;
    return 0;
  }
  int32_t deviceStreamCreate(uint32_t flags, uint64_t& stream) override {
    stream = 0xABC00 + flags;
    return 0;
  }
  int32_t deviceStreamDestroy(uint64_t stream) override { return stream == 0xABC01 ? 0 : 400; }
  uint64_t deviceMalloc(uint64_t size) override { return reinterpret_cast<uint64_t>(arena_.alloc<uint8_t>(size)); }
  void deviceFree(uint64_t address) override { freed.push_back(address); }

  std::mutex m;
  std::map<uint64_t, std::pair<DeviceLaunchConfig, uint32_t>> buffers;
  std::vector<Launch> launches;
  std::vector<uint64_t> freed;

 private:
  Arena& arena_;
};

struct Cdp {
  Arena arena;
  std::shared_ptr<const Program> prog;
  std::vector<uint64_t> globals;
  explicit Cdp(const char* file = "cdp.ptx") {
    CompileResult r = compile(ptxtest::readFile(std::string(PTX_EXEC_KERNELS) + "/" + file));
    if (!r.program) throw std::runtime_error("compile failed: " + r.error);
    prog = r.program;
    for (const GlobalInfo& g : ptx::exec::globals(*prog))
      globals.push_back(reinterpret_cast<uint64_t>(arena.alloc<uint8_t>(g.size)));
  }
  LaunchResult run(const char* kernel, Dim3 block, const Params& p, HostServices& host) {
    LaunchParams lp;
    lp.grid = Dim3{1};
    lp.block = block;
    lp.params = p.data();
    lp.paramBytes = p.size();
    lp.globalAddresses = globals.data();
    lp.memory = &arena;
    lp.host = &host;
    return launch(*prog, findKernel(*prog, kernel), lp);
  }
};

TEST(DeviceRuntime, LaunchesCarryTheChildConfigurationAndArguments) {
  Cdp cdp;
  RecordingHost host(cdp.arena);
  int child = findKernel(*cdp.prog, "cdpChild");
  ASSERT_GE(child, 0);
  const KernelInfo& childInfo = kernels(*cdp.prog)[size_t(child)];
  int* out = cdp.arena.alloc<int>(64);
  int* errors = cdp.arena.alloc<int>(64 * 3);
  Params p(kernels(*cdp.prog)[size_t(findKernel(*cdp.prog, "cdpParent"))]);
  p.arg(out).arg(errors);
  const uint32_t threads = 40;
  auto r = cdp.run("cdpParent", Dim3{threads}, p, host);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  // Threads 2 and 3 got no parameter buffer, so they launched nothing.
  ASSERT_EQ(host.launches.size(), threads - 2);
  for (const Launch& l : host.launches) {
    uint32_t t = l.caller.thread;
    EXPECT_EQ(l.config.kernel, child);
    EXPECT_EQ(l.config.grid.x, t + 1);
    EXPECT_EQ(l.config.grid.y, 2u);
    EXPECT_EQ(l.config.grid.z, 3u);
    EXPECT_EQ(l.config.block.x, 4u);
    EXPECT_EQ(l.config.block.y, 5u);
    EXPECT_EQ(l.config.block.z, 1u);
    EXPECT_EQ(l.config.sharedBytes, 16 * t);
    EXPECT_EQ(l.stream, (t & 1) ? 3u : 0u);  // cudaStreamTailLaunch
    EXPECT_EQ(l.caller.block.x, 0u);
    ASSERT_EQ(l.params.size(), childInfo.paramBytes);
    int* outArg;
    int a;
    double b;
    std::memcpy(&outArg, l.params.data() + childInfo.params[0].offset, sizeof outArg);
    std::memcpy(&a, l.params.data() + childInfo.params[1].offset, sizeof a);
    std::memcpy(&b, l.params.data() + childInfo.params[2].offset, sizeof b);
    EXPECT_EQ(outArg, out);
    EXPECT_EQ(a, int(t));
    EXPECT_EQ(b, 2.5 * t);
  }
  // The last error is each thread's own: peeked, taken, then clear.
  for (uint32_t t = 0; t < threads; ++t) {
    int expected = (t == 2 || t == 3) ? kPendingCountExceeded : 0;
    EXPECT_EQ(errors[t * 3], expected) << t;
    EXPECT_EQ(errors[t * 3 + 1], expected) << t;
    EXPECT_EQ(errors[t * 3 + 2], 0) << t;
  }
}

TEST(DeviceRuntime, QueriesWriteThroughTheirPointers) {
  Cdp cdp;
  RecordingHost host(cdp.arena);
  int* out = cdp.arena.alloc<int>(8);
  auto* handles = cdp.arena.alloc<unsigned long long>(2);
  Params p(kernels(*cdp.prog)[size_t(findKernel(*cdp.prog, "cdpQueries"))]);
  p.arg(out).arg(handles);
  auto r = cdp.run("cdpQueries", Dim3{1}, p, host);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 16 * 1000 + 3);  // cudaDevAttrMultiProcessorCount of device 3
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(handles[0], 0xABC01u);
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(out[4], 0);
  EXPECT_NE(handles[1], 0u);
  ASSERT_EQ(host.freed.size(), 1u);
  EXPECT_EQ(host.freed[0], handles[1]);
  EXPECT_EQ(out[5], 0);
}

// CDP1 code calls the device runtime by its plain names.
TEST(DeviceRuntime, PlainNamesOfCdp1) {
  Cdp cdp("cdp1.ptx");
  RecordingHost host(cdp.arena);
  int* out = cdp.arena.alloc<int>(64);
  int* errors = cdp.arena.alloc<int>(64);
  Params p(kernels(*cdp.prog)[size_t(findKernel(*cdp.prog, "cdp1Parent"))]);
  p.arg(out).arg(errors);
  auto r = cdp.run("cdp1Parent", Dim3{8}, p, host);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(host.launches.size(), 6u);
  for (const Launch& l : host.launches) {
    EXPECT_EQ(l.config.kernel, findKernel(*cdp.prog, "cdp1Child"));
    EXPECT_EQ(l.config.grid.x, l.caller.thread + 1);
    EXPECT_EQ(l.config.block.x, 32u);
  }
  for (int t = 0; t < 8; ++t) EXPECT_EQ(errors[t], (t == 2 || t == 3) ? kPendingCountExceeded : 0) << t;
}

// Without a driver's device runtime every call answers cudaErrorNotSupported and nothing faults.
TEST(DeviceRuntime, DefaultHostSupportsNothing) {
  Cdp cdp;
  HostServices host;
  int* out = cdp.arena.alloc<int>(64);
  int* errors = cdp.arena.alloc<int>(64 * 3);
  Params p(kernels(*cdp.prog)[size_t(findKernel(*cdp.prog, "cdpParent"))]);
  p.arg(out).arg(errors);
  auto r = cdp.run("cdpParent", Dim3{2}, p, host);
  ASSERT_TRUE(r.ok()) << r.fault.message;
  EXPECT_EQ(errors[0], 801);
  EXPECT_EQ(errors[1], 801);
  EXPECT_EQ(errors[2], 0);
}

}  // namespace
