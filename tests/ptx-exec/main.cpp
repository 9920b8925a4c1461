// The interpreter tests' main: `--rewrites=SPEC` (or CUEMU_REWRITES) restricts the lowering rewrites every compile
// of the run may use (ptx-interp/include/ptx/rewrites.def), so that CTest runs the same tests with all rewrites
// off as well as on (ptx_exec_tests_no_rewrites).
#include <ptx/exec.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* spec = std::getenv("CUEMU_REWRITES");
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--rewrites=", 11) == 0) spec = argv[i] + 11;
  if (spec) {
    uint32_t mask = 0;
    std::string error;
    if (!ptx::exec::parseRewrites(spec, mask, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 2;
    }
    ptx::exec::setDefaultRewrites(mask);
  }
  return RUN_ALL_TESTS();
}
