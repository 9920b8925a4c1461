// cuemu's libnvJitLink.so.13 (emu/nvjitlink) linking LTO-IR: two translation units compiled by NVRTC to LTO-IR
// (-dlto), one calling a device function the other defines, are linked with `-lto` for sm_90 (as NVIDIA's jitLto
// sample does); cuemu hands the LTO-IR to NVIDIA's nvJitLink for PTX and returns linked PTX as the "cubin", which
// cuModuleLoadData loads and runs. Before, LTO-IR was refused (NVJITLINK_ERROR_UNRECOGNIZED_INPUT). NVIDIA's
// nvJitLink runs in the helper program cuemu-nvjitlink-lto, started with posix_spawn: the client process is not
// forked (a forked child of a multithreaded process may not run NVIDIA's library), so its fork handlers never run.
#include <cuda.h>
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <pthread.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;
int forks = 0;  // fork handlers run: the process forked
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

const char* kKernel = R"(
extern "C" __device__ float scaled(float a, float x);
extern "C" __global__ void scaleAdd(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scaled(a, x[i]) + y[i];
}
)";
const char* kHelper = R"(
extern "C" __device__ float scaled(float a, float x) { return a * x; }
)";

std::vector<char> ltoir(const char* source, const char* name) {
  nvrtcProgram prog = nullptr;
  std::vector<char> out;
  if (nvrtcCreateProgram(&prog, source, name, 0, nullptr, nullptr) != NVRTC_SUCCESS) return out;
  const char* options[] = {"-dlto", "-rdc=true", "--gpu-architecture=compute_90"};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, options);
  size_t size = 0;
  if (r == NVRTC_SUCCESS && nvrtcGetLTOIRSize(prog, &size) == NVRTC_SUCCESS) {
    out.resize(size);
    if (nvrtcGetLTOIR(prog, out.data()) != NVRTC_SUCCESS) out.clear();
  } else {
    std::printf("NVRTC: %s\n", nvrtcGetErrorString(r));
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

}  // namespace

int main() {
  pthread_atfork([] { ++forks; }, nullptr, nullptr);
  // nvJitLinkVersion: what a program linked against NVIDIA's libnvJitLink.so.13 (the jitLto sample) binds to, a
  // lookup of the versioned name as the dynamic loader makes it; a client's plain dlsym probe does not see it.
  void* self = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_NOLOAD);
  check(self != nullptr, "libnvJitLink.so.13 is loaded");
  using Version = nvJitLinkResult (*)(unsigned*, unsigned*);
  auto version = self ? reinterpret_cast<Version>(dlvsym(self, "nvJitLinkVersion", "libnvJitLink.so.13")) : nullptr;
  unsigned major = 0, minor = 99;
  check(version && version(&major, &minor) == NVJITLINK_SUCCESS && major == 13 && minor == 0,
        "nvJitLinkVersion@libnvJitLink.so.13 answers 13.0");
  check(self && dlsym(self, "nvJitLinkVersion") == nullptr, "dlsym(\"nvJitLinkVersion\") finds nothing");

  std::vector<char> kernel = ltoir(kKernel, "kernel.cu"), helper = ltoir(kHelper, "helper.cu");
  check(!kernel.empty() && !helper.empty(), "NVRTC compiles both units to LTO-IR");
  if (failures) return 1;

  const char* options[] = {"-arch=sm_90", "-lto"};
  nvJitLinkHandle link = nullptr;
  check(nvJitLinkCreate(&link, 2, options) == NVJITLINK_SUCCESS, "nvJitLinkCreate -lto");
  check(nvJitLinkAddData(link, NVJITLINK_INPUT_LTOIR, kernel.data(), kernel.size(), "kernel") == NVJITLINK_SUCCESS,
        "add the kernel's LTO-IR");
  check(nvJitLinkAddData(link, NVJITLINK_INPUT_ANY, helper.data(), helper.size(), "helper") == NVJITLINK_SUCCESS,
        "add the helper's LTO-IR (type guessed)");
  nvJitLinkResult completed = nvJitLinkComplete(link);
  if (completed != NVJITLINK_SUCCESS) {
    size_t logSize = 0;
    nvJitLinkGetErrorLogSize(link, &logSize);
    std::string log(logSize, '\0');
    nvJitLinkGetErrorLog(link, log.data());
    std::printf("%s\n", log.c_str());
  }
  check(completed == NVJITLINK_SUCCESS, "nvJitLinkComplete");
  check(forks == 0, "the LTO link forks nothing (NVIDIA's nvJitLink runs in the helper program)");
  size_t size = 0;
  std::vector<char> image;
  if (nvJitLinkGetLinkedCubinSize(link, &size) == NVJITLINK_SUCCESS) {
    image.resize(size);
    nvJitLinkGetLinkedCubin(link, image.data());
  }
  nvJitLinkDestroy(&link);
  check(image.size() > 1 && std::string(image.data()).find(".entry scaleAdd") != std::string::npos,
        "the linked image is PTX with the kernel");
  if (failures) return 1;

  CUdevice device;
  CUcontext context;
  check(cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&device, 0) == CUDA_SUCCESS &&
            cuDevicePrimaryCtxRetain(&context, device) == CUDA_SUCCESS && cuCtxSetCurrent(context) == CUDA_SUCCESS,
        "context");
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  check(cuModuleLoadData(&module, image.data()) == CUDA_SUCCESS, "cuModuleLoadData of the linked image");
  check(cuModuleGetFunction(&function, module, "scaleAdd") == CUDA_SUCCESS, "scaleAdd");
  const int n = 100;
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = float(i);
  CUdeviceptr dx, dy;
  cuMemAlloc(&dx, n * sizeof(float));
  cuMemAlloc(&dy, n * sizeof(float));
  cuMemcpyHtoD(dx, x.data(), n * sizeof(float));
  cuMemcpyHtoD(dy, y.data(), n * sizeof(float));
  float a = 3.0f;
  int count = n;
  void* args[] = {&a, &dx, &dy, &count};
  check(cuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS, "launch");
  check(cuCtxSynchronize() == CUDA_SUCCESS, "synchronize");
  cuMemcpyDtoH(y.data(), dy, n * sizeof(float));
  bool right = true;
  for (int i = 0; i < n; ++i) right = right && y[i] == 3.0f * float(i) + 1.0f;
  check(right, "y = 3 x + 1");
  return failures ? 1 : 0;
}
