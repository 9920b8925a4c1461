#include "exec/lower.h"

#include "exec/control.h"
#include "exec/device_runtime.h"
#include "exec/handlers.h"
#include "exec/lower_tables.h"
#include "exec/memory.h"
#include "exec/texture.h"
#include "ptx/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <array>
#include <optional>
#include <map>
#include <set>

namespace ptx::exec {

namespace {

using ptx::Instruction;
using ptx::Opcode;
using ptx::Operand;
using ptx::OperandKind;
using ptx::SymKind;
using ptx::Type;
using ptx::TypeKind;
using num::Round;

struct LowerError {
  uint32_t line;
  std::string message;
};

[[noreturn]] void fail(uint32_t line, std::string msg) { throw LowerError{line, std::move(msg)}; }

constexpr uint32_t kZeroReg = 0;       // 256 bytes of zeros at the start of every register file
constexpr uint32_t kFirstFree = 256;

uint32_t alignUp(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

unsigned sizeOf(Type t) { return t == Type::pred ? 1 : ptx::typeSize(t); }
bool isSigned(Type t) { return ptx::typeKind(t) == TypeKind::Signed; }
bool isFloat(Type t) { return ptx::typeKind(t) == TypeKind::Float; }

// ---- type dispatch helpers --------------------------------------------------------------------------------------

template <class F> Handler byInt(Type t, uint32_t line, F f) {
  switch (t) {
    case Type::b8: case Type::u8: return f(uint8_t{});
    case Type::s8: return f(int8_t{});
    case Type::b16: case Type::u16: return f(uint16_t{});
    case Type::s16: return f(int16_t{});
    case Type::b32: case Type::u32: return f(uint32_t{});
    case Type::s32: return f(int32_t{});
    case Type::b64: case Type::u64: return f(uint64_t{});
    case Type::s64: return f(int64_t{});
    default: fail(line, fmt::format("type {} not supported for this instruction", ptx::typeName(t)));
  }
}
// Integers of 16/32/64 bits only (the ISA's arithmetic types).
template <class F> Handler byInt163264(Type t, uint32_t line, F f) {
  switch (t) {
    case Type::b16: case Type::u16: return f(uint16_t{});
    case Type::s16: return f(int16_t{});
    case Type::b32: case Type::u32: return f(uint32_t{});
    case Type::s32: return f(int32_t{});
    case Type::b64: case Type::u64: return f(uint64_t{});
    case Type::s64: return f(int64_t{});
    default: fail(line, fmt::format("type {} not supported for this instruction", ptx::typeName(t)));
  }
}
template <class F> Handler byBits(unsigned size, uint32_t line, F f) {
  switch (size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: fail(line, fmt::format("operand size {} not supported", size));
  }
}
template <class F> Handler byFloat(Type t, uint32_t line, F f) {
  switch (t) {
    case Type::f32: return f(float{});
    case Type::f64: return f(double{});
    default: fail(line, fmt::format("type {} not supported for this instruction", ptx::typeName(t)));
  }
}
template <class F> Handler byRound(Round r, F f) {
  switch (r) {
    case num::RZ: return f(std::integral_constant<Round, num::RZ>{});
    case num::RM: return f(std::integral_constant<Round, num::RM>{});
    case num::RP: return f(std::integral_constant<Round, num::RP>{});
    default: return f(std::integral_constant<Round, num::RN>{});
  }
}
template <class F> Handler byBool(bool b, F f) {
  return b ? f(std::true_type{}) : f(std::false_type{});
}

Round roundingOf(ptx::Rounding r) {
  switch (r) {
    case ptx::Rounding::rz: case ptx::Rounding::rzi: return num::RZ;
    case ptx::Rounding::rm: case ptx::Rounding::rmi: return num::RM;
    case ptx::Rounding::rp: case ptx::Rounding::rpi: return num::RP;
    default: return num::RN;
  }
}
bool isIntRounding(ptx::Rounding r) {
  return r == ptx::Rounding::rni || r == ptx::Rounding::rzi || r == ptx::Rounding::rmi || r == ptx::Rounding::rpi;
}

template <class F> Handler byCmp(ptx::CmpOp c, uint32_t line, F f) {
  using C = h::Cmp;
  switch (c) {
#define PTX_CMP_CASE(n, e) case ptx::CmpOp::n: return f(std::integral_constant<C, C::e>{});
    PTX_CMP_CASE(eq, EQ) PTX_CMP_CASE(ne, NE) PTX_CMP_CASE(lt, LT) PTX_CMP_CASE(le, LE) PTX_CMP_CASE(gt, GT)
    PTX_CMP_CASE(ge, GE) PTX_CMP_CASE(lo, LO) PTX_CMP_CASE(ls, LS) PTX_CMP_CASE(hi, HI) PTX_CMP_CASE(hs, HS)
    PTX_CMP_CASE(equ, EQU) PTX_CMP_CASE(neu, NEU) PTX_CMP_CASE(ltu, LTU) PTX_CMP_CASE(leu, LEU)
    PTX_CMP_CASE(gtu, GTU) PTX_CMP_CASE(geu, GEU) PTX_CMP_CASE(num, NUM) PTX_CMP_CASE(nan, NAN_)
#undef PTX_CMP_CASE
    default: fail(line, "missing comparison operator");
  }
}

struct SatAddF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) + int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct SatSubF {
  template <class T> static PTX_HOT T f(T a, T b) {
    int64_t r = int64_t(a) - int64_t(b);
    return T(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
  }
};
struct MinReluF {
  template <class T> static PTX_HOT T f(T a, T b) { T r = a < b ? a : b; return r < 0 ? T(0) : r; }
};
struct MaxReluF {
  template <class T> static PTX_HOT T f(T a, T b) { T r = a > b ? a : b; return r < 0 ? T(0) : r; }
};
// min/max.xorsign.abs: the min/max of the magnitudes with the sign sign(a) ^ sign(b).
template <bool Max> struct FXorsignAbs {
  template <class T> static PTX_HOT T f(T a, T b) {
    T m = Max ? h::FMax::f(std::fabs(a), std::fabs(b)) : h::FMin::f(std::fabs(a), std::fabs(b));
    if (m != m) return m;
    return std::signbit(a) != std::signbit(b) ? -m : m;
  }
};
struct FMinNaN {
  template <class T> static PTX_HOT T f(T a, T b) { return (a != a || b != b) ? T(NAN) : h::FMin::f(a, b); }
};
struct FMaxNaN {
  template <class T> static PTX_HOT T f(T a, T b) { return (a != a || b != b) ? T(NAN) : h::FMax::f(a, b); }
};

template <class T> const Op* testp(Warp& w, const Op* op) {
  const T* a = h::R<T>(w, op->a);
  uint32_t kind = op->aux;
  h::store<uint8_t>(w, op->d, [&](int i) -> uint8_t {
    T x = a[i];
    switch (kind) {
      case 0: return std::isfinite(x);
      case 1: return std::isinf(x);
      case 2: return !std::isnan(x);
      case 3: return std::isnan(x);
      case 4: return std::isnormal(x) || x == 0;  // zero counts as normal on the GPU (measured on an H200)
      default: return std::fpclassify(x) == FP_SUBNORMAL;
    }
  });
  return op + 1;
}

// copysign.type d, a, b: the sign of a with the rest of b.
template <class U> const Op* copysignOp(Warp& w, const Op* op) {
  const U* a = h::R<U>(w, op->a);
  const U* b = h::R<U>(w, op->b);
  constexpr U s = U(1) << (sizeof(U) * 8 - 1);
  h::store<U>(w, op->d, [&](int i) { return U((a[i] & s) | (b[i] & ~s)); });
  return op + 1;
}

// ---- per-kernel lowering ---------------------------------------------------------------------------------------

struct FuncInstance {
  uint32_t irIndex = 0;
  uint32_t codeIndex = 0;  // Program::functions index
  std::vector<uint32_t> regOffset;     // per IR register
  std::vector<uint32_t> localOffset;   // per Function::locals: frame offset (local/param) or shared offset
  std::vector<uint32_t> paramOffset;   // frame offsets of params (non-entry)
  std::vector<uint32_t> returnOffset;
  uint32_t frameBytes = 0;
};

// Functions the driver provides to PTX (declared `.extern .func`, no body): the single table of built-ins.
// Arguments are loaded into the op's a, b, c, e registers in order; the result (if any) comes back in d.
struct BuiltinFunction {
  std::string_view name;
  Handler handler;
  bool hasResult;
  Type result;
  unsigned argCount;
  std::array<Type, 4> args;
};
constexpr BuiltinFunction kBuiltinFunctions[] = {
    {"vprintf", &ctl::vprintf, true, Type::b32, 2, {Type::b64, Type::b64}},
    // (message, file, line, function[, char size]): the fifth argument is not needed
    {"__assertfail", &ctl::assertFail, false, Type::b32, 4, {Type::b64, Type::b64, Type::b32, Type::b64}},
    {"__assert_fail", &ctl::assertFail, false, Type::b32, 4, {Type::b64, Type::b64, Type::b32, Type::b64}},
    {"malloc", &ctl::deviceMalloc, true, Type::b64, 1, {Type::b64}},
    {"free", &ctl::deviceFree, false, Type::b32, 1, {Type::b64}},
    // ---- CUDA graph conditional nodes (issue 17): libcudadevrt's function on a GPU ----
    {"cudaGraphSetConditional", &ctl::graphSetConditional, false, Type::b32, 2, {Type::b64, Type::b32}},
};

struct PendingTarget {
  enum Kind : uint8_t { Inst, RpcBlock, Absolute, BrxInst };
  uint32_t op;
  uint32_t value;  // IR instruction, IR block (0xffffffff = function end) or op index; resolved: op index
  Kind kind;
  bool rpc = false;
};

class KernelLowerer {
 public:
  KernelLowerer(const ptx::Module& m, Program& p, const std::vector<uint32_t>& globalMap)
      : mod_(m), prog_(p), globalMap_(globalMap) {}

  void lowerKernel(uint32_t entryIr);

 private:
  // -- layout
  void collectReachable(uint32_t f, std::set<uint32_t>& seen, std::vector<uint32_t>& order);
  // A call or address written before a function's definition names its earlier declaration (`-G` PTX declares
  // every function first): map that declaration to the definition of the same name, if the module has one.
  uint32_t definitionOf(uint32_t irFn);
  std::optional<std::map<ptx::StrId, uint32_t>> definitionsByName_;
  void layoutFunction(FuncInstance& fi);
  uint32_t allocReg(uint32_t bytesPerLane) {
    uint32_t off = rfTop_;
    rfTop_ = alignUp(rfTop_ + 32 * std::max(bytesPerLane, 1u), 64);
    return off;
  }
  // -- constants and temporaries (allocated after the declared registers)
  uint32_t literal(uint64_t bits, unsigned size) {
    auto key = std::make_pair(size, bits);
    auto it = literals_.find(key);
    if (it != literals_.end()) return it->second;
    uint32_t off = allocReg(size);
    ConstSlot s;
    s.offset = off;
    s.size = uint8_t(size);
    s.kind = ConstKind::Literal;
    s.value = bits;
    code_->consts.push_back(s);
    literals_[key] = off;
    return off;
  }
  uint32_t globalAddress(uint32_t progGlobal, int64_t addend, unsigned size) {
    auto key = std::make_tuple(progGlobal, addend, size);
    auto it = globalAddrs_.find(key);
    if (it != globalAddrs_.end()) return it->second;
    uint32_t off = allocReg(size);
    ConstSlot s;
    s.offset = off;
    s.size = uint8_t(size);
    s.kind = ConstKind::GlobalAddress;
    s.value = progGlobal;
    s.addend = addend;
    code_->consts.push_back(s);
    globalAddrs_[key] = off;
    return off;
  }
  uint32_t temp(unsigned size) {
    auto& pool = temps_[size];
    uint32_t& used = tempUsed_[size];
    if (used == pool.size()) pool.push_back(allocReg(size));
    return pool[used++];
  }
  void resetTemps() { tempUsed_.clear(); }

  // -- emission
  Op& emit(Handler fn) {
    prog_.ops.emplace_back();
    Op& o = prog_.ops.back();
    o.fn = fn;
    o.line = line_;
    return o;
  }
  uint32_t here() const { return uint32_t(prog_.ops.size()); }

  // -- operands
  const Operand& opnd(const Instruction& in, unsigned k) const {
    if (k >= in.numOperands) fail(line_, fmt::format("{}: missing operand {}", ptx::opcodeMnemonic(in.opcode), k + 1));
    return fn_->operands[in.firstOperand + k];
  }
  uint32_t regOf(uint32_t id) const { return fi_->regOffset.at(id); }
  Type regType(uint32_t id) const { return fn_->registers.at(id).type; }
  uint32_t src(const Operand& o, Type t);
  uint32_t srcPred(const Operand& o, bool& negated);
  struct Dst {
    uint32_t off = 0;     // where the instruction writes (type-sized)
    uint32_t reg = 0;     // the real register (if a conversion follows)
    unsigned regSize = 0;
    bool convert = false;
    bool signExtend = false;
    unsigned size = 0;
  };
  Dst dst(const Operand& o, Type t);
  void finish(const Dst& d);
  uint32_t symbolAddress(const Operand& o, unsigned size);
  Handler widthConverter(unsigned dsize, unsigned ssize, bool sext);

  // -- instructions
  void lowerInstruction(uint32_t idx);
  void lowerArith(const Instruction& in);
  void lowerFloat(const Instruction& in);
  void lowerHalf(const Instruction& in);
  void lowerCompare(const Instruction& in);
  void lowerMov(const Instruction& in);
  void lowerCvt(const Instruction& in);
  void lowerVideo(const Instruction& in);
  void lowerLdSt(const Instruction& in, bool isStore);
  void lowerAtom(const Instruction& in, bool isRed);
  void lowerVectorAtom(const Instruction& in, bool isRed, mem::AOp aop);
  void lowerCall(const Instruction& in);
  void lowerDirectCall(uint32_t calleeIr, const std::vector<const Operand*>& args,
                       const std::vector<const Operand*>& rets);
  void lowerIndirectCall(const Instruction& in);
  // functions whose address the module takes (operands other than a call target, initializers): the candidates
  // of indirect calls
  const std::vector<uint32_t>& addressTakenFunctions();
  std::optional<std::vector<uint32_t>> addressTaken_;
  void lowerWarp(const Instruction& in);
  void lowerBar(const Instruction& in);
  void lowerTexture(const Instruction& in);
  void lowerBody(const Instruction& in);
  void lowerRuntimeCall(std::string_view name, const RuntimeFunction& f, const std::vector<const Operand*>& args,
                        const std::vector<const Operand*>& rets);
  void lowerBuiltinCall(const Instruction& in, std::string_view name, const std::vector<const Operand*>& args,
                        const std::vector<const Operand*>& rets);
  void unsupported(const Instruction& in, std::string_view why = "");
  void lowerHalfCompare(const Instruction& in);
  void emitSetp(Handler hnd, uint32_t a, uint32_t b, uint32_t c, uint32_t aux, const Operand& d0);
  uint32_t usedBytesMask() const;
  void lowerPacked16(const Instruction& in);

  // memory address: returns base register offset and immediate; space resolved
  struct Addr {
    uint32_t base = kZeroReg;
    unsigned baseSize = 8;
    int64_t imm = 0;
    mem::Space space = mem::Global;
    bool paramUniform = false;
  };
  Addr address(const Instruction& in, const Operand& o);

  const ptx::Module& mod_;
  Program& prog_;
  const std::vector<uint32_t>& globalMap_;
  KernelCode* code_ = nullptr;
  const ptx::Function* fn_ = nullptr;
  FuncInstance* fi_ = nullptr;
  std::vector<FuncInstance> instances_;
  std::map<uint32_t, uint32_t> instanceOfIr_;  // IR function -> instances_ index
  uint32_t rfTop_ = kFirstFree;
  uint32_t line_ = 0;
  std::map<std::pair<unsigned, uint64_t>, uint32_t> literals_;
  std::map<std::tuple<uint32_t, int64_t, unsigned>, uint32_t> globalAddrs_;
  std::map<unsigned, std::vector<uint32_t>> temps_;
  std::map<unsigned, uint32_t> tempUsed_;
  std::vector<PendingTarget> pending_;
  // per function being lowered
  std::vector<uint32_t> instOp_;     // IR instruction -> op index of its first op (reconv included)
  std::vector<uint32_t> blockOf_;    // IR instruction -> block
  std::vector<uint32_t> blockStart_; // block -> first IR instruction
  std::vector<int32_t> ipdom_;       // block -> ipdom block (-1 = function end)
  uint32_t funcEndOp_ = 0;
  // shared memory layout of this kernel
  std::map<uint32_t, uint32_t> moduleSharedOffset_;  // module global index -> shared offset
  uint32_t sharedTop_ = 0;
  bool hasDynamicShared_ = false;
  uint32_t frameAlign_ = 16;     // every frame's size is a multiple of the largest .local/.param alignment
  uint32_t sharedAlign_ = 16;    // largest .shared alignment (static and dynamic)
  uint32_t dynamicSharedAlign_ = 16;   // largest alignment of an extern .shared declaration
  std::vector<std::pair<uint32_t, uint32_t>> dynamicSharedUses_;  // (op index, unused)
  std::vector<uint32_t> dynamicSharedSlots_;                       // literal slots to patch with the dynamic base
  std::set<uint32_t> usedModuleShared_;
  KernelInfo* info_ = nullptr;
  std::vector<PendingTarget> resolved_;
  std::vector<std::pair<uint32_t, uint32_t>> callOps_;  // (op index, IR callee)
  std::vector<uint32_t> callerOf_;                      // per call site of this kernel: caller instance
  bool usesBarriers_ = false;
  uint32_t dynamicSharedBase_ = 0;
  // Entry-function registers whose every definition yields the same launch-wide value (kernel parameter loads,
  // %ntid/%nctaid, cvta.to.global/mov of those): they become constant registers and their definitions vanish.
  struct LaunchConst {
    ConstKind kind;
    uint64_t value;
    unsigned size;
  };
  std::map<uint32_t, LaunchConst> launchConstRegs_;
  std::vector<bool> skipInst_;
  void findLaunchConstants(const ptx::Function& fn);
  // `add.s64 %rd, %base, %offset` whose sum only addresses one later scalar global ld/st of the same block: the
  // memory op computes base + offset itself (one op less per access; see mem::globalAddresses). Per IR instruction
  // of the function being lowered: the add folded into it (kNoIndex: none), and whether it is such an add.
  std::vector<uint32_t> foldedAdd_;
  std::vector<bool> addFolded_;
  uint32_t curInst_ = 0;
  uint32_t lastSetp_ = ~0u;  // op index of the last setp emitted (see h::kSetpThenBranch)
  void findAddressAdds();
  // Whether instruction `in` may write register reg: its first operand names it (a store's address counts too) or
  // it is a call (the callee is not looked into).
  bool mayWrite(const Instruction& in, uint32_t reg) const;
  // The last instruction before `before`, in its block, that may write reg; kNoIndex: none.
  uint32_t lastWriteInBlock(uint32_t before, uint32_t reg) const;
  bool writtenBetween(uint32_t first, uint32_t end, uint32_t reg) const;  // by an instruction in [first, end)
  // `mul.wide.{s32,u32} %off, %i, 2^k` whose every use is the offset of such a folded add with a launch-constant
  // base (a kernel parameter): the accesses compute base + (%i << k) themselves and the mul is not emitted either.
  // Per IR instruction: the mul folded into the access (kNoIndex: none), and whether it is such a mul.
  std::vector<uint32_t> scaledIndex_;
  std::vector<bool> mulFolded_;
  void findScaledIndices();
  // Scalar shared-memory accesses of one block through the same base register, which nothing in between writes:
  // the first computes the layout of the register's 32 values into a per-warp slot, the others reuse it (see
  // mem::sharedLayout). Per IR instruction: the op's aux (0: none).
  std::vector<uint32_t> sharedLayoutTag_;
  void findSharedLayoutChains();
  // `ld.shared.f32 %x, [..]; ld.shared.f32 %y, [..]; fma.rn.f32 %d, %x, %y, %c` (either order of %x, %y) whose loaded
  // registers nothing else mentions: the inner product step of shared-memory tiles. Such triples in a row where
  // each fma accumulates into the previous one's result, which nothing else mentions either (an unrolled inner
  // product), get one fused op in front of them (mem::fmaSharedChain): it runs the whole chain with the sum in host
  // registers, or falls through to the original ops when its full-warp fast path does not apply.
  // Per IR instruction: the number of triples of the chain it starts (0: none).
  std::vector<uint32_t> sharedFmaTriple_;
  void findSharedFmaTriples();
  // Per register of the function being lowered: how many times instructions mention it (reads, writes, guards).
  std::vector<uint32_t> mentions_;
  void countMentions();
  void emitSharedFma(uint32_t first);
  // Calls f(register index) for every register an operand names (vectors, lists, pairs and address bases included).
  template <class F> void forEachRegister(const Operand& o, F&& f) const {
    auto one = [&](const Operand& x) {
      if (x.kind == OperandKind::Reg) f(x.index);
      else if (x.kind == OperandKind::RegPair) {
        f(x.index);
        f(uint32_t(x.value));
      } else if (x.kind == OperandKind::Address && x.symKind == SymKind::None) f(x.index);
    };
    if (o.kind == OperandKind::Vector || o.kind == OperandKind::List || o.kind == OperandKind::Bracket) {
      for (int64_t q = 0; q < o.value; ++q) one(fn_->elems[o.index + uint32_t(q)]);
    } else {
      one(o);
    }
  }
  std::vector<std::vector<uint32_t>> brxTargets_;        // per brx of the current function: IR instructions
  std::vector<std::pair<uint32_t, uint32_t>> brxPending_;  // (brxTargets_ index, Program::brxTables index)

