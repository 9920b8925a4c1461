// Parser unit tests: the IR that nvcc-style PTX produces.
#include "ptx/parse.h"

#include "ptx/check.h"
#include "ptx/print.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_one.h"

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Parsed {
  ptx::Diagnostics diags{"test.ptx"};
  std::unique_ptr<ptx::Module> module;
};

std::unique_ptr<Parsed> parse(std::string_view text) {
  auto p = std::make_unique<Parsed>();
  ptx::ParseOptions opt;
  opt.fileName = "test.ptx";
  p->module = ptx::parseModule(text, p->diags, opt);
  return p;
}

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

TEST(PtxParse, VectorAddKernel) {
  std::string src = std::string(kHeader) + R"(
.visible .entry vadd(
	.param .u64 vadd_param_0,
	.param .u64 vadd_param_1,
	.param .u32 vadd_param_2
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [vadd_param_0];
	ld.param.u64 	%rd2, [vadd_param_1];
	ld.param.u32 	%r2, [vadd_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd3, %rd5;
	ld.global.f32 	%f1, [%rd6+-4];
	add.f32 	%f2, %f1, 0f3F800000;
	st.global.f32 	[%rd6], %f2;
$L__BB0_2:
	ret;
}
)";
  auto p = parse(src);
  ASSERT_FALSE(p->diags.hasErrors()) << p->diags.format();
  const ptx::Module& m = *p->module;
  EXPECT_EQ(m.versionMajor, 9u);
  EXPECT_EQ(m.versionMinor, 0u);
  ASSERT_EQ(m.targets.size(), 1u);
  EXPECT_EQ(m.targets[0].smVersion, 80u);
  ASSERT_EQ(m.functions.size(), 1u);
  const ptx::Function& f = m.functions[0];
  EXPECT_TRUE(f.isEntry);
  EXPECT_EQ(f.linkage, ptx::Linkage::visible);
  EXPECT_EQ(m.str(f.name), "vadd");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[2].type, ptx::Type::u32);
  EXPECT_EQ(f.maxntid[0], 256u);
  EXPECT_EQ(f.numMaxntid, 3);
  EXPECT_EQ(f.registers.size(), 2u + 4 + 6 + 8);
  ASSERT_EQ(f.instructions.size(), 16u);

  const ptx::Instruction& ld = f.instructions[0];
  EXPECT_EQ(ld.opcode, ptx::Opcode::Ld);
  EXPECT_EQ(ld.space, ptx::Space::param);
  EXPECT_EQ(ld.type(), ptx::Type::u64);
  ASSERT_EQ(ld.numOperands, 2);
  const ptx::Operand* o = f.operandsOf(ld);
  EXPECT_EQ(o[0].kind, ptx::OperandKind::Reg);
  EXPECT_EQ(o[1].kind, ptx::OperandKind::Address);
  EXPECT_EQ(o[1].symKind, ptx::SymKind::Param);
  EXPECT_EQ(o[1].index, 0u);

  const ptx::Instruction& mov = f.instructions[3];
  const ptx::Operand* mo = f.operandsOf(mov);
  EXPECT_EQ(mo[1].kind, ptx::OperandKind::Special);
  EXPECT_EQ(static_cast<ptx::SpecialReg>(mo[1].index), ptx::SpecialReg::ctaid);
  EXPECT_EQ(ptx::selComponent(mo[1].sel), 0u);

  EXPECT_EQ(f.instructions[6].mulMode, ptx::MulMode::lo);
  EXPECT_EQ(f.instructions[7].opcode, ptx::Opcode::Setp);
  EXPECT_EQ(f.instructions[7].cmp, ptx::CmpOp::ge);

  const ptx::Instruction& bra = f.instructions[8];
  EXPECT_EQ(bra.opcode, ptx::Opcode::Bra);
  EXPECT_NE(bra.guard, ptx::kNoIndex);
  const ptx::Operand& target = f.operandsOf(bra)[0];
  ASSERT_EQ(target.kind, ptx::OperandKind::Label);
  EXPECT_EQ(f.labels[target.index].target, 15u);

  const ptx::Instruction& cvta = f.instructions[9];
  EXPECT_EQ(cvta.opcode, ptx::Opcode::Cvta);
  EXPECT_TRUE(cvta.has(ptx::Flag::to));
  EXPECT_EQ(cvta.space, ptx::Space::global);
  EXPECT_EQ(f.instructions[10].mulMode, ptx::MulMode::wide);

  const ptx::Operand* lo = f.operandsOf(f.instructions[12]);
  EXPECT_EQ(lo[1].kind, ptx::OperandKind::Address);
  EXPECT_EQ(lo[1].value, -4);
  const ptx::Operand* ao = f.operandsOf(f.instructions[13]);
  EXPECT_EQ(ao[2].kind, ptx::OperandKind::FImm);
  EXPECT_EQ(ao[2].immBits, 32);
  EXPECT_EQ(ao[2].value, 0x3F800000);
  EXPECT_EQ(f.instructions[15].opcode, ptx::Opcode::Ret);
  EXPECT_EQ(f.instructions[15].loc.line, 33u);
}

