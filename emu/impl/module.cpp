// Module, library and kernel entry points.
#include "api/impl.h"

#include "core/context.h"
#include "core/device.h"
#include "core/fatbin.h"
#include "core/log.h"
#include "core/module.h"

#include <atomic>
#include <chrono>

namespace cuemu {
namespace {

// A refused image. One without code for this device (SASS only, or PTX for a later one) is what NVIDIA's libraries
// offer while they probe: cuFFT on the gb10 profile first offers each kernel's sm_120 SASS, then its PTX, and a
// driver logs nothing. The first such refusal of a process is an error line (it explains a later failure); the
// others are information (CUEMU_LOG=1). Every other refusal is an error line, SASS a library generated for its
// call (cuBLASLt's nvjet kernels) included: it is no probe, the call fails with it.
void logRefusedImage(const char* what, const Error& error) {
  static std::atomic<bool> refusedBefore{false};
  const bool noCode = error.code == CUDA_ERROR_NO_BINARY_FOR_GPU && !refusedGeneratedSass(error);
  if (noCode && refusedBefore.exchange(true)) {
    CUEMU_INFO("{} load failed: {}", what, error.message);
    return;
  }
  CUEMU_ERROR("{} load failed: {}{}", what, error.message,
              noCode ? " (later images without code for this device are logged with CUEMU_LOG=1)" : "");
}

CUresult loadModule(CUmodule* out, const void* image, const JitOptions& jit, std::string name,
                    size_t size = kUnknownImageSize) {
  if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  const Device& device = (*context)->device();
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileImage(image, device.profile().ccMajor, device.profile().ccMinor, std::move(name), size,
                               uint64_t(device.profile().sharedMemPerBlockOptin), jit.contractMulAdd());
  float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!compiled) {
    logRefusedImage("module", compiled.error());
    reportJit(jit, compiled.error().message, "", ms);
    return compiled.error().code;
  }
  jit.applyTo(*compiled);
  auto module = (*context)->modules().load(std::move(*compiled));
  if (!module) {
    CUEMU_ERROR("module load failed: {}", module.error().message);
    reportJit(jit, module.error().message, "", ms);
    return module.error().code;
  }
  reportJit(jit, "", jit.verbose ? "cuemu: PTX compiled for the interpreter" : "", ms);
  *out = toApiHandle<CUmodule>((*module)->handle());
  return CUDA_SUCCESS;
}

enum class GlobalKind { Any, Managed };

CUresult getGlobal(Module& module, const char* name, uint64_t* address, uint64_t* size,
                   GlobalKind kind = GlobalKind::Any) {
  uint64_t a = 0, s = 0;
  bool managed = false;
  if (!module.findGlobal(name, a, s, &managed) || (kind == GlobalKind::Managed && !managed)) {
    // The name of one of the module's kernels is not a missing symbol but the wrong kind (driver 580).
    for (const auto& kernel : ptx::exec::declaredKernels(module.program()))
      if (kernel.name == name) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_FOUND;
  }
  if (address) *address = a;
  if (size) *size = s;
  return CUDA_SUCCESS;
}

CUresult loadLibrary(CUlibrary* out, const void* code, std::string name, size_t size, unsigned numJit,
                     CUjit_option* jitOptions, void** jitValues, unsigned numLibraryOptions,
                     CUlibraryOption* libraryOptions, void** libraryValues) {
  if (!out || !code) return CUDA_ERROR_INVALID_VALUE;
  if (numLibraryOptions && !libraryOptions) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numLibraryOptions; ++i) {
    if (libraryOptions[i] < 0 || libraryOptions[i] >= CU_LIBRARY_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    // CU_LIBRARY_BINARY_IS_PRESERVED is a hint without a value: cuBLASLt 13 passes it with a NULL value array.
    if (libraryOptions[i] != CU_LIBRARY_BINARY_IS_PRESERVED && !libraryValues) return CUDA_ERROR_INVALID_VALUE;
  }
  auto jit = parseJitOptions(numJit, jitOptions, jitValues);
  if (!jit) return jit.error().code;
  // A library is context-independent: it compiles for device 0's architecture (a machine whose devices have
  // different compute capabilities gets libraries for device 0's; docs/devices.md).
  const Device* device = deviceByOrdinal(0);
  if (!device) return CUDA_ERROR_NO_DEVICE;
  auto compiled = compileImage(code, device->profile().ccMajor, device->profile().ccMinor, std::move(name), size,
                               uint64_t(device->profile().sharedMemPerBlockOptin), jit->contractMulAdd());
  std::shared_ptr<Library> library;
  if (!compiled) {
    logRefusedImage("library", compiled.error());
    reportJit(*jit, compiled.error().message, "", 0);
    // Driver 580 (measured on an H200) accepts two kinds of bad input and fails each use of the library instead:
    // bytes that begin like an ELF file but are no cubin, and PTX of a newer ISA than it compiles (the library
    // then has no kernels, and getting a kernel or the module answers CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
    const auto* bytes = static_cast<const unsigned char*>(code);
    bool elfLooking = bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';  // stops at a NUL
    CUresult failure = compiled.error().code;
    bool deferred =
        (elfLooking && failure == CUDA_ERROR_INVALID_IMAGE) || failure == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    if (!deferred) return failure;
    library = std::make_shared<Library>(compiled.takeError());
  } else {
    jit->applyTo(*compiled);
    library = std::make_shared<Library>(std::move(*compiled));
  }
  library->setHandle(handleTable<Library>().insert(library));
  // Eager loading instantiates the library in the current context now; lazy loading at first use.
  if (moduleLoadingMode() == CU_MODULE_EAGER_LOADING)
    if (auto context = currentContext()) (void)library->moduleIn(*context);
  *out = toApiHandle<CUlibrary>(library->handle());
  return CUDA_SUCCESS;
}

CUresult libraryGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name, GlobalKind kind) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(lib, Library, library);
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  auto module = lib->moduleIn(**context);
  if (!module) return module.error().code;
  uint64_t a, s;
  if (CUresult r = getGlobal(**module, name, &a, &s, kind)) return r;
  if (dptr) *dptr = a;
  if (bytes) *bytes = s;
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult cuModuleLoadData(CUmodule* module, const void* image) { return loadModule(module, image, {}, "image"); }

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                            void** optionValues) {
  auto jit = parseJitOptions(numOptions, options, optionValues);
  if (!jit) return jit.error().code;
  return loadModule(module, image, *jit, "image");
}

CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return loadModule(module, fatCubin, {}, "fatbinary");
}

CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
  auto bytes = readImageFile(fname);
  if (!bytes) return bytes.error().code;
  return loadModule(module, bytes->data(), {}, fname, bytes->size());
}

CUresult cuModuleUnload(CUmodule hmod) {
  CUEMU_LOOKUP(module, Module, hmod);
  return module->context().modules().unload(module);
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, hmod);
  auto function = module->function(name);
  if (!function) return CUDA_ERROR_NOT_FOUND;
  *hfunc = toApiHandle<CUfunction>(function->handle());
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, mod);
  *count = static_cast<unsigned>(ptx::exec::declaredKernels(module->program()).size());
  return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
  if (!functions) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, mod);
  auto all = module->allFunctions();
  if (numFunctions > all.size()) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numFunctions; ++i) functions[i] = toApiHandle<CUfunction>(all[i]->handle());
  return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, hmod);
  uint64_t a, s;
  CUresult r = getGlobal(*module, name, &a, &s);
  if (r) return r;
  if (dptr) *dptr = a;
  if (bytes) *bytes = s;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal(CUdeviceptr_v1* dptr, unsigned int* bytes, CUmodule hmod, const char* name) {
  CUdeviceptr a = 0;
  size_t s = 0;
  CUresult r = impl::cuModuleGetGlobal_v2(dptr ? &a : nullptr, bytes ? &s : nullptr, hmod, name);
  if (r) return r;
  // The 32-bit legacy form cannot express cuemu's addresses.
  if (a > 0xFFFFFFFFu) return CUDA_ERROR_NOT_SUPPORTED;
  if (dptr) *dptr = static_cast<CUdeviceptr_v1>(a);
  if (bytes) *bytes = static_cast<unsigned>(s);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  if (!mode) return CUDA_ERROR_INVALID_VALUE;
  *mode = moduleLoadingMode();
  return CUDA_SUCCESS;
}

