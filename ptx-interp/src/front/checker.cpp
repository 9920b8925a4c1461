#include "ptx/check.h"

#include <fmt/format.h>

#include "ptx/parse.h"

namespace ptx {
namespace {

// Minimum target and PTX ISA version (major*10+minor) of instructions newer than the baseline (sm_75, PTX 6.3).
struct Gate {
    Opcode op;
    unsigned sm;
    bool archSpecific;   // needs the "a" target (sm_90a)
    unsigned ptx;
};
constexpr Gate kGates[] = {
    {Opcode::ReduxSync, 80, false, 70},
    {Opcode::MbarrierInit, 80, false, 70},
    {Opcode::MbarrierInval, 80, false, 70},
    {Opcode::MbarrierArrive, 80, false, 70},
    {Opcode::MbarrierArriveDrop, 80, false, 70},
    {Opcode::MbarrierTest, 80, false, 70},
    {Opcode::MbarrierPendingCount, 80, false, 70},
    {Opcode::MbarrierTry, 90, false, 78},
    {Opcode::MbarrierExpectTx, 90, false, 80},
    {Opcode::MbarrierCompleteTx, 90, false, 80},
    {Opcode::CpAsync, 80, false, 70},
    {Opcode::CpAsyncCommitGroup, 80, false, 70},
    {Opcode::CpAsyncWaitGroup, 80, false, 70},
    {Opcode::CpAsyncWaitAll, 80, false, 70},
    {Opcode::CpAsyncMbarrierArrive, 80, false, 70},
    {Opcode::CpAsyncBulk, 90, false, 80},
    {Opcode::CpAsyncBulkPrefetch, 90, false, 80},
    {Opcode::CpAsyncBulkTensor, 90, false, 80},
    {Opcode::CpAsyncBulkPrefetchTensor, 90, false, 80},
    {Opcode::CpAsyncBulkCommitGroup, 90, false, 80},
    {Opcode::CpAsyncBulkWaitGroup, 90, false, 80},
    {Opcode::CpReduceAsyncBulk, 90, false, 80},
    {Opcode::CpReduceAsyncBulkTensor, 90, false, 80},
    {Opcode::Stmatrix, 90, false, 78},
    {Opcode::Movmatrix, 75, false, 78},
    {Opcode::WgmmaFence, 90, true, 80},
    {Opcode::WgmmaCommitGroup, 90, true, 80},
    {Opcode::WgmmaWaitGroup, 90, true, 80},
    {Opcode::WgmmaMmaAsync, 90, true, 80},
    {Opcode::WgmmaMmaAsyncSp, 90, true, 80},
    {Opcode::Setmaxnreg, 90, true, 80},
    {Opcode::TensormapReplace, 90, true, 83},
    {Opcode::TensormapCpFenceproxy, 90, false, 83},
    {Opcode::ElectSync, 90, false, 80},
    {Opcode::Griddepcontrol, 90, false, 78},
    {Opcode::BarrierClusterArrive, 90, false, 78},
    {Opcode::BarrierClusterWait, 90, false, 78},
    {Opcode::Mapa, 90, false, 78},
    {Opcode::Getctarank, 90, false, 78},
    {Opcode::StAsync, 90, false, 81},
    {Opcode::RedAsync, 90, false, 81},
    {Opcode::MultimemLdReduce, 90, false, 81},
    {Opcode::MultimemSt, 90, false, 81},
    {Opcode::MultimemRed, 90, false, 81},
    {Opcode::Tcgen05Alloc, 100, true, 86},
    {Opcode::Tcgen05Dealloc, 100, true, 86},
    {Opcode::Tcgen05RelinquishAllocPermit, 100, true, 86},
    {Opcode::Tcgen05Ld, 100, true, 86},
    {Opcode::Tcgen05St, 100, true, 86},
    {Opcode::Tcgen05Wait, 100, true, 86},
    {Opcode::Tcgen05Cp, 100, true, 86},
    {Opcode::Tcgen05Shift, 100, true, 86},
    {Opcode::Tcgen05Mma, 100, true, 86},
    {Opcode::Tcgen05MmaSp, 100, true, 86},
    {Opcode::Tcgen05MmaWs, 100, true, 86},
    {Opcode::Tcgen05MmaWsSp, 100, true, 86},
    {Opcode::Tcgen05Commit, 100, true, 86},
    {Opcode::Tcgen05Fence, 100, true, 86},
    {Opcode::ClusterlaunchcontrolTryCancel, 100, false, 86},
    {Opcode::ClusterlaunchcontrolQueryCancel, 100, false, 86},
    {Opcode::StBulk, 100, false, 86},
    {Opcode::Alloca, 52, false, 73},
    {Opcode::Stacksave, 52, false, 73},
    {Opcode::Stackrestore, 52, false, 73},
    {Opcode::Applypriority, 80, false, 74},
    {Opcode::Discard, 80, false, 74},
    {Opcode::Createpolicy, 80, false, 74},
    {Opcode::Szext, 70, false, 76},
    {Opcode::Bmsk, 70, false, 76},
};

// Operand counts: {opcode, min, max}. Instructions not listed are not count-checked.
struct Arity {
    Opcode op;
    uint8_t min, max;
};
constexpr Arity kArity[] = {
    {Opcode::Add, 3, 3},     {Opcode::Sub, 3, 3},     {Opcode::Mul, 3, 3},    {Opcode::Mad, 4, 4},
    {Opcode::Fma, 4, 4},     {Opcode::Div, 3, 3},     {Opcode::Rem, 3, 3},    {Opcode::Abs, 2, 2},
    {Opcode::Neg, 2, 2},     {Opcode::Min, 3, 4},     {Opcode::Max, 3, 4},    {Opcode::Popc, 2, 2},
    {Opcode::Clz, 2, 2},     {Opcode::Bfind, 2, 2},   {Opcode::Brev, 2, 2},   {Opcode::Bfe, 4, 4},
    {Opcode::Bfi, 5, 5},     {Opcode::Setp, 3, 5},    {Opcode::Selp, 4, 4},   {Opcode::Slct, 4, 4},
    {Opcode::Set, 3, 5},     {Opcode::And, 3, 3},     {Opcode::Or, 3, 3},     {Opcode::Xor, 3, 3},
    {Opcode::Not, 2, 2},     {Opcode::Cnot, 2, 2},    {Opcode::Lop3, 5, 6},   {Opcode::Shf, 4, 4},
    {Opcode::Shl, 3, 3},     {Opcode::Shr, 3, 3},     {Opcode::Mov, 2, 2},    {Opcode::Ld, 2, 3},
    {Opcode::Ldu, 2, 2},     {Opcode::St, 2, 3},      {Opcode::Cvta, 2, 2},   {Opcode::Isspacep, 2, 2},
    {Opcode::Bra, 1, 1},     {Opcode::Ret, 0, 0},     {Opcode::Exit, 0, 0},   {Opcode::Trap, 0, 0},
    {Opcode::Brkpt, 0, 0},   {Opcode::Membar, 0, 0},  {Opcode::Rcp, 2, 2},    {Opcode::Sqrt, 2, 2},
    {Opcode::Rsqrt, 2, 2},   {Opcode::Sin, 2, 2},     {Opcode::Cos, 2, 2},    {Opcode::Lg2, 2, 2},
    {Opcode::Ex2, 2, 2},     {Opcode::Tanh, 2, 2},    {Opcode::Testp, 2, 2},  {Opcode::Copysign, 3, 3},
    {Opcode::Prmt, 4, 4},    {Opcode::Dp4a, 4, 4},    {Opcode::Dp2a, 4, 4},   {Opcode::Sad, 4, 4},
    {Opcode::Mul24, 3, 3},   {Opcode::Mad24, 4, 4},   {Opcode::AddCC, 3, 3},  {Opcode::AddC, 3, 3},
    {Opcode::SubCC, 3, 3},   {Opcode::SubC, 3, 3},    {Opcode::MadCC, 4, 4},  {Opcode::MadC, 4, 4},
    {Opcode::ShflSync, 5, 5}, {Opcode::Shfl, 4, 4},   {Opcode::VoteSync, 3, 3}, {Opcode::Vote, 2, 2},
    {Opcode::Activemask, 1, 1}, {Opcode::Nanosleep, 1, 1}, {Opcode::Atom, 3, 5}, {Opcode::Red, 2, 4},
    {Opcode::BarSync, 1, 2}, {Opcode::BarArrive, 2, 2}, {Opcode::BarWarpSync, 1, 1}, {Opcode::MatchSync, 3, 4},
    {Opcode::ReduxSync, 3, 3}, {Opcode::ElectSync, 2, 2}, {Opcode::Griddepcontrol, 0, 0},
    {Opcode::Cvt, 2, 4},
};

bool allowsSpecialRegs(Opcode op) { return op == Opcode::Mov || op == Opcode::Cvt; }

// Register/instruction type compatibility (PTX ISA "Operand type checking").
// wider: a register wider than the instruction type is allowed (ld/st/cvt data operands).
bool compatible(Type inst, Type reg, bool wider) {
    if (inst == reg) return true;
    TypeKind ik = typeKind(inst), rk = typeKind(reg);
    if (ik == TypeKind::Pred || rk == TypeKind::Pred) return false;
    unsigned is = typeSize(inst), rs = typeSize(reg);
    if (is == 0 || rs == 0) return true;   // sub-byte and opaque types: not checked here
    bool sizeOk = wider ? rs >= is : rs == is;
    if (ik == TypeKind::Bits) return wider ? (rk != TypeKind::Float ? rs >= is : rs == is) : rs == is;
    if (ik == TypeKind::Unsigned || ik == TypeKind::Signed)
        return sizeOk && (rk == TypeKind::Bits || rk == TypeKind::Unsigned || rk == TypeKind::Signed);
    if (ik == TypeKind::Float) return rs == is && (rk == TypeKind::Bits || rk == TypeKind::Float);
    return sizeOk;
}

class Checker {
public:
    Checker(const Module& m, Diagnostics& d, const CheckOptions& o) : m_(m), d_(d), opt_(o) {}
    bool run();

private:
    template <typename... Args>
    void error(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
        d_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
    }
    void function(const Function& f);
    void instruction(const Function& f, const Instruction& inst);
    // Checks a register source/destination operand against a type; returns false (after an error) on mismatch.
    bool typed(const Function& f, const Instruction& inst, unsigned index, Type type, bool wider, bool isDest);
    std::string_view mnemonic(const Instruction& inst) const { return opcodeMnemonic(inst.opcode); }

