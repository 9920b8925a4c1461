// The device runtime's entry points (CUDA dynamic parallelism): argument gathering, per-thread last error, the
// kernel behind a function address, and the calls into HostServices.
#include "exec/device_runtime.h"

#include "exec/control_ops.h"
#include "exec/handlers.h"
#include "exec/memory.h"
#include "ptx/device_runtime.h"

#include <cstring>

namespace ptx::exec {

namespace {

// cudaError_t values the interpreter itself answers (driver_types.h).
constexpr int32_t kSuccess = 0;
constexpr int32_t kInvalidValue = 1;
constexpr int32_t kInvalidDeviceFunction = 98;
constexpr int32_t kNotSupported = 801;

using C = RuntimeCall;
constexpr uint8_t kDim3 = 12;

// Names without their prefix: nvcc (CUDA 12/13, CDP2) calls "__cudaCDP2" + name, CDP1 code (older toolkits,
// CUDA_FORCE_CDP1_IF_SUPPORTED) and hand-written PTX call "cuda" + name.
constexpr std::string_view kCdp2Prefix = "__cudaCDP2", kPlainPrefix = "cuda";
constexpr RuntimeFunction kRuntimeFunctions[] = {
    {"GetParameterBufferV2", C::GetParameterBufferV2, 8, 4, {8, kDim3, kDim3, 4}},
    {"GetParameterBuffer", C::GetParameterBuffer, 8, 2, {8, 8}},
    {"LaunchDeviceV2", C::LaunchDeviceV2, 4, 2, {8, 8}},
    {"LaunchDeviceV2_ptsz", C::LaunchDeviceV2, 4, 2, {8, 8}},
    {"LaunchDevice", C::LaunchDevice, 4, 6, {8, 8, kDim3, kDim3, 4, 8}},
    {"LaunchDevice_ptsz", C::LaunchDevice, 4, 6, {8, 8, kDim3, kDim3, 4, 8}},
    {"GetLastError", C::GetLastError, 4, 0, {}},
    {"PeekAtLastError", C::PeekAtLastError, 4, 0, {}},
    {"GetDevice", C::GetDevice, 4, 1, {8}},
    {"GetDeviceCount", C::GetDeviceCount, 4, 1, {8}},
    {"DeviceGetAttribute", C::DeviceGetAttribute, 4, 3, {8, 4, 4}},
    {"DeviceGetLimit", C::DeviceGetLimit, 4, 2, {8, 4}},
    {"RuntimeGetVersion", C::RuntimeGetVersion, 4, 1, {8}},
    {"StreamCreateWithFlags", C::StreamCreateWithFlags, 4, 2, {8, 4}},
    {"StreamDestroy", C::StreamDestroy, 4, 1, {8}},
    {"StreamWaitEvent", C::StreamWaitEvent, 4, 3, {8, 8, 4}},
    {"StreamWaitEvent_ptsz", C::StreamWaitEvent, 4, 3, {8, 8, 4}},
    {"EventCreateWithFlags", C::EventCreateWithFlags, 4, 2, {8, 4}},
    {"EventRecord", C::EventRecord, 4, 2, {8, 8}},
    {"EventRecord_ptsz", C::EventRecord, 4, 2, {8, 8}},
    {"EventRecordWithFlags", C::EventRecordWithFlags, 4, 3, {8, 8, 4}},
    {"EventRecordWithFlags_ptsz", C::EventRecordWithFlags, 4, 3, {8, 8, 4}},
    {"EventDestroy", C::EventDestroy, 4, 1, {8}},
    {"Malloc", C::Malloc, 4, 2, {8, 8}},
    {"Free", C::Free, 4, 1, {8}},
    {"MemcpyAsync", C::MemcpyAsync, 4, 5, {8, 8, 8, 4, 8}},
    {"MemcpyAsync_ptsz", C::MemcpyAsync, 4, 5, {8, 8, 8, 4, 8}},
    {"MemsetAsync", C::MemsetAsync, 4, 4, {8, 4, 8, 8}},
    {"MemsetAsync_ptsz", C::MemsetAsync, 4, 4, {8, 4, 8, 8}},
    {"GraphLaunch", C::GraphLaunch, 4, 2, {8, 8}},
    {"GetErrorName", C::GetErrorName, 8, 1, {4}},
    {"GetErrorString", C::GetErrorString, 8, 1, {4}},
};

// The gathered arguments of one lane (RuntimeSite::args put them at runtimeArgOffset).
struct Args {
  alignas(8) uint8_t bytes[64];
  uint32_t offsets[6];