 public:
  std::vector<PendingTarget>& resolved() { return resolved_; }
};

// ---- reachability, layouts -------------------------------------------------------------------------------------

// The callee of `call` is its first operand that is not a list (return values and arguments are lists).
static const Operand* calleeOperand(const ptx::Function& fn, const Instruction& in) {
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn.operands[in.firstOperand + k];
    if (o.kind == OperandKind::Symbol || o.kind == OperandKind::Reg) return &o;
  }
  return nullptr;
}
static bool isIndirectCall(const ptx::Function& fn, const Instruction& in) {
  const Operand* c = calleeOperand(fn, in);
  return c && c->kind == OperandKind::Reg;
}

const std::vector<uint32_t>& KernelLowerer::addressTakenFunctions() {
  if (addressTaken_) return *addressTaken_;
  std::set<uint32_t> taken;
  for (const ptx::Function& fn : mod_.functions) {
    for (const Instruction& in : fn.instructions) {
      const Operand* callee = in.opcode == Opcode::Call ? calleeOperand(fn, in) : nullptr;
      for (uint32_t k = 0; k < in.numOperands; ++k) {
        const Operand& o = fn.operands[in.firstOperand + k];
        if (&o != callee && (o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) &&
            o.symKind == SymKind::Function)
          taken.insert(definitionOf(o.index));
      }
    }
  }
  for (const ptx::Variable& v : mod_.globals)
    for (const auto& r : v.relocs)
      if (r.symKind == SymKind::Function) taken.insert(definitionOf(r.index));
  addressTaken_.emplace();
  for (uint32_t f : taken)
    if (mod_.functions[f].hasBody && !mod_.functions[f].isEntry) addressTaken_->push_back(f);
  return *addressTaken_;
}

uint32_t KernelLowerer::definitionOf(uint32_t irFn) {
  if (mod_.functions[irFn].hasBody) return irFn;
  if (!definitionsByName_) {
    definitionsByName_.emplace();
    for (uint32_t k = 0; k < mod_.functions.size(); ++k) {
      const ptx::Function& g = mod_.functions[k];
      if (g.hasBody && !g.isEntry) definitionsByName_->emplace(g.name, k);
    }
  }
  auto it = definitionsByName_->find(mod_.functions[irFn].name);
  return it == definitionsByName_->end() ? irFn : it->second;
}

void KernelLowerer::collectReachable(uint32_t f, std::set<uint32_t>& seen, std::vector<uint32_t>& order) {
  f = definitionOf(f);
  if (!seen.insert(f).second) return;
  order.push_back(f);
  const ptx::Function& fn = mod_.functions[f];
  for (const Instruction& in : fn.instructions) {
    if (in.opcode == Opcode::Call && isIndirectCall(fn, in))
      for (uint32_t g : addressTakenFunctions()) collectReachable(g, seen, order);
    for (uint32_t k = 0; k < in.numOperands; ++k) {
      const Operand& o = fn.operands[in.firstOperand + k];
      if ((o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) && o.symKind == SymKind::Function) {
        // a kernel's address (a device-side launch, exec/device_runtime.cpp) is not a call into it
        const ptx::Function& g = mod_.functions[definitionOf(o.index)];
        if (g.hasBody && !g.isEntry) collectReachable(o.index, seen, order);
      }
      if ((o.kind == OperandKind::Symbol || o.kind == OperandKind::Address) && o.symKind == SymKind::Global) {
        if (mod_.globals[o.index].space == ptx::Space::shared) usedModuleShared_.insert(o.index);
      }
    }
  }
}

uint32_t varAlign(const ptx::Variable& v) {
  uint32_t a = v.align ? v.align : std::max(1u, ptx::typeSize(v.type));
  return std::max(a, 1u);
}

void KernelLowerer::layoutFunction(FuncInstance& fi) {
  const ptx::Function& fn = mod_.functions[fi.irIndex];
  fi.regOffset.resize(fn.registers.size());
  for (size_t r = 0; r < fn.registers.size(); ++r) {
    const ptx::Register& reg = fn.registers[r];
    if (fn.isEntry && launchConstRegs_.count(uint32_t(r))) continue;  // placed with the constants
    if (reg.vec) fail(fn.loc.line, "vector registers are not supported");
    unsigned sz = sizeOf(reg.type);
    if (sz == 0 || (sz > 8 && sz != 16)) fail(fn.loc.line, fmt::format("register type {} not supported", ptx::typeName(reg.type)));
    fi.regOffset[r] = allocReg(sz);
  }
  uint32_t frame = 0;
  if (!fn.isEntry) {
    for (const auto& p : fn.params) {
      frame = alignUp(frame, varAlign(p));
      fi.paramOffset.push_back(frame);
      frame += uint32_t(p.size ? p.size : p.elementSize());
    }
    for (const auto& p : fn.returns) {
      frame = alignUp(frame, varAlign(p));
      fi.returnOffset.push_back(frame);
      frame += uint32_t(p.size ? p.size : p.elementSize());
    }
  }
  fi.localOffset.assign(fn.locals.size(), 0);
  for (size_t k = 0; k < fn.locals.size(); ++k) {
    const ptx::Variable& v = fn.locals[k];
    uint64_t size = v.size ? v.size : v.elementSize();
    if (v.space == ptx::Space::local || v.space == ptx::Space::param) {
      frame = alignUp(frame, varAlign(v));
      fi.localOffset[k] = frame;
      frame += uint32_t(size);
    } else if (v.space == ptx::Space::shared) {
      sharedAlign_ = std::max(sharedAlign_, varAlign(v));
      if (v.linkage == ptx::Linkage::extern_) {
        dynamicSharedAlign_ = std::max(dynamicSharedAlign_, varAlign(v));
        hasDynamicShared_ = true;
        fi.localOffset[k] = 0xffffffffu;  // dynamic: patched later
      } else {
        sharedTop_ = alignUp(sharedTop_, varAlign(v));
        fi.localOffset[k] = sharedTop_;
        sharedTop_ += uint32_t(size);
      }
    } else {
      fail(v.loc.line, "variables of this state space inside a function body are not supported");
    }
  }
  fi.frameBytes = alignUp(frame, frameAlign_);
}

// ---- operands ----------------------------------------------------------------------------------------------------

Handler KernelLowerer::widthConverter(unsigned dsize, unsigned ssize, bool sext) {
  auto pick = [&](auto d) -> Handler {
    using D = decltype(d);
    switch (ssize) {
      case 1: return sext ? &h::convertWidth<D, int8_t> : &h::convertWidth<D, uint8_t>;
      case 2: return sext ? &h::convertWidth<D, int16_t> : &h::convertWidth<D, uint16_t>;
      case 4: return sext ? &h::convertWidth<D, int32_t> : &h::convertWidth<D, uint32_t>;
      default: return sext ? &h::convertWidth<D, int64_t> : &h::convertWidth<D, uint64_t>;
    }
  };
  return byBits(dsize, line_, pick);
}

uint32_t KernelLowerer::symbolAddress(const Operand& o, unsigned size) {
  int64_t off = o.value;
  switch (o.symKind) {
    case SymKind::Global: {
      const ptx::Variable& v = mod_.globals[o.index];
      if (v.space == ptx::Space::shared) {
        if (v.linkage == ptx::Linkage::extern_) return literal(uint64_t(dynamicSharedBase_ + off), size);
        return literal(uint64_t(moduleSharedOffset_.at(o.index) + off), size);
      }
      uint32_t g = globalMap_[o.index];
      if (g == kNoIndex) fail(line_, fmt::format("address of '{}' is not supported", mod_.str(v.name)));
      return globalAddress(g, off, size);
    }
    case SymKind::Local: {
      const ptx::Variable& v = fn_->locals[o.index];
      if (v.space == ptx::Space::shared) {
        if (v.linkage == ptx::Linkage::extern_) return literal(uint64_t(dynamicSharedBase_ + off), size);
        return literal(uint64_t(fi_->localOffset[o.index] + off), size);
      }
      // local / param variable in the frame: frame-relative
      uint32_t t = temp(size);
      Op& op = emit(&ctl::localAddr);
      op.d = t;
      op.imm = int64_t(fi_->localOffset[o.index]) + off;
      op.f = size;
      return t;
    }
    case SymKind::Param: {
      if (fn_->isEntry) return literal(uint64_t(info_->params.at(o.index).offset + off), size);
      uint32_t t = temp(size);
      Op& op = emit(&ctl::localAddr);
      op.d = t;
      op.imm = int64_t(fi_->paramOffset.at(o.index)) + off;
      op.f = size;
      return t;
    }
    case SymKind::Return: {
      uint32_t t = temp(size);
      Op& op = emit(&ctl::localAddr);
      op.d = t;
      op.imm = int64_t(fi_->returnOffset.at(o.index)) + off;
      op.f = size;
      return t;
    }
    case SymKind::Function:
      // Function addresses are opaque handles usable only by indirect calls.
      return literal(kFunctionAddressBase | definitionOf(o.index), size);
    default: fail(line_, "unsupported symbol operand");
  }
}

uint32_t KernelLowerer::src(const Operand& o, Type t) {
  unsigned size = sizeOf(t);
  switch (o.kind) {
    case OperandKind::Reg: {
      if (o.sel) fail(line_, "register component selectors are not supported");
      uint32_t r = regOf(o.index);
      Type rt = regType(o.index);
      unsigned rs = sizeOf(rt);
      if ((rt == Type::pred) != (t == Type::pred)) fail(line_, "predicate/non-predicate operand mismatch");
      if (rs == size) return r;
      uint32_t tmp = temp(size);
      Op& op = emit(widthConverter(size, rs, isSigned(t) || (rs > size ? false : isSigned(rt))));
      op.d = tmp;
      op.a = r;
      return tmp;
    }
    case OperandKind::Imm: {
      uint64_t v = uint64_t(o.value);
      if (t == Type::f32) return literal(std::bit_cast<uint32_t>(float(int64_t(v))), 4);
      if (t == Type::f64) return literal(std::bit_cast<uint64_t>(double(int64_t(v))), 8);
      if (t == Type::pred) return literal(v != 0, 1);
      if (size < 8) v &= (uint64_t(1) << (8 * size)) - 1;
      return literal(v, size);
    }
    case OperandKind::FImm: {
      uint64_t bits = uint64_t(o.value);
      if (t == Type::f32 && o.immBits == 64) return literal(std::bit_cast<uint32_t>(float(std::bit_cast<double>(bits))), 4);
      if (t == Type::f64 && o.immBits == 32)
        return literal(std::bit_cast<uint64_t>(double(std::bit_cast<float>(uint32_t(bits)))), 8);
      if (t == Type::f16 || t == Type::bf16) {
        double d = o.immBits == 32 ? double(std::bit_cast<float>(uint32_t(bits))) : std::bit_cast<double>(bits);
        return literal(t == Type::f16 ? num::doubleToHalf(d) : num::floatToBf16(float(d)), 2);
      }
      if (size < 8) bits &= (uint64_t(1) << (8 * size)) - 1;
      return literal(bits, size);
    }
    case OperandKind::Symbol: return symbolAddress(o, size == 4 ? 4 : 8);
    case OperandKind::Special: {
      auto sr = static_cast<ptx::SpecialReg>(o.index);
      unsigned ss = ptx::specialRegSize(sr);
      uint32_t tmp = temp(ss);
      uint32_t component = ptx::specialRegHasComponents(sr) ? ptx::selComponent(o.sel) : 0;
      Op& op = emit(ctl::sregHandler(sr, component));
      op.d = tmp;
      op.aux = o.index;
      op.e = component;
      op.f = ss;
      if (ss == size) return tmp;
      uint32_t t2 = temp(size);
      Op& c = emit(widthConverter(size, ss, false));
      c.d = t2;
      c.a = tmp;
      return t2;
    }
    default: fail(line_, "unsupported source operand");
  }
}

uint32_t KernelLowerer::srcPred(const Operand& o, bool& negated) {
  negated = o.negated();
  return src(o, Type::pred);
}

KernelLowerer::Dst KernelLowerer::dst(const Operand& o, Type t) {
  Dst d;
  d.size = sizeOf(t);
  if (o.kind == OperandKind::Sink) {
    d.off = temp(d.size);
    return d;
  }
  if (o.kind != OperandKind::Reg) fail(line_, "destination must be a register");
  if (o.sel) fail(line_, "register component selectors are not supported");
  uint32_t r = regOf(o.index);
  Type rt = regType(o.index);
  unsigned rs = sizeOf(rt);
  if ((rt == Type::pred) != (t == Type::pred)) fail(line_, "predicate/non-predicate destination mismatch");
  if (rs == d.size) {
    d.off = r;
    return d;
  }
  d.off = temp(d.size);
  d.reg = r;
  d.regSize = rs;
  d.convert = true;
  d.signExtend = isSigned(t);
  return d;
}

void KernelLowerer::finish(const Dst& d) {
  if (!d.convert) return;
  Op& op = emit(widthConverter(d.regSize, d.size, d.signExtend && d.regSize > d.size));
  op.d = d.reg;
  op.a = d.off;
}

// ---- the kernel ----------------------------------------------------------------------------------------------

void KernelLowerer::lowerKernel(uint32_t entryIr) {
  const ptx::Function& entry = mod_.functions[entryIr];
  prog_.kernelCode.emplace_back();
  prog_.kernelInfo.emplace_back();
  code_ = &prog_.kernelCode.back();
  info_ = &prog_.kernelInfo.back();
  KernelInfo& info = *info_;
  info.name = std::string(mod_.str(entry.name));
  code_->irFunction = entryIr;
  // parameter layout
  uint32_t off = 0;
  for (const auto& p : entry.params) {
    uint32_t a = varAlign(p);
    off = alignUp(off, a);
    uint32_t sz = uint32_t(p.size ? p.size : p.elementSize());
    info.params.push_back(ParamLayout{off, sz, a});
    off += sz;
  }
  info.paramBytes = off;
  for (int k = 0; k < 3; ++k) {
    (&info.reqntid.x)[k] = entry.numReqntid > k ? entry.reqntid[k] : (entry.numReqntid ? 1 : 0);
    (&info.maxntid.x)[k] = entry.numMaxntid > k ? entry.maxntid[k] : (entry.numMaxntid ? 1 : 0);
  }
  info.minnctapersm = entry.minnctapersm;
  for (int k = 0; k < 3; ++k)
    (&info.reqnctapercluster.x)[k] =
        entry.numReqnctapercluster > k ? entry.reqnctapercluster[k] : (entry.numReqnctapercluster ? 1 : 0);
  info.maxclusterrank = entry.maxclusterrank;
  info.explicitcluster = entry.explicitcluster;
  if (entry.numReqntid) info.maxThreadsPerBlock = uint32_t(info.reqntid.count());
  else if (entry.numMaxntid) info.maxThreadsPerBlock = std::min<uint32_t>(1024, uint32_t(info.maxntid.count()));

  std::set<uint32_t> seen;
  std::vector<uint32_t> order;
  collectReachable(entryIr, seen, order);
  // module-level shared variables used by this kernel
  for (uint32_t g : usedModuleShared_) {
    const ptx::Variable& v = mod_.globals[g];
    sharedAlign_ = std::max(sharedAlign_, varAlign(v));
    if (v.linkage == ptx::Linkage::extern_) {
      dynamicSharedAlign_ = std::max(dynamicSharedAlign_, varAlign(v));
      hasDynamicShared_ = true;
      continue;
    }
    sharedTop_ = alignUp(sharedTop_, varAlign(v));
    moduleSharedOffset_[g] = sharedTop_;
    sharedTop_ += uint32_t(v.size ? v.size : v.elementSize());
  }
  findLaunchConstants(entry);
  for (uint32_t f : order) {
    const ptx::Function& fn = mod_.functions[f];
    for (const ptx::Variable& v : fn.locals)
      if (v.space == ptx::Space::local || v.space == ptx::Space::param) frameAlign_ = std::max(frameAlign_, varAlign(v));
    if (!fn.isEntry) {
      for (const ptx::Variable& p : fn.params) frameAlign_ = std::max(frameAlign_, varAlign(p));
      for (const ptx::Variable& p : fn.returns) frameAlign_ = std::max(frameAlign_, varAlign(p));
    }
  }
  instances_.resize(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    instances_[k].irIndex = order[k];
    instanceOfIr_[order[k]] = uint32_t(k);
    layoutFunction(instances_[k]);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    FunctionCode fc;
    fc.name = std::string(mod_.str(mod_.functions[order[k]].name));
    fc.isEntry = k == 0;
    fc.frameBytes = instances_[k].frameBytes;
    const auto& ro = instances_[k].regOffset;
    if (!ro.empty()) {
      fc.regBase = *std::min_element(ro.begin(), ro.end());
      uint32_t last = *std::max_element(ro.begin(), ro.end());
      fc.regBytes = last + 32 * 16 - fc.regBase;  // up to and including the widest possible last register (.b128)
      fc.regBytes = std::min(fc.regBytes, rfTop_ - fc.regBase);
    }
    instances_[k].codeIndex = uint32_t(prog_.functions.size());
    prog_.functions.push_back(fc);
  }
  info.staticSharedBytes = sharedTop_;
  dynamicSharedBase_ = alignUp(sharedTop_, dynamicSharedAlign_);
  code_->dynamicSharedBase = dynamicSharedBase_;
  code_->sharedAlign = sharedAlign_;
  code_->constStart = rfTop_;  // declared registers end here; constants and temporaries follow
  {
    std::map<std::tuple<uint8_t, uint64_t, unsigned>, uint32_t> slots;
    for (auto& [reg, lc] : launchConstRegs_) {
      auto key = std::make_tuple(uint8_t(lc.kind), lc.value, lc.size);
      auto it = slots.find(key);
      if (it == slots.end()) {
        uint32_t off = allocReg(lc.size);
        ConstSlot s;
        s.offset = off;
        s.size = uint8_t(lc.size);
        s.kind = lc.kind;
        s.value = lc.value;
        bool perCta = lc.kind == ConstKind::ThreadIndex || lc.kind == ConstKind::CtaIndex;
        (perCta ? code_->indexConsts : code_->consts).push_back(s);
        it = slots.emplace(key, off).first;
      }
      instances_[0].regOffset[reg] = it->second;
    }
  }
  // recursion: functions on a cycle of the call graph
  // (computed after lowering from the call sites)
  uint32_t firstCall = uint32_t(prog_.calls.size());

  for (size_t k = 0; k < order.size(); ++k) {
    fi_ = &instances_[k];
    fn_ = &mod_.functions[order[k]];
    prog_.functions[fi_->codeIndex].firstOp = here();
    if (k == 0) code_->function = fi_->codeIndex;
    // CFG
    const auto& ins = fn_->instructions;
    size_t n = ins.size();
    std::vector<bool> leader(n + 1, false);
    leader[0] = true;
    for (const auto& lab : fn_->labels)
      if (lab.kind == ptx::LabelKind::Code && lab.target != kNoIndex && lab.target <= n) leader[lab.target] = true;
    for (size_t i = 0; i < n; ++i) {
      Opcode oc = ins[i].opcode;
      if (oc == Opcode::Bra || oc == Opcode::BrxIdx || oc == Opcode::Ret || oc == Opcode::Exit) leader[i + 1] = true;
    }
    blockOf_.assign(n + 1, 0);
    blockStart_.clear();
    for (size_t i = 0; i <= n; ++i) {
      if (leader[i]) blockStart_.push_back(uint32_t(i));
      blockOf_[i] = uint32_t(blockStart_.size() - 1);
    }
    // blocks: [0, nb) ; the block starting at n (if any) is the end. Exit node = nb.
    uint32_t nb = uint32_t(blockStart_.size());
    uint32_t exitNode = nb;
    std::vector<std::vector<uint32_t>> succ(nb);
    auto labelBlock = [&](uint32_t label) -> uint32_t {
      const auto& lab = fn_->labels.at(label);
      if (lab.target == kNoIndex) fail(lab.loc.line, "branch to an undefined label");
      return blockOf_[lab.target];
    };
    for (uint32_t b = 0; b < nb; ++b) {
      uint32_t s = blockStart_[b];
      if (s >= n) {
        succ[b].push_back(exitNode);
        continue;
      }
      uint32_t e = (b + 1 < nb ? blockStart_[b + 1] : uint32_t(n)) - 1;
      const Instruction& last = ins[e];
      bool guarded = last.guard != kNoIndex;
      auto fall = [&]() { succ[b].push_back(e + 1 <= n ? blockOf_[e + 1] : exitNode); };
      switch (last.opcode) {
        case Opcode::Bra: {
          const Operand& t = fn_->operands[last.firstOperand + last.numOperands - 1];
          if (t.kind != OperandKind::Label) fail(last.loc.line, "bra needs a label");
          succ[b].push_back(labelBlock(t.index));
          if (guarded) fall();
          break;
        }
        case Opcode::BrxIdx: {
          const Operand& t = fn_->operands[last.firstOperand + last.numOperands - 1];
          if (t.kind != OperandKind::Label) fail(last.loc.line, "brx.idx needs a .branchtargets label");
          const auto& lab = fn_->labels.at(t.index);
          for (uint32_t q = 0; q < lab.listCount; ++q) succ[b].push_back(labelBlock(fn_->labelRefs[lab.listFirst + q]));
          if (guarded) fall();
          break;
        }
        case Opcode::Ret:
        case Opcode::Exit:
          succ[b].push_back(exitNode);
          if (guarded) fall();
          break;
        default: fall(); break;
      }
    }
    // post-dominators (iterative, on reverse post-order of the reverse graph)
    std::vector<std::vector<uint32_t>> pred(nb + 1);
    for (uint32_t b = 0; b < nb; ++b)
      for (uint32_t s : succ[b]) pred[s].push_back(b);
    // nodes that cannot reach the exit get an edge to it (infinite loops)
    std::vector<bool> reach(nb + 1, false);
    std::vector<uint32_t> stack{exitNode};
    reach[exitNode] = true;
    while (!stack.empty()) {
      uint32_t x = stack.back();
      stack.pop_back();
      for (uint32_t p : pred[x])
        if (!reach[p]) { reach[p] = true; stack.push_back(p); }
    }
    for (uint32_t b = 0; b < nb; ++b)
      if (!reach[b]) { succ[b].push_back(exitNode); pred[exitNode].push_back(b); }
    // order: DFS from exit over pred edges, postorder
    std::vector<uint32_t> po, rpoIndex(nb + 1, 0);
    {
      std::vector<bool> vis(nb + 1, false);
      std::vector<std::pair<uint32_t, size_t>> st{{exitNode, 0}};
      vis[exitNode] = true;
      while (!st.empty()) {
        auto& [x, i] = st.back();
        if (i < pred[x].size()) {
          uint32_t p = pred[x][i++];
          if (!vis[p]) { vis[p] = true; st.push_back({p, 0}); }
        } else {
          po.push_back(x);
          st.pop_back();
        }
      }
    }
    for (size_t i = 0; i < po.size(); ++i) rpoIndex[po[i]] = uint32_t(i);
    std::vector<int64_t> ipd(nb + 1, -1);
    ipd[exitNode] = exitNode;
    bool changed = true;
    auto intersect = [&](int64_t a, int64_t b2) {
      while (a != b2) {
        while (rpoIndex[a] < rpoIndex[b2]) a = ipd[a];
        while (rpoIndex[b2] < rpoIndex[a]) b2 = ipd[b2];
      }
      return a;
    };
    while (changed) {
      changed = false;
      for (size_t i = po.size(); i-- > 0;) {
        uint32_t b = po[i];
        if (b == exitNode) continue;
        int64_t nd = -1;
        for (uint32_t s : succ[b]) {
          if (ipd[s] == -1) continue;
          nd = nd == -1 ? int64_t(s) : intersect(s, nd);
        }
        if (nd != ipd[b]) { ipd[b] = nd; changed = true; }
      }
    }
    ipdom_.assign(nb, -1);
    std::vector<bool> needReconv(nb, false);
    for (uint32_t b = 0; b < nb; ++b) {
      int64_t d = ipd[b];
      ipdom_[b] = (d == -1 || d == exitNode) ? -1 : int32_t(d);
      uint32_t s = blockStart_[b];
      if (s >= n) continue;
      uint32_t e = (b + 1 < nb ? blockStart_[b + 1] : uint32_t(n)) - 1;
      const Instruction& last = ins[e];
      bool divergent = (last.opcode == Opcode::Bra && last.guard != kNoIndex) || last.opcode == Opcode::BrxIdx ||
                       (last.opcode == Opcode::Ret && last.guard != kNoIndex && !fn_->isEntry);
      if (divergent && ipdom_[b] >= 0) needReconv[ipdom_[b]] = true;
    }
    countMentions();
    findAddressAdds();
    findScaledIndices();
    findSharedLayoutChains();
    findSharedFmaTriples();
    // emit
    instOp_.assign(n + 1, 0);
    uint32_t funcStart = here();
    std::vector<uint32_t> blockOp(nb, 0);
    for (uint32_t i = 0; i < n; ++i) {
      line_ = ins[i].loc.line;
      if (leader[i]) {
        uint32_t b = blockOf_[i];
        blockOp[b] = here();
        if (needReconv[b]) emit(&ctl::reconv);
      }
      instOp_[i] = leader[i] ? blockOp[blockOf_[i]] : here();
      resetTemps();
      if ((k == 0 && skipInst_[i]) || addFolded_[i] || mulFolded_[i]) continue;
      if (sharedFmaTriple_[i]) emitSharedFma(i);
      lowerInstruction(i);
    }
    line_ = n ? ins[n - 1].loc.line : fn_->loc.line;
    funcEndOp_ = here();
    instOp_[n] = funcEndOp_;
    if (leader[n]) blockOp[blockOf_[n]] = funcEndOp_;
    emit(k == 0 ? &ctl::kernelEnd : &ctl::funcEnd);
    // resolve branch targets and reconvergence points of this function
    for (auto& pt : pending_) {
      if (pt.kind == PendingTarget::RpcBlock) {
        pt.value = pt.value == 0xffffffffu ? funcEndOp_ : blockOp[pt.value];
        pt.kind = PendingTarget::Absolute;
        pt.rpc = true;
      } else if (pt.kind == PendingTarget::Inst) {
        pt.value = instOp_[pt.value];
        pt.kind = PendingTarget::Absolute;
      } else if (pt.kind == PendingTarget::BrxInst) {
        pt.value = instOp_[pt.value];
      }
      resolved_.push_back(pt);
    }
    pending_.clear();
    for (auto [local, progIdx] : brxPending_) {
      if (prog_.brxTableIndices.size() <= progIdx) prog_.brxTableIndices.resize(progIdx + 1);
      for (uint32_t inst : brxTargets_[local]) prog_.brxTableIndices[progIdx].push_back(instOp_.at(inst));
    }
    brxPending_.clear();
    brxTargets_.clear();
    (void)funcStart;
  }
  // call sites: callee frame/entry
  for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
    CallSite& cs = prog_.calls[c];
    cs.callee = instances_[instanceOfIr_.at(cs.callee)].codeIndex;
  }
  for (auto& [opIndex, irCallee] : callOps_) {
    uint32_t ci = instanceOfIr_.at(irCallee);
    resolved_.push_back(PendingTarget{opIndex, prog_.functions[instances_[ci].codeIndex].firstOp, PendingTarget::Absolute});
  }
  callOps_.clear();
  // recursion detection over the call graph of this kernel
  {
    size_t nf = instances_.size();
    std::vector<std::set<uint32_t>> edges(nf);
    for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
      uint32_t from = callerOf_[c - firstCall];
      uint32_t to = prog_.calls[c].callee - instances_[0].codeIndex;
      edges[from].insert(to);
    }
    for (size_t f = 0; f < nf; ++f) {
      // f is recursive if f reaches itself
      std::vector<bool> vis(nf, false);
      std::vector<uint32_t> st(edges[f].begin(), edges[f].end());
      bool rec = false;
      while (!st.empty() && !rec) {
        uint32_t x = st.back();
        st.pop_back();
        if (x == f) rec = true;
        if (vis[x]) continue;
        vis[x] = true;
        for (uint32_t y : edges[x]) st.push_back(y);
      }
      prog_.functions[instances_[f].codeIndex].recursive = rec;
    }
    // local memory: deepest frame chain; recursion gets a fixed stack budget
    std::function<uint64_t(uint32_t, std::vector<bool>&)> depth = [&](uint32_t f, std::vector<bool>& onPath) -> uint64_t {
      uint64_t best = 0;
      onPath[f] = true;
      for (uint32_t c = firstCall; c < prog_.calls.size(); ++c) {
        if (callerOf_[c - firstCall] != f) continue;
        uint32_t to = prog_.calls[c].callee - instances_[0].codeIndex;
        uint64_t d = onPath[to] ? (uint64_t(1) << 14) : depth(to, onPath);
        best = std::max<uint64_t>(best, prog_.calls[c].callerFrameBytes + d);
      }
      onPath[f] = false;
      return std::max<uint64_t>(best, instances_[f].frameBytes);
    };
    std::vector<bool> onPath(nf, false);
    uint64_t local = depth(0, onPath);
    if (local > (uint64_t(1) << 24)) fail(entry.loc.line, "local memory per thread too large");
    code_->localBytes = alignUp(uint32_t(local), frameAlign_);
    callerOf_.clear();
  }
  code_->localAlign = frameAlign_;
  info.localBytesPerThread = code_->localBytes;
  info.unsupported = code_->unsupported;
  info.staticSharedBytes = sharedTop_;
  code_->usesBarriers = usesBarriers_;
  code_->regFileBytes = alignUp(rfTop_, 64);
  uint32_t regs = 0;
  for (auto& fi : instances_) {
    const ptx::Function& f = mod_.functions[fi.irIndex];
    for (const auto& r : f.registers) regs += r.type == Type::pred ? 0 : (sizeOf(r.type) + 3) / 4;
  }
  info.registerCount = std::min<uint32_t>(255, std::max<uint32_t>(regs, 1));
  if (entry.maxnreg) info.registerCount = std::min(info.registerCount, entry.maxnreg);  // `.maxnreg` bounds it
}

