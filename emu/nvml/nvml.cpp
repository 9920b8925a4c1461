// cuemu's NVML (libnvidia-ml.so.1): NVIDIA's management library answered for cuemu's virtual devices.
//
// Why it exists: clients ask NVML about the machine before they use CUDA. XLA (JAX) will not create its GPU
// client unless nvmlInit succeeds, PyTorch and RAPIDS read memory and device counts through it, and tools such as
// gpustat and nvitop are NVML clients only. On a machine without NVIDIA's driver there is no NVML at all, so
// installed beside cuemu's libcuda.so.1 (and on the loader path of `cuemu run`), this library is the one found.
//
// One source of truth: every fact comes from the libcuda.so.1 beside this library, through the driver API
// (names, UUIDs, PCI ids, attributes, the driver version) and cuemu's extensions (include/cuemu.h: per-device
// memory use, the profile's PCIe link). NVML's device order is PCI order, which for cuemu's devices is also the
// CUDA ordinal order. What cuemu does not model (temperatures, fans, power, ECC, NVLink, MIG, vGPU, accounting,
// events) answers NVML_ERROR_NOT_SUPPORTED, as NVML does for a feature a device lacks: every function NVIDIA's
// nvml.h declares is exported (nvml_functions.def), implemented or answering that.
//
// Process-wide view: memory in use and running processes are this process's (NVML on a GPU sees all processes;
// cuemu's devices are per process unless memory is shared through IPC).
#include "nvml_abi.h"

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cuemu.h"

namespace {

// NVIDIA's driver that cuemu stands for: the version an H100 with driver 580 reports (measured,
// tools/gpu-probe/results), and NVML's own version, which NVIDIA numbers after the CUDA version and driver.
constexpr char kDriverVersion[] = "580.159.04";
constexpr char kNvmlVersion[] = "13.580.159.04";

struct DriverApi {
  void* library = nullptr;
  decltype(&cuInit) init = nullptr;
  decltype(&cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&cuDeviceGetName) deviceGetName = nullptr;
  decltype(&cuDeviceGetUuid) deviceGetUuid = nullptr;
  decltype(&cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&cuDevicePrimaryCtxGetState) primaryCtxGetState = nullptr;
  PFN_cuemuDeviceGetMemoryInfo memoryInfo = nullptr;
  PFN_cuemuDeviceGetPcieLink pcieLink = nullptr;
};

}  // namespace

// The handle NVML gives out: one per device, alive for the whole process (NVML's handles stay valid across
// nvmlShutdown/nvmlInit too).
struct nvmlDevice_st {
  int ordinal = 0;
  std::string name;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  unsigned domain = 0, bus = 0, device = 0;
  unsigned pciDeviceId = 0, pciSubsystemId = 0;  // (id << 16) | vendor id, as NVML reports them
  int ccMajor = 0, ccMinor = 0;
  int smCount = 0;
  unsigned smClockMHz = 0, memoryClockMHz = 0, memoryBusWidth = 0;
  int computeMode = 0;
};

namespace {

struct State {
  std::mutex mutex;
  int initCount = 0;  // nvmlInit/nvmlShutdown pairs
  bool loaded = false;
  DriverApi api;
  std::vector<nvmlDevice_st> devices;  // filled once; never shrinks, so handles stay valid
};

State& state() {
  static State s;
  return s;
}

// Where cuemu's diagnostics go (CUEMU_LOG: "1" or "stderr", else a file appended to, as the driver's log does);
// null when CUEMU_LOG is not set.
std::FILE* logStream() {
  static std::FILE* const stream = []() -> std::FILE* {
    const char* log = std::getenv("CUEMU_LOG");
    if (!log || !*log) return nullptr;
    if (std::strcmp(log, "1") == 0 || std::strcmp(log, "stderr") == 0) return stderr;
    std::FILE* file = std::fopen(log, "a");
    return file ? file : stderr;
  }();
  return stream;
}

// The libcuda.so.1 beside this library: the driver whose devices NVML describes.
std::string besideThisLibrary(const char* name) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&besideThisLibrary), &info) && info.dli_fname) {
    std::string path = info.dli_fname;
    auto slash = path.rfind('/');
    if (slash != std::string::npos) return path.substr(0, slash + 1) + name;
  }
  return name;
}

