// Probe for the compute-capability-12 device work (issue 18): what NVIDIA's driver answers when PTX for a newer
// target is loaded on this GPU, and what the driver-internal export table 21318c60 that cuBLAS 13 uses holds.
//   probe            PTX targets and the table's shape
//   probe call4      additionally calls slot 4 of 21318c60 the way cuBLASLt 13 does (may crash: separate run)
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

static const char* errName(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

static void ptxTargets() {
  const char* targets[] = {"sm_89",  "sm_90",   "sm_90a",  "sm_100",  "sm_100a", "sm_100f",
                           "sm_101", "sm_103",  "sm_110",  "sm_120",  "sm_120a", "sm_120f",
                           "sm_121", "sm_121a", "sm_121f", "sm_103a", "sm_110a", "sm_100f,sm_90"};
  const char* versions[] = {"9.0", "8.8", "8.7"};
  for (const char* version : versions)
    for (const char* target : targets) {
      std::string ptx = std::string(".version ") + version + "\n.target " + target +
                        "\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<2>;\n"
                        "\tld.param.u64 %rd1, [p];\n\tret;\n}\n";
      char log[2048] = {0}, info[2048] = {0};
      CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                                CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
      void* values[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log)), info,
                        reinterpret_cast<void*>(uintptr_t(sizeof info))};
      CUmodule module = nullptr;
      CUresult plain = cuModuleLoadData(&module, ptx.c_str());
      if (plain == CUDA_SUCCESS) cuModuleUnload(module);
      module = nullptr;
      CUresult withLog = cuModuleLoadDataEx(&module, ptx.c_str(), 4, options, values);
      if (withLog == CUDA_SUCCESS) cuModuleUnload(module);
      for (char* c = log; *c; ++c)
        if (*c == '\n') *c = '|';
      std::printf("ptx version %s target %s: cuModuleLoadData %d %s; Ex %d log \"%s\"\n", version, target, int(plain),
                  errName(plain), int(withLog), log);
    }
}

static bool parseUuid(const char* hex, CUuuid& id) {
  for (int i = 0; i < 16; ++i) {
    unsigned v;
    if (std::sscanf(hex + 2 * i, "%2x", &v) != 1) return false;
    id.bytes[i] = char(v);
  }
  return true;
}

static const void* const* table(const char* hex) {
  CUuuid id;
  parseUuid(hex, id);
  const void* t = nullptr;
  CUresult r = cuGetExportTable(&t, &id);
  std::printf("exporttable %s: %d %s\n", hex, int(r), t ? "non-null" : "null");
  return static_cast<const void* const*>(t);
}

int main(int argc, char** argv) {
  bool call4 = argc > 1 && std::strcmp(argv[1], "call4") == 0;
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  char name[256];
  cuDeviceGetName(name, sizeof name, dev);
  int major = 0, minor = 0, driver = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cuDriverGetVersion(&driver);
  std::printf("device %s cc %d.%d driver %d\n", name, major, minor, driver);
  CUcontext ctx;
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  if (!call4) ptxTargets();

  const void* const* rt = table("21318c60971432488ca641ff7324c8f2");
  const void* const* tls = table("42d85a8123f6cb478298f6e78a3aecdc");
  if (rt) {
    std::printf("21318c60 word0 0x%llx\n", (unsigned long long)reinterpret_cast<uintptr_t>(rt[0]));
    std::printf("21318c60 slots:");
    for (int i = 1; i < 80; ++i) std::printf(" %d:%s", i, rt[i] ? "f" : "0");
    std::printf("\n");
  }
  if (tls) {
    std::printf("tools-tls word0 0x%llx\n", (unsigned long long)reinterpret_cast<uintptr_t>(tls[0]));
    using Getter = CUresult (*)(void**);
    void* value = reinterpret_cast<void*>(0x1234);
    CUresult r = reinterpret_cast<Getter>(const_cast<void*>(tls[2]))(&value);
    CUcontext current = nullptr;
    cuCtxGetCurrent(&current);
    std::printf("tools-tls slot2 -> %d value %p (current context %p)\n", int(r), value, static_cast<void*>(current));
    if (call4 && rt) {
      using Slot4 = CUresult (*)(void*, uint64_t*);
      uint64_t out = 0xdeadbeefcafef00dull;
      CUresult r4 = reinterpret_cast<Slot4>(const_cast<void*>(rt[4]))(value, &out);
      std::printf("21318c60 slot4(tls value) -> %d out 0x%llx\n", int(r4), (unsigned long long)out);
      out = 0xdeadbeefcafef00dull;
      r4 = reinterpret_cast<Slot4>(const_cast<void*>(rt[4]))(ctx, &out);
      std::printf("21318c60 slot4(ctx) -> %d out 0x%llx\n", int(r4), (unsigned long long)out);
    }
  }
  std::fflush(stdout);
  return 0;
}
