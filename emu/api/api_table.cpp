#include "api/api_table.h"

namespace cuemu {
namespace {

#define CUEMU_ENTRY(status, family, name, params, args, policy, target) ApiInfo{#name, family, CUEMU_IS_##status},
#define CUEMU_IS_IMPL true
#define CUEMU_IS_STUB false
#define CUEMU_IS_PT true
constexpr ApiInfo kApis[] = {
#include "generated/entries.def"
};
#undef CUEMU_ENTRY
static_assert(sizeof(kApis) / sizeof(kApis[0]) == kApiCount, "one ApiInfo per exported symbol");

}  // namespace

const ApiInfo& apiInfo(ApiId id) { return kApis[static_cast<std::size_t>(id)]; }

}  // namespace cuemu
