// Random PTX kernels for the differential test of the native tier (native_test.cpp, docs/native-tier.md "Identity").
// A kernel is seeded, so a failure names the seed that reproduces it. Every thread loads 16 words of input into its
// registers, runs random regions over every instruction class the interpreter has handler bitcode for, and stores
// every register, its shared-memory slot and its local-memory slot; the counters that all threads of a block update
// (shared and global) are stored too. What both tiers must give equal is then all of the kernel's memory.
//
// The rules that keep a kernel well defined, so that any difference is a tier's bug, not the kernel's:
// - memory: a thread writes only its own 16-byte slots (shared, global, local); it reads another thread's shared
//   slot only between two barriers that no store sits between; the counters of a block are updated by atomics;
// - warp-wide instructions (shfl, vote, match, redux, bar.sync, bar.red, elect) take the full mask in uniform
//   regions (every thread of the block runs them), activemask elsewhere, and barriers only in uniform regions;
// - an atomic whose result depends on the order of the lanes (a returned old value of a counter, exch, cas, inc,
//   f32 adds) on the shared counters runs only in deterministic kernels (one warp order); elsewhere counters get
//   commutative reductions (red.add/and/or/xor/min/max) and order-dependent atomics go to the thread's own slot;
// - integer division by zero is avoided (the divisor is made odd).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>

namespace ptxtest {

class KernelGenerator {
 public:
  static constexpr int kInputBytes = 64;    // per thread
  static constexpr int kOutputBytes = 160;  // per thread: the register dump, the slots, a shared counter
  static constexpr int kSlotBytes = 16;     // one thread's slot in shared and global scratch memory
  static constexpr int kCounterBytes = 64;  // per block: 8 u32 counters, then 4 u64 counters

  explicit KernelGenerator(uint64_t seed) : rng_(seed) { deterministic_ = rng_() % 2 == 0; }

  // Whether the kernel holds order-dependent atomics on shared counters: it must run with deterministic launches.
  bool deterministic() const { return deterministic_; }

  // A kernel with parameters (out, in, scratch), for blocks of `threads` threads (a multiple of 32, at most 256).
  // scratch holds threads x blocks slots of 16 bytes, then one 64-byte counter area per block.
  std::string kernel(const std::string& name, int threads) {
    body_.clear();
    labels_ = 0;
    threads_ = threads;
    const std::string function = mixFunction(name);
    body_.clear();
    prologue();
    const int regions = 2 + int(rng_() % 4);
    for (int k = 0; k < regions; ++k) region(0);
    epilogue();
    return function +
           fmt::format(
               ".visible .entry {}(.param .u64 out, .param .u64 in, .param .u64 scratch)\n{{\n"
               ".reg .b32 %r<40>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<24>;\n.reg .f64 %fd<2>;\n.reg .b16 %h<4>;\n"
               ".reg .pred %p<12>;\n.shared .align 16 .b8 sh[{}];\n.local .align 16 .b8 loc[16];\n{}ret;\n}}\n",
               name, threads * kSlotBytes + kCounterBytes, body_);
  }

 private:
  // Registers an instruction may read and write: %r0-7, %f0-3, %rd0-3, %fd0-1, %h0-1, %p0-3. The others are the
  // kernel's own: %r8-%r15 loop counters and bounds, %r16-19 thread indices, %r20-39 temporaries, %rd10-23
  // addresses, %p4-11 control.
  std::string r() { return fmt::format("%r{}", rng_() % 8); }
  std::string f() { return fmt::format("%f{}", rng_() % 4); }
  std::string p() { return fmt::format("%p{}", rng_() % 4); }
  std::string rd() { return fmt::format("%rd{}", rng_() % 4); }
  std::string fd() { return fmt::format("%fd{}", rng_() % 2); }
  std::string h() { return fmt::format("%h{}", rng_() % 2); }
  template <size_t N> const char* pick(const char* const (&names)[N]) { return names[rng_() % N]; }
  bool chance(unsigned outOf) { return rng_() % outOf == 0; }
  void emit(const std::string& line) { body_ += line + "\n"; }

  void prologue() {
    emit("mov.u32 %r16, %tid.x;");
    emit("mov.u32 %r17, %ctaid.x;");
    emit("mov.u32 %r18, %ntid.x;");
    emit("mad.lo.u32 %r19, %r17, %r18, %r16;");  // the thread's index in the grid
    emit("ld.param.u64 %rd11, [in];");
    emit("ld.param.u64 %rd12, [out];");
    emit("ld.param.u64 %rd14, [scratch];");
    emit(fmt::format("mul.wide.u32 %rd10, %r19, {};", kInputBytes));
    emit("add.u64 %rd11, %rd11, %rd10;");
    emit(fmt::format("mul.wide.u32 %rd10, %r19, {};", kOutputBytes));
    emit("add.u64 %rd12, %rd12, %rd10;");
    // the block's counters in global scratch, after every thread's slot; then the thread's own global slot
    emit("mov.u32 %r20, %nctaid.x;");
    emit("mul.lo.u32 %r20, %r20, %r18;");
    emit(fmt::format("mul.wide.u32 %rd10, %r20, {};", kSlotBytes));
    emit("add.u64 %rd20, %rd14, %rd10;");
    emit(fmt::format("mul.wide.u32 %rd10, %r17, {};", kCounterBytes));
    emit("add.u64 %rd20, %rd20, %rd10;");
    emit(fmt::format("mul.wide.u32 %rd10, %r19, {};", kSlotBytes));
    emit("add.u64 %rd14, %rd14, %rd10;");
    // shared: the thread's slot (%rd13), the block's counters (%rd21), the array (%rd16); local: %rd15
    emit("mov.u64 %rd16, sh;");
    emit(fmt::format("mul.wide.u32 %rd10, %r16, {};", kSlotBytes));
    emit("add.u64 %rd13, %rd16, %rd10;");
    emit(fmt::format("add.u64 %rd21, %rd16, {};", threads_ * kSlotBytes));
    emit("mov.u64 %rd15, loc;");
    emit("ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd11];");
    emit("ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd11+16];");
    emit("ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd11+32];");
    emit("ld.global.v2.u64 {%rd0, %rd1}, [%rd11+48];");
    emit("mul.wide.u32 %rd2, %r1, %r3;");
    emit("cvt.u64.u32 %rd3, %r0;");
    emit("cvt.f64.f32 %fd0, %f0;");
    emit("mov.b64 %fd1, %rd0;");
    emit("mov.b32 {%h0, %h1}, %r5;");
    emit("setp.lt.u32 %p0, %r0, %r1;");
    emit("setp.lt.u32 %p1, %r2, %r3;");
    emit("setp.ne.u32 %p2, %r4, 7;");
    emit("setp.gt.f32 %p3, %f0, %f1;");
    // the slots start from the input; the counters from the threads' first words
    emit("st.shared.v4.u32 [%rd13], {%r4, %r5, %r6, %r7};");
    emit("st.local.v4.u32 [%rd15], {%r0, %r2, %r4, %r6};");
    emit(fmt::format("setp.lt.u32 %p11, %r16, {};", kCounterBytes / 4));
    emit("mul.wide.u32 %rd10, %r16, 4;");
    emit("add.u64 %rd22, %rd21, %rd10;");
    emit("@%p11 st.shared.u32 [%rd22], %r1;");
    emit("bar.sync 0;");
  }

