// The PTX front end's intermediate representation: what the parser builds, the checker validates, the printer
// writes back as PTX, and the interpreter lowers.
//
// Plain data: vectors of small structs that refer to each other by 32-bit indices; names are interned StrIds.
// A Module owns everything. Nothing here allocates per instruction except the per-function pools.
//
// Stability contract for consumers (the interpreter): enumerators and fields are only ever added, never renamed
// or renumbered in meaning. Opcode, Mod, Type and SpecialReg come from the .def tables next to this header.
//
// Quick map:
//   Module        .version/.target/.address_size, globals (Variable), functions (Function), .file table,
//                 debug sections.
//   Function      an .entry or .func: params, returns, performance directives, and for definitions a body:
//                 registers (Register), local variables (Variable, .local/.shared/.param declared inside),
//                 labels (Label), a flat vector<Instruction>, and the operand / modifier pools they index.
//   Instruction   opcode + decoded modifiers (types, rounding, comparison, space, scope, ...) + the raw modifier
//                 list in source order + guard predicate + operand range + source position.
//   Operand       16 bytes: register, immediate (exact bits), symbol+offset, address, vector/list, label,
//                 special register, sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptx {

// ---------------------------------------------------------------------------------------------------------------
// Enumerations generated from the .def tables.

enum class Type : uint8_t {
  none = 0,
#define PTX_TYPE(e, tok, size, kind) e,
#include "ptx/types.def"
  count_
};

enum class TypeKind : uint8_t { None, Pred, Bits, Unsigned, Signed, Float, Opaque };

std::string_view typeName(Type t);  // ".u32"; "" for Type::none
unsigned typeSize(Type t);          // bytes; 0 for none and sub-byte element types
TypeKind typeKind(Type t);

enum class Opcode : uint16_t {
#define PTX_OPCODE(e, mnemonic, words, cls) e,
#include "ptx/opcodes.def"
  count_
};

enum class OpClass : uint8_t {
  Arith,
  Compare,
  Logic,
  Move,
  Convert,
  Memory,
  AsyncCopy,
  Texture,
  Control,
  Sync,
  Atomic,
  Warp,
  Matrix,
  Video,
  Misc
};

std::string_view opcodeMnemonic(Opcode op);  // first word as written: "add", "cp", "mbarrier"
std::string_view opcodeName(Opcode op);      // enumerator name: "CpAsyncBulk"
OpClass opcodeClass(Opcode op);

enum class SpecialReg : uint8_t {
#define PTX_SREG(e, name, size, comps) e,
#include "ptx/sregs.def"
  count_
};

std::string_view specialRegName(SpecialReg r);  // "%tid"
unsigned specialRegSize(SpecialReg r);          // bytes of one component
bool specialRegHasComponents(SpecialReg r);     // %tid.x style

// Categories of modifiers; each modifier token belongs to one (see modifiers.def).
enum class ModCat : uint8_t {
  Other,
  Type,
  Rounding,
  CmpOp,
  MulMode,
  RedOp,
  Space,
  Vec,
  CacheOp,
  Eviction,
  Scope,
  Sem,
  ShflMode,
  VoteMode,
  Flag
};

