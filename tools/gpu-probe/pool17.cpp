// Issue 17: which mapping a memory pool's allocation reports (CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR and
// MAPPING_SIZE), measured on an H100 with driver 580. vmm17 showed a pool's first 4 KiB allocation reporting a
// 32 MiB mapping that starts at it; this probe follows a pool's chunks: several allocations of growing size, what
// each reports (offsets from the pool's first allocation), after frees, after a trim, in the default pool, in a
// pinned host pool and in a pool with a small maximum size.
// Run: PROBE=pool17 tools/gpu-probe/run.sh OUTDIR
#include <cuda.h>

#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

static void show(const char* what, CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  if (r != CUDA_SUCCESS) std::printf("%s: %s (%d)\n", what, n ? n : "?", int(r));
}

static uint64_t g_origin = 0;

static void report(const std::string& label, CUdeviceptr p, size_t bytes) {
  void* base = nullptr;
  size_t size = 0;
  CUdeviceptr rangeStart = 0;
  size_t rangeSize = 0;
  show("mapping_base", cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p));
  show("mapping_size", cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p));
  show("range_start", cuPointerGetAttribute(&rangeStart, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p));
  show("range_size", cuPointerGetAttribute(&rangeSize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p));
  if (!g_origin) g_origin = p;
  auto off = [](uint64_t a) { return (long long)(int64_t(a - g_origin)); };
  std::printf(
      "%s bytes=%zu p-origin=%lld mapping_base-origin=%lld mapping_base-p=%lld mapping_size=0x%zx "
      "range_start-p=%lld range_size=0x%zx\n",
      label.c_str(), bytes, off(p), off(reinterpret_cast<uint64_t>(base)),
      (long long)(int64_t(reinterpret_cast<uint64_t>(base) - p)), size, (long long)(int64_t(rangeStart - p)),
      rangeSize);
  // An interior pointer answers the same mapping.
  if (bytes > 64) {
    void* base2 = nullptr;
    size_t size2 = 0;
    cuPointerGetAttribute(&base2, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p + bytes - 1);
    cuPointerGetAttribute(&size2, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p + bytes - 1);
    std::printf("%s.last_byte same_mapping=%d\n", label.c_str(), base2 == base && size2 == size);
  }
  std::fflush(stdout);
}

static void series(const char* name, CUmemoryPool pool, const std::vector<size_t>& sizes, bool freeAndAgain) {
  g_origin = 0;
  std::vector<CUdeviceptr> ptrs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    CUdeviceptr p = 0;
    CUresult r = pool ? cuMemAllocFromPoolAsync(&p, sizes[i], pool, nullptr) : cuMemAllocAsync(&p, sizes[i], nullptr);
    if (r != CUDA_SUCCESS) {
      show((std::string(name) + ".alloc" + std::to_string(i)).c_str(), r);
      continue;
    }
    cuStreamSynchronize(nullptr);
    report(std::string(name) + ".a" + std::to_string(i), p, sizes[i]);
    ptrs.push_back(p);
  }
  if (!freeAndAgain) {
    for (CUdeviceptr p : ptrs) cuMemFreeAsync(p, nullptr);
    cuStreamSynchronize(nullptr);
    return;
  }
  // Free the first allocation: do the others keep their mapping? Then allocate again.
  cuMemFreeAsync(ptrs[0], nullptr);
  cuStreamSynchronize(nullptr);
  for (size_t i = 1; i < ptrs.size(); ++i)
    report(std::string(name) + ".after_free0.a" + std::to_string(i), ptrs[i], sizes[i]);
  CUdeviceptr q = 0;
  show("again", pool ? cuMemAllocFromPoolAsync(&q, 4096, pool, nullptr) : cuMemAllocAsync(&q, 4096, nullptr));
  cuStreamSynchronize(nullptr);
  report(std::string(name) + ".again4k", q, 4096);
  ptrs[0] = q;
  for (CUdeviceptr p : ptrs) cuMemFreeAsync(p, nullptr);
  cuStreamSynchronize(nullptr);
  if (pool) show("trim", cuMemPoolTrimTo(pool, 0));
  CUdeviceptr t = 0;
  show("after_trim", pool ? cuMemAllocFromPoolAsync(&t, 4096, pool, nullptr) : cuMemAllocAsync(&t, 4096, nullptr));
  cuStreamSynchronize(nullptr);
  report(std::string(name) + ".after_trim4k", t, 4096);
  cuMemFreeAsync(t, nullptr);
  cuStreamSynchronize(nullptr);
}

int main() {
  cuInit(0);
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuCtxCreate(&ctx, nullptr, 0, dev);
  const std::vector<size_t> sizes = {4096,        4096,         1 << 20,         (30u << 20), (3u << 20),
                                     (40u << 20), (100u << 20), (64u << 20) + 1, 1,           (2u << 20) + 1};
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool;
  show("create", cuMemPoolCreate(&pool, &props));
  series("device_pool", pool, sizes, true);
  series("default_pool", nullptr, {4096, 4096, 1 << 20, 40u << 20}, false);
  CUmemPoolProps hostProps = props;
  hostProps.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUmemoryPool hostPool;
  show("host_create", cuMemPoolCreate(&hostPool, &hostProps));
  series("host_pool", hostPool, {4096, 4096, 40u << 20}, false);
  CUmemPoolProps smallProps = props;
  smallProps.maxSize = 4u << 20;
  CUmemoryPool smallPool;
  show("small_create", cuMemPoolCreate(&smallPool, &smallProps));
  series("small_pool", smallPool, {4096, 1 << 20}, false);
  // A pool with a release threshold: a freed chunk kept for reuse.
  uint64_t keep = ~0ull;
  cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  series("keeping_pool", pool, {4096, 40u << 20}, true);
  std::printf("done\n");
  return 0;
}
