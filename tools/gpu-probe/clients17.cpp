// Experiments on NVIDIA's driver for the behaviours real clients rely on (issue 17). Run on a GPU machine with
// `PROBE=clients17 tools/gpu-probe/run.sh OUTDIR`. Each line is "name: result"; the answers are recorded in the
// conformance cases and unit tests that cite them. Faulting experiments run in forked children that never
// inherit an initialised driver (the parent calls into CUDA only after every child has finished).
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define SHOW(name, expr)                                                     \
  do {                                                                       \
    CUresult r_ = (expr);                                                    \
    const char* n_ = nullptr;                                                \
    cuGetErrorName(r_, &n_);                                                 \
    std::printf("%s: %s (%d)\n", name, n_ ? n_ : "?", static_cast<int>(r_)); \
  } while (0)

static const char* kMemoryPtx = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .entry read32(.param .u64 p, .param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
.visible .entry write32(.param .u64 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry address_of(.param .u64 p, .param .u64 out)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  st.global.u64 [%rd2], %rd1;
  ret;
}
.visible .entry local_align(.param .u64 out)
{
  .local .align 256 .b8 arr[300];
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, arr;
  cvta.local.u64 %rd2, %rd1;
  st.local.u32 [arr], %r1;
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r1, 8;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u64 [%rd5], %rd2;
  ret;
}
)";

// shfl.sync with every mode; each thread holds 100 * tid + 7; the kernel takes b, c and the member mask, and
// threads with tid >= exitFrom leave before the shuffle.
static std::string shflPtx() {
  std::string s = ".version 8.0\n.target sm_75\n.address_size 64\n";
  for (const char* mode : {"up", "down", "bfly", "idx"}) {
    s += std::string(".visible .entry shfl_") + mode +
         "(.param .u64 out, .param .u32 b, .param .u32 c, .param .u32 mask, .param .u32 exitFrom)\n{\n"
         "  .reg .pred %p<3>;\n  .reg .b32 %r<10>;\n  .reg .b64 %rd<4>;\n"
         "  mov.u32 %r1, %tid.x;\n  ld.param.u32 %r2, [exitFrom];\n  setp.ge.u32 %p1, %r1, %r2;\n  @%p1 ret;\n"
         "  mad.lo.u32 %r3, %r1, 100, 7;\n  ld.param.u32 %r4, [b];\n  ld.param.u32 %r5, [c];\n"
         "  ld.param.u32 %r6, [mask];\n"
         "  shfl.sync." +
         mode +
         ".b32 %r7|%p2, %r3, %r4, %r5, %r6;\n"
         "  selp.u32 %r8, 1, 0, %p2;\n"
         "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 8;\n  add.s64 %rd3, %rd1, %rd2;\n"
         "  st.global.v2.u32 [%rd3], {%r7, %r8};\n  ret;\n}\n";
  }
  return s;
}

static bool setup(CUcontext* ctx, CUmodule* mod, const char* ptx) {
  CUdevice dev;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(ctx, nullptr, 0, dev)) return false;
  return cuModuleLoadData(mod, ptx) == CUDA_SUCCESS;
}

// One out-of-bounds access in a child process: allocation of `size` bytes, access at `offset` from its start.
static void oobChild(size_t size, long long offset, bool write) {
  CUcontext ctx;
  CUmodule mod;
  if (!setup(&ctx, &mod, kMemoryPtx)) _exit(3);
  CUdeviceptr base = 0, out = 0;
  if (cuMemAlloc(&base, size) || cuMemAlloc(&out, 64)) _exit(4);
  CUfunction f;
  cuModuleGetFunction(&f, mod, write ? "write32" : "read32");
  CUdeviceptr p = base + offset;
  void* args[] = {&p, &out};
  CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
  if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  std::printf("oob size %zu offset %lld %s base%%2M 0x%llx: %s\n", size, offset, write ? "write" : "read",
              static_cast<unsigned long long>(base % (2u << 20)), n ? n : "?");
  std::fflush(stdout);
  _exit(0);
}

static void runChild(void (*fn)(size_t, long long, bool), size_t size, long long offset, bool write) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) fn(size, offset, write);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::printf("oob child size %zu offset %lld status %d\n", size, offset, status);
}

static void outOfBounds() {
  const size_t sizes[] = {40, 4096, 100000, 1u << 20, 2u << 20, 3u << 20};
  for (size_t size : sizes) {
    std::vector<long long> offsets = {static_cast<long long>(size),
                                      static_cast<long long>(size) + 24,
                                      512,
                                      4096,
                                      65532,
                                      65536,
                                      1 << 20,
                                      (2 << 20) - 4,
                                      2 << 20,
                                      4 << 20,
                                      64 << 20,
                                      -4,
                                      -512,
                                      -4096,
                                      -(1 << 20),
                                      -(2 << 20) - 4};
    for (long long off : offsets) {
      if (off >= 0 && static_cast<size_t>(off) < size) continue;
      runChild(oobChild, size, off, false);
      runChild(oobChild, size, off, true);
    }
  }
}