enum class Rounding : uint8_t { none, rn, rz, rm, rp, rna, rs, rni, rzi, rmi, rpi };
// lo/hi here are the unsigned comparisons "lower"/"higher" (setp.lo.u32).
enum class CmpOp : uint8_t { none, eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
enum class MulMode : uint8_t { none, lo, hi, wide };
enum class BoolOp : uint8_t { none, and_, or_, xor_ };
enum class RedOp : uint8_t { none, and_, or_, xor_, cas, exch, add, inc, dec, min, max, popc };
// State spaces of instructions and of variables. none = generic addressing (no space modifier).
enum class Space : uint8_t {
  none,
  global,
  shared,
  shared_cta,
  shared_cluster,
  local,
  const_,
  param,
  param_entry,
  param_func,
  tex,
  reg,
  sreg
};
enum class CacheOp : uint8_t { none, ca, cg, cs, lu, cv, wb, wt };
enum class Eviction : uint8_t {
  none,
  L1_evict_normal,
  L1_evict_unchanged,
  L1_evict_first,
  L1_evict_last,
  L1_no_allocate,
  L2_evict_normal,
  L2_evict_first,
  L2_evict_last,
  L2_evict_unchanged,
  evict_normal,
  evict_first,
  evict_last,
  evict_unchanged,
  no_allocate
};
enum class Scope : uint8_t { none, cta, cluster, gpu, sys };
enum class Sem : uint8_t { none, weak, relaxed, acquire, release, acq_rel, sc, volatile_, mmio };
enum class Vec : uint8_t { none, v2 = 2, v4 = 4, v8 = 8 };
enum class ShflMode : uint8_t { none, up, down, bfly, idx };
enum class VoteMode : uint8_t { none, all, any, uni, ballot };

// Boolean modifiers decoded into Instruction::flags (bit numbers).
enum class Flag : uint8_t {
  ftz,
  sat,
  satfinite,
  approx,
  full,
  relu,
  NaN,
  xorsign,
  abs,
  shiftamt,
  uni,
  aligned,
  sync,
  nc,
  cc,
  to,
  trans,
  noftz,
  cache_hint,
  L2_64B,
  L2_128B,
  L2_256B,
  unified,
  oob,
  wrap,
  clamp,
  proxy,
  async,
  parity,
  noComplete,
  expect_tx,
  count_
};
static_assert(static_cast<unsigned>(Flag::count_) <= 64, "Instruction::flags is 64 bits");

// Other categories carry no typed value; their enumerators exist so that the .def expansion is uniform.
enum class Other : uint8_t { none };

enum class Mod : uint16_t {
#define PTX_TYPE(e, tok, size, kind) type_##e,
#include "ptx/types.def"
#define PTX_MOD(e, tok, cat, val) e,
#include "ptx/modifiers.def"
  count_
};

std::string_view modText(Mod m);  // ".rn"
ModCat modCategory(Mod m);
uint8_t modValue(Mod m);  // the category's enumerator value (Flag bit number, Vec width)
Type modType(Mod m);      // for ModCat::Type, else Type::none

// ---------------------------------------------------------------------------------------------------------------
// Strings.

using StrId = uint32_t;
inline constexpr StrId kNoStr = 0xffffffffu;

// Interns names. Ids are dense from 0 in order of first appearance.
class StringTable {
 public:
  StrId intern(std::string_view s);
  StrId find(std::string_view s) const;  // kNoStr when absent
  std::string_view str(StrId id) const {
    const Entry& e = entries_[id];
    return std::string_view(chars_.data() + e.offset, e.length);
  }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint32_t offset;
    uint32_t length;
    uint32_t hash;
  };
  void grow();
  std::vector<char> chars_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // open addressing; value = id + 1, 0 = empty
};

// ---------------------------------------------------------------------------------------------------------------
// Source positions.

struct SourceLoc {
  uint32_t line = 0;  // 1-based; 0 = unknown
  uint32_t col = 0;   // 1-based
};

// ---------------------------------------------------------------------------------------------------------------
// Operands.

enum class OperandKind : uint8_t {
  None,
  Reg,      // index = register id; sel = component/byte selector (see Sel)
  RegPair,  // `%r|%p` (shfl, setp, lop3, elect, ... with a predicate second destination): index = first
            //   (kNoIndex for the sink in `_|%p`), value = second
  Imm,      // integer immediate: value = bits (two's complement, as written, 64-bit)
  FImm,     // floating immediate: value = exact bits; immBits = 32 (0f...) or 64 (0d... or decimal literal)
  Symbol,   // symKind/index name a variable, parameter or function; value = byte offset added (sym+8)
  Address,  // [base+offset]: base is a register (symKind == None, index = reg id), a symbol
            //   (symKind != None), or nothing (absolute, flags & kAddrAbsolute); value = offset
  Vector,   // {a, b, ...}: index = first element in Function::elems, value = count
  List,     // (a, b, ...) of call: same encoding as Vector
  Bracket,  // [a, b, ...] with several elements (tex/surface tuples): same encoding as Vector
  Label,    // index = Function::labels index
  Special,  // index = SpecialReg; sel = component
  Sink,     // `_`
};

enum class SymKind : uint8_t {
  None,
  Global,    // Module::globals[index]
  Local,     // Function::locals[index] of the function the operand is in
  Param,     // Function::params[index]
  Return,    // Function::returns[index]
  Function,  // Module::functions[index]
};

// Operand::flags bits.
inline constexpr uint8_t kOperandNegate = 1;    // `!%p`
inline constexpr uint8_t kAddrAbsolute = 2;     // [imm]
inline constexpr uint8_t kImmNegZero = 4;       // reserved
inline constexpr uint8_t kVectorPredicate = 8;  // Vector `{...}|%p` (tex, tld4): elems[index + value] is the
                                                //   predicate register operand (not counted in value)
