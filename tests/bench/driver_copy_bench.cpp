// Host<->device copies and fills through the driver against memcpy/memset of the same size in the same run (issue
// 21 item 6: copies at memcpy bandwidth). Each is timed after a first round that touches every page, the best of
// several rounds; ratio = driver time / memcpy time (1.0: memcpy's bandwidth).
//   driver_copy_bench [MiB]     (default 256)
#include <cuda.h>

#include "driver_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

double best(const std::function<void()>& f) {
  double t = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t = std::min(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  using driver_bench::check;
  const size_t bytes = size_t(argc > 1 ? std::atoi(argv[1]) : 256) << 20;
  check(cuInit(0), "cuInit");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  std::vector<char> host(bytes, 1), host2(bytes, 0);
  void* pinned = nullptr;
  check(cuMemAllocHost(&pinned, bytes), "cuMemAllocHost");
  std::memset(pinned, 2, bytes);
  CUdeviceptr a = 0, b = 0;
  check(cuMemAlloc(&a, bytes), "cuMemAlloc");
  check(cuMemAlloc(&b, bytes), "cuMemAlloc");
  CUstream stream = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  double memcpyTime = best([&] { std::memcpy(host2.data(), host.data(), bytes); });
  double memsetTime = best([&] { std::memset(host2.data(), 3, bytes); });
  struct Row {
    const char* name;
    double reference;
    std::function<void()> run;
  };
  const Row rows[] = {
      {"cuMemcpyHtoD, pageable", memcpyTime, [&] { check(cuMemcpyHtoD(a, host.data(), bytes), "HtoD"); }},
      {"cuMemcpyHtoD, pinned", memcpyTime, [&] { check(cuMemcpyHtoD(a, pinned, bytes), "HtoD"); }},
      {"cuMemcpyDtoH, pageable", memcpyTime, [&] { check(cuMemcpyDtoH(host2.data(), a, bytes), "DtoH"); }},
      {"cuMemcpyDtoD", memcpyTime, [&] { check(cuMemcpyDtoD(b, a, bytes), "DtoD"); }},
      {"cuMemcpyHtoDAsync, pinned, + sync", memcpyTime,
       [&] {
         check(cuMemcpyHtoDAsync(a, pinned, bytes, stream), "HtoDAsync");
         check(cuStreamSynchronize(stream), "sync");
       }},
      {"cuMemsetD8", memsetTime, [&] { check(cuMemsetD8(a, 3, bytes), "memset"); }},
  };
  std::printf("%zu MiB: memcpy %.2f GB/s, memset %.2f GB/s\n", bytes >> 20, double(bytes) / memcpyTime / 1e9,
              double(bytes) / memsetTime / 1e9);
  for (const Row& row : rows) {
    double t = best(row.run);
    std::printf("%-36s %6.2f GB/s  ratio %.2f\n", row.name, double(bytes) / t / 1e9, t / row.reference);
  }
  return 0;
}
