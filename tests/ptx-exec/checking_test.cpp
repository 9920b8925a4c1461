// The checking ops (ptx/checker.h): compiled in only while setCheckedAccesses() is on, they report shared-memory
// hazards between warps, global accesses and barriers reached by part of a warp to the launch's Checker; faults
// name their access, and sourceLocation() maps PTX lines to the .loc source lines.
#include "harness.h"
#include "ptx/checker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <mutex>
#include <string>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

const char* kPtx = R"(.version 7.0
.target sm_70
.address_size 64
.file 1 "/src/dir/racy.cu"
.visible .entry racy(.param .u64 out, .param .u32 synced) {
  .shared .align 4 .b32 s[64];
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, s;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  .loc 1 7 3
  st.shared.u32 [%rd3], %r1;
  ld.param.u32 %r2, [synced];
  setp.ne.u32 %p, %r2, 0;
  @!%p bra NOSYNC;
  bar.sync 0;
NOSYNC:
  add.u32 %r3, %r1, 32;
  and.b32 %r3, %r3, 63;
  mul.wide.u32 %rd4, %r3, 4;
  add.u64 %rd5, %rd1, %rd4;
  .loc 1 9 5
  ld.shared.u32 %r4, [%rd5];
  ld.param.u64 %rd6, [out];
  add.u64 %rd7, %rd6, %rd2;
  st.global.u32 [%rd7], %r4;
  ret;
}
.visible .entry divergent(.param .u64 out) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  setp.ge.u32 %p, %r2, 16;
  @%p bra SKIP;
  bar.sync 0;
SKIP:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
.visible .entry shift(.param .u64 out, .param .u32 synced) {
  .shared .align 4 .b32 w[32];
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, w;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.shared.u32 [%rd3], %r1;
  ld.param.u32 %r2, [synced];
  setp.ne.u32 %p, %r2, 0;
  @!%p bra NOWARPSYNC;
  bar.warp.sync -1;
NOWARPSYNC:
  add.u32 %r3, %r1, 1;
  and.b32 %r3, %r3, 31;
  mul.wide.u32 %rd4, %r3, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.shared.u32 %r4, [%rd5];
  ld.param.u64 %rd6, [out];
  add.u64 %rd7, %rd6, %rd2;
  st.global.u32 [%rd7], %r4;
  ret;
}
.visible .entry interleaved(.param .u64 out, .param .u32 synced) {
  .shared .align 4 .b8 bytes[64];
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r2, %r2, 1;
  shr.u32 %r3, %r1, 5;
  add.u32 %r2, %r2, %r3;
  mov.u64 %rd1, bytes;
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd3, %rd1, %rd2;
  st.shared.u8 [%rd3], %r1;
  ld.param.u32 %r4, [synced];
  setp.ne.u32 %p, %r4, 0;
  @!%p bra NOBARRIER;
  bar.sync 0;
NOBARRIER:
  and.b32 %r5, %r1, 15;
  mul.wide.u32 %rd4, %r5, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.shared.u32 %r6, [%rd5];
  ld.param.u64 %rd6, [out];
  mul.wide.u32 %rd7, %r1, 4;
  add.u64 %rd7, %rd6, %rd7;
  st.global.u32 [%rd7], %r6;
  ret;
}
.visible .entry reads(.param .u64 in, .param .u64 out) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r2;
  ret;
}
.visible .entry halves(.param .u64 out, .param .u32 synced) {
  .shared .align 4 .b32 h[64];
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .pred %p, %q;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, h;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.shared.u32 [%rd3], %r1;
  add.u32 %r2, %r1, 100;
  st.shared.u32 [%rd3+128], %r2;
  ld.param.u32 %r3, [synced];
  setp.ne.u32 %p, %r3, 0;
  @%p bar.warp.sync -1;
  and.b32 %r4, %r1, 15;
  mul.wide.u32 %rd4, %r4, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.shared.u32 %r5, [%rd5];
  add.u64 %rd5, %rd5, 128;
  ld.shared.u32 %r6, [%rd5];
  bar.warp.sync -1;
  ld.shared.u32 %r8, [%rd5];
  @%p bar.warp.sync -1;
  setp.eq.u32 %q, %r1, 0;
  @%q st.shared.u32 [%rd1+128], %r1;
  add.u32 %r7, %r5, %r6;
  add.u32 %r7, %r7, %r8;
  ld.param.u64 %rd6, [out];
  add.u64 %rd7, %rd6, %rd2;
  st.global.u32 [%rd7], %r7;
  ret;
}
)";

