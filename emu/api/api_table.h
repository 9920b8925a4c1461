// The exported driver API as data: one id per exported symbol, from emu/api/generated/entries.def.
#pragma once

#include <cstdint>
#include <string_view>

namespace cuemu {

enum class ApiId : uint16_t {
#define CUEMU_ENTRY(status, family, name, params, args, policy, target) name,
#include "generated/entries.def"
#undef CUEMU_ENTRY
  Count
};

inline constexpr std::size_t kApiCount = static_cast<std::size_t>(ApiId::Count);

struct ApiInfo {
  std::string_view name;
  std::string_view family;
  bool implemented;
};

const ApiInfo& apiInfo(ApiId id);

}  // namespace cuemu