  void epilogue() {
    emit("bar.sync 0;");
    emit("st.global.v4.u32 [%rd12], {%r0, %r1, %r2, %r3};");
    emit("st.global.v4.u32 [%rd12+16], {%r4, %r5, %r6, %r7};");
    emit("st.global.v4.f32 [%rd12+32], {%f0, %f1, %f2, %f3};");
    emit("st.global.v2.u64 [%rd12+48], {%rd0, %rd1};");
    emit("st.global.v2.u64 [%rd12+64], {%rd2, %rd3};");
    emit("st.global.v2.f64 [%rd12+80], {%fd0, %fd1};");
    emit("st.global.v2.b16 [%rd12+96], {%h0, %h1};");
    emit("selp.u32 %r20, 1, 0, %p0;");
    emit("selp.u32 %r21, 2, 0, %p1;");
    emit("or.b32 %r20, %r20, %r21;");
    emit("selp.u32 %r21, 4, 0, %p2;");
    emit("or.b32 %r20, %r20, %r21;");
    emit("selp.u32 %r21, 8, 0, %p3;");
    emit("or.b32 %r20, %r20, %r21;");
    emit("st.global.u32 [%rd12+100], %r20;");
    emit("ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%rd13];");
    emit("st.global.v4.u32 [%rd12+112], {%r20, %r21, %r22, %r23};");
    emit("ld.local.v4.u32 {%r20, %r21, %r22, %r23}, [%rd15];");
    emit("st.global.v4.u32 [%rd12+128], {%r20, %r21, %r22, %r23};");
    // the block's shared counters, one word for each of its first threads
    emit("@%p11 ld.shared.u32 %r20, [%rd22];");
    emit("@%p11 st.global.u32 [%rd12+144], %r20;");
  }

  // A region at nesting depth `depth`; depth 0 is uniform (every thread of the block runs it).
  void region(int depth) {
    const bool uniform = depth == 0;
    switch (rng_() % (uniform ? 8 : 6)) {
      case 0:
      case 1: straight(2 + int(rng_() % 5), uniform); break;
      case 2: ifElse(depth); break;
      case 3: loop(depth); break;
      case 4: call(); break;
      case 5: indirectBranch(depth); break;
      case 6: barrierRegion(); break;
      default: straight(2 + int(rng_() % 3), uniform); break;
    }
  }

  void straight(int n, bool uniform) {
    for (int i = 0; i < n; ++i) {
      std::string line = instruction(uniform);
      // some predicated: single instructions only (a carry chain or a guarded division must run whole), and no
      // warp-wide ones (their mask must be the lanes that run them)
      if (line.find('\n') == std::string::npos && line.find(".sync") == std::string::npos &&
          line.find("activemask") == std::string::npos && chance(5))
        line = (chance(2) ? "@" : "@!") + p() + " " + line;
      emit(line);
    }
  }

  void ifElse(int depth) {
    const int k = labels_++;
    emit(fmt::format("setp.lt.u32 %p4, {}, {};", r(), r()));
    emit(fmt::format("@%p4 bra ELSE{};", k));
    body(depth + 1);
    emit(fmt::format("bra JOIN{};", k));
    emit(fmt::format("ELSE{}:", k));
    body(depth + 1);
    emit(fmt::format("JOIN{}:", k));
  }

  // A loop of 0-7 trips that differ per lane, sometimes left early by a data-dependent break.
  void loop(int depth) {
    const int k = labels_++;
    const std::string count = fmt::format("%r{}", 8 + 2 * depth), bound = fmt::format("%r{}", 9 + 2 * depth);
    emit(fmt::format("and.b32 {}, {}, 7;", bound, r()));
    emit(fmt::format("mov.u32 {}, 0;", count));
    emit(fmt::format("LOOP{}:", k));
    emit(fmt::format("setp.ge.u32 %p5, {}, {};", count, bound));
    emit(fmt::format("@%p5 bra END{};", k));
    const bool skips = chance(3);  // a data-dependent continue
    if (skips) {
      emit(fmt::format("and.b32 %r20, {}, 1;", r()));
      emit(fmt::format("setp.ne.u32 %p7, %r20, {};", count));
      emit(fmt::format("@%p7 bra NEXT{};", k));
    }
    body(depth + 1);
    if (chance(2)) {
      emit(fmt::format("and.b32 %r20, {}, {};", r(), 3 + 4 * (rng_() % 2)));
      emit(fmt::format("setp.eq.u32 %p6, %r20, {};", count));
      emit(fmt::format("@%p6 bra END{};", k));
    }
    if (skips) emit(fmt::format("NEXT{}:", k));
    emit(fmt::format("add.u32 {}, {}, 1;", count, count));
    emit(fmt::format("bra LOOP{};", k));
    emit(fmt::format("END{}:", k));
  }

  // what a divergent region holds: instructions, and at depth 1 sometimes a nested if or loop
  void body(int depth) {
    if (depth < 3 && chance(4)) {
      straight(1 + int(rng_() % 2), false);
      switch (rng_() % 4) {
        case 0: ifElse(depth); break;
        case 1: loop(depth); break;
        case 2: call(); break;
        default: indirectBranch(depth); break;
      }
    }
    straight(1 + int(rng_() % 4), false);
  }