template <typename F> bool bind(void* library, const char* symbol, F& out) {
  out = reinterpret_cast<F>(dlsym(library, symbol));
  return out != nullptr;
}

nvmlReturn_t loadDriver(State& s) {
  if (s.loaded) return NVML_SUCCESS;
  std::string path = besideThisLibrary("libcuda.so.1");
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    if (std::FILE* log = logStream()) std::fprintf(log, "cuemu NVML: cannot load %s: %s\n", path.c_str(), dlerror());
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  DriverApi& a = s.api;
  bool ok = bind(library, "cuInit", a.init) && bind(library, "cuDriverGetVersion", a.driverGetVersion) &&
            bind(library, "cuDeviceGetCount", a.deviceGetCount) && bind(library, "cuDeviceGetName", a.deviceGetName) &&
            bind(library, "cuDeviceGetUuid_v2", a.deviceGetUuid) &&
            bind(library, "cuDeviceGetAttribute", a.deviceGetAttribute) &&
            bind(library, "cuDevicePrimaryCtxGetState", a.primaryCtxGetState) &&
            bind(library, "cuemuDeviceGetMemoryInfo", a.memoryInfo) &&
            bind(library, "cuemuDeviceGetPcieLink", a.pcieLink);
  if (!ok) {
    // Not cuemu's driver (or an older cuemu): NVML cannot describe its devices.
    if (std::FILE* log = logStream())
      std::fprintf(log, "cuemu NVML: %s is not cuemu's driver of this version\n", path.c_str());
    dlclose(library);
    return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  }
  a.library = library;
  s.loaded = true;
  return NVML_SUCCESS;
}

std::string uuidText(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

int attribute(const DriverApi& a, CUdevice_attribute which, int ordinal) {
  int value = 0;
  return a.deviceGetAttribute(&value, which, ordinal) == CUDA_SUCCESS ? value : 0;
}

nvmlReturn_t discoverDevices(State& s) {
  if (!s.devices.empty()) return NVML_SUCCESS;
  const DriverApi& a = s.api;
  CUresult r = a.init(0);
  if (r == CUDA_ERROR_NO_DEVICE) return NVML_ERROR_NOT_FOUND;
  if (r != CUDA_SUCCESS) return NVML_ERROR_DRIVER_NOT_LOADED;
  int count = 0;
  if (a.deviceGetCount(&count) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
  std::vector<nvmlDevice_st> found(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    nvmlDevice_st& d = found[static_cast<std::size_t>(i)];
    d.ordinal = i;
    char name[256] = {};
    a.deviceGetName(name, sizeof name, i);
    d.name = name;
    CUuuid uuid{};
    a.deviceGetUuid(&uuid, i);
    d.uuid = uuidText(uuid);
    d.domain = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i));
    d.bus = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i));
    d.device = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i));
    d.ccMajor = attribute(a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, i);
    d.ccMinor = attribute(a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, i);
    d.smCount = attribute(a, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, i);
    d.smClockMHz = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, i) / 1000);
    d.memoryClockMHz = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, i) / 1000);
    d.memoryBusWidth = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, i));
    d.computeMode = attribute(a, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, i);
    // Both in NVML's form already: the id in the high 16 bits, NVIDIA's vendor id in the low 16.
    d.pciDeviceId = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, i));
    d.pciSubsystemId = static_cast<unsigned>(attribute(a, CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID, i));
  }
  s.devices = std::move(found);
  return NVML_SUCCESS;
}

nvmlReturn_t initialize(unsigned flags) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (nvmlReturn_t r = loadDriver(s); r != NVML_SUCCESS) return r;
  nvmlReturn_t r = discoverDevices(s);
  if (r == NVML_ERROR_NOT_FOUND && (flags & NVML_INIT_FLAG_NO_GPUS)) r = NVML_SUCCESS;
  if (r != NVML_SUCCESS) return r;
  ++s.initCount;
  return NVML_SUCCESS;
}

bool initialized() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.initCount > 0;
}