void KernelLowerer::findLaunchConstants(const ptx::Function& fn) {
  size_t nregs = fn.registers.size();
  std::vector<uint32_t> defs(nregs, 0);
  std::vector<int64_t> defInst(nregs, -1);
  auto countDef = [&](const Operand& o, size_t i) {
    if (o.kind == OperandKind::Reg || o.kind == OperandKind::RegPair) {
      if (o.index < nregs) { defs[o.index]++; defInst[o.index] = int64_t(i); }
      if (o.kind == OperandKind::RegPair && uint64_t(o.value) < nregs) defs[size_t(o.value)] += 2;
    } else if (o.kind == OperandKind::Vector) {
      for (int64_t q = 0; q < o.value; ++q) {
        const Operand& e = fn.elems[o.index + uint32_t(q)];
        if (e.kind == OperandKind::Reg && e.index < nregs) defs[e.index] += 2;
      }
    }
  };
  for (size_t i = 0; i < fn.instructions.size(); ++i) {
    const Instruction& in = fn.instructions[i];
    if (in.numOperands) countDef(fn.operands[in.firstOperand], i);
  }
  skipInst_.assign(fn.instructions.size(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t r = 0; r < nregs; ++r) {
      if (defs[r] != 1 || launchConstRegs_.count(uint32_t(r))) continue;
      const Instruction& in = fn.instructions[size_t(defInst[r])];
      if (in.guard != kNoIndex || in.numOperands != 2) continue;
      const Operand& d = fn.operands[in.firstOperand];
      const Operand& s = fn.operands[in.firstOperand + 1];
      if (d.kind != OperandKind::Reg || d.sel) continue;
      unsigned rs = sizeOf(fn.registers[r].type);
      std::optional<LaunchConst> lc;
      if (in.opcode == Opcode::Ld && (in.space == ptx::Space::param || in.space == ptx::Space::param_entry) && !in.vec &&
          s.kind == OperandKind::Address && s.symKind == SymKind::Param && ptx::typeSize(in.type()) == rs &&
          s.index < info_->params.size()) {
        lc = LaunchConst{ConstKind::ParamValue, info_->params[s.index].offset + uint64_t(s.value), rs};
      } else if (in.opcode == Opcode::Mov && s.kind == OperandKind::Special && rs == 4) {
        auto sr = static_cast<ptx::SpecialReg>(s.index);
        if (sr == ptx::SpecialReg::ntid) lc = LaunchConst{ConstKind::LaunchDim, ptx::selComponent(s.sel), 4};
        else if (sr == ptx::SpecialReg::nctaid) lc = LaunchConst{ConstKind::LaunchDim, 3 + ptx::selComponent(s.sel), 4};
        // written once per CTA instead of by an op in every warp: the value is the same wherever the only
        // definition stands (a use before it reads an undefined register in PTX)
        else if (sr == ptx::SpecialReg::tid) lc = LaunchConst{ConstKind::ThreadIndex, ptx::selComponent(s.sel), 4};
        else if (sr == ptx::SpecialReg::ctaid) lc = LaunchConst{ConstKind::CtaIndex, ptx::selComponent(s.sel), 4};
      } else if ((in.opcode == Opcode::Mov || (in.opcode == Opcode::Cvta && in.has(ptx::Flag::to) &&
                                                 (in.space == ptx::Space::global))) &&
                 s.kind == OperandKind::Reg && !s.sel) {
        auto it = launchConstRegs_.find(s.index);
        if (it != launchConstRegs_.end() && it->second.size == rs) lc = it->second;
      }
      if (!lc) continue;
      launchConstRegs_[uint32_t(r)] = *lc;
      skipInst_[size_t(defInst[r])] = true;
      changed = true;
    }
  }
}

bool KernelLowerer::mayWrite(const Instruction& in, uint32_t reg) const {
  if (in.opcode == Opcode::Call) return true;
  bool writes = false;
  if (in.numOperands) forEachRegister(fn_->operands[in.firstOperand], [&](uint32_t r) { writes |= r == reg; });
  return writes;
}

uint32_t KernelLowerer::lastWriteInBlock(uint32_t before, uint32_t reg) const {
  for (uint32_t j = before; j-- > 0 && blockOf_[j] == blockOf_[before];)
    if (mayWrite(fn_->instructions[j], reg)) return j;
  return kNoIndex;
}

bool KernelLowerer::writtenBetween(uint32_t first, uint32_t end, uint32_t reg) const {
  for (uint32_t j = first; j < end; ++j)
    if (mayWrite(fn_->instructions[j], reg)) return true;
  return false;
}

