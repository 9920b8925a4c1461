// CUDA dynamic parallelism in the interpreter: the device runtime's entry points (what `-lcudadevrt` would link),
// implemented here instead of by NVIDIA's library, whose code cannot run on the interpreter. A kernel calls them
// as `.extern .func`s; the interpreter gathers the arguments, keeps each thread's last error and asks the driver
// (HostServices::device*) for launches, streams, events and device properties.
#pragma once

#include "exec/engine.h"

#include <array>
#include <cstdint>
#include <string_view>

namespace ptx::exec {

enum class RuntimeCall : uint8_t {
  GetParameterBufferV2,  // (func, dim3 grid, dim3 block, u32 shared) -> pointer
  GetParameterBuffer,    // (u64 align, u64 size) -> pointer
  LaunchDeviceV2,        // (buffer, stream)
  LaunchDevice,          // (func, buffer, dim3 grid, dim3 block, u32 shared, stream)
  GetLastError,
  PeekAtLastError,
  GetDevice,              // (int*)
  GetDeviceCount,         // (int*)
  DeviceGetAttribute,     // (int*, attr, device)
  DeviceGetLimit,         // (size_t*, limit)
  RuntimeGetVersion,      // (int*)
  StreamCreateWithFlags,  // (stream*, flags)
  StreamDestroy,          // (stream)
  StreamWaitEvent,        // (stream, event, flags)
  EventCreateWithFlags,   // (event*, flags)
  EventRecord,            // (event, stream)
  EventRecordWithFlags,   // (event, stream, flags)
  EventDestroy,           // (event)
  Malloc,                 // (void**, size)
  Free,                   // (void*)
  MemcpyAsync,            // (dst, src, count, kind, stream)
  MemsetAsync,            // (dst, int value, count, stream)
  GraphLaunch,            // (graphExec, stream)
  GetErrorName,           // (cudaError_t) -> const char*
  GetErrorString,         // (cudaError_t) -> const char*
};

// One row per function a kernel may call: the argument sizes in bytes (dim3 is 12) and the result's size (0: none).
struct RuntimeFunction {
  std::string_view name;  // without the "__cudaCDP2" or "cuda" prefix

  RuntimeCall call;
  uint8_t resultSize;
  uint8_t argCount;
  std::array<uint8_t, 6> argSizes;
};

// The row of a device runtime function, or null for any other name.
const RuntimeFunction* findRuntimeFunction(std::string_view name);

// Where argument k lies in the buffer a lane's arguments are gathered into: each argument aligned to its size,
// a dim3 (12 bytes) to 4.
uint32_t runtimeArgOffset(const RuntimeFunction& f, unsigned k);

namespace ctl {
const Op* deviceRuntime(Warp& w, const Op* op);  // aux = Program::runtimeSites index
}

}  // namespace ptx::exec
