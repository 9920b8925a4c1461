#include "ptx/check.h"

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <string>

#include "ptx/parse.h"

namespace ptx {
namespace {

// Minimum target and PTX ISA version (major*10+minor) of instructions newer than the baseline (sm_75, PTX 6.3).
struct Gate {
    Opcode op;
    unsigned sm;
    bool archSpecific;   // needs the "a" target (sm_90a)
    unsigned ptx;
    unsigned lastSm = 0;   // newest target family that has it (0: all newer ones); tcgen05 is not on sm_120
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
    {Opcode::MmaSp, 80, false, 71},
    {Opcode::MmaSpOrdered, 80, false, 85},
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
    {Opcode::Tcgen05Alloc, 100, true, 86, 110},
    {Opcode::Tcgen05Dealloc, 100, true, 86, 110},
    {Opcode::Tcgen05RelinquishAllocPermit, 100, true, 86, 110},
    {Opcode::Tcgen05Ld, 100, true, 86, 110},
    {Opcode::Tcgen05St, 100, true, 86, 110},
    {Opcode::Tcgen05Wait, 100, true, 86, 110},
    {Opcode::Tcgen05Cp, 100, true, 86, 110},
    {Opcode::Tcgen05Shift, 100, true, 86, 110},
    {Opcode::Tcgen05Mma, 100, true, 86, 110},
    {Opcode::Tcgen05MmaSp, 100, true, 86, 110},
    {Opcode::Tcgen05MmaWs, 100, true, 86, 110},
    {Opcode::Tcgen05MmaWsSp, 100, true, 86, 110},
    {Opcode::Tcgen05Commit, 100, true, 86, 110},
    {Opcode::Tcgen05Fence, 100, true, 86, 110},
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
    {Opcode::Tanh, 75, false, 70},
    {Opcode::Ldmatrix, 75, false, 65},
    {Opcode::WmmaLoad, 70, false, 60},
    {Opcode::WmmaStore, 70, false, 60},
    {Opcode::WmmaMma, 70, false, 60},
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

// Modifiers and types that need a newer target or PTX version than the instruction itself, wherever they appear
// (op == Opcode::count_) or on one instruction. Checked against ptxas (tests/ptx-front/agreement).
struct ModGate {
    Mod mod;
    Opcode op;          // Opcode::count_: any instruction
    uint16_t sm;        // 0: no target requirement
    uint8_t ptx;        // 0: no version requirement
};
constexpr Opcode kAnyOp = Opcode::count_;
constexpr ModGate kModGates[] = {
    {Mod::type_bf16, kAnyOp, 80, 70},
    {Mod::type_bf16x2, kAnyOp, 80, 70},
    {Mod::type_tf32, kAnyOp, 80, 70},
    {Mod::type_bf16, Opcode::Add, 90, 78},
    {Mod::type_bf16x2, Opcode::Add, 90, 78},
    {Mod::type_bf16, Opcode::Sub, 90, 78},
    {Mod::type_bf16x2, Opcode::Sub, 90, 78},
    {Mod::type_bf16, Opcode::Mul, 90, 78},
    {Mod::type_bf16x2, Opcode::Mul, 90, 78},
    {Mod::type_bf16, Opcode::Setp, 90, 78},
    {Mod::type_bf16x2, Opcode::Setp, 90, 78},
    {Mod::type_bf16, Opcode::Set, 90, 78},
    {Mod::type_bf16x2, Opcode::Set, 90, 78},
    {Mod::type_bf16, Opcode::Ex2, 90, 78},
    {Mod::type_bf16x2, Opcode::Ex2, 90, 78},
    {Mod::type_f16, Opcode::Ex2, 75, 70},
    {Mod::type_f16x2, Opcode::Ex2, 75, 70},
    {Mod::relu, kAnyOp, 80, 70},
    {Mod::NaN, kAnyOp, 80, 70},
    {Mod::xorsign, kAnyOp, 86, 72},
    {Mod::abs, Opcode::Min, 86, 72},
    {Mod::abs, Opcode::Max, 86, 72},
    {Mod::L2_cache_hint, kAnyOp, 80, 74},
    {Mod::L2_256B, kAnyOp, 80, 74},
    {Mod::L2_128B, kAnyOp, 0, 74},
    {Mod::L2_64B, kAnyOp, 0, 74},
    {Mod::L1_evict_normal, Opcode::Ld, 0, 74},
    {Mod::L1_evict_unchanged, Opcode::Ld, 0, 74},
    {Mod::L1_evict_first, Opcode::Ld, 0, 74},
    {Mod::L1_evict_last, Opcode::Ld, 0, 74},
    {Mod::L1_no_allocate, Opcode::Ld, 0, 74},
    {Mod::L1_evict_normal, Opcode::St, 0, 74},
    {Mod::L1_evict_unchanged, Opcode::St, 0, 74},
    {Mod::L1_evict_first, Opcode::St, 0, 74},
    {Mod::L1_evict_last, Opcode::St, 0, 74},
    {Mod::L1_no_allocate, Opcode::St, 0, 74},
    {Mod::cluster, kAnyOp, 90, 78},
    {Mod::shared_cluster, kAnyOp, 90, 78},
    {Mod::shared_cta, kAnyOp, 0, 78},
    {Mod::mmio, kAnyOp, 0, 82},
    {Mod::parity, Opcode::MbarrierTest, 0, 71},
    {Mod::expect_tx, Opcode::MbarrierArrive, 90, 80},
    {Mod::expect_tx, Opcode::MbarrierArriveDrop, 90, 80},
    {Mod::sp_ordered_metadata, kAnyOp, 80, 85},
    {Mod::param_entry, kAnyOp, 0, 83},
    {Mod::acc_f32, Opcode::MultimemLdReduce, 0, 82},
};

// Which modifiers have an entry in kModGates: most instructions have none, and the checker stays fast.
constexpr auto kModHasGate = [] {
    std::array<bool, static_cast<size_t>(Mod::count_)> has{};
    for (const ModGate& g : kModGates) has[static_cast<size_t>(g.mod)] = true;
    return has;
}();

// Dense mma.sync shapes: fragment sizes (32-bit registers, or f64 registers for .f64) and where they appeared.
enum class MmaKind : uint8_t { F16, BF16, TF32, F64, I8, I4, B1, F8 };
struct MmaForm {
    Mod shape;
    MmaKind kind;
    uint8_t a, b;       // registers in the A and B fragments
    uint8_t c32, c16;   // C/D registers with a 32-bit (f32, s32) / 16-bit (f16) accumulator; 0 = not allowed
    uint16_t sm;
    uint8_t ptx;
};
constexpr MmaForm kMmaForms[] = {
    {Mod::m8n8k4, MmaKind::F16, 2, 2, 8, 4, 70, 64},      {Mod::m16n8k8, MmaKind::F16, 2, 1, 4, 2, 75, 65},
    {Mod::m16n8k16, MmaKind::F16, 4, 2, 4, 2, 80, 70},    {Mod::m16n8k8, MmaKind::BF16, 2, 1, 4, 0, 80, 70},
    {Mod::m16n8k16, MmaKind::BF16, 4, 2, 4, 0, 80, 70},   {Mod::m16n8k4, MmaKind::TF32, 2, 1, 4, 0, 80, 70},
    {Mod::m16n8k8, MmaKind::TF32, 4, 2, 4, 0, 80, 70},    {Mod::m8n8k4, MmaKind::F64, 1, 1, 2, 0, 80, 70},
    {Mod::m16n8k4, MmaKind::F64, 2, 1, 4, 0, 90, 78},     {Mod::m16n8k8, MmaKind::F64, 4, 2, 4, 0, 90, 78},
    {Mod::m16n8k16, MmaKind::F64, 8, 4, 4, 0, 90, 78},    {Mod::m8n8k16, MmaKind::I8, 1, 1, 2, 0, 75, 65},
    {Mod::m16n8k16, MmaKind::I8, 2, 1, 4, 0, 80, 70},     {Mod::m16n8k32, MmaKind::I8, 4, 2, 4, 0, 80, 70},
    {Mod::m8n8k32, MmaKind::I4, 1, 1, 2, 0, 75, 65},      {Mod::m16n8k32, MmaKind::I4, 2, 1, 4, 0, 80, 70},
    {Mod::m16n8k64, MmaKind::I4, 4, 2, 4, 0, 80, 70},     {Mod::m8n8k128, MmaKind::B1, 1, 1, 2, 0, 75, 65},
    {Mod::m16n8k128, MmaKind::B1, 2, 1, 4, 0, 80, 70},    {Mod::m16n8k256, MmaKind::B1, 4, 2, 4, 0, 80, 70},
    {Mod::m16n8k32, MmaKind::F8, 4, 2, 4, 2, 89, 84},     {Mod::m16n8k16, MmaKind::F8, 2, 1, 4, 2, 89, 87},
};

// Sparse mma (mma.sp, mma.sp::ordered_metadata): A holds half of K's elements; e is the 32-bit metadata register
// and f the sparsity selector, a constant whose range depends on the shape and type (checked against ptxas).
struct SparseMmaForm {
    Mod shape;
    MmaKind kind;
    uint8_t a, b;       // registers in the A and B fragments
    uint8_t c32, c16;   // C/D registers with a 32-bit / 16-bit accumulator; 0 = not allowed
    uint8_t maxSelector;
};
constexpr SparseMmaForm kSparseMmaForms[] = {
    {Mod::m16n8k16, MmaKind::F16, 2, 2, 4, 2, 3},  {Mod::m16n8k32, MmaKind::F16, 4, 4, 4, 2, 1},
    {Mod::m16n8k16, MmaKind::BF16, 2, 2, 4, 0, 3}, {Mod::m16n8k32, MmaKind::BF16, 4, 4, 4, 0, 1},
    {Mod::m16n8k8, MmaKind::TF32, 2, 2, 4, 0, 3},  {Mod::m16n8k16, MmaKind::TF32, 4, 4, 4, 0, 1},
    {Mod::m16n8k32, MmaKind::I8, 2, 2, 4, 0, 1},   {Mod::m16n8k64, MmaKind::I8, 4, 4, 4, 0, 0},
    {Mod::m16n8k64, MmaKind::I4, 2, 2, 4, 0, 1},   {Mod::m16n8k128, MmaKind::I4, 4, 4, 4, 0, 0},
    {Mod::m16n8k64, MmaKind::F8, 4, 4, 4, 2, 0},
};

bool isMmaShape(Mod m) {
    for (const MmaForm& form : kMmaForms)
        if (form.shape == m) return true;
    return false;
}

std::string_view redOpText(RedOp op) {
    switch (op) {
        case RedOp::and_: return ".and";
        case RedOp::or_: return ".or";
        case RedOp::xor_: return ".xor";
        case RedOp::cas: return ".cas";
        case RedOp::exch: return ".exch";
        case RedOp::add: return ".add";
        case RedOp::inc: return ".inc";
        case RedOp::dec: return ".dec";
        case RedOp::min: return ".min";
        case RedOp::max: return ".max";
        case RedOp::popc: return ".popc";
        default: return "";
    }
}

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
    void entryParamSpace(const Function& f);
    template <typename... Args>
    void error(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
        d_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
    }
    void function(const Function& f);
    void instruction(const Function& f, const Instruction& inst);
    // Checks a register source/destination operand against a type; returns false (after an error) on mismatch.
    bool typed(const Function& f, const Instruction& inst, unsigned index, Type type, bool wider, bool isDest);
    std::string_view mnemonic(const Instruction& inst) const { return opcodeMnemonic(inst.opcode); }
    void requireTarget(const Instruction& inst, std::string_view feature, unsigned sm, unsigned ptx);
    bool modGates(const Function& f, const Instruction& inst);
    bool conversionSpace(const Instruction& inst);
    bool requireMods(const Function& f, const Instruction& inst, std::string_view name,
                     std::initializer_list<Mod> mods);
    bool operandCount(const Instruction& inst, std::string_view name, unsigned expected);
    bool addressOperand(const Function& f, const Instruction& inst, unsigned index);
    template <typename Pred>
    bool vectorRegs(const Function& f, const Instruction& inst, unsigned index, std::string_view what, Pred ok);
    template <typename Pred>
    bool regOperand(const Function& f, const Instruction& inst, unsigned index, std::string_view what, Pred ok,
                    bool allowImm, bool allowSink);
    void mma(const Function& f, const Instruction& inst);
    void sparseMma(const Function& f, const Instruction& inst);
    bool kindMma(const Function& f, const Instruction& inst, bool sparse);
    void matrixLoadStore(const Function& f, const Instruction& inst);
    void mbarrier(const Function& f, const Instruction& inst);
    void asyncCopy(const Function& f, const Instruction& inst);
    void tensorCoordinates(const Function& f, const Instruction& inst);
    void wmma(const Function& f, const Instruction& inst);
    void wgmma(const Function& f, const Instruction& inst);
    void convertGates(const Instruction& inst);
    void textureSurface(const Function& f, const Instruction& inst);
    void atomic(const Function& f, const Instruction& inst);
    void tcgen05(const Function& f, const Instruction& inst);
    void tcgen05Mma(const Function& f, const Instruction& inst);
    void video(const Function& f, const Instruction& inst);
    void multimem(const Function& f, const Instruction& inst);
    bool arithmeticModes(const Function& f, const Instruction& inst);
    bool memoryModes(const Function& f, const Instruction& inst);