void KernelLowerer::findAddressAdds() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  foldedAdd_.assign(n, kNoIndex);
  addFolded_.assign(n, false);
  // The add's destination must have exactly two mentions, its definition and the address, so no other
  // instruction sees that the sum was never written.
  const std::vector<uint32_t>& mentions = mentions_;
  auto wide = [&](const Operand& o) {
    return o.kind == OperandKind::Reg && !o.sel && o.index < nregs && regType(o.index) != Type::pred &&
           sizeOf(regType(o.index)) == 8;
  };
  for (uint32_t m = 0; m < n; ++m) {
    const Instruction& mi = ins[m];
    bool isStore = mi.opcode == Opcode::St;
    if ((mi.opcode != Opcode::Ld && !isStore) || mi.vec || mi.space != ptx::Space::global ||
        mi.numOperands != 2)
      continue;
    const Operand& addr = fn_->operands[mi.firstOperand + (isStore ? 0 : 1)];
    if (addr.kind != OperandKind::Address || addr.symKind != SymKind::None || (addr.flags & ptx::kAddrAbsolute) ||
        addr.index >= nregs || mentions[addr.index] != 2 || sizeOf(regType(addr.index)) != 8)
      continue;
    // the definition: earlier in the same block
    uint32_t def = lastWriteInBlock(m, addr.index);
    if (def == kNoIndex) continue;
    const Instruction& add = ins[def];
    if (add.opcode != Opcode::Add || add.guard != kNoIndex || add.flags != 0 || add.numTypes != 1 ||
        (add.type() != Type::s64 && add.type() != Type::u64) || add.numOperands != 3 || addFolded_[def])
      continue;
    const Operand& d = fn_->operands[add.firstOperand];
    const Operand& a = fn_->operands[add.firstOperand + 1];
    const Operand& b = fn_->operands[add.firstOperand + 2];
    if (d.sel || !wide(a) || !wide(b)) continue;
    // base and offset must still hold the add's values at the memory op
    if (writtenBetween(def + 1, m, a.index) || writtenBetween(def + 1, m, b.index)) continue;
    foldedAdd_[m] = def;
    addFolded_[def] = true;
  }
}

void KernelLowerer::findScaledIndices() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  scaledIndex_.assign(n, kNoIndex);
  mulFolded_.assign(n, false);
  if (!fn_->isEntry) return;  // launch constants exist in kernels only
  // candidate accesses per offset register
  struct Use {
    uint32_t access, mul;
  };
  std::map<uint32_t, std::vector<Use>> uses;
  for (uint32_t m = 0; m < n; ++m) {
    uint32_t def = foldedAdd_[m];
    if (def == kNoIndex) continue;
    const Instruction& add = ins[def];
    const Operand& x = fn_->operands[add.firstOperand + 1];
    const Operand& y = fn_->operands[add.firstOperand + 2];
    bool xConst = launchConstRegs_.count(x.index) != 0, yConst = launchConstRegs_.count(y.index) != 0;
    if (xConst == yConst) continue;
    uint32_t offset = xConst ? y.index : x.index;
    // the offset's definition: the last write before the add, in the same block
    uint32_t mul = lastWriteInBlock(def, offset);
    if (mul == kNoIndex) continue;
    const Instruction& mi = ins[mul];
    if (mi.opcode != Opcode::Mul || mi.mulMode != ptx::MulMode::wide || mi.guard != kNoIndex || mi.flags != 0 ||
        mi.numOperands != 3 || (mi.type() != Type::s32 && mi.type() != Type::u32))
      continue;
    const Operand& d = fn_->operands[mi.firstOperand];
    const Operand& i = fn_->operands[mi.firstOperand + 1];
    const Operand& k = fn_->operands[mi.firstOperand + 2];
    if (d.kind != OperandKind::Reg || d.index != offset || d.sel || i.kind != OperandKind::Reg || i.sel ||
        i.index >= nregs || regType(i.index) == Type::pred || sizeOf(regType(i.index)) != 4 ||
        k.kind != OperandKind::Imm || k.value <= 0 || k.value > 16 || !std::has_single_bit(uint64_t(k.value)))
      continue;
    // the index must still hold its value at the access
    if (!writtenBetween(mul + 1, m, i.index)) uses[offset].push_back(Use{m, mul});
  }
  for (auto& [offset, list] : uses) {
    // every mention of the product is its one definition or a folded add's operand
    uint32_t mul = list.front().mul;
    bool sameMul = std::all_of(list.begin(), list.end(), [&](const Use& u) { return u.mul == mul; });
    if (!sameMul || mentions_[offset] != 1 + list.size()) continue;
    for (const Use& u : list) scaledIndex_[u.access] = mul;
    mulFolded_[mul] = true;
  }
}

void KernelLowerer::countMentions() {
  size_t nregs = fn_->registers.size();
  mentions_.assign(nregs, 0);
  for (const Instruction& in : fn_->instructions) {
    if (in.guard != kNoIndex && in.guard < nregs) mentions_[in.guard]++;
    for (uint32_t k = 0; k < in.numOperands; ++k)
      forEachRegister(fn_->operands[in.firstOperand + k], [&](uint32_t r) {
        if (r < nregs) mentions_[r]++;
      });
  }
}

void KernelLowerer::findSharedLayoutChains() {
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  sharedLayoutTag_.assign(n, 0);
  struct Chain {
    uint32_t reg, accessSize, first, slot;
    bool reused;
  };
  std::vector<Chain> chains;  // of the current block
  uint32_t block = ~0u, nextSlot = 0;
  for (uint32_t m = 0; m < n; ++m) {
    const Instruction& in = ins[m];
    if (blockOf_[m] != block) {
      block = blockOf_[m];
      chains.clear();
      nextSlot = 0;
    }
    if (in.opcode == Opcode::Call) {
      chains.clear();  // the callee is not looked into
      continue;
    }
    bool isStore = in.opcode == Opcode::St;
    if ((in.opcode == Opcode::Ld || isStore) && !in.vec && in.space == ptx::Space::shared && in.numOperands == 2) {
      const Operand& addr = fn_->operands[in.firstOperand + (isStore ? 0 : 1)];
      uint32_t size = ptx::typeSize(in.type());
      if (addr.kind == OperandKind::Address && addr.symKind == SymKind::None && !(addr.flags & ptx::kAddrAbsolute) &&
          addr.index < nregs && size > 0 && size <= 16) {
        auto it = std::find_if(chains.begin(), chains.end(),
                               [&](const Chain& c) { return c.reg == addr.index && c.accessSize == size; });
        if (it != chains.end()) {
          sharedLayoutTag_[m] = mem::kLayoutReuse | it->slot;
          if (!it->reused) sharedLayoutTag_[it->first] = mem::kLayoutCompute | it->slot;
          it->reused = true;
        } else if (nextSlot < kSharedLayoutSlots && in.guard == kNoIndex) {
          // a guarded access may not run at all, so it cannot be the one that computes the layout
          chains.push_back(Chain{addr.index, size, m, nextSlot++, false});
        }
      }
    }
    // what the instruction writes ends the chains of those registers: the destination is the first operand
    // (a store's first operand is its address, which it only reads)
    if (isStore || in.numOperands == 0) continue;
    forEachRegister(fn_->operands[in.firstOperand], [&](uint32_t r) {
      std::erase_if(chains, [&](const Chain& c) { return c.reg == r; });
    });
  }
}

void KernelLowerer::findSharedFmaTriples() {
  const std::vector<uint32_t>& mentions = mentions_;
  const auto& ins = fn_->instructions;
  size_t n = ins.size(), nregs = fn_->registers.size();
  sharedFmaTriple_.assign(n + 1, 0);
  auto plainReg = [&](const Operand& o) {
    return o.kind == OperandKind::Reg && !o.sel && o.flags == 0 && o.index < nregs && regType(o.index) != Type::pred &&
           sizeOf(regType(o.index)) == 4;
  };
  // the loaded register of a scalar 32-bit shared load through a base register, or kNoIndex
  auto sharedLoad = [&](const Instruction& in) -> uint32_t {
    if (in.opcode != Opcode::Ld || in.vec || in.space != ptx::Space::shared || in.numOperands != 2 ||
        in.guard != kNoIndex || in.numTypes != 1 || ptx::typeSize(in.type()) != 4)
      return kNoIndex;
    const Operand& d = fn_->operands[in.firstOperand];
    const Operand& addr = fn_->operands[in.firstOperand + 1];
    if (!plainReg(d) || mentions[d.index] != 2 || addr.kind != OperandKind::Address ||
        addr.symKind != SymKind::None || (addr.flags & ptx::kAddrAbsolute) || addr.index >= nregs)
      return kNoIndex;
    return d.index;
  };
  for (size_t m = 0; m + 2 < n; ++m) {
    const Instruction& f = ins[m + 2];
    if (blockOf_[m] != blockOf_[m + 2] || f.opcode != Opcode::Fma || f.guard != kNoIndex || f.numTypes != 1 ||
        f.type() != Type::f32 || roundingOf(f.rounding) != num::RN || f.has(ptx::Flag::ftz) ||
        f.has(ptx::Flag::sat) || f.numOperands != 4)
      continue;
    uint32_t x = sharedLoad(ins[m]), y = sharedLoad(ins[m + 1]);
    if (x == kNoIndex || y == kNoIndex || x == y) continue;
    const Operand* o = &fn_->operands[f.firstOperand];
    if (!plainReg(o[0]) || !plainReg(o[1]) || !plainReg(o[2]) || !plainReg(o[3])) continue;
    bool product = (o[1].index == x && o[2].index == y) || (o[1].index == y && o[2].index == x);
    if (!product || o[3].index == x || o[3].index == y) continue;
    sharedFmaTriple_[m] = 1;
    m += 2;
  }
  // chains: the next triple right after, accumulating into this one's result, which only it reads
  auto fmaOperand = [&](size_t triple, int k) { return fn_->operands[ins[triple + 2].firstOperand + k].index; };
  for (size_t m = 0; m < n; ++m) {
    if (!sharedFmaTriple_[m]) continue;
    size_t last = m;
    uint32_t length = 1;
    while (length < kMaxSharedFmaChain && last + 3 < n && sharedFmaTriple_[last + 3] &&
           blockOf_[last + 3] == blockOf_[m] && fmaOperand(last + 3, 3) == fmaOperand(last, 0) &&
           mentions[fmaOperand(last, 0)] == 2) {
      sharedFmaTriple_[last + 3] = 0;
      last += 3;
      ++length;
    }
    sharedFmaTriple_[m] = length;
    m = last + 2;
  }
}

void KernelLowerer::emitSharedFma(uint32_t first) {
  const auto& ins = fn_->instructions;
  const uint32_t length = sharedFmaTriple_[first];
  std::vector<SharedFmaStep> steps;
  uint32_t baseSize = 0;
  for (uint32_t k = 0; k < length; ++k) {
    uint32_t t = first + 3 * k;
    Addr x = address(ins[t], fn_->operands[ins[t].firstOperand + 1]);
    Addr y = address(ins[t + 1], fn_->operands[ins[t + 1].firstOperand + 1]);
    // offsets go to 32-bit fields; one that does not fit leaves the instructions unfused
    if (x.space != mem::Shared || y.space != mem::Shared || x.baseSize != y.baseSize ||
        (baseSize && x.baseSize != baseSize) || x.imm < 0 || x.imm > int64_t(UINT32_MAX) || y.imm < 0 ||
        y.imm > int64_t(UINT32_MAX))
      return;
    baseSize = x.baseSize;
    steps.push_back(SharedFmaStep{x.base, y.base, uint32_t(x.imm), uint32_t(y.imm), sharedLayoutTag_[t],
                                  sharedLayoutTag_[t + 1]});
  }
  const Operand* firstFma = &fn_->operands[ins[first + 2].firstOperand];
  const Operand* lastFma = &fn_->operands[ins[first + 3 * length - 1].firstOperand];
  Op& op = emit(baseSize == 4 ? mem::fmaSharedChainHandler<uint32_t>() : mem::fmaSharedChainHandler<uint64_t>());
  op.c = regOf(firstFma[3].index);
  op.d = regOf(lastFma[0].index);
  op.imm = int64_t(prog_.fmaSteps.size());
  op.f = length;
  prog_.fmaSteps.insert(prog_.fmaSteps.end(), steps.begin(), steps.end());
  // where the fast path continues: after the original instructions' own ops
  pending_.push_back({here() - 1, first + 3 * length, PendingTarget::Inst});
}

// ---- instructions ----------------------------------------------------------------------------------------------

void KernelLowerer::unsupported(const Instruction& in, std::string_view why) {
  // Unsupported instructions do not fail the module load: the kernel that contains them fails at launch (and the
  // op traps if reached), so modules that mix supported and unsupported kernels still load.
  std::string name(ptx::opcodeMnemonic(in.opcode));
  for (uint32_t k = 0; k < in.modCount; ++k) name += ptx::modText(fn_->mods[in.modFirst + k]);
  std::string msg = fmt::format("instruction '{}' (PTX line {}) is not supported by the interpreter{}{}", name,
                                in.loc.line, why.empty() ? "" : ": ", why);
  if (code_->unsupported.empty()) code_->unsupported = msg;
  Op& op = emit(&ctl::trap);
  op.aux = 2;
  op.imm = int64_t(prog_.messages.size());
  prog_.messages.push_back(msg);
}

KernelLowerer::Addr KernelLowerer::address(const Instruction& in, const Operand& o) {
  Addr a;
  if (o.kind != OperandKind::Address) fail(line_, "memory operand must be an address [..]");
  a.imm = o.value;
  mem::Space byInst;
  switch (in.space) {
    case ptx::Space::global: case ptx::Space::const_: byInst = mem::Global; break;
    case ptx::Space::shared: case ptx::Space::shared_cta: case ptx::Space::shared_cluster: byInst = mem::Shared; break;
    case ptx::Space::local: byInst = mem::Local; break;
    case ptx::Space::param: case ptx::Space::param_entry: case ptx::Space::param_func: byInst = mem::Param; break;
    case ptx::Space::none: byInst = mem::Generic; break;
    default: fail(line_, "unsupported state space");
  }
  a.space = byInst;
  if (o.symKind == SymKind::None) {
    if (o.flags & ptx::kAddrAbsolute) {
      a.base = kZeroReg;
      a.baseSize = 8;
    } else {
      a.base = regOf(o.index);
      a.baseSize = sizeOf(regType(o.index));
      if (a.baseSize != 4 && a.baseSize != 8) fail(line_, "address register must be 32 or 64 bits");
    }
    if (a.space == mem::Param && !fn_->isEntry) a.space = mem::Frame;  // a function's own params live in its frame
    return a;
  }
  a.base = kZeroReg;
  a.baseSize = 8;
  switch (o.symKind) {
    case SymKind::Global: {
      const ptx::Variable& v = mod_.globals[o.index];
      if (v.space == ptx::Space::shared) {
        a.space = mem::Shared;
        a.imm += v.linkage == ptx::Linkage::extern_ ? dynamicSharedBase_ : moduleSharedOffset_.at(o.index);
        return a;
      }
      uint32_t g = globalMap_[o.index];
      if (g == kNoIndex) fail(line_, "unsupported variable in address");
      a.base = globalAddress(g, 0, 8);
      a.space = byInst == mem::Generic ? mem::Generic : mem::Global;
      return a;
    }
    case SymKind::Local: {
      const ptx::Variable& v = fn_->locals[o.index];
      if (v.space == ptx::Space::shared) {
        a.space = mem::Shared;
        a.imm += v.linkage == ptx::Linkage::extern_ ? dynamicSharedBase_ : fi_->localOffset[o.index];
        return a;
      }
      a.space = mem::Frame;
      a.imm += fi_->localOffset[o.index];
      return a;
    }
    case SymKind::Param:
      if (fn_->isEntry) {
        a.space = mem::Param;
        a.paramUniform = true;
        a.imm += info_->params.at(o.index).offset;
      } else {
        a.space = mem::Frame;
        a.imm += fi_->paramOffset.at(o.index);
      }
      return a;
    case SymKind::Return:
      a.space = mem::Frame;
      a.imm += fi_->returnOffset.at(o.index);
      return a;
    default: fail(line_, "unsupported address operand");
  }
}

static uint32_t accessBytesMask(unsigned bytes) { return bytes >= 32 ? kNoIndex : (1u << bytes) - 1; }

// The mask of a `.pragma "used_bytes_mask N"` right before the current instruction, or kNoIndex (no pragma, or all
// 32 bytes used: then the plain load is the same).
uint32_t KernelLowerer::usedBytesMask() const {
  for (const ptx::BodyPragma& pr : fn_->bodyPragmas) {
    uint32_t mask = 0;
    bool malformed = false;
    if (pr.position == curInst_ && ptx::usedBytesMaskPragma(mod_.str(pr.text), mask, malformed) && !malformed &&
        mask != kNoIndex)
      return mask;
  }
  return kNoIndex;
}

void KernelLowerer::lowerLdSt(const Instruction& in, bool isStore) {
  Type t = in.type();
  if (t == Type::b128 && in.vec) return unsupported(in, "vectors of 128-bit elements");
  const Operand& addrOp = opnd(in, isStore ? 0 : 1);
  const Operand& valOp = opnd(in, isStore ? 1 : 0);
  Addr a = address(in, addrOp);
  unsigned n = in.vec ? in.vec : 1;
  if (n > 4) return unsupported(in, "vectors wider than 4");
  uint32_t regs[4] = {0, 0, 0, 0};
  unsigned regSize = 0;
  std::vector<std::pair<uint32_t, Dst>> pendingDst;
  unsigned ms = ptx::typeSize(t);
  if (n == 1) {
    if (isStore) {
      if (valOp.kind == OperandKind::Reg) {
        regs[0] = regOf(valOp.index);
        regSize = sizeOf(regType(valOp.index));
        if (regSize < ms) regs[0] = src(valOp, t), regSize = ms;
      } else {
        regs[0] = src(valOp, t);
        regSize = ms;
      }
    } else {
      if (valOp.kind == OperandKind::Reg && sizeOf(regType(valOp.index)) >= ms) {
        regs[0] = regOf(valOp.index);
        regSize = sizeOf(regType(valOp.index));
      } else {
        Dst d = dst(valOp, t);
        regs[0] = d.off;
        regSize = ms;
        pendingDst.push_back({0, d});
      }
    }
  } else {
    if (valOp.kind != OperandKind::Vector || valOp.value != int64_t(n)) fail(line_, "vector operand expected");
    for (unsigned k = 0; k < n; ++k) {
      const Operand& e = fn_->elems[valOp.index + k];
      if (isStore) {
        regs[k] = src(e, t);
      } else {
        Dst d = dst(e, t);
        regs[k] = d.off;
        if (d.convert) pendingDst.push_back({k, d});
      }
    }
    regSize = ms;
  }
  if (!isStore && a.paramUniform) {
    Handler hnd = ldParamHandler(t, regSize);
    if (!hnd) return unsupported(in, "operand types");
    Op& op = emit(hnd);
    op.d = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
    op.f = n;
    op.imm = a.imm;
    if (n > 1 && regSize != ms) fail(line_, "vector parameter load into wider registers");
  } else if (uint32_t used = isStore ? kNoIndex : usedBytesMask();
             used != kNoIndex && regSize == ms && (used & accessBytesMask(ms * n)) != accessBytesMask(ms * n)) {
    Handler hnd = ldMaskedHandler(a.space, a.baseSize, ms, n);
    if (!hnd) return unsupported(in, "operand types of a used_bytes_mask load");
    Op& op = emit(hnd);
    op.a = a.base;
    op.imm = a.imm;
    op.aux = used;
    op.d = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
  } else {
    uint32_t folded = foldedAdd_[curInst_];
    Handler hnd = nullptr;
    if (folded != kNoIndex && scaledIndex_[curInst_] != kNoIndex) {
      const Instruction& add = fn_->instructions[folded];
      const Instruction& mul = fn_->instructions[scaledIndex_[curInst_]];
      const Operand& x = fn_->operands[add.firstOperand + 1];
      const Operand& y = fn_->operands[add.firstOperand + 2];
      const Operand& base = launchConstRegs_.count(x.index) ? x : y;
      bool signedIndex = mul.type() == Type::s32;
      hnd = isStore ? stScaledHandler(t, regSize, signedIndex) : ldScaledHandler(t, regSize, signedIndex);
      if (hnd) {
        Op& op = emit(hnd);
        op.a = regOf(base.index);
        op.b = regOf(fn_->operands[mul.firstOperand + 1].index);
        op.f = uint32_t(std::countr_zero(uint64_t(fn_->operands[mul.firstOperand + 2].value)));
        op.c = a.base;
        op.imm = a.imm;
        op.d = regs[0];
        for (auto& [k, d] : pendingDst) finish(d);
        return;
      }
      // no fused form for these types: the product after all (the index still holds its value here, and only
      // folded adds read the product), then the add and the access as below
      lowerBody(mul);
    }
    if (folded != kNoIndex) {
      hnd = isStore ? stIndexedHandler(t, regSize) : ldIndexedHandler(t, regSize);
      if (hnd) {
        const Instruction& add = fn_->instructions[folded];
        Op& op = emit(hnd);
        op.a = regOf(fn_->operands[add.firstOperand + 1].index);
        op.b = regOf(fn_->operands[add.firstOperand + 2].index);
        op.c = a.base;
        op.imm = a.imm;
        op.d = regs[0];
        for (auto& [k, d] : pendingDst) finish(d);
        return;
      }
      lowerBody(fn_->instructions[folded]);  // no fused handler for these types: the add after all
    }
    hnd = isStore ? stHandler(a.space, a.baseSize, t, regSize, n) : ldHandler(a.space, a.baseSize, t, regSize, n);
    if (!hnd) return unsupported(in, "operand types / state space combination");
    Op& op = emit(hnd);
    if (a.space == mem::Shared && n == 1) op.aux = sharedLayoutTag_[curInst_];
    op.a = a.base;
    op.imm = a.imm;
    op.d = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
  }
  for (auto& [k, d] : pendingDst) finish(d);
}

