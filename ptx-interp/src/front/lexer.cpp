#include "front/lexer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ptx::front {
namespace {

// Character classes, one table lookup per byte.
enum : uint8_t { kSpace = 1, kIdentStart = 2, kIdent = 4, kDigit = 8, kHex = 16 };

struct CharTable {
  uint8_t c[256] = {};
  constexpr CharTable() {
    c[uint8_t(' ')] = c[uint8_t('\t')] = c[uint8_t('\r')] = c[uint8_t('\n')] = c[uint8_t('\v')] = c[uint8_t('\f')] =
        kSpace;
    for (int i = 'a'; i <= 'z'; ++i) c[i] = kIdentStart | kIdent;
    for (int i = 'A'; i <= 'Z'; ++i) c[i] = kIdentStart | kIdent;
    for (int i = '0'; i <= '9'; ++i) c[i] = kIdent | kDigit | kHex;
    for (int i = 'a'; i <= 'f'; ++i) c[i] |= kHex;
    for (int i = 'A'; i <= 'F'; ++i) c[i] |= kHex;
    c[uint8_t('_')] = kIdentStart | kIdent;
    c[uint8_t('$')] = kIdentStart | kIdent;
    c[uint8_t('%')] = kIdentStart;
    c[uint8_t('.')] = kIdentStart;
  }
};
constexpr CharTable kChars;

inline bool is(char ch, uint8_t cls) { return kChars.c[static_cast<unsigned char>(ch)] & cls; }

inline unsigned hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void Lexer::skipSpaceAndComments() {
  for (;;) {
    while (p_ < end_ && is(*p_, kSpace)) {
      if (*p_ == '\n') {
        ++line_;
        lineStart_ = p_ + 1;
      }
      ++p_;
    }
    if (p_ + 1 < end_ && p_[0] == '/' && p_[1] == '/') {
      const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
      p_ = nl ? static_cast<const char*>(nl) : end_;
      continue;
    }
    if (p_ + 1 < end_ && p_[0] == '/' && p_[1] == '*') {
      p_ += 2;
      for (;;) {
        if (p_ + 1 >= end_) {
          p_ = end_;
          unterminatedComment_ = true;
          return;
        }
        if (p_[0] == '*' && p_[1] == '/') {
          p_ += 2;
          break;
        }
        if (*p_ == '\n') {
          ++line_;
          lineStart_ = p_ + 1;
        }
        ++p_;
      }
      continue;
    }
    return;
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token t;
  t.line = line_;
  t.col = static_cast<uint32_t>(p_ - lineStart_) + 1;
  t.begin = p_;
  if (p_ >= end_) {
    t.kind = Tok::End;
    return t;
  }
  char c = *p_;
  if (is(c, kIdentStart)) {
    const char* s = p_++;
    for (;;) {
      while (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) ++p_;
      // "::" joins words inside modifiers (.shared::cta); a single ':' ends a label.
      if (p_ + 1 < end_ && p_[0] == ':' && p_[1] == ':') {
        p_ += 2;
        continue;
      }
      break;
    }
    t.kind = Tok::Word;
    t.length = static_cast<uint32_t>(p_ - s);
    return t;
  }
  if (is(c, kDigit)) {
    lexNumber(t);
    return t;
  }
  if (c == '"') {
    const char* s = ++p_;
    while (p_ < end_ && *p_ != '"' && *p_ != '\n') {
      if (*p_ == '\\' && p_ + 1 < end_ && p_[1] != '\n') ++p_;
      ++p_;
    }
    if (p_ >= end_ || *p_ != '"') {
      t.kind = Tok::Invalid;
      t.length = static_cast<uint32_t>(p_ - t.begin);
      return t;
    }
    t.kind = Tok::String;
    t.begin = s;
    t.length = static_cast<uint32_t>(p_ - s);
    ++p_;
    return t;
  }
  ++p_;
  t.length = 1;
  switch (c) {
    case '{':
    case '}':
    case '(':
    case ')':
    case '[':
    case ']':
    case ',':
    case ';':
    case ':':
    case '@':
    case '!':
    case '+':
    case '-':
    case '*':
    case '/':
    case '~':
    case '<':
    case '>':
    case '=':
    case '|':
    case '&':
    case '^':
    case '?':
      t.kind = Tok::Punct;
      t.punct = c;
      return t;
    default:
      t.kind = Tok::Invalid;
      t.punct = c;
      return t;
  }
}

void Lexer::lexNumber(Token& t) {
  const char* s = p_;
  t.kind = Tok::Int;
  auto finishInt = [&]() {
    if (p_ < end_ && *p_ == 'U') {
      t.isUnsigned = true;
      ++p_;
    }
    if (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) {  // 12abc, 0x1g
      t.malformed = true;
      while (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) ++p_;
    }
    t.length = static_cast<uint32_t>(p_ - s);
  };
  if (s[0] == '0' && p_ + 1 < end_) {
    char k = s[1];
    if (k == 'x' || k == 'X') {
      p_ += 2;
      const char* d = p_;
      uint64_t v = 0;
      while (p_ < end_ && is(*p_, kHex)) {
        if (v >> 60) t.overflow = true;
        v = (v << 4) | hexValue(*p_++);
      }
      if (p_ == d) t.malformed = true;
      t.intValue = v;
      finishInt();
      return;
    }
    if (k == 'b' || k == 'B') {
      p_ += 2;
      const char* d = p_;
      uint64_t v = 0;
      while (p_ < end_ && (*p_ == '0' || *p_ == '1')) {
        if (v >> 63) t.overflow = true;
        v = (v << 1) | uint64_t(*p_++ - '0');
      }
      if (p_ == d) t.malformed = true;
      t.intValue = v;
      finishInt();
      return;
    }
    if (k == 'f' || k == 'F' || k == 'd' || k == 'D') {
      unsigned digits = (k == 'f' || k == 'F') ? 8 : 16;
      p_ += 2;
      uint64_t v = 0;
      unsigned n = 0;
      while (p_ < end_ && is(*p_, kHex)) {
        v = (v << 4) | hexValue(*p_++);
        ++n;
      }
      t.kind = Tok::Float;
      t.floatBits = static_cast<uint8_t>(digits * 4);
      t.intValue = v;
      if (n != digits) t.malformed = true;
      if (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) {
        t.malformed = true;
        while (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) ++p_;
      }
      t.length = static_cast<uint32_t>(p_ - s);
      return;
    }
  }
  // Decimal (or octal with a leading 0), possibly a decimal floating-point literal.
  while (p_ < end_ && is(*p_, kDigit)) ++p_;
  bool isFloat = false;
  if (p_ + 1 < end_ && *p_ == '.' && is(p_[1], kDigit)) {
    isFloat = true;
    ++p_;
    while (p_ < end_ && is(*p_, kDigit)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    const char* q = p_ + 1;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    if (q < end_ && is(*q, kDigit)) {
      isFloat = true;
      p_ = q;
      while (p_ < end_ && is(*p_, kDigit)) ++p_;
    }
  }
  if (isFloat) {
    t.kind = Tok::Float;
    t.floatBits = 64;
    std::string buf(s, p_);
    double d = std::strtod(buf.c_str(), nullptr);
    std::memcpy(&t.intValue, &d, sizeof d);
    if (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) {
      t.malformed = true;
      while (p_ < end_ && (is(*p_, kIdent) || *p_ == '.')) ++p_;
    }
    t.length = static_cast<uint32_t>(p_ - s);
    return;
  }
  bool octal = s[0] == '0' && p_ - s > 1;
  uint64_t v = 0;
  for (const char* q = octal ? s + 1 : s; q < p_; ++q) {
    unsigned digit = static_cast<unsigned>(*q - '0');
    if (octal && digit > 7) t.malformed = true;
    unsigned base = octal ? 8 : 10;
    if (v > (~uint64_t(0) - digit) / base) t.overflow = true;
    v = v * base + digit;
  }
  t.intValue = v;
  finishInt();
}

}  // namespace ptx::front
