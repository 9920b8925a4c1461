#include "ptx/ir.h"

#include "front/tables.h"

namespace ptx {

void StringTable::grow() {
  size_t n = slots_.empty() ? 256 : slots_.size() * 2;
  slots_.assign(n, 0);
  size_t mask = n - 1;
  for (uint32_t id = 0; id < entries_.size(); ++id) {
    size_t i = entries_[id].hash & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = id + 1;
  }
}

StrId StringTable::find(std::string_view s) const {
  if (slots_.empty()) return kNoStr;
  uint32_t h = front::hashBytes(s.data(), s.size());
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask; slots_[i]; i = (i + 1) & mask) {
    const Entry& e = entries_[slots_[i] - 1];
    if (e.hash == h && e.length == s.size() && std::string_view(chars_.data() + e.offset, e.length) == s)
      return slots_[i] - 1;
  }
  return kNoStr;
}

StrId StringTable::intern(std::string_view s) {
  if ((entries_.size() + 1) * 2 > slots_.size()) grow();
  uint32_t h = front::hashBytes(s.data(), s.size());
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i]; i = (i + 1) & mask) {
    const Entry& e = entries_[slots_[i] - 1];
    if (e.hash == h && e.length == s.size() && std::string_view(chars_.data() + e.offset, e.length) == s)
      return slots_[i] - 1;
  }
  auto id = static_cast<StrId>(entries_.size());
  entries_.push_back(Entry{static_cast<uint32_t>(chars_.size()), static_cast<uint32_t>(s.size()), h});
  chars_.insert(chars_.end(), s.begin(), s.end());
  slots_[i] = id + 1;
  return id;
}

uint32_t Module::findGlobal(std::string_view name) const {
  StrId id = strings.find(name);
  if (id == kNoStr) return kNoIndex;
  for (uint32_t i = 0; i < globals.size(); ++i)
    if (globals[i].name == id) return i;
  return kNoIndex;
}

uint32_t Module::findFunction(std::string_view name) const {
  StrId id = strings.find(name);
  if (id == kNoStr) return kNoIndex;
  for (uint32_t i = 0; i < functions.size(); ++i)
    if (functions[i].name == id) return i;
  return kNoIndex;
}

}  // namespace ptx
