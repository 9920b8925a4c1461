// Records facts about the installed NVIDIA driver that cuemu must reproduce:
//   procaddress.tsv  every cuGetProcAddress_v2 answer (name x version x flags), as transitions
//   errors.tsv       cuGetErrorName / cuGetErrorString for every code the driver knows
//   attributes.tsv   cuDeviceGetAttribute for every attribute number of every device
//   device.txt       name, memory, uuid, pci ids, properties
// Built and run on a GPU machine by tools/gpu-record/run.sh. Not part of the cuemu build.
#include <cuda.h>
#include <dlfcn.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

static std::string symbolOf(void* p, const std::map<void*, std::string>& exported) {
  if (!p) return "-";
  auto it = exported.find(p);
  if (it != exported.end()) return it->second;
  Dl_info info{};
  if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p) return std::string("=") + info.dli_sname;
  char buf[64];
  std::snprintf(buf, sizeof buf, "internal:%p", p);
  return buf;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: record names.txt exports.txt outdir\n");
    return 2;
  }
  std::string out = argv[3];
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto gpa = reinterpret_cast<GetProcV2>(dlsym(lib, "cuGetProcAddress_v2"));
  std::vector<std::string> names, exports;
  {
    std::ifstream f(argv[1]);
    std::string s;
    while (std::getline(f, s)) names.push_back(s);
  }
  {
    std::ifstream f(argv[2]);
    std::string s;
    while (std::getline(f, s))
      if (!s.empty()) exports.push_back(s);
  }
  std::map<void*, std::string> exported;
  for (auto& e : exports)
    if (void* p = dlsym(lib, e.c_str())) exported.emplace(p, e);
  // Before cuInit: what does cuGetProcAddress answer?
  {
    FILE* f = std::fopen((out + "/preinit.txt").c_str(), "w");
    void* p = nullptr;
    CUdriverProcAddressQueryResult st{};
    CUresult r = gpa("cuInit", &p, 13000, 0, &st);
    std::fprintf(f, "cuGetProcAddress_v2(cuInit) before cuInit: %d status=%d %s\n", r, st,
                 symbolOf(p, exported).c_str());
    int v = 0;
    r = cuDriverGetVersion(&v);
    std::fprintf(f, "cuDriverGetVersion before cuInit: %d %d\n", r, v);
    int n = -1;
    r = cuDeviceGetCount(&n);
    std::fprintf(f, "cuDeviceGetCount before cuInit: %d %d\n", r, n);
    const char* s = nullptr;
    r = cuGetErrorName(CUDA_SUCCESS, &s);
    std::fprintf(f, "cuGetErrorName before cuInit: %d %s\n", r, s ? s : "(null)");
    r = cuInit(1);
    std::fprintf(f, "cuInit(1): %d\n", r);
    std::fclose(f);
  }
  CUresult r = cuInit(0);
  if (r) {
    std::fprintf(stderr, "cuInit %d\n", r);
    return 1;
  }
  {
    FILE* f = std::fopen((out + "/procaddress.tsv").c_str(), "w");
    std::fprintf(f, "# name\tflags\tfirst_version\tresult\tstatus\tsymbol\n");
    const int flagsList[] = {0, 1, 2};
    for (auto& n : names) {
      for (int fl : flagsList) {
        std::string prev;
        for (int v = 0; v <= 14000; ++v) {
          void* p = nullptr;
          CUdriverProcAddressQueryResult st{};
          CUresult rr = gpa(n.c_str(), &p, v, fl, &st);
          std::string cur = std::to_string(rr) + "\t" + std::to_string(st) + "\t" + symbolOf(p, exported);
          if (cur != prev) {  // transitions only
            std::fprintf(f, "%s\t%d\t%d\t%s\n", n.c_str(), fl, v, cur.c_str());
            prev = cur;
          }
        }
      }
      // flags outside the documented set, and a huge version
      for (cuuint64_t fl : {3ull, 4ull, 0x100ull}) {
        void* p = nullptr;
        CUdriverProcAddressQueryResult st{};
        CUresult rr = gpa(n.c_str(), &p, 13000, fl, &st);
        std::fprintf(f, "%s\t%llu\t13000\t%d\t%d\t%s\n", n.c_str(), (unsigned long long)fl, rr, st,
                     symbolOf(p, exported).c_str());
      }
      void* p = nullptr;
      CUdriverProcAddressQueryResult st{};
      CUresult rr = gpa(n.c_str(), &p, 1000000, 0, &st);
      std::fprintf(f, "%s\t0\t1000000\t%d\t%d\t%s\n", n.c_str(), rr, st, symbolOf(p, exported).c_str());
      std::fflush(f);
    }
    std::fclose(f);
  }
  {
    // NULL arguments may crash the real driver: probe each in a child process. (Only calls that do
    // not need the driver initialised in the child: a forked child cannot use CUDA.)
    FILE* f = std::fopen((out + "/nullargs.txt").c_str(), "w");
    auto probe = [&](const char* what, auto fn) {
      std::fflush(f);
      pid_t pid = fork();
      if (pid == 0) {
        _exit(static_cast<int>(fn()));
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFEXITED(status))
        std::fprintf(f, "%s\tresult %d\n", what, WEXITSTATUS(status));
      else
        std::fprintf(f, "%s\tcrash signal %d\n", what, WTERMSIG(status));
    };
    void* p = nullptr;
    CUdriverProcAddressQueryResult st{};
    probe("cuGetProcAddress_v2(NULL symbol)", [&] { return gpa(nullptr, &p, 13000, 0, &st); });
    probe("cuGetProcAddress_v2(NULL pfn)", [&] { return gpa("cuInit", nullptr, 13000, 0, &st); });
    probe("cuGetProcAddress_v2(NULL status)", [&] { return gpa("cuInit", &p, 13000, 0, nullptr); });
    probe("cuGetErrorName(NULL out)", [&] { return cuGetErrorName(CUDA_SUCCESS, nullptr); });
    probe("cuGetErrorString(NULL out)", [&] { return cuGetErrorString(CUDA_SUCCESS, nullptr); });
    std::fclose(f);
  }
  {
    FILE* f = std::fopen((out + "/errors.tsv").c_str(), "w");
    for (int c = 0; c < 100000; ++c) {
      const char *nm = nullptr, *st = nullptr;
      CUresult a = cuGetErrorName((CUresult)c, &nm), b = cuGetErrorString((CUresult)c, &st);
      if (a == CUDA_SUCCESS || b == CUDA_SUCCESS)
        std::fprintf(f, "%d\t%d\t%s\t%d\t%s\n", c, a, nm ? nm : "(null)", b, st ? st : "(null)");
    }
    const char* s = nullptr;
    std::fprintf(f, "#bad-code\t%d\t%s\n", cuGetErrorName((CUresult)9999, &s), s ? s : "(null)");
    std::fclose(f);
  }
  {
    FILE* f = std::fopen((out + "/attributes.tsv").c_str(), "w");
    int n = 0;
    cuDeviceGetCount(&n);
    for (int d = 0; d < n; ++d)
      for (int a = -1; a < 300; ++a) {
        int v = -12345;
        CUresult rr = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, d);
        std::fprintf(f, "%d\t%d\t%d\t%d\n", d, a, rr, v);
      }
    std::fclose(f);
  }
  {
    FILE* f = std::fopen((out + "/device.txt").c_str(), "w");
    int n = 0;
    cuDeviceGetCount(&n);
    int ver = 0;
    cuDriverGetVersion(&ver);
    std::fprintf(f, "driverVersion %d\ndeviceCount %d\n", ver, n);
    for (int d = 0; d < n; ++d) {
      char name[256];
      cuDeviceGetName(name, sizeof name, d);
      size_t mem = 0;
      cuDeviceTotalMem(&mem, d);
      CUuuid u{};
      cuDeviceGetUuid(&u, d);
      char pci[64];
      cuDeviceGetPCIBusId(pci, sizeof pci, d);
      int maj = 0, min = 0;
      cuDeviceComputeCapability(&maj, &min, d);
      CUdevprop p{};
      cuDeviceGetProperties(&p, d);
      size_t w = 0;
      CUresult tr = cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 4, d);
      std::fprintf(f, "device %d name '%s' totalMem %zu pci %s cc %d.%d tex1dlinear %d %zu\nuuid", d, name, mem, pci,
                   maj, min, tr, w);
      for (unsigned char c : u.bytes) std::fprintf(f, " %02x", c);
      std::fprintf(f,
                   "\nprops maxThreadsPerBlock %d maxThreadsDim %d %d %d maxGridSize %d %d %d sharedMemPerBlock %d "
                   "totalConstantMemory %d SIMDWidth %d memPitch %d regsPerBlock %d clockRate %d textureAlign %d\n",
                   p.maxThreadsPerBlock, p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2], p.maxGridSize[0],
                   p.maxGridSize[1], p.maxGridSize[2], p.sharedMemPerBlock, p.totalConstantMemory, p.SIMDWidth,
                   p.memPitch, p.regsPerBlock, p.clockRate, p.textureAlign);
      int lo = 0, hi = 0;
      CUcontext c;
      cuDevicePrimaryCtxRetain(&c, d);
      cuCtxPushCurrent(c);
      cuCtxGetStreamPriorityRange(&lo, &hi);
      std::fprintf(f, "streamPriorityRange %d %d\n", lo, hi);
      for (int l = 0; l < 16; ++l) {
        size_t v = 0;
        CUresult lr = cuCtxGetLimit(&v, (CUlimit)l);
        std::fprintf(f, "limit %d %d %zu\n", l, lr, v);
      }
      size_t fr = 0, tot = 0;
      cuMemGetInfo(&fr, &tot);
      std::fprintf(f, "memInfo free %zu total %zu\n", fr, tot);
      unsigned api = 0;
      cuCtxGetApiVersion(c, &api);
      std::fprintf(f, "ctxApiVersion %u\n", api);
      unsigned flags = 0;
      cuCtxGetFlags(&flags);
      std::fprintf(f, "primaryCtxFlags %u\n", flags);
      cuCtxPopCurrent(&c);
      cuDevicePrimaryCtxRelease(d);
    }
    std::fclose(f);
  }
  return 0;
}
