// The lowering of one kernel (KernelLowerer): checked PTX IR -> op stream. Shared by the core (lower.cpp:
// reachability, frame and register layouts, operands, branches and reconvergence, dispatch by instruction class,
// rewrites.cpp: the fast-path rewrites) and the instruction-class files isa/*.cpp, each of which holds the handler
// templates, the handler selection and the lowering (KernelLowerer::lower<Class>) of one OpClass of the opcode table.
#pragma once

#include "exec/control.h"
#include "exec/dispatch.h"
#include "exec/checking.h"
#include "exec/engine.h"
#include "exec/lower.h"
#include "exec/handlers.h"
#include "exec/memory.h"
#include "ptx/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

namespace ptx::exec {
struct RuntimeFunction;
namespace async {
struct AddressSlot;
}
// ld/st handler selection (isa/memory.cpp), also used to pass call arguments through the frame (isa/control.cpp).
// Memory type m (size and signedness), register size regSize, vector count n, address register size addrSize.
Handler ldHandler(mem::Space space, unsigned addrSize, ptx::Type m, unsigned regSize, unsigned n);
Handler stHandler(mem::Space space, unsigned addrSize, ptx::Type m, unsigned regSize, unsigned n);
// Special-register reads (isa/move.cpp: SpecialRegOperands), also used by the core for launch-constant registers: the
// generic handler or a specialised form (%tid, %ctaid).
Handler sregHandler(ptx::SpecialReg sr, uint32_t component, bool specialisedForms = true);
}  // namespace ptx::exec

