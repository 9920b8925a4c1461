// Compares the facts of NVIDIA's headers (the reference) with those of ours (the candidate), both
// built from the same manifest. Without arguments it succeeds only if every fact matches. With
// --expect-mismatch NAME (repeatable) it is the ABI test's self-check: it succeeds only if the
// candidate differs, and differs at least in each NAME given.
#include "abi_facts.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <set>
#include <string>
#include <vector>

extern const cuemu_abi::FactTable cuemu_abi_reference;
extern const cuemu_abi::FactTable cuemu_abi_candidate;

namespace {

using cuemu_abi::Fact;
using cuemu_abi::Kind;

std::string demangled(const char* mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return mangled;
  std::string result(text);
  std::free(text);
  return result;
}

std::string without_spaces(const char* s) {
  std::string out;
  for (; *s; ++s)
    if (*s != ' ' && *s != '\t') out += *s;
  return out;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Function: return "function";
    case Kind::Type: return "type";
    case Kind::Opaque: return "opaque type";
    case Kind::Field: return "field";
    case Kind::Enum: return "enumerator";
    case Kind::Macro: return "macro";
  }
  return "?";
}

// Returns a description of how `ours` differs from `ref`, or an empty string.
std::string difference(const Fact& ref, const Fact& ours) {
  char buf[256];
  if (ref.kind != ours.kind || std::strcmp(ref.name, ours.name) != 0) return "manifest entries out of step";
  switch (ref.kind) {
    case Kind::Macro:
      if (without_spaces(ref.type) != without_spaces(ours.type))
        return std::string("expands to '") + ours.type + "', NVIDIA's to '" + ref.type + "'";
      return "";
    case Kind::Enum:
      if (ref.value != ours.value) {
        std::snprintf(buf, sizeof buf, "value %lld, NVIDIA's %lld", ours.value, ref.value);
        return buf;
      }
      return "";
    default: break;
  }
  std::string diff;
  if (std::strcmp(ref.type, ours.type) != 0)
    diff += "type '" + demangled(ours.type) + "', NVIDIA's '" + demangled(ref.type) + "'; ";
  if (ref.size != ours.size) {
    std::snprintf(buf, sizeof buf, "size %zu, NVIDIA's %zu; ", ours.size, ref.size);
    diff += buf;
  }
  if (ref.position != ours.position) {
    std::snprintf(buf, sizeof buf, "%s %zu, NVIDIA's %zu; ", ref.kind == Kind::Field ? "offset" : "alignment",
                  ours.position, ref.position);
    diff += buf;
  }
  return diff;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> expected;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-mismatch") == 0 && i + 1 < argc) {
      expected.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--expect-mismatch NAME]...\n", argv[0]);
      return 2;
    }
  }
  const auto& ref = cuemu_abi_reference;
  const auto& ours = cuemu_abi_candidate;
  if (ref.count != ours.count) {
    std::fprintf(stderr, "fact tables differ in length (%zu vs %zu): built from different manifests\n", ref.count,
                 ours.count);
    return 1;
  }
  std::set<std::string> mismatched;
  std::size_t per_kind[6] = {};
  for (std::size_t i = 0; i < ref.count; ++i) {
    ++per_kind[static_cast<int>(ref.facts[i].kind)];
    std::string diff = difference(ref.facts[i], ours.facts[i]);
    if (diff.empty()) continue;
    mismatched.insert(ref.facts[i].name);
    std::printf("MISMATCH %s %s: %s\n", kind_name(ref.facts[i].kind), ref.facts[i].name, diff.c_str());
  }
  std::printf(
      "compared %zu facts: %zu functions, %zu types, %zu opaque types, %zu fields, %zu enumerators, "
      "%zu macros; %zu differ\n",
      ref.count, per_kind[0], per_kind[1], per_kind[2], per_kind[3], per_kind[4], per_kind[5], mismatched.size());
  if (expected.empty()) return mismatched.empty() ? 0 : 1;
  // Self-check mode: the deliberately broken header must be caught, at the right place.
  bool ok = !mismatched.empty();
  for (const auto& name : expected) {
    if (mismatched.count(name) == 0) {
      std::printf("self-check: expected a mismatch on %s, none reported\n", name.c_str());
      ok = false;
    }
  }
  std::printf("self-check %s\n", ok ? "passed: the perturbation was detected" : "FAILED");
  return ok ? 0 : 1;
}
