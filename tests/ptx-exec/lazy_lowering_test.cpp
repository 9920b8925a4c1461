// Lazy lowering (CUDA_MODULE_LOADING=LAZY): a compiled module lowers a kernel when it is first launched or its
// complete description is asked for, once even when threads ask together; what the load must refuse is still
// refused at load; the same text compiled twice gives one program.
#include "harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace ptx::exec;
using ptxtest::Arena;
using ptxtest::Params;

namespace {

// Three kernels: `add` (parameters, a branch), `tile` (static shared memory of its own, of a function it calls
// and of the module), `big` (more local memory per thread than the interpreter gives: only lowering finds it).
constexpr const char* kModule = R"(
.version 8.0
.target sm_80
.address_size 64

.shared .align 4 .b8 moduleTile[256];

.func (.param .b32 r) helper(.param .b32 x)
{
  .shared .align 8 .b8 helperTile[64];
  .reg .b32 %t<3>;
  ld.param.b32 %t1, [x];
  add.u32 %t2, %t1, 1;
  st.shared.u32 [helperTile], %t2;
  st.param.b32 [r], %t2;
  ret;
}

.visible .entry add(.param .u64 p, .param .u32 n, .param .u32 value)
{
  .reg .u64 %rd<4>;
  .reg .u32 %r<7>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  ld.param.u32 %r6, [value];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %q1, %r2, %r1;
  @%q1 bra $L_done;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  atom.global.add.u32 %r5, [%rd3], %r6;
$L_done:
  ret;
}

.visible .entry tile(.param .u64 p)
{
  .shared .align 16 .b8 ownTile[1000];
  .reg .u64 %rd<3>;
  .reg .u32 %r<4>;
  mov.u32 %r1, %tid.x;
  st.shared.u32 [ownTile], %r1;
  st.shared.u32 [moduleTile], %r1;
  {
  .param .b32 pa;
  .param .b32 pr;
  st.param.b32 [pa], %r1;
  call.uni (pr), helper, (pa);
  ld.param.b32 %r2, [pr];
  }
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], %r2;
  ret;
}

.visible .entry big(.param .u64 p)
{
  .local .align 4 .b8 huge[20000000];
  .reg .u64 %rd<3>;
  .reg .u32 %r<3>;
  mov.u32 %r1, 7;
  st.local.u32 [huge], %r1;
  ld.local.u32 %r2, [huge+4];
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], %r2;
  ret;
}
)";

// The module without `big`, which eager lowering refuses.
std::string withoutBig() {
  std::string text = kModule;
  return text.substr(0, text.find(".visible .entry big"));
}

CompileOptions withLowering(Lowering lowering) {
  CompileOptions options;
  options.lowering = lowering;
  return options;
}

Arena& arena() {
  static Arena* a = new Arena();
  return *a;
}

LaunchResult launchAdd(const Program& program, uint32_t* data, uint32_t n, uint32_t value) {
  int k = findKernel(program, "add");
  Params p(declaredKernels(program)[size_t(k)]);
  p.arg(reinterpret_cast<uint64_t>(data)).arg(n).arg(value);
  LaunchParams lp = ptxtest::launchParams({2, 1, 1}, {64, 1, 1}, p, arena());
  std::vector<uint64_t> globals = ptxtest::allocateGlobals(program, arena());
  lp.globalAddresses = globals.data();
  return launch(program, k, lp);
}

TEST(LazyLowering, DeclarationsAreKnownBeforeAnyKernelIsLowered) {
  CompileResult lazy = compile(kModule, withLowering(Lowering::Lazy));
  ASSERT_TRUE(lazy.program) << lazy.error;
  CompileResult eager = compile(withoutBig(), withLowering(Lowering::Eager));
  ASSERT_TRUE(eager.program) << eager.error;
  EXPECT_TRUE(lowersLazily(*lazy.program));
  EXPECT_FALSE(lowersLazily(*eager.program));
  EXPECT_EQ(loweredKernelCount(*lazy.program), 0u);
  const auto& declared = declaredKernels(*lazy.program);
  ASSERT_EQ(declared.size(), 3u);
  for (size_t k = 0; k < 2; ++k) {
    const KernelInfo& complete = kernels(*eager.program)[k];
    EXPECT_EQ(declared[k].name, complete.name);
    EXPECT_EQ(declared[k].paramBytes, complete.paramBytes);
    EXPECT_EQ(declared[k].params.size(), complete.params.size());
    // The load checks the static shared size: the declaration's count is the lowering's layout.
    EXPECT_EQ(declared[k].staticSharedBytes, complete.staticSharedBytes) << complete.name;
  }
  EXPECT_EQ(declared[1].staticSharedBytes, 256u + 1000u + 64u);  // the module's, its own, the helper's
  EXPECT_EQ(loweredKernelCount(*lazy.program), 0u);
}

