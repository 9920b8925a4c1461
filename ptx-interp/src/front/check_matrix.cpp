// The matrix instructions: mma (dense, sparse, .kind forms), ldmatrix/stmatrix/movmatrix, wmma, wgmma and tcgen05.
#include "front/checker.h"

namespace ptx::check_detail {

// Dense mma.sync shapes: fragment sizes (32-bit registers, or f64 registers for .f64) and where they appeared.
enum class MmaKind : uint8_t { F16, BF16, TF32, F64, I8, I4, B1, F8 };
struct MmaForm {
  Mod shape;
  MmaKind kind;
  uint8_t a, b;      // registers in the A and B fragments
  uint8_t c32, c16;  // C/D registers with a 32-bit (f32, s32) / 16-bit (f16) accumulator; 0 = not allowed
  uint16_t sm;
  uint8_t ptx;
};
constexpr MmaForm kMmaForms[] = {
#define PTX_MMA_FORM(shape, kind, a, b, c32, c16, sm, ptx) {Mod::shape, MmaKind::kind, a, b, c32, c16, sm, ptx},
#include "front/mma_forms.def"
#undef PTX_MMA_FORM
};

// Sparse mma (mma.sp, mma.sp::ordered_metadata): A holds half of K's elements; e is the 32-bit metadata register
// and f the sparsity selector, a constant whose range depends on the shape and type (checked against ptxas).
struct SparseMmaForm {
  Mod shape;
  MmaKind kind;
  uint8_t a, b;      // registers in the A and B fragments
  uint8_t c32, c16;  // C/D registers with a 32-bit / 16-bit accumulator; 0 = not allowed
  uint8_t maxSelector;
};
constexpr SparseMmaForm kSparseMmaForms[] = {
#define PTX_SPARSE_MMA_FORM(shape, kind, a, b, c32, c16, selector) \
  {Mod::shape, MmaKind::kind, a, b, c32, c16, selector},
#include "front/mma_forms.def"
#undef PTX_SPARSE_MMA_FORM
};

bool isMmaShape(Mod m) {
  for (const MmaForm& form : kMmaForms)
    if (form.shape == m) return true;
  return false;
}

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
  if (!f8f6f4 && !scaled) return true;  // no .kind: the plain forms
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
                 : mxf4   ? scaleVec == Mod::scale_vec_2X
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
      error(inst.loc, "operand {} ({}) of '{}' must be a vector of {} registers", i + 1, names[i], name, want[i]);
      return false;
    }
    if (!vectorRegs(f, inst, i, "32-bit registers", [](Type t) { return typeSize(t) == 4; })) return false;
  }
  // a register of `bytes` bytes, alone or in braces (nvcc writes CUTLASS's `{%r}`; ptxas takes both)
  auto scalarReg = [&](const Operand& o, unsigned bytes) {
    const Operand& e = vectorSize(o) == 1 ? f.elems[o.index] : o;
    return e.kind == OperandKind::Reg && e.index < f.registers.size() && !f.registers[e.index].vec &&
           typeSize(f.registers[e.index].type) == bytes;
  };
  if (sparse) {
    if (!scalarReg(ops[4], 4)) {
      error(inst.loc, "operand 5 of '{}' must be a 32-bit register (metadata)", name);
      return false;
    }
    if (ops[5].kind != OperandKind::Imm || ops[5].value != 0) {
      error(inst.loc, "operand 6 (sparsity selector) of '{}' with this .kind must be 0", name);
      return false;
    }
  }
  if (!scaled) return false;
  // Scale factors: a 32-bit register (alone or in braces), then {byte-id, thread-id}, each a constant or a 16-bit
  // register (what nvcc writes for CUTLASS's inline assembly; ptxas takes both, and no 32-bit register): the thread
  // is 0..1 for A and 0..3 for B; the byte any of the four with one scale per row (1X), 0 or 2 with two (2X), 0 with
  // four (4X). Constants are checked here; a register's value at run time (isa/matrix.cpp).
  for (unsigned m = 0; m < 2; ++m) {
    int64_t maxThread = m == 0 ? 1 : 3;
    unsigned reg = base + 2 * m, sel = reg + 1;
    const Operand& scale = ops[reg];
    if (!scalarReg(scale, 4)) {
      error(inst.loc, "operand {} of '{}' must be a 32-bit register (scale factors)", reg + 1, name);
      return false;
    }
    const Operand& v = ops[sel];
    auto selectorOk = [&](const Operand& e) { return e.kind == OperandKind::Imm || scalarReg(e, 2); };
    bool shapeOk = vectorSize(v) == 2 && selectorOk(f.elems[v.index]) && selectorOk(f.elems[v.index + 1]);
    if (!shapeOk) {
      error(inst.loc, "operand {} of '{}' must be {{byte-id, thread-id}}, integer constants or 16-bit registers",
            sel + 1, name);
      return false;
    }
    if (f.elems[v.index].kind != OperandKind::Imm || f.elems[v.index + 1].kind != OperandKind::Imm) continue;
    int64_t byteId = f.elems[v.index].value, threadId = f.elems[v.index + 1].value;
    bool byteOk = scaleVec == Mod::scale_vec_1X   ? byteId >= 0 && byteId <= 3
                  : scaleVec == Mod::scale_vec_2X ? byteId == 0 || byteId == 2
                                                  : byteId == 0;
    if (!byteOk || threadId < 0 || threadId > maxThread) {
      error(inst.loc, "operand {} of '{}' {}: byte-id must be {} and thread-id 0 to {}", sel + 1, name,
            modText(scaleVec),
            scaleVec == Mod::scale_vec_1X   ? "0 to 3"
            : scaleVec == Mod::scale_vec_2X ? "0 or 2"
                                            : "0",
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
  // f16 multiplicands: the accumulators are both .f16 or both .f32, except that m8n8k4 also takes .f32 results
  // from .f16 addends (ptxas: ".dtype must be ... when .ctype is ...").
  if (kind == MmaKind::F16 && dt != ct && !(shape == Mod::m8n8k4 && dt == Type::f32)) {
    error(inst.loc, "'mma{}' with .f16 multiplicands needs .dtype {} when .ctype is {}", modText(shape), typeName(ct),
          typeName(ct));
    return;
  }
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
      error(inst.loc, "operand {} ({}) of 'mma{}{}' must be a vector of {} registers", i + 1, names[i], modText(shape),
            typeName(at), want[i]);
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
    error(inst.loc, "'{}' with {} multiplicands does not support the accumulator types {}/{}", name, typeName(at),
          typeName(dt), typeName(ct));
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
    metaOk =
        meta.index < f.registers.size() && !f.registers[meta.index].vec && typeSize(f.registers[meta.index].type) == 4;
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
      error(inst.loc, "operand 6 (sparsity selector) of '{}{}{}' must be 0", name, modText(shape), typeName(at));
    else
      error(inst.loc, "operand 6 (sparsity selector) of '{}{}{}' must be a constant from 0 to {}", name, modText(shape),
            typeName(at), form->maxSelector);
  }
}

// The shapes ldmatrix and stmatrix take (measured against ptxas): .m8n8 .b16 in both, optionally transposed; the
// sm_100a/sm_120a 8-bit forms: ldmatrix .m8n16 (never transposed) and .m16n16 (always; two registers per matrix,
// at most two matrices) and stmatrix .m16n8 (always transposed).
namespace {
struct MatrixMoveShape {
  Mod shape;
  bool load, store;
  bool transposes, mustTranspose;
  unsigned registersPerMatrix, maxMatrices;
  bool b16, b8, unpacks;  // the types taken: .b16; .b8; .b8x16 with .b6x16_p32 or .b4x16_p64
};
constexpr MatrixMoveShape kMatrixMoveShapes[] = {
    {Mod::m8n8, true, true, true, false, 1, 4, true, false, false},
    {Mod::m8n16, true, false, false, false, 1, 4, false, false, true},
    {Mod::m16n16, true, false, true, true, 2, 2, false, true, true},
    {Mod::m16n8, false, true, true, true, 1, 4, false, true, false},
};
}  // namespace

void Checker::matrixLoadStore(const Function& f, const Instruction& inst) {
  bool load = inst.opcode == Opcode::Ldmatrix;
  std::string_view name = load ? "ldmatrix" : "stmatrix";
  if (!requireMods(f, inst, name, {Mod::sync, Mod::aligned})) return;
  unsigned count = f.hasMod(inst, Mod::x1) ? 1 : f.hasMod(inst, Mod::x2) ? 2 : f.hasMod(inst, Mod::x4) ? 4 : 0;
  const MatrixMoveShape* form = nullptr;
  for (const MatrixMoveShape& m : kMatrixMoveShapes)
    if (f.hasMod(inst, m.shape)) form = &m;
  if (!form) {
    error(inst.loc, "'{}' needs a shape (.m8n8, ...)", name);
    return;
  }
  const std::string_view shape = modText(form->shape);
  if (!(load ? form->load : form->store)) {
    error(inst.loc, "'{}' does not take the shape '{}'", name, shape);
    return;
  }
  if (form->shape != Mod::m8n8 && sm_ && (sm_ < 100 || !archSpecific_)) {
    error(inst.loc, "'{}{}' needs .target sm_100a, sm_120a or a family target of them", name, shape);
    return;
  }
  if (count == 0) {
    error(inst.loc, "'{}' needs the number of matrices (.x1, .x2 or .x4)", name);
    return;
  }
  if (count > form->maxMatrices) {
    error(inst.loc, "'{}{}' loads at most {} matrices", name, shape, form->maxMatrices);
    return;
  }
  const bool trans = inst.has(Flag::trans);
  if (trans && !form->transposes) {
    error(inst.loc, "'{}{}' does not take .trans", name, shape);
    return;
  }
  if (!trans && form->mustTranspose) {
    error(inst.loc, "'{}{}' needs .trans", name, shape);
    return;
  }
  const bool single = inst.numTypes == 1, pair = inst.numTypes == 2;
  const bool typeOk = (single && form->b16 && inst.type() == Type::b16) ||
                      (single && form->b8 && inst.type() == Type::b8) ||
                      (pair && form->unpacks && inst.types[0] == Type::b8x16 &&
                       (inst.types[1] == Type::b6x16_p32 || inst.types[1] == Type::b4x16_p64));
  if (!typeOk) {
    error(inst.loc, "'{}{}' takes {}", name, shape,
          form->b16       ? ".b16"
          : !form->b8     ? ".b8x16 with .b6x16_p32 or .b4x16_p64"
          : form->unpacks ? ".b8, or .b8x16 with .b6x16_p32 or .b4x16_p64"
                          : ".b8");
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
  const unsigned registers = count * form->registersPerMatrix;
  if (vectorSize(v) != registers) {
    error(inst.loc, "operand {} of '{}{}' .x{} must be a vector of {} registers", data + 1, name, shape, count,
          registers);
    return;
  }
  vectorRegs(f, inst, data, "32-bit registers", [](Type t) { return typeSize(t) == 4; });
}

// wmma fragment sizes in registers (0 = the shape does not take that type).
static unsigned wmmaFragment(Mod shape, Type t, bool isA, bool isB) {
  bool m16 = shape == Mod::m16n16k16, m8n32 = shape == Mod::m8n32k16, m32n8 = shape == Mod::m32n8k16;
  bool big = m16 || m8n32 || m32n8;
  if (isA || isB) {
    switch (t) {
      case Type::f16: return big ? 8 : 0;
      case Type::s8:
      case Type::u8: return m16 ? 2 : m8n32 ? (isA ? 1 : 4) : m32n8 ? (isA ? 4 : 1) : 0;
      case Type::bf16: return m16 ? 4 : m8n32 ? (isA ? 2 : 8) : m32n8 ? (isA ? 8 : 2) : 0;
      case Type::tf32: return shape == Mod::m16n16k8 ? 4 : 0;
      case Type::f64: return shape == Mod::m8n8k4 ? 1 : 0;
      case Type::s4:
      case Type::u4: return shape == Mod::m8n8k32 ? 1 : 0;
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
    if (m == Mod::m16n16k16 || m == Mod::m32n8k16 || m == Mod::m8n32k16 || m == Mod::m16n16k8 || m == Mod::m8n8k4 ||
        m == Mod::m8n8k32 || m == Mod::m8n8k128)
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
        error(inst.loc, "'{}' {} does not take the types {}{}{}{}", name, modText(shape), typeName(dt), typeName(at),
              typeName(bt), typeName(ct));
        return;
      }
      if (vectorSize(ops[i]) != want[i]) {
        error(inst.loc, "operand {} of '{}' {} must be a vector of {} registers", i + 1, name, modText(shape), want[i]);
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
    case Type::f16:
    case Type::bf16: wantK = 16, transposes = true, maxSelector = 1; break;
    case Type::tf32: wantK = 8, maxSelector = 1; break;
    case Type::e4m3:
    case Type::e5m2: wantK = 32; break;
    case Type::s8:
    case Type::u8: wantK = 32, floating = false; break;
    case Type::b1:
      if (!sparse) {
        wantK = 256, floating = false;
        break;
      }
      [[fallthrough]];
    default: error(inst.loc, "'{}' does not support the multiplicand type {}", name, typeName(at)); return;
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
    error(inst.loc, "operand 1 (D) of '{}' .m64n{} {} must be a vector of {} registers", name, n, typeName(dt), dRegs);
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
    bool metaOk = meta.kind == OperandKind::Reg ? regOperand(
                                                      f, inst, 3, "a 32-bit register (metadata)",
                                                      [](Type t) { return typeSize(t) == 4; }, false, false)
                                                : vectorSize(meta) == 1;
    if (!metaOk) {
      if (meta.kind != OperandKind::Reg)
        error(inst.loc, "operand 4 (metadata) of '{}' must be a 32-bit register", name);
      return;
    }
    const Operand& selector = ops[4];
    if (selector.kind != OperandKind::Imm || selector.value < 0 || selector.value > maxSelector) {
      error(inst.loc, "operand 5 (sparsity selector) of '{}' with {} multiplicands must be {}", name, typeName(at),
            maxSelector ? "0 or 1" : "0");
      return;
    }
  }
  if (!regOperand(
          f, inst, extra + 3, "a .pred register or an immediate (scale-d)", [](Type t) { return t == Type::pred; },
          true, false))
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
  if (mma && !f.hasMod(inst, Mod::kind_f16) && !f.hasMod(inst, Mod::kind_tf32) && !f.hasMod(inst, Mod::kind_f8f6f4) &&
      !f.hasMod(inst, Mod::kind_i8) && !f.hasMod(inst, Mod::kind_mxf8f6f4) && !f.hasMod(inst, Mod::kind_mxf4) &&
      !f.hasMod(inst, Mod::kind_mxf4nvf4)) {
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
      if (operandCount(inst, name, 2) && addressOperand(f, inst, 0))
        regOperand(f, inst, 1, int32, is32BitInteger, true, false);
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
    case Opcode::Tcgen05Ld:
    case Opcode::Tcgen05St: {
      bool load = op == Opcode::Tcgen05Ld;
      if (inst.type() != Type::b32) {
        error(inst.loc, "'{}' needs the type .b32", name);
        return;
      }
      struct Shape {
        Mod mod;
        unsigned regs;
      };
      static constexpr Shape kShapes[] = {{Mod::shape_32x32b, 1},
                                          {Mod::shape_16x64b, 1},
                                          {Mod::shape_16x128b, 2},
                                          {Mod::shape_16x256b, 4},
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
        regOperand(
            f, inst, 1, "a 16-bit register (the CTA mask)", [](Type t) { return typeSize(t) == 2; }, false, false);
      return;
    }
    case Opcode::Tcgen05Cp:
      if (operandCount(inst, name, 2) && tmemAddress(0))
        regOperand(f, inst, 1, "a 64-bit shared-memory descriptor", is64BitInteger, false, false);
      return;
    case Opcode::Tcgen05Mma:
    case Opcode::Tcgen05MmaSp:
    case Opcode::Tcgen05MmaWs:
    case Opcode::Tcgen05MmaWsSp: tcgen05Mma(f, inst); return;
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
  std::string_view name =
      ws ? (sparse ? "tcgen05.mma.ws.sp" : "tcgen05.mma.ws") : (sparse ? "tcgen05.mma.sp" : "tcgen05.mma");
  // The modifiers: one .kind, at most one collector usage (::a for tcgen05.mma, ::b0 .. ::b3 for .ws), the
  // block-scale size, .ashift.
  Mod kind = Mod::count_, collector = Mod::count_, scaleSize = Mod::count_;
  bool blockScale = false, ashift = false, group2 = false;
  const Mod* mods = f.modsOf(inst);
  for (uint32_t k = 0; k < inst.modCount; ++k) {
    Mod m = mods[k];
    switch (m) {
      case Mod::kind_f16:
      case Mod::kind_tf32:
      case Mod::kind_f8f6f4:
      case Mod::kind_i8:
      case Mod::kind_mxf8f6f4:
      case Mod::kind_mxf4:
      case Mod::kind_mxf4nvf4:
        if (kind != Mod::count_) {
          error(inst.loc, "'{}' takes one .kind", name);
          return;
        }
        kind = m;
        break;
      case Mod::collector_a_fill:
      case Mod::collector_a_use:
      case Mod::collector_a_lastuse:
      case Mod::collector_a_discard:
      case Mod::collector_b0_fill:
      case Mod::collector_b0_use:
      case Mod::collector_b0_lastuse:
      case Mod::collector_b0_discard:
      case Mod::collector_b1_fill:
      case Mod::collector_b1_use:
      case Mod::collector_b1_lastuse:
      case Mod::collector_b1_discard:
      case Mod::collector_b2_fill:
      case Mod::collector_b2_use:
      case Mod::collector_b2_lastuse:
      case Mod::collector_b2_discard:
      case Mod::collector_b3_fill:
      case Mod::collector_b3_use:
      case Mod::collector_b3_lastuse:
      case Mod::collector_b3_discard: {
        if (collector != Mod::count_) {
          error(inst.loc, "'{}' takes one .collector usage", name);
          return;
        }
        collector = m;
        // .ws keeps B in one of four collector buffers; tcgen05.mma reuses A.
        bool bufferA = m == Mod::collector_a_fill || m == Mod::collector_a_use || m == Mod::collector_a_lastuse ||
                       m == Mod::collector_a_discard;
        if (bufferA == ws) {
          error(inst.loc, "'{}' does not take {}", name, modText(m));
          return;
        }
        break;
      }
      case Mod::scale_vec_1X:
      case Mod::scale_vec_2X:
      case Mod::scale_vec_4X:
      case Mod::block16:
      case Mod::block32: scaleSize = m; break;
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
    Mod bad = group2                     ? Mod::cta_group_2
              : mx                       ? kind
              : blockScale               ? Mod::block_scale
              : scaleSize != Mod::count_ ? scaleSize
              : ashift                   ? Mod::ashift
                                         : Mod::count_;
    if (bad != Mod::count_) {
      error(inst.loc, "'{}' does not take {}", name, modText(bad));
      return;
    }
  } else if (mx || blockScale || scaleSize != Mod::count_) {
    if (!mx) {
      error(inst.loc, "'{}' takes .block_scale{} only with .kind::mxf8f6f4, .kind::mxf4 or .kind::mxf4nvf4", name,
            blockScale ? "" : " and a scale size");
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
    bool sizeOk = kind == Mod::kind_mxf8f6f4
                      ? scaleSize == Mod::scale_vec_1X || scaleSize == Mod::block32 || scaleSize == Mod::count_
                  : kind == Mod::kind_mxf4
                      ? scaleSize == Mod::scale_vec_2X || scaleSize == Mod::block32 || scaleSize == Mod::count_
                      : scaleSize != Mod::scale_vec_1X && scaleSize != Mod::count_;
    if (!sizeOk) {
      if (scaleSize == Mod::count_)
        error(inst.loc, "'{}' with {} needs a scale vector size", name, modText(kind));
      else
        error(inst.loc, "'{}' with {} does not take {}", name, modText(kind), modText(scaleSize));
      return;
    }
    bool scaleVec = scaleSize == Mod::scale_vec_1X || scaleSize == Mod::scale_vec_2X || scaleSize == Mod::scale_vec_4X;
    if (scaleVec && sm_ && !archOnly_) {
      error(inst.loc, "'{}' with {} needs an architecture-specific target (sm_100a, ...)", name, modText(scaleSize));
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
    error(inst.loc, "'{}' does not take .ashift with {}", name, blockScale ? ".block_scale" : modText(collector));
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
    return regOperand(
        f, inst, index, "a predicate or an immediate (enable-input-d)", [](Type t) { return t == Type::pred; }, true,
        false);
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
  bool lanes = tailCount == 3 || (tailCount == 2 && (first.kind == OperandKind::Vector || (i8 && isPredicate(first))));
  bool scale = tailCount == 3 || (tailCount == 2 && !lanes);
  if (i8 && sparse && tailCount == 3) {
    error(inst.loc, "'{}' with .kind::i8 takes at most {} operands", name, inst.numOperands - 1);
    return;
  }
  if (lanes && !isPredicate(first) && first.kind != OperandKind::Imm) {
    unsigned want = group2 ? 8 : 4;
    if (vectorSize(first) != want) {
      error(inst.loc, "operand {} of '{}' (disable-output-lane) must be a vector of {} 32-bit registers", tail + 1,
            name, want);
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
  if (kind == Mod::kind_f8f6f4)
    error(inst.loc, "'{}' with .kind::f8f6f4 does not take scale-input-d", name);
  else if (sm_ == 110)
    error(inst.loc, "'{}' scale-input-d is not supported on .target sm_110", name);
}

}  // namespace ptx::check_detail
