// ptx.async: asynchronous copies (cp.async, cp.async.bulk, cp.reduce.async.bulk), mbarrier objects and programmatic
// dependent launch (griddepcontrol with the launch attributes of cuLaunchKernelEx). Each case is a hand-written sm_90
// PTX kernel `k(in, out)`; the host computes what every byte of `out` must be.
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using conf::ContextTest;
using ptx_async = ContextTest;

std::string Module(const std::string& body, const std::string& version = "8.0") {
  return ".version " + version +
         "\n.target sm_90\n.address_size 64\n"
         ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
         "\t.reg .pred %p<16>;\n\t.reg .b16 %rs<16>;\n\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<64>;\n"
         "\tld.param.u64 %rd1, [pin];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
         "\tld.param.u64 %rd2, [pout];\n\tcvta.to.global.u64 %rd2, %rd2;\n\tmov.u32 %r1, %tid.x;\n" +
         body + "\n\tret;\n}\n";
}

// Loads `ptx`, copies `in` to the device, fills `out` (outBytes) with `fill` bytes, launches k on one block of
// `threads` threads and returns out.
bool RunKernel(const std::string& ptx, const std::vector<uint8_t>& in, size_t outBytes, unsigned threads,
               std::vector<uint8_t>* out, const std::vector<uint8_t>& outInit = {}) {
  if (const char* dir = std::getenv("CUEMU_CONF_DUMP_PTX")) {
    const testing::TestInfo* t = testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(t->test_suite_name()) + "_" + t->name();
    std::replace(name.begin(), name.end(), '/', '_');
    std::ofstream(std::string(dir) + "/" + name + ".ptx") << ptx;
  }
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CUmodule mod = nullptr;
  CUresult r = cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals);
  EXPECT_EQ(r, CUDA_SUCCESS) << log << "\n" << ptx;
  if (r != CUDA_SUCCESS) return false;
  CUfunction f = nullptr;
  EXPECT_EQ(cuModuleGetFunction(&f, mod, "k"), CUDA_SUCCESS);
  conf::DeviceBuffer din(in.empty() ? 16 : in.size()), dout(outBytes);
  if (!in.empty()) {
    EXPECT_EQ(cuMemcpyHtoD(din.ptr(), in.data(), in.size()), CUDA_SUCCESS);
  }
  if (!outInit.empty()) {
    EXPECT_EQ(cuMemcpyHtoD(dout.ptr(), outInit.data(), outBytes), CUDA_SUCCESS);
  } else {
    EXPECT_EQ(cuMemsetD8(dout.ptr(), 0xee, outBytes), CUDA_SUCCESS);
  }
  CUdeviceptr pin = din.ptr(), pout = dout.ptr();
  void* params[] = {&pin, &pout};
  r = conf::Launch1D(f, 1, threads, params);
  EXPECT_EQ(r, CUDA_SUCCESS) << conf::ResultName(r);
  if (r != CUDA_SUCCESS) return false;
  out->resize(outBytes);
  EXPECT_EQ(cuMemcpyDtoH(out->data(), dout.ptr(), outBytes), CUDA_SUCCESS);
  cuModuleUnload(mod);
  return true;
}

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = uint8_t(x >> 24);
  }
  return v;
}

template <class T> T Get(const std::vector<uint8_t>& v, size_t byteOffset) {
  T x;
  std::memcpy(&x, v.data() + byteOffset, sizeof x);
  return x;
}
template <class T> void Put(std::vector<uint8_t>& v, size_t byteOffset, T x) {
  std::memcpy(v.data() + byteOffset, &x, sizeof x);
}

// First differing byte, or "".
std::string Diff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < want.size() && i < got.size(); ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
  if (got.size() != want.size()) return "size differs";
  return "";
}

// Stores 64 bytes of shared memory at %r4 to global %rd5.
const char* kStoreRegion =
    "\tld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r4];\n\tst.global.v4.u32 [%rd5], {%r40, %r41, %r42, %r43};\n"
    "\tld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r4+16];\n\tst.global.v4.u32 [%rd5+16], {%r40, %r41, %r42, %r43};\n"
    "\tld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r4+32];\n\tst.global.v4.u32 [%rd5+32], {%r40, %r41, %r42, %r43};\n"
    "\tld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r4+48];\n\tst.global.v4.u32 [%rd5+48], {%r40, %r41, %r42, %r43};\n";