  // A call of the kernel's function with two of the thread's registers; its result replaces one.
  void call() {
    emit("{");
    emit(".param .b32 x;\n.param .b32 y;\n.param .b32 result;");
    emit(fmt::format("st.param.b32 [x], {};", r()));
    emit(fmt::format("st.param.b32 [y], {};", chance(2) ? r() : f()));
    emit(fmt::format("call (result), {}, (x, y);", function_));
    emit(fmt::format("ld.param.b32 {}, [result];", chance(2) ? r() : f()));
    emit("}");
  }

  // brx.idx over four targets chosen by data: each runs its own instructions, all join after.
  void indirectBranch(int depth) {
    const int k = labels_++;
    emit(fmt::format("and.b32 %r26, {}, 3;", r()));
    emit(fmt::format("TABLE{}: .branchtargets CASE{}_0, CASE{}_1, CASE{}_2, CASE{}_3;", k, k, k, k, k));
    emit(fmt::format("brx.idx %r26, TABLE{};", k));
    for (int target = 0; target < 4; ++target) {
      emit(fmt::format("CASE{}_{}:", k, target));
      if (target == 3 && depth < 2)
        body(depth + 1);
      else
        straight(1 + int(rng_() % 3), false);
      if (target < 3) emit(fmt::format("bra BRX_JOIN{};", k));
    }
    emit(fmt::format("BRX_JOIN{}:", k));
  }

  // The kernel's function: two parameters in, one result out, random register-only instructions on registers of
  // its own (every one set first), an early return on one path.
  std::string mixFunction(const std::string& kernel) {
    function_ = kernel + "_mix";
    body_.clear();
    emit("ld.param.b32 %r0, [x];");
    emit("ld.param.b32 %r1, [y];");
    emit("xor.b32 %r2, %r0, 0x5bd1e995;\nadd.u32 %r3, %r1, %r0;\nmul.lo.u32 %r4, %r0, 3;\nnot.b32 %r5, %r1;");
    emit("shr.u32 %r6, %r0, 7;\nor.b32 %r7, %r1, 1;");
    emit("mov.b32 %f0, %r0;\nmov.b32 %f1, %r1;\ncvt.rn.f32.s32 %f2, %r0;\ncvt.rn.f32.u32 %f3, %r1;");
    emit("mov.b64 %rd0, {%r0, %r1};\nmul.wide.u32 %rd1, %r0, %r1;\ncvt.u64.u32 %rd2, %r1;\nmov.b64 %rd3, {%r1, %r0};");
    emit("cvt.f64.f32 %fd0, %f0;\nmov.b64 %fd1, %rd0;\nmov.b32 {%h0, %h1}, %r0;");
    emit("setp.lt.u32 %p0, %r0, %r1;\nsetp.ne.u32 %p1, %r0, 0;\nsetp.gt.f32 %p2, %f0, %f1;\nsetp.eq.u32 %p3, %r1, 5;");
    const int n = 2 + int(rng_() % 5);
    for (int i = 0; i < n; ++i) emit(pureInstruction());
    emit("@%p0 bra EARLY;");
    for (int i = int(rng_() % 3); i >= 0; --i) emit(pureInstruction());
    emit("EARLY:");
    emit(
        "xor.b32 %r0, %r0, %r4;\nmov.b32 %r5, %f1;\nadd.u32 %r0, %r0, %r5;\ncvt.u32.u64 %r5, %rd2;\nxor.b32 %r0, %r0, "
        "%r5;");
    emit("st.param.b32 [result], %r0;");
    return fmt::format(
        ".func (.param .b32 result) {}(.param .b32 x, .param .b32 y)\n{{\n.reg .b32 %r<40>;\n.reg .f32 %f<4>;\n"
        ".reg .b64 %rd<24>;\n.reg .f64 %fd<2>;\n.reg .b16 %h<4>;\n.reg .pred %p<12>;\n{}ret;\n}}\n",
        function_, body_);
  }

  // an instruction on registers only (no memory, no warp-wide instruction)
  std::string pureInstruction() {
    switch (rng_() % 9) {
      case 0:
      case 1: return integer();
      case 2: return floating();
      case 3: return double64();
      case 4: return conversion();
      case 5: return half();
      case 6: return video();
      default: return compareSelect();
    }
  }

  // Threads read a neighbour's shared slot between two barriers, then block-wide reductions over a predicate.
  void barrierRegion() {
    emit("bar.sync 0;");
    emit(fmt::format("xor.b32 %r20, %r16, {};", 1 + rng_() % (unsigned(threads_) - 1)));
    emit(fmt::format("mul.wide.u32 %rd10, %r20, {};", kSlotBytes));
    emit("add.u64 %rd17, %rd16, %rd10;");
    const int reads = 1 + int(rng_() % 3);
    for (int i = 0; i < reads; ++i) {
      switch (rng_() % 4) {
        case 0: emit(fmt::format("ld.shared.u32 {}, [%rd17+{}];", r(), 4 * (rng_() % 4))); break;
        case 1: emit(fmt::format("ld.shared.v2.f32 {{{}, {}}}, [%rd17+{}];", f(), f(), 8 * (rng_() % 2))); break;
        case 2: emit(fmt::format("ld.shared.s16 {}, [%rd17+{}];", r(), 2 * (rng_() % 8))); break;
        default: emit(fmt::format("ld.shared.u64 {}, [%rd17+{}];", rd(), 8 * (rng_() % 2))); break;
      }
    }
    emit("bar.sync 0;");
    switch (rng_() % 4) {
      case 0: emit(fmt::format("bar.red.popc.u32 {}, 0, {};", r(), p())); break;
      case 1: emit(fmt::format("bar.red.and.pred {}, 0, {};", p(), p())); break;
      case 2: emit(fmt::format("bar.red.or.pred {}, 0, !{};", p(), p())); break;
      default: emit(fmt::format("barrier.sync 0, {};", threads_)); break;
    }
  }