namespace ptx::exec::lowering {

using num::Round;
using ptx::Instruction;
using ptx::Opcode;
using ptx::Operand;
using ptx::OperandKind;
using ptx::SymKind;
using ptx::Type;
using ptx::TypeKind;

constexpr uint32_t kZeroReg = 0;  // 256 bytes of zeros at the start of every register file
constexpr uint32_t kFirstFree = 256;
static_assert(kFirstFree % 64 == 0);

inline uint32_t alignUp(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

inline unsigned sizeOf(Type t) { return t == Type::pred ? 1 : ptx::typeSize(t); }
inline bool isSigned(Type t) { return ptx::typeKind(t) == TypeKind::Signed; }
inline bool isFloat(Type t) { return ptx::typeKind(t) == TypeKind::Float; }

inline Round roundingOf(ptx::Rounding r) {
  switch (r) {
    case ptx::Rounding::rz:
    case ptx::Rounding::rzi: return num::RZ;
    case ptx::Rounding::rm:
    case ptx::Rounding::rmi: return num::RM;
    case ptx::Rounding::rp:
    case ptx::Rounding::rpi: return num::RP;
    default: return num::RN;
  }
}
inline bool isIntRounding(ptx::Rounding r) {
  return r == ptx::Rounding::rni || r == ptx::Rounding::rzi || r == ptx::Rounding::rmi || r == ptx::Rounding::rpi;
}

template <class F> Handler byCmp(ptx::CmpOp c, uint32_t line, F f) {
  using C = h::Cmp;
  switch (c) {
// clang-format off
#define PTX_CMP_CASE(n, e) \
  case ptx::CmpOp::n: return f(std::integral_constant<C, C::e>{});
    PTX_CMP_CASE(eq, EQ) PTX_CMP_CASE(ne, NE) PTX_CMP_CASE(lt, LT) PTX_CMP_CASE(le, LE) PTX_CMP_CASE(gt, GT)
    PTX_CMP_CASE(ge, GE) PTX_CMP_CASE(lo, LO) PTX_CMP_CASE(ls, LS) PTX_CMP_CASE(hi, HI) PTX_CMP_CASE(hs, HS)
    PTX_CMP_CASE(equ, EQU) PTX_CMP_CASE(neu, NEU) PTX_CMP_CASE(ltu, LTU) PTX_CMP_CASE(leu, LEU)
    PTX_CMP_CASE(gtu, GTU) PTX_CMP_CASE(geu, GEU) PTX_CMP_CASE(num, NUM) PTX_CMP_CASE(nan, NAN_)
#undef PTX_CMP_CASE
    default: fail(line, "missing comparison operator");
  }
  // clang-format on
}

// ---- per-kernel lowering ---------------------------------------------------------------------------------------

// The callee of `call` is its first operand that is not a list (return values and arguments are lists).
inline const Operand* calleeOperand(const ptx::Function& fn, const Instruction& in) {
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Operand& o = fn.operands[in.firstOperand + k];
    if (o.kind == OperandKind::Symbol || o.kind == OperandKind::Reg) return &o;
  }
  return nullptr;
}
inline bool isIndirectCall(const ptx::Function& fn, const Instruction& in) {
  const Operand* c = calleeOperand(fn, in);
  return c && c->kind == OperandKind::Reg;
}
// Whether the built-in function (isa/control.cpp's table) of that name never returns: the assertion failure, which
// stops the grid.
bool builtinNeverReturns(std::string_view name);

struct FuncInstance {
  uint32_t irIndex = 0;
  uint32_t codeIndex = 0;             // Program::functions index
  std::vector<uint32_t> regOffset;    // per IR register
  std::vector<uint32_t> localOffset;  // per Function::locals: frame offset (local/param) or shared offset
  std::vector<uint32_t> paramOffset;  // frame offsets of params (non-entry)
  std::vector<uint32_t> returnOffset;
  uint32_t frameBytes = 0;
};

struct PendingTarget {
  enum Kind : uint8_t { Inst, RpcBlock, Absolute, BrxInst };
  uint32_t op;
  uint32_t value;  // IR instruction, IR block (0xffffffff = function end) or op index; resolved: op index
  Kind kind;
  bool rpc = false;
};

// What the lowering of every kernel of one module looks up the same way: built once per module (lowering kernels
// one by one, lazily, must not scan the whole module for each).
struct ModuleLookups {
  // functions whose address the module takes (operands other than a call target, initializers): the candidates
  // of indirect calls
  std::optional<std::vector<uint32_t>> addressTaken;
  std::optional<std::map<ptx::StrId, uint32_t>> definitionsByName;  // non-entry definitions by name
  // Functions whose address the bodies dropped before addressTaken was made take (lazy lowering drops lowered
  // entries' bodies).
  std::set<uint32_t> takenInDroppedBodies;
  // Entries whose body the load kept as text (lazy loading: ptx::KeptBodies), sorted, and what those bodies refer
  // to (those that refer to something): reachability and address-taken functions without parsing them again.
  std::vector<uint32_t> keptBodies;
  std::map<uint32_t, BodyRefs> keptBodyRefs;
  bool bodyIsText(const ptx::Module& m, uint32_t f) const {
    return m.functions[f].scopes.empty() && std::binary_search(keptBodies.begin(), keptBodies.end(), f);
  }
};

// What a kernel's declaration gives (parameters, launch bounds, cluster shape), without lowering it.
KernelInfo declaredKernelInfo(const ptx::Module& module, uint32_t entryIr);

class KernelLowerer {
 public:
  KernelLowerer(const ptx::Module& m, Program& p, const std::vector<uint32_t>& globalMap, uint32_t rewrites,
                ModuleLookups& lookups, bool contractMulAdd = true)
      : mod_(m),
        prog_(p),
        globalMap_(globalMap),
        rewriteMask_(rewrites & checking::rewritesAllowed()),
        contractMulAdd_(contractMulAdd),
        lookups_(lookups) {}

  void lowerKernel(uint32_t entryIr);
  // The kernel's static shared memory (its own .shared variables, those of the functions it may call and the
  // module's it uses) as lowerKernel lays it out, without lowering anything: what the load checks.
  // `ownOnly`: the module has no static .shared data outside entries, so only the entry's own counts.
  uint32_t staticSharedBytes(uint32_t entryIr, bool ownOnly = false);
  // Keeps what the body of `irFn` tells the module's lookups before lazy lowering drops that body.
  void beforeDroppingBody(uint32_t irFn);

