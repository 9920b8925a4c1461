// The checkers of `cuemu run --tool memcheck|racecheck|initcheck|synccheck` (CUEMU_TOOL): compute-sanitizer's
// checks on a CPU, reported in compute-sanitizer's wording and layout ("========= Invalid __global__ write of size
// 4 bytes", "========= ERROR SUMMARY: N errors") so that scripts that parse its output work. The tool is chosen
// once for the process, before the first module is compiled: the interpreter's checking ops exist only in code
// compiled with a tool on (ptx::exec::setCheckedAccesses), so the default mode pays nothing.
//
// Where our facts differ from compute-sanitizer's, the reports say what we have: PTX lines instead of SASS
// offsets, driver API names (cuCtxSynchronize) instead of runtime ones (cudaDeviceSynchronize), CUresult names.
#pragma once

#include "api/api_table.h"
#include "api/cuda_internal.h"
#include "core/env_switch.h"

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

namespace ptx::exec {
struct Fault;
class Program;
class Checker;
}  // namespace ptx::exec

namespace cuemu::checkers {

enum class Tool : uint8_t { None, Memcheck, Racecheck, Initcheck, Synccheck };

// The tools by name, as CUEMU_TOOL and `cuemu run --tool` spell them (index = Tool).
inline constexpr std::string_view kToolNames[] = {"none", "memcheck", "racecheck", "initcheck", "synccheck"};

// Parses a CUEMU_TOOL value; false when unknown ("" gives Tool::None). Inline: the cuemu command checks names
// without linking the checkers.
inline bool parseTool(std::string_view text, Tool& tool) {
  if (text.empty()) text = "none";
  for (size_t i = 0; i < std::size(kToolNames); ++i)
    if (text == kToolNames[i]) {
      tool = Tool(i);
      return true;
    }
  return false;
}

// The process's tool, from CUEMU_TOOL (read once).
Tool tool();
extern EnvSwitch g_active;
inline bool on() { return g_active.on(); }

// Host writes of device memory (copies, sets) for initcheck: the bytes count as initialised.
void hostWrote(uint64_t address, uint64_t bytes);

// Stream-ordered allocation (cuMemAllocAsync, cuMemAllocFromPoolAsync: made at the call) and cuMemFreeAsync of any
// memory (released when the free runs in stream order), for initcheck and the leak check, as cuMemAlloc/cuMemFree.
void allocatedAsync(uint64_t address, uint64_t bytes);
void freedInStreamOrder(uint64_t address);

// Device-heap blocks (malloc/free in kernels), for the leak check.
void heapAllocated(uint64_t address, uint64_t bytes);
void heapFreed(uint64_t address);

// After every driver call while a tool is on: API errors ("Program hit ..."), allocations for the leak check.
void apiCall(ApiId id, CUresult result, uint64_t allocation, uint64_t bytes);
void apiFreed(ApiId id, CUresult result, uint64_t address);

template <ApiId Id, typename... Args> inline void afterCall(CUresult result, const Args&... args) {
  if constexpr (Id == ApiId::cuMemAlloc_v2) {
    auto [dptr, bytes] = std::tuple<const Args&...>(args...);
    apiCall(Id, result, result == CUDA_SUCCESS && dptr ? *dptr : 0, bytes);
  } else if constexpr (Id == ApiId::cuMemAllocPitch_v2) {
    auto [dptr, pitch, width, height, element] = std::tuple<const Args&...>(args...);
    (void)width, (void)element;
    apiCall(Id, result, result == CUDA_SUCCESS && dptr ? *dptr : 0,
            result == CUDA_SUCCESS && pitch ? uint64_t(*pitch) * height : 0);
  } else if constexpr (Id == ApiId::cuMemAllocManaged) {
    auto [dptr, bytes, flags] = std::tuple<const Args&...>(args...);
    (void)flags;
    apiCall(Id, result, result == CUDA_SUCCESS && dptr ? *dptr : 0, bytes);
  } else if constexpr (Id == ApiId::cuMemFree_v2) {
    auto [dptr] = std::tuple<const Args&...>(args...);
    apiFreed(Id, result, dptr);
  } else {
    apiCall(Id, result, 0, 0);
  }
}

}  // namespace cuemu::checkers

namespace ptx::exec {
struct LaunchParams;
struct LaunchResult;
}  // namespace ptx::exec

namespace cuemu::checkers {

// What watches one grid while a tool or the progress line (CUEMU_PROGRESS) is on: the launch's checker and CTA
// counter, then the reports after it.
class LaunchWatch {
 public:
  virtual ~LaunchWatch() = default;
  // Null when neither a tool nor the progress line is on. Sets params.checker and params.ctasFinished.
  static std::unique_ptr<LaunchWatch> start(std::string_view kernel, ptx::exec::LaunchParams& params);
  // After the launch: prints what it found and returns the launch's result (`code`: the default mode's); sets
  // `reported` when a report replaced the default one-line fault message.
  virtual CUresult finish(const ptx::exec::LaunchResult& result, const ptx::exec::Program& program, CUresult code,
                          bool& reported) = 0;
};

// CUEMU_PROGRESS=1: a live line on stderr for grids that run longer than half a second.
bool progressOn();

}  // namespace cuemu::checkers
