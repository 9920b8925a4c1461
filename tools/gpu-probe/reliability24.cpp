// Issue 24 (hostile input): what NVIDIA's driver answers for the inputs cuemu mishandled. Run on a GPU machine with
// `PROBE=reliability24 tools/gpu-probe/run.sh OUTDIR`. Every section runs in a forked child that initialises CUDA
// itself (the parent never calls the driver), so a crash, a hang (alarm) or a sticky fault stays in its section;
// the parent prints how each child ended. Prints "name: result" lines.
#include <cuda.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const char* name(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

#define SHOW(label, expr)                                                        \
  do {                                                                           \
    CUresult r_ = (expr);                                                        \
    std::printf("%s: %s (%d)\n", std::string(label).c_str(), name(r_), int(r_)); \
    std::fflush(stdout);                                                         \
  } while (0)

static CUcontext makeContext() {
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext ctx = nullptr;
  cuCtxCreate(&ctx, nullptr, 0, dev);
  return ctx;
}

// Runs `body` in a child with a time limit; reports how it ended.
template <class F> static void section(const char* label, unsigned seconds, F body) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(seconds);
    body();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    std::printf("%s.end: signal %d%s\n", label, WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
  else
    std::printf("%s.end: exit %d\n", label, WEXITSTATUS(status));
  std::fflush(stdout);
}

static CUresult loadEx(CUmodule* m, const void* image, std::string* log) {
  static char errors[8192], info[8192];
  errors[0] = info[0] = 0;
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {errors, reinterpret_cast<void*>(uintptr_t(sizeof errors)), info,
                  reinterpret_cast<void*>(uintptr_t(sizeof info))};
  CUresult r = cuModuleLoadDataEx(m, image, 4, opts, vals);
  *log = std::string("error log [") + errors + "] info log [" + info + "]";
  for (char& c : *log)
    if (c == '\n') c = '|';
  return r;
}

static const char* kReqntid = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry req64(.param .u64 out) .reqntid 64, 1, 1
{
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry max64(.param .u64 out) .maxntid 64, 1, 1
{
  ret;
}
.visible .entry req8x8(.param .u64 out) .reqntid 8, 8
{
  ret;
}
)";

