// Issue 17 (CuPy's cuda_tests): how a stream-ordered pool's statistics move on an H100 with driver 580, and what
// cuGraphDebugDotPrint writes. CuPy's MemoryAsyncPool tests read USED_MEM_CURRENT and RESERVED_MEM_CURRENT after
// cuMemAllocAsync/cuMemFreeAsync of a few hundred bytes, expect freed pool memory to stay reserved (cuMemAlloc
// refused) until a synchronisation and cuMemPoolTrimTo(0), and look for the kernel's name in the dot file.
// Run: PROBE=asyncpool17 tools/gpu-probe/run.sh OUTDIR
#include <cuda.h>

#include <cstdio>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

static void show(const char* what, CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  std::printf("%s: %s (%d)\n", what, n ? n : "?", int(r));
  std::fflush(stdout);
}

static void stats(CUmemoryPool pool, const char* label) {
  cuuint64_t used = 0, reserved = 0, usedHigh = 0, reservedHigh = 0;
  cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
  cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
  cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &usedHigh);
  cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &reservedHigh);
  size_t freeMem = 0, total = 0;
  cuMemGetInfo(&freeMem, &total);
  static size_t firstFree = 0;
  if (!firstFree) firstFree = freeMem;
  std::printf("%s used=%llu reserved=%llu used_high=%llu reserved_high=%llu meminfo_free_delta=%lld\n", label,
              (unsigned long long)used, (unsigned long long)reserved, (unsigned long long)usedHigh,
              (unsigned long long)reservedHigh, (long long)(int64_t(freeMem) - int64_t(firstFree)));
  std::fflush(stdout);
}

static const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry cupy_sin_probe(.param .u64 p, .param .u32 n)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

static void dot(CUgraph graph, unsigned flags, const char* label) {
  std::string path = std::string("/tmp/asyncpool17-") + label + ".dot";
  show(label, cuGraphDebugDotPrint(graph, path.c_str(), flags));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::printf("----- %s (flags 0x%x) -----\n%s----- end %s -----\n", label, flags, text.str().c_str(), label);
  std::fflush(stdout);
}