  // The thread's own slot, in `space` ("shared", "global", "local" or generic), at a random width and offset.
  std::string slotAccess(const std::string& space) {
    const std::string base = space == "shared" ? "%rd13" : space == "global" ? "%rd14" : "%rd15";
    const std::string ld = space.empty() ? "ld" : "ld." + space, st = space.empty() ? "st" : "st." + space;
    std::string prefix, address = base;
    if (space.empty()) {  // generic: the shared or local slot through its generic address
      const char* from = chance(2) ? "shared" : "local";
      prefix = fmt::format("cvta.{}.u64 %rd18, {};\n", from, std::string(from) == "shared" ? "%rd13" : "%rd15");
      address = "%rd18";
    } else if (chance(3)) {  // an offset computed from data
      prefix = fmt::format("and.b32 %r21, {}, 12;\ncvt.u64.u32 %rd19, %r21;\nadd.u64 %rd19, {}, %rd19;\n", r(), base);
      return prefix +
             (chance(2) ? fmt::format("{}.u32 {}, [%rd19];", ld, r()) : fmt::format("{}.f32 [%rd19], {};", st, f()));
    }
    switch (rng_() % 12) {
      case 0: return prefix + fmt::format("{}.u32 [{}+{}], {};", st, address, 4 * (rng_() % 4), r());
      case 1: return prefix + fmt::format("{}.u8 [{}+{}], {};", st, address, rng_() % 16, r());
      case 2: return prefix + fmt::format("{}.b16 [{}+{}], {};", st, address, 2 * (rng_() % 8), h());
      case 3: return prefix + fmt::format("{}.v2.u32 [{}+{}], {{{}, {}}};", st, address, 8 * (rng_() % 2), r(), r());
      case 4: return prefix + fmt::format("{}.v4.f32 [{}], {{{}, {}, {}, {}}};", st, address, f(), f(), f(), f());
      case 5: return prefix + fmt::format("{}.f64 [{}+{}], {};", st, address, 8 * (rng_() % 2), fd());
      case 6: return prefix + fmt::format("{}.u64 [{}+{}], {};", st, address, 8 * (rng_() % 2), rd());
      case 7: return prefix + fmt::format("{}.s8 {}, [{}+{}];", ld, r(), address, rng_() % 16);
      case 8: return prefix + fmt::format("{}.u16 {}, [{}+{}];", ld, r(), address, 2 * (rng_() % 8));
      case 9: return prefix + fmt::format("{}.v2.f32 {{{}, {}}}, [{}+{}];", ld, f(), f(), address, 8 * (rng_() % 2));
      case 10: return prefix + fmt::format("{}.v4.u32 {{{}, {}, {}, {}}}, [{}];", ld, r(), r(), r(), r(), address);
      default: return prefix + fmt::format("{}.f64 {}, [{}+{}];", ld, fd(), address, 8 * (rng_() % 2));
    }
  }

  // An atomic on the thread's own slot (any operation: the lanes' addresses differ), or on the block's counters.
  std::string atomic() {
    const bool shared = chance(2);
    const std::string space = shared ? "shared" : "global";
    if (chance(2)) {
      const std::string slot = shared ? "%rd13" : "%rd14";
      switch (rng_() % 12) {
        case 0: return fmt::format("atom.{}.add.u32 {}, [{}+{}], {};", space, r(), slot, 4 * (rng_() % 4), r());
        case 1: return fmt::format("atom.{}.min.s32 {}, [{}+{}], {};", space, r(), slot, 4 * (rng_() % 4), r());
        case 2: return fmt::format("atom.{}.max.u32 {}, [{}+{}], {};", space, r(), slot, 4 * (rng_() % 4), r());
        case 3: return fmt::format("atom.{}.exch.b32 {}, [{}+{}], {};", space, r(), slot, 4 * (rng_() % 4), r());
        case 4:
          return fmt::format("atom.{}.cas.b32 {}, [{}+{}], {}, {};", space, r(), slot, 4 * (rng_() % 4), r(), r());
        case 5:
          return fmt::format("atom.{}.{}.b32 {}, [{}+{}], {};", space, pick({"and", "or", "xor"}), r(), slot,
                             4 * (rng_() % 4), r());
        case 6: return fmt::format("atom.{}.add.f32 {}, [{}+{}], {};", space, f(), slot, 4 * (rng_() % 4), f());
        case 7:
          return fmt::format("atom.{}.{}.u32 {}, [{}+{}], {};", space, pick({"inc", "dec"}), r(), slot,
                             4 * (rng_() % 4), r());
        case 8: return fmt::format("atom.{}.add.u64 {}, [{}+{}], {};", space, rd(), slot, 8 * (rng_() % 2), rd());
        case 9:
          return fmt::format("atom.{}.cas.b64 {}, [{}+{}], {}, {};", space, rd(), slot, 8 * (rng_() % 2), rd(), rd());
        case 10:
          return fmt::format("atom.{}.{} {}, [{}+{}], {};", space, pick({"min.s64", "max.u64", "exch.b64", "and.b64"}),
                             rd(), slot, 8 * (rng_() % 2), rd());
        default:
          return fmt::format("red.{}.{} [{}+{}], {};", space, pick({"add.u32", "max.s32", "or.b32"}), slot,
                             4 * (rng_() % 4), r());
      }
    }
    const std::string counters = shared ? "%rd21" : "%rd20";
    const unsigned word = 4 * (rng_() % 8), wide = 32 + 8 * (rng_() % 4);
    if (deterministic_ && chance(2)) {  // the order of the lanes decides the result: one warp order
      switch (rng_() % 6) {
        case 0: return fmt::format("atom.{}.add.u32 {}, [{}+{}], {};", space, r(), counters, word, r());
        case 1: return fmt::format("atom.{}.exch.b32 {}, [{}+{}], {};", space, r(), counters, word, r());
        case 2: return fmt::format("atom.{}.cas.b32 {}, [{}+{}], {}, {};", space, r(), counters, word, r(), r());
        case 3: return fmt::format("atom.{}.add.f32 {}, [{}+{}], {};", space, f(), counters, word, f());
        case 4: return fmt::format("red.{}.inc.u32 [{}+{}], {};", space, counters, word, r());
        default: return fmt::format("atom.{}.add.u64 {}, [{}+{}], {};", space, rd(), counters, wide, rd());
      }
    }
    if (chance(4))
      return fmt::format("red.{}.{} [{}+{}], {};", space, pick({"add.u64", "and.b64", "or.b64", "xor.b64"}), counters,
                         wide, rd());
    return fmt::format("red.{}.{} [{}+{}], {};", space,
                       pick({"add.u32", "and.b32", "or.b32", "xor.b32", "min.u32", "max.s32", "min.s32"}), counters,
                       word, r());
  }

