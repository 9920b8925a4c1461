// libFuzzer target: any input must parse (or be rejected) without crashing, hanging or unbounded allocation;
// accepted modules must check and round-trip through the printer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ptx/check.h"
#include "ptx/parse.h"
#include "ptx/print.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    ptx::Diagnostics diags("fuzz", 20);
    ptx::ParseOptions opt;
    opt.maxVariableBytes = uint64_t(1) << 24;   // keep the fuzzer's memory bounded
    auto module = ptx::parseModule(text, diags, opt);
    (void)diags.format();
    if (diags.hasErrors()) return 0;
    ptx::checkModule(*module, diags);
    std::string printed = ptx::printModule(*module);
    ptx::Diagnostics again("printed", 20);
    auto reparsed = ptx::parseModule(printed, again, opt);
    if (again.hasErrors() || !ptx::diffModules(*module, *reparsed).empty()) std::abort();   // round trip broken
    return 0;
}
