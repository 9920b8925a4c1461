// Accept/reject agreement with NVIDIA's ptxas, the oracle: every agreement case and every small corpus file is
// run through both. Skipped when ptxas is not installed. CUEMU_PTXAS_FULL=1 also runs the large corpus files.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ptx/check.h"
#include "ptx/parse.h"
#include "ptx/print.h"

namespace {

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Our verdict and the line of our first error (0 when accepted).
struct Verdict {
  bool accepted = false;
  uint32_t firstErrorLine = 0;
  std::string log;
};

Verdict ours(const std::string& text) {
  ptx::Diagnostics diags;
  auto module = ptx::parseModule(text, diags);
  if (!diags.hasErrors()) ptx::checkModule(*module, diags);
  Verdict v;
  v.accepted = !diags.hasErrors();
  for (const auto& d : diags.all())
    if (d.severity == ptx::Severity::Error) {
      v.firstErrorLine = d.line;
      break;
    }
  v.log = diags.format();
  return v;
}

bool weAccept(const std::string& text) { return ours(text).accepted; }

// The architecture ptxas compiles for: the module's .target (ptxas -arch must name a real GPU); ptxas 13 compiles
// for sm_75 and newer, and still checks the features against an older .target.
std::string archOf(const std::string& text) {
  size_t t = text.find(".target");
  if (t == std::string::npos) return "sm_80";
  size_t s = text.find("sm_", t);
  if (s == std::string::npos || s > text.find('\n', t)) return "sm_80";
  size_t e = s + 3;
  while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])))) ++e;
  std::string arch = text.substr(s, e - s);
  if (std::atoi(arch.c_str() + 3) < 75) return "sm_75";
  return arch;
}

struct PtxasVerdict {
  bool accepted = false;
  uint32_t firstErrorLine = 0;  // of the first error (0: none or only a fatal one)
  std::string log;
};

PtxasVerdict runPtxas(const std::filesystem::path& path, const std::string& arch) {
  std::string cmd =
      std::string("'") + PTX_FRONT_PTXAS + "' -arch=" + arch + " '" + path.string() + "' -o /dev/null 2>&1";
  PtxasVerdict v;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return v;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) v.log.append(buf, n);
  int rc = ::pclose(pipe);
  v.accepted = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  // The first "ptxas FILE, line N; error : ..." (fatal errors such as a missing .version name no useful line).
  size_t err = v.log.find("; error");
  size_t at = err == std::string::npos ? err : v.log.rfind(", line ", err);
  if (at != std::string::npos) v.firstErrorLine = static_cast<uint32_t>(std::atoi(v.log.c_str() + at + 7));
  return v;
}

bool ptxasAccepts(const std::filesystem::path& path, const std::string& arch) { return runPtxas(path, arch).accepted; }

bool havePtxas() {
  std::string p = PTX_FRONT_PTXAS;
  return !p.empty() && std::filesystem::exists(p);
}

std::vector<std::filesystem::path> files(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".ptx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Every case is run through ptxas (several at once: most of the time is process start-up) and the front end. The
// directory says what ptxas does (valid/ accepted, invalid/ rejected); we must agree, and for a rejected module our
// first error must be on the line of ptxas's first error.
TEST(PtxasAgreement, ValidAndInvalidCases) {
  if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
  std::string base = PTX_FRONT_AGREEMENT_DIR;
  struct Case {
    std::filesystem::path path;
    bool valid;
    std::string text;
    std::future<PtxasVerdict> theirs;
  };
  std::vector<Case> cases;
  for (bool valid : {true, false})
    for (const auto& path : files(base + (valid ? "/valid" : "/invalid")))
      cases.push_back({path, valid, readFile(path), {}});
  const size_t parallel = std::max(2u, std::thread::hardware_concurrency() * 2);
  for (size_t first = 0; first < cases.size(); first += parallel) {
    size_t last = std::min(cases.size(), first + parallel);
    for (size_t i = first; i < last; ++i)
      cases[i].theirs = std::async(std::launch::async, runPtxas, cases[i].path, archOf(cases[i].text));
    for (size_t i = first; i < last; ++i) {
      Case& c = cases[i];
      SCOPED_TRACE(c.path.string());
      PtxasVerdict theirs = c.theirs.get();
      Verdict mine = ours(c.text);
      EXPECT_EQ(theirs.accepted, c.valid) << "the case is in the wrong directory; ptxas says:\n" << theirs.log;
      EXPECT_EQ(mine.accepted, theirs.accepted)
          << (mine.accepted ? "we accept, ptxas rejects:\n" + theirs.log : "we reject, ptxas accepts:\n" + mine.log);
      if (!mine.accepted && !theirs.accepted && theirs.firstErrorLine != 0) {
        EXPECT_EQ(mine.firstErrorLine, theirs.firstErrorLine) << "ours:\n" << mine.log << "ptxas:\n" << theirs.log;
      }
    }
  }
  EXPECT_GE(cases.size(), 200u);
}

// What the printer writes is PTX that ptxas accepts too (not only our own parser).
TEST(PtxasAgreement, PrintedModulesAreAcceptedByPtxas) {
  if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
  std::vector<std::filesystem::path> inputs = files(std::string(PTX_FRONT_AGREEMENT_DIR) + "/valid");
  auto dir = std::filesystem::temp_directory_path() / ("ptx_front_printed_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::filesystem::path, std::future<PtxasVerdict>>> runs;
  for (const auto& path : inputs) {
    SCOPED_TRACE(path.string());
    std::string text = readFile(path);
    ptx::Diagnostics diags;
    auto module = ptx::parseModule(text, diags);
    ASSERT_FALSE(diags.hasErrors()) << diags.format();
    auto printed = dir / path.filename();
    {
      std::ofstream out(printed, std::ios::binary);
      out << ptx::printModule(*module);
    }
    runs.emplace_back(path, std::async(std::launch::async, runPtxas, printed, archOf(text)));
    if (runs.size() % 8 == 0)
      for (auto& r : runs)
        if (r.second.valid()) r.second.wait();
  }
  for (auto& [path, verdict] : runs) {
    SCOPED_TRACE(path.string());
    PtxasVerdict v = verdict.get();
    EXPECT_TRUE(v.accepted) << v.log;
  }
  std::filesystem::remove_all(dir);
}

TEST(PtxasAgreement, CorpusIsAcceptedByBoth) {
  if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
  bool full = std::getenv("CUEMU_PTXAS_FULL") != nullptr;
  for (const auto& path : files(PTX_FRONT_CORPUS_DIR)) {
    if (!full && std::filesystem::file_size(path) > 80 * 1024) continue;  // keep the default run short
    SCOPED_TRACE(path.string());
    std::string text = readFile(path);
    EXPECT_TRUE(weAccept(text));
    EXPECT_TRUE(ptxasAccepts(path, archOf(text)));
  }
}

}  // namespace