  std::string integer() {
    static const char* const binary32[] = {
        "add.s32",      "sub.s32",      "mul.lo.s32",  "mul.hi.u32",   "mul.hi.s32",    "and.b32",      "or.b32",
        "xor.b32",      "shl.b32",      "shr.u32",     "shr.s32",      "min.s32",       "max.u32",      "min.u32",
        "max.s32",      "add.sat.s32",  "sub.sat.s32", "mul24.lo.s32", "mul24.hi.u32",  "mul24.hi.s32", "mul24.lo.u32",
        "max.relu.s32", "min.relu.s32", "min.s16x2",   "max.u16x2",    "max.relu.s16x2"};
    static const char* const unary32[] = {
        "not.b32",  "abs.s32",   "neg.s32",   "popc.b32",           "clz.b32",           "brev.b32",
        "cnot.b32", "bfind.u32", "bfind.s32", "bfind.shiftamt.u32", "bfind.shiftamt.s32"};
    switch (rng_() % 16) {
      case 0:
      case 1: return fmt::format("{} {}, {}, {};", pick(binary32), r(), r(), r());
      case 2: return fmt::format("{} {}, {};", pick(unary32), r(), r());
      case 3:
        return fmt::format("{} {}, {}, {}, {};",
                           pick({"mad.lo.s32", "mad.hi.u32", "mad.hi.s32", "mad24.lo.u32", "mad24.lo.s32",
                                 "mad.hi.sat.s32", "mad24.hi.u32", "mad24.hi.sat.s32", "sad.u32", "sad.s32"}),
                           r(), r(), r(), r());
      case 4: {
        const std::string b = r();
        return fmt::format("or.b32 %r23, {}, 1;\n{} {}, {}, %r23;", b,
                           pick({"rem.u32", "div.s32", "div.u32", "rem.s32"}), r(), r());
      }
      case 5:
        switch (rng_() % 4) {
          case 0: return fmt::format("bfe.{} {}, {}, {}, {};", pick({"u32", "s32"}), r(), r(), r(), r());
          case 1: return fmt::format("bfi.b32 {}, {}, {}, {}, {};", r(), r(), r(), r(), r());
          case 2: return fmt::format("lop3.b32 {}, {}, {}, {}, {};", r(), r(), r(), r(), rng_() % 256);
          default:
            return fmt::format("prmt.b32{} {}, {}, {}, {};",
                               pick({"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"}), r(), r(), r(), r());
        }
      case 6:
        return fmt::format("{} {}, {}, {}, {};",
                           pick({"shf.l.wrap.b32", "shf.r.wrap.b32", "shf.l.clamp.b32", "shf.r.clamp.b32"}), r(), r(),
                           r(), r());
      case 7:
        switch (rng_() % 3) {
          case 0:
            return fmt::format("and.b32 %r24, {}, 31;\nfns.b32 {}, {}, %r24, {};", r(), r(), r(),
                               chance(2) ? r() : std::to_string(int(rng_() % 9) - 4));
          case 1:
            return fmt::format("{} {}, {}, {};", pick({"szext.wrap.u32", "szext.clamp.s32", "szext.wrap.s32"}), r(),
                               r(), r());
          default: return fmt::format("{} {}, {}, {};", pick({"bmsk.wrap.b32", "bmsk.clamp.b32"}), r(), r(), r());
        }
      case 8:
        return fmt::format("{} {}, {}, {}, {};",
                           pick({"dp4a.u32.u32", "dp4a.s32.s32", "dp4a.s32.u32", "dp2a.lo.u32.u32", "dp2a.hi.s32.s32",
                                 "dp2a.lo.s32.u32"}),
                           r(), r(), r(), r());
      case 9: {  // a carry chain: nothing else between its parts
        const char* kind = pick({"add", "sub"});
        std::string chain = fmt::format("{}.cc.u32 {}, {}, {};\n", kind, r(), r(), r());
        for (int i = int(rng_() % 3); i > 0; --i) chain += fmt::format("{}c.cc.u32 {}, {}, {};\n", kind, r(), r(), r());
        if (chance(3)) chain += fmt::format("mad.lo.cc.u32 {}, {}, {}, {};\n", r(), r(), r(), r());
        return chain +
               fmt::format("{} {}, {}, {}, {};", chance(2) ? "madc.hi.u32" : "madc.lo.cc.u32", r(), r(), r(), r()) +
               fmt::format("\n{}c.u32 {}, {}, {};", kind, r(), r(), r());
      }
      case 10:
      case 11:  // 64-bit
        switch (rng_() % 10) {
          case 0: return fmt::format("mul.wide.{} {}, {}, {};", pick({"u32", "s32"}), rd(), r(), r());
          case 1:
            return fmt::format("{} {}, {}, {};",
                               pick({"add.s64", "sub.s64", "mul.lo.u64", "mul.hi.s64", "mul.hi.u64", "and.b64",
                                     "or.b64", "xor.b64", "min.s64", "max.u64"}),
                               rd(), rd(), rd());
          case 2: return fmt::format("{} {}, {}, {};", pick({"shr.u64", "shr.s64", "shl.b64"}), rd(), rd(), r());
          case 3:
            return fmt::format("{} {}, {};", pick({"cvt.u32.u64", "popc.b64", "clz.b64", "bfind.u64"}), r(), rd());
          case 4: return fmt::format("{} {}, {};", pick({"not.b64", "neg.s64", "abs.s64", "brev.b64"}), rd(), rd());
          case 5: return fmt::format("mad.lo.s64 {}, {}, {}, {};", rd(), rd(), rd(), rd());
          case 6: {
            const std::string b = rd();
            return fmt::format("or.b64 %rd19, {}, 1;\n{} {}, {}, %rd19;", b,
                               pick({"div.u64", "rem.s64", "div.s64", "rem.u64"}), rd(), rd());
          }
          case 7:
            return chance(2) ? fmt::format("mov.b64 {}, {{{}, {}}};", rd(), r(), r())
                             : fmt::format("mov.b64 {{{}, {}}}, {};", r(), r(), rd());
          case 8: return fmt::format("{} {}, {}, {}, {};", pick({"bfe.u64", "bfe.s64"}), rd(), rd(), r(), r());
          default:
            return fmt::format("add.cc.u64 {}, {}, {};\naddc.u64 {}, {}, {};", rd(), rd(), rd(), rd(), rd(), rd());
        }
      case 12: return fmt::format("bfi.b64 {}, {}, {}, {}, {};", rd(), rd(), rd(), r(), r());
      case 13:
        return fmt::format("{} {}, {};",
                           pick({"cvt.s8.s32", "cvt.u8.u32", "cvt.s16.s32", "cvt.u16.u32", "cvt.sat.s8.s32",
                                 "cvt.sat.u8.s32", "cvt.sat.u16.s32", "cvt.sat.s16.u32", "cvt.s32.s8", "cvt.u32.u8",
                                 "cvt.s32.s16", "cvt.sat.u32.s32", "cvt.sat.s32.u32"}),
                           r(), r());
      case 14:
        return fmt::format("{} {}, {};", pick({"cvt.s64.s32", "cvt.u64.u32", "cvt.s64.s16", "cvt.u64.u8"}), rd(), r());
      default:
        return fmt::format("{} {}, {};", pick({"cvt.u32.u64", "cvt.sat.s32.s64", "cvt.sat.u32.u64", "cvt.s16.s64"}),
                           r(), rd());
    }
  }

