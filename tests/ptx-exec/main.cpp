// The interpreter tests' main: `--rewrites=SPEC` (or CUEMU_REWRITES) restricts the lowering rewrites every compile
// of the run may use (ptx-interp/include/ptx/rewrites.def), so that CTest runs the same tests with all rewrites
// off as well as on (ptx_exec_tests_no_rewrites). `--native` (or CUEMU_NATIVE=1) runs every kernel in the native tier
// (ptx/native.h; ptx_exec_tests_native) and prints what the tier compiled at the end.
#include <ptx/exec.h>
#include <ptx/native.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* spec = std::getenv("CUEMU_REWRITES");
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rewrites=", 11) == 0) spec = argv[i] + 11;
    if (std::strcmp(argv[i], "--native") == 0) {
      if (!ptx::exec::nativeTierUnavailable().empty()) {
        std::fprintf(stderr, "--native: %s\n", ptx::exec::nativeTierUnavailable().c_str());
        return 2;
      }
      ptx::exec::setNativeTier(true);
      ptx::exec::setNativeTierPolicy({1, 0, false});   // every kernel compiled at its first launch
      ::setenv("CUEMU_NATIVE_CACHE_DISABLE", "1", 0);  // by the compiler, not loaded from the on-disk cache
    }
  }
  if (spec) {
    uint32_t mask = 0;
    std::string error;
    if (!ptx::exec::parseRewrites(spec, mask, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 2;
    }
    ptx::exec::setDefaultRewrites(mask);
  }
  const int status = RUN_ALL_TESTS();
  if (ptx::exec::nativeTier()) {
    const ptx::exec::NativeTierStats s = ptx::exec::nativeTierStats();
    std::fprintf(stderr,
                 "native tier: %llu kernels compiled (%llu ops inlined, %llu called, %llu of them over the inline "
                 "budget), %llu interpreted, %.1f ms compiling (%.1f ms of it preparing)%s%s\n",
                 (unsigned long long)s.kernelsCompiled, (unsigned long long)s.opsInlined,
                 (unsigned long long)s.opsCalled, (unsigned long long)s.opsOverBudget,
                 (unsigned long long)s.kernelsRefused, double(s.compileNs) / 1e6, double(s.prepareNs) / 1e6,
                 s.lastRefusal.empty() ? "" : "; last refusal: ", s.lastRefusal.c_str());
  }
  return status;
}
