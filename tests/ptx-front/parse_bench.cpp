// Parse + check throughput of the PTX front end on the corpus, in bytes per second of CPU time on one core.
// Uses the generated corpus when present (CUEMU_PTX_CORPUS=ON), else the checked-in one.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ptx/check.h"
#include "ptx/parse.h"
#include "ptx/print.h"

namespace {

std::vector<std::string> loadCorpus() {
  std::vector<std::string> texts;
  for (const char* dir : {PTX_FRONT_GENERATED_CORPUS_DIR, PTX_FRONT_CORPUS_DIR}) {
    std::error_code ec;
    std::vector<std::filesystem::path> paths;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".ptx") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      texts.push_back(ss.str());
    }
    if (!texts.empty()) break;
  }
  return texts;
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = loadCorpus();
  return texts;
}

void BM_ParseAndCheck(benchmark::State& state) {
  const auto& texts = corpus();
  size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      ptx::Diagnostics diags;
      auto m = ptx::parseModule(t, diags);
      bool ok = !diags.hasErrors() && ptx::checkModule(*m, diags);
      if (!ok) state.SkipWithError("corpus file rejected");
      benchmark::DoNotOptimize(m);
      bytes += t.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["files"] = static_cast<double>(texts.size());
}
BENCHMARK(BM_ParseAndCheck)->Unit(benchmark::kMillisecond);

void BM_ParseOnly(benchmark::State& state) {
  const auto& texts = corpus();
  size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      ptx::Diagnostics diags;
      benchmark::DoNotOptimize(ptx::parseModule(t, diags));
      bytes += t.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
  std::vector<std::unique_ptr<ptx::Module>> modules;
  size_t bytes = 0;
  for (const std::string& t : corpus()) {
    ptx::Diagnostics diags;
    modules.push_back(ptx::parseModule(t, diags));
  }
  for (auto _ : state) {
    for (const auto& m : modules) {
      std::string s = ptx::printModule(*m);
      bytes += s.size();
      benchmark::DoNotOptimize(s);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