// Each of 32 threads fills its 64 bytes of shared memory with 0xa5, copies parts of its 64 input bytes with
// cp.async of every size, with a source size (zero fill of the rest) and with the ignore-src predicate, waits for
// the group and stores the region.
TEST_F(ptx_async, CpAsyncSizesZeroFillIgnoreSrc) {
  std::string body = R"(
	.shared .align 16 .b8 sbuf[2048];
	shl.b32 %r2, %r1, 6;
	mov.u32 %r3, sbuf;
	add.u32 %r4, %r3, %r2;
	cvt.u64.u32 %rd3, %r2;
	add.u64 %rd4, %rd1, %rd3;
	add.u64 %rd5, %rd2, %rd3;
	mov.u32 %r5, 0xa5a5a5a5;
	st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r5};
	st.shared.v4.u32 [%r4+16], {%r5, %r5, %r5, %r5};
	st.shared.v4.u32 [%r4+32], {%r5, %r5, %r5, %r5};
	st.shared.v4.u32 [%r4+48], {%r5, %r5, %r5, %r5};
	cp.async.ca.shared.global [%r4], [%rd4], 4;
	cp.async.ca.shared.global [%r4+8], [%rd4+8], 8;
	rem.u32 %r6, %r1, 17;
	cp.async.cg.shared.global [%r4+16], [%rd4+16], 16, %r6;
	and.b32 %r7, %r1, 1;
	setp.ne.u32 %p1, %r7, 0;
	cp.async.ca.shared.global [%r4+32], [%rd4+32], 16, %p1;
	cp.async.ca.shared.global.L2::128B [%r4+48], [%rd4+48], 8, 3;
	cp.async.ca.shared::cta.global.L2::256B [%r4+56], [%rd4+56], 4;
	cp.async.commit_group;
	cp.async.wait_group 0;
	bar.sync 0;
)" + std::string(kStoreRegion);
  std::vector<uint8_t> in = Pattern(2048, 1), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 2048, 32, &out));
  std::vector<uint8_t> want(2048, 0xa5);
  for (unsigned t = 0; t < 32; ++t) {
    size_t b = t * 64;
    auto copy = [&](size_t off, size_t n) { std::memcpy(want.data() + b + off, in.data() + b + off, n); };
    auto zero = [&](size_t off, size_t n) { std::memset(want.data() + b + off, 0, n); };
    copy(0, 4);
    copy(8, 8);
    copy(16, t % 17);
    zero(16 + t % 17, 16 - t % 17);
    if (t & 1)
      zero(32, 16);
    else
      copy(32, 16);
    copy(48, 3);
    zero(51, 5);
    copy(56, 4);
  }
  EXPECT_EQ(Diff(out, want), "");
}

// Three commit groups; wait_group 2/1/0 and wait_all, through 32- and 64-bit shared addresses.
TEST_F(ptx_async, CpAsyncGroups) {
  std::string body = R"(
	.shared .align 16 .b8 sbuf[2048];
	shl.b32 %r2, %r1, 6;
	mov.u32 %r3, sbuf;
	add.u32 %r4, %r3, %r2;
	cvt.u64.u32 %rd3, %r2;
	add.u64 %rd4, %rd1, %rd3;
	add.u64 %rd5, %rd2, %rd3;
	cvta.shared.u64 %rd6, sbuf;
	cvta.to.shared.u64 %rd6, %rd6;
	add.u64 %rd6, %rd6, %rd3;
	cp.async.cg.shared.global [%r4], [%rd4], 16;
	cp.async.commit_group;
	cp.async.cg.shared.global [%rd6+16], [%rd4+16], 16;
	cp.async.commit_group;
	cp.async.ca.shared.global [%r4+32], [%rd4+32], 16;
	cp.async.ca.shared.global [%rd6+48], [%rd4+48], 16;
	cp.async.commit_group;
	cp.async.wait_group 2;
	cp.async.wait_group 1;
	cp.async.wait_group 0;
	cp.async.wait_all;
	bar.sync 0;
)" + std::string(kStoreRegion);
  std::vector<uint8_t> in = Pattern(2048, 2), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 2048, 32, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// 64 threads copy 16 bytes each and make an mbarrier track their copies: with .noinc the completion counts as the
// thread's arrival (barrier of 64); without, the pending count is raised first (net zero), so each thread arrives
// as well (second barrier of 64). Every thread waits for the phase and stores the whole 1024-byte buffer's part.
TEST_F(ptx_async, CpAsyncMbarrierArrive) {
  std::string body = R"(
	.shared .align 16 .b8 sbuf[2048];
	.shared .align 8 .b64 bars[2];
	mov.u32 %r3, sbuf;
	mov.u32 %r10, bars;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INIT_DONE;
	mbarrier.init.shared.b64 [%r10], 64;
	mbarrier.init.shared::cta.b64 [%r10+8], 64;
INIT_DONE:
	bar.sync 0;
	shl.b32 %r2, %r1, 4;
	add.u32 %r4, %r3, %r2;
	cvt.u64.u32 %rd3, %r2;
	add.u64 %rd4, %rd1, %rd3;
	cp.async.cg.shared.global [%r4], [%rd4], 16;
	cp.async.mbarrier.arrive.noinc.shared.b64 [%r10];
	cp.async.cg.shared.global [%r4+1024], [%rd4+1024], 16;
	cp.async.mbarrier.arrive.shared::cta.b64 [%r10+8];
	mbarrier.arrive.shared.b64 %rd10, [%r10+8];
WAIT0:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r10], 0;
	@!%p2 bra WAIT0;
WAIT1:
	mbarrier.test_wait.shared.b64 %p3, [%r10+8], %rd10;
	@!%p3 bra WAIT1;
	// thread t stores bytes 32t..32t+31 of the buffer (other threads' copies)
	xor.b32 %r5, %r1, 63;
	shl.b32 %r6, %r5, 5;
	add.u32 %r7, %r3, %r6;
	cvt.u64.u32 %rd7, %r6;
	add.u64 %rd8, %rd2, %rd7;
	ld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r7];
	st.global.v4.u32 [%rd8], {%r40, %r41, %r42, %r43};
	ld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r7+16];
	st.global.v4.u32 [%rd8+16], {%r40, %r41, %r42, %r43};
)";
  std::vector<uint8_t> in = Pattern(2048, 3), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 2048, 64, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// One thread drives an mbarrier through phases: arrivals with counts, test_wait on tokens and on parities,
