// cuemu's libnvJitLink.so.13 (emu/nvjitlink) linking LTO-IR: two translation units compiled by NVRTC to LTO-IR
// (-dlto), one calling a device function the other defines, are linked with `-lto` for sm_90 (as NVIDIA's jitLto
// sample does); cuemu hands the LTO-IR to NVIDIA's nvJitLink for PTX and returns linked PTX as the "cubin", which
// cuModuleLoadData loads and runs. Before, LTO-IR was refused (NVJITLINK_ERROR_UNRECOGNIZED_INPUT). NVIDIA's
// nvJitLink runs in the helper program cuemu-nvjitlink-lto, started with posix_spawn: the client process is not
// forked (a forked child of a multithreaded process may not run NVIDIA's library), so its fork handlers never run.
//
// Then LTO-IR linked with a separate PTX input, as numba-cuda links its LTO-IR with a PTX file (its test
// test_nrt_detect_linked_ptx_file): the LTO-IR's kernel calls a function of the PTX, which calls a function of the
// LTO-IR that nothing else calls. NVIDIA's nvJitLink, seeing only the LTO-IR, dropped that function and the link
// failed with "Undefined reference"; now cuemu's nvJitLink tells it what the PTX calls. The same PTX inside a
// fatbinary, plain or compressed, links too.
#include <cuda.h>
#include <dlfcn.h>
#include <lz4.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
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
// LTO-IR and PTX calling each other: stepAll (LTO-IR) -> step (PTX) -> halved (LTO-IR, called by the PTX only).
const char* kStepKernel = R"(
extern "C" __device__ float step(float x);
extern "C" __device__ float halved(float x) { return 0.5f * x; }
extern "C" __global__ void stepAll(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = step(y[i]);
}
)";
const char* kStepPtx = R"(
extern "C" __device__ float halved(float x);
extern "C" __device__ float step(float x) { return halved(x) + 1.0f; }
)";

// LTO-IR (-dlto) or, with ptx, PTX text with its NUL, of a relocatable unit for compute_90.
std::vector<char> compile(const char* source, const char* name, bool ptx = false) {
  nvrtcProgram prog = nullptr;
  std::vector<char> out;
  if (nvrtcCreateProgram(&prog, source, name, 0, nullptr, nullptr) != NVRTC_SUCCESS) return out;
  const char* options[] = {"-rdc=true", "--gpu-architecture=compute_90", "-dlto"};
  nvrtcResult r = nvrtcCompileProgram(prog, ptx ? 2 : 3, options);
  size_t size = 0;
  if (r == NVRTC_SUCCESS && (ptx ? nvrtcGetPTXSize(prog, &size) : nvrtcGetLTOIRSize(prog, &size)) == NVRTC_SUCCESS) {
    out.resize(size);
    if ((ptx ? nvrtcGetPTX(prog, out.data()) : nvrtcGetLTOIR(prog, out.data())) != NVRTC_SUCCESS) out.clear();
  } else {
    std::printf("NVRTC: %s\n", nvrtcGetErrorString(r));
  }
  nvrtcDestroyProgram(&prog);
  return out;
}
std::vector<char> ltoir(const char* source, const char* name) { return compile(source, name); }

// A fatbinary container with one PTX entry for compute_90 holding `ptx`, LZ4-compressed if asked (nvcc compresses
// its fatbinaries' PTX by default), in the container layout that emu/core/fatbin.h describes: a 16-byte header, a
// 64-byte entry header, the payload.
std::vector<char> fatbinOf(const std::vector<char>& ptx, bool lz4 = false) {
  std::vector<char> payload = ptx;
  if (lz4) {
    payload.resize(size_t(LZ4_compressBound(int(ptx.size()))));
    payload.resize(size_t(LZ4_compress_default(ptx.data(), payload.data(), int(ptx.size()), int(payload.size()))));
  }
  std::vector<char> out(16 + 64 + payload.size(), 0);
  auto put = [&](size_t at, auto value) { std::memcpy(out.data() + at, &value, sizeof value); };
  put(0, uint32_t(0xBA55ED50));                       // magic
  put(4, uint16_t(1));                                // version
  put(6, uint16_t(16));                               // header size
  put(8, uint64_t(64 + payload.size()));              // size of the entries
  put(16 + 0x00, uint16_t(1));                        // kind: PTX
  put(16 + 0x04, uint32_t(64));                       // entry header size
  put(16 + 0x08, uint64_t(payload.size()));           // payload size
  if (lz4) put(16 + 0x10, uint32_t(payload.size()));  // compressed size
  put(16 + 0x18, uint16_t(0));                        // PTX ISA 9.0
  put(16 + 0x1A, uint16_t(9));
  put(16 + 0x1C, uint32_t(90));                      // compute_90
  put(16 + 0x28, uint64_t(1) | (lz4 ? 0x2000 : 0));  // 64-bit addresses, LZ4
  if (lz4) put(16 + 0x38, uint64_t(ptx.size()));     // uncompressed size
  std::memcpy(out.data() + 80, payload.data(), payload.size());
  return out;
}

std::string errorLog(nvJitLinkHandle link) {
  size_t size = 0;
  nvJitLinkGetErrorLogSize(link, &size);
  std::string log(size, '\0');
  nvJitLinkGetErrorLog(link, log.data());
  return log.c_str();
}

