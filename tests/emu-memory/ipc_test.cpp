// IPC memory handles between two processes: this binary re-runs itself as the importing child.
#include "fixture.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

std::string toHex(const CUipcMemHandle& h) {
  std::string s;
  char buf[3];
  for (unsigned char c : h.reserved) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    s += buf;
  }
  return s;
}

CUipcMemHandle fromHex(const char* s) {
  CUipcMemHandle h{};
  for (size_t i = 0; i < sizeof h.reserved; ++i) {
    unsigned v = 0;
    std::sscanf(s + 2 * i, "%2x", &v);
    h.reserved[i] = static_cast<char>(v);
  }
  return h;
}

TEST_F(MemoryTest, IpcHandleSharesMemoryWithAnotherProcess) {
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 100000), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(p, 0x11223344, 25000), CUDA_SUCCESS);
  CUipcMemHandle handle{};
  ASSERT_EQ(cuIpcGetMemHandle(&handle, p), CUDA_SUCCESS);
  // The exporter keeps its data after the move onto shared memory.
  uint32_t v = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&v, p + 400, 4), CUDA_SUCCESS);
  EXPECT_EQ(v, 0x11223344u);
  CUdeviceptr self = 0;
  EXPECT_EQ(cuIpcOpenMemHandle_v2(&self, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_ERROR_INVALID_CONTEXT);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string hex = toHex(handle);
    setenv("CUEMU_TEST_IPC_HANDLE", hex.c_str(), 1);
    execl("/proc/self/exe", "emu-memory-tests", "--gtest_filter=IpcChild.OpenReadWriteClose",
          static_cast<char*>(nullptr));
    _exit(99);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The child wrote into the shared allocation.
  ASSERT_EQ(cuMemcpyDtoH_v2(&v, p + 99996, 4), CUDA_SUCCESS);
  EXPECT_EQ(v, 0xABCDEF01u);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

// Exporting memory must not lose what is written to it meanwhile (issue 24: the export copied the memory into the
// shared file and then mapped the file over it, dropping every store made in between, in the neighbouring blocks of
// a slab too). A thread stores i + 1 into word i % words of `bytes` at `written`, i = 0, 1, 2, ..., as a kernel or a
// copy would, from before this thread calls `exportIt` until just after it returned; returns how many words do not
// hold the last value stored into them.
int wordsLostWhileExporting(CUdeviceptr written, uint64_t bytes, const std::function<CUresult()>& exportIt) {
  auto* data = reinterpret_cast<uint32_t*>(written);
  const uint64_t words = bytes / 4;
  std::atomic<uint64_t> stored{0};
  std::atomic<bool> exported{false};
  std::thread writer([&] {
    uint64_t i = 0;
    for (; (i & 63) || !exported.load(std::memory_order_acquire); ++i) {
      std::atomic_ref<uint32_t>(data[i % words]).store(uint32_t(i + 1), std::memory_order_relaxed);
      if ((i & 63) == 63) stored.store(i + 1, std::memory_order_release);
    }
    stored.store(i, std::memory_order_release);
  });
  while (stored.load(std::memory_order_acquire) < 4096) std::this_thread::yield();
  EXPECT_EQ(exportIt(), CUDA_SUCCESS);
  exported.store(true, std::memory_order_release);
  writer.join();
  const uint64_t total = stored.load(std::memory_order_acquire);
  int lost = 0;
  for (uint64_t k = 0; k < words; ++k) {
    // the last i < total with i % words == k
    uint32_t expected = k < total ? uint32_t(k + (total - 1 - k) / words * words + 1) : 0;
    lost += data[k] != expected;
  }
  return lost;
}

// Fresh allocations each round (memory was moved on its first export only), freed again so that each small
// allocation comes from a fresh slab.
TEST_F(MemoryTest, IpcExportKeepsWritesMadeWhileItRuns) {
  constexpr int kRounds = 20;
  struct Race {
    uint64_t exportedBytes, writtenBytes;
    bool neighbour;  // written: another allocation in the exported block's slab, else the exported one
  };
  for (Race race : {Race{8 << 20, 8 << 20, false}, Race{4096, 16 << 10, true}, Race{16 << 10, 16 << 10, false}}) {
    int lost = 0, roundsLosing = 0;
    for (int round = 0; round < kRounds; ++round) {
      CUdeviceptr exported = 0, written = 0;
      ASSERT_EQ(cuMemAlloc_v2(&exported, race.exportedBytes), CUDA_SUCCESS);
      written = exported;
      if (race.neighbour) {
        ASSERT_EQ(cuMemAlloc_v2(&written, race.writtenBytes), CUDA_SUCCESS);
      }
      int n = wordsLostWhileExporting(written, race.writtenBytes, [&] {
        CUipcMemHandle handle{};
        return cuIpcGetMemHandle(&handle, exported);
      });
      lost += n;
      roundsLosing += n > 0;
      if (written != exported) {
        EXPECT_EQ(cuMemFree_v2(written), CUDA_SUCCESS);
      }
      EXPECT_EQ(cuMemFree_v2(exported), CUDA_SUCCESS);
    }
    EXPECT_EQ(lost, 0) << "in " << roundsLosing << " of " << kRounds << " rounds, " << race.writtenBytes
                       << " bytes written while " << (race.neighbour ? "a neighbour of " : "") << race.exportedBytes
                       << " bytes were exported";
  }
}

TEST_F(MemoryTest, PoolPointerExportKeepsWritesMadeWhileItRuns) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  int lost = 0;
  for (int round = 0; round < 20; ++round) {
    CUdeviceptr p = 0;
    ASSERT_EQ(cuMemAllocFromPoolAsync(&p, 8 << 20, pool, nullptr), CUDA_SUCCESS);
    lost += wordsLostWhileExporting(p, 8 << 20, [&] {
      CUmemPoolPtrExportData data{};
      return cuMemPoolExportPointer(&data, p);
    });
    ASSERT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
}

// A 512-byte block sub-allocated in a 2 MiB slab: the importer sees the block alone, at the offset it has in its
// 2 MiB chunk (as on an H100: tools/gpu-probe/results/rel24-cdp-ipc-h100-2026-11-26.txt).
TEST_F(MemoryTest, IpcHandleOfASmallBlockMapsTheBlockAtItsChunkOffset) {
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_EQ(cuMemAlloc_v2(&a, 512), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&b, 512), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&c, 512), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(a, 0xA1, 512), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(b, 0xB2, 512), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(c, 0xC3, 512), CUDA_SUCCESS);
  CUipcMemHandle handle{}, first{};
  ASSERT_EQ(cuIpcGetMemHandle(&handle, b), CUDA_SUCCESS);
  ASSERT_EQ(cuIpcGetMemHandle(&first, a), CUDA_SUCCESS);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("CUEMU_TEST_IPC_SMALL_HANDLE", toHex(handle).c_str(), 1);
    setenv("CUEMU_TEST_IPC_SMALL_FIRST", toHex(first).c_str(), 1);
    setenv("CUEMU_TEST_IPC_SMALL_OFFSET", std::to_string(b % (uint64_t(2) << 20)).c_str(), 1);
    execl("/proc/self/exe", "emu-memory-tests", "--gtest_filter=IpcChild.SmallBlock", static_cast<char*>(nullptr));
    _exit(99);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  uint8_t v = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&v, b + 511, 1), CUDA_SUCCESS);
  EXPECT_EQ(v, 0x5Au);  // the child's write
  for (CUdeviceptr p : {a, b, c}) EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST(IpcChild, SmallBlock) {
  const char* hex = std::getenv("CUEMU_TEST_IPC_SMALL_HANDLE");
  const char* offset = std::getenv("CUEMU_TEST_IPC_SMALL_OFFSET");
  const char* firstHex = std::getenv("CUEMU_TEST_IPC_SMALL_FIRST");
  if (!hex || !offset || !firstHex)
    GTEST_SKIP() << "runs as the child of IpcHandleOfASmallBlockMapsTheBlockAtItsChunkOffset";
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  auto context = std::make_shared<cuemu::Context>(*cuemu::deviceByOrdinal(0), 0, false);
  context->registerHandle();
  cuemu::pushCurrentContext(context);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuIpcOpenMemHandle_v2(&p, fromHex(hex), CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  EXPECT_EQ(p % (uint64_t(2) << 20), std::strtoull(offset, nullptr, 10));
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_EQ(cuMemGetAddressRange_v2(&base, &size, p), CUDA_SUCCESS);
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 512u);
  uint8_t bytes[512] = {};
  ASSERT_EQ(cuMemcpyDtoH_v2(bytes, p, 512), CUDA_SUCCESS);
  EXPECT_EQ(bytes[0], 0xB2u);
  EXPECT_EQ(bytes[511], 0xB2u);
  // The neighbouring blocks are not part of the import.
  EXPECT_EQ(cuMemcpyDtoH_v2(bytes, p - 512, 512), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH_v2(bytes, p + 512, 512), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD8_v2(p + 511, 0x5A, 1), CUDA_SUCCESS);
  // The block before it in the same slab lands where it lay there: one mapping serves both.
  CUdeviceptr q = 0;
  ASSERT_EQ(cuIpcOpenMemHandle_v2(&q, fromHex(firstHex), CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  EXPECT_EQ(q, p - 512);
  EXPECT_EQ(cuIpcCloseMemHandle(p), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH_v2(bytes, q, 512), CUDA_SUCCESS);  // closing one block keeps the other
  EXPECT_EQ(bytes[0], 0xA1u);
  EXPECT_EQ(cuIpcCloseMemHandle(q), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH_v2(bytes, q, 512), CUDA_ERROR_INVALID_VALUE);
  context->teardown();
}

// Runs only in the child started above.
TEST(IpcChild, OpenReadWriteClose) {
  const char* hex = std::getenv("CUEMU_TEST_IPC_HANDLE");
  if (!hex) GTEST_SKIP() << "runs as the child of IpcHandleSharesMemoryWithAnotherProcess";
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  auto context = std::make_shared<cuemu::Context>(*cuemu::deviceByOrdinal(0), 0, false);
  context->registerHandle();
  cuemu::pushCurrentContext(context);
  CUipcMemHandle handle = fromHex(hex);
  CUdeviceptr p = 0, again = 0;
  ASSERT_EQ(cuIpcOpenMemHandle_v2(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  ASSERT_EQ(cuIpcOpenMemHandle_v2(&again, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  EXPECT_EQ(again, p);
  uint32_t v = 0;
  ASSERT_EQ(cuMemcpyDtoH_v2(&v, p + 8, 4), CUDA_SUCCESS);
  EXPECT_EQ(v, 0x11223344u);
  EXPECT_EQ(cuMemsetD32_v2(p + 99996, 0xABCDEF01, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32_v2(p + 100000, 0, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuIpcCloseMemHandle(p), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcCloseMemHandle(p), CUDA_SUCCESS);
  EXPECT_EQ(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);
  context->teardown();
}

// The line of /proc/self/maps whose range holds `address`, or empty.
std::string mappingOf(uint64_t address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &from, &to) == 2 && address >= from && address < to) return line;
  }
  return {};
}

// Runs `filter` of this binary in a child process with `environment` added; returns its standard output.
std::string runChild(const char* filter, const char* name, const char* value, int* exitStatus) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t child = fork();
  if (child == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    setenv(name, value, 1);
    execl("/proc/self/exe", "emu-memory-tests", filter, static_cast<char*>(nullptr));
    _exit(99);
  }
  close(fds[1]);
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  *exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// IPC is on by default: cuMemAlloc memory lies in the shared memory file from allocation on and exports. With
// CUEMU_IPC=0 (a child process, below) it is private memory and every export is refused.
TEST_F(MemoryTest, IpcIsOnByDefaultAndCuemuIpc0MakesDeviceMemoryPrivate) {
  ASSERT_TRUE(cuemu::AddressSpace::instance().ipcEnabled());
  CUdeviceptr large = 0, small = 0;
  ASSERT_EQ(cuMemAlloc_v2(&large, 64 << 20), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&small, 100), CUDA_SUCCESS);
  for (CUdeviceptr p : {large, small}) {
    EXPECT_NE(mappingOf(p).find("memfd:cuemu-device-memory"), std::string::npos) << mappingOf(p);
    CUipcMemHandle handle{};
    EXPECT_EQ(cuIpcGetMemHandle(&handle, p), CUDA_SUCCESS);
  }
  int types = -1;
  ASSERT_EQ(cuDeviceGetAttribute(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0), CUDA_SUCCESS);
  EXPECT_EQ(types, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  for (CUdeviceptr p : {large, small}) EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);

  int status = -1;
  std::string out = runChild("--gtest_filter=IpcOffChild.*", "CUEMU_IPC", "0", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << out;
}

class IpcOffChild : public MemoryTest {};

TEST_F(IpcOffChild, DeviceMemoryIsPrivateAndExportsAreRefused) {
  const char* ipc = std::getenv("CUEMU_IPC");
  if (!ipc || std::strcmp(ipc, "0") != 0)
    GTEST_SKIP() << "runs as the child of IpcIsOnByDefaultAndCuemuIpc0MakesDeviceMemoryPrivate";
  ASSERT_FALSE(cuemu::AddressSpace::instance().ipcEnabled());
  CUdeviceptr large = 0, small = 0;
  ASSERT_EQ(cuMemAlloc_v2(&large, 64 << 20), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&small, 100), CUDA_SUCCESS);
  for (CUdeviceptr p : {large, small}) {
    std::string mapping = mappingOf(p);
    EXPECT_FALSE(mapping.empty());
    EXPECT_EQ(mapping.find("memfd:"), std::string::npos) << mapping;
    CUipcMemHandle handle{};
    EXPECT_EQ(cuIpcGetMemHandle(&handle, p), CUDA_ERROR_NOT_SUPPORTED);
  }
  // The memory works as ever.
  ASSERT_EQ(cuMemsetD32_v2(large, 0x5EED5EED, (64 << 20) / 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoD_v2(small, large + (32 << 20), 100), CUDA_SUCCESS);
  uint32_t words[25] = {};
  ASSERT_EQ(cuMemcpyDtoH_v2(words, small, 100), CUDA_SUCCESS);
  EXPECT_EQ(words[0], 0x5EED5EEDu);
  EXPECT_EQ(words[24], 0x5EED5EEDu);
  // Pools: no shareable handle type, and a pool asking for one is refused as an unsupported type; others work.
  int types = -1;
  ASSERT_EQ(cuDeviceGetAttribute(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0), CUDA_SUCCESS);
  EXPECT_EQ(types, CU_MEM_HANDLE_TYPE_NONE);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemoryPool pool = nullptr;
  EXPECT_EQ(cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_SUPPORTED);
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  ASSERT_EQ(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  // VMM allocations have files of their own and still export.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granularity = 0;
  ASSERT_EQ(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  CUmemGenericAllocationHandle vmm = 0;
  ASSERT_EQ(cuMemCreate(&vmm, granularity, &prop, 0), CUDA_SUCCESS);
  int fd = -1;
  EXPECT_EQ(cuMemExportToShareableHandle(&fd, vmm, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
  if (fd >= 0) close(fd);
  EXPECT_EQ(cuMemRelease(vmm), CUDA_SUCCESS);
  for (CUdeviceptr p : {large, small}) EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

}  // namespace