    const Module& m_;
    Diagnostics& d_;
    const CheckOptions& opt_;
    unsigned sm_ = 0;
    bool archSpecific_ = false;   // an "a" or "f" target
    bool archOnly_ = false;       // an "a" target (features outside the family)
    unsigned ptx_ = 0;
};

bool Checker::run() {
    ptx_ = m_.versionMajor * 10 + m_.versionMinor;
    bool newerIsa = m_.versionMajor > 9 || (m_.versionMajor == 9 && m_.versionMinor > 0);
    if (newerIsa && !opt_.acceptNewerIsa)
        d_.error(1, 1, fmt::format("unsupported .version {}.{}; the newest supported is 9.0", m_.versionMajor,
                                   m_.versionMinor));
    if (m_.versionMajor < 1) d_.error(1, 1, "missing or invalid .version");
    // The minor versions that exist for each major version (1.x .. 9.0).
    static constexpr unsigned kLastMinor[] = {0, 5, 3, 2, 3, 0, 5, 8, 8, 0};
    if (!newerIsa && m_.versionMajor >= 1 && m_.versionMajor <= 9 && m_.versionMinor > kLastMinor[m_.versionMajor])
        d_.error(1, 1, fmt::format("unsupported .version {}.{}", m_.versionMajor, m_.versionMinor));
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
            archOnly_ = t.archSpecific;
        }
    }
    // map_f64_to_f32 exists for the targets without double precision (ptxas: "not supported with SM 1.3 or
    // higher"); .target debug came with PTX 3.0.
    if (m_.mapF64ToF32 && sm_ >= 13) d_.error(2, 1, "map_f64_to_f32 is only for targets below sm_13");
    if (m_.debug && ptx_ < 30) d_.error(2, 1, ".target debug needs PTX .version 3.0 or later");
    if (opt_.targetSm) {
        // The JIT compiles for the device's SM: a module whose every .target is newer is refused (driver 580 on an
        // H100: ptxas "SM version specified by .target is higher than default SM version assumed", INVALID_PTX;
        // tools/gpu-probe/results/cc12-h100-*.txt). A list such as "sm_100f, sm_90" loads when one entry fits.
        unsigned lowest = 0;
        for (const Target& t : m_.targets)
            if (t.smVersion && (!lowest || t.smVersion < lowest)) lowest = t.smVersion;
        if (lowest > opt_.targetSm)
            d_.error(2, 1, fmt::format("SM version specified by .target is higher than the device's (sm_{})",
                                       opt_.targetSm));
        sm_ = std::min(sm_ ? sm_ : opt_.targetSm, opt_.targetSm);
    }
    if (m_.addressSize != 64 && m_.addressSize != 32) d_.error(3, 1, ".address_size must be 32 or 64");
    for (const Variable& v : m_.globals) {
        if (v.type == Type::samplerref && !m_.texmodeIndependent)
            error(v.loc, "'.samplerref' variable '{}' needs .target texmode_independent", m_.str(v.name));
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

// Kernel parameters, laid out with their alignment, fit the hardware's parameter space: 4352 bytes, or 32764 bytes
// from PTX 8.1 on sm_70 and later (the limits and messages of ptxas in driver 580).
void Checker::entryParamSpace(const Function& f) {
    constexpr uint64_t kClassicLimit = 4352, kLargeLimit = 32764;
    uint64_t bytes = 0;
    for (const Param& p : f.params) {
        uint64_t align = p.align ? p.align : std::max(1u, typeSize(p.type));
        bytes = (bytes + align - 1) / align * align + (p.size ? p.size : p.elementSize());
    }
    if (bytes <= kClassicLimit) return;
    bool large = ptx_ >= 81 && (sm_ == 0 || sm_ >= 70);
    if (bytes > (large ? kLargeLimit : kClassicLimit))
        error(f.loc, "entry function '{}' uses too much parameter space ({:#x} bytes, {:#x} max)", m_.str(f.name),
              bytes, large ? kLargeLimit : kClassicLimit);
    if (!large && bytes <= kLargeLimit)
        error(f.loc, "kernel parameters larger than {} bytes need .target sm_70 or higher and PTX .version 8.1",
              kClassicLimit);
}

void Checker::function(const Function& f) {
    if (f.isEntry && !f.returns.empty()) error(f.loc, "kernel '{}' cannot have return values", m_.str(f.name));
    for (const Param& p : f.params) {
        if (p.type == Type::samplerref && !m_.texmodeIndependent)
            error(p.loc, "'.samplerref' parameter '{}' needs .target texmode_independent", m_.str(p.name));
        if (f.isEntry && p.space != Space::param)
            error(p.loc, "kernel parameter '{}' must be in .param space", m_.str(p.name));
        if (!f.isEntry && p.ptr) error(p.loc, ".ptr is only allowed on kernel parameters");
    }
    if (f.isEntry) entryParamSpace(f);
    if (!f.hasBody) return;
    for (const BodyPragma& pr : f.bodyPragmas) {
        uint32_t mask = 0;
        bool malformed = false;
        if (!usedBytesMaskPragma(m_.str(pr.text), mask, malformed)) continue;
        SourceLoc at = pr.loc;
        if (ptx_ < 83) error(at, ".pragma \"used_bytes_mask\" needs PTX .version 8.3 or later");
        else if (malformed) error(at, ".pragma \"used_bytes_mask\" needs one integer argument");
    }
    for (const Variable& v : f.locals)
        if (v.hasInit && (v.space == Space::shared || v.space == Space::local || v.space == Space::param))
            error(v.loc, "variables in this state space cannot be initialised");
    const Instruction* singleCta = nullptr;
    const Instruction* ctaPair = nullptr;
    for (const Instruction& inst : f.instructions) {
        if (d_.full()) return;
        instruction(f, inst);
        if (opcodeClass(inst.opcode) != OpClass::Matrix) continue;
        if (!singleCta && f.hasMod(inst, Mod::cta_group_1)) singleCta = &inst;
        if (!ctaPair && f.hasMod(inst, Mod::cta_group_2)) ctaPair = &inst;
    }
    // The tensor-memory instructions of one function all work for one CTA or all for a CTA pair.
    if (singleCta && ctaPair)
        error((singleCta->loc.line > ctaPair->loc.line ? singleCta : ctaPair)->loc,
              "'{}' mixes .cta_group::1 and .cta_group::2 instructions", m_.str(f.name));
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
// %tid, %ntid, %ctaid, %nctaid were 16-bit before PTX 2.0; `mov.u16 %rh, %ctaid.x` stays legal (ptxas accepts it
// in every version) and reads the low half.
static bool legacy16BitSpecialReg(SpecialReg sr) {
    return sr == SpecialReg::tid || sr == SpecialReg::ntid || sr == SpecialReg::ctaid || sr == SpecialReg::nctaid;
}
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
        else if (sm_ && g.lastSm && sm_ > g.lastSm)
            error(inst.loc, "'{}' is not supported on .target sm_{}", opcodeName(inst.opcode), sm_);
        if (ptx_ < g.ptx)
            error(inst.loc, "'{}' requires PTX ISA .version {}.{} or later", opcodeName(inst.opcode), g.ptx / 10,
                  g.ptx % 10);
        break;
    }
    if (!modGates(f, inst)) return;
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
    if (cls == OpClass::Video) {
        video(f, inst);
        return;
    }
    // Byte/half-word selectors and negated registers belong to the video instructions only.
    for (unsigned i = 0; i < inst.numOperands; ++i) {
        const Operand& op = ops[i];
        if (op.kind != OperandKind::Reg) continue;
        if (selKind(op.sel) == SelKind::Byte || selKind(op.sel) == SelKind::Half) {
            error(inst.loc, "byte and half-word selectors are only allowed on video instructions, not on '{}'",
                  name);
            return;
        }
        if (op.flags & kOperandMinus) {
            error(inst.loc, "operand {} of '{}' cannot be negated with '-'", i + 1, name);
            return;
        }
    }
    bool needsType = cls == OpClass::Arith || cls == OpClass::Logic || cls == OpClass::Compare ||
                     cls == OpClass::Convert || inst.opcode == Opcode::Mov || inst.opcode == Opcode::Ld ||
                     inst.opcode == Opcode::St || inst.opcode == Opcode::Ldu || inst.opcode == Opcode::Atom ||
                     inst.opcode == Opcode::Red;
    if (needsType && inst.numTypes == 0) {
        error(inst.loc, "'{}' needs an instruction type", name);
        return;
    }
    Type t = inst.type();
    if (!arithmeticModes(f, inst)) return;
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
            if ((t == Type::bf16 || t == Type::bf16x2) && inst.has(Flag::ftz)) {
                error(inst.loc, "'setp{}' does not take .ftz", typeName(t));
                return;
            }
            if (d.kind == OperandKind::RegPair && (t == Type::f16 || t == Type::bf16)) {
                error(inst.loc, "'setp{}' has one result; `p|q` needs .f16x2 or .bf16x2", typeName(t));
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
        case Opcode::Set: {
            // Half-precision sources (PTX ISA "Half Precision Comparison Instructions: set"): the result is 1.0 in
            // the source's format or an integer; pairs give a pair or a 32-bit integer; no .ftz on bf16.
            Type st = inst.numTypes > 1 ? inst.types[1] : t;
            bool pairSrc = st == Type::f16x2 || st == Type::bf16x2;
            if (st != Type::f16 && st != Type::bf16 && !pairSrc) return;
            bool intDst = t == Type::u32 || t == Type::s32 || (!pairSrc && (t == Type::u16 || t == Type::s16));
            if (t != st && !intDst) {
                error(inst.loc, "'set' from {} cannot produce {}", typeName(st), typeName(t));
                return;
            }
            if ((st == Type::bf16 || st == Type::bf16x2) && inst.has(Flag::ftz)) {
                error(inst.loc, "'set{}' does not take .ftz", typeName(st));
                return;
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
                else if (d.kind == OperandKind::Reg && typeSize(t) != size && typeSize(t) != 0 && size != 1 &&
                         !(typeSize(t) == 2 && legacy16BitSpecialReg(sr)))
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
            size_t errorsBefore = d_.errorCount();
            convertGates(inst);
            if (d_.errorCount() != errorsBefore) return;
            if (inst.numOperands == 3 && ops[0].kind == OperandKind::Reg && ops[0].index < f.registers.size() &&
                typeSize(dt) != 0 && typeSize(f.registers[ops[0].index].type) != typeSize(dt)) {
                error(inst.loc, "the result of 'cvt{}{}' from two sources must be a {}-bit register", typeName(dt),
                      typeName(st), typeSize(dt) * 8);
                return;
            }
            bool intRound = inst.rounding == Rounding::rni || inst.rounding == Rounding::rzi ||
                            inst.rounding == Rounding::rmi || inst.rounding == Rounding::rpi;
            bool fpRound = inst.rounding != Rounding::none && !intRound;
            if (inst.rounding != Rounding::none && ((isInt(dt) && isInt(st)) || (dt == st && isFloat(dt) && !intRound))) {
                error(inst.loc, "'cvt{}{}' does not take a {} rounding modifier", typeName(dt), typeName(st),
                      isInt(dt) ? "" : "floating-point");
                return;
            }
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
            if (!conversionSpace(inst)) return;
            if (t != Type::u32 && t != Type::u64) {
                error(inst.loc, "'cvta' needs the type .u32 or .u64");
                return;
            }
            if (m_.addressSize == 64 && sm_ >= 90 && typeSize(t) == 4)
                error(inst.loc, "32-bit generic addresses ('cvta{}') are not supported with .address_size 64 on "
                      "sm_90 or higher", std::string_view(typeName(t)));
            return;
        case Opcode::Prefetch:
            if (inst.space != Space::none && inst.space != Space::global && inst.space != Space::local)
                error(inst.loc, "'prefetch' takes .global or .local addresses only");
            return;
        case Opcode::Isspacep:
            if (!conversionSpace(inst)) return;
            if (inst.numTypes != 0) {
                error(inst.loc, "'isspacep' takes no type");
                return;
            }
            typed(f, inst, 0, Type::pred, false, true);
            return;
        case Opcode::Ld: case Opcode::Ldu: case Opcode::St: {
            bool isStore = inst.opcode == Opcode::St;
            if (!memoryModes(f, inst)) return;
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
            if (inst.vec * typeSize(t) == 32) {
                size_t errorsBefore = d_.errorCount();
                requireTarget(inst, "256-bit loads and stores", 100, 88);
                if (d_.errorCount() != errorsBefore) return;
            }
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
            atomic(f, inst);
            return;
        }
        case Opcode::Vote: case Opcode::Shfl:
            if (sm_ >= 70 && ptx_ >= 64)
                error(inst.loc, "'{}' without .sync is not supported on sm_70 and newer targets from PTX ISA 6.4 on",
                      name);
            return;
        case Opcode::ReduxSync: {
            Type t = inst.type();
            bool logic = inst.redOp == RedOp::and_ || inst.redOp == RedOp::or_ || inst.redOp == RedOp::xor_;
            if (t == Type::f32 && (inst.redOp == RedOp::min || inst.redOp == RedOp::max)) {
                if (sm_ && (sm_ < 100 || !archSpecific_))
                    error(inst.loc, "'redux.sync' with .f32 is not supported on .target sm_{}", sm_);
                else if (ptx_ < 86)
                    error(inst.loc, "'redux.sync' with .f32 requires PTX ISA .version 8.6 or later");
            } else if (logic ? t != Type::b32 : (t != Type::u32 && t != Type::s32)) {
                error(inst.loc, "'redux.sync' {} needs the type {}", redOpText(inst.redOp),
                      logic ? ".b32" : ".u32 or .s32");
            }
            return;
        }
        case Opcode::Fence:
            if (inst.sem == Sem::relaxed || inst.sem == Sem::weak) error(inst.loc, "'fence' does not take {}",
                                                                         inst.sem == Sem::relaxed ? ".relaxed" : ".weak");
            else if (inst.has(Flag::proxy) && f.hasMod(inst, Mod::async)) requireTarget(inst, "fence.proxy.async", 90, 80);
            return;
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
        case Opcode::Mma: mma(f, inst); return;
        case Opcode::MmaSp: case Opcode::MmaSpOrdered: sparseMma(f, inst); return;
        case Opcode::MultimemLdReduce: case Opcode::MultimemSt: case Opcode::MultimemRed: multimem(f, inst); return;
        case Opcode::MultimemCpAsyncBulk: case Opcode::MultimemCpReduceAsyncBulk:
            // ptxas 13.0 (PTX ISA 9.0) does not know the multimem bulk copies yet.
            error(inst.loc, "'multimem{}' is not part of PTX ISA 9.0", modText(f.modsOf(inst)[0]));
            return;
        case Opcode::Tcgen05Alloc: case Opcode::Tcgen05Dealloc: case Opcode::Tcgen05RelinquishAllocPermit:
        case Opcode::Tcgen05Ld: case Opcode::Tcgen05St: case Opcode::Tcgen05Wait: case Opcode::Tcgen05Cp:
        case Opcode::Tcgen05Shift: case Opcode::Tcgen05Mma: case Opcode::Tcgen05MmaSp: case Opcode::Tcgen05MmaWs:
        case Opcode::Tcgen05MmaWsSp: case Opcode::Tcgen05Commit:
            tcgen05(f, inst);
            return;
        case Opcode::WmmaLoad: case Opcode::WmmaStore: case Opcode::WmmaMma: wmma(f, inst); return;
        case Opcode::WgmmaFence: case Opcode::WgmmaCommitGroup: case Opcode::WgmmaWaitGroup:
        case Opcode::WgmmaMmaAsync: case Opcode::WgmmaMmaAsyncSp:
            wgmma(f, inst);
            return;
        case Opcode::CvtPack: convertGates(inst); return;
        case Opcode::Tex: case Opcode::Tld4: case Opcode::Suld: case Opcode::Sust: case Opcode::Sured:
        case Opcode::Txq: case Opcode::Suq:
            textureSurface(f, inst);
            return;
        case Opcode::Ldmatrix: case Opcode::Stmatrix: matrixLoadStore(f, inst); return;
        case Opcode::MbarrierInit: case Opcode::MbarrierInval: case Opcode::MbarrierArrive:
        case Opcode::MbarrierArriveDrop: case Opcode::MbarrierExpectTx: case Opcode::MbarrierCompleteTx:
        case Opcode::MbarrierTest: case Opcode::MbarrierTry: case Opcode::MbarrierPendingCount:
            mbarrier(f, inst);
            return;
        case Opcode::CpAsync: case Opcode::CpAsyncWaitGroup: case Opcode::CpAsyncBulk:
        case Opcode::CpAsyncBulkPrefetch: case Opcode::CpAsyncBulkTensor: case Opcode::CpAsyncBulkPrefetchTensor:
        case Opcode::CpAsyncBulkWaitGroup: case Opcode::CpReduceAsyncBulk: case Opcode::CpReduceAsyncBulkTensor:
            asyncCopy(f, inst);
            return;
        default: return;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Modifier gating and the per-instruction checks of the tensor-core, matrix, barrier and asynchronous-copy families.

void Checker::requireTarget(const Instruction& inst, std::string_view feature, unsigned sm, unsigned ptx) {
    if (sm && sm_ && sm_ < sm) error(inst.loc, "'{}' requires .target sm_{} or higher", feature, sm);
    else if (ptx && ptx_ < ptx)
        error(inst.loc, "'{}' requires PTX ISA .version {}.{} or later", feature, ptx / 10, ptx % 10);
}

// cvta and isspacep name the state space of the address; .param (kernel parameters, .param::entry) came with
// PTX ISA 7.7 and sm_70, and isspacep has no .param::func form.
bool Checker::conversionSpace(const Instruction& inst) {
    std::string_view name = mnemonic(inst);
    switch (inst.space) {
        case Space::global: case Space::shared: case Space::shared_cta: case Space::shared_cluster:
        case Space::local: case Space::const_:
            return true;
        case Space::param: case Space::param_entry: {
            size_t before = d_.errorCount();
            requireTarget(inst, fmt::format("{} with the .param state space", name), 70, 77);
            return d_.errorCount() == before;
        }
        case Space::none:
            error(inst.loc, "'{}' needs a state space (.global, .shared, .local, .const, .param, ...)", name);
            return false;
        default:
            error(inst.loc, "'{}' does not take the state space {}", name,
                  inst.space == Space::param_func ? ".param::func" : "given");
            return false;
    }
}

bool Checker::modGates(const Function& f, const Instruction& inst) {
    size_t before = d_.errorCount();
    const Mod* mods = f.modsOf(inst);
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        Mod m = mods[k];
        if (!kModHasGate[static_cast<size_t>(m)]) continue;
        for (const ModGate& g : kModGates) {
            if (g.mod != m || (g.op != kAnyOp && g.op != inst.opcode)) continue;
            std::string feature = g.op == kAnyOp ? std::string(modText(m))
                                                 : fmt::format("{}{}", opcodeMnemonic(inst.opcode), modText(m));
            requireTarget(inst, feature, g.sm, g.ptx);
            if (d_.errorCount() != before) return false;
        }
    }
    return true;
}

// Number of elements of a `{...}` operand; 0 for anything else.
static unsigned vectorSize(const Operand& op) { return op.kind == OperandKind::Vector ? unsigned(op.value) : 0; }

// Every element of vector operand `index` is a register whose type fits `ok`.
template <typename Pred>
bool Checker::vectorRegs(const Function& f, const Instruction& inst, unsigned index, std::string_view what,
                         Pred ok) {
    const Operand& v = f.operands[inst.firstOperand + index];
    for (unsigned i = 0; i < vectorSize(v); ++i) {
        const Operand& e = f.elems[v.index + i];
        if (e.kind != OperandKind::Reg || e.index >= f.registers.size()) continue;   // sinks, immediates: elsewhere
        Type t = f.registers[e.index].type;
        if (!ok(t)) {
            error(inst.loc, "element {} of operand {} of '{}' has type {}; expected {}", i + 1, index + 1,
                  mnemonic(inst), typeName(t), what);
            return false;
        }
    }
    return true;
}

bool Checker::requireMods(const Function& f, const Instruction& inst, std::string_view name,
                          std::initializer_list<Mod> mods) {
    for (Mod m : mods)
        if (!f.hasMod(inst, m)) {
            error(inst.loc, "'{}' requires the {} modifier", name, modText(m));
            return false;
        }
    return true;
}

bool Checker::operandCount(const Instruction& inst, std::string_view name, unsigned expected) {
    if (inst.numOperands == expected) return true;
    error(inst.loc, "'{}' takes {} operand{} here, not {}", name, expected, expected == 1 ? "" : "s",
          inst.numOperands);
    return false;
}

static bool is32BitInteger(Type t) { return typeSize(t) == 4 && typeKind(t) != TypeKind::Float; }
static bool is64BitInteger(Type t) { return typeSize(t) == 8 && typeKind(t) != TypeKind::Float; }

// Register operand `index` (a scalar) has a type that fits `ok`.
template <typename Pred>
bool Checker::regOperand(const Function& f, const Instruction& inst, unsigned index, std::string_view what,
                         Pred ok, bool allowImm, bool allowSink) {
    const Operand& op = f.operands[inst.firstOperand + index];
    if (op.kind == OperandKind::Reg && op.index < f.registers.size()) {
        const Register& r = f.registers[op.index];
        if (!r.vec && ok(r.type)) return true;
    } else if ((op.kind == OperandKind::Imm && allowImm) || (op.kind == OperandKind::Sink && allowSink)) {
        return true;
    }
    error(inst.loc, "operand {} of '{}' must be {}", index + 1, mnemonic(inst), what);
    return false;
}

bool Checker::addressOperand(const Function& f, const Instruction& inst, unsigned index) {
    if (f.operands[inst.firstOperand + index].kind == OperandKind::Address) return true;
    error(inst.loc, "operand {} of '{}' must be an address in brackets", index + 1, mnemonic(inst));
    return false;
}

static bool isSharedSpace(Space s) { return s == Space::shared || s == Space::shared_cta; }

// mma and mma.sp::ordered_metadata with a .kind (sm_120a/f, PTX 8.7): .kind::f8f6f4 takes any pair of the 8-, 6- and
// 4-bit float types; the block-scaled kinds (.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4 with .block_scale) add a
// scale-factor type and, per matrix, a scale register and a {byte-id, thread-id} selector. Checked against ptxas.
// Returns true when the instruction has no .kind (the caller goes on with the plain forms); a .kind form is checked
// here completely and false is returned.
bool Checker::kindMma(const Function& f, const Instruction& inst, bool sparse) {
    std::string_view name = sparse ? "mma.sp::ordered_metadata" : "mma";
    for (Mod m : {Mod::kind_f16, Mod::kind_tf32, Mod::kind_i8}) {
        if (f.hasMod(inst, m)) {
            error(inst.loc, "'{}' does not take {}", name, modText(m));
            return false;
        }
    }
    bool f8f6f4 = f.hasMod(inst, Mod::kind_f8f6f4), mxf8f6f4 = f.hasMod(inst, Mod::kind_mxf8f6f4);
    bool mxf4 = f.hasMod(inst, Mod::kind_mxf4), mxf4nvf4 = f.hasMod(inst, Mod::kind_mxf4nvf4);
    bool scaled = mxf8f6f4 || mxf4 || mxf4nvf4;
    if (!f8f6f4 && !scaled) return true;   // no .kind: the plain forms
    if (sm_ && (sm_ < 120 || !archSpecific_)) {
        error(inst.loc, "'{}' with a .kind needs .target sm_120a or sm_120f", name);
        return false;
    }
    if (ptx_ < 87) {
        error(inst.loc, "'{}' with a .kind requires PTX ISA .version 8.7 or later", name);
        return false;
    }
    if (sparse && !f.hasMod(inst, Mod::sp_ordered_metadata)) {
        error(inst.loc, "sparse 'mma' with a .kind needs .sp::ordered_metadata");
        return false;
    }
    if (scaled != f.hasMod(inst, Mod::block_scale)) {
        error(inst.loc, "'{}' takes .block_scale exactly with .kind::mxf8f6f4, .kind::mxf4 or .kind::mxf4nvf4", name);
        return false;
    }
    // Instruction::types holds four types; the scale type of the block-scaled forms is the fifth type modifier.
    Type types[5] = {};
    unsigned numTypes = 0;
    const Mod* mods = f.modsOf(inst);
    Mod shape = Mod::count_, scaleVec = Mod::count_;
    unsigned rows = 0, cols = 0;
    Mod firstLayout = Mod::count_;
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        Mod m = mods[k];
        if (modCategory(m) == ModCat::Type) {
            if (numTypes < 5) types[numTypes] = modType(m);
            ++numTypes;
        } else if (isMmaShape(m)) {
            shape = m;
        } else if (m == Mod::scale_vec_1X || m == Mod::scale_vec_2X || m == Mod::scale_vec_4X) {
            scaleVec = m;
        } else if (m == Mod::row || m == Mod::col) {
            if (firstLayout == Mod::count_) firstLayout = m;
            (m == Mod::row ? rows : cols)++;
        }
    }
    unsigned wantTypes = scaled ? 5 : 4;
    if (numTypes != wantTypes) {
        error(inst.loc, "'{}' with this .kind needs {} types ({}), not {}", name, wantTypes,
              scaled ? ".dtype.atype.btype.ctype.stype" : ".dtype.atype.btype.ctype", numTypes);
        return false;
    }
    Type dt = types[0], at = types[1], bt = types[2], ct = types[3];
    auto small = [&](Type t) {
        if (mxf4 || mxf4nvf4) return t == Type::e2m1;
        return t == Type::e4m3 || t == Type::e5m2 || t == Type::e3m2 || t == Type::e2m3 || t == Type::e2m1;
    };
    if (!small(at) || !small(bt)) {
        error(inst.loc, "'{}' with this .kind does not support the multiplicand types {}{}", name, typeName(at),
              typeName(bt));
        return false;
    }
    if (dt != ct || !(dt == Type::f32 || (dt == Type::f16 && f8f6f4))) {
        error(inst.loc, "'{}' with this .kind does not support the accumulator types {}/{}", name, typeName(dt),
              typeName(ct));
        return false;
    }
    if (f.hasMod(inst, Mod::satfinite)) {
        error(inst.loc, "'{}' with this .kind does not take .satfinite", name);
        return false;
    }
    if (scaled) {
        if (scaleVec == Mod::count_ && mxf4nvf4) {
            error(inst.loc, "'{}' with .kind::mxf4nvf4 needs .scale_vec::2X or .scale_vec::4X", name);
            return false;
        }
        if (scaleVec == Mod::count_) scaleVec = mxf8f6f4 ? Mod::scale_vec_1X : Mod::scale_vec_2X;
        bool vecOk = mxf8f6f4 ? scaleVec == Mod::scale_vec_1X
                   : mxf4     ? scaleVec == Mod::scale_vec_2X
                              : scaleVec == Mod::scale_vec_2X || scaleVec == Mod::scale_vec_4X;
        if (!vecOk) {
            error(inst.loc, "'{}' does not support {} with this .kind", name, modText(scaleVec));
            return false;
        }
        Type want = scaleVec == Mod::scale_vec_4X ? Type::ue4m3 : Type::ue8m0;
        if (types[4] != want) {
            error(inst.loc, "'{}' {} needs the scale type {}", name, modText(scaleVec), typeName(want));
            return false;
        }
    }
    bool fourBit = mxf4 || mxf4nvf4;
    Mod wantShape = sparse ? (fourBit ? Mod::m16n8k128 : Mod::m16n8k64) : (fourBit ? Mod::m16n8k64 : Mod::m16n8k32);
    if (shape != wantShape) {
        error(inst.loc, "'{}' with this .kind needs the shape {}", name, modText(wantShape));
        return false;
    }
    if (rows != 1 || cols != 1 || firstLayout != Mod::row) {
        error(inst.loc, "'{}' requires the layouts .row.col", name);
        return false;
    }
    unsigned base = sparse ? 6 : 4;
    if (!operandCount(inst, name, base + (scaled ? 4 : 0))) return false;
    const Operand* ops = f.operandsOf(inst);
    unsigned acc = dt == Type::f16 ? 2 : 4;
    const unsigned want[4] = {acc, 4, sparse ? 4u : 2u, acc};
    const char* names[4] = {"D", "A", "B", "C"};
    for (unsigned i = 0; i < 4; ++i) {
        if (vectorSize(ops[i]) != want[i]) {
            error(inst.loc, "operand {} ({}) of '{}' must be a vector of {} registers", i + 1, names[i], name,
                  want[i]);
            return false;
        }
        if (!vectorRegs(f, inst, i, "32-bit registers", [](Type t) { return typeSize(t) == 4; })) return false;
    }
    auto reg32 = [](Type t) { return typeSize(t) == 4; };
    if (sparse) {
        if (!regOperand(f, inst, 4, "a 32-bit register (metadata)", reg32, false, false)) return false;
        if (ops[5].kind != OperandKind::Imm || ops[5].value != 0) {
            error(inst.loc, "operand 6 (sparsity selector) of '{}' with this .kind must be 0", name);
            return false;
        }
    }
    if (!scaled) return false;
    // Scale factors: a 32-bit register, then {byte-id, thread-id}: the thread is 0..1 for A and 0..3 for B; the byte
    // any of the four with one scale per row (1X), 0 or 2 with two (2X), 0 with four (4X).
    for (unsigned m = 0; m < 2; ++m) {
        int64_t maxThread = m == 0 ? 1 : 3;
        unsigned reg = base + 2 * m, sel = reg + 1;
        if (!regOperand(f, inst, reg, "a 32-bit register (scale factors)", reg32, false, false)) return false;
        const Operand& v = ops[sel];
        bool shapeOk = vectorSize(v) == 2 && f.elems[v.index].kind == OperandKind::Imm &&
                       f.elems[v.index + 1].kind == OperandKind::Imm;
        if (!shapeOk) {
            error(inst.loc, "operand {} of '{}' must be {{byte-id, thread-id}}, two integer constants", sel + 1, name);
            return false;
        }
        int64_t byteId = f.elems[v.index].value, threadId = f.elems[v.index + 1].value;
        bool byteOk = scaleVec == Mod::scale_vec_1X ? byteId >= 0 && byteId <= 3
                    : scaleVec == Mod::scale_vec_2X ? byteId == 0 || byteId == 2
                                                    : byteId == 0;
        if (!byteOk || threadId < 0 || threadId > maxThread) {
            error(inst.loc, "operand {} of '{}' {}: byte-id must be {} and thread-id 0 to {}", sel + 1, name,
                  modText(scaleVec),
                  scaleVec == Mod::scale_vec_1X ? "0 to 3" : scaleVec == Mod::scale_vec_2X ? "0 or 2" : "0",
                  maxThread);
            return false;
        }
    }
    return false;
}

void Checker::mma(const Function& f, const Instruction& inst) {
    if (!requireMods(f, inst, "mma", {Mod::sync, Mod::aligned})) return;
    if (!kindMma(f, inst, false)) return;
    Mod shape = Mod::count_;
    const Mod* mods = f.modsOf(inst);
    for (uint32_t k = 0; k < inst.modCount; ++k)
        if (isMmaShape(mods[k])) shape = mods[k];
    if (shape == Mod::count_) {
        error(inst.loc, "'mma' needs a shape (.m16n8k16, ...)");
        return;
    }
    if (inst.numTypes != 4) {
        error(inst.loc, "'mma' needs four types (.dtype.atype.btype.ctype), not {}", inst.numTypes);
        return;
    }
    Type dt = inst.types[0], at = inst.types[1], bt = inst.types[2], ct = inst.types[3];
    MmaKind kind;
    auto pair = [&](Type x, Type y) { return (at == x || at == y) && (bt == x || bt == y); };
    bool accOk;
    if (at == Type::f16 && bt == Type::f16) {
        kind = MmaKind::F16;
        accOk = (dt == Type::f16 || dt == Type::f32) && (ct == Type::f16 || ct == Type::f32);
    } else if (at == Type::bf16 && bt == Type::bf16) {
        kind = MmaKind::BF16;
        accOk = dt == Type::f32 && ct == Type::f32;
    } else if (at == Type::tf32 && bt == Type::tf32) {
        kind = MmaKind::TF32;
        accOk = dt == Type::f32 && ct == Type::f32;
    } else if (at == Type::f64 && bt == Type::f64) {
        kind = MmaKind::F64;
        accOk = dt == Type::f64 && ct == Type::f64;
    } else if (pair(Type::s8, Type::u8)) {
        kind = MmaKind::I8;
        accOk = dt == Type::s32 && ct == Type::s32;
    } else if (pair(Type::s4, Type::u4)) {
        kind = MmaKind::I4;
        accOk = dt == Type::s32 && ct == Type::s32;
    } else if (at == Type::b1 && bt == Type::b1) {
        kind = MmaKind::B1;
        accOk = dt == Type::s32 && ct == Type::s32;
    } else if (pair(Type::e4m3, Type::e5m2)) {
        kind = MmaKind::F8;
        accOk = (dt == Type::f32 || dt == Type::f16) && dt == ct;
    } else {
        error(inst.loc, "'mma' does not support the multiplicand types {}{}", typeName(at), typeName(bt));
        return;
    }
    if (!accOk) {
        error(inst.loc, "'mma' with {} multiplicands does not support the accumulator types {}/{}", typeName(at),
              typeName(dt), typeName(ct));
        return;
    }
    const MmaForm* form = nullptr;
    for (const MmaForm& m : kMmaForms)
        if (m.shape == shape && m.kind == kind) form = &m;
    if (!form) {
        error(inst.loc, "'mma' shape {} is not defined for {} multiplicands", modText(shape), typeName(at));
        return;
    }
    std::string feature = fmt::format("mma{}{}", modText(shape), typeName(at));
    size_t before = d_.errorCount();
    requireTarget(inst, feature, form->sm, form->ptx);
    if (kind == MmaKind::F8 && dt == Type::f16) requireTarget(inst, "mma with FP8 inputs and .f16 accumulators", 0, 87);
    if (d_.errorCount() != before) return;
    // Layouts: .row.col, except the m8n8k4 .f16 shape, which takes any two.
    unsigned rows = 0, cols = 0;
    Mod first = Mod::count_;
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        if (mods[k] == Mod::row || mods[k] == Mod::col) {
            if (first == Mod::count_) first = mods[k];
            (mods[k] == Mod::row ? rows : cols)++;
        }
    }
    if (rows + cols != 2) {
        error(inst.loc, "'mma' needs the layouts of A and B (.row.col)");
        return;
    }
    if (!(shape == Mod::m8n8k4 && kind == MmaKind::F16) && (first != Mod::row || cols != 1)) {
        error(inst.loc, "'mma' {} requires the layouts .row.col", modText(shape));
        return;
    }
    if (kind == MmaKind::B1 && !(f.hasMod(inst, Mod::popc) && (f.hasMod(inst, Mod::and_) || f.hasMod(inst, Mod::xor_)))) {
        error(inst.loc, "'mma' with .b1 multiplicands requires .xor.popc or .and.popc");
        return;
    }
    if (!operandCount(inst, "mma", 4)) return;
    auto accRegs = [&](Type t) { return t == Type::f16 ? form->c16 : form->c32; };
    const unsigned want[4] = {accRegs(dt), form->a, form->b, accRegs(ct)};
    const char* names[4] = {"D", "A", "B", "C"};
    const Operand* ops = f.operandsOf(inst);
    for (unsigned i = 0; i < 4; ++i) {
        if (ops[i].kind != OperandKind::Vector || vectorSize(ops[i]) != want[i]) {
            error(inst.loc, "operand {} ({}) of 'mma{}{}' must be a vector of {} registers", i + 1, names[i],
                  modText(shape), typeName(at), want[i]);
            return;
        }
    }
    bool f64 = kind == MmaKind::F64;
    auto fragment = [&](Type t) { return f64 ? (t == Type::f64 || is64BitInteger(t)) : is32BitInteger(t); };
    auto accumulator = [&](Type acc) {
        return [acc, f64](Type t) {
            if (f64) return t == Type::f64 || is64BitInteger(t);
            if (acc == Type::f32) return typeSize(t) == 4;
            return is32BitInteger(t);
        };
    };
    const char* fragWhat = f64 ? ".f64 registers" : "32-bit integer registers";
    if (!vectorRegs(f, inst, 0, "registers of the accumulator type", accumulator(dt))) return;
    if (!vectorRegs(f, inst, 1, fragWhat, fragment)) return;
    if (!vectorRegs(f, inst, 2, fragWhat, fragment)) return;
    vectorRegs(f, inst, 3, "registers of the accumulator type", accumulator(ct));
}

void Checker::sparseMma(const Function& f, const Instruction& inst) {
    // The opcode table matches `.sp::ordered_metadata` as `.sp` too: look at the modifier itself.
    bool ordered = f.hasMod(inst, Mod::sp_ordered_metadata);
    std::string_view name = ordered ? "mma.sp::ordered_metadata" : "mma.sp";
    if (!requireMods(f, inst, name, {Mod::sync, Mod::aligned})) return;
    if (!kindMma(f, inst, true)) return;
    Mod shape = Mod::count_;
    const Mod* mods = f.modsOf(inst);
    for (uint32_t k = 0; k < inst.modCount; ++k)
        if (isMmaShape(mods[k])) shape = mods[k];
    if (shape == Mod::count_) {
        error(inst.loc, "'{}' needs a shape (.m16n8k16, ...)", name);
        return;
    }
    if (inst.numTypes != 4) {
        error(inst.loc, "'{}' needs four types (.dtype.atype.btype.ctype), not {}", name, inst.numTypes);
        return;
    }
    Type dt = inst.types[0], at = inst.types[1], bt = inst.types[2], ct = inst.types[3];
    auto pair = [&](Type x, Type y) { return (at == x || at == y) && (bt == x || bt == y); };
    MmaKind kind;
    bool accOk;
    if (at == Type::f16 && bt == Type::f16) {
        kind = MmaKind::F16;
        accOk = dt == ct && (dt == Type::f16 || dt == Type::f32);
    } else if (at == Type::bf16 && bt == Type::bf16) {
        kind = MmaKind::BF16;
        accOk = dt == Type::f32 && ct == Type::f32;
    } else if (at == Type::tf32 && bt == Type::tf32) {
        kind = MmaKind::TF32;
        accOk = dt == Type::f32 && ct == Type::f32;
    } else if (pair(Type::s8, Type::u8)) {
        kind = MmaKind::I8;
        accOk = dt == Type::s32 && ct == Type::s32;
    } else if (pair(Type::s4, Type::u4)) {
        kind = MmaKind::I4;
        accOk = dt == Type::s32 && ct == Type::s32;
    } else if (pair(Type::e4m3, Type::e5m2)) {
        kind = MmaKind::F8;
        accOk = dt == ct && (dt == Type::f32 || dt == Type::f16);
    } else {
        error(inst.loc, "'{}' does not support the multiplicand types {}{}", name, typeName(at), typeName(bt));
        return;
    }
    if (!accOk) {
        error(inst.loc, "'{}' with {} multiplicands does not support the accumulator types {}/{}", name,
              typeName(at), typeName(dt), typeName(ct));
        return;
    }
    bool integer = kind == MmaKind::I8 || kind == MmaKind::I4;
    if (f.hasMod(inst, Mod::satfinite) && !integer) {
        error(inst.loc, "'{}' takes .satfinite with integer multiplicands only", name);
        return;
    }
    const SparseMmaForm* form = nullptr;
    for (const SparseMmaForm& m : kSparseMmaForms)
        if (m.shape == shape && m.kind == kind) form = &m;
    if (!form) {
        error(inst.loc, "'{}' shape {} is not defined for {} multiplicands", name, modText(shape), typeName(at));
        return;
    }
    if (kind == MmaKind::F8) {
        size_t before = d_.errorCount();
        requireTarget(inst, "sparse mma with FP8 multiplicands", 89, 84);
        if (d_.errorCount() != before) return;
        if (dt == Type::f16 && sm_ && (sm_ < 120 || !archSpecific_)) {
            error(inst.loc, "'{}' with FP8 multiplicands and .f16 accumulators needs .target sm_120a or higher", name);
            return;
        }
        if (dt == Type::f16 && !ordered) {
            error(inst.loc, "'mma.sp' with FP8 multiplicands and .f16 accumulators needs .sp::ordered_metadata");
            return;
        }
    }
    unsigned rows = 0, cols = 0;
    Mod first = Mod::count_;
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        if (mods[k] == Mod::row || mods[k] == Mod::col) {
            if (first == Mod::count_) first = mods[k];
            (mods[k] == Mod::row ? rows : cols)++;
        }
    }
    if (rows != 1 || cols != 1 || first != Mod::row) {
        error(inst.loc, "'{}' requires the layouts .row.col", name);
        return;
    }
    if (!operandCount(inst, name, 6)) return;
    auto accRegs = [&](Type t) { return t == Type::f16 ? form->c16 : form->c32; };
    const unsigned want[4] = {accRegs(dt), form->a, form->b, accRegs(ct)};
    const char* names[4] = {"D", "A", "B", "C"};
    const Operand* ops = f.operandsOf(inst);
    for (unsigned i = 0; i < 4; ++i) {
        if (ops[i].kind != OperandKind::Vector || vectorSize(ops[i]) != want[i]) {
            error(inst.loc, "operand {} ({}) of '{}{}{}' must be a vector of {} registers", i + 1, names[i], name,
                  modText(shape), typeName(at), want[i]);
            return;
        }
    }
    // Fragments are 32-bit registers: integer ones, or packed halves; accumulators any 32-bit register.
    auto fragment = [](Type t) { return is32BitInteger(t) || t == Type::f16x2 || t == Type::bf16x2; };
    auto accumulator = [](Type t) { return typeSize(t) == 4; };
    if (!vectorRegs(f, inst, 0, "32-bit registers", accumulator)) return;
    if (!vectorRegs(f, inst, 1, "32-bit integer registers", fragment)) return;
    if (!vectorRegs(f, inst, 2, "32-bit integer registers", fragment)) return;
    if (!vectorRegs(f, inst, 3, "32-bit registers", accumulator)) return;
    const Operand& meta = ops[4];
    bool metaOk = false;
    if (meta.kind == OperandKind::Reg) {
        metaOk = meta.index < f.registers.size() && !f.registers[meta.index].vec &&
                 typeSize(f.registers[meta.index].type) == 4;
    } else if (vectorSize(meta) == 1) {
        if (!vectorRegs(f, inst, 4, "a 32-bit register", accumulator)) return;
        metaOk = true;
    }
    if (!metaOk) {
        error(inst.loc, "operand 5 (metadata) of '{}' must be a 32-bit register", name);
        return;
    }
    const Operand& selector = ops[5];
    if (selector.kind != OperandKind::Imm || selector.value < 0 || selector.value > form->maxSelector) {
        if (form->maxSelector == 0)
            error(inst.loc, "operand 6 (sparsity selector) of '{}{}{}' must be 0", name, modText(shape),
                  typeName(at));
        else
            error(inst.loc, "operand 6 (sparsity selector) of '{}{}{}' must be a constant from 0 to {}", name,
                  modText(shape), typeName(at), form->maxSelector);
    }
}

void Checker::matrixLoadStore(const Function& f, const Instruction& inst) {
    bool load = inst.opcode == Opcode::Ldmatrix;
    std::string_view name = load ? "ldmatrix" : "stmatrix";
    if (!requireMods(f, inst, name, {Mod::sync, Mod::aligned})) return;
    unsigned count = f.hasMod(inst, Mod::x1) ? 1 : f.hasMod(inst, Mod::x2) ? 2 : f.hasMod(inst, Mod::x4) ? 4 : 0;
    bool m8n8 = f.hasMod(inst, Mod::m8n8);
    if (!m8n8 && !f.hasMod(inst, Mod::m16n16) && !f.hasMod(inst, Mod::m8n16) && !f.hasMod(inst, Mod::m16n8)) {
        error(inst.loc, "'{}' needs a shape (.m8n8, ...)", name);
        return;
    }
    if (count == 0) {
        error(inst.loc, "'{}' needs the number of matrices (.x1, .x2 or .x4)", name);
        return;
    }
    if (m8n8 && inst.type() != Type::b16) {
        error(inst.loc, "'{}.m8n8' needs the type .b16", name);
        return;
    }
    if (inst.space != Space::none && !isSharedSpace(inst.space)) {
        error(inst.loc, "'{}' accesses .shared memory only", name);
        return;
    }
    if (!operandCount(inst, name, 2)) return;
    unsigned addr = load ? 1 : 0, data = load ? 0 : 1;
    if (!addressOperand(f, inst, addr)) return;
    const Operand& v = f.operandsOf(inst)[data];
    if (vectorSize(v) != count) {
        error(inst.loc, "operand {} of '{}' .x{} must be a vector of {} registers", data + 1, name, count, count);
        return;
    }
    vectorRegs(f, inst, data, "32-bit registers", [](Type t) { return typeSize(t) == 4; });
}

void Checker::mbarrier(const Function& f, const Instruction& inst) {
    std::string name = fmt::format("mbarrier{}", modText(f.modsOf(inst)[0]));
    if (inst.type() != Type::b64) {
        error(inst.loc, "'{}' needs the type .b64", name);
        return;
    }
    bool cluster = inst.space == Space::shared_cluster;
    if (inst.space != Space::none && !isSharedSpace(inst.space) && !cluster) {
        error(inst.loc, "'{}' operates on .shared memory only", name);
        return;
    }
    if ((inst.sem != Sem::none || inst.scope != Scope::none))
        requireTarget(inst, "scopes and semantics on mbarrier operations", 0, 80);
    switch (inst.opcode) {
        case Opcode::MbarrierInit:
            if (!operandCount(inst, name, 2) || !addressOperand(f, inst, 0)) return;
            regOperand(f, inst, 1, "a 32-bit integer register or an immediate", is32BitInteger, true, false);
            return;
        case Opcode::MbarrierInval:
            if (operandCount(inst, name, 1)) addressOperand(f, inst, 0);
            return;
        case Opcode::MbarrierExpectTx: case Opcode::MbarrierCompleteTx:
            if (!operandCount(inst, name, 2) || !addressOperand(f, inst, 0)) return;
            regOperand(f, inst, 1, "a 32-bit integer register or an immediate", is32BitInteger, true, false);
            return;
        case Opcode::MbarrierArrive: case Opcode::MbarrierArriveDrop: {
            if (inst.numOperands != 2 && inst.numOperands != 3) {
                error(inst.loc, "'{}' takes 2 or 3 operands, not {}", name, inst.numOperands);
                return;
            }
            bool expectTx = inst.has(Flag::expect_tx);
            if (expectTx && inst.numOperands != 3) {
                error(inst.loc, "'{}.expect_tx' needs a transaction count", name);
                return;
            }
            if (inst.has(Flag::noComplete) && inst.numOperands != 3) {
                error(inst.loc, "'{}.noComplete' needs a count", name);
                return;
            }
            if (!addressOperand(f, inst, 1)) return;
            if (cluster) {
                if (f.operandsOf(inst)[0].kind != OperandKind::Sink) {
                    error(inst.loc, "the result of '{}' on .shared::cluster must be the sink '_'", name);
                    return;
                }
            } else if (!regOperand(f, inst, 0, "a 64-bit register or '_'", is64BitInteger, false, true)) {
                return;
            }
            if (inst.numOperands == 3) {
                if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate", is32BitInteger, true, false))
                    return;
                if (!expectTx && !inst.has(Flag::noComplete))
                    requireTarget(inst, "mbarrier.arrive with a count and without .noComplete", 90, 78);
            }
            return;
        }
        case Opcode::MbarrierTest: case Opcode::MbarrierTry: {
            unsigned maxOps = inst.opcode == Opcode::MbarrierTry ? 4 : 3;
            if (inst.numOperands < 3 || inst.numOperands > maxOps) {
                error(inst.loc, "'{}' takes 3{} operands, not {}", name, maxOps == 4 ? " or 4" : "", inst.numOperands);
                return;
            }
            if (!regOperand(f, inst, 0, "a .pred register", [](Type t) { return t == Type::pred; }, false, false) ||
                !addressOperand(f, inst, 1))
                return;
            if (inst.has(Flag::parity)) {
                if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate (the phase parity)",
                                is32BitInteger, true, false))
                    return;
            } else if (!regOperand(f, inst, 2, "a 64-bit register (the barrier state)", is64BitInteger, false,
                                   false)) {
                return;
            }
            if (inst.numOperands == 4)
                regOperand(f, inst, 3, "a 32-bit integer register or an immediate (the time limit)", is32BitInteger,
                           true, false);
            return;
        }
        case Opcode::MbarrierPendingCount:
            if (!operandCount(inst, name, 2)) return;
            if (regOperand(f, inst, 0, "a 32-bit integer register", is32BitInteger, false, false))
                regOperand(f, inst, 1, "a 64-bit register (the barrier state)", is64BitInteger, false, false);
            return;
        default: return;
    }
}

