// ptx.special, ptx.control, ptx.memory, ptx.atomic, ptx.warp (hand-written PTX): each case is a small kernel
// written directly in PTX that stores one 32-bit word per thread; the host checks every word.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Check = std::function<bool(const std::vector<unsigned>&, std::string*)>;

struct HandCase {
  HandCase(std::string n, std::string b, unsigned g, unsigned bl, Check c, std::string t = "sm_75",
           std::string glob = "")
      : name(std::move(n)),
        body(std::move(b)),
        grid(g),
        block(bl),
        check(std::move(c)),
        target(std::move(t)),
        globals(std::move(glob)) {}
  std::string name;
  std::string body;  // PTX body after the prologue: %tid in %r1 (flat thread id in the grid), result to store in %r9
  unsigned grid, block;
  Check check;
  std::string target;
  std::string globals;  // module-scope declarations
};

void PrintTo(const HandCase& c, std::ostream* os) { *os << c.name; }

std::string Kernel(const HandCase& c) {
  return ".version 7.8\n.target " + c.target + "\n.address_size 64\n" + c.globals +
         "\n.visible .entry k(.param .u64 out)\n{\n"
         "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<8>;\n"
         "\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %tid.x;\n"
         "\tmad.lo.u32 %r1, %r2, %r3, %r4;\n\tmov.u32 %r9, 0;\n" +
         c.body +
         "\n\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmul.wide.u32 %rd2, %r1, 4;\n"
         "\tadd.u64 %rd1, %rd1, %rd2;\n\tst.global.u32 [%rd1], %r9;\n\tret;\n}\n";
}

void RunHand(const HandCase& c) {
  if (const char* dir = std::getenv("CUEMU_CONF_DUMP_PTX"))
    std::ofstream(std::string(dir) + "/hand_" + c.name + ".ptx") << Kernel(c);
  CU_ASSERT_OK(cuInit(0));
  CUcontext ctx;
  CU_ASSERT_OK(cuCtxCreate(&ctx, nullptr, 0, 0));
  struct Guard {
    CUcontext c;
    ~Guard() { cuCtxDestroy(c); }
  } guard{ctx};
  std::string ptx = Kernel(c);
  char log[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CUmodule mod;
  CU_ASSERT_OK(cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals)) << log << "\n" << ptx;
  CUfunction f;
  CU_ASSERT_OK(cuModuleGetFunction(&f, mod, "k"));
  size_t n = size_t{c.grid} * c.block;
  CUdeviceptr out;
  CU_ASSERT_OK(cuMemAlloc(&out, n * 4));
  CU_ASSERT_OK(cuMemsetD32(out, 0xdeadbeef, n));
  void* params[] = {&out};
  CU_ASSERT_OK(cuLaunchKernel(f, c.grid, 1, 1, c.block, 1, 1, 0, nullptr, params, nullptr));
  CU_ASSERT_OK(cuCtxSynchronize());
  std::vector<unsigned> v(n);
  CU_ASSERT_OK(cuMemcpyDtoH(v.data(), out, n * 4));
  std::string why;
  EXPECT_TRUE(c.check(v, &why)) << why;
}

// Checks v[i] == f(i) for every thread i.
Check Each(std::function<unsigned(unsigned)> f) {
  return [f](const std::vector<unsigned>& v, std::string* why) {
    for (unsigned i = 0; i < v.size(); ++i)
      if (v[i] != f(i)) {
        *why = "thread " + std::to_string(i) + ": got " + std::to_string(v[i]) + ", expected " + std::to_string(f(i));
        return false;
      }
    return true;
  };
}

// Checks that the threads' values are 0..n-1, each once (the order threads took a lock in).
Check EachOnce() {
  return [](const std::vector<unsigned>& v, std::string* why) {
    std::vector<bool> seen(v.size());
    for (unsigned i = 0; i < v.size(); ++i) {
      if (v[i] >= v.size() || seen[v[i]]) {
        *why = "thread " + std::to_string(i) + ": got " + std::to_string(v[i]) + ", not a new value below " +
               std::to_string(v.size());
        return false;
      }
      seen[v[i]] = true;
    }
    return true;
  };
}