// The checks every device query starts with: NVML initialised, a handle this library gave out.
nvmlReturn_t checkDevice(nvmlDevice_t device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  State& s = state();
  if (!device || s.devices.empty() || device < &s.devices.front() || device > &s.devices.back())
    return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

nvmlReturn_t copyText(const std::string& text, char* out, unsigned length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

std::string busIdText(const nvmlDevice_st& d, bool legacy) {
  char text[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
  std::snprintf(text, sizeof text, legacy ? "%04X:%02X:%02X.0" : "%08X:%02X:%02X.0", d.domain, d.bus, d.device);
  return text;
}

nvmlReturn_t memoryOf(const nvmlDevice_st& d, unsigned long long& total, unsigned long long& free) {
  size_t f = 0, t = 0;
  if (state().api.memoryInfo(&f, &t, d.ordinal) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
  total = t;
  free = f;
  return NVML_SUCCESS;
}

// This process uses the device when it holds memory there or its primary context is active.
bool processUses(const nvmlDevice_st& d, unsigned long long& used) {
  unsigned long long total = 0, free = 0;
  if (memoryOf(d, total, free) != NVML_SUCCESS) return false;
  used = total - free;
  unsigned flags = 0;
  int active = 0;
  state().api.primaryCtxGetState(d.ordinal, &flags, &active);
  return used > 0 || active;
}

template <typename Info> nvmlReturn_t runningProcesses(nvmlDevice_t device, unsigned* count, Info* infos) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long used = 0;
  unsigned found = processUses(*device, used) ? 1 : 0;
  if (*count < found) {
    *count = found;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = found;
  if (found == 0) return NVML_SUCCESS;
  if (!infos) return NVML_ERROR_INVALID_ARGUMENT;
  Info info{};
  info.pid = static_cast<unsigned>(getpid());
  info.usedGpuMemory = used;
  if constexpr (sizeof(Info) > sizeof(nvmlProcessInfo_v1_t)) {
    info.gpuInstanceId = NVML_INSTANCE_ID_NONE;
    info.computeInstanceId = NVML_INSTANCE_ID_NONE;
  }
  infos[0] = info;
  return NVML_SUCCESS;
}

constexpr unsigned kPcieSpeedMbps[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};  // per lane, by generation

// The PCIe link of a device, for a query whose output is `out`: the device is checked first, then the output.
nvmlReturn_t pcieLink(nvmlDevice_t device, const void* out, unsigned& generation, unsigned& width) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  int g = 0, w = 0;
  CUresult r = state().api.pcieLink(&g, &w, device->ordinal);
  if (r == CUDA_ERROR_NOT_SUPPORTED) return NVML_ERROR_NOT_SUPPORTED;
  if (r != CUDA_SUCCESS || g < 1 || g > 6) return NVML_ERROR_UNKNOWN;
  generation = static_cast<unsigned>(g);
  width = static_cast<unsigned>(w);
  return NVML_SUCCESS;
}

nvmlReturn_t unsupported(const char* name) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (std::FILE* log = logStream()) {
    std::fprintf(log, "cuemu NVML: %s: not supported by cuemu's devices\n", name);
    std::fflush(log);
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

}  // namespace

#define NVML_EXPORT extern "C" __attribute__((visibility("default")))

// ---- initialisation and errors ----

NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags) { return initialize(flags); }
NVML_EXPORT nvmlReturn_t nvmlInit_v2() { return initialize(0); }
NVML_EXPORT nvmlReturn_t nvmlInit() { return initialize(0); }

NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.initCount == 0) return NVML_ERROR_UNINITIALIZED;
  --s.initCount;
  return NVML_SUCCESS;
}

NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "vGPU ECC not supported";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset type not supported";
    default: return "Unknown Error";
  }
}

// ---- the system ----

NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  return copyText(kDriverVersion, version, length);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  return copyText(kNvmlVersion, version, length);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  return state().api.driverGetVersion(version) == CUDA_SUCCESS ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return nvmlSystemGetCudaDriverVersion(version);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned pid, char* name, unsigned length) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string first;
  if (!in || !std::getline(in, first, '\0') || first.empty()) return NVML_ERROR_NOT_FOUND;
  // A name longer than the buffer is cut, as NVML does.
  std::size_t n = std::min<std::size_t>(first.size(), length - 1);
  std::memcpy(name, first.data(), n);
  name[n] = '\0';
  return NVML_SUCCESS;
}

