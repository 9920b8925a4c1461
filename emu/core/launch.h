// A kernel launch: validated on the calling thread (errors there do not stick), executed in stream order by
// the PTX interpreter; a fault while running sticks to the context with the real driver's code.
#pragma once

#include "api/cuda_internal.h"
#include "core/module.h"

#include <ptx/exec.h>

#include <memory>
#include <vector>

namespace cuemu {

class Stream;

struct LaunchRequest {
  std::shared_ptr<Function> function;
  ptx::exec::Dim3 grid, block;
  unsigned dynamicSharedBytes = 0;
  std::vector<uint8_t> params;
  bool cooperative = false;
};

CUresult submitLaunch(Stream& stream, LaunchRequest request);

// The CUresult the real driver reports for an interpreter fault.
CUresult faultResult(ptx::exec::FaultKind kind);

}  // namespace cuemu