// Checks that the threads of each warp hold the same value, and that the warps' values sum to 0 + 1 + ... + n-1.
Check WarpSumsOfEachOnce() {
  return [](const std::vector<unsigned>& v, std::string* why) {
    uint64_t total = 0;
    for (unsigned i = 0; i < v.size(); ++i) {
      if (v[i] != v[i / 32 * 32]) {
        *why = "thread " + std::to_string(i) + ": got " + std::to_string(v[i]) + ", its warp's lane 0 " +
               std::to_string(v[i / 32 * 32]);
        return false;
      }
      if (i % 32 == 0) total += v[i];
    }
    const uint64_t n = v.size();
    if (total != n * (n - 1) / 2) {
      *why = "the warps' sums add up to " + std::to_string(total) + ", expected " + std::to_string(n * (n - 1) / 2);
      return false;
    }
    return true;
  };
}

std::vector<HandCase> SpecialCases() {
  return {
      {"laneid", "\tmov.u32 %r9, %laneid;", 2, 96, Each([](unsigned i) { return (i % 96) % 32; })},
      {"ntid_nctaid", "\tmov.u32 %r5, %ntid.x;\n\tmov.u32 %r6, %nctaid.x;\n\tmad.lo.u32 %r9, %r5, 1000, %r6;", 3, 64,
       Each([](unsigned) { return 64u * 1000 + 3; })},
      {"ctaid", "\tmov.u32 %r9, %ctaid.x;", 5, 32, Each([](unsigned i) { return i / 32; })},
      {"warpid_bounded",
       "\tmov.u32 %r5, %warpid;\n\tmov.u32 %r6, %nwarpid;\n\tsetp.lt.u32 %p1, %r5, %r6;\n\tselp.u32 %r9, 1, 0, %p1;", 1,
       128, Each([](unsigned) { return 1u; })},
      {"smid_bounded",
       "\tmov.u32 %r5, %smid;\n\tmov.u32 %r6, %nsmid;\n\tsetp.lt.u32 %p1, %r5, %r6;\n\tselp.u32 %r9, 1, 0, %p1;", 4, 32,
       Each([](unsigned) { return 1u; })},
      {"lanemask_lt", "\tmov.u32 %r5, %lanemask_lt;\n\tpopc.b32 %r9, %r5;", 1, 64,
       Each([](unsigned i) { return i % 32; })},
      {"lanemask_eq", "\tmov.u32 %r9, %lanemask_eq;", 1, 32, Each([](unsigned i) { return 1u << (i % 32); })},
      {"clock64_monotonic",
       "\tmov.u64 %rd3, %clock64;\n\tmov.u64 %rd4, %clock64;\n\tsetp.ge.u64 %p1, %rd4, %rd3;\n\tselp.u32 %r9, 1, 0, "
       "%p1;",
       1, 32, Each([](unsigned) { return 1u; })},
      {"globaltimer_monotonic",
       "\tmov.u64 %rd3, %globaltimer;\n\tmov.u64 %rd4, %globaltimer;\n\tsetp.ge.u64 %p1, %rd4, %rd3;\n"
       "\tsetp.ne.u64 %p2, %rd3, 0;\n\tand.pred %p1, %p1, %p2;\n\tselp.u32 %r9, 1, 0, %p1;",
       1, 32, Each([](unsigned) { return 1u; })},
      {"envreg_dynamic_smem", "\tmov.u32 %r9, %dynamic_smem_size;", 1, 32, Each([](unsigned) { return 0u; }), "sm_75"},
      // the shared window: the driver's 1 KiB first, then the kernel's variables (an H200: smemwindow29.cu)
      {"shared_window_static_base", "\tmov.u32 %r9, st;", 1, 32, Each([](unsigned) { return 0x400u; }), "sm_75",
       ".shared .align 4 .b8 st[200];"},
      {"shared_window_total_smem_size", "\tmov.u32 %r5, st;\n\tmov.u32 %r9, %total_smem_size;", 1, 32,
       Each([](unsigned) { return 256u; }), "sm_75", ".shared .align 4 .b8 st[200];"},
      {"shared_window_reserved_offsets",
       "\tmov.u32 %r5, %reserved_smem_offset_end;\n\tmov.u32 %r6, %reserved_smem_offset_cap;\n"
       "\tmov.u32 %r7, %reserved_smem_offset_begin;\n\tmad.lo.u32 %r9, %r6, 10000, %r5;\n\tadd.u32 %r9, %r9, %r7;",
       1, 32, Each([](unsigned) { return 1024u * 10000 + 288; }), "sm_80"},
      {"shared_window_generic_low_bits",
       "\tmov.u64 %rd3, st;\n\tcvta.shared.u64 %rd3, %rd3;\n\tmul.wide.u32 %rd4, %r4, 16;\n\tadd.u64 %rd3, %rd3, "
       "%rd4;\n"
       "\tand.b64 %rd3, %rd3, 16777215;\n\tcvt.u32.u64 %r9, %rd3;",
       1, 64, Each([](unsigned i) { return 0x400u + 16 * i; }), "sm_75", ".shared .align 16 .b8 st[1024];"},
  };
}