// Where do consecutive small allocations land (suballocation stride, alignment)?
static void allocationLayout(CUmodule) {
  for (size_t size : {1ul, 40ul, 512ul, 4096ul, 65536ul, 1ul << 20, 2ul << 20}) {
    CUdeviceptr a = 0, b = 0, c = 0;
    cuMemAlloc(&a, size);
    cuMemAlloc(&b, size);
    cuMemAlloc(&c, size);
    std::printf("layout size %zu: a%%2M 0x%llx b-a %lld c-b %lld\n", size,
                static_cast<unsigned long long>(a % (2u << 20)), static_cast<long long>(b - a),
                static_cast<long long>(c - b));
    cuMemFree(a);
    cuMemFree(b);
    cuMemFree(c);
  }
}

static void shuffles() {
  CUmodule mod;
  std::string ptx = shflPtx();
  SHOW("shfl.load", cuModuleLoadData(&mod, ptx.c_str()));
  CUdeviceptr out;
  cuMemAlloc(&out, 64 * 8);
  struct Case {
    const char* mode;
    unsigned b, c, mask, threads, exitFrom;
  };
  std::vector<Case> cases;
  for (unsigned threads : {1u, 5u, 17u, 32u, 48u}) {
    unsigned partial = threads >= 32 ? 0xffffffffu : ((1u << threads) - 1);
    for (unsigned mask : {0xffffffffu, partial}) {
      if (mask == partial && threads >= 32) continue;
      cases.push_back({"down", 1, 0x1f, mask, threads, 64});
      cases.push_back({"down", 16, 0x1f, mask, threads, 64});
      cases.push_back({"down", 2, 0x181f, mask, threads, 64});  // width 8
      cases.push_back({"up", 1, 0, mask, threads, 64});
      cases.push_back({"up", 4, 0x1800, mask, threads, 64});  // width 8
      cases.push_back({"bfly", 1, 0x1f, mask, threads, 64});
      cases.push_back({"bfly", 16, 0x1f, mask, threads, 64});
      cases.push_back({"idx", 0, 0x1f, mask, threads, 64});
      cases.push_back({"idx", 20, 0x1f, mask, threads, 64});
      cases.push_back({"idx", 3, 0x181f, mask, threads, 64});
    }
  }
  // Exited lanes: 32 threads, those >= 20 leave before the shuffle.
  for (unsigned mask : {0xffffffffu, 0xfffffu}) {
    cases.push_back({"down", 16, 0x1f, mask, 32, 20});
    cases.push_back({"up", 1, 0, mask, 32, 20});
    cases.push_back({"bfly", 8, 0x1f, mask, 32, 20});
    cases.push_back({"idx", 25, 0x1f, mask, 32, 20});
  }
  for (const Case& k : cases) {
    CUfunction f;
    std::string name = std::string("shfl_") + k.mode;
    cuModuleGetFunction(&f, mod, name.c_str());
    cuMemsetD32(out, 0xdeadbeef, 64 * 2);
    unsigned b = k.b, c = k.c, mask = k.mask, exitFrom = k.exitFrom;
    void* args[] = {&out, &b, &c, &mask, &exitFrom};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, k.threads, 1, 1, 0, nullptr, args, nullptr);
    if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
    unsigned host[128];
    cuMemcpyDtoH(host, out, sizeof(host));
    std::printf("shfl %s b %u c 0x%x mask 0x%x threads %u exitFrom %u result %d:", k.mode, k.b, k.c, k.mask, k.threads,
                k.exitFrom, static_cast<int>(r));
    for (unsigned t = 0; t < k.threads && t < 64; ++t) std::printf(" %u/%u", host[2 * t], host[2 * t + 1]);
    std::printf("\n");
    if (r != CUDA_SUCCESS) return;
  }
}

static void exportTables() {
  const char* ids[] = {"21318c6097143248 8ca641ff7324c8f2", "da9151d33ae6cc41 a5c04f26d533e328",
                       "0123456789abcdef 0123456789abcdef", "6bd5fb6c5bf4e74a 8987d93912fd9df9"};
  for (const char* text : ids) {
    CUuuid id;
    std::string hex;
    for (const char* c = text; *c; ++c)
      if (*c != ' ') hex += *c;
    for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    const void* table = reinterpret_cast<const void*>(0x1234);
    CUresult r = cuGetExportTable(&table, &id);
    std::printf("exporttable %s: result %d table %s\n", hex.c_str(), static_cast<int>(r),
                table == reinterpret_cast<const void*>(0x1234) ? "untouched" : (table ? "non-null" : "null"));
  }
}