inline constexpr uint8_t kOperandMinus = 16;    // `-%r` (video instructions' negated source)

// Register selectors: `%tid.x`, `%v.r`, video `%r1.b0`, `%r1.h1`, SIMD `%r1.b3210`, `%r1.h10`.
// Encoding (16 bits): kind in bits 15..14, digit count - 1 in bits 13..12, up to four 3-bit digits in 11..0
// (first written digit in the highest used position).
enum class SelKind : uint8_t { None, Comp, Byte, Half };
// Comp digits: 0..3 = x y z w, 4..7 = r g b a.
inline constexpr uint16_t makeSel(SelKind k, unsigned count, unsigned digits) {
  return k == SelKind::None
             ? 0
             : static_cast<uint16_t>((static_cast<unsigned>(k) << 14) | ((count - 1) << 12) | (digits & 0xfff));
}
inline constexpr SelKind selKind(uint16_t sel) { return static_cast<SelKind>(sel >> 14); }
inline constexpr unsigned selCount(uint16_t sel) { return sel == 0 ? 0 : ((sel >> 12) & 3) + 1; }
inline constexpr unsigned selDigit(uint16_t sel, unsigned i) {  // i-th written digit
  return (sel >> (3 * (selCount(sel) - 1 - i))) & 7;
}
// %tid.x -> component 0 ... .w -> 3 (rgba map to 0..3 too).
inline constexpr unsigned selComponent(uint16_t sel) { return selDigit(sel, 0) & 3; }

inline constexpr uint32_t kNoIndex = 0xffffffffu;

struct Operand {
  OperandKind kind = OperandKind::None;
  SymKind symKind = SymKind::None;
  uint8_t flags = 0;
  uint8_t immBits = 0;  // FImm: 32 or 64
  uint16_t sel = 0;     // Reg/Special selector
  uint16_t pad_ = 0;
  uint32_t index = kNoIndex;
  int64_t value = 0;

  bool negated() const { return flags & kOperandNegate; }
};
static_assert(sizeof(Operand) <= 24, "keep Operand small");

// ---------------------------------------------------------------------------------------------------------------
// Instructions.

struct Instruction {
  Opcode opcode{};
  // Decoded modifiers. types[] are the type modifiers in written order (cvt.f32.s32: f32 then s32).
  uint8_t numTypes = 0;
  Type types[4] = {};
  Rounding rounding = Rounding::none;
  CmpOp cmp = CmpOp::none;
  BoolOp boolOp = BoolOp::none;
  RedOp redOp = RedOp::none;
  MulMode mulMode = MulMode::none;
  Space space = Space::none;   // first state-space modifier
  Space space2 = Space::none;  // second one (cp.async.bulk.shared::cluster.global: dst then src)
  uint8_t vec = 0;             // 0 (scalar), 2, 4, 8
  CacheOp cacheOp = CacheOp::none;
  Eviction eviction = Eviction::none;
  Scope scope = Scope::none;
  Sem sem = Sem::none;
  ShflMode shfl = ShflMode::none;
  VoteMode vote = VoteMode::none;
  bool guardNegated = false;
  uint32_t guard = kNoIndex;  // predicate register id, or kNoIndex
  uint64_t flags = 0;         // bit (1 << Flag::x)
  // Raw modifiers in source order (everything after the mnemonic): Function::mods[modFirst, +modCount).
  uint32_t modFirst = 0;
  uint16_t modCount = 0;
  uint16_t numOperands = 0;
  uint32_t firstOperand = 0;  // Function::operands[firstOperand, +numOperands)
  uint32_t debugLoc = 0;      // Module::debugLocs index of the active .loc (0 = none)
  SourceLoc loc;

  Type type() const { return numTypes ? types[0] : Type::none; }
  bool has(Flag f) const { return (flags >> static_cast<unsigned>(f)) & 1; }
};

// ---------------------------------------------------------------------------------------------------------------
// Declarations.

enum class Linkage : uint8_t { none, extern_, visible, weak, common };

// One `field = value` of a .texref/.samplerref/.surfref initializer ({ filter_mode = linear, width = 16 }).
struct OpaqueField {
  StrId field = kNoStr;
  StrId word = kNoStr;  // value when it is a name (linear, clamp_to_edge, ...)
  int64_t value = 0;    // value when it is an integer (word == kNoStr)
};

