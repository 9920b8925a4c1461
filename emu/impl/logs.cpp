// The error log API (cuLogs*): what cuemu reports as warnings and errors (rejected modules with their JIT log,
// kernel faults, unsupported features), readable by iterator, dumpable to memory or a file, or delivered to
// callbacks as it happens.
#include "api/impl.h"

#include "core/error_log.h"

#include <cstdio>
#include <cstring>

namespace cuemu::impl {
namespace {

// Callback handles are small numbers wrapped in the opaque handle type.
CUlogsCallbackHandle toHandle(uint64_t id) { return reinterpret_cast<CUlogsCallbackHandle>(id); }
uint64_t fromHandle(CUlogsCallbackHandle handle) { return reinterpret_cast<uint64_t>(handle); }

}  // namespace

CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData, CUlogsCallbackHandle* callback_out) {
  if (!callbackFunc) return CUDA_ERROR_INVALID_VALUE;
  uint64_t id = errorlog::addCallback(callbackFunc, userData);
  if (callback_out) *callback_out = toHandle(id);
  return CUDA_SUCCESS;
}

CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  return errorlog::removeCallback(fromHandle(callback)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  (void)flags;  // none are defined; driver 580 ignores them
  if (!iterator_out) return CUDA_ERROR_INVALID_VALUE;
  *iterator_out = errorlog::current();
  return CUDA_SUCCESS;
}

// Writes whole lines that fit (each ends with '\n', the text is NUL-terminated); the iterator advances past the
// lines written, so a second call continues where a too-small buffer stopped.
CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size, unsigned int flags) {
  (void)flags;
  if (!buffer || !size || *size == 0) return CUDA_ERROR_INVALID_VALUE;
  uint32_t next = 0;
  uint32_t from = iterator ? *iterator : 0;
  auto lines = errorlog::entriesFrom(from, next);
  size_t used = 0;
  uint32_t written = 0;
  for (const std::string& line : lines) {
    if (used + line.size() + 2 > *size) break;
    std::memcpy(buffer + used, line.data(), line.size());
    used += line.size();
    buffer[used++] = '\n';
    ++written;
  }
  buffer[used] = '\0';
  *size = used;
  if (iterator) *iterator = next - static_cast<uint32_t>(lines.size() - written);
  return CUDA_SUCCESS;
}

CUresult cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile, unsigned int flags) {
  (void)flags;
  if (!pathToFile) return CUDA_ERROR_INVALID_VALUE;
  std::FILE* file = std::fopen(pathToFile, "a");
  if (!file) return CUDA_ERROR_INVALID_VALUE;
  uint32_t next = 0;
  auto lines = errorlog::entriesFrom(iterator ? *iterator : 0, next);
  for (const std::string& line : lines) std::fprintf(file, "%s\n", line.c_str());
  bool ok = std::fclose(file) == 0;
  if (iterator) *iterator = next;
  return ok ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

}  // namespace cuemu::impl
