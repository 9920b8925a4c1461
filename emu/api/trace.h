// API tracing at the entry-point layer. With CUEMU_TRACE set ("1"/"stderr" or a file path) every call is
// logged with its name, decoded arguments, result, thread id and current context. When off, an entry pays one
// relaxed atomic load.
#pragma once

#include "api/api_table.h"
#include "api/cuda_internal.h"
#include "core/env_switch.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

namespace cuemu::trace {

namespace detail {
bool readState();  // CUEMU_TRACE; opens the trace file
inline constinit EnvSwitch g_switch{&readState};
}  // namespace detail

inline bool on() { return detail::g_switch.on(); }

void appendPointer(std::string& out, const void* p);
void appendString(std::string& out, const char* s);  // safe for garbage pointers
void appendHandle(std::string& out, uint64_t value);
void appendResult(std::string& out, CUresult r);
void appendEnum(std::string& out, std::string_view typeName, long long value);
void appendSigned(std::string& out, long long v);
void appendUnsigned(std::string& out, unsigned long long v);

// Decodes one argument by its C++ type.
template <typename T> void appendArg(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, CUresult>) {
    appendResult(out, v);
  } else if constexpr (std::is_enum_v<T>) {
    appendEnum(out, __PRETTY_FUNCTION__, static_cast<long long>(v));
  } else if constexpr (std::is_same_v<T, const char*> || std::is_same_v<T, char*>) {
    appendString(out, v);
  } else if constexpr (std::is_pointer_v<T>) {
    if constexpr (std::is_class_v<std::remove_pointer_t<T>> && !std::is_const_v<std::remove_pointer_t<T>>) {
      // Opaque API handles (CUctx_st*, CUstream_st* ...) are pointers to incomplete structs.
      if constexpr (!requires { sizeof(std::remove_pointer_t<T>); }) {
        appendHandle(out, reinterpret_cast<uint64_t>(v));
        return;
      }
    }
    appendPointer(out, reinterpret_cast<const void*>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    appendSigned(out, v);
  } else if constexpr (std::is_integral_v<T>) {
    appendUnsigned(out, v);
  } else {
    out += "{...}";
  }
}

// Writes one finished call: "cuMemAlloc_v2(dptr=0x..., bytesize=1024) = CUDA_SUCCESS".
void emitCall(ApiId id, std::string_view argNames, const std::string& argValues, CUresult result);
// The same for calls that do not go through an exported entry point (export-table slots).
void emitNamedCall(std::string_view name, std::string_view argNames, const std::string& argValues, CUresult result);

template <typename... Args> void call(ApiId id, std::string_view argNames, CUresult result, const Args&... args) {
  std::string values;
  bool first = true;
  ((values += first ? "" : "\x1f", first = false, appendArg(values, args)), ...);
  emitCall(id, argNames, values, result);
}

template <typename... Args>
void callNamed(std::string_view name, std::string_view argNames, CUresult result, const Args&... args) {
  std::string values;
  bool first = true;
  ((values += first ? "" : "\x1f", first = false, appendArg(values, args)), ...);
  emitNamedCall(name, argNames, values, result);
}

}  // namespace cuemu::trace