void KernelLowerer::lowerAtom(const Instruction& in, bool isRed) {
  using mem::AOp;
  AOp aop;
  switch (in.redOp) {
    case ptx::RedOp::add: aop = mem::AAdd; break;
    case ptx::RedOp::min: aop = mem::AMin; break;
    case ptx::RedOp::max: aop = mem::AMax; break;
    case ptx::RedOp::inc: aop = mem::AInc; break;
    case ptx::RedOp::dec: aop = mem::ADec; break;
    case ptx::RedOp::and_: aop = mem::AAnd; break;
    case ptx::RedOp::or_: aop = mem::AOr; break;
    case ptx::RedOp::xor_: aop = mem::AXor; break;
    case ptx::RedOp::exch: aop = mem::AExch; break;
    case ptx::RedOp::cas: aop = mem::ACas; break;
    default: return unsupported(in, "atomic operation");
  }
  Type t = in.type();
  if (in.vec) return lowerVectorAtom(in, isRed, aop);
  unsigned k = 0;
  Dst d;
  bool hasDst = !isRed;
  if (hasDst) d = dst(opnd(in, k++), t);
  Addr a = address(in, opnd(in, k++));
  if (a.space == mem::Param || a.space == mem::Local || a.space == mem::Frame)
    return unsupported(in, "atomics on this state space");
  uint32_t b = src(opnd(in, k++), t);
  uint32_t c = aop == mem::ACas ? src(opnd(in, k++), t) : kZeroReg;
  Handler hnd = atomHandler(a.space, a.baseSize, t, aop);
  if (!hnd) return unsupported(in, "atomic type");
  Op& op = emit(hnd);
  op.d = hasDst ? d.off : 0;
  op.a = a.base;
  op.imm = a.imm;
  op.b = b;
  op.c = c;
  if (hasDst) finish(d);
}

// atom/red.vN (sm_90: f16/bf16 x2..x8, f32 x2/x4 with add, min, max): each element is its own atomic operation
// (the ISA makes no promise for the vector as a whole), so it lowers to one scalar atomic per element.
void KernelLowerer::lowerVectorAtom(const Instruction& in, bool isRed, mem::AOp aop) {
  Type t = in.type();
  unsigned n = in.vec;
  unsigned k = 0;
  const Operand* dstVec = isRed ? nullptr : &opnd(in, k++);
  Addr a = address(in, opnd(in, k++));
  const Operand& srcVec = opnd(in, k++);
  auto isVectorOf = [&](const Operand& o) { return o.kind == OperandKind::Vector && o.value == int64_t(n); };
  if ((dstVec && !isVectorOf(*dstVec)) || !isVectorOf(srcVec)) fail(line_, "vector operand expected");
  if (a.space == mem::Param || a.space == mem::Local || a.space == mem::Frame)
    return unsupported(in, "atomics on this state space");
  Handler hnd = atomHandler(a.space, a.baseSize, t, aop);
  if (!hnd) return unsupported(in, "vector atomic type");
  // The elements run one after another: a destination that is also a later element's source would be read after
  // it was written.
  if (dstVec)
    for (unsigned e = 0; e < n; ++e)
      for (unsigned later = e + 1; later < n; ++later) {
        const Operand& d = fn_->elems[dstVec->index + e];
        const Operand& b = fn_->elems[srcVec.index + later];
        if (d.kind == OperandKind::Reg && b.kind == OperandKind::Reg && d.index == b.index)
          return unsupported(in, "a vector atomic whose destination element is a later source element");
      }
  for (unsigned e = 0; e < n; ++e) {
    uint32_t b = src(fn_->elems[srcVec.index + e], t);
    Dst d;
    if (dstVec) d = dst(fn_->elems[dstVec->index + e], t);
    Op& op = emit(hnd);
    op.d = dstVec ? d.off : 0;
    op.a = a.base;
    op.imm = a.imm + int64_t(e * ptx::typeSize(t));
    op.b = b;
    op.c = kZeroReg;
    if (dstVec) finish(d);
  }
}

// set/setp on .f16/.bf16 and .f16x2/.bf16x2 (cuda_fp16.hpp and cuda_bf16.hpp compare this way). set's true value:
// 1.0 in a floating-point destination's format, all ones in an integer one; pairs get it per half.
// A setp's op with its predicate destination, or both predicates of a `p|q` destination pair.
void KernelLowerer::emitSetp(Handler hnd, uint32_t a, uint32_t b, uint32_t c, uint32_t aux, const Operand& d0) {
  Op& op = emit(hnd);
  op.a = a;
  op.b = b;
  op.c = c;
  op.aux = aux;
  if (d0.kind == OperandKind::RegPair) {
    op.d = regOf(d0.index);
    op.e = regOf(uint32_t(d0.value));
  } else {
    op.d = dst(d0, Type::pred).off;
  }
}

void KernelLowerer::lowerHalfCompare(const Instruction& in) {
  bool isSet = in.opcode == Opcode::Set;
  Type st = isSet && in.numTypes > 1 ? in.types[1] : in.type();
  Type dt = isSet ? in.types[0] : Type::pred;
  bool bf = st == Type::bf16 || st == Type::bf16x2;
  bool pair = st == Type::f16x2 || st == Type::bf16x2;
  uint32_t a = src(opnd(in, 1), st), b = src(opnd(in, 2), st);
  uint32_t c = kZeroReg, aux = in.has(ptx::Flag::ftz) ? h::kHalfFtz : 0;
  if (in.boolOp != ptx::BoolOp::none) {
    bool neg;
    c = srcPred(opnd(in, 3), neg);
    aux |= uint32_t(in.boolOp) | (neg ? 16 : 0);
  } else {
    c = literal(0, 1);
  }
  auto pick = [&](auto cc) -> Handler {
    constexpr h::Cmp C = decltype(cc)::value;
    if (!isSet) {
      if (bf) return pair ? &h::setpHalf<C, true, true> : &h::setpHalf<C, true, false>;
      return pair ? &h::setpHalf<C, false, true> : &h::setpHalf<C, false, false>;
    }
    bool wide = pair || sizeOf(dt) == 4;
    if (bf) {
      if (pair) return &h::setHalf<uint32_t, C, true, true>;
      return wide ? &h::setHalf<uint32_t, C, true, false> : &h::setHalf<uint16_t, C, true, false>;
    }
    if (pair) return &h::setHalf<uint32_t, C, false, true>;
    return wide ? &h::setHalf<uint32_t, C, false, false> : &h::setHalf<uint16_t, C, false, false>;
  };
  Handler hnd = byCmp(in.cmp, line_, pick);
  if (!isSet) {
    emitSetp(hnd, a, b, c, aux, opnd(in, 0));
    return;
  }
  uint64_t one;
  switch (dt) {
    case Type::f32: one = 0x3f800000u; break;
    case Type::f16: case Type::f16x2: one = 0x3c00u; break;
    case Type::bf16: case Type::bf16x2: one = 0x3f80u; break;
    default: one = pair ? 0xffffu : sizeOf(dt) == 2 ? 0xffffu : 0xffffffffu; break;
  }
  Dst d = dst(opnd(in, 0), pair || sizeOf(dt) == 4 ? Type::b32 : Type::b16);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  op.c = c;
  op.aux = aux;
  op.imm = int64_t(one);
  finish(d);
}

void KernelLowerer::lowerCompare(const Instruction& in) {
  Type t = in.type();
  switch (in.opcode) {
    case Opcode::Setp: {
      const Operand& d0 = opnd(in, 0);
      if (t == Type::f16 || t == Type::bf16 || t == Type::f16x2 || t == Type::bf16x2) return lowerHalfCompare(in);
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      Handler hnd;
      if (isFloat(t)) {
        hnd = byFloat(t, line_, [&](auto ft) {
          using F = decltype(ft);
          return byCmp(in.cmp, line_, [&](auto c) -> Handler { return &h::setp<F, decltype(c)::value>; });
        });
      } else {
        hnd = byInt163264(t == Type::b8 || t == Type::u8 ? Type::u16 : (t == Type::s8 ? Type::s16 : t), line_, [&](auto it) {
          using I = decltype(it);
          return byCmp(in.cmp, line_, [&](auto c) -> Handler { return &h::setp<I, decltype(c)::value>; });
        });
      }
      uint32_t c = 0, aux = 0;
      if (in.boolOp != ptx::BoolOp::none) {
        bool neg;
        c = srcPred(opnd(in, 3), neg);
        aux = uint32_t(in.boolOp) | (neg ? 16 : 0);
      }
      emitSetp(hnd, a, b, c, aux, d0);
      lastSetp_ = here() - 1;
      return;
    }
    case Opcode::Set: {
      Type dt = in.types[0], st = in.numTypes > 1 ? in.types[1] : in.types[0];
      if (st == Type::f16 || st == Type::bf16 || st == Type::f16x2 || st == Type::bf16x2) return lowerHalfCompare(in);
      uint32_t a = src(opnd(in, 1), st), b = src(opnd(in, 2), st);
      uint32_t c = kZeroReg, aux = 0;
      if (in.boolOp != ptx::BoolOp::none) {
        bool neg;
        c = srcPred(opnd(in, 3), neg);
        aux = uint32_t(in.boolOp) | (neg ? 16 : 0);
      } else {
        c = literal(0, 1);
      }
      auto withD = [&](auto srcTag) -> Handler {
        using S = decltype(srcTag);
        return byCmp(in.cmp, line_, [&](auto cc) -> Handler {
          constexpr h::Cmp C = decltype(cc)::value;
          if (dt == Type::f32) return &h::setValue<S, C, float>;
          return &h::setValue<S, C, uint32_t>;
        });
      };
      Handler hnd = isFloat(st) ? byFloat(st, line_, withD) : byInt163264(st, line_, withD);
      Dst d = dst(opnd(in, 0), dt);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      op.aux = aux;
      finish(d);
      return;
    }
    case Opcode::Selp: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      bool neg;
      uint32_t c = srcPred(opnd(in, 3), neg);
      if (neg) fail(line_, "selp predicate cannot be negated");
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::selp<decltype(x)>; }));
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      finish(d);
      return;
    }
    case Opcode::Slct: {
      Type ct = in.numTypes > 1 ? in.types[1] : Type::s32;
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t), c = src(opnd(in, 3), ct);
      Dst d = dst(opnd(in, 0), t);
      Handler hnd = byBits(sizeOf(t), line_, [&](auto x) -> Handler {
        using T = decltype(x);
        if (ct == Type::f32) return &h::slct<T, float>;
        return &h::slct<T, int32_t>;
      });
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      finish(d);
      return;
    }
    default: unsupported(in);
  }
}

