// cuemu's libnvJitLink.so.13: the nvJitLink 13 ABI over cuemu's own linker (cuLink* of libcuda.so.1).
//
// Why it exists: numba-cuda, cuda.core and other clients link device code through nvJitLink when it can be
// loaded, and NVIDIA's nvJitLink turns PTX into SASS for the device's architecture, which cuemu cannot run.
// Installed beside cuemu's libcuda.so.1, this library is the nvJitLink that the loader finds first; it links
// PTX, fatbinaries, relocatable objects and libraries that carry PTX, and the "cubin" it returns is the linked
// PTX text, which cuemu's cuModuleLoadData/cuLibraryLoadData accept (as NVIDIA's driver accepts PTX there too).
// LTO-IR (NVVM bitcode) cannot be linked without NVIDIA's optimiser: such input fails with
// NVJITLINK_ERROR_UNRECOGNIZED_INPUT and says so in the error log.
//
// `nvJitLinkVersion` is deliberately not exported. Clients probe for it to decide whether nvJitLink is usable
// for everything, LTO included: without it, numba-cuda compiles PTX instead of LTO-IR (its default turns LTO on
// only when nvJitLink reports a version) and cuda.core links through cuLink* (cuemu's linker, the same result).
// Programs that call the link functions directly (cuSPARSE does, through the versioned names) get PTX linking.
//
// ABI facts (names, enum values, the versioned symbol names) are those of CUDA 13's nvJitLink.h.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum Result : int {
  kSuccess = 0,
  kErrorUnrecognizedOption = 1,
  kErrorMissingArch = 2,
  kErrorInvalidInput = 3,
  kErrorPtxCompile = 4,
  kErrorInternal = 6,
  kErrorUnrecognizedInput = 8,
  kErrorFinalize = 9,
  kErrorNullInput = 10,
  kErrorIncompatibleOptions = 11,
  kErrorUnrecognizedArch = 16,
};

enum InputType : int {
  kInputNone = 0,
  kInputCubin = 1,
  kInputPtx = 2,
  kInputLtoir = 3,
  kInputFatbin = 4,
  kInputObject = 5,
  kInputLibrary = 6,
  kInputIndex = 7,
  kInputAny = 10,
};

constexpr uint32_t kFatbinMagic = 0xBA55ED50;  // a fatbinary's header
constexpr uint32_t kElfMagic = 0x464C457F;     // "\x7fELF": a cubin or a host object
constexpr char kArchiveMagic[] = "!<arch>\n";

struct Linker {
  CUlinkState state = nullptr;
  std::string arch;
  std::string linked;  // the linked PTX, once complete
  std::string errorLog, infoLog;
  bool complete = false;
  bool wantsPtx = false;
  bool lto = false;
  char cuError[16384] = {};  // cuLink's log buffers, appended to the logs above after each call
  char cuInfo[16384] = {};
};

bool validHandle(const Linker* linker) { return linker != nullptr; }

std::string cuErrorText(CUresult code) {
  const char* name = nullptr;
  cuGetErrorName(code, &name);
  return name ? name : std::to_string(int(code));
}

void collectJitLogs(Linker& linker) {
  if (linker.cuError[0]) linker.errorLog += linker.cuError;
  if (linker.cuInfo[0]) linker.infoLog += linker.cuInfo;
  linker.cuError[0] = linker.cuInfo[0] = '\0';
}

// The kind of an ANY input, from its first bytes (as NVIDIA's nvJitLink guesses it).
InputType guessType(const void* data, size_t size) {
  uint32_t magic = 0;
  if (size >= 4) std::memcpy(&magic, data, 4);
  if (magic == kFatbinMagic) return kInputFatbin;
  if (magic == kElfMagic) return kInputCubin;
  if (size >= 8 && std::memcmp(data, kArchiveMagic, 8) == 0) return kInputLibrary;
  // NVVM bitcode starts with "BC" (0x42 0x43 0xC0 0xDE) or its wrapper magic 0x0B17C0DE.
  if (magic == 0xDEC04342 || magic == 0x0B17C0DE) return kInputLtoir;
  return kInputPtx;
}