// No S-class units (they are rack enclosures) on any machine cuemu describes.
NVML_EXPORT nvmlReturn_t nvmlUnitGetCount(unsigned* count) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = 0;
  return NVML_SUCCESS;
}

// ---- finding devices ----

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(state().devices.size());
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* count) { return nvmlDeviceGetCount_v2(count); }

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= state().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &state().devices[index];
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  // Compared exactly: NVIDIA's NVML does not find a UUID written in upper case (tools/gpu-probe/results/nvml28-*).
  // The "GPU-" prefix may be left out: cuda.core's Device.to_system_device passes the bare UUID of
  // cuDeviceGetUuid, which finds the device on an H100.
  std::string_view wanted(uuid);
  for (auto& d : state().devices)
    if (wanted == d.uuid || (!wanted.starts_with("GPU-") && std::string_view(d.uuid).substr(4) == wanted)) {
      *device = &d;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

// Bus ids are matched as numbers, so "0000:01:00.0", "00000000:01:00.0" and lower or upper case all find a device.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* busId, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (!busId || !device) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  if (std::sscanf(busId, "%x:%x:%x.%x", &domain, &bus, &dev, &function) != 4) {
    domain = 0;
    if (std::sscanf(busId, "%x:%x.%x", &bus, &dev, &function) != 3) return NVML_ERROR_INVALID_ARGUMENT;
  }
  for (auto& d : state().devices)
    if (d.domain == domain && d.bus == bus && d.device == dev && function == 0) {
      *device = &d;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* busId, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(busId, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned* index) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!index) return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned>(device->ordinal);
  return NVML_SUCCESS;
}

// ---- identity ----

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  return copyText(device->name, name, length);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  return copyText(device->uuid, uuid, length);
}

// The minor number of /dev/nvidiaN: the ordinal (`cuemu run` shows /dev/nvidiaN for each device).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minor) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!minor) return NVML_ERROR_INVALID_ARGUMENT;
  *minor = static_cast<unsigned>(device->ordinal);
  return NVML_SUCCESS;
}

// Data-centre parts (Hopper, GB10) are NVIDIA-branded; the RTX PRO workstation part is NVIDIA RTX.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* brand) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!brand) return NVML_ERROR_INVALID_ARGUMENT;
  *brand = device->name.find("RTX") != std::string::npos ? NVML_BRAND_NVIDIA_RTX : NVML_BRAND_NVIDIA;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!arch) return NVML_ERROR_INVALID_ARGUMENT;
  *arch = device->ccMajor == 9                             ? NVML_DEVICE_ARCH_HOPPER
          : device->ccMajor == 10 || device->ccMajor == 12 ? NVML_DEVICE_ARCH_BLACKWELL
                                                           : NVML_DEVICE_ARCH_UNKNOWN;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = device->ccMajor;
  *minor = device->ccMinor;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlPciInfo_t info{};
  std::string legacy = busIdText(*device, true), full = busIdText(*device, false);
  std::memcpy(info.busIdLegacy, legacy.c_str(), legacy.size() + 1);
  std::memcpy(info.busId, full.c_str(), full.size() + 1);
  info.domain = device->domain;
  info.bus = device->bus;
  info.device = device->device;
  info.pciDeviceId = device->pciDeviceId;
  info.pciSubSystemId = device->pciSubsystemId;
  *pci = info;
  return NVML_SUCCESS;
}
// With the PCI class of a 3D controller (base 0x3, sub 0x2), as an H100 reports (nvidia-smi -q).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t* pci) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  if (pci->version != nvmlPciInfoExt_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlPciInfoExt_t info{};
  info.version = nvmlPciInfoExt_v1;
  info.domain = device->domain;
  info.bus = device->bus;
  info.device = device->device;
  info.pciDeviceId = device->pciDeviceId;
  info.pciSubSystemId = device->pciSubsystemId;
  info.baseClass = 0x3;
  info.subClass = 0x2;
  std::string full = busIdText(*device, false);
  std::memcpy(info.busId, full.c_str(), full.size() + 1);
  *pci = info;
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}