  std::string floating() {
    static const char* const binaryF[] = {"add.rn.f32",
                                          "sub.f32",
                                          "mul.rn.f32",
                                          "min.f32",
                                          "max.f32",
                                          "div.rn.f32",
                                          "add.ftz.f32",
                                          "mul.ftz.f32",
                                          "add.rz.f32",
                                          "add.rm.f32",
                                          "add.rp.f32",
                                          "sub.rm.f32",
                                          "mul.rp.f32",
                                          "mul.rz.f32",
                                          "div.rz.f32",
                                          "div.rm.f32",
                                          "div.rp.ftz.f32",
                                          "div.approx.f32",
                                          "div.full.f32",
                                          "add.sat.f32",
                                          "mul.rn.sat.f32",
                                          "min.NaN.f32",
                                          "max.NaN.f32",
                                          "min.ftz.NaN.f32",
                                          "max.xorsign.abs.f32",
                                          "copysign.f32",
                                          "sub.rn.ftz.sat.f32",
                                          "div.approx.ftz.f32"};
    static const char* const unaryF[] = {"abs.f32",
                                         "neg.f32",
                                         "sqrt.rn.f32",
                                         "rcp.rn.f32",
                                         "ex2.approx.f32",
                                         "lg2.approx.f32",
                                         "sin.approx.f32",
                                         "cos.approx.f32",
                                         "rsqrt.approx.f32",
                                         "tanh.approx.f32",
                                         "ex2.approx.ftz.f32",
                                         "lg2.approx.ftz.f32",
                                         "sin.approx.ftz.f32",
                                         "rcp.approx.f32",
                                         "sqrt.approx.f32",
                                         "sqrt.rz.f32",
                                         "sqrt.rm.ftz.f32",
                                         "sqrt.rp.f32",
                                         "rcp.rz.f32",
                                         "rcp.rm.f32",
                                         "rcp.rp.ftz.f32",
                                         "rcp.approx.ftz.f32",
                                         "rsqrt.approx.ftz.f32",
                                         "abs.ftz.f32",
                                         "neg.ftz.f32"};
    switch (rng_() % 8) {
      case 0:
      case 1: return fmt::format("{} {}, {}, {};", pick(binaryF), f(), f(), f());
      case 2: return fmt::format("{} {}, {};", pick(unaryF), f(), f());
      case 3:
        return fmt::format("{} {}, {}, {}, {};",
                           pick({"fma.rn.f32", "fma.rz.f32", "fma.rm.f32", "fma.rp.f32", "fma.rn.sat.f32",
                                 "fma.rn.ftz.f32", "mad.rn.f32", "mad.rz.ftz.f32"}),
                           f(), f(), f(), f());
      case 4:
        return fmt::format("testp.{}.f32 {}, {};",
                           pick({"finite", "infinite", "number", "notanumber", "normal", "subnormal"}), p(), f());
      case 5:
        return chance(2) ? fmt::format("slct.f32.s32 {}, {}, {}, {};", f(), f(), f(), r())
                         : fmt::format("slct.ftz.f32.f32 {}, {}, {}, {};", f(), f(), f(), f());
      case 6:
        return chance(3)
                   ? fmt::format("set.{}.f32.f32 {}, {}, {};", pick({"num", "lt", "geu"}), f(), f(), f())
                   : fmt::format("set.{}.f32 {}, {}, {};", pick({"lt.u32", "gtu.s32", "ne.ftz.u32"}), r(), f(), f());
      default: return fmt::format("{} {}, {}, {}, {};", pick({"slct.s32.s32", "slct.u32.s32"}), r(), r(), r(), r());
    }
  }

  std::string double64() {
    static const char* const binary[] = {"add.rn.f64", "sub.rz.f64", "mul.rm.f64", "mul.rp.f64", "div.rn.f64",
                                         "div.rz.f64", "min.f64",    "max.f64",    "add.rm.f64", "copysign.f64"};
    static const char* const unary[] = {"abs.f64",
                                        "neg.f64",
                                        "sqrt.rn.f64",
                                        "sqrt.rp.f64",
                                        "rcp.rn.f64",
                                        "rcp.rz.f64",
                                        "rcp.approx.ftz.f64",
                                        "rsqrt.approx.f64",
                                        "rsqrt.approx.ftz.f64"};
    switch (rng_() % 8) {
      case 0:
      case 1: return fmt::format("{} {}, {}, {};", pick(binary), fd(), fd(), fd());
      case 2: return fmt::format("{} {}, {};", pick(unary), fd(), fd());
      case 3:
        return fmt::format("{} {}, {}, {}, {};", pick({"fma.rn.f64", "fma.rm.f64", "fma.rz.f64", "mad.rp.f64"}), fd(),
                           fd(), fd(), fd());
      case 4:
        return fmt::format("testp.{}.f64 {}, {};", pick({"finite", "infinite", "notanumber", "normal", "subnormal"}),
                           p(), fd());
      case 5:
        return fmt::format("setp.{}.f64 {}, {}, {};", pick({"lt", "geu", "eq", "nan", "ne", "leu"}), p(), fd(), fd());
      case 6: return fmt::format("selp.f64 {}, {}, {}, {};", fd(), fd(), fd(), p());
      default:
        return chance(2) ? fmt::format("mov.b64 {}, {};", rd(), fd()) : fmt::format("mov.b64 {}, {};", fd(), rd());
    }
  }