void Checker::asyncCopy(const Function& f, const Instruction& inst) {
    const Operand* ops = f.operandsOf(inst);
    auto immediateOperand = [&](unsigned index, std::string_view name) {
        if (!operandCount(inst, name, 1)) return false;
        if (ops[index].kind != OperandKind::Imm) {
            error(inst.loc, "operand of '{}' must be an integer constant", name);
            return false;
        }
        return true;
    };
    switch (inst.opcode) {
        case Opcode::CpAsyncWaitGroup: immediateOperand(0, "cp.async.wait_group"); return;
        case Opcode::CpAsyncBulkWaitGroup: immediateOperand(0, "cp.async.bulk.wait_group"); return;
        case Opcode::CpAsync: {
            if (!isSharedSpace(inst.space) || inst.space2 != Space::global) {
                error(inst.loc, "'cp.async' copies from .global to .shared (.shared.global)");
                return;
            }
            if (inst.numOperands < 3 || inst.numOperands > 5) {
                error(inst.loc, "'cp.async' takes 3 to 5 operands, not {}", inst.numOperands);
                return;
            }
            if (!addressOperand(f, inst, 0) || !addressOperand(f, inst, 1)) return;
            if (ops[2].kind != OperandKind::Imm) {
                error(inst.loc, "the copy size of 'cp.async' must be an integer constant");
                return;
            }
            bool cg = inst.cacheOp == CacheOp::cg;
            int64_t size = ops[2].value;
            if (cg ? size != 16 : (size != 4 && size != 8 && size != 16))
                error(inst.loc, "the copy size of 'cp.async{}' must be {}, not {}", cg ? ".cg" : ".ca",
                      cg ? "16" : "4, 8 or 16", size);
            return;
        }
        case Opcode::CpAsyncBulk: {
            Space dst = inst.space, src = inst.space2;
            bool mbar = f.hasMod(inst, Mod::mbarrier_complete_tx_bytes);
            bool group = f.hasMod(inst, Mod::bulk_group);
            unsigned expected = 0;
            if ((dst == Space::shared_cluster || isSharedSpace(dst)) && src == Space::global) {
                if (!mbar) {
                    error(inst.loc, "'cp.async.bulk' into shared memory needs .mbarrier::complete_tx::bytes");
                    return;
                }
                expected = 4 + f.hasMod(inst, Mod::multicast_cluster);
            } else if (dst == Space::shared_cluster && isSharedSpace(src)) {
                if (!mbar) {
                    error(inst.loc, "'cp.async.bulk' into shared memory needs .mbarrier::complete_tx::bytes");
                    return;
                }
                expected = 4;
            } else if (dst == Space::global && isSharedSpace(src)) {
                if (!group) {
                    error(inst.loc, "'cp.async.bulk' from shared to global memory needs .bulk_group");
                    return;
                }
                expected = 3;
            } else {
                error(inst.loc, "'cp.async.bulk' does not copy between these state spaces");
                return;
            }
            expected += inst.has(Flag::cache_hint);
            if (!operandCount(inst, "cp.async.bulk", expected)) return;
            if (!addressOperand(f, inst, 0) || !addressOperand(f, inst, 1)) return;
            if (!regOperand(f, inst, 2, "a 32-bit integer register or an immediate (the size)", is32BitInteger, true,
                            false))
                return;
            if (mbar) addressOperand(f, inst, 3);
            return;
        }
        case Opcode::CpAsyncBulkPrefetch:
            if (inst.space != Space::global) {
                error(inst.loc, "'cp.async.bulk.prefetch' reads .global memory only");
                return;
            }
            if (!operandCount(inst, "cp.async.bulk.prefetch", 2 + inst.has(Flag::cache_hint))) return;
            if (addressOperand(f, inst, 0))
                regOperand(f, inst, 1, "a 32-bit integer register or an immediate (the size)", is32BitInteger, true,
                           false);
            return;
        case Opcode::CpReduceAsyncBulk: case Opcode::CpReduceAsyncBulkTensor:
            if (inst.redOp == RedOp::none)
                error(inst.loc, "'cp.reduce.async.bulk' needs a reduction operation (.add, .min, ...)");
            if (inst.opcode == Opcode::CpReduceAsyncBulkTensor) tensorCoordinates(f, inst);
            return;
        case Opcode::CpAsyncBulkTensor: case Opcode::CpAsyncBulkPrefetchTensor: tensorCoordinates(f, inst); return;
        default: return;
    }
}