TEST(LazyLowering, AttributesLowerOneKernelAndMatchEagerLowering) {
  CompileResult lazy = compile(withoutBig(), withLowering(Lowering::Lazy));
  CompileResult eager = compile(withoutBig(), withLowering(Lowering::Eager));
  ASSERT_TRUE(lazy.program && eager.program);
  const KernelInfo& info = kernelInfo(*lazy.program, 1);
  EXPECT_EQ(loweredKernelCount(*lazy.program), 1u);
  const KernelInfo& expected = kernels(*eager.program)[1];
  EXPECT_EQ(info.registerCount, expected.registerCount);
  EXPECT_EQ(info.localBytesPerThread, expected.localBytesPerThread);
  EXPECT_EQ(info.staticSharedBytes, expected.staticSharedBytes);
  // Asking again lowers nothing more; kernels() lowers the rest.
  EXPECT_EQ(&kernelInfo(*lazy.program, 1), &info);
  EXPECT_EQ(loweredKernelCount(*lazy.program), 1u);
  EXPECT_EQ(kernels(*lazy.program).size(), 2u);
  EXPECT_EQ(loweredKernelCount(*lazy.program), 2u);
  // The same ops as eager lowering.
  EXPECT_EQ(programStats(*lazy.program).digest, programStats(*eager.program).digest);
}

// From 1 MiB of text on, a lazy load keeps the bodies zstd-compressed in 256 KiB blocks: every kernel of a 1.4 MB
// module, bodies across block boundaries included, lowers from it to the ops eager lowering gives.
TEST(LazyLowering, EveryKernelOfAModuleOverOneMiBLowersFromItsCompressedText) {
  std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n";
  for (int k = 0; text.size() < (size_t(1400) << 10); ++k)
    text += ".visible .entry add" + std::to_string(k) +
            "(.param .u64 p)\n{\n  .reg .u64 %rd<3>;\n  .reg .u32 %r<3>;\n  ld.param.u64 %rd1, [p];\n"
            "  ld.global.u32 %r1, [%rd1];\n  add.u32 %r2, %r1, " +
            std::to_string(k) + ";\n  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  CompileResult lazy = compile(text, withLowering(Lowering::Lazy));
  CompileResult eager = compile(text, withLowering(Lowering::Eager));
  ASSERT_TRUE(lazy.program && eager.program) << lazy.error << eager.error;
  size_t count = kernels(*eager.program).size();
  // Last first, then from the start: the cached block changes on every step.
  EXPECT_EQ(kernelInfo(*lazy.program, int(count - 1)).registerCount, kernels(*eager.program)[count - 1].registerCount);
  EXPECT_EQ(kernels(*lazy.program).size(), count);
  EXPECT_EQ(loweredKernelCount(*lazy.program), count);
  EXPECT_EQ(programStats(*lazy.program).digest, programStats(*eager.program).digest);
}

TEST(LazyLowering, ConcurrentFirstLaunchesLowerOnce) {
  CompileResult r = compile(withoutBig(), withLowering(Lowering::Lazy));
  ASSERT_TRUE(r.program) << r.error;
  const uint32_t n = 100;
  uint32_t* data = arena().alloc<uint32_t>(n);
  std::memset(data, 0, n * 4);
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      if (!launchAdd(*r.program, data, n, 1).ok()) failures.fetch_add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(loweredKernelCount(*r.program), 1u);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(data[i], uint32_t(kThreads)) << i;
}