// try_wait, arrive_drop lowering the expected count of later phases. out[i] = each observation (0/1).
TEST_F(ptx_async, MbarrierPhases) {
  std::string body = R"(
	.shared .align 8 .b64 bar;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mbarrier.init.shared.b64 [%r10], 3;
	mbarrier.arrive.shared.b64 %rd10, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd10;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2], %r20;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 0;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+4], %r20;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 1;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+8], %r20;
	mbarrier.arrive.release.cta.shared::cta.b64 %rd11, [%r10], 2;
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd10;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+12], %r20;
	mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p2, [%r10], 0;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+16], %r20;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 1;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+20], %r20;
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r10], 0;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+24], %r20;
	// phase 1: arrive_drop (3 -> 2 expected from the next phase on), two more arrivals complete it
	mbarrier.arrive_drop.shared.b64 %rd12, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd12;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+28], %r20;
	mbarrier.arrive.shared.b64 %rd13, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd12;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+32], %r20;
	mbarrier.arrive.shared.b64 %rd13, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd12;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+36], %r20;
	// phase 2 expects 2 arrivals
	mbarrier.arrive.shared.b64 %rd14, [%r10];
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 0;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+40], %r20;
	mbarrier.arrive.shared.b64 %rd15, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd14;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+44], %r20;
	mbarrier.try_wait.shared::cta.b64 %p2, [%r10], %rd14, 1000;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+48], %r20;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 1;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+52], %r20;
	mbarrier.inval.shared.b64 [%r10];
DONE:
)";
  std::vector<uint8_t> out;
  ASSERT_TRUE(RunKernel(Module(body), {}, 56, 32, &out));
  const uint32_t want[] = {0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0};
  for (unsigned i = 0; i < 14; ++i) EXPECT_EQ(Get<uint32_t>(out, 4 * i), want[i]) << "observation " << i;
}

// Values the ISA leaves to the implementation: recorded on the GPU into the golden file as the ptx.golden cases are
// (CUEMU_CONF_GOLDEN_RECORD, one line `name inputs-hash count values(hex)`), compared with CUEMU_CONF_GOLDEN.
void MatchGolden(const std::string& name, const std::string& kernel, const std::vector<uint32_t>& got) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : kernel) hash = (hash ^ c) * 0x100000001b3ull;
  std::ostringstream values;
  for (size_t i = 0; i < got.size(); ++i) values << (i ? "," : "") << std::hex << got[i];
  if (const char* record = std::getenv("CUEMU_CONF_GOLDEN_RECORD")) {
    std::ofstream(record, std::ios::app) << name << ' ' << std::hex << hash << std::dec << ' ' << got.size() << ' '
                                         << values.str() << '\n';
    return;
  }
  const char* golden = std::getenv("CUEMU_CONF_GOLDEN");
  ASSERT_NE(golden, nullptr) << "CUEMU_CONF_GOLDEN is not set";
  std::ifstream in(golden);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string n, h, v;
    size_t count = 0;
    if (!(ls >> n >> h >> count >> v) || n != name) continue;
    ASSERT_EQ(std::strtoull(h.c_str(), nullptr, 16), hash) << "recorded for another kernel; record again";
    EXPECT_EQ(values.str(), v) << "(hex) the GPU gave " << v;
    return;
  }
  FAIL() << "no golden outputs for " << name << " in " << golden;
}

// The pending arrival count that mbarrier.pending_count reads from the tokens of successive arrivals of one thread
// on a barrier of 4: arrivals of 1, 1, 2 (completing phase 0), an arrive_drop, a noComplete arrival of 1, an
// arrival of 2 (completing phase 1, which expected 3) and one more.
TEST_F(ptx_async, MbarrierPendingCount) {
  std::string body = R"(
	.shared .align 8 .b64 bar;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mbarrier.init.shared.b64 [%r10], 4;
	mbarrier.arrive.shared.b64 %rd10, [%r10];
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2], %r20;
	mbarrier.arrive.shared.b64 %rd10, [%r10];
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+4], %r20;
	mbarrier.arrive.shared.b64 %rd10, [%r10], 2;
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+8], %r20;
	mbarrier.arrive_drop.shared.b64 %rd10, [%r10];
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+12], %r20;
	mbarrier.arrive.noComplete.shared.b64 %rd10, [%r10], 1;
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+16], %r20;
	mbarrier.arrive.shared.b64 %rd10, [%r10], 2;
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+20], %r20;
	mbarrier.arrive.shared.b64 %rd10, [%r10];
	mbarrier.pending_count.b64 %r20, %rd10;
	st.global.u32 [%rd2+24], %r20;
DONE:
)";
  std::vector<uint8_t> out;
  std::string kernel = Module(body);
  ASSERT_TRUE(RunKernel(kernel, {}, 28, 1, &out));
  std::vector<uint32_t> got;
  for (unsigned i = 0; i < 7; ++i) got.push_back(Get<uint32_t>(out, 4 * i));
  MatchGolden("async_mbarrier_pending_count", kernel, got);
}