// Links the step kernel's LTO-IR with `other` (PTX or a fatbinary holding it) through nvJitLink, runs stepAll on
// cuemu and checks y = x / 2 + 1.
void stepAcrossInputs(const std::vector<char>& kernel, const std::vector<char>& other, nvJitLinkInputType type,
                      const char* what) {
  std::printf("-- LTO-IR with %s\n", what);
  const char* options[] = {"-arch=sm_90", "-lto"};
  nvJitLinkHandle link = nullptr;
  check(nvJitLinkCreate(&link, 2, options) == NVJITLINK_SUCCESS, "nvJitLinkCreate -lto");
  check(nvJitLinkAddData(link, NVJITLINK_INPUT_LTOIR, kernel.data(), kernel.size(), "step-kernel") == NVJITLINK_SUCCESS,
        "add the kernel's LTO-IR");
  check(nvJitLinkAddData(link, type, other.data(), other.size(), "step") == NVJITLINK_SUCCESS, "add the other input");
  nvJitLinkResult completed = nvJitLinkComplete(link);
  if (completed != NVJITLINK_SUCCESS) std::printf("%s\n", errorLog(link).c_str());
  check(completed == NVJITLINK_SUCCESS, "nvJitLinkComplete keeps what the other input calls in the LTO-IR");
  size_t size = 0;
  std::vector<char> image;
  if (completed == NVJITLINK_SUCCESS && nvJitLinkGetLinkedCubinSize(link, &size) == NVJITLINK_SUCCESS) {
    image.resize(size);
    nvJitLinkGetLinkedCubin(link, image.data());
  }
  nvJitLinkDestroy(&link);
  if (image.empty()) return;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  check(cuModuleLoadData(&module, image.data()) == CUDA_SUCCESS, "cuModuleLoadData of the linked image");
  check(cuModuleGetFunction(&function, module, "stepAll") == CUDA_SUCCESS, "stepAll");
  if (!function) return;
  const int n = 64;
  std::vector<float> y(n);
  for (int i = 0; i < n; ++i) y[i] = float(i);
  CUdeviceptr dy;
  cuMemAlloc(&dy, n * sizeof(float));
  cuMemcpyHtoD(dy, y.data(), n * sizeof(float));
  int count = n;
  void* args[] = {&dy, &count};
  check(cuLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS, "launch");
  check(cuCtxSynchronize() == CUDA_SUCCESS, "synchronize");
  cuMemcpyDtoH(y.data(), dy, n * sizeof(float));
  cuMemFree(dy);
  cuModuleUnload(module);
  bool right = true;
  for (int i = 0; i < n; ++i) right = right && y[i] == 0.5f * float(i) + 1.0f;
  check(right, "y = x / 2 + 1 (LTO-IR kernel -> PTX function -> LTO-IR function)");
}

}  // namespace

int main() {
  pthread_atfork([] { ++forks; }, nullptr, nullptr);
  // nvJitLinkVersion: what a program linked against NVIDIA's libnvJitLink.so.13 (the jitLto sample) binds to, a
  // lookup of the versioned name as the dynamic loader makes it, and what a client's plain dlsym probe finds.
  void* self = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_NOLOAD);
  check(self != nullptr, "libnvJitLink.so.13 is loaded");
  using Version = nvJitLinkResult (*)(unsigned*, unsigned*);
  auto version = self ? reinterpret_cast<Version>(dlvsym(self, "nvJitLinkVersion", "libnvJitLink.so.13")) : nullptr;
  unsigned major = 0, minor = 99;
  check(version && version(&major, &minor) == NVJITLINK_SUCCESS && major == 13 && minor == 0,
        "nvJitLinkVersion@libnvJitLink.so.13 answers 13.0");
  check(self && reinterpret_cast<Version>(dlsym(self, "nvJitLinkVersion")) == version,
        "dlsym(\"nvJitLinkVersion\") finds it too (the default version)");
  // The names later 13.x headers bind to (cuVS, built with 13.3's, needs __nvJitLinkCreate_13_3): each is the same
  // function as the 13.0 one.
  for (const char* name : {"__nvJitLinkCreate_13_3", "__nvJitLinkGetLinkedCubin_13_5", "__nvJitLinkGetInfoLog_13_9"}) {
    std::string base = std::string(name).substr(0, std::string(name).size() - 1) + "0";
    void* versioned = self ? dlvsym(self, name, "libnvJitLink.so.13") : nullptr;
    check(versioned && versioned == dlvsym(self, base.c_str(), "libnvJitLink.so.13"),
          (std::string(name) + "@libnvJitLink.so.13 is the 13.0 function").c_str());
  }

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
  cuMemFree(dx);
  cuMemFree(dy);

  std::vector<char> stepKernel = compile(kStepKernel, "step-kernel.cu"), stepPtx = compile(kStepPtx, "step.cu", true);
  check(!stepKernel.empty() && !stepPtx.empty(), "NVRTC compiles the step kernel to LTO-IR and step to PTX");
  if (failures) return 1;
  stepAcrossInputs(stepKernel, stepPtx, NVJITLINK_INPUT_PTX, "a separate PTX input");
  stepAcrossInputs(stepKernel, fatbinOf(stepPtx), NVJITLINK_INPUT_FATBIN, "a fatbinary holding that PTX");
  stepAcrossInputs(stepKernel, fatbinOf(stepPtx, true), NVJITLINK_INPUT_FATBIN,
                   "a fatbinary holding that PTX LZ4-compressed");
  return failures ? 1 : 0;
}