// ---- memory ----

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total = 0, free = 0;
  if (nvmlReturn_t r = memoryOf(*device, total, free); r != NVML_SUCCESS) return r;
  memory->total = total;
  memory->free = free;
  memory->used = total - free;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  // Another version number is a function NVML does not have (measured: version word 1 answers
  // NVML_ERROR_FUNCTION_NOT_FOUND); version 2 of another size, a mismatch.
  if (memory->version >> 24 != nvmlMemory_v2 >> 24) return NVML_ERROR_FUNCTION_NOT_FOUND;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  unsigned long long total = 0, free = 0;
  if (nvmlReturn_t r = memoryOf(*device, total, free); r != NVML_SUCCESS) return r;
  memory->total = total;
  memory->reserved = 0;  // cuemu keeps no device memory for itself
  memory->free = free;
  memory->used = total - free;
  return NVML_SUCCESS;
}

// The BAR1 aperture maps all of device memory (as on Hopper and later with resizable BAR); nothing is mapped.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!bar1) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total = 0, free = 0;
  if (nvmlReturn_t r = memoryOf(*device, total, free); r != NVML_SUCCESS) return r;
  *bar1 = {total, total, 0};
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned* width) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!width) return NVML_ERROR_INVALID_ARGUMENT;
  *width = device->memoryBusWidth;
  return NVML_SUCCESS;
}

// ---- PCI Express ----

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned* generation) {
  unsigned link = 0, width = 0;
  nvmlReturn_t r = pcieLink(device, generation, link, width);
  if (r == NVML_SUCCESS) *generation = link;
  return r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned* generation) {
  return nvmlDeviceGetCurrPcieLinkGeneration(device, generation);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned* generation) {
  return nvmlDeviceGetCurrPcieLinkGeneration(device, generation);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned* width) {
  unsigned generation = 0, lanes = 0;
  nvmlReturn_t r = pcieLink(device, width, generation, lanes);
  if (r == NVML_SUCCESS) *width = lanes;
  return r;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned* width) {
  return nvmlDeviceGetCurrPcieLinkWidth(device, width);
}

// Per-lane transfer rate in Mb/s.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieSpeed(nvmlDevice_t device, unsigned* speed) {
  unsigned generation = 0, width = 0;
  if (nvmlReturn_t r = pcieLink(device, speed, generation, width); r != NVML_SUCCESS) return r;
  *speed = kPcieSpeedMbps[generation];
  return NVML_SUCCESS;
}

// NVML_PCIE_LINK_MAX_SPEED_*: 1 for 2500 MB/s up to 6 for 64000 MB/s, the generation's number.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned* maxSpeed) {
  unsigned generation = 0, width = 0;
  if (nvmlReturn_t r = pcieLink(device, maxSpeed, generation, width); r != NVML_SUCCESS) return r;
  *maxSpeed = generation;
  return NVML_SUCCESS;
}

// ---- clocks, cores and modes ----

// Current and maximum clocks are the profile's boost clocks: cuemu's devices do not throttle.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *clock = device->smClockMHz; return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *clock = device->memoryClockMHz; return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO: return NVML_ERROR_NOT_SUPPORTED;  // no video engines are modelled
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock) {
  return nvmlDeviceGetClockInfo(device, type, clock);
}

// Always the highest performance state: cuemu's devices run at their boost clocks.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* state) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!state) return NVML_ERROR_INVALID_ARGUMENT;
  *state = NVML_PSTATE_0;
  return NVML_SUCCESS;
}

// 128 FP32 cores per SM on Hopper and Blackwell.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned* cores) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!cores) return NVML_ERROR_INVALID_ARGUMENT;
  *cores = static_cast<unsigned>(device->smCount) * 128u;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = static_cast<nvmlComputeMode_t>(device->computeMode);
  return NVML_SUCCESS;
}

// The driver is always loaded while a process uses it: persistence mode has no meaning here and reads disabled.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