 private:
  // -- layout
  void collectReachable(uint32_t f, std::set<uint32_t>& seen, std::vector<uint32_t>& order);
  // A call or address written before a function's definition names its earlier declaration (`-G` PTX declares
  // every function first): map that declaration to the definition of the same name, if the module has one.
  uint32_t definitionOf(uint32_t irFn);
  void layoutFunction(FuncInstance& fi);
  // The one placement rule of static .shared variables (module-level and function-level): the offset of `v`, or
  // kDynamicShared for an extern (dynamic) one.
  static constexpr uint32_t kDynamicShared = 0xffffffffu;
  uint32_t placeShared(const ptx::Variable& v);
  // A register's slot in the register file: 32 lanes of its size, 64-byte aligned.
  static uint32_t regSlotBytes(uint32_t bytesPerLane) { return alignUp(32 * std::max(bytesPerLane, 1u), 64); }
  uint32_t allocReg(uint32_t bytesPerLane) {
    uint32_t off = rfTop_;
    rfTop_ += regSlotBytes(bytesPerLane);  // slots from kFirstFree on stay 64-byte aligned
    return off;
  }
  // -- constants and temporaries (allocated after the declared registers)
  // The slot of a constant (kind, value, addend) of `size` bytes a lane, made once per key of `memo`; `slots` is
  // where set-up finds it (KernelCode::consts, written from the launch's image, or indexConsts).
  template <class Key> uint32_t constSlot(std::map<Key, uint32_t>& memo, const Key& key, std::vector<ConstSlot>& slots,
                                          ConstKind kind, uint64_t value, unsigned size, int64_t addend = 0) {
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    ConstSlot s;
    s.offset = allocReg(size);
    s.size = uint8_t(size);
    s.kind = kind;
    s.value = value;
    s.addend = addend;
    slots.push_back(s);
    memo.emplace(key, s.offset);
    return s.offset;
  }
  uint32_t literal(uint64_t bits, unsigned size) {
    return constSlot(literals_, std::make_pair(size, bits), code_->consts, ConstKind::Literal, bits, size);
  }
  // The shared address of `offset` in the CTA's own block (the rank bits of a cluster's CTA included): a slot that
  // set-up writes (ConstKind::SharedAddress).
  uint32_t sharedAddress(uint64_t offset, unsigned size) {
    return constSlot(sharedAddresses_, std::make_pair(size, offset), code_->indexConsts, ConstKind::SharedAddress,
                     offset, size);
  }
  uint32_t globalAddress(uint32_t progGlobal, int64_t addend, unsigned size) {
    return constSlot(globalAddrs_, std::make_tuple(progGlobal, addend, size), code_->consts, ConstKind::GlobalAddress,
                     progGlobal, size, addend);
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
  uint32_t regOf(uint32_t id) const {
    if (fn_->registers.at(id).vec)
      fail(line_, "a whole vector register as an operand is not supported (its components are)");
    return fi_->regOffset.at(id);
  }
  Type regType(uint32_t id) const { return fn_->registers.at(id).type; }
  uint32_t src(const Operand& o, Type t);
  uint32_t srcPred(const Operand& o, bool& negated);
  struct Dst {
    uint32_t off = 0;  // where the instruction writes (type-sized)
    uint32_t reg = 0;  // the real register (if a conversion follows)
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
  void markSetpBefore(uint32_t idx, const Instruction& bra, bool h::CompareOperands::*then);
  void lowerArith(const Instruction& in);
  void lowerFloat(const Instruction& in);
  void lowerHalf(const Instruction& in);
  void lowerCompare(const Instruction& in);
  void lowerMaskedCompare(const Instruction& setp);  // masked-compares: the and before it folded in
  void lowerFoldedMad(const Instruction& add);       // integer-mads: the mul.lo before it folded in
  std::optional<uint32_t> smallFactor(const Instruction& mulOrMad) const;
  void lowerMulByImmediate(const Operand& d, const Operand& x, Type xType, const Operand* addend, Type t, uint32_t k);
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
  void addressesTakenIn(const ptx::Function& fn, std::set<uint32_t>& taken);
  void lowerWarp(const Instruction& in);
  void lowerBar(const Instruction& in);
  // branch-to-barrier, once a function's ops and branch targets (resolved in pending_) are final (isa/sync.cpp)
  void fuseBranchesToBarriers(uint32_t firstOp);
  void lowerTexture(const Instruction& in);
  void lowerBody(const Instruction& in);
  // one per OpClass (isa/<class>.cpp); lowerBody dispatches
  void lowerMove(const Instruction& in);
  void lowerCvta(const Instruction& in);
  void lowerIsspacep(const Instruction& in);
  void lowerClusterAddress(const Instruction& in);  // mapa, getctarank
  void lowerConvert(const Instruction& in);
  void lowerMemory(const Instruction& in);
  void lowerAtomic(const Instruction& in);
  void lowerControl(const Instruction& in);
  void lowerSync(const Instruction& in);
  void lowerMisc(const Instruction& in);
  void lowerMatrix(const Instruction& in);
  void lowerWgmma(const Instruction& in);
  void lowerAsyncCopy(const Instruction& in);
  void lowerTensorCopy(const Instruction& in);
  void lowerTensormapReplace(const Instruction& in);
  void lowerMbarrier(const Instruction& in);
  void lowerRuntimeCall(std::string_view name, const RuntimeFunction& f, const std::vector<const Operand*>& args,
                        const std::vector<const Operand*>& rets);
  void lowerBuiltinCall(const Instruction& in, std::string_view name, const std::vector<const Operand*>& args,
                        const std::vector<const Operand*>& rets);
  void unsupported(const Instruction& in, std::string_view why = "");
  void lowerHalfCompare(const Instruction& in);
  void emitSetp(Handler hnd, uint32_t a, uint32_t b, h::CompareOperands v, const Operand& d0);
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
  // ld/st/atom/red.shared::cluster through a register: `a` becomes a generic address computed by an op that faults
  // for a rank outside the cluster (isa/move.cpp); any other access stays as it is.
  void clusterAccessAsGeneric(const Instruction& in, const Operand& o, Addr& a);
  void lowerWideLdSt(const Instruction& in, bool isStore, Addr a);
  // The registers of a vector ld/st's n elements (a store's sources, a load's destinations); destinations converted
  // after the access go to `pending` with their element's index.
  void vectorAccessRegs(const Instruction& in, const Operand& valOp, unsigned n, bool isStore, uint32_t* regs,
                        std::vector<std::pair<uint32_t, Dst>>& pending);
  // complete_tx of `bytesReg` bytes on the mbarrier at `object` (st.async, red.async: isa/sync.cpp)
  void emitCompleteTx(const Addr& object, uint32_t bytesReg);
  // checking builds (checking.h): a checking op for the access of `bytes` at `a`
  void emitAccessCheck(const Addr& a, checking::CheckedAccess::Kind kind, uint32_t bytes, bool strong = false);
  // checking builds (checking.h): a checking op before a warp collective whose membermask is register `members`
  void emitCollectiveCheck(WarpCollective collective, uint32_t members);
  // an address operand of an instruction with several state spaces (cp.async: the source's is space2)
  Addr addressIn(const Instruction& in, const Operand& o, ptx::Space space);
  // the address operands of asynchronous copies and mbarrier ops (exec/async.h: slots)
  async::AddressSlot asyncSlot(const Addr& a, int slot);
  // mov of a special register's component into register `result` (isa/move.cpp)
  void emitSpecialRegister(uint32_t result, ptx::SpecialReg sr, uint32_t component);

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
  std::map<std::pair<unsigned, uint64_t>, uint32_t> sharedAddresses_;  // (size, offset) -> slot
  std::map<std::tuple<uint32_t, int64_t, unsigned>, uint32_t> globalAddrs_;
  std::map<unsigned, std::vector<uint32_t>> temps_;
  std::map<unsigned, uint32_t> tempUsed_;
  std::vector<PendingTarget> pending_;
  // per function being lowered
  std::vector<uint32_t> instOp_;      // IR instruction -> op index of its first op (reconv included)
  std::vector<uint32_t> blockOf_;     // IR instruction -> block
  std::vector<uint32_t> blockStart_;  // block -> first IR instruction
  std::vector<int32_t> ipdom_;        // block -> ipdom block (-1 = function end)
  // A kernel's `bra` to a `ret` or `exit`: its lanes exit where they branch, as ptxas compiles it (branchExits).
  bool branchExits(const Instruction& bra) const;
  uint32_t funcEndOp_ = 0;
  // shared memory layout of this kernel
  std::map<uint32_t, uint32_t> moduleSharedOffset_;  // module global index -> shared offset
  uint32_t sharedTop_ = kReservedSharedBytes;        // shared addresses below it are the driver's
  uint32_t kernelSharedBytes() const { return sharedTop_ - kReservedSharedBytes; }  // KernelInfo::staticSharedBytes
  bool hasDynamicShared_ = false;
  uint32_t frameAlign_ = 16;          // every frame's size is a multiple of the largest .local/.param alignment
  uint32_t sharedAlign_ = 16;         // largest .shared alignment (static and dynamic)
  uint32_t dynamicSharedAlign_ = 16;  // largest alignment of an extern .shared declaration
  std::vector<std::pair<uint32_t, uint32_t>> dynamicSharedUses_;  // (op index, unused)
  std::vector<uint32_t> dynamicSharedSlots_;                      // literal slots to patch with the dynamic base
  std::set<uint32_t> usedModuleShared_;
  KernelInfo* info_ = nullptr;
  std::vector<PendingTarget> resolved_;
  std::vector<std::pair<uint32_t, uint32_t>> callOps_;  // (op index, IR callee)
  std::vector<uint32_t> callerOf_;                      // per call site of this kernel: caller instance
  bool usesBarriers_ = false;
  // KernelInfo::mayWaitForOtherWork: any backward branch, any instruction that may observe others' writes.
  bool hasBackwardBranch_ = false;
  bool observesOthers_ = false;
  void noteWaitingHazards(const Instruction& in, uint32_t idx);
  uint32_t dynamicSharedBase_ = 0;
  // ---- rewrites (rewrites.cpp; the table: ptx/rewrites.def) ----
  uint32_t rewriteMask_ = kAllRewrites;
  bool contractMulAdd_ = true;  // CompileOptions::contractMulAdd
  ModuleLookups& lookups_;
  bool enabled(Rewrite r) const { return (rewriteMask_ & rewriteBit(r)) != 0; }
  // launch-constants: entry-function registers whose only definition yields the same launch-wide value (kernel
  // parameter loads, %ntid/%nctaid/%tid/%ctaid, cvta.to.global/mov of those). They become constant registers (a
  // register-level result) and their defining instructions (defInst) emit nothing.
  struct LaunchConst {
    ConstKind kind;
    uint64_t value;
    unsigned size;
    uint32_t defInst = kNoIndex;
  };
  std::map<uint32_t, LaunchConst> launchConstRegs_;
  void findLaunchConstants(const ptx::Function& fn);
  // thread-constants: entry-function registers whose only definition is an integer or predicate instruction of
  // threadConstantOpcode() reading only immediates, variable addresses, launch constants other than %ctaid and
  // other such registers: the same in every CTA, per thread. Their definitions (hoisted_, in an order where each
  // comes after those it reads) emit nothing in the kernel and run in its prologue (emitThreadConstantPrologue).
  std::set<uint32_t> threadConstRegs_;
  std::vector<uint32_t> hoisted_;
  // cta-indices: entry-function u32 registers whose only definition computes %ctaid.component * multiplier
  // (* %ntid.ntid when ntid >= 0) + addend + laneReg (a thread constant or %tid register; kNoIndex: none), mod 2^32:
  // written for every warp when a CTA is set up (ConstKind::CtaAffine); their definitions (defInst) emit nothing.
  struct CtaAffine {
    uint32_t component = 0, multiplier = 1;
    int ntid = -1;
    uint32_t addend = 0, laneReg = kNoIndex, defInst = kNoIndex;
    bool read = true;  // an instruction other than another such definition reads it (else set-up skips it)
  };
  std::map<uint32_t, CtaAffine> ctaAffineRegs_;
  void findCtaIndices(const ptx::Function& fn);
  // shared-layouts: the thread-constant base registers of shared accesses (of one access size each) whose layout
  // the prologue computes into a slot of its own (>= kChainLayoutSlots)
  struct PrologueLayout {
    uint32_t reg, accessSize, slot;
  };
  std::vector<PrologueLayout> prologueLayouts_;
  void findThreadConstants(const ptx::Function& fn);
  void emitThreadConstantPrologue();
  // What the rewrites decided for one instruction of the function being lowered: one record per instruction (and
  // one for the function's end), filled by the per-function passes, read by the lowering of the instruction.
  struct InstRewrite {
    bool launchConstant = false;  // launch-constants: defines a launch-constant register (entry function)
    bool hoisted = false;         // thread-constants: runs in the kernel's prologue (entry function)
    bool ctaIndex = false;        // cta-indices: defines a register written at CTA set-up (entry function)
    // address-adds: `add.s64 %rd, %base, %offset` whose sum only addresses one later scalar global ld/st of the
    // same block: the access computes base + offset itself (mem::globalAddresses), the add emits nothing.
    bool addFolded = false;
    uint32_t foldedAdd = kNoIndex;  // on the access: the add it computes
    // scaled-indices: `mul.wide.{s32,u32} %off, %i, 2^k` whose every use is the offset of such a folded add with a
    // launch-constant base: the accesses compute base + (%i << k) and the mul emits nothing either.
    bool mulFolded = false;
    uint32_t foldedMul = kNoIndex;  // on the access: the mul it computes
    // shared-layouts: scalar shared-memory accesses of one block through the same base register, which nothing in
    // between writes: the first computes the layout of the register's 32 values into a per-warp slot, the others
    // reuse it (mem::sharedLayout). The access op's aux (0: none).
    uint32_t sharedLayout = 0;
    // shared-fma-chains: `ld.shared.f32 %x; ld.shared.f32 %y; fma.rn.f32 %d, %x, %y, %c` triples whose loaded
    // registers nothing else mentions, in a row where each fma accumulates into the previous one's result: one
    // fused op in front of them (mem::fmaSharedChain) runs the chain with the sum in host registers, or falls
    // through to the original ops when its full-warp fast path does not apply. The triples of the chain this
    // instruction starts (0: none).
    uint32_t fmaChainTriples = 0;
    // shared-add-steps: this shared load starts `ld.shared x; ld.shared y; add z, x, y; st.shared z` through one
    // thread-constant base: one fused op in front of the four (mem::sharedAddStep) runs them with host vectors, or
    // falls through to them.
    bool sharedAddStep = false;
    // setp-branch: the op index of this setp, so that a conditional branch on its predicate right after it can make
    // the setp run the branch (h::kSetpThenBranch).
    uint32_t setpOp = kNoIndex;
    // masked-compares and integer-mads: this `and` (or `mul.lo`) is computed by the setp (or add) right after it,
    // the only reader of its result, which is then never written (findFoldedIntegerPairs)
    bool foldedIntoNext = false;
    bool emitsNothing() const {
      return launchConstant || hoisted || ctaIndex || addFolded || mulFolded || foldedIntoNext;
    }
  };
  std::vector<InstRewrite> rewrites_;
  // Multiply-add contraction as ptxas does it (exec/contraction.cpp): per add/sub of the function being lowered, the
  // mul whose product it adds (kNoIndex: none), and which of the fused operation's inputs change sign.
  struct Contraction {
    uint32_t mul = kNoIndex;
    uint8_t addend = 0;  // the add/sub's operand (1 or 2) that is added to the product
    bool negProduct = false, negAddend = false;
    // On a mul: a factor is written before an add fused with it, so the mul copies its factors first (into `saved`).
    bool saveFactors = false;
    std::array<uint32_t, 2> saved = {kNoIndex, kNoIndex};
  };
  std::vector<Contraction> contractions_;
  void findContractions();
  // Lowering a mul: the copies of its factors that contractions need (saveFactors).
  void saveContractedFactors(const Instruction& mul, Type t);
  // The fused sources of a contracted add/sub of type t: the mul's factors and the addend, those that change sign
  // copied negated into temporaries by ops of handler `negate` (a sign-bit flip of one t register).
  std::array<uint32_t, 3> contractedSources(const Instruction& add, Type t, Handler negate);
  // The per-function passes, in order (each after the ones it builds on).
  void runFunctionRewrites(bool entry);
  // loop-watches: for each loop of the function being lowered (a block with a back edge to it), the declared
  // registers its blocks write (Program::loopWatches). `blockOp`: each block's first op.
  void recordLoopWatches(const std::vector<std::vector<uint32_t>>& succ, const std::vector<uint32_t>& blockOp);
  void findAddressAdds();
  void findScaledIndices();
  void findSharedLayoutChains();
  void findSharedFmaTriples();
  uint32_t curInst_ = 0;
  // Whether instruction `in` may write register reg: its first operand names it (a store's address counts too) or
  // it is a call (the callee is not looked into).
  bool mayWrite(const Instruction& in, uint32_t reg) const;
  // The last instruction before `before`, in its block, that may write reg; kNoIndex: none.
  uint32_t lastWriteInBlock(uint32_t before, uint32_t reg) const;
  bool writtenBetween(uint32_t first, uint32_t end, uint32_t reg) const;  // by an instruction in [first, end)
  // Per register of the function being lowered: how many times instructions mention it (reads, writes, guards).
  std::vector<uint32_t> mentions_;
  void countMentions();
  void emitSharedFma(uint32_t first);
  void findSharedAddSteps();
  void findFoldedIntegerPairs();
  // the instruction before the one being lowered computes its result into it (InstRewrite::foldedIntoNext)
  bool previousFoldedIntoThis() const { return curInst_ > 0 && rewrites_[curInst_ - 1].foldedIntoNext; }
  // A register operand of the function being lowered, 32 bits, not a predicate, without a selector or modifier (the
  // operands shared-fma-chains and shared-add-steps fuse).
  bool plain32BitRegister(const Operand& o) const {
    return o.kind == OperandKind::Reg && !o.sel && o.flags == 0 && o.index < fn_->registers.size() &&
           regType(o.index) != Type::pred && sizeOf(regType(o.index)) == 4;
  }
  // the fused op of the step being lowered and its last instruction: the op must be followed by exactly one op per
  // instruction, else it becomes a nop (lower.cpp)
  uint32_t addStepOp_ = 0, addStepLast_ = kNoIndex;
  void emitSharedAddStep(uint32_t first);
  // Calls f(register index) for every register an operand of fn names (vectors, lists, pairs and address bases
  // included, and the vector inside a bracket: a tensor copy's `[map, {coordinates}]`); without fn, of the function
  // being lowered.
  template <class F> void forEachRegister(const Operand& o, F&& f) const { forEachRegister(*fn_, o, f); }
  template <class F> void forEachRegister(const ptx::Function& fn, const Operand& o, F&& f) const {
    auto one = [&](const Operand& x) {
      if (x.kind == OperandKind::Reg)
        f(x.index);
      else if (x.kind == OperandKind::RegPair) {
        f(x.index);
        f(uint32_t(x.value));
      } else if (x.kind == OperandKind::Address && x.symKind == SymKind::None)
        f(x.index);
    };
    auto group = [&](const Operand& g, auto&& inner) {
      for (int64_t q = 0; q < g.value; ++q) inner(fn.elems[g.index + uint32_t(q)]);
    };
    if (o.kind == OperandKind::Vector || o.kind == OperandKind::List || o.kind == OperandKind::Bracket) {
      group(o, [&](const Operand& x) {
        if (x.kind == OperandKind::Vector || x.kind == OperandKind::List)
          group(x, one);
        else
          one(x);
      });
    } else {
      one(o);
    }
  }
  std::vector<std::vector<uint32_t>> brxTargets_;          // per brx of the current function: IR instructions
  std::vector<std::pair<uint32_t, uint32_t>> brxPending_;  // (brxTargets_ index, Program::brxTables index)

 public:
  std::vector<PendingTarget>& resolved() { return resolved_; }
};

}  // namespace ptx::exec::lowering