TEST(PtxParse, GlobalsAndInitializers) {
  std::string src = std::string(kHeader) + R"(
.global .align 4 .u32 gcount;
.const .align 4 .b8 cvals[64] = {0, 0, 128, 63, 0, 0, 0, 64};
.global .align 8 .u64 gptr = generic(gcount);
.global .align 8 .u64 tbl[2] = {gcount, gcount+4};
.global .align 4 .f32 fl[2] = {0f3F800000, 2.0};
.global .align 2 .u16 un[] = {1, 2, 3};
.shared .align 16 .b8 smem[1024];
)";
  auto p = parse(src);
  ASSERT_FALSE(p->diags.hasErrors()) << p->diags.format();
  const ptx::Module& m = *p->module;
  ASSERT_EQ(m.globals.size(), 7u);
  EXPECT_EQ(m.globals[0].space, ptx::Space::global);
  EXPECT_EQ(m.globals[0].align, 4u);
  EXPECT_EQ(m.globals[0].size, 4u);
  const ptx::Variable& c = m.globals[1];
  EXPECT_EQ(c.space, ptx::Space::const_);
  EXPECT_EQ(c.size, 64u);
  ASSERT_EQ(c.init.size(), 64u);
  EXPECT_EQ(c.init[2], 128);
  EXPECT_EQ(c.init[3], 63);
  EXPECT_EQ(c.init[7], 64);
  EXPECT_EQ(c.init[8], 0);
  const ptx::Variable& g = m.globals[2];
  ASSERT_EQ(g.relocs.size(), 1u);
  EXPECT_TRUE(g.relocs[0].generic);
  EXPECT_EQ(g.relocs[0].index, 0u);
  const ptx::Variable& t = m.globals[3];
  ASSERT_EQ(t.relocs.size(), 2u);
  EXPECT_EQ(t.relocs[1].offset, 8u);
  EXPECT_EQ(t.relocs[1].addend, 4);
  const ptx::Variable& fl = m.globals[4];
  EXPECT_EQ(fl.init[3], 0x3f);
  EXPECT_EQ(fl.init[7], 0x40);  // 2.0f = 0x40000000
  const ptx::Variable& un = m.globals[5];
  EXPECT_EQ(un.dims[0], 3u);
  EXPECT_EQ(un.size, 6u);
  EXPECT_EQ(un.init[4], 3);
  EXPECT_EQ(m.globals[6].space, ptx::Space::shared);
}

