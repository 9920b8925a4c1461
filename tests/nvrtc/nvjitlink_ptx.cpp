// cuemu's libnvJitLink.so.13 (emu/nvjitlink) linking PTX many times in one process, with error and info logs.
// cuLinkCreate keeps pointers to its output options (the log sizes it writes back) for the life of the link
// state; the library once passed it a local array that was freed when nvJitLinkCreate returned, so every later
// cuLinkAddData/cuLinkComplete wrote the log sizes into freed heap memory. That corrupted the heap now and then
// (a crash at exit, PTX altered before it was parsed). The write is seen at once under glibc's malloc checking,
// which is how ctest runs this test a second time (nvrtc.nvjitlink_ptx_malloc_check).
//   nvjitlink_ptx [ROUNDS]
#include <cuda.h>
#include <nvJitLink.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int failures = 0;
void check(bool ok, const char* what, int round) {
  if (!ok) {
    std::printf("FAIL (round %d): %s\n", round, what);
    ++failures;
  }
}

// Two units: the kernel calls a function the second one defines (relocatable PTX, as nvcc -rdc makes it).
const char* kKernel = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) twice(.param .b32 x);
.visible .entry addTwice(.param .u64 out, .param .u32 value) {
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [value];
  {
    .param .b32 param0;
    st.param.b32 [param0], %r1;
    .param .b32 retval0;
    call.uni (retval0), twice, (param0);
    ld.param.b32 %r2, [retval0];
  }
  st.global.u32 [%rd1], %r2;
  ret;
}
)";
const char* kHelper = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) twice(.param .b32 x) {
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [r], %r2;
  ret;
}
)";
const char* kBroken = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken() { bogus.op; }\n";

std::string logOf(nvJitLinkHandle link, bool error) {
  size_t size = 0;
  if ((error ? nvJitLinkGetErrorLogSize(link, &size) : nvJitLinkGetInfoLogSize(link, &size)) != NVJITLINK_SUCCESS)
    return "?";
  std::string log(size, '\0');
  if (size) error ? nvJitLinkGetErrorLog(link, log.data()) : nvJitLinkGetInfoLog(link, log.data());
  if (!log.empty()) log.pop_back();
  return log;
}

// One link of both units (and, every tenth round, a failing link first): returns the linked image.
std::vector<char> linkOnce(int round) {
  // Options built in a buffer of their own that is gone before the link ends, as a client's may be.
  std::vector<std::string> optionText = {"-arch=sm_90", "-lineinfo", round % 3 ? "-O3" : "-g"};
  std::vector<const char*> options;
  for (const std::string& o : optionText) options.push_back(o.c_str());
  if (round % 10 == 1) {
    nvJitLinkHandle bad = nullptr;
    check(nvJitLinkCreate(&bad, uint32_t(options.size()), options.data()) == NVJITLINK_SUCCESS, "create", round);
    check(nvJitLinkAddData(bad, NVJITLINK_INPUT_PTX, kBroken, std::char_traits<char>::length(kBroken), "broken") ==
              NVJITLINK_ERROR_PTX_COMPILE,
          "broken PTX is refused", round);
    check(logOf(bad, true).find("broken") != std::string::npos, "the error log names the input", round);
    nvJitLinkDestroy(&bad);
  }
  nvJitLinkHandle link = nullptr;
  check(nvJitLinkCreate(&link, uint32_t(options.size()), options.data()) == NVJITLINK_SUCCESS, "create", round);
  optionText.clear();
  options.clear();
  check(nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, kKernel, std::char_traits<char>::length(kKernel), "kernel") ==
            NVJITLINK_SUCCESS,
        "add the kernel", round);
  check(nvJitLinkAddData(link, NVJITLINK_INPUT_ANY, kHelper, std::char_traits<char>::length(kHelper), "helper") ==
            NVJITLINK_SUCCESS,
        "add the helper", round);
  nvJitLinkResult completed = nvJitLinkComplete(link);
  if (completed != NVJITLINK_SUCCESS) std::printf("%s\n", logOf(link, true).c_str());
  check(completed == NVJITLINK_SUCCESS, "complete", round);
  size_t size = 0;
  std::vector<char> image;
  if (nvJitLinkGetLinkedCubinSize(link, &size) == NVJITLINK_SUCCESS) {
    image.resize(size);
    check(nvJitLinkGetLinkedCubin(link, image.data()) == NVJITLINK_SUCCESS, "get the image", round);
  }
  nvJitLinkDestroy(&link);
  return image;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 50;
  CUdevice device;
  CUcontext context;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS || cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    std::printf("FAIL: no context\n");
    return 1;
  }
  CUdeviceptr out;
  check(cuMemAlloc(&out, sizeof(unsigned)) == CUDA_SUCCESS, "cuMemAlloc", 0);
  for (int round = 0; round < rounds && failures == 0; ++round) {
    std::vector<char> image = linkOnce(round);
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    check(!image.empty() && cuModuleLoadData(&module, image.data()) == CUDA_SUCCESS, "load the linked image", round);
    check(cuModuleGetFunction(&function, module, "addTwice") == CUDA_SUCCESS, "addTwice", round);
    unsigned value = unsigned(round) + 1, result = 0;
    void* args[] = {&out, &value};
    check(cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS, "launch", round);
    check(cuMemcpyDtoH(&result, out, sizeof result) == CUDA_SUCCESS && result == 2 * value, "out = 2 value", round);
    cuModuleUnload(module);
  }
  cuMemFree(out);
  std::printf("%d rounds, %d failure(s)\n", rounds, failures);
  return failures ? 1 : 0;
}
