// Coredump settings (cuCoredump{Get,Set}Attribute[Global]). cuemu keeps and reports every setting, process-wide
// and per context (a context starts from the process-wide values at its first query or change). It writes no GPU
// core file: a kernel fault is reported with kernel, block, thread, PTX line and address instead.
#include "api/impl.h"

#include "core/context.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cuemu::impl {
namespace {

struct CoredumpSettings {
  bool enableOnException = false;
  bool triggerHost = true;
  bool lightweight = false;
  bool enableUserTrigger = false;
  std::string file;  // none by default (driver 580): the dump is then named after time, host and process
  std::string pipe;
  int generationFlags = CU_COREDUMP_DEFAULT_FLAGS;
};

struct ContextSettings {
  std::weak_ptr<Context> context;
  CoredumpSettings settings;
};

struct CoredumpState {
  std::mutex mutex;
  CoredumpSettings global;
  std::map<unsigned long long, ContextSettings> perContext;  // by context id; destroyed contexts are pruned
};

bool envTrue(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "0") != 0 && *value;
}

CoredumpState& state() {
  static CoredumpState* instance = [] {
    auto* s = new CoredumpState;
    // The environment variables NVIDIA's driver reads give the process-wide defaults.
    s->global.enableOnException = envTrue("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
    s->global.lightweight = envTrue("CUDA_ENABLE_LIGHTWEIGHT_COREDUMP");
    s->global.enableUserTrigger = envTrue("CUDA_ENABLE_USER_TRIGGERED_COREDUMP");
    if (const char* file = std::getenv("CUDA_COREDUMP_FILE")) s->global.file = file;
    if (const char* pipe = std::getenv("CUDA_COREDUMP_PIPE")) s->global.pipe = pipe;
    return s;
  }();
  return *instance;
}

bool* boolSetting(CoredumpSettings& s, CUcoredumpSettings attrib) {
  switch (attrib) {
    case CU_COREDUMP_ENABLE_ON_EXCEPTION: return &s.enableOnException;
    case CU_COREDUMP_TRIGGER_HOST: return &s.triggerHost;
    case CU_COREDUMP_LIGHTWEIGHT: return &s.lightweight;
    case CU_COREDUMP_ENABLE_USER_TRIGGER: return &s.enableUserTrigger;
    default: return nullptr;
  }
}

std::string* stringSetting(CoredumpSettings& s, CUcoredumpSettings attrib) {
  if (attrib == CU_COREDUMP_FILE) return &s.file;
  if (attrib == CU_COREDUMP_PIPE) return &s.pipe;
  return nullptr;
}

// `*size` is the value buffer's size; driver 580 leaves it as given, and a NULL value reads nothing.
CUresult getSetting(CoredumpSettings& s, CUcoredumpSettings attrib, void* value, size_t* size) {
  if (!size) return CUDA_ERROR_INVALID_VALUE;
  bool* b = boolSetting(s, attrib);
  std::string* text = stringSetting(s, attrib);
  if (!b && !text && attrib != CU_COREDUMP_GENERATION_FLAGS) return CUDA_ERROR_INVALID_VALUE;
  if (!value) return CUDA_SUCCESS;
  if (b) {
    if (*size < sizeof(bool)) return CUDA_ERROR_INVALID_VALUE;
    *static_cast<bool*>(value) = *b;
  } else if (text) {
    if (*size < text->size() + 1) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(value, text->c_str(), text->size() + 1);
  } else {
    if (*size < sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
    *static_cast<int*>(value) = s.generationFlags;
  }
  return CUDA_SUCCESS;
}

CUresult setSetting(CoredumpSettings& s, CUcoredumpSettings attrib, void* value, size_t* size) {
  if (!value || !size) return CUDA_ERROR_INVALID_VALUE;
  if (bool* b = boolSetting(s, attrib)) {
    if (*size != sizeof(bool)) return CUDA_ERROR_INVALID_VALUE;
    *b = *static_cast<bool*>(value);
    return CUDA_SUCCESS;
  }
  if (std::string* text = stringSetting(s, attrib)) {
    if (*size == 0) return CUDA_ERROR_INVALID_VALUE;
    const char* chars = static_cast<const char*>(value);
    *text = std::string(chars, strnlen(chars, *size));
    return CUDA_SUCCESS;
  }
  if (attrib == CU_COREDUMP_GENERATION_FLAGS) {
    if (*size != sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
    int flags = *static_cast<int*>(value);
    constexpr int kKnown = CU_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES | CU_COREDUMP_SKIP_GLOBAL_MEMORY |
                           CU_COREDUMP_SKIP_SHARED_MEMORY | CU_COREDUMP_SKIP_LOCAL_MEMORY | CU_COREDUMP_SKIP_ABORT |
                           CU_COREDUMP_SKIP_CONSTBANK_MEMORY;
    if (flags & ~kKnown) return CUDA_ERROR_INVALID_VALUE;
    s.generationFlags = flags;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

template <typename Fn> CUresult withContextSettings(Fn&& fn) {
  auto context = requireCurrentContext();
  if (!context) return context.error().code;
  CoredumpState& s = state();
  std::lock_guard lock(s.mutex);
  // Settings of contexts destroyed since (or primary contexts reset) go: a context starts afresh.
  std::erase_if(s.perContext, [](const auto& entry) {
    auto owner = entry.second.context.lock();
    return !owner || !owner->isAlive();
  });
  auto [it, inserted] = s.perContext.try_emplace((*context)->id(), ContextSettings{*context, s.global});
  return fn(it->second.settings);
}

}  // namespace

CUresult cuCoredumpGetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) {
  return withContextSettings([&](CoredumpSettings& s) { return getSetting(s, attrib, value, size); });
}

CUresult cuCoredumpSetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) {
  // The pipe and the file of a context's dump are chosen process-wide only.
  if (attrib == CU_COREDUMP_PIPE || attrib == CU_COREDUMP_ENABLE_USER_TRIGGER) return CUDA_ERROR_NOT_PERMITTED;
  return withContextSettings([&](CoredumpSettings& s) { return setSetting(s, attrib, value, size); });
}

CUresult cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void* value, size_t* size) {
  CoredumpState& s = state();
  std::lock_guard lock(s.mutex);
  return getSetting(s.global, attrib, value, size);
}

CUresult cuCoredumpSetAttributeGlobal(CUcoredumpSettings attrib, void* value, size_t* size) {
  CoredumpState& s = state();
  std::lock_guard lock(s.mutex);
  return setSetting(s.global, attrib, value, size);
}

}  // namespace cuemu::impl