// The tensor operand `[tensorMap, {c0, ..}]` of the bulk tensor copies has one coordinate per dimension (.1d .. .5d)
// in tile mode.
void Checker::tensorCoordinates(const Function& f, const Instruction& inst) {
    unsigned dims = f.hasMod(inst, Mod::d1) ? 1 : f.hasMod(inst, Mod::d2) ? 2 : f.hasMod(inst, Mod::d3) ? 3
                  : f.hasMod(inst, Mod::d4) ? 4 : f.hasMod(inst, Mod::d5) ? 5 : 0;
    if (dims == 0) {
        error(inst.loc, "'{}' needs the tensor's dimensions (.1d .. .5d)", mnemonic(inst));
        return;
    }
    if (f.hasMod(inst, Mod::im2col) || f.hasMod(inst, Mod::im2col_w) || f.hasMod(inst, Mod::im2col_w_128) ||
        f.hasMod(inst, Mod::tile_gather4) || f.hasMod(inst, Mod::tile_scatter4))
        return;   // other coordinate layouts
    const Operand* ops = f.operandsOf(inst);
    for (unsigned i = 0; i < inst.numOperands; ++i) {
        if (ops[i].kind != OperandKind::Bracket || ops[i].value < 2) continue;
        const Operand& coords = f.elems[ops[i].index + 1];
        if (coords.kind == OperandKind::Vector && vectorSize(coords) != dims)
            error(inst.loc, "the tensor coordinates of '{}' .{}d must be a vector of {} elements, not {}",
                  mnemonic(inst), dims, dims, vectorSize(coords));
        return;
    }
}