// Transaction counts: a phase completes when its arrivals are done and the bytes it expects are complete.
TEST_F(ptx_async, MbarrierTransactionCount) {
  std::string body = R"(
	.shared .align 8 .b64 bar;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mbarrier.init.shared::cta.b64 [%r10], 1;
	mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r10], 64;
	mbarrier.arrive.shared.b64 %rd10, [%r10];
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd10;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2], %r20;
	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r10], 32;
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd10;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+4], %r20;
	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r10], 32;
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd10;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+8], %r20;
	// phase 1: completion of bytes before they are expected, then arrive.expect_tx
	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r10], 16;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 1;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+12], %r20;
	mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd11, [%r10], 16;
	mbarrier.test_wait.parity.shared.b64 %p2, [%r10], 1;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+16], %r20;
	// phase 0 again (parity): arrive.expect_tx first, then the bytes
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd12, [%r10], 8;
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd12;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+20], %r20;
	mbarrier.complete_tx.shared::cta.b64 [%r10], 8;
	mbarrier.test_wait.shared.b64 %p2, [%r10], %rd12;
	selp.u32 %r20, 1, 0, %p2;
	st.global.u32 [%rd2+24], %r20;
DONE:
)";
  std::vector<uint8_t> out;
  ASSERT_TRUE(RunKernel(Module(body), {}, 28, 1, &out));
  const uint32_t want[] = {0, 0, 1, 0, 1, 0, 1};
  for (unsigned i = 0; i < 7; ++i) EXPECT_EQ(Get<uint32_t>(out, 4 * i), want[i]) << "observation " << i;
}

// Warp 0 waits (try_wait on a parity, and on a token with a time limit) for data that warp 1 writes to shared memory
// after a long loop; then every thread stores what it read.
TEST_F(ptx_async, MbarrierProducerConsumer) {
  std::string body = R"(
	.shared .align 8 .b64 bars[2];
	.shared .align 16 .b32 data[64];
	mov.u32 %r10, bars;
	mov.u32 %r11, data;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INIT_DONE;
	mbarrier.init.shared.b64 [%r10], 32;
	mbarrier.init.shared.b64 [%r10+8], 64;
INIT_DONE:
	bar.sync 0;
	setp.lt.u32 %p2, %r1, 32;
	@%p2 bra CONSUMER;
	// producer (warp 1): a long loop, then data[i] = in[i] * 3 + i, then arrive
	mov.u32 %r20, 0;
	mov.u32 %r21, 0;
SPIN:
	add.u32 %r21, %r21, %r20;
	add.u32 %r20, %r20, 1;
	setp.lt.u32 %p3, %r20, 20000;
	@%p3 bra SPIN;
	sub.u32 %r22, %r1, 32;
	mul.wide.u32 %rd20, %r22, 4;
	add.u64 %rd21, %rd1, %rd20;
	ld.global.u32 %r23, [%rd21];
	mad.lo.u32 %r23, %r23, 3, %r22;
	shl.b32 %r24, %r22, 2;
	add.u32 %r25, %r11, %r24;
	st.shared.u32 [%r25], %r23;
	st.shared.u32 [%r25+128], %r21;
	mbarrier.arrive.release.cta.shared::cta.b64 %rd22, [%r10];
	bra.uni BOTH;
CONSUMER:
	mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p4, [%r10], 0;
	@!%p4 bra CONSUMER;
BOTH:
	mbarrier.arrive.shared.b64 %rd23, [%r10+8];
WAIT2:
	mbarrier.try_wait.shared::cta.b64 %p5, [%r10+8], %rd23, 100000;
	@!%p5 bra WAIT2;
	shl.b32 %r30, %r1, 2;
	add.u32 %r31, %r11, %r30;
	ld.shared.u32 %r32, [%r31];
	mul.wide.u32 %rd30, %r1, 4;
	add.u64 %rd31, %rd2, %rd30;
	st.global.u32 [%rd31], %r32;
)";
  std::vector<uint8_t> in = Pattern(128, 4), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 256, 64, &out));
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 20000; ++i) sum += i;
  for (unsigned t = 0; t < 64; ++t) {
    uint32_t want = t < 32 ? Get<uint32_t>(in, 4 * t) * 3 + t : sum;
    EXPECT_EQ(Get<uint32_t>(out, 4 * t), want) << "thread " << t;
  }
}

// Shared memory `sbuf` (1 KiB) filled from in by the 32 threads (32 bytes each); %r3 = sbuf.
const char* kFillShared = R"(
	mov.u32 %r3, sbuf;
	shl.b32 %r5, %r1, 5;
	add.u32 %r6, %r3, %r5;
	cvt.u64.u32 %rd5, %r5;
	add.u64 %rd6, %rd1, %rd5;
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd6];
	st.shared.v4.u32 [%r6], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd6+16];
	st.shared.v4.u32 [%r6+16], {%r40, %r41, %r42, %r43};
)";
// The 32 threads store 1 KiB of shared memory at %r7 to out.
const char* kStoreShared = R"(
	shl.b32 %r5, %r1, 5;
	add.u32 %r6, %r7, %r5;
	cvt.u64.u32 %rd5, %r5;
	add.u64 %rd6, %rd2, %rd5;
	ld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r6];
	st.global.v4.u32 [%rd6], {%r40, %r41, %r42, %r43};
	ld.shared.v4.u32 {%r40, %r41, %r42, %r43}, [%r6+16];
	st.global.v4.u32 [%rd6+16], {%r40, %r41, %r42, %r43};
)";