Result addInput(Linker* linker, int type, const void* data, size_t size, const char* name) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!data) return kErrorNullInput;
  if (linker->complete) return kErrorInvalidInput;
  std::string label = name ? name : "input";
  if (type == kInputAny) type = guessType(data, size);
  CUjitInputType cuType;
  switch (type) {
    case kInputPtx: cuType = CU_JIT_INPUT_PTX; break;
    case kInputCubin: cuType = CU_JIT_INPUT_CUBIN; break;
    case kInputFatbin: cuType = CU_JIT_INPUT_FATBINARY; break;
    case kInputObject: cuType = CU_JIT_INPUT_OBJECT; break;
    case kInputLibrary: cuType = CU_JIT_INPUT_LIBRARY; break;
    case kInputLtoir:
      linker->errorLog +=
          "ERROR: " + label + ": LTO-IR cannot be linked by cuemu's nvJitLink (it links PTX; compile without LTO)\n";
      return kErrorUnrecognizedInput;
    default:
      linker->errorLog += "ERROR: " + label + ": unrecognized input type " + std::to_string(type) + "\n";
      return kErrorUnrecognizedInput;
  }
  // A PTX input may lack its terminating NUL; cuLinkAddData reads at most `size` bytes anyway.
  CUresult r = cuLinkAddData(linker->state, cuType, const_cast<void*>(data), size, label.c_str(), 0, nullptr, nullptr);
  collectJitLogs(*linker);
  if (r != CUDA_SUCCESS) {
    linker->errorLog += "ERROR: " + label + ": " + cuErrorText(r) + "\n";
    return type == kInputPtx ? kErrorPtxCompile : kErrorInvalidInput;
  }
  return kSuccess;
}

Result parseOptions(Linker& linker, uint32_t count, const char** options, std::vector<CUjit_option>& keys,
                    std::vector<void*>& values) {
  for (uint32_t i = 0; i < count; ++i) {
    if (!options || !options[i]) return kErrorNullInput;
    std::string_view option = options[i];
    auto valueOf = [&](std::string_view prefix) { return option.substr(prefix.size()); };
    if (option.rfind("-arch=", 0) == 0) {
      std::string_view arch = valueOf("-arch=");
      // sm_NN, sm_NNa/f, compute_NN (PTX output), lto_NN.
      if (arch.rfind("sm_", 0) != 0 && arch.rfind("compute_", 0) != 0 && arch.rfind("lto_", 0) != 0) {
        linker.errorLog += "ERROR: unrecognized -arch value '" + std::string(arch) + "'\n";
        return kErrorUnrecognizedArch;
      }
      linker.arch = arch;
    } else if (option.rfind("-maxrregcount=", 0) == 0) {
      unsigned long n = std::strtoul(std::string(valueOf("-maxrregcount=")).c_str(), nullptr, 10);
      keys.push_back(CU_JIT_MAX_REGISTERS);
      values.push_back(reinterpret_cast<void*>(uintptr_t(n)));
    } else if (option == "-ptx") {
      linker.wantsPtx = true;
    } else if (option == "-lto") {
      linker.lto = true;
    } else if (option == "-lineinfo") {
      keys.push_back(CU_JIT_GENERATE_LINE_INFO);
      values.push_back(reinterpret_cast<void*>(uintptr_t(1)));
    } else if (option == "-g") {
      keys.push_back(CU_JIT_GENERATE_DEBUG_INFO);
      values.push_back(reinterpret_cast<void*>(uintptr_t(1)));
    } else if (option.rfind("-O", 0) == 0 || option.rfind("-ftz=", 0) == 0 || option.rfind("-prec-div=", 0) == 0 ||
               option.rfind("-prec-sqrt=", 0) == 0 || option.rfind("-fma=", 0) == 0 || option == "-verbose" ||
               option == "-warningsaserror" || option.rfind("-split-compile", 0) == 0 ||
               option.rfind("-jump-table-density", 0) == 0 || option == "-no-cache" ||
               option.rfind("-kernels-used=", 0) == 0 || option.rfind("-variables-used=", 0) == 0 ||
               option == "-optimize-unused-variables" || option.rfind("-Xptxas", 0) == 0 ||
               option.rfind("-Xnvvm", 0) == 0 || option.rfind("-time", 0) == 0) {
      // Code-generation and optimisation options: meaningful for SASS, nothing to do for interpreted PTX.
    } else {
      linker.errorLog += "ERROR: unrecognized option '" + std::string(option) + "'\n";
      return kErrorUnrecognizedOption;
    }
  }
  if (linker.arch.empty()) {
    linker.errorLog += "ERROR: -arch=sm_NN is required\n";
    return kErrorMissingArch;
  }
  return kSuccess;
}