std::vector<HandCase> ControlCases() {
  return {
      {"predicated_execution",
       "\tand.b32 %r5, %r1, 1;\n\tsetp.eq.u32 %p1, %r5, 0;\n\t@%p1 mov.u32 %r9, 100;\n\t@!%p1 mov.u32 %r9, 200;", 1, 64,
       Each([](unsigned i) { return i % 2 ? 200u : 100u; })},
      {"loop_with_bra",
       "\tmov.u32 %r5, 0;\nLOOP:\n\tadd.u32 %r9, %r9, %r5;\n\tadd.u32 %r5, %r5, 1;\n\tsetp.le.u32 %p1, %r5, %r1;\n"
       "\t@%p1 bra LOOP;",
       1, 64, Each([](unsigned i) { return i * (i + 1) / 2; })},
      {"call_function",
       "\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n\tcall.uni (r), square, (a);\n"
       "\tld.param.b32 %r9, [r];\n\t}",
       1, 64, Each([](unsigned i) { return i * i; }), "sm_75",
       ".func (.param .b32 r) square(.param .b32 x)\n{\n\t.reg .b32 %t<3>;\n\tld.param.b32 %t1, [x];\n"
       "\tmul.lo.u32 %t2, %t1, %t1;\n\tst.param.b32 [r], %t2;\n\tret;\n}\n"},
      {"indirect_call",
       "\tmov.u64 %rd5, add_seven;\n\t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n"
       "\tprototype_1 : .callprototype (.param .b32 _) _ (.param .b32 _);\n\tcall (r), %rd5, (a), prototype_1;\n"
       "\tld.param.b32 %r9, [r];\n\t}",
       1, 32, Each([](unsigned i) { return i + 7; }), "sm_75",
       ".func (.param .b32 r) add_seven(.param .b32 x)\n{\n\t.reg .b32 %t<3>;\n\tld.param.b32 %t1, [x];\n"
       "\tadd.u32 %t2, %t1, 7;\n\tst.param.b32 [r], %t2;\n\tret;\n}\n"},
      {"brx_idx_jump_table",
       "\tand.b32 %r5, %r1, 3;\n\tts: .branchtargets L0, L1, L2, L3;\n\tbrx.idx %r5, ts;\nL0:\n\tmov.u32 %r9, 10;\n"
       "\tbra.uni DONE;\nL1:\n\tmov.u32 %r9, 11;\n\tbra.uni DONE;\nL2:\n\tmov.u32 %r9, 12;\n\tbra.uni DONE;\nL3:\n"
       "\tmov.u32 %r9, 13;\nDONE:",
       1, 64, Each([](unsigned i) { return 10 + i % 4; })},
      {"divergent_reconverge_vote",
       "\tand.b32 %r5, %r1, 3;\n\tsetp.eq.u32 %p1, %r5, 0;\n\t@%p1 bra SKIP;\n\tadd.u32 %r9, %r9, 1;\nSKIP:\n"
       "\tsetp.ne.u32 %p2, %r9, 0;\n\tvote.sync.ballot.b32 %r9, %p2, 0xffffffff;",
       1, 32, Each([](unsigned) { return 0xeeeeeeeeu; })},
      // device-side malloc/free (the context's heap): each thread gets its own block
      {"device_malloc_free",
       "\tmul.wide.u32 %rd5, %r1, 4;\n\tadd.u64 %rd5, %rd5, 16;\n\t{\n\t.param .b64 sz;\n\tst.param.b64 [sz], %rd5;\n"
       "\t.param .b64 ret;\n\tcall.uni (ret), malloc, (sz);\n\tld.param.b64 %rd6, [ret];\n\t}\n"
       "\tsetp.eq.u64 %p1, %rd6, 0;\n\t@%p1 bra NOMEM;\n\tadd.u32 %r5, %r1, 7;\n\tst.u32 [%rd6], %r5;\n"
       "\tst.u32 [%rd6+12], %r1;\n\tbar.sync 0;\n\tld.u32 %r6, [%rd6];\n\tld.u32 %r7, [%rd6+12];\n"
       "\tadd.u32 %r9, %r6, %r7;\n\t{\n\t.param .b64 p;\n\tst.param.b64 [p], %rd6;\n\tcall.uni free, (p);\n\t}\n"
       "\tbra.uni FIN;\nNOMEM:\n\tmov.u32 %r9, 0xffffffff;\nFIN:",
       2, 64, Each([](unsigned i) { return 2 * i + 7; }), "sm_75",
       ".extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);\n"
       ".extern .func free(.param .b64 free_param_0);\n"},
      // bar.sync on both sides of an even/odd branch: a warp arrives with all its threads when its first side
      // reaches the barrier, so the barrier completes before the second side ran (measured on an H200, where the
      // fall-through side runs first): even threads read their odd neighbour's slot still unwritten (0xdead),
      // odd threads read the value their even neighbour stored.
      {"bar_sync_divergent_sides",
       "\tmov.u32 %r5, sh;\n\tshl.b32 %r6, %r4, 2;\n\tadd.u32 %r5, %r5, %r6;\n\tst.shared.u32 [%r5], 0xdead;\n"
       "\tbar.sync 0;\n\tand.b32 %r7, %r4, 1;\n"
       "\tsetp.eq.u32 %p1, %r7, 1;\n\t@%p1 bra ODD;\n\tmul.lo.u32 %r8, %r4, 5;\n\tst.shared.u32 [%r5], %r8;\n"
       "\tbar.sync 0;\n\tld.shared.u32 %r9, [%r5+4];\n\tbra.uni JOIN;\nODD:\n\tmul.lo.u32 %r8, %r4, 3;\n"
       "\tst.shared.u32 [%r5], %r8;\n\tbar.sync 0;\n\tld.shared.u32 %r9, [%r5+-4];\nJOIN:",
       2, 128, Each([](unsigned i) {
         unsigned t = i % 128;
         return t % 2 ? (t - 1) * 5 : 0xdeadu;
       }),
       "sm_75", ".shared .align 4 .b32 sh[128];\n"},
      {"exit_early",
       "\tmov.u32 %r9, 5;\n\tand.b32 %r5, %r1, 1;\n\tsetp.eq.u32 %p1, %r5, 1;\n\t@!%p1 bra CONT;\n"
       "\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmul.wide.u32 %rd2, %r1, 4;\n"
       "\tadd.u64 %rd1, %rd1, %rd2;\n\tst.global.u32 [%rd1], 77;\n\texit;\nCONT:",
       1, 32, Each([](unsigned i) { return i % 2 ? 77u : 5u; })},
      // Independent thread scheduling: threads of one warp that wait for each other through memory. Each thread
      // swaps 1 into a lock until it reads 0 back, reads and bumps a counter the lock guards, and releases it: the
      // values read are 0..n-1, each once.
      {"intra_warp_spin_lock",
       "SPIN:\n\tatom.global.exch.b32 %r5, [lockWord], 1;\n\tsetp.eq.u32 %p1, %r5, 1;\n\t@%p1 bra SPIN;\n"
       "\tld.volatile.global.u32 %r9, [counter];\n\tadd.u32 %r6, %r9, 1;\n\tst.volatile.global.u32 [counter], %r6;\n"
       "\tmembar.gl;\n\tatom.global.exch.b32 %r5, [lockWord], 0;",
       2, 96, EachOnce(), "sm_75", ".global .u32 lockWord;\n.global .u32 counter;"},
      // ... then the block's barrier: every thread reads its block's count, which by then counts the whole block
      {"intra_warp_spin_lock_then_barrier",
       "\tmul.wide.u32 %rd3, %r2, 4;\n\tmov.u64 %rd4, lockWords;\n\tadd.u64 %rd4, %rd4, %rd3;\n"
       "\tmov.u64 %rd5, counters;\n\tadd.u64 %rd5, %rd5, %rd3;\n"
       "SPIN:\n\tatom.global.exch.b32 %r5, [%rd4], 1;\n\tsetp.eq.u32 %p1, %r5, 1;\n\t@%p1 bra SPIN;\n"
       "\tld.volatile.global.u32 %r6, [%rd5];\n\tadd.u32 %r6, %r6, 1;\n\tst.volatile.global.u32 [%rd5], %r6;\n"
       "\tmembar.gl;\n\tatom.global.exch.b32 %r5, [%rd4], 0;\n\tbar.sync 0;\n"
       "\tld.volatile.global.u32 %r9, [%rd5];",
       3, 96, Each([](unsigned) { return 96u; }), "sm_75", ".global .u32 lockWords[3];\n.global .u32 counters[3];"},
      // ... then a full-warp shuffle: the butterfly sum of the values a warp's threads read, the same in all of
      // them (the sums of all warps together: 0 + 1 + ... + n-1)
      {"intra_warp_spin_lock_then_shuffle",
       "SPIN:\n\tatom.global.exch.b32 %r5, [lockWord], 1;\n\tsetp.eq.u32 %p1, %r5, 1;\n\t@%p1 bra SPIN;\n"
       "\tld.volatile.global.u32 %r9, [counter];\n\tadd.u32 %r6, %r9, 1;\n\tst.volatile.global.u32 [counter], %r6;\n"
       "\tmembar.gl;\n\tatom.global.exch.b32 %r5, [lockWord], 0;\n"
       "\tshfl.sync.bfly.b32 %r7, %r9, 16, 31, -1;\n\tadd.u32 %r9, %r9, %r7;\n"
       "\tshfl.sync.bfly.b32 %r7, %r9, 8, 31, -1;\n\tadd.u32 %r9, %r9, %r7;\n"
       "\tshfl.sync.bfly.b32 %r7, %r9, 4, 31, -1;\n\tadd.u32 %r9, %r9, %r7;\n"
       "\tshfl.sync.bfly.b32 %r7, %r9, 2, 31, -1;\n\tadd.u32 %r9, %r9, %r7;\n"
       "\tshfl.sync.bfly.b32 %r7, %r9, 1, 31, -1;\n\tadd.u32 %r9, %r9, %r7;",
       2, 64, WarpSumsOfEachOnce(), "sm_75", ".global .u32 lockWord;\n.global .u32 counter;"},
      // Lane 0 of each warp waits for a flag that lane 1 sets on the other side of a branch, which the warp would
      // run after lane 0's side; lane 0 stores the flag + 100.
      {"intra_warp_wait_for_other_side",
       "\tshr.u32 %r5, %r1, 5;\n\tmul.wide.u32 %rd3, %r5, 4;\n\tmov.u64 %rd4, flags;\n\tadd.u64 %rd4, %rd4, %rd3;\n"
       "\tand.b32 %r6, %r1, 31;\n\tsetp.ne.u32 %p1, %r6, 0;\n\t@%p1 bra SETTER;\n"
       "WAIT:\n\tld.volatile.global.u32 %r7, [%rd4];\n\tsetp.eq.u32 %p2, %r7, 0;\n\t@%p2 bra WAIT;\n"
       "\tadd.u32 %r9, %r7, 100;\n\tbra JOIN;\n"
       "SETTER:\n\tsetp.ne.u32 %p3, %r6, 1;\n\t@%p3 bra JOIN;\n\tst.volatile.global.u32 [%rd4], 7;\n"
       "JOIN:\n\tbar.warp.sync -1;",
       2, 64, Each([](unsigned i) { return i % 32 == 0 ? 107u : 0u; }), "sm_75", ".global .u32 flags[4];"},
  };
}

