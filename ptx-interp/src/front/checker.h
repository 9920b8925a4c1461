// The PTX checker's internal interface: the Checker class and the helpers its parts share. checker.cpp checks
// modules, functions and instructions in general (with the version gates of gates.def); check_matrix.cpp checks the
// warp-level and tensor-core matrix instructions (with the shapes of mma_forms.def); check_async.cpp the
// asynchronous copies and mbarrier.
#pragma once

#include "ptx/check.h"

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ptx/parse.h"

namespace ptx::check_detail {

// Whether a modifier is an mma shape of mma_forms.def (check_matrix.cpp).
bool isMmaShape(Mod m);

inline std::string_view redOpText(RedOp op) {
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

inline bool allowsSpecialRegs(Opcode op) { return op == Opcode::Mov || op == Opcode::Cvt; }

// Register/instruction type compatibility (PTX ISA "Operand type checking").
// wider: a register wider than the instruction type is allowed (ld/st/cvt data operands).
inline bool compatible(Type inst, Type reg, bool wider) {
  if (inst == reg) return true;
  TypeKind ik = typeKind(inst), rk = typeKind(reg);
  if (ik == TypeKind::Pred || rk == TypeKind::Pred) return false;
  unsigned is = typeSize(inst), rs = typeSize(reg);
  if (is == 0 || rs == 0) return true;  // sub-byte and opaque types: not checked here
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
  // The whole module; `checkedBodies` (by function index): functions checked already (parseAndCheck's kept bodies).
  bool run(const std::vector<bool>* checkedBodies = nullptr);
  void moduleLevel();  // .version, .target, .address_size, the variables; sets what function() checks against
  void function(const Function& f);

 private:
  void entryParamSpace(const Function& f);
  template <typename... Args> void error(SourceLoc at, fmt::format_string<Args...> f, Args&&... args) {
    d_.error(at.line, at.col, fmt::format(f, std::forward<Args>(args)...));
  }
  void instruction(const Function& f, const Instruction& inst);
  // Checks a register source/destination operand against a type; returns false (after an error) on mismatch.
  bool typed(const Function& f, const Instruction& inst, unsigned index, Type type, bool wider, bool isDest);
  std::string_view mnemonic(const Instruction& inst) const { return opcodeMnemonic(inst.opcode); }
  void requireTarget(const Instruction& inst, std::string_view feature, unsigned sm, unsigned ptx);
  bool modGates(const Function& f, const Instruction& inst);
  bool conversionSpace(const Instruction& inst);
  bool requireMods(const Function& f, const Instruction& inst, std::string_view name, std::initializer_list<Mod> mods);
  bool operandCount(const Instruction& inst, std::string_view name, unsigned expected);
  bool addressOperand(const Function& f, const Instruction& inst, unsigned index);
  template <typename Pred>
  bool vectorRegs(const Function& f, const Instruction& inst, unsigned index, std::string_view what, Pred ok);
  template <typename Pred> bool regOperand(const Function& f, const Instruction& inst, unsigned index,
                                           std::string_view what, Pred ok, bool allowImm, bool allowSink);
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
  bool archSpecific_ = false;  // an "a" or "f" target
  bool archOnly_ = false;      // an "a" target (features outside the family)
  unsigned ptx_ = 0;
};

// Number of elements of a `{...}` operand; 0 for anything else.
inline unsigned vectorSize(const Operand& op) { return op.kind == OperandKind::Vector ? unsigned(op.value) : 0; }

// Every element of vector operand `index` is a register whose type fits `ok`.
template <typename Pred>
bool Checker::vectorRegs(const Function& f, const Instruction& inst, unsigned index, std::string_view what, Pred ok) {
  const Operand& v = f.operands[inst.firstOperand + index];
  for (unsigned i = 0; i < vectorSize(v); ++i) {
    const Operand& e = f.elems[v.index + i];
    if (e.kind != OperandKind::Reg || e.index >= f.registers.size()) continue;  // sinks, immediates: elsewhere
    Type t = f.registers[e.index].type;
    if (!ok(t)) {
      error(inst.loc, "element {} of operand {} of '{}' has type {}; expected {}", i + 1, index + 1, mnemonic(inst),
            typeName(t), what);
      return false;
    }
  }
  return true;
}

inline bool is32BitInteger(Type t) { return typeSize(t) == 4 && typeKind(t) != TypeKind::Float; }

inline bool is64BitInteger(Type t) { return typeSize(t) == 8 && typeKind(t) != TypeKind::Float; }

// Register operand `index` (a scalar) has a type that fits `ok`.
template <typename Pred> bool Checker::regOperand(const Function& f, const Instruction& inst, unsigned index,
                                                  std::string_view what, Pred ok, bool allowImm, bool allowSink) {
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

inline bool isSharedSpace(Space s) { return s == Space::shared || s == Space::shared_cta; }

}  // namespace ptx::check_detail