Result create(Linker** out, uint32_t count, const char** options) {
  if (!out) return kErrorNullInput;
  *out = nullptr;
  auto* linker = new (std::nothrow) Linker;
  if (!linker) return kErrorInternal;
  std::vector<CUjit_option> keys;
  std::vector<void*> values;
  Result parsed = parseOptions(*linker, count, options, keys, values);
  if (parsed != kSuccess) {
    delete linker;
    return parsed;
  }
  keys.insert(keys.end(), {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES});
  values.insert(values.end(), {linker->cuError, reinterpret_cast<void*>(sizeof linker->cuError), linker->cuInfo,
                               reinterpret_cast<void*>(sizeof linker->cuInfo)});
  // nvJitLink needs no context; cuemu's linker only needs the driver initialised (idempotent).
  CUresult r = cuInit(0);
  if (r == CUDA_SUCCESS) r = cuLinkCreate(unsigned(keys.size()), keys.data(), values.data(), &linker->state);
  if (r != CUDA_SUCCESS) {
    delete linker;
    return kErrorInternal;
  }
  *out = linker;
  return kSuccess;
}

Result completeLink(Linker* linker) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (linker->complete) return kSuccess;
  void* image = nullptr;
  size_t size = 0;
  CUresult r = cuLinkComplete(linker->state, &image, &size);
  collectJitLogs(*linker);
  if (r != CUDA_SUCCESS) {
    linker->errorLog += "ERROR: link failed: " + cuErrorText(r) + "\n";
    return kErrorFinalize;
  }
  // cuemu's linked image is PTX text; size counts its terminating NUL.
  linker->linked.assign(static_cast<const char*>(image), size ? size - 1 : 0);
  linker->complete = true;
  return kSuccess;
}

Result copyOut(const Linker* linker, const std::string& text, char* out) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!out) return kErrorNullInput;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

Result sizeOf(const Linker* linker, const std::string& text, size_t* size) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!size) return kErrorNullInput;
  *size = text.size() + 1;
  return kSuccess;
}

Result linkedOutput(const Linker* linker, const std::string** text) {
  if (!validHandle(linker)) return kErrorInvalidInput;
  if (!linker->complete) return kErrorInvalidInput;
  *text = &linker->linked;
  return kSuccess;
}

}  // namespace

extern "C" {

using nvJitLinkHandle = Linker*;

__attribute__((visibility("default"))) int __nvJitLinkCreate_13_0(nvJitLinkHandle* handle, uint32_t numOptions,
                                                                  const char** options) {
  return create(handle, numOptions, options);
}

__attribute__((visibility("default"))) int __nvJitLinkDestroy_13_0(nvJitLinkHandle* handle) {
  if (!handle) return kErrorNullInput;
  if (!*handle) return kErrorInvalidInput;
  if ((*handle)->state) cuLinkDestroy((*handle)->state);
  delete *handle;
  *handle = nullptr;
  return kSuccess;
}

__attribute__((visibility("default"))) int __nvJitLinkAddData_13_0(nvJitLinkHandle handle, int inputType,
                                                                   const void* data, size_t size, const char* name) {
  return addInput(handle, inputType, data, size, name);
}

__attribute__((visibility("default"))) int __nvJitLinkAddFile_13_0(nvJitLinkHandle handle, int inputType,
                                                                   const char* fileName) {
  if (!validHandle(handle)) return kErrorInvalidInput;
  if (!fileName) return kErrorNullInput;
  FILE* file = std::fopen(fileName, "rb");
  if (!file) {
    handle->errorLog += std::string("ERROR: cannot open ") + fileName + "\n";
    return kErrorInvalidInput;
  }
  std::string bytes;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) bytes.append(buffer, n);
  std::fclose(file);
  return addInput(handle, inputType, bytes.data(), bytes.size(), fileName);
}