uint32_t lineOf(const std::string& text) {
  std::string all = kPtx;
  size_t at = all.find(text);
  return uint32_t(std::count(all.begin(), all.begin() + std::ptrdiff_t(at), '\n') + 1);
}

// setCheckedAccesses for one test, then off again (the other tests compile without checks).
struct Checking {
  explicit Checking(uint32_t kinds) { setCheckedAccesses(kinds); }
  ~Checking() { setCheckedAccesses(0); }
};

struct Recorder : Checker {
  std::mutex mutex;
  std::vector<std::pair<HazardKind, uint32_t>> hazards;  // kind, earlier line
  std::vector<uint32_t> laterLines;
  std::vector<std::pair<HazardKind, uint32_t>> warpHazards;  // between lanes of one warp: kind, earlier line
  std::vector<std::pair<uint64_t, bool>> globals;            // address, write (stores and atomics)
  std::vector<uint32_t> barriers;                            // arrived masks
  void globalAccesses(const CheckSite&, uint32_t, uint32_t lanes, const uint64_t* addresses, uint32_t bytes,
                      GlobalAccess access) override {
    std::lock_guard lock(mutex);
    EXPECT_EQ(bytes, 4u);
    for (uint32_t m = lanes; m; m &= m - 1) globals.emplace_back(addresses[std::countr_zero(m)], writesMemory(access));
  }
  void sharedHazard(const CheckSite& site, HazardKind kind, uint32_t earlierLine, uint64_t, bool withinWarp) override {
    std::lock_guard lock(mutex);
    if (withinWarp) warpHazards.emplace_back(kind, earlierLine);
    if (withinWarp) return;
    hazards.emplace_back(kind, earlierLine);
    laterLines.push_back(site.ptxLine);
  }
  bool divergentBarrier(const CheckSite&, uint32_t, uint32_t arrived, uint32_t alive) override {
    std::lock_guard lock(mutex);
    EXPECT_EQ(alive, 0xffffffffu);
    barriers.push_back(arrived);
    return false;
  }
};

Arena& arena() {
  static Arena* a = new Arena(size_t(16) << 20);
  return *a;
}

std::shared_ptr<const Program> compiled() {
  auto r = compile(kPtx);
  if (!r.program) throw std::runtime_error(r.error);
  return r.program;
}

LaunchResult run(const Program& program, const char* name, Dim3 block, const Params& p, Checker* checker) {
  LaunchParams lp = ptxtest::launchParams(Dim3{1, 1, 1}, block, p, arena());
  lp.config = ExecConfig{1, true, 0, 0};
  lp.checker = checker;
  return launch(program, findKernel(program, name), lp);
}

TEST(CheckingTest, CodeCompiledWithoutChecksHasNoCheckingOps) {
  auto plain = compiled();
  size_t checked = 0;
  {
    Checking on(kCheckSharedHazards | kCheckGlobalAccesses | kCheckBarriers);
    checked = programStats(*compiled()).ops;
  }
  EXPECT_GT(checked, programStats(*plain).ops);
  // a checker given to plain code hears nothing
  Recorder recorder;
  uint32_t* out = arena().alloc<uint32_t>(64);
  const auto& info = kernels(*plain)[size_t(findKernel(*plain, "racy"))];
  EXPECT_TRUE(run(*plain, "racy", Dim3{64, 1, 1}, Params(info).arg(out).arg(0u), &recorder).ok());
  EXPECT_TRUE(recorder.hazards.empty());
}

