// Type dispatch for handler selection: each helper turns a run-time value (a PTX type, rounding mode, comparison,
// flag) into a compile-time one and calls the selector with it, so that one generic lambda picks the handler
// template instantiation. Every instruction class selects its handlers with these.
#pragma once

#include "exec/engine.h"
#include "exec/handlers.h"
#include "ptx/ir.h"

#include <fmt/format.h>

#include <string>
#include <type_traits>

namespace ptx::exec {

using num::Round;
using ptx::Type;
using ptx::TypeKind;

// An instruction the interpreter cannot lower: the module load fails with "line N: message".
struct LowerError {
  uint32_t line;
  std::string message;
};

[[noreturn]] inline void fail(uint32_t line, std::string msg) { throw LowerError{line, std::move(msg)}; }

// Integer types of every width (b/u/s 8..64); nullptr for any other type.
template <class F> Handler byIntType(Type t, F f) {
  switch (t) {
    case Type::b8:
    case Type::u8: return f(uint8_t{});
    case Type::s8: return f(int8_t{});
    case Type::b16:
    case Type::u16: return f(uint16_t{});
    case Type::s16: return f(int16_t{});
    case Type::b32:
    case Type::u32: return f(uint32_t{});
    case Type::s32: return f(int32_t{});
    case Type::b64:
    case Type::u64: return f(uint64_t{});
    case Type::s64: return f(int64_t{});
    default: return nullptr;
  }
}
inline bool isIntegerType(Type t) {
  switch (t) {
    case Type::b8:
    case Type::u8:
    case Type::s8:
    case Type::b16:
    case Type::u16:
    case Type::s16:
    case Type::b32:
    case Type::u32:
    case Type::s32:
    case Type::b64:
    case Type::u64:
    case Type::s64: return true;
    default: return false;
  }
}
// The same, for an instruction at `line` whose type the checker let through: any other type is a lowering error.
template <class F> Handler byInt(Type t, uint32_t line, F f) {
  if (!isIntegerType(t)) fail(line, fmt::format("type {} not supported for this instruction", ptx::typeName(t)));
  return byIntType(t, f);
}
// Integers of 16/32/64 bits only (the ISA's arithmetic types).
template <class F> Handler byInt163264(Type t, uint32_t line, F f) {
  switch (t) {
    case Type::b16:
    case Type::u16: return f(uint16_t{});
    case Type::s16: return f(int16_t{});
    case Type::b32:
    case Type::u32: return f(uint32_t{});
    case Type::s32: return f(int32_t{});
    case Type::b64:
    case Type::u64: return f(uint64_t{});
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
template <class F> Handler byBool(bool b, F f) { return b ? f(std::true_type{}) : f(std::false_type{}); }

}  // namespace ptx::exec
