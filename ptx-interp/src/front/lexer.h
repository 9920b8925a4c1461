// The PTX lexer: hand-written, no regexes, no allocation per token. Tokens point into the source buffer,
// which must be followed by at least one NUL byte (the parser copies the input into such a buffer).
#pragma once

#include <cstdint>
#include <string_view>

namespace ptx::front {

enum class Tok : uint8_t {
  End,
  Word,     // identifiers, directives (.reg), registers (%r1), mnemonics with modifiers (ld.global.u32)
  Int,      // integer literal: intValue (wrapped to 64 bits), isUnsigned for the U suffix
  Float,    // 0fXXXXXXXX (floatBits 32), 0dXXXXXXXXXXXXXXXX or decimal (floatBits 64): bits in intValue
  String,   // "..." (text excludes the quotes)
  Punct,    // one character in `punct`
  Invalid,  // a byte that starts no token; message in the parser
};

struct Token {
  Tok kind = Tok::End;
  char punct = 0;
  uint8_t floatBits = 0;
  bool isUnsigned = false;
  bool overflow = false;   // integer literal did not fit in 64 bits
  bool malformed = false;  // bad number (0f with wrong digit count ...)
  uint32_t line = 1;
  uint32_t col = 1;
  const char* begin = nullptr;
  uint32_t length = 0;
  uint64_t intValue = 0;

  std::string_view text() const { return std::string_view(begin, length); }
  bool is(char c) const { return kind == Tok::Punct && punct == c; }
  bool isWord(std::string_view w) const { return kind == Tok::Word && text() == w; }
};

class Lexer {
 public:
  Lexer(const char* begin, const char* end) : p_(begin), end_(end), lineStart_(begin) {}

  Token next();
  // Continues at `at` of the text (the lexer starts at a body inside the text it once read whole): its line and
  // column number the next token. The line's start must lie within the text.
  void startAt(uint32_t line, uint32_t col) {
    line_ = line;
    lineStart_ = p_ - (col - 1);
  }
  bool unterminatedComment() const { return unterminatedComment_; }

 private:
  void skipSpaceAndComments();
  void lexNumber(Token& t);

  const char* p_;
  const char* end_;
  const char* lineStart_;
  uint32_t line_ = 1;
  bool unterminatedComment_ = false;
};

}  // namespace ptx::front
