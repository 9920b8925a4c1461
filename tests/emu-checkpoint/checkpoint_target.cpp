// The process a checkpoint test locks and checkpoints: it initialises the driver, keeps device memory with a known
// value and answers commands on stdin, one line each:
//   alloc    cuMemAlloc, prints "alloc <result>" (blocks while the process is locked)
//   launch   launches a kernel that spins until `release`, prints "launch <result>"
//   release  lets that kernel end (a store to mapped host memory: no driver call)
//   check    prints "check <result> <value>" of the device memory
//   exit
// With arguments `query PID` it instead asks, without cuInit, for the state of process PID and of itself and
// prints "query <result> <state> self <result>".
#include <cuda.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char* kSpin = R"PTX(
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 flag)
{
  .reg .u64 %rd1;
  .reg .u32 %r1;
  .reg .pred %p1;
  ld.param.u64 %rd1, [flag];
$L_spin:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_spin;
  ret;
}
)PTX";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && !std::strcmp(argv[1], "query")) {
    CUprocessState state = CUprocessState(99), own = CUprocessState(99);
    CUresult r = cuCheckpointProcessGetState(std::atoi(argv[2]), &state);
    CUresult self = cuCheckpointProcessGetState(int(getpid()), &own);
    std::printf("query %d %d self %d\n", int(r), int(state), int(self));
    return 0;
  }
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, nullptr, 0, dev)) return 2;
  CUmodule module = nullptr;
  CUfunction spin = nullptr;
  if (cuModuleLoadData(&module, kSpin) || cuModuleGetFunction(&spin, module, "spin")) return 3;
  CUdeviceptr value = 0;
  unsigned pattern = 0x1234abcd;
  if (cuMemAlloc(&value, 4) || cuMemcpyHtoD(value, &pattern, 4)) return 4;
  void* flagHost = nullptr;
  CUdeviceptr flag = 0;
  if (cuMemHostAlloc(&flagHost, 4, CU_MEMHOSTALLOC_DEVICEMAP) || cuMemHostGetDevicePointer(&flag, flagHost, 0))
    return 5;
  auto* release = static_cast<volatile unsigned*>(flagHost);
  CUstream stream = nullptr;
  cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  std::printf("ready\n");
  std::fflush(stdout);
  char line[64];
  while (std::fgets(line, sizeof line, stdin)) {
    if (!std::strcmp(line, "alloc\n")) {
      CUdeviceptr p = 0;
      std::printf("alloc %d\n", int(cuMemAlloc(&p, 64)));
    } else if (!std::strcmp(line, "launch\n")) {
      *release = 0;
      void* args[] = {&flag};
      std::printf("launch %d\n", int(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr)));
    } else if (!std::strcmp(line, "release\n")) {
      *release = 1;
      std::printf("released\n");
    } else if (!std::strcmp(line, "check\n")) {
      unsigned got = 0;
      CUresult r = cuMemcpyDtoH(&got, value, 4);
      std::printf("check %d %x\n", int(r), got);
    } else if (!std::strcmp(line, "exit\n")) {
      break;
    }
    std::fflush(stdout);
  }
  return 0;
}
