#include "front/tables.h"

#include <algorithm>
#include <cstdlib>

#include "ptx/parse.h"

namespace ptx {
namespace {

struct TypeInfo {
  std::string_view token;
  uint8_t size;
  TypeKind kind;
};
constexpr TypeInfo kTypes[] = {
    {"", 0, TypeKind::None},
#define PTX_TYPE(e, tok, size, kind) {tok, size, TypeKind::kind},
#include "ptx/types.def"
};

struct OpcodeInfo {
  std::string_view mnemonic;
  std::string_view required;
  std::string_view name;
  OpClass cls;
};
constexpr OpcodeInfo kOpcodes[] = {
#define PTX_OPCODE(e, mnemonic, words, cls) {mnemonic, words, #e, OpClass::cls},
#include "ptx/opcodes.def"
};

struct SregInfo {
  std::string_view name;
  uint8_t size;
  bool comps;
};
constexpr SregInfo kSregs[] = {
#define PTX_SREG(e, name, size, comps) {name, size, comps != 0},
#include "ptx/sregs.def"
};

struct ModInfo {
  std::string_view token;
  ModCat cat;
  uint8_t value;
};
constexpr ModInfo kMods[] = {
#define PTX_TYPE(e, tok, size, kind) {tok, ModCat::Type, static_cast<uint8_t>(Type::e)},
#include "ptx/types.def"
#define PTX_MOD(e, tok, cat, val) {tok, ModCat::cat, static_cast<uint8_t>(cat::val)},
#include "ptx/modifiers.def"
};

}  // namespace

std::string_view typeName(Type t) { return kTypes[static_cast<unsigned>(t)].token; }
unsigned typeSize(Type t) { return kTypes[static_cast<unsigned>(t)].size; }
TypeKind typeKind(Type t) { return kTypes[static_cast<unsigned>(t)].kind; }
std::string_view opcodeMnemonic(Opcode op) { return kOpcodes[static_cast<unsigned>(op)].mnemonic; }
std::string_view opcodeName(Opcode op) { return kOpcodes[static_cast<unsigned>(op)].name; }
OpClass opcodeClass(Opcode op) { return kOpcodes[static_cast<unsigned>(op)].cls; }
std::string_view specialRegName(SpecialReg r) { return kSregs[static_cast<unsigned>(r)].name; }
unsigned specialRegSize(SpecialReg r) { return kSregs[static_cast<unsigned>(r)].size; }
bool specialRegHasComponents(SpecialReg r) { return kSregs[static_cast<unsigned>(r)].comps; }
std::string_view modText(Mod m) { return kMods[static_cast<unsigned>(m)].token; }
ModCat modCategory(Mod m) { return kMods[static_cast<unsigned>(m)].cat; }
uint8_t modValue(Mod m) { return kMods[static_cast<unsigned>(m)].value; }
Type modType(Mod m) {
  const ModInfo& i = kMods[static_cast<unsigned>(m)];
  return i.cat == ModCat::Type ? static_cast<Type>(i.value) : Type::none;
}

Mod findMod(std::string_view token) {
  uint32_t v = front::tables().mods.find(token);
  return v == front::KeywordMap::kMissing ? Mod::count_ : static_cast<Mod>(v);
}
Type findType(std::string_view token) {
  Mod m = findMod(token);
  return m == Mod::count_ ? Type::none : modType(m);
}
bool findSpecialReg(std::string_view name, SpecialReg& out) {
  uint32_t v = front::tables().sregs.find(name);
  if (v == front::KeywordMap::kMissing) return false;
  out = static_cast<SpecialReg>(v);
  return true;
}

namespace front {

void KeywordMap::rehash(size_t n) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(n, Slot{});
  count_ = 0;
  for (const Slot& s : old)
    if (s.key.data()) insert(s.key, s.value);
}

void KeywordMap::insert(std::string_view key, uint32_t value) {
  if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 64 : slots_.size() * 2);
  uint32_t h = hashBytes(key.data(), key.size());
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.key.data() == nullptr) {
      s = Slot{key, h, value};
      ++count_;
      return;
    }
    if (s.hash == h && s.key == key) {
      s.value = value;
      return;
    }
  }
}

static Tables buildTables() {
  Tables t;
  for (unsigned i = 0; i < static_cast<unsigned>(Mod::count_); ++i) t.mods.insert(kMods[i].token, i);
  for (unsigned i = 0; i < static_cast<unsigned>(SpecialReg::count_); ++i) t.sregs.insert(kSregs[i].name, i);
  for (unsigned i = 0; i < static_cast<unsigned>(Opcode::count_); ++i) {
    const OpcodeInfo& info = kOpcodes[i];
    uint32_t list = t.mnemonics.find(info.mnemonic);
    if (list == KeywordMap::kMissing) {
      list = static_cast<uint32_t>(t.candidateLists.size());
      t.candidateLists.emplace_back();
      t.mnemonics.insert(info.mnemonic, list);
    }
    OpcodeCandidate c{static_cast<Opcode>(i), 0, {}};
    std::string_view req = info.required;
    while (!req.empty()) {
      size_t sp = req.find(' ');
      std::string_view word = req.substr(0, sp);
      req = sp == std::string_view::npos ? std::string_view() : req.substr(sp + 1);
      uint32_t m = t.mods.find(word);
      if (m == KeywordMap::kMissing || c.numRequired == 4) std::abort();  // table bug, caught by tests
      c.required[c.numRequired++] = static_cast<Mod>(m);
    }
    t.candidateLists[list].push_back(c);
  }
  for (auto& list : t.candidateLists)
    std::stable_sort(list.begin(), list.end(),
                     [](const OpcodeCandidate& a, const OpcodeCandidate& b) { return a.numRequired > b.numRequired; });
  return t;
}

const Tables& tables() {
  static const Tables t = buildTables();
  return t;
}

}  // namespace front
}  // namespace ptx
