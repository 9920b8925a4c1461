// Compiled once per header (NVIDIA's or ours) and configuration: turns the manifest into facts the
// compiler computes. Which cuda.h is seen is decided by the include path; ABI_MANIFEST names the
// manifest and ABI_TABLE the exported table; ABI_INTEROP adds the profiler and graphics interop headers.
#include "abi_facts.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#if defined(ABI_INTEROP)
#include <cudaProfilerTypedefs.h>
#include <cudaGLTypedefs.h>
#include <cudaEGLTypedefs.h>
#include <cudaVDPAUTypedefs.h>
#endif

#include <cstddef>
#include <typeinfo>

#define ABI_STRINGIFY_EXPANDED(...) #__VA_ARGS__
#define ABI_EXPAND_TO_STRING(...) ABI_STRINGIFY_EXPANDED(__VA_ARGS__)
#define ABI_MEMBER(T, path) (static_cast<T*>(nullptr)->path)

using cuemu_abi::Fact;
using cuemu_abi::Kind;

namespace {

const Fact kFacts[] = {
#define ABI_FUNCTION(f) {Kind::Function, #f, typeid(decltype(f)).name(), 0, 0, 0},
#define ABI_TYPE(...) \
  {Kind::Type, #__VA_ARGS__, typeid(__VA_ARGS__).name(), sizeof(__VA_ARGS__), alignof(__VA_ARGS__), 0},
#define ABI_OPAQUE(...) {Kind::Opaque, #__VA_ARGS__, typeid(__VA_ARGS__*).name(), 0, 0, 0},
#define ABI_FIELD(T, path)                       \
  {Kind::Field,                                  \
   #T "::" #path,                                \
   typeid(decltype(ABI_MEMBER(T, path))).name(), \
   sizeof(ABI_MEMBER(T, path)),                  \
   __builtin_offsetof(T, path),                  \
   0},
#define ABI_ENUM(e) {Kind::Enum, #e, "", 0, 0, static_cast<long long>(e)},
#define ABI_MACRO(m) {Kind::Macro, #m, ABI_EXPAND_TO_STRING(m), 0, 0, 0},
#define ABI_MACRO_FN(m, args) {Kind::Macro, #m #args, ABI_EXPAND_TO_STRING(m args), 0, 0, 0},
#include ABI_MANIFEST
};

}  // namespace

extern const cuemu_abi::FactTable ABI_TABLE;
const cuemu_abi::FactTable ABI_TABLE = {kFacts, sizeof(kFacts) / sizeof(kFacts[0])};