// 1 KiB global -> shared, completing an mbarrier's transaction count; all threads wait for the phase.
TEST_F(ptx_async, BulkGlobalToShared) {
  std::string body = R"(
	.shared .align 128 .b8 sbuf[1024];
	.shared .align 8 .b64 bar;
	mov.u32 %r7, sbuf;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INIT_DONE;
	mbarrier.init.shared::cta.b64 [%r10], 1;
INIT_DONE:
	bar.sync 0;
	@%p1 bra WAIT;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd10, [%r10], 1024;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd1], 1024, [%r10];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r10], 0;
	@!%p2 bra WAIT;
)" + std::string(kStoreShared);
  std::vector<uint8_t> in = Pattern(1024, 5), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 1024, 32, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// 1 KiB shared -> shared (the own CTA's shared::cluster window) on an mbarrier.
TEST_F(ptx_async, BulkSharedToShared) {
  std::string body =
      "\t.shared .align 128 .b8 sbuf[1024];\n\t.shared .align 128 .b8 sbuf2[1024];\n"
      "\t.shared .align 8 .b64 bar;\n" +
      std::string(kFillShared) + R"(
	mov.u32 %r7, sbuf2;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INIT_DONE;
	mbarrier.init.shared::cta.b64 [%r10], 1;
INIT_DONE:
	fence.proxy.async.shared::cta;
	bar.sync 0;
	@%p1 bra WAIT;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd10, [%r10], 1024;
	cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r7], [%r3], 1024, [%r10];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r10], 0;
	@!%p2 bra WAIT;
)" + std::string(kStoreShared);
  std::vector<uint8_t> in = Pattern(1024, 6), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 1024, 32, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// 1 KiB shared -> global in two bulk groups, waited for with wait_group.read and wait_group.
TEST_F(ptx_async, BulkSharedToGlobal) {
  std::string body = "\t.shared .align 128 .b8 sbuf[1024];\n" + std::string(kFillShared) + R"(
	fence.proxy.async.shared::cta;
	bar.sync 0;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r3], 512;
	cp.async.bulk.commit_group;
	cp.async.bulk.global.shared::cta.bulk_group [%rd2+512], [%r3+512], 512;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 1;
	cp.async.bulk.wait_group 0;
DONE:
)";
  std::vector<uint8_t> in = Pattern(1024, 7), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 1024, 32, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// A bulk L2 prefetch changes nothing a program sees.
TEST_F(ptx_async, BulkPrefetch) {
  std::string body =
      "\t.shared .align 128 .b8 sbuf[1024];\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra GO;\n"
      "\tcp.async.bulk.prefetch.L2.global [%rd1], 1024;\nGO:\n" +
      std::string(kFillShared) + "\tmov.u32 %r7, sbuf;\n" + kStoreShared;
  std::vector<uint8_t> in = Pattern(1024, 8), out;
  ASSERT_TRUE(RunKernel(Module(body), in, 1024, 32, &out));
  EXPECT_EQ(Diff(out, in), "");
}

// The fences of the asynchronous proxy and of mbarrier initialisation, around one phase of an mbarrier.
TEST_F(ptx_async, AsyncProxyFences) {
  std::string body = R"(
	.shared .align 8 .b64 bar;
	mov.u32 %r10, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INIT_DONE;
	mbarrier.init.shared::cta.b64 [%r10], 32;
	fence.mbarrier_init.release.cluster;
	fence.proxy.async;
	fence.proxy.async.global;
	fence.proxy.async.shared::cta;
INIT_DONE:
	bar.sync 0;
	mbarrier.arrive.shared::cta.b64 %rd10, [%r10];
WAIT:
	mbarrier.try_wait.shared::cta.b64 %p2, [%r10], %rd10;
	@!%p2 bra WAIT;
	mul.wide.u32 %rd3, %r1, 4;
	add.u64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r1;
)";
  std::vector<uint8_t> out;
  ASSERT_TRUE(RunKernel(Module(body), {}, 128, 32, &out));
  for (unsigned t = 0; t < 32; ++t) EXPECT_EQ(Get<uint32_t>(out, 4 * t), t);
}

// One cp.reduce.async.bulk form: `op` applied element-wise to out (global, or a shared copy of it) with in.
struct ReduceForm {
  std::string name, mnemonic;                     // e.g. "add.u32"
  unsigned size;                                  // element bytes
  std::function<uint64_t(uint64_t, uint64_t)> f;  // (old, operand) -> new, on element bits
  bool shared = false;                            // also a form with a shared::cluster destination
};
void PrintTo(const ReduceForm& f, std::ostream* os) { *os << f.name; }