// No display is attached to a virtual device.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return nvmlDeviceGetPersistenceMode(device, mode);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* active) {
  return nvmlDeviceGetPersistenceMode(device, active);
}

// MIG is off (cuemu does not partition devices).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = 0;
  return NVML_SUCCESS;
}

// Each virtual device is a board of its own.
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned* multiGpu) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!multiGpu) return NVML_ERROR_INVALID_ARGUMENT;
  *multiGpu = 0;
  return NVML_SUCCESS;
}

// ---- processes ----

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                                 nvmlProcessInfo_t* infos) {
  return runningProcesses(device, count, infos);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                                                 nvmlProcessInfo_v2_t* infos) {
  return runningProcesses(device, count, infos);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* count,
                                                              nvmlProcessInfo_v1_t* infos) {
  return runningProcesses(device, count, infos);
}

// No graphics contexts exist on cuemu's devices.
template <typename Info> nvmlReturn_t noGraphicsProcesses(nvmlDevice_t device, unsigned* count, Info*) {
  if (nvmlReturn_t r = checkDevice(device); r != NVML_SUCCESS) return r;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = 0;
  return NVML_SUCCESS;
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                                  nvmlProcessInfo_t* infos) {
  return noGraphicsProcesses(device, count, infos);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                                                  nvmlProcessInfo_v2_t* infos) {
  return noGraphicsProcesses(device, count, infos);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned* count,
                                                               nvmlProcessInfo_v1_t* infos) {
  return noGraphicsProcesses(device, count, infos);
}

// ---- topology between devices ----

// Virtual devices share the host's memory: peer reads, writes and atomics work between any two (as
// cuDeviceCanAccessPeer answers); there is no NVLink. A device and itself are not peers (NVIDIA's NVML answers
// NVML_P2P_STATUS_NOT_SUPPORTED there: tools/gpu-probe/results/nvml28-*).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index,
                                                nvmlGpuP2PStatus_t* status) {
  if (nvmlReturn_t r = checkDevice(a); r != NVML_SUCCESS) return r;
  if (nvmlReturn_t r = checkDevice(b); r != NVML_SUCCESS) return r;
  if (!status) return NVML_ERROR_INVALID_ARGUMENT;
  if (a == b && index >= NVML_P2P_CAPS_INDEX_READ && index < NVML_P2P_CAPS_INDEX_UNKNOWN) {
    *status = NVML_P2P_STATUS_NOT_SUPPORTED;
    return NVML_SUCCESS;
  }
  switch (index) {
    case NVML_P2P_CAPS_INDEX_READ:
    case NVML_P2P_CAPS_INDEX_WRITE:
    case NVML_P2P_CAPS_INDEX_ATOMICS:
    case NVML_P2P_CAPS_INDEX_PCI: *status = NVML_P2P_STATUS_OK; return NVML_SUCCESS;
    case NVML_P2P_CAPS_INDEX_NVLINK: *status = NVML_P2P_STATUS_NOT_SUPPORTED; return NVML_SUCCESS;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
}

// All virtual devices hang off the same host bridge. A device and itself have no common ancestor in NVIDIA's NVML
// (NVML_ERROR_NOT_SUPPORTED, measured).
NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                             nvmlGpuTopologyLevel_t* level) {
  if (nvmlReturn_t r = checkDevice(a); r != NVML_SUCCESS) return r;
  if (nvmlReturn_t r = checkDevice(b); r != NVML_SUCCESS) return r;
  if (!level) return NVML_ERROR_INVALID_ARGUMENT;
  if (a == b) return NVML_ERROR_NOT_SUPPORTED;
  *level = NVML_TOPOLOGY_HOSTBRIDGE;
  return NVML_SUCCESS;
}

// ---- everything else: NOT_SUPPORTED (nvml_functions.def) ----

#define CUEMU_NVML_IMPLEMENTED(name)
#define CUEMU_NVML_UNSUPPORTED(name) \
  NVML_EXPORT nvmlReturn_t name() { return unsupported(#name); }
#include "nvml_functions.def"
#undef CUEMU_NVML_UNSUPPORTED
#undef CUEMU_NVML_IMPLEMENTED
