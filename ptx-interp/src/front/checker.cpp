// The PTX checker: what ptxas refuses, cuemu refuses with a message (tests/ptx-front/agreement keeps the two in
// step). Modules, functions and instructions in general here; matrix instructions in check_matrix.cpp, asynchronous
// copies and mbarrier in check_async.cpp; the version gates in gates.def.
#include "front/checker.h"

namespace ptx {
namespace check_detail {
namespace {

// Minimum target and PTX ISA version (major*10+minor) of instructions newer than the baseline (sm_75, PTX 6.3).
struct Gate {
  Opcode op;
  unsigned sm;
  bool archSpecific;  // needs the "a" target (sm_90a)
  unsigned ptx;
  unsigned lastSm = 0;  // newest target family that has it (0: all newer ones); tcgen05 is not on sm_120
};
constexpr Gate kGates[] = {
#define PTX_GATE(op, sm, arch, ptx, lastSm) {Opcode::op, sm, arch, ptx, lastSm},
#include "front/gates.def"
#undef PTX_GATE
};

// Operand counts: {opcode, min, max}. Instructions not listed are not count-checked.
struct Arity {
  Opcode op;
  uint8_t min, max;
};
constexpr Arity kArity[] = {
#define PTX_ARITY(op, min, max) {Opcode::op, min, max},
#include "front/gates.def"
#undef PTX_ARITY
};

// Modifiers and types that need a newer target or PTX version than the instruction itself, wherever they appear
// (op == Opcode::count_) or on one instruction. Checked against ptxas (tests/ptx-front/agreement).
struct ModGate {
  Mod mod;
  Opcode op;    // Opcode::count_: any instruction
  uint16_t sm;  // 0: no target requirement
  uint8_t ptx;  // 0: no version requirement
};
constexpr Opcode kAnyOp = Opcode::count_;
constexpr ModGate kModGates[] = {
#define PTX_MOD_GATE(mod, op, sm, ptx) {Mod::mod, Opcode::op, sm, ptx},
#define PTX_MOD_GATE_ANY(mod, sm, ptx) {Mod::mod, kAnyOp, sm, ptx},
#include "front/gates.def"
#undef PTX_MOD_GATE
#undef PTX_MOD_GATE_ANY
};

// Per opcode, 1 + the index of its first entry in a table of {op, ...} (0: none): instruction() looks an
// instruction's gate and operand count up instead of scanning the tables (a third of the checker's time on small
// kernels).
template <size_t N, class Entry> constexpr auto firstEntryByOpcode(const Entry (&table)[N]) {
  std::array<uint16_t, static_cast<size_t>(Opcode::count_)> first{};
  for (size_t k = N; k-- > 0;) first[static_cast<size_t>(table[k].op)] = static_cast<uint16_t>(k + 1);
  return first;
}
constexpr auto kGateOf = firstEntryByOpcode(kGates);
constexpr auto kArityOf = firstEntryByOpcode(kArity);

// Which modifiers have an entry in kModGates: most instructions have none, and the checker stays fast.
constexpr auto kModHasGate = [] {
  std::array<bool, static_cast<size_t>(Mod::count_)> has{};
  for (const ModGate& g : kModGates) has[static_cast<size_t>(g.mod)] = true;
  return has;
}();

}  // namespace

bool Checker::run(const std::vector<bool>* checkedBodies) {
  moduleLevel();
  for (size_t k = 0; k < m_.functions.size(); ++k) {
    if (d_.full()) break;
    if (checkedBodies && k < checkedBodies->size() && (*checkedBodies)[k]) continue;
    function(m_.functions[k]);
  }
  return !d_.hasErrors();
}

void Checker::moduleLevel() {
  ptx_ = m_.versionMajor * 10 + m_.versionMinor;
  bool newerIsa = m_.versionMajor > 9 || (m_.versionMajor == 9 && m_.versionMinor > 0);
  if (newerIsa && !opt_.acceptNewerIsa)
    d_.error(1, 1,
             fmt::format("unsupported .version {}.{}; the newest supported is 9.0", m_.versionMajor, m_.versionMinor));
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
      d_.error(2, 1,
               fmt::format("PTX .version {}.{} does not support .target {}", m_.versionMajor, m_.versionMinor,
                           m_.str(t.name)));
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
      d_.error(2, 1, fmt::format("SM version specified by .target is higher than the device's (sm_{})", opt_.targetSm));
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
    error(f.loc, "entry function '{}' uses too much parameter space ({:#x} bytes, {:#x} max)", m_.str(f.name), bytes,
          large ? kLargeLimit : kClassicLimit);
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
  if (f.blocksareclusters) {  // as ptxas 13.0 words and orders these checks
    if (!f.isEntry) error(f.loc, "'.blocksareclusters' is only allowed on .entry functions");
    if (ptx_ < 90) error(f.loc, "Feature '.blocksareclusters' requires PTX ISA .version 9.0 or later");
    if (sm_ && sm_ < 90) error(f.loc, "Feature '.blocksareclusters' requires .target sm_90 or higher");
    if (!f.numReqntid || !f.numReqnctapercluster)
      error(f.loc, ".reqntid and .reqnctapercluster directive(s) required for directive '.blocksareclusters'");
  }
  if (!f.hasBody) return;
  for (const BodyPragma& pr : f.bodyPragmas) {
    uint32_t mask = 0;
    bool malformed = false;
    if (!usedBytesMaskPragma(m_.str(pr.text), mask, malformed)) continue;
    SourceLoc at = pr.loc;
    if (ptx_ < 83)
      error(at, ".pragma \"used_bytes_mask\" needs PTX .version 8.3 or later");
    else if (malformed)
      error(at, ".pragma \"used_bytes_mask\" needs one integer argument");
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

bool Checker::typed(const Function& f, const Instruction& inst, unsigned index, Type type, bool wider, bool isDest) {
  if (index >= inst.numOperands) return true;
  const Operand& op = f.operands[inst.firstOperand + index];
  switch (op.kind) {
    case OperandKind::Reg: {
      if (op.index >= f.registers.size()) return true;
      const Register& r = f.registers[op.index];
      if (r.vec) return true;  // vector registers with selectors: not checked here
      if (!compatible(type, r.type, wider)) {
        error(inst.loc, "operand {} of '{}' has type {}, which does not match the instruction type {}", index + 1,
              mnemonic(inst), typeName(r.type), typeName(type));
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
        if (op.kind == OperandKind::Imm) return true;  // mov.pred %p, 0
        error(inst.loc, "operand {} of '{}' must be a predicate register", index + 1, mnemonic(inst));
        return false;
      }
      if (op.kind == OperandKind::Imm && typeKind(type) == TypeKind::Float) {
        error(inst.loc, "integer immediate for floating-point operand {} of '{}'", index + 1, mnemonic(inst));
        return false;
      }
      if (op.kind == OperandKind::FImm && typeKind(type) != TypeKind::Float && typeKind(type) != TypeKind::Bits) {
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
        error(inst.loc, "operand {} of '{}' must be a register or immediate, not a symbol", index + 1, mnemonic(inst));
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
  if (uint16_t gate = kGateOf[static_cast<size_t>(inst.opcode)]) {
    const Gate& g = kGates[gate - 1];
    if (sm_ && sm_ < g.sm)
      error(inst.loc, "'{}' requires .target sm_{}{} or higher", opcodeName(inst.opcode), g.sm,
            g.archSpecific ? "a" : "");
    else if (sm_ && g.archSpecific && !archSpecific_)
      error(inst.loc, "'{}' is not supported on a target without the 'a' suffix", opcodeName(inst.opcode));
    else if (sm_ && g.lastSm && sm_ > g.lastSm)
      error(inst.loc, "'{}' is not supported on .target sm_{}", opcodeName(inst.opcode), sm_);
    if (ptx_ < g.ptx)
      error(inst.loc, "'{}' requires PTX ISA .version {}.{} or later", opcodeName(inst.opcode), g.ptx / 10, g.ptx % 10);
  }
  if (!modGates(f, inst)) return;
  if (uint16_t arity = kArityOf[static_cast<size_t>(inst.opcode)]) {
    const Arity& a = kArity[arity - 1];
    if (inst.numOperands < a.min || inst.numOperands > a.max) {
      if (a.min == a.max)
        error(inst.loc, "'{}' takes {} operand{}, not {}", name, a.min, a.min == 1 ? "" : "s", inst.numOperands);
      else
        error(inst.loc, "'{}' takes {} to {} operands, not {}", name, a.min, a.max, inst.numOperands);
      return;
    }
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
      error(inst.loc, "byte and half-word selectors are only allowed on video instructions, not on '{}'", name);
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
  // Mixed precision (PTX ISA 8.6, sm_100 and newer): add/sub{.rnd}{.sat}.f32.atype d, a, c and
  // fma.rnd{.sat}.f32.abtype d, a, b, c take a (and b) as .f16 or .bf16, c and d as .f32.
  if (inst.numTypes == 2 && (inst.opcode == Opcode::Add || inst.opcode == Opcode::Sub || inst.opcode == Opcode::Fma)) {
    const Type st = inst.types[1];
    if (t != Type::f32 || (st != Type::f16 && st != Type::bf16)) {
      error(inst.loc, "'{}' with two types takes .f32.f16 or .f32.bf16", name);
      return;
    }
    if (sm_ && sm_ < 100) {
      error(inst.loc, "'{}{}{}' requires .target sm_100 or higher", name, typeName(t), typeName(st));
      return;
    }
    if (ptx_ < 86) {
      error(inst.loc, "'{}{}{}' requires PTX ISA .version 8.6 or later", name, typeName(t), typeName(st));
      return;
    }
    if (inst.has(Flag::ftz)) {
      error(inst.loc, "'{}{}{}' does not take .ftz", name, typeName(t), typeName(st));
      return;
    }
    const unsigned narrow = inst.opcode == Opcode::Fma ? 2 : 1;  // the converted sources, after d
    for (unsigned i = 0; i < inst.numOperands; ++i)
      if (!typed(f, inst, i, i >= 1 && i <= narrow ? st : t, false, i == 0)) return;
    return;
  }
  // Three inputs (PTX ISA 8.8, sm_100 and newer): min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c.
  if ((inst.opcode == Opcode::Min || inst.opcode == Opcode::Max) && inst.numOperands == 4) {
    if (t != Type::f32) {
      error(inst.loc, "'{}' with three sources takes .f32, not {}", name, typeName(t));
      return;
    }
    if (sm_ && sm_ < 100) {
      error(inst.loc, "'{}' with three sources requires .target sm_100 or higher", name);
      return;
    }
    if (ptx_ < 88) {
      error(inst.loc, "'{}' with three sources requires PTX ISA .version 8.8 or later", name);
      return;
    }
    if (inst.has(Flag::xorsign)) {
      error(inst.loc, "'{}' with three sources does not take .xorsign", name);
      return;
    }
  }
  switch (inst.opcode) {
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Div:
    case Opcode::Rem:
    case Opcode::Min:
    case Opcode::Max:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
    case Opcode::Not:
    case Opcode::Cnot:
    case Opcode::Abs:
    case Opcode::Neg:
    case Opcode::Copysign:
    case Opcode::AddCC:
    case Opcode::AddC:
    case Opcode::SubCC:
    case Opcode::SubC:
      for (unsigned i = 0; i < inst.numOperands; ++i)
        if (!typed(f, inst, i, t, false, i == 0)) return;
      return;
    case Opcode::Mul:
    case Opcode::Mad:
    case Opcode::Fma:
    case Opcode::MadCC:
    case Opcode::MadC: {
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
    case Opcode::Rcp:
    case Opcode::Sqrt:
    case Opcode::Rsqrt:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Lg2:
    case Opcode::Ex2:
    case Opcode::Tanh:
      if (!isFloat(t) && t != Type::b16 && t != Type::b32) {
        error(inst.loc, "'{}' needs a floating-point type", name);
        return;
      }
      for (unsigned i = 0; i < inst.numOperands; ++i)
        if (!typed(f, inst, i, t, false, i == 0)) return;
      return;
    case Opcode::Shl:
    case Opcode::Shr:
      if (!typed(f, inst, 0, t, false, true) || !typed(f, inst, 1, t, false, false) ||
          !typed(f, inst, 2, Type::u32, false, false))
        return;
      return;
    case Opcode::Popc:
    case Opcode::Clz:
    case Opcode::Bfind:
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
        error(inst.loc, "rounding modifier (.rni, .rzi, .rmi or .rpi) required for 'cvt' from {} to {}", typeName(st),
              typeName(dt));
        return;
      }
      if (isInt(st) && isFloat(dt) && !fpRound) {
        error(inst.loc, "rounding modifier (.rn, .rz, .rm or .rp) required for 'cvt' from {} to {}", typeName(st),
              typeName(dt));
        return;
      }
      if (isFloat(st) && isFloat(dt) && typeSize(dt) < typeSize(st) && inst.rounding == Rounding::none &&
          inst.numOperands == 2) {
        error(inst.loc, "rounding modifier required for narrowing 'cvt' from {} to {}", typeName(st), typeName(dt));
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
        error(inst.loc,
              "32-bit generic addresses ('cvta{}') are not supported with .address_size 64 on "
              "sm_90 or higher",
              std::string_view(typeName(t)));
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
    case Opcode::Ld:
    case Opcode::Ldu:
    case Opcode::St: {
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
        if (a.symKind == SymKind::Global && a.index < m_.globals.size())
          vs = m_.globals[a.index].space;
        else if (a.symKind == SymKind::Local && a.index < f.locals.size())
          vs = f.locals[a.index].space;
        else if (a.symKind == SymKind::Param || a.symKind == SymKind::Return)
          vs = Space::param;
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
    case Opcode::Atom:
    case Opcode::Red: {
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
    case Opcode::Vote:
    case Opcode::Shfl:
      if (sm_ >= 70 && ptx_ >= 64)
        error(inst.loc, "'{}' without .sync is not supported on sm_70 and newer targets from PTX ISA 6.4 on", name);
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
        error(inst.loc, "'redux.sync' {} needs the type {}", redOpText(inst.redOp), logic ? ".b32" : ".u32 or .s32");
      }
      return;
    }
    case Opcode::Fence:
      if (inst.sem == Sem::relaxed || inst.sem == Sem::weak)
        error(inst.loc, "'fence' does not take {}", inst.sem == Sem::relaxed ? ".relaxed" : ".weak");
      else if (inst.has(Flag::proxy) && f.hasMod(inst, Mod::async))
        requireTarget(inst, "fence.proxy.async", 90, 80);
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
      if (hasProto && (ops[i].kind != OperandKind::Label || (f.labels[ops[i].index].kind != LabelKind::CallPrototype &&
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
          error(inst.loc, "call to '{}' passes {} arguments, the function takes {}", m_.str(callee.name), nArgs,
                callee.params.size());
        else if (nRets != callee.returns.size())
          error(inst.loc, "call to '{}' receives {} return values, the function returns {}", m_.str(callee.name), nRets,
                callee.returns.size());
      } else if (target.kind == OperandKind::Reg) {
        if (!hasProto) error(inst.loc, "indirect 'call' through a register needs a prototype label");
      } else {
        error(inst.loc, "'call' target must be a function or a register");
      }
      return;
    }
    case Opcode::Mma: mma(f, inst); return;
    case Opcode::MmaSp:
    case Opcode::MmaSpOrdered: sparseMma(f, inst); return;
    case Opcode::MultimemLdReduce:
    case Opcode::MultimemSt:
    case Opcode::MultimemRed: multimem(f, inst); return;
    case Opcode::MultimemCpAsyncBulk:
    case Opcode::MultimemCpReduceAsyncBulk:
      // ptxas 13.0 (PTX ISA 9.0) does not know the multimem bulk copies yet.
      error(inst.loc, "'multimem{}' is not part of PTX ISA 9.0", modText(f.modsOf(inst)[0]));
      return;
    case Opcode::Tcgen05Alloc:
    case Opcode::Tcgen05Dealloc:
    case Opcode::Tcgen05RelinquishAllocPermit:
    case Opcode::Tcgen05Ld:
    case Opcode::Tcgen05St:
    case Opcode::Tcgen05Wait:
    case Opcode::Tcgen05Cp:
    case Opcode::Tcgen05Shift:
    case Opcode::Tcgen05Mma:
    case Opcode::Tcgen05MmaSp:
    case Opcode::Tcgen05MmaWs:
    case Opcode::Tcgen05MmaWsSp:
    case Opcode::Tcgen05Commit: tcgen05(f, inst); return;
    case Opcode::WmmaLoad:
    case Opcode::WmmaStore:
    case Opcode::WmmaMma: wmma(f, inst); return;
    case Opcode::WgmmaFence:
    case Opcode::WgmmaCommitGroup:
    case Opcode::WgmmaWaitGroup:
    case Opcode::WgmmaMmaAsync:
    case Opcode::WgmmaMmaAsyncSp: wgmma(f, inst); return;
    case Opcode::CvtPack: convertGates(inst); return;
    case Opcode::Tex:
    case Opcode::Tld4:
    case Opcode::Suld:
    case Opcode::Sust:
    case Opcode::Sured:
    case Opcode::Txq:
    case Opcode::Suq: textureSurface(f, inst); return;
    case Opcode::Ldmatrix:
    case Opcode::Stmatrix: matrixLoadStore(f, inst); return;
    case Opcode::MbarrierInit:
    case Opcode::MbarrierInval:
    case Opcode::MbarrierArrive:
    case Opcode::MbarrierArriveDrop:
    case Opcode::MbarrierExpectTx:
    case Opcode::MbarrierCompleteTx:
    case Opcode::MbarrierTest:
    case Opcode::MbarrierTry:
    case Opcode::MbarrierPendingCount: mbarrier(f, inst); return;
    case Opcode::CpAsync:
    case Opcode::CpAsyncWaitGroup:
    case Opcode::CpAsyncBulk:
    case Opcode::CpAsyncBulkPrefetch:
    case Opcode::CpAsyncBulkTensor:
    case Opcode::CpAsyncBulkPrefetchTensor:
    case Opcode::CpAsyncBulkWaitGroup:
    case Opcode::CpReduceAsyncBulk:
    case Opcode::CpReduceAsyncBulkTensor: asyncCopy(f, inst); return;
    default: return;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Modifier gating and the per-instruction checks of the tensor-core, matrix, barrier and asynchronous-copy families.

void Checker::requireTarget(const Instruction& inst, std::string_view feature, unsigned sm, unsigned ptx) {
  if (sm && sm_ && sm_ < sm)
    error(inst.loc, "'{}' requires .target sm_{} or higher", feature, sm);
  else if (ptx && ptx_ < ptx)
    error(inst.loc, "'{}' requires PTX ISA .version {}.{} or later", feature, ptx / 10, ptx % 10);
}

// cvta and isspacep name the state space of the address; .param (kernel parameters, .param::entry) came with
// PTX ISA 7.7 and sm_70, and isspacep has no .param::func form.
bool Checker::conversionSpace(const Instruction& inst) {
  std::string_view name = mnemonic(inst);
  switch (inst.space) {
    case Space::global:
    case Space::shared:
    case Space::shared_cta:
    case Space::shared_cluster:
    case Space::local:
    case Space::const_: return true;
    case Space::param:
    case Space::param_entry: {
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
      std::string feature =
          g.op == kAnyOp ? std::string(modText(m)) : fmt::format("{}{}", opcodeMnemonic(inst.opcode), modText(m));
      requireTarget(inst, feature, g.sm, g.ptx);
      if (d_.errorCount() != before) return false;
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
  error(inst.loc, "'{}' takes {} operand{} here, not {}", name, expected, expected == 1 ? "" : "s", inst.numOperands);
  return false;
}

bool Checker::addressOperand(const Function& f, const Instruction& inst, unsigned index) {
  if (f.operands[inst.firstOperand + index].kind == OperandKind::Address) return true;
  error(inst.loc, "operand {} of '{}' must be an address in brackets", index + 1, mnemonic(inst));
  return false;
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
    bool surface;  // also a surface geometry
  };
  static constexpr Geometry kGeometries[] = {
      {Mod::d1, 1, true},    {Mod::d2, 2, true},     {Mod::d3, 4, true},    {Mod::a1d, 2, true},    {Mod::a2d, 4, true},
      {Mod::cube, 4, false}, {Mod::acube, 4, false}, {Mod::d2ms, 4, false}, {Mod::a2dms, 4, false},
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
          geometry->coords == 1 ? "one value" : "a vector of",
          geometry->coords == 1 ? "" : std::to_string(geometry->coords), count);
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
      if (c.kind == OperandKind::Reg && c.index < f.registers.size() && !is32BitInteger(f.registers[c.index].type)) {
        error(inst.loc, "surface coordinates of '{}' must be 32-bit integers", name);
        return;
      }
    }
    if (inst.opcode == Opcode::Sured) return;
    unsigned elements = inst.vec ? inst.vec : 1;
    if (elements * typeSize(inst.type()) > 16) {
      error(inst.loc, "'{}' accesses at most 128 bits ({}{} is {} bits)", name,
            inst.vec ? fmt::format(".v{}", inst.vec) : "", typeName(inst.type()), elements * typeSize(inst.type()) * 8);
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
    case RedOp::and_:
    case RedOp::or_:
    case RedOp::xor_: ok = t == Type::b32 || t == Type::b64; break;
    case RedOp::cas: ok = t == Type::b16 || t == Type::b32 || t == Type::b64 || t == Type::b128; break;
    case RedOp::exch: ok = t == Type::b32 || t == Type::b64 || t == Type::b128; break;
    case RedOp::inc:
    case RedOp::dec: ok = t == Type::u32; break;
    case RedOp::add:
      ok = t == Type::u32 || t == Type::s32 || t == Type::u64 || t == Type::f32 || t == Type::f64 || t == Type::f16 ||
           t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;
      break;
    case RedOp::min:
    case RedOp::max:
      ok = t == Type::u32 || t == Type::s32 || t == Type::u64 || t == Type::s64 || t == Type::f16 || t == Type::f16x2 ||
           t == Type::bf16 || t == Type::bf16x2 || (inst.vec && t == Type::f32);
      break;
    default: ok = true;
  }
  if (!ok) {
    error(inst.loc, "'{}' {} does not take the type {}", name, redOpText(inst.redOp), typeName(t));
    return;
  }
  size_t before = d_.errorCount();
  if (inst.vec)
    requireTarget(inst, fmt::format("{} with vector types", name), 90, 81);
  else if (t == Type::b128)
    requireTarget(inst, fmt::format("{}.b128", name), 90, 83);
  else if (t == Type::bf16 || t == Type::bf16x2)
    requireTarget(inst, fmt::format("{}{}", name, typeName(t)), 90, 78);
  else if (t == Type::f16 || t == Type::f16x2)
    requireTarget(inst, fmt::format("{}{}", name, typeName(t)), 70, 63);
  if (d_.errorCount() != before) return;
  unsigned expected = (isAtom ? 3 : 2) + (inst.redOp == RedOp::cas) + inst.has(Flag::cache_hint);
  // ptxas also takes (and ignores) a fourth operand on atom.exch.
  bool exchExtra = inst.redOp == RedOp::exch && inst.numOperands == expected + 1;
  if (!exchExtra && !operandCount(inst, name, expected)) return;
  if (isAtom && !inst.vec) typed(f, inst, 0, t, false, true);
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
      case Mod::min:
      case Mod::max: ok = !mad && !simd; break;
      case Mod::wrap:
      case Mod::clamp:
        ok = shift;
        ++clamps;
        break;
      case Mod::shr7:
      case Mod::shr15:
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
    bool intCmp = inst.cmp == CmpOp::eq || inst.cmp == CmpOp::ne || inst.cmp == CmpOp::lt || inst.cmp == CmpOp::le ||
                  inst.cmp == CmpOp::gt || inst.cmp == CmpOp::ge;
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
    if (minOps == 4)
      operandCount(inst, name, 4);
    else
      error(inst.loc, "'{}' takes 3 or 4 operands, not {}", name, inst.numOperands);
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
          error(inst.loc, "the destination of '{}' takes a selector only when it merges into operand c", name);
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
    bool opOk = bits      ? bitwise
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
    case Opcode::Fma:
    case Opcode::Mad:
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
    case Opcode::Sqrt:
    case Opcode::Rcp:
      if (f32 && !fpRounding && !approx)
        return fail(fmt::format("'{}.f32' requires a rounding modifier or .approx", name));
      if (f64 && approx && !(inst.opcode == Opcode::Rcp && inst.has(Flag::ftz)))
        return fail(
            fmt::format("'{}.f64' does not take .approx{}", name, inst.opcode == Opcode::Rcp ? " without .ftz" : ""));
      if (f64 && !approx && !fpRounding)
        return fail(fmt::format("'{}.f64' requires a rounding modifier (.rn, .rz, .rm or .rp)", name));
      break;
    case Opcode::Rsqrt:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Lg2:
    case Opcode::Ex2:
    case Opcode::Tanh: {
      bool typeOk = inst.opcode == Opcode::Rsqrt ? (f32 || f64)
                    : inst.opcode == Opcode::Ex2 || inst.opcode == Opcode::Tanh
                        ? typeIn({Type::f32, Type::f16, Type::f16x2, Type::bf16, Type::bf16x2})
                        : f32;
      if (!typeOk) return fail(fmt::format("'{}' does not take the type {}", name, typeName(t)));
      if (!approx) return fail(fmt::format("'{}' requires .approx", name));
      break;
    }
    case Opcode::Testp:
    case Opcode::Copysign:
      if (!f32 && !f64) return fail(fmt::format("'{}' takes .f32 or .f64, not {}", name, typeName(t)));
      break;
    case Opcode::Abs:
    case Opcode::Neg:
      if (typeKind(t) == TypeKind::Unsigned || typeKind(t) == TypeKind::Bits)
        return fail(fmt::format("'{}' takes signed integer or floating-point types, not {}", name, typeName(t)));
      break;
    case Opcode::Popc:
    case Opcode::Clz:
    case Opcode::Brev:
    case Opcode::Bfi:
      if (t != Type::b32 && t != Type::b64)
        return fail(fmt::format("'{}' takes .b32 or .b64, not {}", name, typeName(t)));
      break;
    case Opcode::Bfe:
      if (!typeIn({Type::u32, Type::u64, Type::s32, Type::s64}))
        return fail(fmt::format("'bfe' takes .u32, .u64, .s32 or .s64, not {}", typeName(t)));
      break;
    case Opcode::Lop3:
    case Opcode::Prmt:
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
                            inst.sem == Sem::acquire   ? ".acquire"
                            : inst.sem == Sem::release ? ".release"
                                                       : ".acq_rel"));
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
      error(inst.loc,
            "'cvt' with {} is not supported on .target sm_{} (it needs sm_100a/sm_100f or later "
            "architecture- or family-specific targets)",
            typeName(which), sm_);
    else if (ptx_ < 86)
      error(inst.loc, "'cvt' with {} requires PTX ISA .version 8.6 or later", typeName(which));
    return;
  }
  auto fp8x2 = [](Type t) { return t == Type::e4m3x2 || t == Type::e5m2x2; };
  if (fp8x2(dt) || fp8x2(st)) {
    if (sm_ && sm_ < 89)
      error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 requires .target sm_89 or higher");
    else if (sm_ == 89 && ptx_ < 81)
      error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 on sm_89 requires PTX ISA .version 8.1 or later");
    else if (ptx_ < 78)
      error(inst.loc, "'cvt' with .e4m3x2/.e5m2x2 requires PTX ISA .version 7.8 or later");
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

}  // namespace check_detail

using check_detail::Checker;

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
    unsigned digit = c >= '0' && c <= '9'   ? unsigned(c - '0')
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
      case 100:
      case 101:
      case 103:
      case 110:
      case 120:
      case 121: return 88;
      default: return 0;
    }
  }
  if (archSpecific) {
    switch (sm) {
      case 90: return 80;
      case 100:
      case 101: return 86;
      case 103: return 88;
      case 110: return 90;
      case 120: return 87;
      case 121: return 88;
      default: return 0;
    }
  }
  switch (sm) {
    case 10:
    case 11: return 10;
    case 12:
    case 13: return 12;
    case 20:
    case 21: return 20;
    case 30: return 30;
    case 35: return 31;
    case 32:
    case 50: return 40;
    case 37:
    case 52: return 41;
    case 53: return 42;
    case 60:
    case 61:
    case 62: return 50;
    case 70: return 60;
    case 72: return 61;
    case 75: return 63;
    case 80: return 70;
    case 86: return 71;
    case 87: return 74;
    case 88: return 90;
    case 89:
    case 90: return 78;
    case 100:
    case 101: return 86;
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

FrontEndResult parseAndCheck(std::string_view text, std::string_view fileName, const CheckOptions& options,
                             const KeepEntryBody& keep, KeptBodies& kept) {
  Diagnostics diags(fileName);
  ParseOptions popt;
  popt.fileName = fileName;
  popt.names = &kept.names;
  popt.keepText = &kept.text;
  // Each .entry body is checked as soon as it is parsed, under the module-level state (.version, .target) seen
  // so far; one that passes with no diagnostic at all leaves the module. The module-level checks and the other
  // functions are checked at the end, as checkModule does, so the log is the one checkModule gives.
  Diagnostics bodyDiags(fileName);
  std::optional<check_detail::Checker> bodyChecker;
  auto moduleState = [](const Module& m) {
    return std::tuple(m.versionMajor, m.versionMinor, m.targets.size(), m.addressSize, m.mapF64ToF32, m.debug);
  };
  decltype(moduleState(Module{})) stateChecked{};
  std::vector<bool> dropped;
  popt.entryBodyParsed = [&](Module& m, uint32_t function, const BodyPlace& place) {
    if (!bodyChecker) {
      bodyChecker.emplace(m, bodyDiags, options);
      bodyChecker->moduleLevel();
      stateChecked = moduleState(m);
    }
    if (!bodyDiags.all().empty() || bodyDiags.hasErrors()) return false;
    bodyChecker->function(m.functions[function]);
    if (!bodyDiags.all().empty() || bodyDiags.hasErrors() || !keep(m, function)) return false;
    if (dropped.size() <= function) dropped.resize(std::max<size_t>(function + 1, dropped.size() * 2));
    dropped[function] = true;
    kept.bodies.emplace_back(function, place);
    return true;
  };
  std::unique_ptr<Module> module = parseModule(text, diags, popt);
  if (!kept.bodies.empty() && stateChecked != moduleState(*module)) {
    // A .version or .target after the first function: check everything as checkModule does.
    kept = KeptBodies{};
    return parseAndCheck(text, fileName, options);
  }
  if (!diags.hasErrors()) check_detail::Checker(*module, diags, options).run(&dropped);
  FrontEndResult r;
  r.ok = !diags.hasErrors();
  r.log = diags.format();
  if (r.ok)
    r.module = std::move(module);
  else
    kept = KeptBodies{};
  return r;
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
