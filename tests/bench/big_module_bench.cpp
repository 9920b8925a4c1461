// Loading one very large PTX module through the driver: issue 24 measured 200 MB of PTX (393,350 small kernels)
// resident at 9x its text. Generates `kernels` small kernels (about 510 bytes of PTX each), loads them with
// cuModuleLoadData, launches a few, and prints the load time, the loading speed, and the process's resident
// and peak memory (VmRSS, VmHWM) and the memory it holds (anonymous and shared: heldBytes) against the text's size.
//   big_module_bench [kernels (default 393350)] [launches (default 4)] [maximum resident ratio [maximum kept ratio]]
// With a maximum ratio it exits 1 when the driver's held growth over the load, or what the driver keeps after
// the launches (the second limit where given), exceeds that many times the text (the ctests big_module_resident*: the
// memory the parse tree took must be given back, and launching a few kernels of a lazily lowered module must not lower
// all of them).
#include <cuda.h>

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
  std::exit(1);
}

// VmRSS, VmHWM, RssAnon, RssShmem of this process, in bytes.
long statusBytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  size_t length = std::strlen(field);
  while (std::getline(status, line))
    if (line.compare(0, length, field) == 0 && line[length] == ':') return std::atol(line.c_str() + length + 1) * 1024;
  return -1;
}

// Resident memory the process holds itself: anonymous and shared-memory pages. VmRSS also counts the pages of
// libcuda.so.1's (and libzstd's) own code that the first load and the first launch fault in, about 2.8 MB of the
// 3.4 MB a small module seemed to keep whatever its size: file pages, shared and clean, which the module does not
// hold.
long heldBytes() { return statusBytes("RssAnon") + statusBytes("RssShmem"); }

// CPU seconds of this process so far (the load runs on the calling thread; the machine may be shared).
double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

std::string kernelText(unsigned index) {
  char text[640];
  std::snprintf(text, sizeof text,
                ".visible .entry k%u(.param .u64 p, .param .u32 n)\n"
                "{\n"
                "  .reg .u64 %%rd<4>;\n"
                "  .reg .u32 %%r<6>;\n"
                "  .reg .pred %%q<2>;\n"
                "  ld.param.u64 %%rd1, [p];\n"
                "  ld.param.u32 %%r1, [n];\n"
                "  mov.u32 %%r2, %%ctaid.x;\n"
                "  mov.u32 %%r3, %%ntid.x;\n"
                "  mov.u32 %%r4, %%tid.x;\n"
                "  mad.lo.u32 %%r2, %%r2, %%r3, %%r4;\n"
                "  setp.ge.u32 %%q1, %%r2, %%r1;\n"
                "  @%%q1 bra $L_done;\n"
                "  mul.wide.u32 %%rd2, %%r2, 4;\n"
                "  add.u64 %%rd3, %%rd1, %%rd2;\n"
                "  ld.global.u32 %%r5, [%%rd3];\n"
                "  add.u32 %%r5, %%r5, %u;\n"
                "  st.global.u32 [%%rd3], %%r5;\n"
                "$L_done:\n"
                "  ret;\n"
                "}\n",
                index, index % 1000 + 1);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned kernels = argc > 1 ? unsigned(std::strtoul(argv[1], nullptr, 10)) : 393350;
  unsigned launches = argc > 2 ? unsigned(std::strtoul(argv[2], nullptr, 10)) : 4;
  double maxRatio = argc > 3 ? std::strtod(argv[3], nullptr) : 0;
  double maxKeptRatio = argc > 4 ? std::strtod(argv[4], nullptr) : maxRatio;
  check(cuInit(0), "cuInit");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuCtxCreate(&context, nullptr, 0, device), "cuCtxCreate");
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\n";
  for (unsigned i = 0; i < kernels; ++i) ptx += kernelText(i);
  ptx.shrink_to_fit();
  double textMb = double(ptx.size()) / 1e6;
  long rssBefore = statusBytes("VmRSS"), heldBefore = heldBytes();
  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = cpuSeconds();
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = cpuSeconds() - cpu0;
  long rssLoaded = statusBytes("VmRSS"), heldLoaded = heldBytes();
  // A few launches of kernels spread over the module (lazily prepared ones included).
  CUdeviceptr p = 0;
  unsigned n = 256;
  check(cuMemAlloc(&p, n * 4), "cuMemAlloc");
  check(cuMemsetD32(p, 0, n), "cuMemsetD32");
  unsigned expected = 0;
  for (unsigned l = 0; l < launches; ++l) {
    unsigned index = unsigned(uint64_t(kernels - 1) * l / (launches > 1 ? launches - 1 : 1));
    CUfunction f = nullptr;
    check(cuModuleGetFunction(&f, module, ("k" + std::to_string(index)).c_str()), "cuModuleGetFunction");
    void* args[] = {&p, &n};
    check(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    expected += index % 1000 + 1;
  }
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  unsigned first = 0;
  check(cuMemcpyDtoH(&first, p, 4), "cuMemcpyDtoH");
  long rssLaunched = statusBytes("VmRSS");
  // The text is the application's: what the driver keeps is the growth over the process before the load.
  std::string().swap(ptx);
  malloc_trim(0);
  long rssAfterText = statusBytes("VmRSS"), heldAfterText = heldBytes();
  long peak = statusBytes("VmHWM");
  double rssLoadRatio = (rssLoaded - rssBefore) / 1e6 / textMb;
  double rssKeptRatio = (rssAfterText - (rssBefore - textMb * 1e6)) / 1e6 / textMb;
  double loadRatio = (heldLoaded - heldBefore) / 1e6 / textMb;
  double keptRatio = (heldAfterText - (heldBefore - textMb * 1e6)) / 1e6 / textMb;
  std::printf("kernels %u, PTX %.1f MB, load %.2f s (%.0f MB/s), CPU %.2f s (%.0f MB/s)\n", kernels, textMb, seconds,
              textMb / seconds, cpu, textMb / cpu);
  std::printf(
      "resident: before load %.0f MB, after load %.0f MB (+%.0f MB = %.2fx the text), after %u launches "
      "%.0f MB, without the text %.0f MB (driver: %.2fx the text); peak %.0f MB (%.2fx the text)\n",
      rssBefore / 1e6, rssLoaded / 1e6, (rssLoaded - rssBefore) / 1e6, rssLoadRatio, launches, rssLaunched / 1e6,
      rssAfterText / 1e6, rssKeptRatio, peak / 1e6, peak / 1e6 / textMb);
  std::printf(
      "held (anonymous and shared memory, the checks' measure): the load +%.1f MB = %.2fx the text, kept %.2fx\n",
      (heldLoaded - heldBefore) / 1e6, loadRatio, keptRatio);
  if (maxRatio > 0 && loadRatio > maxRatio) {
    std::fprintf(stderr, "the load added %.2fx the text to the resident memory (at most %.2fx expected)\n", loadRatio,
                 maxRatio);
    return 1;
  }
  if (maxKeptRatio > 0 && keptRatio > maxKeptRatio) {
    std::fprintf(stderr, "after %u launches the driver keeps %.2fx the text (at most %.2fx expected)\n", launches,
                 keptRatio, maxKeptRatio);
    return 1;
  }
  if (first != expected) {
    std::fprintf(stderr, "wrong result: %u, expected %u\n", first, expected);
    return 1;
  }
  check(cuModuleUnload(module), "cuModuleUnload");
  return 0;
}
