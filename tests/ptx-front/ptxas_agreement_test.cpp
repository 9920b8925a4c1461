// Accept/reject agreement with NVIDIA's ptxas, the oracle: every agreement case and every small corpus file is
// run through both. Skipped when ptxas is not installed. CUEMU_PTXAS_FULL=1 also runs the large corpus files.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
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

bool weAccept(const std::string& text) {
    ptx::Diagnostics diags;
    auto module = ptx::parseModule(text, diags);
    return !diags.hasErrors() && ptx::checkModule(*module, diags);
}

// The architecture ptxas compiles for: the module's .target (ptxas -arch must name a real GPU).
std::string archOf(const std::string& text) {
    size_t t = text.find(".target");
    if (t == std::string::npos) return "sm_80";
    size_t s = text.find("sm_", t);
    if (s == std::string::npos || s > text.find('\n', t)) return "sm_80";
    size_t e = s + 3;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])))) ++e;
    return text.substr(s, e - s);
}

bool ptxasAccepts(const std::filesystem::path& path, const std::string& arch) {
    std::string cmd = std::string("'") + PTX_FRONT_PTXAS + "' -arch=" + arch + " '" + path.string() +
                      "' -o /dev/null >/dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

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

TEST(PtxasAgreement, ValidAndInvalidCases) {
    if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
    std::string base = PTX_FRONT_AGREEMENT_DIR;
    size_t n = 0;
    for (const char* sub : {"/valid", "/invalid"}) {
        for (const auto& path : files(base + sub)) {
            SCOPED_TRACE(path.string());
            std::string text = readFile(path);
            bool ours = weAccept(text);
            bool theirs = ptxasAccepts(path, archOf(text));
            EXPECT_EQ(ours, theirs) << (ours ? "we accept, ptxas rejects" : "we reject, ptxas accepts");
            ++n;
        }
    }
    EXPECT_GE(n, 40u);
}

// What the printer writes is PTX that ptxas accepts too (not only our own parser).
TEST(PtxasAgreement, PrintedModulesAreAcceptedByPtxas) {
    if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
    std::vector<std::filesystem::path> inputs = files(std::string(PTX_FRONT_AGREEMENT_DIR) + "/valid");
    auto tmp = std::filesystem::temp_directory_path() / ("ptx_front_printed_" + std::to_string(::getpid()) + ".ptx");
    for (const auto& path : inputs) {
        SCOPED_TRACE(path.string());
        std::string text = readFile(path);
        ptx::Diagnostics diags;
        auto module = ptx::parseModule(text, diags);
        ASSERT_FALSE(diags.hasErrors()) << diags.format();
        {
            std::ofstream out(tmp, std::ios::binary);
            out << ptx::printModule(*module);
        }
        EXPECT_TRUE(ptxasAccepts(tmp, archOf(text)));
    }
    std::filesystem::remove(tmp);
}

TEST(PtxasAgreement, CorpusIsAcceptedByBoth) {
    if (!havePtxas()) GTEST_SKIP() << "ptxas not found";
    bool full = std::getenv("CUEMU_PTXAS_FULL") != nullptr;
    for (const auto& path : files(PTX_FRONT_CORPUS_DIR)) {
        if (!full && std::filesystem::file_size(path) > 80 * 1024) continue;   // keep the default run short
        SCOPED_TRACE(path.string());
        std::string text = readFile(path);
        EXPECT_TRUE(weAccept(text));
        EXPECT_TRUE(ptxasAccepts(path, archOf(text)));
    }
}

}  // namespace
