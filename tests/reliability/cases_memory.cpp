// Theme: memory: bad frees and copies, host registration of pages a kernel cannot write, exhaustion.
#include "cases.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

using namespace reliability;

namespace {

size_t pageSize() { return size_t(sysconf(_SC_PAGESIZE)); }

// Registers `page` (one host page, mapped with `protection`) and lets a kernel store into it: the registration
// may be refused, or the store must fault; the host must not die either way.
void registerAndStore(int protection, unsigned flags, bool unmapAfterRegistering) {
  setUp();
  CUmodule module = loadKernels();
  void* page = mmap(nullptr, pageSize(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(page, pageSize(), protection);
  CUresult registered = cuMemHostRegister(page, pageSize(), flags);
  if (registered != CUDA_SUCCESS) return;  // refused: nothing to store into
  if (unmapAfterRegistering) munmap(page, pageSize());
  CUdeviceptr p = 0;
  expectResult(cuMemHostGetDevicePointer(&p, page, 0), CUDA_SUCCESS, "cuMemHostGetDevicePointer");
  unsigned v = 5;
  void* args[] = {&p, &v};
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "store");
  CUresult r = cuCtxSynchronize();
  if (r != CUDA_ERROR_ILLEGAL_ADDRESS && !(r == CUDA_SUCCESS && protection == (PROT_READ | PROT_WRITE)))
    wrong("a kernel's store into a registered page it cannot write: " + resultName(r));
}

}  // namespace

RELIABILITY_CASE("memory", memory_bad_frees, 20, nullptr) {
  setUp();
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 256), CUDA_SUCCESS, "cuMemAlloc");
  expectResult(cuMemFree(p), CUDA_SUCCESS, "cuMemFree");
  expectError(cuMemFree(p), "a second cuMemFree");
  expectError(cuMemFree(0x12345678), "cuMemFree of garbage");
  expectResult(cuMemAlloc(&p, 256), CUDA_SUCCESS, "cuMemAlloc");
  expectError(cuMemFree(p + 16), "cuMemFree of an interior pointer");
  expectError(cuMemFreeHost(reinterpret_cast<void*>(0x1000)), "cuMemFreeHost of garbage");
  expectResult(cuMemFree(p), CUDA_SUCCESS, "cuMemFree of the allocation");
}

RELIABILITY_CASE("memory", memory_copies_past_allocations, 20, nullptr) {
  setUp();
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, 256), CUDA_SUCCESS, "cuMemAlloc");
  std::vector<uint8_t> host(1 << 20);
  expectError(cuMemcpyHtoD(p, host.data(), host.size()), "a 1 MiB copy into 256 bytes");
  expectError(cuMemcpyDtoH(host.data(), p + 128, 4096), "a copy out of the allocation's end");
  expectError(cuMemsetD8(p, 0, 1 << 20), "a 1 MiB memset of 256 bytes");
  expectError(cuMemcpyHtoD(p, nullptr, 16), "a copy from NULL");
  expectError(cuMemcpyDtoD(p, 0x10, 16), "a copy from device address 0x10");
  expectResult(cuMemcpyHtoD(p, host.data(), 256), CUDA_SUCCESS, "a valid copy afterwards");
}

RELIABILITY_CASE("memory", memory_huge_allocations, 20, nullptr) {
  setUp();
  CUdeviceptr p = 0;
  expectResult(cuMemAlloc(&p, size_t(1) << 50), CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc of 1 PiB");
  expectError(cuMemAlloc(&p, ~size_t(0)), "cuMemAlloc of SIZE_MAX");
  void* host = nullptr;
  expectError(cuMemHostAlloc(&host, size_t(1) << 50, 0), "cuMemHostAlloc of 1 PiB");
  expectResult(cuMemAlloc(&p, 1024), CUDA_SUCCESS, "cuMemAlloc afterwards");
}

RELIABILITY_CASE("memory", memory_register_read_only_page, 20, "") { registerAndStore(PROT_READ, 0, false); }

RELIABILITY_CASE("memory", memory_register_prot_none_page, 20, "") { registerAndStore(PROT_NONE, 0, false); }

RELIABILITY_CASE("memory", memory_register_then_unmap, 20, "") { registerAndStore(PROT_READ | PROT_WRITE, 0, true); }

RELIABILITY_CASE("memory", memory_many_small_allocations, 30, "") {
  setUp();
  CUmodule module = loadKernels();
  std::vector<CUdeviceptr> allocations;
  for (int i = 0; i < 40000; ++i) {
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc(&p, 1);
    if (r != CUDA_SUCCESS) {
      size_t free = 0, total = 0;
      cuMemGetInfo(&free, &total);
      wrong("allocation " + std::to_string(i) + " of one byte: " + resultName(r) + " with " +
            std::to_string(free >> 20) + " MiB free");
    }
    allocations.push_back(p);
  }
  unsigned v = 9;
  void* args[] = {&allocations.back(), &v};
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "a launch after 40,000 allocations");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
}

RELIABILITY_CASE("memory", memory_limits_out_of_range, 20, "") {
  setUp();
  CUresult stack = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, size_t(1) << 40);
  size_t value = 0;
  cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE);
  if (stack == CUDA_SUCCESS && value == size_t(1) << 40) wrong("a 1 TiB stack limit was accepted as is");
  CUresult heap = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, size_t(32) << 40);
  cuCtxGetLimit(&value, CU_LIMIT_MALLOC_HEAP_SIZE);
  if (heap == CUDA_SUCCESS && value == size_t(32) << 40) wrong("a 32 TiB heap limit was accepted as is");
}

// Registered memory is checked once per launch (RegisteredHostSnapshot): a range with a page unmapped before the
// launch must still work where it is mapped and fault cleanly where it is not.
RELIABILITY_CASE("memory", memory_register_then_unmap_half, 20, nullptr) {
  setUp();
  CUmodule module = loadKernels();
  size_t page = pageSize();
  auto* pages =
      static_cast<uint8_t*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  expectResult(cuMemHostRegister(pages, 2 * page, 0), CUDA_SUCCESS, "cuMemHostRegister of two pages");
  munmap(pages + page, page);
  CUdeviceptr p = 0;
  expectResult(cuMemHostGetDevicePointer(&p, pages, 0), CUDA_SUCCESS, "cuMemHostGetDevicePointer");
  unsigned v = 5;
  void* args[] = {&p, &v};
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "store into the mapped page");
  expectResult(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize after the store into the mapped page");
  if (*reinterpret_cast<unsigned*>(pages) != 5) wrong("the store into the mapped page did not arrive");
  p += page;
  expectResult(launch(kernel(module, "store"), 1, 1, args), CUDA_SUCCESS, "store into the unmapped page");
  expectResult(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS,
               "cuCtxSynchronize after the store into the unmapped page");
}