uint16_t HalfOf(int v) {  // small integers in binary16
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned a = unsigned(v < 0 ? -v : v), e = 0;
  while ((a >> e) > 1) ++e;
  return uint16_t(sign | (e + 15) << 10 | ((a << (10 - e)) & 0x3ff));
}
float FloatOfHalf(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 0x3ff;
  float v = e ? std::ldexp(float(1024 + m), e - 25) : std::ldexp(float(m), -24);
  return (h & 0x8000) ? -v : v;
}
uint16_t Bf16Of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return uint16_t(b >> 16);
}
float FloatOfBf16(uint16_t h) {
  uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

std::vector<ReduceForm> ReduceForms() {
  auto s32 = [](uint64_t x) { return int32_t(uint32_t(x)); };
  auto s64 = [](uint64_t x) { return int64_t(x); };
  auto f32 = [](uint64_t x) {
    float f;
    uint32_t b = uint32_t(x);
    std::memcpy(&f, &b, 4);
    return f;
  };
  auto bits32 = [](float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return uint64_t(b);
  };
  auto f64 = [](uint64_t x) {
    double d;
    std::memcpy(&d, &x, 8);
    return d;
  };
  auto bits64 = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  };
  return {
      {"add_u32", "add.u32", 4, [](uint64_t a, uint64_t b) { return uint64_t(uint32_t(a + b)); }, true},
      {"min_u32", "min.u32", 4, [](uint64_t a, uint64_t b) { return std::min(uint32_t(a), uint32_t(b)) + uint64_t(0); },
       true},
      {"max_u32", "max.u32", 4, [](uint64_t a, uint64_t b) { return std::max(uint32_t(a), uint32_t(b)) + uint64_t(0); },
       true},
      {"inc_u32", "inc.u32", 4,
       [](uint64_t a, uint64_t b) { return uint64_t(uint32_t(a) >= uint32_t(b) ? 0 : uint32_t(a) + 1); }, true},
      {"dec_u32", "dec.u32", 4,
       [](uint64_t a, uint64_t b) {
         return uint64_t(uint32_t(a) == 0 || uint32_t(a) > uint32_t(b) ? uint32_t(b) : uint32_t(a) - 1);
       },
       true},
      {"add_s32", "add.s32", 4, [](uint64_t a, uint64_t b) { return uint64_t(uint32_t(a + b)); }, true},
      {"min_s32", "min.s32", 4, [=](uint64_t a, uint64_t b) { return uint64_t(uint32_t(std::min(s32(a), s32(b)))); },
       true},
      {"max_s32", "max.s32", 4, [=](uint64_t a, uint64_t b) { return uint64_t(uint32_t(std::max(s32(a), s32(b)))); },
       true},
      {"and_b32", "and.b32", 4, [](uint64_t a, uint64_t b) { return a & b; }, true},
      {"or_b32", "or.b32", 4, [](uint64_t a, uint64_t b) { return a | b; }, true},
      {"xor_b32", "xor.b32", 4, [](uint64_t a, uint64_t b) { return a ^ b; }, true},
      {"add_u64", "add.u64", 8, [](uint64_t a, uint64_t b) { return a + b; }, true},
      {"min_u64", "min.u64", 8, [](uint64_t a, uint64_t b) { return std::min(a, b); }},
      {"max_u64", "max.u64", 8, [](uint64_t a, uint64_t b) { return std::max(a, b); }},
      {"min_s64", "min.s64", 8, [=](uint64_t a, uint64_t b) { return uint64_t(std::min(s64(a), s64(b))); }},
      {"max_s64", "max.s64", 8, [=](uint64_t a, uint64_t b) { return uint64_t(std::max(s64(a), s64(b))); }},
      {"and_b64", "and.b64", 8, [](uint64_t a, uint64_t b) { return a & b; }},
      {"or_b64", "or.b64", 8, [](uint64_t a, uint64_t b) { return a | b; }},
      {"xor_b64", "xor.b64", 8, [](uint64_t a, uint64_t b) { return a ^ b; }},
      {"add_f32", "add.f32", 4, [=](uint64_t a, uint64_t b) { return bits32(f32(a) + f32(b)); }},
      {"add_f64", "add.f64", 8, [=](uint64_t a, uint64_t b) { return bits64(f64(a) + f64(b)); }},
      {"add_noftz_f16", "add.noftz.f16", 2,
       [](uint64_t a, uint64_t b) {
         return uint64_t(HalfOf(int(FloatOfHalf(uint16_t(a)) + FloatOfHalf(uint16_t(b)))));
       }},
      {"min_f16", "min.f16", 2,
       [](uint64_t a, uint64_t b) { return FloatOfHalf(uint16_t(b)) < FloatOfHalf(uint16_t(a)) ? b : a; }},
      {"max_f16", "max.f16", 2,
       [](uint64_t a, uint64_t b) { return FloatOfHalf(uint16_t(b)) > FloatOfHalf(uint16_t(a)) ? b : a; }},
      {"add_noftz_bf16", "add.noftz.bf16", 2,
       [](uint64_t a, uint64_t b) { return uint64_t(Bf16Of(FloatOfBf16(uint16_t(a)) + FloatOfBf16(uint16_t(b)))); }},
      {"min_bf16", "min.bf16", 2,
       [](uint64_t a, uint64_t b) { return FloatOfBf16(uint16_t(b)) < FloatOfBf16(uint16_t(a)) ? b : a; }},
      {"max_bf16", "max.bf16", 2,
       [](uint64_t a, uint64_t b) { return FloatOfBf16(uint16_t(b)) > FloatOfBf16(uint16_t(a)) ? b : a; }},
  };
}

