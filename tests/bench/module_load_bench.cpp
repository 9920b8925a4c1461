// Module loading of real library code (issue 21 item 2): CUB, Thrust, cooperative-groups and math PTX that the
// build compiles with nvcc from tools/ptx-corpus/src, loaded through the driver from cuModuleLoadData to the first
// use of a kernel (cuFuncGetAttribute, which lowers it under lazy loading), then unloaded. Reported: bytes_per_second
// over the PTX text, and the kernels lowered. Each benchmark runs under CUDA_MODULE_LOADING=LAZY and =EAGER.
// `SameImageTwice` loads one image into two modules at once: the second load finds the first's program.
//   module_load_bench [--benchmark_filter=...]     (the corpus directory is compiled in: MODULE_LOAD_CORPUS)
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* const kCorpus[] = {"cub_algos", "thrust_algos", "coop", "math"};

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
  std::exit(1);
}

std::string readCorpus(const std::string& name) {
  std::ifstream in(std::string(MODULE_LOAD_CORPUS) + "/" + name + ".sm_80.O3.ptx");
  if (!in) {
    std::fprintf(stderr, "missing %s/%s.sm_80.O3.ptx (built by the target module_load_corpus)\n", MODULE_LOAD_CORPUS,
                 name.c_str());
    std::exit(1);
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all;
    for (const char* name : kCorpus) all.push_back(readCorpus(name));
    return all;
  }();
  return texts;
}

CUcontext context() {
  static CUcontext ctx = [] {
    check(cuInit(0), "cuInit");
    CUdevice device = 0;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext c = nullptr;
    check(cuCtxCreate(&c, nullptr, 0, device), "cuCtxCreate");
    return c;
  }();
  return ctx;
}

// Loads `text`, uses its first kernel (an attribute query: the kernel is lowered), unloads.
void loadAndUse(const std::string& text) {
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, text.c_str()), "cuModuleLoadData");
  unsigned count = 0;
  check(cuModuleGetFunctionCount(&count, module), "cuModuleGetFunctionCount");
  if (count) {
    CUfunction first = nullptr;
    check(cuModuleEnumerateFunctions(&first, 1, module), "cuModuleEnumerateFunctions");
    int registers = 0;
    check(cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, first), "cuFuncGetAttribute");
    benchmark::DoNotOptimize(registers);
  }
  check(cuModuleUnload(module), "cuModuleUnload");
}

void setMode(bool lazy) { setenv("CUDA_MODULE_LOADING", lazy ? "LAZY" : "EAGER", 1); }

void LoadOne(benchmark::State& state, size_t index, bool lazy) {
  cuCtxSetCurrent(context());
  setMode(lazy);
  const std::string& text = corpus()[index];
  for (auto _ : state) loadAndUse(text);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
  state.counters["MB"] = double(text.size()) / 1e6;
}

void LoadCorpus(benchmark::State& state, bool lazy) {
  cuCtxSetCurrent(context());
  setMode(lazy);
  size_t bytes = 0;
  for (const std::string& text : corpus()) bytes += text.size();
  for (auto _ : state)
    for (const std::string& text : corpus()) loadAndUse(text);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["MB"] = double(bytes) / 1e6;
}

void SameImageTwice(benchmark::State& state, bool lazy) {
  cuCtxSetCurrent(context());
  setMode(lazy);
  const std::string& text = corpus()[0];
  for (auto _ : state) {
    CUmodule a = nullptr, b = nullptr;
    check(cuModuleLoadData(&a, text.c_str()), "cuModuleLoadData");
    check(cuModuleLoadData(&b, text.c_str()), "cuModuleLoadData");
    check(cuModuleUnload(b), "cuModuleUnload");
    check(cuModuleUnload(a), "cuModuleUnload");
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(2 * text.size()));
}

void registerAll() {
  for (bool lazy : {true, false}) {
    const char* mode = lazy ? "lazy" : "eager";
    for (size_t i = 0; i < std::size(kCorpus); ++i)
      benchmark::RegisterBenchmark((std::string("Load/") + kCorpus[i] + "/" + mode).c_str(), LoadOne, i, lazy)
          ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("LoadCorpus/") + mode).c_str(), LoadCorpus, lazy)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("SameImageTwice/") + mode).c_str(), SameImageTwice, lazy)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