// One address-of-symbol inside a variable's initializer.
struct Relocation {
  uint64_t offset = 0;  // byte offset in the variable
  SymKind symKind = SymKind::Global;
  uint8_t size = 8;      // bytes written (element size)
  bool generic = false;  // generic(sym): the generic address, else the state-space address
  bool isMask = false;   // `0xFF00(sym+addend)`: the element receives (address & maskValue) shifted right
                         //   so that the mask's lowest set bit becomes bit 0
  uint32_t index = 0;    // symbol index (Module::globals or Module::functions)
  int64_t addend = 0;
  uint64_t maskValue = 0;  // for isMask
};

struct Variable {
  StrId name = kNoStr;
  Space space = Space::none;
  Type type = Type::none;
  Linkage linkage = Linkage::none;
  uint8_t vec = 0;  // .v2/.v4/.v8 element vectors
  bool hasInit = false;
  bool ptr = false;                     // kernel parameter with .ptr
  bool managed = false;                 // .attribute(.managed)
  Space ptrSpace = Space::none;         // .ptr.global etc.
  uint32_t align = 0;                   // .align N (0 = natural)
  uint32_t ptrAlign = 0;                // .ptr ... .align N
  std::vector<uint64_t> dims;           // array dimensions in order; 0 for an unsized first dimension `[]`
  uint64_t size = 0;                    // total bytes (unsized arrays: from the initializer, else 0)
  std::vector<uint8_t> init;            // initializer bytes (size bytes) when hasInit
  std::vector<Relocation> relocs;       // symbol addresses to patch into init
  std::vector<OpaqueField> opaqueInit;  // .texref/.samplerref/.surfref initializer (hasInit set)
  SourceLoc loc;
  // For variables inside a function body: the scope and the instruction index where declared.
  uint32_t scope = 0;
  uint32_t position = 0;

  uint32_t elementSize() const { return typeSize(type) * (vec ? vec : 1); }
};

struct Register {
  StrId name = kNoStr;      // the whole name for plain declarations; the prefix ("%r") for ranges
  int32_t rangeIndex = -1;  // N for %rN from a %r<M> declaration, else -1
  Type type = Type::none;
  uint8_t vec = 0;    // .v2/.v4 vector registers
  uint32_t decl = 0;  // Function::regDecls index
};

// One `.reg` statement (kept for printing and for scopes).
struct RegDecl {
  StrId name = kNoStr;  // plain name or range prefix
  Type type = Type::none;
  uint8_t vec = 0;
  bool isRange = false;   // %r<count>
  uint32_t count = 1;     // registers declared
  uint32_t firstReg = 0;  // Function::registers index of the first one
  uint32_t scope = 0;
  uint32_t position = 0;  // instruction index where declared
  SourceLoc loc;
};

enum class LabelKind : uint8_t { Code, BranchTargets, CallTargets, CallPrototype };

struct Label {
  StrId name = kNoStr;
  LabelKind kind = LabelKind::Code;
  bool defined = false;
  uint32_t target = kNoIndex;  // Code: instruction index the label precedes (== instructions.size() at end)
  // BranchTargets: Function::labelRefs[listFirst, +listCount) are Label ids.
  // CallTargets: Function::labelRefs entries are Module::functions indices.
  // CallPrototype: Function::protos[listFirst].
  uint32_t listFirst = 0;
  uint32_t listCount = 0;
  uint32_t scope = 0;
  SourceLoc loc;
};

// A parameter of a function, a return value, or of a call prototype.
using Param = Variable;

struct Prototype {
  std::vector<Param> returns;
  std::vector<Param> params;
  bool noreturn = false;
};

// A `{ ... }` block inside a body. Scope 0 is the function body itself.
struct BlockScope {
  uint32_t parent = 0;
  uint32_t begin = 0;  // instruction index at '{'
  uint32_t end = 0;    // instruction index at '}'
};

// .pragma inside a body, attached to a position in the instruction list.
struct BodyPragma {
  uint32_t position = 0;
  uint32_t scope = 0;
  StrId text = kNoStr;  // contents of the string, without quotes
  SourceLoc loc;
};