  std::string conversion() {
    switch (rng_() % 12) {
      case 0:
        return fmt::format("cvt.{}.f32.{} {}, {};", pick({"rn", "rz", "rm", "rp"}), pick({"s32", "u32"}), f(), r());
      case 1:
        return fmt::format("cvt.{}.f32.{} {}, {};", pick({"rn", "rz", "rm", "rp"}), pick({"s64", "u64"}), f(), rd());
      case 2:
        return fmt::format("cvt.{}{}.{}.f32 {}, {};", pick({"rni", "rzi", "rmi", "rpi"}), chance(3) ? ".ftz" : "",
                           pick({"s32", "u32", "s16", "u16", "s8", "u8"}), r(), f());
      case 3:
        return fmt::format("cvt.{}.{}.f32 {}, {};", pick({"rni", "rzi", "rmi", "rpi"}), pick({"s64", "u64"}), rd(),
                           f());
      case 4:
        return fmt::format("cvt.{}.{}.f64 {}, {};", pick({"rni", "rzi", "rmi", "rpi"}),
                           pick({"s32", "u32", "s16", "u8"}), r(), fd());
      case 5:
        return chance(2) ? fmt::format("cvt.{}.f64.{} {}, {};", pick({"rn", "rz", "rm", "rp"}), pick({"s64", "u64"}),
                                       fd(), rd())
                         : fmt::format("cvt.rn.f64.{} {}, {};", pick({"s32", "u32", "s16"}), fd(), r());
      case 6:
        return chance(2) ? fmt::format("cvt.{}{}.f32.f64 {}, {};", pick({"rn", "rz", "rm", "rp"}),
                                       chance(3) ? ".ftz" : "", f(), fd())
                         : fmt::format("cvt{}.f64.f32 {}, {};", chance(3) ? ".ftz" : "", fd(), f());
      case 7:
        return fmt::format("cvt.{}.f32.f32 {}, {};",
                           pick({"rni", "rzi", "rmi", "rpi", "rni.ftz", "rzi.sat", "ftz.sat", "sat", "rpi.ftz.sat"}),
                           f(), f());
      case 8:  // half and bfloat16 scalars
        switch (rng_() % 6) {
          case 0: return fmt::format("cvt.{}.f16.f32 {}, {};", pick({"rn", "rz", "rn.relu", "rn.satfinite"}), h(), f());
          case 1: return fmt::format("cvt.f32.{} {}, {};", pick({"f16", "bf16"}), f(), h());
          case 2: return fmt::format("cvt.{}.bf16.f32 {}, {};", pick({"rn", "rz", "rn.relu"}), h(), f());
          case 3: return fmt::format("cvt.rn.f16.f64 {}, {};", h(), fd());
          case 4: return fmt::format("cvt.f64.f16 {}, {};", fd(), h());
          default: return fmt::format("cvt.{}.{}.f16 {}, {};", pick({"rni", "rzi"}), pick({"s32", "u16"}), r(), h());
        }
      case 9:
        return fmt::format("cvt.{}.{}.f32 {}, {}, {};", pick({"rn", "rz", "rn.relu", "rn.satfinite"}),
                           pick({"f16x2", "bf16x2"}), r(), f(), f());
      case 10:
        return chance(2) ? fmt::format("cvt.rn.satfinite.{}.f32 {}, {}, {};", pick({"e4m3x2", "e5m2x2"}), h(), f(), f())
                         : fmt::format("cvt.rn.f16x2.{} {}, {};", pick({"e4m3x2", "e5m2x2"}), r(), h());
      default: return fmt::format("cvt.rna.tf32.f32 {}, {};", r(), f());
    }
  }

  // f16x2 and bf16x2 in .b32 registers, f16 and bf16 scalars in .b16 ones
  std::string half() {
    switch (rng_() % 7) {
      case 0:
        return fmt::format("{} {}, {}, {};",
                           pick({"add.rn.f16x2", "sub.f16x2", "mul.rn.f16x2", "add.ftz.f16x2", "mul.sat.f16x2",
                                 "min.f16x2", "max.NaN.f16x2", "min.ftz.f16x2", "add.rn.bf16x2", "mul.rn.bf16x2",
                                 "min.bf16x2", "max.NaN.bf16x2", "sub.rn.bf16x2", "max.xorsign.abs.f16x2"}),
                           r(), r(), r());
      case 1:
        return fmt::format("{} {}, {}, {}, {};",
                           pick({"fma.rn.f16x2", "fma.rn.relu.f16x2", "fma.rn.sat.f16x2", "fma.rn.ftz.f16x2",
                                 "fma.rn.bf16x2", "fma.rn.relu.bf16x2"}),
                           r(), r(), r(), r());
      case 2:
        return fmt::format("{} {}, {};",
                           pick({"neg.f16x2", "abs.f16x2", "neg.bf16x2", "abs.bf16x2", "ex2.approx.f16x2",
                                 "tanh.approx.f16x2", "ex2.approx.ftz.bf16x2", "tanh.approx.bf16x2"}),
                           r(), r());
      case 3:
        return fmt::format("{} {}, {}, {};",
                           pick({"add.f16", "sub.rn.f16", "mul.ftz.f16", "min.f16", "max.NaN.f16", "add.rn.bf16",
                                 "mul.rn.bf16", "max.bf16"}),
                           h(), h(), h());
      case 4:
        return fmt::format("{} {}, {}, {}, {};", pick({"fma.rn.f16", "fma.rn.sat.f16", "fma.rn.bf16"}), h(), h(), h(),
                           h());
      case 5:
        return fmt::format("setp.{}.{} {}|{}, {}, {};", pick({"lt", "geu", "ne", "nan"}), pick({"f16x2", "bf16x2"}),
                           p(), p(), r(), r());
      default:
        return chance(2) ? fmt::format("mov.b32 {{{}, {}}}, {};", h(), h(), r())
                         : fmt::format("mov.b32 {}, {{{}, {}}};", r(), h(), h());
    }
  }

