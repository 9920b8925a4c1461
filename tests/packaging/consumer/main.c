/* Links cuemu's libcuda.so.1 through find_package(cuemu) and runs a kernel: prints "consumer ok <cuemu version>". */
#include <cuemu.h>
#include <stdio.h>

static const char* kPtx =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry twice(.param .u64 p) {\n"
    "  .reg .b64 %rd<3>; .reg .b32 %r<3>;\n"
    "  ld.param.u64 %rd1, [p]; mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;\n"
    "  ld.global.u32 %r2, [%rd1]; add.u32 %r2, %r2, %r2; st.global.u32 [%rd1], %r2; ret;\n}\n";

int main(void) {
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUfunction function;
  CUdeviceptr buffer;
  unsigned data[32];
  for (unsigned i = 0; i < 32; ++i) data[i] = i;
  void* params[] = {&buffer};
  if (cuInit(0) || cuDeviceGet(&device, 0) || cuCtxCreate(&context, NULL, 0, device) ||
      cuModuleLoadData(&module, kPtx) || cuModuleGetFunction(&function, module, "twice") ||
      cuMemAlloc(&buffer, sizeof data) || cuMemcpyHtoD(buffer, data, sizeof data) ||
      cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) || cuMemcpyDtoH(data, buffer, sizeof data)) {
    fprintf(stderr, "a driver call failed\n");
    return 1;
  }
  for (unsigned i = 0; i < 32; ++i)
    if (data[i] != 2 * i) {
      fprintf(stderr, "element %u is %u\n", i, data[i]);
      return 1;
    }
  int major = 0, minor = 0, patch = 0;
  cuemuGetVersion(&major, &minor, &patch);
  printf("consumer ok %d.%d.%d\n", major, minor, patch);
  return cuCtxDestroy(context) != CUDA_SUCCESS;
}