struct Function {
  StrId name = kNoStr;
  bool isEntry = false;
  bool hasBody = false;  // false for prototypes (`.extern .func f(...);` or `.func f(...);`)
  bool noreturn = false;
  Linkage linkage = Linkage::none;
  std::vector<Param> returns;
  std::vector<Param> params;
  // Performance directives (0 = absent).
  uint32_t maxntid[3] = {0, 0, 0};
  uint32_t reqntid[3] = {0, 0, 0};
  uint32_t reqnctapercluster[3] = {0, 0, 0};
  uint32_t minnctapersm = 0;
  uint32_t maxnctapersm = 0;
  uint32_t maxnreg = 0;
  uint32_t maxclusterrank = 0;
  bool explicitcluster = false;
  // .blocksareclusters (PTX 9.0, nvcc's __block_size__): a launch's grid counts clusters and each block of the
  // launch is a cluster of .reqnctapercluster CTAs of .reqntid threads
  bool blocksareclusters = false;
  uint8_t numMaxntid = 0, numReqntid = 0, numReqnctapercluster = 0;  // how many dims were written
  std::vector<StrId> pragmas;                                        // .pragma strings between the header and the body
  SourceLoc loc;

  // Body.
  std::vector<Register> registers;
  std::vector<RegDecl> regDecls;
  std::vector<Variable> locals;  // .local/.shared/.param/.const/.global declared in the body
  std::vector<Label> labels;
  std::vector<Instruction> instructions;
  std::vector<Operand> operands;    // instruction operand pool
  std::vector<Operand> elems;       // vector/list/bracket element pool
  std::vector<Mod> mods;            // raw modifier pool
  std::vector<uint32_t> labelRefs;  // .branchtargets / .calltargets lists
  std::vector<Prototype> protos;    // .callprototype
  std::vector<BlockScope> scopes;   // scopes[0] is the body
  std::vector<BodyPragma> bodyPragmas;

  const Operand* operandsOf(const Instruction& i) const { return operands.data() + i.firstOperand; }
  const Mod* modsOf(const Instruction& i) const { return mods.data() + i.modFirst; }
  bool hasMod(const Instruction& i, Mod m) const {
    for (uint32_t k = 0; k < i.modCount; ++k)
      if (mods[i.modFirst + k] == m) return true;
    return false;
  }
};

// .loc file line column [, function_name label [+ off]] [, inlined_at file line column]
struct DebugLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t column = 0;
  StrId functionName = kNoStr;  // label in .debug_str
  int64_t functionNameOffset = 0;
  uint32_t inlinedAt = 0;  // Module::debugLocs index of the call site (0 = none)
};

struct FileEntry {
  uint32_t number = 0;
  StrId path = kNoStr;
  bool hasTimestamp = false;
  uint64_t timestamp = 0;
  uint64_t size = 0;
};

// One item of a `.section` body: a label or a data directive (.b8/.b16/.b32/.b64 values).
struct SectionItem {
  bool isLabel = false;
  StrId label = kNoStr;    // isLabel
  Type type = Type::none;  // data
  // values: pairs (symbol or kNoStr, integer) meaning `sym + integer`, or just the integer
  std::vector<std::pair<StrId, int64_t>> values;
};

struct Section {
  StrId name = kNoStr;  // ".debug_info"
  std::vector<SectionItem> items;
};

// Module-level items in source order, for printing.
enum class TopKind : uint8_t { Global, Function, File, Section, Pragma, Alias };
struct TopItem {
  TopKind kind;
  uint32_t index;
};

struct Target {
  StrId name = kNoStr;          // "sm_80", "sm_90a"
  unsigned smVersion = 0;       // 80 for sm_80, 90 for sm_90a, 0 for unknown
  bool archSpecific = false;    // "a" suffix
  bool familySpecific = false;  // "f" suffix
};

struct Module {
  unsigned versionMajor = 0, versionMinor = 0;
  std::vector<Target> targets;  // .target sm_80, texmode_..., debug ...
  bool texmodeIndependent = false;
  bool texmodeUnified = false;
  bool mapF64ToF32 = false;
  bool debug = false;
  std::vector<StrId> targetOptions;  // everything after the sm_XX in .target, as written, for printing
  unsigned addressSize = 64;
  bool hasAddressSize = false;

  StringTable strings;
  std::vector<Variable> globals;
  std::vector<Function> functions;
  std::vector<FileEntry> files;
  std::vector<DebugLoc> debugLocs;  // [0] is a dummy "no location"
  std::vector<Section> sections;
  std::vector<StrId> pragmas;                          // module-level .pragma
  std::vector<std::pair<uint32_t, uint32_t>> aliases;  // .alias: (alias, aliasee) Module::functions indices
  std::vector<TopItem> order;

  std::string_view str(StrId id) const { return id == kNoStr ? std::string_view() : strings.str(id); }
  // Index of a global or function by name; kNoIndex when absent.
  uint32_t findGlobal(std::string_view name) const;
  uint32_t findFunction(std::string_view name) const;
};

}  // namespace ptx
