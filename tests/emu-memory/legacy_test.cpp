// The range below 4 GiB for the 32-bit entry points, interprocess event state, and synchronous copies that run
// on the calling thread when their stream is idle.
#include "fixture.h"

#include "api/impl.h"
#include "core/address_space.h"
#include "core/ipc_event.h"

#include <atomic>
#include <thread>
#include <vector>

namespace {

TEST_F(MemoryTest, LegacyAllocationsLieBelow4GiBAndFaultAfterFree) {
  ExactBounds exact;
  CUdeviceptr_v1 a = 0, b = 0;
  EXPECT_EQ(cuemu::impl::cuMemAlloc(&a, 100000), CUDA_ERROR_INVALID_CONTEXT) << "the fixture's context is API 3020";
  // The 32-bit entry points serve contexts of the original cuCtxCreate (made current on top of the fixture's).
  CUcontext legacy = nullptr;
  ASSERT_EQ(cuemu::impl::cuCtxCreate(&legacy, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuemu::impl::cuMemAlloc(&a, 100000), CUDA_SUCCESS);
  ASSERT_EQ(cuemu::impl::cuMemAlloc(&b, 16), CUDA_SUCCESS);
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  auto& space = cuemu::AddressSpace::instance();
  EXPECT_TRUE(space.isAccessible(a, 100000));
  EXPECT_FALSE(space.isAccessible(a, 100001)) << "byte exact";
  EXPECT_TRUE(space.isDeviceAddress(a));
  ASSERT_EQ(cuemu::impl::cuMemsetD8(a, 0x42, 100000), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(uintptr_t(a))[99999], 0x42);
  ASSERT_EQ(cuemu::impl::cuMemFree(a), CUDA_SUCCESS);
  EXPECT_FALSE(space.isAccessible(a, 1));
  // A freed low address is neither host memory nor an allocation.
  unsigned char byte = 0;
  EXPECT_EQ(cuemu::impl::cuMemcpyHtoD(a, &byte, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuemu::impl::cuMemFree(b), CUDA_SUCCESS);
  // The context owns them: destroying it releases what the application did not free.
  ASSERT_EQ(cuemu::impl::cuMemAlloc(&a, 4096), CUDA_SUCCESS);
  EXPECT_EQ(cuemu::impl::cuCtxDestroy_v2(legacy), CUDA_SUCCESS);
  EXPECT_FALSE(space.isAccessible(a, 1));
}

TEST(IpcEventState, TicketsCompleteInAnyOrderAndWake) {
  auto state = cuemu::IpcEventState::create();
  ASSERT_TRUE(state);
  auto& s = **state;
  EXPECT_EQ(s.latest(), 0u);
  EXPECT_TRUE(s.isComplete(s.latest())) << "never recorded: complete";
  uint32_t first = s.beginRecord(), second = s.beginRecord();
  EXPECT_EQ(s.latest(), second);
  EXPECT_FALSE(s.isComplete(first));
  std::thread completer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s.complete(second);
    s.complete(first);  // an older ticket never moves the event back
  });
  s.wait(second);
  EXPECT_TRUE(s.isComplete(second));
  completer.join();
  EXPECT_TRUE(s.isComplete(first));
  CUipcEventHandle handle{};
  s.exportHandle(handle);
  auto opened = cuemu::IpcEventState::open(handle);
  ASSERT_TRUE(opened);
  EXPECT_EQ((*opened)->latest(), second) << "the same slot";
  CUipcEventHandle garbage{};
  EXPECT_FALSE(cuemu::IpcEventState::open(garbage));
}

TEST_F(MemoryTest, SynchronousCopiesKeepStreamOrderWithQueuedWork) {
  // Alternate queued (asynchronous) sets and synchronous copies on the legacy stream: every synchronous copy
  // must observe all work queued on the stream before it, whether it ran inline or on the worker.
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 4096), CUDA_SUCCESS);
  for (unsigned i = 1; i <= 2000; ++i) {
    ASSERT_EQ(cuMemsetD32Async(p, i, 1024, nullptr), CUDA_SUCCESS);
    unsigned v = 0;
    ASSERT_EQ(cuMemcpyDtoH_v2(&v, p + 4092, 4), CUDA_SUCCESS);
    ASSERT_EQ(v, i);
    ASSERT_EQ(cuMemcpyHtoD_v2(p, &i, 4), CUDA_SUCCESS);  // idle now: runs inline
  }
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

}  // namespace