// wmma fragment sizes in registers (0 = the shape does not take that type).
static unsigned wmmaFragment(Mod shape, Type t, bool isA, bool isB) {
    bool m16 = shape == Mod::m16n16k16, m8n32 = shape == Mod::m8n32k16, m32n8 = shape == Mod::m32n8k16;
    bool big = m16 || m8n32 || m32n8;
    if (isA || isB) {
        switch (t) {
            case Type::f16: return big ? 8 : 0;
            case Type::s8: case Type::u8: return m16 ? 2 : m8n32 ? (isA ? 1 : 4) : m32n8 ? (isA ? 4 : 1) : 0;
            case Type::bf16: return m16 ? 4 : m8n32 ? (isA ? 2 : 8) : m32n8 ? (isA ? 8 : 2) : 0;
            case Type::tf32: return shape == Mod::m16n16k8 ? 4 : 0;
            case Type::f64: return shape == Mod::m8n8k4 ? 1 : 0;
            case Type::s4: case Type::u4: return shape == Mod::m8n8k32 ? 1 : 0;
            case Type::b1: return shape == Mod::m8n8k128 ? 1 : 0;
            default: return 0;
        }
    }
    switch (t) {
        case Type::f16: return big ? 4 : 0;
        case Type::f32: return big || shape == Mod::m16n16k8 ? 8 : 0;
        case Type::s32: return big ? 8 : (shape == Mod::m8n8k32 || shape == Mod::m8n8k128) ? 2 : 0;
        case Type::f64: return shape == Mod::m8n8k4 ? 2 : 0;
        default: return 0;
    }
}

void Checker::wmma(const Function& f, const Instruction& inst) {
    std::string name = fmt::format("wmma{}", modText(f.modsOf(inst)[0]));
    if (!requireMods(f, inst, name, {Mod::sync})) return;
    bool aligned = f.hasMod(inst, Mod::aligned);
    if (aligned && ptx_ < 63) {
        error(inst.loc, "'.aligned' on '{}' requires PTX ISA .version 6.3 or later", name);
        return;
    }
    if (!aligned && ptx_ >= 63) {
        error(inst.loc, "'{}' requires the .aligned modifier", name);
        return;
    }
    Mod shape = Mod::count_;
    unsigned layouts = 0;
    const Mod* mods = f.modsOf(inst);
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        Mod m = mods[k];
        if (m == Mod::m16n16k16 || m == Mod::m32n8k16 || m == Mod::m8n32k16 || m == Mod::m16n16k8 ||
            m == Mod::m8n8k4 || m == Mod::m8n8k32 || m == Mod::m8n8k128)
            shape = m;
        if (m == Mod::row || m == Mod::col) ++layouts;
    }
    if (shape == Mod::count_) {
        error(inst.loc, "'{}' needs a shape (.m16n16k16, ...)", name);
        return;
    }
    const Operand* ops = f.operandsOf(inst);
    if (inst.opcode == Opcode::WmmaMma) {
        if (layouts != 2) {
            error(inst.loc, "'{}' needs the layouts of A and B (.row/.col twice)", name);
            return;
        }
        Type dt, at, bt, ct;
        if (inst.numTypes == 2) {
            dt = inst.types[0], ct = inst.types[1], at = bt = Type::f16;
        } else if (inst.numTypes == 4) {
            dt = inst.types[0], at = inst.types[1], bt = inst.types[2], ct = inst.types[3];
        } else {
            error(inst.loc, "'{}' needs .dtype.ctype or .dtype.atype.btype.ctype", name);
            return;
        }
        if (!operandCount(inst, name, 4)) return;
        const unsigned want[4] = {wmmaFragment(shape, dt, false, false), wmmaFragment(shape, at, true, false),
                                  wmmaFragment(shape, bt, false, true), wmmaFragment(shape, ct, false, false)};
        for (unsigned i = 0; i < 4; ++i) {
            if (want[i] == 0) {
                error(inst.loc, "'{}' {} does not take the types {}{}{}{}", name, modText(shape), typeName(dt),
                      typeName(at), typeName(bt), typeName(ct));
                return;
            }
            if (vectorSize(ops[i]) != want[i]) {
                error(inst.loc, "operand {} of '{}' {} must be a vector of {} registers", i + 1, name,
                      modText(shape), want[i]);
                return;
            }
        }
        return;
    }
    bool load = inst.opcode == Opcode::WmmaLoad;
    if (layouts != 1) {
        error(inst.loc, "'{}' needs a layout (.row or .col)", name);
        return;
    }
    bool isA = f.hasMod(inst, Mod::comp_a), isB = f.hasMod(inst, Mod::comp_b);
    bool isC = f.hasMod(inst, Mod::comp_c), isD = f.hasMod(inst, Mod::comp_d);
    if (load ? !(isA || isB || isC) : !isD) {
        error(inst.loc, "'{}' needs the fragment ({})", name, load ? ".a, .b or .c" : ".d");
        return;
    }
    if (inst.space != Space::none && inst.space != Space::global && !isSharedSpace(inst.space)) {
        error(inst.loc, "'{}' accesses .global or .shared memory only", name);
        return;
    }
    if (inst.numOperands != 2 && inst.numOperands != 3) {
        error(inst.loc, "'{}' takes 2 or 3 operands, not {}", name, inst.numOperands);
        return;
    }
    unsigned addr = load ? 1 : 0, data = load ? 0 : 1;
    if (!addressOperand(f, inst, addr)) return;
    unsigned want = wmmaFragment(shape, inst.type(), isA, isB);
    if (want == 0) {
        error(inst.loc, "'{}' {} does not take the type {}", name, modText(shape), typeName(inst.type()));
        return;
    }
    if (vectorSize(ops[data]) != want) {
        error(inst.loc, "operand {} of '{}' {}{} must be a vector of {} registers", data + 1, name, modText(shape),
              typeName(inst.type()), want);
        return;
    }
    if (inst.numOperands == 3)
        regOperand(f, inst, 2, "a 32-bit integer register or an immediate (the stride)", is32BitInteger, true, false);
}

// wgmma.mma_async: D has N/2 (32-bit accumulators) or N/4 (.f16) registers; the operand list depends on the type.
// The sparse form (.sp) doubles K and adds the metadata register and the sparsity selector after B.
void Checker::wgmma(const Function& f, const Instruction& inst) {
    std::string name = fmt::format("wgmma{}", modText(f.modsOf(inst)[0]));
    bool sparse = inst.opcode == Opcode::WgmmaMmaAsyncSp;
    if (sparse) name += ".sp";
    // The warpgroup tensor-core instructions exist on sm_90a only (sm_100a has tcgen05 instead).
    if (sm_ > 90) {
        error(inst.loc, "'{}' is only supported on .target sm_90a", name);
        return;
    }
    if (!requireMods(f, inst, name, {Mod::sync, Mod::aligned})) return;
    const Operand* ops = f.operandsOf(inst);
    if (inst.opcode == Opcode::WgmmaWaitGroup) {
        if (operandCount(inst, name, 1) && ops[0].kind != OperandKind::Imm)
            error(inst.loc, "operand of '{}' must be an integer constant", name);
        return;
    }
    if (inst.opcode != Opcode::WgmmaMmaAsync && !sparse) return;
    unsigned n = 0, k = 0;
    const Mod* mods = f.modsOf(inst);
    for (uint32_t i = 0; i < inst.modCount; ++i) {
        std::string_view t = modText(mods[i]);
        if (t.substr(0, 5) != ".m64n") continue;
        size_t kpos = t.find('k', 5);
        if (kpos == std::string_view::npos) continue;
        for (char c : t.substr(5, kpos - 5)) n = n * 10 + unsigned(c - '0');
        for (char c : t.substr(kpos + 1)) k = k * 10 + unsigned(c - '0');
    }
    if (n == 0) {
        error(inst.loc, "'{}' needs a shape (.m64nNkK)", name);
        return;
    }
    if (inst.numTypes != 3) {
        error(inst.loc, "'{}' needs three types (.dtype.atype.btype)", name);
        return;
    }
    Type dt = inst.types[0], at = inst.types[1];
    unsigned wantK, operands, maxSelector = 0;
    bool transposes = false, floating = true;
    switch (at) {
        case Type::f16: case Type::bf16: wantK = 16, transposes = true, maxSelector = 1; break;
        case Type::tf32: wantK = 8, maxSelector = 1; break;
        case Type::e4m3: case Type::e5m2: wantK = 32; break;
        case Type::s8: case Type::u8: wantK = 32, floating = false; break;
        case Type::b1:
            if (!sparse) {
                wantK = 256, floating = false;
                break;
            }
            [[fallthrough]];
        default:
            error(inst.loc, "'{}' does not support the multiplicand type {}", name, typeName(at));
            return;
    }
    if (sparse) {
        wantK *= 2;
        size_t before = d_.errorCount();
        requireTarget(inst, floating ? "sparse wgmma with floating-point types" : "sparse wgmma with integer types", 0,
                      floating ? 82 : 84);
        if (d_.errorCount() != before) return;
    }
    if (k != wantK) {
        error(inst.loc, "'{}' with {} multiplicands needs K = {} (.m64n{}k{})", name, typeName(at), wantK, n, wantK);
        return;
    }
    bool aInRegs = inst.numOperands > 1 && ops[1].kind == OperandKind::Vector;
    // Operands after B: [metadata, selector,] scale-d, then the constants (scale-a, scale-b, transposes).
    unsigned extra = sparse ? 2 : 0;
    operands = extra + (!floating ? 4 : transposes ? (aInRegs ? 7 : 8) : 6);
    if (!operandCount(inst, name, operands)) return;
    unsigned dRegs = dt == Type::f16 ? n / 4 : n / 2;
    if (vectorSize(ops[0]) != dRegs) {
        error(inst.loc, "operand 1 (D) of '{}' .m64n{} {} must be a vector of {} registers", name, n, typeName(dt),
              dRegs);
        return;
    }
    if (aInRegs) {
        if (vectorSize(ops[1]) != 4) {
            error(inst.loc, "operand 2 (A in registers) of '{}' must be a vector of 4 registers", name);
            return;
        }
    } else if (!regOperand(f, inst, 1, "a 64-bit matrix descriptor or a vector of registers", is64BitInteger, false,
                           false)) {
        return;
    }
    if (!regOperand(f, inst, 2, "a 64-bit matrix descriptor", is64BitInteger, false, false)) return;
    if (sparse) {
        const Operand& meta = ops[3];
        bool metaOk = meta.kind == OperandKind::Reg
                          ? regOperand(f, inst, 3, "a 32-bit register (metadata)",
                                       [](Type t) { return typeSize(t) == 4; }, false, false)
                          : vectorSize(meta) == 1;
        if (!metaOk) {
            if (meta.kind != OperandKind::Reg)
                error(inst.loc, "operand 4 (metadata) of '{}' must be a 32-bit register", name);
            return;
        }
        const Operand& selector = ops[4];
        if (selector.kind != OperandKind::Imm || selector.value < 0 || selector.value > maxSelector) {
            error(inst.loc, "operand 5 (sparsity selector) of '{}' with {} multiplicands must be {}", name,
                  typeName(at), maxSelector ? "0 or 1" : "0");
            return;
        }
    }
    if (!regOperand(f, inst, extra + 3, "a .pred register or an immediate (scale-d)",
                    [](Type t) { return t == Type::pred; }, true, false))
        return;
    for (unsigned i = extra + 4; i < operands; ++i) {
        if (ops[i].kind != OperandKind::Imm) {
            error(inst.loc, "operand {} of '{}' must be an integer constant", i + 1, name);
            return;
        }
        bool scale = i < extra + 6;
        int64_t v = ops[i].value;
        if (scale ? (v != 1 && v != -1) : (v != 0 && v != 1)) {
            error(inst.loc, "operand {} of '{}' must be {}, not {}", i + 1, name, scale ? "-1 or 1" : "0 or 1", v);
            return;
        }
    }
}

// Texture and surface instructions: the coordinate vector matches the geometry, results are whole vectors, surface
// accesses name their out-of-bounds mode.
void Checker::textureSurface(const Function& f, const Instruction& inst) {
    std::string_view name = mnemonic(inst);
    const Operand* ops = f.operandsOf(inst);
    if (inst.opcode == Opcode::Txq || inst.opcode == Opcode::Suq) {
        if (inst.type() != Type::b32) error(inst.loc, "'{}' needs the type .b32", name);
        return;
    }
    struct Geometry {
        Mod mod;
        unsigned coords;
        bool surface;   // also a surface geometry
    };
    static constexpr Geometry kGeometries[] = {
        {Mod::d1, 1, true},    {Mod::d2, 2, true},    {Mod::d3, 4, true},     {Mod::a1d, 2, true},
        {Mod::a2d, 4, true},   {Mod::cube, 4, false}, {Mod::acube, 4, false}, {Mod::d2ms, 4, false},
        {Mod::a2dms, 4, false},
    };
    const Geometry* geometry = nullptr;
    for (const Geometry& g : kGeometries)
        if (f.hasMod(inst, g.mod)) geometry = &g;
    if (!geometry) {
        error(inst.loc, "'{}' needs a geometry (.1d, .2d, .3d, ...)", name);
        return;
    }
    bool surface = inst.opcode == Opcode::Suld || inst.opcode == Opcode::Sust || inst.opcode == Opcode::Sured;
    if ((surface && !geometry->surface) ||
        (inst.opcode == Opcode::Tld4 && geometry->mod != Mod::d2 && geometry->mod != Mod::a2d &&
         geometry->mod != Mod::cube && geometry->mod != Mod::acube)) {
        error(inst.loc, "'{}' does not support the geometry {}", name, modText(geometry->mod));
        return;
    }
    // The bracketed operand [handle, (sampler,) coordinates]: the coordinates are its last element.
    const Operand* bracket = nullptr;
    unsigned bracketIndex = 0;
    for (unsigned i = 0; i < inst.numOperands; ++i)
        if (ops[i].kind == OperandKind::Bracket) {
            bracket = &ops[i];
            bracketIndex = i;
            break;
        }
    if (!bracket || bracket->value < 2) {
        error(inst.loc, "'{}' needs a [handle, coordinates] operand", name);
        return;
    }
    const Operand& coords = f.elems[bracket->index + bracket->value - 1];
    unsigned count = coords.kind == OperandKind::Vector ? vectorSize(coords) : 1;
    if (count != geometry->coords) {
        error(inst.loc, "the coordinates of '{}{}' must be {} {}, not {}", name, modText(geometry->mod),
              geometry->coords == 1 ? "one value" : "a vector of", geometry->coords == 1 ? "" : std::to_string(geometry->coords), count);
        return;
    }
    if (surface) {
        if (inst.opcode != Opcode::Sured && !f.hasMod(inst, Mod::trap) && !inst.has(Flag::clamp) &&
            !f.hasMod(inst, Mod::zero)) {
            error(inst.loc, "'{}' needs an out-of-bounds mode (.trap, .clamp or .zero)", name);
            return;
        }
        for (unsigned i = 0; i < count; ++i) {
            const Operand& c = coords.kind == OperandKind::Vector ? f.elems[coords.index + i] : coords;
            if (c.kind == OperandKind::Reg && c.index < f.registers.size() &&
                !is32BitInteger(f.registers[c.index].type)) {
                error(inst.loc, "surface coordinates of '{}' must be 32-bit integers", name);
                return;
            }
        }
        if (inst.opcode == Opcode::Sured) return;
        unsigned elements = inst.vec ? inst.vec : 1;
        if (elements * typeSize(inst.type()) > 16) {
            error(inst.loc, "'{}' accesses at most 128 bits ({}{} is {} bits)", name, inst.vec ? fmt::format(".v{}", inst.vec) : "",
                  typeName(inst.type()), elements * typeSize(inst.type()) * 8);
            return;
        }
        unsigned data = inst.opcode == Opcode::Suld ? 0 : 1;
        if (data == bracketIndex || data >= inst.numOperands) return;
        unsigned got = ops[data].kind == OperandKind::Vector ? vectorSize(ops[data]) : 1;
        if (got != elements)
            error(inst.loc, "operand {} of '{}' must be {} {}", data + 1, name, elements == 1 ? "a register" : "a vector of",
                  elements == 1 ? "" : fmt::format("{} registers", elements));
        return;
    }
    // tex, tld4: .dtype.ctype; 32-bit results come as .v4.
    if (inst.numTypes < 2) {
        error(inst.loc, "'{}' needs a result and a coordinate type", name);
        return;
    }
    Type dt = inst.types[0], ct = inst.types[1];
    if (ct != Type::f32 && ct != Type::s32) {
        error(inst.loc, "the coordinate type of '{}' must be .f32 or .s32, not {}", name, typeName(ct));
        return;
    }
    if (dt == Type::f32 || dt == Type::s32 || dt == Type::u32) {
        if (inst.vec != 4) {
            error(inst.loc, "'{}{}' requires .v4", name, typeName(dt));
            return;
        }
    }
    if (inst.vec && ops[0].kind == OperandKind::Vector && vectorSize(ops[0]) != inst.vec) {
        error(inst.loc, "the result of '{}' .v{} must be a vector of {} registers", name, inst.vec, inst.vec);
        return;
    }
    unsigned minOperands = f.hasMod(inst, Mod::grad) ? 4 : f.hasMod(inst, Mod::level) ? 3 : 2;
    if (inst.opcode == Opcode::Tex && (inst.numOperands < minOperands || inst.numOperands > minOperands + 2))
        error(inst.loc, "'{}' takes {} to {} operands here, not {}", name, minOperands, minOperands + 2, inst.numOperands);
}

