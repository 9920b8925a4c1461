// What the ABI test records about one cuda.h (+ cudaTypedefs.h): one Fact per manifest entry, in
// manifest order, so that the facts of two headers compiled from the same manifest line up.
#pragma once

#include <cstddef>

namespace cuemu_abi {

enum class Kind { Function, Type, Opaque, Field, Enum, Macro };

struct Fact {
  Kind kind;
  const char* name;      // as written in the manifest
  const char* type;      // mangled type (typeid name), or a macro's expansion
  std::size_t size;      // sizeof of a type or field
  std::size_t position;  // alignof of a type, offsetof of a field
  long long value;       // enumerator value
};

struct FactTable {
  const Fact* facts;
  std::size_t count;
};

}  // namespace cuemu_abi