// Integer arithmetic, logic and bit manipulation.
void KernelLowerer::lowerArith(const Instruction& in) {
  Type t = in.type();
  Opcode oc = in.opcode;
  auto bin = [&](Handler hnd, Type at, Type bt, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    finish(d);
  };
  auto un = [&](Handler hnd, Type at, Type dt) {
    uint32_t a = src(opnd(in, 1), at);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
    return &prog_.ops.back();
  };
  auto ter = [&](Handler hnd, Type at, Type bt, Type ct, Type dt) {
    uint32_t a = src(opnd(in, 1), at), b = src(opnd(in, 2), bt), c = src(opnd(in, 3), ct);
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    op.c = c;
    finish(d);
    return &prog_.ops.back();
  };
  auto wideType = [&](Type x) {
    switch (x) {
      case Type::s16: return Type::s32;
      case Type::u16: return Type::u32;
      case Type::s32: return Type::s64;
      case Type::u32: return Type::u64;
      default: fail(line_, ".wide needs a 16 or 32-bit type");
    }
  };
  bool sat = in.has(ptx::Flag::sat);
  bool cc = in.has(ptx::Flag::cc);
  if (t == Type::pred) {
    switch (oc) {
      case Opcode::And: return bin(&h::predLogic<0>, t, t, t);
      case Opcode::Or: return bin(&h::predLogic<1>, t, t, t);
      case Opcode::Xor: return bin(&h::predLogic<2>, t, t, t);
      case Opcode::Not: un(&h::predLogic<3>, t, t); return;
      default: return unsupported(in);
    }
  }
  switch (oc) {
    case Opcode::Add:
    case Opcode::Sub: {
      bool add = oc == Opcode::Add;
      if (sat) {
        if (t != Type::s32) return unsupported(in);
        return bin(add ? &h::binary<int32_t, SatAddF> : &h::binary<int32_t, SatSubF>, t, t, t);
      }
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return add ? &h::binary<T, h::AddF> : &h::binary<T, h::SubF>;
                 }), t, t, t);
    }
    case Opcode::AddCC: case Opcode::AddC: case Opcode::SubCC: case Opcode::SubC: {
      bool sub = oc == Opcode::SubCC || oc == Opcode::SubC;
      bool useC = oc == Opcode::AddC || oc == Opcode::SubC;
      bool setC = oc == Opcode::AddCC || oc == Opcode::SubCC || cc;
      unsigned sz = sizeOf(t);
      Handler hnd = nullptr;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (sub) {
          if (useC) return setC ? &h::addCarry<T, true, true, true> : &h::addCarry<T, true, true, false>;
          return &h::addCarry<T, true, false, true>;
        }
        if (useC) return setC ? &h::addCarry<T, false, true, true> : &h::addCarry<T, false, true, false>;
        return &h::addCarry<T, false, false, true>;
      };
      if (sz == 4) hnd = pick(uint32_t{});
      else if (sz == 8) hnd = pick(uint64_t{});
      else return unsupported(in);
      return bin(hnd, t, t, t);
    }
    case Opcode::Mul: {
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::mulWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::mulWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::mulWide<int32_t, int64_t>; break;
          default: hnd = &h::mulWide<uint32_t, uint64_t>; break;
        }
        return bin(hnd, t, t, wt);
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return hi ? &h::binary<T, h::MulHiF> : &h::binary<T, h::MulLoF>;
                 }), t, t, t);
    }
    case Opcode::Mad: {
      if (sat) return unsupported(in);
      if (in.mulMode == ptx::MulMode::wide) {
        Type wt = wideType(t);
        Handler hnd = nullptr;
        switch (t) {
          case Type::s16: hnd = &h::madWide<int16_t, int32_t>; break;
          case Type::u16: hnd = &h::madWide<uint16_t, uint32_t>; break;
          case Type::s32: hnd = &h::madWide<int32_t, int64_t>; break;
          default: hnd = &h::madWide<uint32_t, uint64_t>; break;
        }
        ter(hnd, t, t, wt, wt);
        return;
      }
      bool hi = in.mulMode == ptx::MulMode::hi;
      if (cc) {
        Handler hnd = sizeOf(t) == 4 ? (hi ? (isSigned(t) ? &h::madCarry<int32_t, true, false, true> : &h::madCarry<uint32_t, true, false, true>)
                                           : &h::madCarry<uint32_t, false, false, true>)
                                     : (hi ? (isSigned(t) ? &h::madCarry<int64_t, true, false, true> : &h::madCarry<uint64_t, true, false, true>)
                                           : &h::madCarry<uint64_t, false, false, true>);
        ter(hnd, t, t, t, t);
        return;
      }
      ter(byInt163264(t, line_, [&](auto x) -> Handler {
            using T = decltype(x);
            return hi ? &h::ternary<T, h::MadHiF> : &h::ternary<T, h::MadLoF>;
          }), t, t, t, t);
      return;
    }
    case Opcode::MadCC: case Opcode::MadC: {
      bool hi = in.mulMode == ptx::MulMode::hi;
      bool useC = oc == Opcode::MadC;
      bool setC = oc == Opcode::MadCC || cc;
      auto pick = [&](auto x) -> Handler {
        using T = decltype(x);
        if (hi) return useC ? (setC ? &h::madCarry<T, true, true, true> : &h::madCarry<T, true, true, false>) : &h::madCarry<T, true, false, true>;
        return useC ? (setC ? &h::madCarry<T, false, true, true> : &h::madCarry<T, false, true, false>) : &h::madCarry<T, false, false, true>;
      };
      Handler hnd;
      switch (t) {
        case Type::s32: hnd = pick(int32_t{}); break;
        case Type::u32: case Type::b32: hnd = pick(uint32_t{}); break;
        case Type::s64: hnd = pick(int64_t{}); break;
        case Type::u64: case Type::b64: hnd = pick(uint64_t{}); break;
        default: return unsupported(in);
      }
      ter(hnd, t, t, t, t);
      return;
    }
    case Opcode::Mul24:
      if (in.mulMode == ptx::MulMode::hi) return bin(isSigned(t) ? &h::mul24hi<int32_t> : &h::mul24hi<uint32_t>, t, t, t);
      return bin(isSigned(t) ? &h::mul24lo<int32_t> : &h::mul24lo<uint32_t>, t, t, t);
    case Opcode::Mad24:
      if (in.mulMode == ptx::MulMode::hi || sat) return unsupported(in);
      ter(isSigned(t) ? &h::mad24lo<int32_t> : &h::mad24lo<uint32_t>, t, t, t, t);
      return;
    case Opcode::Sad:
      ter(byInt163264(t, line_, [](auto x) -> Handler { return &h::sad<decltype(x)>; }), t, t, t, t);
      return;
    case Opcode::Div:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::DivIF>; }), t, t, t);
    case Opcode::Rem:
      return bin(byInt163264(t, line_, [](auto x) -> Handler { return &h::binary<decltype(x), h::RemIF>; }), t, t, t);
    case Opcode::Abs:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::AbsIF>; }), t, t);
      return;
    case Opcode::Neg:
      un(byInt163264(t, line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NegIF>; }), t, t);
      return;
    case Opcode::Min:
    case Opcode::Max: {
      if (ptx::typeKind(t) == ptx::TypeKind::Unsigned && in.has(ptx::Flag::relu)) return unsupported(in);
      bool mn = oc == Opcode::Min;
      if (in.has(ptx::Flag::relu)) {
        if (t != Type::s32) return unsupported(in);
        return bin(mn ? &h::binary<int32_t, MinReluF> : &h::binary<int32_t, MaxReluF>, t, t, t);
      }
      return bin(byInt163264(t, line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return mn ? &h::binary<T, h::MinF> : &h::binary<T, h::MaxF>;
                 }), t, t, t);
    }
    case Opcode::Popc:
    case Opcode::Clz: {
      Op* op = un(sizeOf(t) == 8 ? &h::popcClz<uint64_t> : &h::popcClz<uint32_t>, t, Type::u32);
      op->aux = oc == Opcode::Clz;
      return;
    }
    case Opcode::Bfind: {
      bool sh = in.has(ptx::Flag::shiftamt);
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = sh ? &h::bfind<int32_t, true> : &h::bfind<int32_t, false>; break;
        case Type::u32: hnd = sh ? &h::bfind<uint32_t, true> : &h::bfind<uint32_t, false>; break;
        case Type::s64: hnd = sh ? &h::bfind<int64_t, true> : &h::bfind<int64_t, false>; break;
        case Type::u64: hnd = sh ? &h::bfind<uint64_t, true> : &h::bfind<uint64_t, false>; break;
        default: return unsupported(in);
      }
      un(hnd, t, Type::u32);
      return;
    }
    case Opcode::Brev:
      un(sizeOf(t) == 8 ? &h::unary<uint64_t, h::BrevF> : &h::unary<uint32_t, h::BrevF>, t, t);
      return;
    case Opcode::Bfe: {
      Handler hnd = nullptr;
      switch (t) {
        case Type::s32: hnd = &h::bfe<int32_t>; break;
        case Type::u32: case Type::b32: hnd = &h::bfe<uint32_t>; break;
        case Type::s64: hnd = &h::bfe<int64_t>; break;
        case Type::u64: case Type::b64: hnd = &h::bfe<uint64_t>; break;
        default: return unsupported(in);
      }
      ter(hnd, t, Type::u32, Type::u32, t);
      return;
    }
    case Opcode::Bfi: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t), c = src(opnd(in, 3), Type::u32),
               e = src(opnd(in, 4), Type::u32);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(sizeOf(t) == 8 ? &h::bfi<uint64_t> : &h::bfi<uint32_t>);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.c = c;
      op.e = e;
      finish(d);
      return;
    }
    case Opcode::And: case Opcode::Or: case Opcode::Xor: {
      return bin(byBits(sizeOf(t), line_, [&](auto x) -> Handler {
                   using T = decltype(x);
                   return oc == Opcode::And ? &h::binary<T, h::AndF> : oc == Opcode::Or ? &h::binary<T, h::OrF> : &h::binary<T, h::XorF>;
                 }), t, t, t);
    }
    case Opcode::Not:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::NotF>; }), t, t);
      return;
    case Opcode::Cnot:
      un(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::unary<decltype(x), h::CnotF>; }), t, t);
      return;
    case Opcode::Shl:
      return bin(byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), true>; }), t, Type::u32, t);
    case Opcode::Shr: {
      Handler hnd = isSigned(t) ? byInt163264(t, line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; })
                                : byBits(sizeOf(t), line_, [](auto x) -> Handler { return &h::shift<decltype(x), false>; });
      return bin(hnd, t, Type::u32, t);
    }
    case Opcode::Lop3: {
      Op* op = ter(&ctl::lop3, Type::b32, Type::b32, Type::b32, Type::b32);
      const Operand& lut = opnd(in, 4);
      if (lut.kind != OperandKind::Imm) fail(line_, "lop3 needs an immediate lookup table");
      op->imm = lut.value & 0xff;
      return;
    }
    case Opcode::Shf: {
      bool left = fn_->hasMod(in, ptx::Mod::shf_l);
      bool clamp = in.has(ptx::Flag::clamp);
      Handler hnd = left ? (clamp ? &h::shf<true, true> : &h::shf<true, false>) : (clamp ? &h::shf<false, true> : &h::shf<false, false>);
      ter(hnd, Type::b32, Type::b32, Type::u32, Type::b32);
      return;
    }
    case Opcode::Prmt: {
      Op* op = ter(&ctl::prmt, Type::b32, Type::b32, Type::b32, Type::b32);
      uint32_t mode = 0;
      if (fn_->hasMod(in, ptx::Mod::f4e)) mode = 1;
      else if (fn_->hasMod(in, ptx::Mod::b4e)) mode = 2;
      else if (fn_->hasMod(in, ptx::Mod::rc8)) mode = 3;
      else if (fn_->hasMod(in, ptx::Mod::ecl)) mode = 4;
      else if (fn_->hasMod(in, ptx::Mod::ecr)) mode = 5;
      else if (fn_->hasMod(in, ptx::Mod::rc16)) mode = 6;
      op->aux = mode;
      return;
    }
    case Opcode::Dp4a: case Opcode::Dp2a: {
      Type ta = in.types[0], tb = in.numTypes > 1 ? in.types[1] : in.types[0];
      uint32_t aux = (isSigned(ta) ? 1 : 0) | (isSigned(tb) ? 2 : 0);
      if (oc == Opcode::Dp2a && in.mulMode == ptx::MulMode::hi) aux |= 4;
      Op* op = ter(oc == Opcode::Dp4a ? &ctl::dp4a : &ctl::dp2a, Type::b32, Type::b32, Type::b32, Type::b32);
      op->aux = aux;
      return;
    }
    case Opcode::Fns: {
      ter(&ctl::fns, Type::b32, Type::u32, Type::s32, Type::b32);
      return;
    }
    case Opcode::Bmsk: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::bmsk);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.aux = in.has(ptx::Flag::wrap) ? 1 : 0;
      finish(d);
      return;
    }
    case Opcode::Szext: {
      uint32_t a = src(opnd(in, 1), Type::u32), b = src(opnd(in, 2), Type::u32);
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::szext);
      op.d = d.off;
      op.a = a;
      op.b = b;
      op.aux = (isSigned(t) ? 1 : 0) | (in.has(ptx::Flag::wrap) ? 2 : 0);
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerFloat(const Instruction& in) {
  Type t = in.type();
  Opcode oc = in.opcode;
  Round rm = roundingOf(in.rounding);
  // .f32x2 (sm_100 add/sub/mul/fma): the f32 operation on each half of 64-bit registers, low half first.
  const bool pair = t == Type::f32x2;
  const Type et = pair ? Type::f32 : t;
  bool ftz = in.has(ptx::Flag::ftz) && et == Type::f32;
  bool sat = in.has(ptx::Flag::sat);
  auto modes = [&](auto tag, auto fn) -> Handler {
    using F = decltype(tag);
    return byRound(rm, [&](auto r) {
      return byBool(ftz, [&](auto fz) {
        return byBool(sat, [&](auto st) -> Handler {
          return fn(F{}, r, fz, st);
        });
      });
    });
  };
  // Emits hnd with sources `n` operands from index 1 into operand 0; pairs unpack, run it per half and pack.
  auto emitWith = [&](Handler hnd, unsigned n) {
    if (!pair) {
      uint32_t s[3] = {0, 0, 0};
      for (unsigned k = 0; k < n; ++k) s[k] = src(opnd(in, 1 + k), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = s[0];
      op.b = s[1];
      op.c = s[2];
      finish(d);
      return;
    }
    uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (unsigned k = 0; k < n; ++k) {
      uint32_t r = src(opnd(in, 1 + k), Type::b64);
      lo[k] = temp(4);
      hi[k] = temp(4);
      Op& u = emit(&h::unpack<uint32_t, uint64_t, 2>);
      u.a = r;
      u.d = lo[k];
      u.b = hi[k];
    }
    uint32_t rlo = temp(4), rhi = temp(4);
    for (int half = 0; half < 2; ++half) {
      const uint32_t* s = half ? hi : lo;
      Op& op = emit(hnd);
      op.d = half ? rhi : rlo;
      op.a = s[0];
      op.b = s[1];
      op.c = s[2];
    }
    Dst d = dst(opnd(in, 0), Type::b64);
    Op& p = emit(&h::pack<uint32_t, uint64_t, 2>);
    p.d = d.off;
    p.a = rlo;
    p.b = rhi;
    finish(d);
  };
  auto bin = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fbinary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 2);
  };
  auto ter = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(et, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::fternary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    emitWith(hnd, 3);
  };
  auto un = [&](auto functor) {
    using Fn = decltype(functor);
    Handler hnd = byFloat(t, line_, [&](auto ft) {
      return modes(ft, [&](auto f, auto r, auto fz, auto st) -> Handler {
        return &h::funary<decltype(f), Fn, decltype(r)::value, decltype(fz)::value, decltype(st)::value>;
      });
    });
    uint32_t a = src(opnd(in, 1), t);
    Dst d = dst(opnd(in, 0), t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    finish(d);
  };
  switch (oc) {
    case Opcode::Add: return bin(h::FAdd{});
    case Opcode::Sub: return bin(h::FSub{});
    case Opcode::Mul: return bin(h::FMul{});
    case Opcode::Div:
      if (in.has(ptx::Flag::approx) && t == Type::f32) return bin(h::FDivApprox{});
      return bin(h::FDiv{});
    case Opcode::Fma: return ter(h::FFma{});
    case Opcode::Mad:
      if (in.rounding == ptx::Rounding::none && t == Type::f32) return ter(h::FMadNoFuse{});
      return ter(h::FFma{});
    case Opcode::Min:
      if (in.has(ptx::Flag::xorsign)) return bin(FXorsignAbs<false>{});
      if (in.has(ptx::Flag::NaN)) return bin(FMinNaN{});
      return bin(h::FMin{});
    case Opcode::Max:
      if (in.has(ptx::Flag::xorsign)) return bin(FXorsignAbs<true>{});
      if (in.has(ptx::Flag::NaN)) return bin(FMaxNaN{});
      return bin(h::FMax{});
    case Opcode::Sqrt: return un(h::FSqrt{});
    case Opcode::Rcp:
      if (in.has(ptx::Flag::approx) && t == Type::f64) return un(h::FRcpApproxF64{});
      return un(h::FRcp{});
    case Opcode::Rsqrt: return un(h::FRsqrt{});
    case Opcode::Sin: return un(h::FSin{});
    case Opcode::Cos: return un(h::FCos{});
    case Opcode::Lg2: return un(h::FLg2{});
    case Opcode::Ex2: return un(h::FEx2{});
    case Opcode::Tanh: return un(h::FTanh{});
    case Opcode::Abs:
    case Opcode::Neg: {
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      Handler hnd = t == Type::f32 ? (oc == Opcode::Abs ? &h::fabsBits<float> : &h::fnegBits<float>)
                                   : (oc == Opcode::Abs ? &h::fabsBits<double> : &h::fnegBits<double>);
      Op& op = emit(hnd);
      op.d = d.off;
      op.a = a;
      op.aux = ftz;
      finish(d);
      return;
    }
    case Opcode::Testp: {
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), Type::pred);
      uint32_t kind = 0;
      if (fn_->hasMod(in, ptx::Mod::finite)) kind = 0;
      else if (fn_->hasMod(in, ptx::Mod::infinite)) kind = 1;
      else if (fn_->hasMod(in, ptx::Mod::number)) kind = 2;
      else if (fn_->hasMod(in, ptx::Mod::notanumber)) kind = 3;
      else if (fn_->hasMod(in, ptx::Mod::normal)) kind = 4;
      else if (fn_->hasMod(in, ptx::Mod::subnormal)) kind = 5;
      Op& op = emit(t == Type::f32 ? &testp<float> : &testp<double>);
      op.d = d.off;
      op.a = a;
      op.aux = kind;
      finish(d);
      return;
    }
    case Opcode::Copysign: {
      uint32_t a = src(opnd(in, 1), t), b = src(opnd(in, 2), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(t == Type::f32 ? &copysignOp<uint32_t> : &copysignOp<uint64_t>);
      op.d = d.off;
      op.a = a;
      op.b = b;
      finish(d);
      return;
    }
    default: return unsupported(in);
  }
}

// add/min/max on .u16x2/.s16x2 (sm_90 SIMD integer forms).
void KernelLowerer::lowerPacked16(const Instruction& in) {
  bool s = in.type() == Type::s16x2;
  Handler hnd = nullptr;
  switch (in.opcode) {
    case Opcode::Add: hnd = s ? &h::packed16<0, true> : &h::packed16<0, false>; break;
    case Opcode::Min: hnd = s ? &h::packed16<1, true> : &h::packed16<1, false>; break;
    case Opcode::Max: hnd = s ? &h::packed16<2, true> : &h::packed16<2, false>; break;
    default: return unsupported(in);
  }
  uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::b32);
  Dst d = dst(opnd(in, 0), Type::b32);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  op.aux = in.has(ptx::Flag::relu) ? 1 : 0;
  finish(d);
}

void KernelLowerer::lowerHalf(const Instruction& in) {
  Type t = in.type();
  Round rm = roundingOf(in.rounding);
  bool relu = in.has(ptx::Flag::relu) || in.has(ptx::Flag::NaN);
  Handler hnd = halfHandler(in.opcode, t, rm, in.has(ptx::Flag::ftz), in.has(ptx::Flag::sat), relu);
  if (!hnd) return unsupported(in);
  unsigned nsrc = in.numOperands - 1;
  uint32_t s[3] = {kZeroReg, kZeroReg, kZeroReg};
  for (unsigned k = 0; k < nsrc && k < 3; ++k) s[k] = src(opnd(in, k + 1), t);
  Dst d = dst(opnd(in, 0), t);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = s[0];
  op.b = s[1];
  op.c = s[2];
  finish(d);
}

void KernelLowerer::lowerMov(const Instruction& in) {
  Type t = in.type();
  const Operand& d0 = opnd(in, 0);
  const Operand& s0 = opnd(in, 1);
  unsigned size = sizeOf(t);
  if (d0.kind == OperandKind::Vector) {  // unpack
    unsigned n = unsigned(d0.value);
    unsigned part = size / n;
    uint32_t a = src(s0, t);
    uint32_t regs[4] = {0, 0, 0, 0};
    std::vector<Dst> dsts;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    for (unsigned k = 0; k < n; ++k) {
      const Operand& e = fn_->elems[d0.index + k];
      if (e.kind == OperandKind::Sink) continue;
      Dst d = dst(e, pt);
      regs[k] = d.off;
      dsts.push_back(d);
    }
    Handler hnd = nullptr;
    if (size == 8 && n == 2) hnd = &h::unpack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4) hnd = &h::unpack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2) hnd = &h::unpack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4) hnd = &h::unpack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2) hnd = &h::unpack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2) hnd = &h::unpack128;
    else return unsupported(in);
    Op& op = emit(hnd);
    op.a = a;
    op.d = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
    for (auto& d : dsts) finish(d);
    return;
  }
  if (s0.kind == OperandKind::Vector) {  // pack
    unsigned n = unsigned(s0.value);
    unsigned part = size / n;
    Type pt = part == 1 ? Type::b8 : part == 2 ? Type::b16 : part == 4 ? Type::b32 : Type::b64;
    uint32_t regs[4] = {0, 0, 0, 0};
    for (unsigned k = 0; k < n; ++k) regs[k] = src(fn_->elems[s0.index + k], pt);
    Handler hnd = nullptr;
    if (size == 8 && n == 2) hnd = &h::pack<uint32_t, uint64_t, 2>;
    else if (size == 8 && n == 4) hnd = &h::pack<uint16_t, uint64_t, 4>;
    else if (size == 4 && n == 2) hnd = &h::pack<uint16_t, uint32_t, 2>;
    else if (size == 4 && n == 4) hnd = &h::pack<uint8_t, uint32_t, 4>;
    else if (size == 2 && n == 2) hnd = &h::pack<uint8_t, uint16_t, 2>;
    else if (size == 16 && n == 2) hnd = &h::pack128;
    else return unsupported(in);
    Dst d = dst(d0, t);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = regs[0];
    op.b = regs[1];
    op.c = regs[2];
    op.e = regs[3];
    finish(d);
    return;
  }
  if (s0.kind == OperandKind::Special && d0.kind == OperandKind::Reg) {
    auto sr = static_cast<ptx::SpecialReg>(s0.index);
    unsigned ss = ptx::specialRegSize(sr);
    if (ss == sizeOf(regType(d0.index))) {
      uint32_t component = ptx::specialRegHasComponents(sr) ? ptx::selComponent(s0.sel) : 0;
      Op& op = emit(ctl::sregHandler(sr, component));
      op.d = regOf(d0.index);
      op.aux = s0.index;
      op.e = component;
      op.f = ss;
      return;
    }
  }
  uint32_t a = src(s0, t);
  Dst d = dst(d0, t);
  Op& op = emit(size == 16 ? &h::mov<h::B128> : byBits(size, line_, [](auto x) -> Handler { return &h::mov<decltype(x)>; }));
  op.d = d.off;
  op.a = a;
  finish(d);
}

// Video instructions: the selectors and negations are the handler's (lower_video.cpp); the registers are read and
// written whole.
void KernelLowerer::lowerVideo(const Instruction& in) {
  uint32_t aux = 0;
  uint64_t imm = 0;
  Handler hnd = videoHandler(*fn_, in, &aux, &imm);
  if (!hnd) return unsupported(in);
  auto whole = [&](unsigned k) {
    Operand o = opnd(in, k);
    o.sel = 0;
    o.flags &= uint8_t(~ptx::kOperandMinus);
    return o;
  };
  uint32_t a = src(whole(1), Type::u32);
  uint32_t b = src(whole(2), Type::u32);
  uint32_t c = in.numOperands > 3 ? src(whole(3), Type::u32) : kZeroReg;
  Dst d = dst(whole(0), Type::u32);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  op.b = b;
  op.c = c;
  op.aux = aux;
  op.imm = int64_t(imm);
  finish(d);
}