    const Module& m_;
    Diagnostics& d_;
    const CheckOptions& opt_;
    unsigned sm_ = 0;
    bool archSpecific_ = false;
    unsigned ptx_ = 0;
};

bool Checker::run() {
    ptx_ = m_.versionMajor * 10 + m_.versionMinor;
    if (m_.versionMajor > 9 || (m_.versionMajor == 9 && m_.versionMinor > 0))
        d_.error(1, 1, fmt::format("unsupported .version {}.{}; the newest supported is 9.0", m_.versionMajor,
                                   m_.versionMinor));
    if (m_.versionMajor < 1) d_.error(1, 1, "missing or invalid .version");
    for (const Target& t : m_.targets) {
        unsigned min = minPtxVersionForTarget(t.smVersion, t.archSpecific, t.familySpecific);
        if (min == 0) {
            d_.error(2, 1, fmt::format("unknown .target '{}'", m_.str(t.name)));
        } else if (ptx_ < min) {
            d_.error(2, 1, fmt::format("PTX .version {}.{} does not support .target {}", m_.versionMajor,
                                       m_.versionMinor, m_.str(t.name)));
        }
        if (t.smVersion > sm_) {
            sm_ = t.smVersion;
            archSpecific_ = t.archSpecific || t.familySpecific;
        }
    }
    if (opt_.targetSm) sm_ = std::min(sm_ ? sm_ : opt_.targetSm, opt_.targetSm);
    if (m_.addressSize != 64 && m_.addressSize != 32) d_.error(3, 1, ".address_size must be 32 or 64");
    for (const Variable& v : m_.globals) {
        if (v.space == Space::local && v.linkage == Linkage::visible)
            error(v.loc, ".local variable '{}' cannot be .visible", m_.str(v.name));
        if (v.hasInit && (v.space == Space::shared || v.space == Space::local))
            error(v.loc, "variables in {} cannot be initialised", v.space == Space::shared ? ".shared" : ".local");
    }
    for (const Function& f : m_.functions) {
        if (d_.full()) break;
        function(f);
    }
    return !d_.hasErrors();
}

void Checker::function(const Function& f) {
    if (f.isEntry && !f.returns.empty()) error(f.loc, "kernel '{}' cannot have return values", m_.str(f.name));
    for (const Param& p : f.params) {
        if (f.isEntry && p.space != Space::param)
            error(p.loc, "kernel parameter '{}' must be in .param space", m_.str(p.name));
        if (!f.isEntry && p.ptr) error(p.loc, ".ptr is only allowed on kernel parameters");
    }
    if (!f.hasBody) return;
    for (const Variable& v : f.locals)
        if (v.hasInit && (v.space == Space::shared || v.space == Space::local || v.space == Space::param))
            error(v.loc, "variables in this state space cannot be initialised");
    for (const Instruction& inst : f.instructions) {
        if (d_.full()) return;
        instruction(f, inst);
    }
}

bool Checker::typed(const Function& f, const Instruction& inst, unsigned index, Type type, bool wider,
                    bool isDest) {
    if (index >= inst.numOperands) return true;
    const Operand& op = f.operands[inst.firstOperand + index];
    switch (op.kind) {
        case OperandKind::Reg: {
            if (op.index >= f.registers.size()) return true;
            const Register& r = f.registers[op.index];
            if (r.vec) return true;   // vector registers with selectors: not checked here
            if (!compatible(type, r.type, wider)) {
                error(inst.loc, "operand {} of '{}' has type {}, which does not match the instruction type {}",
                      index + 1, mnemonic(inst), typeName(r.type), typeName(type));
                return false;
            }
            return true;
        }
        case OperandKind::Imm:
        case OperandKind::FImm:
            if (isDest) {
                error(inst.loc, "result of '{}' must be a register, not an immediate", mnemonic(inst));
                return false;
            }
            if (typeKind(type) == TypeKind::Pred) {
                if (op.kind == OperandKind::Imm) return true;   // mov.pred %p, 0
                error(inst.loc, "operand {} of '{}' must be a predicate register", index + 1, mnemonic(inst));
                return false;
            }
            if (op.kind == OperandKind::Imm && typeKind(type) == TypeKind::Float) {
                error(inst.loc, "integer immediate for floating-point operand {} of '{}'", index + 1, mnemonic(inst));
                return false;
            }
            if (op.kind == OperandKind::FImm && typeKind(type) != TypeKind::Float &&
                typeKind(type) != TypeKind::Bits) {
                error(inst.loc, "floating-point immediate for integer operand {} of '{}'", index + 1, mnemonic(inst));
                return false;
            }
            return true;
        case OperandKind::Symbol:
            if (isDest) {
                error(inst.loc, "result of '{}' must be a register", mnemonic(inst));
                return false;
            }
            if (inst.opcode != Opcode::Mov && inst.opcode != Opcode::Cvta) {
                error(inst.loc, "operand {} of '{}' must be a register or immediate, not a symbol", index + 1,
                      mnemonic(inst));
                return false;
            }
            return true;
        case OperandKind::Address:
            error(inst.loc, "unexpected address operand {} for '{}'", index + 1, mnemonic(inst));
            return false;
        case OperandKind::Label:
            error(inst.loc, "unexpected label operand {} for '{}'", index + 1, mnemonic(inst));
            return false;
        default: return true;
    }
}

static bool isFloat(Type t) { return typeKind(t) == TypeKind::Float; }
static bool isInt(Type t) {
    TypeKind k = typeKind(t);
    return k == TypeKind::Unsigned || k == TypeKind::Signed;
}

void Checker::instruction(const Function& f, const Instruction& inst) {
    std::string_view name = mnemonic(inst);
    // Target and version gating.
    for (const Gate& g : kGates) {
        if (g.op != inst.opcode) continue;
        if (sm_ && sm_ < g.sm)
            error(inst.loc, "'{}' requires .target sm_{}{} or higher", opcodeName(inst.opcode), g.sm,
                  g.archSpecific ? "a" : "");
        else if (sm_ && g.archSpecific && !archSpecific_)
            error(inst.loc, "'{}' is not supported on a target without the 'a' suffix", opcodeName(inst.opcode));
        if (ptx_ < g.ptx)
            error(inst.loc, "'{}' requires PTX ISA .version {}.{} or later", opcodeName(inst.opcode), g.ptx / 10,
                  g.ptx % 10);
        break;
    }
    for (const Arity& a : kArity) {
        if (a.op != inst.opcode) continue;
        if (inst.numOperands < a.min || inst.numOperands > a.max) {
            if (a.min == a.max)
                error(inst.loc, "'{}' takes {} operand{}, not {}", name, a.min, a.min == 1 ? "" : "s",
                      inst.numOperands);
            else
                error(inst.loc, "'{}' takes {} to {} operands, not {}", name, a.min, a.max, inst.numOperands);
            return;
        }
        break;
    }
    if (inst.guard != kNoIndex && inst.guard < f.registers.size() && f.registers[inst.guard].type != Type::pred)
        error(inst.loc, "guard of '{}' must be a .pred register", name);
    const Operand* ops = f.operands.data() + inst.firstOperand;
    for (unsigned i = 0; i < inst.numOperands; ++i) {
        const Operand& op = ops[i];
        if (op.kind == OperandKind::Special && !allowsSpecialRegs(inst.opcode)) {
            error(inst.loc, "special register {} is not allowed as an operand of '{}' (use mov)",
                  specialRegName(static_cast<SpecialReg>(op.index)), name);
            return;
        }
    }
    OpClass cls = opcodeClass(inst.opcode);
    bool needsType = cls == OpClass::Arith || cls == OpClass::Logic || cls == OpClass::Compare ||
                     cls == OpClass::Convert || inst.opcode == Opcode::Mov || inst.opcode == Opcode::Ld ||
                     inst.opcode == Opcode::St || inst.opcode == Opcode::Ldu || inst.opcode == Opcode::Atom ||
                     inst.opcode == Opcode::Red;
    if (needsType && inst.numTypes == 0) {
        error(inst.loc, "'{}' needs an instruction type", name);
        return;
    }
    Type t = inst.type();
    switch (inst.opcode) {
        case Opcode::Add: case Opcode::Sub: case Opcode::Div: case Opcode::Rem: case Opcode::Min: case Opcode::Max:
        case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::Not: case Opcode::Cnot: case Opcode::Abs:
        case Opcode::Neg: case Opcode::Copysign: case Opcode::AddCC: case Opcode::AddC: case Opcode::SubCC:
        case Opcode::SubC:
            for (unsigned i = 0; i < inst.numOperands; ++i)
                if (!typed(f, inst, i, t, false, i == 0)) return;
            return;
        case Opcode::Mul: case Opcode::Mad: case Opcode::Fma: case Opcode::MadCC: case Opcode::MadC: {
            bool wide = inst.mulMode == MulMode::wide;
            Type wideType = t;
            if (wide) {
                unsigned s = typeSize(t);
                bool sgn = typeKind(t) == TypeKind::Signed;
                wideType = s == 2 ? (sgn ? Type::s32 : Type::u32) : s == 4 ? (sgn ? Type::s64 : Type::u64) : t;
                if (s == 8) {
                    error(inst.loc, "'{}.wide' is not defined for 64-bit types", name);
                    return;
                }
            }
            if (isFloat(t) && inst.mulMode != MulMode::none && !(t == Type::f16 || t == Type::f16x2)) {
                error(inst.loc, "'{}' with .lo/.hi/.wide needs an integer type", name);
                return;
            }
            if (!typed(f, inst, 0, wideType, false, true)) return;
            for (unsigned i = 1; i < inst.numOperands; ++i)
                if (!typed(f, inst, i, (i == 3 && wide) ? wideType : t, false, false)) return;
            return;
        }
        case Opcode::Rcp: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Sin: case Opcode::Cos:
        case Opcode::Lg2: case Opcode::Ex2: case Opcode::Tanh:
            if (!isFloat(t) && t != Type::b16 && t != Type::b32) {
                error(inst.loc, "'{}' needs a floating-point type", name);
                return;
            }
            for (unsigned i = 0; i < inst.numOperands; ++i)
                if (!typed(f, inst, i, t, false, i == 0)) return;
            return;
        case Opcode::Shl: case Opcode::Shr:
            if (!typed(f, inst, 0, t, false, true) || !typed(f, inst, 1, t, false, false) ||
                !typed(f, inst, 2, Type::u32, false, false))
                return;
            return;
        case Opcode::Popc: case Opcode::Clz: case Opcode::Bfind:
            if (!typed(f, inst, 0, Type::u32, false, true) || !typed(f, inst, 1, t, false, false)) return;
            return;
        case Opcode::Setp: {
            if (inst.cmp == CmpOp::none) {
                error(inst.loc, "'setp' needs a comparison operator");
                return;
            }
            const Operand& d = ops[0];
            if (d.kind != OperandKind::Reg && d.kind != OperandKind::RegPair) {
                error(inst.loc, "result of 'setp' must be a predicate register");
                return;
            }
            if (d.kind == OperandKind::Reg && !typed(f, inst, 0, Type::pred, false, true)) return;
            if (!typed(f, inst, 1, t, false, false) || !typed(f, inst, 2, t, false, false)) return;
            if (inst.numOperands == 4) {
                if (inst.boolOp == BoolOp::none) {
                    error(inst.loc, "'setp' with a fourth operand needs .and, .or or .xor");
                    return;
                }
                if (!typed(f, inst, 3, Type::pred, false, false)) return;
            }
            return;
        }
        case Opcode::Selp:
            for (unsigned i = 0; i < 3; ++i)
                if (!typed(f, inst, i, t, false, i == 0)) return;
            typed(f, inst, 3, Type::pred, false, false);
            return;
        case Opcode::Mov: {
            const Operand& d = ops[0];
            const Operand& s = ops[1];
            if (d.kind == OperandKind::Reg && s.kind == OperandKind::Reg && !f.registers[d.index].vec &&
                !f.registers[s.index].vec) {
                typed(f, inst, 0, t, false, true) && typed(f, inst, 1, t, false, false);
            } else if (d.kind != OperandKind::Reg && d.kind != OperandKind::Vector) {
                error(inst.loc, "result of 'mov' must be a register or a vector of registers");
            } else if (s.kind == OperandKind::Special) {
                SpecialReg sr = static_cast<SpecialReg>(s.index);
                unsigned size = specialRegSize(sr);
                if (specialRegHasComponents(sr) && s.sel == 0 && inst.vec == 0)
                    error(inst.loc, "special register {} needs a component (.x, .y or .z)", specialRegName(sr));
                else if (d.kind == OperandKind::Reg && typeSize(t) != size && typeSize(t) != 0 && size != 1)
                    error(inst.loc, "'mov' type {} does not match the size of {}", typeName(t), specialRegName(sr));
            } else if (s.kind == OperandKind::Imm || s.kind == OperandKind::FImm) {
                typed(f, inst, 1, t, false, false);
            }
            return;
        }
        case Opcode::Cvt: {
            if (inst.numTypes < 2) {
                error(inst.loc, "'cvt' needs a destination and a source type");
                return;
            }
            Type dt = inst.types[0], st = inst.types[1];
            bool intRound = inst.rounding == Rounding::rni || inst.rounding == Rounding::rzi ||
                            inst.rounding == Rounding::rmi || inst.rounding == Rounding::rpi;
            bool fpRound = inst.rounding != Rounding::none && !intRound;
            if (isFloat(st) && isInt(dt) && !intRound) {
                error(inst.loc, "rounding modifier (.rni, .rzi, .rmi or .rpi) required for 'cvt' from {} to {}",
                      typeName(st), typeName(dt));
                return;
            }
            if (isInt(st) && isFloat(dt) && !fpRound) {
                error(inst.loc, "rounding modifier (.rn, .rz, .rm or .rp) required for 'cvt' from {} to {}",
                      typeName(st), typeName(dt));
                return;
            }
            if (isFloat(st) && isFloat(dt) && typeSize(dt) < typeSize(st) && inst.rounding == Rounding::none &&
                inst.numOperands == 2) {
                error(inst.loc, "rounding modifier required for narrowing 'cvt' from {} to {}", typeName(st),
                      typeName(dt));
                return;
            }
            if (inst.numOperands == 2 && ops[0].kind == OperandKind::Reg && ops[1].kind == OperandKind::Reg) {
                if (!typed(f, inst, 0, dt, !isFloat(dt), true)) return;
                if (!typed(f, inst, 1, st, !isFloat(st), false)) return;
            }
            return;
        }
        case Opcode::Cvta:
            if (m_.addressSize == 64 && sm_ >= 90 && typeSize(t) == 4)
                error(inst.loc, "32-bit generic addresses ('cvta{}') are not supported with .address_size 64 on "
                      "sm_90 or higher", std::string_view(typeName(t)));
            return;
        case Opcode::Ld: case Opcode::Ldu: case Opcode::St: {
            bool isStore = inst.opcode == Opcode::St;
            unsigned addrIdx = isStore ? 0 : 1, dataIdx = isStore ? 1 : 0;
            const Operand& a = ops[addrIdx];
            if (a.kind != OperandKind::Address) {
                error(inst.loc, "operand {} of '{}' must be an address in brackets", addrIdx + 1, name);
                return;
            }
            if (a.kind == OperandKind::Address && a.symKind != SymKind::None && inst.space != Space::none) {
                Space vs = Space::none;
                if (a.symKind == SymKind::Global && a.index < m_.globals.size()) vs = m_.globals[a.index].space;
                else if (a.symKind == SymKind::Local && a.index < f.locals.size()) vs = f.locals[a.index].space;
                else if (a.symKind == SymKind::Param || a.symKind == SymKind::Return) vs = Space::param;
                auto norm = [](Space s) {
                    if (s == Space::shared_cta) return Space::shared;
                    if (s == Space::param_entry || s == Space::param_func) return Space::param;
                    return s;
                };
                Space is = norm(inst.space);
                if (vs != Space::none && is != norm(vs) && !(is == Space::shared && vs == Space::shared_cluster) &&
                    !(is == Space::shared_cluster && norm(vs) == Space::shared)) {
                    error(inst.loc, "state space of '{}' does not match the space of the address operand", name);
                    return;
                }
            }
            const Operand& dop = ops[dataIdx];
            if (inst.vec) {
                if (dop.kind != OperandKind::Vector || dop.value != inst.vec) {
                    error(inst.loc, "'{}' .v{} needs a vector operand of {} elements", name, inst.vec, inst.vec);
                    return;
                }
            } else if (dop.kind == OperandKind::Reg) {
                if (!typed(f, inst, dataIdx, t, !isFloat(t), !isStore)) return;
            } else if (!isStore || (dop.kind != OperandKind::Imm && dop.kind != OperandKind::FImm)) {
                if (dop.kind != OperandKind::Reg) {
                    error(inst.loc, "{} of '{}' must be a register", isStore ? "value" : "result", name);
                    return;
                }
            }
            return;
        }
        case Opcode::Atom: case Opcode::Red: {
            unsigned addrIdx = inst.opcode == Opcode::Atom ? 1 : 0;
            if (ops[addrIdx].kind != OperandKind::Address) {
                error(inst.loc, "operand {} of '{}' must be an address in brackets", addrIdx + 1, name);
                return;
            }
            if (inst.redOp == RedOp::none) {
                error(inst.loc, "'{}' needs an operation (.add, .cas, .exch, ...)", name);
                return;
            }
            return;
        }
        case Opcode::Bra: {
            const Operand& target = ops[0];
            if (target.kind != OperandKind::Label || f.labels[target.index].kind != LabelKind::Code) {
                error(inst.loc, "'bra' needs a code label");
                return;
            }
            return;
        }
        case Opcode::BrxIdx: {
            if (inst.numOperands != 2 || ops[1].kind != OperandKind::Label ||
                f.labels[ops[1].index].kind != LabelKind::BranchTargets) {
                error(inst.loc, "'brx.idx' needs an index and a .branchtargets label");
                return;
            }
            return;
        }
        case Opcode::Call: {
            // call [(rets),] target [, (args)] [, proto]
            unsigned i = 0;
            const Operand* rets = nullptr;
            const Operand* args = nullptr;
            if (i < inst.numOperands && ops[i].kind == OperandKind::List) rets = &ops[i++];
            if (i >= inst.numOperands) {
                error(inst.loc, "'call' needs a target");
                return;
            }
            const Operand& target = ops[i++];
            if (i < inst.numOperands && ops[i].kind == OperandKind::List) args = &ops[i++];
            bool hasProto = i < inst.numOperands;
            if (hasProto && (ops[i].kind != OperandKind::Label ||
                             (f.labels[ops[i].index].kind != LabelKind::CallPrototype &&
                              f.labels[ops[i].index].kind != LabelKind::CallTargets))) {
                error(inst.loc, "last operand of an indirect 'call' must be a .callprototype or .calltargets label");
                return;
            }
            if (target.kind == OperandKind::Symbol && target.symKind == SymKind::Function) {
                const Function& callee = m_.functions[target.index];
                if (callee.isEntry) {
                    error(inst.loc, "cannot call kernel '{}'", m_.str(callee.name));
                    return;
                }
                size_t nArgs = args ? static_cast<size_t>(args->value) : 0;
                size_t nRets = rets ? static_cast<size_t>(rets->value) : 0;
                if (nArgs != callee.params.size())
                    error(inst.loc, "call to '{}' passes {} arguments, the function takes {}", m_.str(callee.name),
                          nArgs, callee.params.size());
                else if (nRets != callee.returns.size())
                    error(inst.loc, "call to '{}' receives {} return values, the function returns {}",
                          m_.str(callee.name), nRets, callee.returns.size());
            } else if (target.kind == OperandKind::Reg) {
                if (!hasProto) error(inst.loc, "indirect 'call' through a register needs a prototype label");
            } else {
                error(inst.loc, "'call' target must be a function or a register");
            }
            return;
        }
        default: return;
    }
}

}  // namespace

unsigned minPtxVersionForTarget(unsigned sm, bool archSpecific, bool familySpecific) {
    if (familySpecific) {
        switch (sm) {
            case 100: case 101: case 103: case 110: case 120: case 121: return 88;
            default: return 0;
        }
    }
    if (archSpecific) {
        switch (sm) {
            case 90: return 80;
            case 100: case 101: return 86;
            case 103: return 88;
            case 110: return 90;
            case 120: return 87;
            case 121: return 88;
            default: return 0;
        }
    }
    switch (sm) {
        case 20: return 10;
        case 30: case 35: return 31;
        case 32: case 50: return 40;
        case 37: case 52: return 41;
        case 53: return 42;
        case 60: case 61: case 62: return 50;
        case 70: return 60;
        case 72: return 61;
        case 75: return 63;
        case 80: return 70;
        case 86: return 71;
        case 87: return 74;
        case 88: return 90;
        case 89: case 90: return 78;
        case 100: case 101: return 86;
        case 103: return 88;
        case 110: return 90;
        case 120: return 87;
        case 121: return 88;
        default: return 0;
    }
}

bool checkModule(const Module& module, Diagnostics& diags, const CheckOptions& options) {
    return Checker(module, diags, options).run();
}

FrontEndResult parseAndCheck(std::string_view text, std::string_view fileName, const CheckOptions& options) {
    FrontEndResult r;
    Diagnostics diags(fileName);
    ParseOptions popt;
    popt.fileName = fileName;
    std::unique_ptr<Module> module = parseModule(text, diags, popt);
    if (!diags.hasErrors()) checkModule(*module, diags, options);
    r.ok = !diags.hasErrors();
    r.log = diags.format();
    if (r.ok) r.module = std::move(module);
    return r;
}

}  // namespace ptx
