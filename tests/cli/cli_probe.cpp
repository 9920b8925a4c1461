// A small driver-API program for the `cuemu` command's tests. It loads libcuda.so.1 with dlopen (no link-time
// dependency, no rpath), so it finds a driver only where the loader path has one: `cuemu run` provides it.
//   cli_probe race      64 CTAs store their index to one word: the last writer depends on the CTA order
//   cli_probe sum       64 CTAs add their index + 1 to one word: 2080 in every order
//   cli_probe slow      `spin` with 2,000,000 iterations in each of 64 CTAs: a grid that runs for seconds (the
//                       progress line's test)
//   cli_probe file F    loads the module in file F (PTX, a cubin or a fatbinary, as cuModuleLoadData takes them)
//                       and runs its `fill(int* out)` with 1 CTA of 32 threads: prints "result" and the sum of out[]
//   cli_probe streams   two streams: `spin` on stream A, an event, stream B waits for it and runs `after`, which
//                       reads what `spin` wrote, then a copy back on B (the timeline test's program)
// Prints "result N"; exits 3 when no libcuda.so.1 is found, 4 when a driver call fails.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using Fn = int (*)(...);

const char* kPtx = R"(
.version 7.0
.target sm_50
.address_size 64
.visible .entry race(.param .u64 out) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry sum(.param .u64 out) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  add.u32 %r1, %r1, 1;
  atom.global.add.u32 %r2, [%rd1], %r1;
  ret;
}
.visible .entry spin(.param .u64 out, .param .u32 count) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r3, [count];
  mov.u32 %r1, 0;
  mov.u32 %r2, 0;