TEST(LazyLowering, AnErrorOnlyLoweringFindsFailsTheKernelNotTheLoad) {
  CompileResult eager = compile(kModule, withLowering(Lowering::Eager));
  EXPECT_FALSE(eager.program);
  EXPECT_NE(eager.error.find("local memory per thread too large"), std::string::npos) << eager.error;
  CompileResult lazy = compile(kModule, withLowering(Lowering::Lazy));
  ASSERT_TRUE(lazy.program) << lazy.error;
  const uint32_t n = 4;
  uint32_t* data = arena().alloc<uint32_t>(n);
  std::memset(data, 0, n * 4);
  EXPECT_TRUE(launchAdd(*lazy.program, data, n, 5).ok());
  EXPECT_EQ(data[3], 5u);
  int big = findKernel(*lazy.program, "big");
  const KernelInfo& info = kernelInfo(*lazy.program, big);
  EXPECT_NE(info.unsupported.find("local memory per thread too large"), std::string::npos) << info.unsupported;
  Params p(info);
  p.arg(reinterpret_cast<uint64_t>(data));
  LaunchParams lp = ptxtest::launchParams({1, 1, 1}, {1, 1, 1}, p, arena());
  std::vector<uint64_t> globals = ptxtest::allocateGlobals(*lazy.program, arena());
  lp.globalAddresses = globals.data();
  LaunchResult result = launch(*lazy.program, big, lp);
  EXPECT_EQ(result.fault.kind, FaultKind::IllegalInstruction);
  EXPECT_NE(result.fault.message.find("local memory per thread too large"), std::string::npos);
}

// `triple`'s address is taken only in `takeAddress`; lowered first, that entry drops its body: `callThrough`,
// lowered later, must still count `triple` among the targets of its indirect call.
constexpr const char* kAddressTakenOnlyInALoweredEntry = R"(
.version 8.0
.target sm_80
.address_size 64

.func (.param .b32 r) triple(.param .b32 x)
{
  .reg .b32 %t<3>;
  ld.param.b32 %t1, [x];
  mul.lo.u32 %t2, %t1, 3;
  st.param.b32 [r], %t2;
  ret;
}

.visible .entry takeAddress(.param .u64 p)
{
  .reg .u64 %rd<3>;
  mov.u64 %rd1, triple;
  ld.param.u64 %rd2, [p];
  st.global.u64 [%rd2], %rd1;
  ret;
}

.visible .entry callThrough(.param .u64 p)
{
  .reg .u64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  ld.global.u64 %rd2, [%rd1];
  mov.u32 %r1, 5;
  {
  .param .b32 a;
  .param .b32 r;
  st.param.b32 [a], %r1;
  proto : .callprototype (.param .b32 _) _ (.param .b32 _);
  call (r), %rd2, (a), proto;
  ld.param.b32 %r2, [r];
  }
  st.global.u32 [%rd1+8], %r2;
  ret;
}
)";

TEST(LazyLowering, AnAddressTakenOnlyInAnEarlierLoweredEntryStaysACallTarget) {
  CompileResult r = compile(kAddressTakenOnlyInALoweredEntry, withLowering(Lowering::Lazy));
  ASSERT_TRUE(r.program) << r.error;
  uint64_t* data = arena().alloc<uint64_t>(2);
  data[0] = data[1] = 0;
  for (const char* name : {"takeAddress", "callThrough"}) {
    int k = findKernel(*r.program, name);
    Params p(declaredKernels(*r.program)[size_t(k)]);
    p.arg(reinterpret_cast<uint64_t>(data));
    LaunchParams lp = ptxtest::launchParams({1, 1, 1}, {1, 1, 1}, p, arena());
    LaunchResult result = launch(*r.program, k, lp);
    ASSERT_TRUE(result.ok()) << name << ": " << result.fault.message;
  }
  EXPECT_EQ(uint32_t(data[1]), 15u);
}

TEST(LazyLowering, MalformedPtxStillFailsTheLoad) {
  std::string bad = withoutBig() + ".visible .entry broken() { add.u32 %nothere, 1, 2; ret; }\n";
  CompileResult r = compile(bad, withLowering(Lowering::Lazy));
  EXPECT_FALSE(r.program);
  EXPECT_FALSE(r.error.empty());
}