void KernelLowerer::lowerCvt(const Instruction& in) {
  Type dt = in.types[0];
  Type st = in.numTypes > 1 ? in.types[1] : in.types[0];
  Round rm = roundingOf(in.rounding);
  bool ir = isIntRounding(in.rounding);
  bool sat = in.has(ptx::Flag::sat);
  bool ftz = in.has(ptx::Flag::ftz);
  bool dInt = !isFloat(dt), sInt = !isFloat(st);
  bool relu = in.has(ptx::Flag::relu), satfinite = in.has(ptx::Flag::satfinite);
  if (relu || satfinite || dt == Type::f16x2 || dt == Type::bf16x2 || dt == Type::e4m3x2 || dt == Type::e5m2x2 ||
      dt == Type::tf32) {
    uint32_t aux = 0;
    unsigned nsrc = 0;
    Handler hnd = cvtNarrowHandler(dt, st, rm, in.rounding == ptx::Rounding::rna, relu, satfinite, &aux, &nsrc);
    if (!hnd || in.numOperands != nsrc + 1) return unsupported(in, "conversion");
    uint32_t a = src(opnd(in, 1), st), b = nsrc > 1 ? src(opnd(in, 2), st) : kZeroReg;
    Dst d = dst(opnd(in, 0), dt);
    Op& op = emit(hnd);
    op.d = d.off;
    op.a = a;
    op.b = b;
    op.aux = aux;
    finish(d);
    return;
  }
  uint32_t a = src(opnd(in, 1), st);
  Type curT = st;
  // f16/bf16 to non-f32: go through f32 (exact)
  if ((st == Type::f16 || st == Type::bf16) && dt != Type::f32 && dt != st) {
    uint32_t t1 = temp(4);
    Op& op = emit(cvtHandler(Type::f32, st, num::RN, false, false, false));
    op.d = t1;
    op.a = a;
    a = t1;
    curT = Type::f32;
  }
  // integers to f16/bf16: through f64 (exact for the values that do not overflow)
  if (sInt && (dt == Type::f16 || dt == Type::bf16)) {
    uint32_t t1 = temp(8);
    Op& op = emit(cvtHandler(Type::f64, st, num::RN, false, false, false));
    op.d = t1;
    op.a = a;
    a = t1;
    curT = Type::f64;
    if (dt == Type::bf16) {
      uint32_t t2 = temp(4);
      Op& op2 = emit(cvtHandler(Type::f32, Type::f64, rm, false, false, false));
      op2.d = t2;
      op2.a = t1;
      a = t2;
      curT = Type::f32;
    }
  }
  if (dt == Type::bf16 && curT == Type::f64) {
    uint32_t t2 = temp(4);
    Op& op2 = emit(cvtHandler(Type::f32, Type::f64, rm, false, false, false));
    op2.d = t2;
    op2.a = a;
    a = t2;
    curT = Type::f32;
  }
  (void)dInt;
  Handler hnd = cvtHandler(dt, curT, rm, ir || (dInt && !sInt), sat, ftz);
  if (!hnd) return unsupported(in, "conversion");
  Dst d = dst(opnd(in, 0), dt);
  Op& op = emit(hnd);
  op.d = d.off;
  op.a = a;
  finish(d);
}

void KernelLowerer::lowerBar(const Instruction& in) {
  usesBarriers_ = true;
  Op tmp;
  uint32_t kind = 0;
  unsigned k = 0;
  uint32_t dReg = 0;
  switch (in.opcode) {
    case Opcode::BarSync: case Opcode::BarrierSync: kind = 0; break;
    case Opcode::BarArrive: case Opcode::BarrierArrive: kind = 1; break;
    case Opcode::BarRed: case Opcode::BarrierRed:
      switch (in.redOp) {
        case ptx::RedOp::popc: kind = 2; break;
        case ptx::RedOp::and_: kind = 3; break;
        case ptx::RedOp::or_: kind = 4; break;
        default: return unsupported(in);
      }
      {
        Type dt = kind == 2 ? Type::u32 : Type::pred;
        const Operand& d0 = opnd(in, k++);
        if (d0.kind != OperandKind::Reg || sizeOf(regType(d0.index)) != sizeOf(dt)) fail(line_, "bar.red destination");
        dReg = regOf(d0.index);
      }
      break;
    default: return unsupported(in);
  }
  uint32_t id = in.numOperands > k ? src(opnd(in, k++), Type::u32) : literal(0, 4);
  uint32_t count = 0;
  uint32_t pred = 0;
  bool neg = false;
  unsigned remaining = in.numOperands - k;
  if (kind >= 2) {
    if (remaining == 2) count = src(opnd(in, k++), Type::u32);
    pred = srcPred(opnd(in, k++), neg);
  } else if (remaining >= 1) {
    count = src(opnd(in, k++), Type::u32);
  }
  Op& op = emit(&ctl::barSync);
  op.a = id;
  op.b = count;
  op.c = pred;
  op.d = dReg;
  op.aux = kind | (neg ? 256 : 0);
}

void KernelLowerer::lowerWarp(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::ShflSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), Type::b32), b = src(opnd(in, 2), Type::u32), c = src(opnd(in, 3), Type::u32);
      uint32_t mask = in.numOperands > 4 ? src(opnd(in, 4), Type::u32) : literal(0xffffffffu, 4);
      Op& op = emit(&ctl::shfl);
      if (d0.kind == OperandKind::RegPair) {
        op.d = regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else {
        op.d = dst(d0, Type::b32).off;
      }
      op.a = a;
      op.b = b;
      op.c = c;
      op.e = mask;
      switch (in.shfl) {
        case ptx::ShflMode::up: op.aux = 0; break;
        case ptx::ShflMode::down: op.aux = 1; break;
        case ptx::ShflMode::bfly: op.aux = 2; break;
        default: op.aux = 3; break;
      }
      return;
    }
    case Opcode::Shfl: return unsupported(in, "shfl without .sync (use shfl.sync)");
    case Opcode::Vote:
    case Opcode::VoteSync: {
      bool ballot = in.vote == ptx::VoteMode::ballot;
      const Operand& d0 = opnd(in, 0);
      bool neg;
      uint32_t p = srcPred(opnd(in, 1), neg);
      uint32_t d = ballot ? dst(d0, Type::b32).off : dst(d0, Type::pred).off;
      Op& op = emit(&ctl::vote);
      op.d = d;
      op.a = p;
      uint32_t kind = in.vote == ptx::VoteMode::all ? 0 : in.vote == ptx::VoteMode::any ? 1 : in.vote == ptx::VoteMode::uni ? 2 : 3;
      op.aux = kind | (neg ? 16 : 0);
      return;
    }
    case Opcode::Activemask: {
      Dst d = dst(opnd(in, 0), Type::b32);
      Op& op = emit(&ctl::activemask);
      op.d = d.off;
      finish(d);
      return;
    }
    case Opcode::MatchSync: {
      Type t = in.type();
      const Operand& d0 = opnd(in, 0);
      uint32_t a = src(opnd(in, 1), t);
      Op& op = emit(&ctl::matchSync);
      if (d0.kind == OperandKind::RegPair) {
        op.d = regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else {
        op.d = dst(d0, Type::b32).off;
      }
      op.a = a;
      op.imm = sizeOf(t);
      op.aux = in.vote == ptx::VoteMode::all ? 1 : 0;
      return;
    }
    case Opcode::ReduxSync: {
      Type t = in.type();
      if (sizeOf(t) != 4 || isFloat(t)) return unsupported(in);
      uint32_t a = src(opnd(in, 1), t);
      Dst d = dst(opnd(in, 0), t);
      Op& op = emit(&ctl::reduxSync);
      op.d = d.off;
      op.a = a;
      uint32_t kind = 0;
      switch (in.redOp) {
        case ptx::RedOp::add: kind = 0; break;
        case ptx::RedOp::min: kind = 1; break;
        case ptx::RedOp::max: kind = 2; break;
        case ptx::RedOp::and_: kind = 3; break;
        case ptx::RedOp::or_: kind = 4; break;
        case ptx::RedOp::xor_: kind = 5; break;
        default: return unsupported(in);
      }
      op.aux = kind | (isSigned(t) ? 256 : 0);
      finish(d);
      return;
    }
    case Opcode::ElectSync: {
      const Operand& d0 = opnd(in, 0);
      uint32_t mask = src(opnd(in, 1), Type::u32);
      Op& op = emit(&ctl::electSync);
      if (d0.kind == OperandKind::RegPair) {
        op.d = d0.index == kNoIndex ? 0 : regOf(d0.index);
        op.f = regOf(uint32_t(d0.value));
      } else if (d0.kind == OperandKind::Reg) {
        op.d = regOf(d0.index);
      }
      op.a = mask;
      return;
    }
    default: return unsupported(in);
  }
}

void KernelLowerer::lowerCall(const Instruction& in) {
  std::vector<const Operand*> rets, args;
  const Operand* callee = nullptr;
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn_->operands[in.firstOperand + k];
    if (o.kind == OperandKind::List) {
      std::vector<const Operand*>& into = callee ? args : rets;
      for (int64_t q = 0; q < o.value; ++q) into.push_back(&fn_->elems[o.index + uint32_t(q)]);
    } else if (!callee && (o.kind == OperandKind::Symbol || o.kind == OperandKind::Reg)) {
      callee = &o;
    }
  }
  if (!callee) fail(line_, "call without a target");
  if (callee->kind != OperandKind::Symbol || callee->symKind != SymKind::Function)
    fail(line_, "call target must be a function or a register");
  uint32_t calleeIr = definitionOf(callee->index);
  const ptx::Function& target = mod_.functions[calleeIr];
  if (!target.hasBody) return lowerBuiltinCall(in, mod_.str(target.name), args, rets);
  lowerDirectCall(calleeIr, args, rets);
}

// call through a register (with a .callprototype): function addresses are handles (kFunctionAddressBase | IR
// index), so the call becomes one guarded direct call per address-taken function with the same signature; lanes
// whose address names no such function fault.
void KernelLowerer::lowerIndirectCall(const Instruction& in) {
  std::vector<const Operand*> rets, args;
  const Operand* callee = calleeOperand(*fn_, in);
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn_->operands[in.firstOperand + k];
    if (o.kind == OperandKind::List) {
      std::vector<const Operand*>& into = &o > callee ? args : rets;
      for (int64_t q = 0; q < o.value; ++q) into.push_back(&fn_->elems[o.index + uint32_t(q)]);
    }
  }
  uint32_t target = allocReg(8);
  {
    uint32_t t = src(*callee, Type::u64);
    Op& op = emit(&h::mov<uint64_t>);
    op.d = target;
    op.a = t;
  }
  auto sameSignature = [&](const ptx::Function& f) {
    if (f.params.size() != args.size() || f.returns.size() != rets.size()) return false;
    return true;
  };
  bool guarded = in.guard != kNoIndex;
  // matched: lanes that call some function (or do not execute the call at all)
  uint32_t matched = allocReg(1);
  if (guarded) {
    Op& op = emit(in.guardNegated ? &h::predLogic<4> : &h::predLogic<3>);
    op.d = matched;
    op.a = regOf(in.guard);
    op.b = regOf(in.guard);
  } else {
    Op& op = emit(&h::predLogic<4>);
    op.d = matched;
    op.a = literal(0, 1);
    op.b = op.a;
  }
  std::vector<std::pair<uint32_t, uint32_t>> candidates;  // (IR function, predicate register)
  for (uint32_t f : addressTakenFunctions()) {
    if (!sameSignature(mod_.functions[f]) || !instanceOfIr_.count(f)) continue;
    uint32_t p = allocReg(1);
    Op& op = emit(&h::setp<uint64_t, h::EQ>);
    op.d = p;
    op.a = target;
    op.b = literal(kFunctionAddressBase | f, 8);
    if (guarded) {
      op.c = regOf(in.guard);
      op.aux = uint8_t(1 | (in.guardNegated ? 16 : 0));
    }
    Op& orOp = emit(&h::predLogic<1>);
    orOp.d = matched;
    orOp.a = matched;
    orOp.b = p;
    candidates.push_back({f, p});
  }
  auto guardedBlock = [&](uint32_t pred, bool negated, auto body) {
    uint32_t guardOp = here();
    Op& g = emit(&ctl::guard);
    g.a = pred;
    g.aux = negated ? 1 : 0;
    body();
    emit(&ctl::unguard);
    pending_.push_back({guardOp, here(), PendingTarget::Absolute});
  };
  guardedBlock(matched, true, [&] {
    Op& op = emit(&ctl::trap);
    op.aux = 2;
    op.imm = int64_t(prog_.messages.size());
    prog_.messages.push_back(fmt::format("indirect call (PTX line {}) through an address that is not a function "
                                         "of the module with the call's signature", in.loc.line));
  });
  for (auto [f, p] : candidates) guardedBlock(p, false, [&] { lowerDirectCall(f, args, rets); });
}

void KernelLowerer::lowerDirectCall(uint32_t calleeIr, const std::vector<const Operand*>& args,
                                    const std::vector<const Operand*>& rets) {
  const ptx::Function& target = mod_.functions[calleeIr];
  std::string_view name = mod_.str(target.name);
  const FuncInstance& ti = instances_[instanceOfIr_.at(calleeIr)];
  CallSite cs;
  cs.callee = calleeIr;  // IR index until the kernel is finished
  cs.callerFrameBytes = fi_->frameBytes;
  if (args.size() != target.params.size() || rets.size() != target.returns.size())
    fail(line_, fmt::format("call to '{}' with the wrong number of arguments", name));
  for (size_t k = 0; k < args.size(); ++k) {
    const Operand& o = *args[k];
    const auto& p = target.params[k];
    uint32_t size = uint32_t(p.size ? p.size : p.elementSize());
    CallArg ca;
    ca.dst = ti.paramOffset[k];
    ca.size = size;
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->localOffset[o.index] + uint32_t(o.value);
    } else if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Param && !fn_->isEntry) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->paramOffset[o.index] + uint32_t(o.value);
    } else {
      Type pt = p.type == Type::pred ? Type::pred : (size == 1 ? Type::b8 : size == 2 ? Type::b16 : size == 4 ? Type::b32 : Type::b64);
      if (size > 8) fail(line_, "aggregate call argument must be a .param variable");
      ca.kind = CallArg::RegToFrame;
      ca.src = src(o, pt);
    }
    cs.args.push_back(ca);
  }
  for (size_t k = 0; k < rets.size(); ++k) {
    const Operand& o = *rets[k];
    const auto& p = target.returns[k];
    uint32_t size = uint32_t(p.size ? p.size : p.elementSize());
    if (o.kind != OperandKind::Symbol || o.symKind != SymKind::Local)
      fail(line_, "call return value must be a .param variable");
    cs.rets.push_back(CallArg{CallArg::FrameToFrame, ti.returnOffset[k], fi_->localOffset[o.index] + uint32_t(o.value), size});
  }
  uint32_t index = uint32_t(prog_.calls.size());
  prog_.calls.push_back(cs);
  callerOf_.push_back(instanceOfIr_.at(fi_->irIndex));
  callOps_.push_back({here(), calleeIr});
  Op& op = emit(&ctl::call);
  op.aux = index;
}

void KernelLowerer::lowerBuiltinCall(const Instruction& in, std::string_view name, const std::vector<const Operand*>& args,
                                     const std::vector<const Operand*>& rets) {
  // Arguments of builtins are .param variables of the caller (or registers): load them into registers.
  auto argReg = [&](size_t k, Type t) -> uint32_t {
    if (k >= args.size()) fail(line_, fmt::format("{}: missing argument", name));
    const Operand& o = *args[k];
    if (o.kind == OperandKind::Symbol && (o.symKind == SymKind::Local || (o.symKind == SymKind::Param && !fn_->isEntry))) {
      uint32_t off = (o.symKind == SymKind::Local ? fi_->localOffset[o.index] : fi_->paramOffset[o.index]) + uint32_t(o.value);
      uint32_t r = temp(sizeOf(t));
      Handler hnd = ldHandler(mem::Frame, 8, t, sizeOf(t), 1);
      Op& op = emit(hnd);
      op.d = r;
      op.a = kZeroReg;
      op.imm = off;
      return r;
    }
    return src(o, t);
  };
  const BuiltinFunction* b = nullptr;
  for (const BuiltinFunction& x : kBuiltinFunctions)
    if (x.name == name) b = &x;
  if (!b) {
    if (const RuntimeFunction* f = findRuntimeFunction(name)) return lowerRuntimeCall(name, *f, args, rets);
    return unsupported(in, fmt::format("call to external function '{}'", name));
  }
  uint32_t regs[4] = {kZeroReg, kZeroReg, kZeroReg, kZeroReg};
  for (unsigned k = 0; k < b->argCount; ++k) regs[k] = argReg(k, b->args[k]);
  uint32_t res = b->hasResult ? temp(sizeOf(b->result)) : 0;
  Op& op = emit(b->handler);
  op.a = regs[0];
  op.b = regs[1];
  op.c = regs[2];
  op.e = regs[3];
  op.d = res;
  if (b->hasResult && !rets.empty()) {
    const Operand& o = *rets[0];
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      Op& stOp = emit(stHandler(mem::Frame, 8, b->result, sizeOf(b->result), 1));
      stOp.a = kZeroReg;
      stOp.imm = fi_->localOffset[o.index] + uint32_t(o.value);
      stOp.d = res;
    }
  }
}

// A device runtime call (CUDA dynamic parallelism): the arguments stay where they are (.param variables of the
// frame, or registers) and the handler gathers them per lane.
void KernelLowerer::lowerRuntimeCall(std::string_view name, const RuntimeFunction& f,
                                     const std::vector<const Operand*>& args, const std::vector<const Operand*>& rets) {
  if (args.size() != f.argCount || rets.size() > 1)
    fail(line_, fmt::format("call to '{}' with the wrong number of arguments", name));
  RuntimeSite site;
  site.call = f.call;
  for (size_t k = 0; k < args.size(); ++k) {
    const Operand& o = *args[k];
    uint32_t size = f.argSizes[k];
    CallArg ca;
    ca.dst = runtimeArgOffset(f, unsigned(k));
    ca.size = size;
    if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Local) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->localOffset[o.index] + uint32_t(o.value);
    } else if (o.kind == OperandKind::Symbol && o.symKind == SymKind::Param && !fn_->isEntry) {
      ca.kind = CallArg::FrameToFrame;
      ca.src = fi_->paramOffset[o.index] + uint32_t(o.value);
    } else {
      if (size > 8) fail(line_, fmt::format("{}: aggregate argument must be a .param variable", name));
      ca.kind = CallArg::RegToFrame;
      ca.src = src(o, size == 4 ? Type::b32 : Type::b64);
    }
    site.args.push_back(ca);
  }
  if (!rets.empty() && f.resultSize) {
    const Operand& o = *rets[0];
    if (o.kind != OperandKind::Symbol || o.symKind != SymKind::Local)
      fail(line_, "call return value must be a .param variable");
    site.resultOffset = fi_->localOffset[o.index] + uint32_t(o.value);
    site.resultSize = f.resultSize;
  }
  Op& op = emit(&ctl::deviceRuntime);
  op.aux = uint32_t(prog_.runtimeSites.size());
  prog_.runtimeSites.push_back(std::move(site));
}

