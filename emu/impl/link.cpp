// cuLink*: linking PTX (and fatbinaries holding PTX) into one image that cuModuleLoadData accepts. The linked
// image is PTX text: cuemu's interpreter needs nothing else, and users can inspect it.
#include "api/impl.h"

#include "core/device.h"
#include "core/fatbin.h"
#include "core/handle.h"
#include "core/log.h"
#include "core/module.h"

#include <ptx/check.h>
#include <ptx/link.h>

#include <cstring>

namespace cuemu {
namespace {

class LinkState {
 public:
  static constexpr HandleKind kKind = HandleKind::LinkState;
  JitOptions options;
  std::vector<ptx::link::Input> inputs;
  std::string output;  // owned here until cuLinkDestroy, as the API requires
  std::string log;
};

CUresult fail(LinkState& state, CUresult code, const std::string& message) {
  state.log += "error   : " + message + "\n";
  reportJit(state.options, state.log, "", 0);
  CUEMU_ERROR("link: {}", message);
  return code;
}

CUresult addData(CUlinkState handle, CUjitInputType type, const void* data, size_t size, const char* name,
                 unsigned numOptions, CUjit_option* options, void** values) {
  CUEMU_LOOKUP(state, LinkState, handle);
  if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
  auto parsed = parseJitOptions(numOptions, options, values);
  if (!parsed) return parsed.error().code;
  std::string inputName = name ? name : "input";
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      const char* text = static_cast<const char*>(data);
      std::string ptx(text, strnlen(text, size));
      // The driver compiles each input as it is added: malformed PTX fails here, with the log.
      const Device* device = deviceByOrdinal(0);
      ptx::CheckOptions check;
      if (device) check.targetSm = unsigned(device->profile().ccMajor * 10 + device->profile().ccMinor);
      check.acceptNewerIsa = newerPtxIsaAccepted(ptxIsaVersion(ptx));
      auto front = ptx::parseAndCheck(ptx, inputName, check);
      if (!front.ok) {
        reportJit(*parsed, front.log, "", 0);
        return fail(*state, CUDA_ERROR_INVALID_PTX, inputName + ": invalid PTX\n" + front.log);
      }
      state->inputs.push_back({inputName, std::move(ptx)});
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_FATBINARY: {
      const Device* device = deviceByOrdinal(0);
      auto ptx = extractPtx(data, device ? device->profile().ccMajor : 9, device ? device->profile().ccMinor : 0, size);
      if (!ptx) return fail(*state, ptx.error().code, inputName + ": " + ptx.error().message);
      for (auto& unit : ptx->units) state->inputs.push_back({inputName, unit.text});
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_OBJECT:
    case CU_JIT_INPUT_LIBRARY: {
      const Device* device = deviceByOrdinal(0);
      auto ptx = extractPtxFromHostBinary(data, size, device ? device->profile().ccMajor : 9,
                                          device ? device->profile().ccMinor : 0, inputName);
      if (!ptx) return fail(*state, ptx.error().code, ptx.error().message);
      for (auto& unit : ptx->units) state->inputs.push_back({inputName, unit.text});
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_NVVM:
      return fail(
          *state, CUDA_ERROR_NO_BINARY_FOR_GPU,
          inputName +
              ": cuemu links PTX only; add PTX to the input (nvcc -ptx, or -gencode arch=compute_XX,code=compute_XX)");
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult addFile(CUlinkState handle, CUjitInputType type, const char* path, unsigned numOptions, CUjit_option* options,
                 void** values) {
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(state, LinkState, handle);
  auto bytes = readImageFile(path);
  if (!bytes) return bytes.error().code;
  return addData(handle, type, bytes->data(), bytes->size(), path, numOptions, options, values);
}

CUresult create(unsigned numOptions, CUjit_option* options, void** values, CUlinkState* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  auto parsed = parseJitOptions(numOptions, options, values);
  if (!parsed) return parsed.error().code;
  auto state = std::make_shared<LinkState>();
  state->options = *parsed;
  *out = toApiHandle<CUlinkState>(handleTable<LinkState>().insert(state));
  return CUDA_SUCCESS;
}

}  // namespace

namespace impl {

CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut) {
  return create(numOptions, options, optionValues, stateOut);
}
CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut) {
  return create(numOptions, options, optionValues, stateOut);
}
CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                       unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return addData(state, type, data, size, name, numOptions, options, optionValues);
}
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                          unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return addData(state, type, data, size, name, numOptions, options, optionValues);
}
CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                       CUjit_option* options, void** optionValues) {
  return addFile(state, type, path, numOptions, options, optionValues);
}
CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                          CUjit_option* options, void** optionValues) {
  return addFile(state, type, path, numOptions, options, optionValues);
}

CUresult cuLinkComplete(CUlinkState handle, void** cubinOut, size_t* sizeOut) {
  if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
  CUEMU_LOOKUP(state, LinkState, handle);
  auto result = ptx::link::linkModules(state->inputs, unsigned(std::max(0, state->options.maxRegisters)));
  state->log += result.log;
  if (!result.ok) {
    reportJit(state->options, state->log, "", 0);
    CUEMU_ERROR("link failed:\n{}", result.log);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  // Check now, as the real linker does, so that errors surface in cuLinkComplete's log.
  ptx::exec::CompileOptions check;
  check.acceptNewerIsa = newerPtxIsaAccepted(ptxIsaVersion(result.ptx));
  auto compiled = ptx::exec::compile(result.ptx, check);
  if (!compiled.program) {
    state->log += "error   : " + compiled.error + "\n";
    reportJit(state->options, state->log, "", 0);
    return CUDA_ERROR_INVALID_PTX;
  }
  // A function nobody defines fails the link with CUDA_ERROR_INVALID_SOURCE and the log names it (driver 580,
  // measured three times in a row on an H200).
  if (!result.undefinedFunctions.empty()) {
    // The error log holds the errors only, without a final newline (cuda.core compares it whole).
    std::string errors;
    for (size_t at = 0; at < state->log.size();) {
      size_t end = state->log.find('\n', at);
      if (end == std::string::npos) end = state->log.size();
      if (state->log.compare(at, 5, "error") == 0) {
        if (!errors.empty()) errors += '\n';
        errors.append(state->log, at, end - at);
      }
      at = end + 1;
    }
    reportJit(state->options, errors, "", 0);
    CUEMU_ERROR("link failed:\n{}", result.log);
    return CUDA_ERROR_INVALID_SOURCE;
  }
  state->output = std::move(result.ptx);
  reportJit(state->options, "", state->log, 0);
  *cubinOut = state->output.data();
  *sizeOut = state->output.size() + 1;
  return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState handle) {
  return handleTable<LinkState>().erase(handleValue(handle)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace impl
}  // namespace cuemu