// atom/red: the types each operation takes, operand counts, state spaces, and the newer type forms.
void Checker::atomic(const Function& f, const Instruction& inst) {
    bool isAtom = inst.opcode == Opcode::Atom;
    std::string_view name = mnemonic(inst);
    if (inst.space != Space::none && inst.space != Space::global && !isSharedSpace(inst.space) &&
        inst.space != Space::shared_cluster) {
        error(inst.loc, "'{}' operates on .global or .shared memory only", name);
        return;
    }
    if (!isAtom && (inst.redOp == RedOp::cas || inst.redOp == RedOp::exch)) {
        error(inst.loc, "'red' has no {} operation (use atom)", inst.redOp == RedOp::cas ? ".cas" : ".exch");
        return;
    }
    if (!isAtom && (inst.sem == Sem::acquire || inst.sem == Sem::acq_rel)) {
        error(inst.loc, "'red' does not take {}", inst.sem == Sem::acquire ? ".acquire" : ".acq_rel");
        return;
    }
    Type t = inst.type();
    bool ok;
    switch (inst.redOp) {
        case RedOp::and_: case RedOp::or_: case RedOp::xor_: ok = t == Type::b32 || t == Type::b64; break;
        case RedOp::cas: ok = t == Type::b16 || t == Type::b32 || t == Type::b64 || t == Type::b128; break;
        case RedOp::exch: ok = t == Type::b32 || t == Type::b64 || t == Type::b128; break;
        case RedOp::inc: case RedOp::dec: ok = t == Type::u32; break;
        case RedOp::add:
            ok = t == Type::u32 || t == Type::s32 || t == Type::u64 || t == Type::f32 || t == Type::f64 ||
                 t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;
            break;
        case RedOp::min: case RedOp::max:
            ok = t == Type::u32 || t == Type::s32 || t == Type::u64 || t == Type::s64 || t == Type::f16 ||
                 t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2 || (inst.vec && t == Type::f32);
            break;
        default: ok = true;
    }
    if (!ok) {
        error(inst.loc, "'{}' {} does not take the type {}", name, redOpText(inst.redOp), typeName(t));
        return;
    }
    size_t before = d_.errorCount();
    if (inst.vec) requireTarget(inst, fmt::format("{} with vector types", name), 90, 81);
    else if (t == Type::b128) requireTarget(inst, fmt::format("{}.b128", name), 90, 83);
    else if (t == Type::bf16 || t == Type::bf16x2) requireTarget(inst, fmt::format("{}{}", name, typeName(t)), 90, 78);
    else if (t == Type::f16 || t == Type::f16x2) requireTarget(inst, fmt::format("{}{}", name, typeName(t)), 70, 63);
    if (d_.errorCount() != before) return;
    unsigned expected = (isAtom ? 3 : 2) + (inst.redOp == RedOp::cas) + inst.has(Flag::cache_hint);
    // ptxas also takes (and ignores) a fourth operand on atom.exch.
    bool exchExtra = inst.redOp == RedOp::exch && inst.numOperands == expected + 1;
    if (!exchExtra && !operandCount(inst, name, expected)) return;
    if (isAtom && !inst.vec) typed(f, inst, 0, t, false, true);
}

// tcgen05: required .cta_group / .sync.aligned / .kind, tensor-memory addresses and descriptors, and the number of
// registers tcgen05.ld/st move for a shape and repeat count.
void Checker::tcgen05(const Function& f, const Instruction& inst) {
    std::string name = fmt::format("tcgen05{}", modText(f.modsOf(inst)[0]));
    Opcode op = inst.opcode;
    bool needsGroup = op != Opcode::Tcgen05Ld && op != Opcode::Tcgen05St && op != Opcode::Tcgen05Wait;
    bool needsSync = op == Opcode::Tcgen05Alloc || op == Opcode::Tcgen05Dealloc ||
                     op == Opcode::Tcgen05RelinquishAllocPermit || op == Opcode::Tcgen05Ld || op == Opcode::Tcgen05St ||
                     op == Opcode::Tcgen05Wait;
    if (needsGroup && !f.hasMod(inst, Mod::cta_group_1) && !f.hasMod(inst, Mod::cta_group_2)) {
        error(inst.loc, "'{}' requires .cta_group::1 or .cta_group::2", name);
        return;
    }
    if (needsSync && !requireMods(f, inst, name, {Mod::sync, Mod::aligned})) return;
    bool mma = op == Opcode::Tcgen05Mma || op == Opcode::Tcgen05MmaSp || op == Opcode::Tcgen05MmaWs ||
               op == Opcode::Tcgen05MmaWsSp;
    if (mma && !f.hasMod(inst, Mod::kind_f16) && !f.hasMod(inst, Mod::kind_tf32) &&
        !f.hasMod(inst, Mod::kind_f8f6f4) && !f.hasMod(inst, Mod::kind_i8) && !f.hasMod(inst, Mod::kind_mxf8f6f4) &&
        !f.hasMod(inst, Mod::kind_mxf4) && !f.hasMod(inst, Mod::kind_mxf4nvf4)) {
        error(inst.loc, "'{}' requires a .kind (.kind::f16, .kind::tf32, ...)", name);
        return;
    }
    const Operand* ops = f.operandsOf(inst);
    auto tmemAddress = [&](unsigned index) {
        const Operand& a = ops[index];
        if (a.kind == OperandKind::Address && a.symKind == SymKind::None && !(a.flags & kAddrAbsolute) &&
            a.index < f.registers.size() && !is32BitInteger(f.registers[a.index].type)) {
            error(inst.loc, "the tensor-memory address of '{}' must be a 32-bit register", name);
            return false;
        }
        return addressOperand(f, inst, index);
    };
    const char* int32 = "a 32-bit integer register or an immediate";
    switch (op) {
        case Opcode::Tcgen05Alloc:
            if (inst.type() != Type::b32) {
                error(inst.loc, "'{}' needs the type .b32", name);
                return;
            }
            if (inst.space != Space::none && !isSharedSpace(inst.space)) {
                error(inst.loc, "'{}' writes the address to .shared::cta memory", name);
                return;
            }
            if (operandCount(inst, name, 2) && addressOperand(f, inst, 0)) regOperand(f, inst, 1, int32, is32BitInteger, true, false);
            return;
        case Opcode::Tcgen05Dealloc:
            if (inst.type() != Type::b32) {
                error(inst.loc, "'{}' needs the type .b32", name);
                return;
            }
            if (operandCount(inst, name, 2) &&
                regOperand(f, inst, 0, "a 32-bit register (the tensor-memory address)", is32BitInteger, false, false))
                regOperand(f, inst, 1, int32, is32BitInteger, true, false);
            return;
        case Opcode::Tcgen05Ld: case Opcode::Tcgen05St: {
            bool load = op == Opcode::Tcgen05Ld;
            if (inst.type() != Type::b32) {
                error(inst.loc, "'{}' needs the type .b32", name);
                return;
            }
            struct Shape {
                Mod mod;
                unsigned regs;
            };
            static constexpr Shape kShapes[] = {{Mod::shape_32x32b, 1}, {Mod::shape_16x64b, 1},
                                                {Mod::shape_16x128b, 2}, {Mod::shape_16x256b, 4},
                                                {Mod::shape_16x32bx2, 1}};
            const Shape* shape = nullptr;
            for (const Shape& sh : kShapes)
                if (f.hasMod(inst, sh.mod)) shape = &sh;
            static constexpr Mod kNums[] = {Mod::x1, Mod::x2, Mod::x4, Mod::x8, Mod::x16, Mod::x32, Mod::x64, Mod::x128};
            unsigned num = 0;
            for (unsigned i = 0; i < 8; ++i)
                if (f.hasMod(inst, kNums[i])) num = 1u << i;
            if (!shape || !num) {
                error(inst.loc, "'{}' needs a shape (.32x32b, .16x64b, ...) and a count (.x1 .. .x128)", name);
                return;
            }
            bool split = shape->mod == Mod::shape_16x32bx2;
            if (!operandCount(inst, name, split ? 3 : 2)) return;
            unsigned addr = load ? 1 : 0, data = load ? 0 : 1;
            if (!tmemAddress(addr)) return;
            if (f.hasMod(inst, Mod::pack_16b) || f.hasMod(inst, Mod::unpack_16b)) return;
            unsigned want = shape->regs * num;
            if (vectorSize(ops[data]) != want)
                error(inst.loc, "operand {} of '{}' {}.x{} must be a vector of {} registers", data + 1, name,
                      modText(shape->mod), num, want);
            return;
        }
        case Opcode::Tcgen05Commit: {
            // Arrives on an mbarrier once the earlier asynchronous tcgen05 operations complete; with
            // .multicast::cluster, on the mbarrier at the same offset in each CTA of the 16-bit ctaMask.
            if (!requireMods(f, inst, name, {Mod::mbarrier_arrive_one})) return;
            if (inst.numTypes != 1 || inst.type() != Type::b64) {
                error(inst.loc, "'{}' needs the type .b64", name);
                return;
            }
            if (inst.space != Space::none && inst.space != Space::shared_cluster) {
                error(inst.loc, "'{}' takes an mbarrier address in .shared::cluster memory", name);
                return;
            }
            bool multicast = f.hasMod(inst, Mod::multicast_cluster);
            if (!operandCount(inst, name, multicast ? 2 : 1) || !addressOperand(f, inst, 0)) return;
            if (multicast)
                regOperand(f, inst, 1, "a 16-bit register (the CTA mask)", [](Type t) { return typeSize(t) == 2; },
                           false, false);
            return;
        }
        case Opcode::Tcgen05Cp:
            if (operandCount(inst, name, 2) && tmemAddress(0))
                regOperand(f, inst, 1, "a 64-bit shared-memory descriptor", is64BitInteger, false, false);
            return;
        case Opcode::Tcgen05Mma: case Opcode::Tcgen05MmaSp: case Opcode::Tcgen05MmaWs: case Opcode::Tcgen05MmaWsSp:
            tcgen05Mma(f, inst);
            return;
        default: return;
    }
}

