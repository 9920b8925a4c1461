// Every corpus file parses, checks and round-trips (parse -> print -> parse gives an equal module).
// The checked-in corpus always runs; the corpus generated at build time (CUEMU_PTX_CORPUS=ON) runs when present.
#include <gtest/gtest.h>

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

std::vector<std::filesystem::path> ptxFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".ptx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void checkCorpus(const std::string& dir, size_t minFiles) {
  auto files = ptxFiles(dir);
  ASSERT_GE(files.size(), minFiles) << "corpus directory " << dir;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    std::string text = readFile(path);
    ptx::Diagnostics diags(path.string());
    ptx::ParseOptions opt;
    opt.fileName = path.string();
    auto module = ptx::parseModule(text, diags, opt);
    ASSERT_FALSE(diags.hasErrors()) << diags.format();
    ASSERT_TRUE(ptx::checkModule(*module, diags)) << diags.format();
    EXPECT_FALSE(module->functions.empty());
    std::string printed = ptx::printModule(*module);
    ptx::Diagnostics diags2("<printed " + path.filename().string() + ">");
    auto again = ptx::parseModule(printed, diags2);
    ASSERT_FALSE(diags2.hasErrors()) << diags2.format();
    EXPECT_EQ(ptx::diffModules(*module, *again), "");
    // Printing is a fixed point after one round.
    EXPECT_EQ(ptx::printModule(*again), printed);
  }
}

TEST(PtxCorpus, CheckedInCorpusParsesChecksAndRoundTrips) { checkCorpus(PTX_FRONT_CORPUS_DIR, 10); }

TEST(PtxCorpus, GeneratedCorpusParsesChecksAndRoundTrips) {
  std::string dir = PTX_FRONT_GENERATED_CORPUS_DIR;
  if (ptxFiles(dir).empty()) GTEST_SKIP() << "no generated corpus (configure with -DCUEMU_PTX_CORPUS=ON)";
  checkCorpus(dir, 1);
}

TEST(PtxCorpus, AgreementCasesMatchTheirExpectation) {
  std::string base = PTX_FRONT_AGREEMENT_DIR;
  auto valid = ptxFiles(base + "/valid");
  auto invalid = ptxFiles(base + "/invalid");
  ASSERT_GE(valid.size(), 10u);
  ASSERT_GE(invalid.size(), 30u);
  for (bool expectValid : {true, false}) {
    for (const auto& path : expectValid ? valid : invalid) {
      SCOPED_TRACE(path.string());
      std::string text = readFile(path);
      ptx::Diagnostics diags(path.filename().string());
      auto module = ptx::parseModule(text, diags);
      if (!diags.hasErrors()) ptx::checkModule(*module, diags);
      EXPECT_EQ(!diags.hasErrors(), expectValid) << diags.format();
      if (!expectValid) {
        // Every rejection names a position: "file:line:col: error: ..."
        ASSERT_FALSE(diags.all().empty());
        EXPECT_NE(diags.format().find(path.filename().string() + ":"), std::string::npos);
      }
    }
  }
}

}  // namespace