TEST(PtxParse, CallSequenceSharedAtomicsShuffle) {
  std::string src = std::string(kHeader) + R"(
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[3] = {104, 105};
.visible .entry k()
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<5>;
	.shared .align 4 .b8 sdata[1024];
	mov.u64 	%rd1, $str;
	cvta.global.u64 	%rd2, %rd1;
	mov.u32 %r1, sdata;
	st.shared.u32 [%r1+8], %r2;
	bar.sync 	0;
	atom.shared.add.u32 	%r3, [%r1], 1;
	atom.global.cas.b32 	%r4, [%rd2], %r3, %r5;
	red.relaxed.gpu.global.add.f32 [%rd2], 0f3F800000;
	shfl.sync.down.b32 	%r6|%p1, %r3, 1, 31, -1;
	vote.sync.ballot.b32 %r7, %p1, -1;
	selp.b32 %r8, 1, 0, !%p1;
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0),
	vprintf,
	(
	param0,
	param1
	);
	ld.param.b32 	%r9, [retval0+0];
	} // callseq 0
	membar.gl;
	fence.acq_rel.gpu;
	ret;
}
)";
  auto p = parse(src);
  ASSERT_FALSE(p->diags.hasErrors()) << p->diags.format();
  const ptx::Module& m = *p->module;
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_FALSE(m.functions[0].hasBody);
  const ptx::Function& f = m.functions[1];
  ASSERT_EQ(f.instructions.size(), 18u);
  const ptx::Operand* mo = f.operandsOf(f.instructions[0]);
  EXPECT_EQ(mo[1].kind, ptx::OperandKind::Symbol);
  EXPECT_EQ(mo[1].symKind, ptx::SymKind::Global);
  const ptx::Operand* so = f.operandsOf(f.instructions[2]);
  EXPECT_EQ(so[1].symKind, ptx::SymKind::Local);
  EXPECT_EQ(f.instructions[4].opcode, ptx::Opcode::BarSync);
  const ptx::Instruction& atom = f.instructions[5];
  EXPECT_EQ(atom.opcode, ptx::Opcode::Atom);
  EXPECT_EQ(atom.redOp, ptx::RedOp::add);
  EXPECT_EQ(atom.space, ptx::Space::shared);
  EXPECT_EQ(f.instructions[6].redOp, ptx::RedOp::cas);
  const ptx::Instruction& red = f.instructions[7];
  EXPECT_EQ(red.opcode, ptx::Opcode::Red);
  EXPECT_EQ(red.sem, ptx::Sem::relaxed);
  EXPECT_EQ(red.scope, ptx::Scope::gpu);
  const ptx::Instruction& shfl = f.instructions[8];
  EXPECT_EQ(shfl.opcode, ptx::Opcode::ShflSync);
  EXPECT_EQ(shfl.shfl, ptx::ShflMode::down);
  EXPECT_EQ(f.operandsOf(shfl)[0].kind, ptx::OperandKind::RegPair);
  EXPECT_EQ(f.operandsOf(shfl)[4].value, -1);
  EXPECT_EQ(f.instructions[9].opcode, ptx::Opcode::VoteSync);
  EXPECT_EQ(f.instructions[9].vote, ptx::VoteMode::ballot);
  EXPECT_TRUE(f.operandsOf(f.instructions[10])[3].negated());
  const ptx::Instruction& call = f.instructions[13];
  EXPECT_EQ(call.opcode, ptx::Opcode::Call);
  EXPECT_TRUE(call.has(ptx::Flag::uni));
  ASSERT_EQ(call.numOperands, 3);
  const ptx::Operand* co = f.operandsOf(call);
  EXPECT_EQ(co[0].kind, ptx::OperandKind::List);
  EXPECT_EQ(co[0].value, 1);
  EXPECT_EQ(co[1].kind, ptx::OperandKind::Symbol);
  EXPECT_EQ(co[1].symKind, ptx::SymKind::Function);
  EXPECT_EQ(co[1].index, 0u);
  EXPECT_EQ(co[2].value, 2);
  const ptx::Operand& arg1 = f.elems[co[2].index + 1];
  EXPECT_EQ(arg1.kind, ptx::OperandKind::Symbol);
  EXPECT_EQ(arg1.symKind, ptx::SymKind::Local);
  EXPECT_EQ(ptx::Scope::gpu, f.instructions[15].scope);  // membar.gl
  EXPECT_EQ(f.instructions[16].sem, ptx::Sem::acq_rel);
  EXPECT_EQ(f.scopes.size(), 2u);
  EXPECT_EQ(f.scopes[1].begin, 11u);
  EXPECT_EQ(f.scopes[1].end, 15u);
}

