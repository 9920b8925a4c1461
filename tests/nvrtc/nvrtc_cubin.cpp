// cuemu's libnvrtc.so.13 (emu/nvrtc): a program that compiles a kernel with NVIDIA's NVRTC for a real
// architecture and loads the "cubin" with cuModuleLoadData runs on cuemu, for each way of naming the architecture;
// PTX, logs and errors stay NVIDIA's. With CUEMU_CUBIN_AS_PTX=0 (argument `elf`) the cubin is SASS again, which is
// what the test checks to show the rewrite is what made the difference.
//   nvrtc_cubin [ptx|elf]
#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

const char* kSource = R"(
extern "C" __global__ void scaleAdd(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

// Compiles kSource with `options`; returns the cubin NVRTC hands out (empty on failure).
std::vector<char> compileCubin(const std::vector<const char*>& options, nvrtcResult* cubinResult,
                               std::string* ptx = nullptr) {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, kSource, "scale_add.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return {};
  nvrtcResult compiled = nvrtcCompileProgram(prog, int(options.size()), options.data());
  if (compiled != NVRTC_SUCCESS) {
    size_t logSize = 0;
    nvrtcGetProgramLogSize(prog, &logSize);
    std::string log(logSize, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::printf("compile failed: %s\n%s\n", nvrtcGetErrorString(compiled), log.c_str());
  }
  size_t size = 0;
  std::vector<char> cubin;
  *cubinResult = nvrtcGetCUBINSize(prog, &size);
  if (*cubinResult == NVRTC_SUCCESS) {
    cubin.resize(size);
    *cubinResult = nvrtcGetCUBIN(prog, cubin.data());
  }
  if (ptx) {
    size_t ptxSize = 0;
    if (nvrtcGetPTXSize(prog, &ptxSize) == NVRTC_SUCCESS) {
      ptx->assign(ptxSize, '\0');
      nvrtcGetPTX(prog, ptx->data());
    }
  }
  nvrtcDestroyProgram(&prog);
  check(prog == nullptr, "nvrtcDestroyProgram clears the handle");
  return cubin;
}

// Loads `image`, runs scaleAdd on 1000 elements, checks y = 2x + y.
bool runs(const std::vector<char>& image) {
  CUmodule module = nullptr;
  CUresult loaded = cuModuleLoadData(&module, image.data());
  if (loaded != CUDA_SUCCESS) {
    std::printf("cuModuleLoadData: %d\n", int(loaded));
    return false;
  }
  CUfunction kernel = nullptr;
  cuModuleGetFunction(&kernel, module, "scaleAdd");
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
  CUdeviceptr dx = 0, dy = 0;
  cuMemAlloc(&dx, n * sizeof(float));
  cuMemAlloc(&dy, n * sizeof(float));
  cuMemcpyHtoD(dx, x.data(), n * sizeof(float));
  cuMemcpyHtoD(dy, y.data(), n * sizeof(float));
  float a = 2.0f;
  int count = n;
  void* params[] = {&a, &dx, &dy, &count};
  CUresult launched = cuLaunchKernel(kernel, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
  cuCtxSynchronize();
  cuMemcpyDtoH(y.data(), dy, n * sizeof(float));
  cuMemFree(dx);
  cuMemFree(dy);
  cuModuleUnload(module);
  bool right = launched == CUDA_SUCCESS;
  for (int i = 0; i < n && right; ++i) right = y[i] == 2.0f * float(i) + 1.0f;
  return right;
}

bool isElf(const std::vector<char>& image) {
  return image.size() > 4 && std::memcmp(image.data(),
                                         "\x7f"
                                         "ELF",
                                         4) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool expectElf = argc > 1 && std::strcmp(argv[1], "elf") == 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuCtxCreate(&context, nullptr, 0, device) != CUDA_SUCCESS) {
    std::printf("FAIL: no device\n");
    return 1;
  }
  int major = 0, minor = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  std::string sm = "sm_" + std::to_string(major * 10 + minor);
  std::string joined = "-arch=" + sm, longJoined = "--gpu-architecture=" + sm;

  nvrtcResult result = NVRTC_SUCCESS;
  std::string ptx;
  std::vector<char> cubin = compileCubin({joined.c_str(), "-default-device"}, &result, &ptx);
  check(result == NVRTC_SUCCESS && !cubin.empty(), "-arch=sm_XX: nvrtcGetCUBIN answers");
  if (expectElf) {
    check(isElf(cubin), "with CUEMU_CUBIN_AS_PTX=0 the cubin is NVIDIA's ELF (SASS)");
    check(!runs(cubin), "and cuemu cannot run it");
  } else {
    check(!isElf(cubin) && std::string(cubin.data(), cubin.size()) == ptx, "the cubin is the program's PTX");
    check(ptx.find(".target sm_" + std::to_string(major * 10 + minor)) != std::string::npos,
          "compiled for the matching virtual architecture");
    check(runs(cubin), "-arch=sm_XX: cuModuleLoadData takes it and the kernel computes y = a*x + y");
    check(runs(compileCubin({"--gpu-architecture", sm.c_str()}, &result)), "--gpu-architecture sm_XX (two options)");
    check(runs(compileCubin({"-arch", sm.c_str()}, &result)), "-arch sm_XX (two options)");
    check(runs(compileCubin({longJoined.c_str()}, &result)), "--gpu-architecture=sm_XX");
    std::string virt = "-arch=compute_" + std::to_string(major * 10 + minor);
    std::vector<char> none = compileCubin({virt.c_str()}, &result);
    check(result != NVRTC_SUCCESS, "compute_XX: no cubin, as NVIDIA's NVRTC answers");
    check(compileCubin({"-arch=sm_1"}, &result).empty() && result != NVRTC_SUCCESS,
          "an invalid architecture stays NVRTC's compile error");
  }
  cuCtxDestroy(context);
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
