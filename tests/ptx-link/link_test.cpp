// The PTX linker. Inputs in data/ were produced by `nvcc -rdc=true -ptx -arch=compute_75 [-G|-lineinfo]` from
// a.cu (a kernel calling an external device function and variable) and b.cu (their definitions).
#include "ptx/link.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

ptx::link::Input input(const std::string& file) {
  std::ifstream f(std::string(CUEMU_LINK_DATA) + "/" + file);
  std::stringstream s;
  s << f.rdbuf();
  return {file, s.str()};
}

// ptxas, the oracle for what a valid module is, must accept the linked result (skipped without ptxas).
void expectPtxasAccepts(const std::string& ptx) {
  std::string ptxas = CUEMU_PTXAS;
  if (ptxas.empty() || ptxas.find("NOTFOUND") != std::string::npos) return;
  std::string path = testing::TempDir() + "/cuemu-linked-" + std::to_string(getpid()) + ".ptx";
  std::ofstream(path) << ptx;
  std::string command = ptxas + " -arch=sm_75 " + path + " -o /dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << "ptxas rejected:\n" << ptx;
  std::remove(path.c_str());
}

TEST(PtxLink, ResolvesExternalsAndRenamesClashingLocals) {
  for (std::string variant : {"", "-G", "-lineinfo"}) {
    auto r = ptx::link::linkModules({input("a" + variant + ".ptx"), input("b" + variant + ".ptx")});
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_EQ(r.ptx.find(".extern .func  (.param .b32 func_retval0) _Z6helperi"), std::string::npos);
    EXPECT_EQ(r.ptx.find(".extern .global .align 4 .u32 shared_counter"), std::string::npos);
    EXPECT_NE(r.ptx.find("__cuemu_link0_$str"), std::string::npos);  // both modules had a local $str
    EXPECT_NE(r.ptx.find("__cuemu_link1_$str"), std::string::npos);
    EXPECT_EQ(r.ptx.find("vprintf", r.ptx.find("vprintf") + 1) != std::string::npos, true);
    expectPtxasAccepts(r.ptx);
  }
}

TEST(PtxLink, OrderOfInputsDoesNotMatter) {
  auto r = ptx::link::linkModules({input("b.ptx"), input("a.ptx")});
  ASSERT_TRUE(r.ok) << r.log;
  expectPtxasAccepts(r.ptx);
}

TEST(PtxLink, ReportsUndefinedReferences) {
  auto r = ptx::link::linkModules({input("a.ptx")});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("Undefined reference to '_Z6helperi'"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Undefined reference to 'shared_counter'"), std::string::npos) << r.log;
  EXPECT_EQ(r.undefinedFunctions, std::vector<std::string>{"_Z6helperi"});
}

// An undefined function alone does not fail the link (driver 580): the output declares it, the log names it.
TEST(PtxLink, UndefinedFunctionAloneLinks) {
  const char* caller =
      ".version 7.0\n.target sm_52\n.address_size 64\n"
      ".extern .func (.param .b32 r) missing(.param .b32 x);\n"
      ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1;\n"
      "\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n"
      "\tcall.uni (r), missing, (a);\n\t}\n\tret;\n}\n";
  auto r = ptx::link::linkModules({{"caller.ptx", caller}});
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.undefinedFunctions, std::vector<std::string>{"missing"});
  EXPECT_NE(r.log.find("Undefined reference to 'missing'"), std::string::npos) << r.log;
  EXPECT_NE(r.ptx.find(".extern .func (.param .b32 r) missing"), std::string::npos) << r.ptx;
}

// Dynamic shared memory (.extern .shared) is no reference to resolve; each name is declared once.
TEST(PtxLink, ExternSharedIsDynamicSharedMemory) {
  const char* a =
      ".version 7.0\n.target sm_52\n.address_size 64\n.extern .shared .align 16 .b8 tile[];\n"
      ".visible .entry ka()\n{\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, tile;\n\tret;\n}\n";
  const char* b =
      ".version 7.0\n.target sm_52\n.address_size 64\n.extern .shared .align 16 .b8 tile[];\n"
      ".visible .entry kb()\n{\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, tile;\n\tret;\n}\n";
  auto r = ptx::link::linkModules({{"a.ptx", a}, {"b.ptx", b}});
  ASSERT_TRUE(r.ok) << r.log;
  auto first = r.ptx.find(".extern .shared");
  ASSERT_NE(first, std::string::npos) << r.ptx;
  EXPECT_EQ(r.ptx.find(".extern .shared", first + 1), std::string::npos) << r.ptx;
}

