// Self-checking helpers shared by the runtime corpus: every program ends by printing "PASS <name>" and
// exiting 0, or "FAIL <name>: <why>" and exiting 1. Programs that cannot run in a configuration print
// "SKIP <name>: <why>" and exit 77 (CTest's skip code).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace corpus {

inline const char*& programName() {
  static const char* name = "?";
  return name;
}

[[noreturn]] inline void fail(const char* what, const char* file, int line) {
  std::printf("FAIL %s: %s (%s:%d)\n", programName(), what, file, line);
  std::fflush(stdout);
  std::exit(1);
}

inline void checkCuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  char what[512];
  std::snprintf(what, sizeof what, "%s returned %s (%d): %s", call, cudaGetErrorName(e), static_cast<int>(e),
                cudaGetErrorString(e));
  fail(what, file, line);
}

inline int pass() {
  std::printf("PASS %s\n", programName());
  std::fflush(stdout);
  return 0;
}

[[noreturn]] inline void skip(const char* why) {
  std::printf("SKIP %s: %s\n", programName(), why);
  std::fflush(stdout);
  std::exit(77);
}

}  // namespace corpus

#define CORPUS_PROGRAM(name) corpus::programName() = name
#define CHECK_CUDA(call) corpus::checkCuda((call), #call, __FILE__, __LINE__)
#define EXPECT_TRUE(cond)                                             \
  do {                                                                \
    if (!(cond)) corpus::fail("expected " #cond, __FILE__, __LINE__); \
  } while (0)
// Compares integers and reports both values.
#define EXPECT_EQ_INT(actual, expected)                                                   \
  do {                                                                                    \
    long long a_ = static_cast<long long>(actual), e_ = static_cast<long long>(expected); \
    if (a_ != e_) {                                                                       \
      char what_[256];                                                                    \
      std::snprintf(what_, sizeof what_, "%s is %lld, expected %lld", #actual, a_, e_);   \
      corpus::fail(what_, __FILE__, __LINE__);                                            \
    }                                                                                     \
  } while (0)
