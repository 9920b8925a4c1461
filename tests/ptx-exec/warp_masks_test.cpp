// Warp collectives whose member masks overlap, leave out the executing thread or name lanes that have left, and
// named barriers whose warps give different thread counts: what an H100 does there, variant by variant
// (tools/gpu-probe/synccheck19.cu; tools/gpu-probe/results/synccheck19-h100-2026-11-27.txt holds each variant's
// outcome and the 32 values it wrote, which these tests read and compare with the interpreter's).
#include "harness.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

Arena& arena() {
  static Arena* a = new Arena();
  return *a;
}

// What the H100 recorded natively for each variant: the sync result and, when it succeeded, the 32 hex words.
struct Recorded {
  std::string sync;
  std::string values;
};
std::map<int, Recorded> recorded() {
  std::ifstream in(std::string(CUEMU_GPU_PROBE_RESULTS) + "/synccheck19-h100-2026-11-27.txt");
  std::map<int, Recorded> out;
  std::string line;
  bool native = false;
  int last = 0;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) native = line.rfind("## native", 0) == 0;
    if (!native) continue;
    if (line.rfind("variant ", 0) == 0) {
      last = std::stoi(line.substr(8));
      out[last].sync = line.substr(line.find("sync ") + 5);
    } else if (line.rfind("  ", 0) == 0 && last) {
      out[last].values = line.substr(2);
    }
  }
  return out;
}

// The probe's kernels, as nvcc 13 compiles them (the variants that this file checks).
const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry counts(.param .u64 out, .param .u32 variant)
{
	.reg .pred %p<3>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [variant];
	mov.u32 %r2, %tid.x;
	shr.u32 %r3, %r2, 5;
	setp.eq.s32 %p1, %r3, 0;
	setp.eq.s32 %p2, %r1, 1;
	@%p2 bra V1;
	// variant 3: 64 threads, warp 0 says 96, warp 1 says 64
	@%p1 bra W96;
	bar.sync 1, 64;
	bra DONE;
W96:
	bar.sync 1, 96;
	bra DONE;
V1:	// variant 1: 128 threads, warp 0 says 64, warps 1-3 say 128
	@%p1 bra W64;
	bar.sync 1, 128;
	bra DONE;
W64:
	bar.sync 1, 64;
DONE:
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}
.visible .entry masks(.param .u64 out, .param .u32 variant)
{
	.reg .pred %p<8>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [variant];
	mov.u32 %r2, %tid.x;
	and.b32 %r3, %r2, 31;
	add.s32 %r4, %r3, 100;
	mov.u32 %r5, 0;
	setp.lt.u32 %p1, %r3, 16;
	selp.b32 %r6, -1, -65536, %p1;
	setp.ne.s32 %p2, %r1, 7;
	@%p2 bra NOT7;
	shfl.sync.idx.b32 %r5|%p3, %r4, 20, 31, %r6;
NOT7:
	setp.ne.s32 %p2, %r1, 8;
	@%p2 bra NOT8;
	rem.u32 %r7, %r3, 3;
	setp.eq.u32 %p4, %r7, 0;
	vote.sync.ballot.b32 %r5, %p4, 65535;
NOT8:
	setp.ne.s32 %p2, %r1, 9;
	@%p2 bra NOT9;
	redux.sync.add.s32 %r5, %r4, %r6;
NOT9:
	setp.ne.s32 %p2, %r1, 11;
	@%p2 bra STORE;
	setp.lt.u32 %p5, %r3, 8;
	@%p5 bra END;
	shfl.sync.idx.b32 %r5|%p6, %r4, 2, 31, -1;
STORE:
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r5;
END:
	ret;
}
)";

// Runs variant `variant` of kernel `name` with `threads` threads; returns "cudaSuccess" or the fault's CUDA name,
// and the 32 words written (hex, as the probe prints them; 0xffffffff where nothing was written).
std::pair<std::string, std::string> run(const Program& program, const std::string& name, uint32_t variant,
                                        uint32_t threads) {
  auto* out = arena().alloc<uint32_t>(128);
  for (int i = 0; i < 128; ++i) out[i] = 0xffffffffu;
  int kernel = findKernel(program, name);
  EXPECT_GE(kernel, 0);
  Params p(kernels(program)[size_t(kernel)]);
  p.arg(out).arg(variant);
  LaunchParams lp = ptxtest::launchParams(Dim3{1}, Dim3{threads}, p, arena());
  LaunchResult r = launch(program, kernel, lp);
  std::string sync = r.ok()                                          ? "cudaSuccess"
                     : r.fault.kind == FaultKind::IllegalInstruction ? "cudaErrorIllegalInstruction"
                                                                     : "fault: " + r.fault.message;
  std::ostringstream values;
  for (int i = 0; i < 32; ++i) values << (i ? " " : "") << std::hex << out[i];
  return {sync, values.str()};
}

}  // namespace

TEST(WarpMasks, CollectivesAndNamedBarrierCountsAsAnH100) {
  CompileResult cr = compile(kPtx);
  ASSERT_TRUE(cr.program) << cr.error;
  const auto gpu = recorded();
  ASSERT_EQ(gpu.size(), 11u) << "the H100 results file (variant 2 hung there: no line)";
  struct Case {
    int variant;
    const char* kernel;
    uint32_t threads;
    const char* what;
  };
  const Case cases[] = {
      {1, "counts", 128, "warp 0 gives bar.sync 1 a count of 64, warps 1-3 128: an illegal instruction"},
      {3, "counts", 64, "warp 0 gives 96, warp 1 64: an illegal instruction"},
      {7, "masks", 32, "shfl where lanes 0-15 name all lanes and 16-31 themselves: lane 20 is not 0-15's to read"},
      {8, "masks", 32, "a ballot by lanes outside its 0xffff mask: an illegal instruction"},
      {9, "masks", 32, "redux.sync.add with overlapping masks: lanes 0-15 add only their own"},
      {11, "masks", 32, "lanes 0-7 branch to the kernel's ret, so they have exited: shfl from lane 2 reads 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto [sync, values] = run(*cr.program, c.kernel, uint32_t(c.variant), c.threads);
    const Recorded& h100 = gpu.at(c.variant);
    EXPECT_EQ(sync, h100.sync) << "variant " << c.variant;
    if (h100.sync == "cudaSuccess") {
      EXPECT_EQ(values, h100.values) << "variant " << c.variant;
    }
  }
}