// tcgen05.mma and its sparse (.sp), weight-stationary (.ws) and .ws.sp forms. Operands: [d-tmem], A (a 64-bit
// descriptor or [a-tmem]), the B descriptor, for .sp the sparsity metadata [sp-meta-tmem], the 32-bit instruction
// descriptor, then a tail that depends on the form:
//   the plain kinds:  {disable-output-lane,} enable-input-d {, scale-input-d}
//   .block_scale:     [scale-A-tmem], [scale-B-tmem], enable-input-d
//   .ws:              enable-input-d {, zero-column-mask-desc}
// Descriptors may be immediates. Checked against ptxas, including how it reads the plain tail (below).
void Checker::tcgen05Mma(const Function& f, const Instruction& inst) {
    Opcode op = inst.opcode;
    bool ws = op == Opcode::Tcgen05MmaWs || op == Opcode::Tcgen05MmaWsSp;
    bool sparse = op == Opcode::Tcgen05MmaSp || op == Opcode::Tcgen05MmaWsSp;
    std::string_view name = ws ? (sparse ? "tcgen05.mma.ws.sp" : "tcgen05.mma.ws")
                               : (sparse ? "tcgen05.mma.sp" : "tcgen05.mma");
    // The modifiers: one .kind, at most one collector usage (::a for tcgen05.mma, ::b0 .. ::b3 for .ws), the
    // block-scale size, .ashift.
    Mod kind = Mod::count_, collector = Mod::count_, scaleSize = Mod::count_;
    bool blockScale = false, ashift = false, group2 = false;
    const Mod* mods = f.modsOf(inst);
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        Mod m = mods[k];
        switch (m) {
            case Mod::kind_f16: case Mod::kind_tf32: case Mod::kind_f8f6f4: case Mod::kind_i8:
            case Mod::kind_mxf8f6f4: case Mod::kind_mxf4: case Mod::kind_mxf4nvf4:
                if (kind != Mod::count_) {
                    error(inst.loc, "'{}' takes one .kind", name);
                    return;
                }
                kind = m;
                break;
            case Mod::collector_a_fill: case Mod::collector_a_use: case Mod::collector_a_lastuse:
            case Mod::collector_a_discard: case Mod::collector_b0_fill: case Mod::collector_b0_use:
            case Mod::collector_b0_lastuse: case Mod::collector_b0_discard: case Mod::collector_b1_fill:
            case Mod::collector_b1_use: case Mod::collector_b1_lastuse: case Mod::collector_b1_discard:
            case Mod::collector_b2_fill: case Mod::collector_b2_use: case Mod::collector_b2_lastuse:
            case Mod::collector_b2_discard: case Mod::collector_b3_fill: case Mod::collector_b3_use:
            case Mod::collector_b3_lastuse: case Mod::collector_b3_discard: {
                if (collector != Mod::count_) {
                    error(inst.loc, "'{}' takes one .collector usage", name);
                    return;
                }
                collector = m;
                // .ws keeps B in one of four collector buffers; tcgen05.mma reuses A.
                bool bufferA = m == Mod::collector_a_fill || m == Mod::collector_a_use ||
                               m == Mod::collector_a_lastuse || m == Mod::collector_a_discard;
                if (bufferA == ws) {
                    error(inst.loc, "'{}' does not take {}", name, modText(m));
                    return;
                }
                break;
            }
            case Mod::scale_vec_1X: case Mod::scale_vec_2X: case Mod::scale_vec_4X: case Mod::block16:
            case Mod::block32:
                scaleSize = m;
                break;
            case Mod::block_scale: blockScale = true; break;
            case Mod::ashift: ashift = true; break;
            case Mod::cta_group_2: group2 = true; break;
            default: break;
        }
    }
    bool mx = kind == Mod::kind_mxf8f6f4 || kind == Mod::kind_mxf4 || kind == Mod::kind_mxf4nvf4;
    // Outside the sm_100 family features: .kind::i8 (sm_100a and sm_110a only) and sparse .kind::mxf4/mxf4nvf4.
    if (sm_ && kind == Mod::kind_i8 && (!archOnly_ || (sm_ != 100 && sm_ != 110))) {
        error(inst.loc, "'{}' with .kind::i8 is not supported on .target sm_{}{}", name, sm_, archOnly_ ? "a" : "");
        return;
    }
    if (sm_ && sparse && (kind == Mod::kind_mxf4 || kind == Mod::kind_mxf4nvf4) && !archOnly_) {
        error(inst.loc, "'{}' with {} needs an architecture-specific target (sm_100a, ...)", name, modText(kind));
        return;
    }
    if (ws) {
        // One CTA, no block scaling, no A shift.
        Mod bad = group2 ? Mod::cta_group_2 : mx ? kind : blockScale ? Mod::block_scale
                : scaleSize != Mod::count_ ? scaleSize : ashift ? Mod::ashift : Mod::count_;
        if (bad != Mod::count_) {
            error(inst.loc, "'{}' does not take {}", name, modText(bad));
            return;
        }
    } else if (mx || blockScale || scaleSize != Mod::count_) {
        if (!mx) {
            error(inst.loc, "'{}' takes .block_scale{} only with .kind::mxf8f6f4, .kind::mxf4 or .kind::mxf4nvf4",
                  name, blockScale ? "" : " and a scale size");
            return;
        }
        if (!blockScale) {
            error(inst.loc, "'{}' with {} requires .block_scale", name, modText(kind));
            return;
        }
        if (kind == Mod::kind_mxf4nvf4) {
            size_t before = d_.errorCount();
            requireTarget(inst, fmt::format("{} {}", name, modText(kind)), 0, 87);
            if (d_.errorCount() != before) return;
        }
        // The scale vector size; without one the kinds that allow it mean .block32 (PTX ISA 8.8).
        bool sizeOk = kind == Mod::kind_mxf8f6f4 ? scaleSize == Mod::scale_vec_1X || scaleSize == Mod::block32 ||
                                                       scaleSize == Mod::count_
                    : kind == Mod::kind_mxf4     ? scaleSize == Mod::scale_vec_2X || scaleSize == Mod::block32 ||
                                                       scaleSize == Mod::count_
                                                 : scaleSize != Mod::scale_vec_1X && scaleSize != Mod::count_;
        if (!sizeOk) {
            if (scaleSize == Mod::count_)
                error(inst.loc, "'{}' with {} needs a scale vector size", name, modText(kind));
            else
                error(inst.loc, "'{}' with {} does not take {}", name, modText(kind), modText(scaleSize));
            return;
        }
        bool scaleVec = scaleSize == Mod::scale_vec_1X || scaleSize == Mod::scale_vec_2X ||
                        scaleSize == Mod::scale_vec_4X;
        if (scaleVec && sm_ && !archOnly_) {
            error(inst.loc, "'{}' with {} needs an architecture-specific target (sm_100a, ...)", name,
                  modText(scaleSize));
            return;
        }
        if (!scaleVec) {
            size_t before = d_.errorCount();
            requireTarget(inst, fmt::format("{} .block16/.block32", name), 0, 88);
            if (d_.errorCount() != before) return;
        }
    }
    // .ashift shifts A down the tensor-memory lanes: A in tensor memory, no block scaling, and A's collector
    // buffer may only be released (::lastuse, ::discard).
    if (ashift && (blockScale || collector == Mod::collector_a_fill || collector == Mod::collector_a_use)) {
        error(inst.loc, "'{}' does not take .ashift with {}", name,
              blockScale ? ".block_scale" : modText(collector));
        return;
    }
    const Operand* ops = f.operandsOf(inst);
    unsigned idesc = sparse ? 4 : 3;
    unsigned minTail = blockScale ? 3 : 1, maxTail = blockScale ? 3 : ws ? 2 : 3;
    if (inst.numOperands < idesc + 1 + minTail || inst.numOperands > idesc + 1 + maxTail) {
        error(inst.loc, "'{}' takes {} to {} operands here, not {}", name, idesc + 1 + minTail, idesc + 1 + maxTail,
              inst.numOperands);
        return;
    }
    // A tensor-memory address: a 32-bit register, with an optional offset.
    auto tmem = [&](unsigned index, std::string_view what) {
        const Operand& a = ops[index];
        if (a.kind == OperandKind::Address && a.symKind == SymKind::None && !(a.flags & kAddrAbsolute) &&
            a.index < f.registers.size() && is32BitInteger(f.registers[a.index].type))
            return true;
        error(inst.loc, "operand {} of '{}' must be {} (a 32-bit register in brackets)", index + 1, name, what);
        return false;
    };
    auto descriptor = [&](unsigned index, std::string_view what) {
        return regOperand(f, inst, index, what, is64BitInteger, true, false);
    };
    auto enableInput = [&](unsigned index) {
        return regOperand(f, inst, index, "a predicate or an immediate (enable-input-d)",
                          [](Type t) { return t == Type::pred; }, true, false);
    };
    if (!tmem(0, "the tensor-memory address of D")) return;
    if (ops[1].kind == OperandKind::Address) {
        if (!tmem(1, "the tensor-memory address of A or a 64-bit descriptor")) return;
    } else {
        if (ashift) {
            error(inst.loc, "'{}' takes .ashift only with A in tensor memory", name);
            return;
        }
        if (!descriptor(1, "a 64-bit matrix descriptor or the tensor-memory address of A")) return;
    }
    if (!descriptor(2, "a 64-bit matrix descriptor")) return;
    if (sparse && !tmem(3, "the tensor-memory address of the sparsity metadata")) return;
    if (!regOperand(f, inst, idesc, "a 32-bit instruction descriptor", is32BitInteger, true, false)) return;
    unsigned tail = idesc + 1, tailCount = inst.numOperands - tail;
    if (ws) {
        if (enableInput(tail) && tailCount == 2) descriptor(tail + 1, "a 64-bit zero-column mask descriptor");
        return;
    }
    if (blockScale) {
        if (tmem(tail, "the tensor-memory address of A's scale factors") &&
            tmem(tail + 1, "the tensor-memory address of B's scale factors"))
            enableInput(tail + 2);
        return;
    }
    // {disable-output-lane,} enable-input-d {, scale-input-d}. With two operands, a vector first means the lanes;
    // ptxas reads a predicate first on .kind::i8 (which has no scale-input-d) as the lanes, and two immediates as
    // enable-input-d and an unchecked immediate. With three, ptxas also takes a predicate for the lanes, and after
    // a dense .kind::i8 any immediate (sparse .kind::i8 takes no third operand).
    bool i8 = kind == Mod::kind_i8;
    auto isPredicate = [&](const Operand& o) {
        return o.kind == OperandKind::Reg && o.index < f.registers.size() && f.registers[o.index].type == Type::pred;
    };
    const Operand& first = ops[tail];
    bool lanes = tailCount == 3 ||
                 (tailCount == 2 && (first.kind == OperandKind::Vector || (i8 && isPredicate(first))));
    bool scale = tailCount == 3 || (tailCount == 2 && !lanes);
    if (i8 && sparse && tailCount == 3) {
        error(inst.loc, "'{}' with .kind::i8 takes at most {} operands", name, inst.numOperands - 1);
        return;
    }
    if (lanes && !isPredicate(first) && first.kind != OperandKind::Imm) {
        unsigned want = group2 ? 8 : 4;
        if (vectorSize(first) != want) {
            error(inst.loc, "operand {} of '{}' (disable-output-lane) must be a vector of {} 32-bit registers",
                  tail + 1, name, want);
            return;
        }
        for (unsigned i = 0; i < want; ++i)
            if (f.elems[first.index + i].kind == OperandKind::Sink) {
                error(inst.loc, "operand {} of '{}' (disable-output-lane) cannot hold '_'", tail + 1, name);
                return;
            }
        if (!vectorRegs(f, inst, tail, "a 32-bit register", [](Type t) { return typeSize(t) == 4; })) return;
    } else if (lanes && first.kind == OperandKind::Imm && tailCount == 3) {
        error(inst.loc, "operand {} of '{}' (disable-output-lane) must be a vector of registers", tail + 1, name);
        return;
    }
    unsigned enable = tail + (lanes ? 1 : 0);
    if (!enableInput(enable) || !scale) return;
    const Operand& s = ops[enable + 1];
    if (s.kind != OperandKind::Imm) {
        error(inst.loc, "operand {} of '{}' (scale-input-d) must be an immediate", enable + 2, name);
        return;
    }
    if (i8) return;
    if (s.value < 0 || s.value > 15) {
        error(inst.loc, "operand {} of '{}' (scale-input-d) must be in 0..15, not {}", enable + 2, name, s.value);
        return;
    }
    if (kind == Mod::kind_f8f6f4) error(inst.loc, "'{}' with .kind::f8f6f4 does not take scale-input-d", name);
    else if (sm_ == 110) error(inst.loc, "'{}' scale-input-d is not supported on .target sm_110", name);
}

// Video instructions. Scalar forms (vadd .. vset) work on one 32-bit value with optional byte/half-word selectors
// and either a secondary operation or a merge into a destination part; the SIMD forms (vadd2 .. vset4) work on two
// half-words or four bytes with lane selectors, a destination mask and an optional accumulate. Checked against ptxas.

static bool isVideoSimd2(Opcode op) {
    return op == Opcode::Vadd2 || op == Opcode::Vsub2 || op == Opcode::Vavrg2 || op == Opcode::Vabsdiff2 ||
           op == Opcode::Vmin2 || op == Opcode::Vmax2 || op == Opcode::Vset2;
}
static bool isVideoSimd4(Opcode op) {
    return op == Opcode::Vadd4 || op == Opcode::Vsub4 || op == Opcode::Vavrg4 || op == Opcode::Vabsdiff4 ||
           op == Opcode::Vmin4 || op == Opcode::Vmax4 || op == Opcode::Vset4;
}

// A scalar selector: one byte (.b0 .. .b3) or one half-word (.h0, .h1).
static bool scalarVideoSel(uint16_t sel) {
    if (sel == 0) return true;
    if (selCount(sel) != 1) return false;
    return (selKind(sel) == SelKind::Byte && selDigit(sel, 0) <= 3) ||
           (selKind(sel) == SelKind::Half && selDigit(sel, 0) <= 1);
}

// A SIMD source selector: two half-words of a:b (.hxy, x and y in 0..3) or four bytes of a:b (.bwxyz, 0..7).
static bool simdSourceSel(uint16_t sel, bool four) {
    if (sel == 0) return true;
    return four ? selKind(sel) == SelKind::Byte && selCount(sel) == 4
                : selKind(sel) == SelKind::Half && selCount(sel) == 2;
}

// A SIMD destination mask: the lanes written, highest first (.h10, .h1, .h0; .b3210, .b31, .b0, ...).
static bool simdMask(uint16_t sel, bool four) {
    if (sel == 0) return true;
    if (selKind(sel) != (four ? SelKind::Byte : SelKind::Half)) return false;
    unsigned last = 8;
    for (unsigned i = 0; i < selCount(sel); ++i) {
        unsigned d = selDigit(sel, i);
        if (d >= (four ? 4u : 2u) || d >= last) return false;
        last = d;
    }
    return true;
}

void Checker::video(const Function& f, const Instruction& inst) {
    std::string_view name = mnemonic(inst);
    Opcode op = inst.opcode;
    bool simd2 = isVideoSimd2(op), simd4 = isVideoSimd4(op), simd = simd2 || simd4;
    bool set = op == Opcode::Vset || op == Opcode::Vset2 || op == Opcode::Vset4;
    bool shift = op == Opcode::Vshl || op == Opcode::Vshr;
    bool mad = op == Opcode::Vmad;
    unsigned wantTypes = set ? 2 : 3;
    bool typesOk = inst.numTypes == wantTypes;
    for (unsigned i = 0; typesOk && i < inst.numTypes; ++i)
        typesOk = inst.types[i] == Type::u32 || inst.types[i] == Type::s32;
    if (!typesOk) {
        error(inst.loc, "'{}' needs {} types ({}), each .u32 or .s32", name, wantTypes,
              set ? ".atype.btype" : ".dtype.atype.btype");
        return;
    }
    // Modifiers: .sat (not on vset), one secondary operation, the shift modes, vmad's .po and .shrN.
    const Mod* mods = f.modsOf(inst);
    unsigned clamps = 0, shifts = 0;
    for (uint32_t k = 0; k < inst.modCount; ++k) {
        Mod m = mods[k];
        if (modCategory(m) == ModCat::Type) continue;
        bool ok;
        switch (m) {
            case Mod::sat: ok = !set; break;
            case Mod::add: ok = !mad; break;
            case Mod::min: case Mod::max: ok = !mad && !simd; break;
            case Mod::wrap: case Mod::clamp:
                ok = shift;
                ++clamps;
                break;
            case Mod::shr7: case Mod::shr15:
                ok = mad;
                ++shifts;
                break;
            case Mod::po: ok = mad; break;
            default: ok = set && modCategory(m) == ModCat::CmpOp; break;
        }
        if (!ok) {
            error(inst.loc, "'{}' does not take the modifier {}", name, modText(m));
            return;
        }
    }
    if (set) {
        bool intCmp = inst.cmp == CmpOp::eq || inst.cmp == CmpOp::ne || inst.cmp == CmpOp::lt ||
                      inst.cmp == CmpOp::le || inst.cmp == CmpOp::gt || inst.cmp == CmpOp::ge;
        if (!intCmp) {
            error(inst.loc, "'{}' needs an integer comparison (.eq, .ne, .lt, .le, .gt or .ge)", name);
            return;
        }
    }
    if (shift && clamps != 1) {
        error(inst.loc, "'{}' needs exactly one of .wrap and .clamp", name);
        return;
    }
    if (shift && inst.types[2] != Type::u32) {
        error(inst.loc, "'{}' needs the shift amount type .u32", name);
        return;
    }
    if (shifts > 1) {
        error(inst.loc, "'vmad' takes at most one of .shr7 and .shr15");
        return;
    }
    bool secondary = inst.redOp != RedOp::none;
    if (simd && secondary && f.hasMod(inst, Mod::sat)) {
        error(inst.loc, "'{}' cannot combine .sat with the accumulate operation .add", name);
        return;
    }
    // Operands: d, a, b (scalar, no secondary operation), or d, a, b, c.
    unsigned minOps = (simd || mad || secondary) ? 4 : 3;
    if (inst.numOperands < minOps || inst.numOperands > 4) {
        if (minOps == 4) operandCount(inst, name, 4);
        else error(inst.loc, "'{}' takes 3 or 4 operands, not {}", name, inst.numOperands);
        return;
    }
    const Operand* ops = f.operandsOf(inst);
    auto reg32 = [&](const Operand& o) {
        return o.kind == OperandKind::Reg && o.index < f.registers.size() && !f.registers[o.index].vec &&
               is32BitInteger(f.registers[o.index].type);
    };
    for (unsigned i = 0; i < inst.numOperands; ++i) {
        const Operand& o = ops[i];
        bool immOk = i > 0 && !simd;
        if (!reg32(o) && !(immOk && o.kind == OperandKind::Imm)) {
            error(inst.loc, "operand {} of '{}' must be a 32-bit integer register{}", i + 1, name,
                  immOk ? " or an integer constant" : "");
            return;
        }
        if (o.flags & kOperandMinus) {
            bool ok = mad && i > 0;
            if (!ok) {
                error(inst.loc, "operand {} of '{}' cannot be negated", i + 1, name);
                return;
            }
        }
        if (o.kind != OperandKind::Reg) continue;
        uint16_t sel = o.sel;
        bool selOk;
        if (i == 0) {
            if (simd) {
                selOk = simdMask(sel, simd4);
            } else {
                selOk = scalarVideoSel(sel);
                if (selOk && sel != 0 && (mad || inst.numOperands == 3)) {
                    error(inst.loc, "the destination of '{}' takes a selector only when it merges into operand c",
                          name);
                    return;
                }
                if (selOk && sel != 0 && secondary) {
                    error(inst.loc, "'{}' cannot combine a destination selector with a secondary operation", name);
                    return;
                }
            }
        } else if (i == 3) {
            selOk = sel == 0;
            if (!selOk) {
                error(inst.loc, "operand c of '{}' takes no selector", name);
                return;
            }
        } else {
            selOk = simd ? simdSourceSel(sel, simd4) : scalarVideoSel(sel);
        }
        if (!selOk) {
            error(inst.loc, "invalid selector on operand {} of '{}'", i + 1, name);
            return;
        }
    }
    if (mad) {
        bool negAB = (ops[1].flags & kOperandMinus) || (ops[2].flags & kOperandMinus);
        bool negC = ops[3].flags & kOperandMinus;
        if (negAB && negC) {
            error(inst.loc, "'vmad' negates either the product (a or b) or c, not both");
            return;
        }
        if ((negAB || negC) && f.hasMod(inst, Mod::po)) error(inst.loc, "'vmad.po' takes no negated operand");
    }
}

