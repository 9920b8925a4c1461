// 16 threads creating, pushing, popping, migrating and destroying contexts while allocating, retaining the
// primary contexts and sharing one context between all threads. Run under ThreadSanitizer as well.
#include "core/context.h"
#include "core/device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace cuemu {
namespace {

constexpr int kThreads = 16;
constexpr int kIterations = 1000;

struct Owned {
  CUcontext handle;
  size_t tag;
};

std::atomic<int> g_storageDestroyed{0};

void countStorageDestroyed(CUcontext, void*, void*) { g_storageDestroyed.fetch_add(1); }

TEST(ContextStressTest, SixteenThreads) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  int deviceCount = 0;
  ASSERT_EQ(cuDeviceGetCount(&deviceCount), CUDA_SUCCESS);
  ASSERT_GE(deviceCount, 1);

  // Allocation goes through the memory area when it is there; context-local storage always.
  bool canAllocate = false;
  {
    CUcontext probe;
    ASSERT_EQ(cuCtxCreate_v2(&probe, 0, 0), CUDA_SUCCESS);
    CUdeviceptr pointer = 0;
    if (cuMemAlloc_v2(&pointer, 256) == CUDA_SUCCESS) {
      canAllocate = true;
      EXPECT_EQ(cuMemFree_v2(pointer), CUDA_SUCCESS);
    }
    ASSERT_EQ(cuCtxDestroy_v2(probe), CUDA_SUCCESS);
  }

  CUcontext shared;
  ASSERT_EQ(cuCtxCreate_v2(&shared, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxPopCurrent_v2(nullptr), CUDA_SUCCESS);

  std::mutex poolMutex;
  std::vector<Owned> pool;
  std::atomic<size_t> nextTag{1};
  std::atomic<int> storagePuts{0};
  std::atomic<int> failures{0};
  auto check = [&](CUresult result, CUresult expected, int line) {
    if (result != expected) {
      failures.fetch_add(1);
      ADD_FAILURE_AT(__FILE__, line) << "got " << result << ", expected " << expected;
    }
  };
#define CHECK_CU(expected, call) check((call), (expected), __LINE__)

  auto worker = [&](int threadIndex) {
    std::mt19937 random(1234 + threadIndex);
    for (int i = 0; i < kIterations; ++i) {
      switch (random() % 5) {
        case 0: {  // create, use, hand over to another thread
          CUcontext context;
          CUdevice device = static_cast<CUdevice>(random() % deviceCount);
          CHECK_CU(CUDA_SUCCESS, cuCtxCreate_v2(&context, 0, device));
          size_t tag = (size_t(4) << 20) + nextTag.fetch_add(1) * 16;  // the heap limit is at least 4 MiB
          CHECK_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, tag));
          if (auto owned = handleTable<Context>().find(handleValue(context))) {
            static int key;
            owned->storagePut(&key, nullptr, countStorageDestroyed);
            storagePuts.fetch_add(1);
          }
          if (canAllocate) {
            CUdeviceptr pointer = 0;
            CHECK_CU(CUDA_SUCCESS, cuMemAlloc_v2(&pointer, 1024 + random() % 4096));
            // Left allocated on purpose: destroying the context frees it.
          }
          CUcontext popped = nullptr;
          CHECK_CU(CUDA_SUCCESS, cuCtxPopCurrent_v2(&popped));
          if (popped != context) failures.fetch_add(1);
          std::lock_guard lock(poolMutex);
          pool.push_back({context, tag});
          break;
        }
        case 1:
        case 2: {  // take a context made elsewhere, check its state, destroy it or pass it on
          Owned owned{};
          {
            std::lock_guard lock(poolMutex);
            if (pool.empty()) break;
            std::size_t index = random() % pool.size();
            owned = pool[index];
            pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(index));
          }
          CHECK_CU(CUDA_SUCCESS, cuCtxPushCurrent_v2(owned.handle));
          size_t heap = 0;
          CHECK_CU(CUDA_SUCCESS, cuCtxGetLimit(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
          if (heap != owned.tag) failures.fetch_add(1);
          CUdevice device = -1;
          CHECK_CU(CUDA_SUCCESS, cuCtxGetDevice(&device));
          CHECK_CU(CUDA_SUCCESS, cuCtxSynchronize());
          if (random() % 2) {
            CHECK_CU(CUDA_SUCCESS, cuCtxDestroy_v2(owned.handle));  // pops it too
            CHECK_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent_v2(owned.handle));
          } else {
            CHECK_CU(CUDA_SUCCESS, cuCtxPopCurrent_v2(nullptr));
            std::lock_guard lock(poolMutex);
            pool.push_back(owned);
          }
          break;
        }
        case 3: {  // the primary context, shared with everyone
          CUdevice device = static_cast<CUdevice>(random() % deviceCount);
          CUcontext primary;
          CHECK_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&primary, device));
          CHECK_CU(CUDA_SUCCESS, cuCtxPushCurrent_v2(primary));
          unsigned flags = 0;
          CHECK_CU(CUDA_SUCCESS, cuCtxGetFlags(&flags));
          if (canAllocate) {
            CUdeviceptr pointer = 0;
            CHECK_CU(CUDA_SUCCESS, cuMemAlloc_v2(&pointer, 512));
            CHECK_CU(CUDA_SUCCESS, cuMemFree_v2(pointer));
          }
          CHECK_CU(CUDA_SUCCESS, cuCtxPopCurrent_v2(nullptr));
          CHECK_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRelease_v2(device));
          break;
        }
        case 4: {  // one context current to many threads at once
          CHECK_CU(CUDA_SUCCESS, cuCtxSetCurrent(shared));
          size_t stack = 0;
          CHECK_CU(CUDA_SUCCESS, cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
          CHECK_CU(CUDA_SUCCESS, cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20));
          unsigned long long id = 0;
          CHECK_CU(CUDA_SUCCESS, cuCtxGetId(nullptr, &id));
          CHECK_CU(CUDA_SUCCESS, cuCtxSetCurrent(nullptr));
          break;
        }
      }
      CUcontext current = reinterpret_cast<CUcontext>(1);
      CHECK_CU(CUDA_SUCCESS, cuCtxGetCurrent(&current));
      if (current != nullptr) failures.fetch_add(1);  // every step leaves the stack as it found it
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();

  // Several threads racing to destroy one context: exactly one wins.
  CUcontext contested;
  ASSERT_EQ(cuCtxCreate_v2(&contested, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxPopCurrent_v2(nullptr), CUDA_SUCCESS);
  std::atomic<int> won{0}, lost{0};
  threads.clear();
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      CUresult result = cuCtxDestroy_v2(contested);
      (result == CUDA_SUCCESS ? won : lost).fetch_add(1);
      if (result != CUDA_SUCCESS && result != CUDA_ERROR_INVALID_CONTEXT) failures.fetch_add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(lost.load(), kThreads - 1);

  for (const Owned& owned : pool) EXPECT_EQ(cuCtxDestroy_v2(owned.handle), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxDestroy_v2(shared), CUDA_SUCCESS);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(g_storageDestroyed.load(), storagePuts.load());
  int live = 0;
  handleTable<Context>().forEach(
      [&](const std::shared_ptr<Context>& context) { live += context->isPrimary() ? 0 : 1; });
  EXPECT_EQ(live, 0);
}

}  // namespace
}  // namespace cuemu