  explicit Args(const RuntimeFunction& f) {
    for (unsigned k = 0; k < f.argCount; ++k) offsets[k] = runtimeArgOffset(f, k);
  }
  template <class T> T get(unsigned k) const {
    T v;
    std::memcpy(&v, bytes + offsets[k], sizeof v);
    return v;
  }
  Dim3 dim(unsigned k) const {
    Dim3 d;
    std::memcpy(&d.x, bytes + offsets[k], 4);
    std::memcpy(&d.y, bytes + offsets[k] + 4, 4);
    std::memcpy(&d.z, bytes + offsets[k] + 8, 4);
    return d;
  }
};

const RuntimeFunction& rowOf(RuntimeCall call) {
  for (const RuntimeFunction& f : kRuntimeFunctions)
    if (f.call == call) return f;
  __builtin_unreachable();
}

// The kernel whose address a kernel took (`mov.u64 %rd, kernel`), or -1.
int kernelAt(const Program& module, uint64_t address) {
  if ((address & kFunctionAddressBase) != kFunctionAddressBase) return -1;
  uint64_t ir = address & ~kFunctionAddressBase;
  for (size_t k = 0; k < module.kernelEntries.size(); ++k)
    if (module.kernelEntries[k] == ir) return int(k);
  return -1;
}

// Writes a result through a pointer argument; false after a fault. A null pointer is cudaErrorInvalidValue.
template <class T> bool writeOut(Warp& w, const Op* op, int lane, uint64_t address, T value, int32_t& error) {
  if (address == 0) {
    error = kInvalidValue;
    return true;
  }
  uint8_t* p = mem::xlate<mem::Generic>(w, op, lane, address, sizeof(T), true);
  if (!p) return false;
  std::memcpy(p, &value, sizeof value);
  return true;
}

}  // namespace

uint32_t runtimeArgOffset(const RuntimeFunction& f, unsigned k) {
  uint32_t at = 0;
  for (unsigned i = 0;; ++i) {
    uint32_t align = f.argSizes[i] == kDim3 ? 4 : f.argSizes[i];
    at = (at + align - 1) / align * align;
    if (i == k) return at;
    at += f.argSizes[i];
  }
}

const RuntimeFunction* findRuntimeFunction(std::string_view name) {
  if (name.starts_with(kCdp2Prefix))
    name.remove_prefix(kCdp2Prefix.size());
  else if (name.starts_with(kPlainPrefix))
    name.remove_prefix(kPlainPrefix.size());
  else
    return nullptr;
  for (const RuntimeFunction& f : kRuntimeFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

namespace ctl {

const Op* deviceRuntime(Warp& w, const Op* op) {
  Cta& cta = *w.cta;
  const Program& module = *cta.job->module;  // kernels are named module-wide; the sites are the code's
  const RuntimeSite& site = cta.job->program->runtimeSites[RuntimeCallOperands::of(*op).site];
  const RuntimeFunction& f = rowOf(site.call);
  HostServices& host = *cta.job->host;
  uint32_t m = w.exec;
  while (m) {
    int lane = std::countr_zero(m);
    m &= m - 1;
    uint8_t* frame = w.local + uint64_t(lane) * w.localStride + w.frame;
    Args args(f);
    for (const CallArg& a : site.args) {
      if (a.kind == CallArg::FrameToFrame)
        std::memcpy(args.bytes + a.dst, frame + a.src, a.size);
      else
        std::memcpy(args.bytes + a.dst, w.rf + a.src + size_t(lane) * a.size, a.size);
    }
    DeviceCaller caller;
    caller.block = cta.id;
    caller.thread = w.index * 32 + uint32_t(lane);
    int32_t& lastError = w.runtimeError[lane];
    int32_t error = kSuccess;
    uint64_t result = 0;
    bool faulted = false;
    switch (site.call) {
      case C::GetParameterBufferV2:
      case C::GetParameterBuffer: {
        DeviceLaunchConfig config;
        uint32_t bytes = 0, align = 8;
        if (site.call == C::GetParameterBufferV2) {
          config.kernel = kernelAt(module, args.get<uint64_t>(0));
          config.grid = args.dim(1);
          config.block = args.dim(2);
          config.sharedBytes = args.get<uint32_t>(3);
          if (config.kernel < 0) {
            error = kInvalidDeviceFunction;
            break;
          }
          bytes = module.kernelInfo[size_t(config.kernel)].paramBytes;
        } else {
          uint64_t a = args.get<uint64_t>(0), size = args.get<uint64_t>(1);
          if (size > UINT32_MAX || a > 4096 || (a & (a - 1)) != 0) {
            error = kInvalidValue;
            break;
          }
          bytes = uint32_t(size);
          align = uint32_t(a ? a : 1);
        }
        result = host.deviceParameterBuffer(config, bytes, align, error);
        break;
      }
      case C::LaunchDeviceV2:
        error = host.deviceLaunch(args.get<uint64_t>(0), args.get<uint64_t>(1), nullptr, caller);
        break;
      case C::LaunchDevice: {
        DeviceLaunchConfig config;
        config.kernel = kernelAt(module, args.get<uint64_t>(0));
        config.grid = args.dim(2);
        config.block = args.dim(3);
        config.sharedBytes = args.get<uint32_t>(4);
        error = config.kernel < 0 ? kInvalidDeviceFunction
                                  : host.deviceLaunch(args.get<uint64_t>(1), args.get<uint64_t>(5), &config, caller);
        break;
      }
      case C::GetLastError:
        result = uint32_t(lastError);
        lastError = kSuccess;
        break;
      case C::PeekAtLastError: result = uint32_t(lastError); break;
      case C::GetDevice:
      case C::GetDeviceCount:
      case C::RuntimeGetVersion: {
        int32_t value = 0;
        error = site.call == C::GetDevice        ? host.deviceOrdinal(value)
                : site.call == C::GetDeviceCount ? host.deviceCount(value)
                                                 : host.runtimeVersion(value);
        if (error == kSuccess) faulted = !writeOut(w, op, lane, args.get<uint64_t>(0), value, error);
        break;
      }
      case C::DeviceGetAttribute: {
        int32_t value = 0;
        error = host.deviceAttribute(args.get<int32_t>(1), args.get<int32_t>(2), value);
        if (error == kSuccess) faulted = !writeOut(w, op, lane, args.get<uint64_t>(0), value, error);
        break;
      }
      case C::DeviceGetLimit: {
        uint64_t value = 0;
        error = host.deviceLimit(args.get<int32_t>(1), value);
        if (error == kSuccess) faulted = !writeOut(w, op, lane, args.get<uint64_t>(0), value, error);
        break;
      }
      case C::StreamCreateWithFlags:
      case C::EventCreateWithFlags: {
        uint64_t handle = 0;
        if (args.get<uint64_t>(0) == 0) {
          error = kInvalidValue;
          break;
        }
        error = site.call == C::StreamCreateWithFlags ? host.deviceStreamCreate(args.get<uint32_t>(1), handle)
                                                      : host.deviceEventCreate(args.get<uint32_t>(1), handle);
        if (error == kSuccess) faulted = !writeOut(w, op, lane, args.get<uint64_t>(0), handle, error);
        break;
      }
      case C::StreamDestroy: error = host.deviceStreamDestroy(args.get<uint64_t>(0)); break;
      case C::StreamWaitEvent:
        error = host.deviceStreamWaitEvent(args.get<uint64_t>(0), args.get<uint64_t>(1), args.get<uint32_t>(2));
        break;
      case C::EventRecord: error = host.deviceEventRecord(args.get<uint64_t>(0), args.get<uint64_t>(1), 0); break;
      case C::EventRecordWithFlags:
        error = host.deviceEventRecord(args.get<uint64_t>(0), args.get<uint64_t>(1), args.get<uint32_t>(2));
        break;
      case C::EventDestroy: error = host.deviceEventDestroy(args.get<uint64_t>(0)); break;
      case C::Malloc: {
        uint64_t size = args.get<uint64_t>(1);
        uint64_t p = size ? host.deviceMalloc(size) : 0;
        if (size && !p) error = 2;  // cudaErrorMemoryAllocation
        if (error == kSuccess) faulted = !writeOut(w, op, lane, args.get<uint64_t>(0), p, error);
        break;
      }
      case C::Free:
        if (uint64_t p = args.get<uint64_t>(0)) host.deviceFree(p);
        break;
      case C::MemcpyAsync:
        error = host.deviceMemcpyAsync(args.get<uint64_t>(0), args.get<uint64_t>(1), args.get<uint64_t>(2),
                                       args.get<uint32_t>(3), args.get<uint64_t>(4), caller);
        break;
      case C::MemsetAsync:
        error = host.deviceMemsetAsync(args.get<uint64_t>(0), args.get<uint32_t>(1), args.get<uint64_t>(2),
                                       args.get<uint64_t>(3), caller);
        break;
      case C::GraphLaunch:
        error = host.deviceGraphLaunch(args.get<uint64_t>(0), args.get<uint64_t>(1), caller);
        if (error == kDeviceGraphLaunchFault)
          return raiseFault(w, op, lane, FaultKind::IllegalAddress, args.get<uint64_t>(0),
                            "cudaGraphLaunch in a kernel of a graph not instantiated with "
                            "cudaGraphInstantiateFlagDeviceLaunch");
        break;
      case C::GetErrorName:
      case C::GetErrorString: result = host.deviceErrorText(args.get<int32_t>(0), site.call == C::GetErrorName); break;
    }
    if (faulted) return nullptr;
    if (error != kSuccess) lastError = error;
    bool returnsError = site.call != C::GetParameterBufferV2 && site.call != C::GetParameterBuffer &&
                        site.call != C::GetLastError && site.call != C::PeekAtLastError &&
                        site.call != C::GetErrorName && site.call != C::GetErrorString;
    if (returnsError) result = uint32_t(error);
    if (site.resultSize) std::memcpy(frame + site.resultOffset, &result, site.resultSize);
  }
  return op + 1;
}

}  // namespace ctl

// ---- HostServices defaults: no device runtime ------------------------------------------------------------------

uint64_t HostServices::deviceParameterBuffer(const DeviceLaunchConfig&, uint32_t, uint32_t, int32_t& error) {
  error = kNotSupported;
  return 0;
}
int32_t HostServices::deviceLaunch(uint64_t, uint64_t, const DeviceLaunchConfig*, const DeviceCaller&) {
  return kNotSupported;
}
int32_t HostServices::deviceStreamCreate(uint32_t, uint64_t&) { return kNotSupported; }
int32_t HostServices::deviceStreamDestroy(uint64_t) { return kNotSupported; }
int32_t HostServices::deviceEventCreate(uint32_t, uint64_t&) { return kNotSupported; }
int32_t HostServices::deviceEventRecord(uint64_t, uint64_t, uint32_t) { return kNotSupported; }
int32_t HostServices::deviceStreamWaitEvent(uint64_t, uint64_t, uint32_t) { return kNotSupported; }
int32_t HostServices::deviceEventDestroy(uint64_t) { return kNotSupported; }
int32_t HostServices::deviceMemcpyAsync(uint64_t, uint64_t, uint64_t, uint32_t, uint64_t, const DeviceCaller&) {
  return kNotSupported;
}
int32_t HostServices::deviceMemsetAsync(uint64_t, uint32_t, uint64_t, uint64_t, const DeviceCaller&) {
  return kNotSupported;
}
int32_t HostServices::deviceGraphLaunch(uint64_t, uint64_t, const DeviceCaller&) { return kNotSupported; }
int32_t HostServices::deviceOrdinal(int32_t&) { return kNotSupported; }
int32_t HostServices::deviceCount(int32_t&) { return kNotSupported; }
int32_t HostServices::deviceAttribute(int32_t, int32_t, int32_t&) { return kNotSupported; }
int32_t HostServices::deviceLimit(int32_t, uint64_t&) { return kNotSupported; }
int32_t HostServices::runtimeVersion(int32_t&) { return kNotSupported; }
uint64_t HostServices::deviceErrorText(int32_t, bool) { return 0; }

}  // namespace ptx::exec