std::vector<HandCase> MemoryCases() {
  return {
      {"shared_array_exchange",
       "\tmov.u32 %r5, sh;\n\tshl.b32 %r6, %r4, 2;\n\tadd.u32 %r7, %r5, %r6;\n\tst.shared.u32 [%r7], %r4;\n"
       "\tbar.sync 0;\n\tsub.u32 %r8, 63, %r4;\n\tshl.b32 %r8, %r8, 2;\n\tadd.u32 %r8, %r5, %r8;\n"
       "\tld.shared.u32 %r9, [%r8];",
       2, 64, Each([](unsigned i) { return 63 - i % 64; }), "sm_75", ".shared .align 4 .b32 sh[64];\n"},
      {"global_variable_initializer", "\tld.global.u32 %r9, [gtable+8];", 1, 32, Each([](unsigned) { return 30u; }),
       "sm_75", ".global .align 4 .u32 gtable[4] = {10, 20, 30, 40};\n"},
      {"const_variable",
       "\tand.b32 %r5, %r1, 3;\n\tmul.wide.u32 %rd5, %r5, 4;\n\tmov.u64 %rd6, ctable;\n\tadd.u64 %rd6, %rd6, %rd5;\n"
       "\tld.const.u32 %r9, [%rd6];",
       1, 32, Each([](unsigned i) { return 1000u + i % 4; }), "sm_75",
       ".const .align 4 .u32 ctable[4] = {1000, 1001, 1002, 1003};\n"},
      {"local_memory_spill",
       "\t.local .align 4 .b32 loc[16];\n\tmov.u32 %r5, 0;\nFILL:\n\tmul.wide.u32 %rd5, %r5, 4;\n"
       "\tmov.u64 %rd6, loc;\n\tadd.u64 %rd6, %rd6, %rd5;\n\tadd.u32 %r6, %r5, %r1;\n\tst.local.u32 [%rd6], %r6;\n"
       "\tadd.u32 %r5, %r5, 1;\n\tsetp.lt.u32 %p1, %r5, 16;\n\t@%p1 bra FILL;\n\tld.local.u32 %r9, [loc+60];",
       1, 32, Each([](unsigned i) { return 15 + i; })},
      {"cvta_shared_generic",
       "\tmov.u64 %rd5, sh;\n\tcvta.shared.u64 %rd6, %rd5;\n\tmul.wide.u32 %rd7, %r4, 4;\n\tadd.u64 %rd6, %rd6, %rd7;\n"
       "\tadd.u32 %r5, %r4, 500;\n\tst.u32 [%rd6], %r5;\n\tbar.sync 0;\n\tld.u32 %r9, [%rd6];\n"
       "\tisspacep.shared %p1, %rd6;\n\tselp.u32 %r6, 1, 0, %p1;\n\tmad.lo.u32 %r9, %r6, 10000, %r9;",
       1, 32, Each([](unsigned i) { return 10000 + 500 + i; }), "sm_75", ".shared .align 8 .b32 sh[32];\n"},
      {"vector_ld_st_v4",
       "\tmov.u64 %rd5, sh;\n\tmov.u32 %r5, 1;\n\tmov.u32 %r6, 2;\n\tmov.u32 %r7, 3;\n\tmov.u32 %r8, 4;\n"
       "\tsetp.eq.u32 %p1, %r4, 0;\n\t@%p1 st.shared.v4.u32 [%rd5], {%r5, %r6, %r7, %r8};\n\tbar.sync 0;\n"
       "\tld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%rd5];\n\tmad.lo.u32 %r9, %r10, 1000, %r13;\n"
       "\tmad.lo.u32 %r9, %r11, 100, %r9;\n\tmad.lo.u32 %r9, %r12, 10, %r9;",
       1, 32, Each([](unsigned) { return 1234u; }), "sm_75", ".shared .align 16 .b32 sh[4];\n"},
  };
}

