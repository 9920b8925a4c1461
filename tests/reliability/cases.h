// The reliability suite's case registry and helpers (cases.cpp; the cases are in cases_*.cpp by theme).
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace reliability {

struct Case {
  const char* name;
  const char* theme;     // modules, launches, faults, memory, handles, concurrency
  void (*run)();         // returns when cuemu behaved; calls wrong() otherwise
  unsigned hangSeconds;  // the runner calls the case a HANG after this long (scaled under sanitizers)
  // Non-null: the case fails today, for this reason (a defect whose fix is not merged yet). The runner reports
  // XFAIL while it fails and XPASS once it passes, so that the mark can be removed.
  const char* expectedFailure;
};

struct Register {
  explicit Register(Case c);
};
std::vector<Case>& registry();

#define RELIABILITY_CASE(theme, name, hangSeconds, expectedFailure)                                          \
  static void case_##name();                                                                                 \
  static ::reliability::Register register_##name({#name, theme, case_##name, hangSeconds, expectedFailure}); \
  static void case_##name()

// The kernels every case may load (cases.cpp): store(p, v), addOne(p, n), forever(), barrierForever(),
// spinUntilSet(flag), trapNow(), loadMisaligned(p), tornVectors(p, bad, iterations), fixedShape() with
// .reqntid 64.
extern const char* kKernels;

[[noreturn]] void wrong(const std::string& message);
std::string resultName(CUresult r);
void expectResult(CUresult got, CUresult expected, const char* what);
void expectError(CUresult got, const char* what);  // anything but CUDA_SUCCESS

// cuInit, device 0, a new context (current on this thread).
CUcontext setUp();
CUmodule loadKernels();
CUfunction kernel(CUmodule module, const char* name);
CUresult launch(CUfunction f, unsigned grid, unsigned block, void** params, CUstream stream = nullptr);

}  // namespace reliability