TEST(PtxLink, ReportsMultipleDefinitions) {
  auto r = ptx::link::linkModules({input("a.ptx"), input("b.ptx"), input("b.ptx")});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("Multiple definition of '_Z6helperi'"), std::string::npos) << r.log;
}

TEST(PtxLink, StrongDefinitionOverridesWeak) {
  const char* header = ".version 7.0\n.target sm_75\n.address_size 64\n";
  ptx::link::Input weak{
      "weak.ptx", std::string(header) +
                      ".weak .func (.param .b32 r) f() { .reg .b32 %a; mov.u32 %a, 1; st.param.b32 [r], %a; ret; }\n"
                      ".visible .entry k(.param .u64 p) { .reg .b32 %x; .reg .b64 %q;\n"
                      "{ .param .b32 rv; call (rv), f, (); ld.param.b32 %x, [rv]; }\n"
                      "ld.param.u64 %q, [p]; st.global.u32 [%q], %x; ret; }\n"};
  ptx::link::Input strong{
      "strong.ptx",
      std::string(header) +
          ".visible .func (.param .b32 r) f() { .reg .b32 %a; mov.u32 %a, 2; st.param.b32 [r], %a; ret; }\n"};
  auto r = ptx::link::linkModules({weak, strong});
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.ptx.find("mov.u32 %a, 1"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find("mov.u32 %a, 2"), std::string::npos) << r.ptx;
  expectPtxasAccepts(r.ptx);
}

TEST(PtxLink, EmptyInputIsAnError) {
  auto r = ptx::link::linkModules({});
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.log.empty());
}

}  // namespace

namespace {

// numba's this_grid().sync(): the device runtime's grid functions, declared and called, defined by nobody.
const char* kGridSyncCaller =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".extern .func (.param .b64 h) cudaCGGetIntrinsicHandle(.param .b32 s);\n"
    ".extern .func (.param .b32 st) cudaCGSynchronize(.param .b64 h, .param .b32 f);\n"
    ".visible .entry k()\n{\n\t.reg .b64 %rd<2>;\n"
    "\t{\n\t.param .b32 s;\n\t.param .b64 h;\n\tst.param.b32 [s], 1;\n"
    "\tcall.uni (h), cudaCGGetIntrinsicHandle, (s);\n\tld.param.b64 %rd1, [h];\n\t}\n"
    "\t{\n\t.param .b64 h2;\n\t.param .b32 f;\n\t.param .b32 st;\n\tst.param.b64 [h2], %rd1;\n"
    "\tst.param.b32 [f], 0;\n\tcall.uni (st), cudaCGSynchronize, (h2, f);\n\t}\n\tret;\n}\n";

}  // namespace

// cuemu provides them (libcudadevrt's PTX exists only for compute_121): the link defines both.
TEST(PtxLink, GridSyncFunctionsOfTheDeviceRuntimeAreProvided) {
  auto r = ptx::link::linkModules({{"grid.ptx", kGridSyncCaller}});
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_TRUE(r.undefinedFunctions.empty()) << r.log;
  EXPECT_NE(r.ptx.find(".visible .func (.param .b32 status) cudaCGSynchronize("), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find(".visible .func (.param .b64 handle) cudaCGGetIntrinsicHandle("), std::string::npos) << r.ptx;
}

// A module that brings its own definition keeps it.
TEST(PtxLink, OwnGridSyncDefinitionIsKept) {
  const char* own =
      ".version 7.0\n.target sm_70\n.address_size 64\n"
      ".visible .func (.param .b32 st) cudaCGSynchronize(.param .b64 h, .param .b32 f)\n{\n"
      "\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 7;\n\tst.param.b32 [st], %r1;\n\tret;\n}\n";
  auto r = ptx::link::linkModules({{"own.ptx", own}});
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.ptx.find("cudaCGGetIntrinsicHandle"), std::string::npos) << r.ptx;
}
