// IPC memory handles between two processes: this binary re-runs itself as the importing child.
#include "fixture.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
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
    execl("/proc/self/exe", "emu-memory-tests", "--gtest_filter=IpcChild.*", static_cast<char*>(nullptr));
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

}  // namespace