TEST(PtxParse, NvccBasicKernelsFile) {
  std::string text = readFile(std::string(PTX_FRONT_CORPUS_DIR) + "/basic.sm_80.O3.ptx");
  ASSERT_FALSE(text.empty());
  auto p = parse(text);
  ASSERT_FALSE(p->diags.hasErrors()) << p->diags.format();
  uint32_t k = p->module->findFunction("_Z10vector_addPKfS0_Pfi");
  ASSERT_NE(k, ptx::kNoIndex);
  const ptx::Function& f = p->module->functions[k];
  EXPECT_TRUE(f.isEntry);
  EXPECT_EQ(f.params.size(), 4u);
  EXPECT_GT(f.instructions.size(), 5u);
  EXPECT_EQ(f.instructions.back().opcode, ptx::Opcode::Ret);
  uint32_t c = p->module->findGlobal("c_coeffs");
  ASSERT_NE(c, ptx::kNoIndex);
  EXPECT_EQ(p->module->globals[c].space, ptx::Space::const_);
  EXPECT_EQ(p->module->globals[c].size, 64u);
}

TEST(PtxParse, ErrorsHaveFileLineColumn) {
  std::string src = std::string(kHeader) + ".visible .entry k()\n{\n\tfrob.u32 %r1;\n\tbra NOWHERE;\n}\n";
  auto p = parse(src);
  ASSERT_TRUE(p->diags.hasErrors());
  std::string log = p->diags.format();
  EXPECT_NE(log.find("test.ptx:6:2: error: unknown instruction 'frob'"), std::string::npos) << log;
  EXPECT_NE(log.find("test.ptx:7:6: error: undefined identifier 'NOWHERE'"), std::string::npos) << log;
}

// A scalar ld/ldu/st may write its data register as a vector of one (Triton's inline assembly does; ptxas takes
// it): the register itself. A .v2 still needs two elements, and other instructions keep their vectors.
TEST(PtxParse, ScalarLoadAndStoreTakeAVectorOfOne) {
  auto body = [](const std::string& lines) {
    return std::string(kHeader) +
           ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n"
           "\t.reg .pred %p<2>;\n\tld.param.u64 %rd1, [p];\n" +
           lines + "\tret;\n}\n";
  };
  auto ok = ptx::parseAndCheck(body("\tsetp.eq.u32 %p1, %r3, 0;\n\t@%p1 ld.global.b32 { %r1 }, [ %rd1 + 4 ];\n"
                                    "\tld.global.nc.b32 {%r2}, [%rd1];\n\tst.global.b32 [ %rd1 + 0 ], { %r1 };\n"),
                               "one.ptx");
  EXPECT_TRUE(ok.ok) << ok.log;
  ASSERT_NE(ok.module, nullptr);
  const ptx::Function& f = ok.module->functions[0];
  size_t scalars = 0;
  for (const ptx::Instruction& inst : f.instructions)
    if (inst.opcode == ptx::Opcode::Ld || inst.opcode == ptx::Opcode::St)
      scalars += f.operands[inst.firstOperand + (inst.opcode == ptx::Opcode::St ? 1 : 0)].kind == ptx::OperandKind::Reg;
  EXPECT_EQ(scalars, 4u) << "ld.param and the three braced forms read as scalar registers";
  auto v2 = ptx::parseAndCheck(body("\tld.global.v2.b32 { %r1 }, [%rd1];\n"), "v2.ptx");
  EXPECT_FALSE(v2.ok);
  EXPECT_NE(v2.log.find("needs a vector operand of 2 elements"), std::string::npos) << v2.log;
}