static void reqntid() {
  makeContext();
  CUmodule m;
  SHOW("reqntid.load", cuModuleLoadData(&m, kReqntid));
  CUfunction req, max, req2d;
  SHOW("reqntid.getfunc", cuModuleGetFunction(&req, m, "req64"));
  cuModuleGetFunction(&max, m, "max64");
  cuModuleGetFunction(&req2d, m, "req8x8");
  int v = -1;
  cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, req);
  std::printf("reqntid.attr_max_threads: %d\n", v);
  cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, req2d);
  std::printf("reqntid.attr_max_threads_2d: %d\n", v);
  CUdeviceptr out;
  cuMemAlloc(&out, 4096);
  void* params[] = {&out};
  SHOW("reqntid.launch32", cuLaunchKernel(req, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.sync_after32", cuCtxSynchronize());
  SHOW("reqntid.launch128", cuLaunchKernel(req, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.launch64x2", cuLaunchKernel(req, 1, 1, 1, 64, 2, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.launch32x2", cuLaunchKernel(req, 1, 1, 1, 32, 2, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.launch64", cuLaunchKernel(req, 2, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.sync_after64", cuCtxSynchronize());
  SHOW("reqntid.2d_launch64x1", cuLaunchKernel(req2d, 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  SHOW("reqntid.2d_launch8x8", cuLaunchKernel(req2d, 1, 1, 1, 8, 8, 1, 0, nullptr, params, nullptr));
  SHOW("maxntid.launch128", cuLaunchKernel(max, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  SHOW("maxntid.launch32", cuLaunchKernel(max, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  // The launch-config form
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  SHOW("reqntid.launchEx32", cuLaunchKernelEx(&cfg, req, params, nullptr));
  SHOW("reqntid.sync_end", cuCtxSynchronize());
}

static std::string paramKernel(unsigned bytes) {
  return ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry bigparams(.param .align 4 .b8 p[" +
         std::to_string(bytes) + "])\n{\n  ret;\n}\n";
}

static std::string sharedKernel(const char* decl) {
  return std::string(".version 7.0\n.target sm_50\n.address_size 64\n") + decl +
         "\n.visible .entry usesShared(.param .u64 out)\n{\n  .reg .u64 %rd<3>;\n  .reg .u32 %r<2>;\n"
         "  mov.u64 %rd1, a;\n  ld.shared.u32 %r1, [%rd1];\n  ld.param.u64 %rd2, [out];\n"
         "  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";
}

static void loadTimeLimits() {
  makeContext();
  for (unsigned bytes : {4096u, 32764u, 32768u, 40000u, 65536u}) {
    CUmodule m = nullptr;
    std::string log;
    std::string text = paramKernel(bytes);
    CUresult r = loadEx(&m, text.c_str(), &log);
    std::printf("params.%u: %s (%d) %s\n", bytes, name(r), int(r), log.c_str());
    if (r == CUDA_SUCCESS) {
      CUfunction f;
      cuModuleGetFunction(&f, m, "bigparams");
      size_t offset = 0, size = 0;
      CUresult q = cuFuncGetParamInfo(f, 0, &offset, &size);
      std::printf("params.%u.info: %s size %zu\n", bytes, name(q), size);
      cuModuleUnload(m);
    }
  }
  // The same with the plain entry point (no log buffers).
  {
    CUmodule m;
    std::string text = paramKernel(32768);
    SHOW("params.32768.plain", cuModuleLoadData(&m, text.c_str()));
  }
  for (const char* decl :
       {".shared .align 4 .b8 a[4000000000];", ".shared .align 4 .b8 a[2147483648];", ".shared .align 4 .b8 a[300000];",
        ".shared .align 4 .b8 a[49156];", ".shared .align 4 .b8 a[49152];", ".shared .align 4 .b8 a[4294967300];"}) {
    CUmodule m = nullptr;
    std::string log;
    std::string text = sharedKernel(decl);
    CUresult r = loadEx(&m, text.c_str(), &log);
    std::printf("shared.%s: %s (%d) %s\n", decl, name(r), int(r), log.c_str());
    if (r == CUDA_SUCCESS) {
      CUfunction f;
      SHOW(std::string("shared.getfunc ") + decl, cuModuleGetFunction(&f, m, "usesShared"));
      int v = -12345;
      CUresult q = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
      std::printf("shared.attr %s: %s %d\n", decl, name(q), v);
      CUdeviceptr out;
      cuMemAlloc(&out, 64);
      void* params[] = {&out};
      SHOW(std::string("shared.launch ") + decl, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
      SHOW(std::string("shared.sync ") + decl, cuCtxSynchronize());
      cuModuleUnload(m);
    }
  }
  // Unterminated PTX at the end of a page followed by an unmapped page is probed separately (imagesOutOfBounds).
}

static void limits() {
  makeContext();
  const size_t kKiB = 1024, kMiB = kKiB * kKiB, kGiB = kMiB * kKiB, kTiB = kGiB * kKiB;
  size_t v = 0;
  cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE);
  std::printf("limit.stack.default: %zu\n", v);
  cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE);
  std::printf("limit.heap.default: %zu\n", v);
  for (size_t s : {64 * kKiB, 512 * kKiB, 512 * kKiB + 16, 1 * kMiB, 16 * kMiB, 1 * kGiB, 1 * kTiB, size_t(1) << 63,
                   size_t(1000), size_t(1)}) {
    CUresult r = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, s);
    v = 0;
    CUresult g = cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE);
    std::printf("limit.stack.set %zu: %s (%d) get %s %zu\n", s, name(r), int(r), name(g), v);
  }
  for (size_t s : {1 * kGiB, 16 * kGiB, 64 * kGiB, 70 * kGiB, 80 * kGiB, 1 * kTiB, 32 * kTiB, size_t(1) << 63,
                   size_t(1000), size_t(0)}) {
    CUresult r = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, s);
    v = 0;
    CUresult g = cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE);
    std::printf("limit.heap.set %zu: %s (%d) get %s %zu\n", s, name(r), int(r), name(g), v);
  }
  size_t freeB = 0, total = 0;
  cuMemGetInfo(&freeB, &total);
  std::printf("limit.meminfo free %zu total %zu\n", freeB, total);
  // After a kernel ran (heap fixed once a kernel that mallocs ran: not tested here)
  for (size_t s : {size_t(1) << 62, size_t(1000), size_t(0)}) {
    CUresult r = cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, s);
    cuCtxGetLimit(&v, CU_LIMIT_PRINTF_FIFO_SIZE);
    std::printf("limit.printf.set %zu: %s (%d) get %zu\n", s, name(r), int(r), v);
  }
}

static const char* kStoreKernel = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry store(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry load(.param .u64 p, .param .u64 out)
{
  .reg .u64 %rd<3>;
  .reg .u32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  ld.global.u32 %r1, [%rd1];
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

static void* pageWith(int prot) {
  long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::memset(p, 0x5a, size_t(page));
  mprotect(p, size_t(page), prot);
  return p;
}

static void hostRegisterCodes() {
  makeContext();
  long page = sysconf(_SC_PAGESIZE);
  struct Case {
    const char* label;
    int prot;
    unsigned flags;
  } cases[] = {
      {"ro.flags0", PROT_READ, 0},
      {"ro.readonly", PROT_READ, CU_MEMHOSTREGISTER_READ_ONLY},
      {"ro.devicemap", PROT_READ, CU_MEMHOSTREGISTER_DEVICEMAP},
      {"ro.devicemap_readonly", PROT_READ, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_READ_ONLY},
      {"none.flags0", PROT_NONE, 0},
      {"none.readonly", PROT_NONE, CU_MEMHOSTREGISTER_READ_ONLY},
      {"rw.readonly", PROT_READ | PROT_WRITE, CU_MEMHOSTREGISTER_READ_ONLY},
  };
  for (const Case& c : cases) {
    void* p = pageWith(c.prot);
    CUresult r = cuMemHostRegister(p, size_t(page), c.flags);
    std::printf("register.%s: %s (%d)\n", c.label, name(r), int(r));
    if (r == CUDA_SUCCESS) SHOW(std::string("register.") + c.label + ".unregister", cuMemHostUnregister(p));
  }
  // Unmapped memory (never mapped).
  void* gone = pageWith(PROT_READ | PROT_WRITE);
  munmap(gone, size_t(page));
  SHOW("register.unmapped", cuMemHostRegister(gone, size_t(page), 0));
  // A file mapping opened read-only.
  int fd = open("/proc/self/exe", O_RDONLY);
  void* file = mmap(nullptr, size_t(page), PROT_READ, MAP_PRIVATE, fd, 0);
  SHOW("register.rofile.flags0", cuMemHostRegister(file, size_t(page), 0));
  SHOW("register.rofile.readonly", cuMemHostRegister(file, size_t(page), CU_MEMHOSTREGISTER_READ_ONLY));
}

// A kernel store/load or a copy touching registered memory that is read-only or gone.
static void registeredAccess(const char* what) {
  makeContext();
  long page = sysconf(_SC_PAGESIZE);
  CUmodule m;
  cuModuleLoadData(&m, kStoreKernel);
  CUfunction store, load;
  cuModuleGetFunction(&store, m, "store");
  cuModuleGetFunction(&load, m, "load");
  CUdeviceptr out;
  cuMemAlloc(&out, 64);
  std::string w = what;
  bool readOnly = w.rfind("ro_", 0) == 0;
  void* p = pageWith(readOnly ? PROT_READ : PROT_READ | PROT_WRITE);
  SHOW("access." + w + ".register",
       cuMemHostRegister(
           p, size_t(page),
           readOnly ? CU_MEMHOSTREGISTER_READ_ONLY | CU_MEMHOSTREGISTER_DEVICEMAP : CU_MEMHOSTREGISTER_DEVICEMAP));
  CUdeviceptr d = 0;
  SHOW("access." + w + ".devptr", cuMemHostGetDevicePointer(&d, p, 0));
  std::printf("access.%s.devptr_equal %d\n", what, d == CUdeviceptr(uintptr_t(p)));
  if (w.find("unmapped") != std::string::npos) munmap(p, size_t(page));
  void* params[] = {&d, &out};
  if (w.find("store") != std::string::npos) {
    SHOW("access." + w + ".launch", cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    SHOW("access." + w + ".sync", cuCtxSynchronize());
  } else if (w.find("load") != std::string::npos) {
    SHOW("access." + w + ".launch", cuLaunchKernel(load, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    SHOW("access." + w + ".sync", cuCtxSynchronize());
    unsigned v = 0;
    cuMemcpyDtoH(&v, out, 4);
    std::printf("access.%s.value %#x\n", what, v);
  } else if (w.find("htod") != std::string::npos) {
    unsigned v = 0x11223344;
    SHOW("access." + w + ".memcpy", cuMemcpyHtoD(d, &v, 4));
    SHOW("access." + w + ".sync", cuCtxSynchronize());
  } else if (w.find("dtoh") != std::string::npos) {
    unsigned v = 0;
    SHOW("access." + w + ".memcpy", cuMemcpyDtoH(&v, d, 4));
    std::printf("access.%s.value %#x\n", what, v);
  } else if (w.find("memset") != std::string::npos) {
    SHOW("access." + w + ".memset", cuMemsetD32(d, 1, 1));
    SHOW("access." + w + ".sync", cuCtxSynchronize());
  }
  SHOW("access." + w + ".unregister", cuMemHostUnregister(p));
}

static void moduleFiles() {
  makeContext();
  CUmodule m;
  SHOW("file.directory", cuModuleLoad(&m, "/tmp"));
  SHOW("file.devnull", cuModuleLoad(&m, "/dev/null"));
  SHOW("file.procself", cuModuleLoad(&m, "/proc/self/status"));
  SHOW("file.empty_name", cuModuleLoad(&m, ""));
  CUlibrary lib;
  SHOW("file.library_directory", cuLibraryLoadFromFile(&lib, "/tmp", nullptr, nullptr, 0, nullptr, nullptr, 0));
}

static void moduleDevZero(const char* path) {
  makeContext();
  CUmodule m;
  SHOW(std::string("file.") + path, cuModuleLoad(&m, path));
}

static void smallAllocations() {
  makeContext();
  size_t f0 = 0, total = 0, f1 = 0;
  cuMemGetInfo(&f0, &total);
  for (size_t size : {size_t(1), size_t(8), size_t(100), size_t(256), size_t(512), size_t(513), size_t(1000),
                      size_t(4096), size_t(65536), size_t(65537), size_t(1) << 20, size_t(2) << 20}) {
    std::printf("alloc.size %zu:", size);
    CUdeviceptr prev = 0;
    std::vector<CUdeviceptr> ptrs;
    for (int i = 0; i < 12; ++i) {
      CUdeviceptr p = 0;
      cuMemAlloc(&p, size);
      ptrs.push_back(p);
      if (i == 0)
        std::printf(" first %#llx (mod 2M %#llx)", (unsigned long long)p, (unsigned long long)(p % (2 << 20)));
      else
        std::printf(" %+lld", (long long)(p - prev));
      prev = p;
    }
    cuMemGetInfo(&f1, &total);
    std::printf(" | free drop %lld\n", (long long)(f0 - f1));
    for (CUdeviceptr p : ptrs) cuMemFree(p);
  }
  // Reuse after free of a small block
  CUdeviceptr a, b, c;
  cuMemAlloc(&a, 1);
  cuMemAlloc(&b, 1);
  cuMemFree(a);
  cuMemAlloc(&c, 1);
  std::printf("alloc.reuse: a %#llx b %#llx c %#llx\n", (unsigned long long)a, (unsigned long long)b,
              (unsigned long long)c);
  cuMemFree(b);
  cuMemFree(c);
  // Many one-byte allocations
  cuMemGetInfo(&f0, &total);
  std::vector<CUdeviceptr> many;
  CUresult last = CUDA_SUCCESS;
  for (int i = 0; i < 40000; ++i) {
    CUdeviceptr p;
    last = cuMemAlloc(&p, 1);
    if (last != CUDA_SUCCESS) break;
    many.push_back(p);
  }
  cuMemGetInfo(&f1, &total);
  std::printf("alloc.many: %zu ok, last %s, free drop %lld\n", many.size(), name(last), (long long)(f0 - f1));
  // Reads past a 1-byte allocation into its neighbours: a kernel load at +256 and +4096
  CUmodule m;
  cuModuleLoadData(&m, kStoreKernel);
  CUfunction load;
  cuModuleGetFunction(&load, m, "load");
  CUdeviceptr out;
  SHOW("alloc.many.out", cuMemAlloc(&out, 64));
  CUdeviceptr at = many.back() + 4096;
  void* params[] = {&at, &out};
  SHOW("alloc.many.launch", cuLaunchKernel(load, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  SHOW("alloc.many.sync", cuCtxSynchronize());
  for (CUdeviceptr p : many) cuMemFree(p);
}

// Images whose declared sizes run past the caller's buffer, placed before an unmapped page.
static void imagesOutOfBounds(const char* what) {
  makeContext();
  long page = sysconf(_SC_PAGESIZE);
  auto* two = static_cast<uint8_t*>(
      mmap(nullptr, size_t(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  munmap(two + page, size_t(page));
  std::string w = what;
  CUmodule m;
  if (w == "ptx_no_nul") {
    const char* text = ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
    size_t n = std::strlen(text);
    std::memset(two, ' ', size_t(page));
    std::memcpy(two + page - n, text, n);
    SHOW("oob.ptx_no_nul", cuModuleLoadData(&m, two + page - n));
  } else if (w == "fatbin_big") {
    // A container header claiming 1 MiB of entries in a 64-byte buffer that ends at the page.
    uint8_t* h = two + page - 64;
    std::memset(h, 0, 64);
    uint32_t magic = 0xBA55ED50;
    uint16_t version = 1, headerSize = 16;
    uint64_t size = 1 << 20;
    std::memcpy(h, &magic, 4);
    std::memcpy(h + 4, &version, 2);
    std::memcpy(h + 6, &headerSize, 2);
    std::memcpy(h + 8, &size, 8);
    SHOW("oob.fatbin_big", cuModuleLoadData(&m, h));
  } else if (w == "wrapper_unmapped") {
    struct {
      uint32_t magic, version;
      uint64_t data, extra;
    } wrapper = {0x466243b1, 1, uint64_t(uintptr_t(two + page)), 0};
    SHOW("oob.wrapper_unmapped", cuModuleLoadData(&m, &wrapper));
  } else if (w == "wrapper_null") {
    struct {
      uint32_t magic, version;
      uint64_t data, extra;
    } wrapper = {0x466243b1, 1, 0, 0};
    SHOW("oob.wrapper_null", cuModuleLoadData(&m, &wrapper));
  } else if (w == "fatbin_entry_big") {
    // A container whose one PTX entry declares a payload past the buffer.
    uint8_t* h = two + page - 128;
    std::memset(h, 0, 128);
    uint32_t magic = 0xBA55ED50;
    uint16_t version = 1, headerSize = 16;
    uint64_t size = 0x40 + 48;
    std::memcpy(h, &magic, 4);
    std::memcpy(h + 4, &version, 2);
    std::memcpy(h + 6, &headerSize, 2);
    std::memcpy(h + 8, &size, 8);
    uint8_t* e = h + 16;
    uint16_t kind = 1;
    uint32_t ehs = 0x40;
    uint64_t payload = 1 << 20;
    uint32_t arch = 50;
    std::memcpy(e, &kind, 2);
    std::memcpy(e + 4, &ehs, 4);
    std::memcpy(e + 8, &payload, 8);
    std::memcpy(e + 0x1C, &arch, 4);
    uint16_t major = 7;
    std::memcpy(e + 0x1A, &major, 2);
    SHOW("oob.fatbin_entry_big", cuModuleLoadData(&m, h));
  }
}

int main() {
  section("reqntid", 20, reqntid);
  section("loadlimits", 60, loadTimeLimits);
  section("limits", 30, limits);
  section("register", 20, hostRegisterCodes);
  for (const char* what : {"ro_store", "ro_load", "ro_htod", "ro_memset", "rw_unmapped_store", "rw_unmapped_load",
                           "rw_unmapped_htod", "rw_unmapped_dtoh"})
    section(what, 20, [what] { registeredAccess(what); });
  section("files", 20, moduleFiles);
  section("devzero", 6, [] { moduleDevZero("/dev/zero"); });
  section("devurandom", 6, [] { moduleDevZero("/dev/urandom"); });
  section("small", 60, smallAllocations);
  for (const char* what : {"ptx_no_nul", "fatbin_big", "wrapper_unmapped", "wrapper_null", "fatbin_entry_big"})
    section(what, 20, [what] { imagesOutOfBounds(what); });
  return 0;
}