// Element values for a form: integers of every size, floats that add exactly (small integers, and f32/f64 values
// with few significant bits), so the host's sums are the GPU's.
uint64_t ElementValue(const ReduceForm& f, unsigned i, uint32_t seed) {
  uint32_t x = (i + 1) * 2654435761u ^ seed * 40503u;
  x ^= x >> 13;
  int small = int(x % 61) - 30;
  if (f.mnemonic.find("bf16") != std::string::npos) return Bf16Of(float(small));
  if (f.mnemonic.find("f16") != std::string::npos) return HalfOf(small);
  if (f.mnemonic.find("f32") != std::string::npos) {
    float v = float(small) * 0.25f;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  if (f.mnemonic.find("f64") != std::string::npos) {
    double v = double(small) * 0.125;
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
  uint64_t wide = uint64_t(x) << 32 | (x * 7919u);
  if (f.mnemonic.find("inc") != std::string::npos || f.mnemonic.find("dec") != std::string::npos) return x % 20;
  return f.size == 4 ? uint64_t(x) : wide;
}

// One form: thread 0 reduces 64 bytes of shared memory (from in) into out, in global memory through a bulk group or
// in shared memory (shared::cluster of the own CTA, starting from out's initial values) on an mbarrier.
void RunReduce(const ReduceForm& f, bool shared) {
  std::string body = R"(
	.shared .align 128 .b8 src[64];
	.shared .align 128 .b8 dst[64];
	.shared .align 8 .b64 bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mov.u32 %r3, src;
	mov.u32 %r4, dst;
	mov.u32 %r10, bar;
	mbarrier.init.shared::cta.b64 [%r10], 1;
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd1];
	st.shared.v4.u32 [%r3], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd1+16];
	st.shared.v4.u32 [%r3+16], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd1+32];
	st.shared.v4.u32 [%r3+32], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd1+48];
	st.shared.v4.u32 [%r3+48], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd2];
	st.shared.v4.u32 [%r4], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd2+16];
	st.shared.v4.u32 [%r4+16], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd2+32];
	st.shared.v4.u32 [%r4+32], {%r40, %r41, %r42, %r43};
	ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd2+48];
	st.shared.v4.u32 [%r4+48], {%r40, %r41, %r42, %r43};
	fence.proxy.async.shared::cta;
)";
  if (shared)
    body +=
        "\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd10, [%r10], 64;\n"
        "\tcp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes." +
        f.mnemonic +
        " [%r4], [%r3], 64, [%r10];\n"
        "WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r10], 0;\n\t@!%p3 bra WAIT;\n"
        "\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r4], 64;\n";
  else
    body += "\tcp.reduce.async.bulk.global.shared::cta.bulk_group." + f.mnemonic + " [%rd2], [%r3], 64;\n";
  body += "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\nDONE:\n";
  std::vector<uint8_t> in(64), init(64), out;
  for (unsigned e = 0; e < 64 / f.size; ++e) {
    uint64_t a = ElementValue(f, e, 11), b = ElementValue(f, e, 12);
    std::memcpy(in.data() + e * f.size, &a, f.size);
    std::memcpy(init.data() + e * f.size, &b, f.size);
  }
  ASSERT_TRUE(RunKernel(Module(body), in, 64, 32, &out, init));
  for (unsigned e = 0; e < 64 / f.size; ++e) {
    uint64_t a = 0, b = 0, got = 0;
    std::memcpy(&a, init.data() + e * f.size, f.size);
    std::memcpy(&b, in.data() + e * f.size, f.size);
    std::memcpy(&got, out.data() + e * f.size, f.size);
    uint64_t want = f.f(a, b) & (f.size == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * f.size)) - 1);
    EXPECT_EQ(got, want) << f.name << " element " << e << ": old " << a << " operand " << b;
  }
}

std::string FormName(const testing::TestParamInfo<ReduceForm>& i) { return i.param.name; }

class ptx_async_BulkReduceGlobal : public ContextTest, public testing::WithParamInterface<ReduceForm> {};
TEST_P(ptx_async_BulkReduceGlobal, Form) { RunReduce(GetParam(), false); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_BulkReduceGlobal, testing::ValuesIn(ReduceForms()), FormName);

std::vector<ReduceForm> SharedReduceForms() {
  std::vector<ReduceForm> v;
  for (const ReduceForm& f : ReduceForms())
    if (f.shared) v.push_back(f);
  return v;
}
class ptx_async_BulkReduceShared : public ContextTest, public testing::WithParamInterface<ReduceForm> {};
TEST_P(ptx_async_BulkReduceShared, Form) { RunReduce(GetParam(), true); }
INSTANTIATE_TEST_SUITE_P(All, ptx_async_BulkReduceShared, testing::ValuesIn(SharedReduceForms()), FormName);

// ---- programmatic dependent launch ----------------------------------------------------------------------------

const char* kPdlModule = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry producer(.param .u64 p)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mad.lo.u32 %r3, %r2, 128, %r1;
	mul.wide.u32 %rd2, %r3, 4;
	add.u64 %rd3, %rd1, %rd2;
	mul.lo.u32 %r4, %r3, 3;
	st.global.u32 [%rd3], %r4;
	griddepcontrol.launch_dependents;
	ret;
}
.visible .entry consumer(.param .u64 p, .param .u64 q)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	griddepcontrol.wait;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd1, %rd1;
	ld.param.u64 %rd4, [q];
	cvta.to.global.u64 %rd4, %rd4;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mad.lo.u32 %r3, %r2, 128, %r1;
	mul.wide.u32 %rd2, %r3, 4;
	add.u64 %rd3, %rd1, %rd2;
	ld.global.u32 %r4, [%rd3];
	add.u32 %r4, %r4, 1;
	add.u64 %rd5, %rd4, %rd2;
	st.global.u32 [%rd5], %r4;
	ret;
}
)";