__attribute__((visibility("default"))) int __nvJitLinkComplete_13_0(nvJitLinkHandle handle) {
  return completeLink(handle);
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedCubinSize_13_0(nvJitLinkHandle handle, size_t* size) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? sizeOf(handle, *text, size) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedCubin_13_0(nvJitLinkHandle handle, void* cubin) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? copyOut(handle, *text, static_cast<char*>(cubin)) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedPtxSize_13_0(nvJitLinkHandle handle, size_t* size) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? sizeOf(handle, *text, size) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetLinkedPtx_13_0(nvJitLinkHandle handle, char* ptx) {
  const std::string* text = nullptr;
  Result r = linkedOutput(handle, &text);
  return r == kSuccess ? copyOut(handle, *text, ptx) : r;
}

__attribute__((visibility("default"))) int __nvJitLinkGetErrorLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return validHandle(handle) ? sizeOf(handle, handle->errorLog, size) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetErrorLog_13_0(nvJitLinkHandle handle, char* log) {
  return validHandle(handle) ? copyOut(handle, handle->errorLog, log) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetInfoLogSize_13_0(nvJitLinkHandle handle, size_t* size) {
  return validHandle(handle) ? sizeOf(handle, handle->infoLog, size) : kErrorInvalidInput;
}

__attribute__((visibility("default"))) int __nvJitLinkGetInfoLog_13_0(nvJitLinkHandle handle, char* log) {
  return validHandle(handle) ? copyOut(handle, handle->infoLog, log) : kErrorInvalidInput;
}

// The unversioned names NVIDIA's library also exports (its header maps them to the versioned ones); not
// nvJitLinkVersion (see the top of this file).
__attribute__((visibility("default"), alias("__nvJitLinkCreate_13_0"))) int nvJitLinkCreate(nvJitLinkHandle*, uint32_t,
                                                                                            const char**);
__attribute__((visibility("default"), alias("__nvJitLinkDestroy_13_0"))) int nvJitLinkDestroy(nvJitLinkHandle*);
__attribute__((visibility("default"), alias("__nvJitLinkAddData_13_0"))) int nvJitLinkAddData(nvJitLinkHandle, int,
                                                                                              const void*, size_t,
                                                                                              const char*);
__attribute__((visibility("default"), alias("__nvJitLinkAddFile_13_0"))) int nvJitLinkAddFile(nvJitLinkHandle, int,
                                                                                              const char*);
__attribute__((visibility("default"), alias("__nvJitLinkComplete_13_0"))) int nvJitLinkComplete(nvJitLinkHandle);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedCubinSize_13_0"))) int nvJitLinkGetLinkedCubinSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedCubin_13_0"))) int nvJitLinkGetLinkedCubin(
    nvJitLinkHandle, void*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedPtxSize_13_0"))) int nvJitLinkGetLinkedPtxSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetLinkedPtx_13_0"))) int nvJitLinkGetLinkedPtx(nvJitLinkHandle,
                                                                                                        char*);
__attribute__((visibility("default"), alias("__nvJitLinkGetErrorLogSize_13_0"))) int nvJitLinkGetErrorLogSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetErrorLog_13_0"))) int nvJitLinkGetErrorLog(nvJitLinkHandle,
                                                                                                      char*);
__attribute__((visibility("default"), alias("__nvJitLinkGetInfoLogSize_13_0"))) int nvJitLinkGetInfoLogSize(
    nvJitLinkHandle, size_t*);
__attribute__((visibility("default"), alias("__nvJitLinkGetInfoLog_13_0"))) int nvJitLinkGetInfoLog(nvJitLinkHandle,
                                                                                                    char*);

}  // extern "C"
