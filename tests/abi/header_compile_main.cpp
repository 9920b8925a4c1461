// Links the header compile checks: each translation unit included our headers in one language
// standard and configuration. C99 has no _Alignas, so there CUtensorMap keeps its natural alignment.
#include <cstddef>
#include <cstdio>

#define DECLARE(lang, cfg) extern "C" std::size_t header_compile_##lang##_##cfg(void);
DECLARE(c, default)
DECLARE(c, ptds)
DECLARE(c, internal)
DECLARE(cpp, default)
DECLARE(cpp, ptds)
DECLARE(cpp, internal)

int main() {
  const std::size_t c[] = {header_compile_c_default(), header_compile_c_ptds(), header_compile_c_internal()};
  const std::size_t cpp[] = {header_compile_cpp_default(), header_compile_cpp_ptds(), header_compile_cpp_internal()};
  for (std::size_t i = 0; i < 3; ++i) {
    if (c[i] != c[0] || cpp[i] != cpp[0]) {
      std::printf("configurations disagree about the sizes of the same types\n");
      return 1;
    }
  }
  std::printf("cuda.h and cudaTypedefs.h compile as C99 and C++20 in 3 configurations\n");
  return 0;
}