TEST(CheckingTest, SharedHazardsBetweenWarpsWithoutABarrier) {
  Checking on(kCheckSharedHazards);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "racy"))];
  uint32_t* out = arena().alloc<uint32_t>(64);
  Recorder racy;
  ASSERT_TRUE(run(*program, "racy", Dim3{64, 1, 1}, Params(info).arg(out).arg(0u), &racy).ok());
  ASSERT_FALSE(racy.hazards.empty());
  uint32_t store = lineOf("st.shared.u32"), load = lineOf("ld.shared.u32");
  for (size_t i = 0; i < racy.hazards.size(); ++i) {
    // one warp runs to its end before the other starts (deterministic order): whichever order, the pair is the
    // store and the load
    std::pair<uint32_t, uint32_t> lines{racy.hazards[i].second, racy.laterLines[i]};
    EXPECT_TRUE(lines == std::make_pair(store, load) || lines == std::make_pair(load, store));
  }
  Recorder synced;
  ASSERT_TRUE(run(*program, "racy", Dim3{64, 1, 1}, Params(info).arg(out).arg(1u), &synced).ok());
  EXPECT_TRUE(synced.hazards.empty());
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(out[t], (t + 32) % 64);
  // one warp alone: its lanes read what no lane wrote, nothing to report
  Recorder oneWarp;
  ASSERT_TRUE(run(*program, "racy", Dim3{32, 1, 1}, Params(info).arg(out).arg(0u), &oneWarp).ok());
  EXPECT_TRUE(oneWarp.hazards.empty());
  EXPECT_TRUE(oneWarp.warpHazards.empty());
}

TEST(CheckingTest, SharedHazardsBetweenLanesOfAWarpWithoutSyncwarp) {
  Checking on(kCheckSharedHazards);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "shift"))];
  uint32_t* out = arena().alloc<uint32_t>(32);
  Recorder racy;
  ASSERT_TRUE(run(*program, "shift", Dim3{32, 1, 1}, Params(info).arg(out).arg(0u), &racy).ok());
  EXPECT_TRUE(racy.hazards.empty());  // no second warp
  ASSERT_FALSE(racy.warpHazards.empty());
  uint32_t store = lineOf(
      "st.shared.u32 [%rd3], %r1;\n  ld.param.u32 %r2, [synced];\n  setp.ne.u32 %p, %r2, 0;\n  @!%p bra NOWARPSYNC");
  for (auto [kind, earlier] : racy.warpHazards) {
    EXPECT_EQ(kind, HazardKind::ReadAfterWrite);
    EXPECT_EQ(earlier, store);
  }
  Recorder synced;
  ASSERT_TRUE(run(*program, "shift", Dim3{32, 1, 1}, Params(info).arg(out).arg(1u), &synced).ok());
  EXPECT_TRUE(synced.warpHazards.empty());
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], (t + 1) % 32);
}

// Byte stores of two warps interleaved in every word are no hazard (the shadow goes per byte for words accessed in
// part); a whole-word load of them with no barrier is.
TEST(CheckingTest, SharedHazardsOfBytesInterleavedInWords) {
  Checking on(kCheckSharedHazards);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "interleaved"))];
  uint32_t* out = arena().alloc<uint32_t>(64);
  Recorder synced;
  ASSERT_TRUE(run(*program, "interleaved", Dim3{64, 1, 1}, Params(info).arg(out).arg(1u), &synced).ok());
  EXPECT_TRUE(synced.hazards.empty());
  EXPECT_TRUE(synced.warpHazards.empty());
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t word = 0;
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t j = (t % 16) * 4 + k;  // byte j was stored by thread (j % 2) * 32 + j / 2
      word |= ((j % 2) * 32 + j / 2) << (8 * k);
    }
    EXPECT_EQ(out[t], word) << t;
  }
  Recorder racy;
  ASSERT_TRUE(run(*program, "interleaved", Dim3{64, 1, 1}, Params(info).arg(out).arg(0u), &racy).ok());
  ASSERT_FALSE(racy.hazards.empty());
  uint32_t store = lineOf("st.shared.u8"), load = lineOf("ld.shared.u32 %r6");
  for (size_t i = 0; i < racy.hazards.size(); ++i) {
    std::pair<uint32_t, uint32_t> lines{racy.hazards[i].second, racy.laterLines[i]};
    EXPECT_TRUE(lines == std::make_pair(store, load) || lines == std::make_pair(load, store));
  }
}

