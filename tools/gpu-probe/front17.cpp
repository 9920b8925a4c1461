// Issue 17 (front end): runs PTX kernels `k(.param .u64 out)` on the GPU and prints the words they wrote, so
// the expectations of tests/ptx-exec/compat_test.cpp can be checked against the hardware. Each file named in
// $FRONT17_CASES (lines "file words blockX gridX") is loaded with cuModuleLoadData; out is filled with 0 first.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main() {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return 1;
  const char* list = std::getenv("FRONT17_CASES");
  std::ifstream cases(list ? list : "cases.txt");
  std::string file;
  unsigned words = 0, block = 0, grid = 0;
  while (cases >> file >> words >> block >> grid) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    CUmodule mod;
    char log[4096] = {};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
    CUresult r = cuModuleLoadDataEx(&mod, text.c_str(), 2, opts, vals);
    std::printf("%s load %d %s\n", file.c_str(), int(r), log);
    if (r) continue;
    CUfunction f;
    if (cuModuleGetFunction(&f, mod, "k")) continue;
    CUdeviceptr out;
    cuMemAlloc(&out, words * 4 + 64);
    cuMemsetD32(out, 0, words);
    void* args[] = {&out};
    r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr);
    if (!r) r = cuCtxSynchronize();
    std::vector<unsigned> host(words);
    cuMemcpyDtoH(host.data(), out, words * 4);
    std::printf("%s run %d:", file.c_str(), int(r));
    for (unsigned w : host) std::printf(" %08x", w);
    std::printf("\n");
    cuMemFree(out);
    cuModuleUnload(mod);
    if (r) return 2;
  }
  return 0;
}