static void handles(CUcontext ctx, CUmodule mod) {
  CUstream s;
  CUevent e;
  CUfunction f;
  cuStreamCreate(&s, 0);
  cuEventCreate(&e, 0);
  cuModuleGetFunction(&f, mod, "read32");
  std::printf("handles ctx %p module %p function %p stream %p event %p\n", static_cast<void*>(ctx),
              static_cast<void*>(mod), static_cast<void*>(f), static_cast<void*>(s), static_cast<void*>(e));
  cuStreamDestroy(s);
  cuEventDestroy(e);
}

static void localAlign(CUmodule mod) {
  CUfunction f;
  cuModuleGetFunction(&f, mod, "local_align");
  CUdeviceptr out;
  cuMemAlloc(&out, 64 * 8);
  void* args[] = {&out};
  CUresult r = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr);
  if (!r) r = cuCtxSynchronize();
  unsigned long long host[64];
  cuMemcpyDtoH(host, out, sizeof(host));
  int misaligned = 0;
  for (auto a : host) misaligned += (a % 256) != 0;
  std::printf("local_align result %d misaligned %d first %%256 %llu\n", static_cast<int>(r), misaligned, host[0] % 256);
  cuMemFree(out);
}

// A graph allocation that the program frees outside the graph, then the graph launched again.
static void graphAllocFreedOutside(CUmodule mod) {
  CUgraph g;
  cuGraphCreate(&g, 0);
  CUDA_MEM_ALLOC_NODE_PARAMS ap{};
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = 1 << 20;
  CUgraphNode alloc, kernel;
  SHOW("gmem.addalloc", cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
  CUdeviceptr out;
  cuMemAlloc(&out, 64);
  CUfunction f;
  cuModuleGetFunction(&f, mod, "write32");
  CUdeviceptr p = ap.dptr;
  void* args[] = {&p};
  CUDA_KERNEL_NODE_PARAMS kp{};
  kp.func = f;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  SHOW("gmem.addkernel", cuGraphAddKernelNode(&kernel, g, &alloc, 1, &kp));
  CUgraphExec exec;
  SHOW("gmem.instantiate", cuGraphInstantiate(&exec, g, 0));
  SHOW("gmem.launch1", cuGraphLaunch(exec, nullptr));
  SHOW("gmem.sync1", cuCtxSynchronize());
  SHOW("gmem.launch_again_unfreed", cuGraphLaunch(exec, nullptr));
  SHOW("gmem.sync_again", cuCtxSynchronize());
  SHOW("gmem.free_outside", cuMemFree(ap.dptr));
  SHOW("gmem.launch2", cuGraphLaunch(exec, nullptr));
  SHOW("gmem.sync2", cuCtxSynchronize());
  unsigned v = 0;
  SHOW("gmem.read_after_launch2", cuMemcpyDtoH(&v, ap.dptr, 4));
  std::printf("gmem value %u\n", v);
  SHOW("gmem.free_async_outside", cuMemFreeAsync(ap.dptr, nullptr));
  SHOW("gmem.sync3", cuCtxSynchronize());
  SHOW("gmem.launch3", cuGraphLaunch(exec, nullptr));
  SHOW("gmem.sync4", cuCtxSynchronize());
  cuGraphExecDestroy(exec);
  cuGraphDestroy(g);
}

static void noContextFrees() {
  CUdeviceptr d;
  void* h;
  cuMemAlloc(&d, 4096);
  cuMemAllocHost(&h, 4096);
  CUcontext cur;
  cuCtxPopCurrent(&cur);
  SHOW("nocontext.memfree", cuMemFree(d));
  SHOW("nocontext.memfreehost", cuMemFreeHost(h));
  SHOW("nocontext.memfree_again", cuMemFree(d));
  SHOW("nocontext.memfree_zero", cuMemFree(0));
  cuCtxPushCurrent(cur);
}

static void forkedChild() {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    CUdevice dev;
    int n = -1;
    SHOW("fork.child.init", cuInit(0));
    SHOW("fork.child.devicecount", cuDeviceGetCount(&n));
    SHOW("fork.child.deviceget", cuDeviceGet(&dev, 0));
    CUcontext c;
    SHOW("fork.child.ctxcreate", cuCtxCreate(&c, nullptr, 0, 0));
    SHOW("fork.child.ctxgetcurrent", cuCtxGetCurrent(&c));
    int v = 0;
    SHOW("fork.child.drivergetversion", cuDriverGetVersion(&v));
    std::fflush(stdout);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
}

int main() {
  outOfBounds();
  CUcontext ctx;
  CUmodule mod;
  if (!setup(&ctx, &mod, kMemoryPtx)) {
    std::printf("setup failed\n");
    return 1;
  }
  exportTables();
  handles(ctx, mod);
  allocationLayout(mod);
  localAlign(mod);
  noContextFrees();
  graphAllocFreedOutside(mod);
  forkedChild();
  shuffles();
  return 0;
}