std::vector<HandCase> AtomicCases() {
  return {
      {"atom_shared_add_return_unique",
       "\tmov.u32 %r5, counter;\n\tsetp.eq.u32 %p1, %r4, 0;\n\t@%p1 st.shared.u32 [%r5], 0;\n\tbar.sync 0;\n"
       "\tatom.shared.add.u32 %r6, [%r5], 1;\n\tbar.sync 0;\n\tld.shared.u32 %r7, [%r5];\n"
       "\tsetp.lt.u32 %p2, %r6, %r7;\n\tselp.u32 %r9, 1, 0, %p2;",
       2, 128, Each([](unsigned) { return 1u; }), "sm_75", ".shared .align 4 .u32 counter;\n"},
      {"atom_global_cas_b64",
       "\tmov.u64 %rd5, gword;\n\tcvt.u64.u32 %rd6, %r1;\n\tadd.u64 %rd7, %rd6, 1;\nRETRY:\n"
       "\tatom.global.cas.b64 %rd8, [%rd5], %rd6, %rd7;\n\tsetp.ne.u64 %p1, %rd8, %rd6;\n\t@%p1 bra RETRY;\n"
       "\tmov.u32 %r9, 1;",
       1, 64, Each([](unsigned) { return 1u; }), "sm_75", ".global .align 8 .u64 gword = 0;\n"},
      // f16 add: 64 threads add 1.0 to one half: 64.0 (0x5400); the returned old values are 0..63 in some order
      {"atom_global_add_f16",
       "\tmov.u64 %rd5, ghalf;\n\tmov.b16 %rs1, 0x3c00;\n\tatom.global.add.noftz.f16 %rs2, [%rd5], %rs1;\n"
       "\tbar.sync 0;\n\tld.volatile.global.b16 %rs3, [%rd5];\n\tcvt.u32.u16 %r5, %rs3;\n\tcvt.f32.f16 %f1, %rs2;\n"
       "\tcvt.rzi.u32.f32 %r6, %f1;\n\tsetp.lt.u32 %p1, %r6, 64;\n\tselp.u32 %r7, 0x10000, 0, %p1;\n\tor.b32 %r9, %r5, "
       "%r7;",
       1, 64, Each([](unsigned) { return 0x15400u; }), "sm_75", ".global .align 2 .b16 ghalf = 0;\n"},
      {"red_global_add",
       "\tmov.u64 %rd5, gsum;\n\tred.global.add.u32 [%rd5], %r1;\n\tbar.sync 0;\n\tmembar.gl;\n"
       "\tsetp.eq.u32 %p1, %r1, 0;\n\t@!%p1 bra DONE;\nWAIT:\n\tld.volatile.global.u32 %r6, [%rd5];\n"
       "\tsetp.ne.u32 %p2, %r6, 8128;\n\t@%p2 bra WAIT;\n\tmov.u32 %r9, %r6;\nDONE:",
       1, 128, Each([](unsigned i) { return i == 0 ? 8128u : 0u; }), "sm_75", ".global .align 4 .u32 gsum = 0;\n"},
      {"atom_exch_f32_bits",
       "\tmov.u64 %rd5, gf;\n\tmov.b32 %f1, 0f3F800000;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@!%p1 bra DONE;\n"
       "\tatom.global.exch.b32 %r6, [%rd5], 0x40490fdb;\n\tmov.u32 %r9, %r6;\nDONE:",
       1, 32, Each([](unsigned i) { return i == 0 ? 0x3f800000u : 0u; }), "sm_75",
       ".global .align 4 .f32 gf = 0f3F800000;\n"},
  };
}