// multimem.ld_reduce / .st / .red: memory order and scope pairs, the operation each type takes, the vector widths
// (at most 128 bits; integer types have none), the accumulation precision and the operand shapes.
void Checker::multimem(const Function& f, const Instruction& inst) {
    Opcode op = inst.opcode;
    bool load = op == Opcode::MultimemLdReduce, store = op == Opcode::MultimemSt;
    std::string_view name = load ? "multimem.ld_reduce" : store ? "multimem.st" : "multimem.red";
    bool semOk = inst.sem == Sem::none || inst.sem == Sem::relaxed || (inst.sem == Sem::weak && (load || store)) ||
                 inst.sem == (load ? Sem::acquire : Sem::release);
    if (!semOk) {
        error(inst.loc, "'{}' does not take this memory order", name);
        return;
    }
    bool ordered = inst.sem != Sem::none && inst.sem != Sem::weak;
    if (inst.scope != Scope::none && !ordered) {
        error(inst.loc, "'{}' takes a scope only together with a memory order (.relaxed, {})", name,
              load ? ".acquire" : ".release");
        return;
    }
    if (ordered && inst.scope == Scope::none) {
        error(inst.loc, "'{}' with a memory order needs a scope (.cta, .cluster, .gpu or .sys)", name);
        return;
    }
    if (inst.space != Space::none && inst.space != Space::global) {
        error(inst.loc, "'{}' works on .global addresses only", name);
        return;
    }
    RedOp ro = inst.redOp;
    if (store && ro != RedOp::none) {
        error(inst.loc, "'multimem.st' does not take a reduction operation");
        return;
    }
    bool bitwise = ro == RedOp::and_ || ro == RedOp::or_ || ro == RedOp::xor_;
    bool arith = ro == RedOp::add || ro == RedOp::min || ro == RedOp::max;
    if (!store && !bitwise && !arith) {
        error(inst.loc, "'{}' needs a reduction operation (.add, .min, .max, .and, .or or .xor)", name);
        return;
    }
    if (inst.numTypes != 1) {
        error(inst.loc, "'{}' needs one type", name);
        return;
    }
    Type t = inst.type();
    bool half = t == Type::f16 || t == Type::bf16, halfPair = t == Type::f16x2 || t == Type::bf16x2;
    bool fp8 = t == Type::e4m3x4 || t == Type::e5m2x4;
    bool wideFloat = t == Type::f32 || t == Type::f64;
    bool integer = t == Type::u32 || t == Type::u64 || t == Type::s32 || t == Type::s64;
    bool bits = t == Type::b32 || t == Type::b64;
    if (!half && !halfPair && !fp8 && !wideFloat && !integer && !bits) {
        error(inst.loc, "'{}' does not support the type {}", name, typeName(t));
        return;
    }
    if (fp8) {
        if (op == Opcode::MultimemRed) {
            error(inst.loc, "'multimem.red' does not support the type {}", typeName(t));
            return;
        }
        if (sm_ && (sm_ < 100 || !archSpecific_)) {
            error(inst.loc, "'{}' with {} needs .target sm_100a, sm_100f or higher", name, typeName(t));
            return;
        }
    }
    if (!store) {
        // Bitwise operations on .b32/.b64; add/min/max on the signed and unsigned integers; floating-point types
        // reduce with .add, and the packed half and FP8 types of ld_reduce with .min/.max too.
        bool opOk = bits ? bitwise
                  : integer ? arith
                  : ro == RedOp::add || (load && !wideFloat && (ro == RedOp::min || ro == RedOp::max));
        if (!opOk) {
            error(inst.loc, "'{}' does not support {} on {}", name, redOpText(ro), typeName(t));
            return;
        }
    }
    if (f.hasMod(inst, Mod::acc_f32) && (!(half || halfPair) || (load && ro != RedOp::add))) {
        error(inst.loc, "'{}' takes .acc::f32 only with .add on 16-bit floating-point types", name);
        return;
    }
    if (f.hasMod(inst, Mod::acc_f16) && (!fp8 || store)) {
        error(inst.loc, "'{}' takes .acc::f16 only on FP8 types", name);
        return;
    }
    unsigned width = typeSize(t) * (inst.vec ? inst.vec : 1);
    if (inst.vec && (integer || bits)) {
        error(inst.loc, "'{}' with an integer type takes no vector", name);
        return;
    }
    if ((t == Type::f64 && inst.vec) || (half && !inst.vec) || width > 16) {
        error(inst.loc, "'{}' {}{} is not a 32-, 64- or 128-bit access", name,
              inst.vec ? fmt::format(".v{}", inst.vec) : std::string(), typeName(t));
        return;
    }
    if (!operandCount(inst, name, 2)) return;
    const Operand* ops = f.operandsOf(inst);
    unsigned addr = load ? 1 : 0, data = load ? 0 : 1;
    if (!addressOperand(f, inst, addr)) return;
    const Operand& a = ops[addr];
    if (a.symKind == SymKind::Global || a.symKind == SymKind::Local) {
        Space vs = a.symKind == SymKind::Global ? (a.index < m_.globals.size() ? m_.globals[a.index].space : Space::none)
                                                : (a.index < f.locals.size() ? f.locals[a.index].space : Space::none);
        if (vs != Space::none && vs != Space::global) {
            error(inst.loc, "the address of '{}' must be in .global memory", name);
            return;
        }
    } else if (a.symKind != SymKind::None) {
        error(inst.loc, "the address of '{}' must be in .global memory", name);
        return;
    }
    const Operand& d = ops[data];
    if (inst.vec) {
        if (vectorSize(d) != inst.vec) {
            error(inst.loc, "operand {} of '{}' must be a vector of {} registers", data + 1, name, inst.vec);
            return;
        }
        vectorRegs(f, inst, data, fmt::format("registers of type {}", typeName(t)),
                   [t](Type r) { return compatible(t, r, false); });
        return;
    }
    if (d.kind == OperandKind::Sink || d.kind == OperandKind::Vector) {
        error(inst.loc, "operand {} of '{}' must be a register{}", data + 1, name, load ? "" : " or a constant");
        return;
    }
    typed(f, inst, data, t, false, load);
}

// Rounding, .approx, .ftz, .sat and multiply modes each arithmetic instruction requires or refuses, and the types
// of the bit-manipulation instructions. Returns false after an error.
bool Checker::arithmeticModes(const Function&, const Instruction& inst) {
    Type t = inst.type();
    std::string_view name = mnemonic(inst);
    bool f32 = t == Type::f32, f64 = t == Type::f64;
    bool fpRounding = inst.rounding == Rounding::rn || inst.rounding == Rounding::rz || inst.rounding == Rounding::rm ||
                      inst.rounding == Rounding::rp;
    bool approx = inst.has(Flag::approx);
    auto fail = [&](std::string message) {
        error(inst.loc, "{}", message);
        return false;
    };
    auto typeIn = [&](std::initializer_list<Type> types) {
        for (Type x : types)
            if (x == t) return true;
        return false;
    };
    switch (inst.opcode) {
        case Opcode::Fma: case Opcode::Mad:
            if ((f32 || f64) && !fpRounding && !(inst.opcode == Opcode::Mad && f32 && sm_ && sm_ < 20))
                return fail(fmt::format("'{}{}' requires a rounding modifier (.rn, .rz, .rm or .rp)", name, typeName(t)));
            if (isInt(t) && inst.mulMode == MulMode::none)
                return fail(fmt::format("'{}{}' requires .lo, .hi or .wide", name, typeName(t)));
            break;
        case Opcode::Mul:
            if (isInt(t) && inst.mulMode == MulMode::none)
                return fail(fmt::format("'mul{}' requires .lo, .hi or .wide", typeName(t)));
            break;
        case Opcode::Div:
            if (f32 && !fpRounding && !approx && !inst.has(Flag::full))
                return fail("'div.f32' requires a rounding modifier, .approx or .full");
            if (f64 && (approx || inst.has(Flag::full)))
                return fail(fmt::format("'div.f64' does not take {}", approx ? ".approx" : ".full"));
            if (f64 && !fpRounding) return fail("'div.f64' requires a rounding modifier (.rn, .rz, .rm or .rp)");
            break;
        case Opcode::Sqrt: case Opcode::Rcp:
            if (f32 && !fpRounding && !approx)
                return fail(fmt::format("'{}.f32' requires a rounding modifier or .approx", name));
            if (f64 && approx && !(inst.opcode == Opcode::Rcp && inst.has(Flag::ftz)))
                return fail(fmt::format("'{}.f64' does not take .approx{}", name,
                                        inst.opcode == Opcode::Rcp ? " without .ftz" : ""));
            if (f64 && !approx && !fpRounding)
                return fail(fmt::format("'{}.f64' requires a rounding modifier (.rn, .rz, .rm or .rp)", name));
            break;
        case Opcode::Rsqrt: case Opcode::Sin: case Opcode::Cos: case Opcode::Lg2: case Opcode::Ex2: case Opcode::Tanh: {
            bool typeOk = inst.opcode == Opcode::Rsqrt ? (f32 || f64)
                        : inst.opcode == Opcode::Ex2 || inst.opcode == Opcode::Tanh
                            ? typeIn({Type::f32, Type::f16, Type::f16x2, Type::bf16, Type::bf16x2})
                            : f32;
            if (!typeOk) return fail(fmt::format("'{}' does not take the type {}", name, typeName(t)));
            if (!approx) return fail(fmt::format("'{}' requires .approx", name));
            break;
        }
        case Opcode::Testp: case Opcode::Copysign:
            if (!f32 && !f64) return fail(fmt::format("'{}' takes .f32 or .f64, not {}", name, typeName(t)));
            break;
        case Opcode::Abs: case Opcode::Neg:
            if (typeKind(t) == TypeKind::Unsigned || typeKind(t) == TypeKind::Bits)
                return fail(fmt::format("'{}' takes signed integer or floating-point types, not {}", name, typeName(t)));
            break;
        case Opcode::Popc: case Opcode::Clz: case Opcode::Brev: case Opcode::Bfi:
            if (t != Type::b32 && t != Type::b64)
                return fail(fmt::format("'{}' takes .b32 or .b64, not {}", name, typeName(t)));
            break;
        case Opcode::Bfe:
            if (!typeIn({Type::u32, Type::u64, Type::s32, Type::s64}))
                return fail(fmt::format("'bfe' takes .u32, .u64, .s32 or .s64, not {}", typeName(t)));
            break;
        case Opcode::Lop3: case Opcode::Prmt:
            if (t != Type::b32) return fail(fmt::format("'{}' takes .b32, not {}", name, typeName(t)));
            break;
        case Opcode::Shf:
            if (t != Type::b32) return fail(fmt::format("'shf' takes .b32, not {}", typeName(t)));
            if (!inst.has(Flag::wrap) && !inst.has(Flag::clamp)) return fail("'shf' requires .wrap or .clamp");
            break;
        case Opcode::Slct:
            if (inst.numTypes >= 2 && inst.types[1] != Type::s32 && inst.types[1] != Type::f32)
                return fail(fmt::format("the selector type of 'slct' must be .s32 or .f32, not {}", typeName(inst.types[1])));
            break;
        default: break;
    }
    // .ftz and .sat: single precision (and the half types) only; integer .sat only on .s32 add/sub.
    OpClass cls = opcodeClass(inst.opcode);
    if (cls == OpClass::Arith && f64 && inst.has(Flag::ftz) && inst.opcode != Opcode::Rcp && inst.opcode != Opcode::Rsqrt)
        return fail(fmt::format("'{}.f64' does not take .ftz", name));
    if (cls == OpClass::Arith && inst.has(Flag::sat)) {
        if (f64) return fail(fmt::format("'{}.f64' does not take .sat", name));
        if (isInt(t) && t != Type::s32) return fail(fmt::format("'.sat' does not apply to the type {}", typeName(t)));
    }
    return true;
}

// ld/ldu/st: memory-order, scope, cache-operator and state-space combinations.
bool Checker::memoryModes(const Function& f, const Instruction& inst) {
    bool isStore = inst.opcode == Opcode::St;
    std::string_view name = mnemonic(inst);
    auto fail = [&](std::string message) {
        error(inst.loc, "{}", message);
        return false;
    };
    if (isStore ? (inst.sem == Sem::acquire || inst.sem == Sem::acq_rel)
                : (inst.sem == Sem::release || inst.sem == Sem::acq_rel))
        return fail(fmt::format("'{}' does not take {}", name,
                                inst.sem == Sem::acquire ? ".acquire" : inst.sem == Sem::release ? ".release" : ".acq_rel"));
    if ((inst.sem == Sem::relaxed || inst.sem == Sem::acquire || inst.sem == Sem::release) && inst.scope == Scope::none)
        return fail(fmt::format("'{}' with a memory order needs a scope (.cta, .cluster, .gpu or .sys)", name));
    if (inst.sem == Sem::volatile_ && inst.scope != Scope::none)
        return fail(fmt::format("'{}.volatile' does not take a scope", name));
    if (inst.has(Flag::nc)) {
        if (isStore) return fail("'st' does not take .nc");
        if (inst.space != Space::global) return fail("'.nc' needs the .global state space");
    }
    CacheOp c = inst.cacheOp;
    if (isStore ? (c == CacheOp::ca || c == CacheOp::lu || c == CacheOp::cv) : c == CacheOp::wb || c == CacheOp::wt) {
        static constexpr std::string_view kNames[] = {"", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt"};
        return fail(fmt::format("'{}' does not take the cache operator {}", name, kNames[static_cast<unsigned>(c)]));
    }
    if (inst.opcode == Opcode::Ldu && inst.space != Space::none && inst.space != Space::global)
        return fail("'ldu' reads .global memory only");
    if (isStore && inst.space == Space::const_) return fail("'st' cannot write the .const state space");
    if (isStore && (inst.space == Space::param || inst.space == Space::param_entry) && f.isEntry) {
        const Operand& a = f.operandsOf(inst)[0];
        if (a.kind == OperandKind::Address && a.symKind == SymKind::Param)
            return fail("'st.param' cannot write a kernel parameter");
    }
    return true;
}

// Conversions whose type pairs arrived later than the types themselves.
void Checker::convertGates(const Instruction& inst) {
    if (inst.numTypes < 2) return;
    Type dt = inst.types[0], st = inst.types[1];
    auto narrowX2 = [](Type t) {
        return t == Type::e2m1x2 || t == Type::e2m3x2 || t == Type::e3m2x2 || t == Type::ue8m0x2;
    };
    if (narrowX2(dt) || narrowX2(st)) {
        Type which = narrowX2(dt) ? dt : st;
        if (sm_ && (sm_ < 100 || !archSpecific_))
            error(inst.loc, "'cvt' with {} is not supported on .target sm_{} (it needs sm_100a/sm_100f or later "
                  "architecture- or family-specific targets)", typeName(which), sm_);
        else if (ptx_ < 86)
            error(inst.loc, "'cvt' with {} requires PTX ISA .version 8.6 or later", typeName(which));
        return;
    }
    auto fp8x2 = [](Type t) { return t == Type::e4m3x2 || t == Type::e5m2x2; };
    if (fp8x2(dt) || fp8x2(st)) {
        if (sm_ && sm_ < 89) error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 requires .target sm_89 or higher");
        else if (sm_ == 89 && ptx_ < 81)
            error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 on sm_89 requires PTX ISA .version 8.1 or later");
        else if (ptx_ < 78) error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 requires PTX ISA .version 7.8 or later");
        return;
    }
    auto isInteger = [](Type t) { return isInt(t); };
    if ((dt == Type::f16x2 || dt == Type::bf16x2) && st == Type::f32 && inst.opcode == Opcode::Cvt) {
        requireTarget(inst, fmt::format("cvt{}.f32", typeName(dt)), 80, 70);
    } else if ((dt == Type::bf16 && isInteger(st)) || (st == Type::bf16 && isInteger(dt))) {
        requireTarget(inst, fmt::format("cvt{}{}", typeName(dt), typeName(st)), 90, 78);
    } else if (dt == Type::bf16 && st == Type::f32) {
        requireTarget(inst, "cvt.bf16.f32", 80, 70);
    } else if (st == Type::bf16 && dt == Type::f32) {
        requireTarget(inst, "cvt.f32.bf16", 0, 71);
    } else if (st == Type::bf16 || dt == Type::bf16) {
        requireTarget(inst, fmt::format("cvt{}{}", typeName(dt), typeName(st)), 90, 78);
    }
}

}  // namespace

bool usedBytesMaskPragma(std::string_view text, uint32_t& mask, bool& malformed) {
    constexpr std::string_view kName = "used_bytes_mask";
    if (text.substr(0, kName.size()) != kName) return false;
    std::string_view arg = text.substr(kName.size());
    if (!arg.empty() && arg[0] != ' ' && arg[0] != '\t') return false;
    while (!arg.empty() && (arg[0] == ' ' || arg[0] == '\t')) arg.remove_prefix(1);
    while (!arg.empty() && (arg.back() == ' ' || arg.back() == '\t')) arg.remove_suffix(1);
    bool negative = !arg.empty() && arg[0] == '-';
    if (negative) arg.remove_prefix(1);
    unsigned base = 10;
    if (arg.size() > 2 && arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) {
        base = 16;
        arg.remove_prefix(2);
    }
    uint64_t value = 0;
    malformed = arg.empty();
    for (char c : arg) {
        unsigned digit = c >= '0' && c <= '9' ? unsigned(c - '0')
                         : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                                : 99;
        if (digit >= base) {
            malformed = true;
            break;
        }
        value = value * base + digit;
    }
    mask = static_cast<uint32_t>(negative ? 0 - value : value);
    return true;
}

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
        case 10: case 11: return 10;
        case 12: case 13: return 12;
        case 20: case 21: return 20;
        case 30: return 30;
        case 35: return 31;
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
