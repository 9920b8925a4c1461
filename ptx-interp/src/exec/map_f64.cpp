// `.target ..., map_f64_to_f32` (PTX of the CUDA 1.x-4.x era for targets without double precision): every
// double-precision instruction runs in single precision. The PTX ISA keeps .f64 storage 64 bits wide with only half
// of it used, so loads, stores and atomics still move 64 bits, .f64 registers stay 8 bytes, and the demoted
// instructions read and write the low 4 bytes (the lowering's width conversion between an f32 operation and a
// 64-bit register does exactly that). Double immediates are rounded to float by the lowering's operand reader.
#include "exec/lower.h"

namespace ptx::exec {

namespace {

bool keepsStorageWidth(Opcode op) {
  return op == Opcode::Ld || op == Opcode::St || op == Opcode::Ldu || op == Opcode::Atom || op == Opcode::Red;
}

bool fpRounding(Rounding r) { return r == Rounding::rn || r == Rounding::rz || r == Rounding::rm || r == Rounding::rp; }

}  // namespace

void demoteF64ToF32(ptx::Module& module) {
  if (!module.mapF64ToF32) return;
  for (ptx::Function& f : module.functions) {
    for (ptx::Instruction& in : f.instructions) {
      if (keepsStorageWidth(in.opcode)) continue;
      bool demoted = false;
      for (unsigned i = 0; i < in.numTypes; ++i)
        if (in.types[i] == Type::f64) {
          in.types[i] = Type::f32;
          demoted = true;
        }
      if (!demoted) continue;
      for (uint32_t m = in.modFirst; m < in.modFirst + in.modCount; ++m)
        if (f.mods[m] == Mod::type_f64) f.mods[m] = Mod::type_f32;
      // cvt.rn.f32.f64 became a conversion from f32 to f32, which takes no floating-point rounding.
      if (in.opcode == Opcode::Cvt && in.numTypes == 2 && in.types[0] == in.types[1] && fpRounding(in.rounding))
        in.rounding = Rounding::none;
    }
  }
}

}  // namespace ptx::exec