// %r7 = the lanes whose label (lane % 3) is this lane's: a per-lane member mask.
constexpr const char* kLabeledGroups =
    "\trem.u32 %r5, %r4, 3;\n\tactivemask.b32 %r6;\n\tmatch.any.sync.b32 %r7, %r5, %r6;\n";
unsigned LabeledGroup(unsigned lane) {
  unsigned group = 0;
  for (unsigned j = lane % 3; j < 32; j += 3) group |= 1u << j;
  return group;
}

std::vector<HandCase> WarpCases() {
  return {
      {"shfl_sync_bfly", "\tshfl.sync.bfly.b32 %r9, %r1, 1, 0x1f, 0xffffffff;", 1, 64,
       Each([](unsigned i) { return i ^ 1; })},
      {"shfl_sync_up_pred",
       "\tshfl.sync.up.b32 %r5|%p1, %r1, 3, 0, 0xffffffff;\n\tselp.u32 %r6, 1000, 0, %p1;\n\tadd.u32 %r9, %r5, %r6;", 1,
       32, Each([](unsigned i) { return i >= 3 ? i - 3 + 1000 : i; })},
      {"vote_sync_all_any",
       "\tsetp.lt.u32 %p1, %r4, 16;\n\tvote.sync.any.pred %p2, %p1, 0xffffffff;\n\tvote.sync.all.pred %p3, %p1, "
       "0xffffffff;\n"
       "\tselp.u32 %r5, 1, 0, %p2;\n\tselp.u32 %r6, 2, 0, %p3;\n\tor.b32 %r9, %r5, %r6;",
       1, 64, Each([](unsigned i) { return i < 32 ? 1u : 0u; })},  // warp 0: some lanes (any), not all; warp 1: none
      {"match_all_sync", "\tshr.u32 %r5, %r4, 5;\n\tmatch.all.sync.b32 %r9|%p1, %r5, 0xffffffff;", 1, 64,
       Each([](unsigned) { return 0xffffffffu; }), "sm_75"},
      {"redux_sync_add", "\tredux.sync.add.u32 %r9, %r1, 0xffffffff;", 1, 64,
       Each([](unsigned i) { return i < 32 ? 496u : 32u * 32 + 496u; }), "sm_80"},
      {"redux_sync_max", "\tredux.sync.max.s32 %r9, %r1, 0xffffffff;", 1, 64,
       Each([](unsigned i) { return i < 32 ? 31u : 63u; }), "sm_80"},
      {"activemask_full", "\tactivemask.b32 %r9;", 1, 32, Each([](unsigned) { return 0xffffffffu; })},
      // Lanes of one instruction naming different member groups, as cooperative groups' labeled_partition does:
      // the group of lane i is every lane with label i % 3 (from match.any.sync), and each collective covers the
      // lane's own group only.
      {"match_any_labeled_groups", std::string(kLabeledGroups) + "\tmov.u32 %r9, %r7;", 1, 32,
       Each([](unsigned i) { return LabeledGroup(i); })},
      {"redux_sync_max_labeled_groups", std::string(kLabeledGroups) + "\tredux.sync.max.u32 %r9, %r4, %r7;", 1, 32,
       Each([](unsigned i) { return 31u - (31u - i) % 3u; }), "sm_80"},
      {"redux_sync_add_labeled_groups", std::string(kLabeledGroups) + "\tredux.sync.add.u32 %r9, %r4, %r7;", 1, 32,
       Each([](unsigned i) {
         unsigned sum = 0;
         for (unsigned j = i % 3; j < 32; j += 3) sum += j;
         return sum;
       }),
       "sm_80"},
      {"vote_sync_ballot_labeled_groups",
       std::string(kLabeledGroups) + "\tsetp.lt.u32 %p1, %r4, 16;\n\tvote.sync.ballot.b32 %r9, %p1, %r7;", 1, 32,
       Each([](unsigned i) { return LabeledGroup(i) & 0xffffu; })},
  };
}

std::string HandName(const testing::TestParamInfo<HandCase>& i) { return i.param.name; }

class ptx_special : public testing::TestWithParam<HandCase> {};
TEST_P(ptx_special, Hand) { RunHand(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_special, testing::ValuesIn(SpecialCases()), HandName);

class ptx_control_Hand : public testing::TestWithParam<HandCase> {};
TEST_P(ptx_control_Hand, Run) { RunHand(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_control_Hand, testing::ValuesIn(ControlCases()), HandName);

class ptx_memory_Hand : public testing::TestWithParam<HandCase> {};
TEST_P(ptx_memory_Hand, Run) { RunHand(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_memory_Hand, testing::ValuesIn(MemoryCases()), HandName);

class ptx_atomic_Hand : public testing::TestWithParam<HandCase> {};
TEST_P(ptx_atomic_Hand, Run) { RunHand(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_atomic_Hand, testing::ValuesIn(AtomicCases()), HandName);

class ptx_warp_Hand : public testing::TestWithParam<HandCase> {};
TEST_P(ptx_warp_Hand, Run) { RunHand(GetParam()); }
INSTANTIATE_TEST_SUITE_P(All, ptx_warp_Hand, testing::ValuesIn(WarpCases()), HandName);

}  // namespace