TEST(LazyLowering, TheSameTextCompiledTwiceIsOneProgram) {
  std::string text = withoutBig() + "// cache test\n";
  CompileResult first = compile(text, withLowering(Lowering::Lazy));
  CompileResult second = compile(text, withLowering(Lowering::Lazy));
  ASSERT_TRUE(first.program && second.program);
  EXPECT_EQ(first.program.get(), second.program.get());
  (void)kernelInfo(*first.program, 0);
  EXPECT_EQ(loweredKernelCount(*second.program), 1u);  // lowered once for both
  CompileResult eager = compile(text, withLowering(Lowering::Eager));
  ASSERT_TRUE(eager.program);
  EXPECT_NE(eager.program.get(), first.program.get());  // other options: another program
  std::string other = text + "// another text\n";
  CompileResult third = compile(other, withLowering(Lowering::Lazy));
  EXPECT_NE(third.program.get(), first.program.get());
  // Once no one holds it, the program goes (the cache does not keep it).
  std::weak_ptr<const Program> gone = first.program;
  first.program.reset();
  second.program.reset();
  EXPECT_TRUE(gone.expired());
}

// KernelInfo::mayWaitForOtherWork (the driver runs a small grid on the launching thread only without it): a loop
// that reads memory others may write while the grid runs (volatile, relaxed, acquire, atomics, mbarrier waits,
// nanosleep) may wait for the host or another grid; straight-line code, and loops over weak loads, cannot.
constexpr const char* kWaitHazards = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry straight(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<3>;
  ld.param.u64 %rd1, [p];
  atom.global.add.u32 %r1, [%rd1], 1;
  ld.volatile.global.u32 %r2, [%rd1];
  ret;
}

.visible .entry weakLoop(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<3>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 0;
L:
  ld.global.u32 %r2, [%rd1];
  add.u32 %r1, %r1, %r2;
  setp.lt.u32 %q1, %r1, 100;
  @%q1 bra L;
  ret;
}

.visible .entry volatileSpin(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
L:
  ld.volatile.global.u32 %r1, [%rd1];
  setp.eq.u32 %q1, %r1, 0;
  @%q1 bra L;
  ret;
}

.func spinOnAcquire(.param .b64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  .reg .pred %q<2>;
  ld.param.b64 %rd1, [p];
L:
  ld.acquire.gpu.global.u32 %r1, [%rd1];
  setp.eq.u32 %q1, %r1, 0;
  @%q1 bra L;
  ret;
}

.visible .entry calledSpin(.param .u64 p)
{
  .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [p];
  {
  .param .b64 a;
  st.param.b64 [a], %rd1;
  call.uni spinOnAcquire, (a);
  }
  ret;
}

.visible .entry casLock(.param .u64 p)
{
  .reg .u64 %rd<2>;
  .reg .u32 %r<2>;
  .reg .pred %q<2>;
  ld.param.u64 %rd1, [p];
L:
  atom.global.cas.b32 %r1, [%rd1], 0, 1;
  setp.ne.u32 %q1, %r1, 0;
  @%q1 bra L;
  ret;
}
)";

TEST(LazyLowering, KernelsThatMayWaitForOtherWorkAreKnownWhenLowered) {
  for (Lowering lowering : {Lowering::Lazy, Lowering::Eager}) {
    CompileResult r = compile(kWaitHazards, withLowering(lowering));
    ASSERT_TRUE(r.program) << r.error;
    auto waits = [&](const char* name) {
      int k = findKernel(*r.program, name);
      EXPECT_GE(k, 0) << name;
      return kernelInfo(*r.program, k).mayWaitForOtherWork;
    };
    EXPECT_FALSE(waits("straight")) << "no loop: it finishes whatever others do";
    EXPECT_FALSE(waits("weakLoop")) << "weak loads need not observe others' writes";
    EXPECT_TRUE(waits("volatileSpin"));
    EXPECT_TRUE(waits("calledSpin")) << "the spin is in a function the kernel calls";
    EXPECT_TRUE(waits("casLock"));
  }
}

}  // namespace
