// Command-line driver for the PTX front end: parses (and checks / prints) files, reports diagnostics.
// Used to work on the corpus by hand and by the ptxas agreement script.
//   ptx_front_cli [--quiet] [--print] [--roundtrip] [--load] [--stats] FILE...   (parse + check; times are
//   parse + check)
//   --load: also lowers each accepted file for the interpreter (ptx::exec::compile, what a module load does) and
//   counts a failure there as a rejection; --stats: one line per file, "STATS file functions instructions",
//   and with --load one "UNSUPPORTED kernel: message" line per kernel that would fail at launch.
//   --run (with --load): launches every kernel whose parameters are two pointers `(in, out)` (the header sweep's
//   wrappers) on one warp, `in` holding 64-byte argument slots of a fixed pattern, and prints
//   "RUN kernel ok" or "RUN kernel fault: message".
// Exit status: 0 when every file is accepted, 1 otherwise.
#include <ctime>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "../ptx-exec/harness.h"
#include "ptx/check.h"
#include "ptx/exec.h"
#include "ptx/parse.h"
#include "ptx/print.h"

// --run: each `(in, out)` kernel once on one warp, over valid buffers (ptx-exec's test arena).
static void runWrappers(const ptx::exec::Program& program) {
  static ptxtest::Arena arena(size_t(64) << 20);
  const auto& ks = ptx::exec::kernels(program);
  std::vector<uint64_t> globalAddrs;
  for (const ptx::exec::GlobalInfo& g : ptx::exec::globals(program)) {
    uint8_t* q = arena.alloc<uint8_t>(g.size ? g.size : 1);
    if (!g.init.empty()) std::memcpy(q, g.init.data(), g.init.size());
    globalAddrs.push_back(reinterpret_cast<uint64_t>(q));
  }
  uint8_t* in = arena.alloc<uint8_t>(4096);
  uint8_t* out = arena.alloc<uint8_t>(4096);
  for (size_t k = 0; k < ks.size(); ++k) {
    const ptx::exec::KernelInfo& info = ks[k];
    if (info.params.size() != 2 || info.params[0].size != 8 || info.params[1].size != 8 || !info.unsupported.empty())
      continue;
    for (int i = 0; i < 4096; ++i) in[i] = uint8_t(i % 64 < 8 ? (i % 64 == 1 ? 0x3c : 0x11 * (i % 64)) : 0);
    std::memset(out, 0, 4096);
    ptxtest::Params p(info);
    p.arg(in).arg(out);
    ptx::exec::LaunchParams lp;
    lp.grid = ptx::exec::Dim3{1};
    lp.block = ptx::exec::Dim3{32};
    lp.params = p.data();
    lp.paramBytes = p.size();
    lp.globalAddresses = globalAddrs.data();
    lp.memory = &arena;
    ptx::exec::LaunchResult r = ptx::exec::launch(program, int(k), lp);
    if (r.ok())
      std::printf("RUN %s ok\n", info.name.c_str());
    else
      std::printf("RUN %s fault: %s\n", info.name.c_str(), r.fault.message.c_str());
  }
}

int main(int argc, char** argv) {
  bool quiet = false, print = false, roundtrip = false, load = false, stats = false, run = false;
  int status = 0;
  size_t bytes = 0;
  double seconds = 0;
  int files = 0, failed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quiet")) {
      quiet = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--print")) {
      print = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--roundtrip")) {
      roundtrip = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--load")) {
      load = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--stats")) {
      stats = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--run")) {
      run = true;
      continue;
    }
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open\n", argv[i]);
      status = 1;
      continue;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    ptx::Diagnostics diags(argv[i], 20);
    ptx::ParseOptions opt;
    opt.fileName = argv[i];
    // CPU time of this thread: the machine is shared, wall time would measure the neighbours.
    timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    auto module = ptx::parseModule(text, diags, opt);
    if (!diags.hasErrors()) ptx::checkModule(*module, diags);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    seconds += double(t1.tv_sec - t0.tv_sec) + 1e-9 * double(t1.tv_nsec - t0.tv_nsec);
    bytes += text.size();
    ++files;
    if (diags.hasErrors()) {
      ++failed;
      status = 1;
      if (!quiet)
        std::fputs(diags.format().c_str(), stdout);
      else
        std::printf("%s: %zu errors\n", argv[i], diags.errorCount());
      continue;
    }
    if (stats) {
      size_t instructions = 0;
      for (const ptx::Function& f : module->functions) instructions += f.instructions.size();
      std::printf("STATS %s %zu %zu\n", argv[i], module->functions.size(), instructions);
    }
    if (load) {
      ptx::exec::CompileOptions co;
      co.fileName = argv[i];
      ptx::exec::CompileResult cr = ptx::exec::compile(text, co);
      if (!cr.program) {
        ++failed;
        status = 1;
        std::printf("%s: load failed: %s\n", argv[i], cr.error.c_str());
        continue;
      }
      if (stats)
        for (const ptx::exec::KernelInfo& k : ptx::exec::kernels(*cr.program))
          if (!k.unsupported.empty()) std::printf("UNSUPPORTED %s: %s\n", k.name.c_str(), k.unsupported.c_str());
      if (run) runWrappers(*cr.program);
    }
    if (print) std::fputs(ptx::printModule(*module).c_str(), stdout);
    if (roundtrip) {
      std::string printed = ptx::printModule(*module);
      ptx::Diagnostics diags2("<printed>", 20);
      auto again = ptx::parseModule(printed, diags2);
      std::string diff = diags2.hasErrors() ? "reparse failed:\n" + diags2.format() : ptx::diffModules(*module, *again);
      if (!diff.empty()) {
        ++failed;
        status = 1;
        std::printf("%s: round trip: %s\n", argv[i], diff.c_str());
      }
    }
  }
  std::fprintf(stderr, "%d files, %d rejected, %.1f MB, %.3f s, %.1f MB/s (thread CPU time)\n", files, failed,
               bytes / 1e6, seconds, seconds > 0 ? bytes / 1e6 / seconds : 0.0);
  return status;
}