int main() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  CUmemoryPool pool;
  cuDeviceGetDefaultMemPool(&pool, dev);
  CUstream stream;
  cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  stats(pool, "start");

  // Small allocations on the legacy stream, as CuPy's MemoryAsyncPool makes them (512-byte units).
  CUdeviceptr a = 0, b = 0, c = 0, d = 0;
  show("alloc 1024", cuMemAllocAsync(&a, 1024, nullptr));
  stats(pool, "after 1024");
  show("alloc 2048", cuMemAllocAsync(&b, 2048, nullptr));
  stats(pool, "after 2048");
  show("alloc 1", cuMemAllocAsync(&c, 1, nullptr));
  stats(pool, "after 1");
  show("alloc 100", cuMemAllocAsync(&d, 100, nullptr));
  stats(pool, "after 100");
  std::printf("offsets b-a=%lld c-a=%lld d-a=%lld\n", (long long)(b - a), (long long)(c - a), (long long)(d - a));
  show("free 2048", cuMemFreeAsync(b, nullptr));
  stats(pool, "after free 2048, no sync");
  show("free the rest", cuMemFreeAsync(a, nullptr));
  cuMemFreeAsync(c, nullptr);
  cuMemFreeAsync(d, nullptr);
  stats(pool, "after free all, no sync");
  show("stream sync (legacy)", cuStreamSynchronize(nullptr));
  stats(pool, "after legacy stream sync");
  show("alloc 1024 again", cuMemAllocAsync(&a, 1024, nullptr));
  stats(pool, "after 1024 again");
  cuMemFreeAsync(a, nullptr);
  show("ctx sync", cuCtxSynchronize());
  stats(pool, "after free + ctx sync");
  show("trim 0", cuMemPoolTrimTo(pool, 0));
  stats(pool, "after trim 0");

  // On another stream, released by an event synchronisation?
  show("alloc 1024 on stream", cuMemAllocAsync(&a, 1024, stream));
  cuMemFreeAsync(a, stream);
  CUevent event;
  cuEventCreate(&event, 0);
  cuEventRecord(event, stream);
  stats(pool, "stream free, no sync");
  show("event sync", cuEventSynchronize(event));
  stats(pool, "after event sync");
  show("alloc 1024 on stream", cuMemAllocAsync(&a, 1024, stream));
  cuMemFreeAsync(a, stream);
  show("stream query", cuStreamQuery(stream));
  stats(pool, "after stream query");
  show("stream sync", cuStreamSynchronize(stream));
  stats(pool, "after stream sync");
  show("trim 0", cuMemPoolTrimTo(pool, 0));
  stats(pool, "after trim 0 (2)");

  // Growth: 40 MiB, then 3 MiB, then 100 MiB.
  CUdeviceptr big[3] = {};
  size_t sizes[3] = {40u << 20, 3u << 20, 100u << 20};
  for (int i = 0; i < 3; ++i) {
    show("alloc big", cuMemAllocAsync(&big[i], sizes[i], stream));
    char label[64];
    std::snprintf(label, sizeof label, "after big %zu", sizes[i]);
    stats(pool, label);
  }
  for (auto p : big) cuMemFreeAsync(p, stream);
  stats(pool, "big freed, no sync");
  cuStreamSynchronize(stream);
  stats(pool, "big freed, stream sync");
  cuMemPoolTrimTo(pool, 0);

  // A release threshold of 64 MiB keeps 8 MiB at a synchronisation; a trim to 4 MiB.
  cuuint64_t threshold = 64u << 20;
  cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  show("alloc 8M", cuMemAllocAsync(&a, 8u << 20, stream));
  cuMemFreeAsync(a, stream);
  cuStreamSynchronize(stream);
  stats(pool, "threshold 64M, 8M freed, sync");
  show("alloc 80M", cuMemAllocAsync(&a, 80u << 20, stream));
  cuMemFreeAsync(a, stream);
  cuStreamSynchronize(stream);
  stats(pool, "threshold 64M, 80M freed, sync");
  cuMemPoolTrimTo(pool, 4u << 20);
  stats(pool, "trim 4M");
  cuMemPoolTrimTo(pool, 0);
  stats(pool, "trim 0 (3)");
  threshold = 0;
  cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);

  // 70% of the device through the pool, freed without a synchronisation: does cuMemAlloc of 30% succeed?
  size_t freeMem = 0, total = 0;
  cuMemGetInfo(&freeMem, &total);
  size_t large = size_t(0.7 * double(total)), rest = size_t(0.3 * double(total));
  show("alloc 70%", cuMemAllocAsync(&a, large, nullptr));
  show("free 70% async", cuMemFreeAsync(a, nullptr));
  stats(pool, "70% freed, no sync");
  CUdeviceptr plain = 0;
  CUresult r = cuMemAlloc(&plain, rest);
  show("cuMemAlloc 30% before sync", r);
  if (r == CUDA_SUCCESS) cuMemFree(plain);
  stats(pool, "after cuMemAlloc 30%");
  cuStreamSynchronize(nullptr);
  stats(pool, "70% freed, legacy sync");
  r = cuMemAlloc(&plain, rest);
  show("cuMemAlloc 30% after sync", r);
  if (r == CUDA_SUCCESS) cuMemFree(plain);
  cuMemPoolTrimTo(pool, 0);
  stats(pool, "end");

  // cuGraphDebugDotPrint of a kernel node, a memset node and a host-less empty node.
  CUmodule module;
  show("module", cuModuleLoadData(&module, kPtx));
  CUfunction function;
  show("function", cuModuleGetFunction(&function, module, "cupy_sin_probe"));
  CUdeviceptr out = 0;
  cuMemAlloc(&out, 256);
  CUgraph graph;
  cuGraphCreate(&graph, 0);
  unsigned n = 7;
  void* args[] = {&out, &n};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = function;
  kp.gridDimX = 2;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 32;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CUgraphNode kernel, memset, empty;
  show("kernel node", cuGraphAddKernelNode(&kernel, graph, nullptr, 0, &kp));
  CUDA_MEMSET_NODE_PARAMS mp{};
  mp.dst = out;
  mp.elementSize = 4;
  mp.width = 16;
  mp.height = 1;
  mp.value = 3;
  show("memset node", cuGraphAddMemsetNode(&memset, graph, &kernel, 1, &mp, ctx));
  show("empty node", cuGraphAddEmptyNode(&empty, graph, &memset, 1));
  dot(graph, 0, "plain");
  dot(graph, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE, "verbose");
  dot(graph, CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS, "kernel_params");
  dot(graph, CU_GRAPH_DEBUG_DOT_FLAGS_RUNTIME_TYPES, "runtime_types");
  show("dot bad flags", cuGraphDebugDotPrint(graph, "/tmp/asyncpool17-bad.dot", 1u << 20));
  show("dot null path", cuGraphDebugDotPrint(graph, nullptr, 0));
  show("dot unwritable path", cuGraphDebugDotPrint(graph, "/nonexistent-dir/x.dot", 0));
  return 0;
}