// Lanes 16-31 read the words lanes 0-15 read at the same instruction (one base register, as a tile's rows): each
// still checks against what another lane of the warp wrote since the last __syncwarp, a base register whose values
// changed is grouped anew, and a later write by one of the readers is after another lane's read.
TEST(CheckingTest, SharedReadsOfWordsThatSeveralLanesRead) {
  Checking on(kCheckSharedHazards);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "halves"))];
  uint32_t* out = arena().alloc<uint32_t>(32);
  Recorder racy;
  ASSERT_TRUE(run(*program, "halves", Dim3{32, 1, 1}, Params(info).arg(out).arg(0u), &racy).ok());
  EXPECT_TRUE(racy.hazards.empty());  // no second warp
  const uint32_t firstStore = lineOf("st.shared.u32 [%rd3], %r1;\n  add.u32 %r2, %r1, 100"),
                 secondStore = lineOf("st.shared.u32 [%rd3+128]");
  const uint32_t thirdLoad = lineOf("ld.shared.u32 %r8");
  auto has = [&](HazardKind kind, uint32_t earlier) {
    return std::count(racy.warpHazards.begin(), racy.warpHazards.end(), std::make_pair(kind, earlier));
  };
  EXPECT_EQ(has(HazardKind::ReadAfterWrite, firstStore), 16);   // lanes 16-31 at the first load
  EXPECT_EQ(has(HazardKind::ReadAfterWrite, secondStore), 16);  // and at the second, through the moved base
  EXPECT_EQ(has(HazardKind::WriteAfterRead, thirdLoad), 1);     // lane 0's store after lane 16's read
  EXPECT_EQ(racy.warpHazards.size(), 33u);
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], 3 * (t % 16) + 200) << t;
  Recorder synced;
  ASSERT_TRUE(run(*program, "halves", Dim3{32, 1, 1}, Params(info).arg(out).arg(1u), &synced).ok());
  EXPECT_TRUE(synced.warpHazards.empty());
  EXPECT_TRUE(synced.hazards.empty());
}

TEST(CheckingTest, BarrierReachedByPartOfAWarp) {
  Checking on(kCheckBarriers);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "divergent"))];
  uint32_t* out = arena().alloc<uint32_t>(64);
  Recorder recorder;
  (void)run(*program, "divergent", Dim3{64, 1, 1}, Params(info).arg(out), &recorder);
  ASSERT_EQ(recorder.barriers.size(), 2u);  // both warps
  EXPECT_EQ(recorder.barriers[0], 0xffffu);
  EXPECT_EQ(recorder.barriers[1], 0xffffu);
}

TEST(CheckingTest, GlobalAccessesPerThread) {
  Checking on(kCheckGlobalAccesses);
  auto program = compiled();
  const auto& info = kernels(*program)[size_t(findKernel(*program, "reads"))];
  uint32_t* in = arena().alloc<uint32_t>(32);
  uint32_t* out = arena().alloc<uint32_t>(32);
  Recorder recorder;
  ASSERT_TRUE(run(*program, "reads", Dim3{32, 1, 1}, Params(info).arg(in).arg(out), &recorder).ok());
  ASSERT_EQ(recorder.globals.size(), 64u);
  size_t reads = 0;
  for (auto [address, write] : recorder.globals) {
    uint64_t base = reinterpret_cast<uint64_t>(write ? out : in);
    EXPECT_LT(address - base, 32u * 4);
    reads += !write;
  }
  EXPECT_EQ(reads, 32u);
}

TEST(CheckingTest, FaultsNameTheirAccessAndSourceLine) {
  auto program = compiled();
  kernels(*program);  // source lines are known once the kernels are lowered (lazily: at their first launch)
  EXPECT_EQ(sourceLocation(*program, lineOf("ld.shared.u32")).file, "racy.cu");
  EXPECT_EQ(sourceLocation(*program, lineOf("ld.shared.u32")).line, 9u);
  EXPECT_EQ(sourceLocation(*program, lineOf("st.shared.u32")).line, 7u);
  EXPECT_EQ(sourceLocation(*program, lineOf("mov.u32 %r1, %tid.x")).line, 0u);
  const auto& info = kernels(*program)[size_t(findKernel(*program, "reads"))];
  uint32_t* out = arena().alloc<uint32_t>(32);
  LaunchResult r = run(*program, "reads", Dim3{32, 1, 1}, Params(info).arg(uint64_t(8)).arg(out), nullptr);
  ASSERT_EQ(r.fault.kind, FaultKind::IllegalAddress);
  EXPECT_EQ(r.fault.access.kind, FaultAccess::Kind::Read);
  EXPECT_EQ(r.fault.access.space, FaultAccess::Space::Global);
  EXPECT_EQ(r.fault.access.bytes, 4u);
  EXPECT_EQ(r.fault.thread.x, 0u);
}

}  // namespace