void KernelLowerer::lowerInstruction(uint32_t idx) {
  const Instruction& in = fn_->instructions[idx];
  curInst_ = idx;
  bool guarded = in.guard != kNoIndex;
  // control flow first: these consume the guard themselves
  switch (in.opcode) {
    case Opcode::Bra: {
      const Operand& t = opnd(in, in.numOperands - 1);
      const auto& lab = fn_->labels.at(t.index);
      uint32_t block = blockOf_[idx];
      if (!guarded) {
        pending_.push_back({here(), lab.target, PendingTarget::Inst});
        emit(&ctl::braUniform);
      } else {
        pending_.push_back({here(), lab.target, PendingTarget::Inst});
        int32_t r = ipdom_[block];
        pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
        // a setp on the guard right before (same block, nothing in between): it runs the branch itself
        if (lastSetp_ == here() - 1 && prog_.ops[lastSetp_].d == regOf(in.guard))
          prog_.ops[lastSetp_].aux |= h::kSetpThenBranch;
        Op& op = emit(&ctl::braCond);
        op.a = regOf(in.guard);
        op.aux = in.guardNegated ? 1 : 0;
      }
      return;
    }
    case Opcode::Ret:
      if (!fn_->isEntry) {
        uint32_t block = blockOf_[idx];
        pending_.push_back({here(), uint32_t(fn_->instructions.size()), PendingTarget::Inst});
        if (!guarded) {
          emit(&ctl::braUniform);
        } else {
          int32_t r = ipdom_[block];
          pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
          Op& op = emit(&ctl::braCond);
          op.a = regOf(in.guard);
          op.aux = in.guardNegated ? 1 : 0;
        }
        return;
      }
      break;
    case Opcode::BrxIdx: {
      if (guarded) return unsupported(in, "guarded brx.idx");
      const Operand& t = opnd(in, in.numOperands - 1);
      const auto& lab = fn_->labels.at(t.index);
      uint32_t table = uint32_t(brxTargets_.size());
      brxTargets_.emplace_back();
      for (uint32_t q = 0; q < lab.listCount; ++q) {
        const auto& target = fn_->labels.at(fn_->labelRefs[lab.listFirst + q]);
        brxTargets_.back().push_back(target.target);
      }
      brxPending_.push_back({table, uint32_t(prog_.brxTables.size())});
      prog_.brxTables.emplace_back();
      uint32_t block = blockOf_[idx];
      int32_t r = ipdom_[block];
      uint32_t a = src(opnd(in, 0), Type::u32);
      pending_.push_back({here(), r < 0 ? 0xffffffffu : uint32_t(r), PendingTarget::RpcBlock});
      Op& op = emit(&ctl::brxIdx);
      op.a = a;
      op.aux = brxPending_.back().second;
      return;
    }
    case Opcode::Call:
      if (isIndirectCall(*fn_, in)) return lowerIndirectCall(in);  // consumes the guard itself
      break;
    default: break;
  }
  uint32_t guardOp = 0;
  if (guarded) {
    guardOp = here();
    Op& g = emit(&ctl::guard);
    g.a = regOf(in.guard);
    g.aux = in.guardNegated ? 1 : 0;
  }
  lowerBody(in);
  if (guarded) {
    emit(&ctl::unguard);
    pending_.push_back({guardOp, here(), PendingTarget::Absolute});
  }
}

// tex.geom.v4.dtype.ctype d, [handle, {coords}];  tld4.comp.2d.v4.dtype.f32 d, [handle, {coords}];
// suld.b.geom{.v2,.v4}.btype.clamp d, [handle, {coords}];  sust.b.geom{.vec}.btype.clamp [handle, {coords}], v;
// Only the unified (object handle) mode; the operands go to a TextureSite.
void KernelLowerer::lowerTexture(const Instruction& in) {
  bool isSurface = in.opcode == Opcode::Suld || in.opcode == Opcode::Sust;
  bool isStore = in.opcode == Opcode::Sust;
  TextureSite site;
  struct GeometryMod {
    ptx::Mod mod;
    TexGeometry geometry;
    unsigned coords;
    bool layered;
  };
  static constexpr GeometryMod kGeometries[] = {
      {ptx::Mod::d1, TexGeometry::D1, 1, false},     {ptx::Mod::d2, TexGeometry::D2, 2, false},
      {ptx::Mod::d3, TexGeometry::D3, 3, false},     {ptx::Mod::a1d, TexGeometry::A1D, 1, true},
      {ptx::Mod::a2d, TexGeometry::A2D, 2, true},    {ptx::Mod::cube, TexGeometry::Cube, 3, false},
      {ptx::Mod::acube, TexGeometry::ACube, 3, true}};
  const GeometryMod* geometry = nullptr;
  for (const auto& g : kGeometries)
    if (fn_->hasMod(in, g.mod)) geometry = &g;
  if (!geometry) return unsupported(in, "texture geometry");
  if (isSurface && (fn_->hasMod(in, ptx::Mod::comp_p) || geometry->geometry == TexGeometry::Cube ||
                    geometry->geometry == TexGeometry::ACube))
    return unsupported(in, "formatted or cube surface access");
  site.geometry = geometry->geometry;
  site.layered = geometry->layered;
  if (fn_->hasMod(in, ptx::Mod::clamp)) site.clamp = SurfClamp::Clamp;
  else if (fn_->hasMod(in, ptx::Mod::zero)) site.clamp = SurfClamp::Zero;
  // The [handle, {coords}] tuple: register operands only (the unified texture mode).
  const Operand& tuple = opnd(in, isStore ? 0 : 1);
  if (tuple.kind != OperandKind::Bracket || tuple.value < 2) return unsupported(in, "texture reference (non-unified) mode");
  const Operand& handle = fn_->elems[tuple.index];
  const Operand& coordVec = fn_->elems[tuple.index + 1];
  if (handle.kind != OperandKind::Reg || sizeOf(regType(handle.index)) != 8)
    return unsupported(in, "a texture or surface named by a symbol");
  site.handle = regOf(handle.index);
  Type coordType = isSurface ? Type::s32 : in.numTypes > 1 ? in.types[1] : Type::s32;
  site.floatCoords = coordType == Type::f32;
  if (!site.floatCoords && coordType != Type::s32) return unsupported(in, "texture coordinate type");
  auto addCoord = [&](const Operand& c, bool layer) {
    if (site.coordCount >= 4) fail(line_, "too many texture coordinates");
    site.coords[site.coordCount++] = src(c, layer ? Type::s32 : coordType == Type::f32 ? Type::f32 : Type::s32);
  };
  if (coordVec.kind == OperandKind::Vector) {
    unsigned n = unsigned(coordVec.value);
    // Layered geometries put the layer (an integer) first; 2d arrays pad the vector to four elements.
    unsigned wanted = geometry->coords + (geometry->layered ? 1 : 0);
    for (unsigned k = 0; k < n && k < wanted; ++k) addCoord(fn_->elems[coordVec.index + k], geometry->layered && k == 0);
  } else {
    addCoord(coordVec, false);
  }
  // Values: the destination vector (tex, tld4, suld) or the source vector (sust).
  const Operand& values = opnd(in, isStore ? 1 : 0);
  Type valueType = in.type();
  if (isSurface) {
    unsigned bytes = ptx::typeSize(valueType);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return unsupported(in, "surface element type");
    site.valueBytes = bytes;
  } else {
    if (valueType == Type::f32) site.result = TexResult::F32;
    else if (valueType == Type::s32) site.result = TexResult::S32;
    else if (valueType == Type::u32) site.result = TexResult::U32;
    else return unsupported(in, "texture result type");
    if (in.opcode == Opcode::Tld4) {
      site.gather = fn_->hasMod(in, ptx::Mod::comp_g) ? 1 : fn_->hasMod(in, ptx::Mod::comp_b) ? 2
                  : fn_->hasMod(in, ptx::Mod::comp_a) ? 3 : 0;
    }
  }
  std::vector<Dst> pendingDst;
  auto addValue = [&](const Operand& v) {
    if (isStore) {
      site.values[site.valueCount++] = src(v, valueType);
    } else if (v.kind == OperandKind::Sink) {
      site.values[site.valueCount++] = temp(isSurface ? site.valueBytes : 4);
    } else {
      Dst d = dst(v, valueType);
      site.values[site.valueCount++] = d.off;
      pendingDst.push_back(d);
    }
  };
  if (values.kind == OperandKind::Vector) {
    for (unsigned k = 0; k < unsigned(values.value) && k < 4; ++k) addValue(fn_->elems[values.index + k]);
  } else {
    addValue(values);
  }
  if (!isSurface && site.valueCount != 4) return unsupported(in, "texture fetch without a 4-vector destination");
  Op& op = emit(isSurface ? &tex::surface : &tex::fetch);
  op.aux = uint32_t(prog_.texSites.size());
  op.imm = isStore ? 1 : 0;
  prog_.texSites.push_back(site);
  for (const Dst& d : pendingDst) finish(d);
}

void KernelLowerer::lowerBody(const Instruction& in) {
  Type t = in.type();
  switch (in.opcode) {
    case Opcode::Ret:
    case Opcode::Exit:
      emit(&ctl::exitLanes);
      return;
    case Opcode::Call: return lowerCall(in);
    case Opcode::Tex: case Opcode::Tld4: case Opcode::Suld: case Opcode::Sust: return lowerTexture(in);
    case Opcode::Mov: return lowerMov(in);
    case Opcode::Cvt: return lowerCvt(in);
    case Opcode::Vadd: case Opcode::Vsub: case Opcode::Vabsdiff: case Opcode::Vmin: case Opcode::Vmax:
    case Opcode::Vshl: case Opcode::Vshr: case Opcode::Vmad: case Opcode::Vset: case Opcode::Vadd2:
    case Opcode::Vsub2: case Opcode::Vavrg2: case Opcode::Vabsdiff2: case Opcode::Vmin2: case Opcode::Vmax2:
    case Opcode::Vset2: case Opcode::Vadd4: case Opcode::Vsub4: case Opcode::Vavrg4: case Opcode::Vabsdiff4:
    case Opcode::Vmin4: case Opcode::Vmax4: case Opcode::Vset4:
      return lowerVideo(in);
    case Opcode::Ld:
    case Opcode::Ldu: return lowerLdSt(in, false);
    case Opcode::St: return lowerLdSt(in, true);
    case Opcode::Atom: return lowerAtom(in, false);
    case Opcode::Red: return lowerAtom(in, true);
    case Opcode::Setp: case Opcode::Set: case Opcode::Selp: case Opcode::Slct: return lowerCompare(in);
    case Opcode::BarSync: case Opcode::BarrierSync: case Opcode::BarArrive: case Opcode::BarrierArrive:
    case Opcode::BarRed: case Opcode::BarrierRed: return lowerBar(in);
    case Opcode::BarWarpSync: emit(&ctl::barWarpSync); return;
    case Opcode::Membar: case Opcode::Fence: emit(&ctl::fence); return;
    case Opcode::Prefetch: case Opcode::Prefetchu: case Opcode::Pmevent: case Opcode::Griddepcontrol:
    case Opcode::Applypriority: case Opcode::Discard:
      emit(&ctl::nop);
      return;
    case Opcode::Nanosleep: emit(&ctl::nanosleep); return;
    case Opcode::Trap: { Op& op = emit(&ctl::trap); op.aux = 0; return; }
    case Opcode::Brkpt: { Op& op = emit(&ctl::trap); op.aux = 1; return; }
    case Opcode::ShflSync: case Opcode::Shfl: case Opcode::Vote: case Opcode::VoteSync: case Opcode::Activemask:
    case Opcode::MatchSync: case Opcode::ReduxSync: case Opcode::ElectSync:
      return lowerWarp(in);
    case Opcode::Cvta: {
      bool to = in.has(ptx::Flag::to);
      uint32_t space = 0;
      switch (in.space) {
        case ptx::Space::global: case ptx::Space::const_: space = 0; break;
        case ptx::Space::shared: case ptx::Space::shared_cta: case ptx::Space::shared_cluster: space = 1; break;
        case ptx::Space::local: space = 2; break;
        case ptx::Space::param: case ptx::Space::param_entry: space = fn_->isEntry ? 3 : 2; break;
        default: return unsupported(in);
      }
      unsigned size = sizeOf(t);
      if (space == 0) {  // global and generic addresses are the same
        uint32_t a = src(opnd(in, 1), t);
        Dst d = dst(opnd(in, 0), t);
        Op& op = emit(size == 8 ? &h::mov<uint64_t> : &h::mov<uint32_t>);
        op.d = d.off;
        op.a = a;
        finish(d);
        return;
      }
      if (to) {
        uint32_t a = src(opnd(in, 1), Type::u64);
        Dst d = dst(opnd(in, 0), t);
        Op& op = emit(&ctl::cvtaFromGeneric);
        op.d = d.off;
        op.a = a;
        op.aux = space;
        op.f = size;
        finish(d);
      } else {
        uint32_t a = src(opnd(in, 1), t);
        Dst d = dst(opnd(in, 0), Type::u64);
        Op& op = emit(&ctl::cvtaToGeneric);
        op.d = d.off;
        op.a = a;
        op.aux = space;
        op.f = size;
        finish(d);
      }
      return;
    }
    case Opcode::Isspacep: {
      uint32_t space = 0;
      switch (in.space) {
        case ptx::Space::global: space = 0; break;
        case ptx::Space::shared: case ptx::Space::shared_cta: case ptx::Space::shared_cluster: space = 1; break;
        case ptx::Space::local: space = 2; break;
        case ptx::Space::param: case ptx::Space::param_entry: space = 3; break;
        case ptx::Space::const_: space = 0; break;
        default: return unsupported(in);
      }
      uint32_t a = src(opnd(in, 1), Type::u64);
      Dst d = dst(opnd(in, 0), Type::pred);
      Op& op = emit(&ctl::isspacep);
      op.d = d.off;
      op.a = a;
      op.aux = space;
      finish(d);
      return;
    }
    default: break;
  }
  switch (ptx::opcodeClass(in.opcode)) {
    case ptx::OpClass::Arith:
    case ptx::OpClass::Logic:
      if (t == Type::f32 || t == Type::f64) return lowerFloat(in);
      if (t == Type::f32x2 && (in.opcode == Opcode::Add || in.opcode == Opcode::Sub || in.opcode == Opcode::Mul ||
                               in.opcode == Opcode::Fma))
        return lowerFloat(in);
      if (t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2) return lowerHalf(in);
      if (t == Type::u16x2 || t == Type::s16x2) return lowerPacked16(in);
      if (isFloat(t)) return unsupported(in);
      return lowerArith(in);
    case ptx::OpClass::Move:
      if (in.opcode == Opcode::Prmt) return lowerArith(in);
      return unsupported(in);
    default: return unsupported(in);
  }
}

}  // namespace

std::unique_ptr<Program> lowerModule(const ptx::Module& module, std::string& error) {
  auto prog = std::make_unique<Program>();
  // globals the driver allocates: .global and .const variables (module scope)
  std::vector<uint32_t> globalMap(module.globals.size(), kNoIndex);
  for (size_t g = 0; g < module.globals.size(); ++g) {
    const ptx::Variable& v = module.globals[g];
    if (v.space != ptx::Space::global && v.space != ptx::Space::const_) continue;
    GlobalInfo gi;
    gi.name = std::string(module.str(v.name));
    gi.space = v.space == ptx::Space::const_ ? VarSpace::Const : VarSpace::Global;
    switch (v.linkage) {
      case ptx::Linkage::extern_: gi.linkage = Linkage::Extern; break;
      case ptx::Linkage::visible: gi.linkage = Linkage::Visible; break;
      case ptx::Linkage::weak: gi.linkage = Linkage::Weak; break;
      case ptx::Linkage::common: gi.linkage = Linkage::Common; break;
      default: gi.linkage = Linkage::Internal; break;
    }
    gi.size = v.size ? v.size : v.elementSize();
    gi.align = varAlign(v);
    gi.managed = v.managed;
    if (v.hasInit) gi.init = v.init;
    globalMap[g] = uint32_t(prog->globalInfo.size());
    prog->globalInfo.push_back(std::move(gi));
  }
  for (size_t g = 0; g < module.globals.size(); ++g) {
    const ptx::Variable& v = module.globals[g];
    if (globalMap[g] == kNoIndex) continue;
    for (const auto& r : v.relocs) {
      Relocation rel;
      rel.offset = r.offset;
      rel.size = r.size;
      rel.addend = r.addend;
      if (r.isMask) {
        error = fmt::format("line {}: mask() initializers are not supported", v.loc.line);
        return nullptr;
      }
      if (r.symKind == SymKind::Function) {
        rel.isFunction = true;
        rel.symbol = r.index;
        if (!module.functions[r.index].hasBody)  // a declaration: the definition of the same name, if any
          for (uint32_t k = 0; k < module.functions.size(); ++k)
            if (module.functions[k].hasBody && !module.functions[k].isEntry &&
                module.functions[k].name == module.functions[r.index].name)
              rel.symbol = k;
      } else {
        if (globalMap[r.index] == kNoIndex) {
          error = fmt::format("line {}: initializer refers to a variable that has no global address", v.loc.line);
          return nullptr;
        }
        rel.symbol = globalMap[r.index];
      }
      prog->globalInfo[globalMap[g]].relocations.push_back(rel);
    }
  }
  try {
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const ptx::Function& fn = module.functions[f];
      if (!fn.isEntry || !fn.hasBody) continue;
      KernelLowerer kl(module, *prog, globalMap);
      kl.lowerKernel(uint32_t(f));
      // resolve targets: ops do not move any more within this kernel, but the vector may still grow: store
      // indices now, pointers at the end
      for (auto& pt : kl.resolved()) prog->pendingTargets.push_back({pt.op, pt.value, pt.rpc});
    }
  } catch (const LowerError& e) {
    error = fmt::format("line {}: {}", e.line, e.message);
    return nullptr;
  }
  // patch pointers
  for (const auto& pt : prog->pendingTargets) {
    Op& op = prog->ops[pt.op];
    // kinds: RpcBlock resolved to Absolute; Absolute/Inst resolved to op indices
    const Op* target = &prog->ops[pt.target];
    if (pt.rpc) op.rpc = target;
    else op.target = target;
  }
  prog->pendingTargets.clear();
  prog->brxTables.resize(prog->brxTableIndices.size());
  for (size_t t = 0; t < prog->brxTableIndices.size(); ++t)
    for (uint32_t i : prog->brxTableIndices[t]) prog->brxTables[t].push_back(&prog->ops[i]);
  return prog;
}

}  // namespace ptx::exec
