// Shared by the whole-program benchmark's programs: every runtime call checked, the program's verdict printed.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                      \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

inline int verdict(bool ok, const char* what) {
  std::printf("%s: %s\n", what, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