  std::string video() {
    const auto sel = [&] { return chance(2) ? "" : pick({".b0", ".b1", ".b2", ".b3", ".h0", ".h1"}); };
    const auto t = [&] { return pick({"u32", "s32"}); };
    switch (rng_() % 8) {
      case 0:
        return fmt::format("{}.{}.{}.{}{} {}, {}{}, {}{};", pick({"vadd", "vsub", "vabsdiff", "vmin", "vmax"}), t(),
                           t(), t(), chance(3) ? ".sat" : "", r(), r(), sel(), r(), sel());
      case 1:
        return fmt::format("{}.{}.{}.{}{}.{} {}, {}{}, {}{}, {};", pick({"vadd", "vsub", "vabsdiff", "vmin", "vmax"}),
                           t(), t(), t(), chance(3) ? ".sat" : "", pick({"add", "min", "max"}), r(), r(), sel(), r(),
                           sel(), r());
      case 2:
        return fmt::format("{}.{}.{}.u32.{} {}, {}{}, {}{};", pick({"vshl", "vshr"}), t(), t(), pick({"wrap", "clamp"}),
                           r(), r(), sel(), r(), sel());
      case 3:
        return fmt::format("vmad.{}.{}.{}{}{} {}, {}{}, {}{}, {};", t(), t(), t(), chance(3) ? ".sat" : "",
                           chance(3) ? ".shr7" : "", r(), r(), sel(), r(), sel(), r());
      case 4:
        return fmt::format("vset.{}.{}.{} {}, {}{}, {}{};", t(), t(), pick({"lt", "le", "eq", "ne", "gt", "ge"}), r(),
                           r(), sel(), r(), sel());
      case 5:
        return fmt::format("{}.{}.{}.{}{} {}, {}, {}, {};",
                           pick({"vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2"}), t(), t(), t(),
                           pick({"", ".sat", ".add"}), r(), r(), r(), r());
      case 6:
        return fmt::format("{}.{}.{}.{}{} {}, {}, {}, {};",
                           pick({"vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4"}), t(), t(), t(),
                           pick({"", ".sat", ".add"}), r(), r(), r(), r());
      default:
        return fmt::format("{}.{}.{}.{}{} {}, {}, {}, {};", pick({"vset2", "vset4"}), t(), t(),
                           pick({"lt", "le", "eq", "ne", "gt", "ge"}), chance(2) ? ".add" : "", r(), r(), r(), r());
    }
  }

  std::string compareSelect() {
    static const char* const cmpI[] = {"lt.s32", "gt.u32", "eq.b32", "ne.s32", "le.u32", "ge.s32", "lo.u32", "hs.u32"};
    static const char* const cmpF[] = {"lt.f32",  "gtu.f32", "eq.f32",     "nan.f32",
                                       "num.f32", "geu.f32", "ne.ftz.f32", "equ.f32"};
    switch (rng_() % 9) {
      case 0: return fmt::format("setp.{} {}, {}, {};", pick(cmpI), p(), r(), r());
      case 1: return fmt::format("setp.{} {}, {}, {};", pick(cmpF), p(), f(), f());
      case 2:
        return fmt::format("setp.{}.{}.f32 {}|{}, {}, {}, {}{};", pick({"lt", "ne", "gtu"}), pick({"and", "or", "xor"}),
                           p(), p(), f(), f(), chance(2) ? "!" : "", p());
      case 3: return fmt::format("setp.{}.s64 {}, {}, {};", pick({"lt", "ge", "ne"}), p(), rd(), rd());
      case 4: return fmt::format("{}.pred {}, {}, {};", pick({"and", "or", "xor"}), p(), p(), p());
      case 5: return fmt::format("not.pred {}, {};", p(), p());
      case 6:
        return chance(2) ? fmt::format("selp.b32 {}, {}, {}, {};", r(), r(), r(), p())
                         : fmt::format("selp.f32 {}, {}, {}, {};", f(), f(), f(), p());
      case 7: return fmt::format("selp.{} {}, {}, {}, {};", pick({"b64", "s64", "u64"}), rd(), rd(), rd(), p());
      default: return fmt::format("set.{}.u32.s32 {}, {}, {};", pick({"lt", "ne", "ge"}), r(), r(), r());
    }
  }

  // Warp-wide: full mask in uniform regions, the active lanes elsewhere (taken just before, in the same region).
  std::string warp(bool uniform) {
    const std::string mask = uniform ? "-1" : "%r25";
    const std::string prefix = uniform ? "" : "activemask.b32 %r25;\n";
    switch (rng_() % 9) {
      case 0:
        return prefix + fmt::format("shfl.sync.{}.b32 {}, {}, {}, {}, {};", pick({"bfly", "up", "down"}), r(), r(),
                                    1u << (rng_() % 5), chance(2) ? "31" : "0x1f08", mask);
      case 1: return prefix + fmt::format("shfl.sync.idx.b32 {}|{}, {}, {}, 31, {};", r(), p(), r(), r(), mask);
      case 2: return prefix + fmt::format("vote.sync.ballot.b32 {}, {}, {};", r(), p(), mask);
      case 3:
        return prefix + fmt::format("vote.sync.{}.pred {}, {}{}, {};", pick({"all", "any", "uni"}), p(),
                                    chance(2) ? "!" : "", p(), mask);
      case 4:
        return prefix + fmt::format("redux.sync.{} {}, {}, {};",
                                    pick({"add.u32", "add.s32", "min.u32", "min.s32", "max.u32", "max.s32", "and.b32",
                                          "or.b32", "xor.b32"}),
                                    r(), r(), mask);
      case 5: return prefix + fmt::format("match.any.sync.b32 {}, {}, {};", r(), r(), mask);
      case 6: return prefix + fmt::format("match.all.sync.b32 {}|{}, {}, {};", r(), p(), r(), mask);
      case 7: return prefix + fmt::format("match.any.sync.b64 {}, {}, {};", r(), rd(), mask);
      default: return uniform ? fmt::format("elect.sync {}|{}, -1;", r(), p()) : fmt::format("activemask.b32 {};", r());
    }
  }

  std::string instruction(bool uniform) {
    switch (rng_() % 24) {
      case 0:
      case 1:
      case 2:
      case 3: return integer();
      case 4:
      case 5:
      case 6: return floating();
      case 7:
      case 8: return double64();
      case 9:
      case 10: return conversion();
      case 11:
      case 12: return half();
      case 13: return video();
      case 14:
      case 15: return compareSelect();
      case 16: return slotAccess("shared");
      case 17: return slotAccess(pick({"global", "local", ""}));
      case 18:
      case 19: return atomic();
      case 20:
      case 21: return warp(uniform);
      default: return chance(2) ? integer() : floating();
    }
  }

  std::mt19937_64 rng_;
  std::string body_;
  int labels_ = 0;
  int threads_ = 64;
  std::string function_;
  bool deterministic_ = false;
};

}  // namespace ptxtest