TEST(PtxParse, ParseAndCheckGivesModuleOrLog) {
  auto good = ptx::parseAndCheck(std::string(kHeader) + ".visible .entry k()\n{\n\tret;\n}\n", "good.ptx");
  EXPECT_TRUE(good.ok);
  ASSERT_NE(good.module, nullptr);
  EXPECT_EQ(good.log, "");
  auto bad = ptx::parseAndCheck(std::string(kHeader) +
                                    ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n"
                                    "\tadd.u32 %r1, %tid.x, 1;\n\tret;\n}\n",
                                "bad.ptx");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.module, nullptr);
  EXPECT_NE(bad.log.find("bad.ptx:7:2: error: special register %tid is not allowed"), std::string::npos) << bad.log;
}

// Loading for a device (CheckOptions::targetSm): a module whose every .target is newer than the device is refused,
// as driver 580's JIT does on an H100 (tools/gpu-probe/results/cc12-h100-*.txt).
TEST(PtxParse, TargetsNewerThanTheDeviceAreRefused) {
  auto load = [](const char* version, const char* target, unsigned sm) {
    ptx::CheckOptions options;
    options.targetSm = sm;
    return ptx::parseAndCheck(std::string(".version ") + version + "\n.target " + target +
                                  "\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n",
                              "t.ptx", options);
  };
  for (const char* target : {"sm_100", "sm_100a", "sm_100f", "sm_103", "sm_120", "sm_120a", "sm_121"}) {
    auto refused = load("9.0", target, 90);
    EXPECT_FALSE(refused.ok) << target;
    EXPECT_NE(refused.log.find("SM version specified by .target is higher than the device's (sm_90)"),
              std::string::npos)
        << refused.log;
    EXPECT_TRUE(load("9.0", target, 121).ok) << target;
  }
  for (const char* target : {"sm_89", "sm_90", "sm_90a", "sm_100f, sm_90"})
    EXPECT_TRUE(load("9.0", target, 90).ok) << target;
  EXPECT_TRUE(load("9.0", "sm_120", 0).ok);  // no device: the module's own target
}

// A PTX ISA newer than 9.0 is refused unless the driver says the PTX stands in for a loadable cubin.
TEST(PtxParse, NewerIsaOnlyWhenStandingInForACubin) {
  const std::string text = ".version 9.2\n.target sm_120\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  ptx::CheckOptions options;
  options.targetSm = 120;
  auto refused = ptx::parseAndCheck(text, "t.ptx", options);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.log.find("unsupported .version 9.2"), std::string::npos) << refused.log;
  options.acceptNewerIsa = true;
  EXPECT_TRUE(ptx::parseAndCheck(text, "t.ptx", options).ok);
}

// Kernel parameter space as ptxas of driver 580 limits it (tools/gpu-probe/results/reliability24-h100-2026-11-26.txt):
// 4352 bytes, 32764 from PTX 8.1 on sm_70 and later.
TEST(PtxParse, KernelParameterSpaceLimits) {
  auto kernel = [](const char* version, const char* target, unsigned bytes) {
    return fmt::format(
        ".version {}\n.target {}\n.address_size 64\n"
        ".visible .entry k(.param .align 4 .b8 p[{}])\n{{\n\tret;\n}}\n",
        version, target, bytes);
  };
  EXPECT_TRUE(ptx::parseAndCheck(kernel("7.0", "sm_50", 4352)).ok);
  auto old = ptx::parseAndCheck(kernel("7.0", "sm_50", 4356));
  EXPECT_FALSE(old.ok);
  EXPECT_NE(old.log.find("parameters larger than 4352 bytes need"), std::string::npos) << old.log;
  EXPECT_FALSE(ptx::parseAndCheck(kernel("8.0", "sm_90", 4356)).ok);
  EXPECT_FALSE(ptx::parseAndCheck(kernel("8.1", "sm_60", 4356)).ok);
  EXPECT_TRUE(ptx::parseAndCheck(kernel("8.1", "sm_70", 32764)).ok);
  auto over = ptx::parseAndCheck(kernel("8.1", "sm_90", 32768));
  EXPECT_FALSE(over.ok);
  EXPECT_NE(over.log.find("uses too much parameter space (0x8000 bytes, 0x7ffc max)"), std::string::npos) << over.log;
}

