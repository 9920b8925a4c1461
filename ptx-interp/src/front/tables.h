// Lookup tables built from the .def files (internal to the front end).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ptx/ir.h"

namespace ptx::front {

inline uint32_t hashBytes(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 16777619u;
  return h;
}

// A read-only string -> small value map with open addressing; built once.
class KeywordMap {
 public:
  void insert(std::string_view key, uint32_t value);
  // Returns value or kMissing.
  uint32_t find(std::string_view key) const {
    if (slots_.empty()) return kMissing;
    uint32_t h = hashBytes(key.data(), key.size());
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key.data() == nullptr) return kMissing;
      if (s.hash == h && s.key == key) return s.value;
    }
  }
  static constexpr uint32_t kMissing = 0xffffffffu;

 private:
  struct Slot {
    std::string_view key;
    uint32_t hash = 0;
    uint32_t value = 0;
  };
  void rehash(size_t n);
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

// Candidates for one mnemonic, most required modifiers first.
struct OpcodeCandidate {
  Opcode opcode;
  uint8_t numRequired;
  Mod required[4];
};

struct Tables {
  KeywordMap mods;        // ".rn" -> Mod
  KeywordMap mnemonics;   // "cp" -> index into candidateLists
  KeywordMap sregs;       // "%tid" -> SpecialReg
  KeywordMap directives;  // ".reg" -> Directive
  std::vector<std::vector<OpcodeCandidate>> candidateLists;
};

const Tables& tables();

}  // namespace ptx::front
