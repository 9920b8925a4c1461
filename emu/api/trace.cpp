#include "api/trace.h"

#include "core/context.h"
#include "core/handle.h"

#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cuemu {
const char* errorName(CUresult code);  // impl/init.cpp
}

namespace cuemu::trace {
namespace detail {

namespace {
std::FILE* g_file = nullptr;
std::mutex g_mutex;
}  // namespace

bool readState() {
  const char* value = std::getenv("CUEMU_TRACE");
  bool enabled = value && *value && std::strcmp(value, "0") != 0;
  if (enabled) {
    std::lock_guard lock(g_mutex);
    if (!g_file) {
      g_file = stderr;
      if (std::strcmp(value, "1") != 0 && std::strcmp(value, "stderr") != 0)
        if (std::FILE* f = std::fopen(value, "a")) g_file = f;
    }
  }
  return enabled;
}
}  // namespace detail

void appendPointer(std::string& out, const void* p) {
  if (!p)
    out += "NULL";
  else
    fmt::format_to(std::back_inserter(out), "{}", p);
}

void appendString(std::string& out, const char* s) {
  if (!s) {
    out += "NULL";
    return;
  }
  // Read through the kernel so that a garbage pointer yields "<unreadable>" instead of a crash.
  char buffer[129] = {};
  struct iovec local {
    buffer, sizeof(buffer) - 1
  }, remote{const_cast<char*>(s), sizeof(buffer) - 1};
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n <= 0) {
    // The string may end near an unmapped page: retry byte by byte up to the terminator.
    n = 0;
    while (n < 128) {
      struct iovec l {
        buffer + n, 1
      }, r{const_cast<char*>(s) + n, 1};
      if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1 || buffer[n] == 0) break;
      ++n;
    }
    if (n == 0 && buffer[0] == 0) {
      struct iovec l {
        buffer, 1
      }, r{const_cast<char*>(s), 1};
      if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1) {
        out += "<unreadable>";
        return;
      }
    }
  }
  buffer[128] = 0;
  out += '"';
  out += std::string_view(buffer, strnlen(buffer, 128));
  out += '"';
}

void appendHandle(std::string& out, uint64_t value) {
  if (!value) {
    out += "NULL";
  } else if (HandleBits::isHandle(value)) {
    fmt::format_to(std::back_inserter(out), "{}#{}.{}", handleKindName(HandleBits::kind(value)),
                   HandleBits::slot(value), HandleBits::generation(value));
  } else {
    fmt::format_to(std::back_inserter(out), "{:#x}", value);
  }
}

void appendResult(std::string& out, CUresult r) {
  if (const char* name = errorName(r))
    out += name;
  else
    fmt::format_to(std::back_inserter(out), "CUresult({})", static_cast<int>(r));
}

void appendEnum(std::string& out, std::string_view, long long value) {
  fmt::format_to(std::back_inserter(out), "{}", value);
}
void appendSigned(std::string& out, long long v) { fmt::format_to(std::back_inserter(out), "{}", v); }
void appendUnsigned(std::string& out, unsigned long long v) {
  if (v > 0xFFFF)
    fmt::format_to(std::back_inserter(out), "{:#x}", v);
  else
    fmt::format_to(std::back_inserter(out), "{}", v);
}

void emitCall(ApiId id, std::string_view argNames, const std::string& argValues, CUresult result) {
  emitNamedCall(apiInfo(id).name, argNames, argValues, result);
}

void emitNamedCall(std::string_view name, std::string_view argNames, const std::string& argValues, CUresult result) {
  // argNames is the stringised parameter list "(a, b, c)"; values are separated by \x1f.
  std::string line = fmt::format("[cuemu tid={} ctx=", static_cast<long>(gettid()));
  if (auto ctx = currentContext())
    appendHandle(line, ctx->handle());
  else
    line += "none";
  line += "] ";
  line += name;
  line += '(';
  std::string_view names = argNames.substr(1, argNames.size() - 2);
  std::size_t vpos = 0;
  bool first = true;
  while (!names.empty()) {
    std::size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    std::size_t vend = argValues.find('\x1f', vpos);
    if (!first) line += ", ";
    first = false;
    line += name;
    line += '=';
    line += std::string_view(argValues).substr(vpos, vend == std::string::npos ? std::string::npos : vend - vpos);
    vpos = vend == std::string::npos ? argValues.size() : vend + 1;
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  line += ") = ";
  appendResult(line, result);
  line += '\n';
  std::lock_guard lock(detail::g_mutex);
  std::fputs(line.c_str(), detail::g_file ? detail::g_file : stderr);
  std::fflush(detail::g_file ? detail::g_file : stderr);
}

}  // namespace cuemu::trace
