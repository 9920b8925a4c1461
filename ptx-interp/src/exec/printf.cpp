// Device printf (vprintf: format string + packed argument buffer) and __assertfail.
#include "exec/control.h"
#include "exec/control_ops.h"
#include "exec/handlers.h"
#include "exec/memory.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

namespace ptx::exec::ctl {

namespace {

// Reads a NUL-terminated string at a generic address of lane `lane`; nullopt after raising a fault.
std::optional<std::string> readString(Warp& w, const Op* op, int lane, uint64_t addr, size_t limit = 1 << 16) {
  std::string s;
  if (addr == 0) return std::string("(null)");
  for (size_t i = 0; i < limit; ++i) {
    uint8_t* p = mem::xlate<mem::Generic>(w, op, lane, addr + i, 1, false);
    if (!p) return std::nullopt;
    if (*p == 0) return s;
    s.push_back(char(*p));
  }
  return s;
}

// Reads `size` bytes at offset `off` of the argument buffer (generic address base).
bool readArg(Warp& w, const Op* op, int lane, uint64_t base, uint64_t& off, unsigned size, void* out) {
  off = (off + size - 1) / size * size;
  uint8_t* p = mem::xlate<mem::Generic>(w, op, lane, base + off, size, false);
  if (!p) return false;
  std::memcpy(out, p, size);
  off += size;
  return true;
}

// Formats one printf call; returns false after a fault.
bool formatPrintf(Warp& w, const Op* op, int lane, const std::string& fmtStr, uint64_t args, std::string& out,
                  int& count) {
  uint64_t off = 0;
  count = 0;
  for (size_t i = 0; i < fmtStr.size(); ++i) {
    char ch = fmtStr[i];
    if (ch != '%') {
      out.push_back(ch);
      continue;
    }
    if (i + 1 < fmtStr.size() && fmtStr[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    size_t start = i++;
    while (i < fmtStr.size() && std::strchr("-+ #0", fmtStr[i])) ++i;
    bool starWidth = false, starPrec = false;
    if (i < fmtStr.size() && fmtStr[i] == '*') {
      starWidth = true;
      ++i;
    }
    while (i < fmtStr.size() && std::isdigit(uint8_t(fmtStr[i]))) ++i;
    if (i < fmtStr.size() && fmtStr[i] == '.') {
      ++i;
      if (i < fmtStr.size() && fmtStr[i] == '*') {
        starPrec = true;
        ++i;
      }
      while (i < fmtStr.size() && std::isdigit(uint8_t(fmtStr[i]))) ++i;
    }
    int longs = 0;
    bool half = false;
    while (i < fmtStr.size() && std::strchr("hlLqjzt", fmtStr[i])) {
      if (fmtStr[i] == 'l' || fmtStr[i] == 'q' || fmtStr[i] == 'j' || fmtStr[i] == 'z' || fmtStr[i] == 't' ||
          fmtStr[i] == 'L')
        ++longs;
      if (fmtStr[i] == 'h') half = true;
      ++i;
    }
    if (i >= fmtStr.size()) {
      out.append(fmtStr, start, std::string::npos);
      break;
    }
    char conv = fmtStr[i];
    std::string spec;
    // rebuild the spec without length modifiers, then add our own
    for (size_t k = start; k < i; ++k)
      if (!std::strchr("hlLqjzt", fmtStr[k])) spec.push_back(fmtStr[k]);
    int starVals[2] = {0, 0};
    int nstar = 0;
    if (starWidth) {
      if (!readArg(w, op, lane, args, off, 4, &starVals[nstar++])) return false;
    }
    if (starPrec) {
      if (!readArg(w, op, lane, args, off, 4, &starVals[nstar++])) return false;
    }
    char buf[512];
    int n = 0;
    auto fmt1 = [&](auto v) {
      if (nstar == 2)
        n = std::snprintf(buf, sizeof buf, spec.c_str(), starVals[0], starVals[1], v);
      else if (nstar == 1)
        n = std::snprintf(buf, sizeof buf, spec.c_str(), starVals[0], v);
      else
        n = std::snprintf(buf, sizeof buf, spec.c_str(), v);
    };
    switch (conv) {
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'c': {
        if (longs) {
          uint64_t v;
          if (!readArg(w, op, lane, args, off, 8, &v)) return false;
          spec += "ll";
          spec.push_back(conv);
          fmt1(static_cast<unsigned long long>(v));
        } else {
          uint32_t v;
          if (!readArg(w, op, lane, args, off, 4, &v)) return false;
          if (half) v &= 0xffff;
          spec.push_back(conv);
          fmt1(static_cast<unsigned>(v));
        }
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        double v;
        if (!readArg(w, op, lane, args, off, 8, &v)) return false;
        spec.push_back(conv);
        fmt1(v);
        break;
      }
      case 'p': {
        uint64_t v;
        if (!readArg(w, op, lane, args, off, 8, &v)) return false;
        spec.push_back('p');
        fmt1(reinterpret_cast<void*>(v));
        break;
      }
      case 's': {
        uint64_t v;
        if (!readArg(w, op, lane, args, off, 8, &v)) return false;
        auto s = readString(w, op, lane, v);
        if (!s) return false;
        spec.push_back('s');
        fmt1(s->c_str());
        break;
      }
      default: out.append(fmtStr, start, i - start + 1); continue;
    }
    ++count;
    if (n > 0) out.append(buf, std::min<size_t>(size_t(n), sizeof buf - 1));
  }
  return true;
}

}  // namespace

const Op* vprintf(Warp& w, const Op* op) {
  const BuiltinCallOperands call = BuiltinCallOperands::of(*op);
  const uint64_t* fmtPtr = h::R<uint64_t>(w, call.args[0]);
  const uint64_t* argPtr = h::R<uint64_t>(w, call.args[1]);
  int32_t* res = h::R<int32_t>(w, call.result);
  uint32_t m = w.exec;
  while (m) {
    int i = std::countr_zero(m);
    m &= m - 1;
    auto f = readString(w, op, i, fmtPtr[i]);
    if (!f) return nullptr;
    std::string text;
    int count = 0;
    if (!formatPrintf(w, op, i, *f, argPtr[i], text, count)) return nullptr;
    bool ok = w.cta->job->host->devicePrintf(text);
    res[i] = ok ? count : -1;
  }
  return op + 1;
}

const Op* assertFail(Warp& w, const Op* op) {
  int lane = std::countr_zero(w.exec | 0x80000000u);
  const BuiltinCallOperands call = BuiltinCallOperands::of(*op);
  auto msg = readString(w, op, lane, h::R<uint64_t>(w, call.args[0])[lane]);
  if (!msg) return nullptr;
  auto file = readString(w, op, lane, h::R<uint64_t>(w, call.args[1])[lane]);
  if (!file) return nullptr;
  uint32_t line = h::R<uint32_t>(w, call.args[2])[lane];
  auto func = readString(w, op, lane, h::R<uint64_t>(w, call.args[3])[lane]);
  if (!func) return nullptr;
  Cta& cta = *w.cta;
  Dim3 b = cta.job->lp.block;
  uint32_t t = w.index * 32 + uint32_t(lane);
  std::string text = fmt::format("{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.", *file, line,
                                 *func, cta.id.x, cta.id.y, cta.id.z, t % b.x, (t / b.x) % b.y, t / (b.x * b.y), *msg);
  return raiseFault(w, op, lane, FaultKind::Assert, 0, std::move(text));
}

}  // namespace ptx::exec::ctl