CUresult cuModuleGetTexRef(CUtexref* pTexRef, CUmodule hmod, const char* name) {
  if (!pTexRef || !name) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, hmod);
  return CUDA_ERROR_NOT_FOUND;  // texture references are not part of the PTX cuemu runs
}

CUresult cuModuleGetSurfRef(CUsurfref* pSurfRef, CUmodule hmod, const char* name) {
  if (!pSurfRef || !name) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(module, Module, hmod);
  return CUDA_ERROR_NOT_FOUND;
}

// ---- Libraries -------------------------------------------------------------------------------------------------

CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
                           unsigned int numLibraryOptions) {
  return loadLibrary(library, code, "image", kUnknownImageSize, numJitOptions, jitOptions, jitOptionsValues,
                     numLibraryOptions, libraryOptions, libraryOptionValues);
}

CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                               void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                               void** libraryOptionValues, unsigned int numLibraryOptions) {
  if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
  auto bytes = readImageFile(fileName);
  if (!bytes) return bytes.error().code;
  return loadLibrary(library, bytes->data(), fileName, bytes->size(), numJitOptions, jitOptions, jitOptionsValues,
                     numLibraryOptions, libraryOptions, libraryOptionValues);
}

CUresult cuLibraryUnload(CUlibrary library) {
  CUEMU_LOOKUP(lib, Library, library);
  lib->unregister();
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(lib, Library, library);
  if (CUresult r = lib->loadError()) return r;
  uint64_t handle = lib->kernelHandle(name);
  if (!handle) return CUDA_ERROR_NOT_FOUND;
  *pKernel = toApiHandle<CUkernel>(handle);
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(library, Library, lib);
  *count = static_cast<unsigned>(library->kernelCount());
  return CUDA_SUCCESS;
}

CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  if (!kernels) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(library, Library, lib);
  auto all = library->kernelHandles();
  if (numKernels > all.size()) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numKernels; ++i) kernels[i] = toApiHandle<CUkernel>(all[i]);
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  if (!pMod) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(lib, Library, library);
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  auto module = lib->moduleIn(**context);
  if (!module) return module.error().code;
  *pMod = toApiHandle<CUmodule>((*module)->handle());
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return libraryGlobal(dptr, bytes, library, name, GlobalKind::Any);
}

CUresult cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  // Only __managed__ variables (.attribute(.managed)); host and device share their memory here.
  return libraryGlobal(dptr, bytes, library, name, GlobalKind::Managed);
}

CUresult cuLibraryGetUnifiedFunction(void** fptr, CUlibrary library, const char* symbol) {
  if (!fptr || !symbol) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(lib, Library, library);
  if (CUresult r = lib->loadError()) return r;
  // Unified (host-callable) functions do not exist in PTX; driver 580 answers CUDA_ERROR_INVALID_VALUE for a
  // name that is none (a kernel's, measured on an H200).
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
  auto function = resolveFunction(reinterpret_cast<CUfunction>(kernel));
  if (!function) return function.error().code;
  *pFunc = toApiHandle<CUfunction>((*function)->handle());
  return CUDA_SUCCESS;
}

CUresult cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  if (!pLib) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(k, Kernel, kernel);
  *pLib = toApiHandle<CUlibrary>(k->library().handle());
  return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  if (!name || !hfunc) return CUDA_ERROR_INVALID_VALUE;  // a NULL kernel too (driver 580)
  CUEMU_LOOKUP(k, Kernel, hfunc);
  *name = k->info().name.c_str();
  return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  if (!paramOffset && !paramSize) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 answers it only in a context (cuda.core's test_num_args_error_handling).
  if (auto context = requireCurrentContext(); !context) return context.error().code;
  CUEMU_LOOKUP(k, Kernel, kernel);
  const auto& params = k->info().params;
  if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
  if (paramOffset) *paramOffset = params[paramIndex].offset;
  if (paramSize) *paramSize = params[paramIndex].size;
  return CUDA_SUCCESS;
}

}  // namespace impl
}  // namespace cuemu