class ptx_async_Pdl : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (HasFatalFailure()) return;
    CU_ASSERT_OK(cuModuleLoadData(&mod, kPdlModule));
    CU_ASSERT_OK(cuModuleGetFunction(&producer, mod, "producer"));
    CU_ASSERT_OK(cuModuleGetFunction(&consumer, mod, "consumer"));
    CU_ASSERT_OK(cuMemAlloc(&a, kN * 4));
    CU_ASSERT_OK(cuMemAlloc(&b, kN * 4));
    CU_ASSERT_OK(cuMemsetD32(b, 0, kN));
  }
  void TearDown() override {
    if (a) cuMemFree(a);
    if (b) cuMemFree(b);
    ContextTest::TearDown();
  }
  static CUlaunchConfig Config(CUstream s, CUlaunchAttribute* attrs, unsigned n) {
    CUlaunchConfig c{};
    c.gridDimX = kN / 128;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 128;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
  }
  void CheckConsumerOutput() {
    std::vector<uint32_t> v(kN);
    CU_ASSERT_OK(cuMemcpyDtoH(v.data(), b, kN * 4));
    for (unsigned i = 0; i < kN; ++i) ASSERT_EQ(v[i], i * 3 + 1) << "element " << i;
  }
  static constexpr unsigned kN = 4096;
  CUmodule mod = nullptr;
  CUfunction producer = nullptr, consumer = nullptr;
  CUdeviceptr a = 0, b = 0;
};

// The consumer launched with programmatic stream serialization waits (griddepcontrol.wait) for the producer's
// results.
TEST_F(ptx_async_Pdl, StreamSerialization) {
  CUstream s;
  CU_ASSERT_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  void* pp[] = {&a};
  CU_ASSERT_OK(cuLaunchKernel(producer, kN / 128, 1, 1, 128, 1, 1, 0, s, pp, nullptr));
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg = Config(s, &attr, 1);
  void* cp[] = {&a, &b};
  CU_ASSERT_OK(cuLaunchKernelEx(&cfg, consumer, cp, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(s));
  CheckConsumerOutput();
  CU_EXPECT_OK(cuStreamDestroy(s));
}

// A programmatic event recorded by the producer's launch (triggered by griddepcontrol.launch_dependents), waited
// for by a second stream.
TEST_F(ptx_async_Pdl, ProgrammaticEvent) {
  CUstream s1, s2;
  CU_ASSERT_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  CU_ASSERT_OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
  attr.value.programmaticEvent.event = e;
  attr.value.programmaticEvent.flags = 0;
  attr.value.programmaticEvent.triggerAtBlockStart = 0;
  CUlaunchConfig cfg = Config(s1, &attr, 1);
  void* pp[] = {&a};
  CU_ASSERT_OK(cuLaunchKernelEx(&cfg, producer, pp, nullptr));
  CU_ASSERT_OK(cuStreamWaitEvent(s2, e, 0));
  void* cp[] = {&a, &b};
  CU_ASSERT_OK(cuLaunchKernel(consumer, kN / 128, 1, 1, 128, 1, 1, 0, s2, cp, nullptr));
  CU_ASSERT_OK(cuStreamSynchronize(s2));
  CU_ASSERT_OK(cuStreamSynchronize(s1));
  CU_EXPECT_OK(cuEventQuery(e));
  CheckConsumerOutput();
  // triggered at the start of each block instead
  attr.value.programmaticEvent.triggerAtBlockStart = 1;
  CU_ASSERT_OK(cuMemsetD32(b, 0, kN));
  CU_ASSERT_OK(cuLaunchKernelEx(&cfg, producer, pp, nullptr));
  CU_ASSERT_OK(cuStreamWaitEvent(s2, e, 0));
  CU_ASSERT_OK(cuLaunchKernel(consumer, kN / 128, 1, 1, 128, 1, 1, 0, s2, cp, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  CheckConsumerOutput();
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuStreamDestroy(s1));
  CU_EXPECT_OK(cuStreamDestroy(s2));
}

// What the driver answers for programmatic events it cannot use: a timing event, no event, unknown flags (measured on
// an H100, driver 580).
TEST_F(ptx_async_Pdl, ProgrammaticEventErrors) {
  CUevent timing;
  CU_ASSERT_OK(cuEventCreate(&timing, 0));
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
  attr.value.programmaticEvent.event = timing;
  CUlaunchConfig cfg = Config(nullptr, &attr, 1);
  void* pp[] = {&a};
  std::string got = conf::ResultName(cuLaunchKernelEx(&cfg, producer, pp, nullptr));
  attr.value.programmaticEvent.event = nullptr;
  got += "," + conf::ResultName(cuLaunchKernelEx(&cfg, producer, pp, nullptr));
  CUevent e;
  CU_ASSERT_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  attr.value.programmaticEvent.event = e;
  attr.value.programmaticEvent.flags = 0x10;
  got += "," + conf::ResultName(cuLaunchKernelEx(&cfg, producer, pp, nullptr));
  CU_EXPECT_OK(cuCtxSynchronize());
  EXPECT_EQ(got, "CUDA_ERROR_NOT_SUPPORTED,CUDA_ERROR_INVALID_HANDLE,CUDA_ERROR_INVALID_VALUE");
  CU_EXPECT_OK(cuEventDestroy(e));
  CU_EXPECT_OK(cuEventDestroy(timing));
}

}  // namespace