loop:
  add.u32 %r2, %r2, %r1;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p, %r1, %r3;
  @%p bra loop;
  st.global.u32 [%rd1], %r2;
  ret;
}
.visible .entry after(.param .u64 out) {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [%rd1];
  add.u32 %r1, %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

int streams(void* library) {
  auto fn = [&](const char* name) { return reinterpret_cast<Fn>(dlsym(library, name)); };
  int device = 0;
  void *context = nullptr, *module = nullptr, *spin = nullptr, *after = nullptr, *a = nullptr, *b = nullptr,
       *event = nullptr;
  unsigned long long buffer = 0;
  unsigned value = 0;
  void* params[] = {&buffer};
  unsigned iterations = 200000;
  void* spinParams[] = {&buffer, &iterations};
  bool ok =
      fn("cuInit")(0) == 0 && fn("cuDeviceGet")(&device, 0) == 0 && fn("cuCtxCreate_v2")(&context, 0u, device) == 0 &&
      fn("cuModuleLoadData")(&module, kPtx) == 0 && fn("cuModuleGetFunction")(&spin, module, "spin") == 0 &&
      fn("cuModuleGetFunction")(&after, module, "after") == 0 && fn("cuMemAlloc_v2")(&buffer, size_t(4)) == 0 &&
      fn("cuStreamCreate")(&a, 1u) == 0 && fn("cuStreamCreate")(&b, 1u) == 0 && fn("cuEventCreate")(&event, 2u) == 0 &&
      fn("cuLaunchKernel")(spin, 1u, 1u, 1u, 1u, 1u, 1u, 0u, a, spinParams, nullptr) == 0 &&
      fn("cuEventRecord")(event, a) == 0 && fn("cuStreamWaitEvent")(b, event, 0u) == 0 &&
      fn("cuLaunchKernel")(after, 1u, 1u, 1u, 1u, 1u, 1u, 0u, b, params, nullptr) == 0 &&
      fn("cuMemcpyDtoHAsync_v2")(&value, buffer, size_t(4), b) == 0 && fn("cuStreamSynchronize")(b) == 0 &&
      fn("cuCtxDestroy_v2")(context) == 0;
  if (!ok) {
    std::fprintf(stderr, "a driver call failed\n");
    return 4;
  }
  std::printf("result %u\n", value);
  return 0;
}

// The module of a file: its kernel `fill` writes out[threadIdx.x] for 32 threads.
int fromFile(void* library, const char* path) {
  auto fn = [&](const char* name) { return reinterpret_cast<Fn>(dlsym(library, name)); };
  std::FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path);
    return 2;
  }
  std::vector<char> image;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) image.insert(image.end(), chunk, chunk + n);
  std::fclose(f);
  image.push_back('\0');
  int device = 0;
  void *context = nullptr, *module = nullptr, *function = nullptr;
  unsigned long long buffer = 0;
  int values[32] = {};
  void* params[] = {&buffer};
  int loaded = -1;
  bool ok =
      fn("cuInit")(0) == 0 && fn("cuDeviceGet")(&device, 0) == 0 && fn("cuCtxCreate_v2")(&context, 0u, device) == 0 &&
      (loaded = fn("cuModuleLoadData")(&module, image.data())) == 0 &&
      fn("cuModuleGetFunction")(&function, module, "fill") == 0 && fn("cuMemAlloc_v2")(&buffer, sizeof values) == 0 &&
      fn("cuLaunchKernel")(function, 1u, 1u, 1u, 32u, 1u, 1u, 0u, nullptr, params, nullptr) == 0 &&
      fn("cuMemcpyDtoH_v2")(values, buffer, sizeof values) == 0 && fn("cuCtxDestroy_v2")(context) == 0;
  if (!ok) {
    std::fprintf(stderr, "a driver call failed (cuModuleLoadData: %d)\n", loaded);
    return 4;
  }
  long sum = 0;
  for (int v : values) sum += v;
  std::printf("result %ld\n", sum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* kernel = argc > 1 ? argv[1] : "sum";
  if (std::strcmp(kernel, "race") != 0 && std::strcmp(kernel, "sum") != 0 && std::strcmp(kernel, "streams") != 0 &&
      std::strcmp(kernel, "slow") != 0 && !(std::strcmp(kernel, "file") == 0 && argc > 2)) {
    std::fprintf(stderr, "usage: cli_probe race|sum|slow|streams|file FILE\n");
    return 2;
  }
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  if (!library) {
    std::fprintf(stderr, "no libcuda.so.1: %s\n", dlerror());
    return 3;
  }
  if (std::strcmp(kernel, "streams") == 0) return streams(library);
  if (std::strcmp(kernel, "file") == 0) return fromFile(library, argv[2]);
  auto fn = [&](const char* name) { return reinterpret_cast<Fn>(dlsym(library, name)); };
  int device = 0;
  void *context = nullptr, *module = nullptr, *function = nullptr;
  unsigned long long buffer = 0;
  unsigned value = 0;
  unsigned iterations = 2000000;
  void* params[] = {&buffer, &iterations};  // `spin` reads the count; the other kernels only `out`
  if (std::strcmp(kernel, "slow") == 0) kernel = "spin";
  bool ok = fn("cuInit")(0) == 0 && fn("cuDeviceGet")(&device, 0) == 0 &&
            fn("cuCtxCreate_v2")(&context, 0u, device) == 0 && fn("cuModuleLoadData")(&module, kPtx) == 0 &&
            fn("cuModuleGetFunction")(&function, module, kernel) == 0 && fn("cuMemAlloc_v2")(&buffer, size_t(4)) == 0 &&
            fn("cuMemsetD32_v2")(buffer, 0u, size_t(1)) == 0 &&
            fn("cuLaunchKernel")(function, 64u, 1u, 1u, 1u, 1u, 1u, 0u, nullptr, params, nullptr) == 0 &&
            fn("cuMemcpyDtoH_v2")(&value, buffer, size_t(4)) == 0 && fn("cuCtxDestroy_v2")(context) == 0;
  if (!ok) {
    std::fprintf(stderr, "a driver call failed\n");
    return 4;
  }
  std::printf("result %u\n", value);
  return 0;
}
