// libFuzzer target: the cuLink input path. The input is split at the first "\n//--\n" into two link inputs;
// each is an ELF host object or archive, a fatbinary container, or else PTX text; its PTX
// extracted as cuLinkAddData does, checked by the front end, and everything that passed is linked
// (ptx::link::linkModules). The linked text must parse again when the link succeeds.
#include "core/fatbin.h"

#include <ptx/check.h>
#include <ptx/link.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

void addInput(std::string_view bytes, std::vector<ptx::link::Input>& inputs) {
  if (bytes.empty()) return;
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  std::vector<std::string> texts;
  auto kind = cuemu::classifyImage(copy.data(), copy.size());
  if (bytes.starts_with("\x7f"
                        "ELF") ||
      bytes.starts_with("!<arch>\n")) {  // a host object or archive
    if (auto ptx = cuemu::extractPtxFromHostBinary(copy.data(), copy.size(), 9, 0, "fuzz.o"))
      for (auto& unit : ptx->units) texts.push_back(unit.text);
  } else if (kind && *kind == cuemu::ImageKind::FatbinContainer) {
    if (auto ptx = cuemu::extractPtx(copy.data(), 9, 0, copy.size()))
      for (auto& unit : ptx->units) texts.push_back(unit.text);
  } else {
    texts.emplace_back(bytes);
  }
  for (auto& text : texts) {
    ptx::CheckOptions check;
    check.targetSm = 90;
    if (ptx::parseAndCheck(text, "fuzz", check).ok) inputs.push_back({"fuzz", std::move(text)});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSeparator = "\n//--\n";
  size_t cut = all.find(kSeparator);
  std::vector<ptx::link::Input> inputs;
  addInput(all.substr(0, cut), inputs);
  if (cut != std::string_view::npos) addInput(all.substr(cut + kSeparator.size()), inputs);
  if (inputs.empty()) return 0;
  auto linked = ptx::link::linkModules(inputs);
  if (linked.ok) {
    ptx::CheckOptions check;
    check.targetSm = 90;
    auto again = ptx::parseAndCheck(linked.ptx, "linked", check);
    (void)again;  // the linker's output may fail the checker (e.g. duplicate names it could not resolve), not crash
  }
  return 0;
}
