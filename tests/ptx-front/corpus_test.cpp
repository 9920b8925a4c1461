// Every corpus file parses, checks and round-trips (parse -> print -> parse gives an equal module), and lazy
// loading's front end (entry bodies kept as text, parsed again) gives the same module and log.
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

// Lazy loading's front end (parseAndCheck keeping every entry body as text) gives the log the whole-tree path
// gives; with every kept body parsed again (parseEntryBody), the module is the one the whole-tree path gives.
void checkKeptBodies(const std::string& text, const std::string& fileName) {
  ptx::FrontEndResult whole = ptx::parseAndCheck(text, fileName);
  ptx::KeptBodies kept;
  ptx::FrontEndResult lazy = ptx::parseAndCheck(
      text, fileName, {}, [](const ptx::Module&, uint32_t) { return true; }, kept);
  EXPECT_EQ(lazy.log, whole.log);
  ASSERT_EQ(lazy.ok, whole.ok);
  if (!whole.ok) {
    EXPECT_TRUE(kept.bodies.empty());
    return;
  }
  size_t entries = 0;
  for (const ptx::Function& f : whole.module->functions) entries += f.isEntry && f.hasBody;
  EXPECT_EQ(kept.bodies.size(), entries);
  for (const auto& [function, place] : kept.bodies) {
    const ptx::Function& f = lazy.module->functions[function];
    EXPECT_TRUE(f.instructions.empty() && f.operands.empty() && f.scopes.empty()) << lazy.module->str(f.name);
    ptx::Diagnostics diags(fileName);
    EXPECT_TRUE(ptx::parseEntryBody(*lazy.module, function, kept.text, place, kept.names, diags)) << diags.format();
  }
  EXPECT_EQ(ptx::diffModules(*whole.module, *lazy.module), "");
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
    checkKeptBodies(text, path.string());
  }
}

// A kept body parsed again resolves names as they resolved where it stands: `L` is a label there (the variable L
// comes after it), `later` the declaration before it (the definition comes after it), and .loc entries are its own.
TEST(PtxKeptBodies, NamesResolveAsWhereTheBodyStands) {
  checkKeptBodies(R"(.version 8.0
.target sm_80
.address_size 64
.file 1 "a.cu"
.func (.param .b32 r) later(.param .b32 x);
.visible .entry first(.param .u64 p)
{
  .reg .b32 %r<3>;
  .reg .pred %q;
  .loc 1 10 3
  setp.eq.u32 %q, %r1, 0;
  @%q bra L;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  .loc 1 11 5
  call.uni (b), later, (a);
  ld.param.b32 %r2, [b];
  }
L:
  ret;
}
.global .u32 L;
.func (.param .b32 r) later(.param .b32 x)
{
  .reg .b32 %t;
  ld.param.b32 %t, [x];
  st.param.b32 [r], %t;
  ret;
}
.visible .entry second(.param .u64 p)
{
  .reg .u64 %rd;
  .reg .b32 %r;
  .loc 1 20 1
  mov.u64 %rd, L;
  ld.global.u32 %r, [%rd];
  ret;
}
)",
                  "names.ptx");
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
      checkKeptBodies(text, path.filename().string());
      if (!expectValid) {
        // Every rejection names a position: "file:line:col: error: ..."
        ASSERT_FALSE(diags.all().empty());
        EXPECT_NE(diags.format().find(path.filename().string() + ":"), std::string::npos);
      }
    }
  }
}

}  // namespace
