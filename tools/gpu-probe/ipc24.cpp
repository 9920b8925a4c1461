// Issue 24 item 6: what cuIpcGetMemHandle / cuIpcOpenMemHandle of a small (sub-allocated) block map. The exporter
// allocates three 512-byte blocks A, B, C and a 1 MiB block X, fills them with distinct bytes, exports A, B and X
// and runs this program again as the importer (a fresh process: IPC needs another process). The importer opens
// B, then A, then X, and prints where each pointer lies, what range cuMemGetAddressRange gives, and which bytes
// around the pointer it can read. Run with `PROBE=ipc24 tools/gpu-probe/run.sh OUTDIR`.
#include <cuda.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const char* name(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

static constexpr uint64_t kChunk = uint64_t(2) << 20;

static void context() {
  cuInit(0);
  CUdevice device = 0;
  cuDeviceGet(&device, 0);
  CUcontext ctx = nullptr;
  cuCtxCreate(&ctx, nullptr, 0, device);
}

static std::string hex(const void* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<const uint8_t*>(p)[i]);
    s += b;
  }
  return s;
}

static CUipcMemHandle unhex(const char* s) {
  CUipcMemHandle h{};
  for (size_t i = 0; i < sizeof h; ++i) {
    unsigned v = 0;
    std::sscanf(s + 2 * i, "%2x", &v);
    reinterpret_cast<uint8_t*>(&h)[i] = uint8_t(v);
  }
  return h;
}

static void range(const char* label, CUdeviceptr p) {
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult r = cuMemGetAddressRange(&base, &size, p);
  std::printf(
      "%s: pointer %% 2MiB = %#llx; cuMemGetAddressRange %s base %% 2MiB = %#llx, pointer - base = %lld, "
      "size = %zu\n",
      label, (unsigned long long)(p % kChunk), name(r), (unsigned long long)(base % kChunk), (long long)(p - base),
      size);
}

static void probeRead(const char* label, CUdeviceptr p, long long delta, size_t bytes) {
  std::vector<uint8_t> host(bytes, 0xEE);
  CUresult r = cuMemcpyDtoH(host.data(), p + delta, bytes);
  std::printf("%s: read %zu bytes at %+lld: %s, first byte %#x, last byte %#x\n", label, bytes, delta, name(r), host[0],
              host[bytes - 1]);
}

static int importer(char** argv) {
  context();
  CUipcMemHandle a = unhex(argv[2]), b = unhex(argv[3]), x = unhex(argv[4]);
  CUdeviceptr qb = 0, qa = 0, qx = 0, qb2 = 0;
  CUresult r = cuIpcOpenMemHandle(&qb, b, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  std::printf("open B: %s\n", name(r));
  if (r == CUDA_SUCCESS) {
    range("B", qb);
    probeRead("B", qb, 0, 512);
    probeRead("B", qb, 512, 512);   // C's bytes, if the chunk is mapped
    probeRead("B", qb, -512, 512);  // A's bytes
    probeRead("B", qb, 0, 4096);
    probeRead("B", qb, 0, 65536);
  }
  r = cuIpcOpenMemHandle(&qa, a, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  std::printf("open A (same chunk as B): %s; qa - qb = %lld\n", name(r), (long long)(qa - qb));
  if (r == CUDA_SUCCESS) {
    range("A", qa);
    probeRead("A", qa, 0, 512);
  }
  r = cuIpcOpenMemHandle(&qb2, b, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  std::printf("open B again: %s; same pointer %d\n", name(r), int(qb2 == qb));
  r = cuIpcOpenMemHandle(&qx, x, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  std::printf("open X (1 MiB): %s\n", name(r));
  if (r == CUDA_SUCCESS) {
    range("X", qx);
    probeRead("X", qx, 0, 1 << 20);
    probeRead("X", qx, 1 << 20, 512);
  }
  if (qb2) std::printf("close B (second): %s\n", name(cuIpcCloseMemHandle(qb2)));
  if (qb) std::printf("close B: %s\n", name(cuIpcCloseMemHandle(qb)));
  if (qa) {
    probeRead("A after closing B", qa, 0, 512);
    std::printf("close A: %s\n", name(cuIpcCloseMemHandle(qa)));
  }
  if (qx) std::printf("close X: %s\n", name(cuIpcCloseMemHandle(qx)));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 4 && std::strcmp(argv[1], "import") == 0) return importer(argv);
  context();
  CUdeviceptr a = 0, b = 0, c = 0, x = 0;
  cuMemAlloc(&a, 512);
  cuMemAlloc(&b, 512);
  cuMemAlloc(&c, 512);
  cuMemAlloc(&x, 1 << 20);
  cuMemsetD8(a, 0xA1, 512);
  cuMemsetD8(b, 0xB2, 512);
  cuMemsetD8(c, 0xC3, 512);
  cuMemsetD8(x, 0x58, 1 << 20);
  std::printf("exporter: a %% 2MiB = %#llx, b - a = %lld, c - b = %lld\n", (unsigned long long)(a % kChunk),
              (long long)(b - a), (long long)(c - b));
  range("exporter B", b);
  CUipcMemHandle ha{}, hb{}, hx{};
  std::printf("get A: %s\n", name(cuIpcGetMemHandle(&ha, a)));
  std::printf("get B: %s\n", name(cuIpcGetMemHandle(&hb, b)));
  std::printf("get X: %s\n", name(cuIpcGetMemHandle(&hx, x)));
  CUipcMemHandle hb2{};
  std::printf("get B again: %s, same handle %d\n", name(cuIpcGetMemHandle(&hb2, b)),
              int(!std::memcmp(&hb, &hb2, sizeof hb)));
  std::printf("handle A %s\nhandle B %s\nhandle X %s\n", hex(&ha, sizeof ha).c_str(), hex(&hb, sizeof hb).c_str(),
              hex(&hx, sizeof hx).c_str());
  std::fflush(stdout);
  std::string command = std::string("'") + argv[0] + "' import " + hex(&ha, sizeof ha) + " " + hex(&hb, sizeof hb) +
                        " " + hex(&hx, sizeof hx);
  int status = std::system(command.c_str());
  std::printf("importer exit %d\n", status);
  return 0;
}
