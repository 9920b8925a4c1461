// Runs each PTX kernel of gen.py through the driver's JIT with two input sets and prints the output bits, so that
// the driver's contraction of mul + add/sub into fused multiply-adds can be read from the numbers (inputs chosen
// so that a fused result differs from the rounded product's).
// Usage: probe DIR (the .ptx files); output lines: "<file> <set> <hex of output slot 0> <hex of output slot 1>".
#include <cuda.h>
#include <dirent.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return 1;
  CUdeviceptr buf;
  cuMemAlloc(&buf, 256);
  std::vector<std::string> files;
  DIR* d = opendir(argv[1]);
  while (dirent* e = readdir(d))
    if (std::strstr(e->d_name, ".ptx")) files.push_back(e->d_name);
  closedir(d);
  for (const std::string& f : files) {
    std::ifstream in(std::string(argv[1]) + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string ptx = ss.str();
    CUmodule mod;
    CUfunction fn;
    if (cuModuleLoadData(&mod, ptx.c_str()) || cuModuleGetFunction(&fn, mod, "k")) {
      std::printf("%s load-failed\n", f.c_str());
      continue;
    }
    for (int set = 0; set < 2; ++set) {
      uint8_t in8[256] = {};
      const double c = set == 0 ? -1.0 : 1.0, dd = -c;
      if (f.find("_f32") != std::string::npos) {
        float v[4] = {1.0f + 0x1p-13f, 1.0f - 0x1p-13f, float(c), float(dd)};
        std::memcpy(in8, v, sizeof v);
      } else if (f.find("_f64") != std::string::npos) {
        double v[4] = {1.0 + 0x1p-27, 1.0 - 0x1p-27, c, dd};
        std::memcpy(in8, v, sizeof v);
      } else {  // f16: 1 + 2^-6, 1 - 2^-6, +-1
        uint16_t v[4] = {0x3c10, 0x3be0, uint16_t(c < 0 ? 0xbc00 : 0x3c00), uint16_t(dd < 0 ? 0xbc00 : 0x3c00)};
        std::memcpy(in8, v, sizeof v);
      }
      cuMemcpyHtoD(buf, in8, sizeof in8);
      unsigned n = 5;
      void* params[] = {&buf, &n};
      CUresult r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
      if (!r) r = cuCtxSynchronize();
      uint8_t out[256];
      cuMemcpyDtoH(out, buf, sizeof out);
      uint64_t s0, s1;
      std::memcpy(&s0, out + 64, 8);
      std::memcpy(&s1, out + 72, 8);
      std::printf("%s %d rc %d %016llx %016llx\n", f.c_str(), set, int(r), (unsigned long long)s0,
                  (unsigned long long)s1);
    }
    cuModuleUnload(mod);
  }
  return 0;
}