TEST(PtxParse, GarbageNeverCrashes) {
  const char* inputs[] = {"",
                          "{",
                          "}",
                          ".version",
                          ".version 9.0 .target",
                          "\"unterminated",
                          "/* open",
                          ".entry k( { { { [ [ (",
                          ".global .u8 x[99999999999999999999];",
                          ".global .u32 x[4] = {1,2,3,4,5};",
                          ".entry k() { add.s32 %r1, 1+(2*(3; }",
                          ".entry k() { .reg .b32 %r<4294967295>; }",
                          "\x01\x02\xff",
                          ".entry k() { @ }"};
  for (const char* in : inputs) {
    auto p = parse(in);
    EXPECT_TRUE(p->diags.hasErrors()) << in;
  }
}

// Inputs the fuzzer once failed on (fuzz/regressions/) replay in every build, with gcc too.
TEST(PtxParse, FuzzRegressionInputsBehave) {
  std::vector<std::filesystem::path> inputs;
  for (const auto& e : std::filesystem::directory_iterator(PTX_FRONT_FUZZ_REGRESSIONS_DIR))
    if (e.is_regular_file() && e.path().filename() != "README.md") inputs.push_back(e.path());
  std::sort(inputs.begin(), inputs.end());
  for (const auto& path : inputs) {
    SCOPED_TRACE(path.string());
    EXPECT_EQ(ptx_fuzz::runOne(readFile(path.string())), "");
  }
}

}  // namespace

// .blocksareclusters (nvcc 13's __block_size__) as ptxas 13.0 takes it: PTX 9.0, sm_90, an entry with .reqntid and
// .reqnctapercluster; printed back and compared by the round trip.
TEST(PtxParse, BlocksAreClustersDirective) {
  auto kernel = [](const char* version, const char* target, const char* directives) {
    return fmt::format(".version {}\n.target {}\n.address_size 64\n.visible .entry k()\n{}\n{{\n\tret;\n}}\n", version,
                       target, directives);
  };
  auto ok = ptx::parseAndCheck(kernel("9.0", "sm_90", ".blocksareclusters\n.reqntid 64, 1, 1\n.reqnctapercluster 2"));
  ASSERT_TRUE(ok.ok) << ok.log;
  EXPECT_TRUE(ok.module->functions[0].blocksareclusters);
  const std::string printed = ptx::printModule(*ok.module);
  EXPECT_NE(printed.find(".blocksareclusters"), std::string::npos) << printed;
  auto reparsed = ptx::parseAndCheck(printed);
  ASSERT_TRUE(reparsed.ok) << reparsed.log;
  EXPECT_TRUE(reparsed.module->functions[0].blocksareclusters);
  auto refused = [&](const char* version, const char* target, const char* directives, const char* message) {
    auto r = ptx::parseAndCheck(kernel(version, target, directives));
    EXPECT_FALSE(r.ok) << directives;
    EXPECT_NE(r.log.find(message), std::string::npos) << r.log;
  };
  refused("8.8", "sm_90", ".blocksareclusters .reqntid 64 .reqnctapercluster 2", "requires PTX ISA .version 9.0");
  refused("9.0", "sm_80", ".blocksareclusters .reqntid 64 .reqnctapercluster 2", "requires .target sm_90");
  refused("9.0", "sm_90", ".blocksareclusters .reqntid 64", ".reqntid and .reqnctapercluster directive(s) required");
  refused("9.0", "sm_90", ".blocksareclusters .reqnctapercluster 2",
          ".reqntid and .reqnctapercluster directive(s) required");
}
